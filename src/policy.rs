//! What a command may do depends on who wrote it. Typed at the
//! interactive `pm>` prompt, a PostMark command does all that PostMark
//! does. Written in a file (a configuration file, a `load`ed file,
//! commands piped on stdin, a suite's PostMark or tree entry), it may come
//! from anyone, so its shell commands are refused unless `--allow-shell`
//! is given, and its report files (`run FILE`, `show FILE`) are written
//! inside the results directory only.
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use crate::error::UsageError;

/// Who wrote a command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Typed by the user at the `pm>` prompt (stdin is a terminal).
    Prompt,
    /// Read from a file, a pipe or a suite.
    Written,
}

#[derive(Debug, Clone)]
pub struct Policy {
    /// `--allow-shell`: written shell escapes run too.
    pub allow_shell: bool,
    /// Where written report files go.
    pub results_dir: PathBuf,
}

/// A report file a command may append to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportFile {
    /// The name as the command gave it, for messages.
    pub name: String,
    path: PathBuf,
    /// Written names are confined to the results directory, so a symlink
    /// planted there must not lead out of it.
    follow_symlink: bool,
}

impl Policy {
    /// Refuses a written shell escape unless `--allow-shell` allows it.
    pub fn check_shell(&self, origin: Origin) -> Result<(), String> {
        match (origin, self.allow_shell) {
            (Origin::Written, false) => Err("a shell escape is refused in configuration files, \
                 loaded files, piped stdin and suites: give --allow-shell to run it \
                 (or type it at the pm> prompt)"
                .into()),
            _ => Ok(()),
        }
    }

    /// Refuses a shell command a suite file gives (a tree entry's `--cmd`)
    /// unless `--allow-shell` allows it: like a written PostMark `!command`,
    /// it may come from anyone.
    pub fn check_written_command(&self, command: &str) -> anyhow::Result<()> {
        match self.allow_shell {
            true => Ok(()),
            false => crate::error::usage(format!(
                "--cmd '{command}': a suite's shell commands run only with --allow-shell"
            )),
        }
    }

    /// Where the report file `name` goes: where the user typed at the
    /// prompt; inside the results directory when written, which takes
    /// only a relative path without `..` (created if missing).
    pub fn report_file(&self, name: &str, origin: Origin) -> Result<ReportFile, String> {
        let path = match origin {
            Origin::Prompt => PathBuf::from(name),
            Origin::Written => self.inside_results_dir(name)?,
        };
        Ok(ReportFile {
            name: name.to_string(),
            path,
            follow_symlink: origin == Origin::Prompt,
        })
    }

    fn inside_results_dir(&self, name: &str) -> Result<PathBuf, String> {
        let results = self.results_dir.display();
        let relative = Path::new(name)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !relative {
            return Err(format!(
                "a report file named in a file is written inside the results directory \
                 {results}/: give a relative path without '..'"
            ));
        }
        std::fs::create_dir_all(&self.results_dir)
            .map_err(|e| format!("cannot create the results directory {results}: {e}"))?;
        Ok(self.results_dir.join(name))
    }
}

impl ReportFile {
    /// Opens the file for appending, created if missing, as PostMark does.
    pub fn open(&self) -> anyhow::Result<File> {
        let mut options = std::fs::OpenOptions::new();
        options.append(true).create(true);
        if !self.follow_symlink {
            options.custom_flags(libc::O_NOFOLLOW);
        }
        options.open(&self.path).map_err(|e| {
            UsageError(format!("cannot direct output to file '{}': {e}", self.name)).into()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(results_dir: &Path) -> Policy {
        Policy {
            allow_shell: false,
            results_dir: results_dir.into(),
        }
    }

    #[test]
    fn shell_escapes_run_when_typed_or_allowed() {
        let mut policy = policy(Path::new("results"));
        policy.check_shell(Origin::Prompt).unwrap();
        let e = policy.check_shell(Origin::Written).unwrap_err();
        assert!(e.contains("--allow-shell"), "{e}");
        policy.allow_shell = true;
        policy.check_shell(Origin::Written).unwrap();
    }

    #[test]
    fn written_report_files_stay_in_the_results_directory() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("results");
        let policy = policy(&results);
        let typed = policy.report_file("/tmp/r.txt", Origin::Prompt).unwrap();
        assert_eq!(typed.path, Path::new("/tmp/r.txt"));
        assert!(!results.exists(), "a typed name needs no results directory");
        let written = policy.report_file("./r.txt", Origin::Written).unwrap();
        assert_eq!(written.path, results.join("./r.txt"));
        assert!(results.is_dir());
        for name in ["/tmp/r.txt", "../r.txt", "a/../../r.txt"] {
            let e = policy.report_file(name, Origin::Written).unwrap_err();
            assert!(e.contains("without '..'"), "{name}: {e}");
        }
    }

    #[test]
    fn a_written_report_file_does_not_follow_a_symlink_out() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let policy = policy(&dir.path().join("results"));
        let file = policy.report_file("r.txt", Origin::Written).unwrap();
        std::os::unix::fs::symlink(&victim, &file.path).unwrap();
        let e = file.open().unwrap_err().to_string();
        assert!(e.starts_with("cannot direct output to file 'r.txt'"), "{e}");
    }
}
