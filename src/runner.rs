//! Running a workload on a target: checks, scratch directory, repetitions,
//! cleanup, and the result record. Shared by every subcommand that runs
//! workloads.
use crate::result::{RunResult, SCHEMA_VERSION, TargetResult, WorkloadResult};
use crate::scale;
use crate::storage::Target;
use crate::storage::env::{probe_host, probe_target};
use crate::storage::scratch::Scratch;
use crate::workload::{Progress, RunContext, Workload};

pub struct RunOptions {
    pub repetitions: u32,
    pub keep: bool,
    pub progress: Progress,
}

/// Refuses `--repeat 0`, for every command that repeats: there would be
/// nothing to run.
pub fn check_repeat(repeat: u32) -> anyhow::Result<u32> {
    match repeat {
        0 => crate::error::usage("--repeat 0: nothing to run (use at least 1)"),
        n => Ok(n),
    }
}

/// A unique id, sortable by time, that no one can guess ahead of the run
/// (another local user could otherwise create `fsbench-<id>` first): UTC
/// time and 48 random bits, e.g. `20261121T233000Z-9f3a61c0d2e4`.
pub fn new_run_id() -> String {
    format!(
        "{}-{}",
        chrono::Utc::now().format("%Y%m%dT%H%M%SZ"),
        crate::storage::scratch::random_hex(6)
    )
}

/// The run record before any target has run.
pub fn new_run_result(run_id: &str) -> RunResult {
    RunResult {
        kind: "fsbench-result".into(),
        schema_version: SCHEMA_VERSION,
        fsbench_version: env!("CARGO_PKG_VERSION").into(),
        run_id: run_id.into(),
        command: std::env::args().collect(),
        started: chrono::Utc::now(),
        finished: None,
        host: probe_host(),
        targets: Vec::new(),
    }
}

/// Runs `workload` `repetitions` times on `target`; `on_result` sees each
/// repetition's result as soon as it exists. On any error or signal the
/// scratch directory is removed before the error is returned.
///
/// Under MPI every rank runs this with a scratch directory of its own on
/// the shared target; rank 0 alone sees the results, aggregated over all
/// ranks, and prints their per-host and per-rank tables.
pub fn run_on_target(
    target: &Target,
    workload: &mut dyn Workload,
    run_id: &str,
    options: &RunOptions,
    mut on_result: impl FnMut(&WorkloadResult) -> anyhow::Result<()>,
) -> anyhow::Result<TargetResult> {
    target.check(workload.planned_bytes(), workload.planned_files())?;
    workload.check_outside()?;
    let env = probe_target(&target.path).ok();
    let scratch_id = scale::scratch_id(run_id)?;
    let scratch = scale::agree(Scratch::create(&target.path, &scratch_id, options.keep))?;
    let mut workloads = Vec::new();
    for repetition in 0..options.repetitions {
        let ctx = RunContext {
            scratch: &scratch,
            repetition,
            progress: &options.progress,
        };
        // A rank's failure is agreed on here, before its scratch directory
        // goes: no rank is still working when any removes its data.
        let Some(result) = scale::combine(workload.run(&ctx))? else {
            continue;
        };
        on_result(&result)?;
        show_scale_out(&result)?;
        workloads.push(result);
    }
    let cleanup = scratch.finish();
    if let Some(unusual) = cleanup.as_ref().and_then(|c| c.unusual()) {
        eprintln!("fsbench: {}: {unusual}", target.name);
    }
    Ok(TargetResult {
        name: target.name.clone(),
        path: target.path.display().to_string(),
        env,
        workloads,
        cleanup,
    })
}

/// The per-host and per-rank tables of a multi-rank result, on stderr
/// (stdout may carry CSV or JSON that must stay machine-readable).
pub fn show_scale_out(result: &WorkloadResult) -> anyhow::Result<()> {
    match crate::report::scale_out::render(result) {
        Some(text) => crate::report::output::emit(crate::report::output::Stream::Stderr, &text),
        None => Ok(()),
    }
}

/// Ends a single-target command: adds the target's result to the record,
/// stamps the end, and writes the JSON when `--json` asked for it.
pub fn finish_record(
    mut record: RunResult,
    target: TargetResult,
    json: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    record.targets.push(target);
    record.finished = Some(chrono::Utc::now());
    match json {
        Some(path) => write_json(&record, path),
        None => Ok(()),
    }
}

/// Writes the result as pretty JSON (`--json FILE`, `-` for stdout); in an
/// MPI job rank 0 writes the job's.
pub fn write_json(result: &RunResult, path: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context;
    if !scale::is_root() {
        return Ok(());
    }
    let text = serde_json::to_string_pretty(result)? + "\n";
    if path.as_os_str() == "-" {
        return crate::report::output::emit(crate::report::output::Stream::Stdout, &text);
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
