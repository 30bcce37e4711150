//! `fsbench env [TARGET...]`: the current directory when none is given, as
//! `fsbench run` would measure it.
use std::path::Path;

use anyhow::Context;
use clap::Args;

use super::flags::Targets;
use super::output::json_to_stdout;
use crate::console::{Stream, emit};
use crate::driver::recording::{new_run_id, new_run_result};
use crate::result::TargetResult;
use crate::storage::Target;
use crate::storage::env::{probe_target, render_text};

#[derive(Debug, Args)]
pub struct EnvArgs {
    #[command(flatten)]
    targets: Targets,
}

pub fn run(args: EnvArgs, json: Option<&Path>) -> anyhow::Result<()> {
    super::output::check_json_path(json)?;
    let mut record = new_run_result(&new_run_id());
    let mut envs = Vec::new();
    for spec in &args.targets.specs_or_here() {
        let target = Target::parse(spec)?;
        target.require_dir()?;
        let env = probe_target(&target.path).with_context(|| format!("target {spec}"))?;
        record.targets.push(TargetResult {
            name: target.name,
            path: target.path.display().to_string(),
            env: Some(env.clone()),
            workloads: Vec::new(),
            cleanup: None,
            reference: false,
            built: None,
            durability: None,
            fingerprint: None,
        });
        envs.push(env);
    }
    record.finished = Some(chrono::Utc::now());
    if !json_to_stdout(json) {
        emit(Stream::Stdout, &render_text(&record.host, &envs))?;
    }
    match json {
        Some(path) => crate::results::save(&record, path),
        None => Ok(()),
    }
}
