//! The finite policy one user action runs under, and the one place that decides what a policy
//! given field by field (a scenario file's `policy`, the JavaScript `policy` option) may hold.

use core::time::Duration;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

use crate::report::secs;

/// The rules that bound one user action: how long it may take, how many requests it may send,
/// and how long it waits between them. A plain `Copy` value; build it with the `with_*` setters
/// and check it with [`Policy::validate`] before use.
///
/// The defaults are the source document's: a 20-second budget, 3 attempts, a 4-second cap
/// reserved before every start, a 1-second floor on waits, fallback waits of 2 s then 4 s, and
/// only 429 retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Policy {
    /// Total elapsed time, counted from the action's start: the first attempt's start, or,
    /// when the origin is blocked at the press, the press (the wait for the origin counts).
    #[serde(rename = "budget_s", serialize_with = "secs")]
    pub budget: Duration,
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The longest one attempt may run. The whole cap must fit in what is left of the budget
    /// before an attempt starts, so an attempt can never run past the deadline.
    #[serde(rename = "attempt_cap_s", serialize_with = "secs")]
    pub attempt_cap: Duration,
    /// The local floor on every wait, whatever the server asked for.
    #[serde(rename = "min_wait_s", serialize_with = "secs")]
    pub min_wait: Duration,
    /// The wait after attempt n when `Retry-After` is missing or invalid is
    /// `fallback_base * 2^(n-1)`.
    #[serde(rename = "fallback_base_s", serialize_with = "secs")]
    pub fallback_base: Duration,
    /// The statuses that may be retried.
    #[serde(rename = "retry_statuses")]
    pub retry_statuses: StatusSet,
    /// Whether the local wall clock may stand in for a response that carries no readable
    /// `Date` header when `Retry-After` is an HTTP-date. Off by default: a wrong local clock
    /// would silently shorten or stretch the server's delay. An input only: reports leave it out.
    #[serde(skip)]
    pub trust_local_clock: bool,
    /// The most that a start may be spread *after* the earliest time the rules allow, so that
    /// clients told the same time do not all retry at once. A wait adds `draw * jitter` (a
    /// draw in [0, 1)), clamped so that the start still fits its cap: jitter never makes a
    /// start earlier and never causes a stop. Zero (the default) spreads nothing. Reports carry
    /// it only when it is set, so that a policy without jitter reads as it always has.
    #[serde(
        rename = "jitter_s",
        serialize_with = "secs",
        skip_serializing_if = "Duration::is_zero"
    )]
    pub jitter: Duration,
    /// Whether the `RateLimit` response field is read (rules 19 and 20). Off by default, so
    /// that a service's quota fields change nothing until an app opts in. Reports carry it
    /// only when it is on.
    #[serde(skip_serializing_if = "core::ops::Not::not")]
    pub ratelimit_fields: bool,
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
            ratelimit_fields: false,
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

    /// Reads the `RateLimit` response field (rules 19 and 20), or not.
    #[must_use]
    pub const fn with_ratelimit_fields(mut self, read: bool) -> Self {
        self.ratelimit_fields = read;
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
        if self.jitter.is_zero() {
            // No spread to draw: most policies, and the fleet's hottest path.
            return Duration::ZERO;
        }
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
    /// unreadable: `fallback_base * 2^(attempt-1)`, saturating. Past 94 doublings even a
    /// nanosecond is beyond `Duration::MAX`, so no more than 128 are made.
    pub fn fallback_wait(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(128);
        (0..doublings).fold(self.fallback_base, |wait, _| wait.saturating_mul(2))
    }

    /// Whether a response with `status` may be retried.
    pub const fn retries(&self, status: u16) -> bool {
        self.retry_statuses.contains(status)
    }
}

/// `d * draw`, with `draw` clamped into [0, 1] (NaN reads as 0), never more than `d`: rounded
/// to the nanosecond up to 2^64 ns (584 years), and past that, in seconds to within a float's
/// 53 bits, which is all a time that long can carry. Float to integer `as` casts saturate, and
/// the float seconds are read with `try_from`, so nothing here can panic.
fn scale(d: Duration, draw: f64) -> Duration {
    let draw = if draw.is_nan() {
        0.0
    } else {
        draw.clamp(0.0, 1.0)
    };
    let Some(total) = d
        .as_secs()
        .checked_mul(1_000_000_000)
        .and_then(|n| n.checked_add(u64::from(d.subsec_nanos())))
    else {
        let secs = Duration::try_from_secs_f64(d.as_secs_f64() * draw).unwrap_or(d);
        return secs.min(d);
    };
    let nanos = (total as f64 * draw).round() as u64;
    Duration::from_nanos(nanos.min(total))
}

