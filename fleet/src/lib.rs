//! A deterministic simulation of a fleet of clients against one rate-limited service, one
//! column per retry policy: ours (the model's [`Action`](retry_budget_model::Action)), with
//! and without jitter and page sharing, ky's defaults and a naive client.
//!
//! Pure: no clock, no I/O, no environment, and deterministic for a seed. Nothing here depends
//! on the platform's float functions either (only `+ - * /`, `ceil` and integer arithmetic), so
//! the command and the page's wasm build give the same figures bit for bit. [`simulate`] runs
//! every policy; [`Fleet::to_json`] is the one view both of them print.

pub mod client;
pub mod figures;
pub mod options;
pub mod rng;
pub mod service;
pub mod sim;

use core::time::Duration;

use retry_budget_model::json::{Json, Number};
use retry_budget_model::Policy;

pub use crate::figures::Figures;
pub use crate::options::{Opt, OptionError, Options};
pub use crate::sim::{Kind, Scenario};

/// One policy column: its name and its client.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
}

/// The policy columns, in order.
pub fn columns() -> [Column; 5] {
    let ours = |name, policy, share| Column {
        name,
        kind: Kind::Ours { policy, share },
    };
    let jitter = Policy::new().with_jitter(Duration::from_secs(1));
    [
        ours("ours", Policy::new(), true),
        ours("ours+jitter", jitter, true),
        ours("ours no-share", Policy::new(), false),
        Column {
            name: "ky defaults",
            kind: Kind::Ky,
        },
        Column {
            name: "naive x3",
            kind: Kind::Naive,
        },
    ]
}

/// What one policy produced: its figures and when each request reached the service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyRun {
    pub name: &'static str,
    pub figures: Figures,
    /// Arrival times at the service, in nanoseconds from the start, in send order.
    pub arrivals: Vec<u64>,
}

/// Runs one policy column on the scenario.
pub fn run_column(s: &Scenario, column: &Column) -> PolicyRun {
    let run = sim::run(s, column.kind);
    PolicyRun {
        name: column.name,
        figures: figures::figures(&run),
        arrivals: run.requests.iter().map(|r| r.arrive).collect(),
    }
}

/// Every policy's run of one scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fleet {
    pub runs: Vec<PolicyRun>,
}

/// Runs every policy column on the scenario, each against its own fresh service with the same
/// arrivals.
pub fn simulate(s: &Scenario) -> Fleet {
    Fleet {
        runs: columns().iter().map(|c| run_column(s, c)).collect(),
    }
}

/// Bin widths for the requests-per-second series, in milliseconds: each divides a power of
/// ten, so every rate is an exact decimal.
const BINS_MS: [u64; 13] = [
    100, 200, 250, 500, 1000, 2000, 2500, 5000, 10_000, 20_000, 25_000, 50_000, 100_000,
];

/// The most points a series has, unless the run is longer than 100 s × this.
const MAX_POINTS: u64 = 240;

impl Fleet {
    /// The series' bin width in milliseconds: the narrowest that draws the longest run in at
    /// most [`MAX_POINTS`] points.
    pub fn bin_ms(&self) -> u64 {
        let end_ms = self
            .runs
            .iter()
            .flat_map(|r| r.arrivals.iter().max())
            .max()
            .map_or(0, |ns| ns / 1_000_000);
        let fits = |bin: &&u64| end_ms / **bin < MAX_POINTS;
        *BINS_MS.iter().find(fits).unwrap_or(&BINS_MS[12])
    }

    /// Each policy's requests per second at the service over time: one count per bin of
    /// [`Fleet::bin_ms`], all series of the same length.
    pub fn series(&self) -> Vec<Vec<u64>> {
        let width = self.bin_ms() * 1_000_000;
        let longest = self
            .runs
            .iter()
            .map(|r| figures::per_bin(&r.arrivals, width, 0).len())
            .max()
            .unwrap_or(0);
        self.runs
            .iter()
            .map(|r| figures::per_bin(&r.arrivals, width, longest))
            .collect()
    }

    /// The run as JSON: `{ "bin_s", "policies": [{ "policy", figures..., "requests_per_s" }] }`.
    pub fn to_json(&self) -> Json {
        let bin_ms = self.bin_ms();
        let policies = self
            .runs
            .iter()
            .zip(self.series())
            .map(|(run, counts)| {
                let rates = counts.iter().map(|&n| ratio(n * 1000, bin_ms, 3)).collect();
                let mut members = figures_json(run.name, &run.figures);
                members.push(("requests_per_s".into(), Json::Array(rates)));
                Json::Object(members)
            })
            .collect();
        Json::Object(vec![
            ("bin_s".into(), secs(bin_ms * 1_000_000)),
            ("policies".into(), Json::Array(policies)),
        ])
    }
}

