//! File names of the file tests, held compactly: a million names must fit
//! in a few tens of MiB, so they live in one byte arena, NUL-terminated so
//! syscalls take them without copying.
use std::ffi::CStr;

use super::rng::RandomSource;

/// Characters of the random part of a name (`rand() % 62`).
const NAME_CHARS: &[u8; 62] = b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
/// The random part is 0..=12 characters long (`rand() % 13`).
const MAX_RANDOM_CHARS: u64 = 13;
/// The index part: 10 hex digits.
const INDEX_DIGITS: usize = 10;

/// Bytes per generated name: 10 hex digits, at most 12 random characters
/// and the NUL fit in 23.
const SLOT: usize = 24;

/// The generated names of one round, in fixed slots, so looking one up in
/// random order touches a single cache line (as bonnie++'s own array does);
/// with an offset table it would be two.
pub struct NameTable {
    bytes: Vec<u8>,
}

/// Names read back from a directory: any length, packed.
#[derive(Default)]
pub struct NameArena {
    bytes: Vec<u8>,
    /// Offset one past each name's NUL.
    ends: Vec<u32>,
}

/// Which end of the name the index goes: sequential names sort in creation
/// order, random ones land anywhere in a sorted or hashed directory.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Sequential,
    Random,
}

impl NameTable {
    /// bonnie++'s names: the index (from `first`: 0 but for a rank in a
    /// shared directory) as 10 hex digits before (sequential) or after
    /// (random) 0–12 random alphanumerics.
    pub fn generate(first: u64, count: u64, order: Order, random: &mut RandomSource) -> Self {
        let mut table = NameTable {
            bytes: Vec::with_capacity(count as usize * SLOT),
        };
        let mut suffix = Vec::with_capacity(MAX_RANDOM_CHARS as usize);
        for index in first..first + count {
            suffix.clear();
            let len = random.below(MAX_RANDOM_CHARS);
            for _ in 0..len {
                suffix.push(NAME_CHARS[random.below(NAME_CHARS.len() as u64) as usize]);
            }
            let digits = format!("{index:0INDEX_DIGITS$x}");
            let name = match order {
                Order::Sequential => [digits.as_bytes(), &suffix].concat(),
                Order::Random => [&suffix, digits.as_bytes()].concat(),
            };
            table.bytes.extend_from_slice(&name);
            table.bytes.resize(table.bytes.len() + SLOT - name.len(), 0);
        }
        table
    }

    pub fn len(&self) -> usize {
        self.bytes.len() / SLOT
    }

    pub fn get(&self, index: usize) -> &CStr {
        let slot = &self.bytes[index * SLOT..(index + 1) * SLOT];
        CStr::from_bytes_until_nul(slot).expect("every slot ends with NUL padding")
    }

    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = &CStr> {
        (0..self.len()).map(|i| self.get(i))
    }
}

