//! The one way a measured phase becomes metrics. A workload says what it
//! measured over a phase (`Measured`: wall time, CPU %, whether its data
//! may have come from the page cache, whether its writes may have stayed
//! there) and which figures it reports over
//! it: counts as rates, the phase's time, or values it computed itself.
//! Every metric is made by [`Measured::metric`], so what a phase adds to
//! its metrics (the flags, CPU %, the timing's id) is decided here once,
//! and anything a phase will add is one change here.
use crate::measure::PhaseTiming;
use crate::measure::devices::Delta;
use crate::measure::noise::Noise;
use crate::result::{
    AcrossRanks, Cliff, DeviceEvidence, Direction, Flag, MIN_PRECISE_SECONDS, Metric,
};

/// The one evidence rule, for reads and writes alike: a figure is the
/// storage's only when the devices under the target (and, under a loop
/// image, the disk holding it) moved at least this share of its bytes in
/// its window. Under it, most of the bytes were the page cache's: read
/// from it, still dirty in it, or written many times over in it and
/// synced once.
pub const EVIDENCE_FRACTION: f64 = 0.5;

/// The noise rules: whether another process's work was measured with the
/// phase's. The devices' bytes (read and written, counted devices) are
/// weighed against what this process itself caused (/proc/self/io), and
/// the phase is `Flag::Disturbed` when they exceed what that explains:
/// `DISTURBED_READ_FACTOR` × its reads + `DISTURBED_WRITE_FACTOR` × its
/// writes + the dirty bytes it carried into the phase +
/// `DISTURBED_BYTES_PER_OP` per operation of a phase that moves no data +
/// this floor.
///
/// What the devices legitimately do beyond the process's own bytes is
/// mostly not accounted to it: the journal (jbd2, the XFS log) and the
/// writeback of metadata are kernel threads' work, so a phase of
/// metadata operations on empty files causes no bytes of its own at all,
/// and the journal commits (every 5 s) and metadata writeback of one
/// phase land in the next. The floor is that spill-over: a default ext4
/// journal (64 MiB from 2 to 16 GiB file systems) written once; measured
/// on idle 2–4 GiB loop file systems, 100 000 empty-file creates move
/// 21 MiB (ext4) and 26 MiB (XFS). A concurrent `dd` at 100 MiB/s passes
/// it in under a second.
pub const DISTURBED_FLOOR_BYTES: u64 = 64 << 20;

/// A phase of operations that move no data (the workload said none, or
/// did not say its bytes: the metric's samples are then its operations)
/// may cost the devices this much per operation in metadata. Measured
/// on idle loop file systems with 100 000 empty files in a random order: up to 4.4 KiB per operation on ext4 (unlink,
/// rename, link: the inode table, directory and bitmap blocks, journaled
/// and then written in place) and 3.9 KiB on XFS; 16 KiB is four times
/// that, two 4 KiB blocks an operation journaled and written back when
/// every operation lands in blocks of its own.
pub const DISTURBED_BYTES_PER_OP: u64 = 16 << 10;

/// Reads are hardly amplified: readahead and metadata reads are submitted
/// by the reading process and counted as its own; 4× leaves room for what
/// is read on its behalf elsewhere (metadata a kernel worker reads, whole
/// blocks of a device whose blocks are larger than the reads).
pub const DISTURBED_READ_FACTOR: f64 = 4.0;

/// Writes are: each fsync of a small write costs a journal commit beside
/// the data (ext4: descriptor, inode and bitmap blocks and a commit block,
/// 4–5× a 4 KiB write), ext4 `data=journal` writes the data twice, a
/// btrfs fsync writes 16 KiB log-tree nodes twice (DUP metadata) and a
/// superblock (about 10×), and a btrfs RAID1C3/4 or a counted mirror
/// multiplies all of it. 16× covers those; a phase that writes much with
/// another writer beside it is then found only when the other writes far
/// more (false alarms cost more than misses: a flagged figure is doubted).
pub const DISTURBED_WRITE_FACTOR: f64 = 16.0;

/// `Flag::BusyHost`: other processes used over this share (%) of the
/// machine's CPU capacity over the phase. Kernel threads count as other
/// processes, and some work for the phase (writeback, loop devices'
/// workers, dm-crypt's encryption, interrupts): up to a few CPUs' worth on
/// a small machine, so half the capacity, not a quarter. With half the
/// CPUs taken, a multi-threaded workload waits for CPUs and even a single
/// thread shares caches and memory bandwidth.
pub const BUSY_OTHERS_PERCENT: f64 = 50.0;

/// `Flag::BusyHost`: the hypervisor stole over this share (%) of the CPU
/// time over the phase. The usual rule of thumb of monitoring guides
/// takes sustained steal above 10 % for a noisy neighbour; under it,
/// steal is a virtual machine's everyday cost.
pub const BUSY_STEAL_PERCENT: f64 = 10.0;

/// Whether a phase whose devices did `evidence` moved far more than this
/// process explains (see `DISTURBED_FLOOR_BYTES`), over `operations`
/// operations that moved no data (0 for a phase that moved data).
/// Without this process's bytes (a network mount, no /proc/self/io)
/// there is no judgement.
pub fn disturbed(evidence: &DeviceEvidence, operations: u64) -> bool {
    let (Some(own), Some(written)) = (evidence.own_io_bytes, evidence.own_written_bytes) else {
        return false;
    };
    let read = own.saturating_sub(written);
    let explained = DISTURBED_READ_FACTOR * read as f64
        + DISTURBED_WRITE_FACTOR * written as f64
        + evidence.carried_dirty_bytes.unwrap_or(0) as f64
        + DISTURBED_BYTES_PER_OP as f64 * operations as f64
        + DISTURBED_FLOOR_BYTES as f64;
    (evidence.read_bytes + evidence.written_bytes) as f64 > explained
}

