//! The terminal format: one table per workload in the style of the seed
//! articles' tables, rows = targets, columns = metrics. A cell shows the mean
//! ± the 95 % CI half-width (n >= 2), `★` on the best target, and below it
//! the ratio to the baseline (`1.32x*`, `*` = significant). Tables wider
//! than the terminal are split into several, by columns.
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Attribute, Cell as TableCell, CellAlignment, Table};

use super::placement::{self, PlacementTable, placement_tables, title};
use super::summary::{Cell, MetricSummary, Profile, WorkloadSummary};
use super::verdict::Verdict;
use super::{
    PLACEMENT_INTRO, Reporter, Summary, markers, mean_ci, ratio, row_label, workload_title,
};
use crate::result::RunResult;

/// Width used when standard output is not a terminal (files, pipes, tests).
pub const DEFAULT_WIDTH: usize = 100;

pub struct Terminal {
    /// Tables are split so that none is wider than this.
    pub width: usize,
}

impl Terminal {
    /// Sized for standard output: its terminal width, or `DEFAULT_WIDTH`.
    pub fn for_stdout() -> Terminal {
        Terminal {
            width: stdout_columns().unwrap_or(DEFAULT_WIDTH),
        }
    }
}

fn stdout_columns() -> Option<usize> {
    // SAFETY: TIOCGWINSZ only fills the winsize struct we own.
    let size = unsafe {
        let mut size: libc::winsize = std::mem::zeroed();
        (libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) == 0).then_some(size)
    }?;
    (size.ws_col > 0).then_some(usize::from(size.ws_col))
}

impl Reporter for Terminal {
    fn render(&self, run: &RunResult, summary: &Summary) -> anyhow::Result<String> {
        let mut out = format!(
            "fsbench run {} · {} target(s) · baseline {}\n",
            run.run_id,
            summary.targets.len(),
            summary
                .targets
                .get(summary.baseline)
                .map_or("-", String::as_str)
        );
        out.push_str(&Verdict::of(run, summary).text());
        for (target, risk) in &summary.risks {
            out.push_str(&format!("RISK {target}: {risk}\n"));
        }
        for workload in &summary.workloads {
            out.push('\n');
            out.push_str(&self.workload(summary, workload));
        }
        let placements = placement_tables(run, summary);
        if !placements.is_empty() {
            out.push_str(&format!("\nSync-log placement. {PLACEMENT_INTRO}\n"));
            for table in &placements {
                out.push_str(&format!("{}\n{}\n", title(table), placement_table(table)));
            }
        }
        if summary.targets.len() > 1 {
            out.push_str("\nProfile (relative to the other targets)\n");
            out.push_str(&profile_table(&summary.profiles()).to_string());
            out.push('\n');
        }
        let workloads = run.targets.iter().flat_map(|t| &t.workloads);
        for scale_out in workloads.filter_map(super::scale_out::render) {
            out.push_str(&scale_out);
        }
        out.push('\n');
        out.push_str(&legend(summary));
        Ok(out)
    }
}

impl Terminal {
    /// The workload's title and its table(s).
    fn workload(&self, summary: &Summary, workload: &WorkloadSummary) -> String {
        let mut out = format!("{}\n", workload_title(workload));
        let row_labels: Vec<String> = (0..summary.targets.len())
            .map(|t| row_label(summary, workload, t))
            .collect();
        let label_width = text_width(&row_labels) + 3;
        let columns: Vec<Column> = workload
            .headline()
            .map(|m| Column::of(m, summary.baseline))
            .collect();
        for chunk in fit(&columns, self.width.saturating_sub(label_width)) {
            let mut table = Table::new();
            table.load_style(UTF8_FULL_CONDENSED);
            let mut header = vec![TableCell::new("target")];
            header.extend(chunk.iter().map(|c| TableCell::new(&c.header)));
            table.set_header(header);
            for (t, label) in row_labels.iter().enumerate() {
                let mut row = vec![TableCell::new(label)];
                row.extend(chunk.iter().map(|c| c.cells[t].clone()));
                table.add_row(row);
            }
            out.push_str(&table.to_string());
            out.push('\n');
        }
        let details: Vec<&str> = workload.details().map(|m| m.name.as_str()).collect();
        if !details.is_empty() {
            out.push_str(&format!(
                "  the same in other units: {} (fsbench report --format markdown or html)\n",
                details.join(", ")
            ));
        }
        out
    }
}

