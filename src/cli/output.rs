//! Writing reports to stdout/stderr without panicking when the reader has
//! gone away (`fsbench ... | head`), and checking `--json` paths up front.
use std::io::Write;
use std::path::Path;

use anyhow::Context;

use crate::error::usage;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Writes `text` to `stream`; a closed pipe is an error, not a panic. In
/// an MPI job only rank 0 speaks.
pub fn emit(stream: Stream, text: &str) -> anyhow::Result<()> {
    if !crate::scale::is_root() {
        return Ok(());
    }
    let result = match stream {
        Stream::Stdout => std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .and_then(|()| std::io::stdout().flush()),
        Stream::Stderr => std::io::stderr().lock().write_all(text.as_bytes()),
    };
    result.with_context(|| {
        format!(
            "cannot write to standard {}",
            if stream == Stream::Stdout {
                "output"
            } else {
                "error"
            }
        )
    })
}

/// The first line of clap's error `message`, without its `error: ` label
/// and the usage and help lines that follow.
pub fn first_line(message: &str) -> &str {
    let line = message.lines().next().unwrap_or(message);
    line.strip_prefix("error: ").unwrap_or(line)
}

/// True when the JSON result goes to stdout, which must then carry nothing
/// else.
pub fn json_to_stdout(json: Option<&Path>) -> bool {
    json.is_some_and(|p| p.as_os_str() == "-")
}

/// Refuses a `--json` path that cannot be written, before a long run whose
/// result would then be lost.
pub fn check_json_path(json: Option<&Path>) -> anyhow::Result<()> {
    let Some(path) = json.filter(|p| !json_to_stdout(Some(p))) else {
        return Ok(());
    };
    if path.is_dir() {
        return usage(format!("--json {}: is a directory", path.display()));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if rustix::fs::access(parent, rustix::fs::Access::WRITE_OK).is_err() {
        return usage(format!(
            "--json {}: cannot write in {}",
            path.display(),
            parent.display()
        ));
    }
    Ok(())
}
