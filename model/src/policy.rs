//! The finite policy one user action runs under.

use core::time::Duration;

/// The rules that bound one user action: how long it may take, how many requests it may send,
/// and how long it waits between them. A plain `Copy` value; build it with the `with_*` setters
/// and check it with [`Policy::validate`] before use.
///
/// The defaults are the source document's: a 20-second budget, 3 attempts, a 4-second cap
/// reserved before every start, a 1-second floor on waits, fallback waits of 2 s then 4 s, and
/// only 429 retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Total elapsed time, counted from the action's start: the first attempt's start, or,
    /// when the origin is blocked at the press, the press (the wait for the origin counts).
    pub budget: Duration,
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The longest one attempt may run. The whole cap must fit in what is left of the budget
    /// before an attempt starts, so an attempt can never run past the deadline.
    pub attempt_cap: Duration,
    /// The local floor on every wait, whatever the server asked for.
    pub min_wait: Duration,
    /// The wait after attempt n when `Retry-After` is missing or invalid is
    /// `fallback_base * 2^(n-1)`.
    pub fallback_base: Duration,
    /// The statuses that may be retried.
    pub retry_statuses: StatusSet,
    /// Whether the local wall clock may stand in for a response that carries no readable
    /// `Date` header when `Retry-After` is an HTTP-date. Off by default: a wrong local clock
    /// would silently shorten or stretch the server's delay.
    pub trust_local_clock: bool,
    /// The most that a start may be spread *after* the earliest time the rules allow, so that
    /// clients told the same time do not all retry at once. A wait adds `draw * jitter` (a
    /// draw in [0, 1)), clamped so that the start still fits its cap: jitter never makes a
    /// start earlier and never causes a stop. Zero (the default) spreads nothing.
    pub jitter: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            budget: Duration::from_secs(20),
            max_attempts: 3,
            attempt_cap: Duration::from_secs(4),
            min_wait: Duration::from_secs(1),
            fallback_base: Duration::from_secs(2),
            retry_statuses: StatusSet::EMPTY.with(429),
            trust_local_clock: false,
            jitter: Duration::ZERO,
        }
    }
}

/// Why a [`Policy`] cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyError {
    /// The budget is zero.
    ZeroBudget,
    /// `max_attempts` is zero.
    ZeroAttempts,
    /// The per-attempt cap is zero.
    ZeroAttemptCap,
    /// The per-attempt cap is longer than the whole budget, so not even the first attempt fits.
    CapExceedsBudget,
    /// A retryable status is outside 100-599, or a 2xx (which ends the action as a success).
    BadRetryStatus,
}

impl PolicyError {
    /// The field at fault, as the scenario format names it.
    pub const fn field(self) -> &'static str {
        match self {
            PolicyError::ZeroBudget => "budget_s",
            PolicyError::ZeroAttempts => "max_attempts",
            PolicyError::ZeroAttemptCap | PolicyError::CapExceedsBudget => "attempt_cap_s",
            PolicyError::BadRetryStatus => "retry_statuses",
        }
    }

    /// What is wrong, in words.
    pub const fn message(self) -> &'static str {
        match self {
            PolicyError::ZeroBudget => "the budget must be more than zero",
            PolicyError::ZeroAttempts => "at least one attempt must be allowed",
            PolicyError::ZeroAttemptCap => "the per-attempt cap must be more than zero",
            PolicyError::CapExceedsBudget => "the per-attempt cap must not exceed the budget",
            PolicyError::BadRetryStatus => {
                "a retryable status must be within 100-599 and not a 2xx success"
            }
        }
    }
}

impl core::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.field())?;
        f.write_str(": ")?;
        f.write_str(self.message())
    }
}

#[cfg(feature = "std")]
impl std::error::Error for PolicyError {}

impl Policy {
    /// The source document's policy.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the total budget.
    #[must_use]
    pub const fn with_budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// Sets the number of attempts, the first included.
    #[must_use]
    pub const fn with_max_attempts(mut self, max_attempts: u32) -> Self {
        self.max_attempts = max_attempts;
        self
    }

    /// Sets the per-attempt cap.
    #[must_use]
    pub const fn with_attempt_cap(mut self, cap: Duration) -> Self {
        self.attempt_cap = cap;
        self
    }

    /// Sets the local floor on waits.
    #[must_use]
    pub const fn with_min_wait(mut self, min_wait: Duration) -> Self {
        self.min_wait = min_wait;
        self
    }

    /// Sets the first fallback wait; later ones double.
    #[must_use]
    pub const fn with_fallback_base(mut self, base: Duration) -> Self {
        self.fallback_base = base;
        self
    }

    /// Sets the statuses that may be retried.
    #[must_use]
    pub const fn with_retry_statuses(mut self, statuses: StatusSet) -> Self {
        self.retry_statuses = statuses;
        self
    }

    /// Lets the local wall clock interpret an HTTP-date when the response has no `Date`.
    #[must_use]
    pub const fn with_trust_local_clock(mut self, trust: bool) -> Self {
        self.trust_local_clock = trust;
        self
    }

