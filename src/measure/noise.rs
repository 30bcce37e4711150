//! What else the host did during a measured phase: the load, the CPU time
//! other processes used and the hypervisor stole (/proc/stat against this
//! process's own /proc/self/stat), and the bytes this process itself
//! caused to be read from and written to storage (/proc/self/io), which
//! the devices' counters are weighed against.
//!
//! A [`Reading`] is taken with the device counters at each end of a phase
//! (`devices::snapshot`: it rides in `Counters::host`), never inside it;
//! [`Noise::between`] makes the phase's figures of two readings, and
//! `devices::between` puts them on the phase's `Delta`. What the figures
//! decide (`Flag::Disturbed`, `Flag::BusyHost`) is decided in
//! `measure::phase`, beside the page cache's evidence rule.
use crate::kernel_file;

/// One reading of the host and of this process, at one end of a phase.
/// Each part is None where its /proc file cannot be read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reading {
    /// The `cpu` line of /proc/stat: all CPUs' time so far.
    pub cpu: Option<CpuTime>,
    /// This process's utime + stime, and its waited-for children's
    /// (cutime + cstime), in clock ticks (/proc/self/stat): the CPU time
    /// that is not other processes'.
    pub own_ticks: Option<u64>,
    /// /proc/self/io: the bytes this process (and the children it waited
    /// for) caused to be read from storage, and to be written to it
    /// (counted when the pages were dirtied, or at submission for
    /// O_DIRECT).
    pub own_read_bytes: Option<u64>,
    pub own_written_bytes: Option<u64>,
    /// /proc/meminfo's Dirty + Writeback, in bytes: data in the page cache
    /// not yet on its device, host-wide.
    pub dirty_bytes: Option<u64>,
    /// The 1-minute load average, in hundredths (/proc/loadavg writes two
    /// decimals).
    pub load_1m_hundredths: Option<u64>,
}

/// The `cpu` line of /proc/stat, in clock ticks (USER_HZ): the one reader
/// of it, for the phases' noise and io's vdbench columns alike.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// user + nice + system + irq + softirq (guest time is inside user and
    /// nice): time the CPUs ran something.
    pub busy: u64,
    /// system + irq + softirq: the kernel's part of `busy`.
    pub sys: u64,
    /// Time the hypervisor ran something else while a CPU wanted to run.
    pub steal: u64,
    /// Every field but guest and guest_nice (counted in user and nice):
    /// busy, idle, iowait and steal.
    pub total: u64,
}

/// What the host did over one phase, from two readings.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Noise {
    /// The 1-minute load average at the phase's end.
    pub load_1m: Option<f64>,
    /// Stolen CPU time, % of all CPU time over the phase (steal ÷ total
    /// ticks of /proc/stat's `cpu` line).
    pub steal_percent: Option<f64>,
    /// CPU time other processes (kernel threads included) used over the
    /// phase, % of the machine's capacity (elapsed × online CPUs): the
    /// busy ticks of /proc/stat less this process's own.
    pub others_cpu_percent: Option<f64>,
    /// The bytes this process caused to be read and written over the
    /// phase (/proc/self/io); None where the devices' counters are not
    /// comparable with them (a network mount's).
    pub own_read_bytes: Option<u64>,
    pub own_written_bytes: Option<u64>,
    /// Bytes that were dirty in the page cache at the phase's start and
    /// that this process may have written: the lesser of the host's
    /// Dirty and Writeback then and all this process had written by then.
    /// Writeback may put them on the devices during the phase, as its own
    /// earlier writes.
    pub carried_dirty_bytes: Option<u64>,
}

impl Reading {
    /// The host and this process now: one read of each /proc file
    /// (bounded: one that never ends reads as missing).
    pub fn now() -> Reading {
        let text = |path: &str| kernel_file::read_text(path, kernel_file::TABLE);
        let io = text("/proc/self/io");
        let io_field = |name| {
            io.as_deref()
                .and_then(|t| kernel_file::field_bytes(t, name))
        };
        let meminfo = text("/proc/meminfo");
        let memory = |name| {
            meminfo
                .as_deref()
                .and_then(|t| kernel_file::field_bytes(t, name))
        };
        Reading {
            cpu: CpuTime::now(),
            own_ticks: text("/proc/self/stat").as_deref().and_then(own_ticks),
            own_read_bytes: io_field("read_bytes"),
            own_written_bytes: io_field("write_bytes"),
            dirty_bytes: memory("Dirty")
                .zip(memory("Writeback"))
                .map(|(dirty, writeback)| dirty + writeback),
            load_1m_hundredths: text("/proc/loadavg").as_deref().and_then(load_1m),
        }
    }
}

