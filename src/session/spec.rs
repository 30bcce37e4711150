//! A run's spec: what `fsbench run` was asked ([`RunFlags`], the command
//! line's plain copy) checked into what the session runs ([`RunSpec`]):
//! the suite, the targets and references, the configurations and where
//! they are built, the crash plan, the stopping rule or the repetitions,
//! the record (new or resumed) and its files. Everything is refused here,
//! before anything is built or written.
use std::path::{Path, PathBuf};

use super::Options;
use crate::analysis::precision::{Precision, RepeatFlags};
use crate::analysis::verdict::DEFAULT_MIN_EFFECT;
use crate::configs::Config;
use crate::configs::place::Place;
use crate::crash;
use crate::driver::recording::{new_run_id, new_run_result};
use crate::error::usage;
use crate::policy::Policy;
use crate::result::RunResult;
use crate::result::env::HostEnv;
use crate::storage::Target;
use crate::storage::distinct::check_names;
use crate::storage::wipe::check_wipeable;
use crate::suite::{Suite, SuiteWorkload};
use crate::workload::{ColdMode, Workload};

/// The most a scale may grow the suites' sizes: more is surely a typo.
const MAX_SCALE: f64 = 1000.0;

/// What the session needs of the registry of workload kinds (the
/// command line's): how a suite entry becomes a workload, and what its
/// kinds allow.
pub trait Registry {
    /// The workload suite entry `listed` names, its sizes scaled by
    /// `scale`; `policy` says what its written commands may do.
    fn build(
        &self,
        listed: &SuiteWorkload,
        scale: f64,
        policy: &Policy,
        host: &HostEnv,
    ) -> anyhow::Result<Box<dyn Workload>>;
    /// Whether workloads of `kind` run under MPI.
    fn runs_under_mpi(&self, kind: &str) -> bool;
    /// A suite's crash entry's options, from its flags.
    fn crash_options(&self, args: &[String]) -> anyhow::Result<crash::Options>;
}

/// `fsbench run`'s flags, as plain data.
#[derive(Debug, Clone, Default)]
pub struct RunFlags {
    /// `[NAME=]PATH` of each target; none: the current directory.
    pub targets: Vec<String>,
    pub references: Vec<String>,
    pub repeat: Option<u32>,
    pub precision: Option<String>,
    pub max_repeat: Option<u32>,
    pub max_time: Option<String>,
    pub min_effect: Option<f64>,
    pub scale: f64,
    pub baseline: Option<String>,
    pub keep: bool,
    pub quiet: bool,
    pub verbose: bool,
    pub save_dir: Option<PathBuf>,
    pub no_save: bool,
    pub allow_shell: bool,
    pub configs: Option<PathBuf>,
    pub images: Option<PathBuf>,
    pub buffered_images: bool,
    /// `--image-size`, as given.
    pub image_size: String,
    pub wipe: Vec<PathBuf>,
    pub cold: Option<ColdMode>,
    pub fresh: bool,
    pub keep_going: bool,
    /// `--json FILE` (`-`: standard output).
    pub json: Option<PathBuf>,
}

/// Where a run's record comes from: a new one, or an incomplete saved run
/// to finish (`--resume`), saved back to its file.
pub enum Origin {
    New,
    Resumed(Box<RunResult>, PathBuf),
}

/// A suite's crash entry, checked against the configurations: its
/// options and where its recorded disks go.
pub struct CrashSpec {
    pub options: crash::Options,
    pub place: Place,
}

