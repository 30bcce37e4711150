//! `fsbench bonnie`: bonnie++'s flags, same meanings and defaults.
use std::path::{Path, PathBuf};

use clap::{Args, FromArgMatches};

use super::{EntryInput, Kind, new_record, run_single};
use crate::cli::flags::{KeepFlag, Single, parse_flags, refuse_in_suite};
use crate::cli::output::{check_json_path, json_to_stdout};
use crate::compat::bonnie::args::{
    DEFAULT_CHUNK, DEFAULT_FILES_K, SizeSpec, check_name_memory, default_file_size_mib,
    default_seed, parse_file_spec, parse_per_char, parse_size_spec,
};
use crate::compat::bonnie::printout::{CSV_HEADER, csv_line, text_report};
use crate::compat::bonnie::user::switch_to;
use crate::error::usage;
use crate::console::{Stream, emit};
use crate::storage::Target;
use crate::result::env::HostEnv;
use crate::workload::Workload;
use crate::workload::bonnie::{Bonnie, BonnieConfig, FileKind, FileTestConfig, MIB, Seed};

const BONNIE_EXAMPLES: &str = "\
Examples:
  fsbench bonnie -d /mnt/test -s 4g -n 16          data and file tests
  fsbench bonnie -d /mnt/test -s 0 -n 128:4k:1k:8  file tests only: 131072 files of 1-4 KiB in 8 dirs
  fsbench bonnie -d /mnt/test -s 2g -f -D          block tests with O_DIRECT, no per-char tests
  fsbench bonnie -d /mnt/test -x 5 -q > runs.csv   five runs, CSV only (feed it to bon_csv2html)

Compatibility mode: the flags are bonnie++'s letters with bonnie++'s
meanings (-d the directory, -s and -r in MiB when bare, -q CSV only, -n in
units of 1024), not fsbench's common grammar (see fsbench --help).

Differences from bonnie++: no \"+++++\" (every figure is measured; phases under
0.5 s get a note), no refusal of sizes under 2×RAM (reads are flagged as
page-cache results instead), no need for -u as root, -D also covers rewrite,
block read and seeks, and the file tests sync only the tested file system.";

#[derive(Debug, Args)]
#[command(after_help = BONNIE_EXAMPLES)]
pub struct BonnieArgs {
    /// Directory to test (bonnie++'s -d); `name=path` names it in reports.
    #[arg(short = 'd', value_name = "DIR", default_value = ".")]
    dir: String,
    /// Data-test file size in MiB (or with g/t suffix), chunk bytes, seeks, seekers; 0 skips the data tests.
    #[arg(short = 's', value_name = "SIZE[:CHUNK[:SEEKS[:SEEKERS]]]")]
    size: Option<String>,
    /// Files (in units of 1024), max and min size, directories, chunk; 0 skips the file tests.
    #[arg(short = 'n', value_name = "NUM[:MAX[:MIN[:DIRS[:CHUNK]]]]")]
    files: Option<String>,
    /// Machine name for the table and CSV (default: host name).
    #[arg(short = 'm', value_name = "NAME")]
    machine: Option<String>,
    /// RAM in MiB, for the default size and the page-cache flag; 0 disables both.
    #[arg(short = 'r', value_name = "MiB")]
    ram: Option<u64>,
    /// Run N times and print only CSV (with a header line when N > 1).
    #[arg(short = 'x', value_name = "N")]
    runs: Option<u32>,
    /// Run as this user (and group), e.g. `nobody` or `1000:1000`.
    #[arg(short = 'u', value_name = "USER[:GROUP]")]
    user: Option<String>,
    /// Run as this group.
    #[arg(short = 'g', value_name = "GROUP")]
    group: Option<String>,
    /// Quiet: no progress; the table goes to stderr, the CSV alone to stdout.
    #[arg(short = 'q')]
    quiet: bool,
    /// `-f` skips the per-char tests; `-fN` runs them over N MiB (default 3).
    #[arg(short = 'f', value_name = "MiB", num_args = 0..=1, default_missing_value = "")]
    per_char: Option<String>,
    /// fsync after every write and every file creation.
    #[arg(short = 'b')]
    fsync: bool,
    /// O_DIRECT for the block tests (block write, rewrite, block read, seeks).
    #[arg(short = 'D')]
    direct: bool,
    /// Seed of the random numbers (file names, sizes, seek positions).
    #[arg(short = 'z', value_name = "SEED", conflicts_with = "random_file")]
    seed: Option<u32>,
    /// Take random numbers from FILE (32-bit big-endian values).
    #[arg(short = 'Z', value_name = "FILE")]
    random_file: Option<PathBuf>,
    /// Concurrency label (1-200); like bonnie++, it scales the 2×RAM rule.
    #[arg(short = 'c', value_name = "N", default_value_t = 1)]
    concurrency: u32,
    /// bonnie++'s semaphore mode: not supported (use MPI for many clients).
    #[arg(short = 'p', value_name = "N", hide = true)]
    semaphores: Option<String>,
    /// bonnie++'s wait-for-semaphore mode: not supported.
    #[arg(short = 'y', value_name = "s|p", hide = true)]
    sync_start: Option<String>,
    #[command(flatten)]
    keep: KeepFlag,
    /// Under MPI: all ranks run the file tests in one shared directory
    /// (contention on it, as mdtest's default) instead of one each.
    #[arg(long)]
    shared_dir: bool,
}

