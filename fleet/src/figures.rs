//! The figures of one run, kept exact: counts and nanoseconds. Ratios are only formed when
//! they are written, as decimals computed in integers, so the command and the page (the same
//! code built for wasm) write the same text.

use crate::service::{push_digits, NS};
use crate::sim::{Run, Slot};

/// The figures one policy produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Figures {
    /// Requests the service received.
    pub requests: u64,
    /// The most requests that reached the service in one whole second of the run.
    pub peak_per_s: u64,
    /// Requests answered 429.
    pub refused: u64,
    /// Widgets (actions).
    pub actions: u64,
    /// Actions that ended with data.
    pub with_data: u64,
    /// Time to data, p50, p95 and max (nearest rank), in nanoseconds; 0 when none had data.
    pub to_data_ns: [u64; 3],
    /// The longest any user waited before a final outcome, in nanoseconds.
    pub longest_wait_ns: u64,
    /// The most requests one action sent.
    pub most_per_action: u32,
    /// Requests that reached the service after their user was told a final outcome.
    pub after_outcome: u64,
    /// Our sends before a block the client knew of had ended.
    pub early_sends: u32,
}

impl Figures {
    /// The share of requests answered 429, as a fraction.
    pub fn share_429(&self) -> f64 {
        self.refused as f64 / self.requests.max(1) as f64
    }

    /// Requests per action, the mean.
    pub fn mean_per_action(&self) -> f64 {
        self.requests as f64 / self.actions.max(1) as f64
    }
}

/// Computes the figures of `run`.
pub fn figures(run: &Run) -> Figures {
    let requests = &run.requests;
    let late = requests.iter().filter(|r| {
        let slot = &run.slots[r.action as usize];
        slot.done.is_some_and(|(at, _)| r.arrive > at)
    });
    let mut data: Vec<u64> = run
        .slots
        .iter()
        .filter(|s| s.done.is_some_and(|d| d.1))
        .map(waited)
        .collect();
    data.sort_unstable();
    let arrivals: Vec<u64> = requests.iter().map(|r| r.arrive).collect();
    Figures {
        requests: requests.len() as u64,
        peak_per_s: per_bin(&arrivals, NS, 0).into_iter().max().unwrap_or(0),
        refused: requests.iter().filter(|r| r.answer.status == 429).count() as u64,
        actions: run.slots.len() as u64,
        with_data: data.len() as u64,
        to_data_ns: [
            rank(&data, 50),
            rank(&data, 95),
            data.last().copied().unwrap_or(0),
        ],
        longest_wait_ns: run.slots.iter().map(waited).max().unwrap_or(0),
        most_per_action: run.slots.iter().map(|s| s.sent).max().unwrap_or(0),
        after_outcome: late.count() as u64,
        early_sends: run.early_sends,
    }
}

/// How long the widget's user waited for a final outcome (every widget gets one by the end
/// of a run: each client stops).
fn waited(s: &Slot) -> u64 {
    s.done.map_or(u64::MAX, |(at, _)| at - s.start)
}

/// The nearest-rank `percent` percentile of sorted `v`; 0 when empty.
fn rank(v: &[u64], percent: usize) -> u64 {
    let i = (percent * v.len()).div_ceil(100).clamp(1, v.len().max(1));
    v.get(i - 1).copied().unwrap_or(0)
}

/// How many of `times` fall in each bin of `width` nanoseconds from zero, for at least
/// `bins` bins (more when a time falls later).
pub fn per_bin(times: &[u64], width: u64, bins: usize) -> Vec<u64> {
    let last = times.iter().max().map_or(0, |t| (t / width) as usize + 1);
    let mut counts = vec![0; bins.max(last)];
    for t in times {
        counts[(t / width) as usize] += 1;
    }
    counts
}

/// `numer / denom` as a decimal rounded half up to `places` places (at most 9), trailing
/// zeros dropped: `decimal(2, 3, 4)` is `0.6667`, `decimal(5, 1, 3)` is `5`.
pub fn decimal(numer: u64, denom: u64, places: u32) -> String {
    let scale = 10u128.pow(places.min(9));
    let denom = u128::from(denom.max(1));
    let scaled = (u128::from(numer) * scale * 2 + denom) / (denom * 2);
    let mut out = String::new();
    // At most numer, and below 10^9: both fit.
    push_digits(&mut out, (scaled / scale) as u64, 1);
    let (mut frac, mut digits) = ((scaled % scale) as u64, places.min(9) as usize);
    if frac > 0 {
        while frac.is_multiple_of(10) {
            frac /= 10;
            digits -= 1;
        }
        out.push('.');
        push_digits(&mut out, frac, digits);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_round_half_up_and_drop_trailing_zeros() {
        assert_eq!(decimal(2, 3, 4), "0.6667");
        assert_eq!(decimal(1, 3, 6), "0.333333");
        assert_eq!(decimal(5, 1, 3), "5");
        assert_eq!(decimal(1, 8, 2), "0.13");
        assert_eq!(decimal(1, 20, 3), "0.05");
        assert_eq!(decimal(7, 1000, 3), "0.007");
        assert_eq!(decimal(0, 0, 3), "0");
        assert_eq!(decimal(u64::MAX, 1, 6), u64::MAX.to_string());
    }

    #[test]
    fn nearest_rank_and_bins() {
        let v: Vec<u64> = (1..=20).collect();
        assert_eq!((rank(&v, 50), rank(&v, 95), rank(&[], 50)), (10, 19, 0));
        assert_eq!(rank(&[7], 95), 7);
        assert_eq!(per_bin(&[0, 999, 1000, 3500], 1000, 0), [2, 1, 0, 1]);
        assert_eq!(per_bin(&[10], 1000, 3), [1, 0, 0]);
    }
}
