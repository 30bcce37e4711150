//! What the devices under the target did during a phase, from
//! /proc/diskstats (the kernel's Documentation/admin-guide/iostats.rst).
//!
//! The driver says which devices count the running step's I/O
//! ([`watch`], from the target's `TargetEnv::devices`); every timed phase
//! then takes a [`snapshot`] before and after (`PhaseClock`, and the io
//! engine at its measured window's ends), and its `PhaseTiming` carries
//! the [`Delta`]. Without devices (tmpfs: "no device") there is no
//! snapshot and no delta. A snapshot also reads what the host and this
//! process did so far (`noise::Reading`), so every delta says what else
//! ran during its phase (`Delta::noise`).
use std::sync::Mutex;

use crate::kernel_file;
use crate::measure::noise::{self, Noise, Reading};
use crate::result::env::{BlockDev, Network, NetworkMount};

/// Bytes per diskstats sector, whatever the device's sector size.
const SECTOR: u64 = 512;

/// One device's (or several devices' summed, or a network mount's)
/// cumulative counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub written_bytes: u64,
    /// Milliseconds spent reading and writing (summed over requests).
    pub read_ms: u64,
    pub write_ms: u64,
    /// Milliseconds the device had I/O in flight.
    pub io_ms: u64,
    /// Weighted milliseconds doing I/O: in-flight requests × time.
    pub weighted_ms: u64,
    /// Kernel 4.18+.
    pub discards: Option<u64>,
    pub discard_sectors: Option<u64>,
    /// Kernel 5.5+.
    pub flushes: Option<u64>,
    /// Read and written by the disks that hold loop devices' images
    /// beneath the counted devices (`BlockDev::backing`).
    pub backing_read_bytes: Option<u64>,
    pub backing_written_bytes: Option<u64>,
    /// The host and this process when a snapshot was taken (`snapshot`);
    /// None in a sum or a change of counters (`Delta::noise` holds the
    /// phase's figures).
    pub host: Option<Reading>,
}

impl Counters {
    /// One line of /proc/diskstats: its device number and counters.
    pub fn parse_line(line: &str) -> Option<((u32, u32), Counters)> {
        let mut fields = line.split_ascii_whitespace();
        let major = fields.next()?.parse().ok()?;
        let minor = fields.next()?.parse().ok()?;
        fields.next()?; // name
        let values: Vec<u64> = fields.map_while(|f| f.parse().ok()).collect();
        if values.len() < 11 {
            return None;
        }
        let at = |i: usize| values.get(i).copied();
        let counters = Counters {
            reads: values[0],
            read_bytes: values[2] * SECTOR,
            read_ms: values[3],
            writes: values[4],
            written_bytes: values[6] * SECTOR,
            write_ms: values[7],
            io_ms: values[9],
            weighted_ms: values[10],
            discards: at(11),
            discard_sectors: at(13),
            flushes: at(15),
            backing_read_bytes: None,
            backing_written_bytes: None,
            host: None,
        };
        Some(((major, minor), counters))
    }

    /// The sum of `devices`' lines in a diskstats `text`; None when one of
    /// them has no line.
    pub fn of(text: &str, devices: &[(u32, u32)]) -> Option<Counters> {
        let mut sum: Option<Counters> = None;
        let mut seen = 0;
        for line in text.lines() {
            // Only the watched lines are parsed past their device number.
            let mut fields = line.split_ascii_whitespace();
            let dev = (fields.next(), fields.next());
            let watched = |(major, minor): (Option<&str>, Option<&str>)| {
                let dev = (major?.parse().ok()?, minor?.parse().ok()?);
                devices.contains(&dev).then_some(())
            };
            if watched(dev).is_none() {
                continue;
            }
            if let Some((_, counters)) = Counters::parse_line(line) {
                sum = Some(sum.map_or(counters, |s| s.plus(&counters)));
                seen += 1;
            }
        }
        sum.filter(|_| seen == devices.len())
    }

