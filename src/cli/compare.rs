//! `fsbench compare A.json B.json [C.json ...]`: relative change per metric
//! of each later run against the first, as a table and, with `--svg`, as a
//! diverging bar chart; `fsbench compare --last NEW.json` compares a new
//! result with the latest comparable saved run.
use std::path::{Path, PathBuf};

use clap::Args;

use super::flags::{MinEffectFlag, ResultsDirFlag};
use crate::console::{Stream, emit};
use crate::error::usage;
use crate::history::latest_comparable;
use crate::report::charts::relative_change;
use crate::report::compare::{Comparisons, Input};
use crate::report::terminal::Terminal;
use crate::results::load;
use crate::results::write_file as save;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Results written by `--json`; the first is the reference.
    #[arg(value_name = "RESULT.json", num_args = 2.., required_unless_present = "last")]
    results: Vec<PathBuf>,
    /// Compare FILE with the latest saved run (in `fsbench run`'s results
    /// directory, or --dir) of the same targets and workloads that started
    /// before it.
    #[arg(long, value_name = "FILE", conflicts_with = "results")]
    last: Option<PathBuf>,
    /// With --last: where the saved runs are.
    #[command(flatten)]
    dir: ResultsDirFlag,
    /// Also write the chart of relative change (SVG) to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    #[command(flatten)]
    min_effect: MinEffectFlag,
}

pub fn run(args: CompareArgs, json: Option<&Path>) -> anyhow::Result<()> {
    if json.is_some() {
        return usage("--json: compare writes no result; save its table or --svg instead");
    }
    let results = match &args.last {
        Some(new) => with_the_last_saved(new, &args.dir.resolve()?)?,
        None if args.dir.dir.is_some() => {
            return usage("--dir: only with --last (the runs compared are named)");
        }
        None => args.results.clone(),
    };
    let names = short_names(&results);
    let inputs = results
        .iter()
        .zip(names)
        .map(|(path, name)| {
            let mut run = load(path)?;
            args.min_effect.apply(&mut run)?;
            Ok(Input { name, run })
        })
        .collect::<anyhow::Result<Vec<Input>>>()?;
    let comparisons = Comparisons::of(&inputs);
    if let Some(path) = &args.svg {
        save(
            path,
            &relative_change(&comparisons.chart_title(), &comparisons.rows())?,
        )?;
    }
    let width = Terminal::for_stdout().width;
    emit(Stream::Stdout, &comparisons.render_text(width))
}

/// `new` after the latest comparable saved run: the two files compared.
fn with_the_last_saved(new: &Path, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let run = load(new)?;
    match latest_comparable(dir, &run) {
        Some((saved, _)) => Ok(vec![saved, new.to_path_buf()]),
        None => usage(format!(
            "--last {}: no saved run in {} has the same targets and workloads and started before it",
            new.display(),
            dir.display()
        )),
    }
}

/// What tables call each run: its file name, or the path as given when two
/// runs have the same file name.
fn short_names(paths: &[PathBuf]) -> Vec<String> {
    let file_name = |p: &PathBuf| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    let names: Vec<String> = paths.iter().map(file_name).collect();
    let unique = names
        .iter()
        .enumerate()
        .all(|(i, n)| !names[..i].contains(n));
    match unique {
        true => names,
        false => paths.iter().map(|p| p.display().to_string()).collect(),
    }
}
