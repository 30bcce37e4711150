//! `fsbench durability TARGET`: the cost of durable 4 KiB writes (fsync,
//! fdatasync, O_SYNC, O_DSYNC) with latency percentiles, and whether the
//! stack really makes them durable.
use std::path::Path;

use clap::{Args, FromArgMatches};

use super::{EntryInput, Kind, new_record, run_single};
use crate::cli::flags::{OneTarget, RunFlags, parse_flags, refuse_in_suite};
use crate::cli::output::{check_json_path, tables_stream};
use crate::error::usage;
use crate::report::live::durability_table;
use crate::console::emit;
use crate::storage::Target;
use crate::units::{parse_time, time_arg};
use crate::workload::Workload;
use crate::workload::durability::{Durability, Limits};

pub const KIND: Kind = Kind {
    name: "durability",
    about: "fsync/fdatasync/O_SYNC/O_DSYNC cost of durable 4 KiB writes, with \
a verdict on whether the stack really makes them durable",
    // Its crash and power-loss verdict is one host's.
    under_mpi: false,
    takes_commands: false,
    apart: false,
    args: DurabilityArgs::augment_args,
    run: |matches, json| DurabilityArgs::from_arg_matches(matches)?.run(json),
    entry: suite_workload,
};

const DURABILITY_EXAMPLES: &str = "\
Examples:
  fsbench durability /mnt/hdd                  six probes of up to 1000 writes or 5 s each
  fsbench durability /srv/db --writes 200 -d 2s

Each probe writes 4 KiB blocks to its own file: an overwrite or an append
followed by fsync or fdatasync, or a write to a file opened O_SYNC/O_DSYNC.
A latency sample is the write plus its sync. The verdict says whether the
timings and the configuration show writes acknowledged before they are
durable, and why.";

#[derive(Debug, Args)]
#[command(after_help = DURABILITY_EXAMPLES)]
pub struct DurabilityArgs {
    #[command(flatten)]
    target: OneTarget,
    /// Most writes per probe.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    writes: u64,
    /// Longest time per probe (a bare number is seconds).
    #[arg(short = 'd', long, alias = "seconds", value_name = "TIME", default_value = "5s", value_parser = time_arg)]
    duration: String,
    #[command(flatten)]
    run: RunFlags,
}

impl DurabilityArgs {
    fn limits(&self) -> anyhow::Result<Limits> {
        Limits::new(self.writes, parse_time(&self.duration)?.as_secs_f64())
    }

    fn run(self, json: Option<&Path>) -> anyhow::Result<()> {
        let Some(spec) = self.target.spec() else {
            return usage("give the directory to test: fsbench durability TARGET");
        };
        let target = Target::parse(spec)?;
        let mut workload = Durability::new(self.limits()?);
        check_json_path(json)?;
        let out = tables_stream(json);
        run_single(new_record(), target, &mut workload, self.run.single()?, json, |result| {
            emit(out, &durability_table(result))
        })
    }
}

/// A durability workload from a suite entry's flags.
fn suite_workload(input: &EntryInput<'_>) -> anyhow::Result<Box<dyn Workload>> {
    let args: DurabilityArgs = parse_flags(input.args)?;
    refuse_in_suite(
        "TARGET",
        args.target.spec().is_some(),
        "the targets are fsbench run's --target",
    )?;
    args.run.refuse_in_suite()?;
    Ok(Box::new(Durability::new(args.limits()?)))
}
