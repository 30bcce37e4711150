//! A PostMark session: settings that persist from command to command, and
//! the commands themselves, whether they come from a configuration file,
//! `load`, stdin or the `pm>` prompt. What a `run` does on disk is the
//! [`Runner`]'s business, so the language can be tested without one.
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use anyhow::Context;

use super::command::{self, COMMANDS, Command, LocationChange, ReportFormat, Setting};
use super::printout::{self, scale_size};
use crate::error::{UsageError, usage};
use crate::input::{self, read_input_file};
use crate::policy::{Origin, Policy, ReportFile};
use crate::workload::postmark::{PostmarkConfig, RunSummary};

/// Performs `run` commands.
pub trait Runner {
    /// Runs the workload once, printing PostMark's progress lines to `out`.
    fn run(&mut self, config: &PostmarkConfig, out: &mut dyn Write) -> anyhow::Result<RunSummary>;
}

/// Whether to go on reading commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

/// How deeply `load`ed files may load others (a file that loads itself
/// would otherwise never end).
const MAX_LOAD_DEPTH: u32 = 16;

pub struct Session<'a> {
    pub config: PostmarkConfig,
    pub report: ReportFormat,
    runner: &'a mut dyn Runner,
    out: &'a mut dyn Write,
    policy: Policy,
    load_depth: u32,
}

impl<'a> Session<'a> {
    pub fn new(runner: &'a mut dyn Runner, out: &'a mut dyn Write, policy: Policy) -> Self {
        Session {
            config: PostmarkConfig::default(),
            report: ReportFormat::Verbose,
            runner,
            out,
            policy,
            load_depth: 0,
        }
    }

    /// Executes one line, with what its `origin` allows.
    pub fn execute(&mut self, line: &str, origin: Origin) -> anyhow::Result<Flow> {
        crate::interrupt::check()?;
        let Some(command) = command::parse(line)? else {
            return Ok(Flow::Continue);
        };
        // A refusal quotes the line: the file and line number come from the caller.
        let refused = |why: String| UsageError(format!("'{}': {why}", line.trim()));
        match command {
            Command::Set(setting) => self.apply(setting)?,
            Command::Run { report_file: name } => {
                let file = self.report_file(name, origin).map_err(refused)?;
                self.run(file.as_ref())?
            }
            Command::Load(file) => self.load(&file)?,
            Command::Show { file: name } => {
                let file = self.report_file(name, origin).map_err(refused)?;
                self.emit(file.as_ref(), &self.show_text())?
            }
            Command::Help(prefix) => self.emit(None, &help_text(&prefix))?,
            Command::Quit => return Ok(Flow::Quit),
            Command::Shell(command) => {
                self.policy.check_shell(origin).map_err(refused)?;
                self.shell(command.as_deref())?
            }
        }
        Ok(Flow::Continue)
    }

    /// The file a `run` or `show` appends to, if it names one.
    fn report_file(
        &self,
        name: Option<String>,
        origin: Origin,
    ) -> Result<Option<ReportFile>, String> {
        name.map(|name| self.policy.report_file(&name, origin))
            .transpose()
    }

    /// Executes a configuration file line by line; an error names the
    /// file and line. Returns `Quit` if the file says `quit`.
    pub fn execute_file(&mut self, path: &Path) -> anyhow::Result<Flow> {
        let text = read_input_file(path, input::POSTMARK_CONFIG)?;
        for (index, line) in text.lines().enumerate() {
            let flow = self
                .execute(line, Origin::Written)
                .with_context(|| format!("{}:{}", path.display(), index + 1))?;
            if flow == Flow::Quit {
                return Ok(Flow::Quit);
            }
        }
        Ok(Flow::Continue)
    }

    fn apply(&mut self, setting: Setting) -> anyhow::Result<()> {
        let c = &mut self.config;
        match setting {
            Setting::Size { low, high } => (c.size_low, c.size_high) = (low, high),
            Setting::Number(n) => c.number = n,
            Setting::Seed(seed) => c.seed = seed,
            Setting::Transactions(n) => c.transactions = n,
            Setting::Location(change) => change_locations(c, change)?,
            Setting::Subdirectories(n) => c.subdirectories = n,
            Setting::ReadBlock(n) => c.read_block = n,
            Setting::WriteBlock(n) => c.write_block = n,
            Setting::Buffering(on) => c.buffered = on,
            Setting::BiasRead(bias) => c.bias_read = bias,
            Setting::BiasCreate(bias) => c.bias_create = bias,
            Setting::Report(format) => self.report = format,
            Setting::Threads(n) => c.threads = n,
        }
        Ok(())
    }

