//! The command line: clap definitions, dispatch, and the mapping of
//! outcomes to exit codes (0 ok, 1 run failed, 2 bad usage, 128+N signal).
mod bonnie;
mod clean;
mod compare;
mod durability;
mod env;
mod flags;
mod io;
mod output;
mod postmark;
mod report;
mod run;
mod synclog;
mod tree;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::error::Interrupted;

const EXAMPLES: &str = "\
Examples:
  fsbench run                                the quick suite on the current directory (~1 min)
  fsbench run --suite seeds --scale 0.02 --target xfs=/mnt/xfs --target ext4=/mnt/ext4
  fsbench bonnie -d . -s 1g -n 16            bonnie++'s tests on the current directory
  fsbench bonnie -d /mnt/nfs -s 0 -n 64:4k:1k:4 --json nfs.json
  fsbench postmark postmark.cfg              a PostMark configuration file, run unchanged
  fsbench io /mnt/ssd --suite patterns       seed 003's I/O patterns, page cache and O_DIRECT
  fsbench tree /mnt/ssd --dataset photos     copy, rm -rf, untar, find, read a photo library
  fsbench durability /mnt/hdd                 what a durable 4 KiB write costs, and is it durable
  fsbench env /mnt/ssd /mnt/nas              what fsbench records about the machine and targets
  fsbench clean /mnt/ssd                     remove scratch data left by a killed run
  fsbench report result.json --markdown      a saved run as Markdown tables (or --csv, --html FILE)
  fsbench compare before.json after.json     relative change per metric, with significance";

#[derive(Debug, Parser)]
#[command(
    name = "fsbench",
    version,
    about = "Benchmark file systems and storage configurations side by side",
    long_about = "Benchmark file systems and storage configurations side by side.\n\n\
fsbench writes only inside a scratch directory it creates under each target \
(<target>/fsbench-<run-id>/, marked with a .fsbench-scratch file) and removes \
it at the end, on errors and on Ctrl-C.",
    after_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Write the result (versioned JSON) to FILE; `-` for stdout.
    #[arg(long, global = true, value_name = "FILE")]
    json: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a suite of workloads on one or more targets, side by side, and
    /// report them with statistics (the quick suite on . by default).
    Run(Box<run::RunArgs>),
    /// bonnie++'s tests, flags and CSV, timed with ns clocks (never "+++++").
    Bonnie(Box<bonnie::BonnieArgs>),
    /// PostMark's command language and workload (same files and operations
    /// for any configuration and seed), timed with ns clocks.
    Postmark(Box<postmark::PostmarkArgs>),
    /// vdbench/fio-style I/O patterns: transfer size, read %, seek %,
    /// threads, O_DIRECT; interval lines and latency percentiles.
    Io(Box<io::IoArgs>),
    /// Real-world tree workloads: copy (rsync -a), rm -rf, untar, find,
    /// read, concat, stream on a generated dataset or your own directory.
    Tree(Box<tree::TreeArgs>),
    /// fsync/fdatasync/O_SYNC/O_DSYNC cost of durable 4 KiB writes, with
    /// a verdict on whether the stack really makes them durable.
    Durability(durability::DurabilityArgs),
    /// Print the environment record: host, and per target its file system,
    /// mount options, device, scheduler, cache mode, free space.
    Env(env::EnvArgs),
    /// Remove scratch directories left by a killed run (and only those).
    Clean(clean::CleanArgs),
    /// Re-render a saved result: terminal tables, Markdown, CSV, JSON or
    /// HTML, with statistics and ratios to a baseline target.
    Report(report::ReportArgs),
    /// Relative change per metric between saved runs (before/after), with
    /// confidence intervals and significance.
    Compare(compare::CompareArgs),
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    if let Err(e) = crate::interrupt::install() {
        eprintln!("fsbench: error: cannot install signal handlers: {e}");
        return 1;
    }
    if let Err(e) = crate::scale::init() {
        eprintln!("fsbench: error: cannot join the MPI job: {e:#}");
        return 1;
    }
    // A rank that failed on its own tells the others here (they then fail
    // too); see `scale::agree`.
    let outcome = crate::scale::agree(dispatch(cli.command, cli.json.as_deref()));
    let code = match outcome {
        Ok(()) => exit_code_of_cleanup(),
        Err(e) => report_error(&e),
    };
    crate::scale::finish();
    code
}

/// Runs the command; under MPI only the commands that run workloads on
/// every rank are allowed.
fn dispatch(command: Command, json: Option<&std::path::Path>) -> anyhow::Result<()> {
    if !matches!(
        command,
        Command::Bonnie(_)
            | Command::Postmark(_)
            | Command::Tree(_)
            | Command::Io(_)
            | Command::Run(_)
    ) {
        crate::scale::require_single(command.name())?;
    }
    match command {
        Command::Run(args) => run::run(*args, json),
        Command::Bonnie(args) => bonnie::run(*args, json),
        Command::Postmark(args) => postmark::run(*args, json),
        Command::Io(args) => io::run(*args, json),
        Command::Tree(args) => tree::run(*args, json),
        Command::Durability(args) => durability::run(args, json),
        Command::Env(args) => env::run(args, json),
        Command::Clean(args) => clean::run(args, json),
        Command::Report(args) => report::run(args, json),
        Command::Compare(args) => compare::run(args, json),
    }
}

impl Command {
    fn name(&self) -> &'static str {
        match self {
            Command::Run(_) => "run",
            Command::Bonnie(_) => "bonnie",
            Command::Postmark(_) => "postmark",
            Command::Io(_) => "io",
            Command::Tree(_) => "tree",
            Command::Durability(_) => "durability",
            Command::Env(_) => "env",
            Command::Clean(_) => "clean",
            Command::Report(_) => "report",
            Command::Compare(_) => "compare",
        }
    }
}

/// A run whose results were saved still fails if it left scratch data
/// behind: the user must know to run `fsbench clean`.
fn exit_code_of_cleanup() -> i32 {
    match crate::storage::scratch::cleanup_failed() {
        false => 0,
        true => {
            eprintln!(
                "fsbench: error: the results were saved, but scratch data was left behind (see above)"
            );
            1
        }
    }
}

fn report_error(e: &anyhow::Error) -> i32 {
    let code = crate::scale::exit_code_of(e);
    // Every rank of a failed MPI job knows who failed and why; rank 0 says it.
    if let Some(failed) = e.downcast_ref::<crate::scale::RankFailed>() {
        if crate::scale::is_root() {
            eprintln!("fsbench: error: {failed}");
        }
        return code;
    }
    if let Some(interrupted) = e.downcast_ref::<Interrupted>() {
        let cleanup = match crate::storage::scratch::cleanup_failed() {
            false => "scratch data removed",
            true => "scratch data NOT fully removed (see above)",
        };
        eprintln!("fsbench: {interrupted}; {cleanup}");
        return code;
    }
    eprintln!("fsbench: error: {}", crate::error::error_line(e));
    code
}
