//! `fsbench run`: a suite on one or more targets, repeated and interleaved,
//! then the side-by-side report. With no arguments: the quick suite on the
//! current directory.
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, FromArgMatches};

use super::flags::{KeepFlag, MinEffectFlag, Targets, check_repeat};
use super::kinds::{EntryInput, build_entry, find};
use super::output::{check_json_path, tables_stream};
use crate::configs::Config;
use crate::configs::place::Place;
use crate::configs::session::Outcome as Builds;
use crate::console::{Stream, emit};
use crate::crash;
use crate::driver::record::{new_run_id, new_run_result};
use crate::error::usage;
use crate::policy::Policy;
use crate::report::precision::{Precision, RepeatFlags};
use crate::report::terminal::Terminal;
use crate::report::verdict::DEFAULT_MIN_EFFECT;
use crate::report::{Reporter, Summary};
use crate::result::RunResult;
use crate::result::env::HostEnv;
use crate::session::{CrashPlan, Options, Outcome, Request};
use crate::storage::Target;
use crate::storage::distinct::check_names;
use crate::storage::wipe::check_wipeable;
use crate::suite::{Suite, SuiteWorkload, builtin_names, builtin_text};
use crate::workload::{ColdMode, Workload};

const RUN_EXAMPLES: &str = "\
Examples:
  fsbench run                                     the quick suite on the current directory
  fsbench run --target xfs=/mnt/xfs --target ext4=/mnt/ext4 --repeat 3
  fsbench run --suite seeds --scale 0.02 --target a=/mnt/a --target b=/mnt/b
  fsbench run --suite my-suite.toml --target /mnt/nas
  fsbench run -t ext4=/mnt/ext4 -t xfs=/mnt/xfs --reference ram=/dev/shm   tmpfs as the RAM ceiling
  fsbench run --show-suite quick > my-suite.toml  start a suite of your own
  fsbench run --configs configs/seed003.toml --images /mnt/disk --image-size 8g
                                                  build ext4 twice on loop images, compare

`fsbench run --list-suites` says what each built-in suite measures. The
result is saved as JSON in $XDG_DATA_HOME/fsbench/results/
(~/.local/share/fsbench/results/ by default; `fsbench results` lists them,
`fsbench report` re-renders one), after every workload measured: a run
killed or cut off by a power failure keeps what it measured, and
`fsbench run --resume FILE` measures the rest.";

/// The most a scale may grow the suites' sizes: more is surely a typo.
const MAX_SCALE: f64 = 1000.0;

