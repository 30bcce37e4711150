//! bonnie++'s random numbers: glibc's `rand()` after `srand(seed)` (the
//! additive-feedback generator of `random_r`, TYPE_3), re-implemented so the
//! same `-z` seed gives the same file names, sizes and seek positions as
//! bonnie++ itself; or, with `-Z`, 32-bit big-endian values read from a file.
use std::path::Path;

use crate::input::{self, read_input_bytes};

const DEGREE: usize = 31;
const SEPARATION: usize = 3;
/// glibc discards 10 × degree outputs after seeding.
const DISCARD: usize = 10 * DEGREE;

pub struct GlibcRand {
    state: [u32; DEGREE],
    front: usize,
    rear: usize,
}

impl GlibcRand {
    pub fn new(seed: u32) -> Self {
        let mut state = [0u32; DEGREE];
        state[0] = if seed == 0 { 1 } else { seed };
        for i in 1..DEGREE {
            state[i] = park_miller(state[i - 1] as i32) as u32;
        }
        let mut rng = GlibcRand {
            state,
            front: SEPARATION,
            rear: 0,
        };
        for _ in 0..DISCARD {
            rng.next_value();
        }
        rng
    }

    /// The next value in 0..=i32::MAX, as `rand()` returns it.
    pub fn next_value(&mut self) -> u32 {
        let sum = self.state[self.front].wrapping_add(self.state[self.rear]);
        self.state[self.front] = sum;
        self.front = (self.front + 1) % DEGREE;
        self.rear = (self.rear + 1) % DEGREE;
        sum >> 1
    }
}

/// 16807 × word mod (2^31 − 1), by Schrage's method, as glibc seeds.
fn park_miller(word: i32) -> i32 {
    let hi = word / 127_773;
    let lo = word % 127_773;
    let next = 16_807 * lo - 2_836 * hi;
    if next < 0 { next + 2_147_483_647 } else { next }
}

/// Where bonnie's random numbers come from.
pub enum RandomSource {
    Seeded(GlibcRand),
    /// `-Z file`: values cycle through the file.
    File {
        values: Vec<u32>,
        position: usize,
    },
}

impl RandomSource {
    pub fn seeded(seed: u32) -> Self {
        RandomSource::Seeded(GlibcRand::new(seed))
    }

    /// Cycles through values read by `read_values_file`.
    pub fn from_values(values: Vec<u32>) -> Self {
        RandomSource::File {
            values,
            position: 0,
        }
    }

    /// Reads a `-Z` file of 32-bit big-endian integers (as bonnie++'s
    /// reader intends; its own generator's 8-byte records are a known bug).
    /// A missing or unreadable file is bad input, like a bad option value.
    pub fn read_values_file(path: &Path) -> anyhow::Result<Vec<u32>> {
        let bytes = read_input_bytes(path, input::RANDOM_NUMBERS)?;
        let values: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]).unsigned_abs() & 0x7fff_ffff)
            .collect();
        if values.is_empty() {
            return crate::error::usage(format!(
                "random-number file {} holds no 4-byte values",
                path.display()
            ));
        }
        Ok(values)
    }

    pub fn next_value(&mut self) -> u32 {
        match self {
            RandomSource::Seeded(rng) => rng.next_value(),
            RandomSource::File { values, position } => {
                let value = values[*position % values.len()];
                *position += 1;
                value
            }
        }
    }

    /// A value in 0..n (n > 0), with `rand() % n`'s distribution.
    pub fn below(&mut self, n: u64) -> u64 {
        u64::from(self.next_value()) % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fixed vectors from glibc: `srand(1); rand()…` and `srand(12345)`.
    #[test]
    fn matches_glibc_rand() {
        let mut one = GlibcRand::new(1);
        let first: Vec<u32> = (0..5).map(|_| one.next_value()).collect();
        assert_eq!(
            first,
            [1804289383, 846930886, 1681692777, 1714636915, 1957747793]
        );
        let mut other = GlibcRand::new(12345);
        let second: Vec<u32> = (0..3).map(|_| other.next_value()).collect();
        assert_eq!(second, GLIBC_12345);
    }

    const GLIBC_12345: [u32; 3] = [383100999, 858300821, 357768173];

    #[test]
    fn file_source_cycles_and_takes_absolute_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rand");
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&7i32.to_be_bytes());
        bytes.extend_from_slice(&(-9i32).to_be_bytes());
        std::fs::write(&path, bytes).unwrap();
        let mut source = RandomSource::from_values(RandomSource::read_values_file(&path).unwrap());
        assert_eq!(
            [
                source.next_value(),
                source.next_value(),
                source.next_value()
            ],
            [7, 9, 7]
        );
        std::fs::write(&path, b"ab").unwrap();
        assert!(RandomSource::read_values_file(&path).is_err());
    }
}
