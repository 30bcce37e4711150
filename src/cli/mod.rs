//! The command line: clap definitions, dispatch, and the mapping of
//! outcomes to exit codes: 0 ok; 2 when the command line or a target cannot
//! be used as given (found before anything runs); 1 when the run failed
//! after it started; 128+N for signal N (docs/grammar.md).
mod clean;
mod compare;
mod crash;
mod env;
mod flags;
mod history;
mod install;
mod kinds;
mod output;
mod report;
mod results;
mod run;

use std::path::{Path, PathBuf};

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::console::stderr_line;
use crate::error::Interrupted;
use crate::own_session::Apart;

const EXAMPLES: &str = "\
Examples:
  fsbench run                                the quick suite on the current directory (~1 min)
  fsbench run --suite seeds --scale 0.02 --target xfs=/mnt/xfs --target ext4=/mnt/ext4
  fsbench bonnie -d . -s 1g -n 16            bonnie++'s tests on the current directory
  fsbench bonnie -d /mnt/nfs -s 0 -n 64:4k:1k:4 --json nfs.json
  fsbench postmark postmark.cfg              a PostMark configuration file, run unchanged
  fsbench io /mnt/ssd --suite patterns       seed 003's I/O patterns, page cache and O_DIRECT
  fsbench tree /mnt/ssd --dataset photos     copy, rm -rf, untar, find, read a photo library
  fsbench meta /mnt/ssd -n 100000 -j 4       create, rename, chmod, xattr, link, ls -l, unlink per second
  fsbench durability /mnt/hdd                 what a durable 4 KiB write costs, and is it durable
  fsbench env /mnt/ssd /mnt/nas              what fsbench records about the machine and targets
  fsbench clean /mnt/ssd                     remove scratch data left by a killed run
  fsbench report result.json --markdown      a saved run as Markdown tables (or --csv, --html FILE)
  fsbench compare before.json after.json     relative change per metric, with significance
  fsbench history                            where the saved runs' figures changed, and why";

#[derive(Debug, Parser)]
#[command(
    name = "fsbench",
    version,
    about = "Benchmark file systems and storage configurations side by side",
    long_about = "Benchmark file systems and storage configurations side by side.\n\n\
fsbench writes only inside a scratch directory it creates under each target \
(<target>/fsbench-<run-id>/, marked with a .fsbench-scratch file) and removes \
it at the end, on errors and on Ctrl-C.",
    after_help = EXAMPLES,
    subcommand_required = true,
    arg_required_else_help = true
)]
pub struct Cli {
    /// Write the result (versioned JSON) to FILE; `-` for stdout.
    #[arg(long, global = true, value_name = "FILE")]
    json: Option<PathBuf>,
    /// A network file system's link speed, e.g. 1gbit, when the interfaces
    /// do not say it (virtual ones, a switch port slower than the NIC): a
    /// rate above it is flagged as not the storage's.
    #[arg(long, global = true, value_name = "RATE")]
    link_speed: Option<String>,
}

// The commands that are not workload kinds (those come from the
// registry, `kinds::KINDS`). A doc comment here would become fsbench's
// about text.
#[derive(Debug, Subcommand)]
enum Tool {
    /// Run a suite of workloads on one or more targets, side by side, and
    /// report them with statistics (the quick suite on . by default).
    #[command(display_order = 0)]
    Run(Box<run::RunArgs>),
    /// Simulated power cuts: build each configuration on a recorded disk,
    /// run a workload that knows what it was promised, cut the power at
    /// hundreds of points and count the acknowledged data lost.
    #[command(display_order = 100)]
    Crash(crash::CrashArgs),
    /// Print the environment record: host, and per target its file system,
    /// mount options, device, scheduler, cache mode, free space.
    #[command(display_order = 101)]
    Env(env::EnvArgs),
    /// Remove scratch directories left by a killed run (and only those).
    #[command(display_order = 102)]
    Clean(clean::CleanArgs),
    /// Re-render a saved result: terminal tables, Markdown, CSV, JSON or
    /// HTML, with statistics and ratios to a baseline target.
    #[command(display_order = 103)]
    Report(report::ReportArgs),
    /// Relative change per metric between saved runs (before/after), with
    /// confidence intervals and significance.
    #[command(display_order = 104)]
    Compare(compare::CompareArgs),
    /// List the saved runs, newest first: when, suite, targets, verdict.
    #[command(display_order = 105)]
    Results(results::ResultsArgs),
    /// Saved runs as series over time: where a metric changed beyond the
    /// noise (change points), and what changed there (kernel, mount
    /// options, ...).
    #[command(display_order = 106)]
    History(history::HistoryArgs),
    /// Print a shell completion script (bash, zsh or fish).
    #[command(display_order = 107)]
    Completions(install::CompletionsArgs),
    /// Print the man page fsbench(1), or write one page per command into
    /// a directory.
    #[command(display_order = 108)]
    Man(install::ManArgs),
}

