//! `fsbench postmark [CONFIG]`: PostMark's command language and workload.
//! Commands come from CONFIG (or `.pmrc`), then from stdin: at a `pm>`
//! prompt on a terminal, else line by line as PostMark reads them.
use std::io::{BufReader, IsTerminal, Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use super::flags::parse_flags;
use super::synclog::SyncLogArgs;
use crate::compat::postmark::policy::{Origin, Policy};
use crate::compat::postmark::session::{Flow, Runner, Session};
use crate::error::{Interrupted, usage};
use crate::input::{self, read_bounded_line};
use crate::result::{RESULTS_DIR, RunResult, TargetResult};
use crate::runner::{new_run_id, new_run_result, show_scale_out, write_json};
use crate::scale;
use crate::size::format_bytes;
use crate::storage::Target;
use crate::storage::env::probe_target;
use crate::storage::scratch::Scratch;
use crate::workload::Workload;
use crate::workload::postmark::{
    self as workload, LocationDir, LogPlan, Postmark, PostmarkConfig, RunSummary,
};
use crate::workload::synclog::{LogSpace, SyncLogConfig};

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
Unlike PostMark, bad commands and values are errors (exit 2), not \"Eh?\".";

const MPI_NEEDS_CONFIG: &str =
    "under MPI, give the commands in a CONFIG file: stdin reaches rank 0 alone";

const RANK_0_REPORT: &str = "fsbench: the PostMark report below is rank 0's own; \
the aggregate of all ranks is in the tables on stderr and in the JSON";

/// PostMark's startup file when no CONFIG is given.
const STARTUP_FILE: &str = ".pmrc";

#[derive(Debug, Args)]
#[command(after_help = POSTMARK_EXAMPLES)]
pub struct PostmarkArgs {
    /// PostMark configuration file (default: .pmrc in the current directory, if any).
    #[arg(value_name = "CONFIG")]
    config: Option<PathBuf>,
    /// Keep the scratch directories (and the sync log) instead of removing them.
    #[arg(long)]
    keep: bool,
    /// Run shell escapes (`!command`) read from CONFIG, `load`ed files or
    /// piped stdin, as PostMark does; without it they are refused (typed
    /// at the pm> prompt they always run).
    #[arg(long)]
    allow_shell: bool,
    #[command(flatten)]
    sync_log: SyncLogArgs,
}

pub fn run(args: PostmarkArgs, json: Option<&Path>) -> anyhow::Result<()> {
    let run_id = new_run_id();
    let mut runner = ScratchRunner {
        record: new_run_result(&run_id),
        run_id,
        keep: args.keep,
        sync_log: args.sync_log.config(),
        json,
        runs: 0,
    };
    let mut stdout = scale::root_stdout();
    let policy = Policy {
        allow_shell: args.allow_shell,
        results_dir: RESULTS_DIR.into(),
    };
    let mut session = Session::new(&mut runner, &mut stdout, policy);
    let startup = args.config.or_else(|| {
        let pmrc = PathBuf::from(STARTUP_FILE);
        pmrc.exists().then_some(pmrc)
    });
    let flow = match startup {
        Some(path) => session.execute_file(&path)?,
        None if scale::size() > 1 => return usage(MPI_NEEDS_CONFIG),
        None => Flow::Continue,
    };
    // Under MPI stdin reaches rank 0 alone: every rank runs the file only.
    if flow == Flow::Continue && scale::size() == 1 {
        read_stdin(&mut session)?;
    }
    drop(session);
    match (json, runner.runs) {
        (Some(path), 0) => eprintln!(
            "fsbench: no 'run' command, so nothing was written to {}",
            path.display()
        ),
        // On stdout, the record of the whole session comes once, at its end.
        (Some(path), _) if is_stdout(path) => write_json(&runner.record, path)?,
        _ => {}
    }
    Ok(())
}

/// `--json -`.
fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Commands from stdin. On a terminal: a `pm>` prompt, and an error
/// is shown and the session goes on; otherwise an error ends it.
fn read_stdin(session: &mut Session<'_>) -> anyhow::Result<()> {
    let interactive = std::io::stdin().is_terminal();
    let origin = match interactive {
        true => Origin::Prompt,
        false => Origin::Written,
    };
    let mut stdout = std::io::stdout();
    let mut say = |text: &str| {
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
            .context("cannot write to standard output")
    };
    if interactive {
        say(&format!(
            "fsbench {} PostMark mode: PostMark 1.53's commands ('help' lists them)\n",
            env!("CARGO_PKG_VERSION")
        ))?;
    }
    let mut lines = StdinLines::new();
    for number in 1.. {
        if interactive {
            say("pm>")?;
        }
        let Some(line) = lines.next_line()? else {
            break;
        };
        match session.execute(&line, origin) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Quit) => break,
            Err(e) if interactive && e.downcast_ref::<Interrupted>().is_none() => {
                eprintln!("fsbench: error: {}", crate::error::error_line(&e));
            }
            Err(e) => return Err(e.context(format!("<stdin>:{number}"))),
        }
    }
    Ok(())
}

