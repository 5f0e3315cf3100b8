//! The fleet's speed on the default burst scenario (10,000 pages × 3 widgets at once, a bucket
//! of rate 500 and burst 1,000): each policy's run alone, and all five as the command runs
//! them. `scripts/bench` reports the medians; nothing here is asserted.

use fleet::{columns, run_column, simulate, Options, Scenario};

fn main() {
    divan::main();
}

fn burst() -> Scenario {
    Options::default()
        .scenario()
        .expect("the default scenario is valid")
}

/// One policy's run, by its position in the columns (ours, ours+jitter, ours no-share, ky
/// defaults, naive x3).
#[divan::bench(args = [0, 1, 2, 3, 4])]
fn policy(bencher: divan::Bencher, index: usize) {
    let (scenario, column) = (burst(), columns()[index]);
    bencher.bench(|| run_column(divan::black_box(&scenario), &column).figures);
}

/// Every policy, one after another.
#[divan::bench]
fn all_five(bencher: divan::Bencher) {
    let scenario = burst();
    bencher.bench(|| simulate(divan::black_box(&scenario)).runs.len());
}
