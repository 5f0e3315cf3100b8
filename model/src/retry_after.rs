//! The `Retry-After` response header (RFC 9110 section 10.2.3), read strictly.

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::http_date::HttpDate;

/// How a Retry-After header was read, keeping the raw text so a page can show what the server
/// actually sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetryAfter {
    /// No header (or hidden from cross-origin script, which looks the same).
    Missing,
    /// delay-seconds (`1*DIGIT`). Saturates at u64::MAX: a huge number means "longer than any
    /// budget", never invalid, never wraps.
    Seconds {
        /// The header value as received, before trimming.
        raw: String,
        /// The delay in whole seconds.
        secs: u64,
    },
    /// An HTTP-date; needs clock evidence to become a wait.
    Date {
        /// The header value as received, before trimming.
        raw: String,
        /// The parsed date, not yet resolved against a receipt time.
        date: HttpDate,
    },
    /// Anything else: empty, `1.5`, `-1`, `+5`, `NaN`, `tomorrow`, `3, 4`, lowercase names, `UTC`
    /// zone.
    Invalid {
        /// The header value as received.
        raw: String,
    },
}

/// Serialized as `{ "raw": text or null, "kind": ... }`: what the server sent beside how it read.
impl Serialize for RetryAfter {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("RetryAfter", 2)?;
        out.serialize_field("raw", &self.raw())?;
        out.serialize_field("kind", self.kind())?;
        out.end()
    }
}

impl RetryAfter {
    /// Reads a header value (None = absent). Optional whitespace (SP and HTAB only) is trimmed at
    /// both ends first; any other whitespace, such as a newline, makes the value invalid.
    pub fn parse(value: Option<&str>) -> RetryAfter {
        let Some(raw) = value else {
            return RetryAfter::Missing;
        };
        let text = raw.trim_matches(|c| c == ' ' || c == '\t');
        if let Some(secs) = delay_seconds(text) {
            RetryAfter::Seconds {
                raw: raw.to_owned(),
                secs,
            }
        } else if let Some(date) = HttpDate::parse(text) {
            RetryAfter::Date {
                raw: raw.to_owned(),
                date,
            }
        } else {
            RetryAfter::Invalid {
                raw: raw.to_owned(),
            }
        }
    }

    /// Which case this is, as the replay output spells it: `"seconds"`, `"date"`,
    /// `"missing"` or `"invalid"`.
    pub const fn kind(&self) -> &'static str {
        match self {
            RetryAfter::Missing => "missing",
            RetryAfter::Seconds { .. } => "seconds",
            RetryAfter::Date { .. } => "date",
            RetryAfter::Invalid { .. } => "invalid",
        }
    }

    /// Whether this is a valid `Retry-After` (delay-seconds or an HTTP-date), which takes
    /// precedence over the `RateLimit` field.
    pub const fn is_valid(&self) -> bool {
        matches!(self, RetryAfter::Seconds { .. } | RetryAfter::Date { .. })
    }

    /// The untrimmed text as received; None when the header was missing.
    pub fn raw(&self) -> Option<&str> {
        match self {
            RetryAfter::Missing => None,
            RetryAfter::Seconds { raw, .. }
            | RetryAfter::Date { raw, .. }
            | RetryAfter::Invalid { raw } => Some(raw),
        }
    }
}

