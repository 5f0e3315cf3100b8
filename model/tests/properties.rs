//! Property tests of the model against the decision rules (`docs/rules.md`, rules 1-12).
//!
//! Scenarios are generated directly as [`Scenario`] values, each with an oracle for every
//! response's `Retry-After` (what the rules say it means, worked out here and not by the crate's
//! parser). Every scenario is run twice: through [`simulate`], and through [`drive`], a driver
//! written from the rules that feeds an [`Action`] directly so that the properties can read the
//! action's own trace and stop cause. The two runs must produce the same report.
//!
//! Other properties feed an [`Action`] arbitrary input (any header text, any receipt clock, any
//! time, times that run backwards, events in any order, extreme policies) and check that it never
//! panics and that a stop is final.

use core::time::Duration;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use serde_json::Value;

use retry_budget_model::action::{Event, Gate, PlannedWait, RetryAfterReading, StopCause};
use retry_budget_model::report::Report;
use retry_budget_model::scenario::{Reply, Scenario, ScriptedResponse};
use retry_budget_model::simulate::simulate;
use retry_budget_model::utc::UtcTime;
use retry_budget_model::{
    Action, Decision, Outcome, Policy, ReceiptClock, Response, StatusSet, TransportError,
};

mod common;
use common::{civil_from_days, LONG_DAYS, MONTHS, SHORT_DAYS};

/// proptest's default of 256 cases a property (`PROPTEST_CASES` overrides it); no regression
/// files are written into the source tree.
fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// Whether an attempt starting at `start` has room for its whole cap, computed without saturation:
/// a sum too large for a `Duration` is later than any budget.
fn fits(policy: &Policy, start: Duration) -> bool {
    start
        .checked_add(policy.attempt_cap)
        .is_some_and(|end| end <= policy.budget)
}

/// `fallback_base * 2^(attempt-1)`, for the small attempt numbers generated here.
fn fallback(policy: &Policy, attempt: u32) -> Duration {
    policy
        .fallback_base
        .checked_mul(1u32 << attempt.saturating_sub(1).min(31))
        .unwrap_or(Duration::MAX)
}

// ---------------------------------------------------------------------------------------------
// HTTP-dates, formatted here (independently of the crate's parser) for the oracle.

/// `Mon, 01 Jan 2024 12:00:00 GMT`: the default base for dates when there is no wall clock.
const DEFAULT_BASE_SECS: i64 = 1_704_110_400;

