//! A deterministic simulation of a fleet of clients against one rate-limited service, one
//! column per retry policy: ours (the model's [`Action`](retry_budget_model::Action)), with
//! and without jitter and page sharing, ky's defaults and a naive client.
//!
//! Pure: no clock, no I/O, no environment, and deterministic for a seed. Nothing here depends
//! on the platform's float functions either (only `+ - * /`, `ceil` and integer arithmetic), so
//! the command and the page's wasm build give the same figures bit for bit. [`simulate`] runs
//! every policy; [`Fleet::report`] is the one view both of them print.

pub mod client;
pub mod figures;
pub mod network;
pub mod options;
pub mod report;
pub mod rng;
pub mod service;
pub mod sim;

use core::time::Duration;

use retry_budget_model::Policy;

pub use crate::figures::{Figures, TICK_NS};
pub use crate::options::{LimiterKind, Opt, OptionError, Options};
pub use crate::report::{FleetReport, PolicyReport};
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

/// What one policy produced: its figures, and how many requests reached the service in each
/// tick ([`TICK_NS`]) from the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyRun {
    pub name: &'static str,
    pub figures: Figures,
    pub per_tick: Vec<u64>,
}

/// Runs one policy column on the scenario.
pub fn run_column(s: &Scenario, column: &Column) -> PolicyRun {
    let run = sim::run(s, column.kind);
    PolicyRun {
        name: column.name,
        figures: run.figures,
        per_tick: run.per_tick,
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

/// Bin widths for the requests-per-second series, in milliseconds: each a whole number of
/// ticks, and each divides a power of ten, so every rate is an exact decimal. (250 ms is not
/// a whole number of 100 ms ticks: its bins held 200 ms and read every rate a fifth low.)
const BINS_MS: [u64; 12] = [
    100, 200, 500, 1000, 2000, 2500, 5000, 10_000, 20_000, 25_000, 50_000, 100_000,
];

/// The most points a series has, unless the run is longer than 100 s × this.
const MAX_POINTS: u64 = 240;

impl Fleet {
    /// The series' bin width in milliseconds: the narrowest that draws the longest run in at
    /// most [`MAX_POINTS`] points.
    pub fn bin_ms(&self) -> u64 {
        let ticks = self
            .runs
            .iter()
            .map(|r| r.per_tick.len())
            .max()
            .unwrap_or(0);
        let tick_ms = TICK_NS / 1_000_000;
        let end_ms = (ticks as u64).saturating_sub(1) * tick_ms;
        let fits = |bin: &&u64| end_ms / **bin < MAX_POINTS;
        *BINS_MS
            .iter()
            .find(fits)
            .unwrap_or(&BINS_MS[BINS_MS.len() - 1])
    }

    /// Each policy's requests per bin of [`Fleet::bin_ms`], all series of the same length.
    pub fn series(&self) -> Vec<Vec<u64>> {
        let width = (self.bin_ms() * 1_000_000 / TICK_NS) as usize;
        let longest = self
            .runs
            .iter()
            .map(|r| r.per_tick.len().div_ceil(width))
            .max()
            .unwrap_or(0);
        self.runs
            .iter()
            .map(|r| figures::per_bin(&r.per_tick, width, longest))
            .collect()
    }

    /// The run as `fleet --json` prints it and `simulateFleet` returns it.
    pub fn report(&self) -> FleetReport {
        let bin_ms = self.bin_ms();
        FleetReport {
            bin_s: report::decimal(bin_ms, 1000, 3),
            policies: self
                .runs
                .iter()
                .zip(self.series())
                .map(|(run, counts)| PolicyReport::new(run.name, &run.figures, &counts, bin_ms))
                .collect(),
        }
    }
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

    /// The columns are the policies the README's tables describe: ours as the page runs it,
    /// with 1 s of jitter, and without sharing; then ky's defaults and the naive client.
    #[test]
    fn the_columns_are_the_documented_policies() {
        let ours = |policy, share| Kind::Ours { policy, share };
        let jitter = Policy::new().with_jitter(Duration::from_secs(1));
        let kinds: Vec<(&str, Kind)> = columns().iter().map(|c| (c.name, c.kind)).collect();
        let expected = [
            ("ours", ours(Policy::new(), true)),
            ("ours+jitter", ours(jitter, true)),
            ("ours no-share", ours(Policy::new(), false)),
            ("ky defaults", Kind::Ky),
            ("naive x3", Kind::Naive),
        ];
        assert_eq!(kinds, expected);
    }

    #[test]
    fn the_same_seed_gives_the_same_figures_and_another_seed_others() {
        assert_eq!(simulate(&small(3)), simulate(&small(3)));
        assert_ne!(simulate(&small(3)).runs, simulate(&small(4)).runs);
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

    /// A fleet of one policy whose `per_tick` is given.
    fn ticks(per_tick: Vec<u64>) -> Fleet {
        Fleet {
            runs: vec![PolicyRun {
                name: "x",
                figures: Figures::default(),
                per_tick,
            }],
        }
    }

    #[test]
    fn a_long_run_gets_wider_bins() {
        let fleet = |n: usize| ticks(vec![1; n]);
        // 240 points of 100 ms take 24 s; a run whose last tick starts at 24 s needs 200 ms.
        assert_eq!(fleet(240).bin_ms(), 100);
        assert_eq!(fleet(241).bin_ms(), 200);
        let series = fleet(241).series();
        assert_eq!(series[0].len(), 121);
        assert_eq!((series[0][0], series[0][120]), (2, 1));
        assert_eq!(fleet(0).bin_ms(), 100);
    }

    /// Every policy's series has as many bins as the longest run needs, a part-filled last bin
    /// included: a run of 241 ticks in 200 ms bins takes 121, and a run of 10 is padded to 121.
    #[test]
    fn a_shorter_run_is_padded_to_the_longest_runs_bins() {
        let mut fleet = ticks(vec![1; 241]);
        fleet.runs.push(PolicyRun {
            name: "y",
            figures: Figures::default(),
            per_tick: vec![1; 10],
        });
        let lengths: Vec<usize> = fleet.series().iter().map(Vec::len).collect();
        assert_eq!(lengths, [121, 121]);
    }

    /// A bin's width and rate are written exactly: 500 ticks (50 s) take 500 ms bins, said as
    /// 0.5 s; 30,000 ticks (50 min) take 20 s bins, where one request is 0.05 a second.
    #[test]
    fn bin_widths_and_rates_are_written_to_the_millisecond() {
        assert_eq!(ticks(vec![1; 500]).report().bin_s, 0.5);
        let mut one = vec![0; 30_000];
        one[0] = 1;
        let report = ticks(one).report();
        assert_eq!(report.bin_s, 20.0);
        assert_eq!(report.policies[0].requests_per_s[..2], [0.05, 0.0]);
    }

    /// Every bin is a whole number of ticks, so a steady rate reads the same at every width:
    /// one request a tick is ten a second, however long the run.
    #[test]
    fn a_steady_rate_reads_the_same_in_bins_of_every_width() {
        assert!(BINS_MS.iter().all(|ms| ms * 1_000_000 % TICK_NS == 0));
        for seconds in [10, 30, 50, 100, 300, 1000, 3000] {
            let report = ticks(vec![1; seconds * 10]).report();
            let rates = &report.policies[0].requests_per_s;
            assert!(
                rates.len() <= MAX_POINTS as usize,
                "{seconds} s: {}",
                rates.len()
            );
            assert!(
                rates.iter().all(|&rate| rate == 10.0),
                "{seconds} s in bins of {} s: {rates:?}",
                report.bin_s
            );
        }
    }

    #[test]
    fn the_report_names_every_figure_and_writes_rates_exactly() {
        let fleet = simulate(&small(5));
        let json = serde_json::to_value(fleet.report()).expect("JSON");
        let policies = json["policies"].as_array().expect("policies");
        assert_eq!(policies.len(), 5);
        let first = &policies[0];
        assert_eq!(first["policy"], "ours");
        let requests = fleet.runs[0].figures.requests;
        assert_eq!(first["requests"], requests);
        let keys: Vec<&str> = first
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        let mut expected = [
            "policy",
            "requests",
            "peak_per_s",
            "share_429",
            "actions",
            "with_data",
            "time_to_data_s",
            "longest_wait_for_outcome_s",
            "requests_per_action",
            "requests_after_outcome",
            "early_sends",
            "requests_per_s",
        ];
        expected.sort_unstable();
        assert_eq!(keys, expected);
        let bin_s = json["bin_s"].as_f64().expect("bin_s");
        let rates = first["requests_per_s"].as_array().expect("a series");
        let total: f64 = rates
            .iter()
            .filter_map(|r| r.as_f64())
            .map(|r| r * bin_s)
            .sum();
        assert!(
            (total - requests as f64).abs() < 1e-6,
            "{total} vs {requests}"
        );
    }
}
