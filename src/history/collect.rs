//! The saved runs `fsbench history` reads: files and the `*.json` files of
//! folders. A file that is not a whole fsbench result of a schema this
//! fsbench reads is one line among `problems`, and the others are read on:
//! a run cut off while it was written never hides the runs before it.
//! Each run is read whole, one at a time, and only what the caller keeps
//! of it stays: a history of many large results (interval series,
//! per-rank parts) holds their figures, not their files.
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::result::RunResult;
use crate::results::load;

/// What was kept of each run read, and a line for each file or folder
/// that could not be read.
#[derive(Debug)]
pub struct Collected<T> {
    pub runs: Vec<T>,
    pub problems: Vec<String>,
    seen: HashSet<String>,
}

/// What `keep` makes of each run in `paths` (with its file; None keeps
/// nothing): each file as given, each folder's `*.json` files (not its
/// subfolders; other files, such as PostMark's reports, are left alone).
/// A run found twice (a file and its folder) is read once.
pub fn collect<T>(
    paths: &[PathBuf],
    mut keep: impl FnMut(&Path, RunResult) -> Option<T>,
) -> Collected<T> {
    let mut collected = Collected {
        runs: Vec::new(),
        problems: Vec::new(),
        seen: HashSet::new(),
    };
    for path in paths {
        match path.is_dir() {
            true => match json_files(path) {
                Ok(files) => files
                    .iter()
                    .for_each(|file| collected.read(file, &mut keep)),
                Err(e) => collected
                    .problems
                    .push(format!("{}: cannot read the folder: {e}", path.display())),
            },
            false => collected.read(path, &mut keep),
        }
    }
    collected
}

impl<T> Collected<T> {
    fn read(&mut self, file: &Path, keep: &mut impl FnMut(&Path, RunResult) -> Option<T>) {
        match load(file) {
            Ok(run) if !self.seen.insert(run.run_id.clone()) => {}
            Ok(run) => self.runs.extend(keep(file, run)),
            Err(e) => self.problems.push(e.to_string()),
        }
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
