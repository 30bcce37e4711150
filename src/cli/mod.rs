//! The command line: clap definitions, dispatch, and the mapping of
//! outcomes to exit codes (0 ok, 1 run failed, 2 bad usage, 128+N signal).
mod bonnie;
mod clean;
mod env;
mod io;
pub mod output;
mod postmark;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::error::{Interrupted, UsageError};

const EXAMPLES: &str = "\
Examples:
  fsbench bonnie -d . -s 1g -n 16            bonnie++'s tests on the current directory
  fsbench bonnie -d /mnt/nfs -s 0 -n 64:4k:1k:4 --json nfs.json
  fsbench postmark postmark.cfg              a PostMark configuration file, run unchanged
  fsbench io /mnt/ssd --suite patterns       seed 003's I/O patterns, page cache and O_DIRECT
  fsbench env /mnt/ssd /mnt/nas              what fsbench records about the machine and targets
  fsbench clean /mnt/ssd                     remove scratch data left by a killed run";

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
    /// bonnie++'s tests, flags and CSV, timed with ns clocks (never "+++++").
    Bonnie(Box<bonnie::BonnieArgs>),
    /// PostMark's command language and workload (same files and operations
    /// for any configuration and seed), timed with ns clocks.
    Postmark(Box<postmark::PostmarkArgs>),
    /// vdbench/fio-style I/O patterns: transfer size, read %, seek %,
    /// threads, O_DIRECT; interval lines and latency percentiles.
    Io(Box<io::IoArgs>),
    /// Print the environment record: host, and per target its file system,
    /// mount options, device, scheduler, cache mode, free space.
    Env(env::EnvArgs),
    /// Remove scratch directories left by a killed run (and only those).
    Clean(clean::CleanArgs),
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
    let outcome = match cli.command {
        Command::Bonnie(args) => bonnie::run(*args, cli.json.as_deref()),
        Command::Postmark(args) => postmark::run(*args, cli.json.as_deref()),
        Command::Io(args) => io::run(*args, cli.json.as_deref()),
        Command::Env(args) => env::run(args, cli.json.as_deref()),
        Command::Clean(args) => clean::run(args, cli.json.as_deref()),
    };
    match outcome {
        Ok(()) => 0,
        Err(e) => report_error(&e),
    }
}

fn report_error(e: &anyhow::Error) -> i32 {
    if let Some(interrupted) = e.downcast_ref::<Interrupted>() {
        let cleanup = match crate::target::scratch::cleanup_failed() {
            false => "scratch data removed",
            true => "scratch data NOT fully removed (see above)",
        };
        eprintln!("fsbench: {interrupted}; {cleanup}");
        return 128 + interrupted.signal;
    }
    // One line: anyhow's alternate form joins the context chain with ": ".
    eprintln!("fsbench: error: {e:#}");
    if e.downcast_ref::<UsageError>().is_some() {
        2
    } else {
        1
    }
}