    fn plus(&self, other: &Counters) -> Counters {
        let add = |a: Option<u64>, b: Option<u64>| Some(a? + b?);
        Counters {
            reads: self.reads + other.reads,
            read_bytes: self.read_bytes + other.read_bytes,
            writes: self.writes + other.writes,
            written_bytes: self.written_bytes + other.written_bytes,
            read_ms: self.read_ms + other.read_ms,
            write_ms: self.write_ms + other.write_ms,
            io_ms: self.io_ms + other.io_ms,
            weighted_ms: self.weighted_ms + other.weighted_ms,
            discards: add(self.discards, other.discards),
            discard_sectors: add(self.discard_sectors, other.discard_sectors),
            flushes: add(self.flushes, other.flushes),
            backing_read_bytes: add(self.backing_read_bytes, other.backing_read_bytes),
            backing_written_bytes: add(self.backing_written_bytes, other.backing_written_bytes),
            host: None,
        }
    }

    /// What happened between `self` (before) and `after`.
    pub fn until(&self, after: &Counters) -> Counters {
        let sub = |a: u64, b: u64| b.saturating_sub(a);
        let sub_opt = |a: Option<u64>, b: Option<u64>| Some(b?.saturating_sub(a?));
        Counters {
            reads: sub(self.reads, after.reads),
            read_bytes: sub(self.read_bytes, after.read_bytes),
            writes: sub(self.writes, after.writes),
            written_bytes: sub(self.written_bytes, after.written_bytes),
            read_ms: sub(self.read_ms, after.read_ms),
            write_ms: sub(self.write_ms, after.write_ms),
            io_ms: sub(self.io_ms, after.io_ms),
            weighted_ms: sub(self.weighted_ms, after.weighted_ms),
            discards: sub_opt(self.discards, after.discards),
            discard_sectors: sub_opt(self.discard_sectors, after.discard_sectors),
            flushes: sub_opt(self.flushes, after.flushes),
            backing_read_bytes: sub_opt(self.backing_read_bytes, after.backing_read_bytes),
            backing_written_bytes: sub_opt(self.backing_written_bytes, after.backing_written_bytes),
            host: None,
        }
    }
}

/// What the counted devices did over a phase of `elapsed_s` seconds: the
/// change of their counters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Delta {
    pub counters: Counters,
    pub elapsed_s: f64,
    /// A network mount's fastest link, in bytes/s: what no figure of it
    /// can exceed unless the client's cache served it.
    pub link_bytes_per_s: Option<u64>,
    /// What else the host did over the phase, and the bytes this process
    /// itself caused to be read and written (`measure::noise`); None
    /// where the snapshots did not read it.
    pub noise: Option<Noise>,
}

impl Delta {
    pub fn of(counters: &Counters, elapsed_s: f64) -> Delta {
        Delta {
            counters: *counters,
            elapsed_s,
            link_bytes_per_s: None,
            noise: None,
        }
    }

    /// The delta behind a metric's `evidence` over its `elapsed_s` (an
    /// MPI rank's, sent as its metric): the counters, and the times its
    /// derived figures were made of. Its reads stand for all operations.
    pub fn from_evidence(evidence: &crate::result::DeviceEvidence, elapsed_s: f64) -> Delta {
        let counters = Counters {
            reads: evidence.ops,
            read_bytes: evidence.read_bytes,
            written_bytes: evidence.written_bytes,
            read_ms: (evidence.service_ms * evidence.ops as f64).round() as u64,
            io_ms: (evidence.util_percent * 10.0 * elapsed_s).round() as u64,
            weighted_ms: (evidence.queue_depth * 1000.0 * elapsed_s).round() as u64,
            discards: evidence.discards,
            flushes: evidence.flushes,
            backing_read_bytes: evidence.backing_read_bytes,
            backing_written_bytes: evidence.backing_written_bytes,
            ..Counters::default()
        };
        Delta {
            counters,
            elapsed_s,
            link_bytes_per_s: evidence.link_bytes_per_s,
            // A rank's figures are of its own process and host: the job's
            // are not their sum, and the ranks on one host are each
            // other's "other processes". The job judges no noise.
            noise: None,
        }
    }

    /// Reads and writes completed.
    pub fn ops(&self) -> u64 {
        self.counters.reads + self.counters.writes
    }