/// A set of HTTP statuses (100-599), as a fixed bitset so that [`Policy`] stays `Copy`.
/// Serialized as the list of its statuses in ascending order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusSet([u64; 8]);

impl Serialize for StatusSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

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

/// A policy as a reader found it, field by field, before anything is checked: a scenario
/// file's `policy` (read with serde) and the JavaScript `policy` option (read by the browser
/// module) both fill one, so what a valid policy is is decided once, by
/// [`PolicyInput::build`]. Absent (or `null`) fields take the defaults.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyInput {
    /// `budget_s`: seconds.
    pub budget_s: Option<Number>,
    /// `max_attempts`: a whole number, at least 1.
    pub max_attempts: Option<Whole>,
    /// `attempt_cap_s`: seconds, more than zero and at most the budget.
    pub attempt_cap_s: Option<Number>,
    /// `min_wait_s`: seconds.
    pub min_wait_s: Option<Number>,
    /// `fallback_base_s`: seconds.
    pub fallback_base_s: Option<Number>,
    /// `retry_statuses`: statuses within 100-599, none of them a 2xx.
    pub retry_statuses: Option<Vec<Whole>>,
    /// `trust_local_clock`.
    pub trust_local_clock: Option<bool>,
    /// `jitter_s`: seconds.
    pub jitter_s: Option<Number>,
    /// `ratelimit_fields`.
    pub ratelimit_fields: Option<bool>,
}

/// A field of a [`PolicyInput`] (or of a scenario) that cannot be used: its name as the input
/// spells it (`budget_s`, `retry_statuses[1]`) and what is wrong with it.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// The field, as a path relative to the object it was read from.
    pub field: String,
    /// What is wrong.
    pub problem: Problem,
}

/// What is wrong with a field. A number it names is kept as a number, so that each reader
/// writes it as its input would (the browser module as JavaScript prints numbers, which also
/// keeps Rust's float formatting out of what a page downloads).
#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    /// A number too large for any float (`1e999`): JSON's grammar allows it, a time cannot be it.
    NotFinite,
    /// A negative time or count.
    Negative(f64),
    /// A count or status that is not a whole number.
    NotWhole(f64),
    /// A whole number that is not an HTTP status, as it was written.
    NotStatus(f64),
    /// A jitter draw outside [0, 1).
    OutsideUnit(f64),
    /// A time more than zero but less than the nanosecond that times are kept to: it would be
    /// read as zero.
    BelowNanosecond(f64),
    /// The per-attempt cap, in seconds, is longer than the budget (both as the policy has them,
    /// a default included, since the cause may be either field).
    CapOverBudget { cap: f64, budget: f64 },
    /// Anything else, in words.
    Said(String),
}

impl FieldError {
    /// An error about `field`, in words.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError::of(field, Problem::Said(message.into()))
    }

    /// An error about `field`.
    pub fn of(field: impl Into<String>, problem: Problem) -> FieldError {
        FieldError {
            field: field.into(),
            problem,
        }
    }

    /// What is wrong, in words, with each number written by `number`.
    pub fn message_with(&self, number: impl Fn(f64) -> String) -> String {
        match &self.problem {
            Problem::NotFinite => {
                "the number is not finite (NaN, or too large for any time or count)".into()
            }
            Problem::Negative(x) => format!("{} is negative", number(*x)),
            Problem::NotWhole(x) => format!("{} is not a whole number", number(*x)),
            Problem::NotStatus(x) => format!("{} is not an HTTP status (100-599)", number(*x)),
            Problem::OutsideUnit(x) => format!("{} is outside [0, 1)", number(*x)),
            Problem::BelowNanosecond(x) => format!(
                "{} is less than a nanosecond, the smallest time kept",
                number(*x)
            ),
            Problem::CapOverBudget { cap, budget } => format!(
                "the per-attempt cap ({} s) must not exceed the budget ({} s)",
                number(*cap),
                number(*budget)
            ),
            Problem::Said(words) => words.clone(),
        }
    }

    /// What is wrong, in words, numbers as Rust writes them.
    pub fn message(&self) -> String {
        self.message_with(|x| x.to_string())
    }
}