#[derive(Debug, Args)]
#[command(after_help = RUN_EXAMPLES)]
pub struct RunArgs {
    // The built-in suites are named from the suite registry (`suite_help`).
    #[arg(long, value_name = "NAME|FILE", default_value = "quick", help = suite_help())]
    suite: String,
    // Directories to benchmark, positional or -t (repeat for side-by-side
    // runs), `name=path` to name one in reports. The first is the baseline.
    #[command(flatten)]
    targets: Targets,
    /// A target measured as the ceiling: a tmpfs for the RAM ceiling, the
    /// local file system as the upper bound of a network one. The others
    /// are shown as a fraction of it; it is never rated, marked best or
    /// the baseline. Repeatable.
    #[arg(long = "reference", value_name = "[NAME=]PATH")]
    references: Vec<String>,
    /// Repetitions of the whole suite on every target [default: the
    /// suite's]; with --precision, the repetitions before the precision is
    /// first tested [default: 3].
    #[arg(short = 'r', long, value_name = "N")]
    repeat: Option<u32>,
    /// Repeat until every headline metric's 95 % confidence interval is
    /// within this much of its mean, or its difference from the baseline
    /// is decided, e.g. 5%; tested after each repetition, from the
    /// --repeat-th (default 3) on. What a comparison of targets does by
    /// default (5%) unless --repeat alone gives a fixed count; `off` for
    /// exactly --repeat.
    #[arg(long, value_name = "PERCENT", allow_hyphen_values = true)]
    precision: Option<String>,
    /// With --precision, the most repetitions [default: 10].
    #[arg(long, value_name = "N")]
    max_repeat: Option<u32>,
    /// With --precision, no repetition starts that would end after this
    /// long since the run began, e.g. 1h [default: 30m].
    #[arg(long, value_name = "TIME", value_parser = crate::units::time_arg)]
    max_time: Option<String>,
    #[command(flatten)]
    min_effect: MinEffectFlag,
    /// Multiplies the sizes and counts the suite marks as scalable.
    #[arg(long, value_name = "FACTOR", default_value_t = 1.0)]
    scale: f64,
    /// The target others are compared with [default: the first].
    #[arg(long, value_name = "NAME")]
    baseline: Option<String>,
    #[command(flatten)]
    keep: KeepFlag,
    /// Print less: no progress bar.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Directory the result is saved in (and report files a suite's
    /// PostMark commands name) [default: $XDG_DATA_HOME/fsbench/results,
    /// XDG_DATA_HOME defaulting to ~/.local/share].
    #[arg(long, value_name = "DIR")]
    save_dir: Option<PathBuf>,
    /// Do not save the result (only --json, if given).
    #[arg(long, conflicts_with = "save_dir")]
    no_save: bool,
    /// Run a suite's shell commands: `!command` among its PostMark
    /// commands and its tree entries' `--cmd`; without it they are refused.
    #[arg(long)]
    allow_shell: bool,
    /// Print each result as it is measured, and where the time went.
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Configurations to build and measure, a TOML file: per [[config]]
    /// a name and a mkfs command line ending in {dev} (made on a loop
    /// image in --images, recorded with `recorded = true`, or on a --wipe
    /// device), a source to mount, or setup commands; mount options; a
    /// [matrix] sweep (see configs/*.toml). Under MPI: setup commands that
    /// change a server, rank 0 running them, and the path every host sees.
    #[arg(long, value_name = "FILE")]
    configs: Option<PathBuf>,
    /// With --configs: the directory the images and mount points go in (in
    /// a marked scratch directory fsbench makes and removes): a directory
    /// on the disk under test [default without images: /var/tmp].
    #[arg(long, value_name = "DIR", requires = "configs")]
    images: Option<PathBuf>,
    /// With --configs: attach the images' loop devices without direct
    /// I/O, so the host's page cache holds what they read and write; by
    /// default they use direct I/O and the disk under --images is the
    /// one measured.
    #[arg(long, requires = "configs")]
    buffered_images: bool,
    /// With --configs: each image's size (sparse).
    #[arg(long, value_name = "SIZE", default_value = "4g", value_parser = crate::units::size_arg, requires = "configs")]
    image_size: String,
    /// With --configs: a block device mkfs may destroy (everything on it
    /// is lost); refused if it or a partition of it is mounted, swap, or
    /// held by md, LVM or dm. Repeatable.
    #[arg(long, value_name = "DEVICE", requires = "configs")]
    wipe: Vec<PathBuf>,
    /// How caches are made cold before each operation of the tree
    /// workloads: drop (sync and drop_caches), remount (unmount and mount
    /// again; with --configs: also caches drop_caches leaves, such as
    /// ZFS's ARC), none [default: each workload's own setting].
    #[arg(long, value_name = "HOW", value_enum)]
    cold: Option<ColdMode>,
    /// With --configs: build every configuration anew for each repetition
    /// (no repetition runs on a file system an earlier one aged).
    #[arg(long, requires = "configs")]
    fresh: bool,
    /// With --configs: a configuration that cannot be built (mkfs, the
    /// mount or a setup command fails) is left out and the others are
    /// measured (exit 1 at the end); by default it ends the run at once.
    #[arg(long, requires = "configs")]
    keep_going: bool,
    /// List the built-in suites and exit.
    #[arg(long)]
    list_suites: bool,
    /// Print a built-in suite's TOML and exit.
    #[arg(long, value_name = "NAME")]
    show_suite: Option<String>,
    /// Finish an incomplete saved run (killed, interrupted or failed): the
    /// same suite, targets and options, measuring only what the file
    /// lacks, saved into it. Only --allow-shell (which the file cannot
    /// grant), --max-time, --quiet and --verbose may be given with it.
    #[arg(long, value_name = "FILE", conflicts_with_all = RESUME_CONFLICTS)]
    resume: Option<PathBuf>,
}

/// Every flag of `fsbench run` but those a resumed run takes from the
/// resuming command line ([`resumed_args`]): the plan is the file's.
const RESUME_CONFLICTS: [&str; 23] = [
    "suite",
    "targets",
    "target_flags",
    "references",
    "repeat",
    "precision",
    "max_repeat",
    "min_effect",
    "scale",
    "baseline",
    "keep",
    "save_dir",
    "no_save",
    "configs",
    "images",
    "buffered_images",
    "image_size",
    "wipe",
    "cold",
    "fresh",
    "keep_going",
    "list_suites",
    "show_suite",
];

/// Where a run's record comes from: a new one, or an incomplete saved run
/// to finish (`--resume`), saved back to its file.
enum Origin {
    New,
    Resumed(Box<RunResult>, PathBuf),
}