/// Whether the host was busy over a phase of `elapsed_s` (see
/// `BUSY_OTHERS_PERCENT`, `BUSY_STEAL_PERCENT`). A phase under
/// `MIN_PRECISE_SECONDS` is not judged: /proc/stat counts in ticks of 10
/// ms, sampled, so a few ticks either way are several % of its capacity.
pub fn busy_host(evidence: &DeviceEvidence, elapsed_s: f64) -> bool {
    let over = |percent: Option<f64>, limit| percent.is_some_and(|p| p > limit);
    elapsed_s >= MIN_PRECISE_SECONDS
        && (over(evidence.others_cpu_percent, BUSY_OTHERS_PERCENT)
            || over(evidence.steal_percent, BUSY_STEAL_PERCENT))
}

/// What every metric over one phase shares: made from its timing by a
/// workload (`Measured::over`), or from the ranks' spans by the MPI
/// aggregate.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Wall time of the phase.
    pub elapsed_s: f64,
    /// CPU time of the whole process over the phase / wall time, in %.
    pub cpu_percent: Option<f64>,
    /// The data the phase read fits in RAM, so it likely came from the
    /// page cache.
    pub fits_in_page_cache: bool,
    /// The phase's writes were neither synced nor more than the kernel
    /// lets stay dirty: they may all still be in the page cache
    /// (`Measured::left_dirty`).
    pub writes_cached: bool,
    /// The timing the phase was (`PhaseTiming::id`): how rank 0 of an MPI
    /// job finds its span. None for a phase no timing of this process
    /// covers (the job's aggregate).
    pub phase: Option<u64>,
    /// What the devices under the target did over the phase (the timing's
    /// `device`); None without devices.
    pub device: Option<Delta>,
    /// Bytes the phase read and wrote, as the workload counted them
    /// (`Measured::moved`); None where it does not say.
    pub read_bytes: Option<u64>,
    pub written_bytes: Option<u64>,
    /// The bytes the phase left unsynced (`Measured::left_dirty`).
    pub unsynced: Option<u64>,
    /// The phase's writes were on the device when it ended (synced inside
    /// it, or O_DIRECT), and its reads went to the device whatever the
    /// page cache held (O_DIRECT): `Measured::reached_device`. Device
    /// counters far below its bytes then mean I/O no counted device did.
    pub writes_reached_device: bool,
    pub reads_bypassed_cache: bool,
    /// The phase reads what the file system holds (its metadata at
    /// least: a `find` reads directories and inodes, no data) after its
    /// caches were emptied, on block devices whose counters see every
    /// read (`Measured::cold`): devices that read nothing mean a cache
    /// served it, whatever bytes the workload counted.
    pub meant_cold: bool,
    /// Flags the device counters raised where this process cannot read
    /// them (the ranks' own, for the MPI aggregate), beside what this
    /// phase's counters show.
    pub device_flags: Vec<Flag>,
    /// Where the phase's throughput fell off a cliff (`Measured::fell`).
    pub cliff: Option<Cliff>,
}

/// How a count becomes a rate: its unit, and how many counted things make
/// one of it (bytes per MiB).
#[derive(Debug, Clone, Copy)]
pub struct Rate {
    pub unit: &'static str,
    per_unit: f64,
}

impl Rate {
    /// Bytes as MiB (2^20 bytes) per second.
    pub const MIB_PER_S: Rate = Rate {
        unit: "MiB/s",
        per_unit: (1u64 << 20) as f64,
    };
    /// Bytes as MB (10^6 bytes) per second, as the tree's seed tables.
    pub const MB_PER_S: Rate = Rate {
        unit: "MB/s",
        per_unit: 1e6,
    };

    /// Things counted one by one (files, writes) per second.
    pub const fn per_second(unit: &'static str) -> Rate {
        Rate {
            unit,
            per_unit: 1.0,
        }
    }
}

impl Measured {
    /// The phase `timing` measured, with its CPU %; its data not cached.
    pub fn over(timing: &PhaseTiming) -> Measured {
        Measured {
            elapsed_s: timing.elapsed.as_secs_f64(),
            cpu_percent: Some(timing.cpu_percent()),
            fits_in_page_cache: false,
            writes_cached: false,
            phase: Some(timing.id()),
            device: timing.device,
            read_bytes: None,
            written_bytes: None,
            unsynced: None,
            writes_reached_device: false,
            reads_bypassed_cache: false,
            meant_cold: false,
            device_flags: Vec::new(),
            cliff: None,
        }
    }

    /// The phase reads the file system after its caches were emptied, on
    /// block devices (`cold`: see `Measured::meant_cold`).
    pub fn cold(self, cold: bool) -> Measured {
        Measured {
            meant_cold: cold,
            ..self
        }
    }

    /// The phase's writes were on the device by its end (`writes`: synced
    /// inside the phase, or O_DIRECT), and its reads bypassed the page
    /// cache (`reads`: O_DIRECT).
    pub fn reached_device(self, writes: bool, reads: bool) -> Measured {
        Measured {
            writes_reached_device: writes,
            reads_bypassed_cache: reads,
            ..self
        }
    }

    /// The phase's throughput fell off `cliff` (None: it did not): its
    /// metrics are flagged, with the figures.
    pub fn fell(self, cliff: Option<Cliff>) -> Measured {
        Measured { cliff, ..self }
    }

    /// The phase read `read` and wrote `written` bytes: what the device
    /// counters are weighed against.
    pub fn moved(self, read: u64, written: u64) -> Measured {
        Measured {
            read_bytes: Some(read),
            written_bytes: Some(written),
            ..self
        }
    }

