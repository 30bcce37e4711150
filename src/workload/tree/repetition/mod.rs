//! One repetition of the tree workload: its dataset (generated or the
//! user's), the caches dropped (or not) before each operation, and each
//! operation timed into metrics.
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;

use super::dataset::Plan;
use super::ops::{Find, Read, StatAll, Tally};
use super::{
    DIR_MODE, Op, Source, TreeWorkload, command, create_file, cstring, dataset, make_dir,
    open_dir_path, open_file, ops, parallel, tarball, walk,
};
use crate::measure::phase::{Measured, Rate};
use crate::measure::{PhaseClock, PhaseTiming};
use crate::result::{Metric, WorkloadResult};
use crate::storage::env::in_memory;
use crate::storage::just_closed;
use crate::workload::space::{Growth, Used};
use crate::workload::synclog::SyncLog;

mod cold;
use crate::workload::RunContext;
use cold::Caches;

/// The file system's use before and after an operation (`Used::settled`);
/// None when either reading failed.
type Readings = Option<(Used, Used)>;

/// What an operation reads of what was on the file system before it, for
/// its flags and its device evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reads {
    /// Nothing: it writes a file of its own (stream write).
    Nothing,
    /// The entries it removes, their metadata alone (delete): no data
    /// whose size says whether it fits in the page cache.
    Metadata,
    /// The files it walks: their metadata, and the tally's bytes (find
    /// and stat read none).
    Files,
}

/// What an operation wrote through the page cache, for its flags and its
/// device evidence.
#[derive(Debug, Clone, Copy)]
enum Wrote {
    Nothing,
    /// Written and synced inside the timed window.
    Synced(u64),
    /// Written and left in the page cache (`--no-end-sync`).
    Unsynced(u64),
}

/// One repetition: its directory `r<N>` in the scratch directory, the
/// dataset in `r<N>/src` (or the user's directory), the outputs next to it.
pub(super) struct Repetition<'w, 'c> {
    work: &'w TreeWorkload,
    ctx: &'c RunContext<'c>,
    result: &'w mut WorkloadResult,
    dir: OwnedFd,
    dir_name: String,
    src: OwnedFd,
    src_path: PathBuf,
    caches: Caches,
    /// How long the last operation's closing sync took (`end_sync`),
    /// taken by `wrote`.
    sync_s: Option<f64>,
    /// Caches were made cold for the next timed operation already: before
    /// it opened its outputs (a remount needs them closed).
    made_cold: bool,
    /// The tree or the data the read operations see lives in RAM.
    memory_backed: bool,
    /// Every read of the dataset is counted: it lives on the target's file
    /// system, whose block devices' counters see its metadata too (a
    /// network file system's leave out what is not data).
    reads_counted: bool,
    /// The sync log of `--sync-log`, and the time spent in the operations
    /// that write it (copy, untar, delete), from the first one's start.
    log: Option<SyncLog>,
    logging: Option<PhaseTiming>,
}

impl<'w, 'c> Repetition<'w, 'c> {
    pub(super) fn start(
        work: &'w TreeWorkload,
        ctx: &'c RunContext<'c>,
        result: &'w mut WorkloadResult,
    ) -> anyhow::Result<Self> {
        let scratch = ctx.scratch.dir();
        let dir_name = format!("r{}", ctx.repetition);
        let dir = make_dir(scratch, &dir_name)?;
        let caches = Caches::asked(ctx.cold, work.config.drop_caches);
        let (src, src_path) = match (&work.plan, &work.config.source) {
            (Some(plan), Source::Dataset { seed, .. }) => {
                let end_sync = work.config.end_sync;
                let src = generate(plan, *seed, end_sync, dir.as_fd(), ctx, result)?;
                (src, ctx.scratch.path().join(&dir_name).join("src"))
            }
            (_, Source::Dir(path)) => (open_dir_path(path)?, path.clone()),
            (None, Source::Dataset { .. }) => unreachable!("datasets are planned in new()"),
        };
        let memory_backed = in_memory(dir.as_fd()) || in_memory(src.as_fd());
        let reads_counted = !memory_backed
            && same_file_system(dir.as_fd(), src.as_fd())?
            && ctx.env.is_some_and(on_block_devices);
        let log = work.config.sync_log.as_ref();
        let log = log
            .map(|config| SyncLog::open(config, ctx.scratch, ctx.repetition))
            .transpose()?;
        Ok(Repetition {
            work,
            ctx,
            result,
            dir,
            dir_name,
            src,
            src_path,
            caches,
            made_cold: false,
            sync_s: None,
            memory_backed,
            reads_counted,
            log,
            logging: None,
        })
    }

