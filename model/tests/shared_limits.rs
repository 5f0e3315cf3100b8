//! Property tests of the shared rate limits and jitter (`docs/rules.md`, rules 13-18).
//!
//! Scenarios are generated on a quarter-second grid, so that blocks, receipts, timers and
//! departures often fall on the same instant and the tie rules are exercised. Each property
//! states what it checks against: the scenario's own blocks, the trace, or a second run of the
//! same scenario with every jitter draw set to 0.

use core::time::Duration;

use proptest::collection::vec;
use proptest::prelude::*;

use retry_budget_model::action::{Event, RetryAfterReading, StopCause};
use retry_budget_model::scenario::{OriginBlock, Reply, Scenario, ScriptedResponse};
use retry_budget_model::simulate::run;
use retry_budget_model::utc::UtcTime;
use retry_budget_model::{Action, Decision, Outcome, Policy, ReceiptClock, Response};

/// proptest's default of 256 cases a property (`PROPTEST_CASES` overrides it); no regression
/// files are written into the source tree.
fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// `q` quarter-seconds.
fn quarters(q: u64) -> Duration {
    Duration::from_millis(q * 250)
}

/// `Mon, 01 Jan 2024 12:00:00 GMT`, the wall clock of the generated scenarios that have one.
const WALL_SECS: i64 = 1_704_110_400;

/// Whether an attempt starting at `start` has room for its whole cap.
fn fits(policy: &Policy, start: Duration) -> bool {
    start
        .checked_add(policy.attempt_cap)
        .is_some_and(|end| end <= policy.budget)
}

// ---------------------------------------------------------------------------------------------
// Generators.

/// Budgets of 5-40 s, caps that fit, up to 5 attempts, floors, fallbacks and jitter of a few
/// seconds; only 429 retried.
fn arb_policy() -> impl Strategy<Value = Policy> {
    (
        20u64..=160,
        1u64..=24,
        1u32..=5,
        0u64..=8,
        0u64..=16,
        0u64..=24,
    )
        .prop_map(|(budget, cap, attempts, floor, fallback, jitter)| {
            Policy::new()
                .with_budget(quarters(budget))
                .with_attempt_cap(quarters(cap.min(budget)))
                .with_max_attempts(attempts)
                .with_min_wait(quarters(floor))
                .with_fallback_base(quarters(fallback))
                .with_jitter(quarters(jitter))
        })
}

/// A `Retry-After`: absent, delay-seconds, unreadable, or a date a few seconds after noon.
fn arb_retry_after() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        2 => Just(None),
        5 => (0u64..=15).prop_map(|s| Some(s.to_string())),
        1 => Just(Some("soon".to_owned())),
        2 => (0u64..=40).prop_map(|s| Some(format!("Mon, 01 Jan 2024 12:00:{s:02} GMT"))),
    ]
}

/// What one attempt gets: mostly 429s, some successes, the odd status that is not retried.
fn arb_response(cap: Duration) -> impl Strategy<Value = ScriptedResponse> {
    let cap_q = u64::try_from(cap.as_millis() / 250).unwrap_or(0);
    let status = prop_oneof![8 => Just(429u16), 2 => Just(200), 1 => Just(503)];
    (0..=cap_q, status, arb_retry_after()).prop_map(|(d, status, header)| ScriptedResponse {
        duration: quarters(d),
        reply: Reply::Http {
            status,
            headers: header
                .map(|h| vec![("Retry-After".to_owned(), h)])
                .unwrap_or_default(),
            body: None,
        },
    })
}

/// Blocks at any time of the run (a quarter of them at the press), ending at any time.
fn arb_blocks(budget: Duration) -> impl Strategy<Value = Vec<OriginBlock>> {
    let b = u64::try_from(budget.as_millis() / 250).unwrap_or(0);
    let at = prop_oneof![1 => Just(0u64), 3 => 0..=b + 20];
    vec(
        (at, 0..=b + 40).prop_map(|(at, until)| OriginBlock {
            at: quarters(at),
            until: quarters(until),
        }),
        0..5,
    )
}

