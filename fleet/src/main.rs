//! `fleet`: a deterministic simulation of many clients against one rate-limited service, one
//! column per retry policy.

mod client;
mod report;
mod rng;
mod service;
mod sim;

use core::time::Duration;
use std::time::Instant;

use retry_budget_model::Policy;

use crate::service::{Limiter, RetryAfterMode};
use crate::sim::{Kind, Scenario};

/// The policy columns, in order.
const NAMES: [&str; 5] = [
    "ours",
    "ours+jitter",
    "ours no-share",
    "ky defaults",
    "naive x3",
];

/// The policy of each column.
fn kinds() -> [Kind; 5] {
    let ours = |policy, share| Kind::Ours { policy, share };
    [
        ours(Policy::new(), true),
        ours(Policy::new().with_jitter(Duration::from_secs(1)), true),
        ours(Policy::new(), false),
        Kind::Ky,
        Kind::Naive,
    ]
}

/// Parsed options: the scenario, and whether to print JSON.
fn parse(args: &[String]) -> Result<(Scenario, bool), String> {
    let mut s = Scenario {
        pages: 10_000,
        widgets: 3,
        arrive_over_s: 0.0,
        limiter: Limiter::Bucket {
            rate: 500.0,
            burst: 1000.0,
        },
        retry_after: RetryAfterMode::Seconds,
        response_ms: (50, 250),
        seed: 1,
    };
    let (mut window, mut rate, mut burst, mut limit, mut win_s) = (false, 500.0, 1000.0, 1000, 1);
    let mut json = false;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "--json" {
            json = true;
            continue;
        }
        let v = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |_: std::num::ParseIntError| format!("bad value for {flag}: {v}");
        let badf = |_: std::num::ParseFloatError| format!("bad value for {flag}: {v}");
        match flag.as_str() {
            "--pages" => s.pages = v.parse().map_err(bad)?,
            "--widgets" => s.widgets = v.parse().map_err(bad)?,
            "--arrive-over" => s.arrive_over_s = v.parse().map_err(badf)?,
            "--seed" => s.seed = v.parse().map_err(bad)?,
            "--rate" => rate = v.parse().map_err(badf)?,
            "--burst" => burst = v.parse().map_err(badf)?,
            "--limit" => limit = v.parse().map_err(bad)?,
            "--window" => win_s = v.parse().map_err(bad)?,
            "--limiter" => window = limiter_is_window(v)?,
            "--retry-after" => s.retry_after = mode(v)?,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    s.limiter = if window {
        Limiter::Window {
            limit,
            window_s: win_s,
        }
    } else {
        Limiter::Bucket { rate, burst }
    };
    Ok((s, json))
}

/// `bucket` or `window`.
fn limiter_is_window(v: &str) -> Result<bool, String> {
    match v {
        "bucket" => Ok(false),
        "window" => Ok(true),
        _ => Err(format!("--limiter is bucket or window, not {v}")),
    }
}

/// `seconds`, `date` or `none`.
fn mode(v: &str) -> Result<RetryAfterMode, String> {
    match v {
        "seconds" => Ok(RetryAfterMode::Seconds),
        "date" => Ok(RetryAfterMode::Date),
        "none" => Ok(RetryAfterMode::None),
        _ => Err(format!("--retry-after is seconds, date or none, not {v}")),
    }
}

/// Runs every policy on the scenario.
fn figures(s: &Scenario) -> Vec<report::Figures> {
    kinds()
        .iter()
        .map(|k| report::figures(&sim::run(s, *k)))
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (scenario, json) = match parse(&args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("fleet: {e}");
            std::process::exit(2);
        }
    };
    let clock = Instant::now();
    let all = figures(&scenario);
    let wall = clock.elapsed();
    if json {
        println!("{}", report::to_json(&NAMES, &all));
    } else {
        print!("{}", report::table(&NAMES, &all));
    }
    eprintln!(
        "fleet: {} policies in {:.3} s",
        NAMES.len(),
        wall.as_secs_f64()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(seed: u64) -> Scenario {
        let args: Vec<String> = ["--pages", "500", "--rate", "50", "--burst", "100", "--seed"]
            .iter()
            .map(|s| s.to_string())
            .chain([seed.to_string()])
            .collect();
        parse(&args).expect("valid").0
    }

    #[test]
    fn the_same_seed_gives_the_same_figures() {
        assert_eq!(figures(&small(3)), figures(&small(3)));
    }

    #[test]
    fn ours_never_sends_early_nor_more_than_three_requests() {
        for mode in ["seconds", "date", "none"] {
            let mut s = small(5);
            s.retry_after = super::mode(mode).expect("valid");
            for f in &figures(&s)[..3] {
                assert_eq!(f.early_sends, 0, "{mode}");
                assert!(f.per_action.1 <= 3, "{mode}");
            }
        }
    }
}
