//! Clocks and counters: monotonic ns wall time, process CPU time per phase,
//! and per-operation latency histograms.
pub mod latency;
pub mod stats;

use std::time::{Duration, Instant};

pub use latency::LatencyRecorder;

/// Wall and CPU time of one phase, started and stopped around the work.
pub struct PhaseClock {
    wall: Instant,
    cpu: Duration,
}

/// The outcome of a `PhaseClock`.
#[derive(Debug, Clone, Copy)]
pub struct PhaseTiming {
    /// When the phase started: places it on the common clock of an MPI job.
    pub started: Instant,
    pub elapsed: Duration,
    pub cpu: Duration,
}

impl PhaseClock {
    pub fn start() -> Self {
        let cpu = process_cpu_time();
        PhaseClock {
            wall: Instant::now(),
            cpu,
        }
    }

    pub fn stop(&self) -> PhaseTiming {
        let elapsed = self.wall.elapsed();
        let cpu = process_cpu_time().saturating_sub(self.cpu);
        PhaseTiming {
            started: self.wall,
            elapsed,
            cpu,
        }
    }
}

impl PhaseTiming {
    /// No time yet, from now: the start of a sum of phases (`plus`).
    pub fn zero() -> PhaseTiming {
        PhaseTiming {
            started: Instant::now(),
            elapsed: Duration::ZERO,
            cpu: Duration::ZERO,
        }
    }

    /// Both phases together (wall and CPU time added), starting at the
    /// earlier start.
    pub fn plus(self, other: PhaseTiming) -> PhaseTiming {
        PhaseTiming {
            started: self.started.min(other.started),
            elapsed: self.elapsed + other.elapsed,
            cpu: self.cpu + other.cpu,
        }
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
    mut op: impl FnMut(T) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut last = Instant::now();
    for item in items {
        crate::interrupt::check()?;
        op(item)?;
        last = latency.record_since(last);
    }
    Ok(())
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
