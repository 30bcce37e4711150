//! The terminal format: one table per workload, in the width of the
//! terminal (`DEFAULT_WIDTH` when standard output is not one). A row per
//! headline metric, named by `names::headed` (`find (s) ↓`), a column per
//! target, the baseline's header saying so. A cell shows the mean ± the
//! 95 % CI half-width (n >= 2), `★` on the best target, the markers of its
//! warnings and, for the other targets, the ratio to the baseline (`1.32x*`,
//! `*` = significant). Where a table would be too wide its cells are broken
//! into lines (`Layout`); the prose around the tables is wrapped likewise.
//! A sweep (`report::sweep`) adds a row per parameter under each table's
//! header, and the sweep table before the workloads. Targets that
//! `fsbench run --configs` built are said, before any figure, with how
//! (`built_rows`, which Markdown and HTML show too): mkfs, what it ran on,
//! the mount options.
use std::ops::Range;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{
    Attribute, Cell as TableCell, CellAlignment, ColumnConstraint, ContentArrangement, Table, Width,
};

use super::durability;
use super::{
    PLACEMENT_INTRO, Reporter, incomplete_note, markers, mean_and_half, mean_ci, number, ratio,
    target_label, workload_title,
};
use crate::analysis::placement::{self, PlacementTable, placement_tables, title};
use crate::analysis::summary::{Cell, MetricSummary, Profile, WorkloadSummary};
use crate::analysis::sweep::SweepTable;
use crate::analysis::verdict::Verdict;
use crate::analysis::{Summary, names};
use crate::result::RunResult;
use crate::result::built::Built;

/// Width used when standard output is not a terminal (files, pipes, tests),
/// and the least a terminal gets: a narrower one wraps long lines itself.
pub const DEFAULT_WIDTH: usize = 100;

pub struct Terminal {
    /// No line of the report is wider than this, but for a word that is.
    pub width: usize,
}

impl Terminal {
    /// Sized for standard output: `COLUMNS` when it is set (as `ls` and
    /// the help read it, on a terminal or not), else the terminal's width,
    /// or `DEFAULT_WIDTH` when that is narrower or unknown.
    pub fn for_stdout() -> Terminal {
        let terminal = || stdout_columns().map_or(DEFAULT_WIDTH, |w| w.max(DEFAULT_WIDTH));
        Terminal {
            width: columns_asked().unwrap_or_else(terminal),
        }
    }
}

/// The width `COLUMNS` asks for: a positive number, else none.
fn columns_asked() -> Option<usize> {
    let text = std::env::var("COLUMNS").ok()?;
    text.trim().parse().ok().filter(|&width| width > 0)
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
    /// The report's parts in reading order; each is a block of whole lines,
    /// so another (a verdict after the heading) goes in with one more entry.
    fn render(&self, run: &RunResult, summary: &Summary) -> anyhow::Result<String> {
        let parts = [
            self.heading(run, summary),
            self.incomplete(run),
            self.verdict(run, summary),
            self.risks(summary),
            self.built(run),
            self.durability(run),
            self.placements(run, summary),
            self.sweep(summary),
            self.workloads(summary),
            self.profiles(summary),
            scale_outs(run),
            self.legend(summary),
        ];
        Ok(parts.concat())
    }
}

impl Terminal {
    /// The verdict's block, each line wrapped to the width under its own
    /// indentation.
    fn verdict(&self, run: &RunResult, summary: &Summary) -> String {
        wrap_lines(&Verdict::of(run, summary).text(), self.width)
    }

    /// The run, its targets and baseline.
    fn heading(&self, run: &RunResult, summary: &Summary) -> String {
        format!(
            "{} {} · {} target(s) · baseline {}\n",
            run.made_by(),
            summary.run_id,
            summary.targets.len(),
            summary
                .targets
                .get(summary.baseline)
                .map_or("-", String::as_str)
        )
    }

    /// That the result is partial, under the heading (`incomplete_note`).
    fn incomplete(&self, run: &RunResult) -> String {
        incomplete_note(run).map_or_else(String::new, |note| {
            wrap(&format!("INCOMPLETE: {note}"), self.width, "  ")
        })
    }

