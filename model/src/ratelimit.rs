//! The `RateLimit` response field of the IETF httpapi draft (draft-ietf-httpapi-ratelimit-headers,
//! the `-10` syntax), read as `docs/rules.md` ("The RateLimit fields", rules 19 and 20) says:
//! an RFC 9651 structured-field List ([`crate::structured`]), whose members may carry `r`
//! (quota units remaining) and `t` (seconds until the quota is restored).
//!
//! On purpose more lenient than the draft: a member that is an Inner List, or whose `r` or `t`
//! is absent, not an Integer, or negative, is ignored, and the rest are read. A field that is
//! not a valid List is ignored whole: it is reported as `invalid`, never a reason to stop.
//! The older `X-RateLimit-*` headers are not read: services give their reset as epoch seconds,
//! as a delta or as a date, and a wrong guess would shorten or stretch a wait.

use core::time::Duration;

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::report::secs_or_null;
use crate::structured::{parse_list, Member};

/// How a `RateLimit` field read, keeping the raw text so a page can show what the server sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RateLimit {
    /// Some member says the quota is spent (`r=0`): it is restored in `reset` (the largest `t`
    /// of those members).
    Exhausted {
        /// The field as received.
        raw: String,
        /// `T = max(t)` over the members with `r = 0`.
        reset: Duration,
    },
    /// A valid List in which no member says the quota is spent.
    Remaining {
        /// The field as received.
        raw: String,
    },
    /// Not a valid structured-field List: ignored.
    Invalid {
        /// The field as received.
        raw: String,
    },
}

impl RateLimit {
    /// Reads a field value, exactly as written (several field lines joined with `", "`, as
    /// `Headers.get()` joins them).
    pub fn parse(raw: &str) -> RateLimit {
        let Some(list) = parse_list(raw) else {
            return RateLimit::Invalid {
                raw: raw.to_owned(),
            };
        };
        let raw = raw.to_owned();
        match list.iter().filter_map(reading).max() {
            Some(reset) => RateLimit::Exhausted { raw, reset },
            None => RateLimit::Remaining { raw },
        }
    }

    /// The reading of the field: when the quota is restored, if a member says it is spent.
    pub fn reset(&self) -> Option<Duration> {
        match self {
            RateLimit::Exhausted { reset, .. } => Some(*reset),
            RateLimit::Remaining { .. } | RateLimit::Invalid { .. } => None,
        }
    }

    /// `"exhausted"`, `"remaining"` or `"invalid"`, as reports spell it.
    pub const fn kind(&self) -> &'static str {
        match self {
            RateLimit::Exhausted { .. } => "exhausted",
            RateLimit::Remaining { .. } => "remaining",
            RateLimit::Invalid { .. } => "invalid",
        }
    }

    /// The field as received.
    pub fn raw(&self) -> &str {
        match self {
            RateLimit::Exhausted { raw, .. }
            | RateLimit::Remaining { raw }
            | RateLimit::Invalid { raw } => raw,
        }
    }
}

/// A member's `t` when its `r` is 0; `None` when the member says nothing usable (rule 19's
/// leniency: an Inner List, or an absent, non-Integer or negative `r` or `t`, makes the member
/// ignored).
fn reading(member: &Member) -> Option<Duration> {
    if member.inner_list {
        return None;
    }
    let whole = |key: &str| member.integer(key).and_then(|n| u64::try_from(n).ok());
    let (remaining, reset) = (whole("r")?, whole("t")?);
    (remaining == 0).then(|| Duration::from_secs(reset))
}

