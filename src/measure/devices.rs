//! What the devices under the target did during a phase, from
//! /proc/diskstats (the kernel's Documentation/admin-guide/iostats.rst).
//!
//! The driver says which devices count the running step's I/O
//! ([`watch`], from the target's `TargetEnv::devices`); every timed phase
//! then takes a [`snapshot`] before and after (`PhaseClock`, and the io
//! engine at its measured window's ends), and its `PhaseTiming` carries
//! the [`Delta`]. Without devices (tmpfs: "no device") there is no
//! snapshot and no delta.
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::storage::devices::BlockDev;

/// Bytes per diskstats sector, whatever the device's sector size.
const SECTOR: u64 = 512;

/// One device's (or several devices' summed) cumulative counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub reads: u64,
    pub read_sectors: u64,
    pub writes: u64,
    pub write_sectors: u64,
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
            read_sectors: values[2],
            read_ms: values[3],
            writes: values[4],
            write_sectors: values[6],
            write_ms: values[7],
            io_ms: values[9],
            weighted_ms: values[10],
            discards: at(11),
            discard_sectors: at(13),
            flushes: at(15),
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
            read_sectors: self.read_sectors + other.read_sectors,
            writes: self.writes + other.writes,
            write_sectors: self.write_sectors + other.write_sectors,
            read_ms: self.read_ms + other.read_ms,
            write_ms: self.write_ms + other.write_ms,
            io_ms: self.io_ms + other.io_ms,
            weighted_ms: self.weighted_ms + other.weighted_ms,
            discards: add(self.discards, other.discards),
            discard_sectors: add(self.discard_sectors, other.discard_sectors),
            flushes: add(self.flushes, other.flushes),
        }
    }

    /// What happened between `self` (before) and `after`.
    pub fn until(&self, after: &Counters) -> Counters {
        let sub = |a: u64, b: u64| b.saturating_sub(a);
        let sub_opt = |a: Option<u64>, b: Option<u64>| Some(b?.saturating_sub(a?));
        Counters {
            reads: sub(self.reads, after.reads),
            read_sectors: sub(self.read_sectors, after.read_sectors),
            writes: sub(self.writes, after.writes),
            write_sectors: sub(self.write_sectors, after.write_sectors),
            read_ms: sub(self.read_ms, after.read_ms),
            write_ms: sub(self.write_ms, after.write_ms),
            io_ms: sub(self.io_ms, after.io_ms),
            weighted_ms: sub(self.weighted_ms, after.weighted_ms),
            discards: sub_opt(self.discards, after.discards),
            discard_sectors: sub_opt(self.discard_sectors, after.discard_sectors),
            flushes: sub_opt(self.flushes, after.flushes),
        }
    }
}

/// What the counted devices did over a phase of `elapsed_s` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub reads: u64,
    pub writes: u64,
    /// Milliseconds the devices had I/O in flight (summed over devices).
    pub io_ms: u64,
    pub weighted_ms: u64,
    /// Milliseconds spent on the reads and writes, summed over requests.
    pub busy_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discards: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flushes: Option<u64>,
    pub elapsed_s: f64,
}

impl Delta {
    pub fn of(counters: &Counters, elapsed_s: f64) -> Delta {
        Delta {
            read_bytes: counters.read_sectors * SECTOR,
            written_bytes: counters.write_sectors * SECTOR,
            reads: counters.reads,
            writes: counters.writes,
            io_ms: counters.io_ms,
            weighted_ms: counters.weighted_ms,
            busy_ms: counters.read_ms + counters.write_ms,
            discards: counters.discards,
            flushes: counters.flushes,
            elapsed_s,
        }
    }

    /// Reads and writes completed.
    pub fn ops(&self) -> u64 {
        self.reads + self.writes
    }

    /// % of the phase the devices had I/O in flight (above 100 for
    /// several counted devices busy at once); 0 for no time.
    pub fn util_percent(&self) -> f64 {
        ratio(self.io_ms as f64 / 10.0, self.elapsed_s)
    }

    /// Requests in flight on average over the phase.
    pub fn queue_depth(&self) -> f64 {
        ratio(self.weighted_ms as f64 / 1000.0, self.elapsed_s)
    }

    /// Milliseconds per completed request on average; 0 without requests.
    pub fn service_ms(&self) -> f64 {
        ratio(self.busy_ms as f64, self.ops() as f64)
    }

    /// Both phases' deltas: the counters added, over both times.
    pub fn plus(&self, other: &Delta) -> Delta {
        let add = |a: Option<u64>, b: Option<u64>| Some(a? + b?);
        Delta {
            read_bytes: self.read_bytes + other.read_bytes,
            written_bytes: self.written_bytes + other.written_bytes,
            reads: self.reads + other.reads,
            writes: self.writes + other.writes,
            io_ms: self.io_ms + other.io_ms,
            weighted_ms: self.weighted_ms + other.weighted_ms,
            busy_ms: self.busy_ms + other.busy_ms,
            discards: add(self.discards, other.discards),
            flushes: add(self.flushes, other.flushes),
            elapsed_s: self.elapsed_s + other.elapsed_s,
        }
    }
}

/// `a / b`, 0 when `b` is not positive.
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// The counted devices of the step that is running, if any.
static WATCHED: Mutex<Vec<(u32, u32)>> = Mutex::new(Vec::new());

/// Until dropped: the devices whose counters every timed phase reads.
pub struct Watch(());

