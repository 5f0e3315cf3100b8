//! Fuzz target: `RetryAfter::parse` and HTTP-date resolution, on any bytes.
//!
//! The input (lossy UTF-8) is one header value. Properties checked on every input:
//!
//! - `parse` never panics, never reads a present header as missing, and `raw()` is the input,
//!   untrimmed.
//! - Seconds exactly when the SP/HTAB-trimmed value is `1*DIGIT`, with the value saturating at
//!   `u64::MAX` instead of wrapping or turning invalid.
//! - A date exactly when an independent, position-based reading of the three RFC 9110 forms
//!   (written here, not shared with the crate) accepts the trimmed value; the form agrees.
//! - For a date, `resolve` never panics for any receipt (both ends of the `UtcTime` range, the
//!   start and end of every representable year, and one receipt derived from the input), gives
//!   the same answer when asked twice, names the instant the independent reading computes
//!   (with RFC 9110's 50-year rule for a two-digit year), is the same for every receipt when
//!   the year has four digits, and never moves earlier as the receipt moves later.

#![no_main]

use libfuzzer_sys::fuzz_target;
use retry_budget_model::http_date::{DateForm, HttpDate};
use retry_budget_model::retry_after::RetryAfter;
use retry_budget_model::utc::UtcTime;

// The tests' independent calendar, names and two-digit-year rule.
#[path = "../../tests/common/mod.rs"]
mod common;
use common::{days_from_civil, fifty_year_rule, LONG_DAYS, MONTHS, SHORT_DAYS};

const NANOS_PER_SEC: i64 = 1_000_000_000;
const NANOS_PER_DAY: i64 = 86_400 * NANOS_PER_SEC;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    check(&text, fnv1a(data));
});

fn check(text: &str, seed: u64) {
    let parsed = RetryAfter::parse(Some(text));
    assert_eq!(
        parsed.raw(),
        Some(text),
        "raw() must be the input, untrimmed"
    );
    assert_ne!(
        parsed.kind(),
        "missing",
        "a present header is never missing"
    );

    let trimmed = text.trim_matches(|c| c == ' ' || c == '\t');
    let all_digits = !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit());
    let reference = reference_date(trimmed);
    match &parsed {
        RetryAfter::Seconds { secs, .. } => {
            assert!(
                all_digits,
                "seconds from a value that is not 1*DIGIT: {text:?}"
            );
            // A digit-only string fails std's parse only by overflowing u64: then it saturates.
            let want = trimmed.parse::<u64>().unwrap_or(u64::MAX);
            assert_eq!(*secs, want, "delay-seconds of {text:?}");
        }
        RetryAfter::Date { date, .. } => {
            assert!(!all_digits);
            assert_eq!(
                HttpDate::parse(trimmed),
                Some(*date),
                "parse is deterministic"
            );
            let fields = reference.unwrap_or_else(|| {
                panic!("the crate reads {trimmed:?} as a date; the reference reading does not")
            });
            assert_eq!(date.form(), fields.form, "form of {trimmed:?}");
            check_resolve(date, &fields, seed);
        }
        RetryAfter::Invalid { .. } => {
            assert!(!all_digits, "1*DIGIT read as invalid: {text:?}");
            assert!(
                reference.is_none(),
                "the reference reading accepts {trimmed:?} as a date; the crate does not"
            );
        }
        RetryAfter::Missing => unreachable!(),
    }

    // The date parser on the untrimmed text: no whitespace is allowed around a date.
    let untrimmed = HttpDate::parse(text);
    assert_eq!(
        untrimmed.is_some(),
        reference_date(text).is_some(),
        "{text:?}"
    );
    // The IMF-fixdate-only entry point agrees with the general one.
    match HttpDate::parse_imf_fixdate(text) {
        Some(date) => {
            assert_eq!(date.form(), DateForm::ImfFixdate);
            assert_eq!(untrimmed, Some(date));
        }
        None => assert_ne!(untrimmed.map(|d| d.form()), Some(DateForm::ImfFixdate)),
    }
}

fn check_resolve(date: &HttpDate, fields: &Fields, seed: u64) {
    let mut receipts = receipts(seed);
    receipts.sort_unstable();
    let mut previous: Option<UtcTime> = None;
    let mut first_four_digit: Option<Option<UtcTime>> = None;
    for receipt in receipts {
        let once = date.resolve(receipt);
        let twice = date.resolve(receipt);
        assert_eq!(once, twice, "resolving the same date twice must agree");
        let year = match fields.form {
            DateForm::Rfc850 => fifty_year_rule(fields.year, receipt.year()),
            DateForm::ImfFixdate | DateForm::Asctime => fields.year,
        };
        assert_eq!(
            once,
            fields.instant(year),
            "{fields:?} at receipt {} (year {year})",
            receipt.unix_nanos()
        );
        if fields.form != DateForm::Rfc850 {
            assert!(
                once.is_some(),
                "a parsed four-digit-year date always resolves"
            );
            match first_four_digit {
                None => first_four_digit = Some(once),
                Some(first) => assert_eq!(once, first, "four-digit year: receipt-independent"),
            }
        }
        if let Some(now) = once {
            if let Some(before) = previous {
                assert!(
                    before <= now,
                    "a later receipt resolved {fields:?} to an earlier instant"
                );
            }
            previous = Some(now);
        }
    }
}