    /// The phase wrote `unsynced` bytes through the page cache and did not
    /// sync them (None: it wrote nothing, or synced, or bypassed the cache
    /// with O_DIRECT). Fewer than the kernel's dirty threshold means no
    /// write waited for the storage: the metrics are flagged. Without a
    /// known threshold there is no evidence, and no flag.
    pub fn left_dirty(self, unsynced: Option<u64>) -> Measured {
        self.left_dirty_under(unsynced, crate::storage::env::dirty_limit_bytes())
    }

    /// `left_dirty` against a given dirty threshold.
    pub fn left_dirty_under(self, unsynced: Option<u64>, limit: Option<u64>) -> Measured {
        let cached = matches!((unsynced, limit), (Some(bytes), Some(limit)) if bytes < limit);
        Measured {
            writes_cached: self.writes_cached || cached,
            unsynced: unsynced.or(self.unsynced),
            ..self
        }
    }

    /// `count` per second of the phase, in `rate`'s unit; higher is
    /// better.
    pub fn rate(&self, name: impl Into<String>, rate: Rate, count: u64) -> Metric {
        let value = per_second(count as f64 / rate.per_unit, self.elapsed_s);
        self.metric(name, rate.unit, Direction::HigherIsBetter, value, count)
    }

    /// The phase's wall time in seconds, over `samples` operations; lower
    /// is better.
    pub fn seconds(&self, name: impl Into<String>, samples: u64) -> Metric {
        self.metric(name, "s", Direction::LowerIsBetter, self.elapsed_s, samples)
    }

    /// The time a part of the phase took (the closing fsync of the
    /// writes), `seconds` timed on its own; a detail, lower is better.
    /// Under MPI the job's is the slowest rank's: each rank timed its own
    /// part, which is not the phase's span.
    pub fn part_seconds(&self, name: impl Into<String>, seconds: f64) -> Metric {
        self.metric(name, "s", Direction::LowerIsBetter, seconds, 1)
            .with_across_ranks(AcrossRanks::Max)
            .as_detail()
    }

    /// A `value` the workload computed over the phase from `samples` (a
    /// mean response time, or a rate it reports itself), with the phase's
    /// time, CPU %, flags and timing. No latency, and combined over MPI
    /// ranks by its unit, unless the caller says otherwise
    /// (`Metric::with_latency`, `Metric::with_across_ranks`).
    pub fn metric(
        &self,
        name: impl Into<String>,
        unit: &str,
        direction: Direction,
        value: f64,
        samples: u64,
    ) -> Metric {
        Metric {
            name: name.into(),
            value,
            unit: unit.into(),
            direction,
            samples,
            elapsed_s: self.elapsed_s,
            cpu_percent: self.cpu_percent,
            latency: None,
            flags: self.flags(samples),
            across_ranks: Default::default(),
            phase: self.phase,
            detail: false,
            device: self.evidence().map(|e| e.over_operations(samples)),
            cliff: self.cliff.clone(),
        }
    }

    /// The device counters against the workload's bytes.
    fn evidence(&self) -> Option<DeviceEvidence> {
        let delta = self.device?;
        // Unsynced writes are written bytes, for a workload that says no more.
        let written = self.written_bytes.or(self.unsynced);
        let ratio = |device: u64, moved: Option<u64>| {
            moved.filter(|&m| m > 0).map(|m| device as f64 / m as f64)
        };
        Some(DeviceEvidence {
            read_bytes: delta.counters.read_bytes,
            written_bytes: delta.counters.written_bytes,
            ops: delta.ops(),
            util_percent: delta.util_percent(),
            queue_depth: delta.queue_depth(),
            service_ms: delta.service_ms(),
            discards: delta.counters.discards,
            flushes: delta.counters.flushes,
            workload_read_bytes: self.read_bytes,
            workload_written_bytes: written,
            read_ratio: ratio(delta.counters.read_bytes, self.read_bytes),
            write_ratio: ratio(delta.counters.written_bytes, written),
            // Only writes that reached the device weigh what it costs them.
            write_amplification: ratio(delta.counters.written_bytes, written)
                .filter(|_| self.writes_reached_device),
            bytes_per_op: None,
            link_bytes_per_s: delta.link_bytes_per_s,
            backing_read_bytes: delta.counters.backing_read_bytes,
            backing_written_bytes: delta.counters.backing_written_bytes,
            ..noise_evidence(delta.noise)
        })
    }

    /// What a reader must know about the phase's figures: too short to
    /// time precisely, served from the page cache, writes that had not
    /// reached the storage. Where the device counters weigh a direction
    /// (the phase moved bytes in it), they decide, and replace the guess
    /// from sizes; without them (tmpfs, a workload that does not say its
    /// bytes) the guess stays. With the host's figures, whether other
    /// processes' I/O or CPU use was measured with the phase's (the noise
    /// rules above), over the metric's `samples`.
    fn flags(&self, samples: u64) -> Vec<Flag> {
        let evidence = self.evidence();
        // The lower of the counted devices' and the disks' under their
        // loop images: bytes that stopped in the host's cache of an image
        // never reached the storage either.
        let read_ratio = evidence
            .as_ref()
            .and_then(DeviceEvidence::lowest_read_ratio);
        let lowest_write_ratio = evidence
            .as_ref()
            .and_then(DeviceEvidence::lowest_write_ratio);
        let write_ratio = lowest_write_ratio.filter(|_| self.unsynced.is_some());
        // Synced by the phase's end, but through the page cache: what the
        // device wrote is what was left of the bytes after rewrites met
        // there (writes that each reach the device are `exceeds_device`'s).
        let synced_ratio =
            lowest_write_ratio.filter(|_| self.unsynced.is_none() && !self.writes_reached_device);
        let under = |ratio: Option<f64>, fraction| ratio.is_some_and(|r| r < fraction);
        let mut flags = Vec::new();
        if self.elapsed_s < MIN_PRECISE_SECONDS {
            flags.push(Flag::TooShort);
        }
        if self.fits_in_page_cache && read_ratio.is_none() {
            flags.push(Flag::FitsInPageCache);
        }
        let raised = |flag| self.device_flags.contains(&flag);
        let read_nothing = self.meant_cold && evidence.as_ref().is_some_and(|e| e.read_bytes == 0);
        if raised(Flag::ServedFromCache) || under(read_ratio, EVIDENCE_FRACTION) || read_nothing {
            flags.push(Flag::ServedFromCache);
        }
        if self.writes_cached && write_ratio.is_none() {
            flags.push(Flag::WritesCached);
        }
        if raised(Flag::NotYetOnDevice) || under(write_ratio, EVIDENCE_FRACTION) {
            flags.push(Flag::NotYetOnDevice);
        }
        if raised(Flag::AbsorbedByCache) || under(synced_ratio, EVIDENCE_FRACTION) {
            flags.push(Flag::AbsorbedByCache);
        }
        if raised(Flag::ExceedsDevice) || self.exceeds_device(evidence.as_ref()) {
            flags.push(Flag::ExceedsDevice);
        }
        if self.cliff.is_some() {
            flags.push(Flag::Cliff);
        }
        // Under MPI the other ranks are the other processes on a host:
        // their I/O and CPU are the job's, not noise (`Delta::from_evidence`
        // gives the job's metric no figures either).
        let alone = crate::storage::processes() == 1;
        if let Some(evidence) = evidence.as_ref().filter(|_| alone) {
            if disturbed(evidence, self.operations(samples)) {
                flags.push(Flag::Disturbed);
            }
            if busy_host(evidence, self.elapsed_s) {
                flags.push(Flag::BusyHost);
            }
        }
        flags
    }

