//! Moving a scripted `Retry-After` date onto the server's real clock.
//!
//! A scenario writes its dates on its own wall clock (`wall_clock_at_start` plus elapsed time).
//! The model reads such a date as `delay = date - (wall_clock_at_start + receipt)`. Live, the
//! client measures the same delay against the response's `Date` header, so the server sends
//! `Date + offset` with `offset = date - (wall_clock_at_start + scripted receipt)`: the client's
//! date minus its `Date` header then equals the scripted offset, in whole seconds (rounded up
//! when the scripted offset has a fraction, so a live wait is never shorter than the model's).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use retry_budget_model::http_date::DateForm;
use retry_budget_model::utc::UtcTime;
use retry_budget_model::RetryAfter;

/// Nanoseconds in a second.
const NANOS_PER_SEC: i128 = 1_000_000_000;
/// 9999-12-31 23:59:59 UTC: the last second an HTTP-date can write.
const LAST_WRITABLE_SECOND: i64 = 253_402_300_799;

/// The value to send for a scripted `Retry-After` of `raw`, received (per the model) at elapsed
/// `receipt` in a scenario whose clock starts at `wall_clock_at_start`, in a response whose
/// `Date` header names second `date_secs` (Unix time). `None` means "send `raw` unchanged":
/// the value is not a valid HTTP-date (seconds, invalid text), or the scenario has no clock.
/// The date keeps the form it was written in (IMF-fixdate, RFC 850 or asctime).
pub fn shift_retry_after(
    raw: &str,
    wall_clock_at_start: Option<UtcTime>,
    receipt: Duration,
    date_secs: i64,
) -> Option<String> {
    let wall = wall_clock_at_start?;
    let RetryAfter::Date { date, .. } = RetryAfter::parse(Some(raw)) else {
        return None;
    };
    let receipt_utc = wall.saturating_add(receipt);
    let target = date.resolve(receipt_utc)?;
    if target.is_saturated() || receipt_utc.is_saturated() {
        return None;
    }
    let offset = target.unix_nanos() - receipt_utc.unix_nanos();
    // Round up to whole seconds: div_euclid rounds toward minus infinity, so negate twice.
    let offset_secs = -((-offset).div_euclid(NANOS_PER_SEC));
    let secs = i128::from(date_secs) + offset_secs;
    let secs = i64::try_from(secs).ok()?;
    format_http_date(secs, date.form())
}

/// Second `secs` of Unix time as an HTTP-date in `form`; `None` outside years 1970-9999.
pub fn format_http_date(secs: i64, form: DateForm) -> Option<String> {
    if !(0..=LAST_WRITABLE_SECOND).contains(&secs) {
        return None;
    }
    let time = UNIX_EPOCH.checked_add(Duration::from_secs(u64::try_from(secs).ok()?))?;
    let imf = httpdate::fmt_http_date(time);
    match form {
        DateForm::ImfFixdate => Some(imf),
        DateForm::Rfc850 => rfc850_from_imf(&imf),
        DateForm::Asctime => asctime_from_imf(&imf),
    }
}

