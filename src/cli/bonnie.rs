//! `fsbench bonnie`: bonnie++'s flags, same meanings and defaults.
use std::ffi::CString;
use std::path::{Path, PathBuf};

use clap::Args;

use super::flags::{parse_flags, refuse_in_suite};
use super::output::{check_json_path, json_to_stdout};
use crate::compat::bonnie::args::{
    DEFAULT_CHUNK, DEFAULT_FILES_K, SizeSpec, default_file_size_mib, parse_file_spec,
    parse_per_char, parse_size_spec,
};
use crate::compat::bonnie::report::{CSV_HEADER, csv_line, text_report};
use crate::error::usage;
use crate::report::output::{Stream, emit};
use crate::runner::{RunOptions, finish_record, new_run_id, new_run_result, run_on_target};
use crate::storage::Target;
use crate::workload::bonnie::{Bonnie, BonnieConfig, FileKind, FileTestConfig, MIB, Seed};
use crate::workload::{Progress, Workload};

const BONNIE_EXAMPLES: &str = "\
Examples:
  fsbench bonnie -d /mnt/test -s 4g -n 16          data and file tests
  fsbench bonnie -d /mnt/test -s 0 -n 128:4k:1k:8  file tests only: 131072 files of 1-4 KiB in 8 dirs
  fsbench bonnie -d /mnt/test -s 2g -f -D          block tests with O_DIRECT, no per-char tests
  fsbench bonnie -d /mnt/test -x 5 -q > runs.csv   five runs, CSV only (feed it to bon_csv2html)

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
    /// Keep the scratch data instead of removing it.
    #[arg(long)]
    keep: bool,
    /// Under MPI: all ranks run the file tests in one shared directory
    /// (contention on it, as mdtest's default) instead of one each.
    #[arg(long)]
    shared_dir: bool,
}