    pub(super) fn run_ops(&mut self) -> anyhow::Result<()> {
        for &op in &self.work.config.ops {
            match op {
                Op::Find => self.walk_only("find", Find::default, |f| &f.tally)?,
                Op::Stat => self.walk_only("stat", StatAll::default, |s| &s.tally)?,
                Op::Read => self.read()?,
                Op::Concat => self.concat()?,
                Op::Untar => self.untar()?,
                Op::Copy => self.copy()?,
                Op::Cmd => self.commands()?,
                Op::Stream => self.stream()?,
                Op::Delete => self.delete()?,
            }
        }
        Ok(())
    }

    /// Records how caches were handled and removes the repetition's
    /// directory (unless `--keep`).
    pub(super) fn finish(mut self) -> anyhow::Result<()> {
        if let Some(log) = self.log.take() {
            let logging = self.logging.unwrap_or_else(PhaseTiming::zero);
            // Under MPI the log's rates are aggregated over this span.
            crate::scale::note_span(&logging);
            log.finish()?.add_to(self.result, logging);
        }
        let caches = self.caches.described();
        if let Some(params) = self.result.params.as_object_mut() {
            params.insert("caches".into(), caches.clone().into());
            params.insert("caches_dropped".into(), self.caches.emptied().into());
        }
        self.result.notes.push(format!("caches: {caches}"));
        if self.memory_backed {
            self.result
                .notes
                .push("the data lives in RAM (tmpfs/ramfs): every read is a memory read".into());
        }
        if !self.work.config.keep_outputs {
            let name = cstring(&self.dir_name)?;
            drop(self.src);
            drop(self.dir);
            ops::delete_tree(self.ctx.scratch.dir(), &name)
                .context("cannot remove the repetition's data")?;
        }
        Ok(())
    }

    /// Times `work` as operation `name` after dropping caches.
    fn timed<T>(
        &mut self,
        name: &str,
        work: impl FnOnce(&mut Self) -> anyhow::Result<T>,
    ) -> anyhow::Result<(T, PhaseTiming)> {
        let (outcome, timing, _) = self.timed_space(name, false, work)?;
        Ok((outcome, timing))
    }

    /// `timed`, and with `space` the file system's use read before (after
    /// the sync that precedes the operation) and after (synced, once the
    /// timed window is over): the operation's `Growth` is then made from
    /// them by `laid_down`, None when either reading failed.
    fn timed_space<T>(
        &mut self,
        name: &str,
        space: bool,
        work: impl FnOnce(&mut Self) -> anyhow::Result<T>,
    ) -> anyhow::Result<(T, PhaseTiming, Readings)> {
        if !std::mem::take(&mut self.made_cold) {
            self.make_cold()?;
        }
        self.sync_s = None;
        let before = match space {
            true => Used::settled(self.dir.as_fd())?,
            false => None,
        };
        self.ctx.progress.start(name);
        let (outcome, timing) = crate::scale::phase(
            |(_, timing)| *timing,
            || {
                let clock = PhaseClock::start();
                let outcome = work(self).with_context(|| name.to_string())?;
                Ok((outcome, clock.stop()))
            },
        )?;
        self.ctx.progress.done(timing.elapsed.as_secs_f64());
        let readings = match space {
            true => before.zip(Used::settled(self.dir.as_fd())?),
            false => None,
        };
        Ok((outcome, timing, readings))
    }

    /// `timed` for an operation that writes the sync log: it ends by
    /// committing its last records (so that sync is in its time), and its
    /// time counts toward the log's rates.
    fn timed_logging<T>(
        &mut self,
        name: &str,
        space: bool,
        work: impl FnOnce(&mut Self) -> anyhow::Result<T>,
    ) -> anyhow::Result<(T, PhaseTiming, Readings)> {
        let (outcome, timing, readings) = self.timed_space(name, space, |rep| {
            let outcome = work(rep)?;
            rep.log.as_ref().map_or(Ok(()), SyncLog::commit)?;
            Ok(outcome)
        })?;
        self.logging = Some(self.logging.map_or(timing, |sum| sum.plus(timing)));
        Ok((outcome, timing, readings))
    }

    /// What operation `name` laid down, from its `readings`: its space
    /// metrics (`workload::space`) after its others, and the readings in
    /// the result's parameters (`space.<name>`).
    fn laid_down(
        &mut self,
        name: &str,
        readings: Readings,
        logical_bytes: u64,
        entries: u64,
        timing: &PhaseTiming,
    ) {
        record_space(self.result, name, readings, logical_bytes, entries, timing);
    }

