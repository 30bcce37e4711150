//! `fsbench results`: the runs saved in a results directory, newest first,
//! each in one row (when it started, suite, targets, repetitions, the
//! verdict's line), so a user finds "the run from last Tuesday" without
//! opening files. A file that is not a whole fsbench result is still a row,
//! saying why, so one bad file never hides the others; a run still being
//! saved, or killed before its end, is a row marked incomplete.
use std::path::{Path, PathBuf};

use chrono::{DateTime, Local, Utc};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ColumnConstraint, ContentArrangement, Table};
use serde::Serialize;

use crate::analysis::Summary;
use crate::analysis::verdict::Verdict;
use crate::result::RunResult;

/// One file of the results directory.
#[derive(Debug, Clone, Serialize)]
pub struct Saved {
    pub path: PathBuf,
    /// When the run started; for an unreadable file, when it was last
    /// written (so it still sorts among the runs).
    pub started: Option<DateTime<Utc>>,
    pub suite: Option<String>,
    pub targets: Vec<String>,
    pub repetitions: u32,
    /// The verdict's line: the first compared target's sentence or counts,
    /// "no comparison" for a lone target, or why the file is not a whole
    /// result.
    pub verdict: String,
    /// A complete fsbench result: readable and finished (not interrupted).
    pub complete: bool,
    /// The command that finishes an incomplete run (`fsbench run
    /// --resume FILE`), when `fsbench run` can.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
}

/// The results directory's saved runs, newest first, how many of its
/// files are not JSON (PostMark's report files, for one) and so not listed,
/// and the temporary files of saves a crash cut short (each result they
/// were to replace keeps its previous version, listed).
#[derive(Debug, Default, Serialize)]
pub struct Listing {
    pub runs: Vec<Saved>,
    pub other_files: usize,
    pub cut_short: Vec<String>,
}

impl Listing {
    /// Reads every `*.json` file of `dir`; a missing directory is an empty
    /// listing (nothing was saved yet), one that cannot be read (not a
    /// directory, not readable) a usage error.
    pub fn of(dir: &Path) -> anyhow::Result<Listing> {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Listing::default()),
            Err(e) => {
                let shown = dir.display();
                return crate::error::usage(format!(
                    "cannot read the results directory {shown}: {e}"
                ));
            }
        };
        let mut listing = Listing::default();
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if super::claim::is_lock(&name) {
                continue;
            } else if super::atomic::is_temp(&name) {
                listing.cut_short.push(name);
            } else if path.extension().is_some_and(|e| e == "json") && path.is_file() {
                listing.runs.push(Saved::read(&path));
            } else {
                listing.other_files += 1;
            }
        }
        listing.cut_short.sort();
        // Newest first; files without a time last, then by name.
        listing
            .runs
            .sort_by(|a, b| b.started.cmp(&a.started).then(a.path.cmp(&b.path)));
        Ok(listing)
    }

    /// The newest complete result, for `fsbench report $(fsbench results --last)`.
    pub fn last(&self) -> Option<&Saved> {
        self.runs.iter().find(|saved| saved.complete)
    }

    /// The table, at most `width` columns wide but for a word that is
    /// wider, under a line naming the directory and the time zone; the
    /// commands that finish incomplete runs follow it, each on a line of
    /// its own, whole, to be copied.
    pub fn table(&self, dir: &Path, width: usize) -> String {
        if self.runs.is_empty() {
            return format!("no saved results in {}{}\n", dir.display(), self.note());
        }
        let zone = Local::now().format("%:z");
        let mut table = Table::new();
        table
            .load_style(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(u16::try_from(width).unwrap_or(u16::MAX))
            .set_header(["started", "suite", "targets", "reps", "verdict", "file"]);
        for saved in &self.runs {
            table.add_row(saved.row());
        }
        // The time and the file name are looked up whole: never broken.
        for column in [0, 5] {
            if let Some(column) = table.column_mut(column) {
                column.set_constraint(ColumnConstraint::ContentWidth);
            }
        }
        format!(
            "Saved runs in {}, newest first (local time, UTC{zone}):\n{table}\n{}{}",
            dir.display(),
            self.resume_lines(),
            self.note().trim_start()
        )
    }

    /// "To finish an incomplete run:" and each resumable run's command,
    /// newest first; nothing when none can be resumed.
    fn resume_lines(&self) -> String {
        let commands: Vec<&str> = self
            .runs
            .iter()
            .filter_map(|s| s.resume.as_deref())
            .collect();
        match commands.is_empty() {
            true => String::new(),
            false => format!("To finish an incomplete run:\n{}\n", commands.join("\n")),
        }
    }

    /// A line on the files not listed, and one on saves cut short, when
    /// there are any, each after a line break.
    fn note(&self) -> String {
        let mut lines = Vec::new();
        match self.other_files {
            0 => {}
            1 => lines.push("(1 other file, not JSON, not listed)".to_string()),
            n => lines.push(format!("({n} other files, not JSON, not listed)")),
        }
        if !self.cut_short.is_empty() {
            lines.push(format!(
                "(saves cut short by a crash, ignored; each result keeps its previous version: {})",
                self.cut_short.join(", ")
            ));
        }
        match lines.is_empty() {
            true => String::new(),
            false => {
                lines
                    .iter()
                    .map(|line| format!("\n{line}"))
                    .collect::<String>()
                    + "\n"
            }
        }
    }
}

