//! HTTP-dates (RFC 9110 section 5.6.7), read strictly in all three forms.
//!
//! The parser works on bytes, so no input (including multibyte UTF-8) can split a character or
//! index out of bounds; each form must match its grammar exactly, with no surrounding whitespace.

use crate::utc::{days_from_civil, days_in_month, UtcTime};

const SHORT_DAY_NAMES: [&[u8]; 7] = [b"Sun", b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat"];
const LONG_DAY_NAMES: [&[u8]; 7] = [
    b"Sunday",
    b"Monday",
    b"Tuesday",
    b"Wednesday",
    b"Thursday",
    b"Friday",
    b"Saturday",
];
const MONTH_NAMES: [&[u8]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];
/// Four consecutive centuries: the Gregorian calendar repeats every 400 years (146,097 days,
/// a whole number of weeks), so between them they give every leap year and weekday a two-digit
/// year can resolve to.
const CYCLE_CENTURIES: [i64; 4] = [2000, 2100, 2200, 2300];

/// Which of the three RFC 9110 HTTP-date forms a value was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DateForm {
    /// `Sun, 06 Nov 1994 08:49:37 GMT`, the form senders must generate.
    ImfFixdate,
    /// `Sunday, 06-Nov-94 08:49:37 GMT`, obsolete; its two-digit year is resolved on receipt.
    Rfc850,
    /// `Sun Nov  6 08:49:37 1994`, ANSI C's `asctime()`; obsolete.
    Asctime,
}

/// A syntactically exact HTTP-date whose fields name a possible time of day on an existing day.
///
/// A day name that does not match the date makes the value invalid: a sender that got the weekday
/// wrong computed the date wrong, and a wait derived from it cannot be trusted. For the four-digit
/// forms every check is done by [`HttpDate::parse`]; for an RFC 850 date it checks that some
/// century makes February 29 and the weekday possible, and [`HttpDate::resolve`] checks them in
/// the century the receipt resolves the year to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpDate {
    /// The full year, or for [`DateForm::Rfc850`] the unresolved two-digit year (0-99).
    year: u16,
    /// 1-12.
    month: u8,
    /// 1-31, within the month (February 29 pending for an unresolved year).
    day: u8,
    /// 0-23.
    hour: u8,
    /// 0-59.
    minute: u8,
    /// 0-59, or 60 at 23:59 only (a leap second).
    second: u8,
    /// The day name as written: 0 = Sunday .. 6 = Saturday.
    weekday: u8,
    form: DateForm,
}

impl HttpDate {
    /// Any of the three forms. None when the text is not exactly one of them or names an
    /// impossible date (four-digit-year forms are fully checked here).
    pub fn parse(text: &str) -> Option<HttpDate> {
        let bytes = text.as_bytes();
        parse_imf_fixdate(bytes)
            .or_else(|| parse_rfc850(bytes))
            .or_else(|| parse_asctime(bytes))
    }

    /// IMF-fixdate only (used for a scenario's wall clock, which the format requires to be
    /// IMF-fixdate).
    pub fn parse_imf_fixdate(text: &str) -> Option<HttpDate> {
        parse_imf_fixdate(text.as_bytes())
    }

    /// The form it was written in.
    pub fn form(&self) -> DateForm {
        self.form
    }

    /// The instant this date names. A two-digit RFC 850 year is resolved against `receipt`'s UTC
    /// year: it becomes the latest year with those last two digits that is at most 50 years after
    /// the receipt year (RFC 9110: a year that appears to be more than 50 years in the future is
    /// the most recent past year with the same last two digits). None when the resolved date is
    /// impossible (February 29 in a common year, a day name that does not match). The leap second
    /// 23:59:60 is the instant one second after 23:59:59, the next day's 00:00:00. Saturates per
    /// [`UtcTime`].
    pub fn resolve(&self, receipt: UtcTime) -> Option<UtcTime> {
        let year = match self.form {
            DateForm::Rfc850 => resolve_two_digit_year(self.year, receipt.year()),
            DateForm::ImfFixdate | DateForm::Asctime => i64::from(self.year),
        };
        let days = checked_days(year, self.month, self.day, self.weekday)?;
        let seconds_of_day =
            i64::from(self.hour) * 3600 + i64::from(self.minute) * 60 + i64::from(self.second);
        let secs = days.saturating_mul(86_400).saturating_add(seconds_of_day);
        Some(UtcTime::from_unix_secs(secs))
    }
}

