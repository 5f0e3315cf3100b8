//! The network between the clients and the service: how long each request's round trip takes,
//! there and back, before any time it spends waiting its turn at the service.
//!
//! Most round trips take about `latency`; a few take far longer (a congested link, a lost
//! packet resent, a stalled connection). The tail is a Pareto tail of shape 1, drawn with one
//! division so that every platform draws the same nanoseconds: the round trip is
//! `latency × (1 + tail × (1/u − 1))` for `u` uniform in (0, 1], so it exceeds
//! `latency × (1 + tail × x)` with probability `1 / (1 + x)`. With `latency` 100 ms and `tail`
//! 0.1: a median of 110 ms, 1% over 1.09 s, 0.26% over 4 s (the model's default cap), 0.1% over
//! 10 s (ky's timeout). No round trip is longer than [`LONGEST_NS`].

use crate::rng::Rng;
use crate::service::NS;

/// The longest round trip: a minute, when proxies commonly give up on a connection.
pub const LONGEST_NS: u64 = 60 * NS;

/// How long round trips take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Network {
    /// The shortest round trip, in milliseconds; most are close to it.
    pub latency_ms: u64,
    /// The weight of the slow tail; 0 makes every round trip exactly `latency_ms`.
    pub tail: f64,
}

/// One request's trip: nanoseconds to reach the service, and for the answer to come back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trip {
    pub up: u64,
    pub down: u64,
}

impl Network {
    /// Draws one request's trip, split evenly between the way there and the way back.
    pub fn trip(&self, rng: &mut Rng) -> Trip {
        let base = self.latency_ms.saturating_mul(1_000_000);
        let slow = base as f64 * self.tail * (1.0 / rng.open_unit() - 1.0);
        // A float cast saturates; the sum stays below u64::MAX as both parts are at most a minute.
        let total = base.min(LONGEST_NS) + (slow as u64).min(LONGEST_NS - base.min(LONGEST_NS));
        let up = total / 2;
        Trip {
            up,
            down: total - up,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_tail_every_trip_is_the_latency_split_in_two() {
        let network = Network {
            latency_ms: 101,
            tail: 0.0,
        };
        let mut rng = Rng::new(3, 3);
        for _ in 0..100 {
            let trip = network.trip(&mut rng);
            assert_eq!((trip.up, trip.down), (50_500_000, 50_500_000));
        }
    }

    #[test]
    fn the_tail_is_as_heavy_as_it_says_and_never_past_a_minute() {
        let network = Network {
            latency_ms: 100,
            tail: 0.1,
        };
        let mut rng = Rng::new(9, 3);
        let n = 200_000;
        let trips: Vec<u64> = (0..n)
            .map(|_| {
                let t = network.trip(&mut rng);
                // Split evenly; an odd nanosecond goes on the way back.
                assert!(t.up <= t.down && t.down <= t.up + 1, "{t:?}");
                t.up + t.down
            })
            .collect();
        let share_over =
            |ms: u64| trips.iter().filter(|&&t| t > ms * 1_000_000).count() as f64 / n as f64;
        // P(longer than 100 ms × (1 + 0.1 x)) = 1 / (1 + x).
        let cases = [(110, 0.5), (1_090, 0.01), (4_000, 1.0 / 391.0)];
        for (ms, expected) in cases {
            let share = share_over(ms);
            assert!(
                (share - expected).abs() < expected * 0.1,
                "{ms} ms: {share} vs {expected}"
            );
        }
        assert!(trips
            .iter()
            .all(|&t| (100_000_000..=LONGEST_NS).contains(&t)));
        assert!(trips.contains(&LONGEST_NS), "1 in 6,000 reaches the cap");
    }
}
