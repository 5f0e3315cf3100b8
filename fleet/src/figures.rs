//! The figures of one run, counted as it happens and kept exact: counts and nanoseconds.

use crate::service::NS;

/// The finest time step the run's load is counted in: 100 ms. Every bin of a series and the
/// peak's whole seconds are made of whole ticks.
pub const TICK_NS: u64 = NS / 10;

/// The figures one policy produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    /// Requests the service answered after their user had been told a final outcome: work
    /// for nobody.
    pub after_outcome: u64,
    /// Our sends before a block the client knew of had ended.
    pub early_sends: u32,
}

/// What one run produced: its figures, and how many requests reached the service in each
/// [`TICK_NS`] from the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub figures: Figures,
    pub per_tick: Vec<u64>,
}

/// The figures of a run in progress.
#[derive(Debug, Default)]
pub struct Tally {
    figures: Figures,
    per_tick: Vec<u64>,
    /// Each time to data so far, in nanoseconds.
    to_data: Vec<u64>,
}

impl Tally {
    /// A request reached the service at `at`.
    pub fn reached(&mut self, at: u64) {
        self.figures.requests += 1;
        let tick = usize::try_from(at / TICK_NS).unwrap_or(usize::MAX);
        if tick >= self.per_tick.len() {
            self.per_tick.resize(tick + 1, 0);
        }
        self.per_tick[tick] += 1;
    }

    /// The service answered a request with `status`.
    pub fn answered(&mut self, status: u16) {
        if status == 429 {
            self.figures.refused += 1;
        }
    }

    /// An action stopped after `waited` nanoseconds, with data or not, having sent `sent`.
    pub fn stopped(&mut self, waited: u64, data: bool, sent: u32) {
        let f = &mut self.figures;
        f.longest_wait_ns = f.longest_wait_ns.max(waited);
        f.most_per_action = f.most_per_action.max(sent);
        if data {
            self.to_data.push(waited);
        }
    }

    /// One of our clients sent before a block it knew of had ended.
    pub fn early_send(&mut self) {
        self.figures.early_sends += 1;
    }

    /// The run's figures, for `actions` widgets of which `after_outcome` had a request
    /// answered after their outcome.
    pub fn finish(mut self, actions: u64, after_outcome: u64) -> Run {
        let data = &mut self.to_data;
        data.sort_unstable();
        let f = &mut self.figures;
        f.actions = actions;
        f.after_outcome = after_outcome;
        f.with_data = data.len() as u64;
        f.to_data_ns = [
            rank(data, 50),
            rank(data, 95),
            data.last().copied().unwrap_or(0),
        ];
        let ticks_per_s = (NS / TICK_NS) as usize;
        f.peak_per_s = per_bin(&self.per_tick, ticks_per_s, 0)
            .into_iter()
            .max()
            .unwrap_or(0);
        Run {
            figures: self.figures,
            per_tick: self.per_tick,
        }
    }
}

/// The nearest-rank `percent` percentile of sorted `v`; 0 when empty.
fn rank(v: &[u64], percent: usize) -> u64 {
    let i = (percent * v.len()).div_ceil(100).clamp(1, v.len().max(1));
    v.get(i - 1).copied().unwrap_or(0)
}

/// The counts of `ticks` summed `width` ticks at a time, for at least `bins` bins.
pub fn per_bin(ticks: &[u64], width: usize, bins: usize) -> Vec<u64> {
    let mut counts: Vec<u64> = ticks.chunks(width.max(1)).map(|c| c.iter().sum()).collect();
    if counts.len() < bins {
        counts.resize(bins, 0);
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_and_bins() {
        let v: Vec<u64> = (1..=20).collect();
        assert_eq!((rank(&v, 50), rank(&v, 95), rank(&[], 50)), (10, 19, 0));
        assert_eq!(rank(&[7], 95), 7);
        let hundred: Vec<u64> = (1..=100).collect();
        assert_eq!((rank(&hundred, 50), rank(&hundred, 95)), (50, 95));
        assert_eq!(per_bin(&[2, 1, 0, 1], 2, 0), [3, 1]);
        assert_eq!(per_bin(&[2, 1, 0], 2, 0), [3, 0]);
        assert_eq!(per_bin(&[1], 10, 3), [1, 0, 0]);
        assert_eq!(per_bin(&[], 10, 0), Vec::<u64>::new());
    }

    #[test]
    fn a_tally_counts_requests_by_tick_and_outcomes_by_action() {
        let mut t = Tally::default();
        for at in [0, TICK_NS - 1, TICK_NS, 25 * TICK_NS] {
            t.reached(at);
        }
        t.answered(200);
        t.answered(429);
        // The longest wait and the most requests come first, so that only a maximum keeps them.
        t.stopped(5 * NS, false, 3);
        t.stopped(3 * NS, true, 2);
        t.stopped(NS, true, 1);
        t.early_send();
        let run = t.finish(3, 1);
        assert_eq!(run.per_tick.len(), 26);
        assert_eq!(&run.per_tick[..2], [2, 1]);
        let expected = Figures {
            requests: 4,
            // Three in the first second, one in the third.
            peak_per_s: 3,
            refused: 1,
            actions: 3,
            with_data: 2,
            to_data_ns: [NS, 3 * NS, 3 * NS],
            longest_wait_ns: 5 * NS,
            most_per_action: 3,
            after_outcome: 1,
            early_sends: 1,
        };
        assert_eq!(run.figures, expected);
    }

    /// The run's p50 and p95 are the nearest ranks of its times to data: of 1 to 100 s, the
    /// 50th and the 95th.
    #[test]
    fn the_percentiles_are_the_nearest_ranks_of_the_times_to_data() {
        let mut t = Tally::default();
        for s in (1..=100).rev() {
            t.stopped(s * NS, true, 1);
        }
        let f = t.finish(100, 0).figures;
        assert_eq!(f.to_data_ns, [50 * NS, 95 * NS, 100 * NS]);
    }
}
