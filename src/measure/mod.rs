//! Clocks and counters: monotonic ns wall time, process CPU time per phase,
//! per-operation latency histograms, the running phase's progress
//! (`checkpoint`), the metrics a measured phase becomes (`phase`), and what
//! a time series of rates shows: steady state and cliffs (`series`).
pub mod checkpoint;
pub mod devices;
pub mod latency;
pub mod noise;
pub mod phase;
pub mod series;
pub mod stats;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub use latency::LatencyRecorder;

/// Wall and CPU time of one phase, started and stopped around the work.
pub struct PhaseClock {
    wall: Instant,
    cpu: Duration,
    /// The watched devices' counters at the start (`devices::snapshot`).
    devices: Option<devices::Counters>,
}

/// The outcome of a `PhaseClock`.
#[derive(Debug, Clone, Copy)]
pub struct PhaseTiming {
    /// When the phase started: places it on the common clock of an MPI job.
    pub started: Instant,
    pub elapsed: Duration,
    pub cpu: Duration,
    /// What the devices under the target did over the phase; None without
    /// devices (tmpfs) or for a timing no clock took.
    pub device: Option<devices::Delta>,
    /// Which timing this is (see [`PhaseTiming::id`]).
    id: u64,
}

/// The id of the next timing taken in this process.
static NEXT_TIMING_ID: AtomicU64 = AtomicU64::new(0);

impl PhaseClock {
    /// Starts the clocks; the device counters are read first, so that
    /// reading them is outside the phase's time.
    pub fn start() -> Self {
        let devices = devices::snapshot();
        let cpu = process_cpu_time();
        PhaseClock {
            wall: Instant::now(),
            cpu,
            devices,
        }
    }

    /// Stops the clocks, then reads the device counters again.
    pub fn stop(&self) -> PhaseTiming {
        let elapsed = self.wall.elapsed();
        let cpu = process_cpu_time().saturating_sub(self.cpu);
        let device = devices::since(self.devices, elapsed.as_secs_f64());
        PhaseTiming::new(self.wall, elapsed, cpu).with_device(device)
    }
}

