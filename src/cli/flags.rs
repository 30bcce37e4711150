//! Flags shared by the commands that run workloads, and a suite entry's
//! `args` parsed by its subcommand's own clap definition, so suites and
//! the command line share one vocabulary and one set of checks.
use std::path::PathBuf;

use clap::{Args, Parser};

use super::output::first_line;
use crate::error::usage;
use crate::results::{ResultsEnv, results_dir};

/// How a single-workload command runs: repetitions, scratch data kept or
/// not, progress lines or not.
pub struct Single {
    pub repetitions: u32,
    pub keep: bool,
    pub quiet: bool,
}

/// How a single-workload command runs (a suite decides these itself).
/// The letters are the grammar's (docs/grammar.md): `-r` repeats,
/// `-q` quiets, in `fsbench run` too.
#[derive(Debug, Args)]
pub struct RunFlags {
    /// Run everything N times.
    #[arg(short = 'r', long, value_name = "N", default_value_t = 1)]
    pub repeat: u32,
    /// Print less: no progress (and no interval lines).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    #[command(flatten)]
    pub keep: KeepFlag,
}

/// `--min-effect`, for every command that gives a verdict.
#[derive(Debug, Args)]
pub struct MinEffectFlag {
    /// The smallest difference the verdict counts, e.g. 5% (0: every
    /// significant one) [default: the run's, else 5%]: a smaller one, even
    /// significant, is no practical difference.
    #[arg(long, value_name = "PERCENT", allow_hyphen_values = true)]
    pub min_effect: Option<String>,
}

impl MinEffectFlag {
    /// The fraction asked for, if any; 0 counts every significant
    /// difference.
    pub fn fraction(&self) -> anyhow::Result<Option<f64>> {
        let Some(text) = self.min_effect.as_deref() else {
            return Ok(None);
        };
        let zero = text.trim().trim_end_matches('%').trim_end().parse::<f64>() == Ok(0.0);
        match zero {
            true => Ok(Some(0.0)),
            false => {
                crate::analysis::precision::parse_percentage_of("--min-effect", text).map(Some)
            }
        }
    }

    /// The result with the verdict's minimum effect set, when one was given.
    pub fn apply(&self, run: &mut crate::result::RunResult) -> anyhow::Result<()> {
        if let Some(fraction) = self.fraction()? {
            run.min_effect = Some(fraction);
        }
        Ok(())
    }
}

/// `--keep`, for every command that makes scratch directories.
/// `--dir DIR`: the directory saved runs are read from.
#[derive(Debug, Args)]
pub struct ResultsDirFlag {
    /// The results directory [default: `fsbench run`'s,
    /// $XDG_DATA_HOME/fsbench/results].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

impl ResultsDirFlag {
    /// The directory given, or `fsbench run`'s (never refused: nothing is
    /// measured where it is).
    pub fn resolve(&self) -> anyhow::Result<PathBuf> {
        match &self.dir {
            Some(dir) => Ok(dir.clone()),
            None => results_dir(&ResultsEnv::of_process(), &[]),
        }
    }
}

#[derive(Debug, Args)]
pub struct KeepFlag {
    /// Keep the scratch data instead of removing it.
    #[arg(long)]
    pub keep: bool,
}

impl RunFlags {
    /// The run as the flags ask for it; `--repeat 0` runs nothing.
    pub fn single(&self) -> anyhow::Result<Single> {
        Ok(Single {
            repetitions: crate::session::spec::check_repeat(self.repeat)?,
            keep: self.keep.keep,
            quiet: self.quiet,
        })
    }

    /// Refuses them in a suite entry: the suite decides repetitions,
    /// output and what is kept.
    pub fn refuse_in_suite(&self) -> anyhow::Result<()> {
        refuse_in_suite("--repeat", self.repeat != 1, "use fsbench run --repeat")?;
        refuse_in_suite("-q", self.quiet, "fsbench run decides it")?;
        self.keep.refuse_in_suite()
    }
}

impl KeepFlag {
    pub fn refuse_in_suite(&self) -> anyhow::Result<()> {
        refuse_in_suite("--keep", self.keep, "use fsbench run --keep")
    }
}

/// The one target of a single-workload command: positional, or `-t` as
/// in `fsbench run` (not both).
#[derive(Debug, Args)]
pub struct OneTarget {
    /// Directory to test; `name=path` names it in reports.
    #[arg(value_name = "[NAME=]PATH")]
    target: Option<String>,
    /// The directory to test, as a flag (same as the positional one).
    #[arg(
        short = 't',
        long = "target",
        value_name = "[NAME=]PATH",
        conflicts_with = "target"
    )]
    target_flag: Option<String>,
}

impl OneTarget {
    /// The target as given, however it was given.
    pub fn spec(&self) -> Option<&str> {
        self.target.as_deref().or(self.target_flag.as_deref())
    }
}

/// The targets of a command that takes several: positional ones, then
/// `-t` ones, in the order given.
#[derive(Debug, Args)]
pub struct Targets {
    /// Directories, here or with -t (these come first); `name=path` names
    /// one in reports.
    #[arg(value_name = "[NAME=]PATH")]
    targets: Vec<String>,
    /// A directory, as a flag; repeat for several.
    #[arg(short = 't', long = "target", value_name = "[NAME=]PATH")]
    target_flags: Vec<String>,
}

impl Targets {
    /// Every target given, positional ones first.
    pub fn specs(&self) -> Vec<String> {
        self.targets
            .iter()
            .chain(&self.target_flags)
            .cloned()
            .collect()
    }

    /// The targets given, or the current directory when none is.
    pub fn specs_or_here(&self) -> Vec<String> {
        match self.specs() {
            specs if specs.is_empty() => vec![".".to_string()],
            specs => specs,
        }
    }
}

#[derive(Debug, Parser)]
#[command(no_binary_name = true, disable_help_flag = true)]
struct Flags<A: Args> {
    #[command(flatten)]
    inner: A,
}

/// Parses `args` as the flags of `fsbench <kind>`; an error is clap's
/// first line (which names the offending flag or value).
pub fn parse_flags<A: Args>(args: &[String]) -> anyhow::Result<A> {
    match Flags::<A>::try_parse_from(args) {
        Ok(flags) => Ok(flags.inner),
        Err(e) => usage(first_line(&e.render().to_string()).to_string()),
    }
}

/// Refuses flags that a suite decides itself (target, repetitions, output).
pub fn refuse_in_suite(flag: &str, given: bool, why: &str) -> anyhow::Result<()> {
    match given {
        true => usage(format!("{flag} is not for suites: {why}")),
        false => Ok(()),
    }
}
