//! The I/O patterns' yes/no draws (read or write, seek or not), each with
//! a fixed chance, on fsbench's wyrand generator.
use crate::rng::{Random, WyRand};

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
    pub fn draw(self, rng: &mut WyRand) -> bool {
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
    fn chances_hit_their_percentage() {
        let mut rng = WyRand::new(1);
        let hits = (0..100_000)
            .filter(|_| Chance::percent(30.0).draw(&mut rng))
            .count();
        assert!((29_000..31_000).contains(&hits), "{hits}");
        assert!(!Chance::percent(0.0).draw(&mut rng));
        assert!(Chance::percent(100.0).draw(&mut rng));
    }
}
