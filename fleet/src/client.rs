//! The clients that are not ours: ky 2's documented defaults, and a naive client. Both are
//! small state machines that the event loop drives the way it drives the model.

use retry_budget_model::http_date::HttpDate;
use retry_budget_model::utc::UtcTime;

use crate::service::NS;

/// What a client asks the event loop to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send a request now; time it out `timeout` nanoseconds later, if any.
    Send { timeout: Option<u64> },
    /// Ours: send a request now, and wake at elapsed `abort_at` (on the action's clock).
    SendOurs { abort_at: u64 },
    /// Ours: wake at elapsed `at` (on the action's clock).
    Wake { at: u64 },
    /// Wake `ns` nanoseconds from now.
    WaitFor { ns: u64 },
    /// Nothing to do.
    Idle,
    /// The user is told a final outcome: data, or an error.
    Stop { data: bool },
}

/// ky 2 with the defaults its source documents (`source/types/retry.ts`): `limit: 2` retries,
/// `statusCodes` 408 413 429 500 502 503 504, `afterStatusCodes: [413, 429, 503]` (their
/// `Retry-After` is honoured), `maxRetryAfter: Infinity` (no upper limit; ky's README says an
/// undefined one falls back to the timeout), `backoffLimit: Infinity`, delay
/// `0.3 * 2 ** (attemptCount - 1) * 1000` ms, `timeout: 10000` ms per attempt (a timeout is
/// not retried), and no total budget.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ky {
    retries: u32,
}

impl Ky {
    /// The per-attempt timeout, `timeout: 10000`.
    pub const TIMEOUT: Option<u64> = Some(10 * NS);
    /// What ky does when the widget starts: send, with its timeout.
    pub const FIRST: Step = Step::Send {
        timeout: Self::TIMEOUT,
    };
    const LIMIT: u32 = 2;
    const STATUS_CODES: [u16; 7] = [408, 413, 429, 500, 502, 503, 504];
    const AFTER_STATUS_CODES: [u16; 3] = [413, 429, 503];

    /// A response arrived with `status` and the `Retry-After` text `header`; `receipt` is the
    /// client's clock at that moment.
    pub fn on_response(&mut self, status: u16, header: Option<&str>, receipt: UtcTime) -> Step {
        if (200..300).contains(&status) {
            return Step::Stop { data: true };
        }
        if !Self::STATUS_CODES.contains(&status) || self.retries >= Self::LIMIT {
            return Step::Stop { data: false };
        }
        self.retries += 1;
        let after = header
            .filter(|_| Self::AFTER_STATUS_CODES.contains(&status))
            .and_then(|h| retry_after_ns(h, receipt));
        let backoff = 300_000_000u64 << (self.retries - 1);
        Step::WaitFor {
            ns: after.unwrap_or(backoff),
        }
    }

    /// A timer fired: the attempt in flight timed out, or the wait is over.
    pub fn on_timer(&mut self, in_flight: bool) -> Step {
        if in_flight {
            Step::Stop { data: false }
        } else {
            Step::Send {
                timeout: Self::TIMEOUT,
            }
        }
    }
}

/// ky's reading of `Retry-After`: `Number(value) * 1000`, else `Date.parse(value) - Date.now()`
/// (a past date is a zero delay).
fn retry_after_ns(value: &str, receipt: UtcTime) -> Option<u64> {
    if let Ok(secs) = value.trim().parse::<u64>() {
        return Some(secs.saturating_mul(NS));
    }
    let when = HttpDate::parse(value)?.resolve(receipt)?;
    u64::try_from(when.saturating_duration_since(receipt).as_nanos()).ok()
}

/// A client that retries any failure at once, three times.
#[derive(Clone, Copy, Debug, Default)]
pub struct Naive {
    retries: u32,
}

impl Naive {
    /// What the naive client does when the widget starts: send, with no timeout at all.
    pub const FIRST: Step = Step::Send { timeout: None };

    /// A response arrived.
    pub fn on_response(&mut self, status: u16) -> Step {
        if (200..300).contains(&status) {
            Step::Stop { data: true }
        } else if self.retries < 3 {
            self.retries += 1;
            Step::Send { timeout: None }
        } else {
            Step::Stop { data: false }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ky_honours_retry_after_without_limit_then_backs_off_and_gives_up() {
        let at = UtcTime::from_unix_secs(1_704_110_400);
        let mut ky = Ky::default();
        assert_eq!(
            ky.on_response(429, Some("90"), at),
            Step::WaitFor { ns: 90 * NS }
        );
        assert_eq!(
            ky.on_response(429, None, at),
            Step::WaitFor { ns: 600_000_000 }
        );
        assert_eq!(ky.on_response(429, None, at), Step::Stop { data: false });
        let mut ky = Ky::default();
        let date = Some("Mon, 01 Jan 2024 12:00:05 GMT");
        assert_eq!(ky.on_response(429, date, at), Step::WaitFor { ns: 5 * NS });
    }

    #[test]
    fn naive_retries_three_times_at_once() {
        let mut n = Naive::default();
        for _ in 0..3 {
            assert_eq!(n.on_response(429), Step::Send { timeout: None });
        }
        assert_eq!(n.on_response(429), Step::Stop { data: false });
    }
}