    /// `load FILE`: a `quit` in it ends that file only, as in PostMark.
    fn load(&mut self, file: &str) -> anyhow::Result<()> {
        if self.load_depth >= MAX_LOAD_DEPTH {
            return usage(format!(
                "load {file}: files load each other more than {MAX_LOAD_DEPTH} levels deep"
            ));
        }
        self.load_depth += 1;
        let result = self.execute_file(Path::new(file));
        self.load_depth -= 1;
        result.map(|_| ())
    }

    /// `run [FILE]`. The report file is opened first, so a bad name costs
    /// no run (PostMark runs, then prints the report to stdout instead).
    fn run(&mut self, report_file: Option<&ReportFile>) -> anyhow::Result<()> {
        // Under MPI rank 0 alone writes reports (the others' output is a sink).
        let mut file = report_file
            .filter(|_| crate::scale::is_root())
            .map(|report| report.open().map(|file| (&report.name, file)))
            .transpose()?;
        let summary = self.runner.run(&self.config, &mut *self.out)?;
        let text = match self.report {
            ReportFormat::Verbose => printout::verbose(&summary),
            ReportFormat::Terse => printout::terse(&summary),
        };
        match &mut file {
            Some((name, file)) => file
                .write_all(text.as_bytes())
                .with_context(|| format!("cannot write the report to '{name}'")),
            None => self.write_out(&text),
        }
    }

    /// Text to `file` (appended) or to the session's output.
    fn emit(&mut self, file: Option<&ReportFile>, text: &str) -> anyhow::Result<()> {
        match file {
            Some(report) => report
                .open()?
                .write_all(text.as_bytes())
                .with_context(|| format!("cannot write to '{}'", report.name)),
            None => self.write_out(text),
        }
    }

    fn write_out(&mut self, text: &str) -> anyhow::Result<()> {
        self.out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.flush())
            .context("cannot write to standard output")
    }

    /// `!command`, or `!` for an interactive `$SHELL`. Its exit status is
    /// its own business, as in PostMark.
    fn shell(&mut self, command: Option<&str>) -> anyhow::Result<()> {
        self.write_out("")?;
        let mut process = match command {
            Some(command) => {
                let mut sh = std::process::Command::new("/bin/sh");
                sh.arg("-c").arg(command);
                sh
            }
            None => std::process::Command::new(
                std::env::var_os("SHELL").unwrap_or_else(|| "/bin/sh".into()),
            ),
        };
        process.status().context("cannot start the shell")?;
        Ok(())
    }

    /// `show`: PostMark's listing (all of it to the same place; PostMark
    /// prints the location lines to stdout even when writing to a file).
    pub fn show_text(&self) -> String {
        let c = &self.config;
        let mut text = String::from("Current configuration is:\n");
        let _ = writeln!(text, "The base number of files is {}", c.number);
        let _ = writeln!(text, "Transactions: {}", c.transactions);
        let _ = if c.size_low == c.size_high {
            writeln!(text, "Files are {} in size", scale_size(c.size_low))
        } else {
            writeln!(
                text,
                "Files range between {} and {} in size",
                scale_size(c.size_low),
                scale_size(c.size_high)
            )
        };
        match c.locations.as_slice() {
            [] => {
                let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
                let _ = writeln!(text, "Working directory: {}", cwd.display());
            }
            locations => {
                let plural = if locations.len() > 1 { "ies" } else { "y" };
                let _ = writeln!(text, "Working director{plural}: ");
                for location in locations {
                    let _ = writeln!(text, "\t{} (weight={})", location.path, location.weight);
                }
            }
        }
        if c.subdirectories > 0 {
            let plural = if c.subdirectories > 1 { "ies" } else { "y" };
            let _ = writeln!(
                text,
                "{} subdirector{plural} will be used",
                c.subdirectories
            );
        }
        let _ = writeln!(
            text,
            "Block sizes are: read={}, write={}",
            scale_size(c.read_block),
            scale_size(c.write_block)
        );
        let bias = |b: Option<u32>| b.map_or(-1, i64::from);
        let _ = writeln!(
            text,
            "Biases are: read/append={}, create/delete={}",
            bias(c.bias_read),
            bias(c.bias_create)
        );
        let using = if c.buffered { "Using" } else { "Not using" };
        let _ = writeln!(text, "{using} Unix buffered file I/O");
        let _ = writeln!(text, "Random number generator seed is {}", c.seed);
        let _ = writeln!(text, "Report format is {}.", self.report.name());
        if c.threads > 1 {
            let _ = writeln!(
                text,
                "{} independent instances will be run (seeds {} to {})",
                c.threads,
                c.instance_seed(0),
                c.instance_seed(c.threads - 1)
            );
        }
        text
    }
}