    /// % of the phase the devices had I/O in flight (above 100 for
    /// several counted devices busy at once); 0 for no time.
    pub fn util_percent(&self) -> f64 {
        ratio(self.counters.io_ms as f64 / 10.0, self.elapsed_s)
    }

    /// Requests in flight on average over the phase.
    pub fn queue_depth(&self) -> f64 {
        ratio(self.counters.weighted_ms as f64 / 1000.0, self.elapsed_s)
    }

    /// Milliseconds per completed request on average; 0 without requests.
    pub fn service_ms(&self) -> f64 {
        let busy_ms = self.counters.read_ms + self.counters.write_ms;
        ratio(busy_ms as f64, self.ops() as f64)
    }

    /// Both phases' deltas: the counters added, over both times.
    pub fn plus(&self, other: &Delta) -> Delta {
        let noise = match (self.noise, other.noise) {
            (Some(a), Some(b)) => Some(a.plus(&b, (self.elapsed_s, other.elapsed_s))),
            _ => None,
        };
        Delta {
            counters: self.counters.plus(&other.counters),
            elapsed_s: self.elapsed_s + other.elapsed_s,
            link_bytes_per_s: self.link_bytes_per_s.or(other.link_bytes_per_s),
            noise,
        }
    }
}

/// `a / b`, 0 when `b` is not positive.
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// Where the running step's I/O is counted.
#[derive(Debug, Clone)]
enum Source {
    /// The counted block devices' lines of /proc/diskstats, and those of
    /// the disks holding loop devices' images beneath them.
    Disks {
        counted: Vec<(u32, u32)>,
        backing: Vec<(u32, u32)>,
    },
    /// An NFS mount's client counters in /proc/self/mountstats: bytes
    /// read from and written to the server.
    Nfs(String),
    /// Every network interface but lo in /proc/net/dev.
    Interfaces,
}

/// The running step's source and, for a network mount, its link speed.
static WATCHED: Mutex<Option<(Source, Option<u64>)>> = Mutex::new(None);

/// Until dropped: the devices whose counters every timed phase reads.
pub struct Watch(());

/// Set to `off`: no phase reads the counters, so results have no device
/// evidence (and the size guesses decide the flags). For measuring what
/// reading them costs (`bench/counters.py`), not for everyday use.
pub const SWITCH: &str = "FSBENCH_DEVICE_COUNTERS";

/// Watches the counted devices among `devices`, or a network mount's
/// counters, until the guard is dropped (the driver, around each step of
/// a workload); nothing when `SWITCH` says off.
pub fn watch(devices: &[BlockDev], network: Option<&NetworkMount>) -> Watch {
    let numbers = |keep: fn(&BlockDev) -> bool| -> Vec<(u32, u32)> {
        devices.iter().filter(|d| keep(d)).map(|d| d.dev).collect()
    };
    let counted = numbers(|d| d.counted);
    let backing = numbers(|d| d.backing);
    let source = match network {
        Some(mount) => Some((mount.source(), mount.link_bytes_per_s)),
        None if counted.is_empty() => None,
        None => Some((Source::Disks { counted, backing }, None)),
    };
    let off = std::env::var_os(SWITCH).is_some_and(|v| v == "off");
    *lock() = source.filter(|_| !off);
    Watch(())
}

impl NetworkMount {
    fn source(&self) -> Source {
        match &self.counters {
            Network::Nfs { mount_point } => Source::Nfs(mount_point.clone()),
            Network::Interfaces => Source::Interfaces,
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        *lock() = None;
    }
}

fn lock() -> std::sync::MutexGuard<'static, Option<(Source, Option<u64>)>> {
    WATCHED.lock().unwrap_or_else(|e| e.into_inner())
}

/// The watched counters now, with the host's reading; None when nothing
/// is watched or they cannot be read.
pub fn snapshot() -> Option<Counters> {
    let (source, _) = lock().clone()?;
    Some(Counters {
        host: Some(Reading::now()),
        ..read(&source)?
    })
}

