//! Fuzz target: the scenario loader (`scenario::parse_file`) and `simulate::simulate`.
//!
//! Every input is used twice:
//!
//! 1. As a scenario file's bytes (lossy UTF-8, so every input reaches the JSON parser):
//!    `parse_file` never panics, and every rejection names a scenario (or the file).
//! 2. As a recipe for a scenario built in code, as a driver would build one (`Scenario`'s
//!    fields are public): this reaches `simulate` far more often than valid JSON does, and with
//!    what the loader refuses, such as a response slower than the per-attempt cap.
//!
//! For every scenario either way, `simulate` never panics and either fails only for running out
//! of scripted responses (or, built in code, for an invalid policy), or returns a report where
//!   - `elapsed_s == request_s + wait_s` exactly;
//!   - `attempts <= max_attempts`, one start time per attempt, in order, each with room for
//!     the per-attempt cap inside the budget; no attempt only when a block heard before the
//!     first start (or a late timer or a departure during its wait) stopped the action;
//!   - there is an outcome and exactly one `stop` event, the last one, at `elapsed_s`, with
//!     that outcome;
//!   - event times never go backwards;
//!   - the report serializes to JSON (what the replay command prints).

#![no_main]

use core::time::Duration;

use libfuzzer_sys::fuzz_target;
use retry_budget_model::action::StopCause;
use retry_budget_model::policy::{Policy, StatusSet};
use retry_budget_model::scenario::{parse_file, OriginBlock, Reply, Scenario, ScriptedResponse};
use retry_budget_model::simulate::simulate;
use retry_budget_model::utc::UtcTime;
use retry_budget_model::Event;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(results) = parse_file("fuzz.json", &text) {
        for result in results {
            match result {
                Ok(scenario) => check(&scenario),
                Err(error) => assert!(!error.scenario.is_empty(), "{error}"),
            }
        }
    }
    check(&built(&mut Recipe(data)));
});

fn check(scenario: &Scenario) {
    let replay = match simulate(scenario) {
        Ok(replay) => replay,
        Err(error) => {
            // The loader checks everything else up front; only the run can discover that it
            // needs more responses than the scenario lists. A policy built in code is checked
            // when the action starts.
            if scenario.policy.validate().is_ok() {
                assert_eq!(error.field, "responses", "{error}");
            } else {
                assert!(error.field.starts_with("policy."), "{error}");
            }
            return;
        }
    };
    let report = &replay.report;
    let policy = &scenario.policy;
    let name = &scenario.name;

    assert_eq!(
        report.elapsed_s.0,
        report.request_s.0 + report.wait_s.0,
        "{name}: elapsed_s != request_s + wait_s"
    );
    if report.attempts == 0 {
        // Only a block heard before the first start (rules 14-17), its wait's late timer, or a
        // departure during that wait stops an action before it sends anything.
        let cause = match report.events.last() {
            Some(Event::Stop { cause, .. }) => Some(cause),
            _ => None,
        };
        assert!(
            matches!(
                cause,
                Some(
                    StopCause::OriginBlocked { .. }
                        | StopCause::LateWake { .. }
                        | StopCause::Left { in_flight: false }
                )
            ),
            "{name}: no attempt, stopped by {cause:?}"
        );
    }
    assert!(
        report.attempts <= policy.max_attempts,
        "{name}: {} attempts > max_attempts {}",
        report.attempts,
        policy.max_attempts
    );
    assert_eq!(
        u32::try_from(report.attempt_starts_s.len()).ok(),
        Some(report.attempts),
        "{name}: one start time per attempt"
    );
    for pair in report.attempt_starts_s.windows(2) {
        assert!(pair[0] <= pair[1], "{name}: attempt starts out of order");
    }
    for start in &report.attempt_starts_s {
        assert!(
            start.0.saturating_add(policy.attempt_cap) <= policy.budget,
            "{name}: an attempt started at {:?} without room for its cap",
            start.0
        );
    }

    let outcome = report
        .outcome
        .unwrap_or_else(|| panic!("{name}: no outcome"));
    let stops: Vec<usize> = report
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Event::Stop { .. }))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(stops.len(), 1, "{name}: {} stop events", stops.len());
    assert_eq!(
        stops[0] + 1,
        report.events.len(),
        "{name}: stop is not last"
    );
    match report.events.last() {
        Some(Event::Stop {
            at,
            outcome: stopped,
            ..
        }) => {
            assert_eq!(*at, report.elapsed_s.0, "{name}: stop time != elapsed_s");
            assert_eq!(*stopped, outcome, "{name}: stop event outcome");
        }
        _ => unreachable!(),
    }
    let mut last = Duration::ZERO;
    for event in &report.events {
        let at = event.at();
        assert!(at >= last, "{name}: event time went backwards: {event:?}");
        last = at;
    }
    let json =
        serde_json::to_string(&replay).map(|text| serde_json::from_str::<serde_json::Value>(&text));
    assert!(
        matches!(json, Ok(Ok(_))),
        "{}: the report does not serialize to JSON that parses",
        replay.name
    );
}

/// Reads a scenario from bytes, one choice per byte; zeros once the bytes run out.
struct Recipe<'a>(&'a [u8]);