    /// Whether an operation's speed may come from the page cache: it
    /// `reads` files, the caches were not emptied before it (or the target
    /// lives in RAM), and the dataset fits in RAM.
    fn fits_in_page_cache(&self, reads: Reads) -> bool {
        let cached = self.memory_backed || !self.caches.emptied();
        reads == Reads::Files && cached && self.work.description.bytes < self.work.ram_bytes
    }

    /// Whether an operation that `reads` what was there (its metadata at
    /// least) must read from the devices: the caches were emptied before
    /// it, and the devices count its reads (`Measured::meant_cold`).
    fn meant_cold(&self, reads: Reads) -> bool {
        reads != Reads::Nothing && self.caches.emptied() && self.reads_counted
    }

    /// An operation's metrics: what it read (`reads`; of files, the
    /// tally's bytes) and what it wrote; a synced write's closing sync is a detail of its
    /// own (`<name>_sync_s`: the time minus it is the page cache's).
    fn record(
        &mut self,
        name: &str,
        tally: &Tally,
        timing: PhaseTiming,
        units: Units,
        reads: Reads,
        wrote: Wrote,
    ) {
        let read = if reads == Reads::Files {
            tally.bytes
        } else {
            0
        };
        let (written, unsynced) = match wrote {
            Wrote::Nothing => (0, None),
            Wrote::Synced(bytes) => (bytes, None),
            Wrote::Unsynced(bytes) => (bytes, Some(bytes)),
        };
        let measured = Measured {
            fits_in_page_cache: self.fits_in_page_cache(reads),
            ..Measured::over(&timing)
        }
        .moved(read, written)
        .left_dirty(unsynced)
        .reached_device(matches!(wrote, Wrote::Synced(_)), false)
        .cold(self.meant_cold(reads));
        self.result
            .metrics
            .extend(metrics(name, tally, &measured, units));
        if let (Wrote::Synced(_), Some(sync_s)) = (wrote, self.sync_s.take()) {
            self.result
                .metrics
                .push(measured.part_seconds(format!("{name}_sync_s"), sync_s));
        }
    }

    /// Inside an operation's timed window, once it has written: syncs the
    /// file system unless `--no-end-sync`, keeping how long that took.
    fn end_sync(&mut self) -> anyhow::Result<()> {
        if self.work.config.end_sync {
            self.sync_s = Some(timed_syncfs(self.dir.as_fd())?);
        }
        Ok(())
    }

    /// `bytes` written by the operation that just ended: synced if its
    /// closing sync ran.
    fn wrote(&self, bytes: u64) -> Wrote {
        match self.sync_s {
            Some(_) => Wrote::Synced(bytes),
            None => Wrote::Unsynced(bytes),
        }
    }

    /// find or stat: a walk of the dataset that reads no file data.
    fn walk_only<V: parallel::Parallel>(
        &mut self,
        name: &str,
        make: impl Fn() -> V,
        tally: impl Fn(&V) -> &Tally,
    ) -> anyhow::Result<()> {
        let threads = self.work.walkers();
        let (walked, timing) = self.timed(name, |rep| {
            ops::tally_walk(rep.src.as_fd(), threads, &make, &tally)
        })?;
        self.record(
            name,
            &walked,
            timing,
            Units::Entries,
            Reads::Files,
            Wrote::Nothing,
        );
        Ok(())
    }

    fn read(&mut self) -> anyhow::Result<()> {
        let threads = self.work.walkers();
        let (read, timing) = self.timed("read", |rep| {
            ops::tally_walk(rep.src.as_fd(), threads, || Read::new(None), |r| &r.tally)
        })?;
        self.record(
            "read",
            &read,
            timing,
            Units::Both,
            Reads::Files,
            Wrote::Nothing,
        );
        Ok(())
    }

    fn concat(&mut self) -> anyhow::Result<()> {
        self.make_cold()?;
        let out = create_file(self.dir.as_fd(), "concat.out")?;
        let (tally, timing, readings) = self.timed_space("concat", true, |rep| {
            let mut read = Read::new(Some(out.as_fd()));
            walk::walk(rep.src.as_fd(), &mut read)?;
            rep.end_sync()?;
            Ok(read.tally)
        })?;
        let size = rustix::fs::fstat(&out)?.st_size as u64;
        if size != tally.bytes {
            anyhow::bail!(
                "concat: the output has {size} bytes, the files {}",
                tally.bytes
            );
        }
        drop(out);
        let wrote = self.wrote(size);
        self.record("concat", &tally, timing, Units::Both, Reads::Files, wrote);
        // One file, made before the operation: its bytes, no entries.
        self.laid_down("concat", readings, size, 0, &timing);
        self.remove_output("concat.out")
    }

