//! The recorder's log: every write the recorded disk received (its offset
//! and data), every flush, every discard and every mark a workload wrote
//! to the control file, in the order the FUSE server answered them. It is
//! append-only and on disk: memory holds only its length, so a long
//! workload's log costs disk space, not RAM. Crash states read their data
//! from it where it lies (`Entry::data`), never copying it.
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;

use anyhow::Context;

const MAGIC: &[u8; 16] = b"fsbench-blocklog";
const WRITE: u8 = b'W';
const FLUSH: u8 = b'F';
const ZERO: u8 = b'Z';
const MARK: u8 = b'M';
/// An entry's head: kind, offset, length.
const HEAD: usize = 17;
/// A mark longer than this is no workload's acknowledgement.
pub const MAX_MARK: usize = 64 << 10;

/// What one entry of the log says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `len` bytes written at `offset`; the data lies at `data` in the log.
    Write,
    /// A cache flush (FUSE FSYNC of the disk file): everything before it
    /// was on stable storage when it was answered.
    Flush,
    /// `len` bytes from `offset` read as zeros from then on (a discard).
    Zero,
    /// A workload's mark of `len` bytes at `data` in the log.
    Mark,
}

/// One entry, as read back: where its data lies, not the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub kind: Kind,
    pub offset: u64,
    pub len: u64,
    /// Where its data starts in the log (writes and marks).
    pub data: u64,
}

/// The log being written.
pub struct Writer {
    file: File,
    len: u64,
}

impl Writer {
    /// Starts an empty log in `file` (created by the caller in fsbench's
    /// scratch directory).
    pub fn start(file: File) -> anyhow::Result<Writer> {
        file.write_all_at(MAGIC, 0)
            .context("cannot write the block log")?;
        Ok(Writer {
            file,
            len: MAGIC.len() as u64,
        })
    }

    /// Appends a write of `data` at `offset`; where its data lies in the
    /// log.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> std::io::Result<u64> {
        self.append(WRITE, offset, data.len() as u64, data)
    }

    /// Appends a flush.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.append(FLUSH, 0, 0, &[]).map(drop)
    }

    /// Appends a discard of `len` bytes at `offset`.
    pub fn zero(&mut self, offset: u64, len: u64) -> std::io::Result<()> {
        self.append(ZERO, offset, len, &[]).map(drop)
    }

    /// Appends a workload's mark.
    pub fn mark(&mut self, text: &[u8]) -> std::io::Result<()> {
        self.append(MARK, 0, text.len() as u64, text).map(drop)
    }

    /// The log's file, to read data back from while it is written.
    pub fn file(&self) -> &File {
        &self.file
    }

    fn append(&mut self, kind: u8, offset: u64, len: u64, data: &[u8]) -> std::io::Result<u64> {
        let mut head = [0u8; HEAD];
        head[0] = kind;
        head[1..9].copy_from_slice(&offset.to_le_bytes());
        head[9..17].copy_from_slice(&len.to_le_bytes());
        // Two writes rather than one copy of up to 1 MiB per disk write:
        // a reader never sees the tail past `len`, so the order is free.
        self.file.write_all_at(&head, self.len)?;
        let at = self.len + HEAD as u64;
        self.file.write_all_at(data, at)?;
        self.len = at + data.len() as u64;
        Ok(at)
    }
}

/// Reads a log's entries in order, skipping over their data.
pub struct Reader {
    file: BufReader<File>,
    at: u64,
    end: u64,
}

impl Reader {
    /// Opens the log `file` from its start.
    pub fn open(file: File) -> anyhow::Result<Reader> {
        let end = file.metadata()?.len();
        let mut file = BufReader::with_capacity(1 << 16, file);
        let mut magic = [0u8; 16];
        file.read_exact(&mut magic)
            .ok()
            .filter(|()| &magic == MAGIC)
            .context("not a block log of fsbench's")?;
        Ok(Reader {
            file,
            at: MAGIC.len() as u64,
            end,
        })
    }
}

impl Iterator for Reader {
    type Item = anyhow::Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.end {
            return None;
        }
        let read = self.read_entry();
        if read.is_err() {
            // Nothing after a damaged entry can be trusted.
            self.at = self.end;
        }
        Some(read)
    }
}

impl Reader {
    fn read_entry(&mut self) -> anyhow::Result<Entry> {
        let mut head = [0u8; HEAD];
        self.file
            .read_exact(&mut head)
            .context("the block log ends inside an entry")?;
        let number = |range: std::ops::Range<usize>| {
            u64::from_le_bytes(head[range].try_into().expect("eight bytes"))
        };
        let (offset, len) = (number(1..9), number(9..17));
        let kind = match head[0] {
            WRITE => Kind::Write,
            FLUSH => Kind::Flush,
            ZERO => Kind::Zero,
            MARK => Kind::Mark,
            other => anyhow::bail!(
                "the block log holds an entry of unknown kind {other} at byte {}",
                self.at
            ),
        };
        let data = self.at + HEAD as u64;
        let carried = match kind {
            Kind::Write | Kind::Mark => len,
            Kind::Flush | Kind::Zero => 0,
        };
        self.at = data + carried;
        anyhow::ensure!(self.at <= self.end, "the block log ends inside an entry");
        if carried > 0 {
            self.file.seek(SeekFrom::Start(self.at))?;
        }
        Ok(Entry {
            kind,
            offset,
            len,
            data,
        })
    }
}

/// The bytes of a mark, read from the log `file`.
pub fn mark_text(file: &File, entry: &Entry) -> anyhow::Result<Vec<u8>> {
    anyhow::ensure!(
        entry.len as usize <= MAX_MARK,
        "a mark of {} bytes in the block log",
        entry.len
    );
    let mut text = vec![0; entry.len as usize];
    file.read_exact_at(&mut text, entry.data)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back_in_order_with_their_data_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let mut log = Writer::start(File::create_new(&path).unwrap()).unwrap();
        let at = log.write(4096, b"abcd").unwrap();
        log.flush().unwrap();
        log.zero(8192, 512).unwrap();
        log.mark(b"ack 1").unwrap();
        let entries: Vec<Entry> = Reader::open(File::open(&path).unwrap())
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let kinds: Vec<Kind> = entries.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [Kind::Write, Kind::Flush, Kind::Zero, Kind::Mark]);
        assert_eq!(
            (entries[0].offset, entries[0].len, entries[0].data),
            (4096, 4, at)
        );
        assert_eq!((entries[2].offset, entries[2].len), (8192, 512));
        let file = File::open(&path).unwrap();
        assert_eq!(mark_text(&file, &entries[3]).unwrap(), b"ack 1");
        let mut data = [0u8; 4];
        file.read_exact_at(&mut data, at).unwrap();
        assert_eq!(&data, b"abcd");
    }

    #[test]
    fn a_cut_or_foreign_log_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, b"not a log at all").unwrap();
        assert!(Reader::open(File::open(&path).unwrap()).is_err());
        let mut log = Writer::start(File::create(&path).unwrap()).unwrap();
        log.write(0, &[7; 100]).unwrap();
        let len = std::fs::metadata(&path).unwrap().len();
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len - 10)
            .unwrap();
        let read: Vec<_> = Reader::open(File::open(&path).unwrap()).unwrap().collect();
        assert!(read.last().unwrap().is_err());
        std::fs::write(&path, [MAGIC.as_slice(), &[b'Q'; 17]].concat()).unwrap();
        let read: Vec<_> = Reader::open(File::open(&path).unwrap()).unwrap().collect();
        assert!(read[0].is_err());
    }
}
