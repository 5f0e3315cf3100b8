//! The step table: a report's events as rows in the source document's own format (Step,
//! Elapsed interval, Observed, Decision), made here once for every view: the replay command's
//! `--table`, the page's tables and the tests (`docs/rules.md`, "The step table").
//!
//! Rows are read from the events alone (the stop event carries why it stopped) and the
//! per-attempt cap, so a live run and a scripted one give the same words.

use core::time::Duration;

use serde::Serialize;

use crate::action::{Event, PlannedWait, RetryAfterReading, StopCause, TransportError, WaitSource};
use crate::ratelimit::RateLimit;
use crate::retry_after::RetryAfter;

/// One row of the step table.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Step {
    /// "Attempt 2", "Wait", "Blocked" or "Stop".
    pub step: String,
    /// "5–7": from the step's start to its end, in elapsed seconds; one time for an instant.
    pub elapsed: String,
    /// What was seen: a response, a failure, how long a wait was, a block.
    pub observed: String,
    /// What the model decided at the end of the step.
    pub decision: String,
}

/// The rows of `events`, for actions whose per-attempt cap is `cap`.
pub fn steps(events: &[Event], cap: Duration) -> Vec<Step> {
    let mut table = Table {
        rows: Vec::new(),
        open: None,
        wait: None,
        timer: None,
        cap,
    };
    for event in events {
        table.add(event);
    }
    table.rows
}

/// The table being drawn: its rows, the attempt in flight (number, start), the wait in
/// progress (its row, its start) and the last timer that fired (when, when it was due).
struct Table {
    rows: Vec<Step>,
    open: Option<(u32, Duration)>,
    wait: Option<(usize, Duration)>,
    timer: Option<Duration>,
    cap: Duration,
}

impl Table {
    fn add(&mut self, event: &Event) {
        match event {
            Event::Start { at, attempt, .. } => {
                self.end_wait(*at);
                self.open = Some((*attempt, *at));
            }
            Event::Receipt {
                at,
                attempt,
                status,
                retry_after,
                ratelimit,
            } => {
                let observed = observed(*status, retry_after, ratelimit.as_ref());
                self.close_attempt(*attempt, *at, observed);
            }
            Event::Failure { at, attempt, error } => {
                self.close_attempt(*attempt, *at, failed(error));
            }
            Event::Wait { at, plan, .. } => self.on_wait(*at, plan),
            Event::Timer { at, .. } => self.timer = Some(*at),
            Event::Blocked { at, until } => self.push(
                "Blocked",
                secs(*at),
                format!("Another action learned: no request before {}", secs(*until)),
                String::new(),
            ),
            Event::Left { at } => self.on_left(*at),
            Event::Stop { at, cause, .. } => self.on_stop(*at, cause),
        }
    }

    /// Adds a row; a block row still waiting for its decision says what a block means.
    fn push(&mut self, step: &str, elapsed: String, observed: String, decision: String) {
        if let Some(last) = self.rows.last_mut() {
            if last.step == "Blocked" && last.decision.is_empty() {
                last.decision = "No request starts before then".into();
            }
        }
        self.rows.push(Step {
            step: step.into(),
            elapsed,
            observed,
            decision,
        });
    }

    /// Puts `decision` on the last row, or on a row of its own at `at` if that one has one.
    fn decide(&mut self, decision: String, at: Duration) {
        match self.rows.last_mut() {
            Some(last) if last.decision.is_empty() => last.decision = decision,
            _ => self.push("Stop", secs(at), String::new(), decision),
        }
    }

    /// The row of the attempt in flight, ended at `at` with what was observed.
    fn close_attempt(&mut self, attempt: u32, at: Duration, observed: String) {
        let from = self.open.take().map_or(at, |(_, from)| from);
        let step = format!("Attempt {attempt}");
        self.push(&step, span(from, at), observed, String::new());
    }

    /// A wait begins, or a block moved the start of the one in progress: the wait's row then
    /// says the moved wait, and where its cap now fits.
    fn on_wait(&mut self, at: Duration, plan: &PlannedWait) {
        let decision = self.wait_decision(plan);
        let fits = secs(plan.until.saturating_add(self.cap));
        let waiting = format!("No request in flight; the next full cap fits by {fits}");
        if let Some((row, from)) = self.wait {
            if self.rows.last().is_some_and(|last| last.step == "Blocked") {
                if let Some(last) = self.rows.last_mut() {
                    last.decision = decision;
                }
                self.rows[row].observed = format!("{} s", secs(plan.until.saturating_sub(from)));
                self.rows[row].decision = waiting;
                return;
            }
        }
        self.decide(decision, at);
        let planned = format!("{} s", secs(plan.until.saturating_sub(at)));
        self.push("Wait", String::new(), planned, waiting);
        self.wait = Some((self.rows.len() - 1, at));
    }

