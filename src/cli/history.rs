//! `fsbench history [PATH...]`: saved runs as series over time, and where
//! each changed, with what changed there (`crate::history`).
use std::path::{Path, PathBuf};

use clap::Args;

use super::output::check_output_path;
use super::report::{FormatName, named_format, write_report};
use crate::console::stderr_line;
use crate::error::usage;
use crate::history::{self, History, RunPoints, collect};
use crate::report::format::Format;
use crate::report::terminal::Terminal;
use crate::results::{ResultsEnv, results_dir};

const HISTORY_EXAMPLES: &str = "\
Examples:
  fsbench history                          every saved run (see `fsbench results`)
  fsbench history runs/ old.json           the results in runs/ and old.json
  fsbench history --format html -o history.html";

#[derive(Debug, Args)]
#[command(after_help = HISTORY_EXAMPLES)]
pub struct HistoryArgs {
    /// Results written by `--json`, and folders of them (their *.json
    /// files) [default: `fsbench run`'s results directory,
    /// $XDG_DATA_HOME/fsbench/results].
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The format: terminal (the default), markdown, csv or html.
    #[arg(long, value_parser = FormatName)]
    format: Option<Result<Format, String>>,
    /// Write it to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub fn run(args: HistoryArgs, json: Option<&Path>) -> anyhow::Result<()> {
    if json.is_some() {
        return usage("--json: history writes no result; use --format csv for its data");
    }
    let format = named_format(&args.format)?;
    if let Some(path) = &args.output {
        check_output_path("--output", path)?;
    }
    let paths = match args.paths.is_empty() {
        // Nothing is measured here, so the fallback is never refused.
        true => vec![results_dir(&ResultsEnv::of_process(), &[])?],
        false => args.paths,
    };
    let collected = collect(&paths, |_, run| Some(RunPoints::of(&run)));
    for problem in &collected.problems {
        stderr_line!("fsbench: skipped {problem}");
    }
    if collected.runs.is_empty() {
        let places: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return usage(format!(
            "no fsbench result to read in {}",
            places.join(", ")
        ));
    }
    let history = History::of(collected.runs);
    let text = match format {
        Format::Terminal => history::terminal(&history, Terminal::for_stdout().width),
        Format::Markdown => history::markdown(&history),
        Format::Csv => history::csv(&history)?,
        Format::Html => history::html(&history)?,
        Format::Json => return usage("--format json: history has no JSON form; use csv"),
    };
    write_report(args.output.as_deref(), &text)
}
