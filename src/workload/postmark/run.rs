//! One PostMark `run`: the instance directories and subdirectories, the
//! three timed phases (every instance side by side, a phase ending when
//! the slowest instance ends it), and PostMark's progress messages.
use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use rustix::fs::{AtFlags, Mode};
use rustix::io::Errno;

use super::PostmarkConfig;
use super::engine::{Aborted, Instance, Stop};
use super::files::Syscalls;
use super::logged::Logged;
use super::summary::{RunSummary, Timing};
use crate::measure::{PhaseClock, PhaseTiming};
use crate::storage::cleanup::open_subdir;
use crate::storage::scratch::Scratch;
use crate::workload::synclog::{SyncLog, SyncLogConfig};
use crate::workload::threads::spawn_all;

/// How an instance reaches its files: system calls, each create and
/// delete recorded in the sync log when there is one.
type Files<'c> = Logged<'c, Syscalls>;

/// A location's scratch directory, where the run puts its files.
pub struct LocationDir<'a> {
    /// The location as the user wrote it, for messages.
    pub name: &'a str,
    pub dir: BorrowedFd<'a>,
}

const OUT_OF_FILES: &str = "out of files!\n\
For this workload, either increase the number of files or\n\
decrease the number of transactions.\n";

/// A sync log to keep during a run (`--sync-log`).
pub struct LogPlan<'a> {
    pub config: &'a SyncLogConfig,
    /// The first location's scratch directory: the log goes in it or,
    /// placed elsewhere, is named after it.
    pub home: &'a Scratch,
    pub repetition: u32,
}

/// Runs the workload once on `locations` (one per configured location,
/// in order; the current directory's when none is configured), printing
/// PostMark's progress lines to `out`. With `log`, every create and
/// delete is recorded in a sync log, whose figures join the summary.
pub fn run(
    config: &PostmarkConfig,
    locations: &[LocationDir<'_>],
    log: Option<LogPlan<'_>>,
    out: &mut dyn Write,
) -> anyhow::Result<RunSummary> {
    let Some(plan) = log else {
        return run_instances(config, locations, None, out);
    };
    let log = SyncLog::open(plan.config, plan.home, plan.repetition)?;
    let mut summary = run_instances(config, locations, Some(&log), out)?;
    summary.sync_log = Some(log.finish()?);
    Ok(summary)
}

fn run_instances<'c>(
    config: &'c PostmarkConfig,
    locations: &[LocationDir<'_>],
    log: Option<&'c SyncLog>,
    out: &mut dyn Write,
) -> anyhow::Result<RunSummary> {
    let mut instances = prepare_instances(config, locations, log, out)?;
    let timing = run_phases(&mut instances, log, out)?;
    if config.subdirectories > 1 {
        say(out, "Deleting subdirectories...")?;
        for instance in &instances {
            for dir in instance.files().inner().dirs() {
                remove_subdirs(dir, config.subdirectories)?;
            }
        }
        say(out, "Done\n")?;
    }
    Ok(RunSummary::collect(config, &instances, timing))
}

/// PostMark's untimed setup: directories, then each instance's random
/// numbers and content buffer.
fn prepare_instances<'c>(
    config: &'c PostmarkConfig,
    locations: &[LocationDir<'_>],
    log: Option<&'c SyncLog>,
    out: &mut dyn Write,
) -> anyhow::Result<Vec<Instance<'c, Files<'c>>>> {
    let instance_dirs = create_instance_dirs(config, locations)?;
    if config.subdirectories > 1 {
        say(out, "Creating subdirectories...")?;
        for dir in instance_dirs.iter().flatten() {
            make_subdirs(dir.as_fd(), config.subdirectories)?;
        }
        say(out, "Done\n")?;
    }
    let names: Vec<String> = locations.iter().map(|l| l.name.to_string()).collect();
    Ok((0..)
        .zip(instance_dirs)
        .map(|(k, dirs)| {
            let files = Syscalls::new(dirs, names.clone(), config);
            let prefix = match config.threads {
                1 => String::new(),
                _ => format!("t{k}/"),
            };
            let files = Logged::new(files, log, prefix);
            Instance::new(config, config.instance_seed(k), files)
        })
        .collect())
}

/// The three timed phases, with PostMark's progress lines.
fn run_phases<'c>(
    instances: &mut [Instance<'c, Files<'c>>],
    log: Option<&SyncLog>,
    out: &mut dyn Write,
) -> anyhow::Result<Timing> {
    let total = PhaseClock::start();
    say(out, "Creating files...")?;
    let creation = in_step(|| {
        run_phase(instances, log, out, |instance, stop, _| {
            instance.create_files(stop)
        })
    })?;
    say(out, "Done\nPerforming transactions")?;
    let transactions = in_step(|| {
        run_phase(instances, log, out, |instance, stop, dots| {
            instance.run_transactions(stop, dots)
        })
    })?;
    let out_of_files = instances.iter().any(|i| i.ran_out_of_files());
    say(out, if out_of_files { OUT_OF_FILES } else { "Done\n" })?;
    say(out, "Deleting files...")?;
    let deletion = in_step(|| {
        run_phase(instances, log, out, |instance, stop, _| {
            instance.delete_files(stop)
        })
    })?;
    say(out, "Done\n")?;
    let total = total.stop();
    crate::scale::note_span(&total);
    Ok(Timing {
        creation,
        transactions,
        deletion,
        total,
    })
}

