//! What a newcomer meets first: a run that says how far it got where
//! stderr is a log, tables that keep to `COLUMNS`, a resume command whole
//! on its line, TOML errors that point at the place, a `--help` that
//! names every built-in suite, hints that name what to type, and reports
//! that say when a result is partial.
mod common;

use std::path::Path;

use common::run;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn toml_errors_give_the_file_the_line_and_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let suite = write(
        dir.path(),
        "suite.toml",
        "[[workload]]\nkind = \"io\"\n  threads = 4\n",
    );
    let out = run(&["run", "--no-save", "--suite", &suite, "-t", "/nonexistent"]);
    let line = out.assert_error(2, &[]);
    assert!(
        line.starts_with(&format!(
            "fsbench: error: suite {suite}:3:3: unknown field `threads`"
        )),
        "{out}"
    );
    let configs = write(
        dir.path(),
        "configs.toml",
        "[[config]]\nname = \"a\"\nmkfs = \"mkfs.ext4\"\noptions = [\n",
    );
    let out = run(&[
        "run",
        "--no-save",
        "--configs",
        &configs,
        "--images",
        "/nonexistent",
    ]);
    let line = out.assert_error(2, &[]);
    assert!(
        line.starts_with(&format!("fsbench: error: --configs {configs}:4:")),
        "{out}"
    );
}