/// The latest year ending in `two_digits` that is at most 50 years after `receipt_year`.
fn resolve_two_digit_year(two_digits: u16, receipt_year: i64) -> i64 {
    let latest = receipt_year.saturating_add(50);
    let back = latest.saturating_sub(i64::from(two_digits)).rem_euclid(100);
    latest.saturating_sub(back)
}

/// Days since 1970-01-01 of a date whose day exists in its month and whose day name (0 = Sunday)
/// matches; None otherwise.
fn checked_days(year: i64, month: u8, day: u8, weekday: u8) -> Option<i64> {
    if day == 0 || u32::from(day) > days_in_month(year, u32::from(month)) {
        return None;
    }
    let days = days_from_civil(year, u32::from(month), u32::from(day));
    (weekday_of(days) == weekday).then_some(days)
}

/// 0 = Sunday .. 6 = Saturday for a day counted from 1970-01-01 (a Thursday).
fn weekday_of(days: i64) -> u8 {
    // rem_euclid(7) is 0..=6, so the sum and the narrowing cannot fail.
    u8::try_from((days.rem_euclid(7) + 4) % 7).unwrap_or(u8::MAX)
}

/// Whether hour:minute:second is a time of day; second 60 only as the leap second 23:59:60.
fn valid_time(hour: u8, minute: u8, second: u8) -> bool {
    hour <= 23 && minute <= 59 && (second <= 59 || (second == 60 && hour == 23 && minute == 59))
}

/// `day-name "," SP day SP month SP year SP time-of-day SP "GMT"`.
fn parse_imf_fixdate(bytes: &[u8]) -> Option<HttpDate> {
    let mut c = Cursor(bytes);
    let weekday = c.one_of(&SHORT_DAY_NAMES)?;
    c.literal(b", ")?;
    let day = c.two_digits()?;
    c.literal(b" ")?;
    let month = c.month()?;
    c.literal(b" ")?;
    let year = c.four_digits()?;
    c.literal(b" ")?;
    let (hour, minute, second) = c.time_of_day()?;
    c.literal(b" GMT")?;
    c.end()?;
    let date = HttpDate {
        year,
        month,
        day,
        hour,
        minute,
        second,
        weekday,
        form: DateForm::ImfFixdate,
    };
    date.check_four_digit_year()
}

/// `day-name-l "," SP day "-" month "-" 2DIGIT SP time-of-day SP "GMT"`.
fn parse_rfc850(bytes: &[u8]) -> Option<HttpDate> {
    let mut c = Cursor(bytes);
    let weekday = c.one_of(&LONG_DAY_NAMES)?;
    c.literal(b", ")?;
    let day = c.two_digits()?;
    c.literal(b"-")?;
    let month = c.month()?;
    c.literal(b"-")?;
    let year = u16::from(c.two_digits()?);
    c.literal(b" ")?;
    let (hour, minute, second) = c.time_of_day()?;
    c.literal(b" GMT")?;
    c.end()?;
    // February 29 and the day name depend on the century, which only the receipt decides. A
    // date that no century makes possible is invalid whatever the receipt, with or without a
    // clock to resolve it; the others are checked again once the year is resolved.
    let possible = CYCLE_CENTURIES
        .iter()
        .any(|century| checked_days(century + i64::from(year), month, day, weekday).is_some());
    (possible && valid_time(hour, minute, second)).then_some(HttpDate {
        year,
        month,
        day,
        hour,
        minute,
        second,
        weekday,
        form: DateForm::Rfc850,
    })
}

/// `day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time-of-day SP year`.
fn parse_asctime(bytes: &[u8]) -> Option<HttpDate> {
    let mut c = Cursor(bytes);
    let weekday = c.one_of(&SHORT_DAY_NAMES)?;
    c.literal(b" ")?;
    let month = c.month()?;
    c.literal(b" ")?;
    let day = if c.literal(b" ").is_some() {
        c.digit()?
    } else {
        c.two_digits()?
    };
    c.literal(b" ")?;
    let (hour, minute, second) = c.time_of_day()?;
    c.literal(b" ")?;
    let year = c.four_digits()?;
    c.end()?;
    let date = HttpDate {
        year,
        month,
        day,
        hour,
        minute,
        second,
        weekday,
        form: DateForm::Asctime,
    };
    date.check_four_digit_year()
}