    /// Ends the wait in progress at `at`; returns its row.
    fn end_wait(&mut self, at: Duration) -> Option<usize> {
        let (row, from) = self.wait.take()?;
        self.rows[row].elapsed = span(from, at);
        Some(row)
    }

    fn on_left(&mut self, at: Duration) {
        if let Some((attempt, from)) = self.open.take() {
            let step = format!("Attempt {attempt}");
            let observed = "You left; the response is discarded".into();
            self.push(&step, span(from, at), observed, String::new());
        } else if let Some(row) = self.end_wait(at) {
            let row = &mut self.rows[row];
            row.observed = format!("{} planned; you left at {}", row.observed, secs(at));
            row.decision.clear();
        }
    }

    fn on_stop(&mut self, at: Duration, cause: &StopCause) {
        if let Some(row) = self.end_wait(at) {
            if self.timer == Some(at) {
                let observed = &mut self.rows[row].observed;
                *observed = format!("{observed} planned; the timer woke at {}", secs(at));
            }
            // The stop is the decision the wait ends with, unless a block row came after it.
            if row + 1 == self.rows.len() {
                self.rows[row].decision.clear();
            }
        }
        self.decide(stop_decision(at, cause), at);
    }

    /// "Next start 5; full cap fits by 9", with why the wait is as long as it is.
    fn wait_decision(&self, plan: &PlannedWait) -> String {
        let start = plan.until;
        let jitter = if plan.jitter.is_zero() {
            String::new()
        } else {
            format!(
                " ({} s of jitter after {})",
                secs(plan.jitter),
                secs(plan.earliest())
            )
        };
        let fits = secs(start.saturating_add(self.cap));
        let tail = format!(
            "next start {}{jitter}; full cap fits by {fits}",
            secs(start)
        );
        let raised = if plan.wait > plan.delay {
            format!(", raised to {} s", secs(plan.wait))
        } else {
            String::new()
        };
        match plan.source {
            WaitSource::ServerSeconds if raised.is_empty() => capitalised(&tail),
            WaitSource::ServerSeconds => format!("Delay {}{raised}; {tail}", secs(plan.delay)),
            WaitSource::ServerDate => {
                format!("Date minus receipt = {}{raised}; {tail}", secs(plan.delay))
            }
            WaitSource::FallbackMissing | WaitSource::FallbackInvalid => {
                format!("Fallback wait {} s{raised}; {tail}", secs(plan.wait))
            }
            WaitSource::OriginBlock => {
                let end = plan.earliest();
                format!("Blocked until {}; {tail}", secs(end))
            }
            WaitSource::RateLimit => format!(
                "RateLimit: quota restored in {}{raised}; {tail}",
                secs(plan.delay)
            ),
        }
    }
}

/// What a response showed, in the source document's words: "429; delay 3",
/// "429; Mon, 01 Jan 2024 12:00:06 GMT", "200; list returned"; and its `RateLimit` field, when
/// it was read.
fn observed(status: u16, retry_after: &RetryAfterReading, field: Option<&RateLimit>) -> String {
    let field = match field.map(|f| (f.kind(), f.reset())) {
        Some((_, Some(reset))) => format!("; RateLimit: quota spent, restored in {}", secs(reset)),
        Some((kind, None)) => format!("; RateLimit: {kind}"),
        None => String::new(),
    };
    format!("{}{field}", observed_retry_after(status, retry_after))
}

fn observed_retry_after(status: u16, retry_after: &RetryAfterReading) -> String {
    if (200..300).contains(&status) {
        return format!("{status}; list returned");
    }
    match (&retry_after.header, retry_after.delay) {
        (RetryAfter::Seconds { .. }, Some(delay)) => format!("{status}; delay {}", secs(delay)),
        (RetryAfter::Date { raw, .. }, _) => format!("{status}; {}", raw.trim()),
        (RetryAfter::Missing, _) => format!("{status}; no Retry-After"),
        (header, _) => format!(
            "{status}; invalid Retry-After \"{}\"",
            header.raw().unwrap_or_default()
        ),
    }
}

/// What a failure showed.
fn failed(error: &TransportError) -> String {
    match error {
        TransportError::TimedOut => "No response: the cap ran out".into(),
        TransportError::Failed(word) => format!("No response: {word} error"),
    }
}

