//! What the screen tells the user, for every state of an action (`docs/rules.md`, "What the
//! user is told").

use core::time::Duration;

use crate::action::{Action, PlannedWait, StopCause, TransportError, WaitSource};

impl Action {
    /// The visible state, one sentence group per line: what is happening now or, once stopped,
    /// why, followed by the last response and the figures, then what the service asked for.
    /// Times are rounded to a tenth of a second.
    pub fn visible(&self) -> Vec<String> {
        let max = self.policy().max_attempts;
        if let Some(attempt) = self.in_flight() {
            let left = tenths(self.remaining(self.elapsed()));
            vec![format!(
                "Loading: attempt {attempt} of {max}. {left} s of the budget left."
            )]
        } else if let Some(plan) = self.pending_wait() {
            let covers = self.scope().covers();
            let blocked = match plan.source {
                WaitSource::OriginBlock => {
                    format!(": the service asked every request {covers} to wait")
                }
                WaitSource::RateLimit => format!(
                    ": the service's RateLimit field says its quota is restored in {} s",
                    tenths(plan.delay)
                ),
                _ => String::new(),
            };
            // The wait left from now: a block that moved the start came after the wait began.
            let left = plan.until.saturating_sub(self.elapsed().max(plan.from));
            let mut lines = vec![format!(
                "Waiting {} s before attempt {} of {max}{blocked}. {} s of the budget left.",
                tenths(left),
                plan.after_attempt.saturating_add(1),
                tenths(self.remaining(plan.until)),
            )];
            let mut why = Vec::new();
            // What a RateLimit field said is on the line above already.
            if plan.source != WaitSource::RateLimit {
                why.extend(requested(plan));
            }
            why.extend(floor(plan));
            why.extend(jitter(plan.jitter));
            if !why.is_empty() {
                lines.push(why.join(" "));
            }
            lines
        } else if let Some((_, cause)) = self.stopped() {
            let mut lines = vec![self.headline(cause), self.figures()];
            let more = self.explanation(cause);
            if !more.is_empty() {
                lines.push(more);
            }
            lines
        } else {
            Vec::new()
        }
    }

    fn headline(&self, cause: &StopCause) -> String {
        match cause {
            StopCause::Success => "Loaded: the list is ready.".into(),
            StopCause::RefusedWait { .. } | StopCause::LateWake { .. } => {
                "Stopped: retry budget cannot fit another request.".into()
            }
            StopCause::OriginBlocked { at, until, .. } => {
                let wait = until.saturating_sub(*at);
                let asked = if wait.as_secs() == u64::MAX {
                    "longer than any budget.".into()
                } else {
                    format!(
                        "{} s, and this action's budget cannot fit that.",
                        tenths(wait)
                    )
                };
                let covers = self.scope().covers();
                format!("Stopped: the service asked every request {covers} to wait {asked}")
            }
            StopCause::AttemptsExhausted { .. } => {
                // Every refusal was a 429 only when 429 is the one status retried.
                let how = if self.policy().retry_statuses.iter().eq([429]) {
                    "rate limited"
                } else {
                    "refused"
                };
                match self.attempts() {
                    1 => format!("Stopped: the one attempt allowed was {how}."),
                    2 => format!("Stopped: both attempts were {how}."),
                    n => format!("Stopped: all {n} attempts were {how}."),
                }
            }
            StopCause::ClockUntrusted { .. } => {
                "Stopped: the service's retry time needs a clock this page cannot trust.".into()
            }
            StopCause::NotRetryable { .. } => {
                "Stopped: the service answered with a status that is not retried.".into()
            }
            StopCause::Transport {
                error: TransportError::TimedOut,
            } => format!(
                "Stopped: attempt {} took longer than its {}-second limit.",
                self.attempts(),
                tenths(self.policy().attempt_cap)
            ),
            StopCause::Transport {
                error: TransportError::Failed(word),
            } => {
                format!("Stopped: the request failed ({word}).")
            }
            StopCause::Left { .. } => "Stopped: you left this screen.".into(),
        }
    }