/// Receipt times: both ends of the range and their neighbours, the epoch, the RFC's and the
/// fixtures' instants, the first and last nanosecond of every year `UtcTime` can hold (where a
/// two-digit year's 50-year window moves), and one receipt derived from the input.
fn receipts(seed: u64) -> Vec<UtcTime> {
    let mut out: Vec<i64> = vec![
        i64::MIN,
        i64::MIN + 1,
        -1,
        0,
        1,
        784_111_777 * NANOS_PER_SEC,
        1_704_110_400 * NANOS_PER_SEC,
        i64::MAX - 1,
        i64::MAX,
        i64::from_ne_bytes(seed.to_ne_bytes()),
    ];
    for year in 1678..=2262 {
        let start = days_from_civil(year, 1, 1).saturating_mul(NANOS_PER_DAY);
        out.push(start);
        out.push(start.saturating_sub(1));
    }
    out.into_iter().map(UtcTime::from_unix_nanos).collect()
}

/// The fields of an HTTP-date as the reference reading found them.
#[derive(Debug)]
struct Fields {
    form: DateForm,
    /// 0 = Sunday.
    weekday: i64,
    day: i64,
    month: i64,
    /// Four digits, or the two digits of an RFC 850 year.
    year: i64,
    hour: i64,
    minute: i64,
    second: i64,
}

impl Fields {
    /// The instant for `year`, or None when that day does not exist or the day name is wrong.
    fn instant(&self, year: i64) -> Option<UtcTime> {
        if self.day < 1 || self.day > days_in_month(year, self.month) {
            return None;
        }
        let days = days_from_civil(year, self.month, self.day);
        if (days.rem_euclid(7) + 4) % 7 != self.weekday {
            return None;
        }
        let secs = days * 86_400 + self.hour * 3600 + self.minute * 60 + self.second;
        Some(UtcTime::from_unix_secs(secs))
    }

    /// The checks that do not need the year: a time of day, leap second only at 23:59.
    fn time_ok(&self) -> bool {
        self.hour <= 23
            && self.minute <= 59
            && (self.second <= 59 || (self.second == 60 && self.hour == 23 && self.minute == 59))
    }
}

/// The three forms read by fixed byte positions: `Some` exactly when `text` is a valid
/// HTTP-date (RFC 850: valid up to the checks that wait for the year's resolution).
fn reference_date(text: &str) -> Option<Fields> {
    let b = text.as_bytes();
    let fields = match b.len() {
        29 => imf_fixdate(b)?,
        24 => asctime(b)?,
        _ => rfc850(b)?,
    };
    if !fields.time_ok() {
        return None;
    }
    match fields.form {
        DateForm::Rfc850 => {
            (fields.day >= 1 && fields.day <= days_in_month(2000, fields.month)).then_some(fields)
        }
        DateForm::ImfFixdate | DateForm::Asctime => fields.instant(fields.year).map(|_| fields),
    }
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn imf_fixdate(b: &[u8]) -> Option<Fields> {
    expect(
        b,
        &[
            (3, b", "),
            (7, b" "),
            (11, b" "),
            (16, b" "),
            (19, b":"),
            (22, b":"),
        ],
    )?;
    (&b[25..] == b" GMT").then_some(())?;
    Some(Fields {
        form: DateForm::ImfFixdate,
        weekday: index_of(&SHORT_DAYS, &b[0..3])?,
        day: number(&b[5..7])?,
        month: index_of(&MONTHS, &b[8..11])? + 1,
        year: number(&b[12..16])?,
        hour: number(&b[17..19])?,
        minute: number(&b[20..22])?,
        second: number(&b[23..25])?,
    })
}

/// `Sun Nov  6 08:49:37 1994` (or `Sun Nov 06 ...`)
fn asctime(b: &[u8]) -> Option<Fields> {
    expect(
        b,
        &[
            (3, b" "),
            (7, b" "),
            (10, b" "),
            (13, b":"),
            (16, b":"),
            (19, b" "),
        ],
    )?;
    let day = if b[8] == b' ' {
        number(&b[9..10])?
    } else {
        number(&b[8..10])?
    };
    Some(Fields {
        form: DateForm::Asctime,
        weekday: index_of(&SHORT_DAYS, &b[0..3])?,
        day,
        month: index_of(&MONTHS, &b[4..7])? + 1,
        year: number(&b[20..24])?,
        hour: number(&b[11..13])?,
        minute: number(&b[14..16])?,
        second: number(&b[17..19])?,
    })
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`
fn rfc850(b: &[u8]) -> Option<Fields> {
    let comma = b.iter().position(|&c| c == b',')?;
    let weekday = index_of(&LONG_DAYS, &b[..comma])?;
    let r = &b[comma..];
    if r.len() != 24 {
        return None;
    }
    expect(
        r,
        &[
            (0, b", "),
            (4, b"-"),
            (8, b"-"),
            (11, b" "),
            (14, b":"),
            (17, b":"),
        ],
    )?;
    (&r[20..] == b" GMT").then_some(())?;
    Some(Fields {
        form: DateForm::Rfc850,
        weekday,
        day: number(&r[2..4])?,
        month: index_of(&MONTHS, &r[5..8])? + 1,
        year: number(&r[9..11])?,
        hour: number(&r[12..14])?,
        minute: number(&r[15..17])?,
        second: number(&r[18..20])?,
    })
}

fn expect(b: &[u8], literals: &[(usize, &[u8])]) -> Option<()> {
    literals
        .iter()
        .all(|&(at, lit)| b.get(at..at + lit.len()) == Some(lit))
        .then_some(())
}

fn index_of(names: &[&str], text: &[u8]) -> Option<i64> {
    names
        .iter()
        .position(|name| name.as_bytes() == text)
        .and_then(|i| i64::try_from(i).ok())
}

fn number(digits: &[u8]) -> Option<i64> {
    digits.iter().try_fold(0i64, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0'))
    })
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn fnv1a(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