impl PolicyInput {
    /// The names of the fields, in the order the rulebook lists them.
    pub const FIELDS: &'static [&'static str] = &[
        "budget_s",
        "max_attempts",
        "attempt_cap_s",
        "min_wait_s",
        "fallback_base_s",
        "retry_statuses",
        "trust_local_clock",
        "jitter_s",
        "ratelimit_fields",
    ];

    /// The policy these fields describe, on the source document's defaults; or the first field
    /// that cannot be used. Times must be finite and not negative (a huge one saturates); counts
    /// and statuses must be whole numbers; then the policy as a whole must be able to run
    /// ([`Policy::validate`]).
    pub fn build(&self) -> Result<Policy, FieldError> {
        let mut policy = Policy::new();
        let seconds = |field: &str, n: &Option<Number>, into: &mut Duration| {
            n.map_or(Ok(()), |n| n.seconds(field).map(|d| *into = d))
        };
        seconds("budget_s", &self.budget_s, &mut policy.budget)?;
        seconds(
            "attempt_cap_s",
            &self.attempt_cap_s,
            &mut policy.attempt_cap,
        )?;
        seconds("min_wait_s", &self.min_wait_s, &mut policy.min_wait)?;
        seconds(
            "fallback_base_s",
            &self.fallback_base_s,
            &mut policy.fallback_base,
        )?;
        seconds("jitter_s", &self.jitter_s, &mut policy.jitter)?;
        if let Some(Whole(n)) = self.max_attempts {
            // More attempts than u32 holds is "unlimited" for any real budget: saturate.
            let whole = n.whole("max_attempts")?;
            policy.max_attempts = u32::try_from(whole).unwrap_or(u32::MAX);
        }
        if let Some(list) = &self.retry_statuses {
            let mut set = StatusSet::EMPTY;
            for (i, Whole(n)) in list.iter().enumerate() {
                let field = format!("retry_statuses[{i}]");
                set = set
                    .try_with(n.status(&field)?)
                    .map_err(|e| FieldError::new(&field, e.message()))?;
            }
            policy.retry_statuses = set;
        }
        if let Some(trust) = self.trust_local_clock {
            policy.trust_local_clock = trust;
        }
        if let Some(read) = self.ratelimit_fields {
            policy.ratelimit_fields = read;
        }
        policy.validate().map_err(|e| match e {
            PolicyError::CapExceedsBudget => FieldError::of(
                e.field(),
                Problem::CapOverBudget {
                    cap: policy.attempt_cap.as_secs_f64(),
                    budget: policy.budget.as_secs_f64(),
                },
            ),
            _ => FieldError::new(e.field(), e.message()),
        })?;
        Ok(policy)
    }
}

/// A number as an input gave it, not yet checked: any JSON or JavaScript number, including
/// ones that are negative, not whole or (from `1e999`) not finite. The checks say which field
/// was at fault.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Number(pub f64);

impl Number {
    /// A time in seconds: finite and not negative; one beyond `Duration::MAX` saturates. Times
    /// are kept to the nanosecond, and one too small to be kept is refused rather than read
    /// as zero.
    pub fn seconds(self, field: &str) -> Result<Duration, FieldError> {
        let Number(x) = self;
        if !x.is_finite() {
            return Err(FieldError::of(field, Problem::NotFinite));
        }
        if x < 0.0 {
            return Err(FieldError::of(field, Problem::Negative(x)));
        }
        if x > 0.0 && x < 1e-9 {
            return Err(FieldError::of(field, Problem::BelowNanosecond(x)));
        }
        Ok(Duration::try_from_secs_f64(x).unwrap_or(Duration::MAX))
    }

    /// A whole number, not negative; one beyond `u64::MAX` saturates. `2.0` is 2.
    pub fn whole(self, field: &str) -> Result<u64, FieldError> {
        let Number(x) = self;
        if !x.is_finite() {
            Err(FieldError::of(field, Problem::NotFinite))
        } else if x < 0.0 {
            Err(FieldError::of(field, Problem::Negative(x)))
        } else if x.fract() != 0.0 {
            Err(FieldError::of(field, Problem::NotWhole(x)))
        } else {
            // A float-to-int `as` cast saturates, which is the meaning wanted for a huge count.
            Ok(x as u64)
        }
    }