impl HttpDate {
    /// The date itself when its four-digit year makes it fully checkable and it passes.
    fn check_four_digit_year(self) -> Option<HttpDate> {
        checked_days(i64::from(self.year), self.month, self.day, self.weekday)?;
        valid_time(self.hour, self.minute, self.second).then_some(self)
    }
}

/// Reads a byte string front to back; every method consumes only on success.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn literal(&mut self, expected: &[u8]) -> Option<()> {
        self.0 = self.0.strip_prefix(expected)?;
        Some(())
    }

    /// The index of the (case-sensitive) name the input starts with. No name in any table used
    /// here is a prefix of another, so the first match is the only one.
    fn one_of(&mut self, names: &[&[u8]]) -> Option<u8> {
        for (index, name) in names.iter().enumerate() {
            if let Some(rest) = self.0.strip_prefix(*name) {
                self.0 = rest;
                return u8::try_from(index).ok();
            }
        }
        None
    }

    /// 1 (January) to 12.
    fn month(&mut self) -> Option<u8> {
        self.one_of(&MONTH_NAMES)?.checked_add(1)
    }

    fn digit(&mut self) -> Option<u8> {
        let (&byte, rest) = self.0.split_first()?;
        if !byte.is_ascii_digit() {
            return None;
        }
        self.0 = rest;
        Some(byte - b'0')
    }

    /// Exactly two ASCII digits, 0-99.
    fn two_digits(&mut self) -> Option<u8> {
        let tens = self.digit()?;
        let ones = self.digit()?;
        Some(tens * 10 + ones)
    }

    /// Exactly four ASCII digits, 0-9999.
    fn four_digits(&mut self) -> Option<u16> {
        let high = self.two_digits()?;
        let low = self.two_digits()?;
        Some(u16::from(high) * 100 + u16::from(low))
    }

    /// `hour ":" minute ":" second`, two digits each; ranges are checked by the caller.
    fn time_of_day(&mut self) -> Option<(u8, u8, u8)> {
        let hour = self.two_digits()?;
        self.literal(b":")?;
        let minute = self.two_digits()?;
        self.literal(b":")?;
        let second = self.two_digits()?;
        Some((hour, minute, second))
    }

    fn end(&self) -> Option<()> {
        self.0.is_empty().then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utc::days_in_month;

    /// Any receipt in 2024 (the source document's year).
    fn receipt_2024() -> UtcTime {
        UtcTime::from_unix_secs(1_704_110_400)
    }

    fn receipt_in(year: i64) -> UtcTime {
        UtcTime::from_unix_secs(days_from_civil(year, 6, 15).saturating_mul(86_400))
    }

    fn secs(date: &HttpDate, receipt: UtcTime) -> Option<i64> {
        date.resolve(receipt).map(UtcTime::unix_secs)
    }

    #[test]
    fn valid_dates_resolve_to_the_right_instant() {
        let cases: &[(&str, &str, DateForm, i64)] = &[
            (
                "rfc imf-fixdate",
                "Sun, 06 Nov 1994 08:49:37 GMT",
                DateForm::ImfFixdate,
                784_111_777,
            ),
            (
                "rfc rfc850",
                "Sunday, 06-Nov-94 08:49:37 GMT",
                DateForm::Rfc850,
                784_111_777,
            ),
            (
                "rfc asctime, space-padded day",
                "Sun Nov  6 08:49:37 1994",
                DateForm::Asctime,
                784_111_777,
            ),
            (
                "asctime with a two-digit day",
                "Sun Nov 06 08:49:37 1994",
                DateForm::Asctime,
                784_111_777,
            ),
            (
                "source wall clock",
                "Mon, 01 Jan 2024 12:00:00 GMT",
                DateForm::ImfFixdate,
                1_704_110_400,
            ),
            (
                "source first retry date",
                "Mon, 01 Jan 2024 12:00:06 GMT",
                DateForm::ImfFixdate,
                1_704_110_406,
            ),
            (
                "source second retry date",
                "Mon, 01 Jan 2024 12:00:12 GMT",
                DateForm::ImfFixdate,
                1_704_110_412,
            ),
            (
                "feb 29 in a leap year",
                "Thu, 29 Feb 2024 00:00:00 GMT",
                DateForm::ImfFixdate,
                1_709_164_800,
            ),
            (
                "feb 29 in a 400-year leap year",
                "Tue, 29 Feb 2000 00:00:00 GMT",
                DateForm::ImfFixdate,
                951_782_400,
            ),
            (
                "leap second is next day's midnight",
                "Sun, 31 Dec 2023 23:59:60 GMT",
                DateForm::ImfFixdate,
                1_704_067_200,
            ),
            (
                "leap second in rfc850",
                "Sunday, 31-Dec-23 23:59:60 GMT",
                DateForm::Rfc850,
                1_704_067_200,
            ),
            (
                "leap second in asctime",
                "Sun Dec 31 23:59:60 2023",
                DateForm::Asctime,
                1_704_067_200,
            ),
            (
                "last second of a day",
                "Sun, 31 Dec 2023 23:59:59 GMT",
                DateForm::ImfFixdate,
                1_704_067_199,
            ),
            (
                "unix epoch",
                "Thu, 01 Jan 1970 00:00:00 GMT",
                DateForm::ImfFixdate,
                0,
            ),
            (
                "before the epoch",
                "Wed, 31 Dec 1969 23:59:59 GMT",
                DateForm::ImfFixdate,
                -1,
            ),
        ];
        for &(name, text, form, want) in cases {
            let date = HttpDate::parse(text).unwrap_or_else(|| panic!("{name}: did not parse"));
            assert_eq!(date.form(), form, "{name}");
            assert_eq!(secs(&date, receipt_2024()), Some(want), "{name}");
        }
    }

    #[test]
    fn invalid_text_is_rejected() {
        let cases: &[(&str, &str)] = &[
            ("empty", ""),
            ("garbage", "tomorrow"),
            ("delay-seconds is not a date", "3"),
            ("lowercase day name", "sun, 06 Nov 1994 08:49:37 GMT"),
            ("uppercase day name", "SUN, 06 Nov 1994 08:49:37 GMT"),
            ("lowercase month", "Sun, 06 nov 1994 08:49:37 GMT"),
            ("lowercase long day name", "sunday, 06-Nov-94 08:49:37 GMT"),
            ("lowercase asctime month", "Sun nov  6 08:49:37 1994"),
            ("UTC instead of GMT", "Sun, 06 Nov 1994 08:49:37 UTC"),
            ("lowercase gmt", "Sun, 06 Nov 1994 08:49:37 gmt"),
            ("numeric zone", "Sun, 06 Nov 1994 08:49:37 +0000"),
            ("zone missing", "Sun, 06 Nov 1994 08:49:37"),
            ("rfc850 with UTC", "Sunday, 06-Nov-94 08:49:37 UTC"),
            ("asctime with a zone", "Sun Nov  6 08:49:37 1994 GMT"),
            ("double space after comma", "Sun,  06 Nov 1994 08:49:37 GMT"),
            (
                "double space before month",
                "Sun, 06  Nov 1994 08:49:37 GMT",
            ),
            ("double space before time", "Sun, 06 Nov 1994  08:49:37 GMT"),
            ("double space before zone", "Sun, 06 Nov 1994 08:49:37  GMT"),
            ("no space after comma", "Sun,06 Nov 1994 08:49:37 GMT"),
            ("tab instead of space", "Sun,\t06 Nov 1994 08:49:37 GMT"),
            (
                "leading space (caller trims)",
                " Sun, 06 Nov 1994 08:49:37 GMT",
            ),
            (
                "trailing space (caller trims)",
                "Sun, 06 Nov 1994 08:49:37 GMT ",
            ),
            ("trailing newline", "Sun, 06 Nov 1994 08:49:37 GMT\n"),
            (
                "missing leading zero in day",
                "Sun, 6 Nov 1994 08:49:37 GMT",
            ),
            (
                "missing leading zero in hour",
                "Sun, 06 Nov 1994 8:49:37 GMT",
            ),
            ("three-digit day", "Sun, 006 Nov 1994 08:49:37 GMT"),
            (
                "two-digit year in imf-fixdate",
                "Sun, 06 Nov 94 08:49:37 GMT",
            ),
            ("five-digit year", "Sun, 06 Nov 01994 08:49:37 GMT"),
            ("long month name", "Sun, 06 November 1994 08:49:37 GMT"),
            (
                "long day name in imf-fixdate",
                "Sunday, 06 Nov 1994 08:49:37 GMT",
            ),
            ("short day name in rfc850", "Sun, 06-Nov-94 08:49:37 GMT"),
            (
                "four-digit year in rfc850",
                "Sunday, 06-Nov-1994 08:49:37 GMT",
            ),
            ("rfc850 with spaces", "Sunday, 06 Nov 94 08:49:37 GMT"),
            ("asctime day without padding", "Sun Nov 6 08:49:37 1994"),
            (
                "asctime day padded on the right",
                "Sun Nov 6  08:49:37 1994",
            ),
            ("asctime with comma", "Sun, Nov  6 08:49:37 1994"),
            ("asctime three spaces", "Sun Nov   6 08:49:37 1994"),
            ("feb 29 in a common year", "Wed, 29 Feb 2023 00:00:00 GMT"),
            ("feb 29 in 1900", "Thu, 29 Feb 1900 00:00:00 GMT"),
            ("feb 30", "Fri, 30 Feb 2024 00:00:00 GMT"),
            ("apr 31", "Wed, 31 Apr 2024 00:00:00 GMT"),
            ("day 0", "Sun, 00 Jan 2024 00:00:00 GMT"),
            ("day 32", "Thu, 32 Jan 2024 00:00:00 GMT"),
            ("asctime day 0", "Sun Jan  0 00:00:00 2024"),
            ("rfc850 feb 30", "Friday, 30-Feb-24 00:00:00 GMT"),
            ("rfc850 day 0", "Sunday, 00-Jan-24 00:00:00 GMT"),
            ("hour 24", "Mon, 01 Jan 2024 24:00:00 GMT"),
            ("minute 60", "Mon, 01 Jan 2024 12:60:00 GMT"),
            ("second 61", "Mon, 01 Jan 2024 23:59:61 GMT"),
            ("second 60 at noon", "Mon, 01 Jan 2024 12:00:60 GMT"),
            ("second 60 at 23:58", "Mon, 01 Jan 2024 23:58:60 GMT"),
            ("second 60 at 22:59", "Mon, 01 Jan 2024 22:59:60 GMT"),
            ("rfc850 second 60 at noon", "Monday, 01-Jan-24 12:00:60 GMT"),
            ("rfc850 hour 24", "Monday, 01-Jan-24 24:00:00 GMT"),
            ("asctime second 60 at noon", "Mon Jan  1 12:00:60 2024"),
            (
                "day name does not match the date",
                "Tue, 01 Jan 2024 12:00:00 GMT",
            ),
            (
                "asctime day name does not match",
                "Mon Nov  6 08:49:37 1994",
            ),
            ("dashes for colons", "Sun, 06 Nov 1994 08-49-37 GMT"),
            ("sign in a number", "Sun, +6 Nov 1994 08:49:37 GMT"),
            ("non-ascii day name", "Sün, 06 Nov 1994 08:49:37 GMT"),
            ("full-width digits", "Sun, ０６ Nov 1994 08:49:37 GMT"),
            (
                "non-ascii after zone",
                "Sun, 06 Nov 1994 08:49:37 GMT\u{00e9}",
            ),
            (
                "emoji in place of a space",
                "Sun,😀06 Nov 1994 08:49:37 GMT",
            ),
            ("nul byte", "Sun, 06 Nov 1994 08:49:37 GMT\0"),
        ];
        for &(name, text) in cases {
            assert_eq!(HttpDate::parse(text), None, "{name}");
        }
    }

    /// Our choice (the format leaves it open): a day name that does not match the date makes the
    /// whole value invalid, because a sender that got the weekday wrong computed the date wrong.
    #[test]
    fn mismatched_day_name_is_invalid_by_choice() {
        let cases: &[(&str, &str)] = &[
            ("imf-fixdate", "Tue, 01 Jan 2024 12:00:00 GMT"),
            ("asctime", "Tue Jan  1 12:00:00 2024"),
            (
                "rfc850 (checked when resolved)",
                "Tuesday, 01-Jan-24 12:00:00 GMT",
            ),
        ];
        for &(name, text) in cases {
            let resolved = HttpDate::parse(text).and_then(|d| d.resolve(receipt_2024()));
            assert_eq!(resolved, None, "{name}");
            let corrected = text
                .replacen("Tuesday", "Monday", 1)
                .replacen("Tue", "Mon", 1);
            let resolved = HttpDate::parse(&corrected).and_then(|d| secs(&d, receipt_2024()));
            assert_eq!(
                resolved,
                Some(1_704_110_400),
                "{name}: with the right day name"
            );
        }
    }

    #[test]
    fn every_truncation_of_a_valid_date_is_rejected() {
        for text in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            for end in 0..text.len() {
                let prefix = text.get(..end).unwrap_or("");
                assert_eq!(HttpDate::parse(prefix), None, "prefix {prefix:?}");
                let suffix = text.get(end + 1..).unwrap_or("");
                assert_eq!(HttpDate::parse(suffix), None, "suffix {suffix:?}");
            }
        }
    }

    #[test]
    fn imf_fixdate_only_accepts_imf_fixdate() {
        let cases: &[(&str, &str, bool)] = &[
            ("imf-fixdate", "Mon, 01 Jan 2024 12:00:00 GMT", true),
            ("rfc850", "Monday, 01-Jan-24 12:00:00 GMT", false),
            ("asctime", "Mon Jan  1 12:00:00 2024", false),
            (
                "impossible imf-fixdate",
                "Mon, 30 Feb 2024 12:00:00 GMT",
                false,
            ),
        ];
        for &(name, text, ok) in cases {
            let got = HttpDate::parse_imf_fixdate(text);
            assert_eq!(got.is_some(), ok, "{name}");
            if let Some(date) = got {
                assert_eq!(Some(date), HttpDate::parse(text), "{name}");
            }
        }
    }

    #[test]
    fn rfc850_two_digit_year_resolves_within_50_years_of_receipt() {
        // (name, two-digit year, receipt year, resolved year)
        let cases: &[(&str, u16, i64, i64)] = &[
            ("exactly 50 years ahead is kept", 74, 2024, 2074),
            ("51 years ahead is the past century", 75, 2024, 1975),
            ("same year", 24, 2024, 2024),
            ("99 from 2024", 99, 2024, 1999),
            ("00 from 2024", 0, 2024, 2000),
            ("one year back", 23, 2024, 2023),
            (
                "receipt 2070: 50 years ahead crosses the century",
                20,
                2070,
                2120,
            ),
            ("receipt 2070: 51 years ahead is the past", 21, 2070, 2021),
            ("receipt 2099: 00 is next year", 0, 2099, 2100),
            ("receipt 2050: 99 is 49 years back", 99, 2050, 2099),
            ("receipt 2049: 99 is exactly 50 years ahead", 99, 2049, 2099),
            ("receipt 2048: 99 is 51 years ahead", 99, 2048, 1999),
            ("receipt at i64 end", 62, 2262, 2262),
        ];
        for &(name, yy, receipt_year, want) in cases {
            assert_eq!(resolve_two_digit_year(yy, receipt_year), want, "{name}");
        }
    }

    #[test]
    fn rfc850_dates_resolve_against_the_receipt() {
        // (name, text, receipt year, resolved seconds)
        let cases: &[(&str, &str, i64, Option<i64>)] = &[
            (
                "74 from 2024 is 2074 (exactly 50 years ahead: kept)",
                "Monday, 01-Jan-74 00:00:00 GMT",
                2024,
                Some(days_from_civil(2074, 1, 1) * 86_400),
            ),
            (
                "75 from 2024 is 1975",
                "Wednesday, 01-Jan-75 00:00:00 GMT",
                2024,
                Some(days_from_civil(1975, 1, 1) * 86_400),
            ),
            (
                "24 from 2024 is 2024",
                "Monday, 01-Jan-24 12:00:06 GMT",
                2024,
                Some(1_704_110_406),
            ),
            (
                "99 from 2024 is 1999",
                "Friday, 31-Dec-99 00:00:00 GMT",
                2024,
                Some(days_from_civil(1999, 12, 31) * 86_400),
            ),
            (
                "20 from 2070 is 2120",
                "Monday, 01-Jan-20 00:00:00 GMT",
                2070,
                Some(days_from_civil(2120, 1, 1) * 86_400),
            ),
            (
                "21 from 2070 is 2021",
                "Friday, 01-Jan-21 00:00:00 GMT",
                2070,
                Some(days_from_civil(2021, 1, 1) * 86_400),
            ),
            (
                "feb 29 that resolves to a leap year",
                "Thursday, 29-Feb-24 00:00:00 GMT",
                2024,
                Some(1_709_164_800),
            ),
            (
                "feb 29 that resolves to a common year",
                "Wednesday, 29-Feb-23 00:00:00 GMT",
                2024,
                None,
            ),
            (
                "day name does not match the resolved date",
                "Monday, 06-Nov-94 08:49:37 GMT",
                2024,
                None,
            ),
            (
                "day name matched 1994, but from 2080 the year is 2094",
                "Sunday, 06-Nov-94 08:49:37 GMT",
                2080,
                None,
            ),
        ];
        for &(name, text, receipt_year, want) in cases {
            let resolved = HttpDate::parse(text).and_then(|date| {
                assert_eq!(date.form(), DateForm::Rfc850, "{name}");
                secs(&date, receipt_in(receipt_year))
            });
            assert_eq!(resolved, want, "{name}");
        }
    }

    /// A two-digit year leaves the century to the receipt, and with it February 29 and the
    /// weekday. A date that no century makes possible is invalid as soon as it is read, so that
    /// without a clock it is not taken for a date that only lacks one; a date that some century
    /// makes possible is read, and checked again in the century the receipt gives it.
    #[test]
    fn an_rfc850_date_that_no_century_makes_possible_is_invalid_when_read() {
        let impossible = [
            // No year ending in 23 is a leap year.
            "Wednesday, 29-Feb-23 00:00:00 GMT",
            "Thursday, 29-Feb-23 00:00:00 GMT",
            // 6 November of a year ending in 94 is a Sunday, Saturday, Thursday or Tuesday.
            "Monday, 06-Nov-94 08:49:37 GMT",
            "Wednesday, 06-Nov-94 08:49:37 GMT",
            "Friday, 06-Nov-94 08:49:37 GMT",
        ];
        for text in impossible {
            assert_eq!(HttpDate::parse(text), None, "{text}");
        }
        // 29 February 2000 was a Tuesday; 2100 is not a leap year.
        let date = HttpDate::parse("Tuesday, 29-Feb-00 00:00:00 GMT").expect("possible in 2000");
        assert_eq!(secs(&date, receipt_in(2024)), Some(951_782_400));
        assert_eq!(secs(&date, receipt_in(2060)), None, "resolved to 2100");
        for (weekday, year) in [("Saturday", 2094), ("Thursday", 2194), ("Tuesday", 2294)] {
            let text = format!("{weekday}, 06-Nov-94 08:49:37 GMT");
            let date = HttpDate::parse(&text).unwrap_or_else(|| panic!("{text}: possible"));
            let days = days_from_civil(year, 11, 6);
            let want = days * 86_400 + 8 * 3600 + 49 * 60 + 37;
            assert_eq!(secs(&date, receipt_in(year - 10)), Some(want), "{text}");
            assert_eq!(
                secs(&date, receipt_in(2024)),
                None,
                "{text} from 2024 is 1994"
            );
        }
    }

    #[test]
    fn every_year_an_http_date_can_write_is_exact() {
        let cases: &[(&str, &str, i64)] = &[
            (
                "year 9999",
                "Fri, 31 Dec 9999 23:59:59 GMT",
                253_402_300_799,
            ),
            ("year 2263", "Thu, 01 Jan 2263 00:00:00 GMT", 9_246_182_400),
            (
                "year 0001",
                "Mon, 01 Jan 0001 00:00:00 GMT",
                -62_135_596_800,
            ),
            (
                "year 0000 (leap)",
                "Tue, 29 Feb 0000 00:00:00 GMT",
                -62_162_121_600,
            ),
            (
                "asctime year 9999",
                "Fri Dec 31 23:59:59 9999",
                253_402_300_799,
            ),
        ];
        for &(name, text, want) in cases {
            let date = HttpDate::parse(text).unwrap_or_else(|| panic!("{name}: did not parse"));
            assert_eq!(
                date.resolve(receipt_2024()),
                Some(UtcTime::from_unix_secs(want)),
                "{name}"
            );
        }
    }

    fn push_number(out: &mut String, value: u32, width: usize, pad: char) {
        let mut digits = Vec::new();
        let mut rest = value;
        loop {
            digits.push(char::from_digit(rest % 10, 10).unwrap_or('?'));
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        for _ in digits.len()..width {
            out.push(pad);
        }
        out.extend(digits.iter().rev());
    }

    fn name(table: &[&'static [u8]], index: usize) -> &'static str {
        core::str::from_utf8(table[index]).unwrap()
    }

    /// The three forms of one date and time, with the day name `weekday` (0 = Sunday).
    fn render(year: u32, month: u32, day: u32, weekday: usize, hms: u32) -> [String; 3] {
        let month_name = name(&MONTH_NAMES, month as usize - 1);
        let mut time = String::new();
        push_number(&mut time, hms / 3600, 2, '0');
        time.push(':');
        push_number(&mut time, hms / 60 % 60, 2, '0');
        time.push(':');
        push_number(&mut time, hms % 60, 2, '0');

        let mut imf = String::from(name(&SHORT_DAY_NAMES, weekday));
        imf.push_str(", ");
        push_number(&mut imf, day, 2, '0');
        imf.push(' ');
        imf.push_str(month_name);
        imf.push(' ');
        push_number(&mut imf, year, 4, '0');
        imf.push(' ');
        imf.push_str(&time);
        imf.push_str(" GMT");

        let mut rfc850 = String::from(name(&LONG_DAY_NAMES, weekday));
        rfc850.push_str(", ");
        push_number(&mut rfc850, day, 2, '0');
        rfc850.push('-');
        rfc850.push_str(month_name);
        rfc850.push('-');
        push_number(&mut rfc850, year % 100, 2, '0');
        rfc850.push(' ');
        rfc850.push_str(&time);
        rfc850.push_str(" GMT");

        let mut asctime = String::from(name(&SHORT_DAY_NAMES, weekday));
        asctime.push(' ');
        asctime.push_str(month_name);
        asctime.push(' ');
        push_number(&mut asctime, day, 2, ' ');
        asctime.push(' ');
        asctime.push_str(&time);
        asctime.push(' ');
        push_number(&mut asctime, year, 4, '0');

        [imf, rfc850, asctime]
    }

    #[test]
    fn every_day_1990_to_2060_parses_in_all_forms_and_only_with_its_own_day_name() {
        // Receipt 2025 makes every two-digit year in 1976..=2075 resolve to itself.
        let receipt = receipt_in(2025);
        for year in 1990..=2060u32 {
            for month in 1..=12u32 {
                for day in 1..=days_in_month(i64::from(year), month) {
                    let days = days_from_civil(i64::from(year), month, day);
                    let weekday = usize::from(weekday_of(days));
                    let hms = (day * 3_607 + month * 61) % 86_400;
                    let want = days * 86_400 + i64::from(hms);
                    for wrong in 0..7 {
                        for text in render(year, month, day, wrong, hms) {
                            let got = HttpDate::parse(&text).and_then(|d| secs(&d, receipt));
                            if wrong == weekday {
                                assert_eq!(got, Some(want), "{text}");
                            } else {
                                assert_eq!(got, None, "{text}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn day_names_match_known_weekdays() {
        let cases: &[(&str, i64, u32, u32, u8)] = &[
            ("epoch was a thursday", 1970, 1, 1, 4),
            ("rfc example was a sunday", 1994, 11, 6, 0),
            ("source date was a monday", 2024, 1, 1, 1),
            ("day before epoch was a wednesday", 1969, 12, 31, 3),
            ("year 1 started on a monday", 1, 1, 1, 1),
        ];
        for &(name, y, m, d, want) in cases {
            assert_eq!(weekday_of(days_from_civil(y, m, d)), want, "{name}");
        }
    }

    proptest::proptest! {
        #[test]
        fn parse_never_panics(text in ".*") {
            if let Some(date) = HttpDate::parse(&text) {
                let _ = date.resolve(receipt_2024());
            }
        }

        #[test]
        fn parse_never_panics_near_valid_dates(
            base in proptest::sample::select(vec![
                "Sun, 06 Nov 1994 08:49:37 GMT",
                "Sunday, 06-Nov-94 08:49:37 GMT",
                "Sun Nov  6 08:49:37 1994",
            ]),
            at in 0usize..40,
            insert in proptest::prelude::any::<char>(),
            receipt in proptest::prelude::any::<i64>(),
        ) {
            let mut text = String::from(base);
            let at = (0..=at.min(text.len())).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
            text.insert(at, insert);
            if let Some(date) = HttpDate::parse(&text) {
                let _ = date.resolve(UtcTime::from_unix_nanos(receipt));
            }
        }
    }
}
