//! One configuration recorded and judged, in a marked scratch directory of
//! its own: `img/base.img` (the disk before recording), `log/blocks.log`,
//! the recorder mounted on `rec`, the file system on `mnt`, the crash
//! states' checks on `chk`. Everything made is in the scratch directory's
//! record (`storage::made`) before anything relies on it, and `Site`'s
//! drop takes it down — mounts, loop devices, the recorder — on every way
//! out; after a kill -9, `fsbench clean` releases the same record.
use std::cell::RefCell;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Instant;

use anyhow::Context;
use rustix::fs::Mode;

use super::check::{Checked, Checker, FsCheck};
use super::cuts;
use super::oracle::{self, Op};
use super::{Options, Recordable, WORK_DIR};
use crate::configs::place::Place;
use crate::configs::{Config, DEV};
use crate::console::stderr_line;
use crate::result::durability::Durability;
use crate::shell::output_of;
use crate::storage::loopdev::LoopDevice;
use crate::storage::made::{self, Made, Record, WhenBusy};
use crate::storage::recorder::blocklog::{self, Entry, Kind};
use crate::storage::recorder::{self, Places, Recorder};
use crate::storage::scratch::Scratch;

const REC: &str = "rec";
const MNT: &str = "mnt";
const CHK: &str = "chk";

/// What a recorded configuration holds while it stands, taken down in
/// reverse on drop.
struct Site {
    record: RefCell<Record>,
    recorder: Option<Recorder>,
    device: Option<LoopDevice>,
    /// fsbench's mount of the file system under test, while it is there.
    mounted: Option<u64>,
    /// Declared last: removed after everything in it is released.
    scratch: Scratch,
}

/// Records `config`'s file system under the crash workload, then cuts it
/// off as `options` say and checks every state.
pub fn judge(
    recordable: &Recordable,
    place: &Place,
    options: &Options,
    run_id: &str,
) -> anyhow::Result<Durability> {
    let Recordable { config, words, fs } = recordable;
    let scratch = Scratch::create(&place.work_dir, run_id, false)?;
    let record = RefCell::new(Record::create(scratch.dir())?);
    // The recorder makes its own mount point (`rec`).
    for sub in ["img", "log", "cwd", MNT, CHK] {
        rustix::fs::mkdirat(scratch.dir(), sub, Mode::from_raw_mode(0o700))
            .with_context(|| format!("cannot create {sub} in {}", scratch.path().display()))?;
    }
    let mut site = Site {
        record,
        recorder: None,
        device: None,
        mounted: None,
        scratch,
    };
    let ops = oracle::plan(options.seed, options.workload_bytes);
    let clock = Instant::now();
    let recorded = site.record_workload(config, words, fs, place, options, &ops);
    // A write the recorder could not keep is why whatever failed after it
    // failed (the workload's EIO), and voids a recording that went on.
    site.recorder.as_ref().map_or(Ok(()), Recorder::intact)?;
    recorded?;
    let record_seconds = clock.elapsed().as_secs_f64();
    let recorder = site.recorder.as_ref().expect("recorded");
    let counts = recorder.counts();
    let clock = Instant::now();
    let mut durability = site.check_states(config, fs, options, &ops)?;
    durability.check_seconds = clock.elapsed().as_secs_f64();
    durability.record_seconds = record_seconds;
    durability.writes = counts.writes;
    durability.written_bytes = counts.written_bytes;
    durability.flushes = counts.flushes;
    durability.operations = ops.len();
    durability.acknowledged = ops.iter().filter(|o| o.acknowledged()).count();
    site.take_down()?;
    Ok(durability)
}