    /// "Last response: 429. Attempts: 1 of 3. Elapsed: 2 seconds."
    fn figures(&self) -> String {
        let last = self
            .last_response()
            .map_or_else(|| "none".into(), |last| last.status.to_string());
        format!(
            "Last response: {last}. Attempts: {} of {}. Elapsed: {}.",
            self.attempts(),
            self.policy().max_attempts,
            seconds(self.elapsed())
        )
    }

    /// Why the action stopped where it did, and what was not sent.
    fn explanation(&self, cause: &StopCause) -> String {
        let no_retry = match self.attempts() {
            0 => "No request was sent.",
            1 => "No retry was sent.",
            _ => "No further retry was sent.",
        };
        let policy = self.policy();
        match cause {
            // The block ends inside the budget; the reserved cap does not fit after it.
            StopCause::OriginBlocked { until, .. } if *until <= policy.budget => format!(
                "{} {no_retry}",
                self.cap_past_deadline(self.attempts().saturating_add(1), *until)
            ),
            StopCause::OriginBlocked { .. } => no_retry.into(),
            StopCause::RefusedWait { plan, .. } => {
                let mut parts = Vec::new();
                parts.extend(requested(plan));
                parts.extend(floor(plan));
                if plan.until <= policy.budget {
                    // The wait fits; the reserved cap does not.
                    let next = plan.after_attempt.saturating_add(1);
                    parts.push(self.cap_past_deadline(next, plan.until));
                }
                parts.push(no_retry.into());
                parts.join(" ")
            }
            StopCause::LateWake { woke, .. } => {
                let cap = tenths(policy.attempt_cap);
                let latest = policy.budget.saturating_sub(policy.attempt_cap);
                format!(
                    "The wait ended at {} s, too late to reserve {} {cap}-second attempt before the {}-second deadline. {no_retry}",
                    decimals(*woke, digits_past(*woke, latest)),
                    article(&cap),
                    tenths(policy.budget)
                )
            }
            StopCause::AttemptsExhausted { .. } => {
                format!("{no_retry} Trying again starts a new budget.")
            }
            StopCause::ClockUntrusted { .. } => format!(
                "The service asked to wait until a date, but no trusted clock could measure it. {no_retry}"
            ),
            StopCause::Left { in_flight: true } => {
                "The request in flight was abandoned; a late result will not be shown.".into()
            }
            // Left before anything began: nothing to cancel.
            StopCause::Left { in_flight: false } if self.attempts() == 0 && self.wait_time().is_zero() => {
                no_retry.into()
            }
            StopCause::Left { in_flight: false } => format!("The wait was cancelled. {no_retry}"),
            StopCause::Success | StopCause::NotRetryable { .. } | StopCause::Transport { .. } => {
                String::new()
            }
        }
    }

    /// "Attempt 2 could start at 18 s but might run until 22 s, past the 20-second budget."
    /// Both times to a tenth, or finer where a tenth would not show the end past the budget.
    fn cap_past_deadline(&self, attempt: u32, start: Duration) -> String {
        let policy = self.policy();
        let end = start.saturating_add(policy.attempt_cap);
        let digits = digits_past(end, policy.budget);
        format!(
            "Attempt {attempt} could start at {} s but might run until {} s, past the {}-second budget.",
            decimals(start, digits),
            decimals(end, digits),
            tenths(policy.budget)
        )
    }
}

/// What the service asked for, or why the local fallback applies. Nothing for an origin block:
/// the line before already says the site is blocked.
fn requested(plan: &PlannedWait) -> Option<String> {
    let said = match plan.source {
        WaitSource::OriginBlock => return None,
        // Delay-seconds and dates both saturate here: a figure would only be an artefact.
        WaitSource::ServerSeconds | WaitSource::ServerDate if plan.delay.as_secs() == u64::MAX => {
            "The service requested a delay longer than any budget.".into()
        }
        WaitSource::ServerSeconds | WaitSource::ServerDate => {
            let delay = tenths(plan.delay);
            format!("The service requested {} {delay}-second delay.", article(&delay))
        }
        // Cross-origin, a Retry-After that is not exposed looks exactly like none.
        WaitSource::FallbackMissing => format!(
            "No retry time reached this page (none was sent, or it was hidden); the local fallback is {}.",
            seconds(plan.delay)
        ),
        WaitSource::RateLimit => format!(
            "The service's RateLimit field says its quota is restored in {} s.",
            tenths(plan.delay)
        ),
        WaitSource::FallbackInvalid => format!(
            "The service's retry time could not be read; the local fallback is {}.",
            seconds(plan.delay)
        ),
    };
    Some(said)
}

