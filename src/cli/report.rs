//! `fsbench report RESULT.json [--markdown|--csv|--html FILE]`: re-renders
//! a saved run in any format (terminal tables by default).
use std::path::{Path, PathBuf};

use clap::Args;

use super::output::json_to_stdout;
use crate::driver::record::write_json;
use crate::error::usage;
use crate::report::csv::Csv;
use crate::report::html::Html;
use crate::report::markdown::Markdown;
use crate::report::output::{Stream, emit};
use crate::report::terminal::Terminal;
use crate::report::{Reporter, Summary, load, save};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result written by `--json` (any subcommand).
    #[arg(value_name = "RESULT.json")]
    result: PathBuf,
    /// Markdown tables and the warnings, for a blog post or a README.
    #[arg(long, group = "format")]
    markdown: bool,
    /// CSV, long format: one row per target × workload × metric.
    #[arg(long, group = "format")]
    csv: bool,
    /// With --csv: one row per repetition instead (the raw values).
    #[arg(long, requires = "csv")]
    repetitions: bool,
    /// A self-contained HTML report (charts, environment, profiles) in FILE.
    #[arg(long, group = "format", value_name = "FILE")]
    html: Option<PathBuf>,
    /// The target ratios are taken against (default: the first).
    #[arg(long, value_name = "NAME")]
    baseline: Option<String>,
    /// Write the report to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub fn run(args: ReportArgs, json: Option<&Path>) -> anyhow::Result<()> {
    let run = load(&args.result)?;
    let summary = Summary::with_baseline(
        &run,
        baseline_index(
            run.targets.iter().map(|t| t.name.as_str()),
            args.baseline.as_deref(),
        )?,
    );
    // The same writer as every command that runs workloads, so a
    // re-written file reads like the original.
    if let Some(path) = json {
        write_json(&run, path)?;
        if json_to_stdout(Some(path)) {
            return Ok(());
        }
    }
    if let Some(path) = &args.html {
        return save(path, &Html.render(&run, &summary)?);
    }
    let reporter: Box<dyn Reporter> = if args.markdown {
        Box::new(Markdown)
    } else if args.csv {
        Box::new(Csv {
            per_repetition: args.repetitions,
        })
    } else {
        Box::new(Terminal::for_stdout())
    };
    let text = reporter.render(&run, &summary)?;
    match &args.output {
        Some(path) => save(path, &text),
        None if json_to_stdout(json) => emit(Stream::Stderr, &text),
        None => emit(Stream::Stdout, &text),
    }
}

/// Index of the `--baseline` target among `names` (0 without one); a name
/// that is not there is a usage error that lists the names there are.
pub fn baseline_index<'n>(
    names: impl Iterator<Item = &'n str> + Clone,
    name: Option<&str>,
) -> anyhow::Result<usize> {
    let Some(name) = name else {
        return Ok(0);
    };
    match names.clone().position(|n| n == name) {
        Some(index) => Ok(index),
        None => usage(format!(
            "--baseline {name}: no such target (targets: {})",
            names.collect::<Vec<_>>().join(", ")
        )),
    }
}
