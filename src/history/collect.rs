//! The saved runs `fsbench history` reads: files and the `*.json` files of
//! folders. A file that is not a whole fsbench result of a schema this
//! fsbench reads is one line among `problems`, and the others are read on:
//! a run cut off while it was written never hides the runs before it.
use std::path::{Path, PathBuf};

use crate::result::RunResult;
use crate::store::load;

/// What was read, and a line for each file or folder that could not be.
#[derive(Debug, Default)]
pub struct Collected {
    /// Each run read, with its file.
    pub runs: Vec<(PathBuf, RunResult)>,
    pub problems: Vec<String>,
}

/// The runs in `paths`: each file as given, each folder's `*.json` files
/// (not its subfolders; other files, such as PostMark's reports, are
/// left alone). A run found twice (a file and its folder) is read once.
pub fn collect(paths: &[PathBuf]) -> Collected {
    let mut collected = Collected::default();
    for path in paths {
        match path.is_dir() {
            true => match json_files(path) {
                Ok(files) => files.iter().for_each(|file| collected.read(file)),
                Err(e) => collected
                    .problems
                    .push(format!("{}: cannot read the folder: {e}", path.display())),
            },
            false => collected.read(path),
        }
    }
    collected
}

impl Collected {
    fn read(&mut self, file: &Path) {
        match load(file) {
            Ok(run) if self.runs.iter().any(|(_, r)| r.run_id == run.run_id) => {}
            Ok(run) => self.runs.push((file.to_path_buf(), run)),
            Err(e) => self.problems.push(e.to_string()),
        }
    }

    /// The runs read, without their files.
    pub fn into_runs(self) -> Vec<RunResult> {
        self.runs.into_iter().map(|(_, run)| run).collect()
    }
}

/// The folder's `*.json` files, by name.
fn json_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "json") && path.is_file())
        .collect();
    files.sort();
    Ok(files)
}