/// stdin, line by line, waiting in short polls so that Ctrl-C at the
/// prompt ends the session at once.
struct StdinLines {
    reader: BufReader<RawStdin>,
}

struct RawStdin;

impl Read for RawStdin {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Ok(rustix::io::read(std::io::stdin().as_fd(), buf)?)
    }
}

impl StdinLines {
    fn new() -> Self {
        StdinLines {
            reader: BufReader::new(RawStdin),
        }
    }

    /// The next line, None at end of input.
    fn next_line(&mut self) -> anyhow::Result<Option<String>> {
        while self.reader.buffer().is_empty() && !stdin_ready()? {
            crate::interrupt::check()?;
        }
        read_bounded_line(&mut self.reader, "<stdin>", input::COMMAND_LINE)
    }
}

/// True when stdin has input (or end of input) within 200 ms.
fn stdin_ready() -> anyhow::Result<bool> {
    let mut poll = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, and its count.
    match unsafe { libc::poll(&mut poll, 1, 200) } {
        -1 => {
            let e = std::io::Error::last_os_error();
            match e.kind() {
                std::io::ErrorKind::Interrupted => Ok(false),
                _ => Err(e).context("cannot wait for stdin"),
            }
        }
        ready => Ok(ready > 0),
    }
}

/// Runs each `run` in fresh scratch directories, one per location, and
/// keeps the JSON record of every run so far (rewritten after each).
struct ScratchRunner<'a> {
    record: RunResult,
    run_id: String,
    keep: bool,
    sync_log: Option<SyncLogConfig>,
    json: Option<&'a Path>,
    runs: u32,
}