pub fn run(args: RunArgs, json: Option<&Path>) -> anyhow::Result<()> {
    if args.list_suites {
        return list_suites();
    }
    if let Some(name) = &args.show_suite {
        return show_suite(name);
    }
    match &args.resume {
        Some(file) => resume(file, &args, json),
        None => {
            let suite = Suite::load(&args.suite)?;
            measure(args, suite, Origin::New, json)
        }
    }
}

/// `--resume FILE`: the incomplete run of `file` measured on to its end,
/// with the command line and the suite it keeps, and what `resuming` (the
/// command line that resumes it) says.
fn resume(file: &Path, resuming: &RunArgs, json: Option<&Path>) -> anyhow::Result<()> {
    let record = crate::store::load(file)?;
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
    let Some(saved) = args_of(&record.command) else {
        return usage(format!(
            "--resume {shown}: its command line is not one of `fsbench run` this fsbench reads, so its plan cannot be rebuilt"
        ));
    };
    let args = resumed_args(saved, resuming, file)?;
    if args.configs.is_some() {
        return usage(format!(
            "--resume {shown}: a run of --configs cannot be resumed: its file systems were taken down"
        ));
    }
    let (Some(name), Some(text)) = (&record.suite, &record.suite_text) else {
        return usage(format!(
            "--resume {shown}: the result does not hold its suite's text (saved by an older fsbench), so its plan cannot be rebuilt"
        ));
    };
    let suite = Suite::parse(name, text)?;
    measure(
        args,
        suite,
        Origin::Resumed(Box::new(record), file.to_path_buf()),
        json,
    )
}

/// The arguments a resumed run runs with: the plan the saved command line
/// `saved` made, and what the resuming command line says of the rest. A
/// result file is data anyone may have edited, so a permission comes from
/// `resuming` only: a file whose run had --allow-shell is refused unless
/// it is given again (a --wipe run, of --configs, is never resumed).
fn resumed_args(saved: RunArgs, resuming: &RunArgs, file: &Path) -> anyhow::Result<RunArgs> {
    if saved.allow_shell && !resuming.allow_shell {
        return usage(format!(
            "--resume {}: this run ran its suite's shell commands (--allow-shell); give --allow-shell again to resume it",
            file.display()
        ));
    }
    Ok(RunArgs {
        allow_shell: resuming.allow_shell,
        wipe: Vec::new(),
        max_time: resuming.max_time.clone().or(saved.max_time),
        quiet: resuming.quiet,
        verbose: resuming.verbose,
        resume: None,
        ..saved
    })
}

/// The arguments of the `fsbench run` command line `command`; None for
/// another command, or one this fsbench does not parse.
fn args_of(command: &[String]) -> Option<RunArgs> {
    let matches = super::command().try_get_matches_from(command).ok()?;
    match matches.subcommand()? {
        ("run", args) => RunArgs::from_arg_matches(args).ok(),
        _ => None,
    }
}