    /// Sets the most that a start may be spread after the earliest time the rules allow.
    #[must_use]
    pub const fn with_jitter(mut self, jitter: Duration) -> Self {
        self.jitter = jitter;
        self
    }

    /// The jitter one wait adds for `draw` (in [0, 1)) when the earliest allowed start is
    /// `earliest`: `min(draw * jitter, budget - attempt_cap - earliest)`, so that a start that
    /// fits without jitter still fits with it. A draw outside [0, 1) (or NaN) is clamped into
    /// it; the result is rounded to the nanosecond and never exceeds `jitter`.
    pub fn jitter_for(&self, draw: f64, earliest: Duration) -> Duration {
        let room = self
            .budget
            .saturating_sub(self.attempt_cap)
            .saturating_sub(earliest);
        scale(self.jitter, draw).min(room)
    }

    /// Checks that the policy can run at all: a positive budget, at least one attempt, and a
    /// positive cap that fits in the budget. Retryable statuses are checked as they are added to
    /// a [`StatusSet`], which cannot hold an out-of-range one.
    pub fn validate(&self) -> Result<(), PolicyError> {
        if self.budget.is_zero() {
            Err(PolicyError::ZeroBudget)
        } else if self.max_attempts == 0 {
            Err(PolicyError::ZeroAttempts)
        } else if self.attempt_cap.is_zero() {
            Err(PolicyError::ZeroAttemptCap)
        } else if self.attempt_cap > self.budget {
            Err(PolicyError::CapExceedsBudget)
        } else {
            Ok(())
        }
    }

    /// The local wait after `attempt` (1-based) when the server's timing is missing or
    /// unreadable: `fallback_base * 2^(attempt-1)`, saturating.
    pub fn fallback_wait(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1);
        let factor = 1u32.checked_shl(doublings).unwrap_or(u32::MAX);
        self.fallback_base.saturating_mul(factor)
    }

    /// Whether a response with `status` may be retried.
    pub const fn retries(&self, status: u16) -> bool {
        self.retry_statuses.contains(status)
    }
}

/// `d * draw`, with `draw` clamped into [0, 1] (NaN reads as 0), rounded to the nanosecond
/// and never more than `d`; a `d` past 2^64 ns (584 years) counts as 584 years. In 64-bit
/// arithmetic, which the page pays far less for than 128-bit; for any shorter `d` the result
/// is the same as on its exact nanoseconds. Float to integer `as` casts saturate, so nothing
/// here can panic.
fn scale(d: Duration, draw: f64) -> Duration {
    let draw = if draw.is_nan() {
        0.0
    } else {
        draw.clamp(0.0, 1.0)
    };
    let total = d
        .as_secs()
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::from(d.subsec_nanos()));
    let nanos = crate::float::round(total as f64 * draw) as u64;
    Duration::from_nanos(nanos.min(total))
}

/// A set of HTTP statuses (100-599), as a fixed bitset so that [`Policy`] stays `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusSet([u64; 8]);

impl StatusSet {
    /// No status at all: nothing is retried.
    pub const EMPTY: StatusSet = StatusSet([0; 8]);

    /// Adds `status`. Statuses outside 100-599 and 2xx successes are refused with
    /// [`PolicyError::BadRetryStatus`].
    pub const fn try_with(self, status: u16) -> Result<Self, PolicyError> {
        if status < 100 || status > 599 || (status >= 200 && status < 300) {
            return Err(PolicyError::BadRetryStatus);
        }
        Ok(self.with(status))
    }

    /// Adds `status`; one outside 100-599 is ignored. Prefer [`StatusSet::try_with`] for input.
    #[must_use]
    pub const fn with(mut self, status: u16) -> Self {
        if status >= 100 && status <= 599 {
            let bit = (status - 100) as usize;
            self.0[bit / 64] |= 1 << (bit % 64);
        }
        self
    }

    /// Whether `status` is in the set.
    pub const fn contains(&self, status: u16) -> bool {
        if status < 100 || status > 599 {
            return false;
        }
        let bit = (status - 100) as usize;
        self.0[bit / 64] & (1 << (bit % 64)) != 0
    }

    /// The statuses in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        (100u16..=599).filter(|s| self.contains(*s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `scale` on the exact nanoseconds, in 128-bit arithmetic.
    fn scale_exact(d: Duration, draw: f64) -> Duration {
        let draw = if draw.is_nan() {
            0.0
        } else {
            draw.clamp(0.0, 1.0)
        };
        let nanos = ((d.as_nanos() as f64 * draw).round() as u128).min(d.as_nanos());
        Duration::new(
            (nanos / 1_000_000_000) as u64,
            (nanos % 1_000_000_000) as u32,
        )
    }

    proptest! {
        #[test]
        fn scale_is_exact_below_584_years(
            secs in 0u64..18_000_000_000,
            nanos in 0u32..1_000_000_000,
            draw in proptest::num::f64::ANY,
        ) {
            let d = Duration::new(secs, nanos);
            prop_assert_eq!(scale(d, draw), scale_exact(d, draw));
        }
    }

