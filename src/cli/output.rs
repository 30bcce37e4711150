//! Command-line output concerns: clap's first error line, and checking
//! `--json` paths up front.
use std::path::Path;

use crate::console::Stream;
use crate::error::usage;

/// The first line of clap's error `message`, without its `error: ` label
/// and the usage and help lines that follow.
pub fn first_line(message: &str) -> &str {
    let line = message.lines().next().unwrap_or(message);
    line.strip_prefix("error: ").unwrap_or(line)
}

/// True when the JSON result goes to stdout, which must then carry nothing
/// else.
pub fn json_to_stdout(json: Option<&Path>) -> bool {
    json.is_some_and(crate::results::is_stdout)
}

/// Where a command's own tables go: stdout, unless `--json -` keeps it
/// for the JSON alone.
pub fn tables_stream(json: Option<&Path>) -> Stream {
    match json_to_stdout(json) {
        true => Stream::Stderr,
        false => Stream::Stdout,
    }
}

/// Refuses a `--json` path that cannot be written, before a long run whose
/// result would then be lost.
pub fn check_json_path(json: Option<&Path>) -> anyhow::Result<()> {
    match json.filter(|p| !json_to_stdout(Some(p))) {
        Some(path) => check_output_path("--json", path),
        None => Ok(()),
    }
}

/// Refuses an output file (`flag`'s `path`) that cannot be written: a
/// directory, or one in a directory we may not write in.
pub fn check_output_path(flag: &str, path: &Path) -> anyhow::Result<()> {
    if path.is_dir() {
        return usage(format!("{flag} {}: is a directory", path.display()));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if rustix::fs::access(parent, rustix::fs::Access::WRITE_OK).is_err() {
        return usage(format!(
            "{flag} {}: cannot write in {}",
            path.display(),
            parent.display()
        ));
    }
    Ok(())
}
