//! `fsbench tree`: real-world tree workloads (copy a photo library, rm -rf,
//! untar, find, stat, read everything, concatenate, stream) on a generated
//! dataset or the user's own directory, reported as the seeds' tables.
use std::path::{Path, PathBuf};

use clap::{Args, Parser};

use super::output::{check_json_path, first_line, json_to_stdout};
use super::synclog::SyncLogArgs;
use crate::error::{UsageError, usage};
use crate::report::markdown::padded_table;
use crate::report::output::{Stream, emit};
use crate::result::WorkloadResult;
use crate::runner::{
    RunOptions, check_repeat, finish_record, new_run_id, new_run_result, run_on_target,
};
use crate::size::parse_size;
use crate::storage::Target;
use crate::workload::threads::MAX_THREADS;
use crate::workload::tree::command::CommandTemplate;
use crate::workload::tree::dataset::DatasetKind;
use crate::workload::tree::{Op, Source, TreeConfig, TreeWorkload, check_source_outside};
use crate::workload::{Progress, Workload};

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
    #[arg(long, value_name = "SIZE")]
    stream_size: Option<String>,
    /// Threads of find, stat, read, copy and delete (concat, untar and stream
    /// stay sequential); at most 1024.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=i64::from(MAX_THREADS)))]
    threads: u16,
    /// Do not sync and drop caches between operations (results that fit in
    /// RAM are then flagged).
    #[arg(long)]
    no_drop_caches: bool,
    #[command(flatten)]
    sync_log: SyncLogArgs,
}

#[derive(Debug, Args)]
#[command(after_help = TREE_EXAMPLES, after_long_help = format!("Datasets (at scale 1):\n{}\n\n{TREE_EXAMPLES}", DatasetKind::help()))]
pub struct TreeArgs {
    /// Directory to test; `name=path` names it in reports.
    #[arg(value_name = "TARGET")]
    target: String,
    #[command(flatten)]
    options: TreeOptions,
    /// Run everything N times.
    #[arg(long, value_name = "N", default_value_t = 1)]
    repeat: u32,
    /// Only the table (no progress).
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Keep the scratch data (dataset and every output) instead of
    /// removing it.
    #[arg(long)]
    keep: bool,
}

impl TreeOptions {
    fn config(&self, keep_outputs: bool) -> anyhow::Result<TreeConfig> {
        let source = match &self.source {
            Some(dir) => Source::Dir(checked_source(dir)?),
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
            ops: parse_ops(&self.ops, !commands.is_empty())?,
            commands,
            stream_bytes: self
                .stream_size
                .as_deref()
                .map(|s| parse_size(s, 1))
                .transpose()?,
            drop_caches: !self.no_drop_caches,
            threads: self.threads.into(),
            keep_outputs,
            sync_log: self.sync_log.config(),
        })
    }
}

/// `find,copy` or `all` into sorted operations; `cmd` is added when
/// `--cmd` is given and required for it.
fn parse_ops(list: &str, with_commands: bool) -> anyhow::Result<Vec<Op>> {
    let mut ops = Vec::new();
    for name in list.split(',').map(str::trim) {
        match (name, Op::parse(name)) {
            ("all", _) => ops.extend(Op::all()),
            (_, Some(op)) => ops.push(op),
            (_, None) => {
                return usage(format!(
                    "--ops {list}: unknown operation '{name}'; use {} or all",
                    Op::names()
                ));
            }
        }
    }
    match (with_commands, ops.contains(&Op::Cmd)) {
        (true, _) => ops.push(Op::Cmd),
        (false, true) => {
            return usage("--ops cmd: give the command with --cmd 'COMMAND {src} {dst}'");
        }
        (false, false) => {}
    }
    ops.sort();
    ops.dedup();
    Ok(ops)
}

fn checked_source(dir: &Path) -> anyhow::Result<PathBuf> {
    let shown = dir.display();
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            usage(format!("--source {shown} does not exist"))
        }
        Err(e) => usage(format!("--source {shown}: {e}")),
        Ok(meta) if !meta.is_dir() => usage(format!("--source {shown} is not a directory")),
        Ok(_) => {
            Ok(std::fs::canonicalize(dir)
                .map_err(|e| UsageError(format!("--source {shown}: {e}")))?)
        }
    }
}

pub fn run(args: TreeArgs, json: Option<&Path>) -> anyhow::Result<()> {
    check_repeat(args.repeat)?;
    let target = Target::parse(&args.target)?;
    let config = args.options.config(args.keep)?;
    target.require_dir()?;
    check_source_outside(&config.source, &target)?;
    check_json_path(json)?;
    let to = if json_to_stdout(json) {
        Stream::Stderr
    } else {
        Stream::Stdout
    };
    let mut workload = TreeWorkload::new(config.clone())?;
    emit(to, &heading(&config, &target, &workload))?;
    let run_id = new_run_id();
    let record = new_run_result(&run_id);
    let options = RunOptions {
        repetitions: args.repeat,
        keep: args.keep,
        progress: Progress::new(args.quiet),
    };
    let target_result = run_on_target(&target, &mut workload, &run_id, &options, |result| {
        emit(to, &table(result))
    })?;
    finish_record(record, target_result, json)
}