/// The local minimum wait, when it made the wait longer than what was asked for. Nothing for an
/// origin block, whose wait is the block's own.
fn floor(plan: &PlannedWait) -> Option<String> {
    (plan.source != WaitSource::OriginBlock && plan.wait > plan.delay)
        .then(|| format!("The local minimum wait is {}.", seconds(plan.wait)))
}

/// "The start is spread 2 seconds later, ...": what jitter added, when it added anything.
fn jitter(jitter: Duration) -> Option<String> {
    (!jitter.is_zero()).then(|| {
        format!(
            "The start is spread {} later, so that clients told the same time do not all retry at once.",
            seconds(jitter)
        )
    })
}

/// "1 second", "2.5 seconds"
fn seconds(d: Duration) -> String {
    match tenths(d) {
        one if one == "1" => "1 second".into(),
        other => format!("{other} seconds"),
    }
}

/// "a" or "an" before a figure, as it is read aloud: "an" where it begins with eight,
/// eleven or eighteen (8, 80, 800, 8.5, 11, 18, 11,000, 18 million), "a" for every other.
fn article(figure: &str) -> &'static str {
    let whole = figure.bytes().take_while(u8::is_ascii_digit).count();
    // The digits before the first thousands separator, as the figure is read.
    let lead = &figure.as_bytes()[..whole.min((whole + 2) % 3 + 1)];
    if lead.first() == Some(&b'8') || lead == b"11" || lead == b"18" {
        "an"
    } else {
        "a"
    }
}

/// A duration in seconds, rounded to a tenth, without a trailing ".0": "2", "2.5".
pub(crate) fn tenths(d: Duration) -> String {
    decimals(d, 1)
}

/// `d` rounded half up to `digits` decimals of a second (1 to 9); the longest time rounds down
/// to its whole seconds rather than past them.
fn rounded(d: Duration, digits: u32) -> Duration {
    let unit = 10u32.pow(9 - digits.clamp(1, 9));
    let nanos = (d.subsec_nanos() + unit / 2) / unit * unit;
    if nanos < 1_000_000_000 {
        Duration::new(d.as_secs(), nanos)
    } else {
        Duration::from_secs(d.as_secs().saturating_add(1))
    }
}

/// `d` in seconds, rounded to `digits` decimals, written without trailing zeros. (Worked out
/// in numbers: slicing the text could panic, and its message would bring `str`'s `Debug` and
/// its Unicode tables, 4.7 kB, into the app build.)
fn decimals(d: Duration, digits: u32) -> String {
    let digits = digits.clamp(1, 9);
    let shown = rounded(d, digits);
    let mut fraction = shown.subsec_nanos() / 10u32.pow(9 - digits);
    let mut width = digits as usize;
    while width > 0 && fraction % 10 == 0 {
        fraction /= 10;
        width -= 1;
    }
    if width == 0 {
        shown.as_secs().to_string()
    } else {
        format!("{}.{fraction:0width$}", shown.as_secs())
    }
}

