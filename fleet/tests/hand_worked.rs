//! The library against runs worked out by hand (`hand_worked/cases.rs`): every figure of
//! every policy worked out, exactly.

#[path = "hand_worked/cases.rs"]
mod cases;

use cases::{Case, Expect, Given, CASES, DATE, SHARED};
use fleet::{simulate, Figures, Opt, Options};

/// The options of `case`, set by their JavaScript names as `simulateFleet` sets them.
fn options(case: &Case) -> Options {
    let mut options = Options::default();
    for given in SHARED.iter().chain(case.options) {
        let key = match given {
            Given::Number(key, _) | Given::Word(key, _) => *key,
        };
        let opt = Opt::ALL.into_iter().find(|o| o.key() == key);
        let opt = opt.unwrap_or_else(|| panic!("{}: no option {key}", case.name));
        let set = match given {
            Given::Number(_, value) => options.set_number(opt, *value),
            Given::Word(_, word) => options.set_word(opt, word),
        };
        set.unwrap_or_else(|e| panic!("{}: {key} {}", case.name, e.message));
    }
    options
}

/// The figures `expect` describes, for `actions` widgets.
fn figures(expect: &Expect, actions: u64) -> Figures {
    let ms = |n: u64| n * 1_000_000;
    Figures {
        requests: expect.requests,
        peak_per_s: expect.peak_per_s,
        refused: expect.refused,
        actions,
        with_data: expect.with_data,
        to_data_ns: expect.to_data_ms.map(ms),
        longest_wait_ns: ms(expect.longest_wait_ms),
        most_per_action: expect.most_per_action,
        after_outcome: expect.after_outcome,
        early_sends: 0,
    }
}

#[test]
fn every_worked_figure_is_the_librarys() {
    for case in &CASES {
        let scenario = options(case).scenario().expect("a valid scenario");
        let fleet = simulate(&scenario);
        let actions = u64::from(scenario.pages * scenario.widgets);
        for (name, expect) in case.expect {
            let run = fleet.runs.iter().find(|r| r.name == *name);
            let run = run.unwrap_or_else(|| panic!("no policy {name}"));
            assert_eq!(
                run.figures,
                figures(expect, actions),
                "{}: {name}",
                case.name
            );
        }
    }
}

/// ours+jitter in [`DATE`]: as ours, but its one wait, 10 s, is spread by its draw of the
/// 1 s jitter, after the server's delay and never before it; the start still fits the budget.
/// Its second widget's data comes after ours' 10.3 s and before 11.3 s.
#[test]
fn jitter_only_lengthens_the_servers_wait() {
    let fleet = simulate(&options(&DATE).scenario().expect("a valid scenario"));
    let jitter = fleet.runs.iter().find(|r| r.name == "ours+jitter");
    let f = &jitter.expect("an ours+jitter column").figures;
    assert_eq!((f.requests, f.refused, f.with_data), (3, 1, 2), "{f:?}");
    assert_eq!(f.to_data_ns[0], 100_000_000, "{f:?}");
    let last = f.to_data_ns[2];
    assert!(last > 10_300_000_000 && last < 11_300_000_000, "{f:?}");
}