    /// What a crash can lose on each target, in full: read before any
    /// figure.
    fn risks(&self, summary: &Summary) -> String {
        let mut out = String::new();
        for (target, risk) in &summary.risks {
            out.push_str(&wrap(&format!("RISK {target}: {risk}"), self.width, "  "));
        }
        out
    }

    /// How the targets `fsbench run --configs` built were made, before any
    /// figure: per built target (`built_rows`) its mkfs command line (or
    /// what else made it), then what it was made on and its mount
    /// options, each line wrapped under its own indentation; nothing when
    /// no target was built.
    fn built(&self, run: &RunResult) -> String {
        let rows = built_rows(run);
        if rows.is_empty() {
            return String::new();
        }
        let mut out = format!("\n{BUILT_TITLE}\n");
        for [name, mkfs, on, options] in rows {
            let mut more = Vec::new();
            let first = match mkfs.as_str() {
                "–" => on,
                _ => {
                    if on != "–" {
                        more.push(format!("on {on}"));
                    }
                    mkfs
                }
            };
            if options != "–" {
                more.push(format!("mount options {options}"));
            }
            out.push_str(&wrap(&format!("  {name}: {first}"), self.width, "      "));
            if !more.is_empty() {
                out.push_str(&wrap(
                    &format!("    {}", more.join(" · ")),
                    self.width,
                    "      ",
                ));
            }
        }
        out
    }

    /// The sweep table (`report::sweep`), after a blank line: a row per
    /// configuration, its parameters, then each headline metric's mean;
    /// split into several tables, each with the parameters, where the
    /// metrics do not fit the width side by side. Nothing without a sweep.
    fn sweep(&self, summary: &Summary) -> String {
        let Some(sweep) = &summary.sweep else {
            return String::new();
        };
        let table = sweep.table(summary);
        let mut out = format!(
            "
Sweep: {} (mean over the repetitions)
",
            table.parameters.join(" × ")
        );
        let mut start = 0;
        loop {
            let mut end = (start + 1).min(table.columns.len());
            while end < table.columns.len()
                && fits(&sweep_table(&table, start..end + 1), self.width)
            {
                end += 1;
            }
            out.push_str(&self.fitted(sweep_table(&table, start..end)));
            out.push('\n');
            if end >= table.columns.len() {
                return out;
            }
            start = end;
        }
    }

    /// Every workload's title, table and details line, each after a blank line.
    fn workloads(&self, summary: &Summary) -> String {
        let mut out = String::new();
        for workload in &summary.workloads {
            out.push('\n');
            out.push_str(&self.workload(summary, workload));
        }
        out
    }

    /// The workload's title, its table, and the names of its detail
    /// metrics, each with the markers of its cells' warnings (the legend
    /// lists them, and no table shows those cells).
    fn workload(&self, summary: &Summary, workload: &WorkloadSummary) -> String {
        let mut out = format!("{}\n", workload_title(workload));
        out.push_str(&self.metric_table(summary, workload));
        out.push('\n');
        let details: Vec<String> = workload
            .details()
            .map(|m| {
                format!(
                    "{}{}",
                    names::human(&m.name, &m.unit),
                    markers(&cell_warnings(m))
                )
            })
            .collect();
        if !details.is_empty() {
            let line = format!(
                "  the same in other units: {} (fsbench report --format markdown or html)",
                details.join(", ")
            );
            out.push_str(&wrap(&line, self.width, "    "));
        }
        out
    }

    /// The workload's table in the first layout that fits the width; the
    /// narrowest, wrapped by the table itself, when none does.
    fn metric_table(&self, summary: &Summary, workload: &WorkloadSummary) -> String {
        let roomy = [Layout::OneLine, Layout::RatioBelow]
            .into_iter()
            .map(|layout| metric_table(summary, workload, layout))
            .find(|table| fits(table, self.width));
        match roomy {
            Some(table) => table.to_string(),
            None => self.fitted(metric_table(summary, workload, Layout::Stacked)),
        }
    }

    /// `table` as it is when it fits the width, else wrapped to it between
    /// words: a column is never narrower than its longest word, so a name
    /// or a number is never cut in two (a table of long words may stay
    /// wider than the width).
    fn fitted(&self, table: Table) -> String {
        fitted(table, self.width)
    }