    /// An HTTP status, 100-599.
    pub fn status(self, field: &str) -> Result<u16, FieldError> {
        let whole = self.whole(field)?;
        u16::try_from(whole)
            .ok()
            .filter(|s| (100..=599).contains(s))
            .ok_or_else(|| FieldError::of(field, Problem::NotStatus(self.0)))
    }

    /// A jitter draw: in [0, 1).
    pub fn draw(self, field: &str) -> Result<f64, FieldError> {
        let Number(x) = self;
        if !x.is_finite() {
            Err(FieldError::of(field, Problem::NotFinite))
        } else if !(0.0..1.0).contains(&x) {
            Err(FieldError::of(field, Problem::OutsideUnit(x)))
        } else {
            Ok(x)
        }
    }
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_number(deserializer, "a number").map(Number)
    }
}

/// A whole number as an input gave it, not yet checked: a [`Number`] whose type errors say
/// that a whole number was expected (`max_attempts`, a status).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Whole(pub Number);

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_number(deserializer, WHOLE).map(|x| Whole(Number(x)))
    }
}

/// Any number, as an `f64`; anything else is an error that says `expecting`.
///
/// A scenario's numbers are kept as written (`arbitrary_precision`), and one whose meaning its
/// `f64` loses is refused here, as it was written: a number that is not zero but would read as
/// zero (`1e-400`, `-1e-400`), and, where a whole number is expected, one whose fraction would
/// be lost (`200.0000000000000001`). Any other number is read as the nearest `f64`, as
/// JavaScript reads it: to the nanosecond for a time under about 104 days (2^53 ns), to the
/// unit for a count under 2^53, and a draw written just under 1 that rounds to 1 is refused as
/// 1, outside [0, 1).
fn deserialize_number<'de, D: Deserializer<'de>>(
    deserializer: D,
    expecting: &'static str,
) -> Result<f64, D::Error> {
    let value = serde_json::Value::deserialize(deserializer)?;
    let serde_json::Value::Number(number) = &value else {
        return Err(de::Error::invalid_type(unexpected(&value), &expecting));
    };
    let text = number.as_str();
    // JSON's grammar is a float's: a number too large parses as infinite, checked later.
    let x: f64 = text.parse().unwrap_or(f64::NAN);
    let (mantissa, _) = decimal_parts(text);
    if x == 0.0 && mantissa.bytes().any(|d| matches!(d, b'1'..=b'9')) {
        return Err(de::Error::custom(format!(
            "{text} is not zero, but too close to it to be read: it would read as 0"
        )));
    }
    if expecting == WHOLE && x.fract() == 0.0 && has_fraction(text) {
        return Err(de::Error::custom(format!("{text} is not a whole number")));
    }
    Ok(x)
}

/// What a whole number's type errors say was expected.
const WHOLE: &str = "a whole number";

/// What a JSON value other than a number is, for a type error.
fn unexpected(value: &serde_json::Value) -> de::Unexpected<'_> {
    use serde_json::Value;
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) | Value::Number(_) => de::Unexpected::Map,
    }
}

/// A JSON number's digits, without its sign and decimal point, and the power of ten of the
/// first one: `-12.5e1` is ("125", 2), read as 1 × 10^2 + 2 × 10^1 + 5 × 10^0.
fn decimal_parts(text: &str) -> (String, i64) {
    let (mantissa, exponent) = text.split_once(['e', 'E']).unwrap_or((text, ""));
    // Saturated: an exponent past an i64's range is beyond any float either way.
    let size = (exponent.bytes().filter(u8::is_ascii_digit)).fold(0i64, |n, d| {
        n.saturating_mul(10).saturating_add(i64::from(d - b'0'))
    });
    let exponent = if exponent.starts_with('-') {
        -size
    } else {
        size
    };
    let mantissa = mantissa.trim_start_matches('-');
    let whole_digits = mantissa.split('.').next().unwrap_or("").len();
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exponent.saturating_add(whole_digits as i64 - 1))
}