/// `1*DIGIT` (ASCII only) as a saturating count of seconds; None for anything else.
fn delay_seconds(text: &str) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    text.bytes().try_fold(0u64, |secs, byte| {
        byte.is_ascii_digit().then(|| {
            secs.saturating_mul(10)
                .saturating_add(u64::from(byte - b'0'))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http_date::DateForm;

    #[test]
    fn delay_seconds_values() {
        let cases: &[(&str, &str, u64)] = &[
            ("source schedule a first", "3", 3),
            ("source schedule a second", "4", 4),
            ("source wait exceeds budget", "30", 30),
            ("zero", "0", 0),
            ("source eight", "8", 8),
            ("leading zeros", "007", 7),
            ("all zeros", "000", 0),
            ("trimmed space and tab", " 3\t", 3),
            ("trimmed runs of ows", "\t \t42  \t", 42),
            ("u64 max exactly", "18446744073709551615", u64::MAX),
            (
                "u64 max plus one saturates",
                "18446744073709551616",
                u64::MAX,
            ),
            ("twenty digits saturate", "99999999999999999999", u64::MAX),
            (
                "very long number saturates",
                "1000000000000000000000000000000000000000000",
                u64::MAX,
            ),
            (
                "leading zeros before a big number",
                "0000000000000000000000018446744073709551615",
                u64::MAX,
            ),
        ];
        for &(name, text, want) in cases {
            let parsed = RetryAfter::parse(Some(text));
            assert_eq!(
                parsed,
                RetryAfter::Seconds {
                    raw: text.to_owned(),
                    secs: want
                },
                "{name}"
            );
            assert_eq!(parsed.kind(), "seconds", "{name}");
            assert_eq!(parsed.raw(), Some(text), "{name}: raw is untrimmed");
        }
    }

    #[test]
    fn date_values() {
        let cases: &[(&str, &str, DateForm)] = &[
            (
                "source date",
                "Mon, 01 Jan 2024 12:00:06 GMT",
                DateForm::ImfFixdate,
            ),
            (
                "rfc imf-fixdate",
                "Sun, 06 Nov 1994 08:49:37 GMT",
                DateForm::ImfFixdate,
            ),
            (
                "rfc rfc850",
                "Sunday, 06-Nov-94 08:49:37 GMT",
                DateForm::Rfc850,
            ),
            ("rfc asctime", "Sun Nov  6 08:49:37 1994", DateForm::Asctime),
            (
                "trimmed date",
                " \tMon, 01 Jan 2024 12:00:06 GMT\t ",
                DateForm::ImfFixdate,
            ),
        ];
        for &(name, text, form) in cases {
            let parsed = RetryAfter::parse(Some(text));
            assert_eq!(parsed.kind(), "date", "{name}");
            assert_eq!(parsed.raw(), Some(text), "{name}: raw is untrimmed");
            match parsed {
                RetryAfter::Date { date, .. } => {
                    assert_eq!(date.form(), form, "{name}");
                    assert_eq!(Some(date), HttpDate::parse(text.trim()), "{name}");
                }
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn invalid_values_keep_their_raw_text() {
        let cases: &[(&str, &str)] = &[
            ("empty", ""),
            ("whitespace only", " \t "),
            ("fraction", "1.5"),
            ("negative", "-1"),
            ("plus sign", "+5"),
            ("not a number", "NaN"),
            ("word", "tomorrow"),
            ("two joined header lines", "3, 4"),
            ("inner space", "3 4"),
            ("newline is not ows", "\n3"),
            ("trailing newline", "3\n"),
            ("carriage return", "3\r"),
            ("non-breaking space is not ows", "\u{a0}3"),
            ("exponent", "1e3"),
            ("hex", "0x10"),
            ("full-width digit", "３"),
            ("arabic-indic digit", "\u{0663}"),
            ("unit suffix", "3s"),
            ("lowercase day name", "mon, 01 Jan 2024 12:00:06 GMT"),
            ("lowercase month", "Mon, 01 jan 2024 12:00:06 GMT"),
            ("UTC zone", "Mon, 01 Jan 2024 12:00:06 UTC"),
            ("date followed by junk", "Mon, 01 Jan 2024 12:00:06 GMT x"),
            (
                "date followed by a second date",
                "Mon, 01 Jan 2024 12:00:06 GMT, 3",
            ),
            ("impossible date", "Tue, 30 Feb 2024 12:00:06 GMT"),
            (
                "day name does not match the date",
                "Tue, 01 Jan 2024 12:00:06 GMT",
            ),
            ("iso 8601", "2024-01-01T12:00:06Z"),
        ];
        for &(name, text) in cases {
            let parsed = RetryAfter::parse(Some(text));
            assert_eq!(
                parsed,
                RetryAfter::Invalid {
                    raw: text.to_owned()
                },
                "{name}"
            );
            assert_eq!(parsed.kind(), "invalid", "{name}");
            assert_eq!(parsed.raw(), Some(text), "{name}");
        }
    }

    #[test]
    fn absent_header_is_missing() {
        let parsed = RetryAfter::parse(None);
        assert_eq!(parsed, RetryAfter::Missing);
        assert_eq!(parsed.kind(), "missing");
        assert_eq!(parsed.raw(), None);
    }

    #[test]
    fn kind_spellings() {
        let cases = [
            (Some("3"), "seconds"),
            (Some("Mon, 01 Jan 2024 12:00:06 GMT"), "date"),
            (None, "missing"),
            (Some("soon"), "invalid"),
        ];
        for (value, want) in cases {
            assert_eq!(RetryAfter::parse(value).kind(), want, "{value:?}");
        }
    }

    #[test]
    fn parse_never_panics_on_odd_strings() {
        let cases: &[&str] = &[
            "",
            " ",
            "\t",
            "\0",
            "é",
            "日本語",
            "😀",
            " 😀 ",
            "3😀",
            "Mon, 01 Jan 2024 12:00:06 GMT😀",
            "Mon,😀01 Jan 2024 12:00:06 GMT",
            "Mön, 01 Jan 2024 12:00:06 GMT",
            "Sunday, 06-Nov-9😀 08:49:37 GMT",
            "Sun Nov  😀 08:49:37 1994",
            "\u{feff}3",
            "\u{200b}",
            "\u{10ffff}",
            "Mon, 01 Jan 2024 12:00:06 G",
            "Mon, 01 Jan 2024 12:00:06 GM\u{00e9}",
            "Mon, 01 Jan 2024 1",
            "Mon",
            "Monday",
            "Monday, ",
            "Sun Nov",
            "99999999999999999999999999999999999999999999999999999999999999999999999999999",
            "-99999999999999999999",
        ];
        for &text in cases {
            let parsed = RetryAfter::parse(Some(text));
            assert_eq!(parsed.raw(), Some(text));
            assert_ne!(parsed.kind(), "missing");
        }
    }

    proptest::proptest! {
        #[test]
        fn parse_never_panics_and_keeps_raw(text in ".*") {
            let parsed = RetryAfter::parse(Some(&text));
            proptest::prop_assert_eq!(parsed.raw(), Some(text.as_str()));
        }

        #[test]
        fn any_digit_string_is_seconds(text in "[0-9]{1,30}") {
            // A digit-only string fails std's parse only by overflowing u64.
            let secs = text.parse::<u64>().unwrap_or(u64::MAX);
            proptest::prop_assert_eq!(
                RetryAfter::parse(Some(&text)),
                RetryAfter::Seconds { raw: text.clone(), secs }
            );
        }
    }
}