impl Recipe<'_> {
    fn byte(&mut self) -> u8 {
        let (&first, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        first
    }

    fn pick<T: Copy>(&mut self, choices: &[T]) -> T {
        choices[usize::from(self.byte()) % choices.len()]
    }

    /// A duration: whole seconds, fractions, nanoseconds, and the ends of the range.
    fn duration(&mut self) -> Duration {
        match self.byte() % 8 {
            0 => Duration::ZERO,
            1 => Duration::from_nanos(u64::from(self.byte())),
            2 => Duration::from_millis(u64::from(self.byte()) * 125),
            3 => self.pick(&[
                Duration::MAX,
                Duration::from_secs(u64::MAX / 2),
                Duration::new(1 << 53, 1),
            ]),
            _ => Duration::from_secs(u64::from(self.byte() % 32)),
        }
    }

    /// A `RateLimit` field: well-formed members, the parser's edges, or garbage.
    fn ratelimit(&mut self) -> String {
        match self.byte() % 4 {
            0 => format!("\"default\";r={};t={}", self.byte() % 4, self.byte() % 40),
            1 => self
                .pick(&[
                    "\"a\";r=0;t=3, \"b\";r=0;t=9",
                    "\"default\";r=0;t=1234567890123456",
                    "\"default\";r=0;t=2.5",
                    "\"default\";r=0;t=-1",
                    "(\"x\" \"y\");r=0;t=3",
                    "\"default\";r=0",
                ])
                .into(),
            2 => self
                .pick(&["", ",", "\"", "r=0;t=3", "\"d\";r=0;t=3,", "\u{e9}"])
                .into(),
            _ => {
                let bytes: Vec<u8> = (0..self.byte() % 12).map(|_| self.byte()).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            }
        }
    }

    fn retry_after(&mut self) -> Option<String> {
        let value = match self.byte() % 16 {
            0 => return None,
            1..=5 => (self.byte() % 32).to_string(),
            6 => self
                .pick(&[
                    "99999999999999999999",
                    "18446744073709551615",
                    "0",
                    " 3 ",
                    "3, 4",
                ])
                .into(),
            7 => self
                .pick(&["", "1.5", "-1", "+5", "NaN", "tomorrow", "\n3"])
                .into(),
            8 => self
                .pick(&[
                    "Sun, 06 Nov 1994 08:49:37 GMT",
                    "Sunday, 06-Nov-94 08:49:37 GMT",
                    "Sun Nov  6 08:49:37 1994",
                    "Fri, 31 Dec 9999 23:59:59 GMT",
                    "Sat, 01 Jan 0000 00:00:00 GMT",
                    "Sun, 31 Dec 2023 23:59:60 GMT",
                    "Mon, 01 Jan 2024 12:00:06 UTC",
                ])
                .into(),
            // A date a few seconds after the fixtures' wall clock, in one of the three forms.
            _ => {
                let secs = self.byte() % 60;
                match self.byte() % 3 {
                    0 => format!("Mon, 01 Jan 2024 12:00:{secs:02} GMT"),
                    1 => format!("Monday, 01-Jan-24 12:00:{secs:02} GMT"),
                    _ => format!("Mon Jan  1 12:00:{secs:02} 2024"),
                }
            }
        };
        Some(value)
    }

    fn response(&mut self) -> ScriptedResponse {
        let duration = self.duration();
        let reply = match self.byte() % 8 {
            0 => Reply::TransportError("network".into()),
            choice => {
                let status = if choice < 4 {
                    429
                } else {
                    self.pick(&[200, 204, 301, 404, 500, 503, 100, 599, 0, 999])
                };
                let mut headers = Vec::new();
                for _ in 0..self.byte() % 3 {
                    if let Some(value) = self.retry_after() {
                        let name =
                            self.pick(&["Retry-After", "retry-after", "RETRY-AFTER", "X-Other"]);
                        headers.push((name.to_owned(), value));
                    }
                }
                for _ in 0..self.byte() % 3 {
                    let value = self.ratelimit();
                    headers.push((self.pick(&["RateLimit", "ratelimit"]).to_owned(), value));
                }
                Reply::Http {
                    status,
                    headers,
                    body: None,
                }
            }
        };
        ScriptedResponse { duration, reply }
    }
}

/// A scenario built in code from the recipe: any policy (valid or not), any clock, up to eight
/// responses of any duration, any departure and timer lateness.
fn built(r: &mut Recipe<'_>) -> Scenario {
    let mut statuses = StatusSet::EMPTY;
    for _ in 0..r.byte() % 4 {
        statuses = statuses.with(r.pick(&[429, 503, 500, 408, 200, 0, 600]));
    }
    let policy = Policy {
        budget: r.duration(),
        max_attempts: r.pick(&[1, 2, 3, 4, 5, 8, 0, u32::MAX]),
        attempt_cap: r.duration(),
        min_wait: r.duration(),
        fallback_base: r.duration(),
        retry_statuses: statuses,
        trust_local_clock: r.byte() % 2 == 1,
        jitter: r.duration(),
        ratelimit_fields: r.byte() % 2 == 1,
    };
    let wall_clock_at_start = match r.byte() % 4 {
        0 => None,
        1 => Some(UtcTime::from_unix_nanos(r.pick(&[
            i64::MIN,
            -1,
            0,
            i64::MAX - 1,
            i64::MAX,
        ]))),
        _ => Some(UtcTime::from_unix_secs(1_704_110_400)),
    };
    let responses = (0..r.byte() % 9).map(|_| r.response()).collect();
    let user_leaves_at = (r.byte() % 3 == 0).then(|| r.duration());
    let timer_late_by = (0..r.byte() % 4).map(|_| r.duration()).collect();
    let origin_blocks = (0..r.byte() % 4)
        .map(|_| OriginBlock {
            at: r.duration(),
            until: r.duration(),
        })
        .collect();
    // Draws outside [0, 1) too: the loader refuses them, the model must still not panic.
    let jitter_draws = (0..r.byte() % 4)
        .map(|_| f64::from(r.byte()) / 200.0)
        .collect();
    Scenario {
        name: "built".into(),
        policy,
        wall_clock_at_start,
        responses,
        user_leaves_at,
        timer_late_by,
        origin_blocks,
        jitter_draws,
        ..Scenario::default()
    }
}