/// What a session measures, how, and where its record goes.
pub struct RunSpec {
    pub suite: Suite,
    /// The targets measured; empty with `configs`, whose configurations
    /// are the targets.
    pub targets: Vec<Target>,
    /// Targets measured as ceilings (with the first round of
    /// configurations), marked as references in the record.
    pub references: Vec<Target>,
    /// The configurations to build and where (`--configs`).
    pub configs: Option<(Vec<Config>, Place)>,
    pub crash: Option<CrashSpec>,
    /// The stopping rule (`--precision`); None: exactly `repeat`.
    pub precision: Option<Precision>,
    /// Repetitions: all of them, or the most with a precision rule.
    pub repeat: u32,
    pub options: Options,
    /// What the suite's written commands may do, where its report files go.
    pub policy: Policy,
    /// The record measured into: a new one, or a saved incomplete one to
    /// finish (`resumed`).
    pub record: RunResult,
    /// Measure only what `record` lacks (`--resume`).
    pub resumed: bool,
    /// The name of the scratch directories (a resumed run's own: the
    /// killed run's may still stand).
    pub scratch_id: String,
    /// The results file, rewritten after each result and at the end.
    pub save_path: Option<PathBuf>,
    /// `--json FILE` (`-`: standard output, written at the end only).
    pub json: Option<PathBuf>,
}

impl RunSpec {
    /// `flags` checked for `suite`, into a new record or on into a resumed
    /// one: a usage error for anything that cannot run, before anything
    /// is built. Under MPI every rank checks the configurations, and all
    /// agree before any goes on.
    pub fn check(
        flags: &RunFlags,
        suite: Suite,
        origin: Origin,
        registry: &dyn Registry,
    ) -> anyhow::Result<RunSpec> {
        refuse_under_mpi(&suite, registry)?;
        let run_id = new_run_id();
        let configs = crate::scale::agree(load_configs(flags))?;
        let crash = crash_spec(&suite, configs.as_ref(), flags.scale, registry)?;
        if flags.cold == Some(ColdMode::Remount) && configs.is_none() {
            return usage(
                "--cold remount needs --configs: fsbench remounts only what it mounted (--cold drop empties the page cache of any target)",
            );
        }
        // With --configs the targets are the configurations, measured where
        // they are built; until then they are names (and the work directory).
        let specs = match &configs {
            Some((configs, place)) => configs
                .iter()
                .map(|c| format!("{}={}", c.name, place.work_dir.display()))
                .collect(),
            None => flags.targets.clone(),
        };
        let mut targets = targets(&specs, &flags.references)?;
        if let Origin::Resumed(record, _) = &origin {
            place_as_recorded(&mut targets, record);
        }
        let measured = specs.len().max(1).min(targets.len());
        let roles: Vec<(&str, bool)> = targets
            .iter()
            .enumerate()
            .map(|(index, t)| (t.name.as_str(), index >= measured))
            .collect();
        // Checked now (a name that is not a target is a usage error); reports
        // find it again by name (`report::baseline_of`).
        crate::analysis::baseline_index(&roles, flags.baseline.as_deref())?;
        let precision = stopping_rule(flags, measured > 1)?;
        let repeat = check_repeat(flags.repeat.unwrap_or(suite.repeat))?;
        let repeat = precision.map_or(repeat, |rule| rule.max_repeat);
        check_scale(flags.scale)?;
        let paths: Vec<PathBuf> = targets.iter().map(|t| t.path.clone()).collect();
        let results_dir = crate::results::for_run(flags.save_dir.as_deref(), &paths)?;
        let (record, save_path, resumed) = match origin {
            Origin::New => {
                let mut record = new_run_result(&run_id);
                record.suite = Some(suite.name.clone());
                record.suite_text = Some(suite.text.clone());
                record.min_effect = flags.min_effect;
                let path = (!flags.no_save).then(|| crate::results::new_path(&results_dir));
                (record, path, false)
            }
            Origin::Resumed(record, path) => (*record, Some(path), true),
        };
        // A resumed run's time cap counts the repetitions it already holds.
        let precision = precision.map(|rule| Precision {
            measured_before: record.repetitions_measured(),
            ..rule
        });
        let references = targets.split_off(measured);
        // With --configs the targets were names for the checks above: the
        // session measures the configurations where it builds them.
        if configs.is_some() {
            targets.clear();
        }
        Ok(RunSpec {
            suite,
            targets,
            references,
            configs,
            crash,
            precision,
            repeat,
            options: Options {
                scale: flags.scale,
                keep: flags.keep,
                cold: flags.cold,
                quiet: flags.quiet,
                verbose: flags.verbose,
                fresh: flags.fresh,
                keep_going: flags.keep_going,
            },
            policy: Policy {
                allow_shell: flags.allow_shell,
                results_dir,
            },
            // A resumed run scratches under a name of its own: the killed
            // run's directories may still stand.
            scratch_id: run_id,
            record,
            resumed,
            save_path,
            json: flags.json.clone(),
        })
    }

