//! UTC instants and the proleptic Gregorian calendar arithmetic that HTTP-dates need.
//!
//! Everything here is total: no input panics, and values that do not fit saturate instead of
//! wrapping, because a wrapped instant would turn "far in the future" into "long ago".

use core::time::Duration;

const NANOS_PER_SEC: i64 = 1_000_000_000;
/// Days from 0000-03-01 (the start of the algorithm's era 0) to 1970-01-01.
const DAYS_0000_03_01_TO_EPOCH: i64 = 719_468;
/// Days in one 400-year Gregorian cycle.
const DAYS_PER_ERA: i64 = 146_097;

/// A UTC instant: whole seconds since the Unix epoch and the nanoseconds after them. i64
/// seconds reach far beyond any year an HTTP-date can write (0000-9999), so every wall clock
/// and every date is held exactly; only arithmetic at the ends of i64 saturates, and a
/// saturated instant is either long past or later than any budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UtcTime {
    secs: i64,
    /// 0..1_000_000_000.
    nanos: u32,
}

impl UtcTime {
    /// 1970-01-01T00:00:00Z.
    pub const UNIX_EPOCH: UtcTime = UtcTime { secs: 0, nanos: 0 };

    /// The latest instant: where arithmetic saturates.
    const MAX: UtcTime = UtcTime {
        secs: i64::MAX,
        nanos: 999_999_999,
    };

    /// The instant `nanos` nanoseconds after the Unix epoch (before it when negative).
    pub const fn from_unix_nanos(nanos: i64) -> Self {
        UtcTime {
            secs: nanos.div_euclid(NANOS_PER_SEC),
            // rem_euclid is 0..1e9, which fits.
            nanos: nanos.rem_euclid(NANOS_PER_SEC) as u32,
        }
    }

    /// Nanoseconds since the Unix epoch (negative before it), exactly.
    pub const fn unix_nanos(self) -> i128 {
        self.secs as i128 * NANOS_PER_SEC as i128 + self.nanos as i128
    }

    /// Whole seconds since the Unix epoch, rounded down.
    pub const fn unix_secs(self) -> i64 {
        self.secs
    }

    /// Whether this instant sits at an end of the range, where arithmetic saturated. A
    /// saturated *receipt* time would skew every delay measured from it, so receipt clocks
    /// reject it; a saturated *target* date keeps its meaning (long past, or beyond any budget).
    pub const fn is_saturated(self) -> bool {
        self.secs == i64::MIN || self.secs == i64::MAX
    }

    /// The instant `secs` whole seconds after the Unix epoch.
    pub const fn from_unix_secs(secs: i64) -> Self {
        UtcTime { secs, nanos: 0 }
    }

    /// The instant `ms` milliseconds after the Unix epoch, as JavaScript's `Date.now()` reports
    /// it. `None` for NaN or an infinity (no clock evidence); finite values out of range saturate.
    ///
    /// Whole seconds and the fraction are converted separately, so a present-day timestamp
    /// keeps sub-microsecond precision instead of losing it to the 53-bit f64 mantissa.
    pub fn from_unix_millis(ms: f64) -> Option<Self> {
        if !ms.is_finite() {
            return None;
        }
        let secs = (ms / 1000.0).floor();
        // In [0, 1000) ms (a hair more from rounding: clamped below 1 s).
        let rest_ms = (ms - secs * 1000.0).max(0.0);
        // Float-to-int `as` saturates: no wrap, no panic.
        let nanos = ((rest_ms * 1_000_000.0) as u32).min(999_999_999);
        Some(UtcTime {
            secs: secs as i64,
            nanos,
        })
    }