impl Runner for ScratchRunner<'_> {
    fn run(&mut self, config: &PostmarkConfig, out: &mut dyn Write) -> anyhow::Result<RunSummary> {
        check_memory(config, self.record.host.ram_bytes)?;
        let targets = targets_of(config)?;
        for (index, target) in targets.iter().enumerate() {
            // A log placed on the target lives in the first location, one
            // per rank like the files.
            let log = match (index, &self.sync_log) {
                (0, Some(log)) => log.space_on_target(config.log_volume()),
                _ => LogSpace::default(),
            };
            target.check(
                config.planned_bytes(index) + log.bytes,
                config.planned_files(index) + log.files,
            )?;
        }
        if let Some(log) = &self.sync_log {
            log.check(config.log_volume())?;
        }
        let envs: Vec<_> = targets.iter().map(|t| probe_target(&t.path).ok()).collect();
        // Later runs of a session get their own directories, so `--keep`
        // can keep them all.
        let scratch_id = scale::scratch_id(&match self.runs {
            0 => self.run_id.clone(),
            n => format!("{}-{}", self.run_id, n + 1),
        })?;
        let scratches = scale::agree(
            targets
                .iter()
                .map(|t| Scratch::create(&t.path, &scratch_id, self.keep))
                .collect::<anyhow::Result<Vec<_>>>(),
        )?;
        let dirs: Vec<LocationDir<'_>> = targets
            .iter()
            .zip(&scratches)
            .map(|(target, scratch)| LocationDir {
                name: &target.name,
                dir: scratch.dir(),
            })
            .collect();
        let log = self.sync_log.as_ref().map(|config| LogPlan {
            config,
            home: &scratches[0],
            repetition: self.runs,
        });
        let summary = workload::run(config, &dirs, log, out)?;
        if scale::size() > 1 {
            writeln!(out, "{RANK_0_REPORT}").context("cannot write to standard output")?;
        }
        drop(dirs);
        let mut results = Vec::new();
        for ((target, scratch), env) in targets.into_iter().zip(scratches).zip(envs) {
            let cleanup = scratch.finish();
            if let Some(unusual) = cleanup.as_ref().and_then(|c| c.unusual()) {
                eprintln!("fsbench: {}: {unusual}", target.name);
            }
            results.push(TargetResult {
                path: target.path.display().to_string(),
                name: target.name,
                env,
                workloads: Vec::new(),
                cleanup,
            });
        }
        // One workload spans every location: it is recorded once, under
        // the first; the others carry their environment and cleanup.
        let result = summary.to_workload_result(self.runs, self.record.host.ram_bytes);
        if let Some(result) = scale::combine(Ok(result))? {
            show_scale_out(&result)?;
            results[0].workloads.push(result);
        }
        self.record.targets.extend(results);
        self.record.finished = Some(chrono::Utc::now());
        self.runs += 1;
        // A file always holds every run so far, even if a later one fails.
        if let Some(path) = self.json.filter(|path| !is_stdout(path)) {
            write_json(&self.record, path)?;
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

/// Refuses a table and content buffer that would not fit in half of RAM
/// (PostMark would just fail to allocate, or swap).
fn check_memory(config: &PostmarkConfig, ram_bytes: u64) -> anyhow::Result<()> {
    let needed = config.memory_bytes();
    if ram_bytes > 0 && needed > ram_bytes / 2 {
        return usage(format!(
            "set number {} / set size {}: the run needs {} of memory; RAM is {}",
            config.number,
            config.size_high,
            format_bytes(needed),
            format_bytes(ram_bytes)
        ));
    }
    Ok(())
}

/// A PostMark workload from a suite entry's `set` commands and flags (the
/// sync log's); it runs in each target's scratch directory (so `set
/// location` is refused) and its `run` is implicit. The commands are
/// written ones: `policy` says what they may do.
pub(super) fn suite_workload(
    commands: &[String],
    args: &[String],
    policy: &Policy,
) -> anyhow::Result<Box<dyn Workload>> {
    let sync_log = parse_flags::<SyncLogArgs>(args)?.config();
    let mut runner = NoRun;
    let mut sink = std::io::sink();
    let mut session = Session::new(&mut runner, &mut sink, policy.clone());
    for line in commands {
        session.execute(line, Origin::Written)?;
    }
    let config = session.config.clone();
    if !config.locations.is_empty() {
        return usage("set location: in a suite, PostMark runs in each target; remove the line");
    }
    let ram_bytes = crate::storage::env::probe_host().ram_bytes;
    check_memory(&config, ram_bytes)?;
    Ok(Box::new(Postmark::new(config, sync_log, ram_bytes)))
}

/// Suites run PostMark themselves; a `run` among its commands is a mistake.
struct NoRun;

impl Runner for NoRun {
    fn run(&mut self, _: &PostmarkConfig, _: &mut dyn Write) -> anyhow::Result<RunSummary> {
        usage("'run' is implicit in a suite: list only set commands")
    }
}