    fn untar(&mut self) -> anyhow::Result<()> {
        self.ctx
            .progress
            .start("preparing untar (tar of the dataset)");
        let out = create_file(self.dir.as_fd(), "tree.tar")?;
        tarball::create(self.src.as_fd(), out).context("cannot create the tar")?;
        self.ctx.progress.done(0.0);
        self.make_cold()?;
        let target = make_dir(self.dir.as_fd(), "untar")?;
        let (tally, timing, readings) = self.timed_logging("untar", true, |rep| {
            let tar = open_file(rep.dir.as_fd(), "tree.tar")?;
            let tally = tarball::extract(tar, target.as_fd(), rep.log.as_ref())?;
            rep.end_sync()?;
            Ok(tally)
        })?;
        drop(target);
        let wrote = self.wrote(tally.bytes);
        self.record("untar", &tally, timing, Units::Both, Reads::Files, wrote);
        self.laid_down("untar", readings, tally.bytes, tally.entries, &timing);
        self.remove_output("tree.tar")?;
        self.remove_output("untar")
    }

    /// Copies the dataset to `copy`; `measured` when it is the copy
    /// operation itself (it then writes the sync log), not delete's
    /// untimed preparation.
    fn copy_to_copy(
        &mut self,
        measured: bool,
    ) -> anyhow::Result<(ops::Copied, PhaseTiming, Readings)> {
        self.make_cold()?;
        let dst = make_dir(self.dir.as_fd(), "copy")?;
        let threads = self.work.walkers();
        let copy = |rep: &mut Self| {
            let log = rep.log.as_ref().filter(|_| measured);
            let copied = ops::copy_tree(rep.src.as_fd(), dst.as_fd(), DIR_MODE, threads, log)?;
            rep.end_sync()?;
            Ok(copied)
        };
        match measured {
            true => self.timed_logging("copy", true, copy),
            false => self.timed_space("copy", false, copy),
        }
    }

    fn copy(&mut self) -> anyhow::Result<()> {
        let (copied, timing, readings) = self.copy_to_copy(true)?;
        let wrote = self.wrote(copied.tally.bytes);
        self.record(
            "copy",
            &copied.tally,
            timing,
            Units::Both,
            Reads::Files,
            wrote,
        );
        let (bytes, entries) = (copied.tally.bytes, copied.tally.entries);
        self.laid_down("copy", readings, bytes, entries, &timing);
        if copied.skipped > 0 {
            self.result.notes.push(format!(
                "copy: {} special files (fifos, sockets, devices) skipped",
                copied.skipped
            ));
        }
        if let Some(why) = copied.xattrs_off {
            self.result.notes.push(format!("copy: {why}"));
        }
        if !self.work.has(Op::Delete) {
            self.remove_output("copy")?;
        }
        Ok(())
    }

    fn commands(&mut self) -> anyhow::Result<()> {
        for (i, template) in self.work.config.commands.iter().enumerate() {
            let name = format!("cmd{}", i + 1);
            make_dir(self.dir.as_fd(), &name)?;
            let dst = self.ctx.scratch.path().join(&self.dir_name).join(&name);
            let line = template.render(&self.src_path, &dst);
            let ((), timing) = self.timed(&name, |_| command::run(&line))?;
            let tally = Tally {
                entries: self.work.description.entries,
                bytes: self.work.description.bytes,
                ..Default::default()
            };
            // What a command wrote, and whether it synced, is its own affair.
            self.record(
                &name,
                &tally,
                timing,
                Units::Both,
                Reads::Files,
                Wrote::Nothing,
            );
            self.remove_output(&name)?;
        }
        Ok(())
    }

