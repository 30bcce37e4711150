//! The formats `fsbench report --format` offers, and the one place a format
//! is registered: a new format is a module implementing [`Reporter`], a
//! variant of [`Format`] and its line in [`Format::reporter`].
use clap::ValueEnum;

use super::Reporter;
use super::csv::Csv;
use super::html::Html;
use super::markdown::Markdown;
use super::terminal::Terminal;

/// One output format; each variant's doc is its line in `--help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Tables sized for the terminal (the default).
    Terminal,
    /// Markdown tables and the warnings, for a blog post or a README.
    Markdown,
    /// CSV, long format: one row per target × workload × metric.
    Csv,
    /// A self-contained HTML report (charts, environment, profiles).
    Html,
    /// The result itself, as `--json` writes it (`fsbench report` reads it again).
    Json,
}

impl Format {
    /// The reporter that renders this format; `per_repetition` is CSV's
    /// one row per repetition. None for JSON, which is no view of the
    /// summary but the result itself: whoever writes `--json` writes it.
    pub fn reporter(self, per_repetition: bool) -> Option<Box<dyn Reporter>> {
        Some(match self {
            Format::Terminal => Box::new(Terminal::for_stdout()),
            Format::Markdown => Box::new(Markdown),
            Format::Csv => Box::new(Csv { per_repetition }),
            Format::Html => Box::new(Html),
            Format::Json => return None,
        })
    }
}
