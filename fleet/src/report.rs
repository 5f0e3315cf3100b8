//! What a fleet run reports, as the command's `--json` prints it and `simulateFleet` returns
//! it: every figure of every policy, and each policy's requests per second over time. Every
//! number is exact as written: a ratio or a time in seconds is the `f64` nearest to its
//! decimal, which JSON and JavaScript print as that decimal.

use serde::Serialize;

use crate::figures::Figures;

/// The run: the series' bin width and each policy's figures, in column order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FleetReport {
    /// The width of each series' bins, in seconds.
    pub bin_s: f64,
    pub policies: Vec<PolicyReport>,
}

/// One policy's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolicyReport {
    pub policy: &'static str,
    /// Requests the service received.
    pub requests: u64,
    /// The most requests that reached the service in one whole second.
    pub peak_per_s: u64,
    /// Requests answered 429, as a fraction (six places).
    pub share_429: f64,
    pub actions: u64,
    /// Actions that ended with data.
    pub with_data: u64,
    /// Time from an action's start to its data (nearest rank); `None` (`null`) when no action
    /// had data, which no time could describe.
    pub time_to_data_s: Option<Percentiles>,
    /// The longest any user waited for a final outcome.
    pub longest_wait_for_outcome_s: f64,
    pub requests_per_action: PerAction,
    /// Requests the service answered after their user had been told a final outcome.
    pub requests_after_outcome: u64,
    /// Our sends before a block the client knew of had ended (never, by the rules).
    pub early_sends: u32,
    /// Requests per second reaching the service, one value per bin of `bin_s` from the start.
    pub requests_per_s: Vec<f64>,
}

/// Time to data, in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p95: f64,
    pub max: f64,
}

/// Requests per action.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PerAction {
    /// The mean (six places).
    pub mean: f64,
    pub max: u32,
}

impl PolicyReport {
    /// The report of `figures`, with the series `counts` per bin of `bin_ms` milliseconds.
    pub fn new(policy: &'static str, f: &Figures, counts: &[u64], bin_ms: u64) -> Self {
        let [p50, p95, max] = f.to_data_ns;
        PolicyReport {
            policy,
            requests: f.requests,
            peak_per_s: f.peak_per_s,
            share_429: decimal(f.refused, f.requests, 6),
            actions: f.actions,
            with_data: f.with_data,
            time_to_data_s: (f.with_data > 0).then(|| Percentiles {
                p50: secs(p50),
                p95: secs(p95),
                max: secs(max),
            }),
            longest_wait_for_outcome_s: secs(f.longest_wait_ns),
            requests_per_action: PerAction {
                mean: decimal(f.requests, f.actions, 6),
                max: f.most_per_action,
            },
            requests_after_outcome: f.after_outcome,
            early_sends: f.early_sends,
            requests_per_s: counts
                .iter()
                .map(|&n| decimal(n.saturating_mul(1000), bin_ms, 3))
                .collect(),
        }
    }
}

/// Nanoseconds as seconds: one division, so the nearest `f64` to the exact decimal.
pub fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// `numer / denom` rounded half up to `places` decimal places (at most 9), as the nearest
/// `f64`: `decimal(2, 3, 4)` is 0.6667. A zero `denom` counts as 1.
pub fn decimal(numer: u64, denom: u64, places: u32) -> f64 {
    let scale = 10u128.pow(places.min(9));
    let denom = u128::from(denom.max(1));
    let scaled = (u128::from(numer) * scale * 2 + denom) / (denom * 2);
    scaled as f64 / scale as f64
}