    /// The operations of a phase that moves no data: a metric's `samples`
    /// where the workload said it moved no bytes, or did not say its bytes
    /// (its samples then count operations; a byte rate whose bytes are
    /// unsaid counts bytes, a more generous allowance); 0 where it moved
    /// data, which its own bytes explain.
    fn operations(&self, samples: u64) -> u64 {
        let moved = self.read_bytes.unwrap_or(0) + self.written_bytes.unwrap_or(0);
        if moved == 0 { samples } else { 0 }
    }

    /// The phase moved bytes the page cache cannot explain and the devices
    /// did not: O_DIRECT reads, or writes on the device by the phase's end,
    /// with device bytes under `EVIDENCE_FRACTION` of them (holes read
    /// back as zeros, compression, deduplication, or a device fsbench does
    /// not count served them); or, on a network mount, more bytes per
    /// second than its fastest link carries. Not a figure of the storage
    /// under test.
    fn exceeds_device(&self, evidence: Option<&DeviceEvidence>) -> bool {
        let Some(evidence) = evidence else {
            return false;
        };
        let under = |ratio: Option<f64>| ratio.is_some_and(|r| r < EVIDENCE_FRACTION);
        let moved = self.read_bytes.unwrap_or(0) + self.written_bytes.unwrap_or(0);
        let beyond_link = evidence
            .link_bytes_per_s
            .is_some_and(|link| per_second(moved as f64, self.elapsed_s) > link as f64);
        (self.reads_bypassed_cache && under(evidence.read_ratio))
            || (self.writes_reached_device && under(evidence.write_ratio))
            || beyond_link
    }
}

/// The evidence's noise figures (`Noise`), the rest left default.
fn noise_evidence(noise: Option<Noise>) -> DeviceEvidence {
    let Some(noise) = noise else {
        return DeviceEvidence::default();
    };
    let own_io_bytes = match (noise.own_read_bytes, noise.own_written_bytes) {
        (Some(read), Some(written)) => Some(read + written),
        _ => None,
    };
    DeviceEvidence {
        own_io_bytes,
        own_written_bytes: noise.own_written_bytes.filter(|_| own_io_bytes.is_some()),
        carried_dirty_bytes: noise.carried_dirty_bytes,
        load_1m: noise.load_1m,
        steal_percent: noise.steal_percent,
        others_cpu_percent: noise.others_cpu_percent,
        ..DeviceEvidence::default()
    }
}