/// `source`'s counters now: one read of its /proc file.
fn read(source: &Source) -> Option<Counters> {
    match source {
        Source::Disks { counted, backing } => snapshot_of(counted, backing),
        Source::Nfs(mount_point) => {
            let bytes = kernel_file::read("/proc/self/mountstats", kernel_file::TABLE)?;
            nfs_counters(std::str::from_utf8(&bytes).ok()?, mount_point)
        }
        Source::Interfaces => {
            let bytes = kernel_file::read("/proc/net/dev", kernel_file::TABLE)?;
            interface_counters(std::str::from_utf8(&bytes).ok()?)
        }
    }
}

/// The `counted` devices' summed counters now, with the bytes of the
/// `backing` disks beneath: one read of /proc/diskstats (bounded: one
/// that never ends, /dev/zero bind-mounted over it, gives no counters).
fn snapshot_of(counted: &[(u32, u32)], backing: &[(u32, u32)]) -> Option<Counters> {
    let bytes = kernel_file::read("/proc/diskstats", kernel_file::TABLE)?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let beneath = (!backing.is_empty())
        .then(|| Counters::of(text, backing))
        .flatten();
    Some(Counters {
        backing_read_bytes: beneath.map(|b| b.read_bytes),
        backing_written_bytes: beneath.map(|b| b.written_bytes),
        ..Counters::of(text, counted)?
    })
}

/// From a snapshot taken before a phase of `elapsed_s` to now.
pub fn since(before: Option<Counters>, elapsed_s: f64) -> Option<Delta> {
    between(before, snapshot(), elapsed_s)
}

/// Between two snapshots `elapsed_s` apart, with what else the host did
/// between them.
pub fn between(before: Option<Counters>, after: Option<Counters>, elapsed_s: f64) -> Option<Delta> {
    let (before, after) = (before?, after?);
    let delta = Delta::of(&before.until(&after), elapsed_s);
    let (link, disks) = lock().as_ref().map_or((None, false), |(source, link)| {
        (*link, matches!(source, Source::Disks { .. }))
    });
    // This process's bytes weigh block devices' counters only: NFS client
    // reads are not in /proc/self/io, and the interfaces count every
    // process's traffic.
    let noise = before
        .host
        .zip(after.host)
        .map(|(b, a)| Noise::between(&b, &a, elapsed_s, noise::machine(), disks));
    Some(Delta {
        link_bytes_per_s: link,
        noise,
        ..delta
    })
}

/// The NFS client's counters of the mount at `mount_point` in a
/// /proc/self/mountstats `text`: its `bytes:` line's server read and
/// write bytes (what crossed the network, the client's cache left out)
/// and its READ and WRITE operations.
fn nfs_counters(text: &str, mount_point: &str) -> Option<Counters> {
    let heading = |line: &str| {
        let mut words = line.split_ascii_whitespace();
        let is_device = words.next() == Some("device");
        let point = words.skip_while(|w| *w != "on").nth(1);
        (is_device, point.map(unescape_mount_point))
    };
    let block = text
        .lines()
        .skip_while(|line| heading(line).1.as_deref() != Some(mount_point))
        .skip(1)
        .take_while(|line| !heading(line).0);
    let mut counters = None;
    let (mut reads, mut writes) = (0, 0);
    for line in block {
        let mut fields = line.split_ascii_whitespace();
        let numbers = |fields: std::str::SplitAsciiWhitespace<'_>| -> Vec<u64> {
            fields.filter_map(|f| f.parse().ok()).collect()
        };
        match fields.next() {
            Some("bytes:") => {
                let values = numbers(fields);
                counters = Some((*values.get(4)?, *values.get(5)?));
            }
            Some("READ:") => reads = numbers(fields).first().copied().unwrap_or(0),
            Some("WRITE:") => writes = numbers(fields).first().copied().unwrap_or(0),
            _ => {}
        }
    }
    let (read_bytes, written_bytes) = counters?;
    Some(Counters {
        reads,
        read_bytes,
        writes,
        written_bytes,
        ..Counters::default()
    })
}