impl BonnieArgs {
    fn config(&self, host: &HostEnv) -> anyhow::Result<BonnieConfig> {
        if self.semaphores.is_some() || self.sync_start.is_some() {
            return usage(
                "-p/-y (semaphore start) are not supported: run several fsbench processes under MPI instead",
            );
        }
        if !(1..=200).contains(&self.concurrency) {
            return usage(format!(
                "-c {}: concurrency must be 1 to 200",
                self.concurrency
            ));
        }
        let host_ram_mib = host.ram_bytes / MIB;
        let ram_mib = self.ram.unwrap_or(host_ram_mib);
        let size = match &self.size {
            Some(spec) => parse_size_spec(spec)?,
            None => parse_size_spec(&default_file_size_mib(ram_mib).to_string())?,
        };
        let files = match &self.files {
            Some(spec) => parse_file_spec(spec)?,
            None => FileTestConfig {
                num_k: DEFAULT_FILES_K,
                kind: FileKind::Sized { max: 0, min: 0 },
                dirs: 1,
                chunk: DEFAULT_CHUNK,
            },
        };
        if size.file_size_mib == 0 && files.num_k == 0 {
            return usage("-s 0 and -n 0 together leave nothing to test");
        }
        check_name_memory(&files, host_ram_mib)?;
        let SizeSpec {
            file_size_mib,
            chunk,
            seeks,
            seekers,
        } = size;
        Ok(BonnieConfig {
            machine: self
                .machine
                .clone()
                .unwrap_or_else(|| host.hostname.clone()),
            file_size_mib,
            chunk,
            seeks,
            seekers,
            byte_io_mib: parse_per_char(self.per_char.as_deref())?,
            files,
            ram_mib,
            concurrency: self.concurrency,
            fsync_every_write: self.fsync,
            direct: self.direct,
            shared_dir: self.shared_dir,
            seed: match (&self.random_file, self.seed) {
                (Some(path), _) => Seed::File(path.clone()),
                (None, Some(seed)) => Seed::Number(seed),
                (None, None) => Seed::Number(default_seed()),
            },
        })
    }
}

pub const KIND: Kind = Kind {
    name: "bonnie",
    about: "bonnie++'s tests, flags and CSV, timed with ns clocks (never \"+++++\")",
    under_mpi: true,
    takes_commands: false,
    apart: false,
    args: BonnieArgs::augment_args,
    run: |matches, json| BonnieArgs::from_arg_matches(matches)?.run(json),
    entry: suite_workload,
};

impl BonnieArgs {
    fn run(self, json: Option<&Path>) -> anyhow::Result<()> {
        let record = new_record();
        let config = self.config(&record.host)?;
        let target = Target::parse(&self.dir)?;
        switch_to(self.user.as_deref(), self.group.as_deref())?;
        let runs = self.runs.unwrap_or(1);
        if runs == 0 {
            return usage("-x 0: nothing to run (use at least 1)");
        }
        check_json_path(json)?;
        let csv_only = self.runs.is_some();
        // stdout carries the CSV (and the table unless -q) — or only the JSON.
        let (table_to, csv_to) = match (json_to_stdout(json), self.quiet) {
            (true, _) => (Stream::Stderr, Stream::Stderr),
            (false, true) => (Stream::Stderr, Stream::Stdout),
            (false, false) => (Stream::Stdout, Stream::Stdout),
        };
        if csv_only && runs > 1 {
            emit(csv_to, &format!("{CSV_HEADER}\n"))?;
        }
        let how = Single {
            repetitions: runs,
            keep: self.keep.keep,
            quiet: self.quiet,
        };
        let mut workload = Bonnie::new(config.clone())?;
        run_single(record, target, &mut workload, how, json, |result| {
            if !csv_only {
                emit(table_to, &text_report(&config, result))?;
            }
            emit(csv_to, &format!("{}\n", csv_line(&config, result)))
        })
    }
}

/// A bonnie workload from a suite entry's flags (bonnie++'s, without the
/// ones `fsbench run` decides: -d, -x, -q, -u, -g, --keep).
fn suite_workload(input: &EntryInput<'_>) -> anyhow::Result<Box<dyn Workload>> {
    let args: BonnieArgs = parse_flags(input.args)?;
    let run_decides = "fsbench run decides it";
    refuse_in_suite(
        "-d",
        args.dir != ".",
        "the targets are fsbench run's --target",
    )?;
    refuse_in_suite("-x", args.runs.is_some(), "use fsbench run --repeat")?;
    refuse_in_suite("-q", args.quiet, run_decides)?;
    refuse_in_suite(
        "-u/-g",
        args.user.is_some() || args.group.is_some(),
        run_decides,
    )?;
    args.keep.refuse_in_suite()?;
    refuse_in_suite(
        "--shared-dir",
        args.shared_dir,
        "fsbench run does not run under MPI",
    )?;
    Ok(Box::new(Bonnie::new(args.config(input.host)?)?))
}
