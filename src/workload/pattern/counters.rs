//! Interval counters and vdbench's figures computed from them. Every
//! figure, the averages included, comes from summed raw counters (counts,
//! bytes, Σresp, Σresp², maxima), never from averaging averages.
use std::collections::BTreeMap;
use std::time::SystemTime;

use crate::measure::noise::CpuTime;

const NS_PER_MS: f64 = 1e6;
const MIB: f64 = 1_048_576.0;

/// One direction's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DirCounters {
    pub ops: u64,
    pub bytes: u64,
    pub resp_sum_ns: u64,
    pub resp_max_ns: u64,
}

impl DirCounters {
    #[inline]
    fn record(&mut self, bytes: u64, ns: u64) {
        self.ops += 1;
        self.bytes += bytes;
        self.resp_sum_ns += ns;
        self.resp_max_ns = self.resp_max_ns.max(ns);
    }

    fn add(&mut self, other: &DirCounters) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.resp_sum_ns += other.resp_sum_ns;
        self.resp_max_ns = self.resp_max_ns.max(other.resp_max_ns);
    }

    fn mean_ms(&self) -> f64 {
        ratio(self.resp_sum_ns as f64, self.ops as f64) / NS_PER_MS
    }
}

/// What a thread (or all threads) did in one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    pub read: DirCounters,
    pub write: DirCounters,
    /// Σ resp² in ns², exact.
    pub resp_sq_sum: u128,
}

impl Counters {
    #[inline]
    pub fn record(&mut self, write: bool, bytes: u64, ns: u64) {
        let dir = if write {
            &mut self.write
        } else {
            &mut self.read
        };
        dir.record(bytes, ns);
        self.resp_sq_sum += u128::from(ns) * u128::from(ns);
    }

    pub fn add(&mut self, other: &Counters) {
        self.read.add(&other.read);
        self.write.add(&other.write);
        self.resp_sq_sum += other.resp_sq_sum;
    }

    pub fn ops(&self) -> u64 {
        self.read.ops + self.write.ops
    }

    pub fn bytes(&self) -> u64 {
        self.read.bytes + self.write.bytes
    }

    fn resp_sum_ns(&self) -> u64 {
        self.read.resp_sum_ns + self.write.resp_sum_ns
    }

    /// Sample standard deviation (n-1) of all response times, in ms.
    fn resp_stddev_ms(&self) -> f64 {
        let n = u128::from(self.ops());
        if n < 2 {
            return 0.0;
        }
        let sum = u128::from(self.resp_sum_ns());
        let spread = (n * self.resp_sq_sum).saturating_sub(sum * sum);
        (spread as f64 / (n * (n - 1)) as f64).sqrt() / NS_PER_MS
    }
}

/// Host CPU busy over an interval, from /proc/stat, as vdbench reports it
/// (the whole machine's, not just fsbench's process).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuShare {
    /// user + system (stolen time included: the guest wanted the CPU), %.
    pub busy_pct: f64,
    pub sys_pct: f64,
}

impl CpuShare {
    /// The shares of all CPU time between `earlier` and `later`.
    pub fn between(earlier: &CpuTime, later: &CpuTime) -> CpuShare {
        let total = later.total.saturating_sub(earlier.total) as f64;
        let pct = |now: u64, then: u64| match total > 0.0 {
            true => 100.0 * now.saturating_sub(then) as f64 / total,
            false => 0.0,
        };
        CpuShare {
            busy_pct: pct(later.busy + later.steal, earlier.busy + earlier.steal),
            sys_pct: pct(later.sys, earlier.sys),
        }
    }
}

/// vdbench's columns for one interval or for the average line.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalFigures {
    pub io_rate: f64,
    pub mib_per_s: f64,
    pub bytes_per_io: u64,
    pub read_pct: f64,
    pub resp_ms: f64,
    pub read_resp_ms: f64,
    pub write_resp_ms: f64,
    pub read_max_ms: f64,
    pub write_max_ms: f64,
    pub resp_stddev_ms: f64,
    /// Time-averaged I/Os in flight: Σresp / interval (Little's law).
    pub queue_depth: f64,
    pub cpu: Option<CpuShare>,
}

impl IntervalFigures {
    pub fn new(c: &Counters, seconds: f64, cpu: Option<CpuShare>) -> IntervalFigures {
        let ops = c.ops() as f64;
        IntervalFigures {
            io_rate: ratio(ops, seconds),
            mib_per_s: ratio(c.bytes() as f64, seconds) / MIB,
            bytes_per_io: c.bytes().checked_div(c.ops()).unwrap_or(0),
            read_pct: 100.0 * ratio(c.read.ops as f64, ops),
            resp_ms: ratio(c.resp_sum_ns() as f64, ops) / NS_PER_MS,
            read_resp_ms: c.read.mean_ms(),
            write_resp_ms: c.write.mean_ms(),
            read_max_ms: c.read.resp_max_ns as f64 / NS_PER_MS,
            write_max_ms: c.write.resp_max_ns as f64 / NS_PER_MS,
            resp_stddev_ms: c.resp_stddev_ms(),
            queue_depth: ratio(c.resp_sum_ns() as f64 / 1e9, seconds),
            cpu,
        }
    }

    pub fn resp_max_ms(&self) -> f64 {
        self.read_max_ms.max(self.write_max_ms)
    }