    #[test]
    fn scale_saturates_at_584_years() {
        let most = Duration::from_nanos(u64::MAX);
        assert_eq!(scale(Duration::MAX, 1.0), most);
        assert_eq!(scale(Duration::MAX, 0.0), Duration::ZERO);
        assert!(scale(Duration::MAX, 0.5) <= most);
    }

    #[test]
    fn defaults_are_the_source_documents() {
        let p = Policy::new();
        assert_eq!(p.budget, Duration::from_secs(20));
        assert_eq!(p.max_attempts, 3);
        assert_eq!(p.attempt_cap, Duration::from_secs(4));
        assert_eq!(p.min_wait, Duration::from_secs(1));
        assert_eq!(p.fallback_wait(1), Duration::from_secs(2));
        assert_eq!(p.fallback_wait(2), Duration::from_secs(4));
        assert!(p.retries(429));
        assert!(!p.retries(503));
        assert!(!p.trust_local_clock);
        assert_eq!(p.validate(), Ok(()));
    }

    #[test]
    fn inconsistent_policies_name_their_field() {
        let zero = Duration::ZERO;
        let cases = [
            (
                Policy::new().with_budget(zero),
                PolicyError::ZeroBudget,
                "budget_s",
            ),
            (
                Policy::new().with_max_attempts(0),
                PolicyError::ZeroAttempts,
                "max_attempts",
            ),
            (
                Policy::new().with_attempt_cap(zero),
                PolicyError::ZeroAttemptCap,
                "attempt_cap_s",
            ),
            (
                Policy::new().with_attempt_cap(Duration::from_secs(21)),
                PolicyError::CapExceedsBudget,
                "attempt_cap_s",
            ),
        ];
        for (policy, error, field) in cases {
            assert_eq!(policy.validate(), Err(error));
            assert_eq!(error.field(), field);
        }
        // A cap equal to the budget leaves room for exactly one attempt, which is allowed.
        let tight = Policy::new().with_attempt_cap(Duration::from_secs(20));
        assert_eq!(tight.validate(), Ok(()));
    }

    #[test]
    fn fallback_doubles_and_saturates() {
        let p = Policy::new();
        assert_eq!(p.fallback_wait(0), Duration::from_secs(2));
        assert_eq!(p.fallback_wait(3), Duration::from_secs(8));
        assert_eq!(
            p.fallback_wait(33),
            Duration::from_secs(2).saturating_mul(u32::MAX)
        );
        let huge = p.with_fallback_base(Duration::MAX);
        assert_eq!(huge.fallback_wait(2), Duration::MAX);
    }

    #[test]
    fn jitter_is_a_share_of_the_spread_clamped_to_the_room_left() {
        let p = Policy::new().with_jitter(Duration::from_secs(4));
        let at = |s: u64| Duration::from_secs(s);
        assert_eq!(p.jitter_for(0.5, at(5)), at(2));
        assert_eq!(p.jitter_for(0.0, at(5)), Duration::ZERO);
        // 20 - 4 - 14 = 2 s of room: the jitter never pushes a fitting start past the gate.
        assert_eq!(p.jitter_for(0.75, at(14)), at(2));
        assert_eq!(p.jitter_for(0.75, at(16)), Duration::ZERO);
        assert_eq!(p.jitter_for(0.75, at(30)), Duration::ZERO);
        // Out-of-range draws are clamped, never a panic.
        assert_eq!(p.jitter_for(f64::NAN, at(0)), Duration::ZERO);
        assert_eq!(p.jitter_for(-1.0, at(0)), Duration::ZERO);
        assert_eq!(p.jitter_for(7.0, at(0)), at(4));
        // Rounded to the nanosecond: 0.29 * 10 s is 2.9 s, not 2.899999999 s.
        let ten = Policy::new().with_jitter(at(10));
        assert_eq!(ten.jitter_for(0.29, at(0)), Duration::from_millis(2_900));
        let huge = Policy::new()
            .with_jitter(Duration::MAX)
            .with_budget(Duration::MAX);
        assert!(huge.jitter_for(0.999_999, at(0)) <= Duration::MAX);
        assert_eq!(Policy::new().jitter, Duration::ZERO);
    }

    #[test]
    fn status_set_holds_only_real_statuses() {
        let set = StatusSet::EMPTY.with(429).with(503).with(99).with(600);
        assert_eq!(set.iter().collect::<Vec<_>>(), [429, 503]);
        assert!(set.contains(429) && set.contains(503));
        assert!(!set.contains(0) && !set.contains(600) && !set.contains(u16::MAX));
        assert_eq!(
            StatusSet::EMPTY.try_with(600),
            Err(PolicyError::BadRetryStatus)
        );
        assert_eq!(
            StatusSet::EMPTY.try_with(200),
            Err(PolicyError::BadRetryStatus)
        );
        assert!(StatusSet::EMPTY.try_with(100).is_ok() && StatusSet::EMPTY.try_with(599).is_ok());
    }
}
