//! `--verify`: every written block says where it belongs and which write
//! of that block it is, so a read can tell good data from corrupt, torn,
//! misplaced or stale (a lost write) data — vdbench's data validation, which
//! fio's checksums cannot do for a stale but self-consistent block.
//!
//! The file is divided into key blocks of the smallest transfer size. Each
//! has a write generation in memory (1 after the layout, +1 per write).
//! Every 512-byte sector written carries a 32-byte header and a pattern:
//!
//! | bytes  | field (little-endian)                                   |
//! |--------|---------------------------------------------------------|
//! | 0..8   | byte offset of this sector in the file                  |
//! | 8..12  | write generation of its key block                       |
//! | 12..16 | run tag (random per fsbench run)                        |
//! | 16..24 | write time, ns since the Unix epoch                     |
//! | 24..28 | checksum of bytes 0..24                                 |
//! | 28..32 | zero                                                    |
//! | 32..512| pseudo-random pattern seeded by (offset, generation, tag)|
//!
//! Reads check every sector; writes first read and check the blocks they
//! overwrite (vdbench's pre-read). A key block has at most one I/O in
//! flight, so its expected generation is always known.
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::SystemTime;

use super::job::SECTOR;
use crate::rng::{Random, WyRand};

const SECTOR_LEN: usize = SECTOR as usize;
const HEADER: usize = 32;
/// Marks a key block with an I/O in flight.
const BUSY: u32 = 1 << 31;
/// Marks a key block found bad: reported once, not checked again (vdbench).
const BAD: u32 = 1 << 30;
/// Generations count 1..=LAST_GENERATION, then start over at 1.
const LAST_GENERATION: u32 = BAD - 1;

/// Expected write generation of every key block.
pub struct KeyMap {
    key_block: u64,
    generations: Vec<AtomicU32>,
    tag: u32,
}

/// What is wrong with a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// A sector of zeros: never written, or its write was lost.
    Zeroed { sector: u64 },
    /// Header checksum or pattern mismatch: bit damage.
    Corrupt { sector: u64, byte: u64 },
    /// Data of another run or program.
    Foreign { sector: u64, tag: u32 },
    /// A self-consistent sector written for another offset.
    Misplaced { sector: u64, belongs_at: u64 },
    /// Every sector is an older write: the last write was lost.
    Stale { expected: u32, found: u32 },
    /// Newer than the last write fsbench made.
    Newer { expected: u32, found: u32 },
    /// Sectors of different writes in one block.
    Torn { expected: u32, found: Vec<u32> },
}

/// A block that failed verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadBlock {
    pub offset: u64,
    pub len: u64,
    pub damage: Damage,
}

impl fmt::Display for BadBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "verify: {}", self.describe())
    }
}

impl BadBlock {
    /// `bad block at offset N (L bytes): what is wrong`.
    pub fn describe(&self) -> String {
        format!(
            "bad block at offset {} ({} bytes): {}",
            self.offset, self.len, self.damage
        )
    }
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Damage::Zeroed { sector } => write!(
                f,
                "zeroed sector at offset {sector} (the data was never written or was lost)"
            ),
            Damage::Corrupt { sector, byte } => write!(
                f,
                "corrupt data in the sector at offset {sector}, first bad byte at offset {byte}"
            ),
            Damage::Foreign { sector, tag } => write!(
                f,
                "foreign data in the sector at offset {sector} (run tag {tag:#010x}: written by another run or program)"
            ),
            Damage::Misplaced { sector, belongs_at } => write!(
                f,
                "misplaced data in the sector at offset {sector}: it was written for offset {belongs_at}"
            ),
            Damage::Stale { expected, found } => write!(
                f,
                "stale data: write generation {found} where {expected} was written last (a lost write)"
            ),
            Damage::Newer { expected, found } => write!(
                f,
                "write generation {found} is newer than the last one written ({expected})"
            ),
            Damage::Torn { expected, found } => write!(
                f,
                "torn write: its sectors carry generations {found:?} (expected {expected} in all)"
            ),
        }
    }
}

/// The bad blocks a job found, up to its limit (vdbench's `data_errors`).
pub struct BadBlocks {
    limit: usize,
    found: Mutex<Vec<BadBlock>>,
}

impl BadBlocks {
    pub fn new(limit: u32) -> BadBlocks {
        BadBlocks {
            limit: limit as usize,
            found: Mutex::new(Vec::new()),
        }
    }

    /// Keeps `bad` (up to the limit); true once the limit is reached, when
    /// the job should stop.
    pub fn add(&self, bad: Vec<BadBlock>) -> bool {
        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        let room = self.limit.saturating_sub(found.len());
        found.extend(bad.into_iter().take(room));
        found.len() >= self.limit
    }

