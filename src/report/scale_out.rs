//! The terminal view of a multi-rank result: the aggregate with its
//! stonewall and tail, then the same metrics per host and per rank.
use super::markdown::padded_table;
use super::number;
use crate::result::{Figure, ScaleOut, WorkloadResult};

/// The tables' one text column (the metric's name), left-aligned; the
/// numbers are right-aligned.
const NAME_COLUMN: &[usize] = &[0];

/// Ranks shown one per column; beyond that the JSON has them.
const MAX_RANK_COLUMNS: usize = 16;

/// The per-host and per-rank tables of a multi-rank result, on stderr
/// (stdout may carry CSV or JSON that must stay machine-readable).
pub fn show(result: &WorkloadResult) -> anyhow::Result<()> {
    match render(result) {
        Some(text) => crate::console::emit(crate::console::Stream::Stderr, &text),
        None => Ok(()),
    }
}

/// The tables, or None for a result of one rank.
pub fn render(result: &WorkloadResult) -> Option<String> {
    let scale = result.scale.as_ref()?;
    let hosts: Vec<String> = scale
        .hosts
        .iter()
        .map(|h| format!("{} (ranks {})", h.host, rank_list(&h.ranks)))
        .collect();
    let mut text = format!(
        "\n{}: {} ranks on {}; rate = all ranks' work / (latest end - earliest start)\n",
        result.name(),
        scale.ranks,
        hosts.join(", ")
    );
    text.push_str(&padded_table(&spread_rows(result, scale), NAME_COLUMN));
    let by_host: Vec<(String, &[Figure])> = scale
        .hosts
        .iter()
        .map(|h| (h.host.clone(), h.metrics.as_slice()))
        .collect();
    text.push_str("\nper host\n");
    text.push_str(&padded_table(&figure_rows(result, &by_host), NAME_COLUMN));
    if scale.per_rank.len() <= MAX_RANK_COLUMNS {
        let by_rank: Vec<(String, &[Figure])> = scale
            .per_rank
            .iter()
            .map(|r| (format!("rank {}", r.rank), r.metrics.as_slice()))
            .collect();
        text.push_str("\nper rank\n");
        text.push_str(&padded_table(&figure_rows(result, &by_rank), NAME_COLUMN));
    }
    Some(text)
}

/// `0-3` for consecutive ranks, else `0,2,5`.
fn rank_list(ranks: &[u32]) -> String {
    match (ranks.first(), ranks.last()) {
        (Some(first), Some(last))
            if (last - first) as usize + 1 == ranks.len() && first != last =>
        {
            format!("{first}-{last}")
        }
        _ => ranks
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}

fn spread_rows(result: &WorkloadResult, scale: &ScaleOut) -> Vec<Vec<String>> {
    let mut rows = vec![
        [
            "metric",
            "unit",
            "aggregate",
            "stonewall",
            "first done s",
            "last done s",
            "slowest/fastest",
            "coord ms",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for (metric, spread) in result.metrics.iter().zip(&scale.spread) {
        let tail = match spread.fastest_s > 0.0 {
            true => format!("{:.2}", spread.slowest_s / spread.fastest_s),
            false => "-".into(),
        };
        rows.push(vec![
            metric.name.clone(),
            metric.unit.clone(),
            number(metric.value),
            number(spread.stonewall_value),
            format!("{:.3}", spread.first_done_s),
            format!("{:.3}", spread.last_done_s),
            tail,
            // What coordinating the ranks cost: their start skew (inside
            // the aggregate's span) and the agreements around the phase.
            format!("{:.2}", (spread.start_skew_s + spread.barrier_s) * 1e3),
        ]);
    }
    rows
}

/// One row per metric, one column per part (host or rank).
fn figure_rows(result: &WorkloadResult, parts: &[(String, &[Figure])]) -> Vec<Vec<String>> {
    let mut header = vec!["metric".to_string()];
    header.extend(parts.iter().map(|(name, _)| name.clone()));
    let mut rows = vec![header];
    for (i, metric) in result.metrics.iter().enumerate() {
        let mut row = vec![metric.name.clone()];
        row.extend(
            parts
                .iter()
                .map(|(_, figures)| figures.get(i).map_or("-".into(), |f| number(f.value))),
        );
        rows.push(row);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Direction, Metric, RankPart, Spread};

    fn figure(value: f64) -> Figure {
        Figure {
            name: "seq_create".into(),
            value,
            samples: 1024,
            elapsed_s: 0.1,
            start_s: 0.0,
        }
    }

    #[test]
    fn a_single_rank_has_no_tables_and_ranks_read_as_ranges() {
        assert!(render(&WorkloadResult::default()).is_none());
        assert_eq!(rank_list(&[0, 1, 2, 3]), "0-3");
        assert_eq!(rank_list(&[0, 2]), "0,2");
        assert_eq!(rank_list(&[5]), "5");
    }

    #[test]
    fn tables_show_aggregate_stonewall_tail_and_every_rank() {
        let result = WorkloadResult {
            workload: "bonnie".into(),
            metrics: vec![Metric {
                samples: 2048,
                elapsed_s: 0.1024,
                ..Metric::test("seq_create", "files/s", Direction::HigherIsBetter, 20_000.0)
            }],
            scale: Some(ScaleOut {
                ranks: 2,
                clock: String::new(),
                spread: vec![Spread {
                    name: "seq_create".into(),
                    first_done_s: 0.05,
                    last_done_s: 0.1024,
                    stonewall_samples: 1500.0,
                    stonewall_value: 30_000.0,
                    fastest_s: 0.05,
                    slowest_s: 0.1,
                    start_skew_s: 0.001,
                    barrier_s: 0.0005,
                    straggler: None,
                }],
                clock_spread_s: None,
                wall_clock_skew_s: None,
                hosts: Vec::new(),
                per_rank: [11_000.0, 9_000.0]
                    .iter()
                    .enumerate()
                    .map(|(rank, &value)| RankPart {
                        rank: rank as u32,
                        host: "h".into(),
                        metrics: vec![figure(value)],
                    })
                    .collect(),
            }),
            ..Default::default()
        };
        let text = render(&result).unwrap();
        for needle in [
            "2 ranks", "20000", "30000", "2.00", "1.50", "rank 1", "11000", "9000",
        ] {
            assert!(text.contains(needle), "{needle} missing in\n{text}");
        }
    }
}