/// The decision the action stopped with, in words, from its cause.
fn stop_decision(at: Duration, cause: &StopCause) -> String {
    let stop = format!("Stop at {}", secs(at));
    match cause {
        StopCause::Success => "Finish with the received list".into(),
        StopCause::RefusedWait { plan, gate } if plan.until > gate.deadline => format!(
            "{stop}: {} {} s; next start would be {}, past the {} s budget; no shortened wait, no further attempt",
            asked(plan.source),
            secs(plan.delay),
            secs(plan.until),
            secs(gate.deadline)
        ),
        StopCause::RefusedWait { plan, gate } => format!(
            "{stop}: next start {} needs its cap through {}, past {}; no further attempt",
            secs(plan.until),
            secs(gate.cap_end),
            secs(gate.deadline)
        ),
        StopCause::LateWake { plan, woke, gate } => format!(
            "{stop}: the timer was due at {} and woke at {}; its cap would run to {}, past {}; no further attempt",
            secs(plan.until),
            secs(*woke),
            secs(gate.cap_end),
            secs(gate.deadline)
        ),
        StopCause::OriginBlocked { until, gate, .. } => format!(
            "{stop}: blocked until {}; an attempt then would run to {}, past {}; no further request",
            secs(*until),
            secs(gate.cap_end),
            secs(gate.deadline)
        ),
        StopCause::AttemptsExhausted { max_attempts: 1 } => {
            format!("{stop}: its only attempt used; no further request")
        }
        StopCause::AttemptsExhausted { max_attempts } => {
            format!("{stop}: all {max_attempts} attempts used; no further request")
        }
        StopCause::ClockUntrusted { .. } => {
            format!("{stop}: no trusted clock to read the date, and it is never read as zero")
        }
        StopCause::NotRetryable { status } => format!("{stop}: {status} is not retried"),
        StopCause::Transport { error } => {
            format!("{stop}: the request failed ({}); no retry", error.as_str())
        }
        StopCause::Left { .. } => format!("{stop}: you left; nothing more is sent"),
    }
}

/// How a refused delay is named: what the service asked, or the local fallback.
fn asked(source: WaitSource) -> &'static str {
    match source {
        WaitSource::ServerSeconds | WaitSource::ServerDate => "asked",
        WaitSource::RateLimit => "RateLimit asked",
        WaitSource::FallbackMissing | WaitSource::FallbackInvalid => "fallback",
        WaitSource::OriginBlock => "blocked",
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// "5–7", or one time for an instant.
fn span(from: Duration, to: Duration) -> String {
    format!("{}–{}", secs(from), secs(to))
}

/// Seconds as the table writes them: a whole number as it is, else at most two decimals
/// (rounded half up); from a million on (a saturated delay, far beyond any budget) as its
/// magnitude, three significant digits. In integers: float formatting would cost every page
/// that loads the module several kilobytes.
pub fn secs(d: Duration) -> String {
    let whole = d.as_secs();
    if whole >= 1_000_000 {
        return magnitude(whole);
    }
    let hundredths = (u64::from(d.subsec_nanos()) + 5_000_000) / 10_000_000;
    let (whole, hundredths) = if hundredths == 100 {
        (whole + 1, 0)
    } else {
        (whole, hundredths)
    };
    match hundredths {
        0 => whole.to_string(),
        h if h % 10 == 0 => format!("{whole}.{}", h / 10),
        h => format!("{whole}.{h:02}"),
    }
}

/// `n` in scientific notation with three significant digits: 18446744073709551615 is
/// "1.84e19". For `n` of at least 1000.
fn magnitude(n: u64) -> String {
    let digits = n.to_string();
    let mut exponent = digits.len() - 1;
    let first_four: u64 = digits[..4].parse().unwrap_or(0);
    let mut mantissa = (first_four + 5) / 10;
    if mantissa == 1000 {
        mantissa = 100;
        exponent += 1;
    }
    format!("{}.{:02}e{exponent}", mantissa / 100, mantissa % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_written_with_at_most_two_decimals() {
        let cases = [
            (Duration::ZERO, "0"),
            (Duration::from_secs(14), "14"),
            (Duration::from_millis(2_500), "2.5"),
            (Duration::from_micros(2_013_400), "2.01"),
            (Duration::from_millis(999_996), "1000"),
            (Duration::from_secs(2_000_000), "2.00e6"),
            (Duration::from_secs(9_996_000), "1.00e7"),
            (Duration::from_millis(2_005), "2.01"),
            (Duration::from_millis(2_999), "3"),
            (Duration::MAX, "1.84e19"),
        ];
        for (d, want) in cases {
            assert_eq!(secs(d), want, "{d:?}");
        }
    }
}