/// The whole command line: the tools, and one subcommand per workload
/// kind of the registry, listed after `run` (display orders 1..) and
/// before the other tools (101..).
pub fn command() -> clap::Command {
    let mut command = Tool::augment_subcommands(Cli::command());
    for (order, kind) in kinds::KINDS.iter().enumerate() {
        // The about goes on last: flattened argument groups bring their own.
        let subcommand = (kind.args)(clap::Command::new(kind.name))
            .about(kind.about)
            .long_about(None::<&str>)
            .display_order(order + 1);
        command = command.subcommand(subcommand);
    }
    command
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    let matches = match command().try_get_matches() {
        Ok(matches) => matches,
        Err(e) => return clap_error(&e),
    };
    if let Apart::Ended(code) = measure_apart(&matches) {
        return code;
    }
    if let Err(e) = crate::interrupt::install() {
        stderr_line!("fsbench: error: cannot install signal handlers: {e}");
        return 1;
    }
    if let Err(e) = crate::scale::init() {
        stderr_line!("fsbench: error: cannot join the MPI job: {e:#}");
        return 1;
    }
    // A rank that failed on its own tells the others here (they then fail
    // too); see `scale::agree`.
    let outcome = crate::scale::agree(dispatch(&matches));
    let code = match outcome {
        Ok(()) => exit_code_of_cleanup(),
        Err(e) => report_error(&e),
    };
    crate::scale::finish();
    code
}

/// A kind that measures apart (`Kind::apart`) moves into a session of its
/// own, before any thread starts; not under MPI, whose launcher places
/// its ranks.
fn measure_apart(matches: &ArgMatches) -> Apart {
    let apart = matches
        .subcommand_name()
        .and_then(kinds::find)
        .is_some_and(|kind| kind.apart);
    if !apart || crate::scale::launched_by_mpi() {
        return Apart::Measuring;
    }
    crate::own_session::measure_apart()
}

/// Prints clap's error (or the help it was asked for). A value our own
/// parsers refused (a size, a time) is one line like every other bad
/// input: the parser's message already says what is expected.
fn clap_error(e: &clap::Error) -> i32 {
    match e.kind() {
        clap::error::ErrorKind::ValueValidation => {
            stderr_line!(
                "fsbench: error: {}",
                output::first_line(&e.render().to_string())
            );
        }
        _ => {
            let _ = e.print();
        }
    }
    e.exit_code()
}

/// Runs the command; under MPI only the commands that run workloads on
/// every rank are allowed (`run`, and the kinds that say they run there).
fn dispatch(matches: &ArgMatches) -> anyhow::Result<()> {
    let json = matches.get_one::<PathBuf>("json").map(PathBuf::as_path);
    if let Some(path) = json.filter(|path| !crate::results::is_stdout(path)) {
        crate::results::check_destination(path)?;
    }
    if let Some(rate) = matches.get_one::<String>("link_speed") {
        crate::storage::devices::set_link_speed(crate::size::parse_bit_rate(rate)?);
    }
    let (name, args) = matches.subcommand().expect("clap requires a subcommand");
    if let Some(kind) = kinds::find(name) {
        if !kind.under_mpi {
            crate::scale::require_single(name)?;
        }
        return (kind.run)(args, json);
    }
    let tool = Tool::from_arg_matches(matches)?;
    if !matches!(tool, Tool::Run(_)) {
        crate::scale::require_single(name)?;
    }
    run_tool(tool, json)
}

fn run_tool(tool: Tool, json: Option<&Path>) -> anyhow::Result<()> {
    match tool {
        Tool::Run(args) => run::run(*args, json),
        Tool::Crash(args) => crash::run(args, json),
        Tool::Env(args) => env::run(args, json),
        Tool::Clean(args) => clean::run(args, json),
        Tool::Report(args) => report::run(args, json),
        Tool::Compare(args) => compare::run(args, json),
        Tool::Results(args) => results::run(args, json),
        Tool::History(args) => history::run(args, json),
        Tool::Completions(args) => install::completions(args, json),
        Tool::Man(args) => install::man(args, json),
    }
}

/// A run whose results were saved still fails if it left scratch data
/// behind: the user must know to run `fsbench clean`.
fn exit_code_of_cleanup() -> i32 {
    match crate::storage::scratch::cleanup_failed() {
        false => 0,
        true => {
            stderr_line!(
                "fsbench: error: the results were saved, but scratch data was left behind (see above)"
            );
            1
        }
    }
}

fn report_error(e: &anyhow::Error) -> i32 {
    if e.chain()
        .any(|cause| cause.is::<crate::console::StdoutClosed>())
    {
        return exit_code_of_cleanup();
    }
    let code = crate::scale::exit_code_of(e);
    // Every rank of a failed MPI job knows who failed and why; rank 0 says it.
    if let Some(failed) = e.downcast_ref::<crate::scale::RankFailed>() {
        if crate::scale::is_root() {
            stderr_line!("fsbench: error: {failed}");
        }
        return code;
    }
    if let Some(interrupted) = e.downcast_ref::<Interrupted>() {
        let cleanup = match crate::storage::scratch::cleanup_failed() {
            false => "scratch data removed",
            true => "scratch data NOT fully removed (see above)",
        };
        stderr_line!("fsbench: {interrupted}; {cleanup}");
        return code;
    }
    stderr_line!("fsbench: error: {}", crate::error::error_line(e));
    code
}