fn change_locations(config: &mut PostmarkConfig, change: LocationChange) -> anyhow::Result<()> {
    match change {
        LocationChange::Replace(location) => config.locations = vec![location],
        LocationChange::Add(location) => config.locations.push(location),
        LocationChange::Remove(path) => {
            let Some(index) = config.locations.iter().position(|l| l.path == path) else {
                return usage(format!("cannot find location '{path}'"));
            };
            config.locations.remove(index);
        }
    }
    Ok(())
}

/// `help [PREFIX]`: the commands starting with PREFIX, or all of them.
pub fn help_text(prefix: &str) -> String {
    let matching: Vec<_> = COMMANDS
        .iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .collect();
    let shown = if matching.is_empty() {
        COMMANDS.iter().collect()
    } else {
        matching
    };
    shown
        .into_iter()
        .map(|(name, help)| format!("{name} - {help}\n"))
        .collect()
}

/// The configuration a suite's PostMark commands set up: `set` commands
/// only, written ones (`policy` decides what they may do); a `run` among
/// them is a mistake, since the suite runs PostMark itself.
pub fn config_of(commands: &[String], policy: &Policy) -> anyhow::Result<PostmarkConfig> {
    let mut runner = NoRun;
    let mut sink = std::io::sink();
    let mut session = Session::new(&mut runner, &mut sink, policy.clone());
    for line in commands {
        session.execute(line, Origin::Written)?;
    }
    Ok(session.config.clone())
}

struct NoRun;

