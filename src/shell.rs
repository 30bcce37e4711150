//! Command lines: how fsbench shows one (quoted so it can be pasted into a
//! shell again) and how it runs a program or a user's shell line and keeps
//! what it printed.
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::Context;

/// The words as one line a shell reads back as the same words: words
/// with spaces or shell characters single-quoted.
pub fn quoted(words: &[String]) -> String {
    let quote = |word: &String| {
        let plain = !word.is_empty()
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
        match plain {
            true => word.clone(),
            false => format!("'{}'", word.replace('\'', r"'\''")),
        }
    };
    words.iter().map(quote).collect::<Vec<_>>().join(" ")
}

/// Runs the program `words[0]` with the rest as arguments, no input, in
/// `dir` (the current directory if None): what it printed (stdout then
/// stderr), or an error carrying its exit status and last lines.
pub fn output_of(words: &[String], dir: Option<&Path>) -> anyhow::Result<String> {
    let mut command = Command::new(&words[0]);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let output = command
        .args(&words[1..])
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", words[0]))?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        anyhow::bail!("{}: {}", output.status, last_lines(&text, 3));
    }
    Ok(text)
}

/// A user's shell command line, run by `/bin/sh -c`, as `output_of`.
/// Whether `program` (a bare name) is an executable file in a directory
/// of PATH.
pub fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

pub fn line_output(line: &str, dir: Option<&Path>) -> anyhow::Result<String> {
    output_of(&["/bin/sh".into(), "-c".into(), line.into()], dir)
}

/// The last `count` non-blank lines of `text`, joined by " / ": an error
/// message's one line.
fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(count)..].join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_where_a_shell_would_split_them() {
        let words = ["mkfs.xfs", "-L", "a b", "it's", ""].map(String::from);
        assert_eq!(quoted(&words), r"mkfs.xfs -L 'a b' 'it'\''s' ''");
    }

    #[test]
    fn a_failing_line_says_its_status_and_last_lines() {
        let e = line_output("echo one; echo two >&2; exit 3", None).unwrap_err();
        let text = format!("{e:#}");
        assert!(text.contains("exit status: 3"), "{text}");
        assert!(text.ends_with("one / two"), "{text}");
        assert_eq!(line_output("echo hi", None).unwrap(), "hi\n");
    }
}
