//! Crash states: where the power is cut in the recorded log, and what of
//! the writes before the cut the media holds, by one of three models of
//! the disk.
//!
//! - `flush`: at each flush, the disk lost everything written since the
//!   one before (its whole volatile cache): the states a file system that
//!   flushes correctly must survive.
//! - `cache`: seeded random cuts; everything before the last flush is on
//!   the media, and of the writes since (within the cache's size) any
//!   subset reached it, a multi-sector write torn at sector granularity.
//!   This is what exposes a missing barrier: a model that keeps only
//!   prefixes of the log finds nothing even then.
//! - `lying`: a disk that ignores flushes and destages its cache in order:
//!   at a cut, the last `cache` bytes written never reached the media.
//!
//! A state is the base image plus the chosen entries (`Extents`), built
//! in one pass over the log with the cuts in order: the part every later
//! cut shares is applied once, and each state adds its own few entries to
//! a copy of that map.

use crate::result::durability::Model;
use crate::rng::{Random, WyRand};
use crate::storage::recorder::blocklog::{Entry, Kind};
use crate::storage::recorder::extents::{Extents, Source};

/// The smallest sector a disk writes atomically (512n disks); the
/// default models 4 KiB physical sectors (512e and 4Kn disks).
pub const SECTOR: u64 = 512;

/// One crash state.
pub struct CrashState {
    /// The cut: the entries before this index had happened.
    pub cut: usize,
    /// The workload's operations marked before the cut.
    pub marked: usize,
    /// What the media holds.
    pub map: Extents,
    /// Writes before the cut that did not reach the media (whole or torn).
    pub dropped: u64,
    pub torn: u64,
}

/// Where the cuts go for `model`: at most `cuts` positions in the log of
/// `entries`, in order.
pub fn positions(entries: &[Entry], model: Model, cuts: usize, seed: u64) -> Vec<usize> {
    let mut rng = WyRand::for_stream(seed, 0xc075);
    // The flush model cuts at every flush and at the end; random points
    // fill the count (all of it for the others, and where a file system
    // flushed less often than there are cuts: never, without barriers).
    let mut at: std::collections::BTreeSet<usize> = match model {
        Model::Flush => flushes(entries).chain([entries.len()]).collect(),
        Model::Cache | Model::Lying => Default::default(),
    };
    while at.len() < cuts.min(entries.len()) {
        at.insert(1 + rng.below(entries.len() as u64) as usize);
    }
    let mut chosen = sample(at.into_iter().collect(), cuts, &mut rng);
    chosen.sort_unstable();
    chosen
}

fn flushes(entries: &[Entry]) -> impl Iterator<Item = usize> + '_ {
    entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == Kind::Flush)
        .map(|(i, _)| i)
}

/// `cuts` of `all`, chosen evenly by the seed (all of them when fewer).
fn sample(mut all: Vec<usize>, cuts: usize, rng: &mut WyRand) -> Vec<usize> {
    while all.len() > cuts {
        let gone = rng.below(all.len() as u64) as usize;
        all.swap_remove(gone);
    }
    all
}

/// Builds the states at `cuts` (in order) and gives each to `check`, one
/// at a time; `marks(i)` says how many operations the mark at entry `i`
/// completes (0 for other entries).
pub fn each_state(
    entries: &[Entry],
    cuts: &[usize],
    model: Model,
    (cache_bytes, sector): (u64, u64),
    seed: u64,
    marks: impl Fn(usize) -> usize,
    mut check: impl FnMut(CrashState) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut durable = Extents::default();
    let mut applied = 0;
    // What the entries before the cut say: operations marked, the last
    // flush (0: none yet).
    let (mut marked, mut last_flush, mut seen) = (0, 0, 0);
    for (n, &cut) in cuts.iter().enumerate() {
        for (i, entry) in entries.iter().enumerate().take(cut).skip(seen) {
            marked = marked.max(marks(i));
            if entry.kind == Kind::Flush {
                last_flush = i;
            }
        }
        seen = seen.max(cut);
        let window = window_start(entries, cut, cache_bytes);
        let (media, chance) = match model {
            // Everything before the last flush: the cache lost the rest.
            Model::Flush => (last_flush, 0.0),
            Model::Cache => (last_flush.max(window).min(cut), 0.5),
            Model::Lying => (window, 0.0),
        };
        while applied < media {
            apply(&mut durable, &entries[applied]);
            applied += 1;
        }
        let mut map = durable.clone();
        let mut rng = WyRand::for_stream(seed, n as u64 + 1);
        let (mut dropped, mut torn) = (0, 0);
        for entry in entries[applied..cut].iter().filter(|e| touches_media(e)) {
            if rng.unit() >= chance {
                dropped += 1;
                continue;
            }
            let sectors = entry.len.div_ceil(sector);
            match sectors > 1 && rng.below(4) == 0 {
                true => {
                    torn += 1;
                    for s in (0..sectors).filter(|_| rng.below(2) == 0) {
                        apply_part(&mut map, entry, s * sector, sector);
                    }
                }
                false => apply(&mut map, entry),
            }
        }
        check(CrashState {
            cut,
            marked,
            map,
            dropped,
            torn,
        })?;
    }
    Ok(())
}

