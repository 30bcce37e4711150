//! A suite entry's `args` parsed by the subcommand's own clap definition,
//! so suites and the command line share one vocabulary and one set of
//! checks.
use clap::{Args, Parser};

use super::output::first_line;
use crate::error::usage;

#[derive(Debug, Parser)]
#[command(no_binary_name = true, disable_help_flag = true)]
struct Flags<A: Args> {
    #[command(flatten)]
    inner: A,
}

/// Parses `args` as the flags of `fsbench <kind>`; an error is clap's
/// first line (which names the offending flag or value).
pub(super) fn parse_flags<A: Args>(args: &[String]) -> anyhow::Result<A> {
    match Flags::<A>::try_parse_from(args) {
        Ok(flags) => Ok(flags.inner),
        Err(e) => usage(first_line(&e.render().to_string()).to_string()),
    }
}

/// Refuses flags that a suite decides itself (target, repetitions, output).
pub(super) fn refuse_in_suite(flag: &str, given: bool, why: &str) -> anyhow::Result<()> {
    match given {
        true => usage(format!("{flag} is not for suites: {why}")),
        false => Ok(()),
    }
}