impl Saved {
    /// The file's row; a file that is not an fsbench result says why.
    fn read(path: &Path) -> Saved {
        match super::load(path) {
            Ok(run) => Saved::of_run(path, &run),
            Err(e) => {
                let line = crate::error::error_line(&e);
                // `load` names the file, which the row already shows.
                let prefix = format!("{}: ", path.display());
                let reason = line.strip_prefix(&prefix).unwrap_or(&line);
                Saved {
                    path: path.to_path_buf(),
                    started: modified(path),
                    suite: None,
                    targets: Vec::new(),
                    repetitions: 0,
                    verdict: format!("unreadable: {reason}"),
                    complete: false,
                    resume: None,
                }
            }
        }
    }

    fn of_run(path: &Path, run: &RunResult) -> Saved {
        Saved {
            path: path.to_path_buf(),
            started: Some(run.started),
            suite: run.suite.clone(),
            targets: run.targets.iter().map(|t| t.name.clone()).collect(),
            repetitions: repetitions(run),
            verdict: verdict_line(path, run),
            complete: run.finished.is_some(),
            resume: resume_command(path, run),
        }
    }

    fn row(&self) -> [String; 6] {
        let started = self.started.map_or_else(String::new, |time| {
            time.with_timezone(&Local)
                .format("%Y-%m-%d %H:%M")
                .to_string()
        });
        let repetitions = match self.repetitions {
            0 => String::new(),
            n => n.to_string(),
        };
        let file = self.path.file_name().unwrap_or_default();
        [
            started,
            self.suite.as_deref().map_or_else(String::new, suite_name),
            self.targets.join(", "),
            repetitions,
            self.verdict.clone(),
            file.to_string_lossy().into_owned(),
        ]
    }
}

/// A suite as the table names it: a built-in's name, a file's name (its
/// path, in the JSON, would take the verdict's room).
fn suite_name(suite: &str) -> String {
    let name = Path::new(suite).file_name().unwrap_or(suite.as_ref());
    name.to_string_lossy().into_owned()
}

/// The repetitions that ran: the stopping record's, or one more than the
/// highest repetition index measured.
fn repetitions(run: &RunResult) -> u32 {
    if let Some(stopping) = &run.stopping {
        return stopping.repetitions;
    }
    run.repetitions_measured()
}

/// What the verdict says in one line: the first compared target's sentence,
/// else its counts; a lone target has nothing to be compared with.
fn verdict_line(path: &Path, run: &RunResult) -> String {
    if run.finished.is_none() {
        return incomplete_line(path, run);
    }
    let baseline = crate::analysis::baseline_of(run);
    let verdict = Verdict::of(run, &Summary::with_baseline(run, baseline));
    if verdict.lone {
        return "no comparison (one target)".into();
    }
    let compared = verdict.compared();
    let Some(first) = compared.first() else {
        return "no comparison".into();
    };
    let line = first.sentence.clone().unwrap_or_else(|| {
        format!(
            "{} vs {}: {}",
            first.target,
            verdict.baseline,
            first.counts_text()
        )
    });
    match compared.len() {
        1 => line,
        n => format!("{line} (+{} more targets)", n - 1),
    }
}