/// A phase run in step with the other ranks of an MPI job.
fn in_step(phase: impl FnOnce() -> anyhow::Result<PhaseTiming>) -> anyhow::Result<PhaseTiming> {
    crate::scale::phase(|timing| *timing, phase)
}

/// Writes a progress message at once (PostMark flushes them too).
fn say(out: &mut dyn Write, text: &str) -> anyhow::Result<()> {
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write to standard output")
}

/// Each instance's directory on each location: the scratch directory
/// itself for a single instance, else `t<k>` inside it.
fn create_instance_dirs(
    config: &PostmarkConfig,
    locations: &[LocationDir<'_>],
) -> anyhow::Result<Vec<Vec<OwnedFd>>> {
    let instance_dir = |k: u32, location: &LocationDir<'_>| -> anyhow::Result<OwnedFd> {
        if config.threads == 1 {
            return rustix::io::fcntl_dupfd_cloexec(location.dir, 0)
                .context("cannot duplicate the scratch directory fd");
        }
        let name = CString::new(format!("t{k}")).expect("no NUL in a number");
        rustix::fs::mkdirat(location.dir, &name, Mode::from_raw_mode(0o700))
            .and_then(|()| open_subdir(location.dir, &name))
            .with_context(|| format!("cannot create directory {name:?} in {}", location.name))
    };
    (0..config.threads)
        .map(|k| locations.iter().map(|l| instance_dir(k, l)).collect())
        .collect()
}

fn make_subdirs(dir: BorrowedFd<'_>, count: u32) -> anyhow::Result<()> {
    for i in 0..count {
        let name = format!("s{i}");
        rustix::fs::mkdirat(dir, name.as_str(), Mode::from_raw_mode(0o700))
            .with_context(|| format!("cannot create subdirectory {name}"))?;
    }
    Ok(())
}

/// Removes `s0`..; a subdirectory that is not empty holds files someone
/// else put there, which the scratch cleanup removes and reports.
fn remove_subdirs(dir: BorrowedFd<'_>, count: u32) -> anyhow::Result<()> {
    for i in 0..count {
        let name = format!("s{i}");
        match rustix::fs::unlinkat(dir, name.as_str(), AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOTEMPTY) => {}
            Err(e) => return Err(e).with_context(|| format!("cannot remove subdirectory {name}")),
        }
    }
    Ok(())
}

/// Runs `phase` on every instance at once (the first on this thread, so
/// it alone prints progress dots to `out`) and times the whole, the sync
/// of the phase's last records in `log` included. When one instance fails
/// the others stop at their next operation, and the failure (not the
/// others' "stopped" errors) is returned.
fn run_phase<'c>(
    instances: &mut [Instance<'c, Files<'c>>],
    log: Option<&SyncLog>,
    out: &mut dyn Write,
    phase: impl Fn(&mut Instance<'c, Files<'c>>, &Stop, Option<&mut dyn Write>) -> anyhow::Result<()>
    + Sync,
) -> anyhow::Result<PhaseTiming> {
    let abort = AtomicBool::new(false);
    let stop = Stop { abort: &abort };
    let stop_others_on_error = |result: anyhow::Result<()>| {
        if result.is_err() {
            abort.store(true, Ordering::Relaxed);
        }
        result
    };
    let (first, others) = instances
        .split_first_mut()
        .expect("a run has at least one instance");
    let clock = PhaseClock::start();
    let results: Vec<anyhow::Result<()>> = std::thread::scope(|scope| {
        let (phase, stop) = (&phase, &stop);
        let workers = others
            .iter_mut()
            .map(|instance| move || stop_others_on_error(phase(instance, stop, None)));
        let handles = spawn_all(scope, "postmark", workers, || {
            abort.store(true, Ordering::Relaxed)
        })?;
        let mut results = vec![stop_others_on_error(phase(first, stop, Some(out)))];
        results.extend(handles.into_iter().map(|handle| {
            handle
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("a PostMark instance panicked")))
        }));
        anyhow::Ok(results)
    })?;
    let committed = log.map_or(Ok(()), SyncLog::commit);
    let timing = clock.stop();
    let mut errors: Vec<anyhow::Error> = results.into_iter().filter_map(Result::err).collect();
    match errors.iter().position(|e| !e.is::<Aborted>()) {
        Some(first_failure) => Err(errors.swap_remove(first_failure)),
        None => committed.map(|()| timing),
    }
}