/// Runs `suite` as `args` say, into a new record or on into a resumed one,
/// and prints what it measured.
fn measure(args: RunArgs, suite: Suite, origin: Origin, json: Option<&Path>) -> anyhow::Result<()> {
    let started = Instant::now();
    refuse_under_mpi(&suite)?;
    let run_id = new_run_id();
    // Under MPI every rank checks; rank 0 runs no setup command before
    // all agree the configurations can be measured.
    let configs = crate::scale::agree(load_configs(&args))?;
    let crash = plan_crash(&suite, configs.as_ref(), args.scale)?;
    if args.cold == Some(ColdMode::Remount) && configs.is_none() {
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
        None => args.targets.specs(),
    };
    let mut targets = targets(&specs, &args.references)?;
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
    super::report::baseline_index(&roles, args.baseline.as_deref())?;
    let min_effect = args.min_effect.fraction()?;
    let flags = RepeatFlags {
        precision: args.precision.as_deref(),
        repeat: args.repeat,
        max_repeat: args.max_repeat,
        max_time: args
            .max_time
            .as_deref()
            .map(crate::units::parse_time)
            .transpose()?,
        comparing: measured > 1,
    };
    let precision = Precision::from_flags(flags, min_effect.unwrap_or(DEFAULT_MIN_EFFECT))?;
    let repeat = check_repeat(args.repeat.unwrap_or(suite.repeat))?;
    let repeat = precision.map_or(repeat, |rule| rule.max_repeat);
    check_scale(args.scale)?;
    check_json_path(json)?;
    let paths: Vec<PathBuf> = targets.iter().map(|t| t.path.clone()).collect();
    let results_dir = crate::store::for_run(args.save_dir.as_deref(), &paths)?;
    let (record, save_path, resumed) = match origin {
        Origin::New => {
            let mut record = new_run_result(&run_id);
            record.suite = Some(suite.name.clone());
            record.suite_text = Some(suite.text.clone());
            record.min_effect = min_effect;
            let path = (!args.no_save).then(|| crate::store::new_path(&results_dir));
            (record, path, false)
        }
        Origin::Resumed(record, path) => (*record, Some(path), true),
    };
    // A resumed run's time cap counts the repetitions it already holds.
    let precision = precision.map(|rule| Precision {
        measured_before: record.repetitions_measured(),
        ..rule
    });
    let policy = Policy {
        allow_shell: args.allow_shell,
        results_dir,
    };
    let host = record.host.clone();
    let build = |listed: &SuiteWorkload, scale| build_listed(listed, scale, &policy, &host);
    let references = targets.split_off(measured);
    // With --configs the targets were names for the checks above: the
    // session measures the configurations where it builds them.
    if configs.is_some() {
        targets.clear();
    }
    let request = Request {
        suite: &suite,
        build: &build,
        targets,
        references,
        configs: configs.as_ref(),
        crash,
        precision,
        repeat,
        options: Options {
            scale: args.scale,
            keep: args.keep.keep,
            cold: args.cold,
            quiet: args.quiet,
            verbose: args.verbose,
            fresh: args.fresh,
            keep_going: args.keep_going,
        },
        record,
        resumed,
        scratch_id: run_id,
        save_path: save_path.clone(),
        json: json.map(Path::to_path_buf),
    };
    // No other fsbench saves into these files while this one measures (a
    // --resume of this run would measure the same targets again).
    // Under MPI rank 0 alone saves, so it alone claims.
    let json_file = json.filter(|path| !crate::store::is_stdout(path));
    let saved = save_path.as_deref().into_iter().chain(json_file);
    let _claims = crate::store::claim(saved.filter(|_| crate::scale::is_root()))?;
    let Some(outcome) = crate::session::run(request)? else {
        return Ok(());
    };
    print_outcome(&args, &outcome, save_path.as_deref(), json, started)
}

