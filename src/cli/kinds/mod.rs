//! The registry of workload kinds: each kind is described once, in a
//! module of its own (its arguments, how its workload is built from them
//! or from a suite entry, whether it runs under MPI, what it prints as it
//! runs), and listed once, in `registry!` below. `fsbench`'s subcommands,
//! suite entries and the MPI allow-list all come from this list.
mod synclog;

use std::path::Path;

use crate::cli::flags::Single;
use crate::driver::record::{finish, keep_partial, new_run_id, new_run_result, save_so_far};
use crate::driver::{Part, Plan, Spread};
use crate::policy::Policy;
use crate::result::env::HostEnv;
use crate::result::{RunResult, WorkloadResult};
use crate::storage::Target;
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
    mut record: RunResult,
    target: Target,
    workload: &mut dyn Workload,
    how: Single,
    json: Option<&Path>,
    mut show: impl FnMut(&WorkloadResult) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let plan = Plan {
        targets: vec![target],
        parts: vec![Part {
            label: None,
            instances: vec![Box::new(workload)],
        }],
        spread: Spread::EachTarget,
        repetitions: 0..how.repetitions,
        until: None,
        keep: how.keep,
        progress: Progress::new(how.quiet),
        scratch_id: None,
        cold: None,
        remount: None,
        preface: None,
        remedy: crate::storage::SMALLER_SIZE.into(),
        resume: false,
    };
    let outcome = crate::driver::run(plan, &mut record, |record, _, result| {
        show(result)?;
        crate::report::scale_out::show(result)?;
        save_so_far(record, json)
    });
    match outcome {
        Ok(_) => finish(&mut record, json),
        Err(e) => Err(keep_partial(&record, json.as_slice(), e)),
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
        results_dir: crate::store::RESULTS_DIR.into(),
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