/// One policy's figures as JSON members.
fn figures_json(name: &str, f: &Figures) -> Vec<(retry_budget_model::json::Key, Json)> {
    let [p50, p95, max] = f.to_data_ns;
    let object = |members: Vec<(&'static str, Json)>| {
        Json::Object(members.into_iter().map(|(k, v)| (k.into(), v)).collect())
    };
    let members = vec![
        ("policy", Json::text(name)),
        ("requests", Json::count(f.requests)),
        ("peak_per_s", Json::count(f.peak_per_s)),
        ("share_429", ratio(f.refused, f.requests, 6)),
        ("actions", Json::count(f.actions)),
        ("with_data", Json::count(f.with_data)),
        (
            "time_to_data_s",
            object(vec![
                ("p50", secs(p50)),
                ("p95", secs(p95)),
                ("max", secs(max)),
            ]),
        ),
        ("longest_wait_for_outcome_s", secs(f.longest_wait_ns)),
        (
            "requests_per_action",
            object(vec![
                ("mean", ratio(f.requests, f.actions, 6)),
                ("max", Json::count(f.most_per_action)),
            ]),
        ),
        ("requests_after_outcome", Json::count(f.after_outcome)),
        ("early_sends", Json::count(f.early_sends)),
    ];
    members.into_iter().map(|(k, v)| (k.into(), v)).collect()
}

/// Nanoseconds as exact seconds.
fn secs(ns: u64) -> Json {
    Json::secs(Duration::from_nanos(ns))
}

/// `numer / denom` written to `places` decimal places (see [`figures::decimal`]).
fn ratio(numer: u64, denom: u64, places: u32) -> Json {
    Json::Number(Number::Read {
        value: numer as f64 / denom.max(1) as f64,
        text: figures::decimal(numer, denom, places),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(seed: u64) -> Scenario {
        let options = Options {
            pages: 500,
            rate: 50.0,
            burst: 100.0,
            seed,
            ..Options::default()
        };
        options.scenario().expect("valid")
    }

    #[test]
    fn the_same_seed_gives_the_same_figures_and_another_seed_others() {
        assert_eq!(simulate(&small(3)), simulate(&small(3)));
        assert_ne!(simulate(&small(3)).runs, simulate(&small(4)).runs);
    }

    #[test]
    fn ours_never_sends_early_nor_more_than_three_requests() {
        for mode in ["seconds", "date", "none"] {
            let mut options = Options {
                pages: 500,
                rate: 50.0,
                burst: 100.0,
                ..Options::default()
            };
            options.set_word(Opt::RetryAfter, mode).expect("valid");
            let fleet = simulate(&options.scenario().expect("valid"));
            for run in &fleet.runs[..3] {
                assert_eq!(run.figures.early_sends, 0, "{mode}");
                assert!(run.figures.most_per_action <= 3, "{mode}");
            }
        }
    }

    #[test]
    fn the_series_count_every_request_in_bins_that_fit_the_longest_run() {
        let fleet = simulate(&small(5));
        let (bin_ms, series) = (fleet.bin_ms(), fleet.series());
        assert!(BINS_MS.contains(&bin_ms));
        for (run, counts) in fleet.runs.iter().zip(&series) {
            assert_eq!(counts.iter().sum::<u64>(), run.figures.requests);
            assert_eq!(counts.len(), series[0].len());
            assert!(counts.len() as u64 <= MAX_POINTS);
            // A bin of a second or less cannot hold more than the busiest whole second.
            let busiest = counts.iter().max().copied().unwrap_or(0);
            assert!(bin_ms > 1000 || busiest <= run.figures.peak_per_s);
        }
    }

    #[test]
    fn the_json_names_every_figure_and_writes_rates_exactly() {
        let fleet = simulate(&small(5));
        let json = fleet.to_json();
        let policies = match json.get("policies") {
            Some(Json::Array(p)) => p,
            other => panic!("no policies: {other:?}"),
        };
        assert_eq!(policies.len(), 5);
        let first = &policies[0];
        assert_eq!(first.get("policy"), Some(&Json::text("ours")));
        let requests = fleet.runs[0].figures.requests;
        assert_eq!(first.get("requests"), Some(&Json::count(requests)));
        let Some(Json::Array(rates)) = first.get("requests_per_s") else {
            panic!("no series");
        };
        let bin_s = fleet.bin_ms() as f64 / 1000.0;
        let total: f64 = rates.iter().map(|r| number(r) * bin_s).sum();
        assert!(
            (total - requests as f64).abs() < 1e-6,
            "{total} vs {requests}"
        );
        assert!(json.to_text().starts_with("{\"bin_s\":"));
    }

    fn number(json: &Json) -> f64 {
        match json {
            Json::Number(n) => n.value(),
            other => panic!("not a number: {other:?}"),
        }
    }
}
