//! fio's random numbers: its 32-bit combined Tausworthe generator
//! (L'Ecuyer's taus88, fio's default `random_generator=tausworthe`), its
//! seeding, and the seeds of a job's generators, so a job from a fio job
//! file draws the very numbers fio draws for it.

/// fio's fixed seed of the offset generator under `randrepeat=1`.
const FIO_RANDSEED: u64 = 0xb189_9bed;

/// What fio mixes into each seed.
const SEED_MIX: u64 = 0x9e37_0001;

/// Which of a job's seeds seeds what (fio's `FIO_RAND_*_OFF` order).
#[derive(Debug, Clone, Copy)]
pub enum Purpose {
    ReadSizes = 0,
    WriteSizes = 1,
    Mix = 4,
    File = 5,
    Block = 6,
    FileSize = 7,
}

/// How many seeds a fio job has.
const SEEDS: usize = 21;

/// The seeds of one fio job (thread), as fio's `setup_random_seeds` makes
/// them from `randseed`, the job's thread number (1 for the first job of
/// the run, counting every clone) and `randrepeat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Seeds {
    pub rand_seed: u64,
    pub thread: u64,
    pub repeatable: bool,
}

impl Seeds {
    pub fn of(&self, purpose: Purpose) -> u64 {
        // randrepeat=1 fixes the offsets' seed, whatever randseed says.
        if let (Purpose::Block, true) = (purpose, self.repeatable) {
            return FIO_RANDSEED.wrapping_mul(self.thread);
        }
        let index = purpose as u64;
        let mut seed = self.rand_seed;
        for _ in 0..4 + index {
            seed = seed.wrapping_mul(SEED_MIX);
        }
        debug_assert!((index as usize) < SEEDS);
        seed.wrapping_mul(self.thread).wrapping_add(index)
    }

    /// A generator seeded for `purpose`.
    pub fn generator(&self, purpose: Purpose) -> Taus88 {
        Taus88::new(self.of(purpose))
    }
}

/// fio's taus88 state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taus88 {
    s1: u32,
    s2: u32,
    s3: u32,
}

impl Taus88 {
    /// Seeded as fio seeds it (`__init_rand32`: the seed's low 32 bits,
    /// an LCG for the three words, six draws thrown away).
    pub fn new(seed: u64) -> Taus88 {
        let seed = seed as u32;
        let lcg = |x: u32| x.wrapping_mul(69069) ^ seed;
        let floor = |x: u32, m: u32| if x < m { x + m } else { x };
        // fio writes the start value as (2^31) + (2^17) + (2^7): in C, ^
        // is exclusive or, so it is 29 + 19 + 5.
        let s1 = floor(lcg(53), 1);
        let s2 = floor(lcg(s1), 7);
        let s3 = floor(lcg(s2), 15);
        let mut state = Taus88 { s1, s2, s3 };
        for _ in 0..6 {
            state.draw();
        }
        state
    }

    #[inline]
    pub fn draw(&mut self) -> u32 {
        let step = |s: u32, a: u32, b: u32, c: u32, d: u32| ((s & c) << d) ^ (((s << a) ^ s) >> b);
        self.s1 = step(self.s1, 13, 19, 0xffff_fffe, 12);
        self.s2 = step(self.s2, 2, 25, 0xffff_fff8, 4);
        self.s3 = step(self.s3, 3, 11, 0xffff_fff0, 17);
        self.s1 ^ self.s2 ^ self.s3
    }

    /// `n × r / 2^32` for the next value r: fio's way of scaling a draw
    /// into `0..n`.
    #[inline]
    pub fn scaled(&mut self, n: u64) -> u64 {
        (n as f64 * (f64::from(self.draw()) / 4_294_967_296.0)) as u64
    }

    /// Uniform in `1..=100` (fio's `rand_between(1, 100)`).
    #[inline]
    pub fn percent(&mut self) -> u32 {
        1 + self.scaled(100) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first values after seeding are fio's: fio 3.33's lib/rand.c
    /// (`__init_rand32`, `__rand32`), built and run, gives these.
    #[test]
    fn seeded_as_fio_seeds_it() {
        let first = |seed: u64| {
            let mut t = Taus88::new(seed);
            [t.draw(), t.draw(), t.draw()]
        };
        assert_eq!(first(1), [2634262343, 4072702554, 2367269570]);
        assert_eq!(first(0xb189_9bed), [259043585, 3179521932, 3621444214]);
        assert_eq!(first(0xb189_9bed * 2), [1094293889, 780151754, 2579992399]);
        // Only the low 32 bits seed it, as fio's (unsigned int) cast.
        assert_eq!(
            first(0x0123_4567_89ab_cdef),
            [3232162688, 3696876065, 4229022001]
        );
        let mut t = Taus88::new(7);
        assert!((0..10_000).all(|_| (1..=100).contains(&t.percent())));
    }

    /// The seeds: randrepeat=1 fixes the offsets' seed at fio's constant
    /// times the thread number; the others follow randseed.
    #[test]
    fn seeds_follow_randseed_and_randrepeat() {
        let fixed = Seeds {
            rand_seed: 0x89,
            thread: 2,
            repeatable: true,
        };
        assert_eq!(fixed.of(Purpose::Block), 0xb189_9bed * 2);
        let other = Seeds {
            rand_seed: 1,
            ..fixed
        };
        assert_eq!(other.of(Purpose::Block), fixed.of(Purpose::Block));
        assert_ne!(other.of(Purpose::Mix), fixed.of(Purpose::Mix));
        let mut seed = 0x89u64;
        for _ in 0..4 {
            seed = seed.wrapping_mul(SEED_MIX);
        }
        assert_eq!(fixed.of(Purpose::ReadSizes), seed.wrapping_mul(2));
        let fresh = Seeds {
            repeatable: false,
            ..fixed
        };
        assert_ne!(fresh.of(Purpose::Block), fixed.of(Purpose::Block));
    }
}