impl NameArena {
    pub fn push(&mut self, name: &[u8]) {
        self.bytes.extend_from_slice(name);
        self.bytes.push(0);
        self.ends.push(self.bytes.len() as u32);
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn get(&self, index: usize) -> &CStr {
        let start = if index == 0 {
            0
        } else {
            self.ends[index - 1] as usize
        };
        let end = self.ends[index] as usize;
        CStr::from_bytes_with_nul(&self.bytes[start..end]).expect("arena names hold one NUL")
    }

    pub fn iter(&self) -> impl Iterator<Item = &CStr> {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// Which names in a directory are this run's files (never those starting
/// with `.`: what file systems add there is foreign).
#[derive(Clone, Copy)]
pub enum Owner {
    /// Every other name: the directory is ours alone.
    All,
    /// Sequential names whose index is in `first..first + count`: one
    /// rank's files in a directory the ranks share.
    Range { first: u64, count: u64 },
}

impl Owner {
    pub fn is_shared(self) -> bool {
        matches!(self, Owner::Range { .. })
    }

    pub fn owns(self, name: &[u8]) -> bool {
        if name.first() == Some(&b'.') {
            return false;
        }
        match self {
            Owner::All => true,
            Owner::Range { first, count } => {
                sequential_index(name).is_some_and(|i| (first..first + count).contains(&i))
            }
        }
    }
}

/// The index of a sequential-order name (its leading hex digits).
fn sequential_index(name: &[u8]) -> Option<u64> {
    let digits = std::str::from_utf8(name.get(..INDEX_DIGITS)?).ok()?;
    u64::from_str_radix(digits, 16).ok()
}

/// Which of `dirs` directories file `index` of `total` goes in: contiguous,
/// even blocks (bonnie++'s own split is off by one and can leave the last
/// directory empty).
pub fn dir_of(index: u64, total: u64, dirs: u64) -> usize {
    let per_dir = total.div_ceil(dirs).max(1);
    (index / per_dir) as usize
}

/// bonnie++'s shuffle: swap each position with a random one (`rand() % n`).
pub fn shuffle(order: &mut [u32], random: &mut RandomSource) {
    let n = order.len() as u64;
    for i in 0..order.len() {
        let j = random.below(n) as usize;
        order.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_index_in_hex_at_the_right_end() {
        let mut random = RandomSource::seeded(7);
        let seq = NameTable::generate(0, 300, Order::Sequential, &mut random);
        let ran = NameTable::generate(0, 300, Order::Random, &mut random);
        assert_eq!(seq.len(), 300);
        let name = seq.get(255).to_str().unwrap();
        assert!(name.starts_with("00000000ff"), "{name}");
        assert!(name.len() <= 22);
        let name = ran.get(256).to_str().unwrap();
        assert!(name.ends_with("0000000100"), "{name}");
        let unique: std::collections::HashSet<_> = seq.iter().collect();
        assert_eq!(unique.len(), 300);
    }

    /// Names bonnie++ 2.00a created with `-s 0 -n 1 -z 1` (seen with strace):
    /// the same seed gives the same files, so both tools do the same work.
    #[test]
    fn matches_bonnie_names_for_seed_1() {
        let mut random = RandomSource::seeded(1);
        let seq = NameTable::generate(0, 1024, Order::Sequential, &mut random);
        let seq_first: Vec<_> = seq.iter().take(3).map(|n| n.to_str().unwrap()).collect();
        assert_eq!(
            seq_first,
            ["0000000000", "0000000001dhtNCmrRY", "0000000002SBZ"]
        );
        let ran = NameTable::generate(0, 1024, Order::Random, &mut random);
        let ran_first: Vec<_> = ran.iter().take(3).map(|n| n.to_str().unwrap()).collect();
        assert_eq!(
            ran_first,
            ["A0000000000", "RBTt0000000001", "XAL0000000002"]
        );
    }

    #[test]
    fn a_rank_owns_its_range_of_a_shared_directory() {
        let rank1 =
            NameTable::generate(1024, 1024, Order::Sequential, &mut RandomSource::seeded(1));
        let mine = Owner::Range {
            first: 1024,
            count: 1024,
        };
        let rank0s = Owner::Range {
            first: 0,
            count: 1024,
        };
        assert!(rank1.iter().all(|n| mine.owns(n.to_bytes())));
        assert!(!rank1.iter().any(|n| rank0s.owns(n.to_bytes())));
        for foreign in [&b".nfs0001"[..], b"._0000000400", b"x", b"zzzzzzzzzzzz"] {
            assert!(!mine.owns(foreign), "{foreign:?}");
        }
        assert!(Owner::All.owns(b"x") && !Owner::All.owns(b".DS_Store"));
    }

    #[test]
    fn same_seed_same_names() {
        let a = NameTable::generate(0, 50, Order::Random, &mut RandomSource::seeded(1));
        let b = NameTable::generate(0, 50, Order::Random, &mut RandomSource::seeded(1));
        assert!(a.iter().eq(b.iter()));
    }

    #[test]
    fn directories_split_evenly() {
        let counts = (0..1024).fold([0; 2], |mut c, i| {
            c[dir_of(i, 1024, 2)] += 1;
            c
        });
        assert_eq!(counts, [512, 512]);
        assert_eq!(dir_of(9, 10, 3), 2);
        assert_eq!(dir_of(0, 1, 1), 0);
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut order: Vec<u32> = (0..1000).collect();
        shuffle(&mut order, &mut RandomSource::seeded(3));
        assert_ne!(order, (0..1000).collect::<Vec<_>>());
        order.sort_unstable();
        assert_eq!(order, (0..1000).collect::<Vec<_>>());
    }
}