/// Serialized as `{ "raw", "kind", "reset_s" }`, `reset_s` null unless the quota is spent.
impl Serialize for RateLimit {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Reset(Option<Duration>);
        impl Serialize for Reset {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                secs_or_null(&self.0, serializer)
            }
        }
        let mut out = serializer.serialize_struct("RateLimit", 3)?;
        out.serialize_field("raw", self.raw())?;
        out.serialize_field("kind", self.kind())?;
        out.serialize_field("reset_s", &Reset(self.reset()))?;
        out.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(raw: &str) -> (&'static str, Option<u64>) {
        let field = RateLimit::parse(raw);
        (field.kind(), field.reset().map(|d| d.as_secs()))
    }

    #[test]
    fn the_reading_is_the_largest_t_of_the_spent_members() {
        let cases = [
            // One policy, spent: restored in 3 s.
            ("\"default\";r=0;t=3", ("exhausted", Some(3))),
            // Quota left: no reading, however little.
            ("\"default\";r=5;t=30", ("remaining", None)),
            ("\"default\";r=1;t=5", ("remaining", None)),
            // Several members: only the spent ones count, and the latest of them.
            (
                "\"a\";r=0;t=7, \"b\";r=0;t=12, \"c\";r=3;t=60",
                ("exhausted", Some(12)),
            ),
            // Spent and restored now.
            ("\"day\";r=0;t=0", ("exhausted", Some(0))),
            // The item's own type does not matter: a token, an integer.
            ("burst;r=0;t=4, 10;r=0;t=2", ("exhausted", Some(4))),
            // Two field lines as Headers.get() joins them.
            ("\"a\";r=2;t=1, \"b\";r=0;t=9", ("exhausted", Some(9))),
            // Parameters in any order; the last of a repeated key wins (RFC 9651).
            ("\"a\";t=5;r=0", ("exhausted", Some(5))),
            ("\"a\";r=0;t=5;t=8", ("exhausted", Some(8))),
            // Leniency: a member without r or t, or with a decimal, string or negative one, is
            // ignored and the others read.
            ("\"a\";r=0, \"b\";r=0;t=6", ("exhausted", Some(6))),
            ("\"a\";r=0;t=2.5, \"b\";r=0;t=1", ("exhausted", Some(1))),
            ("\"a\";r=0;t=\"5\"", ("remaining", None)),
            ("\"a\";r=-1;t=5", ("remaining", None)),
            ("\"a\";r=0;t=-5", ("remaining", None)),
            // An inner list is ignored.
            (
                "(\"a\" \"b\");r=0;t=9, \"c\";r=0;t=2",
                ("exhausted", Some(2)),
            ),
            // Fifteen digits is the most an Integer has (leading zeros count).
            (
                "\"a\";r=0;t=999999999999999",
                ("exhausted", Some(999_999_999_999_999)),
            ),
            ("\"a\";r=0;t=000000000000004", ("exhausted", Some(4))),
            ("\"a\";r=0;t=1000000000000000", ("invalid", None)),
            ("\"a\";r=0;t=0000000000000004", ("invalid", None)),
            // An empty field is an empty List (RFC 9651, section 4.2.1).
            ("", ("remaining", None)),
            // Not a List at all: ignored whole.
            ("\"a\";r=0;t=5,", ("invalid", None)),
            ("\"a\" r=0", ("invalid", None)),
            ("\tburst;r=0;t=4", ("invalid", None)),
            (" burst;r=0;t=4", ("exhausted", Some(4))),
            // The older X-RateLimit style in one field is not a List.
            ("limit=10, remaining=0, reset=30", ("invalid", None)),
            // Inside an inner list items are parted by spaces only, and each is followed by a
            // space or the list's end; a String holds printable ASCII only (no DEL).
            ("(\t1), a;r=0;t=5", ("invalid", None)),
            ("(1 \t2), a;r=0;t=5", ("invalid", None)),
            ("(1\"a\"), a;r=0;t=5", ("invalid", None)),
            ("(1  2), a;r=0;t=5", ("exhausted", Some(5))),
            ("a;x=\"\u{7f}\", b;r=0;t=5", ("invalid", None)),
            ("a;x=\"~\", b;r=0;t=5", ("exhausted", Some(5))),
            // Keys are lower case; a token may start with a capital.
            ("\"a\";R=0;T=3", ("invalid", None)),
            ("UPPER;r=0;t=3", ("exhausted", Some(3))),
        ];
        for (raw, want) in cases {
            assert_eq!(read(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn it_serializes_with_its_raw_text() {
        let field = RateLimit::parse("\"default\";r=0;t=3");
        let json = serde_json::to_value(&field).expect("serializes");
        assert_eq!(
            json,
            serde_json::json!({ "raw": "\"default\";r=0;t=3", "kind": "exhausted", "reset_s": 3 })
        );
    }
}
