//! Calendar arithmetic, the names the HTTP-date forms use and RFC 850's two-digit year, for the
//! checks that read or write dates independently of the crate's parser (RFC 9110, section
//! 5.6.7): the tests, and the `retry_after` fuzz target, which includes this file by path.

// Each test crate that includes this module uses a part of it.
#![allow(dead_code)]

pub const SHORT_DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
pub const LONG_DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
pub const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// The day counted from 1970-01-01 of (year, month 1-12, day 1-31), proleptic Gregorian.
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// (year, month 1-12, day 1-31) of a day counted from 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// RFC 9110: the latest year ending in `yy` that is at most 50 years after `receipt_year`,
/// found by stepping a century at a time rather than by the crate's modular arithmetic.
pub fn fifty_year_rule(yy: i64, receipt_year: i64) -> i64 {
    let mut year = receipt_year - receipt_year.rem_euclid(100) + yy;
    while year > receipt_year + 50 {
        year -= 100;
    }
    while year + 100 <= receipt_year + 50 {
        year += 100;
    }
    year
}
