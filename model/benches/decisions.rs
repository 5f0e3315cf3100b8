//! Decision cost: what one model decision and one full replay cost natively.
//!
//! `cargo bench -p retry-budget --bench decisions` (part of `scripts/bench`). Every figure is
//! the time of the model alone: no clock is read and nothing is sent.
//!
//! - `decision::*`: one call into the model, from the state just before it (the state is built
//!   outside the timed region). `start` is the first decision (validate the policy, plan
//!   attempt 1); `response_429_seconds` and `response_429_date` read a `Retry-After` and run the
//!   gate; `timer_after_wait` starts the next attempt; `response_200` stops with success.
//! - `schedule_a::*`: Schedule A (429 `Retry-After: 3`, 429 `Retry-After: 4`, 200) end to end.
//!   `decisions` is the six calls a driver makes; `report` adds building the replay output;
//!   `simulate` is the scripted driver (`simulate()`), report included, on the parsed
//!   scenario; `parse_and_simulate` also loads the scenario from its JSON text, as the replay
//!   command does. The JS API's `simulate()` does the same work on a JS object (its browser
//!   figure, in `scripts/bench`, adds the boundary crossing).

use core::time::Duration;

use divan::{black_box, Bencher};
use retry_budget_model::scenario::{parse_file, Scenario};
use retry_budget_model::simulate::simulate;
use retry_budget_model::utc::UtcTime;
use retry_budget_model::{Action, Decision, Policy, ReceiptClock, Response};

fn main() {
    divan::main();
}

const FIXTURES: &str = include_str!("../../fixtures/B62-16-schedules.json");

/// Mon, 01 Jan 2024 12:00:00 GMT, Schedule A's wall clock at elapsed zero.
fn wall_at(elapsed: Duration) -> ReceiptClock {
    ReceiptClock::Server(UtcTime::from_unix_secs(1_704_110_400).saturating_add(elapsed))
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn response(status: u16, retry_after: Option<&str>, at: Duration) -> Response<'_> {
    Response {
        status,
        retry_after,
        ratelimit: None,
        clock: wall_at(at),
    }
}

/// An action with attempt 1 in flight.
fn started() -> Action {
    Action::start(Policy::new())
        .expect("the default policy is valid")
        .0
}

/// An action waiting after attempt 1's 429 (`Retry-After: 3`, received at 2 s).
fn waiting() -> Action {
    let mut action = started();
    let decision = action.on_response(secs(2), response(429, Some("3"), secs(2)));
    assert!(matches!(decision, Decision::Wait { .. }), "{decision:?}");
    action
}

/// An action with attempt 2 in flight (started at 5 s).
fn second_in_flight() -> Action {
    let mut action = waiting();
    let decision = action.on_timer(secs(5));
    assert!(matches!(decision, Decision::Send { .. }), "{decision:?}");
    action
}

/// A scenario file holding only the fixture scenario `name`, as JSON text.
fn scenario_file(name: &str) -> String {
    let file: serde_json::Value = serde_json::from_str(FIXTURES).expect("the fixture file is JSON");
    let scenario = file["scenarios"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["name"] == name))
        .cloned()
        .unwrap_or_else(|| panic!("{name} is in the fixture file"));
    serde_json::json!({ "scenarios": [scenario] }).to_string()
}

fn load(text: &str) -> Option<Scenario> {
    parse_file("bench.json", text)
        .ok()?
        .into_iter()
        .next()?
        .ok()
}

fn schedule_a() -> Scenario {
    load(&scenario_file("schedule-a")).expect("schedule-a is valid")
}

/// The six calls a driver makes for Schedule A, returning the action for the caller to keep.
fn replay_schedule_a(policy: Policy) -> Action {
    let (mut action, _) = Action::start(policy).expect("a valid policy");
    black_box(action.on_response(secs(2), response(429, Some("3"), secs(2))));
    black_box(action.on_timer(secs(5)));
    black_box(action.on_response(secs(7), response(429, Some("4"), secs(7))));
    black_box(action.on_timer(secs(11)));
    black_box(action.on_response(secs(14), response(200, None, secs(14))));
    action
}

mod decision {
    use super::*;

    #[divan::bench]
    fn start() -> Option<(Action, Decision)> {
        Action::start(black_box(Policy::new())).ok()
    }

    #[divan::bench]
    fn response_429_seconds(bencher: Bencher) {
        bencher.with_inputs(started).bench_local_refs(|action| {
            action.on_response(
                black_box(secs(2)),
                response(429, black_box(Some("3")), secs(2)),
            )
        });
    }

    #[divan::bench]
    fn response_429_date(bencher: Bencher) {
        bencher.with_inputs(started).bench_local_refs(|action| {
            action.on_response(
                black_box(secs(2)),
                response(
                    429,
                    black_box(Some("Mon, 01 Jan 2024 12:00:06 GMT")),
                    secs(2),
                ),
            )
        });
    }

    #[divan::bench]
    fn timer_after_wait(bencher: Bencher) {
        bencher
            .with_inputs(waiting)
            .bench_local_refs(|action| action.on_timer(black_box(secs(5))));
    }

    #[divan::bench]
    fn response_200(bencher: Bencher) {
        bencher
            .with_inputs(second_in_flight)
            .bench_local_refs(|action| {
                action.on_response(black_box(secs(7)), response(200, None, secs(7)))
            });
    }
}

mod schedule_a {
    use super::*;

    #[divan::bench]
    fn decisions() -> Action {
        replay_schedule_a(black_box(Policy::new()))
    }

    #[divan::bench]
    fn report() -> retry_budget_model::report::Report {
        replay_schedule_a(black_box(Policy::new())).report()
    }

    #[divan::bench]
    fn simulate(bencher: Bencher) {
        let scenario = schedule_a();
        bencher.bench_local(|| super::simulate(black_box(&scenario)));
    }

    #[divan::bench]
    fn parse_and_simulate(bencher: Bencher) {
        let text = scenario_file("schedule-a");
        bencher.bench_local(|| super::simulate(&load(black_box(&text))?).ok());
    }
}