impl BonnieArgs {
    fn config(&self) -> anyhow::Result<BonnieConfig> {
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
        let ram_mib = self.ram.unwrap_or_else(host_ram_mib);
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
        check_name_memory(&files, host_ram_mib())?;
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
                .unwrap_or_else(crate::storage::env::host_name),
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

/// The file tests hold every name in memory (about 24 bytes a file); refuse
/// counts that would not fit in half of the real RAM (whatever `-r` says)
/// rather than swap or be killed.
fn check_name_memory(files: &FileTestConfig, ram_mib: u64) -> anyhow::Result<()> {
    let needed = files.num_k.saturating_mul(1024).saturating_mul(24);
    if ram_mib > 0 && needed > ram_mib * MIB / 2 {
        return usage(format!(
            "-n {}: {} files need about {} MiB of memory for their names; RAM is {ram_mib} MiB",
            files.num_k,
            files.num_k * 1024,
            needed / MIB
        ));
    }
    Ok(())
}

fn host_ram_mib() -> u64 {
    crate::storage::env::probe_host().ram_bytes / MIB
}

/// bonnie++'s default seed: pid XOR time.
fn default_seed() -> u32 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    std::process::id() ^ now.as_secs() as u32
}

pub fn run(args: BonnieArgs, json: Option<&Path>) -> anyhow::Result<()> {
    let config = args.config()?;
    let target = Target::parse(&args.dir)?;
    if let Some(user) = &args.user {
        drop_privileges(user, args.group.as_deref())?;
    } else if let Some(group) = &args.group {
        set_group(resolve_group(group)?)?;
    }
    let runs = args.runs.unwrap_or(1);
    if runs == 0 {
        return usage("-x 0: nothing to run (use at least 1)");
    }
    check_json_path(json)?;
    let csv_only = args.runs.is_some();
    // stdout carries the CSV (and the table unless -q) — or only the JSON.
    let (table_to, csv_to) = match (json_to_stdout(json), args.quiet) {
        (true, _) => (Stream::Stderr, Stream::Stderr),
        (false, true) => (Stream::Stderr, Stream::Stdout),
        (false, false) => (Stream::Stdout, Stream::Stdout),
    };
    if csv_only && runs > 1 {
        emit(csv_to, &format!("{CSV_HEADER}\n"))?;
    }
    let run_id = new_run_id();
    let record = new_run_result(&run_id);
    let options = RunOptions {
        repetitions: runs,
        keep: args.keep,
        progress: Progress::new(args.quiet),
    };
    let mut workload = Bonnie::new(config.clone())?;
    let target_result = run_on_target(&target, &mut workload, &run_id, &options, |result| {
        if !csv_only {
            emit(table_to, &text_report(&config, result))?;
        }
        emit(csv_to, &format!("{}\n", csv_line(&config, result)))
    })?;
    finish_record(record, target_result, json)
}

/// `-u user[:group]`: switch group, then user, for the whole process,
/// before anything is created (so the writability check is the user's).
fn drop_privileges(spec: &str, group: Option<&str>) -> anyhow::Result<()> {
    let (user, group_in_spec) = match spec.split_once(':') {
        Some((u, g)) => (u, Some(g)),
        None => (spec, None),
    };
    let (uid, primary_gid) = resolve_user(user)?;
    let gid = match group.or(group_in_spec) {
        Some(g) => resolve_group(g)?,
        None => primary_gid,
    };
    set_group(gid)?;
    // SAFETY: plain syscall wrapper; glibc applies it to every thread.
    if unsafe { libc::setuid(uid) } != 0 {
        anyhow::bail!(
            "cannot switch to user {user}: {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

fn set_group(gid: u32) -> anyhow::Result<()> {
    // SAFETY: plain syscall wrappers with valid arguments.
    let failed = unsafe { libc::setgroups(1, &gid) != 0 || libc::setgid(gid) != 0 };
    if failed {
        anyhow::bail!(
            "cannot switch to group {gid}: {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

/// A user name or numeric uid → (uid, primary gid). An unknown numeric uid
/// gets group `nogroup`, as in bonnie++.
fn resolve_user(user: &str) -> anyhow::Result<(u32, u32)> {
    let name = CString::new(user)?;
    // SAFETY: getpwnam/getpwuid return NULL or a pointer valid until the
    // next call; we copy the two fields out at once.
    unsafe {
        let entry = match user.parse::<u32>() {
            Ok(uid) => libc::getpwuid(uid),
            Err(_) => libc::getpwnam(name.as_ptr()),
        };
        if !entry.is_null() {
            return Ok(((*entry).pw_uid, (*entry).pw_gid));
        }
    }
    match user.parse::<u32>() {
        Ok(uid) => Ok((uid, resolve_group("nogroup")?)),
        Err(_) => usage(format!("-u {user}: no such user")),
    }
}

fn resolve_group(group: &str) -> anyhow::Result<u32> {
    if let Ok(gid) = group.parse::<u32>() {
        return Ok(gid);
    }
    let name = CString::new(group)?;
    // SAFETY: as in resolve_user.
    let entry = unsafe { libc::getgrnam(name.as_ptr()) };
    if entry.is_null() {
        return usage(format!("no such group: {group}"));
    }
    // SAFETY: non-null entry from getgrnam.
    Ok(unsafe { (*entry).gr_gid })
}

/// A bonnie workload from a suite entry's flags (bonnie++'s, without the
/// ones `fsbench run` decides: -d, -x, -q, -u, -g, --keep).
pub(super) fn suite_workload(args: &[String]) -> anyhow::Result<Box<dyn Workload>> {
    let args: BonnieArgs = parse_flags(args)?;
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
    refuse_in_suite("--keep", args.keep, "use fsbench run --keep")?;
    refuse_in_suite(
        "--shared-dir",
        args.shared_dir,
        "fsbench run does not run under MPI",
    )?;
    Ok(Box::new(Bonnie::new(args.config()?)?))
}
