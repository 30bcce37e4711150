//! What a disk image holds, as a map of byte ranges to where their
//! contents lie: the image fsbench made before recording (the gaps), a
//! write's data in the block log, zeros (a discard), or the overlay a
//! crash state's check writes to. The live recorded disk and every crash
//! state are such a map over the same base image, so a state is built by
//! choosing log entries, never by copying an image.
use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Where the first byte of a range lies; the rest follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// At this position of the block log.
    Log(u64),
    /// At this position of the state's overlay file.
    Overlay(u64),
    /// Zeros.
    Zero,
}

impl Source {
    /// The source of the byte `by` bytes further on.
    fn skip(self, by: u64) -> Source {
        match self {
            Source::Log(at) => Source::Log(at + by),
            Source::Overlay(at) => Source::Overlay(at + by),
            Source::Zero => Source::Zero,
        }
    }
}

/// Non-overlapping ranges, keyed by their start: (end, source).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extents {
    pieces: BTreeMap<u64, (u64, Source)>,
}

/// The files a map's sources point into.
pub struct Files<'a> {
    pub base: &'a File,
    pub log: &'a File,
    pub overlay: Option<&'a File>,
}

impl Extents {
    /// From now on, `len` bytes at `start` come from `source` (a later
    /// write over an earlier one: what it covers of the earlier is gone).
    pub fn put(&mut self, start: u64, len: u64, source: Source) {
        if len == 0 {
            return;
        }
        let end = start + len;
        self.cut_out(start, end);
        self.pieces.insert(start, (end, source));
    }

    /// How many ranges it holds (its memory is proportional).
    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    /// Whether it holds nothing: the base image as it is.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// Removes [start, end) from every range, keeping what lies outside.
    fn cut_out(&mut self, start: u64, end: u64) {
        if let Some((&s, &(e, source))) = self.pieces.range(..start).next_back()
            && e > start
        {
            self.pieces.insert(s, (start, source));
            if e > end {
                self.pieces.insert(end, (e, source.skip(end - s)));
            }
        }
        let inside: Vec<u64> = self.pieces.range(start..end).map(|(&s, _)| s).collect();
        for s in inside {
            let (e, source) = self.pieces.remove(&s).expect("a key just listed");
            if e > end {
                self.pieces.insert(end, (e, source.skip(end - s)));
            }
        }
    }

    /// Fills `buf` with the image's bytes at `offset`: the gaps from the
    /// base image (zeros past its end).
    pub fn read(&self, offset: u64, buf: &mut [u8], files: &Files) -> std::io::Result<()> {
        let end = offset + buf.len() as u64;
        let mut at = offset;
        let before = self.pieces.range(..offset).next_back();
        let first = before.filter(|(_, (e, _))| *e > offset);
        let overlapping = first
            .into_iter()
            .chain(self.pieces.range(offset..end))
            .map(|(&s, &(e, source))| (s, e, source));
        for (s, e, source) in overlapping {
            let from = s.max(offset);
            if from > at {
                read_base(
                    files.base,
                    at,
                    &mut buf[(at - offset) as usize..(from - offset) as usize],
                )?;
            }
            let to = e.min(end);
            let part = &mut buf[(from - offset) as usize..(to - offset) as usize];
            match source.skip(from - s) {
                Source::Log(pos) => files.log.read_exact_at(part, pos)?,
                Source::Overlay(pos) => files
                    .overlay
                    .expect("overlay sources only in a state with an overlay")
                    .read_exact_at(part, pos)?,
                Source::Zero => part.fill(0),
            }
            at = to;
        }
        if at < end {
            read_base(files.base, at, &mut buf[(at - offset) as usize..])?;
        }
        Ok(())
    }
}

/// The base image's bytes at `offset`, zeros past its end.
fn read_base(base: &File, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match base.read_at(&mut buf[done..], offset + done as u64)? {
            0 => break,
            n => done += n,
        }
    }
    buf[done..].fill(0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The map read back equals writing the same ranges, in order, onto a
    /// copy of the base image.
    fn check(writes: &[(u64, Vec<u8>)], zeros: &[(u64, u64)]) {
        let dir = tempfile::tempdir().unwrap();
        let base_bytes: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.path().join("base"), &base_bytes[..3000]).unwrap();
        let mut log = Vec::new();
        let mut map = Extents::default();
        let mut image = base_bytes.clone();
        image[3000..].fill(0);
        for (i, (offset, data)) in writes.iter().enumerate() {
            map.put(*offset, data.len() as u64, Source::Log(log.len() as u64));
            log.extend_from_slice(data);
            image[*offset as usize..*offset as usize + data.len()].copy_from_slice(data);
            if let Some(&(z, len)) = zeros.get(i) {
                map.put(z, len, Source::Zero);
                image[z as usize..(z + len) as usize].fill(0);
            }
        }
        std::fs::write(dir.path().join("log"), &log).unwrap();
        let files = Files {
            base: &File::open(dir.path().join("base")).unwrap(),
            log: &File::open(dir.path().join("log")).unwrap(),
            overlay: None,
        };
        for (offset, len) in [(0, 4096), (1, 100), (2999, 2), (4000, 96), (512, 1024)] {
            let mut buf = vec![0xee; len];
            map.read(offset, &mut buf, &files).unwrap();
            assert_eq!(
                buf,
                image[offset as usize..offset as usize + len],
                "at {offset}+{len}"
            );
        }
    }

    #[test]
    fn overlapping_writes_and_discards_read_as_applied_in_order() {
        check(
            &[
                (0, vec![1; 100]),
                (50, vec![2; 100]),
                (10, vec![3; 20]),
                (2990, vec![4; 20]),
            ],
            &[(120, 10)],
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn any_sequence_of_writes_reads_back_as_applied(
            writes in prop::collection::vec((0u64..4000, 1usize..96, any::<u8>()), 1..40),
            zeros in prop::collection::vec((0u64..4000, 1u64..96), 0..10),
        ) {
            let writes: Vec<(u64, Vec<u8>)> = writes
                .into_iter()
                .map(|(o, n, b)| (o, vec![b; n]))
                .collect();
            check(&writes, &zeros);
        }
    }
}
