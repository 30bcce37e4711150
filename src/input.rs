//! Reading the files fsbench is given as input (results, suites, the
//! configurations `run --configs` builds, PostMark configurations,
//! vdbench parameter files, fio job files, bonnie's `-Z` file) and the command lines
//! PostMark mode reads from stdin. An input file must be a regular file (a
//! FIFO would block its open forever, /dev/zero never end), and every read
//! is bounded, so a huge file is a one-line usage error naming the limit
//! instead of a process that eats all memory.
use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::Context;

use crate::error::{UsageError, usage};

const MIB: u64 = 1 << 20;

/// A kind of input file: what errors call it and the most fsbench reads.
#[derive(Debug, Clone, Copy)]
pub struct InputKind {
    pub what: &'static str,
    pub limit: u64,
}

/// A saved result (`fsbench report`, `compare`). A run of thousands of
/// workloads with interval series stays well under this.
pub const RESULT: InputKind = InputKind {
    what: "result",
    limit: 64 * MIB,
};

/// A suite TOML file (`fsbench run --suite FILE`).
pub const SUITE: InputKind = InputKind {
    what: "suite file",
    limit: MIB,
};

/// A file of configurations fsbench builds (`fsbench run --configs FILE`).
pub const CONFIGS: InputKind = InputKind {
    what: "configurations file",
    limit: MIB,
};

/// A PostMark configuration file, and each file it `load`s.
pub const POSTMARK_CONFIG: InputKind = InputKind {
    what: "configuration file",
    limit: MIB,
};

/// A vdbench parameter file, and each file it `include=`s.
pub const VDBENCH_PARMFILE: InputKind = InputKind {
    what: "parameter file",
    limit: MIB,
};

/// A fio job file, and each file it `include`s.
pub const FIO_JOBFILE: InputKind = InputKind {
    what: "job file",
    limit: MIB,
};

/// Nested includes (vdbench's `include=`, fio's `include`) deeper than
/// this are refused: a file that includes itself would never end.
pub const MAX_INCLUDE_DEPTH: usize = 8;

/// bonnie's `-Z` file: 4 M random numbers, more than any run draws.
pub const RANDOM_NUMBERS: InputKind = InputKind {
    what: "random-number file",
    limit: 16 * MIB,
};

/// One command line PostMark mode reads from stdin.
pub const COMMAND_LINE: InputKind = InputKind {
    what: "command line",
    limit: 64 << 10,
};

/// The whole of `path` as text, at most `kind.limit` bytes; anything
/// unreadable, larger or not UTF-8 is a usage error naming the file.
pub fn read_input_file(path: &Path, kind: InputKind) -> anyhow::Result<String> {
    let bytes = read_input_bytes(path, kind)?;
    String::from_utf8(bytes).map_err(|_| {
        UsageError(format!(
            "{} {}: not text (invalid UTF-8)",
            kind.what,
            path.display()
        ))
        .into()
    })
}

/// The whole of `path`, at most `kind.limit` bytes.
pub fn read_input_bytes(path: &Path, kind: InputKind) -> anyhow::Result<Vec<u8>> {
    let cannot_read = |e: std::io::Error| {
        UsageError(format!("cannot read {} {}: {e}", kind.what, path.display()))
    };
    // Opened without blocking: a FIFO would wait for a writer forever, deaf
    // to SIGTERM; then anything but a regular file (a FIFO, a device such as
    // /dev/zero, a directory) is refused before a byte is read.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(cannot_read)?;
    let kind_of_file = file.metadata().map_err(cannot_read)?.file_type();
    if !kind_of_file.is_file() {
        return usage(format!(
            "{} {}: not a regular file ({})",
            kind.what,
            path.display(),
            file_type_name(kind_of_file)
        ));
    }
    let mut bytes = Vec::new();
    // One byte past the limit tells a file of exactly the limit from a
    // larger one.
    file.take(kind.limit + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot_read)?;
    if bytes.len() as u64 > kind.limit {
        return too_large(&path.display().to_string(), kind);
    }
    Ok(bytes)
}

/// What a file that is not a regular file is, for an error.
fn file_type_name(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    match kind {
        _ if kind.is_dir() => "a directory",
        _ if kind.is_fifo() => "a FIFO",
        _ if kind.is_char_device() => "a character device",
        _ if kind.is_block_device() => "a block device",
        _ if kind.is_socket() => "a socket",
        _ => "not a file",
    }
}

/// The next line of `reader` (its end included), None at end of input; a
/// line longer than `kind.limit` is a usage error naming `source`.
pub fn read_bounded_line(
    reader: &mut impl BufRead,
    source: &str,
    kind: InputKind,
) -> anyhow::Result<Option<String>> {
    let mut line = String::new();
    let read = reader
        .take(kind.limit + 1)
        .read_line(&mut line)
        .map_err(|e| UsageError(format!("cannot read {source}: {e}")))?;
    if read as u64 > kind.limit {
        return too_large(source, kind);
    }
    Ok((read > 0).then_some(line))
}

fn too_large<T>(source: &str, kind: InputKind) -> anyhow::Result<T> {
    usage(format!(
        "{source}: {} larger than {}, the most fsbench reads (endless input?)",
        kind.what,
        limit_text(kind.limit)
    ))
}

/// `64 MiB`, `64 KiB`, `8 bytes`: limits are whole units.
fn limit_text(limit: u64) -> String {
    if limit.is_multiple_of(MIB) {
        format!("{} MiB", limit / MIB)
    } else if limit.is_multiple_of(1 << 10) {
        format!("{} KiB", limit >> 10)
    } else {
        format!("{limit} bytes")
    }
}