    /// The files this run writes while it measures (standard output is
    /// written once, at the end): no other fsbench may save into them.
    pub fn saved_files(&self) -> impl Iterator<Item = &Path> {
        let json = self.json.iter().filter(|p| !crate::results::is_stdout(p));
        self.save_path.iter().chain(json).map(PathBuf::as_path)
    }
}

/// The suite of saved run `record` (from `file`), when it can be resumed:
/// incomplete, made by `fsbench run`, not under MPI, holding its suite.
pub fn resumable(record: &RunResult, file: &Path) -> anyhow::Result<Suite> {
    let shown = file.display();
    if record.finished.is_some() {
        return usage(format!(
            "--resume {shown}: this run is complete: nothing to resume"
        ));
    }
    if crate::scale::size() > 1 {
        return usage("--resume does not run under MPI");
    }
    let made_by = record.made_by();
    if made_by != "fsbench run" {
        return usage(format!(
            "--resume {shown}: made by `{made_by}`: only a run of `fsbench run` can be resumed"
        ));
    }
    let (Some(name), Some(text)) = (&record.suite, &record.suite_text) else {
        return usage(format!(
            "--resume {shown}: the result does not hold its suite's text (saved by an older fsbench), so its plan cannot be rebuilt"
        ));
    };
    Suite::parse(name, text)
}

/// The precision rule the flags ask for, if any: what a comparison of
/// targets (`comparing`) gets by default.
fn stopping_rule(flags: &RunFlags, comparing: bool) -> anyhow::Result<Option<Precision>> {
    let repeat_flags = RepeatFlags {
        precision: flags.precision.as_deref(),
        repeat: flags.repeat,
        max_repeat: flags.max_repeat,
        max_time: flags
            .max_time
            .as_deref()
            .map(crate::units::parse_time)
            .transpose()?,
        comparing,
    };
    Precision::from_flags(repeat_flags, flags.min_effect.unwrap_or(DEFAULT_MIN_EFFECT))
}

/// Refuses `--repeat 0`, for every command that repeats: there would be
/// nothing to run.
pub fn check_repeat(repeat: u32) -> anyhow::Result<u32> {
    match repeat {
        0 => usage("--repeat 0: nothing to run (use at least 1)"),
        n => Ok(n),
    }
}

/// A resumed run's targets at the absolute paths its record keeps: the
/// command line may have named them relative to where it was started.
fn place_as_recorded(targets: &mut [Target], record: &RunResult) {
    for target in targets {
        if let Some(recorded) = record.targets.iter().find(|t| t.name == target.name) {
            target.path = PathBuf::from(&recorded.path);
        }
    }
}

