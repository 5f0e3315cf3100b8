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

/// One policy's run, named as the command's columns are.
#[divan::bench(args = columns().map(|c| c.name))]
fn policy(bencher: divan::Bencher, name: &str) {
    let scenario = burst();
    let Some(column) = columns().into_iter().find(|c| c.name == name) else {
        unreachable!("every argument is a column's name")
    };
    bencher.bench(|| run_column(divan::black_box(&scenario), &column).figures);
}

/// Every policy, one after another.
#[divan::bench]
fn all_five(bencher: divan::Bencher) {
    let scenario = burst();
    bencher.bench(|| simulate(divan::black_box(&scenario)).runs.len());
}