    pub fn into_found(self) -> Vec<BadBlock> {
        self.found.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

/// Key blocks of one I/O, marked busy until dropped (or committed).
pub struct Locked<'a> {
    keys: &'a KeyMap,
    first: usize,
    count: usize,
}

impl KeyMap {
    /// A map of `file_size` bytes in key blocks of `key_block` bytes, all at
    /// generation 1 (what `fill_initial` writes).
    pub fn new(file_size: u64, key_block: u64, tag: u32) -> KeyMap {
        let blocks = file_size.div_ceil(key_block) as usize;
        KeyMap {
            key_block,
            generations: (0..blocks).map(|_| AtomicU32::new(1)).collect(),
            tag,
        }
    }

    fn block_of(&self, offset: u64) -> usize {
        (offset / self.key_block) as usize
    }

    /// The layout's content of `buf` at `offset`: generation 1 everywhere.
    pub fn fill_initial(&self, buf: &mut [u8], offset: u64) {
        let now = now_ns();
        for (i, sector) in buf.chunks_exact_mut(SECTOR_LEN).enumerate() {
            write_sector(sector, offset + i as u64 * SECTOR, 1, self.tag, now);
        }
    }

    /// Marks the key blocks of `offset..offset+len` busy; None if another
    /// thread has one of them in flight (nothing stays marked then).
    pub fn try_lock(&self, offset: u64, len: u64) -> Option<Locked<'_>> {
        let first = self.block_of(offset);
        let count = len.div_ceil(self.key_block) as usize;
        for i in first..first + count {
            let cell = &self.generations[i];
            let current = cell.load(Ordering::Acquire);
            if current & BUSY != 0
                || cell
                    .compare_exchange(
                        current,
                        current | BUSY,
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    )
                    .is_err()
            {
                self.release(first, i - first);
                return None;
            }
        }
        Some(Locked {
            keys: self,
            first,
            count,
        })
    }

    /// Waits for the key blocks of an I/O (another thread holds them only
    /// for one I/O).
    pub fn lock(&self, offset: u64, len: u64) -> anyhow::Result<Locked<'_>> {
        loop {
            if let Some(locked) = self.try_lock(offset, len) {
                return Ok(locked);
            }
            crate::interrupt::check()?;
            std::thread::yield_now();
        }
    }

    fn release(&self, first: usize, count: usize) {
        for cell in &self.generations[first..first + count] {
            cell.fetch_and(!BUSY, Ordering::Release);
        }
    }

    fn expected(&self, block: usize) -> u32 {
        self.generations[block].load(Ordering::Acquire) & LAST_GENERATION
    }

    fn is_bad(&self, block: usize) -> bool {
        self.generations[block].load(Ordering::Acquire) & BAD != 0
    }

    /// Checks data read at `offset` against the expected generations and
    /// returns the key blocks newly found bad; those are marked, so each
    /// is reported once and not checked again.
    pub fn check(&self, buf: &[u8], offset: u64) -> Vec<BadBlock> {
        let mut bad = Vec::new();
        for (i, block) in buf.chunks(self.key_block as usize).enumerate() {
            let at = offset + i as u64 * self.key_block;
            let index = self.block_of(at);
            if self.is_bad(index) {
                continue;
            }
            if let Err(damage) = self.check_block(block, at, self.expected(index)) {
                self.generations[index].fetch_or(BAD, Ordering::AcqRel);
                bad.push(BadBlock {
                    offset: at,
                    len: block.len() as u64,
                    damage,
                });
            }
        }
        bad
    }

    fn check_block(&self, block: &[u8], offset: u64, expected: u32) -> Result<(), Damage> {
        let mut generations = Vec::new();
        for (i, sector) in block.chunks_exact(SECTOR_LEN).enumerate() {
            let at = offset + i as u64 * SECTOR;
            let found = read_sector(sector, at, self.tag)?;
            if !generations.contains(&found) {
                generations.push(found);
            }
        }
        match generations[..] {
            [found] if found == expected => Ok(()),
            [found] if older(found, expected) => Err(Damage::Stale { expected, found }),
            [found] => Err(Damage::Newer { expected, found }),
            _ => Err(Damage::Torn {
                expected,
                found: generations,
            }),
        }
    }
}