impl Runner for NoRun {
    fn run(&mut self, _: &PostmarkConfig, _: &mut dyn Write) -> anyhow::Result<RunSummary> {
        crate::error::usage("'run' is implicit in a suite: list only set commands")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::postmark::Location;

    /// Remembers the configurations it was asked to run.
    #[derive(Default)]
    struct FakeRunner {
        runs: Vec<PostmarkConfig>,
    }

    impl Runner for FakeRunner {
        fn run(
            &mut self,
            config: &PostmarkConfig,
            out: &mut dyn Write,
        ) -> anyhow::Result<RunSummary> {
            self.runs.push(config.clone());
            out.write_all(b"Creating files...Done\n")?;
            Ok(RunSummary::example(
                [500, 264, 243, 257, 236, 528],
                1_430_770,
                4_662_068,
                500,
            ))
        }
    }

    /// Nothing written in a file may run a shell; report files it names go
    /// to ./fsbench-results.
    fn test_policy() -> Policy {
        Policy {
            allow_shell: false,
            results_dir: crate::results::RESULTS_DIR.into(),
        }
    }

    /// Executes `lines`, typed at the prompt, in a fresh session; returns
    /// the runs, the output and the final session state (config, report
    /// format).
    fn session(lines: &[&str]) -> (Vec<PostmarkConfig>, String, PostmarkConfig, ReportFormat) {
        let mut runner = FakeRunner::default();
        let mut out = Vec::new();
        let (config, format) = {
            let mut session = Session::new(&mut runner, &mut out, test_policy());
            for line in lines {
                if session.execute(line, Origin::Prompt).unwrap() == Flow::Quit {
                    break;
                }
            }
            (session.config.clone(), session.report)
        };
        (runner.runs, String::from_utf8(out).unwrap(), config, format)
    }

    fn at(path: &str, weight: u32) -> Location {
        Location {
            path: path.into(),
            weight,
        }
    }

    #[test]
    fn settings_persist_and_reach_the_run() {
        let (runs, out, _, _) = session(&[
            "set number 5000",
            "set transactions 5000",
            "set buffering false",
            "run",
            "set seed 7",
            "run",
        ]);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].number, 5000);
        assert_eq!(runs[0].transactions, 5000);
        assert!(!runs[0].buffered);
        assert_eq!(runs[0].seed, 42);
        assert_eq!(runs[1].seed, 7);
        assert!(out.starts_with("Creating files...Done\nTime:\n"), "{out}");
    }

    #[test]
    fn quit_stops_and_terse_reports_are_one_line() {
        let (runs, out, _, format) = session(&["set report terse", "run", "quit", "run"]);
        assert_eq!(runs.len(), 1);
        assert_eq!(format, ReportFormat::Terse);
        assert_eq!(out.lines().count(), 2, "{out}");
    }

    #[test]
    fn locations_are_replaced_added_and_removed() {
        let (_, _, config, _) = session(&[
            "set location /a 3",
            "set location +/b",
            "set location +/c 2",
            "set location -/b",
        ]);
        assert_eq!(config.locations, [at("/a", 3), at("/c", 2)]);
        let (_, _, config, _) = session(&["set location +/x", "set location /y"]);
        assert_eq!(config.locations, [at("/y", 1)]);
        let mut runner = FakeRunner::default();
        let mut out = Vec::new();
        let mut session = Session::new(&mut runner, &mut out, test_policy());
        let e = session
            .execute("set location -/nowhere", Origin::Prompt)
            .unwrap_err();
        assert_eq!(e.to_string(), "cannot find location '/nowhere'");
    }

    #[test]
    fn show_lists_the_configuration_like_postmark() {
        let (_, out, _, _) = session(&[
            "set location /mnt/a 3",
            "set location +/mnt/b",
            "set subdirectories 10",
            "set size 1000",
            "set bias read -1",
            "set buffering false",
            "set threads 4",
            "show",
        ]);
        let expected = "Current configuration is:\n\
            The base number of files is 500\n\
            Transactions: 500\n\
            Files are 1000 bytes in size\n\
            Working directories: \n\
            \t/mnt/a (weight=3)\n\
            \t/mnt/b (weight=1)\n\
            10 subdirectories will be used\n\
            Block sizes are: read=512 bytes, write=512 bytes\n\
            Biases are: read/append=-1, create/delete=5\n\
            Not using Unix buffered file I/O\n\
            Random number generator seed is 42\n\
            Report format is verbose.\n\
            4 independent instances will be run (seeds 42 to 45)\n";
        assert_eq!(out, expected);
        let (_, out, _, _) = session(&["show"]);
        assert!(out.contains("Files range between 500 bytes and 9.77 kilobytes in size\n"));
        assert!(out.contains("Working directory: /"), "{out}");
    }

    #[test]
    fn help_matches_by_prefix() {
        assert_eq!(
            help_text("set b"),
            "set buffering - Sets usage of buffered I/O\n\
             set bias read - Sets the chance of choosing read over append\n\
             set bias create - Sets the chance of choosing create over delete\n"
        );
        assert_eq!(help_text("").lines().count(), COMMANDS.len());
        assert_eq!(help_text("nothing like it"), help_text(""));
        assert!(help_text("").starts_with("set size - Sets low and high bounds of files\n"));
    }

    #[test]
    fn files_report_the_failing_line_and_load_ends_at_its_own_quit() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("inner.cfg");
        std::fs::write(&inner, "set number 77\nquit\nset number 99\n").unwrap();
        let outer = dir.path().join("outer.cfg");
        let text = format!(
            "# PostMark\r\n\r\nload {}\r\nset seed 5\r\n",
            inner.display()
        );
        std::fs::write(&outer, text).unwrap();
        let mut runner = FakeRunner::default();
        let mut out = Vec::new();
        let mut session = Session::new(&mut runner, &mut out, test_policy());
        assert_eq!(session.execute_file(&outer).unwrap(), Flow::Continue);
        assert_eq!((session.config.number, session.config.seed), (77, 5));

        let bad = dir.path().join("bad.cfg");
        std::fs::write(&bad, "set number 10\nset nubmer 5000\n").unwrap();
        let e = session.execute_file(&bad).unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some());
        let message = format!("{e:#}");
        assert!(
            message.starts_with(&format!("{}:2: unknown setting", bad.display())),
            "{message}"
        );
        let missing = dir.path().join("missing.cfg");
        let e = session.execute_file(&missing).unwrap_err().to_string();
        assert!(e.starts_with("cannot read configuration file"), "{e}");
    }

    #[test]
    fn a_file_that_loads_itself_is_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("loop.cfg");
        std::fs::write(&path, format!("load {}\n", path.display())).unwrap();
        let mut runner = FakeRunner::default();
        let mut out = Vec::new();
        let mut session = Session::new(&mut runner, &mut out, test_policy());
        let e = format!("{:#}", session.execute_file(&path).unwrap_err());
        assert!(e.contains("more than 16 levels deep"), "{e}");
    }

    #[test]
    fn run_and_show_append_to_files() {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report.txt");
        let name = report.to_str().unwrap();
        let run = format!("run {name}");
        let show = format!("show {name}");
        let (runs, out, _, _) = session(&["set report terse", &run, &run, &show]);
        assert_eq!(runs.len(), 2);
        assert_eq!(out, "Creating files...Done\nCreating files...Done\n");
        let text = std::fs::read_to_string(&report).unwrap();
        assert_eq!(text.lines().count(), 2 + 10, "{text}");
        let mut runner = FakeRunner::default();
        let mut out = Vec::new();
        let mut session = Session::new(&mut runner, &mut out, test_policy());
        let bad = format!("run {}", dir.path().join("no/such/dir").display());
        let e = session
            .execute(&bad, Origin::Prompt)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cannot direct output to file"), "{e}");
        assert!(runner.runs.is_empty(), "no run after a bad report file");
    }
}
