//! `fsbench tree`: real-world tree workloads (copy a photo library, rm -rf,
//! untar, find, stat, read everything, concatenate, stream) on a generated
//! dataset or the user's own directory, reported as the seeds' tables.
use std::path::{Path, PathBuf};

use clap::{Args, FromArgMatches};

use super::synclog::SyncLogArgs;
use super::{EntryInput, Kind, new_record, run_single};
use crate::cli::flags::{OneTarget, RunFlags, parse_flags};
use crate::cli::output::{check_json_path, tables_stream};
use crate::report::live::{tree_heading, tree_table};
use crate::console::emit;
use crate::size::parse_size;
use crate::storage::Target;
use crate::units::size_arg;
use crate::workload::Workload;
use crate::workload::threads::MAX_THREADS;
use crate::workload::tree::command::CommandTemplate;
use crate::workload::tree::dataset::DatasetKind;
use crate::workload::tree::{Op, Source, TreeConfig, TreeWorkload, check_source_outside};

pub const KIND: Kind = Kind {
    name: "tree",
    about: "Real-world tree workloads: copy (rsync -a), rm -rf, untar, find, \
read, concat, stream on a generated dataset or your own directory",
    under_mpi: true,
    takes_commands: false,
    apart: false,
    args: TreeArgs::augment_args,
    run: |matches, json| TreeArgs::from_arg_matches(matches)?.run(json),
    entry: suite_workload,
};

const TREE_EXAMPLES: &str = "\
Examples:
  fsbench tree /mnt/x                                  photos at scale 0.02 (~160 MB), every operation
  fsbench tree /mnt/x --dataset photos --scale 1       seed 000's 10k-entry, 7.9 GB photo library
  fsbench tree /mnt/x --dataset small --scale 0.1 --ops copy,find,read
  fsbench tree /mnt/x --dataset source --ops untar,delete    seed 001: untar a kernel-like tree, rm -rf
  fsbench tree /mnt/x --source ~/Pictures --ops copy,delete  your own tree (only read, never changed)
  fsbench tree /mnt/x --ops copy --cmd 'rsync -a {src}/ {dst}/' --cmd 'cp -a {src}/. {dst}/'
  fsbench tree /mnt/x --ops copy,delete --sync-log target   each entry synced to a log on /mnt/x

Operations run in this order: find, stat, read, concat, untar, copy, cmd,
stream, delete (delete removes the copy; without copy an untimed copy is made first).
As root, caches are synced and dropped before each operation.";

/// The workload's flags (everything but the target and the run options),
/// shared by `fsbench tree` and suite entries.
#[derive(Debug, Args)]
pub struct TreeOptions {
    /// Dataset to generate: photos, images, source, small, maildir.
    #[arg(long, value_name = "NAME", default_value = "photos")]
    dataset: String,
    /// Size factor of the dataset (1 = the seeds' size; photos: 7.9 GB).
    #[arg(
        long,
        value_name = "F",
        default_value_t = 0.02,
        allow_negative_numbers = true
    )]
    scale: f64,
    /// Seed of the generator: the same seed gives the same tree.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Use this directory as the dataset instead (only read, never
    /// modified).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["dataset", "scale", "seed"])]
    source: Option<PathBuf>,
    /// Operations, comma-separated: find, stat, read, concat, untar, copy,
    /// stream, delete, cmd, or all.
    #[arg(long, value_name = "LIST", default_value = "all")]
    ops: String,
    /// Time this command on the dataset too ({src}: the dataset, {dst}: an
    /// empty directory); repeat for several.
    #[arg(long = "cmd", value_name = "COMMAND")]
    commands: Vec<String>,
    /// Size of the stream test's file [default: the dataset's size, at
    /// least 16 MiB].
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    stream_size: Option<String>,
    /// Threads of find, stat, read, copy and delete (concat, untar and stream
    /// stay sequential); at most 1024, and no more than the tree has
    /// directories.
    #[arg(short = 'j', long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=i64::from(MAX_THREADS)))]
    threads: u16,
    /// Do not sync and drop caches between operations (results that fit in
    /// RAM are then flagged).
    #[arg(long)]
    no_drop_caches: bool,
    /// Do not end copy, untar and concat with a sync inside their timed
    /// window: time the page cache alone (flagged), not the trip to the
    /// storage.
    #[arg(long)]
    no_end_sync: bool,
    #[command(flatten)]
    sync_log: SyncLogArgs,
}

