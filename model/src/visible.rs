//! What the screen tells the user, for every state of an action.
//!
//! Built by hand rather than with `format!`: this text ships to every page view, and the
//! formatting machinery would cost more than the scheduler it describes.

use crate::prelude::*;
use core::time::Duration;

use crate::action::{Action, PlannedWait, StopCause, TransportError, WaitSource};
use crate::json::push_u64;

impl Action {
    /// The visible state, one sentence group per line: what is happening now or, once stopped,
    /// why, followed by the last response and the figures, then what the service asked for.
    /// Times are rounded to a tenth of a second.
    pub fn visible(&self) -> Vec<String> {
        let mut lines = Vec::with_capacity(3);
        let max = self.policy().max_attempts;
        if let Some(attempt) = self.in_flight() {
            let mut line = String::from("Loading: attempt ");
            push_of(&mut line, attempt, max);
            line.push_str(". ");
            push_secs(&mut line, self.remaining(self.elapsed()));
            line.push_str(" s of the budget left.");
            lines.push(line);
        } else if let Some(plan) = self.pending_wait() {
            let mut line = String::from("Waiting ");
            push_secs(&mut line, plan.until.saturating_sub(plan.from));
            line.push_str(" s before attempt ");
            push_of(&mut line, plan.after_attempt.saturating_add(1), max);
            if plan.source == WaitSource::OriginBlock {
                line.push_str(": the service asked every request to this site to wait");
            }
            line.push_str(". ");
            push_secs(&mut line, self.remaining(plan.until));
            line.push_str(" s of the budget left.");
            lines.push(line);
            let mut why = String::new();
            self.push_asked(&mut why, plan);
            push_jitter(&mut why, plan.jitter);
            if !why.is_empty() {
                lines.push(why);
            }
        } else if let Some((_, cause)) = self.stopped() {
            lines.push(self.headline(cause));
            lines.push(self.figures());
            let mut more = String::new();
            self.push_explanation(&mut more, cause);
            if !more.is_empty() {
                lines.push(more);
            }
        }
        lines
    }

    fn headline(&self, cause: &StopCause) -> String {
        let mut line = String::new();
        match cause {
            StopCause::Success => line.push_str("Loaded: the list is ready."),
            StopCause::NoRoom(_) | StopCause::LateWake { .. } => {
                line.push_str("Stopped: retry budget cannot fit another request.");
            }
            StopCause::OriginBlocked { at, until } => {
                line.push_str("Stopped: the service asked every request to this site to wait ");
                let wait = until.saturating_sub(*at);
                if wait.as_secs() == u64::MAX {
                    line.push_str("longer than any budget.");
                } else {
                    push_secs(&mut line, wait);
                    line.push_str(" s, and this action's budget cannot fit that.");
                }
            }
            StopCause::AttemptsExhausted => {
                line.push_str("Stopped: all ");
                push_u64(&mut line, u64::from(self.attempts()));
                line.push_str(" attempts were rate limited.");
            }
            StopCause::ClockUntrusted => {
                line.push_str(
                    "Stopped: the service's retry time needs a clock this page cannot trust.",
                );
            }
            StopCause::NotRetryable => {
                line.push_str("Stopped: the service answered with a status that is not retried.");
            }
            StopCause::Transport(TransportError::TimedOut) => {
                line.push_str("Stopped: attempt ");
                push_u64(&mut line, u64::from(self.attempts()));
                line.push_str(" took longer than its ");
                push_secs(&mut line, self.policy().attempt_cap);
                line.push_str("-second limit.");
            }
            StopCause::Transport(TransportError::Failed(word)) => {
                line.push_str("Stopped: the request failed (");
                line.push_str(word);
                line.push_str(").");
            }
            StopCause::Left { .. } => line.push_str("Stopped: you left this screen."),
        }
        line
    }

    /// "Last response: 429. Attempts: 1 of 3. Elapsed: 2 seconds."
    fn figures(&self) -> String {
        let mut line = String::from("Last response: ");
        match self.last_response() {
            Some(last) => push_u64(&mut line, u64::from(last.status)),
            None => line.push_str("none"),
        }
        line.push_str(". Attempts: ");
        push_of(&mut line, self.attempts(), self.policy().max_attempts);
        line.push_str(". Elapsed: ");
        push_seconds(&mut line, self.elapsed());
        line.push('.');
        line
    }

