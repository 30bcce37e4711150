//! A PostMark session's `run` commands, run by the driver: each `run` is
//! a plan whose targets are the `set location`s (the current directory
//! when none is set), spread across them, in fresh scratch directories.
//! The session's record holds every run so far.
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::session::Runner;
use crate::driver::record::keep_partial;
use crate::driver::{Part, Plan, Spread};
use crate::error::usage;
use crate::result::RunResult;
use crate::scale;
use crate::storage::Target;
use crate::workload::postmark::{Postmark, PostmarkConfig, RunSummary};
use crate::workload::synclog::SyncLogConfig;
use crate::workload::{Progress, Workload};

const RANK_0_REPORT: &str = "fsbench: the PostMark report below is rank 0's own; \
the aggregate of all ranks is in the tables on stderr and in the JSON";

pub struct DrivenRunner<'a> {
    pub record: RunResult,
    pub keep: bool,
    pub sync_log: Option<SyncLogConfig>,
    /// `--json FILE`: rewritten after every run, so it always holds every
    /// run so far, even if a later one fails.
    pub json: Option<&'a Path>,
    /// `run` commands so far.
    pub runs: u32,
}

impl Runner for DrivenRunner<'_> {
    fn run(&mut self, config: &PostmarkConfig, out: &mut dyn Write) -> anyhow::Result<RunSummary> {
        let ram_bytes = self.record.host.ram_bytes;
        let mut postmark =
            Postmark::new(config.clone(), self.sync_log.clone(), ram_bytes)?.printing_to(&mut *out);
        let plan = Plan {
            targets: targets_of(config)?,
            parts: vec![Part {
                label: None,
                instances: vec![Box::new(&mut postmark) as Box<dyn Workload>],
            }],
            spread: Spread::AcrossTargets,
            // A session's runs are its repetitions.
            repetitions: self.runs..self.runs + 1,
            until: None,
            keep: self.keep,
            progress: Progress::new(true),
            // Later runs of a session get their own directories, so
            // `--keep` can keep them all.
            scratch_id: (self.runs > 0)
                .then(|| format!("{}-{}", self.record.run_id, self.runs + 1)),
            cold: None,
            remount: None,
            preface: None,
            remedy: crate::storage::SMALLER_SIZE.into(),
            resume: false,
        };
        let outcome = crate::driver::run(plan, &mut self.record, |_, _, result| {
            crate::report::scale_out::show(result)
        });
        let files = self.json.filter(|p| !crate::store::is_stdout(p));
        if let Err(e) = outcome {
            return Err(keep_partial(&self.record, files.as_slice(), e));
        }
        self.record.finished = Some(chrono::Utc::now());
        self.runs += 1;
        if let Some(path) = files {
            crate::store::save(&self.record, path)?;
        }
        let summary = postmark
            .take_summary()
            .context("PostMark ran without a summary")?;
        drop(postmark);
        if scale::size() > 1 {
            writeln!(out, "{RANK_0_REPORT}").context("cannot write to standard output")?;
        }
        Ok(summary)
    }
}

/// The locations as targets; the current directory when none is set.
fn targets_of(config: &PostmarkConfig) -> anyhow::Result<Vec<Target>> {
    let paths: Vec<&str> = match config.locations.as_slice() {
        [] => vec!["."],
        locations => locations.iter().map(|l| l.path.as_str()).collect(),
    };
    if let Some((i, path)) = paths
        .iter()
        .enumerate()
        .find(|(i, path)| paths[..*i].contains(path))
    {
        return usage(format!(
            "location '{path}' is set twice (entry {}); give it one entry with the summed weight",
            i + 1
        ));
    }
    Ok(paths
        .into_iter()
        .map(|path| Target {
            name: path.to_string(),
            path: PathBuf::from(path),
        })
        .collect())
}
