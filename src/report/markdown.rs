//! The Markdown format (GitHub tables), for a blog post or a README: the
//! terminal's content, plus the ratio's confidence interval, the profile
//! table and the warnings as a numbered list. A sweep (`report::sweep`)
//! adds the sweep table and a column per parameter in the workload tables.
use super::durability;
use super::terminal::{BUILT_HEADER, BUILT_TITLE, built_rows};
use super::{
    PLACEMENT_INTRO, Reporter, Summary, UNBOUNDED_REASON, markers, mean_ci, number, ratio,
    ratio_ci, target_label, workload_title,
};
use crate::analysis::names;
use crate::analysis::placement::{PlacementTable, cell_text, placement_tables, title};
use crate::analysis::summary::{Cell, MetricSummary, Profile, WorkloadSummary};
use crate::analysis::verdict::Verdict;
use crate::result::RunResult;

pub struct Markdown;

impl Reporter for Markdown {
    fn render(&self, run: &RunResult, summary: &Summary) -> anyhow::Result<String> {
        let mut out = format!("# {} {}\n\n", escape(&run.made_by()), escape(&run.run_id));
        if let Some(note) = super::incomplete_note(run) {
            out.push_str(&format!("> **Incomplete**: {}\n\n", escape(&note)));
        }
        out.push_str(&verdict_section(&Verdict::of(run, summary)));
        out.push('\n');
        out.push_str(&introduction(run, summary));
        if !summary.risks.is_empty() {
            out.push_str("\n**Risks** (what a crash can lose):\n\n");
            for (target, risk) in &summary.risks {
                out.push_str(&format!("- **{}**: {}\n", escape(target), escape(risk)));
            }
        }
        out.push_str(&built_section(run));
        out.push_str(&durability_section(run));
        let placements = placement_tables(run, summary);
        if !placements.is_empty() {
            out.push_str(&format!("\n## Sync-log placement\n\n{PLACEMENT_INTRO}\n"));
            for table in &placements {
                out.push_str(&format!("\n### {}\n\n", escape(&title(table))));
                out.push_str(&placement_table(table));
            }
        }
        out.push_str(&sweep_section(summary));
        for workload in &summary.workloads {
            out.push_str(&format!("\n## {}\n\n", escape(&workload_title(workload))));
            out.push_str(&workload_table(summary, workload, workload.headline()));
            out.push_str(&details(summary, workload));
        }
        if summary.targets.len() > 1 {
            out.push_str("\n## Profile\n\n");
            out.push_str("Relative to the other targets (see docs/report.md for how).\n\n");
            out.push_str(&profile_table(&summary.profiles()));
        }
        if !summary.warnings.is_empty() {
            out.push_str("\n## Warnings\n\n");
            for (i, warning) in summary.warnings.iter().enumerate() {
                out.push_str(&format!("{}. {}\n", i + 1, escape(warning)));
            }
        }
        Ok(out)
    }
}

/// The answer first: per target its counts, classes and safety, the
/// ceilings, why the repetitions stopped, the sentences, and how to read
/// them.
fn verdict_section(verdict: &Verdict) -> String {
    if verdict.targets.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    for placement in &verdict.placements {
        out.push_str(&format!(
            "## Placements: {}\n\n",
            escape(&placement.heading)
        ));
        for line in &placement.lines {
            out.push_str(&format!("> {}\n>\n", escape(line)));
        }
        out.push('\n');
    }
    out.push_str(&format!("## {}\n\n", escape(&verdict.heading())));
    let lines = verdict.lines();
    for target in &lines {
        let details = target.details().join("; ");
        out.push_str(&format!(
            "- **{}**: {}\n",
            escape(&target.target),
            escape(&details)
        ));
    }
    for line in verdict.notes() {
        out.push_str(&format!("- {}\n", escape(&line)));
    }
    for sentence in lines.iter().filter_map(|t| t.sentence.as_ref()) {
        out.push_str(&format!("\n> {}\n", escape(sentence)));
    }
    if lines.iter().any(|t| t.counts.is_some()) {
        out.push('\n');
        for line in verdict.legend() {
            out.push_str(&format!("_{}_  \n", escape(&line)));
        }
    }
    out
}