/// Whether a JSON number, as written, has a fraction that is not zero: a digit other than 0
/// below the units.
fn has_fraction(text: &str) -> bool {
    let (digits, first_power) = decimal_parts(text);
    (digits.bytes().enumerate()).any(|(i, d)| d != b'0' && first_power.saturating_sub(i as i64) < 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A JSON number's fraction is read from its digits, whatever its exponent.
    #[test]
    fn a_fraction_is_read_as_written() {
        for whole in [
            "200",
            "2e2",
            "200.0",
            "1.5e1",
            "-0.0",
            "0.000",
            "5e99999999999999999999",
        ] {
            assert!(!has_fraction(whole), "{whole}");
        }
        let fractions = [
            "1.05e1",
            "12.5e-1",
            "1e-400",
            "200.0000000000000001",
            "2e-99999999999999999999",
        ];
        for fraction in fractions {
            assert!(has_fraction(fraction), "{fraction}");
        }
        assert_eq!(decimal_parts("-12.5e1"), ("125".to_owned(), 2));
        assert_eq!(decimal_parts("0.05"), ("005".to_owned(), 0));
    }

    /// Whole numbers written with an exponent or a zero fraction are taken; so is a small time
    /// a float holds.
    #[test]
    fn numbers_a_float_holds_are_taken_as_written() {
        let read = |text: &str| {
            let value: serde_json::Value = serde_json::from_str(text).expect("JSON");
            Whole::deserialize(value).map(|Whole(Number(x))| x)
        };
        assert_eq!(read("2e2").ok(), Some(200.0));
        assert_eq!(read("200.0").ok(), Some(200.0));
        assert_eq!(
            read("1.5").ok(),
            Some(1.5),
            "a fraction a float holds: NotWhole later"
        );
        let time: serde_json::Value = serde_json::from_str("1e-9").expect("JSON");
        assert_eq!(Number::deserialize(time).ok(), Some(Number(1e-9)));
    }

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

    proptest! {
        #[test]
        fn scale_past_584_years_is_the_share_in_float_seconds(
            secs in 18_446_744_074u64..,
            nanos in 0u32..1_000_000_000,
            draw in 0.0f64..=1.0,
        ) {
            let d = Duration::new(secs, nanos);
            let scaled = scale(d, draw);
            prop_assert!(scaled <= d);
            let want = d.as_secs_f64() * draw;
            prop_assert!((scaled.as_secs_f64() - want).abs() <= want * 1e-15 + 1e-9);
        }
    }

    #[test]
    fn scale_keeps_a_share_of_any_length() {
        // A budget of 1e12 s with 1e11 s of jitter: half of it, not 584 years.
        let jitter = Duration::from_secs(100_000_000_000);
        assert_eq!(scale(jitter, 0.5), Duration::from_secs(50_000_000_000));
        assert_eq!(scale(Duration::MAX, 1.0), Duration::MAX);
        assert_eq!(scale(Duration::MAX, 0.0), Duration::ZERO);
        assert_eq!(scale(Duration::MAX, f64::NAN), Duration::ZERO);
        let most = Duration::from_nanos(u64::MAX);
        assert_eq!(scale(most, 1.0), most);
    }

    #[test]
    fn a_nanosecond_is_the_smallest_time_kept() {
        assert_eq!(Number(1e-9).seconds("t"), Ok(Duration::from_nanos(1)));
        assert_eq!(Number(0.0).seconds("t"), Ok(Duration::ZERO));
        for x in [4e-10, 6e-10, 9.99e-10, 5e-324] {
            let problem = Number(x).seconds("t").map_err(|e| e.problem);
            assert_eq!(problem, Err(Problem::BelowNanosecond(x)), "{x}");
        }
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
        // Past 32 doublings, where a 32-bit factor would stop: it still doubles.
        assert_eq!(p.fallback_wait(33), Duration::from_secs(1 << 33));
        assert_eq!(p.fallback_wait(34), Duration::from_secs(1 << 34));
        assert_eq!(p.fallback_wait(u32::MAX), Duration::MAX);
        let tiny = p.with_fallback_base(Duration::from_nanos(1));
        assert_eq!(tiny.fallback_wait(35), Duration::from_nanos(1 << 34));
        assert_eq!(tiny.fallback_wait(96), Duration::MAX);
        let none = p.with_fallback_base(Duration::ZERO);
        assert_eq!(none.fallback_wait(u32::MAX), Duration::ZERO);
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
        // The successes are 200 to 299: 199 and 300 may be retried.
        assert_eq!(
            StatusSet::EMPTY.try_with(299),
            Err(PolicyError::BadRetryStatus)
        );
        let edges = [199, 300].map(|s| StatusSet::EMPTY.try_with(s).map(|set| set.contains(s)));
        assert_eq!(edges, [Ok(true), Ok(true)]);
    }
}