/// stdin, line by line, waiting in short polls so that Ctrl-C at the
/// prompt ends the session at once.
pub struct StdinLines {
    reader: BufReader<RawStdin>,
}

struct RawStdin;

impl Read for RawStdin {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Ok(rustix::io::read(std::io::stdin().as_fd(), buf)?)
    }
}

impl Default for StdinLines {
    fn default() -> Self {
        Self::new()
    }
}

impl StdinLines {
    pub fn new() -> Self {
        StdinLines {
            reader: BufReader::new(RawStdin),
        }
    }

    /// The next line, None at end of input.
    pub fn next_line(&mut self) -> anyhow::Result<Option<String>> {
        while self.reader.buffer().is_empty() && !stdin_ready()? {
            crate::interrupt::check()?;
        }
        read_bounded_line(&mut self.reader, "<stdin>", COMMAND_LINE)
    }
}

/// True when stdin has input (or end of input) within 200 ms.
fn stdin_ready() -> anyhow::Result<bool> {
    let mut poll = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, and its count.
    match unsafe { libc::poll(&mut poll, 1, 200) } {
        -1 => {
            let e = std::io::Error::last_os_error();
            match e.kind() {
                std::io::ErrorKind::Interrupted => Ok(false),
                _ => Err(e).context("cannot wait for stdin"),
            }
        }
        ready => Ok(ready > 0),
    }
}

/// A file that is not the TOML it should be: where (1-based line and
/// column, when the parser knows) and why, in one line.
#[derive(Debug, thiserror::Error)]
#[error("{at}{message}")]
pub struct TomlError {
    /// "3:14: ", or nothing.
    at: String,
    message: String,
}

/// `text` (a suite, a configurations file) read as TOML into `T`.
pub fn parse_toml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, TomlError> {
    toml::from_str(text).map_err(|e| TomlError {
        at: e.span().map_or_else(String::new, |span| {
            let (line, column) = line_and_column(text, span.start);
            format!("{line}:{column}: ")
        }),
        message: e
            .message()
            .lines()
            .next()
            .unwrap_or("not TOML")
            .trim()
            .to_string(),
    })
}

/// An error reading `source`'s text, as compilers say it: "FILE:3:14:
/// message" for a TOML error, which knows where, "FILE: message" for any
/// other.
pub fn located(source: &str, e: &anyhow::Error) -> String {
    match e.downcast_ref::<TomlError>() {
        Some(toml) => format!("{source}:{toml}"),
        None => format!("{source}: {e:#}"),
    }
}

/// The 1-based line and column (in characters) of byte `offset` of `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    let line = before.matches('\n').count() + 1;
    (line, before[line_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: InputKind = InputKind {
        what: "test file",
        limit: 8,
    };

    fn file_with(bytes: &[u8]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), bytes).unwrap();
        file
    }

    #[test]
    fn a_file_up_to_the_limit_is_read_whole() {
        let file = file_with(b"12345678");
        assert_eq!(read_input_file(file.path(), TINY).unwrap(), "12345678");
    }

    #[test]
    fn a_file_past_the_limit_is_refused_naming_it() {
        let file = file_with(b"123456789");
        let e = format!("{:#}", read_input_file(file.path(), TINY).unwrap_err());
        assert!(e.contains("test file larger than 8 bytes"), "{e}");
        assert!(e.contains(&file.path().display().to_string()), "{e}");
    }

    #[test]
    fn an_endless_device_and_a_fifo_are_refused_without_blocking() {
        let e = read_input_file(Path::new("/dev/zero"), RESULT).unwrap_err();
        assert!(
            format!("{e:#}").ends_with("/dev/zero: not a regular file (a character device)"),
            "{e:#}"
        );
        // No writer ever opens it: a blocking open would wait forever.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        let e = read_input_file(&fifo, SUITE).unwrap_err();
        assert!(e.is::<UsageError>());
        assert!(
            format!("{e:#}").ends_with("not a regular file (a FIFO)"),
            "{e:#}"
        );
        let e = read_input_file(dir.path(), SUITE).unwrap_err();
        assert!(
            format!("{e:#}").ends_with("not a regular file (a directory)"),
            "{e:#}"
        );
    }

    #[test]
    fn lines_are_read_up_to_the_limit() {
        let mut input: &[u8] = b"short\n12345678\n";
        assert_eq!(
            read_bounded_line(&mut input, "<stdin>", TINY).unwrap(),
            Some("short\n".into())
        );
        let e = read_bounded_line(&mut input, "<stdin>", TINY).unwrap_err();
        assert!(
            format!("{e:#}").starts_with("<stdin>: test file larger"),
            "{e:#}"
        );
    }

    #[test]
    fn end_of_input_is_none() {
        let mut input: &[u8] = b"";
        assert_eq!(
            read_bounded_line(&mut input, "<stdin>", TINY).unwrap(),
            None
        );
    }

    #[test]
    fn a_toml_error_says_line_and_column() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Entry {
            kind: String,
        }
        let e = parse_toml::<Entry>("kind = \"io\"\nthreads = 4\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "2:1: unknown field `threads`, expected `kind`"
        );
        let e = parse_toml::<Entry>("kind = \"é\" x\n").unwrap_err();
        assert!(e.to_string().starts_with("1:12: "), "{e}");
        let e = anyhow::Error::new(e);
        assert!(located("f.toml", &e).starts_with("f.toml:1:12: "));
        let other = anyhow::anyhow!("no configurations");
        assert_eq!(located("f.toml", &other), "f.toml: no configurations");
    }
}