/// A mount point as /proc writes it: space, tab, newline and backslash
/// as octal escapes.
fn unescape_mount_point(text: &str) -> String {
    text.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// Every interface's received and sent bytes and packets in a
/// /proc/net/dev `text`, lo left out.
fn interface_counters(text: &str) -> Option<Counters> {
    let mut sum: Option<Counters> = None;
    for line in text.lines().skip(2) {
        let Some((name, values)) = line.split_once(':') else {
            continue;
        };
        if name.trim() == "lo" {
            continue;
        }
        let values: Vec<u64> = values
            .split_ascii_whitespace()
            .filter_map(|v| v.parse().ok())
            .collect();
        if values.len() < 10 {
            continue;
        }
        let counters = Counters {
            read_bytes: values[0],
            reads: values[1],
            written_bytes: values[8],
            writes: values[9],
            ..Counters::default()
        };
        sum = Some(sum.map_or(counters, |s| s.plus(&counters)));
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kernel 5.5+: 17 fields after the name (discards and flushes).
    const NEW: &str = "   7       3 loop3 120 4 20480 55 300 7 65536 900 0 640 955 10 0 2048 3 6 4";
    /// Kernel before 4.18: 11 fields.
    const OLD: &str = " 253       0 vda 4000 10 80000 1200 5000 20 160000 3000 1 2500 4200";

    #[test]
    fn a_diskstats_line_with_discards_and_flushes() {
        let (dev, c) = Counters::parse_line(NEW).unwrap();
        assert_eq!(dev, (7, 3));
        assert_eq!((c.reads, c.read_bytes, c.read_ms), (120, 20480 * 512, 55));
        assert_eq!(
            (c.writes, c.written_bytes, c.write_ms),
            (300, 65536 * 512, 900)
        );
        assert_eq!((c.io_ms, c.weighted_ms), (640, 955));
        assert_eq!((c.discards, c.discard_sectors), (Some(10), Some(2048)));
        assert_eq!(c.flushes, Some(6));
    }

    #[test]
    fn a_diskstats_line_without_them() {
        let (dev, c) = Counters::parse_line(OLD).unwrap();
        assert_eq!(dev, (253, 0));
        assert_eq!((c.reads, c.read_bytes, c.writes), (4000, 80000 * 512, 5000));
        assert_eq!((c.io_ms, c.weighted_ms), (2500, 4200));
        assert_eq!((c.discards, c.flushes), (None, None));
        assert!(Counters::parse_line("7 3 loop3 1 2 3").is_none());
        assert!(Counters::parse_line("").is_none());
    }

    #[test]
    fn the_watched_devices_are_summed_and_a_missing_one_gives_none() {
        let text = format!("{NEW}\n{OLD}\n   8 0 sda 1 1 1 1 1 1 1 1 1 1 1\n");
        let sum = Counters::of(&text, &[(7, 3), (253, 0)]).unwrap();
        assert_eq!(sum.read_bytes, (20480 + 80000) * 512);
        assert_eq!(sum.discards, None, "one device does not count them");
        let reversed = format!("{OLD}\n{NEW}\n");
        assert_eq!(Counters::of(&reversed, &[(7, 3), (253, 0)]), Some(sum));
        let one = Counters::of(&text, &[(7, 3)]).unwrap();
        assert_eq!(one.flushes, Some(6));
        assert!(Counters::of(&text, &[(7, 3), (9, 9)]).is_none());
    }

    /// Two NFS mounts; the second's mount point has a space.
    const MOUNTSTATS: &str = "\
device rootfs mounted on / with fstype rootfs
device 10.0.0.1:/data mounted on /mnt/nfs with fstype nfs4 statvers=1.1
\topts:\trw,vers=4.2,rsize=1048576
\tbytes:\t9000000 4000000 0 0 1048576 4194304 256 1024
\tper-op statistics
\t        NULL: 1 1 0 44 24 0 0 0 0
\t        READ: 32 32 0 4480 1052672 2 30 33 0
\t       WRITE: 64 64 0 4202496 10240 1 80 82 0
device 10.0.0.2:/home mounted on /mnt/my\\040home with fstype nfs statvers=1.1
\tbytes:\t1 2 3 4 5 6 7 8
\t        READ: 7 7 0 0 0 0 0 0 0
";

    #[test]
    fn an_nfs_mount_counts_what_crossed_the_network_to_and_from_the_server() {
        let c = nfs_counters(MOUNTSTATS, "/mnt/nfs").unwrap();
        // serverreadbytes and serverwritebytes, not what the client cache
        // served (normalreadbytes).
        assert_eq!((c.read_bytes, c.written_bytes), (1048576, 4194304));
        assert_eq!((c.reads, c.writes), (32, 64));
        let home = nfs_counters(MOUNTSTATS, "/mnt/my home").unwrap();
        assert_eq!(
            (home.read_bytes, home.written_bytes, home.reads, home.writes),
            (5, 6, 7, 0)
        );
        assert!(nfs_counters(MOUNTSTATS, "/mnt/other").is_none());
        assert!(
            nfs_counters("device x mounted on /mnt/nfs with fstype nfs\n", "/mnt/nfs").is_none()
        );
        assert!(nfs_counters("", "/mnt/nfs").is_none());
    }

    #[test]
    fn interfaces_count_received_as_read_and_sent_as_written_without_lo() {
        let text = "\
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 6703764   52195    0    0    0     0          0         0  6703764   52195    0    0    0     0       0          0
  eth0: 1000 10 0 0 0 0 0 0 500 5 0 0 0 0 0 0
  eth1:2000 20 0 0 0 0 0 0 700 7 0 0 0 0 0 0
  bad: 1 2
";
        let c = interface_counters(text).unwrap();
        assert_eq!((c.read_bytes, c.reads), (3000, 30));
        assert_eq!((c.written_bytes, c.writes), (1200, 12));
        assert!(interface_counters("header\nheader\n    lo: 1 2 3 4 5 6 7 8 9 10\n").is_none());
    }

    #[test]
    fn a_snapshot_reads_the_counted_and_the_backing_disks_in_one_text() {
        let text = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
        let Some((dev, _)) = text.lines().find_map(Counters::parse_line) else {
            return; // no block device on this machine
        };
        // One read of /proc/diskstats serves both sums: the same device
        // counted and beneath gives the same bytes.
        let both = snapshot_of(&[dev], &[dev]).unwrap();
        assert_eq!(both.backing_read_bytes, Some(both.read_bytes));
        assert_eq!(both.backing_written_bytes, Some(both.written_bytes));
        let alone = snapshot_of(&[dev], &[]).unwrap();
        assert_eq!(
            (alone.backing_read_bytes, alone.backing_written_bytes),
            (None, None)
        );
        assert!(
            snapshot_of(&[(u32::MAX, 0)], &[dev]).is_none(),
            "a counted device is missing"
        );
    }

    #[test]
    fn derived_figures_are_per_phase_and_never_divide_by_zero() {
        let (_, after) = Counters::parse_line(NEW).unwrap();
        let before = Counters {
            reads: 20,
            read_bytes: 480 * 512,
            writes: 100,
            written_bytes: 1536 * 512,
            read_ms: 5,
            write_ms: 100,
            io_ms: 140,
            weighted_ms: 155,
            discards: Some(10),
            discard_sectors: Some(2048),
            flushes: Some(2),
            backing_read_bytes: None,
            backing_written_bytes: None,
            host: None,
        };
        let delta = Delta::of(&before.until(&after), 2.0);
        assert_eq!(delta.counters.read_bytes, 20000 * 512);
        assert_eq!(delta.counters.written_bytes, 64000 * 512);
        assert_eq!(delta.ops(), 300);
        assert_eq!(delta.util_percent(), 25.0, "500 ms busy of 2 s");
        assert_eq!(delta.queue_depth(), 0.4, "800 weighted ms over 2 s");
        assert_eq!(delta.service_ms(), 850.0 / 300.0);
        assert_eq!(
            (delta.counters.discards, delta.counters.flushes),
            (Some(0), Some(4))
        );
        let idle = Delta::of(&Counters::default(), 0.0);
        assert_eq!(
            (idle.util_percent(), idle.queue_depth(), idle.service_ms()),
            (0.0, 0.0, 0.0)
        );
        // Counters that went backwards (a device re-created) give 0.
        assert_eq!(after.until(&before).reads, 0);
    }
}