/// Who was measured and how to read the cells.
fn introduction(run: &RunResult, summary: &Summary) -> String {
    let targets: Vec<String> = run
        .targets
        .iter()
        .map(|t| format!("**{}** ({})", escape(&t.name), escape(&t.path)))
        .collect();
    let mut out = format!(
        "Started {} on {}. Targets: {}.\n\n",
        run.started.format("%Y-%m-%d %H:%M:%S UTC"),
        escape(&run.host.hostname),
        targets.join(", ")
    );
    out.push_str("Cells: mean ± half-width of its 95 % confidence interval (Student t)");
    if summary.targets.len() > 1 {
        out.push_str(&format!(
            "; **bold** = best; below: against {} (the baseline) with the \
             ratio's 95 % interval, {}",
            escape(&summary.targets[summary.baseline]),
            escape(super::RATIO_LEGEND)
        ));
    }
    if summary.has_unbounded_ratio() {
        out.push_str(&format!("; {UNBOUNDED_REASON}"));
    }
    out.push_str(&format!(
        "; {}. `[n]` refers to the warnings at the end.\n",
        names::ARROWS
    ));
    out
}

/// The table of `workload`'s `metrics`: a row per target.
fn workload_table<'m>(
    summary: &Summary,
    workload: &WorkloadSummary,
    metrics: impl Iterator<Item = &'m MetricSummary>,
) -> String {
    let metrics: Vec<&MetricSummary> = metrics.collect();
    let parameters = summary.sweep.as_ref().map_or(&[][..], |s| &s.names[..]);
    let mut header = vec!["target".to_string()];
    header.extend(parameters.iter().map(|p| escape(p)));
    header.extend(
        metrics
            .iter()
            .map(|m| escape(&names::headed(&m.name, &m.unit, m.direction))),
    );
    let mut out = table_row(&header);
    let mut rule = vec!["---"];
    rule.extend(parameters.iter().map(|_| "---"));
    rule.extend(metrics.iter().map(|_| "---:"));
    out.push_str(&format!("|{}|\n", rule.join("|")));
    for t in 0..summary.targets.len() {
        let mut row = vec![escape(&target_label(summary, workload, t, " "))];
        if let Some(sweep) = &summary.sweep {
            row.extend(sweep.values(t).iter().map(|v| escape(v)));
        }
        row.extend(metrics.iter().map(|m| metric_cell(m, t)));
        out.push_str(&table_row(&row));
    }
    out
}

/// How the targets `fsbench run --configs` built were made, before any
/// figure: a row per built target (`terminal::built_rows`: mkfs, what it
/// was made on, mount options); nothing when no target was built.
fn built_section(run: &RunResult) -> String {
    let rows = built_rows(run);
    if rows.is_empty() {
        return String::new();
    }
    format!("\n## {BUILT_TITLE}\n\n{}", text_table(BUILT_HEADER, &rows))
}

/// A table of text cells (escaped) under `header`.
fn text_table<const N: usize>(header: [&str; N], rows: &[[String; N]]) -> String {
    let mut out = table_row(&header.map(String::from));
    out.push_str(&format!("|{}|\n", ["---"; N].join("|")));
    for row in rows {
        out.push_str(&table_row(&row.clone().map(|cell| escape(&cell))));
    }
    out
}

/// The durability table, where power cuts were measured, its findings
/// and legend.
fn durability_section(run: &RunResult) -> String {
    let judged = durability::judged(run);
    if judged.is_empty() {
        return String::new();
    }
    let table = text_table(durability::HEADER, &durability::rows(&judged));
    let mut out = format!("\n## {}\n\n{table}\n", durability::TITLE);
    for line in durability::findings(&judged) {
        out.push_str(&format!("- {}\n", escape(&line)));
    }
    out.push_str(&format!("\n{}\n", escape(durability::LEGEND)));
    out
}

/// The sweep table (`report::sweep`): a row per configuration, its
/// parameters, then each headline metric's mean, the best in bold; nothing
/// without a sweep.
fn sweep_section(summary: &Summary) -> String {
    let Some(sweep) = &summary.sweep else {
        return String::new();
    };
    let table = sweep.table(summary);
    let mut out = format!(
        "\n## Sweep\n\n{}: the mean of each configuration over its repetitions.\n\n",
        escape(&table.parameters.join(" × "))
    );
    let mut header = vec!["target".to_string()];
    header.extend(table.parameters.iter().map(|p| escape(p)));
    header.extend(table.columns.iter().map(|c| escape(&c.title)));
    out.push_str(&table_row(&header));
    let mut rule = vec!["---"; 1 + table.parameters.len()];
    rule.extend(table.columns.iter().map(|_| "---:"));
    out.push_str(&format!("|{}|\n", rule.join("|")));
    for row in &table.rows {
        let mut cells = vec![escape(&row.name)];
        cells.extend(row.parameters.iter().map(|v| escape(v)));
        cells.extend(row.cells.iter().map(|cell| match cell {
            None => "–".to_string(),
            Some(c) if c.best => format!("**{}**", number(c.mean)),
            Some(c) => number(c.mean),
        }));
        out.push_str(&table_row(&cells));
    }
    out
}

