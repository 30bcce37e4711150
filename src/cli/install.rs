//! `fsbench completions SHELL` and `fsbench man [--dir DIR]`: the shell
//! completions and man pages a package installs, generated from the clap
//! definitions (`cli::command()`), so they never drift from the flags.
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Arg, Args, Command};
use clap_complete::Shell;
use roff::{Roff, roman};

use crate::console::{Stream, emit};
use crate::error::usage;

/// The shells fsbench writes completions for, by the name the user types.
const SHELLS: [(&str, Shell); 3] = [
    ("bash", Shell::Bash),
    ("zsh", Shell::Zsh),
    ("fish", Shell::Fish),
];

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh or fish. Install the script where the shell
    /// looks (bash: /usr/share/bash-completion/completions/fsbench) or
    /// load it at once: `source <(fsbench completions bash)`.
    #[arg(value_name = "SHELL", value_parser = ShellName)]
    shell: String,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write one page per command into DIR (fsbench.1, fsbench-run.1, ...)
    /// instead of printing fsbench(1) on standard output.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// `fsbench completions SHELL`: the completion script on standard output.
pub fn completions(args: CompletionsArgs, json: Option<&Path>) -> anyhow::Result<()> {
    refuse_json("completions", json)?;
    let shell = shell_named(&args.shell)?;
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut super::command(), "fsbench", &mut script);
    emit(Stream::Stdout, &String::from_utf8_lossy(&script))
}

/// `fsbench man`: fsbench(1) on standard output, or every page into `--dir`.
pub fn man(args: ManArgs, json: Option<&Path>) -> anyhow::Result<()> {
    refuse_json("man", json)?;
    match args.dir {
        Some(dir) => man_pages_into(&dir),
        None => emit(Stream::Stdout, &man_page()?),
    }
}

/// `--json` is global to the command line, but these commands measure
/// nothing: a result file asked for would silently not be written.
fn refuse_json(command: &str, json: Option<&Path>) -> anyhow::Result<()> {
    match json {
        Some(_) => usage(format!("--json: fsbench {command} has no result to write")),
        None => Ok(()),
    }
}

fn shell_named(name: &str) -> anyhow::Result<Shell> {
    match SHELLS.iter().find(|(known, _)| *known == name) {
        Some((_, shell)) => Ok(*shell),
        None => usage(format!(
            "no completions for shell '{name}': choose bash, zsh or fish"
        )),
    }
}

/// The roff source of fsbench(1): synopsis, options, the subcommands (each
/// with its own page, fsbench-run(1), ...), the examples and the version.
fn man_page() -> anyhow::Result<String> {
    let mut command = super::command();
    command.build();
    let man = clap_mangen::Man::new(command.clone().after_help(None::<&str>));
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    man.render_subcommands_section(&mut page)?;
    examples_section(&command).to_writer(&mut page)?;
    man.render_version_section(&mut page)?;
    // Each section comes with roff's definition of \*(Aq: keep the first.
    let page = String::from_utf8_lossy(&page).replace(AQ_DEFINITION, "");
    Ok(format!("{AQ_DEFINITION}{page}"))
}

/// How roff defines `\*(Aq`, the apostrophe, before what it renders.
const AQ_DEFINITION: &str = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";

/// The examples of `fsbench --help`, one per line as there (clap_mangen
/// would fill them into one paragraph).
fn examples_section(command: &Command) -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["EXAMPLES"]).control("nf", []);
    let examples = command
        .get_after_help()
        .map(ToString::to_string)
        .unwrap_or_default();
    for line in examples.lines().skip_while(|line| line.ends_with(':')) {
        roff.text([roman(line)]);
    }
    roff.control("fi", []);
    roff
}

/// fsbench.1 and one page per subcommand (fsbench-run.1, ...) into `dir`.
fn man_pages_into(dir: &Path) -> anyhow::Result<()> {
    if !dir.is_dir() {
        return usage(format!("--dir {}: not a directory", dir.display()));
    }
    let written = || -> std::io::Result<()> {
        std::fs::write(
            dir.join("fsbench.1"),
            man_page().map_err(std::io::Error::other)?,
        )?;
        let mut command = super::command().disable_help_subcommand(true);
        command.build();
        for subcommand in command.get_subcommands() {
            clap_mangen::Man::new(subcommand.clone()).generate_to(dir)?;
        }
        Ok(())
    };
    written().with_context(|| format!("cannot write the man pages into {}", dir.display()))?;
    emit(
        Stream::Stdout,
        &format!("man pages written to {}\n", dir.display()),
    )
}

/// Takes any shell name, so that a wrong one is fsbench's one-line usage
/// error (exit 2), while `--help` and the completions still offer the
/// known names.
#[derive(Clone)]
struct ShellName;

impl TypedValueParser for ShellName {
    type Value = String;

    fn parse_ref(
        &self,
        _: &Command,
        _: Option<&Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            SHELLS.iter().map(|(name, _)| PossibleValue::new(*name)),
        ))
    }
}