    /// The figures as named values, unit in the name (the JSON time series).
    pub fn values(&self, c: &Counters) -> BTreeMap<String, f64> {
        let mut values: BTreeMap<String, f64> = [
            ("io_rate", self.io_rate),
            ("mib_per_s", self.mib_per_s),
            ("bytes_per_io", self.bytes_per_io as f64),
            ("read_pct", self.read_pct),
            ("resp_ms", self.resp_ms),
            ("read_resp_ms", self.read_resp_ms),
            ("write_resp_ms", self.write_resp_ms),
            ("read_max_ms", self.read_max_ms),
            ("write_max_ms", self.write_max_ms),
            ("resp_stddev_ms", self.resp_stddev_ms),
            ("queue_depth", self.queue_depth),
            ("reads", c.read.ops as f64),
            ("writes", c.write.ops as f64),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        if let Some(cpu) = self.cpu {
            values.insert("cpu_busy_pct".into(), cpu.busy_pct);
            values.insert("cpu_sys_pct".into(), cpu.sys_pct);
        }
        values
    }
}

/// One line of the interval report.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// `1`, `2`, … or `avg_2-5`.
    pub label: String,
    /// Wall-clock time at the end of the interval.
    pub at: SystemTime,
    /// Start, seconds after the job started.
    pub start_s: f64,
    pub seconds: f64,
    pub warmup: bool,
    pub counters: Counters,
    pub figures: IntervalFigures,
}

impl Row {
    pub fn sample(&self, index: u32) -> crate::result::IntervalSample {
        crate::result::IntervalSample {
            index,
            start_s: self.start_s,
            seconds: self.seconds,
            warmup: self.warmup,
            values: self.figures.values(&self.counters),
        }
    }
}

/// The `avg_F-L` line: summed counters of the non-warm-up rows, maxima over
/// them, CPU averaged over time. None when no interval was measured.
pub fn average(rows: &[Row]) -> Option<Row> {
    let measured: Vec<&Row> = rows.iter().filter(|r| !r.warmup).collect();
    let (first, last) = (measured.first()?, measured.last()?);
    let mut counters = Counters::default();
    let mut seconds = 0.0;
    let mut cpu = CpuShare::default();
    for row in &measured {
        counters.add(&row.counters);
        seconds += row.seconds;
        let share = row.figures.cpu.unwrap_or_default();
        cpu.busy_pct += share.busy_pct * row.seconds;
        cpu.sys_pct += share.sys_pct * row.seconds;
    }
    let has_cpu = measured.iter().all(|r| r.figures.cpu.is_some());
    let cpu = has_cpu.then(|| CpuShare {
        busy_pct: ratio(cpu.busy_pct, seconds),
        sys_pct: ratio(cpu.sys_pct, seconds),
    });
    Some(Row {
        label: format!("avg_{}-{}", first.label, last.label),
        at: last.at,
        start_s: first.start_s,
        seconds,
        warmup: false,
        counters,
        figures: IntervalFigures::new(&counters, seconds, cpu),
    })
}

pub fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// vdbench's cpu% and sys% of an interval: of 140 ticks, 50 busy (20
    /// of them the kernel's) and 10 stolen.
    #[test]
    fn the_host_cpu_share_is_of_all_cpu_time() {
        let earlier = CpuTime::parse("cpu  100 0 50 800 50 0 0 0 0 0\n").unwrap();
        let later = CpuTime::parse("cpu  130 0 70 870 60 0 0 10 0 0\n").unwrap();
        let share = CpuShare::between(&earlier, &later);
        assert!(
            (share.busy_pct - 100.0 * 60.0 / 140.0).abs() < 1e-9,
            "{share:?}"
        );
        assert!(
            (share.sys_pct - 100.0 * 20.0 / 140.0).abs() < 1e-9,
            "{share:?}"
        );
        assert_eq!(CpuShare::between(&later, &later).busy_pct, 0.0);
    }

    fn counters(reads: &[u64], writes: &[u64]) -> Counters {
        let mut c = Counters::default();
        for &ns in reads {
            c.record(false, 4096, ns);
        }
        for &ns in writes {
            c.record(true, 4096, ns);
        }
        c
    }

    #[test]
    fn figures_follow_vdbench_formulas() {
        let c = counters(&[1_000_000, 3_000_000], &[2_000_000]);
        let f = IntervalFigures::new(&c, 0.5, None);
        assert_eq!(f.io_rate, 6.0);
        assert_eq!(f.bytes_per_io, 4096);
        assert!((f.read_pct - 66.666).abs() < 0.01);
        assert!((f.resp_ms - 2.0).abs() < 1e-9);
        assert!((f.read_resp_ms - 2.0).abs() < 1e-9);
        assert_eq!(f.read_max_ms, 3.0);
        assert_eq!(f.write_max_ms, 2.0);
        assert!((f.resp_stddev_ms - 1.0).abs() < 1e-9);
        assert!((f.queue_depth - 0.012).abs() < 1e-9);
        assert!((f.mib_per_s - 3.0 * 4096.0 / 0.5 / MIB).abs() < 1e-9);
    }

    #[test]
    fn average_sums_counters_and_skips_warmup() {
        let row = |label: &str, warmup, c: Counters| Row {
            label: label.into(),
            at: SystemTime::UNIX_EPOCH,
            start_s: 0.0,
            seconds: 1.0,
            warmup,
            counters: c,
            figures: IntervalFigures::new(&c, 1.0, None),
        };
        let rows = [
            row("1", true, counters(&[9_000_000], &[])),
            row("2", false, counters(&[1_000_000], &[])),
            row("3", false, counters(&[3_000_000, 2_000_000], &[])),
        ];
        let avg = average(&rows).unwrap();
        assert_eq!(avg.label, "avg_2-3");
        assert_eq!(avg.figures.io_rate, 1.5);
        assert!((avg.figures.resp_ms - 2.0).abs() < 1e-9);
        assert_eq!(avg.figures.read_max_ms, 3.0);
        assert!(average(&rows[..1]).is_none());
    }
}