impl CpuTime {
    /// /proc/stat's `cpu` line now; None where it cannot be read.
    pub fn now() -> Option<CpuTime> {
        CpuTime::parse(&kernel_file::read_text("/proc/stat", kernel_file::TABLE)?)
    }

    /// The `cpu` line of a /proc/stat `text` (fields a kernel lacks, as
    /// steal before 2.6.11, count 0).
    pub fn parse(text: &str) -> Option<CpuTime> {
        let line = text.lines().next()?;
        let mut fields = line.split_ascii_whitespace();
        (fields.next()? == "cpu").then_some(())?;
        let values: Vec<u64> = fields.map_while(|f| f.parse().ok()).collect();
        if values.len() < 4 {
            return None;
        }
        let at = |i: usize| values.get(i).copied().unwrap_or(0);
        let (user, nice, system, idle, iowait) = (at(0), at(1), at(2), at(3), at(4));
        let (irq, softirq, steal) = (at(5), at(6), at(7));
        let sys = system + irq + softirq;
        let busy = user + nice + sys;
        Some(CpuTime {
            busy,
            sys,
            steal,
            total: busy + idle + iowait + steal,
        })
    }
}

/// utime + stime + cutime + cstime of a /proc/self/stat `text`, in clock
/// ticks. The command name, in parentheses, may hold spaces and
/// parentheses: the fields are counted from the last `)`.
pub fn own_ticks(text: &str) -> Option<u64> {
    let (_, after) = text.rsplit_once(')')?;
    // Field 3 (state) is the first after the name; utime is field 14.
    let fields: Vec<&str> = after.split_ascii_whitespace().collect();
    let tick = |field: usize| -> Option<u64> {
        let value: i64 = fields.get(field - 3)?.parse().ok()?;
        Some(value.max(0) as u64)
    };
    Some(tick(14)? + tick(15)? + tick(16)? + tick(17)?)
}

/// The first figure of a /proc/loadavg `text`, in hundredths.
fn load_1m(text: &str) -> Option<u64> {
    let first = text.split_ascii_whitespace().next()?;
    let load: f64 = first.parse().ok()?;
    (load.is_finite() && load >= 0.0).then(|| (load * 100.0).round() as u64)
}

/// Online CPUs and clock ticks per second (USER_HZ), the units of
/// /proc/stat and /proc/self/stat; read once (a phase's share needs the
/// machine it ran on, which does not change under it).
pub fn machine() -> (u64, u64) {
    static MACHINE: std::sync::OnceLock<(u64, u64)> = std::sync::OnceLock::new();
    *MACHINE.get_or_init(|| {
        let cpus = crate::storage::env::online_cpu_count().max(1) as u64;
        (cpus, rustix::param::clock_ticks_per_second().max(1))
    })
}

impl Noise {
    /// The figures of a phase of `elapsed_s` between `before` and `after`,
    /// on a machine of `cpus` online CPUs counting `hz` ticks a second.
    /// `own_io`: whether this process's bytes are comparable with the
    /// devices' (block devices; not a network mount's counters).
    pub fn between(
        before: &Reading,
        after: &Reading,
        elapsed_s: f64,
        (cpus, hz): (u64, u64),
        own_io: bool,
    ) -> Noise {
        let cpu = before.cpu.zip(after.cpu);
        let steal_percent = cpu.and_then(|(b, a)| {
            let total = a.total.saturating_sub(b.total);
            (total > 0).then(|| 100.0 * a.steal.saturating_sub(b.steal) as f64 / total as f64)
        });
        let capacity = elapsed_s * (cpus * hz) as f64;
        let others_cpu_percent = cpu
            .zip(before.own_ticks.zip(after.own_ticks))
            .filter(|_| capacity > 0.0)
            .map(|((b, a), (own_before, own_after))| {
                let busy = a.busy.saturating_sub(b.busy);
                let own = own_after.saturating_sub(own_before);
                // Both are sampled by the tick: a few ticks either way.
                100.0 * busy.saturating_sub(own) as f64 / capacity
            });
        let delta = |b: Option<u64>, a: Option<u64>| Some(a?.saturating_sub(b?));
        let own = |b, a| delta(b, a).filter(|_| own_io);
        Noise {
            load_1m: after.load_1m_hundredths.map(|l| l as f64 / 100.0),
            steal_percent,
            others_cpu_percent,
            own_read_bytes: own(before.own_read_bytes, after.own_read_bytes),
            own_written_bytes: own(before.own_written_bytes, after.own_written_bytes),
            carried_dirty_bytes: before
                .dirty_bytes
                .zip(before.own_written_bytes)
                .map(|(dirty, written)| dirty.min(written))
                .filter(|_| own_io),
        }
    }