/// One metric's column: header and one cell per target.
struct Column {
    header: String,
    cells: Vec<TableCell>,
    width: usize,
}

impl Column {
    fn of(metric: &MetricSummary, baseline: usize) -> Column {
        let header = format!("{}\n{}", metric.name, metric.unit);
        let texts: Vec<String> = metric
            .cells
            .iter()
            .enumerate()
            .map(|(t, cell)| match cell {
                Some(cell) => cell_text(cell, metric.best == Some(t), t == baseline),
                None => "–".to_string(),
            })
            .collect();
        let width = text_width(&texts).max(text_width(std::slice::from_ref(&header))) + 3;
        let cells = texts
            .into_iter()
            .enumerate()
            .map(|(t, text)| {
                let cell = TableCell::new(text).set_alignment(CellAlignment::Right);
                match metric.best == Some(t) {
                    true => cell.add_attribute(Attribute::Bold),
                    false => cell,
                }
            })
            .collect();
        Column {
            header,
            cells,
            width,
        }
    }
}

/// `mean ± ci ★[1]` and, on a second line, the ratio to the baseline.
fn cell_text(cell: &Cell, best: bool, is_baseline: bool) -> String {
    let mut text = mean_ci(&cell.stats);
    if best {
        text.push_str(" ★");
    }
    text.push_str(&markers(&cell.warnings));
    match (&cell.vs_baseline, is_baseline) {
        (Some(comparison), _) => format!("{text}\n{}", ratio(comparison)),
        (None, true) => format!("{text}\n="),
        (None, false) => text,
    }
}

/// Widest line of any text, in characters.
fn text_width(texts: &[String]) -> usize {
    texts
        .iter()
        .flat_map(|t| t.lines())
        .map(|line| line.chars().count())
        .max()
        .unwrap_or(0)
}

/// Splits columns into consecutive groups no wider than `width` (a column
/// wider than that still gets a group of its own).
fn fit(columns: &[Column], width: usize) -> Vec<&[Column]> {
    let mut groups = Vec::new();
    let (mut start, mut used) = (0, 0);
    for (i, column) in columns.iter().enumerate() {
        if i > start && used + column.width > width {
            groups.push(&columns[start..i]);
            (start, used) = (i, 0);
        }
        used += column.width;
    }
    if start < columns.len() {
        groups.push(&columns[start..]);
    }
    groups
}

/// A sync-log placement table: rows = placements.
fn placement_table(table: &PlacementTable) -> Table {
    let mut out = Table::new();
    out.load_style(UTF8_FULL_CONDENSED);
    let mut header = vec!["workload".to_string(), "sync log".to_string()];
    header.extend(
        table
            .columns
            .iter()
            .map(|(name, unit)| format!("{name}\n{unit}")),
    );
    out.set_header(header);
    for row in &table.rows {
        let mut cells = vec![
            TableCell::new(&row.workload),
            TableCell::new(&row.placement),
        ];
        cells.extend(row.cells.iter().map(|&cell| {
            TableCell::new(placement::cell_text(cell)).set_alignment(CellAlignment::Right)
        }));
        out.add_row(cells);
    }
    out
}

/// Seed 000's table: write / read / metadata per target.
fn profile_table(profiles: &[Profile]) -> Table {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    table.set_header(["target", "write", "read", "metadata"]);
    for profile in profiles {
        let level = |l: Option<super::summary::Level>| l.map_or("–", |l| l.as_str());
        table.add_row([
            profile.target.as_str(),
            level(profile.write),
            level(profile.read),
            level(profile.metadata),
        ]);
    }
    table
}

/// How to read the tables, then the numbered warnings.
fn legend(summary: &Summary) -> String {
    let mut out = String::from("± = 95 % confidence interval of the mean (Student t)");
    if summary.targets.len() > 1 {
        out.push_str(&format!(
            "; ★ = best; 1.32x = mean / mean of the baseline {} (row marked =), \
             * = significant (Welch's t-test, p < 0.05)",
            summary.targets[summary.baseline]
        ));
    }
    out.push('\n');
    for (i, warning) in summary.warnings.iter().enumerate() {
        out.push_str(&format!("{} {warning}\n", super::marker(i)));
    }
    out
}
