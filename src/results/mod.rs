//! Where results live: the results directory and the names of its files,
//! writing a result so that a crash never leaves a torn file (`atomic`),
//! reading one back with its kind and schema checked, and listing a
//! directory of them (`listing`). Everything that saves or reads a result
//! file goes through here, and every other file fsbench writes for the user
//! (a report, fio's JSON) is saved as a result is (`write_file`).
mod atomic;
mod claim;
mod dir;
pub mod listing;

use std::path::{Path, PathBuf};

use crate::error::usage;
use crate::input::{self, read_input_file};
use crate::result::{RunResult, SCHEMA_VERSION};
pub use atomic::{check_destination, check_directory, write as write_file};
pub use claim::{Claims, claim, is_claimed};
pub use dir::{RESULTS_DIR, ResultsEnv, for_run, results_dir};

/// What a result file says it is, read before the rest: its other keys
/// are skipped, not built.
#[derive(Debug, Default, serde::Deserialize)]
struct Head {
    kind: Option<serde_json::Value>,
    schema_version: Option<serde_json::Value>,
}

/// The `kind` every fsbench result file carries: what tells it from other
/// JSON.
pub const KIND: &str = "fsbench-result";

/// Reads a saved result. A missing or unreadable file, a file that is not
/// JSON, JSON of another kind, a newer schema and a result with no targets
/// (nothing to show) are usage errors (exit 2) with one line naming the
/// file. An incomplete result (no end time) is read like any other.
pub fn load(path: &Path) -> anyhow::Result<RunResult> {
    let shown = path.display();
    let text = read_input_file(path, input::RESULT)?;
    // The kind and schema first, from a head that skips the rest; then the
    // result straight from the text: a tree of JSON values of a large
    // result would cost several times the file.
    match serde_json::from_str::<serde::de::IgnoredAny>(&text) {
        Ok(_) => {}
        Err(e) if e.is_eof() => {
            return usage(format!("{shown}: truncated, not a whole result ({e})"));
        }
        Err(e) => return usage(format!("{shown}: not JSON ({e})")),
    }
    // JSON that is not an object has no kind.
    let head: Head = serde_json::from_str(&text).unwrap_or_default();
    let kind = head.kind.as_ref().and_then(|k| k.as_str());
    if kind != Some(KIND) {
        let found = kind.map_or("no \"kind\"".to_string(), |k| format!("kind \"{k}\""));
        return usage(format!("{shown}: not an fsbench result ({found})"));
    }
    let version = head.schema_version.as_ref().and_then(|v| v.as_u64());
    if let Some(version) = version.filter(|v| *v > u64::from(SCHEMA_VERSION)) {
        return usage(format!(
            "{shown}: schema version {version} is newer than this fsbench reads \
             ({SCHEMA_VERSION}); use a newer fsbench"
        ));
    }
    // serde_json's `float_roundtrip` (Cargo.toml) reads every number back
    // as the bits written: a figure a unit in the last place off can turn
    // the verdict where speed-ups tie (PostMark's rates over one time).
    let mut run: RunResult = match serde_json::from_str(&text) {
        Ok(run) => run,
        Err(e) => return usage(format!("{shown}: malformed fsbench result ({e})")),
    };
    if run.targets.is_empty() {
        return usage(format!(
            "{shown}: no targets in this result, so nothing to report (`fsbench clean --json` writes such results)"
        ));
    }
    // Recomputed from what the file holds: older files gain one, and a
    // hand edit cannot make it disagree with the data.
    crate::result::fingerprint::refresh(&mut run);
    Ok(run)
}

/// `-` as a result's path: standard output, written once, at the end.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Writes the result as pretty JSON to `path` (`--json FILE`, `-` for
/// stdout), replacing a file atomically; in an MPI job rank 0 writes the
/// job's.
pub fn save(result: &RunResult, path: &Path) -> anyhow::Result<()> {
    if !crate::scale::is_root() {
        return Ok(());
    }
    let text = serde_json::to_string_pretty(result)? + "\n";
    if is_stdout(path) {
        return crate::console::emit(crate::console::Stream::Stdout, &text);
    }
    atomic::write(path, &text)
}

/// Saves the result as file `path` of a results directory, making the
/// directory first when it is missing.
pub fn save_in_dir(result: &RunResult, path: &Path) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            anyhow::anyhow!("cannot create the results directory {}: {e}", dir.display())
        })?;
    }
    save(result, path)
}

/// The name of a new run's file in `dir`: `DIR/<UTC timestamp>.json`, not
/// yet existing.
pub fn new_path(dir: &Path) -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let first = dir.join(format!("{stamp}.json"));
    match first.exists() {
        false => first,
        true => dir.join(format!("{stamp}-{}.json", std::process::id())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_TARGETS: &str = include_str!("../../tests/fixtures/run-two-targets.json");

    /// A crash between the temporary file's write and its rename leaves
    /// a torn temporary file: the result keeps its previous version, and
    /// the listing says one line about the leftover.
    #[test]
    fn a_save_cut_short_never_loses_the_previous_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        let run: RunResult = serde_json::from_str(TWO_TARGETS).unwrap();
        save(&run, &path).unwrap();
        let text = serde_json::to_string_pretty(&run).unwrap();
        let torn = dir.path().join(".run.json.fsbench-tmp");
        std::fs::write(&torn, &text[..text.len() / 2]).unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.run_id, run.run_id);
        let listing = listing::Listing::of(dir.path()).unwrap();
        assert_eq!(listing.runs.len(), 1, "{listing:?}");
        assert!(listing.runs[0].complete);
        let table = listing.table(dir.path(), 100);
        let notes: Vec<&str> = table.lines().filter(|l| l.contains("cut short")).collect();
        assert_eq!(notes.len(), 1, "{table}");
        assert!(notes[0].contains(".run.json.fsbench-tmp"), "{table}");
    }

    #[test]
    fn bad_files_are_one_line_each() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            load(&path).unwrap_err().to_string()
        };
        let other = write("other.json", r#"{"kind": "fio-result"}"#);
        assert!(
            other.ends_with("not an fsbench result (kind \"fio-result\")"),
            "{other}"
        );
        let newer = TWO_TARGETS.replacen("\"schema_version\": 1", "\"schema_version\": 99", 1);
        let newer = write("newer.json", &newer);
        assert!(newer.contains("schema version 99 is newer"), "{newer}");
        let truncated = write("truncated.json", &TWO_TARGETS[..TWO_TARGETS.len() / 3]);
        assert!(
            truncated.contains("truncated, not a whole result"),
            "{truncated}"
        );
        for line in [other, newer, truncated] {
            assert!(!line.contains('\n'), "{line}");
        }
    }
}