/// The table, where the result was saved, why the repetitions stopped,
/// what building took; an error if a configuration could not be built.
fn print_outcome(
    args: &RunArgs,
    outcome: &Outcome,
    save_path: Option<&Path>,
    json: Option<&Path>,
    started: Instant,
) -> anyhow::Result<()> {
    let record = &outcome.record;
    let report_clock = Instant::now();
    // By name, as every report of the saved record takes it: targets built
    // from configurations are recorded in the order they were built.
    let summary = Summary::with_baseline(record, crate::report::baseline_of(record));
    let table = Terminal::for_stdout().render(record, &summary)?;
    let report_time = report_clock.elapsed() + outcome.save_time;
    emit(tables_stream(json), &table)?;
    if let Some(path) = save_path {
        emit(
            Stream::Stderr,
            &format!("fsbench: result saved to {}\n", path.display()),
        )?;
    }
    if let Some(stopping) = &record.stopping {
        emit(Stream::Stderr, &format!("fsbench: {stopping}\n"))?;
    }
    let wall = started.elapsed();
    let builds = &outcome.builds;
    // Nothing built (the only configuration failed): nothing to time.
    if args.configs.is_some() && !builds.built.is_empty() {
        emit(Stream::Stderr, &built_line(builds, wall))?;
    }
    if args.verbose {
        emit(
            Stream::Stderr,
            &outcome.overhead.breakdown(report_time, wall),
        )?;
    }
    match builds.failed.as_slice() {
        [] => Ok(()),
        failed => anyhow::bail!(
            "{} of the configurations could not be built ({}); the others were measured",
            failed.len(),
            failed
                .iter()
                .map(|(name, _)| name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// How long building took, and what share of the run's wall time.
fn built_line(built: &Builds, wall: std::time::Duration) -> String {
    let builds: u32 = built.built.iter().map(|(_, b)| b.builds).sum();
    format!(
        "fsbench: {builds} builds of {} configurations took {:.1} s ({:.1} % of the run's {:.1} s)\n",
        built.built.len(),
        built.build_seconds(),
        100.0 * built.build_seconds() / wall.as_secs_f64().max(1e-9),
        wall.as_secs_f64()
    )
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
fn load_configs(args: &RunArgs) -> anyhow::Result<Option<(Vec<Config>, Place)>> {
    let Some(file) = &args.configs else {
        return Ok(None);
    };
    if !args.targets.specs().is_empty() {
        return usage(
            "--configs: the configurations are the targets; give no other (--reference may add one)",
        );
    }
    let configs = crate::configs::load(file)?;
    if crate::scale::size() > 1 {
        crate::configs::check_across_hosts(&configs)?;
    }
    if args.keep.keep {
        return usage("--keep cannot go with --configs: what is built is always taken down");
    }
    if !args.allow_shell
        && let Some((config, why)) = configs
            .iter()
            .find_map(|c| c.shell_permission().map(|why| (c, why)))
    {
        return usage(format!("--configs: {} {why}", config.name));
    }
    if !rustix::process::geteuid().is_root() {
        return usage("--configs needs root: it attaches loop devices, runs mkfs and mounts");
    }
    let checked = args
        .wipe
        .iter()
        .map(|device| check_wipeable(device))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // One device named twice (or by a /dev/disk/by-* link and its node) is
    // one device: `Place::wipe_default` takes mkfs to it alone.
    let wipe = crate::storage::wipe::distinct_paths(checked);
    let work_dir = Place::work_dir(args.images.as_deref())?;
    let image_size = crate::size::parse_size(&args.image_size, 1)?;
    if image_size < 16 << 20 {
        return usage("--image-size: at least 16m (mkfs needs room)");
    }
    let place = Place {
        work_dir,
        images: args.images.is_some(),
        image_size,
        direct_io: !args.buffered_images,
        wipe,
    };
    place.check(&configs)?;
    Ok(Some((configs, place)))
}

/// The suite's crash entry checked against the configurations before
/// anything is built; None without one. Only configurations fsbench
/// builds can be cut off.
fn plan_crash<'a>(
    suite: &Suite,
    configs: Option<&'a (Vec<Config>, Place)>,
    scale: f64,
) -> anyhow::Result<Option<CrashPlan<'a>>> {
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
        .and_then(|args| super::crash::entry_options(&args))
        .map_err(|e| suite.locate(e, entry))?;
    let place = options.place(place.work_dir.clone());
    let recordables = crash::recordables(configs, &place)?;
    place.check(configs)?;
    Ok(Some(CrashPlan {
        options,
        place,
        recordables,
    }))
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
fn refuse_under_mpi(suite: &Suite) -> anyhow::Result<()> {
    if crate::scale::size() == 1 {
        return Ok(());
    }
    let alone = |listed: &&SuiteWorkload| find(&listed.kind).is_some_and(|k| !k.under_mpi);
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

/// Builds a suite's workload with its kind's parser, its sizes scaled;
/// `policy` says what its written commands may do.
fn build_listed(
    listed: &SuiteWorkload,
    scale: f64,
    policy: &Policy,
    host: &HostEnv,
) -> anyhow::Result<Box<dyn Workload>> {
    let args = listed.scaled_args(scale)?;
    let commands = listed.scaled_commands(scale)?;
    let input = EntryInput {
        args: &args,
        commands: &commands,
        policy,
        host,
    };
    build_entry(&listed.kind, &input)
}

/// `--suite`'s help: every built-in suite by name, from the registry.
fn suite_help() -> String {
    format!(
        "A built-in suite ({}) or a TOML file",
        builtin_names().join(", ")
    )
}

fn list_suites() -> anyhow::Result<()> {
    let mut text = String::new();
    for name in builtin_names() {
        let suite = Suite::load(name)?;
        text += &format!(
            "{name:<12} {} workloads, repeat {}: {}\n",
            suite.workloads.len(),
            suite.repeat,
            suite.description
        );
    }
    emit(Stream::Stdout, &text)
}

fn show_suite(name: &str) -> anyhow::Result<()> {
    match builtin_text(name) {
        Some(text) => emit(Stream::Stdout, text),
        None => usage(format!(
            "--show-suite {name}: no such built-in suite ({})",
            builtin_names().join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flag added to `fsbench run` must say whether a resumed run takes
    /// it: left out of both lists, it would be silently dropped on resume.
    #[test]
    fn every_flag_of_run_conflicts_with_resume_or_is_taken_from_the_resuming_line() {
        let resumable = [
            "allow_shell",
            "max_time",
            "quiet",
            "verbose",
            "resume",
            "help",
        ];
        let command = RunArgs::augment_args(clap::Command::new("run"));
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            assert!(
                RESUME_CONFLICTS.contains(&id) != resumable.contains(&id),
                "{id}: in neither or both of RESUME_CONFLICTS and the resumable flags"
            );
        }
    }
}