impl Site {
    fn dir(&self) -> BorrowedFd<'_> {
        self.scratch.dir()
    }

    /// Makes the file system on the recorded disk, then records the
    /// workload: mount, run, unmount, the loop device detached.
    fn record_workload(
        &mut self,
        config: &Config,
        words: &[String],
        fs: &FsCheck,
        place: &Place,
        options: &Options,
        ops: &[Op],
    ) -> anyhow::Result<()> {
        let places = Places {
            base: "img/base.img",
            log: "log/blocks.log",
            rec: REC,
        };
        let device = recorder::recorded_disk(
            self.scratch.dir(),
            &self.record,
            &places,
            place.image_size,
            &mut self.recorder,
            |disk| LoopDevice::attach(disk.file.as_fd(), true, false),
        )?;
        let source = device.path.display().to_string();
        self.device = Some(device);
        let control_path = self.recorder().control_path(self.dir());
        let mut mkfs: Vec<String> = words.iter().filter(|w| *w != DEV).cloned().collect();
        mkfs.extend(fs.mkfs_quiet.iter().map(|w| w.to_string()));
        mkfs.push(source.clone());
        crate::interrupt::check()?;
        output_of(&mkfs, Some(&made::through_fd(self.dir(), "cwd")))
            .context("mkfs on the recorded disk failed")?;
        // Before the recording: the check's mount is not the workload's.
        crate::configs::options::check_made(Some(fs.fs_type), &config.options, &source)?;
        self.recorder().record(true);
        let mut mount = vec!["mount".to_string(), "-t".into(), fs.fs_type.into()];
        if !config.options.is_empty() {
            mount.extend(["-o".into(), config.options.clone()]);
        }
        let point = made::through_fd(self.dir(), MNT);
        mount.extend(["--".into(), source, point.display().to_string()]);
        output_of(&mount, None).context("cannot mount the recorded disk")?;
        let id = made::record_mount(self.dir(), MNT, &mut self.record.borrow_mut())?;
        self.mounted = Some(id);
        made::make_private(self.dir(), MNT)?;
        let work = point.join(WORK_DIR);
        std::fs::create_dir(&work).context("cannot create the workload's directory")?;
        let control = File::options()
            .write(true)
            .open(&control_path)
            .context("cannot open the control file")?;
        oracle::run(ops, options.seed, &work, &control, options.unsynced)?;
        self.unmount_live()?;
        self.recorder().record(false);
        if let Some(device) = self.device.take() {
            device.detach()?;
        }
        Ok(())
    }

    fn recorder(&self) -> &Recorder {
        self.recorder.as_ref().expect("the recorder is mounted")
    }

    fn unmount_live(&mut self) -> anyhow::Result<()> {
        if let Some(id) = self.mounted.take() {
            made::unmount(self.dir(), id, MNT, WhenBusy::Detach)?;
        }
        Ok(())
    }

    /// Cuts the recorded log as the options say and checks every state.
    fn check_states(
        &self,
        config: &Config,
        fs: &FsCheck,
        options: &Options,
        ops: &[Op],
    ) -> anyhow::Result<Durability> {
        let log = File::open(made::through_fd(self.dir(), "log/blocks.log"))?;
        let entries: Vec<Entry> =
            blocklog::Reader::open(log.try_clone()?)?.collect::<anyhow::Result<_>>()?;
        let marks: Vec<usize> = entries
            .iter()
            .map(|e| match e.kind {
                Kind::Mark => blocklog::mark_text(&log, e)
                    .ok()
                    .and_then(|t| oracle::marked_through(&t))
                    .unwrap_or(0),
                _ => 0,
            })
            .collect();
        let checker = Checker {
            dir: self.dir(),
            record: &self.record,
            recorder: self.recorder(),
            fs,
            at: CHK.into(),
            overlay_at: "img/overlay.img".into(),
            ops,
            seed: options.seed,
        };
        let mut durability = Durability {
            model: options.model,
            seed: options.seed,
            cache_bytes: options.cache_bytes,
            sector_bytes: options.sector_bytes,
            sync_log_unsynced: options.unsynced.sync_log,
            ..Durability::default()
        };
        // A loop device on the crash state is fsbench's.
        let state = checker.state_id()?;
        self.record.borrow_mut().add(&Made::Image {
            file: state,
            at: format!("{REC}/state"),
        })?;
        let cuts = cuts::positions(&entries, options.model, options.cuts, options.seed);
        let mut kept = Kept::new(options, &config.name);
        cuts::each_state(
            &entries,
            &cuts,
            options.model,
            (options.cache_bytes, options.sector_bytes),
            options.seed,
            |i| marks[i],
            |state| {
                crate::interrupt::check()?;
                let checked = checker.check(&state)?;
                tally(&mut durability, &checked);
                kept.keep(&checker, &state, &checked, ops)
            },
        )?;
        durability.kept = kept.paths;
        Ok(durability)
    }

    /// Unmounts and detaches what stands, stops the recorder: the end.
    fn take_down(mut self) -> anyhow::Result<()> {
        self.release()
    }

    fn release(&mut self) -> anyhow::Result<()> {
        let mut first_error = None;
        let mut note = |r: anyhow::Result<()>| {
            if let Err(e) = r {
                stderr_line!("fsbench: {e:#}");
                first_error.get_or_insert(e);
            }
        };
        note(self.unmount_live());
        if let Some(device) = self.device.take() {
            note(device.detach());
        }
        if let Some(recorder) = self.recorder.take() {
            note(recorder.stop(self.scratch.dir()));
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

/// Adds one state's check to the counts.
fn tally(durability: &mut Durability, checked: &Checked) {
    durability.states += 1;
    let verdict = &checked.verdict;
    let losing = !verdict.lost.is_empty() || !verdict.corrupt.is_empty();
    durability.states_losing += usize::from(losing);
    durability.states_failed += usize::from(losing || !checked.mounted || !checked.fsck_clean);
    durability.states_silent += usize::from(losing && checked.mounted && checked.fsck_clean);
    durability.states_unmountable += usize::from(!checked.mounted);
    durability.states_fsck_errors += usize::from(checked.mounted && !checked.fsck_clean);
    durability.acknowledged_lost += verdict.lost.len();
    durability.acknowledged_corrupt += verdict.corrupt.len();
    durability.unacknowledged_lost += verdict.unacknowledged_lost;
    durability.acknowledged_judged += verdict.judged;
}

/// One reproducer per kind of failure (`--keep-failures DIR`): the crash
/// state's image as it was at the cut, and a JSON that names the cut, the
/// operations and the files.
struct Kept<'a> {
    dir: Option<&'a std::path::Path>,
    config: &'a str,
    seen: Vec<&'static str>,
    paths: Vec<String>,
}

impl<'a> Kept<'a> {
    fn new(options: &'a Options, config: &'a str) -> Kept<'a> {
        Kept {
            dir: options.keep_failures.as_deref(),
            config,
            seen: Vec::new(),
            paths: Vec::new(),
        }
    }

    fn keep(
        &mut self,
        checker: &Checker,
        state: &cuts::CrashState,
        checked: &Checked,
        ops: &[Op],
    ) -> anyhow::Result<()> {
        let Some(dir) = self.dir else {
            return Ok(());
        };
        let verdict = &checked.verdict;
        let kind = if !checked.mounted {
            "unmountable"
        } else if !verdict.corrupt.is_empty() {
            "corrupt"
        } else if !verdict.lost.is_empty() {
            "lost"
        } else if !checked.fsck_clean {
            "fsck-errors"
        } else {
            return Ok(());
        };
        if self.seen.contains(&kind) {
            return Ok(());
        }
        self.seen.push(kind);
        let stem = dir.join(format!("{}-{kind}", self.config));
        let image = File::create_new(stem.with_extension("img"))
            .with_context(|| format!("--keep-failures: cannot create {}.img", stem.display()))?;
        // The state as the power cut left it, before any replay.
        checker.serve_fresh(state)?;
        checker
            .recorder
            .copy_state(&image)
            .with_context(|| format!("--keep-failures: cannot write {}.img", stem.display()))?;
        let named = |list: &[usize]| -> Vec<serde_json::Value> {
            list.iter()
                .map(|&i| serde_json::json!({"op": i, "path": ops[i].path(), "operation": ops[i]}))
                .collect()
        };
        let about = serde_json::json!({
            "configuration": self.config,
            "failure": kind,
            "cut_entry": state.cut,
            "operations_marked_before_the_cut": state.marked,
            "writes_dropped": state.dropped,
            "writes_torn": state.torn,
            "lost": named(&verdict.lost),
            "corrupt": named(&verdict.corrupt),
            "mount_error": checked.mount_error,
            "fsck": checked.fsck_said,
            "files_under": WORK_DIR,
        });
        std::fs::write(
            stem.with_extension("json"),
            serde_json::to_string_pretty(&about)? + "\n",
        )
        .with_context(|| format!("--keep-failures: cannot write {}.json", stem.display()))?;
        self.paths
            .push(stem.with_extension("img").display().to_string());
        Ok(())
    }
}
