//! The registry of workload kinds: each kind is described once, in a
//! module of its own (its arguments, how its workload is built from them
//! or from a suite entry, whether it runs under MPI, what it prints as it
//! runs), and listed once, in `registry!` below. `fsbench`'s subcommands,
//! suite entries and the MPI allow-list all come from this list.
mod synclog;

use std::path::Path;

use crate::cli::flags::Single;
use crate::driver::recording::{new_run_id, new_run_result};
use crate::driver::{Part, Plan, Recording};
use crate::policy::Policy;
use crate::result::env::HostEnv;
use crate::result::{RunResult, WorkloadResult};
use crate::storage::Target;
use crate::suite::SuiteWorkload;
use crate::workload::{Progress, Workload};

/// Declares each kind's module and lists its `KIND` in `KINDS`, in the
/// order `fsbench --help` shows them.
macro_rules! registry {
    ($($kind:ident),* $(,)?) => {
        $(mod $kind;)*
        /// Every workload kind. A new kind is a module here (its `KIND`)
        /// and its name in the `registry!` line.
        pub static KINDS: &[Kind] = &[$($kind::KIND),*];
    };
}
registry!(bonnie, postmark, io, tree, durability, meta);

/// One workload kind.
pub struct Kind {
    /// Its subcommand, and the `kind` of suite entries.
    pub name: &'static str,
    /// One line for `fsbench --help`.
    pub about: &'static str,
    /// Whether `mpirun -np N fsbench <name>` runs it on every rank (in a
    /// scratch directory of each rank's own).
    pub under_mpi: bool,
    /// Whether a suite entry may give it `commands` (PostMark's).
    pub takes_commands: bool,
    /// Whether `fsbench <name>` measures in a session of its own
    /// (`own_session`), as the tool its figures are held against does:
    /// fio's jobs do, bonnie++ and PostMark run in the shell's session.
    pub apart: bool,
    /// Declares the subcommand's arguments.
    pub args: fn(clap::Command) -> clap::Command,
    /// Runs `fsbench <name> ...`; the `--json` path comes along.
    pub run: fn(&clap::ArgMatches, Option<&Path>) -> anyhow::Result<()>,
    /// Builds the workload of a suite entry.
    pub entry: fn(&EntryInput<'_>) -> anyhow::Result<Box<dyn Workload>>,
}

/// What a suite entry gives a kind to build its workload from.
pub struct EntryInput<'a> {
    /// The subcommand's flags (scaled), without what the suite decides.
    pub args: &'a [String],
    /// PostMark's `set` commands (scaled).
    pub commands: &'a [String],
    /// What commands written in a file may do.
    pub policy: &'a Policy,
    pub host: &'a HostEnv,
}

/// The kind called `name`.
pub fn find(name: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|kind| kind.name == name)
}

/// The names of every kind, for messages.
pub fn names() -> String {
    KINDS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

/// A suite entry's workload, built by its kind.
pub fn build_entry(kind: &str, input: &EntryInput<'_>) -> anyhow::Result<Box<dyn Workload>> {
    let Some(kind) = find(kind) else {
        return crate::error::usage(format!(
            "unknown workload kind '{kind}' (known: {})",
            names()
        ));
    };
    if !kind.takes_commands && !input.commands.is_empty() {
        return crate::error::usage(format!(
            "'commands' is for postmark; use 'args' for {}",
            kind.name
        ));
    }
    (kind.entry)(input)
}

/// The registry of workload kinds, as `fsbench run`'s session uses it.
pub struct Registry;

impl crate::session::Registry for Registry {
    fn build(
        &self,
        listed: &SuiteWorkload,
        scale: f64,
        policy: &Policy,
        host: &HostEnv,
    ) -> anyhow::Result<Box<dyn Workload>> {
        let args = listed.scaled_args(scale)?;
        let commands = listed.scaled_commands(scale)?;
        let input = EntryInput {
            args: &args,
            commands: &commands,
            policy,
            host,
        };
        build_entry(&listed.kind, &input)
    }

    fn runs_under_mpi(&self, kind: &str) -> bool {
        find(kind).is_none_or(|k| k.under_mpi)
    }

    fn crash_options(&self, args: &[String]) -> anyhow::Result<crate::crash::Options> {
        crate::cli::crash::entry_options(args)
    }
}

/// The record of a single-workload command, started now; its host is
/// the one the command builds its workload for.
pub fn new_record() -> RunResult {
    new_run_result(&new_run_id())
}

/// `fsbench <kind> TARGET`: a one-part plan on one target, run by the
/// driver; `show` prints each result as it ends (then, under MPI, the
/// per-host and per-rank tables). The record goes to `--json` at the end,
/// or as far as it got when the run fails.
pub fn run_single(
    record: RunResult,
    target: Target,
    workload: &mut dyn Workload,
    how: Single,
    json: Option<&Path>,
    mut show: impl FnMut(&WorkloadResult) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let part = Part {
        label: None,
        instances: vec![Box::new(workload)],
    };
    let plan = Plan::new(vec![target], vec![part])
        .repetitions(0..how.repetitions)
        .keep(how.keep)
        .progress(Progress::new(how.quiet));
    let mut recording = Recording::new(record, json);
    let outcome = crate::driver::run(plan, &mut recording, |_, _, result| {
        show(result)?;
        crate::report::scale_out::show(result)
    });
    match outcome {
        Ok(_) => recording.finish(),
        Err(e) => Err(recording.failed(e)),
    }
}

/// A suite entry of `kind` with flags `args` (split at blanks), built as
/// `fsbench run` builds it without `--allow-shell`.
#[cfg(test)]
pub fn build_for_test(kind: &str, args: &str) -> anyhow::Result<Box<dyn Workload>> {
    let args: Vec<&str> = args.split_whitespace().collect();
    build_list_for_test(kind, &args)
}

/// `build_for_test` with the flags as a list (a suite's `args = [...]`).
#[cfg(test)]
pub fn build_list_for_test(kind: &str, args: &[&str]) -> anyhow::Result<Box<dyn Workload>> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let policy = Policy {
        allow_shell: false,
        results_dir: crate::results::RESULTS_DIR.into(),
    };
    let host = crate::storage::env::probe_host();
    let input = EntryInput {
        args: &args,
        commands: &[],
        policy: &policy,
        host: &host,
    };
    build_entry(kind, &input)
}