#[derive(Debug, Args)]
#[command(after_help = TREE_EXAMPLES, after_long_help = format!("Datasets (at scale 1):\n{}\n\n{TREE_EXAMPLES}", DatasetKind::help()))]
pub struct TreeArgs {
    #[command(flatten)]
    target: OneTarget,
    #[command(flatten)]
    options: TreeOptions,
    #[command(flatten)]
    run: RunFlags,
}

impl TreeOptions {
    fn config(&self, keep_outputs: bool) -> anyhow::Result<TreeConfig> {
        let source = match &self.source {
            Some(dir) => Source::dir(dir)?,
            None => {
                let kind = DatasetKind::parse(&self.dataset)?;
                kind.check_scale(self.scale)?;
                Source::Dataset {
                    kind,
                    scale: self.scale,
                    seed: self.seed,
                }
            }
        };
        let commands = self
            .commands
            .iter()
            .map(|c| CommandTemplate::parse(c))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(TreeConfig {
            source,
            ops: Op::parse_list(&self.ops, !commands.is_empty())?,
            commands,
            stream_bytes: self
                .stream_size
                .as_deref()
                .map(|s| parse_size(s, 1))
                .transpose()?,
            drop_caches: !self.no_drop_caches,
            end_sync: !self.no_end_sync,
            threads: self.threads.into(),
            keep_outputs,
            sync_log: self.sync_log.config(),
        })
    }
}

impl TreeArgs {
    fn run(self, json: Option<&Path>) -> anyhow::Result<()> {
        let how = self.run.single()?;
        let Some(spec) = self.target.spec() else {
            return crate::error::usage("give the directory to test: fsbench tree TARGET");
        };
        let target = Target::parse(spec)?;
        // The outputs go with the scratch data when it is kept.
        let config = self.options.config(how.keep)?;
        target.require_dir()?;
        // Before the source is walked to describe it: a source that holds
        // the target (`--source /`) is refused at once. The driver checks
        // again, for suites.
        check_source_outside(&config.source, &target)?;
        check_json_path(json)?;
        let to = tables_stream(json);
        let record = new_record();
        let mut workload = TreeWorkload::new(config.clone(), record.host.ram_bytes)?;
        emit(to, &tree_heading(&config, &target.name, &workload))?;
        run_single(record, target, &mut workload, how, json, |result| {
            emit(to, &tree_table(result))
        })
    }
}

/// A suite's tree entry: the flags without the target. Its `--cmd`s were
/// written in a file, so `policy` decides whether they may run.
fn suite_workload(input: &EntryInput<'_>) -> anyhow::Result<Box<dyn Workload>> {
    let options: TreeOptions = parse_flags(input.args)?;
    for command in &options.commands {
        input.policy.check_written_command(command)?;
    }
    let config = options.config(false)?;
    Ok(Box::new(TreeWorkload::new(config, input.host.ram_bytes)?))
}

#[cfg(test)]
mod tests {
    use super::super::build_for_test;

    #[test]
    fn suite_entries_parse_and_name_unknown_flags() {
        let workload =
            build_for_test("tree", "--dataset images --scale 0.001 --ops copy,delete").unwrap();
        assert_eq!(workload.kind(), "tree");
        let err = build_for_test("tree", "--bogus").err().unwrap().to_string();
        assert!(err.contains("--bogus"), "{err}");
    }

    #[test]
    fn a_suite_entry_runs_commands_only_when_shell_is_allowed() {
        let err = build_for_test("tree", "--ops copy --cmd true")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("--allow-shell"), "{err}");
    }
}