/// The first entry of the last `cache_bytes` written before `cut`.
fn window_start(entries: &[Entry], cut: usize, cache_bytes: u64) -> usize {
    let mut held = 0;
    for i in (0..cut).rev() {
        if entries[i].kind == Kind::Write {
            held += entries[i].len;
            if held > cache_bytes {
                return i + 1;
            }
        }
    }
    0
}

fn touches_media(entry: &Entry) -> bool {
    matches!(entry.kind, Kind::Write | Kind::Zero)
}

fn apply(map: &mut Extents, entry: &Entry) {
    apply_part(map, entry, 0, entry.len);
}

/// Applies `len` bytes from `from` of a write or discard.
fn apply_part(map: &mut Extents, entry: &Entry, from: u64, len: u64) {
    let len = len.min(entry.len.saturating_sub(from));
    match entry.kind {
        Kind::Write => map.put(entry.offset + from, len, Source::Log(entry.data + from)),
        Kind::Zero => map.put(entry.offset + from, len, Source::Zero),
        Kind::Flush | Kind::Mark => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(offset: u64, len: u64, data: u64) -> Entry {
        Entry {
            kind: Kind::Write,
            offset,
            len,
            data,
        }
    }
    fn flush() -> Entry {
        Entry {
            kind: Kind::Flush,
            offset: 0,
            len: 0,
            data: 0,
        }
    }

    fn states(entries: &[Entry], model: Model, cuts: &[usize]) -> Vec<(usize, Extents, u64)> {
        let mut out = Vec::new();
        each_state(
            entries,
            cuts,
            model,
            (1 << 20, SECTOR),
            9,
            |_| 0,
            |s| {
                out.push((s.cut, s.map, s.dropped));
                Ok(())
            },
        )
        .unwrap();
        out
    }

    #[test]
    fn the_flush_model_keeps_exactly_what_was_flushed_before_the_last_flush() {
        let log = [
            write(0, 512, 100),
            flush(),
            write(512, 512, 200),
            flush(),
            write(1024, 512, 300),
        ];
        let cuts = positions(&log, Model::Flush, 10, 1);
        assert_eq!(positions(&log, Model::Flush, 3, 1), [1, 3, 5]);
        assert_eq!(cuts.len(), 5, "random points fill the count");
        let cuts = [1, 3, 5];
        let got = states(&log, Model::Flush, &cuts);
        let mut first = Extents::default();
        first.put(0, 512, Source::Log(100));
        // Cut before the first flush: nothing on the media.
        assert_eq!(got[0].1, Extents::default());
        // Cut before the second flush: what the first covered.
        assert_eq!(got[1].1, first);
        let mut second = first.clone();
        second.put(512, 512, Source::Log(200));
        assert_eq!(got[2].1, second);
        assert_eq!(got[2].2, 1, "the write after the last flush is dropped");
    }

    #[test]
    fn the_cache_model_keeps_flushed_writes_and_some_of_the_rest() {
        let mut log = vec![write(0, 4096, 0), flush()];
        log.extend((1..200).map(|i| write(i * 4096, 4096, i * 4096)));
        let got = states(&log, Model::Cache, &[log.len()]);
        let (_, map, dropped) = &got[0];
        let mut probe = map.clone();
        // The flushed write is there: putting it again changes nothing.
        probe.put(0, 4096, Source::Log(0));
        assert_eq!(&probe, map);
        assert!(
            *dropped > 50 && *dropped < 150,
            "about half dropped: {dropped}"
        );
    }

    #[test]
    fn the_lying_disk_loses_the_last_cache_full_whatever_the_flushes() {
        let mut log = Vec::new();
        for i in 0..64u64 {
            log.push(write(i * 65536, 65536, i * 65536));
            log.push(flush());
        }
        let got = states(&log, Model::Lying, &[log.len()]);
        // 1 MiB of cache: the last 16 writes of 64 KiB are gone.
        assert_eq!(got[0].2, 16);
        assert_eq!(window_start(&log, log.len(), 1 << 20), log.len() - 33);
    }
}