    /// Both phases' figures (`Delta::plus`): the bytes added, the CPU
    /// shares weighted by the phases' times (`elapsed`: this one's and
    /// `other`'s), the higher load.
    pub fn plus(&self, other: &Noise, (elapsed, other_elapsed): (f64, f64)) -> Noise {
        let add = |a: Option<u64>, b: Option<u64>| Some(a? + b?);
        let weighted = |a: Option<f64>, b: Option<f64>| {
            let (a, b) = (a?, b?);
            let time = elapsed + other_elapsed;
            Some(match time > 0.0 {
                true => (a * elapsed + b * other_elapsed) / time,
                false => a.max(b),
            })
        };
        Noise {
            load_1m: match (self.load_1m, other.load_1m) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
            steal_percent: weighted(self.steal_percent, other.steal_percent),
            others_cpu_percent: weighted(self.others_cpu_percent, other.others_cpu_percent),
            own_read_bytes: add(self.own_read_bytes, other.own_read_bytes),
            own_written_bytes: add(self.own_written_bytes, other.own_written_bytes),
            carried_dirty_bytes: add(self.carried_dirty_bytes, other.carried_dirty_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "\
cpu  1000 20 300 5000 100 10 20 50 7 0
cpu0 500 10 150 2500 50 5 10 25 7 0
intr 12345 0 1 2
";

    #[test]
    fn the_cpu_line_splits_busy_steal_and_all_time() {
        let cpu = CpuTime::parse(STAT).unwrap();
        // Guest time (7) is inside user: not counted twice.
        assert_eq!(cpu.busy, 1000 + 20 + 300 + 10 + 20);
        assert_eq!(cpu.sys, 300 + 10 + 20);
        assert_eq!(cpu.steal, 50);
        assert_eq!(cpu.total, 1350 + 5000 + 100 + 50);
        // An old kernel: no steal, no irq fields.
        let old = CpuTime::parse("cpu 10 0 5 100\n").unwrap();
        assert_eq!((old.busy, old.steal, old.total), (15, 0, 115));
        assert!(CpuTime::parse("cpu0 1 2 3 4\n").is_none());
        assert!(CpuTime::parse("").is_none());
    }

    #[test]
    fn own_ticks_count_from_the_last_parenthesis() {
        // comm "a) (b c" holds both parentheses and spaces.
        let text = "42 (a) (b c) R 1 42 42 0 -1 4194560 100 0 0 0 \
                    250 50 7 3 20 0 4 0 1000 0 0";
        assert_eq!(own_ticks(text), Some(250 + 50 + 7 + 3));
        assert_eq!(own_ticks("42 (x) R 1"), None);
        let own = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert!(own_ticks(&own).is_some(), "{own}");
    }

    #[test]
    fn the_load_is_read_in_hundredths() {
        assert_eq!(load_1m("9.02 4.79 2.89 11/119 4113\n"), Some(902));
        assert_eq!(load_1m("nan 1 1"), None);
        assert_eq!(load_1m(""), None);
    }

    fn reading(busy: u64, steal: u64, total: u64, own: u64, io: (u64, u64)) -> Reading {
        Reading {
            cpu: Some(CpuTime {
                busy,
                sys: 0,
                steal,
                total,
            }),
            own_ticks: Some(own),
            own_read_bytes: Some(io.0),
            own_written_bytes: Some(io.1),
            dirty_bytes: Some(64 << 20),
            load_1m_hundredths: Some(250),
        }
    }

    #[test]
    fn other_processes_cpu_is_the_busy_time_less_ours_over_the_capacity() {
        // 4 CPUs, 100 ticks/s, 2 s: 800 ticks of capacity. The CPUs were
        // busy 600 ticks, 200 of them ours; 40 of the 800 were stolen.
        let before = reading(1000, 10, 5000, 50, (0, 0));
        let after = reading(1600, 50, 5800, 250, (1 << 20, 8 << 20));
        let noise = Noise::between(&before, &after, 2.0, (4, 100), true);
        assert_eq!(noise.others_cpu_percent, Some(50.0));
        assert_eq!(noise.steal_percent, Some(5.0));
        assert_eq!(noise.load_1m, Some(2.5));
        assert_eq!(noise.own_read_bytes, Some(1 << 20));
        assert_eq!(noise.own_written_bytes, Some(8 << 20));
        // 64 MiB dirty, but this process had written nothing yet.
        assert_eq!(noise.carried_dirty_bytes, Some(0));
        // Our ticks above the busy ticks (rounding): none, not negative.
        let idle = reading(1000, 10, 5800, 260, (0, 0));
        let ours = Noise::between(&before, &idle, 2.0, (4, 100), true);
        assert_eq!(ours.others_cpu_percent, Some(0.0));
        // A network mount's counters are not weighed against our bytes.
        let network = Noise::between(&before, &after, 2.0, (4, 100), false);
        assert_eq!(network.own_read_bytes, None);
        assert_eq!(network.carried_dirty_bytes, None);
        assert_eq!(network.others_cpu_percent, Some(50.0));
        // No time: no share rather than a division by zero.
        let instant = Noise::between(&before, &before, 0.0, (4, 100), true);
        assert_eq!(
            (instant.others_cpu_percent, instant.steal_percent),
            (None, None)
        );
    }

    #[test]
    fn dirty_bytes_carried_are_at_most_what_this_process_had_written() {
        let mut before = reading(0, 0, 0, 0, (0, 16 << 20));
        let after = reading(0, 0, 0, 0, (0, 16 << 20));
        let carried = |before: &Reading| {
            Noise::between(before, &after, 1.0, (1, 100), true).carried_dirty_bytes
        };
        assert_eq!(carried(&before), Some(16 << 20), "ours, at most");
        before.dirty_bytes = Some(4 << 20);
        assert_eq!(carried(&before), Some(4 << 20), "what was dirty");
        before.dirty_bytes = None;
        assert_eq!(carried(&before), None);
    }

    #[test]
    fn two_phases_add_their_bytes_and_weigh_their_shares_by_time() {
        let a = Noise {
            load_1m: Some(1.0),
            steal_percent: Some(0.0),
            others_cpu_percent: Some(60.0),
            own_read_bytes: Some(1),
            own_written_bytes: Some(2),
            carried_dirty_bytes: Some(3),
        };
        let b = Noise {
            load_1m: Some(3.0),
            steal_percent: Some(30.0),
            others_cpu_percent: Some(0.0),
            ..a
        };
        let both = a.plus(&b, (1.0, 2.0));
        assert_eq!(both.others_cpu_percent, Some(20.0));
        assert_eq!(both.steal_percent, Some(20.0));
        assert_eq!(both.load_1m, Some(3.0));
        assert_eq!(
            (
                both.own_read_bytes,
                both.own_written_bytes,
                both.carried_dirty_bytes
            ),
            (Some(2), Some(4), Some(6))
        );
    }

    #[test]
    fn a_reading_of_this_machine_has_every_part() {
        let now = Reading::now();
        assert!(now.cpu.is_some_and(|c| c.total > 0), "{now:?}");
        assert!(now.own_ticks.is_some());
        assert!(now.dirty_bytes.is_some() && now.load_1m_hundredths.is_some());
        // /proc/self/io exists where the kernel accounts task I/O.
        if std::path::Path::new("/proc/self/io").exists() {
            assert!(now.own_read_bytes.is_some() && now.own_written_bytes.is_some());
        }
        let (cpus, hz) = machine();
        assert!(cpus >= 1 && hz >= 1);
    }
}
