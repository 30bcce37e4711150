//! The dataset generator's random numbers: SplitMix64, small and fast, and
//! fully determined by the seed (the same seed gives the same tree on every
//! machine and every build).

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `low..=high`.
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.next_u64() % (high - low + 1)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Log-normal with the given median and shape, clamped to
    /// `min..=max`: file sizes in real trees are spread that way.
    pub fn log_normal(&mut self, median: f64, sigma: f64, min: u64, max: u64) -> u64 {
        // Box-Muller: one standard normal from two uniforms.
        let u1 = self.unit().max(f64::MIN_POSITIVE);
        let normal = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos();
        ((median * (sigma * normal).exp()) as u64).clamp(min, max)
    }

    /// Fills `buf` with random bytes (the incompressible data pool).
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_numbers_and_ranges_hold() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        let draws: Vec<u64> = (0..100).map(|_| a.range(3, 9)).collect();
        assert!(draws.iter().all(|&d| (3..=9).contains(&d)));
        assert_eq!(draws, (0..100).map(|_| b.range(3, 9)).collect::<Vec<_>>());
        assert_ne!(Rng::new(8).next_u64(), Rng::new(7).next_u64());
        let sizes: Vec<u64> = (0..1000)
            .map(|_| a.log_normal(1000.0, 1.0, 10, 5000))
            .collect();
        assert!(sizes.iter().all(|&s| (10..=5000).contains(&s)));
        assert!(sizes.iter().any(|&s| s < 1000) && sizes.iter().any(|&s| s > 1000));
    }
}
