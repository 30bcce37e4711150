//! Writing reports to stdout/stderr without panicking when the reader has
//! gone away (`fsbench ... | head`), and fsbench's own lines on stderr
//! (`stderr_line!`, `stderr_text!`): never `eprintln!`, which panics when
//! stderr cannot be written. A leaf: every module may print through it.
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Whether this process writes reports: in an MPI job only rank 0 does
/// (`scale::init` tells the others to keep quiet).
static REPORTS: AtomicBool = AtomicBool::new(true);

/// Makes `emit` silent in this process: a rank of an MPI job other than 0.
pub fn leave_reports_to_another_process() {
    REPORTS.store(false, Ordering::Relaxed);
}

/// Standard output's reader went away (`fsbench report ... | head`): what
/// it wanted it has; the command stops there and exits 0, whatever the
/// size of its output (one that fit in the pipe never saw the reader go).
#[derive(Debug, thiserror::Error)]
#[error("standard output was closed by its reader")]
pub struct StdoutClosed;

/// Writes `text` to `stream`; a closed pipe is an error, not a panic
/// ([`StdoutClosed`] on stdout). In an MPI job only rank 0 speaks.
pub fn emit(stream: Stream, text: &str) -> anyhow::Result<()> {
    if !REPORTS.load(Ordering::Relaxed) {
        return Ok(());
    }
    let result = match stream {
        Stream::Stdout => std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .and_then(|()| std::io::stdout().flush()),
        Stream::Stderr => std::io::stderr().lock().write_all(text.as_bytes()),
    };
    match result {
        Err(e) if stream == Stream::Stdout && e.kind() == std::io::ErrorKind::BrokenPipe => {
            Err(StdoutClosed.into())
        }
        result => result.with_context(|| {
            format!(
                "cannot write to standard {}",
                if stream == Stream::Stdout {
                    "output"
                } else {
                    "error"
                }
            )
        }),
    }
}

/// Writes one line to stderr, like `eprintln!`, but a write that fails
/// (stderr on a pipe whose reader has gone, a full device, a hung-up
/// terminal) is ignored instead of panicking: there is nowhere left to say
/// it, and the run must still clean up its scratch data and exit with its
/// own code. Every rank of an MPI job speaks, as with `eprintln!`.
macro_rules! stderr_line {
    ($($arg:tt)*) => {
        $crate::console::to_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use stderr_line;

/// `stderr_line!` without the newline (`eprint!`'s counterpart).
macro_rules! stderr_text {
    ($($arg:tt)*) => {
        $crate::console::to_stderr(format_args!($($arg)*))
    };
}
pub(crate) use stderr_text;

/// Writes `text` to stderr in one write, ignoring a failure (see
/// `stderr_line!`). Under `cargo test` the test harness's capture (which
/// only `eprint!` reaches) gets it instead.
pub fn to_stderr(text: std::fmt::Arguments<'_>) {
    if cfg!(test) {
        eprint!("{text}");
        return;
    }
    let _ = write_whole(&mut std::io::stderr().lock(), text);
}

/// Formats `text` whole before writing it, so that a line is one write
/// (not interleaved with another thread's or rank's); returns what the
/// write said, for the caller to ignore.
fn write_whole(out: &mut impl Write, text: std::fmt::Arguments<'_>) -> std::io::Result<()> {
    let text = std::fmt::format(text);
    out.write_all(text.as_bytes()).and_then(|()| out.flush())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that refuses every write, as stderr does when its reader
    /// has gone.
    struct Broken;

    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
    }

    #[test]
    fn a_failed_write_is_returned_not_a_panic() {
        let outcome = write_whole(&mut Broken, format_args!("fsbench: {}\n", 1));
        assert_eq!(outcome.unwrap_err().kind(), std::io::ErrorKind::BrokenPipe);
    }

    #[test]
    fn a_line_is_written_whole() {
        let mut out = Vec::new();
        write_whole(&mut out, format_args!("{}\n", format_args!("a {} c", "b"))).unwrap();
        assert_eq!(out, b"a b c\n");
    }
}