/// `work / seconds`, 0 for an interval too short to measure.
pub fn per_second(work: f64, seconds: f64) -> f64 {
    if seconds > 0.0 { work / seconds } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    fn phase(wall_ms: u64, cpu_ms: u64) -> PhaseTiming {
        PhaseTiming::new(
            Instant::now(),
            Duration::from_millis(wall_ms),
            Duration::from_millis(cpu_ms),
        )
    }

    fn files(timing: &PhaseTiming) -> Metric {
        Measured::over(timing).rate("create", Rate::per_second("files/s"), 100)
    }

    #[test]
    fn a_phase_under_half_a_second_is_flagged_too_short() {
        assert_eq!(files(&phase(200, 0)).flags, [Flag::TooShort]);
        assert!(files(&phase(1000, 0)).flags.is_empty());
    }

    #[test]
    fn mib_per_second_is_bytes_over_two_to_the_twentieth_over_seconds() {
        let metric = Measured::over(&phase(2000, 0)).rate("read", Rate::MIB_PER_S, 3 << 20);
        assert_eq!(metric.value, 1.5);
        assert_eq!(metric.unit, "MiB/s");
        assert_eq!(metric.samples, 3 << 20);
        assert_eq!(metric.direction, Direction::HigherIsBetter);
        let mb = Measured::over(&phase(2000, 0)).rate("read", Rate::MB_PER_S, 3_000_000);
        assert_eq!((mb.value, mb.unit.as_str()), (1.5, "MB/s"));
    }

    #[test]
    fn a_count_per_second_is_the_count_over_the_phase() {
        let metric = files(&phase(4000, 0));
        assert_eq!((metric.value, metric.unit.as_str()), (25.0, "files/s"));
        assert_eq!((metric.samples, metric.elapsed_s), (100, 4.0));
    }

    /// A part of the phase (a closing fsync) is its own time, a detail,
    /// and the slowest rank's under MPI, never the phase's span.
    #[test]
    fn a_part_of_the_phase_is_its_own_time_and_the_slowest_ranks() {
        let metric = Measured::over(&phase(2000, 0)).part_seconds("sync_s", 0.0017);
        assert_eq!((metric.value, metric.unit.as_str()), (0.0017, "s"));
        assert_eq!(metric.elapsed_s, 2.0);
        assert_eq!(metric.direction, Direction::LowerIsBetter);
        assert_eq!(metric.across_ranks, AcrossRanks::Max);
        assert!(metric.detail);
    }

    #[test]
    fn elapsed_time_is_lower_is_better() {
        let metric = Measured::over(&phase(1500, 0)).seconds("find_s", 7);
        assert_eq!(metric.direction, Direction::LowerIsBetter);
        assert_eq!((metric.value, metric.unit.as_str()), (1.5, "s"));
        assert_eq!(metric.samples, 7);
    }

    #[test]
    fn a_phase_of_no_time_gives_zero_not_nan_or_infinity() {
        let timing = phase(0, 0);
        let metric = files(&timing);
        assert_eq!(metric.value, 0.0);
        assert_eq!(metric.cpu_percent, Some(0.0));
        assert_eq!(Measured::over(&timing).seconds("find_s", 0).value, 0.0);
    }

    #[test]
    fn cpu_percent_passes_through() {
        assert_eq!(files(&phase(1000, 250)).cpu_percent, Some(25.0));
        let measured = Measured {
            cpu_percent: Some(42.5),
            ..Measured::over(&phase(1000, 0))
        };
        assert_eq!(measured.seconds("t", 1).cpu_percent, Some(42.5));
    }

    #[test]
    fn cached_data_is_flagged_after_too_short() {
        let measured = Measured {
            fits_in_page_cache: true,
            ..Measured::over(&phase(100, 0))
        };
        let metric = measured.rate("read", Rate::MIB_PER_S, 1);
        assert_eq!(metric.flags, [Flag::TooShort, Flag::FitsInPageCache]);
    }

    #[test]
    fn unsynced_writes_under_the_dirty_threshold_are_flagged() {
        let wrote = |unsynced, limit| {
            Measured::over(&phase(1000, 0))
                .left_dirty_under(unsynced, limit)
                .rate("write", Rate::MIB_PER_S, 256 << 20)
                .flags
        };
        let gib = 1 << 30;
        assert_eq!(wrote(Some(256 << 20), Some(4 * gib)), [Flag::WritesCached]);
        assert!(wrote(Some(8 * gib), Some(4 * gib)).is_empty(), "waited");
        assert!(wrote(None, Some(4 * gib)).is_empty(), "synced");
        assert!(wrote(Some(256 << 20), None).is_empty(), "no evidence");
    }

    fn with_device(read: u64, written: u64) -> Measured {
        let counters = crate::measure::devices::Counters {
            reads: 10,
            read_bytes: read,
            writes: 10,
            written_bytes: written,
            read_ms: 15,
            write_ms: 25,
            io_ms: 500,
            weighted_ms: 1000,
            flushes: Some(1),
            ..Default::default()
        };
        let delta = crate::measure::devices::Delta::of(&counters, 1.0);
        Measured::over(&phase(1000, 0).with_device(Some(delta)))
    }

    #[test]
    fn device_reads_under_half_of_the_bytes_read_replace_the_size_guess() {
        let mib = 1u64 << 20;
        let cached = Measured {
            fits_in_page_cache: true,
            ..with_device(mib / 4, 0)
        };
        let metric = cached
            .moved(512 * mib, 0)
            .rate("read", Rate::MIB_PER_S, 512 * mib);
        assert_eq!(metric.flags, [Flag::ServedFromCache]);
        let device = metric.device.as_ref().unwrap();
        assert_eq!(device.read_ratio, Some(1.0 / 2048.0));
        assert_eq!((device.util_percent, device.queue_depth), (50.0, 1.0));
        assert_eq!(device.service_ms, 2.0);
        assert_eq!(
            metric.flag_text(Flag::ServedFromCache),
            "served from the page cache: the device read 256.0 KiB of the 512.0 MiB read"
        );
        // From the device: no flag, though the size guess said cached.
        let cold = Measured {
            fits_in_page_cache: true,
            ..with_device(500 * mib, 0)
        };
        assert!(cold.moved(512 * mib, 0).seconds("t", 1).flags.is_empty());
        // The workload did not say its bytes: the guess stays.
        let unsaid = Measured {
            fits_in_page_cache: true,
            ..with_device(0, 0)
        };
        assert_eq!(unsaid.seconds("t", 1).flags, [Flag::FitsInPageCache]);
    }

    /// A find reads directories and inodes, no data: it counts no bytes,
    /// so no ratio weighs it. Meant to be cold, a device that read nothing
    /// means a cache served it; one that read something, or a phase not
    /// meant to be cold, raises nothing.
    #[test]
    fn a_cold_metadata_phase_whose_device_read_nothing_was_served_from_cache() {
        let find = |device_read, cold| {
            with_device(device_read, 0)
                .moved(0, 0)
                .cold(cold)
                .seconds("find_s", 5000)
        };
        let warm = find(0, true);
        assert_eq!(warm.flags, [Flag::ServedFromCache]);
        assert_eq!(
            warm.flag_text(Flag::ServedFromCache),
            "read 0 B from its device: served from the cache, not cold"
        );
        assert!(find(160 << 10, true).flags.is_empty());
        assert!(find(0, false).flags.is_empty(), "caches kept: no claim");
        // No counters (tmpfs): no evidence either way.
        let unseen = Measured::over(&phase(1000, 0))
            .moved(0, 0)
            .cold(true)
            .seconds("find_s", 5000);
        assert!(unseen.flags.is_empty());
    }

    #[test]
    fn unsynced_writes_the_device_has_not_seen_are_not_yet_on_it() {
        let mib = 1u64 << 20;
        let wrote = |device_written, unsynced| {
            with_device(0, device_written)
                .moved(0, 256 * mib)
                .left_dirty_under(unsynced, Some(4 << 30))
                .rate("write", Rate::MIB_PER_S, 256 * mib)
        };
        let dirty = wrote(mib, Some(256 * mib));
        assert_eq!(dirty.flags, [Flag::NotYetOnDevice]);
        assert!(
            dirty
                .flag_text(Flag::NotYetOnDevice)
                .contains("wrote 1.0 MiB of the 256.0 MiB")
        );
        // Background writeback had begun: most still dirty, flagged.
        assert_eq!(
            wrote(64 * mib, Some(256 * mib)).flags,
            [Flag::NotYetOnDevice]
        );
        assert!(
            wrote(200 * mib, Some(256 * mib)).flags.is_empty(),
            "mostly written back"
        );
        // Synced in the phase: not "not yet on the device", but a device
        // that wrote none of it did not make the figure either.
        assert_eq!(wrote(0, None).flags, [Flag::AbsorbedByCache]);
        assert!(wrote(256 * mib, None).flags.is_empty(), "synced, on it");
    }

    /// A job that writes a 64 MiB file over and over for seconds and
    /// syncs it at its end: the device wrote the file once, the figure is
    /// the page cache's. One rule with reads: under half is flagged.
    #[test]
    fn synced_writes_the_page_cache_absorbed_are_flagged_with_their_share() {
        let mib = 1u64 << 20;
        let synced = |device_written| {
            with_device(0, device_written)
                .moved(0, 8192 * mib)
                .left_dirty_under(None, Some(4 << 30))
                .rate("write", Rate::MIB_PER_S, 8192 * mib)
        };
        let rewritten = synced(64 * mib);
        assert_eq!(rewritten.flags, [Flag::AbsorbedByCache]);
        assert_eq!(
            rewritten.flag_text(Flag::AbsorbedByCache),
            "absorbed by the page cache: synced, but the device wrote 64.0 MiB of the 8.0 GiB \
             written (rewrites of the same blocks met in the page cache)"
        );
        assert_eq!(synced(4095 * mib).flags, [Flag::AbsorbedByCache]);
        assert!(
            synced(4096 * mib).flags.is_empty(),
            "half reached the device"
        );
        assert!(synced(8192 * mib).flags.is_empty());
        // Writes that each reach the device are exceeds_device's to judge.
        let direct = with_device(0, 64 * mib)
            .moved(0, 8192 * mib)
            .reached_device(true, false)
            .rate("write", Rate::MIB_PER_S, 8192 * mib);
        assert_eq!(direct.flags, [Flag::ExceedsDevice]);
    }

    #[test]
    fn reads_follow_the_same_rule_as_writes() {
        let mib = 1u64 << 20;
        let read = |device_read| {
            with_device(device_read, 0)
                .moved(256 * mib, 0)
                .rate("read", Rate::MIB_PER_S, 256 * mib)
        };
        // 81 % of the bytes from the page cache: not the storage's figure.
        assert_eq!(read(48 * mib).flags, [Flag::ServedFromCache]);
        assert!(read(128 * mib).flags.is_empty());
    }

    #[test]
    fn direct_or_synced_bytes_the_device_did_not_do_exceed_it() {
        let mib = 1u64 << 20;
        let direct_read = |device_read| {
            with_device(device_read, 0)
                .moved(256 * mib, 0)
                .reached_device(false, true)
                .rate("read", Rate::MIB_PER_S, 256 * mib)
        };
        // 256 MiB read with O_DIRECT and the device read 4: holes read back.
        let holes = direct_read(4 * mib);
        assert!(
            holes.flags.contains(&Flag::ExceedsDevice),
            "{:?}",
            holes.flags
        );
        assert!(
            holes.flag_text(Flag::ExceedsDevice).contains(
                "read 256.0 MiB and wrote 0 B past the page cache, the device read 4.0 MiB"
            )
        );
        assert!(!direct_read(256 * mib).flags.contains(&Flag::ExceedsDevice));
        let synced_write = |device_written| {
            with_device(0, device_written)
                .moved(0, 256 * mib)
                .reached_device(true, false)
                .rate("write", Rate::MIB_PER_S, 256 * mib)
        };
        assert_eq!(synced_write(16 * mib).flags, [Flag::ExceedsDevice]);
        let journaled = synced_write(300 * mib);
        assert!(journaled.flags.is_empty());
        let amplification = journaled.device.unwrap().write_amplification.unwrap();
        assert!((amplification - 300.0 / 256.0).abs() < 1e-9);
        // A buffered read the device did not do is the page cache's, not
        // beyond the device; nor is a write not said to be on the device.
        let buffered = with_device(0, 16 * mib).moved(256 * mib, 256 * mib).rate(
            "copy",
            Rate::MIB_PER_S,
            256 * mib,
        );
        assert!(!buffered.flags.contains(&Flag::ExceedsDevice));
        assert_eq!(buffered.device.unwrap().write_amplification, None);
    }

    #[test]
    fn a_loop_device_whose_image_the_host_cached_served_from_the_cache() {
        let mib = 1u64 << 20;
        let read_beneath = |disk_read| {
            let mut measured = with_device(64 * mib, 0);
            if let Some(delta) = measured.device.as_mut() {
                delta.counters.backing_read_bytes = Some(disk_read);
            }
            measured
                .moved(64 * mib, 0)
                .reached_device(false, true)
                .rate("read", Rate::MIB_PER_S, 64 * mib)
        };
        // The loop device read all 64 MiB, its image came from RAM.
        let cached = read_beneath(0);
        assert_eq!(cached.flags, [Flag::ServedFromCache]);
        assert_eq!(
            cached.flag_text(Flag::ServedFromCache),
            "served from the page cache: the disk under the loop device's image read 0 B of the 64.0 MiB read"
        );
        assert!(read_beneath(64 * mib).flags.is_empty(), "from the disk");
    }

    #[test]
    fn a_network_figure_above_its_link_exceeds_the_device() {
        let gbit = 125_000_000u64;
        let over_link = |read_per_s: u64| {
            let mut measured = with_device(read_per_s, 0);
            if let Some(delta) = measured.device.as_mut() {
                delta.link_bytes_per_s = Some(gbit);
            }
            measured
                .moved(read_per_s, 0)
                .rate("read", Rate::MIB_PER_S, read_per_s)
        };
        // 1 s phases: 300 MB/s over a 1 Gb/s link cannot be the network's.
        let fast = over_link(300_000_000);
        assert_eq!(fast.flags, [Flag::ExceedsDevice]);
        assert!(
            fast.flag_text(Flag::ExceedsDevice)
                .contains("links carry at 119.2 MiB/s")
        );
        assert!(over_link(100_000_000).flags.is_empty());
    }

    #[test]
    fn a_phase_without_data_bytes_weighs_device_bytes_per_operation() {
        let create =
            with_device(0, 8 << 20)
                .moved(0, 0)
                .rate("create", Rate::per_second("files/s"), 2048);
        let device = create.device.unwrap();
        assert_eq!(device.bytes_per_op, Some(4096.0));
        assert_eq!(device.ratio(), None);
        // With data bytes the ratio says it, not a per-operation figure.
        let write =
            with_device(0, 8 << 20)
                .moved(0, 8 << 20)
                .rate("write", Rate::MIB_PER_S, 8 << 20);
        assert_eq!(write.device.unwrap().bytes_per_op, None);
        // Bytes not said (a phase that moves data it does not count): none.
        let unsaid = with_device(0, 8 << 20).rate("transactions", Rate::per_second("t/s"), 2048);
        assert_eq!(unsaid.device.unwrap().bytes_per_op, None);
    }

    #[test]
    fn without_devices_there_is_no_evidence() {
        let metric = Measured::over(&phase(1000, 0)).moved(1 << 20, 0).rate(
            "read",
            Rate::MIB_PER_S,
            1 << 20,
        );
        assert!(metric.device.is_none());
        assert!(metric.flags.is_empty());
    }

    /// `with_device`'s 1 s phase, its devices having read `read` and
    /// written `written` bytes, with the host's figures `noise`.
    fn with_noise(read: u64, written: u64, noise: Noise) -> Measured {
        let mut measured = with_device(read, written);
        if let Some(delta) = measured.device.as_mut() {
            delta.noise = Some(noise);
        }
        measured
    }

    /// What /proc/self/io says this process read and wrote, nothing
    /// carried, an idle host.
    fn own(read: u64, written: u64) -> Noise {
        Noise {
            load_1m: Some(0.5),
            steal_percent: Some(0.0),
            others_cpu_percent: Some(1.0),
            own_read_bytes: Some(read),
            own_written_bytes: Some(written),
            carried_dirty_bytes: Some(0),
        }
    }

    /// A concurrent `dd` wrote 400 MiB to the device during a phase in
    /// which fsbench read 1 MiB from it and wrote 4 MiB: flagged, with the
    /// figures.
    #[test]
    fn devices_that_moved_far_more_than_this_process_caused_are_disturbed() {
        let mib = 1u64 << 20;
        let metric = with_noise(mib, 404 * mib, own(mib, 4 * mib))
            .moved(0, 4 * mib)
            .rate("write", Rate::MIB_PER_S, 4 * mib);
        assert_eq!(metric.flags, [Flag::Disturbed]);
        let device = metric.device.as_ref().unwrap();
        assert_eq!(device.own_io_bytes, Some(5 * mib));
        assert_eq!(device.own_written_bytes, Some(4 * mib));
        assert_eq!(
            metric.flag_text(Flag::Disturbed),
            "disturbed: the devices moved 405.0 MiB during the phase, 81× the 5.0 MiB \
             fsbench itself caused: other processes' I/O was measured with it"
        );
        // A phase of metadata operations that caused no bytes of its own
        // (a cached `stat` over 1000 files), and the devices wrote 200 MiB.
        let stat = with_noise(0, 200 * mib, own(0, 0)).moved(0, 0).rate(
            "stat",
            Rate::per_second("files/s"),
            1000,
        );
        assert_eq!(stat.flags, [Flag::Disturbed]);
        assert!(
            stat.flag_text(Flag::Disturbed)
                .contains("moved 200.0 MiB during the phase, while fsbench itself caused 0 B"),
            "{}",
            stat.flag_text(Flag::Disturbed)
        );
    }

    /// A small-file create on ext4 writes several times its bytes through
    /// the journal (not accounted to fsbench), and metadata operations on
    /// empty files cause none of their own: neither is another process.
    #[test]
    fn journal_and_metadata_amplification_is_not_disturbance() {
        let mib = 1u64 << 20;
        // 10 000 files of 4 KiB: 39 MiB of data, 5× that on the device
        // (journal, inode tables, directories).
        let data = 10_000 * 4096;
        let create = with_noise(0, 5 * data, own(0, data)).moved(0, data).rate(
            "create",
            Rate::per_second("files/s"),
            10_000,
        );
        assert!(create.flags.is_empty(), "{:?}", create.flags);
        // 100 000 unlinks of empty files: 442 MiB of journaled metadata
        // on ext4 with no bytes of fsbench's own (measured: 4.4 KiB each).
        let unlink = with_noise(0, 442 * mib, own(0, 0)).rate(
            "unlink",
            Rate::per_second("files/s"),
            100_000,
        );
        assert!(unlink.flags.is_empty(), "{:?}", unlink.flags);
        // An earlier phase's journal commit (30 MiB) in a phase that read
        // 40 MiB.
        let spill = with_noise(40 * mib, 30 * mib, own(40 * mib, 0))
            .moved(40 * mib, 0)
            .rate("read", Rate::MIB_PER_S, 40 * mib);
        assert!(spill.flags.is_empty(), "{:?}", spill.flags);
        // Writeback of what fsbench left dirty before the phase.
        let writeback = Noise {
            carried_dirty_bytes: Some(512 * mib),
            ..own(0, 0)
        };
        let later = with_noise(0, 500 * mib, writeback).moved(0, 0).rate(
            "stat",
            Rate::per_second("files/s"),
            10,
        );
        assert!(later.flags.is_empty(), "{:?}", later.flags);
    }

    #[test]
    fn the_disturbed_rule_is_its_factors_and_floor() {
        let mib = 1u64 << 20;
        let evidence =
            |device_read: u64, device_written: u64, read: u64, written: u64| DeviceEvidence {
                read_bytes: device_read,
                written_bytes: device_written,
                own_io_bytes: Some(read + written),
                own_written_bytes: Some(written),
                carried_dirty_bytes: Some(mib),
                ..DeviceEvidence::default()
            };
        let floor = DISTURBED_FLOOR_BYTES;
        let written = 10 * mib;
        let limit = (DISTURBED_WRITE_FACTOR * written as f64) as u64 + mib + floor;
        assert!(!disturbed(&evidence(0, limit, 0, written), 0));
        assert!(disturbed(&evidence(0, limit + 1, 0, written), 0));
        let read = 10 * mib;
        let limit = (DISTURBED_READ_FACTOR * read as f64) as u64 + mib + floor;
        assert!(!disturbed(&evidence(limit, 0, read, 0), 0));
        assert!(disturbed(&evidence(limit + 1, 0, read, 0), 0));
        // Operations that move no data are allowed their metadata.
        let ops = 1000;
        let limit = ops * DISTURBED_BYTES_PER_OP + mib + floor;
        assert!(!disturbed(&evidence(0, limit, 0, 0), ops));
        assert!(disturbed(&evidence(0, limit + 1, 0, 0), ops));
        // Without this process's bytes (a network mount): no judgement.
        let network = DeviceEvidence {
            own_io_bytes: None,
            ..evidence(0, 100 << 30, 0, 0)
        };
        assert!(!disturbed(&network, 0));
    }

    /// The host's share from /proc/stat deltas: 2 CPUs at 100 ticks/s
    /// over 2 s (400 ticks), busy 360 ticks of which 100 were fsbench's.
    #[test]
    fn other_processes_over_half_the_cpus_or_steal_make_a_busy_host() {
        use crate::measure::noise::{CpuTime, Reading};
        let reading = |busy, steal, total, own_ticks| Reading {
            cpu: Some(CpuTime {
                busy,
                sys: 0,
                steal,
                total,
            }),
            own_ticks: Some(own_ticks),
            own_read_bytes: Some(0),
            own_written_bytes: Some(0),
            dirty_bytes: Some(0),
            load_1m_hundredths: Some(310),
        };
        let phase = |after: Reading| {
            let noise = Noise::between(&reading(1000, 0, 4000, 50), &after, 2.0, (2, 100), true);
            with_noise(0, 0, noise).seconds("t", 1)
        };
        // 260 of 400 ticks: 65 %.
        let busy = phase(reading(1360, 0, 4400, 150));
        assert_eq!(busy.flags, [Flag::BusyHost]);
        assert_eq!(busy.device.as_ref().unwrap().others_cpu_percent, Some(65.0));
        assert_eq!(
            busy.flag_text(Flag::BusyHost),
            "busy host: other processes used 65 % of the CPU capacity during the phase, \
             the hypervisor stole 0 % (1-minute load 3.10): measured on a busy machine"
        );
        // 160 of 400: 40 %, under half.
        assert!(phase(reading(1260, 0, 4400, 150)).flags.is_empty());
        // 60 ticks of 400 stolen: 15 %.
        let stolen = phase(reading(1100, 60, 4400, 150));
        assert_eq!(stolen.flags, [Flag::BusyHost]);
        assert_eq!(stolen.device.unwrap().steal_percent, Some(15.0));
        // Too short to judge from ticks.
        let second = with_noise(0, 0, busy_noise()).seconds("t", 1);
        assert_eq!(second.flags, [Flag::BusyHost]);
        let mut measured = with_noise(0, 0, busy_noise());
        measured.elapsed_s = 0.2;
        assert_eq!(measured.seconds("t", 1).flags, [Flag::TooShort]);
    }

    fn busy_noise() -> Noise {
        Noise {
            others_cpu_percent: Some(BUSY_OTHERS_PERCENT + 1.0),
            ..own(0, 0)
        }
    }

    #[test]
    fn the_busy_description_states_the_limits() {
        let text = Flag::BusyHost.describe();
        assert!(
            text.contains(&format!("over {BUSY_OTHERS_PERCENT} %")),
            "{text}"
        );
        assert!(
            text.contains(&format!("over {BUSY_STEAL_PERCENT} %")),
            "{text}"
        );
    }

    #[test]
    fn every_metric_of_a_phase_carries_its_timing() {
        let timing = phase(1000, 0);
        let measured = Measured::over(&timing);
        assert_eq!(files(&timing).phase, Some(timing.id()));
        assert_eq!(measured.seconds("t", 1).phase, Some(timing.id()));
        let mean = measured.metric("resp_ms", "ms", Direction::LowerIsBetter, 0.25, 8);
        assert_eq!((mean.value, mean.samples), (0.25, 8));
        assert_eq!(mean.phase, Some(timing.id()));
        assert!(mean.latency.is_none());
    }
}
