//! `fleet`: a deterministic simulation of many clients against one rate-limited service, one
//! column per retry policy. The simulation is the `fleet` library; this reads the flags, times
//! each policy's run and prints the table, or the library's JSON with `--json`.
//!
//! ```text
//! fleet [--pages N] [--widgets K] [--arrive-over S] [--limiter bucket|window] [--rate R]
//!       [--burst B] [--limit L] [--window S] [--retry-after seconds|date|none] [--seed N]
//!       [--json]
//! ```

use std::time::Instant;

use fleet::{columns, run_column, Fleet, Opt, OptionError, Options, Scenario};

/// The scenario the flags describe, and whether to print JSON.
fn parse(args: &[String]) -> Result<(Scenario, bool), String> {
    let mut options = Options::default();
    let mut json = false;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "--json" {
            json = true;
            continue;
        }
        let opt = Opt::ALL
            .into_iter()
            .find(|o| o.flag() == flag)
            .ok_or(format!("unknown option {flag}"))?;
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        set(&mut options, opt, value).map_err(|e| describe(&e))?;
    }
    let scenario = options.scenario().map_err(|e| describe(&e))?;
    Ok((scenario, json))
}

/// Sets one option from its flag's text.
fn set(options: &mut Options, opt: Opt, value: &str) -> Result<(), OptionError> {
    let number = |message: &str| OptionError {
        option: opt,
        message: format!("{message}, not {value}"),
    };
    if opt.is_word() {
        options.set_word(opt, value)
    } else if opt.is_fraction() {
        let v = value.parse().map_err(|_| number("must be a number"))?;
        options.set_fraction(opt, v)
    } else {
        let v = value
            .parse()
            .map_err(|_| number("must be a whole number"))?;
        options.set_whole(opt, v)
    }
}

/// `--pages: must be ...`.
fn describe(e: &OptionError) -> String {
    format!("{}: {}", e.option.flag(), e.message)
}

/// Runs every policy, timing each.
fn timed_runs(scenario: &Scenario) -> (Fleet, Vec<f64>) {
    let mut seconds = Vec::new();
    let runs = columns()
        .iter()
        .map(|column| {
            let clock = Instant::now();
            let run = run_column(scenario, column);
            seconds.push(clock.elapsed().as_secs_f64());
            run
        })
        .collect();
    (Fleet { runs }, seconds)
}

/// How one table cell is written from a policy's figures.
type Cell = fn(&fleet::Figures) -> String;

/// Seconds from nanoseconds, to two places.
fn s2(ns: u64) -> String {
    format!("{:.2} s", ns as f64 / 1e9)
}

/// The table: a label and one cell per policy on each row.
fn table(fleet: &Fleet) -> String {
    let rows: [(&str, Cell); 11] = [
        ("requests received", |f| f.requests.to_string()),
        ("peak requests / s", |f| f.peak_per_s.to_string()),
        ("answered 429", |f| format!("{:.1}%", f.share_429() * 100.0)),
        ("actions with data", |f| {
            format!("{} / {}", f.with_data, f.actions)
        }),
        ("time to data p50", |f| s2(f.to_data_ns[0])),
        ("time to data p95", |f| s2(f.to_data_ns[1])),
        ("time to data max", |f| s2(f.to_data_ns[2])),
        ("longest wait for outcome", |f| s2(f.longest_wait_ns)),
        ("requests / action mean", |f| {
            format!("{:.2}", f.mean_per_action())
        }),
        ("requests / action max", |f| f.most_per_action.to_string()),
        ("requests after outcome", |f| f.after_outcome.to_string()),
    ];
    let mut out = format!("{:<26}", "");
    for run in &fleet.runs {
        out += &format!("{:>16}", run.name);
    }
    for (label, cell) in rows {
        out += &format!("\n{label:<26}");
        for run in &fleet.runs {
            out += &format!("{:>16}", cell(&run.figures));
        }
    }
    out + "\n"
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
    let (fleet, seconds) = timed_runs(&scenario);
    if json {
        // Through the library's exact text: seconds like 1.615127182 stay as written (an f64
        // built from whole seconds and nanoseconds may print as 1.6151271820000002).
        let text = fleet.to_json().to_text();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        println!("{value:#}");
    } else {
        print!("{}", table(&fleet));
    }
    let each: Vec<String> = fleet
        .runs
        .iter()
        .zip(&seconds)
        .map(|(run, s)| format!("{} {s:.3}", run.name))
        .collect();
    eprintln!(
        "fleet: {} policies in {:.3} s ({} s)",
        seconds.len(),
        seconds.iter().sum::<f64>(),
        each.join(", ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn flags_set_the_scenario_and_bad_ones_are_named() {
        let (s, json) =
            parse(&args(&["--pages", "20", "--limiter", "window", "--json"])).expect("valid");
        assert!(json);
        assert_eq!(s.pages, 20);
        assert!(matches!(s.limiter, fleet::service::Limiter::Window { .. }));
        let fails = |list: &[&str]| parse(&args(list)).expect_err("rejected");
        assert_eq!(
            fails(&["--pages", "x"]),
            "--pages: must be a whole number, not x"
        );
        assert_eq!(
            fails(&["--rate", "0"]),
            "--rate: must be a number from 0.001 to 1000000000"
        );
        assert_eq!(
            fails(&["--limiter", "leaky"]),
            "--limiter: must be bucket or window"
        );
        assert_eq!(fails(&["--seed"]), "--seed needs a value");
        assert_eq!(fails(&["--fast"]), "unknown option --fast");
    }
}
