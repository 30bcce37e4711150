//! fsbench's own random numbers, for everything that need not match another
//! tool: two small generators behind one trait that draws every derived
//! value (ranges, unit floats, log-normal sizes, random bytes) the same way.
//! The generators of bonnie++ (glibc `random_r`) and PostMark (MT19937 with
//! its old seeding) live with those workloads, because they must give the
//! very numbers those tools give for a seed.

/// A source of uniform 64-bit values and what is drawn from them.
pub trait Random {
    fn next_u64(&mut self) -> u64;

    /// Uniform in `0..n` (n > 0), without division.
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `low..=high` (by remainder: the dataset generator's draw,
    /// kept so a seed keeps giving the same tree).
    fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.next_u64() % (high - low + 1)
    }

    /// Uniform in [0, 1), with 53 random bits.
    #[inline]
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal, by Box-Muller from two uniforms.
    fn normal(&mut self) -> f64 {
        let u1 = self.unit().max(f64::MIN_POSITIVE);
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos()
    }

    /// Log-normal with the given median and shape, clamped to
    /// `min..=max`: file sizes in real trees are spread that way.
    fn log_normal(&mut self, median: f64, sigma: f64, min: u64, max: u64) -> u64 {
        ((median * (sigma * self.normal()).exp()) as u64).clamp(min, max)
    }

    /// Fills `buf` with random bytes: incompressible data.
    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
}

/// wyrand: one multiply per value (so drawing never shows up next to a
/// syscall), passes BigCrush and PractRand. The I/O patterns' generator.
#[derive(Debug, Clone)]
pub struct WyRand(u64);

impl WyRand {
    pub fn new(seed: u64) -> Self {
        WyRand(seed)
    }

    /// A generator for stream `index` of `seed` (one per thread), so threads
    /// never share a sequence.
    pub fn for_stream(seed: u64, index: u64) -> Self {
        let mut mixer = WyRand(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        WyRand(mixer.next_u64())
    }
}

impl Random for WyRand {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.0) * u128::from(self.0 ^ 0xe703_7ed1_a0b4_28db);
        ((t >> 64) as u64) ^ (t as u64)
    }
}

/// SplitMix64: the dataset generator's, fully determined by the seed (the
/// same seed gives the same tree on every machine and every build).
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
}

impl Random for SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_is_uniform_enough_and_in_range() {
        let mut rng = WyRand::new(7);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[rng.below(10) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn streams_differ_and_repeat() {
        let a: Vec<u64> = (0..4)
            .map(|_| WyRand::for_stream(5, 0).next_u64())
            .collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(
            WyRand::for_stream(5, 0).next_u64(),
            WyRand::for_stream(5, 1).next_u64()
        );
    }

    /// The first values of both generators for a seed are pinned: datasets
    /// and verification stamps depend on them not changing.
    #[test]
    fn a_seed_gives_the_same_numbers_as_ever() {
        assert_eq!(SplitMix64::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
        let mut bytes = [0u8; 13];
        SplitMix64::new(0).fill(&mut bytes);
        assert_eq!(bytes[..8], 0xe220_a839_7b1d_cdafu64.to_le_bytes());
        assert_eq!(WyRand::new(0).next_u64(), 0x111c_b3a7_8f59_a58e);
    }

    #[test]
    fn same_seed_same_numbers_and_ranges_hold() {
        let (mut a, mut b) = (SplitMix64::new(7), SplitMix64::new(7));
        let draws: Vec<u64> = (0..100).map(|_| a.range(3, 9)).collect();
        assert!(draws.iter().all(|&d| (3..=9).contains(&d)));
        assert_eq!(draws, (0..100).map(|_| b.range(3, 9)).collect::<Vec<_>>());
        assert_ne!(SplitMix64::new(8).next_u64(), SplitMix64::new(7).next_u64());
        let sizes: Vec<u64> = (0..1000)
            .map(|_| a.log_normal(1000.0, 1.0, 10, 5000))
            .collect();
        assert!(sizes.iter().all(|&s| (10..=5000).contains(&s)));
        assert!(sizes.iter().any(|&s| s < 1000) && sizes.iter().any(|&s| s > 1000));
    }
}
