//! `fsbench run`: a suite on one or more targets, repeated and interleaved,
//! then the side-by-side report. With no arguments: the quick suite on the
//! current directory.
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, FromArgMatches};

use super::flags::{KeepFlag, MinEffectFlag, Targets};
use super::kinds::Registry;
use super::output::{check_json_path, tables_stream};
use crate::analysis::Summary;
use crate::console::{Stream, emit};
use crate::error::usage;
use crate::report::Reporter;
use crate::report::terminal::Terminal;
use crate::session::spec::{Origin, RunFlags};
use crate::session::{Outcome, RunSpec};
use crate::suite::{Suite, builtin_names};
use crate::workload::ColdMode;

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
    let record = crate::results::load(file)?;
    let suite = crate::session::spec::resumable(&record, file)?;
    let shown = file.display();
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
    let origin = Origin::Resumed(Box::new(record), file.to_path_buf());
    measure(args, suite, origin, json)
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
    check_json_path(json)?;
    let spec = RunSpec::check(&flags_of(&args, json)?, suite, origin, &Registry)?;
    let save_path = spec.save_path.clone();
    // No other fsbench saves into these files while this one measures (a
    // --resume of this run would measure the same targets again).
    // Under MPI rank 0 alone saves, so it alone claims.
    let saved = spec.saved_files().filter(|_| crate::scale::is_root());
    let _claims = crate::results::claim(saved)?;
    let Some(outcome) = crate::session::run(spec, &Registry)? else {
        return Ok(());
    };
    print_outcome(&args, &outcome, save_path.as_deref(), json, started)
}

/// The flags of `args`, as the session's spec reads them.
fn flags_of(args: &RunArgs, json: Option<&Path>) -> anyhow::Result<RunFlags> {
    Ok(RunFlags {
        targets: args.targets.specs(),
        references: args.references.clone(),
        repeat: args.repeat,
        precision: args.precision.clone(),
        max_repeat: args.max_repeat,
        max_time: args.max_time.clone(),
        min_effect: args.min_effect.fraction()?,
        scale: args.scale,
        baseline: args.baseline.clone(),
        keep: args.keep.keep,
        quiet: args.quiet,
        verbose: args.verbose,
        save_dir: args.save_dir.clone(),
        no_save: args.no_save,
        allow_shell: args.allow_shell,
        configs: args.configs.clone(),
        images: args.images.clone(),
        buffered_images: args.buffered_images,
        image_size: args.image_size.clone(),
        wipe: args.wipe.clone(),
        cold: args.cold,
        fresh: args.fresh,
        keep_going: args.keep_going,
        json: json.map(Path::to_path_buf),
    })
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
    let summary = Summary::with_baseline(record, crate::analysis::baseline_of(record));
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
        emit(Stream::Stderr, &builds.timing_line(wall))?;
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

/// `--suite`'s help: every built-in suite by name, from the registry.
fn suite_help() -> String {
    format!(
        "A built-in suite ({}) or a TOML file",
        builtin_names().join(", ")
    )
}

fn list_suites() -> anyhow::Result<()> {
    emit(Stream::Stdout, &crate::suite::listing()?)
}

fn show_suite(name: &str) -> anyhow::Result<()> {
    emit(Stream::Stdout, crate::suite::shown(name)?)
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
