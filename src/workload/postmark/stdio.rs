//! The system calls glibc's stdio makes for PostMark's buffered I/O
//! (`set buffering true`, the default). PostMark `fwrite`s and `fread`s in
//! blocks of `set write` / `set read` bytes, but the file system only sees
//! what the stream buffer turns them into. fsbench issues those same
//! `write()` / `read()` calls directly, without copying through a buffer.
//!
//! glibc's rules (libio `_IO_file_doallocate`, `_IO_new_file_xsputn`,
//! `_IO_file_xsgetn`): the buffer is `st_blksize` bytes when that is below
//! `BUFSIZ` (8192), else 8192; data that does not fit flushes the buffer,
//! then whole buffer-sized blocks go straight to the file and the rest is
//! buffered; `fclose` flushes what is left. A read that wants less than a
//! buffer refills the buffer with one buffer-sized `read()`; a larger one
//! reads whole blocks straight into the caller's memory.

/// glibc's `BUFSIZ`: the largest stdio buffer for a regular file.
pub const MAX_BUFFER: usize = 8192;

/// Below this buffer size glibc stops aligning direct transfers to it.
const MIN_ALIGNED_BUFFER: usize = 128;

/// The stream buffer size glibc picks for a file with this `st_blksize`.
pub fn buffer_size(blksize: i64) -> usize {
    match usize::try_from(blksize) {
        Ok(size) if size > 0 && size < MAX_BUFFER => size,
        _ => MAX_BUFFER,
    }
}

/// The part of `wanted` glibc moves directly, bypassing the buffer: whole
/// buffer-sized blocks (or everything, for tiny buffers).
fn direct_part(buffer: usize, wanted: usize) -> usize {
    if buffer >= MIN_ALIGNED_BUFFER {
        wanted - wanted % buffer
    } else {
        wanted
    }
}

/// An output stream over data written contiguously from offset 0 (all
/// PostMark writes are): each `write()` is a range of that data, passed
/// to `sink` as (offset, length).
pub struct StdioWriter {
    buffer: usize,
    /// glibc allocates the buffer at the first `fwrite` that needs it.
    allocated: bool,
    /// Bytes handed to `write()` so far: the offset of the buffered bytes.
    flushed: usize,
    buffered: usize,
}

impl StdioWriter {
    pub fn new(buffer: usize) -> Self {
        StdioWriter {
            buffer,
            allocated: false,
            flushed: 0,
            buffered: 0,
        }
    }

