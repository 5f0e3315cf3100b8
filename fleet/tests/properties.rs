//! Properties of the rules that hold for any scenario and seed, checked from outside the model
//! on what the simulation reports as it goes ([`Note`]s): when each widget sent, what it was
//! told, when it stopped.
//!
//! - No request of ours starts before the end of a block its widget was told of.
//! - No client sends more requests than its attempts: 3 for ours and ky, 4 for the naive one.
//! - Every action of ours ends within its budget (20 s), as the 4 s cap is reserved before
//!   each start, and every widget of every policy is told exactly one outcome.
//! - A run is the same whenever it happens: the same pages arriving 2,520 s later (a whole
//!   number of every window and of the service's seconds) give every policy the same figures,
//!   so each widget's times are measured from its own page's arrival.

use std::collections::HashMap;

use fleet::service::{Limiter, RetryAfterMode};
use fleet::sim::{arrivals, run_observed, Note};
use fleet::{columns, Kind, Scenario};
use proptest::prelude::*;

const BUDGET_NS: u64 = 20_000_000_000;

/// A shift of every arrival that no limiter or clock of a generated scenario can tell from none:
/// 2,520 s is a whole number of windows of 1 to 10 s, and of the service's whole seconds, and a
/// bucket left idle until then is as full as at the start.
const LATER_NS: u64 = 2_520_000_000_000;

fn limiter() -> impl Strategy<Value = Limiter> {
    prop_oneof![
        (0.5f64..20.0, 1.0f64..20.0).prop_map(|(rate, burst)| Limiter::Bucket { rate, burst }),
        (1u32..10, 1u64..10).prop_map(|(limit, window_s)| Limiter::Window { limit, window_s }),
    ]
}

fn scenario() -> impl Strategy<Value = Scenario> {
    let mode = prop_oneof![
        Just(RetryAfterMode::Seconds),
        Just(RetryAfterMode::Date),
        Just(RetryAfterMode::None),
    ];
    let network = (10u64..3000, 0.0f64..2.0)
        .prop_map(|(latency_ms, tail)| fleet::network::Network { latency_ms, tail });
    (
        (1u32..30, 1u32..5, 0.0f64..20.0),
        limiter(),
        mode,
        network,
        (5u32..1000, any::<u64>()),
    )
        .prop_map(
            |((pages, widgets, arrive_over_s), limiter, retry_after, network, (serve, seed))| {
                Scenario {
                    pages,
                    widgets,
                    arrive_over_s,
                    limiter,
                    retry_after,
                    network,
                    serve,
                    seed,
                }
            },
        )
}

/// What each widget did: its sends, the blocks it was told of (when, until when), its stops.
#[derive(Default)]
struct Widget {
    sent: Vec<u64>,
    told: Vec<(u64, u64)>,
    stops: Vec<u64>,
}

fn observe(s: &Scenario, kind: Kind) -> HashMap<u32, Widget> {
    let mut widgets: HashMap<u32, Widget> = HashMap::new();
    run_observed(s, kind, &arrivals(s), |note| match note {
        Note::Sent { widget, at } => widgets.entry(widget).or_default().sent.push(at),
        Note::Told { widget, at, until } => {
            widgets.entry(widget).or_default().told.push((at, until));
        }
        Note::Stopped { widget, at, .. } => widgets.entry(widget).or_default().stops.push(at),
    });
    widgets
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_rules_hold_for_every_policy(s in scenario()) {
        let mut starts = arrivals(&s);
        starts.sort_unstable();
        for column in columns() {
            let widgets = observe(&s, column.kind);
            let ours = matches!(column.kind, Kind::Ours { .. });
            let attempts = if column.kind == Kind::Naive { 4 } else { 3 };
            prop_assert_eq!(widgets.len() as u32, s.pages * s.widgets, "{}", column.name);
            for (id, w) in &widgets {
                let start = starts[(id / s.widgets) as usize];
                prop_assert_eq!(w.stops.len(), 1, "{} widget {}: one outcome", column.name, id);
                prop_assert!(w.sent.len() <= attempts, "{} widget {}: {:?}", column.name, id, w.sent);
                if !ours {
                    continue;
                }
                prop_assert!(w.stops[0] - start <= BUDGET_NS, "{} widget {}", column.name, id);
                for &sent in &w.sent {
                    let known = w.told.iter().filter(|(at, _)| *at <= sent).map(|(_, until)| *until);
                    let block = known.max().unwrap_or(0);
                    prop_assert!(sent >= block, "{} widget {} sent at {} before {}", column.name, id, sent, block);
                }
            }
        }
    }

    #[test]
    fn the_same_pages_later_give_the_same_figures(s in scenario()) {
        let times = arrivals(&s);
        let later: Vec<u64> = times.iter().map(|t| t + LATER_NS).collect();
        for column in columns() {
            let now = run_observed(&s, column.kind, &times, |_| {});
            let then = run_observed(&s, column.kind, &later, |_| {});
            prop_assert_eq!(now.figures, then.figures, "{}", column.name);
        }
    }
}
