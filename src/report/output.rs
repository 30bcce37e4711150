//! Writing reports to stdout/stderr without panicking when the reader has
//! gone away (`fsbench ... | head`).
use std::io::Write;

use anyhow::Context;

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
