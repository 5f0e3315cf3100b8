//! What a response says about when to come back (`docs/rules.md`, rules 6-9, 13, 19 and 20):
//! its `Retry-After`, read strictly; its `RateLimit` field, when the policy reads it; the delay
//! they give the action that received it; and the block they announce to the others.

use core::time::Duration;

use crate::action::{ClockEvidence, ReceiptClock, Response, RetryAfterReading, WaitSource};
use crate::policy::Policy;
use crate::ratelimit::RateLimit;
use crate::retry_after::RetryAfter;

/// A response's timing, read once at its receipt.
#[derive(Clone, Debug)]
pub(crate) struct Timing {
    /// How `Retry-After` read, and the server's delay it gave.
    pub(crate) retry_after: RetryAfterReading,
    /// How the `RateLimit` field read; `None` unless the policy reads it and it was sent.
    pub(crate) ratelimit: Option<RateLimit>,
    /// The delay this response gives the action, if it is to wait.
    pub(crate) next: ServerDelay,
}

/// The delay a response gives: the server's (a valid `Retry-After`, or the `RateLimit`
/// field's reading when `Retry-After` is missing or invalid), a date no trusted clock can
/// measure, or none (the local fallback).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ServerDelay {
    Usable(WaitSource, Duration),
    Untrusted(ClockEvidence),
    Fallback(WaitSource),
}

impl Timing {
    /// Reads `response` under `policy`. A date that names no instant once it is resolved
    /// against the receipt (an RFC 850 February 29 in a common year) becomes invalid.
    pub(crate) fn read(policy: &Policy, response: &Response<'_>) -> Timing {
        let mut header = RetryAfter::parse(response.retry_after);
        let ratelimit = response
            .ratelimit
            .filter(|_| policy.ratelimit_fields)
            .map(RateLimit::parse);
        let mut next = retry_after_delay(policy, &header, response.clock);
        if next == ServerDelay::Fallback(WaitSource::FallbackInvalid) {
            if let RetryAfter::Date { raw, .. } = &mut header {
                let raw = core::mem::take(raw);
                header = RetryAfter::Invalid { raw };
            }
        }
        // Rule 19: the RateLimit field's reading stands in for a missing or invalid
        // Retry-After, as a server delay; a valid Retry-After takes precedence.
        if let (ServerDelay::Fallback(_), Some(reset)) =
            (next, ratelimit.as_ref().and_then(RateLimit::reset))
        {
            next = ServerDelay::Usable(WaitSource::RateLimit, reset);
        }
        let delay = match next {
            ServerDelay::Usable(source, delay) if source != WaitSource::RateLimit => Some(delay),
            _ => None,
        };
        Timing {
            retry_after: RetryAfterReading { header, delay },
            ratelimit,
            next,
        }
    }

    /// The block this response announces to the others sharing its limit, as a delay from its
    /// receipt. Rule 13: a retryable status's server delay, even on the last attempt (its
    /// `RateLimit` reading too, under rule 19, unless it is the last attempt). Rule 20: any other
    /// response whose field says the quota is spent for `T > 0` seconds (a 2xx, a status that
    /// is not retried, a retryable one on the last attempt or with a date no clock could
    /// measure). Before the last attempt a valid `Retry-After` takes precedence over the field
    /// (rule 19); on the last attempt both rules hold, and the later of the two is announced.
    /// `retryable`: the policy retries the response's status; `last`: it answered the last
    /// allowed attempt.
    pub(crate) fn announces(&self, retryable: bool, last: bool) -> Option<Duration> {
        let spent = self
            .ratelimit
            .as_ref()
            .and_then(RateLimit::reset)
            .filter(|reset| !reset.is_zero());
        match self.next {
            ServerDelay::Usable(WaitSource::RateLimit, reset) if retryable && !last => Some(reset),
            ServerDelay::Usable(source, delay) if retryable && source != WaitSource::RateLimit => {
                let later = spent
                    .filter(|_| last)
                    .map_or(delay, |reset| reset.max(delay));
                Some(later)
            }
            _ => spent,
        }
    }
}

/// Rules 6-8: the delay a `Retry-After` gives. A date needs clock evidence: the server's own
/// (the response's `Date`, or a scenario's wall clock), or the local clock when the policy
/// trusts it.
fn retry_after_delay(policy: &Policy, header: &RetryAfter, clock: ReceiptClock) -> ServerDelay {
    match header {
        RetryAfter::Missing => ServerDelay::Fallback(WaitSource::FallbackMissing),
        RetryAfter::Invalid { .. } => ServerDelay::Fallback(WaitSource::FallbackInvalid),
        RetryAfter::Seconds { secs, .. } => {
            ServerDelay::Usable(WaitSource::ServerSeconds, Duration::from_secs(*secs))
        }
        RetryAfter::Date { date, .. } => {
            let receipt = match clock {
                ReceiptClock::Server(at) => at,
                ReceiptClock::Local(at) if policy.trust_local_clock => at,
                ReceiptClock::Local(_) => {
                    return ServerDelay::Untrusted(ClockEvidence::UntrustedLocal)
                }
                ReceiptClock::Absent => return ServerDelay::Untrusted(ClockEvidence::None),
            };
            match date.resolve(receipt) {
                Some(when) => {
                    // A past date clamps to zero; the local floor applies after. Every year an
                    // HTTP-date can write is exact; should arithmetic ever saturate, the date is
                    // later than any budget: saturate the delay, as for huge delay-seconds,
                    // rather than report a clamped one.
                    let delay = if when.is_saturated() && when > receipt {
                        Duration::MAX
                    } else {
                        when.saturating_duration_since(receipt)
                    };
                    ServerDelay::Usable(WaitSource::ServerDate, delay)
                }
                None => ServerDelay::Fallback(WaitSource::FallbackInvalid),
            }
        }
    }
}
