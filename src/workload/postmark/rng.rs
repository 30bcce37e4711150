//! PostMark's random numbers: the 32-bit Mersenne Twister (MT19937) that
//! PostMark 1.5+ embeds, with its *old* seeding (`sgenrand`: two steps of
//! the linear congruential generator 69069·s + 1 per state word). Modern
//! MT libraries seed with `init_genrand` (multiplier 1812433253) and give
//! other numbers for the same seed, so the same seed would not give the
//! same files.
const STATE_WORDS: usize = 624;
const SHIFT_WORDS: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

pub struct PostmarkRng {
    state: [u32; STATE_WORDS],
    index: usize,
}

impl PostmarkRng {
    /// `sgenrand(seed)`: each word takes the top halves of two successive
    /// LCG values.
    pub fn new(seed: u32) -> Self {
        let mut state = [0u32; STATE_WORDS];
        let mut s = seed;
        for word in &mut state {
            let upper = s & 0xffff_0000;
            s = lcg(s);
            *word = upper | (s >> 16);
            s = lcg(s);
        }
        PostmarkRng {
            state,
            index: STATE_WORDS,
        }
    }

    /// The next tempered 32-bit output.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= STATE_WORDS {
            self.regenerate();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// PostMark's `RND(x)`: the next output mod `x`; for `x == 0` it is 0
    /// and, as in PostMark, no number is drawn (this keeps the draw order
    /// when, say, the low and high file sizes are equal).
    #[inline]
    pub fn below(&mut self, x: u32) -> u32 {
        if x == 0 { 0 } else { self.next_u32() % x }
    }

    fn regenerate(&mut self) {
        for k in 0..STATE_WORDS {
            let y = (self.state[k] & UPPER_MASK) | (self.state[(k + 1) % STATE_WORDS] & LOWER_MASK);
            let odd = if y & 1 == 1 { MATRIX_A } else { 0 };
            self.state[k] = self.state[(k + SHIFT_WORDS) % STATE_WORDS] ^ (y >> 1) ^ odd;
        }
        self.index = 0;
    }
}

#[inline]
fn lcg(s: u32) -> u32 {
    s.wrapping_mul(69069).wrapping_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(seed: u32, count: usize) -> Vec<u32> {
        let mut rng = PostmarkRng::new(seed);
        (0..count).map(|_| rng.next_u32()).collect()
    }

    /// PostMark's own outputs (its default seed 42 and seed 1), as its
    /// file contents and sizes show them.
    #[test]
    fn matches_postmark_sequences() {
        assert_eq!(
            first(42, 10),
            [
                4179544424, 615236124, 4165290828, 3119652344, 1623863471, 605280572, 1209526912,
                2753559756, 1398721121, 776305894
            ]
        );
        assert_eq!(first(1, 3), [3556162021, 4012392791, 221657543]);
    }

    /// Not the modern `init_genrand(42)` sequence (1608637542, ...).
    #[test]
    fn differs_from_modern_seeding() {
        assert_ne!(first(42, 1), [1608637542]);
    }

    #[test]
    fn below_zero_draws_nothing() {
        let mut a = PostmarkRng::new(42);
        let mut b = PostmarkRng::new(42);
        assert_eq!(a.below(0), 0);
        assert_eq!(a.below(10), b.below(10));
    }

    /// The file sizes of PostMark's default run: after the 2 × 10000
    /// content draws (32 state regenerations), `500 + RND(9500)` gives
    /// the sizes PostMark writes: 1390, 4732, 3583, 6507, 9640.
    #[test]
    fn matches_postmark_past_many_regenerations() {
        let mut rng = PostmarkRng::new(42);
        (0..20_000).for_each(|_| {
            rng.next_u32();
        });
        let sizes: Vec<u32> = (0..5).map(|_| 500 + rng.below(9500)).collect();
        assert_eq!(sizes, [1390, 4732, 3583, 6507, 9640]);
    }
}
