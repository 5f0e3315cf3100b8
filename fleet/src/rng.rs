//! A small seeded PRNG (splitmix64): deterministic, fast, no dependency.

/// The splitmix64 generator.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`; `stream` separates independent sequences of one seed.
    pub fn new(seed: u64, stream: u64) -> Self {
        Rng(seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A draw in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A draw in (0, 1]: never zero, so that it can divide.
    pub fn open_unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// A draw in [lo, hi] (inclusive), for integers.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_draws_in_range() {
        let (mut a, mut b) = (Rng::new(7, 1), Rng::new(7, 1));
        for _ in 0..1000 {
            let x = a.unit();
            assert_eq!(x.to_bits(), b.unit().to_bits());
            assert!((0.0..1.0).contains(&x));
            let y = a.open_unit();
            assert_eq!(y.to_bits(), b.open_unit().to_bits());
            assert!(y > 0.0 && y <= 1.0);
        }
        assert_ne!(Rng::new(7, 1).next_u64(), Rng::new(7, 2).next_u64());
    }

    #[test]
    fn a_range_draws_both_of_its_ends_and_nothing_outside() {
        let mut rng = Rng::new(7, 1);
        let mut seen = [0u32; 3];
        for _ in 0..1000 {
            let x = rng.range(3, 5);
            assert!((3..=5).contains(&x), "{x}");
            seen[(x - 3) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
    }
}