impl Locked<'_> {
    /// Fills `buf` (the whole I/O at `offset`) with the next generation of
    /// each of its key blocks.
    pub fn fill_next(&self, buf: &mut [u8], offset: u64) {
        let now = now_ns();
        let key = self.keys.key_block as usize;
        for (i, block) in buf.chunks_mut(key).enumerate() {
            let generation = next(self.keys.expected(self.first + i));
            let at = offset + (i * key) as u64;
            for (j, sector) in block.chunks_exact_mut(SECTOR_LEN).enumerate() {
                write_sector(
                    sector,
                    at + j as u64 * SECTOR,
                    generation,
                    self.keys.tag,
                    now,
                );
            }
        }
    }

    /// After a successful write: the blocks are now one generation newer.
    pub fn commit(self) {
        for cell in &self.keys.generations[self.first..self.first + self.count] {
            let current = cell.load(Ordering::Acquire);
            let generation = next(current & LAST_GENERATION);
            cell.store(generation | (current & BAD) | BUSY, Ordering::Release);
        }
        // Drop clears BUSY.
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        self.keys.release(self.first, self.count);
    }
}

fn next(generation: u32) -> u32 {
    if generation >= LAST_GENERATION {
        1
    } else {
        generation + 1
    }
}

/// `found` is an earlier generation than `expected` (within half the
/// cycle, so wrap-around reads right).
fn older(found: u32, expected: u32) -> bool {
    let behind = (expected + LAST_GENERATION - found) % LAST_GENERATION;
    behind > 0 && behind < LAST_GENERATION / 2
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

fn header_checksum(header: &[u8]) -> u32 {
    let mut hash = 0x811c_9dc5u32;
    for &byte in header {
        hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
    }
    hash
}

fn pattern_rng(offset: u64, generation: u32, tag: u32) -> WyRand {
    WyRand::for_stream(offset ^ (u64::from(tag) << 32), u64::from(generation))
}

fn write_sector(sector: &mut [u8], offset: u64, generation: u32, tag: u32, time_ns: u64) {
    sector[0..8].copy_from_slice(&offset.to_le_bytes());
    sector[8..12].copy_from_slice(&generation.to_le_bytes());
    sector[12..16].copy_from_slice(&tag.to_le_bytes());
    sector[16..24].copy_from_slice(&time_ns.to_le_bytes());
    let checksum = header_checksum(&sector[..24]);
    sector[24..28].copy_from_slice(&checksum.to_le_bytes());
    sector[28..32].fill(0);
    pattern_rng(offset, generation, tag).fill(&mut sector[HEADER..]);
}

fn field<const N: usize>(sector: &[u8], at: usize) -> [u8; N] {
    sector[at..at + N]
        .try_into()
        .expect("field within the sector")
}

/// The generation of a sector read at `offset`, or what is wrong with it.
fn read_sector(sector: &[u8], offset: u64, tag: u32) -> Result<u32, Damage> {
    if sector.iter().all(|&b| b == 0) {
        return Err(Damage::Zeroed { sector: offset });
    }
    let corrupt_at = |byte: usize| Damage::Corrupt {
        sector: offset,
        byte: offset + byte as u64,
    };
    if u32::from_le_bytes(field(sector, 24)) != header_checksum(&sector[..24]) {
        return Err(corrupt_at(0));
    }
    let written_for = u64::from_le_bytes(field(sector, 0));
    let generation = u32::from_le_bytes(field(sector, 8));
    let written_tag = u32::from_le_bytes(field(sector, 12));
    let mut expected = [0u8; SECTOR_LEN - HEADER];
    pattern_rng(written_for, generation, written_tag).fill(&mut expected);
    if let Some(byte) = sector[HEADER..]
        .iter()
        .zip(&expected)
        .position(|(a, b)| a != b)
    {
        return Err(corrupt_at(HEADER + byte));
    }
    if written_tag != tag {
        return Err(Damage::Foreign {
            sector: offset,
            tag: written_tag,
        });
    }
    if written_for != offset {
        return Err(Damage::Misplaced {
            sector: offset,
            belongs_at: written_for,
        });
    }
    Ok(generation)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: u64 = 4096;

    /// A 16-block "file" in memory, laid out, plus its map.
    fn setup() -> (KeyMap, Vec<u8>) {
        let keys = KeyMap::new(16 * KEY, KEY, 0xabcd);
        let mut file = vec![0u8; 16 * KEY as usize];
        keys.fill_initial(&mut file, 0);
        (keys, file)
    }

    fn write(keys: &KeyMap, file: &mut [u8], block: u64) {
        let at = (block * KEY) as usize;
        let locked = keys.lock(block * KEY, KEY).unwrap();
        locked.fill_next(&mut file[at..at + KEY as usize], block * KEY);
        locked.commit();
    }

    fn damage(keys: &KeyMap, file: &[u8], block: u64) -> Damage {
        let at = (block * KEY) as usize;
        let bad = keys.check(&file[at..at + KEY as usize], block * KEY);
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert_eq!(bad[0].offset, block * KEY);
        bad[0].damage.clone()
    }

    #[test]
    fn good_data_passes_and_generations_advance() {
        let (keys, mut file) = setup();
        assert!(keys.check(&file, 0).is_empty());
        write(&keys, &mut file, 3);
        write(&keys, &mut file, 3);
        assert!(keys.check(&file, 0).is_empty());
        assert_eq!(keys.expected(3), 3);
        assert_eq!(u32::from_le_bytes(field(&file[3 * 4096..], 8)), 3);
    }

    #[test]
    fn a_reverted_block_is_stale() {
        let (keys, mut file) = setup();
        write(&keys, &mut file, 5);
        let old = file[5 * 4096..6 * 4096].to_vec();
        write(&keys, &mut file, 5);
        file[5 * 4096..6 * 4096].copy_from_slice(&old);
        let bad = keys.check(&file, 0);
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert_eq!(
            bad[0].damage,
            Damage::Stale {
                expected: 3,
                found: 2
            }
        );
        let text = bad[0].to_string();
        assert!(
            text.contains("offset 20480") && text.contains("lost write"),
            "{text}"
        );
    }

    #[test]
    fn every_bad_block_is_reported_once() {
        let (keys, mut file) = setup();
        for block in [1, 7, 12] {
            file[block * 4096 + 100] ^= 1;
        }
        let offsets: Vec<u64> = keys.check(&file, 0).iter().map(|b| b.offset).collect();
        assert_eq!(offsets, [4096, 7 * 4096, 12 * 4096]);
        assert!(keys.check(&file, 0).is_empty(), "reported twice");
        write(&keys, &mut file, 7);
        assert_eq!(keys.expected(7), 2, "a bad block still counts its writes");
        assert!(keys.check(&file, 0).is_empty());
    }

    #[test]
    fn the_list_stops_at_the_limit() {
        let (keys, mut file) = setup();
        for block in 0..16 {
            file[block * 4096 + 100] ^= 1;
        }
        let found = BadBlocks::new(5);
        assert!(!found.add(keys.check(&file[..4 * 4096], 0)));
        assert!(found.add(keys.check(&file[4 * 4096..], 4 * 4096)));
        let offsets: Vec<u64> = found.into_found().iter().map(|b| b.offset).collect();
        assert_eq!(offsets, [0, 4096, 2 * 4096, 3 * 4096, 4 * 4096]);
    }

    #[test]
    fn flipped_bits_zeros_and_moved_blocks_are_named() {
        let (keys, mut file) = setup();
        file[2 * 4096 + 700] ^= 1;
        assert_eq!(
            damage(&keys, &file, 2),
            Damage::Corrupt {
                sector: 2 * 4096 + 512,
                byte: 2 * 4096 + 700
            }
        );
        file[4 * 4096 + 1024..4 * 4096 + 1536].fill(0);
        assert_eq!(
            damage(&keys, &file, 4),
            Damage::Zeroed {
                sector: 4 * 4096 + 1024
            }
        );
        let (left, right) = file.split_at_mut(9 * 4096);
        right[..4096].copy_from_slice(&left[7 * 4096..8 * 4096]);
        assert_eq!(
            damage(&keys, &file, 9),
            Damage::Misplaced {
                sector: 9 * 4096,
                belongs_at: 7 * 4096
            }
        );
    }

    #[test]
    fn half_old_half_new_is_torn_and_other_runs_are_foreign() {
        let (keys, mut file) = setup();
        let old = file[6 * 4096..7 * 4096].to_vec();
        write(&keys, &mut file, 6);
        file[6 * 4096 + 2048..7 * 4096].copy_from_slice(&old[2048..]);
        assert_eq!(
            damage(&keys, &file, 6),
            Damage::Torn {
                expected: 2,
                found: vec![2, 1]
            }
        );
        let other = KeyMap::new(16 * KEY, KEY, 0x1234);
        other.fill_initial(&mut file[..4096], 0);
        assert!(matches!(
            damage(&keys, &file, 0),
            Damage::Foreign { tag: 0x1234, .. }
        ));
    }

    #[test]
    fn busy_blocks_cannot_be_locked_twice() {
        let (keys, _) = setup();
        let held = keys.try_lock(4096, 8192).unwrap();
        assert!(keys.try_lock(8192, 4096).is_none());
        assert!(keys.try_lock(0, 4096).is_some());
        drop(held);
        assert!(keys.try_lock(8192, 4096).is_some());
        assert!(older(LAST_GENERATION, 1));
        assert!(!older(2, 1));
    }
}