    /// Disk Speed Test: one large file written sequentially in big blocks
    /// (fsync included), then read back; one latency sample per block.
    fn stream(&mut self) -> anyhow::Result<()> {
        let bytes = self.work.stream_bytes();
        self.make_cold()?;
        let out = create_file(self.dir.as_fd(), "stream.dat")?;
        let pool = dataset::data_pool(0);
        let (tally, timing) = self.timed("stream write", |_| {
            let tally = write_blocks(out.as_fd(), &pool, bytes)?;
            // As fio's end_fsync: in the elapsed time, not in a block's latency.
            rustix::fs::fsync(&out).context("fsync failed")?;
            Ok(tally)
        })?;
        drop(out);
        let wrote = Wrote::Synced(tally.bytes);
        self.record(
            "stream_write",
            &tally,
            timing,
            Units::Bytes,
            Reads::Nothing,
            wrote,
        );
        let mut pump = ops::Pump::with_block(STREAM_BLOCK as usize);
        let (tally, timing) = self.timed("stream read", |rep| {
            let file = open_file(rep.dir.as_fd(), "stream.dat")?;
            let mut tally = Tally::default();
            let mut block_start = Instant::now();
            pump.drain_blocks(file.as_fd(), |len| {
                block_start = tally.add(len, block_start);
            })?;
            Ok(tally)
        })?;
        self.record(
            "stream_read",
            &tally,
            timing,
            Units::Bytes,
            Reads::Files,
            Wrote::Nothing,
        );
        self.remove_output("stream.dat")
    }

    /// rm -rf of the copy (made first, untimed, when `copy` did not run).
    fn delete(&mut self) -> anyhow::Result<()> {
        if !self.work.has(Op::Copy) {
            self.copy_to_copy(false)?;
        }
        let name = cstring("copy")?;
        let threads = self.work.walkers();
        let (entries, timing, _) = self.timed_logging("delete", false, |rep| {
            ops::delete_logged(rep.dir.as_fd(), &name, threads, rep.log.as_ref())
        })?;
        let tally = Tally {
            entries,
            ..Default::default()
        };
        self.record(
            "delete",
            &tally,
            timing,
            Units::Entries,
            Reads::Metadata,
            Wrote::Nothing,
        );
        Ok(())
    }

    /// Removes an operation's output (a file or a tree), untimed, unless
    /// `--keep`.
    fn remove_output(&mut self, name: &str) -> anyhow::Result<()> {
        if self.work.config.keep_outputs {
            return Ok(());
        }
        let c_name = cstring(name)?;
        let removed = match just_closed::unlink(self.dir.as_fd(), &c_name) {
            Err(refused) if refused.errno == rustix::io::Errno::ISDIR => {
                ops::delete_tree(self.dir.as_fd(), &c_name).map(|_| ())
            }
            other => other.map_err(Into::into),
        };
        removed.with_context(|| format!("cannot remove {name}"))
    }
}

