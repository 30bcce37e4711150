//! `fsbench durability TARGET`: the cost of durable 4 KiB writes (fsync,
//! fdatasync, O_SYNC, O_DSYNC) with latency percentiles, and whether the
//! stack really makes them durable.
use std::fmt::Write as _;
use std::path::Path;

use clap::Args;

use super::flags::{parse_flags, refuse_in_suite};
use super::output::{check_json_path, json_to_stdout};
use crate::error::usage;
use crate::report::output::{Stream, emit};
use crate::result::WorkloadResult;
use crate::runner::{RunOptions, finish_record, new_run_id, new_run_result, run_on_target};
use crate::storage::Target;
use crate::workload::durability::{Durability, Limits};
use crate::workload::{Progress, Workload};

const DURABILITY_EXAMPLES: &str = "\
Examples:
  fsbench durability /mnt/hdd                  six probes of up to 1000 writes or 5 s each
  fsbench durability /srv/db --writes 200 --seconds 2

Each probe writes 4 KiB blocks to its own file: an overwrite or an append
followed by fsync or fdatasync, or a write to a file opened O_SYNC/O_DSYNC.
A latency sample is the write plus its sync. The verdict says whether the
timings and the configuration show writes acknowledged before they are
durable, and why.";

#[derive(Debug, Args)]
#[command(after_help = DURABILITY_EXAMPLES)]
pub struct DurabilityArgs {
    /// Directory to test; `name=path` names it in reports.
    #[arg(value_name = "TARGET")]
    target: Option<String>,
    /// Most writes per probe.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    writes: u64,
    /// Most seconds per probe.
    #[arg(long, value_name = "S", default_value_t = 5.0)]
    seconds: f64,
    /// Keep the scratch directory.
    #[arg(long)]
    keep: bool,
}

impl DurabilityArgs {
    fn limits(&self) -> anyhow::Result<Limits> {
        if !(1..=10_000_000).contains(&self.writes) {
            return usage(format!("--writes {}: must be 1 to 10000000", self.writes));
        }
        if !(self.seconds.is_finite() && self.seconds > 0.0 && self.seconds <= 3600.0) {
            return usage(format!(
                "--seconds {}: must be above 0 and at most 3600",
                self.seconds
            ));
        }
        Ok(Limits {
            writes: self.writes,
            seconds: self.seconds,
        })
    }
}

pub fn run(args: DurabilityArgs, json: Option<&Path>) -> anyhow::Result<()> {
    let Some(spec) = &args.target else {
        return usage("give the directory to test: fsbench durability TARGET");
    };
    let target = Target::parse(spec)?;
    let mut workload = Durability::new(args.limits()?);
    check_json_path(json)?;
    let run_id = new_run_id();
    let record = new_run_result(&run_id);
    let options = RunOptions {
        repetitions: 1,
        keep: args.keep,
        progress: Progress::new(false),
    };
    let out = match json_to_stdout(json) {
        true => Stream::Stderr,
        false => Stream::Stdout,
    };
    let result = run_on_target(&target, &mut workload, &run_id, &options, |result| {
        emit(out, &table(result))
    })?;
    finish_record(record, result, json)
}

/// One row per probe, then the verdict.
fn table(result: &WorkloadResult) -> String {
    let mut text = format!(
        "{:<20} {:>8} {:>10} {:>9} {:>9} {:>9} {:>9}\n",
        "probe (4 KiB)", "writes", "writes/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms"
    );
    let ms = |ns: u64| ns as f64 / 1e6;
    for metric in &result.metrics {
        let Some(l) = &metric.latency else {
            continue;
        };
        let _ = writeln!(
            text,
            "{:<20} {:>8} {:>10.1} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
            metric.name,
            metric.samples,
            metric.value,
            ms(l.p50_ns),
            ms(l.p99_ns),
            ms(l.p999_ns),
            ms(l.max_ns)
        );
    }
    text.push('\n');
    for line in &result.notes {
        let _ = writeln!(text, "{line}");
    }
    text
}

/// A durability workload from a suite entry's flags.
pub(super) fn suite_workload(args: &[String]) -> anyhow::Result<Box<dyn Workload>> {
    let args: DurabilityArgs = parse_flags(args)?;
    refuse_in_suite(
        "TARGET",
        args.target.is_some(),
        "the targets are fsbench run's --target",
    )?;
    refuse_in_suite("--keep", args.keep, "use fsbench run --keep")?;
    Ok(Box::new(Durability::new(args.limits()?)))
}
