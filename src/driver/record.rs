//! The result record of a run: its id, its start, the host, and where it
//! is written when the run ends — completely, or up to an error or an
//! interrupt (a partial record, marked by its missing end time).
use std::path::Path;

use crate::console::stderr_line;
use crate::result::{RunResult, SCHEMA_VERSION};
use crate::scale;
use crate::storage::env::probe_host;

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
        kind: crate::store::KIND.into(),
        schema_version: SCHEMA_VERSION,
        fsbench_version: env!("CARGO_PKG_VERSION").into(),
        run_id: run_id.into(),
        command: std::env::args().collect(),
        suite: None,
        suite_text: None,
        started: chrono::Utc::now(),
        finished: None,
        host: probe_host(),
        targets: Vec::new(),
        stopping: None,
        min_effect: None,
    }
}

/// Ends a run that went well: stamps the end and writes the JSON when
/// `--json` asked for it.
pub fn finish(record: &mut RunResult, json: Option<&Path>) -> anyhow::Result<()> {
    record.finished = Some(chrono::Utc::now());
    match json {
        Some(path) => crate::store::save(record, path),
        None => Ok(()),
    }
}

/// `--json FILE` rewritten (atomically) after every result, without an
/// end time until the run ends: a kill -9 loses only the result in
/// flight. Standard output (`-`) gets the whole result once, at the end.
pub fn save_so_far(record: &RunResult, json: Option<&Path>) -> anyhow::Result<()> {
    match json.filter(|path| !crate::store::is_stdout(path)) {
        Some(path) => crate::store::save(record, path),
        None => Ok(()),
    }
}

/// After an error or an interrupt: what was measured so far (workloads'
/// results, configurations' power cuts) still goes to the files asked for
/// (never to stdout, which the error leaves in an unknown state), without
/// an end time; the error itself is returned.
pub fn keep_partial(record: &RunResult, files: &[&Path], error: anyhow::Error) -> anyhow::Error {
    let measured: usize = record
        .targets
        .iter()
        .map(|t| t.workloads.len() + usize::from(t.durability.is_some()))
        .sum();
    if measured == 0 || !scale::is_root() {
        return error;
    }
    for path in files.iter().filter(|p| !crate::store::is_stdout(p)) {
        match crate::store::save(record, path) {
            Ok(()) => stderr_line!(
                "fsbench: the {measured} result(s) measured before the run stopped were written to {}",
                path.display()
            ),
            Err(e) => stderr_line!("fsbench: {}", crate::error::error_line(&e)),
        }
    }
    error
}
