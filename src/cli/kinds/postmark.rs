//! `fsbench postmark [CONFIG]`: PostMark's command language and workload.
//! Commands come from CONFIG (or `.pmrc`), then from stdin: at a `pm>`
//! prompt on a terminal, else line by line as PostMark reads them.
use std::path::{Path, PathBuf};

use clap::{Args, FromArgMatches};

use super::synclog::SyncLogArgs;
use super::{EntryInput, Kind};
use crate::cli::flags::{KeepFlag, parse_flags};
use crate::compat::postmark::driven::DrivenRunner;
use crate::compat::postmark::prompt::run_session;
use crate::compat::postmark::interpreter::config_of;
use crate::driver::Recording;
use crate::driver::recording::{new_run_id, new_run_result};
use crate::error::usage;
use crate::policy::Policy;
use crate::console::stderr_line;
use crate::results::{ResultsEnv, results_dir};
use crate::workload::Workload;
use crate::workload::postmark::Postmark;

pub const KIND: Kind = Kind {
    name: "postmark",
    about: "PostMark's command language and workload (same files and operations \
for any configuration and seed), timed with ns clocks",
    under_mpi: true,
    takes_commands: true,
    apart: false,
    args: PostmarkArgs::augment_args,
    run: |matches, json| PostmarkArgs::from_arg_matches(matches)?.run(json),
    entry: suite_workload,
};

const POSTMARK_EXAMPLES: &str = "\
Examples:
  fsbench postmark postmark.cfg                  run a PostMark configuration file unchanged
  fsbench postmark                               read .pmrc if present, then the pm> prompt
  printf 'set number 5000\\nrun\\n' | fsbench postmark --json pm.json
  fsbench postmark pm.cfg --sync-log /mnt/ram    each create and delete synced to a log there

Same workload as PostMark 1.53 for any configuration and seed (same files,
sizes, operations and system calls), timed with ns clocks. Files live in
<location>/fsbench-<run-id>/, removed at the end. fsbench extension:
`set threads N` runs N independent instances (seeds seed..seed+N-1).
Compatibility mode: PostMark's commands and their units (sizes in bytes,
`set location`s as targets), not fsbench's common grammar.
Unlike PostMark, bad commands and values are errors (exit 2), not \"Eh?\".";

/// PostMark's startup file when no CONFIG is given.
const STARTUP_FILE: &str = ".pmrc";

#[derive(Debug, Args)]
#[command(after_help = POSTMARK_EXAMPLES)]
pub struct PostmarkArgs {
    /// PostMark configuration file (default: .pmrc in the current directory, if any).
    #[arg(value_name = "CONFIG")]
    config: Option<PathBuf>,
    #[command(flatten)]
    keep: KeepFlag,
    /// Run shell escapes (`!command`) read from CONFIG, `load`ed files or
    /// piped stdin, as PostMark does; without it they are refused (typed
    /// at the pm> prompt they always run).
    #[arg(long)]
    allow_shell: bool,
    #[command(flatten)]
    sync_log: SyncLogArgs,
}

impl PostmarkArgs {
    fn run(self, json: Option<&Path>) -> anyhow::Result<()> {
        let mut runner = DrivenRunner {
            recording: Recording::new(new_run_result(&new_run_id()), json),
            keep: self.keep.keep,
            sync_log: self.sync_log.config(),
            runs: 0,
        };
        // Report files named in a file go where `fsbench run` saves. The
        // locations are not known yet (they come from the commands), and
        // without a data home PostMark's own place, the current directory,
        // is kept: its `fsbench-results`.
        let policy = Policy {
            allow_shell: self.allow_shell,
            results_dir: results_dir(&ResultsEnv::of_process(), &[])?,
        };
        let startup = self.config.or_else(|| {
            let pmrc = PathBuf::from(STARTUP_FILE);
            pmrc.exists().then_some(pmrc)
        });
        run_session(&mut runner, startup.as_deref(), policy)?;
        match (json, runner.runs) {
            (Some(path), 0) => stderr_line!(
                "fsbench: no 'run' command, so nothing was written to {}",
                path.display()
            ),
            // The session's end is the record's (on stdout: its only copy).
            (_, 0) => {}
            _ => runner.recording.finish()?,
        }
        Ok(())
    }
}

/// A PostMark workload from a suite entry's `set` commands and flags (the
/// sync log's); it runs in each target's scratch directory (so `set
/// location` is refused) and its `run` is implicit. The commands are
/// written ones: the policy says what they may do.
fn suite_workload(input: &EntryInput<'_>) -> anyhow::Result<Box<dyn Workload>> {
    let sync_log = parse_flags::<SyncLogArgs>(input.args)?.config();
    let config = config_of(input.commands, input.policy)?;
    if !config.locations.is_empty() {
        return usage("set location: in a suite, PostMark runs in each target; remove the line");
    }
    Ok(Box::new(Postmark::new(
        config,
        sync_log,
        input.host.ram_bytes,
    )?))
}