    /// The durability table, where power cuts were measured.
    fn durability(&self, run: &RunResult) -> String {
        let judged = durability::judged(run);
        match judged.is_empty() {
            true => String::new(),
            false => format!("\n{}", durability::text(&judged, self.width)),
        }
    }

    /// The sync-log placement tables, with their introduction.
    fn placements(&self, run: &RunResult, summary: &Summary) -> String {
        let tables = placement_tables(run, summary);
        if tables.is_empty() {
            return String::new();
        }
        let intro = format!("Sync-log placement. {PLACEMENT_INTRO}");
        let mut out = format!("\n{}", wrap(&intro, self.width, ""));
        for table in &tables {
            out.push_str(&format!(
                "{}\n{}\n",
                title(table),
                self.fitted(placement_table(table))
            ));
        }
        out
    }

    /// Seed 000's table, when there are targets to rate against each other.
    fn profiles(&self, summary: &Summary) -> String {
        if summary.targets.len() < 2 {
            return String::new();
        }
        format!(
            "\nProfile (relative to the other targets)\n{}\n",
            self.fitted(profile_table(&summary.profiles()))
        )
    }

    /// How to read the tables, then the numbered warnings.
    fn legend(&self, summary: &Summary) -> String {
        let mut legend = String::from("± = 95 % confidence interval of the mean (Student t)");
        legend.push_str(&format!("; {}", names::ARROWS));
        if summary.targets.len() > 1 {
            legend.push_str(&format!(
                "; ★ = best; 1.32x = against the baseline {} (the column marked \
                 (baseline)): {}",
                summary.targets[summary.baseline],
                super::RATIO_LEGEND
            ));
        }
        let cells = summary.workloads.iter().flat_map(|w| &w.metrics);
        if cells
            .flat_map(|m| m.cells.iter().flatten())
            .any(|c| c.device.is_some())
        {
            legend.push_str(
                "; dev 98% = the bytes the devices under the target read and wrote in the \
                 phase, as a share of the bytes the workload moved (reads under 10 %, \
                 unsynced writes under half: the page cache's figure); dev 4.0 KiB/op = \
                 the device bytes per operation of a phase that moves no file data",
            );
        }
        let mut out = format!("\n{}", wrap(&legend, self.width, ""));
        for (i, warning) in summary.warnings.iter().enumerate() {
            let line = format!("{} {warning}", super::marker(i));
            out.push_str(&wrap(&line, self.width, "    "));
        }
        out
    }
}

/// The title of the block of built targets (terminal and Markdown).
pub(super) const BUILT_TITLE: &str = "How the targets were built (fsbench run --configs)";

/// The columns of the table of built targets (Markdown; the terminal's
/// lines say the same).
pub(super) const BUILT_HEADER: [&str; 4] = ["target", "mkfs", "on", "mount options"];

/// A row per target fsbench built (`TargetResult::built`), in the run's
/// order, under `BUILT_HEADER`: its name, its mkfs command line (`–` where
/// it ran none), what it was made on (`built_where`) and its mount options
/// (`built_options`). A target that was a plain directory has no row.
pub(super) fn built_rows(run: &RunResult) -> Vec<[String; 4]> {
    run.targets
        .iter()
        .filter_map(|target| {
            let built = target.built.as_ref()?;
            let mkfs = match built.mkfs.as_str() {
                "" => "–".to_string(),
                mkfs => mkfs.to_string(),
            };
            Some([
                target.name.clone(),
                mkfs,
                built_where(built),
                built_options(built),
            ])
        })
        .collect()
}

/// What a configuration was made on: the block device mkfs ran on
/// (`built_on`), the existing source it mounts (`mount of
/// server:/export`), `made by its setup commands` for one they make, or
/// `–` for an mkfs whose device the record does not say.
pub(super) fn built_where(built: &Built) -> String {
    let on = built_on(built);
    if !on.is_empty() {
        return on;
    }
    match (built.source.as_str(), built.mkfs.as_str()) {
        ("", "") => "made by its setup commands".to_string(),
        ("", _) => "–".to_string(),
        (source, _) => format!("mount of {source}"),
    }
}

