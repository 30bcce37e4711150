//! The built-in suite `patterns`: seed 003's access patterns, each with the
//! page cache and with O_DIRECT (the seed's tenth item), and its summary
//! table (one row per pattern: MiB/s, average, maximum and σ of the
//! response time, for both modes side by side).
use super::counters::IntervalFigures;
use super::job::{Job, Seek};

/// One access pattern: read % and seek % (0 sequential, 100 random).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pattern {
    pub name: &'static str,
    pub read_pct: f64,
    pub seek_pct: f64,
}

const fn pattern(name: &'static str, read_pct: f64, seek_pct: f64) -> Pattern {
    Pattern {
        name,
        read_pct,
        seek_pct,
    }
}

/// Seed 003's list, in its order.
pub const PATTERNS: [Pattern; 9] = [
    pattern("seq_read", 100.0, 0.0),
    pattern("seq_write", 0.0, 0.0),
    pattern("rand_read", 100.0, 100.0),
    pattern("rand_write", 0.0, 100.0),
    pattern("seek50_read", 100.0, 50.0),
    pattern("seek50_write", 0.0, 50.0),
    pattern("seq_mix", 50.0, 0.0),
    pattern("rand_mix", 50.0, 100.0),
    pattern("seek50_mix", 50.0, 50.0),
];

const CACHED_PREFIX: &str = "b_";
const DIRECT_PREFIX: &str = "d_";

/// The suite's jobs from `template` (size, threads, timing): the patterns
/// with the page cache (`b_<pattern>`), then with O_DIRECT (`d_<pattern>`),
/// named as in the vdbench parameter file that does the same.
pub fn jobs(template: &Job) -> Vec<Job> {
    [false, true]
        .iter()
        .flat_map(|&direct| {
            PATTERNS.iter().map(move |p| Job {
                name: format!(
                    "{}{}",
                    if direct { DIRECT_PREFIX } else { CACHED_PREFIX },
                    p.name
                ),
                read_pct: p.read_pct,
                seek: Seek::Percent(p.seek_pct),
                direct,
                ..template.clone()
            })
        })
        .collect()
}

/// The summary table from each job's name and average figures.
pub fn summary_table<'a>(
    results: impl IntoIterator<Item = (&'a str, &'a IntervalFigures)>,
) -> String {
    let results: Vec<(&str, &IntervalFigures)> = results.into_iter().collect();
    let find = |prefix: &str, pattern: &str| {
        results
            .iter()
            .find(|(name, _)| name.strip_prefix(prefix) == Some(pattern))
            .map(|(_, f)| *f)
    };
    let mut lines = vec![
        format!("{:<14}| {:^35} | {:^35}", "", "page cache", "O_DIRECT"),
        format!("{:<14}|{HEADER}|{HEADER}", "pattern"),
    ];
    for p in PATTERNS {
        let (cached, direct) = (find(CACHED_PREFIX, p.name), find(DIRECT_PREFIX, p.name));
        if cached.is_some() || direct.is_some() {
            lines.push(format!(
                "{:<14}|{}|{}",
                p.name,
                cells(cached),
                cells(direct)
            ));
        }
    }
    lines
        .iter()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect()
}

const HEADER: &str = "    MiB/s   avg ms   max ms     σ ms ";

fn cells(figures: Option<&IntervalFigures>) -> String {
    match figures {
        Some(f) => format!(
            " {:>8.2} {:>8.3} {:>8.3} {:>8.3} ",
            f.mib_per_s,
            f.resp_ms,
            f.resp_max_ms(),
            f.resp_stddev_ms
        ),
        None => format!(" {:>8} {:>8} {:>8} {:>8} ", "-", "-", "-", "-"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::pattern::counters::Counters;
    use crate::workload::pattern::job::tests::job;

    #[test]
    fn eighteen_jobs_cached_then_direct() {
        let jobs = jobs(&job());
        assert_eq!(jobs.len(), 18);
        assert_eq!(jobs[0].name, "b_seq_read");
        assert!(!jobs[0].direct && jobs[9].direct);
        assert_eq!(jobs[16].name, "d_rand_mix");
        assert_eq!(jobs[16].read_pct, 50.0);
        assert_eq!(jobs[16].seek, Seek::Percent(100.0));
    }

    #[test]
    fn table_has_one_row_per_pattern_run() {
        let mut c = Counters::default();
        c.record(true, 1 << 20, 2_000_000);
        c.record(true, 1 << 20, 4_000_000);
        let f = IntervalFigures::new(&c, 1.0, None);
        let table = summary_table([("b_seq_write", &f), ("d_seq_write", &f)]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert!(lines[2].starts_with("seq_write"), "{table}");
        assert_eq!(lines[2].matches("2.00").count(), 2, "{table}");
        assert!(
            lines[2].contains("4.000") && lines[2].contains("1.414"),
            "{table}"
        );
        let partial = summary_table([("b_seq_write", &f)]);
        assert!(
            partial.lines().nth(2).unwrap().trim_end().ends_with('-'),
            "{partial}"
        );
    }
}