/// The whole second `unix` (seconds since the epoch) as an HTTP-date: 0 = IMF-fixdate,
/// 1 = RFC 850, anything else = asctime.
fn http_date(unix: i64, form: u8) -> String {
    let days = unix.div_euclid(86_400);
    let of_day = unix.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let weekday = usize::try_from((days.rem_euclid(7) + 4) % 7).unwrap_or(0);
    let (h, m, s) = (of_day / 3600, of_day / 60 % 60, of_day % 60);
    let mon = MONTHS[usize::try_from(month - 1).unwrap_or(0)];
    match form {
        0 => format!(
            "{}, {day:02} {mon} {year:04} {h:02}:{m:02}:{s:02} GMT",
            SHORT_DAYS[weekday]
        ),
        1 => format!(
            "{}, {day:02}-{mon}-{:02} {h:02}:{m:02}:{s:02} GMT",
            LONG_DAYS[weekday],
            year.rem_euclid(100)
        ),
        _ => format!(
            "{} {mon} {day:>2} {h:02}:{m:02}:{s:02} {year}",
            SHORT_DAYS[weekday]
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// Generators.

/// A generated scenario: `policy`, the wall clock, the responses, when the user leaves and how
/// late each timer fires; no blocks from others, no jitter draws, nothing expected.
fn generated(
    name: &str,
    policy: Policy,
    wall: Option<UtcTime>,
    responses: Vec<ScriptedResponse>,
    leaves: Option<Duration>,
    late: Vec<Duration>,
) -> Scenario {
    Scenario {
        name: name.to_owned(),
        policy,
        wall_clock_at_start: wall,
        responses,
        user_leaves_at: leaves,
        timer_late_by: late,
        ..Scenario::default()
    }
}

/// What the rules say a generated `Retry-After` means.
#[derive(Clone, Debug)]
enum Oracle {
    /// Absent.
    Missing,
    /// delay-seconds, saturated.
    Seconds(u64),
    /// An HTTP-date naming this whole second since the epoch.
    Date(i64),
    /// Invalid: the fallback applies.
    Invalid,
    /// Arbitrary text: whatever the crate reads it as, the wait must follow that reading.
    Unknown,
}

/// Values that rule 6 calls invalid.
const GARBAGE: [&str; 24] = [
    "",
    "   ",
    "1.5",
    "-1",
    "+5",
    "NaN",
    "tomorrow",
    "3, 4",
    "0x1F",
    "1e3",
    "5 5",
    "5\n",
    "\u{a0}5",
    "\u{663}",
    "\u{ff13}",
    "Mon, 01 Jan 2024 12:00:00 UTC",
    "mon, 01 Jan 2024 12:00:00 GMT",
    "Mon, 01 jan 2024 12:00:00 GMT",
    "Fri, 30 Feb 2024 12:00:00 GMT",
    "Mon, 01 Jan 2024 24:00:00 GMT",
    "Mon, 01 Jan 2024 12:00:60 GMT",
    "Mon, 1 Jan 2024 12:00:00 GMT",
    "Mon,  01 Jan 2024 12:00:00 GMT",
    // The crate's stated choice: a day name that does not match its date is invalid.
    "Tue, 01 Jan 2024 12:00:00 GMT",
];

/// A duration in `[0, max]` at one of several grains: whole seconds, whole milliseconds,
/// fractional milliseconds (microseconds), nanoseconds, or exactly an end.
fn dur_upto(max: Duration) -> BoxedStrategy<Duration> {
    let ms = u64::try_from(max.as_millis()).unwrap_or(u64::MAX);
    let us = u64::try_from(max.as_micros()).unwrap_or(u64::MAX);
    let ns = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
    prop_oneof![
        3 => (0..=max.as_secs()).prop_map(Duration::from_secs),
        2 => (0..=ms).prop_map(Duration::from_millis),
        2 => (0..=us).prop_map(Duration::from_micros),
        1 => (0..=ns).prop_map(Duration::from_nanos),
        1 => Just(max),
        1 => Just(Duration::ZERO),
    ]
    .boxed()
}

fn nonzero_upto(max: Duration) -> BoxedStrategy<Duration> {
    dur_upto(max)
        .prop_map(|d| d.max(Duration::from_nanos(1)))
        .boxed()
}

/// Any time at all, up to `Duration::MAX`.
fn any_time() -> BoxedStrategy<Duration> {
    prop_oneof![
        4 => dur_upto(secs(60)),
        1 => (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
        1 => Just(Duration::MAX),
        1 => Just(Duration::ZERO),
    ]
    .boxed()
}

/// A valid policy of realistic size: budgets to 40 s, caps within them, 1-6 attempts.
fn arb_policy() -> BoxedStrategy<Policy> {
    let budget = prop_oneof![
        6 => (1u64..=40).prop_map(Duration::from_secs),
        2 => (1u64..=40_000).prop_map(Duration::from_millis),
        1 => (1u64..=40_000_000).prop_map(Duration::from_micros),
    ];
    budget
        .prop_flat_map(|budget| {
            let cap = prop_oneof![
                3 => nonzero_upto(budget / 4),
                2 => nonzero_upto(budget.min(secs(6))),
                1 => nonzero_upto(budget),
            ];
            (
                Just(budget),
                cap,
                1u32..=6,
                dur_upto(secs(3)),
                dur_upto(secs(6)),
                any::<bool>(),
                any::<bool>(),
            )
        })
        .prop_map(|(budget, cap, attempts, min_wait, base, also_503, trust)| {
            let statuses = if also_503 {
                StatusSet::EMPTY.with(429).with(503)
            } else {
                StatusSet::EMPTY.with(429)
            };
            let policy = Policy::new()
                .with_budget(budget)
                .with_attempt_cap(cap)
                .with_max_attempts(attempts)
                .with_min_wait(min_wait)
                .with_fallback_base(base)
                .with_retry_statuses(statuses)
                .with_trust_local_clock(trust);
            assert_eq!(policy.validate(), Ok(()), "generated {policy:?}");
            policy
        })
        .boxed()
}

/// Any valid policy, extremes included: budgets and waits up to `Duration::MAX`, any number of
/// attempts, any retryable statuses.
fn arb_any_policy() -> BoxedStrategy<Policy> {
    let extreme = (
        prop_oneof![Just(Duration::MAX), any_time()],
        prop_oneof![Just(Duration::MAX), any_time()],
        prop_oneof![1u32..=6, Just(u32::MAX), any::<u32>()],
        any_time(),
        any_time(),
        vec(any::<u16>(), 0..4),
        any::<bool>(),
    )
        .prop_map(|(budget, cap, attempts, min_wait, base, statuses, trust)| {
            let budget = budget.max(Duration::from_nanos(1));
            let cap = cap.clamp(Duration::from_nanos(1), budget);
            let statuses = statuses.into_iter().fold(StatusSet::EMPTY, StatusSet::with);
            Policy::new()
                .with_budget(budget)
                .with_attempt_cap(cap)
                .with_max_attempts(attempts.max(1))
                .with_min_wait(min_wait)
                .with_fallback_base(base)
                .with_retry_statuses(statuses.with(429))
                .with_trust_local_clock(trust)
        });
    prop_oneof![3 => arb_policy(), 1 => extreme].boxed()
}

/// A `Retry-After` value and what it means; dates are written around `base` (seconds).
fn arb_retry_after(base: i64) -> BoxedStrategy<(Option<String>, Oracle)> {
    let pad = select(vec![("", ""), (" ", ""), ("", "\t"), ("\t ", " ")]);
    let small = (prop_oneof![0u64..=5, 0u64..=30], pad.clone())
        .prop_map(|(s, (l, r))| (Some(format!("{l}{s}{r}")), Oracle::Seconds(s)));
    let huge = prop_oneof![
        Just("99999999999999999999".to_owned()),
        Just("18446744073709551615".to_owned()),
        Just("18446744073709551616".to_owned()),
        "[0-9]{19,40}",
    ]
    .prop_map(|digits| {
        let s = digits.parse::<u64>().unwrap_or(u64::MAX);
        (Some(digits), Oracle::Seconds(s))
    });
    let date = (prop_oneof![-5i64..=15, -30i64..=90], 0u8..3, pad).prop_map(
        move |(offset, form, (l, r))| {
            let at = base + offset;
            (
                Some(format!("{l}{}{r}", http_date(at, form))),
                Oracle::Date(at),
            )
        },
    );
    let garbage = select(GARBAGE.to_vec()).prop_map(|g| (Some(g.to_owned()), Oracle::Invalid));
    let arbitrary = prop_oneof![any::<String>(), "\\PC{0,30}", "[0-9 \t,.+-]{0,8}",]
        .prop_map(|s| (Some(s), Oracle::Unknown));
    prop_oneof![
        3 => Just((None, Oracle::Missing)),
        4 => small,
        1 => huge,
        3 => date,
        2 => garbage,
        2 => arbitrary,
    ]
    .boxed()
}

/// What one attempt gets: 429 most of the time, with a mix of `Retry-After` values.
fn arb_response(cap: Duration, base: i64) -> BoxedStrategy<(ScriptedResponse, Oracle)> {
    let status = prop_oneof![
        12 => Just(429u16),
        3 => Just(200),
        2 => Just(503),
        1 => select(vec![204u16, 301, 404, 500, 103]),
    ];
    let http = (
        status,
        arb_retry_after(base),
        select(vec!["Retry-After", "retry-after", "RETRY-after"]),
        any::<bool>(),
        prop::bool::weighted(0.05),
    )
        .prop_map(|(status, (value, oracle), name, extra, repeated)| {
            let mut headers = Vec::new();
            if extra {
                headers.push(("Content-Type".to_owned(), "application/json".to_owned()));
            }
            let mut oracle = oracle;
            if let Some(value) = value {
                headers.push((name.to_owned(), value));
                if repeated {
                    // Joined as "value, 4": never delay-seconds nor a date.
                    headers.push(("retry-after".to_owned(), "4".to_owned()));
                    if !matches!(oracle, Oracle::Unknown) {
                        oracle = Oracle::Invalid;
                    }
                }
            }
            let reply = Reply::Http {
                status,
                headers,
                body: None,
            };
            (reply, oracle)
        });
    let transport = select(vec!["network", "dns", "reset"])
        .prop_map(|word| (Reply::TransportError(word.to_owned()), Oracle::Missing));
    (dur_upto(cap), prop_oneof![14 => http, 1 => transport])
        .prop_map(|(duration, (reply, oracle))| (ScriptedResponse { duration, reply }, oracle))
        .boxed()
}

/// A scenario and the oracle for each of its responses.
#[derive(Clone, Debug)]
struct Case {
    scenario: Scenario,
    oracle: Vec<Oracle>,
}

/// A scenario under [`arb_policy`]. With `full`, it lists a response for every allowed attempt;
/// otherwise now and then fewer.
fn arb_case_with(full: bool) -> BoxedStrategy<Case> {
    let wall = prop::option::weighted(
        0.75,
        (
            1_600_000_000i64..1_800_000_000,
            prop_oneof![Just(0i64), 0i64..1_000_000_000],
        )
            .prop_map(|(s, ns)| UtcTime::from_unix_nanos(s * 1_000_000_000 + ns)),
    );
    (arb_policy(), wall)
        .prop_flat_map(move |(policy, wall)| {
            let base = wall.map_or(DEFAULT_BASE_SECS, |w| w.unix_secs());
            let n = usize::try_from(policy.max_attempts).unwrap_or(1);
            let count = if full {
                Just(n).boxed()
            } else {
                prop_oneof![9 => Just(n), 1 => 1..=n].boxed()
            };
            let cap = policy.attempt_cap;
            let responses = count.prop_flat_map(move |c| vec(arb_response(cap, base), c));
            let leaves = prop::option::weighted(0.3, dur_upto(policy.budget + secs(5)));
            let late = vec(
                prop_oneof![
                    3 => Just(Duration::ZERO),
                    2 => dur_upto(secs(3)),
                    1 => dur_upto(policy.budget),
                ],
                0..6,
            );
            (Just(policy), Just(wall), responses, leaves, late)
        })
        .prop_map(|(policy, wall, responses, leaves, late)| {
            let (responses, oracle): (Vec<_>, Vec<_>) = responses.into_iter().unzip();
            Case {
                scenario: generated("generated", policy, wall, responses, leaves, late),
                oracle,
            }
        })
        .boxed()
}

fn arb_case() -> BoxedStrategy<Case> {
    arb_case_with(false)
}

// ---------------------------------------------------------------------------------------------
// Running a scenario.

/// A scenario's run: the action as [`drive`] left it, and [`simulate`]'s report.
struct Run {
    action: Action,
    /// The run needed a response the scenario does not list.
    ran_out: bool,
    report: Option<Report>,
}

/// Feeds `scenario` to an [`Action`] as the decision rules describe, leaving the action
/// inspectable. Stops early, with `true`, when the run needs a response that is not listed.
fn drive(scenario: &Scenario) -> (Action, bool) {
    let (mut action, mut decision) = Action::start(scenario.policy).expect("a valid policy");
    let leaves_by = |t: Duration| scenario.user_leaves_at.filter(|l| *l <= t);
    let mut waits = 0;
    loop {
        decision = match decision {
            Decision::Stop(_) => return (action, false),
            Decision::Send { attempt, abort_at } => {
                let started = *action.attempt_starts().last().expect("an attempt started");
                assert_eq!(
                    abort_at,
                    started.saturating_add(scenario.policy.attempt_cap)
                );
                let index = usize::try_from(attempt).expect("small") - 1;
                let Some(scripted) = scenario.responses.get(index) else {
                    return (action, true);
                };
                let receipt = started + scripted.duration;
                match (leaves_by(receipt), &scripted.reply) {
                    (Some(left), _) => action.on_leave(left),
                    (None, Reply::TransportError(word)) => {
                        action.on_transport_error(receipt, TransportError::Failed(word.clone()))
                    }
                    (None, Reply::Http { status, .. }) => {
                        let header = scripted.header("Retry-After");
                        let clock = scenario
                            .wall_clock_at_start
                            .map_or(ReceiptClock::Absent, |w| {
                                ReceiptClock::Server(w.saturating_add(receipt))
                            });
                        action.on_response(
                            receipt,
                            Response {
                                status: *status,
                                retry_after: header.as_deref(),
                                ratelimit: None,
                                clock,
                            },
                        )
                    }
                }
            }
            Decision::Wait { until } => {
                let late = scenario
                    .timer_late_by
                    .get(waits)
                    .copied()
                    .unwrap_or_default();
                waits += 1;
                let wake = until.saturating_add(late);
                match leaves_by(wake) {
                    Some(left) => action.on_leave(left),
                    None => action.on_timer(wake),
                }
            }
            Decision::Await { .. } => panic!("a duration within the cap left an attempt awaited"),
        };
    }
}

fn json(report: &Report) -> Value {
    serde_json::to_value(report).expect("a report serializes")
}

/// Runs `case` both ways and checks that they agree, and that only a scenario listing fewer
/// responses than `max_attempts` can run out.
fn run(case: &Case) -> Result<Run, TestCaseError> {
    let scenario = &case.scenario;
    let (action, ran_out) = drive(scenario);
    let report = match simulate(scenario) {
        Err(error) => {
            prop_assert!(
                ran_out,
                "simulate failed but the rules need no more: {error}"
            );
            prop_assert!(
                scenario.responses.len() < usize::try_from(scenario.policy.max_attempts).unwrap(),
                "ran out with a response for every allowed attempt"
            );
            prop_assert_eq!(error.field.as_str(), "responses");
            None
        }
        Ok(report) => {
            prop_assert!(!ran_out, "simulate did not need the missing response");
            let mine = action.report();
            let report = report.report;
            prop_assert_eq!(
                json(&report),
                json(&mine),
                "simulate disagrees with the rules"
            );
            Some(report)
        }
    };
    Ok(Run {
        action,
        ran_out,
        report,
    })
}

/// The delay the rules give after `attempt`'s retryable response at `receipt`, or `None` for
/// a date without clock evidence (rule 7).
fn expected_delay(
    case: &Case,
    attempt: u32,
    receipt: Duration,
    reading_delay: Option<Duration>,
) -> Option<(Duration, bool)> {
    let policy = &case.scenario.policy;
    let index = usize::try_from(attempt).unwrap() - 1;
    match case.oracle[index] {
        Oracle::Seconds(s) => Some((Duration::from_secs(s), true)),
        Oracle::Date(at) => {
            let wall = case.scenario.wall_clock_at_start?;
            let receipt_utc = wall.unix_nanos() + i128::try_from(receipt.as_nanos()).unwrap();
            let delay = (i128::from(at) * 1_000_000_000 - receipt_utc).max(0);
            Some((Duration::from_nanos(u64::try_from(delay).unwrap()), true))
        }
        Oracle::Missing | Oracle::Invalid => Some((fallback(policy, attempt), false)),
        Oracle::Unknown => Some(match reading_delay {
            Some(delay) => (delay, true),
            None => (fallback(policy, attempt), false),
        }),
    }
}

fn is_retryable(policy: &Policy, status: u16) -> bool {
    !(200..300).contains(&status) && policy.retries(status)
}

fn stop_outcome(event: &Event) -> Option<Outcome> {
    match event {
        Event::Stop { outcome, .. } => Some(*outcome),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Properties of scenario runs.

proptest! {
    #![proptest_config(config())]

    /// Rule 10/11: an attempt starts at `t` only when `t + attempt_cap <= budget`.
    #[test]
    fn no_attempt_starts_without_room_for_its_cap(case in arb_case()) {
        let run = run(&case)?;
        let policy = case.scenario.policy;
        let starts: Vec<Duration> = run
            .action
            .events()
            .iter()
            .filter(|e| matches!(e, Event::Start { .. }))
            .map(Event::at)
            .collect();
        prop_assert_eq!(starts.as_slice(), run.action.attempt_starts());
        prop_assert_eq!(starts.first(), Some(&Duration::ZERO));
        for start in starts {
            prop_assert!(
                fits(&policy, start),
                "attempt started at {start:?}: cap {:?} overruns budget {:?}",
                policy.attempt_cap,
                policy.budget
            );
        }
    }

    /// Rules 7-9, 11: attempt n+1 starts exactly when the timer of the wait after attempt n
    /// fires, never before `receipt + max(min_wait, delay)`, where the delay is the server's
    /// (seconds, or a date read against the wall clock) or else the fallback; and the planned
    /// wait is never shorter than the server's delay.
    #[test]
    fn no_attempt_starts_before_its_wait_and_server_delays_are_never_shortened(case in arb_case()) {
        let run = run(&case)?;
        let policy = case.scenario.policy;
        let events = run.action.events();
        let mut waits = 0usize;
        for (i, event) in events.iter().enumerate() {
            match event {
                Event::Wait { at, plan, .. } => {
                    let Some(Event::Receipt { at: receipt, attempt, retry_after: RetryAfterReading { delay: server_delay, .. }, .. }) =
                        i.checked_sub(1).map(|j| &events[j])
                    else {
                        return Err(TestCaseError::fail(format!("wait without a receipt: {events:?}")));
                    };
                    prop_assert_eq!(at, receipt);
                    prop_assert_eq!(plan.from, *receipt);
                    prop_assert_eq!(plan.after_attempt, *attempt);
                    let Some((delay, server)) =
                        expected_delay(&case, *attempt, *receipt, *server_delay)
                    else {
                        return Err(TestCaseError::fail("waited on a date without a clock"));
                    };
                    prop_assert_eq!(plan.delay, delay, "oracle {:?}", case.oracle[*attempt as usize - 1]);
                    prop_assert_eq!(plan.source.is_server(), server);
                    if let Some(server_delay) = server_delay {
                        prop_assert!(plan.wait >= *server_delay, "server delay shortened");
                    }
                    prop_assert!(plan.wait >= delay && plan.wait >= policy.min_wait);
                    prop_assert_eq!(plan.wait, delay.max(policy.min_wait));
                    prop_assert_eq!(plan.until, receipt.saturating_add(plan.wait));
                    // The next start, if any, is this wait's timer, and not before the rules allow.
                    let next_start = events[i + 1..].iter().find_map(|e| match e {
                        Event::Start { at, attempt, .. } => Some((*at, *attempt)),
                        _ => None,
                    });
                    if let Some((start, next)) = next_start {
                        let late = case.scenario.timer_late_by.get(waits).copied().unwrap_or_default();
                        prop_assert_eq!(next, attempt + 1);
                        prop_assert!(start >= plan.until);
                        prop_assert!(start >= receipt.saturating_add(delay.max(policy.min_wait)));
                        prop_assert_eq!(start, plan.until.saturating_add(late));
                    }
                    waits += 1;
                }
                Event::Start { attempt, at, .. } if *attempt > 1 => {
                    // Every later start follows a timer that fired at or after its wait's end.
                    let Some(Event::Timer { at: woke, due }) = events.get(i - 1) else {
                        return Err(TestCaseError::fail(format!("start without a timer: {events:?}")));
                    };
                    prop_assert_eq!(woke, at);
                    prop_assert!(woke >= due);
                }
                _ => {}
            }
        }
    }

    /// Rule 5: attempts never exceed `max_attempts`, and `attempts_exhausted` means they are
    /// all used.
    #[test]
    fn attempts_never_exceed_max_attempts(case in arb_case()) {
        let run = run(&case)?;
        let policy = case.scenario.policy;
        let action = &run.action;
        prop_assert!(action.attempts() <= policy.max_attempts);
        let numbers: Vec<u32> = action
            .events()
            .iter()
            .filter_map(|e| match e {
                Event::Start { attempt, .. } => Some(*attempt),
                _ => None,
            })
            .collect();
        let expected: Vec<u32> = (1..=action.attempts()).collect();
        prop_assert_eq!(numbers, expected);
        if let Some(report) = &run.report {
            prop_assert!(report.attempts <= policy.max_attempts);
            if report.outcome == Some(Outcome::AttemptsExhausted) {
                prop_assert_eq!(report.attempts, policy.max_attempts);
            }
        }
    }

    /// Request time and waited time are each counted once: `elapsed = request + wait`, exactly;
    /// and each matches the trace (request from each start to its end, wait from each receipt to
    /// its timer or the departure).
    #[test]
    fn elapsed_is_request_time_plus_wait_time_exactly(case in arb_case()) {
        let run = run(&case)?;
        if run.ran_out {
            return Ok(());
        }
        let action = &run.action;
        prop_assert_eq!(
            action.request_time().checked_add(action.wait_time()),
            Some(action.elapsed())
        );
        let (mut request, mut wait) = (Duration::ZERO, Duration::ZERO);
        let (mut in_flight, mut waiting) = (None, None);
        for event in action.events() {
            match event {
                Event::Start { at, .. } => in_flight = Some(*at),
                Event::Receipt { at, .. } | Event::Failure { at, .. } => {
                    request += *at - in_flight.take().expect("an attempt in flight");
                }
                Event::Wait { at, .. } => waiting = Some(*at),
                Event::Timer { at, .. } => wait += *at - waiting.take().expect("a wait"),
                Event::Left { at } => {
                    if let Some(started) = in_flight.take() {
                        request += *at - started;
                    }
                    if let Some(from) = waiting.take() {
                        wait += *at - from;
                    }
                }
                Event::Stop { .. } | Event::Blocked { .. } => {}
            }
        }
        prop_assert_eq!(action.request_time(), request);
        prop_assert_eq!(action.wait_time(), wait);
        let report = run.report.as_ref().expect("a report");
        prop_assert_eq!(report.elapsed_s.0, report.request_s.0 + report.wait_s.0);
    }

    /// Exactly one Stop, and it is the last event; `simulate`, the decision and the stop cause
    /// all report its outcome, at its time.
    #[test]
    fn exactly_one_stop_and_it_is_the_last_event(case in arb_case()) {
        let run = run(&case)?;
        let events = run.action.events();
        let stops = events.iter().filter(|e| stop_outcome(e).is_some()).count();
        if run.ran_out {
            prop_assert_eq!(stops, 0);
            return Ok(());
        }
        prop_assert_eq!(stops, 1);
        let last = events.last().expect("events");
        let outcome = stop_outcome(last).expect("the last event is the stop");
        let report = run.report.as_ref().expect("a report");
        prop_assert_eq!(report.outcome, Some(outcome));
        prop_assert_eq!(run.action.decision(), Decision::Stop(outcome));
        let (at, cause) = run.action.stopped().expect("stopped");
        prop_assert_eq!(cause.outcome(), outcome);
        prop_assert_eq!(at, last.at());
        prop_assert_eq!(run.action.elapsed(), at);
        prop_assert_eq!(report.elapsed_s.0, at);
    }

    /// Rules 2, 11 and 12: after the user leaves at L, nothing happens but the stop, at L; the
    /// run up to L is the run without leaving; leaving after the run would have ended changes
    /// nothing; and leaving at or before that end stops at exactly L.
    #[test]
    fn nothing_happens_after_the_user_leaves(
        case in arb_case_with(true),
        mode in 0u8..4,
        pick in any::<Index>(),
        jitter in dur_upto(secs(2)),
        earlier in any::<bool>(),
    ) {
        let mut stays = case.clone();
        stays.scenario.user_leaves_at = None;
        let baseline = run(&stays)?;
        prop_assert!(!baseline.ran_out);
        let end = baseline.action.elapsed();
        let times: Vec<Duration> = baseline.action.events().iter().map(Event::at).collect();
        let leave = match mode {
            // Exactly at an event (a receipt, a timer, the stop): leaving wins the tie.
            0 => *pick.get(&times),
            1 if earlier => pick.get(&times).saturating_sub(jitter),
            1 => *pick.get(&times) + jitter,
            2 => end.mul_f64(pick.index(1001) as f64 / 1000.0),
            _ => case.scenario.user_leaves_at.unwrap_or(end + jitter),
        };
        let mut leaves = case.clone();
        leaves.scenario.user_leaves_at = Some(leave);
        let left = run(&leaves)?;
        prop_assert!(!left.ran_out);
        let events = left.action.events();
        let left_at = events.iter().position(|e| matches!(e, Event::Left { .. }));
        match left_at {
            None => {
                prop_assert!(leave > end, "left at {leave:?} <= end {end:?} but no Left event");
                prop_assert_eq!(
                    json(left.report.as_ref().unwrap()),
                    json(baseline.report.as_ref().unwrap())
                );
            }
            Some(i) => {
                prop_assert!(leave <= end, "left at {leave:?} after the run ended at {end:?}");
                prop_assert_eq!(events.len(), i + 2, "events after leaving: {:?}", &events[i..]);
                prop_assert_eq!(&events[i], &Event::Left { at: leave });
                prop_assert_eq!(stop_outcome(&events[i + 1]), Some(Outcome::UserLeft));
                prop_assert_eq!(events[i + 1].at(), leave);
                prop_assert_eq!(left.action.elapsed(), leave);
                prop_assert_eq!(left.report.as_ref().unwrap().elapsed_s.0, leave);
                prop_assert_eq!(&events[..i], &baseline.action.events()[..i]);
                // The first attempt starts at zero by definition; any later one before L.
                for start in &left.action.attempt_starts()[1..] {
                    prop_assert!(*start < leave, "attempt started at {start:?}, left at {leave:?}");
                }
            }
        }
    }

    /// Rules 10 and 11: a `budget_exhausted` stop happens exactly when the gate fails, at the
    /// receipt (`NoRoom`: the plan's `until + cap > budget`) or at a late wake
    /// (`LateWake`: `woke + cap > budget` although the plan fit); wherever the gate passes the
    /// action goes on. The gate at each receipt is also recomputed from the oracle.
    #[test]
    fn budget_stops_only_when_the_gate_fails(case in arb_case()) {
        let run = run(&case)?;
        if run.ran_out {
            return Ok(());
        }
        let policy = case.scenario.policy;
        let action = &run.action;
        let events = action.events();
        let n = events.len();
        let (at, cause) = action.stopped().expect("stopped");
        let last_wait = events.iter().rev().find_map(|e| match e {
            Event::Wait { plan, .. } => Some(*plan),
            _ => None,
        });
        match cause {
            StopCause::RefusedWait { plan, .. } => {
                prop_assert!(!fits(&policy, plan.until), "NoRoom but {plan:?} fits {policy:?}");
                prop_assert_eq!(at, plan.from);
                let receipt = matches!(
                    events[n - 2],
                    Event::Receipt { at, attempt, .. } if at == plan.from && attempt == plan.after_attempt
                );
                prop_assert!(receipt, "NoRoom not at its receipt: {events:?}");
                prop_assert_eq!(plan.until, plan.from.saturating_add(plan.wait));
            }
            StopCause::LateWake { plan, woke, .. } => {
                prop_assert!(!fits(&policy, *woke), "LateWake at {woke:?} fits {policy:?}");
                prop_assert!(fits(&policy, plan.until), "the plan never passed the gate");
                prop_assert!(*woke >= plan.until);
                prop_assert_eq!(at, *woke);
                prop_assert_eq!(Some(*plan), last_wait);
                prop_assert_eq!(&events[n - 2], &Event::Timer { at: *woke, due: plan.until });
            }
            other => prop_assert_ne!(other.outcome(), Outcome::BudgetExhausted),
        }
        for (i, event) in events.iter().enumerate() {
            let next = events.get(i + 1);
            match event {
                Event::Wait { plan, .. } => {
                    prop_assert!(fits(&policy, plan.until), "waiting for {plan:?} that cannot fit");
                }
                Event::Timer { at, due } => {
                    prop_assert!(at >= due);
                    if fits(&policy, *at) {
                        prop_assert!(
                            matches!(next, Some(Event::Start { at: s, .. }) if s == at),
                            "the gate passed at {at:?} but no attempt started: {events:?}"
                        );
                    } else {
                        prop_assert_eq!(next.and_then(stop_outcome), Some(Outcome::BudgetExhausted));
                    }
                }
                Event::Receipt { at, attempt, status, retry_after: RetryAfterReading { delay: server_delay, .. }, .. } => {
                    if !is_retryable(&policy, *status) || *attempt >= policy.max_attempts {
                        continue;
                    }
                    match expected_delay(&case, *attempt, *at, *server_delay) {
                        None => prop_assert_eq!(
                            next.and_then(stop_outcome),
                            Some(Outcome::ClockUntrusted)
                        ),
                        Some((delay, _)) => {
                            let until = at.checked_add(delay.max(policy.min_wait));
                            if until.is_some_and(|u| fits(&policy, u)) {
                                prop_assert!(
                                    matches!(next, Some(Event::Wait { .. })),
                                    "the gate passed but no wait: {events:?}"
                                );
                            } else {
                                prop_assert_eq!(
                                    next.and_then(stop_outcome),
                                    Some(Outcome::BudgetExhausted)
                                );
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

proptest! {
    #![proptest_config(config())]

    /// Rules 10 and 11 at their boundary: the gate is exactly `next start + cap <= budget`. A
    /// run is replayed with one wait's timer made late enough to fire at exactly
    /// `budget - cap` (the attempt starts) and one nanosecond later (`LateWake`); and with the
    /// first wait stretched, through `min_wait`, to end at exactly `budget - cap` (it waits) and
    /// one nanosecond later (`NoRoom` at the receipt).
    #[test]
    fn the_gate_is_exact_at_the_boundary(case in arb_case_with(true), pick in any::<Index>()) {
        let mut case = case;
        case.scenario.user_leaves_at = None;
        let baseline = run(&case)?;
        let policy = case.scenario.policy;
        let latest = policy.budget - policy.attempt_cap;
        let nanosecond = Duration::from_nanos(1);
        let events = baseline.action.events();

        let waits: Vec<PlannedWait> = events
            .iter()
            .filter_map(|e| match e {
                Event::Wait { plan, .. } => Some(*plan),
                _ => None,
            })
            .collect();
        if !waits.is_empty() {
            let k = pick.index(waits.len());
            let plan = waits[k];
            let mut late = case.scenario.timer_late_by.clone();
            if late.len() <= k {
                late.resize(k + 1, Duration::ZERO);
            }
            for (extra, starts) in [(Duration::ZERO, true), (nanosecond, false)] {
                late[k] = latest - plan.until + extra;
                let mut shifted = case.clone();
                shifted.scenario.timer_late_by = late.clone();
                let shifted = run(&shifted)?;
                let trace = shifted.action.events();
                let timer = trace
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| matches!(e, Event::Timer { .. }))
                    .nth(k)
                    .map(|(i, _)| i)
                    .expect("the k-th wait's timer");
                let wake = latest + extra;
                prop_assert_eq!(&trace[timer], &Event::Timer { at: wake, due: plan.until });
                if starts {
                    let started = matches!(
                        trace.get(timer + 1),
                        Some(Event::Start { at, attempt, .. })
                            if *at == wake && *attempt == plan.after_attempt + 1
                    );
                    prop_assert!(started, "no start at exactly budget - cap: {trace:?}");
                } else {
                    prop_assert_eq!(trace.len(), timer + 2);
                    prop_assert_eq!(
                        shifted.action.stopped(),
                        Some((wake, &StopCause::LateWake {
                            plan,
                            woke: wake,
                            gate: Gate { cap_end: wake + policy.attempt_cap, deadline: policy.budget },
                        }))
                    );
                }
            }
        }

        if let Some(Event::Receipt { at, attempt: 1, status, retry_after: RetryAfterReading { delay: server_delay, .. }, .. }) = events.get(1) {
            let usable = expected_delay(&case, 1, *at, *server_delay);
            if let Some((delay, _)) = usable.filter(|_| {
                is_retryable(&policy, *status) && policy.max_attempts > 1
            }) {
                if at.saturating_add(delay) <= latest {
                    for (extra, waits) in [(Duration::ZERO, true), (nanosecond, false)] {
                        let mut stretched = case.clone();
                        stretched.scenario.policy.min_wait = latest - *at + extra;
                        let stretched = run(&stretched)?;
                        let trace = stretched.action.events();
                        let until = latest + extra;
                        if waits {
                            let waited = matches!(
                                trace.get(2),
                                Some(Event::Wait { plan, .. }) if plan.until == until
                            );
                            prop_assert!(waited, "no wait until exactly budget - cap: {trace:?}");
                        } else {
                            prop_assert_eq!(trace.len(), 3);
                            let cause = stretched.action.stopped().map(|(_, c)| c.clone());
                            let no_room = matches!(
                                cause,
                                Some(StopCause::RefusedWait { plan, .. }) if plan.until == until
                            );
                            prop_assert!(no_room, "expected NoRoom: {trace:?}");
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Arbitrary input: no panics, and a stop is final.

/// When an event happens, relative to the action's state so that gates and waits are hit.
#[derive(Clone, Debug)]
enum When {
    At(Duration),
    AfterNow(Duration),
    /// Backwards: before the latest time the action has seen.
    BeforeNow(Duration),
    /// At the pending wake-up (the end of the wait, or the cap), this much late.
    Wakeup(Duration),
}

impl When {
    fn resolve(&self, action: &Action) -> Duration {
        match self {
            When::At(t) => *t,
            When::AfterNow(d) => action.elapsed().saturating_add(*d),
            When::BeforeNow(d) => action.elapsed().saturating_sub(*d),
            When::Wakeup(late) => action
                .next_wakeup()
                .unwrap_or_else(|| action.elapsed())
                .saturating_add(*late),
        }
    }
}

fn arb_when() -> BoxedStrategy<When> {
    prop_oneof![
        2 => any_time().prop_map(When::At),
        3 => dur_upto(secs(10)).prop_map(When::AfterNow),
        1 => dur_upto(secs(10)).prop_map(When::BeforeNow),
        3 => prop_oneof![Just(Duration::ZERO), dur_upto(secs(5)), any_time()].prop_map(When::Wakeup),
    ]
    .boxed()
}

fn arb_clock() -> BoxedStrategy<ReceiptClock> {
    let near = (1_600_000_000i64..1_800_000_000).prop_map(UtcTime::from_unix_secs);
    let any = any::<i64>().prop_map(UtcTime::from_unix_nanos);
    let utc = prop_oneof![
        near,
        any,
        Just(UtcTime::from_unix_nanos(i64::MIN)),
        Just(UtcTime::from_unix_nanos(i64::MAX)),
    ];
    prop_oneof![
        1 => Just(ReceiptClock::Absent),
        2 => utc.clone().prop_map(ReceiptClock::Server),
        1 => utc.prop_map(ReceiptClock::Local),
    ]
    .boxed()
}

fn arb_header() -> BoxedStrategy<Option<String>> {
    prop_oneof![
        3 => arb_retry_after(DEFAULT_BASE_SECS).prop_map(|(value, _)| value),
        1 => prop::option::of(any::<String>()),
    ]
    .boxed()
}

fn arb_status() -> BoxedStrategy<u16> {
    prop_oneof![
        6 => Just(429u16),
        2 => Just(200),
        1 => Just(503),
        1 => any::<u16>(),
    ]
    .boxed()
}

#[derive(Clone, Debug)]
enum Op {
    Respond {
        when: When,
        status: u16,
        retry_after: Option<String>,
        clock: ReceiptClock,
    },
    Fail {
        when: When,
        timed_out: bool,
    },
    Timer(When),
    Leave(When),
}

fn arb_op() -> BoxedStrategy<Op> {
    prop_oneof![
        4 => (arb_when(), arb_status(), arb_header(), arb_clock()).prop_map(
            |(when, status, retry_after, clock)| Op::Respond { when, status, retry_after, clock }
        ),
        1 => (arb_when(), any::<bool>()).prop_map(|(when, timed_out)| Op::Fail { when, timed_out }),
        4 => arb_when().prop_map(Op::Timer),
        1 => arb_when().prop_map(Op::Leave),
    ]
    .boxed()
}

fn apply(action: &mut Action, op: &Op) -> Decision {
    match op {
        Op::Respond {
            when,
            status,
            retry_after,
            clock,
        } => {
            let now = when.resolve(action);
            action.on_response(
                now,
                Response {
                    status: *status,
                    retry_after: retry_after.as_deref(),
                    ratelimit: None,
                    clock: *clock,
                },
            )
        }
        Op::Fail { when, timed_out } => {
            let now = when.resolve(action);
            let error = if *timed_out {
                TransportError::TimedOut
            } else {
                TransportError::Failed("network".to_owned())
            };
            action.on_transport_error(now, error)
        }
        Op::Timer(when) => {
            let now = when.resolve(action);
            action.on_timer(now)
        }
        Op::Leave(when) => {
            let now = when.resolve(action);
            action.on_leave(now)
        }
    }
}

/// Everything observable about an action.
#[derive(Debug, PartialEq)]
struct Snapshot {
    events: Vec<Event>,
    decision: Decision,
    stopped: Option<(Duration, StopCause)>,
    elapsed: Duration,
    request: Duration,
    wait: Duration,
    starts: Vec<Duration>,
    next_wakeup: Option<Duration>,
    pending: Option<PlannedWait>,
    in_flight: Option<u32>,
    report: Value,
}

fn snapshot(action: &Action) -> Snapshot {
    Snapshot {
        events: action.events().to_vec(),
        decision: action.decision(),
        stopped: action.stopped().map(|(at, cause)| (at, cause.clone())),
        elapsed: action.elapsed(),
        request: action.request_time(),
        wait: action.wait_time(),
        starts: action.attempt_starts().to_vec(),
        next_wakeup: action.next_wakeup(),
        pending: action.pending_wait().copied(),
        in_flight: action.in_flight(),
        report: json(&action.report()),
    }
}

/// What must hold of any trace, whatever the driver did.
fn check_any_trace(action: &Action) -> Result<(), TestCaseError> {
    let policy = action.policy();
    let events = action.events();
    prop_assert!(action.attempts() <= policy.max_attempts);
    let mut previous = Duration::ZERO;
    let mut last_wait: Option<PlannedWait> = None;
    for (i, event) in events.iter().enumerate() {
        let at = event.at();
        prop_assert!(
            at >= previous,
            "time ran backwards in the trace: {events:?}"
        );
        previous = at;
        match event {
            Event::Start { at, attempt, .. } => {
                prop_assert!(fits(policy, *at), "start at {at:?} under {policy:?}");
                if *attempt > 1 {
                    let plan = last_wait.expect("a wait before a later attempt");
                    prop_assert_eq!(plan.after_attempt + 1, *attempt);
                    prop_assert!(*at >= plan.until, "started at {at:?} before {plan:?}");
                    prop_assert_eq!(
                        &events[i - 1],
                        &Event::Timer {
                            at: *at,
                            due: plan.until
                        }
                    );
                }
            }
            Event::Wait { plan, .. } => {
                prop_assert!(plan.wait >= policy.min_wait && plan.wait >= plan.delay);
                prop_assert_eq!(plan.until, plan.from.saturating_add(plan.wait));
                let Some(Event::Receipt {
                    retry_after:
                        RetryAfterReading {
                            delay: server_delay,
                            ..
                        },
                    ..
                }) = i.checked_sub(1).map(|j| &events[j])
                else {
                    return Err(TestCaseError::fail("a wait without its receipt"));
                };
                if let Some(delay) = server_delay {
                    prop_assert_eq!(plan.delay, *delay, "the server's delay was not used");
                }
                last_wait = Some(*plan);
            }
            Event::Left { .. } => {
                prop_assert_eq!(
                    events.len(),
                    i + 2,
                    "events after leaving: {:?}",
                    &events[i..]
                );
            }
            Event::Stop { outcome, .. } => {
                prop_assert_eq!(events.len(), i + 1, "events after the stop");
                let (stop_at, cause) = action.stopped().expect("a stop cause");
                prop_assert_eq!(cause.outcome(), *outcome);
                prop_assert_eq!(stop_at, at);
                prop_assert_eq!(action.decision(), Decision::Stop(*outcome));
                prop_assert_eq!(
                    action.request_time().checked_add(action.wait_time()),
                    Some(action.elapsed())
                );
                match cause {
                    StopCause::RefusedWait { plan, .. } => prop_assert!(!fits(policy, plan.until)),
                    StopCause::LateWake { woke, .. } => prop_assert!(!fits(policy, *woke)),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// Any `Retry-After` text and any receipt clock, at any times (backwards included), never
    /// panic; the raw text is kept; delay-seconds (checked here with an independent reading)
    /// always give a usable delay, and a wait never shortens the server's.
    #[test]
    fn any_retry_after_and_clock_at_any_time_never_panics(
        policy in arb_any_policy(),
        steps in vec((arb_when(), arb_status(), arb_header(), arb_clock(), arb_when()), 1..10),
    ) {
        let (mut action, _) = Action::start(policy).expect("a valid policy");
        for (when, status, header, clock, wake) in &steps {
            if action.in_flight().is_none() {
                break;
            }
            let now = when.resolve(&action);
            let cap_ends = action.next_wakeup().expect("an attempt in flight has a cap");
            let decision = action.on_response(
                now,
                Response { status: *status, retry_after: header.as_deref(), ratelimit: None, clock: *clock },
            );
            if now > cap_ends {
                // Received after its cap: the attempt timed out, whatever it brought back.
                prop_assert_eq!(decision, Decision::Stop(Outcome::TransportError));
                break;
            }
            let last = action.last_response().expect("a response");
            let reading = &last.retry_after.header;
            prop_assert_eq!(reading.raw(), header.as_deref());
            prop_assert_eq!(reading.kind() == "missing", header.is_none());
            let trimmed = header.as_deref().map(|h| h.trim_matches([' ', '\t']));
            match trimmed {
                Some(digits) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                    prop_assert_eq!(reading.kind(), "seconds");
                    let s = digits.parse::<u64>().unwrap_or(u64::MAX);
                    prop_assert_eq!(last.retry_after.delay, Some(Duration::from_secs(s)));
                }
                _ => prop_assert_ne!(reading.kind(), "seconds"),
            }
            if matches!(reading.kind(), "missing" | "invalid") {
                prop_assert_eq!(last.retry_after.delay, None);
            }
            if let Decision::Wait { until } = decision {
                let plan = *action.pending_wait().expect("a wait");
                prop_assert_eq!(plan.until, until);
                if let Some(delay) = last.retry_after.delay {
                    prop_assert!(plan.wait >= delay);
                }
                let now = wake.resolve(&action);
                action.on_timer(now);
            }
            check_any_trace(&action)?;
        }
    }

    /// Events in any order at any times never panic, keep the trace well formed, and once the
    /// action has stopped, nothing changes it.
    #[test]
    fn random_event_sequences_never_panic_and_stop_is_final(
        policy in arb_any_policy(),
        ops in vec(arb_op(), 0..16),
    ) {
        let (mut action, first) = Action::start(policy).expect("a valid policy");
        prop_assert_eq!(first, Decision::Send { attempt: 1, abort_at: policy.attempt_cap });
        for op in &ops {
            let before = action.stopped().is_some().then(|| snapshot(&action));
            let decision = apply(&mut action, op);
            match decision {
                // The attempt just sent is in flight: the action now awaits it.
                Decision::Send { attempt, abort_at } => {
                    prop_assert_eq!(action.decision(), Decision::Await { abort_at });
                    prop_assert_eq!(action.in_flight(), Some(attempt));
                    prop_assert_eq!(action.attempts(), attempt);
                }
                other => prop_assert_eq!(other, action.decision()),
            }
            if let Some(before) = before {
                prop_assert_eq!(snapshot(&action), before, "{:?} changed a stopped action", op);
            }
            check_any_trace(&action)?;
        }
    }

    /// Any scenario, however extreme (durations past the cap or `Duration::MAX`, any status,
    /// any headers, any clock, any departure, any lateness), runs without panicking; it fails
    /// only for want of a response, and a finished run counts its time once.
    #[test]
    fn any_scenario_never_panics(
        policy in arb_any_policy(),
        responses in vec(
            (
                any_time(),
                prop_oneof![
                    4 => (
                        any::<u16>(),
                        vec(
                            (
                                prop_oneof![Just("Retry-After".to_owned()), any::<String>()],
                                prop_oneof![
                                    arb_retry_after(DEFAULT_BASE_SECS)
                                        .prop_map(|(v, _)| v.unwrap_or_default()),
                                    any::<String>(),
                                ],
                            ),
                            0..3,
                        ),
                    )
                        .prop_map(|(status, headers)| Reply::Http { status, headers, body: None }),
                    1 => any::<String>().prop_map(Reply::TransportError),
                ],
            )
                .prop_map(|(duration, reply)| ScriptedResponse { duration, reply }),
            0..8,
        ),
        wall in prop::option::of(any::<i64>().prop_map(UtcTime::from_unix_nanos)),
        leaves in prop::option::of(any_time()),
        late in vec(any_time(), 0..8),
    ) {
        let scenario = generated("any", policy, wall, responses, leaves, late);
        match simulate(&scenario) {
            Err(error) => {
                prop_assert_eq!(error.field.as_str(), "responses");
                prop_assert!(
                    u32::try_from(scenario.responses.len()).unwrap() < scenario.policy.max_attempts
                );
            }
            Ok(replay) => {
                let report = &replay.report;
                prop_assert!(report.outcome.is_some());
                prop_assert_eq!(report.request_s.0.checked_add(report.wait_s.0), Some(report.elapsed_s.0));
                let text = serde_json::to_string(&replay).expect("a replay serializes");
                prop_assert!(serde_json::from_str::<Value>(&text).is_ok());
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Deterministic checks.

/// Budget 20 s, 3 attempts, cap 4 s; the first answer is a 429 asking for 3 s after 2 s.
fn late_timer_scenario(late: Duration) -> Scenario {
    Scenario {
        name: "late timer".to_owned(),
        responses: vec![
            ScriptedResponse {
                duration: secs(2),
                reply: Reply::Http {
                    status: 429,
                    headers: vec![("Retry-After".to_owned(), "3".to_owned())],
                    body: None,
                },
            },
            ScriptedResponse {
                duration: secs(2),
                reply: Reply::Http {
                    status: 200,
                    headers: Vec::new(),
                    body: None,
                },
            },
        ],
        timer_late_by: vec![late],
        ..Scenario::default()
    }
}

/// Rule 11: the plan (next start at 5 s, 5 + 4 <= 20) fits, but the timer fires 14 s late, at
/// 19 s; 19 + 4 > 20, so the action stops at 19 s with `budget_exhausted`, not reusing the gate
/// passed at the receipt.
#[test]
fn a_late_timer_is_rechecked_at_the_wake_time() {
    let (action, ran_out) = drive(&late_timer_scenario(secs(14)));
    assert!(!ran_out);
    let plan = match action.events() {
        [Event::Start { .. }, Event::Receipt { .. }, Event::Wait { plan, .. }, Event::Timer { at, due }, Event::Stop {
            at: stop,
            outcome: Outcome::BudgetExhausted,
            ..
        }] => {
            assert_eq!((*at, *due, *stop), (secs(19), secs(5), secs(19)));
            *plan
        }
        other => panic!("unexpected trace: {other:?}"),
    };
    assert_eq!(plan.until, secs(5));
    assert!(fits(action.policy(), plan.until), "the plan itself fit");
    assert_eq!(
        action.stopped(),
        Some((
            secs(19),
            &StopCause::LateWake {
                plan,
                woke: secs(19),
                gate: Gate {
                    cap_end: secs(23),
                    deadline: secs(20)
                }
            }
        ))
    );
    assert_eq!(action.attempts(), 1);
    assert_eq!(
        (action.request_time(), action.wait_time(), action.elapsed()),
        (secs(2), secs(17), secs(19))
    );

    // The same wake fed to an action directly.
    let (mut direct, _) = Action::start(Policy::new()).unwrap();
    let wait = direct.on_response(
        secs(2),
        Response {
            status: 429,
            retry_after: Some("3"),
            ratelimit: None,
            clock: ReceiptClock::Absent,
        },
    );
    assert_eq!(wait, Decision::Wait { until: secs(5) });
    assert_eq!(
        direct.on_timer(secs(19)),
        Decision::Stop(Outcome::BudgetExhausted)
    );

    // The report from simulate agrees.
    let report = simulate(&late_timer_scenario(secs(14))).unwrap();
    assert_eq!(report.report.outcome, Some(Outcome::BudgetExhausted));
    assert_eq!(report.report.elapsed_s.0, secs(19));
}

/// At the boundary, a wake at 16 s leaves exactly the cap (16 + 4 = 20): the attempt starts. One
/// nanosecond later it does not.
#[test]
fn a_late_timer_that_still_leaves_a_full_cap_starts_the_attempt() {
    let report = simulate(&late_timer_scenario(secs(11))).unwrap();
    assert_eq!(report.report.outcome, Some(Outcome::Success));
    assert_eq!(
        report
            .report
            .attempt_starts_s
            .iter()
            .map(|s| s.0)
            .collect::<Vec<_>>(),
        [Duration::ZERO, secs(16)]
    );
    assert_eq!(report.report.elapsed_s.0, secs(18));

    let later = secs(11) + Duration::from_nanos(1);
    let report = simulate(&late_timer_scenario(later)).unwrap();
    assert_eq!(report.report.outcome, Some(Outcome::BudgetExhausted));
    assert_eq!(
        report.report.elapsed_s.0,
        secs(16) + Duration::from_nanos(1)
    );
    assert_eq!(report.report.attempts, 1);
}

/// The oracle's dates are ones the crate reads as dates, in all three forms.
#[test]
fn generated_http_dates_are_read_as_dates() {
    assert_eq!(
        http_date(DEFAULT_BASE_SECS, 0),
        "Mon, 01 Jan 2024 12:00:00 GMT"
    );
    assert_eq!(http_date(784_111_777, 1), "Sunday, 06-Nov-94 08:49:37 GMT");
    assert_eq!(http_date(784_111_777, 2), "Sun Nov  6 08:49:37 1994");
    for form in 0..3 {
        let (mut action, _) = Action::start(Policy::new().with_budget(secs(3600))).unwrap();
        let text = http_date(DEFAULT_BASE_SECS + 30, form);
        let decision = action.on_response(
            secs(2),
            Response {
                status: 429,
                retry_after: Some(&text),
                ratelimit: None,
                clock: ReceiptClock::Server(UtcTime::from_unix_secs(DEFAULT_BASE_SECS + 2)),
            },
        );
        assert_eq!(decision, Decision::Wait { until: secs(30) }, "{text}");
    }
}

/// With a budget of exactly `Duration::MAX` (what the scenario loader makes of any `budget_s`
/// from about 1.8e19 up) a saturating `start + cap` would equal the budget and pass; rule 10
/// wants `start + cap > budget` to stop, so the gate must not saturate.
#[test]
fn a_budget_of_duration_max_still_gates_starts_whose_cap_overflows() {
    // The cap is the whole budget: only the first attempt can fit.
    let policy = Policy::new()
        .with_budget(Duration::MAX)
        .with_attempt_cap(Duration::MAX)
        .with_min_wait(Duration::ZERO)
        .with_fallback_base(Duration::ZERO);
    let (mut action, _) = Action::start(policy).unwrap();
    let decision = action.on_response(
        secs(1),
        Response {
            status: 429,
            retry_after: None,
            ratelimit: None,
            clock: ReceiptClock::Absent,
        },
    );
    assert_eq!(
        decision,
        Decision::Stop(Outcome::BudgetExhausted),
        "a start at 1 s with a cap of Duration::MAX overruns a budget of Duration::MAX"
    );

    // delay-seconds too large to represent mean "longer than any budget" (rule 6).
    let policy = Policy::new().with_budget(Duration::MAX);
    let (mut action, _) = Action::start(policy).unwrap();
    let decision = action.on_response(
        secs(2),
        Response {
            status: 429,
            retry_after: Some("99999999999999999999"),
            ratelimit: None,
            clock: ReceiptClock::Absent,
        },
    );
    assert_eq!(decision, Decision::Stop(Outcome::BudgetExhausted));
}
