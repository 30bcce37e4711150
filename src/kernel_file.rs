//! Reading the kernel's files: /proc tables (diskstats, mountinfo,
//! mountstats, net/dev, stat, ...) and sysfs attributes. Every read is
//! bounded, so a file that never ends — root bind-mounting /dev/zero over
//! /proc/diskstats, a FIFO in its place — costs at most the bound and
//! reads as unreadable, like a missing file: no counters, no value, never
//! a process that eats all memory. (Files the user gives fsbench are read
//! by `crate::input`, whose limits are usage errors instead.)
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Most bytes of a /proc table. The largest real ones — mountinfo and
/// mountstats of a host with tens of thousands of mounts, diskstats of a
/// SAN host with thousands of paths — stay well under it.
pub const TABLE: usize = 16 << 20;

/// Most bytes of a sysfs (or /proc/sys) attribute: one page, 64 KiB
/// pages included.
pub const ATTRIBUTE: usize = 64 << 10;

/// What a read starts with: a whole diskstats, net/dev or attribute of a
/// usual host, in one allocation (growing it costs one more each time it
/// doubles).
const FIRST_CHUNK: usize = 4 << 10;

/// The whole of the kernel file `path`, at most `limit` bytes; None when
/// it is missing, unreadable or longer. Opened non-blocking: a FIFO in
/// its place reads as empty or unreadable instead of waiting for a
/// writer.
pub fn read(path: impl AsRef<Path>, limit: usize) -> Option<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    read_from(file, limit)
}

/// `read` as text (UTF-8, as the kernel writes it); None when it is not.
pub fn read_text(path: impl AsRef<Path>, limit: usize) -> Option<String> {
    String::from_utf8(read(path, limit)?).ok()
}

/// The number on the `key: value [kB]` line of a /proc file's `text`
/// (/proc/meminfo, /proc/self/io), in bytes: meminfo states its sizes in
/// kB (really KiB), /proc/self/io in bytes. None without that line, or
/// with another unit.
pub fn field_bytes(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name == key).then_some(value)
    })?;
    let mut words = line.split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => value.checked_mul(1024),
        None => Some(value),
        Some(_) => None,
    }
}

/// All of `source`, at most `limit` bytes; None past the limit (after
/// reading one byte more, to tell a source of exactly `limit` bytes from
/// a longer one) or on an error.
pub fn read_from(source: impl Read, limit: usize) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(FIRST_CHUNK.min(limit.saturating_add(1)));
    source
        .take((limit as u64).saturating_add(1))
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() <= limit).then_some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_meminfo_and_self_io_in_bytes() {
        let meminfo = "MemTotal: 100 kB\nDirty:  35332 kB\nMemAvailable:  2048 kB\n";
        assert_eq!(field_bytes(meminfo, "MemAvailable"), Some(2048 * 1024));
        assert_eq!(field_bytes(meminfo, "Dirty"), Some(35332 * 1024));
        assert_eq!(field_bytes(meminfo, "Writeback"), None);
        let io = "rchar: 1\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(field_bytes(io, "read_bytes"), Some(4096));
        assert_eq!(field_bytes(io, "write_bytes"), Some(8192));
        assert_eq!(
            field_bytes("Dirty: 4 MB\n", "Dirty"),
            None,
            "an unknown unit"
        );
    }

    /// An endless source that counts what it handed out.
    struct Endless<'a>(&'a mut u64);

    impl Read for Endless<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            buf.fill(b'0');
            *self.0 += buf.len() as u64;
            Ok(buf.len())
        }
    }

    #[test]
    fn an_endless_source_is_read_to_the_bound_and_is_unreadable() {
        let mut handed = 0;
        assert_eq!(read_from(Endless(&mut handed), 1000), None);
        assert_eq!(handed, 1001, "the bound and one byte to see it is passed");
        let mut handed = 0;
        assert_eq!(read_from(Endless(&mut handed), TABLE), None);
        assert_eq!(handed, TABLE as u64 + 1);
    }

    #[test]
    fn a_source_of_exactly_the_bound_is_read_whole() {
        let text = vec![b'x'; 1000];
        assert_eq!(read_from(&text[..], 1000).as_deref(), Some(&text[..]));
        assert_eq!(read_from(&text[..999], 1000).as_deref(), Some(&text[..999]));
        assert_eq!(read_from(&text[..], 999), None);
        assert_eq!(read_from(&b""[..], 0).as_deref(), Some(&b""[..]));
    }

    #[test]
    fn dev_zero_in_place_of_a_kernel_file_is_unreadable() {
        let started = std::time::Instant::now();
        assert_eq!(read("/dev/zero", ATTRIBUTE), None);
        assert_eq!(read("/dev/zero", TABLE), None);
        assert_eq!(read_text("/dev/zero", TABLE), None);
        // Not a timing threshold: an unbounded read would not return at all
        // (it ends when memory does).
        eprintln!(
            "two reads of /dev/zero to their bounds: {:?}",
            started.elapsed()
        );
        assert_eq!(read("/nonexistent/kernel/file", TABLE), None);
    }

    /// A FIFO whose writer never stops, in place of a /proc file: the read
    /// never waits for the writer nor outgrows the bound.
    #[test]
    fn an_endless_fifo_is_unreadable() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("diskstats");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        // Without a writer: nothing to read, and no wait for one.
        assert_eq!(read(&fifo, 1000).as_deref(), Some(&b""[..]));
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let writer = std::fs::OpenOptions::new()
                .read(true) // so that opening for writing does not wait
                .write(true)
                .open(&fifo)
                .unwrap();
            scope.spawn(|| {
                use std::io::Write;
                let mut writer = writer;
                let chunk = [b'7'; 4096];
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    if writer.write_all(&chunk).is_err() {
                        break;
                    }
                }
            });
            for limit in [1000, ATTRIBUTE] {
                assert_eq!(read(&fifo, limit), None, "limit {limit}");
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            // Unblock a writer waiting for room.
            let _ = read(&fifo, TABLE);
        });
    }

    #[test]
    fn real_kernel_files_are_read_whole() {
        if let Some(text) = read_text("/proc/self/mountinfo", TABLE) {
            assert!(text.ends_with('\n'), "whole lines");
            assert!(text.lines().count() >= 1);
        }
        if let Some(online) = read_text("/sys/devices/system/cpu/online", ATTRIBUTE) {
            assert!(online.starts_with('0'), "{online}");
        }
    }
}