/// The fewest decimals (from one) that show `d` past `limit` when it is: a cap that ends at
/// 20.04 s is past a 20-second budget, which "20 s" would deny.
fn digits_past(d: Duration, limit: Duration) -> u32 {
    (1..=9).find(|&k| rounded(d, k) > limit).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::{ReceiptClock, Response, TransportError};
    use crate::policy::{Policy, StatusSet};

    /// The visible lines while waiting after attempt 1 was answered at 1 s with a 429 carrying
    /// `retry_after` and `ratelimit`, its wait spread by `draw`.
    fn waiting(
        policy: Policy,
        retry_after: Option<&str>,
        ratelimit: Option<&str>,
        draw: f64,
    ) -> Vec<String> {
        let (mut action, _) = Action::start(policy).expect("valid policy");
        let response = Response {
            status: 429,
            retry_after,
            ratelimit,
            clock: ReceiptClock::Absent,
        };
        action.on_response_drawn(Duration::from_secs(1), response, draw);
        assert!(action.pending_wait().is_some(), "{:?}", action.visible());
        action.visible()
    }

    /// While an attempt runs, the screen says how much of the budget is left then: attempt 2,
    /// started at 5 s after a 3 s wait, has 15 s of the 20.
    #[test]
    fn loading_says_the_budget_left_at_the_attempts_start() {
        let (mut action, _) = Action::start(Policy::new()).expect("valid policy");
        let response = Response {
            status: 429,
            retry_after: Some("3"),
            ratelimit: None,
            clock: ReceiptClock::Absent,
        };
        action.on_response(Duration::from_secs(2), response);
        action.on_timer(Duration::from_secs(5));
        assert_eq!(
            action.visible(),
            ["Loading: attempt 2 of 3. 15 s of the budget left."]
        );
    }

    /// "an 8-second delay", "an 18-second delay", "a 3-second delay": the article goes by how
    /// the figure is read aloud.
    #[test]
    fn a_figure_takes_the_article_it_is_read_with() {
        for figure in [
            "8", "8.5", "80", "81", "800", "8000", "11", "18", "11000", "18000000",
        ] {
            assert_eq!(article(figure), "an", "{figure}");
        }
        for figure in [
            "0", "0.5", "1", "3", "110", "180", "1100", "1800", "111", "", "2.8",
        ] {
            assert_eq!(article(figure), "a", "{figure}");
        }
        assert_eq!(
            waiting(Policy::new(), Some("8"), None, 0.0)[1],
            "The service requested an 8-second delay."
        );
    }

    #[test]
    fn a_wait_says_what_was_asked_and_what_raised_it() {
        assert_eq!(
            waiting(Policy::new(), Some("0"), None, 0.0),
            [
                "Waiting 1 s before attempt 2 of 3. 18 s of the budget left.",
                "The service requested a 0-second delay. The local minimum wait is 1 second."
            ]
        );
        assert_eq!(
            waiting(Policy::new(), None, None, 0.0),
            [
                "Waiting 2 s before attempt 2 of 3. 17 s of the budget left.",
                "No retry time reached this page (none was sent, or it was hidden); the local fallback is 2 seconds."
            ]
        );
        let spread = Policy {
            jitter: Duration::from_secs(2),
            ..Policy::new()
        };
        assert_eq!(
            waiting(spread, Some("3"), None, 0.5),
            [
                "Waiting 4 s before attempt 2 of 3. 15 s of the budget left.",
                "The service requested a 3-second delay. The start is spread 1 second later, so that clients told the same time do not all retry at once."
            ]
        );
    }

    #[test]
    fn a_ratelimit_wait_says_so_once() {
        let fields = Policy {
            ratelimit_fields: true,
            ..Policy::new()
        };
        assert_eq!(
            waiting(fields, None, Some(r#""default";r=0;t=3"#), 0.0),
            ["Waiting 3 s before attempt 2 of 3: the service's RateLimit field says its quota is restored in 3 s. 16 s of the budget left."]
        );
        // Below the local floor: the field's reading as the service gave it, then the floor.
        assert_eq!(
            waiting(fields, None, Some(r#""default";r=0;t=0"#), 0.0),
            [
                "Waiting 1 s before attempt 2 of 3: the service's RateLimit field says its quota is restored in 0 s. 18 s of the budget left.",
                "The local minimum wait is 1 second."
            ]
        );
    }

    /// The visible lines of an action under the default policy after `drive`.
    fn after(start: &[Duration], drive: impl FnOnce(&mut Action)) -> Vec<String> {
        let (mut action, _) = Action::start_on_origin(Policy::new(), start, 0.0).expect("valid");
        drive(&mut action);
        assert!(action.stopped().is_some(), "{:?}", action.visible());
        action.visible()
    }

    /// Each stop says why in its own words, with the figures that bound it: a scenario file
    /// cannot reach some of them (a timeout), and replay shows only the last state.
    #[test]
    fn every_stop_says_why_in_its_own_words() {
        let s = Duration::from_secs;
        let response = |retry_after| Response::new(429, Some(retry_after), ReceiptClock::Absent);
        let cases: [(&str, Vec<String>, &[&str]); 7] = [
            (
                "leaving while a request is in flight",
                after(&[], |a| {
                    let _ = a.on_leave(s(1));
                }),
                &[
                    "Stopped: you left this screen.",
                    "Last response: none. Attempts: 1 of 3. Elapsed: 1 second.",
                    "The request in flight was abandoned; a late result will not be shown.",
                ],
            ),
            (
                "leaving during the wait for a blocked origin, before attempt 1",
                after(&[s(4)], |a| {
                    let _ = a.on_leave(s(2));
                }),
                &[
                    "Stopped: you left this screen.",
                    "Last response: none. Attempts: 0 of 3. Elapsed: 2 seconds.",
                    "The wait was cancelled. No request was sent.",
                ],
            ),
            (
                "a wait that would start exactly at the deadline, its cap past it",
                after(&[], |a| {
                    let _ = a.on_response(s(2), response("18"));
                }),
                &[
                    "Stopped: retry budget cannot fit another request.",
                    "Last response: 429. Attempts: 1 of 3. Elapsed: 2 seconds.",
                    "The service requested an 18-second delay. Attempt 2 could start at 20 s but might run until 24 s, past the 20-second budget. No retry was sent.",
                ],
            ),
            (
                "a refused wait whose cap ends a few hundredths past the deadline",
                after(&[], |a| {
                    let _ = a.on_response(Duration::from_millis(2040), response("14"));
                }),
                &[
                    "Stopped: retry budget cannot fit another request.",
                    "Last response: 429. Attempts: 1 of 3. Elapsed: 2 seconds.",
                    "The service requested a 14-second delay. Attempt 2 could start at 16.04 s but might run until 20.04 s, past the 20-second budget. No retry was sent.",
                ],
            ),
            (
                "a blocked origin whose block ends exactly at the deadline",
                after(&[s(20)], |_| ()),
                &[
                    "Stopped: the service asked every request to this site to wait 20 s, and this action's budget cannot fit that.",
                    "Last response: none. Attempts: 0 of 3. Elapsed: 0 seconds.",
                    "Attempt 1 could start at 20 s but might run until 24 s, past the 20-second budget. No request was sent.",
                ],
            ),
            (
                "the cap elapsing",
                after(&[], |a| {
                    let _ = a.on_timer(s(4));
                }),
                &[
                    "Stopped: attempt 1 took longer than its 4-second limit.",
                    "Last response: none. Attempts: 1 of 3. Elapsed: 4 seconds.",
                ],
            ),
            (
                "a request failing below HTTP",
                after(&[], |a| {
                    let _ = a.on_transport_error(s(1), TransportError::Failed("network".into()));
                }),
                &[
                    "Stopped: the request failed (network).",
                    "Last response: none. Attempts: 1 of 3. Elapsed: 1 second.",
                ],
            ),
        ];
        for (what, got, want) in cases {
            assert_eq!(got, want, "{what}");
        }
    }

    #[test]
    fn seconds_round_to_a_tenth() {
        let cases: [(Duration, &str); 7] = [
            (Duration::ZERO, "0"),
            (Duration::from_secs(30), "30"),
            (Duration::from_millis(2500), "2.5"),
            (Duration::from_millis(2049), "2"),
            (Duration::from_millis(2950), "3"),
            (Duration::from_millis(100), "0.1"),
            (Duration::MAX, "18446744073709551615"),
        ];
        for (d, want) in cases {
            assert_eq!(tenths(d), want, "{d:?}");
        }
    }

    /// The headline says what refused every attempt: "rate limited" only when 429 is the one
    /// status retried (three 503s were said to be rate limited), and two attempts are "both".
    #[test]
    fn the_headline_names_what_refused_every_attempt() {
        let s = Duration::from_secs;
        let with_503 = StatusSet::EMPTY.with(429).with(503);
        let cases = [
            (
                Policy::new(),
                3,
                429,
                "Stopped: all 3 attempts were rate limited.",
            ),
            (
                Policy::new(),
                2,
                429,
                "Stopped: both attempts were rate limited.",
            ),
            (
                Policy::new(),
                1,
                429,
                "Stopped: the one attempt allowed was rate limited.",
            ),
            (
                Policy::new().with_retry_statuses(with_503),
                3,
                503,
                "Stopped: all 3 attempts were refused.",
            ),
            (
                Policy::new().with_retry_statuses(with_503),
                2,
                429,
                "Stopped: both attempts were refused.",
            ),
        ];
        for (policy, attempts, status, want) in cases {
            let policy = policy
                .with_max_attempts(attempts)
                .with_min_wait(Duration::ZERO)
                .with_fallback_base(Duration::from_millis(1));
            let (mut action, _) = Action::start(policy).expect("valid");
            for n in 1..=attempts {
                let refused = Response::new(status, None, ReceiptClock::Absent);
                let _ = action.on_response(s(u64::from(n)), refused);
                let _ = action.on_timer(s(u64::from(n)) + Duration::from_millis(500));
            }
            assert_eq!(action.visible()[0], want, "{:?}", action.visible());
        }
    }

    /// After a block moved the start, the wait said is the one left from then: a 429 at 2 s
    /// asks for 3 s, and at 3 s a block until 9 s moves the start; 6 s are left, not 7.
    #[test]
    fn a_moved_wait_says_the_wait_left() {
        let s = Duration::from_secs;
        let (mut action, _) = Action::start(Policy::new()).expect("valid");
        let rate_limited = Response::new(429, Some("3"), ReceiptClock::Absent);
        let _ = action.on_response(s(2), rate_limited);
        assert!(action.visible()[0].starts_with("Waiting 3 s before attempt 2 of 3."));
        let _ = action.on_block(s(3), s(9));
        assert_eq!(
            action.visible()[0],
            "Waiting 6 s before attempt 2 of 3: the service asked every request to this site to wait. 11 s of the budget left."
        );
    }

    /// A late wake a few hundredths past the last moment a full cap fits says so.
    #[test]
    fn a_wake_just_too_late_is_written_past_the_last_start() {
        let s = Duration::from_secs;
        let (mut action, _) = Action::start(Policy::new()).expect("valid");
        let rate_limited = Response::new(429, Some("3"), ReceiptClock::Absent);
        let _ = action.on_response(s(2), rate_limited);
        let _ = action.on_timer(Duration::from_millis(16_040));
        assert_eq!(
            action.visible()[2],
            "The wait ended at 16.04 s, too late to reserve a 4-second attempt before the 20-second deadline. No retry was sent.",
        );
    }

    /// A time said to be past a limit is written finely enough to be past it.
    #[test]
    fn a_time_past_a_limit_is_written_past_it() {
        let ms = Duration::from_millis;
        let cases = [
            (ms(22_000), ms(20_000), "22"),
            (ms(18_060), ms(16_000), "18.1"),
            (ms(20_040), ms(20_000), "20.04"),
            (ms(16_001), ms(16_000), "16.001"),
            (Duration::new(20, 1), ms(20_000), "20.000000001"),
            (Duration::MAX, ms(20_000), "18446744073709551615"),
        ];
        for (d, limit, want) in cases {
            assert_eq!(decimals(d, digits_past(d, limit)), want, "{d:?}");
        }
    }

    #[test]
    fn one_second_is_singular() {
        for (d, want) in [
            (1000, "1 second"),
            (1040, "1 second"),
            (1500, "1.5 seconds"),
            (0, "0 seconds"),
        ] {
            assert_eq!(seconds(Duration::from_millis(d)), want);
        }
    }
}
