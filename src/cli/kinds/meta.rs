//! `fsbench meta TARGET`: metadata operations per second with latency
//! percentiles, as smallfile and mdtest measure them: create, rename,
//! chmod, setxattr, getxattr, symlink, hard link, `ls -l`, truncate and
//! unlink over N files.
use std::path::Path;

use clap::{Args, FromArgMatches};

use super::{EntryInput, Kind, new_record, run_single};
use crate::cli::flags::{OneTarget, RunFlags, parse_flags};
use crate::cli::output::{check_json_path, tables_stream};
use crate::error::usage;
use crate::report::live::{Columns, latency_table};
use crate::console::emit;
use crate::size::parse_size;
use crate::storage::Target;
use crate::units::size_arg;
use crate::workload::Workload;
use crate::workload::meta::{Meta, MetaConfig, MetaOp};

pub const KIND: Kind = Kind {
    name: "meta",
    about: "Metadata operations per second with latency (smallfile/mdtest style): \
create, rename, chmod, xattrs, symlink, hard link, ls -l, truncate, unlink",
    under_mpi: true,
    takes_commands: false,
    apart: false,
    args: MetaArgs::augment_args,
    run: |matches, json| MetaArgs::from_arg_matches(matches)?.run(json),
    entry: suite_workload,
};

/// The live table: one row per operation, then the notes.
const TABLE: Columns = Columns {
    what: "operation",
    count: "ops",
    rate: "ops/s",
};

const META_EXAMPLES: &str = "\
Examples:
  fsbench meta /mnt/x                                 10000 empty files, every operation
  fsbench meta /mnt/x -j 16                           16 threads, 10000 files each
  fsbench meta /mnt/x -n 100000 --dirs 100 -j 4       100k files in 100 directories, 4 threads
  fsbench meta /mnt/x --ops create,readdir_stat,unlink --size 4k
  mpirun -np 8 fsbench meta /mnt/shared -n 20000      8 clients on a shared file system

Each operation is a phase over every file, in this order: create, rename,
chmod, setxattr, getxattr, symlink, link, readdir_stat (ls -l: read every
directory, lstat every entry), truncate, unlink. Files are created and
removed even when their phase is not selected (untimed). Threads own
separate directories.";

/// The workload's flags (everything but the target and the run options),
/// shared by `fsbench meta` and suite entries.
#[derive(Debug, Args)]
pub struct MetaOptions {
    /// Files per process (each MPI rank has its own) [default: 10000 per
    /// thread, so that a phase lasts as long with more threads].
    #[arg(short = 'n', long, value_name = "N")]
    files: Option<u64>,
    /// Directories the files are spread over (at least one per thread).
    #[arg(long, value_name = "N", default_value_t = 1)]
    dirs: u32,
    /// Bytes written into each file when it is created.
    #[arg(short = 's', long, value_name = "SIZE", default_value = "0", value_parser = size_arg)]
    size: String,
    /// Threads, each in directories of its own.
    #[arg(short = 'j', long, value_name = "N", default_value_t = 1)]
    threads: u32,
    /// Operations to time, comma-separated, or all.
    #[arg(long, value_name = "LIST", default_value = "all")]
    ops: String,
    /// Visit the files in a random order in each phase (else in creation
    /// order, which favours directory caches and B-tree locality).
    #[arg(long)]
    random_order: bool,
    /// Seed of the random order.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
}

#[derive(Debug, Args)]
#[command(after_help = META_EXAMPLES)]
pub struct MetaArgs {
    #[command(flatten)]
    target: OneTarget,
    #[command(flatten)]
    options: MetaOptions,
    #[command(flatten)]
    run: RunFlags,
}

impl MetaOptions {
    fn config(&self) -> anyhow::Result<MetaConfig> {
        Ok(MetaConfig {
            files: self
                .files
                .unwrap_or(FILES_PER_THREAD * u64::from(self.threads.max(1))),
            dirs: self.dirs,
            file_size: parse_size(&self.size, 1)?,
            threads: self.threads,
            ops: parse_ops(&self.ops)?,
            seed: self.seed,
            random_order: self.random_order,
        })
    }
}

/// Files per thread when `-n` is not given: a create phase of 10,000
/// empty files lasts about half a second on a local disk's ext4.
const FILES_PER_THREAD: u64 = 10_000;

/// `rename,unlink` or `all`.
fn parse_ops(list: &str) -> anyhow::Result<Vec<MetaOp>> {
    if list.trim() == "all" {
        return Ok(MetaOp::ALL.to_vec());
    }
    list.split(',')
        .map(|name| match MetaOp::parse(name.trim()) {
            Some(op) => Ok(op),
            None => usage(format!(
                "--ops {list}: unknown operation '{name}'; use {} or all",
                MetaOp::names()
            )),
        })
        .collect()
}

impl MetaArgs {
    fn run(self, json: Option<&Path>) -> anyhow::Result<()> {
        let how = self.run.single()?;
        let Some(spec) = self.target.spec() else {
            return usage("give the directory to test: fsbench meta TARGET");
        };
        let target = Target::parse(spec)?;
        let mut workload = Meta::new(self.options.config()?)?;
        check_json_path(json)?;
        let to = tables_stream(json);
        run_single(new_record(), target, &mut workload, how, json, |result| {
            emit(to, &latency_table(result, &TABLE))
        })
    }
}

/// A suite's meta entry: the flags without the target.
fn suite_workload(input: &EntryInput<'_>) -> anyhow::Result<Box<dyn Workload>> {
    let options: MetaOptions = parse_flags(input.args)?;
    Ok(Box::new(Meta::new(options.config()?)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_are_named_or_all() {
        assert_eq!(parse_ops("all").unwrap().len(), MetaOp::ALL.len());
        assert_eq!(
            parse_ops("unlink, rename").unwrap(),
            [MetaOp::Unlink, MetaOp::Rename]
        );
        let err = parse_ops("rename,move").unwrap_err().to_string();
        assert!(err.contains("'move'") && err.contains("readdir_stat"), "{err}");
    }

    #[test]
    fn a_suite_entry_takes_the_flags_without_a_target() {
        let meta = super::super::build_for_test("meta", "-n 100 --dirs 4 --ops create,unlink");
        assert_eq!(meta.unwrap().kind(), "meta");
        let err = super::super::build_for_test("meta", "/mnt/x -n 100").err().unwrap();
        assert!(err.to_string().contains("/mnt/x"), "{err}");
    }
}