/// A figure of the report written to `places` decimal places (at most 9), rounded half up
/// from its decimal value: `fixed(2.625, 2)` is `"2.63"` and `fixed(1.005, 2)` is `"1.01"`,
/// where Rust's `{:.2}` writes the nearest `f64`'s binary value to even (`2.62`, `1.00`). The
/// figures are decimals of at most nine places (seconds from nanoseconds, shares and means to
/// six), and the page's Fleet view writes its cells by the same rule (`fixed` in
/// `www/view.js`), so its table and this command's say the same. The rule holds from 0 to
/// 4,000,000, where a figure's billionths are exact in a double; outside (no figure of a fleet
/// comes near), and for NaN, the value is written as `{:.*}` writes it.
pub fn fixed(value: f64, places: u32) -> String {
    let places = places.min(9);
    if !(0.0..=4e6).contains(&value) {
        return format!("{value:.*}", places as usize);
    }
    // The figure in billionths, exactly: it was made as a decimal of at most nine places.
    let billionths = (value * 1e9).round() as u64;
    let unit = 10u64.pow(9 - places);
    let kept = billionths.saturating_mul(2).saturating_add(unit) / (2 * unit);
    let scale = 10u64.pow(places);
    if places == 0 {
        return kept.to_string();
    }
    format!(
        "{}.{:0width$}",
        kept / scale,
        kept % scale,
        width = places as usize
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_is_written_rounded_half_up_from_its_decimal_value() {
        let cases = [
            (2.625, 2, "2.63"),
            (1.005, 2, "1.01"),
            (2.675, 2, "2.68"),
            (0.125, 2, "0.13"),
            (1.6666667, 2, "1.67"),
            (12.345, 1, "12.3"),
            (12.35, 1, "12.4"),
            (60.0, 1, "60.0"),
            (0.0, 2, "0.00"),
            (3.5, 0, "4"),
            (secs(1_994_999_999), 2, "1.99"),
            (secs(1_995_000_000), 2, "2.00"),
            (decimal(21, 8, 6), 2, "2.63"),
            (4e6, 2, "4000000.00"),
            // Outside the figures' range, as `{:.2}` writes it.
            (9.3e9, 2, "9300000000.00"),
            (-1.5, 1, "-1.5"),
            (f64::INFINITY, 2, "inf"),
            (f64::NAN, 2, "NaN"),
        ];
        for (value, places, text) in cases {
            assert_eq!(fixed(value, places), text, "{value} to {places}");
        }
    }

    #[test]
    fn decimals_round_half_up_to_the_nearest_f64_of_their_text() {
        let cases = [
            ((2, 3, 4), "0.6667"),
            ((1, 3, 6), "0.333333"),
            ((5, 1, 3), "5"),
            ((1, 8, 2), "0.13"),
            ((1, 20, 3), "0.05"),
            ((7, 1000, 3), "0.007"),
            ((0, 0, 3), "0"),
            ((1_615_127_182, 1_000_000_000, 9), "1.615127182"),
        ];
        for ((numer, denom, places), text) in cases {
            let value = decimal(numer, denom, places);
            assert_eq!(value, text.parse::<f64>().expect("a number"), "{text}");
        }
        assert_eq!(secs(1_615_127_182), 1.615127182);
        assert_eq!(secs(100_000_000), 0.1);
    }

    /// Each field comes from its own figure: three of five requests refused, a p95 that is not
    /// the max, a longest wait longer than any time to data, five requests over three actions.
    #[test]
    fn each_figure_is_reported_in_its_own_field() {
        let ms = |n: u64| n * 1_000_000;
        let figures = Figures {
            requests: 5,
            peak_per_s: 3,
            refused: 3,
            actions: 3,
            with_data: 2,
            to_data_ns: [ms(100), ms(9000), ms(10_400)],
            longest_wait_ns: ms(10_500),
            most_per_action: 2,
            after_outcome: 1,
            early_sends: 0,
        };
        let report = PolicyReport::new("ours", &figures, &[1, 0, 4], 250);
        let expected = PolicyReport {
            policy: "ours",
            requests: 5,
            peak_per_s: 3,
            share_429: 0.6,
            actions: 3,
            with_data: 2,
            time_to_data_s: Some(Percentiles {
                p50: 0.1,
                p95: 9.0,
                max: 10.4,
            }),
            longest_wait_for_outcome_s: 10.5,
            requests_per_action: PerAction {
                mean: 1.666667,
                max: 2,
            },
            requests_after_outcome: 1,
            early_sends: 0,
            requests_per_s: vec![4.0, 0.0, 16.0],
        };
        assert_eq!(report, expected);
        let none = Figures {
            with_data: 0,
            to_data_ns: [0; 3],
            ..figures
        };
        let report = PolicyReport::new("ours", &none, &[1, 0, 4], 250);
        assert_eq!(report.time_to_data_s, None, "no data, no time to it");
    }
}
