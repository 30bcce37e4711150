//! A run's record and the files it is written to, through the one
//! lifecycle every command shares: made new ([`Recording::new`]), saved
//! after each result without an end time ([`Recording::saved`]: a kill -9
//! loses only the result in flight, and the file says it is incomplete),
//! kept as far as it got on an error ([`Recording::failed`]), finished
//! with its end time ([`Recording::finish`]).
use std::path::{Path, PathBuf};

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
        kind: crate::results::KIND.into(),
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

/// A record being measured into, and where it goes.
pub struct Recording {
    pub record: RunResult,
    /// Rewritten (atomically) after every result and at the end: a results
    /// file, a `--json FILE`.
    files: Vec<PathBuf>,
    /// `--json -`: standard output gets the whole record once, at the end.
    stdout: bool,
    /// The references' names, marked in every copy written.
    references: Vec<String>,
    /// How many results the record held when it came (a resumed run's).
    held: usize,
}

impl Recording {
    /// `record` written to `files` (`-`: standard output, at the end only).
    pub fn new<'p>(record: RunResult, files: impl IntoIterator<Item = &'p Path>) -> Recording {
        let (stdout, files): (Vec<&Path>, Vec<&Path>) = files
            .into_iter()
            .partition(|p| crate::results::is_stdout(p));
        Recording {
            held: results_in(&record),
            record,
            files: files.into_iter().map(Path::to_path_buf).collect(),
            stdout: !stdout.is_empty(),
            references: Vec::new(),
        }
    }

    /// Targets of these names are references (the ceilings): marked so in
    /// every copy written.
    pub fn with_references(self, references: Vec<String>) -> Recording {
        Recording { references, ..self }
    }

    /// After a result: the record so far written to the files, without an
    /// end time (a record finished before, such as a PostMark session's
    /// earlier run, is incomplete again while a run is in flight).
    pub fn saved(&self) -> anyhow::Result<()> {
        if self.files.is_empty() {
            return Ok(());
        }
        let mut record = self.marked();
        record.finished = None;
        self.files
            .iter()
            .try_for_each(|path| crate::results::save_in_dir(&record, path))
    }

    /// After an error or an interrupt: what was measured so far (workloads'
    /// results, configurations' power cuts) still goes to the files (never
    /// to standard output, which the error leaves in an unknown state),
    /// without an end time; the error itself is returned. A record this
    /// process added nothing to is left in its files as it was.
    pub fn failed(&self, error: anyhow::Error) -> anyhow::Error {
        let measured = results_in(&self.record);
        if measured <= self.held || !scale::is_root() {
            return error;
        }
        let mut record = self.marked();
        record.finished = None;
        for path in &self.files {
            match crate::results::save_in_dir(&record, path) {
                Ok(()) => stderr_line!(
                    "fsbench: the {measured} result(s) measured before the run stopped were written to {}",
                    path.display()
                ),
                Err(e) => stderr_line!("fsbench: {}", crate::error::error_line(&e)),
            }
        }
        error
    }

    /// The run ended well: its end stamped, the record written to every
    /// file and to standard output when asked.
    pub fn finish(&mut self) -> anyhow::Result<()> {
        self.record.finished = Some(chrono::Utc::now());
        self.mark_references();
        for path in &self.files {
            crate::results::save_in_dir(&self.record, path)?;
        }
        match self.stdout {
            true => crate::results::save(&self.record, Path::new("-")),
            false => Ok(()),
        }
    }

    /// Marks the targets named as references in the record itself.
    pub fn mark_references(&mut self) {
        mark(&mut self.record, &self.references);
    }

    /// A copy of the record with its references marked.
    fn marked(&self) -> RunResult {
        let mut record = self.record.clone();
        mark(&mut record, &self.references);
        record
    }
}

/// The results a record holds: workloads' and configurations' power cuts.
fn results_in(record: &RunResult) -> usize {
    record
        .targets
        .iter()
        .map(|t| t.workloads.len() + usize::from(t.durability.is_some()))
        .sum()
}

/// Marks the targets named in `references` as references.
fn mark(record: &mut RunResult, references: &[String]) {
    for target in &mut record.targets {
        target.reference = references.contains(&target.name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{TargetResult, WorkloadResult};

    fn one_result(record: &mut RunResult) {
        let workload = WorkloadResult::default();
        match record.targets.first_mut() {
            Some(target) => target.workloads.push(workload),
            None => record.targets.push(TargetResult::test("a", vec![workload])),
        }
    }

    fn load(path: &Path) -> RunResult {
        crate::results::load(path).unwrap()
    }

    /// Standard output is written once, at the end: a results file and a
    /// `--json FILE` after every result, without an end time until then.
    #[test]
    fn files_get_every_result_and_standard_output_only_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let (results, json) = (dir.path().join("r/run.json"), dir.path().join("copy.json"));
        let paths = [results.as_path(), json.as_path(), Path::new("-")];
        let mut recording = Recording::new(new_run_result("t"), paths);
        assert_eq!(recording.files, [results.clone(), json.clone()]);
        assert!(recording.stdout);
        one_result(&mut recording.record);
        recording.saved().unwrap();
        for path in [&results, &json] {
            assert!(load(path).finished.is_none(), "{}", path.display());
            assert_eq!(load(path).targets[0].workloads.len(), 1);
        }
        // A record finished once (a PostMark session's earlier run) is
        // incomplete again while the next result is in flight.
        recording.record.finished = Some(chrono::Utc::now());
        one_result(&mut recording.record);
        recording.saved().unwrap();
        assert!(load(&results).finished.is_none());
        assert_eq!(load(&results).targets[0].workloads.len(), 2);
    }

    #[test]
    fn references_are_marked_in_every_copy() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.json");
        let mut recording =
            Recording::new(new_run_result("t"), [file.as_path()]).with_references(vec!["a".into()]);
        one_result(&mut recording.record);
        recording.saved().unwrap();
        assert!(load(&file).targets[0].reference);
        assert!(!recording.record.targets[0].reference);
        recording.finish().unwrap();
        assert!(recording.record.targets[0].reference);
        assert!(load(&file).finished.is_some());
    }

    /// A failure keeps what this process measured; a resumed record it
    /// added nothing to stays in its file as it was.
    #[test]
    fn a_failure_writes_only_what_this_process_added() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.json");
        let mut held = new_run_result("t");
        one_result(&mut held);
        let mut recording = Recording::new(held, [file.as_path()]);
        let _ = recording.failed(anyhow::anyhow!("refused"));
        assert!(!file.exists());
        one_result(&mut recording.record);
        let error = recording.failed(anyhow::anyhow!("disk full"));
        assert_eq!(error.to_string(), "disk full");
        assert_eq!(load(&file).targets[0].workloads.len(), 2);
        assert!(load(&file).finished.is_none());
    }
}
