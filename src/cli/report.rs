//! `fsbench report RESULT.json [--format FORMAT]`: re-renders a saved run
//! in any format (terminal tables by default).
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Arg, Args, Command, ValueEnum};

use super::flags::MinEffectFlag;
use super::output::json_to_stdout;
use crate::analysis::{Summary, baseline_of};
use crate::console::{Stream, emit};
use crate::error::usage;
use crate::report::format::Format;
use crate::results::load;
use crate::results::write_file as save;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result written by `--json` (any subcommand).
    #[arg(value_name = "RESULT.json")]
    result: PathBuf,
    /// The report's format (default: terminal).
    #[arg(long, value_parser = FormatName, group = "format_flag")]
    format: Option<Result<Format, String>>,
    /// With --format csv: one row per repetition instead (the raw values).
    #[arg(long)]
    repetitions: bool,
    /// The target ratios are taken against (default: the run's own, its
    /// --baseline or the first).
    #[arg(long, value_name = "NAME")]
    baseline: Option<String>,
    #[command(flatten)]
    min_effect: MinEffectFlag,
    /// Write the report to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Short for --format markdown (kept for scripts).
    #[arg(long, hide = true, group = "format_flag")]
    markdown: bool,
    /// Short for --format csv (kept for scripts).
    #[arg(long, hide = true, group = "format_flag")]
    csv: bool,
    /// Short for --format html -o FILE (kept for scripts).
    #[arg(long, hide = true, group = "format_flag", value_name = "FILE")]
    html: Option<PathBuf>,
}

/// Parses `--format` so that an unknown name reaches [`named_format`],
/// which makes it one usage line (clap's own error spans several), while
/// `--help` still lists the formats.
#[derive(Clone)]
pub(super) struct FormatName;

impl TypedValueParser for FormatName {
    /// The format, or the unknown name given.
    type Value = Result<Format, String>;

    fn parse_ref(
        &self,
        _: &Command,
        _: Option<&Arg>,
        value: &OsStr,
    ) -> Result<Self::Value, clap::Error> {
        let name = value.to_string_lossy();
        Ok(Format::from_str(&name, false).map_err(|_| name.into_owned()))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(formats()))
    }
}

fn formats() -> impl Iterator<Item = PossibleValue> {
    Format::value_variants()
        .iter()
        .filter_map(ValueEnum::to_possible_value)
}

impl ReportArgs {
    /// The format asked for, by --format or by one of its short flags
    /// (which clap keeps from being given together).
    fn format(&self) -> anyhow::Result<Format> {
        match &self.format {
            _ if self.markdown => Ok(Format::Markdown),
            _ if self.csv => Ok(Format::Csv),
            _ if self.html.is_some() => Ok(Format::Html),
            format => named_format(format),
        }
    }

    /// Where the report goes: --html's FILE, -o FILE, or standard output.
    fn destination(&self) -> Option<&Path> {
        self.html.as_deref().or(self.output.as_deref())
    }
}

/// The format `--format` names (terminal when not given), or one usage
/// line for a name that is none.
pub(super) fn named_format(format: &Option<Result<Format, String>>) -> anyhow::Result<Format> {
    match format {
        None => Ok(Format::Terminal),
        Some(Ok(format)) => Ok(*format),
        Some(Err(name)) => {
            let names: Vec<String> = formats().map(|v| v.get_name().to_string()).collect();
            usage(format!(
                "--format {name}: no such format (formats: {})",
                names.join(", ")
            ))
        }
    }
}

/// Writes a rendered report to `destination`, or standard output.
pub(super) fn write_report(destination: Option<&Path>, text: &str) -> anyhow::Result<()> {
    match destination {
        Some(path) => save(path, text),
        None => emit(Stream::Stdout, text),
    }
}

pub fn run(args: ReportArgs, json: Option<&Path>) -> anyhow::Result<()> {
    let format = args.format()?;
    if args.repetitions && format != Format::Csv {
        return usage("--repetitions: only with --format csv");
    }
    let mut run = load(&args.result)?;
    args.min_effect.apply(&mut run)?;
    // The run's own baseline unless another is asked for, so that the
    // report of a result says what the run said.
    let baseline = match args.baseline.as_deref() {
        None => baseline_of(&run),
        Some(name) => crate::analysis::baseline_index(
            &run.targets
                .iter()
                .map(|t| (t.name.as_str(), t.reference))
                .collect::<Vec<_>>(),
            Some(name),
        )?,
    };
    let summary = Summary::with_baseline(&run, baseline);
    // The same writer as every command that runs workloads, so a
    // re-written file reads like the original.
    if let Some(path) = json {
        crate::results::save(&run, path)?;
        if json_to_stdout(Some(path)) {
            return Ok(());
        }
    }
    let Some(reporter) = format.reporter(args.repetitions) else {
        // JSON: the result itself, by the writer of --json.
        return crate::results::save(&run, args.destination().unwrap_or(Path::new("-")));
    };
    let text = reporter.render(&run, &summary)?;
    write_report(args.destination(), &text)
}