/// A scenario on the quarter-second grid. With `on_time`, every timer fires when it is due.
fn arb_scenario(on_time: bool) -> impl Strategy<Value = Scenario> {
    arb_policy().prop_flat_map(move |policy| {
        let n = usize::try_from(policy.max_attempts).unwrap_or(1);
        let b = u64::try_from(policy.budget.as_millis() / 250).unwrap_or(0);
        let late = if on_time {
            Just(Vec::new()).boxed()
        } else {
            vec(prop_oneof![3 => Just(0u64), 1 => 0..=12u64], 0..5)
                .prop_map(|l| l.into_iter().map(quarters).collect())
                .boxed()
        };
        (
            Just(policy),
            any::<bool>(),
            vec(arb_response(policy.attempt_cap), n),
            arb_blocks(policy.budget),
            vec(0.0f64..1.0, 0..6),
            prop::option::weighted(0.2, (0..=b + 8).prop_map(quarters)),
            late,
        )
            .prop_map(
                |(policy, wall, responses, blocks, draws, leaves, late)| Scenario {
                    name: "generated".to_owned(),
                    policy,
                    wall_clock_at_start: wall.then(|| UtcTime::from_unix_secs(WALL_SECS)),
                    responses,
                    user_leaves_at: leaves,
                    timer_late_by: late,
                    origin_blocks: blocks,
                    jitter_draws: draws,
                    ..Scenario::default()
                },
            )
    })
}

/// The scenario's run to its stop (every scenario lists a response for every attempt).
fn played(scenario: &Scenario) -> Result<Action, TestCaseError> {
    run(scenario).map_err(|e| TestCaseError::fail(e.to_string()))
}

/// The same scenario with every jitter draw 0.
fn without_jitter(scenario: &Scenario) -> Scenario {
    Scenario {
        jitter_draws: Vec::new(),
        ..scenario.clone()
    }
}

fn starts(action: &Action) -> Vec<Duration> {
    action.attempt_starts().to_vec()
}

// ---------------------------------------------------------------------------------------------
// Properties.