/// With --configs: the configurations read and checked, and where they
/// are built; the devices --wipe names checked (nothing is built yet).
fn load_configs(flags: &RunFlags) -> anyhow::Result<Option<(Vec<Config>, Place)>> {
    let Some(file) = &flags.configs else {
        return Ok(None);
    };
    if !flags.targets.is_empty() {
        return usage(
            "--configs: the configurations are the targets; give no other (--reference may add one)",
        );
    }
    let configs = crate::configs::load(file)?;
    if crate::scale::size() > 1 {
        crate::configs::check_across_hosts(&configs)?;
    }
    if flags.keep {
        return usage("--keep cannot go with --configs: what is built is always taken down");
    }
    if !flags.allow_shell
        && let Some((config, why)) = configs
            .iter()
            .find_map(|c| c.shell_permission().map(|why| (c, why)))
    {
        return usage(format!("--configs: {} {why}", config.name));
    }
    if !rustix::process::geteuid().is_root() {
        return usage("--configs needs root: it attaches loop devices, runs mkfs and mounts");
    }
    let checked = flags
        .wipe
        .iter()
        .map(|device| check_wipeable(device))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // One device named twice (or by a /dev/disk/by-* link and its node) is
    // one device: `Place::wipe_default` takes mkfs to it alone.
    let wipe = crate::storage::wipe::distinct_paths(checked);
    let work_dir = Place::work_dir(flags.images.as_deref())?;
    let image_size = crate::size::parse_size(&flags.image_size, 1)?;
    if image_size < 16 << 20 {
        return usage("--image-size: at least 16m (mkfs needs room)");
    }
    let place = Place {
        work_dir,
        images: flags.images.is_some(),
        image_size,
        direct_io: !flags.buffered_images,
        wipe,
    };
    place.check(&configs)?;
    Ok(Some((configs, place)))
}

/// The suite's crash entry checked against the configurations before
/// anything is built; None without one. Only configurations fsbench
/// builds can be cut off.
fn crash_spec(
    suite: &Suite,
    configs: Option<&(Vec<Config>, Place)>,
    scale: f64,
    registry: &dyn Registry,
) -> anyhow::Result<Option<CrashSpec>> {
    let Some(entry) = suite.crash() else {
        return Ok(None);
    };
    let Some((configs, place)) = configs else {
        return usage(format!(
            "suite {}: its crash entry cuts off configurations fsbench builds: give --configs FILE",
            suite.name
        ));
    };
    let options = entry
        .scaled_args(scale)
        .and_then(|args| registry.crash_options(&args))
        .map_err(|e| suite.locate(e, entry))?;
    let place = options.place(place.work_dir.clone());
    crash::recordables(configs, &place)?;
    place.check(configs)?;
    Ok(Some(CrashSpec { options, place }))
}

/// Refuses a scale that is not a positive factor of sensible size.
fn check_scale(scale: f64) -> anyhow::Result<()> {
    if !(scale.is_finite() && scale > 0.0 && scale <= MAX_SCALE) {
        return usage(format!(
            "--scale {scale}: must be above 0 and at most {MAX_SCALE}"
        ));
    }
    Ok(())
}

/// The targets (the current directory when none is given), then the
/// references; names must tell them apart in reports.
fn targets(specs: &[String], references: &[String]) -> anyhow::Result<Vec<Target>> {
    let here = [".".to_string()];
    let specs = match specs {
        [] => &here[..],
        specs => specs,
    };
    let targets = specs
        .iter()
        .chain(references)
        .map(|spec| Target::parse(spec))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let flag_of = |index| match index < specs.len() {
        true => "--target",
        false => "--reference",
    };
    check_names(&targets, flag_of)?;
    Ok(targets)
}

/// Refuses, under MPI, the workloads whose kind does not run there
/// (durability: its crash and power-loss verdict is one host's).
fn refuse_under_mpi(suite: &Suite, registry: &dyn Registry) -> anyhow::Result<()> {
    if crate::scale::size() == 1 {
        return Ok(());
    }
    let alone = |listed: &&SuiteWorkload| !registry.runs_under_mpi(&listed.kind);
    match suite.workloads.iter().find(alone) {
        Some(listed) => usage(format!(
            "suite {}: workload {} ({}) does not run under MPI: leave it out of the suite",
            suite.name,
            listed.label(),
            listed.kind
        )),
        None => Ok(()),
    }
}