    /// `fwrite` of the next `len` bytes.
    pub fn fwrite<E>(
        &mut self,
        len: usize,
        sink: &mut impl FnMut(usize, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        let space = if self.allocated {
            self.buffer - self.buffered
        } else {
            0
        };
        let fitting = space.min(len);
        self.buffered += fitting;
        let rest = len - fitting;
        if rest == 0 {
            return Ok(());
        }
        self.flush(sink)?;
        self.allocated = true;
        let direct = direct_part(self.buffer, rest);
        if direct > 0 {
            sink(self.flushed, direct)?;
            self.flushed += direct;
        }
        self.buffered = rest - direct;
        Ok(())
    }

    /// `fclose`: writes what is still buffered.
    pub fn close<E>(
        &mut self,
        sink: &mut impl FnMut(usize, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        self.flush(sink)
    }

    fn flush<E>(&mut self, sink: &mut impl FnMut(usize, usize) -> Result<(), E>) -> Result<(), E> {
        if self.buffered > 0 {
            sink(self.flushed, self.buffered)?;
            self.flushed += self.buffered;
            self.buffered = 0;
        }
        Ok(())
    }
}

/// An input stream: `source(n)` is one `read()` asking for `n` bytes and
/// returns how many came (0 at end of file).
pub struct StdioReader {
    buffer: usize,
    /// Bytes read into the buffer and not consumed yet.
    available: usize,
}

/// The file ended before PostMark's recorded size was read.
#[derive(Debug, thiserror::Error)]
#[error("the file is shorter than PostMark recorded (changed by someone else?)")]
pub struct EndOfFile;

impl StdioReader {
    pub fn new(buffer: usize) -> Self {
        StdioReader {
            buffer,
            available: 0,
        }
    }

    /// `fread` of `len` bytes.
    pub fn fread<E: From<EndOfFile>>(
        &mut self,
        len: usize,
        source: &mut impl FnMut(usize) -> Result<usize, E>,
    ) -> Result<(), E> {
        let mut wanted = len;
        while wanted > self.available {
            wanted -= self.available;
            self.available = 0;
            let got = if wanted < self.buffer {
                self.available = source(self.buffer)?;
                self.available
            } else {
                let got = source(direct_part(self.buffer, wanted))?;
                wanted -= got;
                got
            };
            if got == 0 {
                return Err(EndOfFile.into());
            }
        }
        self.available -= wanted;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The write() sizes of `size` bytes fwritten in `chunk` pieces.
    fn writes(size: usize, chunk: usize, buffer: usize) -> Vec<usize> {
        let mut calls = Vec::new();
        let mut offset_seen = 0;
        let mut sink = |offset: usize, len: usize| -> Result<(), ()> {
            assert_eq!(offset, offset_seen, "writes must be contiguous");
            offset_seen += len;
            calls.push(len);
            Ok(())
        };
        let mut stream = StdioWriter::new(buffer);
        for _ in 0..size / chunk {
            stream.fwrite(chunk, &mut sink).unwrap();
        }
        stream.fwrite(size % chunk, &mut sink).unwrap();
        stream.close(&mut sink).unwrap();
        calls
    }

    /// The read() requests (and results) for `size` bytes freaded in
    /// `chunk` pieces from a file of `size` bytes.
    fn reads(size: usize, chunk: usize, buffer: usize) -> Vec<(usize, usize)> {
        let mut calls = Vec::new();
        let mut left = size;
        let mut source = |want: usize| -> Result<usize, EndOfFile> {
            let got = want.min(left);
            left -= got;
            calls.push((want, got));
            Ok(got)
        };
        let mut stream = StdioReader::new(buffer);
        for _ in 0..size / chunk {
            stream.fread(chunk, &mut source).unwrap();
        }
        stream.fread(size % chunk, &mut source).unwrap();
        calls
    }

    /// What strace shows PostMark (glibc, tmpfs: 4096-byte buffer) doing.
    #[test]
    fn small_blocks_become_buffer_sized_syscalls() {
        assert_eq!(writes(6853, 512, 4096), [4096, 2757]);
        assert_eq!(writes(197, 512, 4096), [197]);
        assert_eq!(writes(8192, 512, 4096), [4096, 4096]);
        assert_eq!(reads(6853, 512, 4096), [(4096, 4096), (4096, 2757)]);
        assert_eq!(reads(8192, 512, 4096), [(4096, 4096), (4096, 4096)]);
    }

    #[test]
    fn large_blocks_go_straight_to_the_file_in_whole_buffers() {
        assert_eq!(writes(10000, 8192, 4096), [8192, 1808]);
        assert_eq!(writes(10000, 5000, 4096), [4096, 4096, 1808]);
        assert_eq!(reads(10000, 8192, 4096), [(8192, 8192), (4096, 1808)]);
    }

    #[test]
    fn buffer_follows_blksize_up_to_bufsiz() {
        assert_eq!(buffer_size(4096), 4096);
        assert_eq!(buffer_size(1024), 1024);
        assert_eq!(buffer_size(1 << 20), MAX_BUFFER);
        assert_eq!(buffer_size(0), MAX_BUFFER);
    }

    #[test]
    fn a_file_shorter_than_recorded_is_an_error() {
        let mut left = 100;
        let mut source = |want: usize| -> Result<usize, EndOfFile> {
            let got = want.min(left);
            left -= got;
            Ok(got)
        };
        assert!(StdioReader::new(4096).fread(512, &mut source).is_err());
    }
}