/// Whole Unix seconds of `time` (what an HTTP-date of it names).
pub fn unix_secs(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The fields of an IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`: day name, day, month, year,
/// time of day.
fn imf_fields(imf: &str) -> Option<(&str, &str, &str, &str, &str)> {
    let mut words = imf.split(' ');
    let day_name = words.next()?.strip_suffix(',')?;
    let day = words.next()?;
    let month = words.next()?;
    let year = words.next()?;
    let time = words.next()?;
    (words.next() == Some("GMT") && words.next().is_none())
        .then_some((day_name, day, month, year, time))
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`.
fn rfc850_from_imf(imf: &str) -> Option<String> {
    let (day_name, day, month, year, time) = imf_fields(imf)?;
    let long = match day_name {
        "Sun" => "Sunday",
        "Mon" => "Monday",
        "Tue" => "Tuesday",
        "Wed" => "Wednesday",
        "Thu" => "Thursday",
        "Fri" => "Friday",
        "Sat" => "Saturday",
        _ => return None,
    };
    let two_digit_year = year.get(2..4)?;
    Some(format!("{long}, {day}-{month}-{two_digit_year} {time} GMT"))
}

/// `Sun Nov  6 08:49:37 1994`.
fn asctime_from_imf(imf: &str) -> Option<String> {
    let (day_name, day, month, year, time) = imf_fields(imf)?;
    let day: u8 = day.parse().ok()?;
    Some(format!("{day_name} {month} {day:>2} {time} {year}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(imf: &str) -> UtcTime {
        let secs = httpdate::parse_http_date(imf)
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_secs())
            .expect("a valid date");
        UtcTime::from_unix_secs(i64::try_from(secs).expect("small"))
    }

    const WALL: &str = "Mon, 01 Jan 2024 12:00:00 GMT";
    /// Sat, 01 Mar 2025 10:00:00 GMT.
    const NOW: i64 = 1_740_823_200;

    #[test]
    fn keeps_the_offset_from_the_scripted_receipt() {
        // Schedule B, attempt 1: received at 2, date 12:00:06, so 4 s after receipt.
        let sent = shift_retry_after(
            "Mon, 01 Jan 2024 12:00:06 GMT",
            Some(utc(WALL)),
            Duration::from_secs(2),
            NOW,
        );
        assert_eq!(sent.as_deref(), Some("Sat, 01 Mar 2025 10:00:04 GMT"));
    }

    #[test]
    fn rounds_a_fractional_offset_up() {
        // Received at 0.1, date 3 s after the start: 2.9 s after receipt becomes 3.
        let sent = shift_retry_after(
            "Mon, 01 Jan 2024 12:00:03 GMT",
            Some(utc(WALL)),
            Duration::from_millis(100),
            NOW,
        );
        assert_eq!(sent.as_deref(), Some("Sat, 01 Mar 2025 10:00:03 GMT"));
        // A past date keeps its (negative) offset, rounded toward the future as well.
        let sent = shift_retry_after(
            "Mon, 01 Jan 2024 11:59:58 GMT",
            Some(utc(WALL)),
            Duration::from_millis(500),
            NOW,
        );
        assert_eq!(sent.as_deref(), Some("Sat, 01 Mar 2025 09:59:58 GMT"));
    }

    #[test]
    fn keeps_the_form_it_was_written_in() {
        let wall = Some(utc(WALL));
        let two = Duration::from_secs(2);
        assert_eq!(
            shift_retry_after("Monday, 01-Jan-24 12:00:06 GMT", wall, two, NOW).as_deref(),
            Some("Saturday, 01-Mar-25 10:00:04 GMT")
        );
        assert_eq!(
            shift_retry_after("Mon Jan  1 12:00:06 2024", wall, two, NOW).as_deref(),
            Some("Sat Mar  1 10:00:04 2025")
        );
        assert_eq!(
            shift_retry_after("  Mon, 01 Jan 2024 12:00:06 GMT\t", wall, two, NOW).as_deref(),
            Some("Sat, 01 Mar 2025 10:00:04 GMT")
        );
    }

    #[test]
    fn leaves_everything_else_unchanged() {
        let wall = Some(utc(WALL));
        let two = Duration::from_secs(2);
        for raw in [
            "3",
            "1.5",
            "tomorrow",
            "",
            "Mon, 01 Jan 2024 12:00:06 UTC",
            // The day name does not match the date: invalid to the model, so sent as written.
            "Tue, 01 Jan 2024 12:00:06 GMT",
        ] {
            assert_eq!(shift_retry_after(raw, wall, two, NOW), None, "{raw:?}");
        }
        // No clock evidence in the scenario: the date is sent as scripted.
        assert_eq!(
            shift_retry_after("Mon, 01 Jan 2024 12:00:06 GMT", None, two, NOW),
            None
        );
    }

    #[test]
    fn formats_only_writable_years() {
        assert_eq!(format_http_date(-1, DateForm::ImfFixdate), None);
        assert_eq!(
            format_http_date(0, DateForm::ImfFixdate).as_deref(),
            Some("Thu, 01 Jan 1970 00:00:00 GMT")
        );
        assert!(format_http_date(LAST_WRITABLE_SECOND, DateForm::ImfFixdate).is_some());
        assert_eq!(
            format_http_date(LAST_WRITABLE_SECOND + 1, DateForm::ImfFixdate),
            None
        );
    }
}