/// Whether `a` and `b` are on one file system.
fn same_file_system(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> anyhow::Result<bool> {
    let device = |fd| rustix::fs::fstat(fd).map(|stat| stat.st_dev);
    Ok(device(a).context("cannot stat the repetition's directory")?
        == device(b).context("cannot stat the dataset")?)
}

/// Whether the target's I/O is counted by block devices (not a network
/// file system's counters, not "no device").
fn on_block_devices(env: &crate::result::env::TargetEnv) -> bool {
    env.network.is_none() && env.devices.iter().any(|d| d.counted)
}

/// Stream blocks: Disk Speed Test-sized.
const STREAM_BLOCK: u64 = 1 << 20;

/// Writes `bytes` of `pool`'s data to `out` in `STREAM_BLOCK` blocks, each
/// one entry of the tally.
fn write_blocks(out: BorrowedFd<'_>, pool: &[u8], bytes: u64) -> anyhow::Result<Tally> {
    let mut tally = Tally::default();
    let mut block_start = Instant::now();
    for block in 0..bytes.div_ceil(STREAM_BLOCK) {
        crate::interrupt::check()?;
        let len = STREAM_BLOCK.min(bytes - block * STREAM_BLOCK);
        dataset::write_from_pool(out, pool, block * STREAM_BLOCK, len)?;
        block_start = tally.add(len, block_start);
    }
    Ok(tally)
}

/// Syncs the file system of `dir`; returns how long that took.
fn timed_syncfs(dir: BorrowedFd<'_>) -> anyhow::Result<f64> {
    let clock = Instant::now();
    rustix::fs::syncfs(dir).context("syncfs failed")?;
    Ok(clock.elapsed().as_secs_f64())
}

/// Writes the dataset into `<dir>/src`, timed as operation `generate`:
/// with `end_sync`, up to its being on the device (a syncfs inside the
/// timed window), as the other writing operations.
fn generate(
    plan: &Plan,
    seed: u64,
    end_sync: bool,
    dir: BorrowedFd<'_>,
    ctx: &RunContext<'_>,
    result: &mut WorkloadResult,
) -> anyhow::Result<OwnedFd> {
    let pool = dataset::data_pool(seed);
    let src = make_dir(dir, "src")?;
    // The file system settled before the dataset is written, as before
    // every operation (`Repetition::make_cold`), for its space figures.
    let before = Used::settled(dir)?;
    ctx.progress.start("generate");
    let mut tally = Tally::default();
    let mut sync_s = None;
    let timing = crate::scale::phase(
        |timing| *timing,
        || {
            let clock = PhaseClock::start();
            let mut last = Instant::now();
            dataset::write(plan, src.as_fd(), &pool, || {
                crate::interrupt::check()?;
                last = tally.latency.record_since(last);
                Ok(())
            })
            .context("generate")?;
            if end_sync {
                sync_s = Some(timed_syncfs(src.as_fd())?);
            }
            Ok(clock.stop())
        },
    )?;
    ctx.progress.done(timing.elapsed.as_secs_f64());
    let readings = before.zip(Used::settled(dir)?);
    let description = plan.describe();
    tally.entries = description.entries;
    tally.bytes = description.bytes;
    let unsynced = sync_s.is_none().then_some(tally.bytes);
    let measured = Measured::over(&timing)
        .moved(0, tally.bytes)
        .left_dirty(unsynced)
        .reached_device(sync_s.is_some(), false);
    // Making the dataset prepares the operations asked for (`--ops`); it is
    // reported, but is not one of them: a detail, which neither the verdict
    // nor `--precision` waits on.
    let generated = metrics("generate", &tally, &measured, Units::Both);
    result
        .metrics
        .extend(generated.into_iter().map(Metric::as_detail));
    if let Some(sync_s) = sync_s {
        result
            .metrics
            .push(measured.part_seconds("generate_sync_s", sync_s));
    }
    // What the dataset costs on disk is no view of how fast it was made:
    // `generate_space` is a headline (what seed 002's table called "space
    // used"), compared like the operations' times.
    let (bytes, entries) = (tally.bytes, tally.entries);
    record_space(result, "generate", readings, bytes, entries, &timing);
    Ok(src)
}

/// Operation `name`'s space figures (`workload::space::Growth::metrics`)
/// from its `readings` (before, after), and the readings themselves in
/// the result's parameters, under `space.<name>`: nothing without
/// readings. The readings are of the whole file system: on a shared one
/// they include what others wrote meanwhile, and a sync log kept on the
/// target (`--sync-log target`) counts with the operation that writes it.
fn record_space(
    result: &mut WorkloadResult,
    name: &str,
    readings: Readings,
    logical_bytes: u64,
    entries: u64,
    timing: &PhaseTiming,
) {
    let Some((before, after)) = readings else {
        return;
    };
    let growth = Growth {
        before,
        after,
        logical_bytes,
        entries,
    };
    // Read after the phase, from the file system: what the devices did
    // in it is no evidence of a size.
    let measured = Measured {
        device: None,
        ..Measured::over(timing)
    };
    result.metrics.extend(growth.metrics(name, &measured));
    let Some(params) = result.params.as_object_mut() else {
        return;
    };
    let space = params
        .entry("space")
        .or_insert_with(|| serde_json::Value::Object(Default::default()));
    if let (Some(space), Ok(growth)) = (space.as_object_mut(), serde_json::to_value(growth)) {
        space.insert(name.into(), growth);
    }
}

/// Which rates an operation reports besides its elapsed time.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Units {
    Entries,
    Bytes,
    Both,
}

/// `<op>_s` (with the operation's latency): the headline, the time the
/// seeds' tables give; and as details (the same operation in other
/// units) `<op>_mb_s` (10^6 bytes/s, as the seeds' tables) and/or
/// `<op>_entries_s`.
fn metrics(name: &str, tally: &Tally, measured: &Measured, units: Units) -> Vec<Metric> {
    let elapsed = measured
        .seconds(format!("{name}_s"), tally.entries)
        .with_latency(tally.latency.summary_for_metric());
    let mut out = vec![elapsed];
    if units != Units::Entries {
        let mb_s = measured.rate(format!("{name}_mb_s"), Rate::MB_PER_S, tally.bytes);
        out.push(mb_s.as_detail());
    }
    if units != Units::Bytes {
        let entries = Rate::per_second("entries/s");
        let entries_s = measured.rate(format!("{name}_entries_s"), entries, tally.entries);
        out.push(entries_s.as_detail());
    }
    out
}