    /// This instant moved `d` later, saturating at the end of the range.
    pub fn saturating_add(self, d: Duration) -> Self {
        let mut nanos = self.nanos + d.subsec_nanos();
        let mut carry = 0;
        if nanos >= 1_000_000_000 {
            nanos -= 1_000_000_000;
            carry = 1;
        }
        let secs = i64::try_from(d.as_secs())
            .ok()
            .and_then(|s| self.secs.checked_add(s))
            .and_then(|s| s.checked_add(carry));
        match secs {
            Some(secs) => UtcTime { secs, nanos },
            None => UtcTime::MAX,
        }
    }

    /// How long after `earlier` this instant is; zero when it is not after it.
    pub fn saturating_duration_since(self, earlier: UtcTime) -> Duration {
        if self <= earlier {
            return Duration::ZERO;
        }
        // `abs_diff` of two i64 always fits in u64; self > earlier, so a borrow leaves it >= 0.
        let (mut secs, mut nanos) = (self.secs.abs_diff(earlier.secs), self.nanos);
        if nanos < earlier.nanos {
            secs -= 1;
            nanos += 1_000_000_000;
        }
        Duration::new(secs, nanos - earlier.nanos)
    }

    /// The proleptic Gregorian year (UTC) this instant falls in.
    pub fn year(self) -> i64 {
        self.civil_date().0
    }

    /// The proleptic Gregorian date (UTC) this instant falls on: (year, month 1-12, day 1-31).
    pub fn civil_date(self) -> (i64, u32, u32) {
        civil_from_days(self.secs.div_euclid(86_400))
    }
}

/// Days since 1970-01-01 for a proleptic Gregorian civil date (month 1-12, day 1-31); pure
/// arithmetic, no validation. Out-of-range months wrap within the year and day 0 means the last
/// day of the previous month; years beyond about ±2.5e16 saturate. Never panics.
pub(crate) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    // Count from March so that the leap day is the last day of the (shifted) year.
    let month_from_march = i64::from((month % 12 + 9) % 12); // March = 0 .. February = 11
    let year = if month_from_march >= 10 {
        year.saturating_sub(1)
    } else {
        year
    };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400); // 0..=399
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era.saturating_mul(DAYS_PER_ERA)
        .saturating_add(day_of_era)
        .saturating_sub(DAYS_0000_03_01_TO_EPOCH)
}

/// The proleptic Gregorian (year, month 1-12, day 1-31) of a day counted from 1970-01-01; the
/// inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let days = days.saturating_add(DAYS_0000_03_01_TO_EPOCH);
    let era = days.div_euclid(DAYS_PER_ERA);
    let day_of_era = days.rem_euclid(DAYS_PER_ERA); // 0..=146096
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153; // 0..=11
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1; // 1..=31
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era.saturating_mul(400).saturating_add(year_of_era);
    let year = if month <= 2 {
        year.saturating_add(1)
    } else {
        year
    };
    // Both are small and non-negative by construction; the fallbacks are unreachable.
    let month = u32::try_from(month).unwrap_or(1);
    let day = u32::try_from(day).unwrap_or(1);
    (year, month, day)
}