/// The block device mkfs ran on: a loop image fsbench made (a recorded
/// disk or not), with or without direct I/O (without it, the host's page
/// cache holds the image), or the device `--wipe` named; empty where mkfs
/// ran on none.
pub(super) fn built_on(built: &Built) -> String {
    let image = match built.recorded {
        true => "a recorded loop image",
        false => "a loop image",
    };
    match (built.loop_direct_io, built.device.as_str()) {
        (Some(true), _) => format!("{image}, direct I/O"),
        (Some(false), _) => format!("{image}, no direct I/O (the host's page cache holds it)"),
        (None, "") => String::new(),
        (None, device) => format!("device {device}"),
    }
}

/// The mount options a configuration was mounted with, `(defaults)` where
/// it gave none; `–` for one its setup commands make (fsbench mounts
/// nothing of it).
pub(super) fn built_options(built: &Built) -> String {
    let made_by_commands =
        built.mkfs.is_empty() && built.device.is_empty() && built.source.is_empty();
    match built.options.as_str() {
        "" if made_by_commands => "–".to_string(),
        "" => "(defaults)".to_string(),
        options => options.to_string(),
    }
}

/// The scale-out (MPI) tables of the workloads that ran on several ranks.
fn scale_outs(run: &RunResult) -> String {
    let workloads = run.targets.iter().flat_map(|t| &t.workloads);
    workloads.filter_map(super::scale_out::render).collect()
}

/// How a table's cells are broken into lines to fit the width, from the
/// most readable to the narrowest.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// `0.0021 ± 0.0028 ★[1] 0.90x*` on one line.
    OneLine,
    /// The ratio on a second line.
    RatioBelow,
    /// Mean, ± half-width and ratio on lines of their own, and the target
    /// headers' `(baseline)` and markers under the name.
    Stacked,
}

/// A row per headline metric, a column per target.
fn metric_table(summary: &Summary, workload: &WorkloadSummary, layout: Layout) -> Table {
    let separator = if layout == Layout::Stacked { "\n" } else { " " };
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    let mut header = vec![TableCell::new("metric")];
    header.extend(
        (0..summary.targets.len())
            .map(|t| TableCell::new(target_label(summary, workload, t, separator))),
    );
    table.set_header(header);
    if let Some(sweep) = &summary.sweep {
        for (p, name) in sweep.names.iter().enumerate() {
            let mut row = vec![TableCell::new(name)];
            row.extend(
                (0..summary.targets.len())
                    .map(|t| TableCell::new(sweep.value(t, p)).set_alignment(CellAlignment::Right)),
            );
            table.add_row(row);
        }
    }
    for metric in workload.headline() {
        let mut row = vec![TableCell::new(names::headed(
            &metric.name,
            &metric.unit,
            metric.direction,
        ))];
        row.extend(metric_cells(metric, layout));
        table.add_row(row);
    }
    table
}

/// The sweep table's target and parameter columns, then its metric
/// columns `columns`: each cell the mean, `★` and bold on the best.
fn sweep_table(sweep: &SweepTable<'_>, columns: Range<usize>) -> Table {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    let mut header = vec!["target".to_string()];
    header.extend(sweep.parameters.iter().cloned());
    header.extend(
        sweep.columns[columns.clone()]
            .iter()
            .map(|c| c.title.clone()),
    );
    table.set_header(header);
    for row in &sweep.rows {
        let mut cells = vec![TableCell::new(&row.name)];
        cells.extend(row.parameters.iter().map(TableCell::new));
        cells.extend(row.cells[columns.clone()].iter().map(|cell| {
            let text = cell.map_or("–".to_string(), |c| {
                format!("{}{}", number(c.mean), if c.best { " ★" } else { "" })
            });
            let cell_view = TableCell::new(text).set_alignment(CellAlignment::Right);
            match cell.is_some_and(|c| c.best) {
                true => cell_view.add_attribute(Attribute::Bold),
                false => cell_view,
            }
        }));
        table.add_row(cells);
    }
    table
}

/// One cell per target, right-aligned, the best in bold.
fn metric_cells(metric: &MetricSummary, layout: Layout) -> impl Iterator<Item = TableCell> + '_ {
    metric.cells.iter().enumerate().map(move |(t, cell)| {
        let best = metric.best == Some(t);
        let text = cell
            .as_ref()
            .map_or("–".to_string(), |cell| cell_text(cell, best, layout));
        let cell = TableCell::new(text).set_alignment(CellAlignment::Right);
        match best {
            true => cell.add_attribute(Attribute::Bold),
            false => cell,
        }
    })
}