impl PhaseTiming {
    /// A new timing, with an id of its own.
    pub fn new(started: Instant, elapsed: Duration, cpu: Duration) -> PhaseTiming {
        PhaseTiming {
            started,
            elapsed,
            cpu,
            device: None,
            id: NEXT_TIMING_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The timing with what the devices did over it.
    pub fn with_device(mut self, device: Option<devices::Delta>) -> PhaseTiming {
        self.device = device;
        self
    }

    /// No time yet, from now: the start of a sum of phases (`plus`).
    pub fn zero() -> PhaseTiming {
        PhaseTiming::new(Instant::now(), Duration::ZERO, Duration::ZERO)
    }

    /// Both phases together (wall and CPU time added), starting at the
    /// earlier start: a timing of its own.
    /// The device counters are added when both have them.
    pub fn plus(self, other: PhaseTiming) -> PhaseTiming {
        let device = match (self.device, other.device) {
            (Some(a), Some(b)) => Some(a.plus(&b)),
            (Some(only), None) | (None, Some(only))
                if self.elapsed.is_zero() || other.elapsed.is_zero() =>
            {
                Some(only)
            }
            _ => None,
        };
        PhaseTiming::new(
            self.started.min(other.started),
            self.elapsed + other.elapsed,
            self.cpu + other.cpu,
        )
        .with_device(device)
    }

    /// Unique in this process, and shared by the copies of a timing: the
    /// metrics measured over a timing carry its id (`Metric::phase`), and
    /// so does its span under MPI, which is how rank 0 pairs them (two
    /// phases may well take the same time).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// CPU % as bonnie++ reports it: (user + sys) of the whole process / wall.
    /// Measured once for the process, so threads are neither missed nor
    /// counted twice.
    pub fn cpu_percent(&self) -> f64 {
        let wall = self.elapsed.as_secs_f64();
        if wall > 0.0 {
            100.0 * self.cpu.as_secs_f64() / wall
        } else {
            0.0
        }
    }
}

/// Runs `op` once per item, polling for a stop signal before each, and
/// records each call's latency. Consecutive samples share one clock read.
pub fn each_timed<T>(
    items: impl IntoIterator<Item = T>,
    latency: &mut LatencyRecorder,
    op: impl FnMut(T) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    each_timed_reporting(items, latency, op, |_| false)
}

/// `each_timed`, telling `report` how many items are done after each one's
/// sample is recorded. When `report` did some work (a progress redraw),
/// the clock is read again, so that work lands in no latency sample.
pub fn each_timed_reporting<T>(
    items: impl IntoIterator<Item = T>,
    latency: &mut LatencyRecorder,
    mut op: impl FnMut(T) -> anyhow::Result<()>,
    mut report: impl FnMut(u64) -> bool,
) -> anyhow::Result<()> {
    let mut last = Instant::now();
    for (done, item) in (1..).zip(items) {
        crate::interrupt::check()?;
        op(item)?;
        last = latency.record_since(last);
        if report(done) {
            last = Instant::now();
        }
    }
    Ok(())
}

/// What the whole process used, split as getrusage counts it: fio's
/// usr_cpu, sys_cpu, ctx, majf and minf of a job come from the change of
/// these over its measured part.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcessUsage {
    pub user: Duration,
    pub system: Duration,
    /// Voluntary and involuntary context switches.
    pub context_switches: u64,
    pub major_faults: u64,
    pub minor_faults: u64,
}

impl ProcessUsage {
    pub fn now() -> ProcessUsage {
        // SAFETY: getrusage only writes into the zeroed struct we own.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut usage);
            usage
        };
        let time = |t: libc::timeval| {
            Duration::new(t.tv_sec as u64, (t.tv_usec as u32).saturating_mul(1000))
        };
        let count = |n: libc::c_long| n.max(0) as u64;
        ProcessUsage {
            user: time(usage.ru_utime),
            system: time(usage.ru_stime),
            context_switches: count(usage.ru_nvcsw) + count(usage.ru_nivcsw),
            major_faults: count(usage.ru_majflt),
            minor_faults: count(usage.ru_minflt),
        }
    }

    /// What was used from `earlier` to this reading.
    pub fn since(&self, earlier: &ProcessUsage) -> ProcessUsage {
        ProcessUsage {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
            context_switches: self
                .context_switches
                .saturating_sub(earlier.context_switches),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
        }
    }
}

/// User + system CPU time of the whole process (all threads).
pub fn process_cpu_time() -> Duration {
    // SAFETY: getrusage only writes into the zeroed struct we own.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let to_duration =
        |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32).saturating_mul(1000));
    to_duration(usage.ru_utime) + to_duration(usage.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three instant items, each followed by a 20 ms report: the max
    /// latency with and without the report saying it took time.
    fn max_latency_with_slow_reports(report_says_it_worked: bool) -> Duration {
        let mut latency = LatencyRecorder::new();
        let mut reported = Vec::new();
        each_timed_reporting(
            0..3,
            &mut latency,
            |_| Ok(()),
            |done| {
                reported.push(done);
                std::thread::sleep(Duration::from_millis(20));
                report_says_it_worked
            },
        )
        .unwrap();
        assert_eq!(reported, [1, 2, 3], "a report after every item");
        let summary = latency.summary().expect("three samples");
        assert_eq!(summary.count, 3);
        Duration::from_nanos(summary.max_ns)
    }

    #[test]
    fn a_report_that_took_time_lands_in_no_latency_sample() {
        assert!(max_latency_with_slow_reports(true) < Duration::from_millis(20));
        // The mechanism is what keeps it out: unsaid, it is in the next sample.
        assert!(max_latency_with_slow_reports(false) >= Duration::from_millis(20));
    }

    #[test]
    fn cpu_time_grows_with_busy_work() {
        let clock = PhaseClock::start();
        let mut x = 0u64;
        while clock.wall.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let timing = clock.stop();
        assert!(timing.elapsed >= Duration::from_millis(50));
        assert!(
            timing.cpu > Duration::from_millis(20),
            "cpu {:?}",
            timing.cpu
        );
        assert!(timing.cpu_percent() > 40.0);
    }
}