/// Whether `year` has a February 29 in the proleptic Gregorian calendar.
pub(crate) fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// The number of days in `month` (1-12) of `year`; 0 for any other month, so no day is valid in it.
pub(crate) fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_from_civil_known_dates() {
        let cases: &[(&str, i64, u32, u32, i64)] = &[
            ("unix epoch", 1970, 1, 1, 0),
            ("day before epoch", 1969, 12, 31, -1),
            ("rfc 9110 example", 1994, 11, 6, 9075),
            ("source document start", 2024, 1, 1, 19723),
            ("leap day 2024", 2024, 2, 29, 19782),
            ("leap day 2000 (400 rule)", 2000, 2, 29, 11016),
            ("march after non-leap 1900", 1900, 3, 1, -25508),
            ("i64 nanos upper end", 2262, 4, 11, 106_751),
            ("year 1", 1, 1, 1, -719_162),
            ("year 0 (leap)", 0, 2, 29, -719_469),
            ("year 9999 end", 9999, 12, 31, 2_932_896),
        ];
        for &(name, y, m, d, want) in cases {
            assert_eq!(days_from_civil(y, m, d), want, "{name}");
            assert_eq!(civil_from_days(want), (y, m, d), "{name} (inverse)");
        }
    }

    #[test]
    fn days_from_civil_matches_day_by_day_count() {
        // Walk every day from 1600-01-01 to 2500-12-31 with the month table and compare.
        let mut expected = days_from_civil(1600, 1, 1);
        for year in 1600..=2500 {
            for month in 1..=12 {
                for day in 1..=days_in_month(year, month) {
                    assert_eq!(
                        days_from_civil(year, month, day),
                        expected,
                        "{year}-{month}-{day}"
                    );
                    assert_eq!(civil_from_days(expected), (year, month, day));
                    expected += 1;
                }
            }
        }
    }

    #[test]
    fn days_from_civil_never_panics_on_extremes() {
        for &year in &[i64::MIN, i64::MIN + 1, -1, 0, i64::MAX - 1, i64::MAX] {
            for &month in &[0, 1, 2, 3, 12, 13, u32::MAX] {
                for &day in &[0, 1, 31, u32::MAX] {
                    let _ = days_from_civil(year, month, day);
                }
            }
        }
        for &days in &[i64::MIN, -1, 0, 1, i64::MAX] {
            let _ = civil_from_days(days);
        }
    }

    #[test]
    fn leap_years() {
        let cases: &[(&str, i64, bool)] = &[
            ("divisible by 4", 2024, true),
            ("not divisible by 4", 2023, false),
            ("century", 1900, false),
            ("four centuries", 2000, true),
            ("year 0", 0, true),
            ("negative century", -100, false),
            ("negative four centuries", -400, true),
            ("i64 min", i64::MIN, true),
            ("i64 max", i64::MAX, false),
        ];
        for &(name, year, want) in cases {
            assert_eq!(is_leap_year(year), want, "{name}");
        }
    }

    #[test]
    fn month_lengths() {
        let cases: &[(&str, i64, u32, u32)] = &[
            ("january", 2023, 1, 31),
            ("february common", 2023, 2, 28),
            ("february leap", 2024, 2, 29),
            ("february 1900", 1900, 2, 28),
            ("april", 2023, 4, 30),
            ("december", 2023, 12, 31),
            ("month 0", 2023, 0, 0),
            ("month 13", 2023, 13, 0),
        ];
        for &(name, year, month, want) in cases {
            assert_eq!(days_in_month(year, month), want, "{name}");
        }
    }

    #[test]
    fn constructors() {
        const NS: i128 = 1_000_000_000;
        let cases: &[(&str, UtcTime, i128)] = &[
            ("epoch", UtcTime::UNIX_EPOCH, 0),
            ("nanos", UtcTime::from_unix_nanos(-5), -5),
            (
                "secs",
                UtcTime::from_unix_secs(784_111_777),
                784_111_777_000_000_000,
            ),
            ("secs negative", UtcTime::from_unix_secs(-1), -1_000_000_000),
            (
                "year 9999 is exact",
                UtcTime::from_unix_secs(253_402_300_799),
                253_402_300_799 * NS,
            ),
            (
                "the whole i64 range of seconds, high",
                UtcTime::from_unix_secs(i64::MAX),
                i64::MAX as i128 * NS,
            ),
            (
                "the whole i64 range of seconds, low",
                UtcTime::from_unix_secs(i64::MIN),
                i64::MIN as i128 * NS,
            ),
        ];
        for &(name, time, want) in cases {
            assert_eq!(time.unix_nanos(), want, "{name}");
        }
    }

    #[test]
    fn from_unix_millis() {
        const NS: i128 = 1_000_000_000;
        let cases: &[(&str, f64, Option<i128>)] = &[
            ("zero", 0.0, Some(0)),
            ("negative zero", -0.0, Some(0)),
            (
                "date.now() 2024",
                1_704_110_400_000.0,
                Some(1_704_110_400_000_000_000),
            ),
            ("fraction kept", 1.5, Some(1_500_000)),
            ("negative fraction", -1.5, Some(-1_500_000)),
            (
                "present-day fraction keeps microseconds",
                1_704_110_400_000.25,
                Some(1_704_110_400_000_250_000),
            ),
            (
                "year 9999",
                253_402_300_799_000.0,
                Some(253_402_300_799 * NS),
            ),
            ("saturates high", 1e300, Some(i64::MAX as i128 * NS)),
            ("saturates low", -1e300, Some(i64::MIN as i128 * NS)),
            ("nan", f64::NAN, None),
            ("+inf", f64::INFINITY, None),
            ("-inf", f64::NEG_INFINITY, None),
        ];
        for &(name, ms, want) in cases {
            assert_eq!(
                UtcTime::from_unix_millis(ms).map(UtcTime::unix_nanos),
                want,
                "{name}"
            );
        }
        let max = UtcTime::from_unix_millis(f64::MAX).expect("finite");
        assert!(max.is_saturated(), "the largest f64 saturates: {max:?}");
    }

    #[test]
    fn saturating_add() {
        let end = UtcTime::MAX.unix_nanos();
        let cases: &[(&str, i64, Duration, i128)] = &[
            ("zero", 5, Duration::ZERO, 5),
            ("seconds and nanos", 0, Duration::new(3, 7), 3_000_000_007),
            ("from negative", -10, Duration::from_nanos(4), -6),
            (
                "carries into the seconds",
                999_999_999,
                Duration::from_nanos(2),
                1_000_000_001,
            ),
            (
                "past i64 nanoseconds, exactly",
                i64::MAX - 1,
                Duration::from_nanos(5),
                i64::MAX as i128 + 4,
            ),
            (
                "full range of u64 nanoseconds from the far past",
                i64::MIN,
                Duration::from_nanos(u64::MAX),
                i64::MAX as i128,
            ),
            (
                "duration just over i64 nanos",
                0,
                Duration::from_nanos(i64::MAX as u64 + 1),
                i64::MAX as i128 + 1,
            ),
            (
                "a duration past i64 seconds saturates",
                i64::MIN,
                Duration::MAX,
                end,
            ),
        ];
        for &(name, start, d, want) in cases {
            assert_eq!(
                UtcTime::from_unix_nanos(start)
                    .saturating_add(d)
                    .unix_nanos(),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn saturating_duration_since() {
        let cases: &[(&str, i64, i64, Duration)] = &[
            ("later", 10, 4, Duration::from_nanos(6)),
            ("equal is zero", 4, 4, Duration::ZERO),
            ("earlier is zero", 4, 10, Duration::ZERO),
            (
                "full range does not overflow",
                i64::MAX,
                i64::MIN,
                Duration::from_nanos(u64::MAX),
            ),
        ];
        for &(name, later, earlier, want) in cases {
            let got = UtcTime::from_unix_nanos(later)
                .saturating_duration_since(UtcTime::from_unix_nanos(earlier));
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn year() {
        let cases: &[(&str, i64, i64)] = &[
            ("epoch", 0, 1970),
            ("one nanosecond before epoch", -1, 1969),
            ("2024 start", 1_704_067_200 * NANOS_PER_SEC, 2024),
            (
                "one nanosecond before 2024",
                1_704_067_200 * NANOS_PER_SEC - 1,
                2023,
            ),
            ("i64 max", i64::MAX, 2262),
            ("i64 min", i64::MIN, 1677),
        ];
        for &(name, nanos, want) in cases {
            assert_eq!(UtcTime::from_unix_nanos(nanos).year(), want, "{name}");
        }
    }

    #[test]
    fn ordering_follows_time() {
        assert!(UtcTime::from_unix_secs(-1) < UtcTime::UNIX_EPOCH);
        assert!(UtcTime::from_unix_secs(1) > UtcTime::UNIX_EPOCH);
    }
}
