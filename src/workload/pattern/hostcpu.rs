//! Host CPU use per interval from /proc/stat, as vdbench reports it
//! (user + system of the whole machine, not just fsbench's process).
use super::counters::CpuShare;

/// Cumulative CPU ticks of all CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTicks {
    busy: u64,
    sys: u64,
    total: u64,
}

impl CpuTicks {
    /// None where /proc/stat is unreadable (the columns are then left out).
    pub fn now() -> Option<CpuTicks> {
        let text = crate::kernel_file::read_text("/proc/stat", crate::kernel_file::TABLE)?;
        parse(text.lines().next()?)
    }

    /// The share of CPU time used between `earlier` and `self`.
    pub fn since(&self, earlier: &CpuTicks) -> CpuShare {
        let total = self.total.saturating_sub(earlier.total) as f64;
        let pct = |now: u64, then: u64| {
            if total > 0.0 {
                100.0 * now.saturating_sub(then) as f64 / total
            } else {
                0.0
            }
        };
        CpuShare {
            busy_pct: pct(self.busy, earlier.busy),
            sys_pct: pct(self.sys, earlier.sys),
        }
    }
}

/// `cpu  user nice system idle iowait irq softirq steal ...`
fn parse(line: &str) -> Option<CpuTicks> {
    let mut fields = line.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = fields
        .take(8)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    let [user, nice, system, idle, iowait, irq, softirq, steal] = v.try_into().ok()?;
    let sys = system + irq + softirq;
    Some(CpuTicks {
        busy: user + nice + sys + steal,
        sys,
        total: user + nice + sys + steal + idle + iowait,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_stat_and_computes_shares() {
        let a = parse("cpu  100 0 50 800 50 0 0 0 0 0").unwrap();
        let b = parse("cpu  160 0 70 900 70 0 0 0 0 0").unwrap();
        let share = b.since(&a);
        assert!((share.busy_pct - 40.0).abs() < 1e-9);
        assert!((share.sys_pct - 10.0).abs() < 1e-9);
        assert!(parse("intr 1 2").is_none());
        assert!(CpuTicks::now().is_some());
    }
}
