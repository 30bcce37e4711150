//! `fsbench results [--dir DIR] [--last]`: the saved runs, newest first.
use std::path::Path;

use clap::Args;

use super::flags::ResultsDirFlag;
use super::output::{check_json_path, json_to_stdout};
use crate::console::{Stream, emit};
use crate::report::terminal::Terminal;
use crate::results::listing::Listing;

const RESULTS_EXAMPLES: &str = "\
Examples:
  fsbench results                          the saved runs, newest first (times are local)
  fsbench results --dir runs/              the runs saved with --save-dir runs/
  fsbench results --json -                 the listing as JSON, one object per file
  fsbench report \"$(fsbench results --last)\" --format markdown";

#[derive(Debug, Args)]
#[command(after_help = RESULTS_EXAMPLES)]
pub struct ResultsArgs {
    #[command(flatten)]
    dir: ResultsDirFlag,
    /// Print only the newest complete result's path, for
    /// `fsbench report $(fsbench results --last)`.
    #[arg(long)]
    last: bool,
}

pub fn run(args: ResultsArgs, json: Option<&Path>) -> anyhow::Result<()> {
    check_json_path(json)?;
    let dir = args.dir.resolve()?;
    let listing = Listing::of(&dir)?;
    if args.last {
        return match listing.last() {
            Some(saved) => emit(Stream::Stdout, &format!("{}\n", saved.path.display())),
            None => anyhow::bail!("no complete saved result in {}", dir.display()),
        };
    }
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&listing)? + "\n";
        match json_to_stdout(json) {
            true => return emit(Stream::Stdout, &text),
            false => std::fs::write(path, text)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?,
        }
    }
    emit(
        Stream::Stdout,
        &listing.table(&dir, Terminal::for_stdout().width),
    )
}