/// The mean ± half-width, `★` when best, the warnings' markers and the
/// ratio to the baseline (none on the baseline itself), as `layout` lines
/// them up.
fn cell_text(cell: &Cell, best: bool, layout: Layout) -> String {
    let marks = format!(
        "{}{}",
        if best { " ★" } else { "" },
        markers(&cell.warnings)
    );
    let ratio = cell.vs_baseline.as_ref().map(ratio);
    let device = cell.device.map(super::device_text);
    let lines: Vec<String> = match layout {
        Layout::Stacked => {
            let (mean, half) = mean_and_half(&cell.stats);
            let half = half.map(|h| format!("± {h}"));
            [Some(format!("{mean}{marks}")), half, device, ratio]
                .into_iter()
                .flatten()
                .collect()
        }
        _ => {
            let device = device.map_or(String::new(), |d| format!(" {d}"));
            let value = format!("{}{device}{marks}", mean_ci(&cell.stats));
            [Some(value), ratio].into_iter().flatten().collect()
        }
    };
    let separator = if layout == Layout::OneLine { " " } else { "\n" };
    lines.join(separator)
}

/// The warnings of a metric's cells, each once, in order.
fn cell_warnings(metric: &MetricSummary) -> Vec<usize> {
    let mut warnings: Vec<usize> = metric
        .cells
        .iter()
        .flatten()
        .flat_map(|c| c.warnings.iter().copied())
        .collect();
    warnings.sort_unstable();
    warnings.dedup();
    warnings
}

/// `table` as it is when it fits `width`, else wrapped to it between words
/// (see `Terminal::fitted`).
pub(super) fn fitted(mut table: Table, width: usize) -> String {
    if !fits(&table, width) {
        let floors: Vec<ColumnConstraint> = (0..table.column_count())
            .map(|c| ColumnConstraint::LowerBoundary(Width::Fixed(longest_word(&table, c))))
            .collect();
        let width = u16::try_from(width).unwrap_or(u16::MAX);
        table
            .set_constraints(floors)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(width);
    }
    table.to_string()
}

/// Each line of `text` wrapped to `width`, under its own indentation and
/// two more spaces.
pub(super) fn wrap_lines(text: &str, width: usize) -> String {
    text.lines()
        .map(|line| {
            let lead = line.len() - line.trim_start().len();
            wrap(line, width, &format!("{}  ", &line[..lead]))
        })
        .collect()
}

/// Whether every line of `table`, without the escape codes a terminal
/// gets, is at most `width` characters.
pub(super) fn fits(table: &Table, width: usize) -> bool {
    let mut plain = table.clone();
    plain.force_no_tty();
    plain.lines().all(|line| line.chars().count() <= width)
}

/// The width of column `column`'s longest word, with the cell's padding.
fn longest_word(table: &Table, column: usize) -> u16 {
    let widest = (table.column_cells_with_header_iter(column).flatten())
        .flat_map(|cell| {
            let words: Vec<usize> = (cell.content().split_whitespace())
                .map(|word| word.chars().count())
                .collect();
            words
        })
        .max()
        .unwrap_or(0);
    u16::try_from(widest + CELL_PADDING).unwrap_or(u16::MAX)
}

/// The space comfy-table leaves on each side of a cell's content.
const CELL_PADDING: usize = 2;

/// `text` broken at spaces into lines of at most `width` characters (a
/// longer word keeps a line of its own); its leading spaces start the first
/// line, `indent` the others. Each line ends with a newline.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    let lead = &text[..text.len() - text.trim_start().len()];
    let mut lines = vec![lead.to_string()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("one line at least");
        let empty = line.trim().is_empty();
        if !empty && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(format!("{indent}{word}"));
        } else {
            if !empty {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines.iter().map(|line| format!("{line}\n")).collect()
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
            .map(|(name, unit)| names::human(name, unit)),
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
        let level = |l: Option<crate::analysis::summary::Level>| l.map_or("–", |l| l.as_str());
        table.add_row([
            profile.target.as_str(),
            level(profile.write),
            level(profile.read),
            level(profile.metadata),
        ]);
    }
    table
}