fn heading(config: &TreeConfig, target: &Target, workload: &TreeWorkload) -> String {
    let what = match &config.source {
        Source::Dataset { kind, scale, seed } => {
            format!("dataset {} (scale {scale}, seed {seed})", kind.name())
        }
        Source::Dir(path) => format!("source {} (read-only)", path.display()),
    };
    format!(
        "fsbench tree: {what} on {}\n{}\n",
        target.name,
        workload.description().summary()
    )
}

/// The table's text columns (operation, flags), left-aligned; the numbers
/// are right-aligned.
const TEXT_COLUMNS: &[usize] = &[0, 5];

/// Seed 000's table: one row per operation, elapsed s and MB/s (plus
/// entries/s and CPU %), as Markdown.
fn table(result: &WorkloadResult) -> String {
    let mut rows = vec![[
        "operation".to_string(),
        "elapsed (s)".into(),
        "MB/s".into(),
        "entries/s".into(),
        "CPU %".into(),
        "flags".into(),
    ]];
    for elapsed in result.metrics.iter().filter(|m| m.unit == "s") {
        let op = elapsed.name.trim_end_matches("_s");
        let rate = |suffix: &str, decimals: usize| {
            result
                .metric(&format!("{op}_{suffix}"))
                .map_or("-".to_string(), |m| format!("{:.decimals$}", m.value))
        };
        let flags: Vec<&str> = elapsed
            .flags
            .iter()
            .map(|f| match f {
                crate::result::Flag::TooShort => "short",
                crate::result::Flag::FitsInPageCache => "cached",
            })
            .collect();
        rows.push([
            op.to_string(),
            format!("{:.3}", elapsed.value),
            rate("mb_s", 3),
            rate("entries_s", 0),
            elapsed
                .cpu_percent
                .map_or("-".into(), |c| format!("{c:.0}")),
            flags.join(","),
        ]);
    }
    let mut text = format!("\nrepetition {}\n", result.repetition + 1);
    text.push_str(&padded_table(&rows, TEXT_COLUMNS));
    if let Some(line) = sync_log_line(result) {
        text.push_str(&line);
    }
    for note in &result.notes {
        text.push_str(&format!("note: {note}\n"));
    }
    if result.metrics.iter().any(|m| !m.flags.is_empty()) {
        text.push_str("flags: short = under 0.5 s (less precise); cached = the data fits in RAM and was not dropped from it\n");
    }
    text
}

/// `sync log: 87 records, 87 syncs (fdatasync, batch 1) in /mnt/ram (tmpfs); sync p50 0.6 µs, p99 1.3 µs`
fn sync_log_line(result: &WorkloadResult) -> Option<String> {
    let log = result.params.get("sync_log")?;
    let syncs = result.metric("sync_log_syncs")?;
    let latency = syncs.latency.as_ref().map_or(String::new(), |l| {
        let us = |ns: u64| ns as f64 / 1e3;
        format!(
            "; sync p50 {:.1} µs, p99 {:.1} µs",
            us(l.p50_ns),
            us(l.p99_ns)
        )
    });
    Some(format!(
        "sync log: {} records, {} syncs ({}, batch {}) in {} ({}){latency}\n",
        log["records"],
        log["syncs"],
        log["mode"].as_str().unwrap_or("?"),
        log["batch"],
        log["placement"].as_str().unwrap_or("?"),
        log["fs_type"].as_str().unwrap_or("?"),
    ))
}

/// `fsbench tree`'s flags as a suite entry gives them (no target).
#[derive(Debug, Parser)]
#[command(name = "tree")]
struct SuiteTreeArgs {
    #[command(flatten)]
    options: TreeOptions,
}

/// Builds the workload of a suite entry (`fsbench run`).
/// A suite's tree entry. Its `--cmd`s were written in a file, so, like a
/// PostMark `!command` there, they run only with `--allow-shell`.
pub(super) fn suite_workload(
    args: &[String],
    allow_shell: bool,
) -> anyhow::Result<Box<dyn Workload>> {
    let parsed = SuiteTreeArgs::try_parse_from(
        std::iter::once("tree").chain(args.iter().map(String::as_str)),
    )
    .map_err(|e| UsageError(format!("tree: {}", first_line(&e.to_string()))))?;
    if let Some(command) = parsed.options.commands.first().filter(|_| !allow_shell) {
        return usage(format!(
            "tree: --cmd '{command}': a suite's shell commands run only with --allow-shell"
        ));
    }
    Ok(Box::new(TreeWorkload::new(parsed.options.config(false)?)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_are_sorted_and_checked() {
        assert_eq!(
            parse_ops("delete,copy,copy", false).unwrap(),
            [Op::Copy, Op::Delete]
        );
        assert_eq!(parse_ops("copy", true).unwrap(), [Op::Copy, Op::Cmd]);
        assert!(parse_ops("all", false).unwrap().len() >= 7);
        assert!(parse_ops("copy,move", false).is_err());
        assert!(parse_ops("cmd", false).is_err());
    }

    #[test]
    fn suite_entries_parse_and_name_unknown_flags() {
        let args = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let workload = suite_workload(
            &args(&[
                "--dataset",
                "images",
                "--scale",
                "0.001",
                "--ops",
                "copy,delete",
            ]),
            false,
        )
        .unwrap();
        assert_eq!(workload.kind(), "tree");
        let err = suite_workload(&args(&["--bogus"]), false)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("--bogus"), "{err}");
    }
}