/// The workload's detail metrics (the same operations in other units),
/// folded; nothing when it has none.
fn details(summary: &Summary, workload: &WorkloadSummary) -> String {
    if workload.details().next().is_none() {
        return String::new();
    }
    format!(
        "\n<details><summary>The same operations in other units</summary>\n\n{}\n</details>\n",
        workload_table(summary, workload, workload.details())
    )
}

fn table_row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

/// A Markdown table padded to read as a table on a terminal too: `rows[0]`
/// is the header; the columns in `left` are left-aligned, the others
/// (numbers) right-aligned. Each column is at least 3 wide, as a rule
/// (`---`) must be.
pub fn padded_table<R: AsRef<[String]>>(rows: &[R], left: &[usize]) -> String {
    let columns = rows.first().map_or(0, |row| row.as_ref().len());
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            let widest = rows.iter().map(|row| row.as_ref()[c].len()).max();
            widest.unwrap_or(0).max(3)
        })
        .collect();
    let aligned = |c: usize| left.contains(&c);
    let mut text = String::new();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = (row.as_ref().iter().zip(&widths).enumerate())
            .map(|(c, (cell, &w))| match aligned(c) {
                true => format!("{cell:<w$}"),
                false => format!("{cell:>w$}"),
            })
            .collect();
        text.push_str(&table_row(&cells));
        if i == 0 {
            let rule: Vec<String> = (widths.iter().enumerate())
                .map(|(c, &w)| match aligned(c) {
                    true => "-".repeat(w),
                    false => format!("{}:", "-".repeat(w - 1)),
                })
                .collect();
            text.push_str(&table_row(&rule));
        }
    }
    text
}

fn metric_cell(metric: &MetricSummary, target: usize) -> String {
    let Some(cell) = &metric.cells[target] else {
        return "–".to_string();
    };
    let mut text = match metric.best == Some(target) {
        true => format!("**{}**", mean_ci(&cell.stats)),
        false => mean_ci(&cell.stats),
    };
    text.push_str(&markers(&cell.warnings));
    text.push_str(&comparison_text(cell));
    text
}

/// `<br>1.32x\* (1.20–1.45)` for a cell compared with the baseline.
fn comparison_text(cell: &Cell) -> String {
    let Some(comparison) = &cell.vs_baseline else {
        return String::new();
    };
    let mut text = format!("<br>{}", escape(&ratio(comparison)));
    if let Some(ci) = ratio_ci(comparison) {
        text.push_str(&format!(" ({ci})"));
    }
    text
}

fn placement_table(table: &PlacementTable) -> String {
    let mut header = vec!["workload".to_string(), "sync log".to_string()];
    header.extend(
        table
            .columns
            .iter()
            .map(|(name, unit)| escape(&names::human(name, unit))),
    );
    let mut out = table_row(&header);
    let mut rule = vec!["---", "---"];
    rule.extend(table.columns.iter().map(|_| "---:"));
    out.push_str(&format!("|{}|\n", rule.join("|")));
    for row in &table.rows {
        let mut cells = vec![escape(&row.workload), escape(&row.placement)];
        cells.extend(row.cells.iter().map(|&cell| cell_text(cell)));
        out.push_str(&table_row(&cells));
    }
    out
}

fn profile_table(profiles: &[Profile]) -> String {
    let mut out = String::from("| target | write | read | metadata |\n|---|---|---|---|\n");
    for profile in profiles {
        let level =
            |l: Option<crate::analysis::summary::Level>| l.map_or("–", |l| l.as_str()).to_string();
        out.push_str(&table_row(&[
            escape(&profile.target),
            level(profile.write),
            level(profile.read),
            level(profile.metadata),
        ]));
    }
    out
}

/// Escapes what Markdown would interpret in names and texts.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '|' | '*' | '`' | '<' | '>' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::padded_table;

    #[test]
    fn padded_table_aligns_text_left_and_numbers_right() {
        let rows = [["op", "s", "flags"], ["copy", "12.5", "x"]].map(|r| r.map(String::from));
        let expected = "\
| op   |    s | flags |
| ---- | ---: | ----- |
| copy | 12.5 | x     |
";
        assert_eq!(padded_table(&rows, &[0, 2]), expected);
    }
}