proptest! {
    #![proptest_config(config())]

    /// No attempt starts before a block known at that time: `start >= B(start)`, with `B` worked
    /// out from the scenario's blocks that arrive by the start (and before the user leaves), and
    /// from the action's own valid server delays received before it (rule 13).
    #[test]
    fn no_attempt_starts_before_a_block_known_then(scenario in arb_scenario(false)) {
        let action = played(&scenario)?;
        let leaves = scenario.user_leaves_at;
        // The action's own valid server delays, from the receipts before each start.
        let mut own = Duration::ZERO;
        for event in action.events() {
            let start = match event {
                Event::Receipt { at, retry_after: RetryAfterReading { delay: Some(d), .. }, .. } => {
                    own = own.max(at.saturating_add(*d));
                    continue;
                }
                Event::Start { at, .. } => *at,
                _ => continue,
            };
            let from_others = scenario
                .origin_blocks
                .iter()
                .filter(|b| b.at <= start && leaves.map_or(true, |l| b.at < l))
                .map(|b| b.until);
            let block = from_others.fold(own, Duration::max);
            prop_assert!(
                start >= block,
                "attempt started at {start:?} while the origin was blocked until {block:?}: {:?}",
                action.events()
            );
        }
    }

    /// Jitter never makes a start earlier, and never adds an attempt: with the scenario's draws,
    /// each attempt starts no earlier than the same attempt with every draw 0, and there are no
    /// more of them. (Timers may fire late here: lateness moves both runs alike.)
    #[test]
    fn jitter_never_makes_a_start_earlier(scenario in arb_scenario(false)) {
        let jittered = starts(&played(&scenario)?);
        let plain = starts(&played(&without_jitter(&scenario))?);
        prop_assert!(jittered.len() <= plain.len(), "{jittered:?} vs {plain:?}");
        for (with, without) in jittered.iter().zip(&plain) {
            prop_assert!(with >= without, "{jittered:?} vs {plain:?}");
        }
    }

    /// Jitter is never the cause of a stop (rule 16): with timers on time, every wait's planned
    /// start fits its cap, the jitter is what the draw asks for clamped to the room left, and
    /// every budget stop is decided on the start *without* jitter (the earliest start, or a
    /// block's end); none comes from a timer that woke too late.
    #[test]
    fn jitter_is_never_the_cause_of_a_stop(scenario in arb_scenario(true)) {
        let action = played(&scenario)?;
        let policy = scenario.policy;
        for event in action.events() {
            let Event::Wait { plan, .. } = event else { continue };
            prop_assert!(fits(&policy, plan.until), "planned start {:?} overruns", plan.until);
            prop_assert_eq!(plan.until, plan.earliest().saturating_add(plan.jitter));
            prop_assert!(plan.jitter <= policy.jitter);
            let room = policy.budget - policy.attempt_cap - plan.earliest();
            prop_assert!(plan.jitter <= room);
        }
        if let Some((_, cause)) = action.stopped() {
            match cause {
                StopCause::RefusedWait { plan, .. } => {
                    prop_assert!(plan.jitter.is_zero());
                    prop_assert!(!fits(&policy, plan.earliest()));
                }
                StopCause::OriginBlocked { until, .. } => prop_assert!(!fits(&policy, *until)),
                StopCause::LateWake { .. } => {
                    return Err(TestCaseError::fail(format!(
                        "an on-time timer stopped the action: {:?}",
                        action.events()
                    )));
                }
                _ => {}
            }
        }
        // Run against run: with a single wait (two attempts, no blocks), the history before
        // the wait is the same with and without jitter, so a budget stop in the jittered run
        // means one in the plain run too. (With more waits, an earlier spread start legitimately
        // leaves less budget for later ones; that is the price of spreading, not a jitter stop.)
        if policy.max_attempts <= 2 && scenario.origin_blocks.is_empty() {
            let plain = played(&without_jitter(&scenario))?;
            let budget_stop = |a: &Action| {
                a.stopped().map(|(_, c)| c.outcome()) == Some(Outcome::BudgetExhausted)
            };
            prop_assert!(
                !budget_stop(&action) || budget_stop(&plain),
                "jitter stopped a run that without it does not stop for the budget"
            );
        }
    }

    /// Request time and waited time are each counted once, the wait before the first attempt
    /// included: `elapsed = request + wait`, exactly; and the stop is the last event.
    #[test]
    fn elapsed_is_request_plus_wait_with_blocks_and_jitter(scenario in arb_scenario(false)) {
        let action = played(&scenario)?;
        prop_assert_eq!(
            action.request_time().checked_add(action.wait_time()),
            Some(action.elapsed())
        );
        let report = action.report();
        prop_assert_eq!(report.elapsed_s.0, report.request_s.0 + report.wait_s.0);
        let ends_with_stop = matches!(action.events().last(), Some(Event::Stop { .. }));
        prop_assert!(ends_with_stop, "the last event is not the stop");
        let stops = action.events().iter().filter(|e| matches!(e, Event::Stop { .. })).count();
        prop_assert_eq!(stops, 1);
        // Blocks are recorded as they arrive, in time order, and never after the stop.
        let (stop_at, _) = action.stopped().expect("stopped");
        let mut last = Duration::ZERO;
        for event in action.events() {
            if let Event::Blocked { at, .. } = event {
                prop_assert!(*at >= last && *at <= stop_at);
                last = *at;
            }
        }
        if action.attempts() == 0 {
            let visible = action.visible();
            let says = visible.last().is_some_and(|l| l.ends_with("No request was sent."));
            prop_assert!(says, "{:?}", visible);
            prop_assert!(action.last_response().is_none());
        }
    }

    /// Rule 13: after the run, the action announces `receipt + delay` of its last response when
    /// that was a retryable status carrying a valid server delay, and nothing after any other
    /// status (a 200 or a 503 the policy does not retry blocks nobody, whatever its
    /// `Retry-After`); its `B` is at least every block it learned.
    #[test]
    fn only_a_retryable_status_announces_its_valid_server_delay(scenario in arb_scenario(false)) {
        let action = played(&scenario)?;
        let policy = scenario.policy;
        let last_receipt = action.events().iter().rev().find_map(|e| match e {
            Event::Receipt { at, status, retry_after, .. } => Some(
                retry_after
                    .delay
                    .filter(|_| policy.retries(*status))
                    .map(|d| at.saturating_add(d)),
            ),
            _ => None,
        });
        prop_assert_eq!(action.announced_block(), last_receipt.flatten());
        for event in action.events() {
            match event {
                Event::Blocked { until, .. } => prop_assert!(action.origin_block() >= *until),
                Event::Receipt { at, status, retry_after: RetryAfterReading { delay: Some(d), .. }, .. }
                    if policy.retries(*status) =>
                {
                    prop_assert!(action.origin_block() >= at.saturating_add(*d));
                }
                _ => {}
            }
        }
    }

    /// Blocks, draws and times in any order and of any size (NaN and infinite draws included)
    /// never panic, and a stop is final: nothing is recorded after it.
    #[test]
    fn any_blocks_and_draws_never_panic_and_stop_is_final(
        policy in arb_policy(),
        at_start in vec(any::<u64>().prop_map(Duration::from_nanos), 0..3),
        first_draw in any::<f64>(),
        ops in vec((0u8..5, any::<u32>(), any::<u64>(), any::<f64>()), 0..24),
    ) {
        let Ok((mut action, _)) = Action::start_on_origin(policy, &at_start, first_draw)
        else {
            return Err(TestCaseError::fail("a valid policy was refused"));
        };
        for (op, at_ms, until_ns, draw) in ops {
            let now = Duration::from_millis(u64::from(at_ms));
            let stopped = action.stopped().is_some();
            let before = action.events().len();
            let decision = match op {
                0 => action.on_block(now, Duration::from_nanos(until_ns)),
                1 => action.on_block(now, Duration::MAX),
                2 => action.on_response_drawn(
                    now,
                    Response {
                        status: 429,
                        retry_after: Some(if until_ns % 2 == 0 { "3" } else { "99999999999999999999999" }), ratelimit: None,
                        clock: ReceiptClock::Absent,
                    },
                    draw,
                ),
                3 => action.on_timer(now),
                _ => action.on_leave(now),
            };
            if stopped {
                prop_assert_eq!(action.events().len(), before, "recorded after the stop");
            }
            if let Decision::Stop(outcome) = decision {
                prop_assert_eq!(action.stopped().map(|(_, c)| c.outcome()), Some(outcome));
                prop_assert_eq!(
                    action.request_time().checked_add(action.wait_time()),
                    Some(action.elapsed())
                );
            }
            if let Some(plan) = action.pending_wait() {
                prop_assert!(plan.until >= action.origin_block(), "a wait ends inside a block");
                prop_assert!(fits(&policy, plan.until));
            }
        }
    }
}

/// Jitter spreads clients that were told the same time: the same 429 with different draws
/// starts the next attempt at different times, each no earlier than the server asked.
#[test]
fn draws_spread_starts_that_the_server_set_to_the_same_instant() {
    let policy = Policy::new().with_jitter(Duration::from_secs(2));
    let mut seen = Vec::new();
    for draw in [0.0, 0.25, 0.5, 0.75] {
        let (mut action, _) = Action::start(policy).expect("valid policy");
        let response = Response {
            status: 429,
            retry_after: Some("3"),
            ratelimit: None,
            clock: ReceiptClock::Absent,
        };
        let Decision::Wait { until } =
            action.on_response_drawn(Duration::from_secs(2), response, draw)
        else {
            panic!("expected a wait");
        };
        assert!(until >= Duration::from_secs(5));
        seen.push(until);
        // Only the server's delay is announced, never the jitter.
        assert_eq!(action.announced_block(), Some(Duration::from_secs(5)));
    }
    assert_eq!(
        seen,
        [5_000, 5_500, 6_000, 6_500].map(Duration::from_millis)
    );
}