    fn push_explanation(&self, out: &mut String, cause: &StopCause) {
        let no_retry = match self.attempts() {
            0 => " No request was sent.",
            1 => " No retry was sent.",
            _ => " No further retry was sent.",
        };
        match cause {
            StopCause::OriginBlocked { until, .. } => {
                let policy = self.policy();
                if *until <= policy.budget {
                    // The block ends inside the budget; the reserved cap does not fit after it.
                    out.push_str("Attempt ");
                    push_u64(out, u64::from(self.attempts().saturating_add(1)));
                    out.push_str(" could start at ");
                    push_secs(out, *until);
                    out.push_str(" s but might run until ");
                    push_secs(out, until.saturating_add(policy.attempt_cap));
                    out.push_str(" s, past the ");
                    push_secs(out, policy.budget);
                    out.push_str("-second budget.");
                    out.push_str(no_retry);
                } else {
                    out.push_str(no_retry.trim_start());
                }
            }
            StopCause::NoRoom(plan) => {
                self.push_asked(out, plan);
                let policy = self.policy();
                if plan.until <= policy.budget {
                    // The wait fits; the reserved cap does not.
                    out.push_str(" Attempt ");
                    push_u64(out, u64::from(plan.after_attempt.saturating_add(1)));
                    out.push_str(" could start at ");
                    push_secs(out, plan.until);
                    out.push_str(" s but might run until ");
                    push_secs(out, plan.until.saturating_add(policy.attempt_cap));
                    out.push_str(" s, past the ");
                    push_secs(out, policy.budget);
                    out.push_str("-second budget.");
                }
                out.push_str(no_retry);
            }
            StopCause::LateWake { woke, .. } => {
                out.push_str("The wait ended at ");
                push_secs(out, *woke);
                out.push_str(" s, too late to reserve a ");
                push_secs(out, self.policy().attempt_cap);
                out.push_str("-second attempt before the ");
                push_secs(out, self.policy().budget);
                out.push_str("-second deadline.");
                out.push_str(no_retry);
            }
            StopCause::AttemptsExhausted => {
                out.push_str("No further retry was sent. Trying again starts a new budget.");
            }
            StopCause::ClockUntrusted => {
                out.push_str("The service asked to wait until a date, but no trusted clock could measure it.");
                out.push_str(no_retry);
            }
            StopCause::Left { in_flight: true } => {
                out.push_str(
                    "The request in flight was abandoned; a late result will not be shown.",
                );
            }
            StopCause::Left { in_flight: false } => {
                out.push_str("The wait was cancelled.");
                out.push_str(no_retry);
            }
            StopCause::Success | StopCause::NotRetryable | StopCause::Transport(_) => {}
        }
    }

    /// What the service asked for, or why the local fallback applies. Nothing for an origin
    /// block: the line before already says the site is blocked.
    fn push_asked(&self, out: &mut String, plan: &PlannedWait) {
        match plan.source {
            WaitSource::OriginBlock => return,
            // Delay-seconds and dates both saturate here: a figure would only be an artefact.
            WaitSource::ServerSeconds | WaitSource::ServerDate
                if plan.delay.as_secs() == u64::MAX =>
            {
                out.push_str("The service requested a delay longer than any budget.");
            }
            WaitSource::ServerSeconds | WaitSource::ServerDate => {
                out.push_str("The service requested a ");
                push_secs(out, plan.delay);
                out.push_str("-second delay.");
            }
            WaitSource::FallbackMissing => {
                // Cross-origin, a Retry-After that is not exposed looks exactly like none.
                out.push_str("No retry time reached this page (none was sent, or it was hidden); the local fallback is ");
                push_seconds(out, plan.delay);
                out.push('.');
            }
            WaitSource::FallbackInvalid => {
                out.push_str("The service's retry time could not be read; the local fallback is ");
                push_seconds(out, plan.delay);
                out.push('.');
            }
        }
        if plan.wait > plan.delay {
            out.push_str(" The local minimum wait is ");
            push_seconds(out, plan.wait);
            out.push('.');
        }
    }
}

/// " The start is spread 2 seconds later, ...": what jitter added, when it added anything.
fn push_jitter(out: &mut String, jitter: Duration) {
    if jitter.is_zero() {
        return;
    }
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str("The start is spread ");
    push_seconds(out, jitter);
    out.push_str(" later, so that clients told the same time do not all retry at once.");
}

/// "2 of 3"
fn push_of(out: &mut String, n: u32, max: u32) {
    push_u64(out, u64::from(n));
    out.push_str(" of ");
    push_u64(out, u64::from(max));
}

/// "1 second", "2.5 seconds"
fn push_seconds(out: &mut String, d: Duration) {
    let start = out.len();
    push_secs(out, d);
    if out.get(start..) == Some("1") {
        out.push_str(" second");
    } else {
        out.push_str(" seconds");
    }
}

/// A duration in seconds, rounded to a tenth, without a trailing ".0".
pub(crate) fn push_secs(out: &mut String, d: Duration) {
    let mut whole = d.as_secs();
    let mut tenths = (d.subsec_nanos() + 50_000_000) / 100_000_000;
    if tenths == 10 {
        whole = whole.saturating_add(1);
        tenths = 0;
    }
    push_u64(out, whole);
    if tenths != 0 {
        out.push('.');
        out.push(char::from(b'0' + tenths as u8));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_render_without_fmt() {
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
            let mut s = String::new();
            push_secs(&mut s, d);
            assert_eq!(s, want, "{d:?}");
        }
        let mut s = String::new();
        push_u64(&mut s, u64::MAX);
        assert_eq!(s, "18446744073709551615");
    }

    #[test]
    fn one_second_is_singular() {
        for (d, want) in [
            (1000, "1 second"),
            (1040, "1 second"),
            (1500, "1.5 seconds"),
            (0, "0 seconds"),
        ] {
            let mut s = String::new();
            push_seconds(&mut s, Duration::from_millis(d));
            assert_eq!(s, want);
        }
    }
}
