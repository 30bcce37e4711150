//! vdbench's console report: the "Starting RD=" line, the two-line header
//! (repeated every 30 intervals) and one line per interval plus the
//! `avg_F-L` line, in the 5.04.07 layout (14 columns with `read max` and
//! `write max`, plus CPU). Every field is right-aligned and keeps at least
//! one blank before it, so whitespace-splitting parsers always work.
use std::time::SystemTime;

use chrono::{DateTime, Local};

use crate::workload::pattern::counters::Row;
use crate::workload::pattern::job::{Job, Stop, Warmup, short_size};

/// The header is printed again after this many interval lines.
pub const HEADER_EVERY: u32 = 30;

/// Right edges of the fields after the 12-character time of day, as in a
/// real 5.04.07 line: interval 24, rate 35, MB/s 44, bytes 52, …
const WIDTHS: [usize; 14] = [12, 11, 9, 8, 7, 9, 9, 9, 9, 9, 9, 7, 6, 6];

const TITLES: [[&str; 14]; 2] = [
    [
        "interval", "i/o", "MB/sec", "bytes", "read", "resp", "read", "write", "read", "write",
        "resp", "queue", "cpu%", "cpu%",
    ],
    [
        "", "rate", "1024**2", "i/o", "pct", "time", "resp", "resp", "max", "max", "stddev",
        "depth", "sys+u", "sys",
    ],
];

/// `Starting RD=rd1; I/O rate: Uncontrolled MAX; elapsed=30 warmup=5; For loops: xfersize=4k`
pub fn start_line(job: &Job) -> String {
    let rate = match job.rate {
        Some(rate) => format!("{rate}"),
        None => "Uncontrolled MAX".into(),
    };
    let elapsed = match job.stop {
        Stop::Duration(d) => format!("elapsed={}", seconds(d.as_secs_f64())),
        Stop::Amount(bytes) => format!("elapsed=(none) maxdata={}", short_size(bytes)),
    };
    let warmup = match job.warmup {
        Warmup::Time(w) if !w.is_zero() => format!(" warmup={}", seconds(w.as_secs_f64())),
        _ => String::new(),
    };
    let loops = if job.loops.is_empty() {
        "None".to_string()
    } else {
        let pairs: Vec<String> = job.loops.iter().map(|(k, v)| format!("{k}={v}")).collect();
        pairs.join(" ")
    };
    format!(
        "Starting RD={}; I/O rate: {rate}; {elapsed}{warmup}; For loops: {loops}",
        job.name
    )
}

/// What fsbench adds under the start line: the job in one line.
pub fn job_line(job: &Job, file: &str, file_size: u64) -> String {
    format!(
        "  {file} {}: xfersize={} rdpct={} seekpct={} threads={} {}{}{}",
        short_size(file_size),
        job.xfer.describe(),
        job.read_pct,
        job.seek.describe(),
        job.threads,
        if job.direct { "O_DIRECT" } else { "page cache" },
        match job.engine {
            crate::workload::pattern::Engine::Sync => String::new(),
            crate::workload::pattern::Engine::IoUring => {
                format!(" io_uring qd={}", job.queue_depth)
            }
        },
        if job.verify { " verify" } else { "" }
    )
}

/// Whole seconds without decimals, others with them.
fn seconds(s: f64) -> String {
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s}")
    }
}

/// The two header lines; the first starts with the date (`Nov 21, 2026`).
pub fn header(now: SystemTime) -> String {
    let date = DateTime::<Local>::from(now).format("%b %d, %Y").to_string();
    let first = format!("{date:<12}{}", fields(&TITLES[0]));
    let second = format!("{:<12}{}", "", fields(&TITLES[1]));
    format!("{}\n{}\n", first.trim_end(), second.trim_end())
}

/// One interval line or the average line.
pub fn row_line(row: &Row) -> String {
    let f = &row.figures;
    let tod = DateTime::<Local>::from(row.at)
        .format("%H:%M:%S%.3f")
        .to_string();
    let (busy, sys) = match f.cpu {
        Some(cpu) => (
            format!("{:.1}", cpu.busy_pct),
            format!("{:.1}", cpu.sys_pct),
        ),
        None => ("n/a".into(), "n/a".into()),
    };
    let values = [
        row.label.clone(),
        format!("{:.1}", f.io_rate),
        format!("{:.2}", f.mib_per_s),
        f.bytes_per_io.to_string(),
        format!("{:.2}", f.read_pct),
        format!("{:.3}", f.resp_ms),
        format!("{:.3}", f.read_resp_ms),
        format!("{:.3}", f.write_resp_ms),
        format!("{:.2}", f.read_max_ms),
        format!("{:.2}", f.write_max_ms),
        format!("{:.3}", f.resp_stddev_ms),
        format!("{:.1}", f.queue_depth),
        busy,
        sys,
    ];
    let cells: Vec<&str> = values.iter().map(String::as_str).collect();
    format!("{tod}{}\n", fields(&cells))
}

fn fields(values: &[&str]) -> String {
    values
        .iter()
        .zip(WIDTHS)
        .map(|(value, width)| format!(" {value:>w$}", w = width - 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::pattern::counters::{Counters, CpuShare, IntervalFigures};
    use crate::workload::pattern::job::tests::job;

    fn row() -> Row {
        let mut c = Counters::default();
        c.record(false, 4096, 352_000);
        c.record(true, 4096, 461_000);
        Row {
            label: "1".into(),
            at: SystemTime::now(),
            start_s: 0.0,
            seconds: 1.0,
            warmup: true,
            counters: c,
            figures: IntervalFigures::new(
                &c,
                1.0,
                Some(CpuShare {
                    busy_pct: 31.2,
                    sys_pct: 19.0,
                }),
            ),
        }
    }

    #[test]
    fn fields_end_where_vdbench_puts_them() {
        let line = row_line(&row());
        let line = line.trim_end();
        let edges: Vec<usize> = line
            .char_indices()
            .filter(|&(i, c)| c != ' ' && line[i + 1..].starts_with(' ') || i + 1 == line.len())
            .map(|(i, _)| i + 1)
            .collect();
        assert_eq!(
            edges,
            [
                12, 24, 35, 44, 52, 59, 68, 77, 86, 95, 104, 113, 120, 126, 132
            ],
            "{line}"
        );
        assert_eq!(line.split_whitespace().count(), 15);
        assert!(line.contains(" 50.00 ") && line.contains(" 0.352 ") && line.contains(" 0.46 "));
    }

    #[test]
    fn header_titles_sit_over_their_columns() {
        let text = header(SystemTime::now());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].ends_with("cpu%  cpu%"), "{text}");
        assert_eq!(lines[1].len(), 132, "{text}");
        assert!(lines[1].trim_start().starts_with("rate  1024**2"), "{text}");
    }

    #[test]
    fn start_line_names_rate_elapsed_and_loops() {
        let mut j = job();
        assert_eq!(
            start_line(&j),
            "Starting RD=t; I/O rate: Uncontrolled MAX; elapsed=1; For loops: None"
        );
        j.rate = Some(100.0);
        j.warmup = Warmup::Time(std::time::Duration::from_secs(5));
        j.loops = vec![
            ("xfersize".into(), "4k".into()),
            ("threads".into(), "8".into()),
        ];
        assert_eq!(
            start_line(&j),
            "Starting RD=t; I/O rate: 100; elapsed=1 warmup=5; For loops: xfersize=4k threads=8"
        );
    }
}
