//! A small, fast random number generator (wyrand) for the per-I/O draws:
//! one multiply per value, so drawing never shows up next to a syscall.
/// wyrand: 64-bit state, passes BigCrush and PractRand.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// A generator for stream `index` of `seed` (one per thread), so threads
    /// never share a sequence.
    pub fn for_stream(seed: u64, index: u64) -> Self {
        let mut mixer = Rng(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        Rng(mixer.next_u64())
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.0) * u128::from(self.0 ^ 0xe703_7ed1_a0b4_28db);
        ((t >> 64) as u64) ^ (t as u64)
    }

    /// Uniform in `0..n` (n > 0), without division.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in [0, 1), with 53 random bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Fills `buf` with random bytes: incompressible data.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for chunk in &mut chunks {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        let last = self.next_u64().to_le_bytes();
        rest.copy_from_slice(&last[..rest.len()]);
    }
}

/// A yes/no draw with a fixed chance, decided without a draw when the
/// chance is 0 or 100 %.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Chance {
    Never,
    Always,
    /// Yes when a uniform u64 is below this.
    Below(u64),
}

impl Chance {
    pub fn percent(pct: f64) -> Chance {
        if pct <= 0.0 {
            Chance::Never
        } else if pct >= 100.0 {
            Chance::Always
        } else {
            Chance::Below((pct / 100.0 * 2f64.powi(64)) as u64)
        }
    }

    #[inline]
    pub fn draw(self, rng: &mut Rng) -> bool {
        match self {
            Chance::Never => false,
            Chance::Always => true,
            Chance::Below(limit) => rng.next_u64() < limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_is_uniform_enough_and_in_range() {
        let mut rng = Rng::new(7);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[rng.below(10) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn chances_hit_their_percentage() {
        let mut rng = Rng::new(1);
        let hits = (0..100_000)
            .filter(|_| Chance::percent(30.0).draw(&mut rng))
            .count();
        assert!((29_000..31_000).contains(&hits), "{hits}");
        assert!(!Chance::percent(0.0).draw(&mut rng));
        assert!(Chance::percent(100.0).draw(&mut rng));
    }

    #[test]
    fn streams_differ_and_repeat() {
        let a: Vec<u64> = (0..4).map(|_| Rng::for_stream(5, 0).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(
            Rng::for_stream(5, 0).next_u64(),
            Rng::for_stream(5, 1).next_u64()
        );
        let mut buf = [0u8; 13];
        Rng::new(3).fill(&mut buf);
        assert!(buf.iter().any(|&b| b != 0));
    }
}