/// An incomplete run: still running, or stopped before its end (an error,
/// an interrupt, a kill).
fn incomplete_line(path: &Path, run: &RunResult) -> String {
    let results = run.results_count();
    if super::is_claimed(path) {
        return format!("running: {results} results so far");
    }
    let line = format!("incomplete: {results} results so far");
    match resume_command(path, run) {
        Some(_) => format!("{line}; resumable (below)"),
        None => line,
    }
}

/// The command that finishes an incomplete run, quoted for a shell:
/// `fsbench run` can finish its own, but for a run of `--configs` (its
/// file systems were taken down), and not one still running.
fn resume_command(path: &Path, run: &RunResult) -> Option<String> {
    let of_configs = run
        .command
        .iter()
        .any(|word| word == "--configs" || word.starts_with("--configs="));
    let resumable = run.finished.is_none()
        && run.made_by() == "fsbench run"
        && !of_configs
        && !super::is_claimed(path);
    let words = ["fsbench", "run", "--resume"].map(String::from);
    let path = path.display().to_string();
    resumable.then(|| crate::shell::quoted(&[&words[..], &[path]].concat()))
}

fn modified(path: &Path) -> Option<DateTime<Utc>> {
    let time = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    Some(time.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_TARGETS: &str = include_str!("../../tests/fixtures/run-two-targets.json");

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn runs_are_listed_newest_first_and_bad_files_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let mut run: RunResult = serde_json::from_str(TWO_TARGETS).unwrap();
        run.suite = Some("quick".into());
        let old = write(
            dir.path(),
            "old.json",
            &serde_json::to_string(&run).unwrap(),
        );
        run.started += chrono::Duration::days(1);
        run.finished = None;
        run.command = ["fsbench", "run"].map(String::from).to_vec();
        let partial = write(
            dir.path(),
            "new.json",
            &serde_json::to_string(&run).unwrap(),
        );
        write(dir.path(), "bad.json", "{ not json");
        write(dir.path(), "report.txt", "PostMark's report\n");
        let listing = Listing::of(dir.path()).unwrap();
        assert_eq!(listing.other_files, 1);
        let [bad, newer, older] = &listing.runs[..] else {
            panic!("three rows: {listing:?}");
        };
        // The bad file was written just now, after both runs started.
        assert!(bad.verdict.starts_with("unreadable: not JSON"), "{bad:?}");
        assert!(!bad.complete);
        assert_eq!(newer.path, partial);
        assert!(newer.verdict.starts_with("incomplete"), "{newer:?}");
        assert!(newer.verdict.contains("resumable"), "{newer:?}");
        let resume = format!("fsbench run --resume {}", partial.display());
        assert_eq!(newer.resume.as_deref(), Some(&resume[..]));
        assert_eq!(older.path, old);
        assert!(older.complete);
        assert_eq!(older.suite.as_deref(), Some("quick"));
        assert_eq!(older.targets.len(), 2);
        assert!(older.repetitions >= 1);
        assert_eq!(listing.last().map(|s| &s.path), Some(&old));
        let table = listing.table(dir.path(), 100);
        assert!(table.lines().all(|l| l.chars().count() <= 100), "{table}");
        assert!(table.contains("old.json") && table.contains("unreadable"));
        assert!(table.contains("1 other file"), "{table}");
        // The command is one line of its own, whole, however narrow the
        // table: it is there to be copied.
        let narrow = listing.table(dir.path(), 40);
        assert!(narrow.lines().any(|line| line == resume), "{narrow}");
    }

    #[test]
    fn a_missing_directory_is_an_empty_listing() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none");
        let listing = Listing::of(&missing).unwrap();
        assert!(listing.runs.is_empty() && listing.last().is_none());
        assert!(
            listing
                .table(&missing, 100)
                .starts_with("no saved results in ")
        );
    }
}