/// Watches the counted devices among `devices` until the guard is dropped
/// (the driver, around each step of a workload).
pub fn watch(devices: &[BlockDev]) -> Watch {
    let counted = devices.iter().filter(|d| d.counted).map(|d| d.dev);
    *lock() = counted.collect();
    Watch(())
}

impl Drop for Watch {
    fn drop(&mut self) {
        lock().clear();
    }
}

fn lock() -> std::sync::MutexGuard<'static, Vec<(u32, u32)>> {
    WATCHED.lock().unwrap_or_else(|e| e.into_inner())
}

/// The watched devices' counters now; None when none is watched or
/// /proc/diskstats cannot be read.
pub fn snapshot() -> Option<Counters> {
    let devices = lock().clone();
    if devices.is_empty() {
        return None;
    }
    snapshot_of(&devices)
}

/// `devices`' summed counters now: one read of /proc/diskstats.
fn snapshot_of(devices: &[(u32, u32)]) -> Option<Counters> {
    let text = std::fs::read_to_string("/proc/diskstats").ok()?;
    Counters::of(&text, devices)
}

/// From a snapshot taken before a phase of `elapsed_s` to now.
pub fn since(before: Option<Counters>, elapsed_s: f64) -> Option<Delta> {
    between(before, snapshot(), elapsed_s)
}

/// Between two snapshots `elapsed_s` apart.
pub fn between(before: Option<Counters>, after: Option<Counters>, elapsed_s: f64) -> Option<Delta> {
    Some(Delta::of(&before?.until(&after?), elapsed_s))
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
        assert_eq!((c.reads, c.read_sectors, c.read_ms), (120, 20480, 55));
        assert_eq!((c.writes, c.write_sectors, c.write_ms), (300, 65536, 900));
        assert_eq!((c.io_ms, c.weighted_ms), (640, 955));
        assert_eq!((c.discards, c.discard_sectors), (Some(10), Some(2048)));
        assert_eq!(c.flushes, Some(6));
    }

    #[test]
    fn a_diskstats_line_without_them() {
        let (dev, c) = Counters::parse_line(OLD).unwrap();
        assert_eq!(dev, (253, 0));
        assert_eq!((c.reads, c.read_sectors, c.writes), (4000, 80000, 5000));
        assert_eq!((c.io_ms, c.weighted_ms), (2500, 4200));
        assert_eq!((c.discards, c.flushes), (None, None));
        assert!(Counters::parse_line("7 3 loop3 1 2 3").is_none());
        assert!(Counters::parse_line("").is_none());
    }

    #[test]
    fn the_watched_devices_are_summed_and_a_missing_one_gives_none() {
        let text = format!("{NEW}\n{OLD}\n   8 0 sda 1 1 1 1 1 1 1 1 1 1 1\n");
        let sum = Counters::of(&text, &[(7, 3), (253, 0)]).unwrap();
        assert_eq!(sum.read_sectors, 20480 + 80000);
        assert_eq!(sum.discards, None, "one device does not count them");
        let reversed = format!("{OLD}\n{NEW}\n");
        assert_eq!(Counters::of(&reversed, &[(7, 3), (253, 0)]), Some(sum));
        let one = Counters::of(&text, &[(7, 3)]).unwrap();
        assert_eq!(one.flushes, Some(6));
        assert!(Counters::of(&text, &[(7, 3), (9, 9)]).is_none());
    }

    #[test]
    fn a_snapshot_costs_well_under_a_millisecond() {
        let text = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
        let Some((dev, _)) = text.lines().find_map(Counters::parse_line) else {
            return; // no block device on this machine
        };
        let rounds = 2000;
        let start = std::time::Instant::now();
        for _ in 0..rounds {
            assert!(snapshot_of(&[dev]).is_some());
        }
        let each = start.elapsed() / rounds;
        eprintln!(
            "one snapshot: {each:?} ({} diskstats lines)",
            text.lines().count()
        );
        assert!(each < std::time::Duration::from_millis(1), "{each:?}");
    }

    #[test]
    fn derived_figures_are_per_phase_and_never_divide_by_zero() {
        let (_, after) = Counters::parse_line(NEW).unwrap();
        let before = Counters {
            reads: 20,
            read_sectors: 480,
            writes: 100,
            write_sectors: 1536,
            read_ms: 5,
            write_ms: 100,
            io_ms: 140,
            weighted_ms: 155,
            discards: Some(10),
            discard_sectors: Some(2048),
            flushes: Some(2),
        };
        let delta = Delta::of(&before.until(&after), 2.0);
        assert_eq!(delta.read_bytes, 20000 * 512);
        assert_eq!(delta.written_bytes, 64000 * 512);
        assert_eq!(delta.ops(), 300);
        assert_eq!(delta.util_percent(), 25.0, "500 ms busy of 2 s");
        assert_eq!(delta.queue_depth(), 0.4, "800 weighted ms over 2 s");
        assert_eq!(delta.service_ms(), 850.0 / 300.0);
        assert_eq!((delta.discards, delta.flushes), (Some(0), Some(4)));
        let idle = Delta::of(&Counters::default(), 0.0);
        assert_eq!(
            (idle.util_percent(), idle.queue_depth(), idle.service_ms()),
            (0.0, 0.0, 0.0)
        );
        // Counters that went backwards (a device re-created) give 0.
        assert_eq!(after.until(&before).reads, 0);
    }
}
