//! Suites: TOML files listing workloads and their parameters, the input of
//! `fsbench run`. A workload's parameters are the flags of its subcommand
//! (`fsbench bonnie`, `io`, `tree`) or, for PostMark, its `set` commands
//! (and, as `args`, its flags: the sync log's), so one vocabulary serves
//! the command line and suite files. Built-in suites are embedded from
//! `suites/`.
pub mod plan;
pub mod scale;

use std::path::Path;

use serde::Deserialize;

use crate::error::{UsageError, usage};
use crate::input::{self, read_input_file};

/// The kind of the entry that cuts the configurations off (`fsbench
/// crash`'s flags as its `args`) rather than measuring a workload on them.
pub const CRASH: &str = "crash";

/// Built-in suites: name and TOML text.
const BUILTIN: [(&str, &str); 6] = [
    ("quick", include_str!("../../suites/quick.toml")),
    ("seeds", include_str!("../../suites/seeds.toml")),
    ("metadata", include_str!("../../suites/metadata.toml")),
    ("throughput", include_str!("../../suites/throughput.toml")),
    ("synclog", include_str!("../../suites/synclog.toml")),
    ("safety", include_str!("../../suites/safety.toml")),
];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// Where the suite came from: a built-in name or a file path.
    #[serde(skip)]
    pub name: String,
    /// The TOML it was read from, kept with the result (`--resume`).
    #[serde(skip)]
    pub text: String,
    #[serde(default)]
    pub description: String,
    /// Repetitions when `--repeat` is not given.
    #[serde(default = "one")]
    pub repeat: u32,
    #[serde(rename = "workload")]
    pub workloads: Vec<SuiteWorkload>,
}

fn one() -> u32 {
    1
}

/// One `[[workload]]` table: a workload as a suite lists it. Its kind is
/// checked when it is built (by the kind's entry in the registry).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteWorkload {
    pub kind: String,
    /// The name reports show; defaults to the kind.
    #[serde(default)]
    pub label: Option<String>,
    /// The subcommand's flags, as one string (split at blanks) or a list
    /// (for PostMark: `--sync-log` and its options).
    #[serde(default)]
    pub args: Args,
    /// PostMark `set` commands, one per item.
    #[serde(default)]
    pub commands: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(untagged)]
pub enum Args {
    #[default]
    None,
    Line(String),
    List(Vec<String>),
}

impl SuiteWorkload {
    pub fn label(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.kind)
    }

    /// The flags with `{...}` placeholders scaled by `factor`.
    pub fn scaled_args(&self, factor: f64) -> anyhow::Result<Vec<String>> {
        let tokens: Vec<String> = match &self.args {
            Args::None => Vec::new(),
            Args::Line(line) => line.split_whitespace().map(str::to_string).collect(),
            Args::List(list) => list.clone(),
        };
        tokens.iter().map(|t| scale::apply(t, factor)).collect()
    }

    /// The PostMark commands with `{...}` placeholders scaled by `factor`.
    pub fn scaled_commands(&self, factor: f64) -> anyhow::Result<Vec<String>> {
        self.commands
            .iter()
            .map(|c| scale::apply(c, factor))
            .collect()
    }
}

impl Suite {
    /// A built-in suite by name, or a TOML file by path.
    pub fn load(name_or_path: &str) -> anyhow::Result<Suite> {
        if let Some((name, text)) = BUILTIN.iter().find(|(name, _)| *name == name_or_path) {
            return Suite::parse(name, text);
        }
        let path = Path::new(name_or_path);
        if !path.exists() {
            return usage(format!(
                "suite '{name_or_path}' is neither a built-in suite ({}) nor a file",
                builtin_names().join(", ")
            ));
        }
        let text = read_input_file(path, input::SUITE)?;
        Suite::parse(name_or_path, &text)
    }

    /// Parses and checks a suite; errors name the suite and the entry.
    pub fn parse(name: &str, text: &str) -> anyhow::Result<Suite> {
        let mut suite: Suite =
            input::parse_toml(text).map_err(|e| UsageError(format!("suite {name}:{e}")))?;
        suite.name = name.to_string();
        suite.text = text.to_string();
        suite.check()?;
        Ok(suite)
    }

    /// The entries measured on each target: all but the crash entry.
    pub fn measured(&self) -> impl Iterator<Item = &SuiteWorkload> {
        self.workloads.iter().filter(|entry| entry.kind != CRASH)
    }

    /// The crash entry, when the suite has one.
    pub fn crash(&self) -> Option<&SuiteWorkload> {
        self.workloads.iter().find(|entry| entry.kind == CRASH)
    }

    fn check(&self) -> anyhow::Result<()> {
        let name = &self.name;
        if self.workloads.is_empty() {
            return usage(format!("suite {name}: no [[workload]] tables"));
        }
        if self.repeat == 0 {
            return usage(format!("suite {name}: repeat = 0 runs nothing"));
        }
        if self.measured().next().is_none() {
            return usage(format!(
                "suite {name}: a crash entry alone measures nothing: use fsbench crash --configs FILE"
            ));
        }
        for (index, entry) in self.workloads.iter().enumerate() {
            let at = format!("suite {name}, workload {} ({})", index + 1, entry.label());
            if entry.kind == CRASH && self.workloads[..index].iter().any(|e| e.kind == CRASH) {
                return usage(format!(
                    "{at}: a second crash entry: a suite cuts its configurations off once"
                ));
            }
            if let Some(twin) = self.workloads[..index]
                .iter()
                .position(|e| e.label() == entry.label())
            {
                return usage(format!(
                    "{at}: label '{}' is already used by workload {}; give each a unique label",
                    entry.label(),
                    twin + 1
                ));
            }
        }
        Ok(())
    }
}

/// Names of the built-in suites.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(name, _)| *name).collect()
}

/// The text of a built-in suite, to start a suite of one's own from.
pub fn builtin_text(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// `fsbench run --list-suites`: each built-in suite, its size and what it
/// is for, a line each.
pub fn listing() -> anyhow::Result<String> {
    let mut text = String::new();
    for name in builtin_names() {
        let suite = Suite::load(name)?;
        text += &format!(
            "{name:<12} {} workloads, repeat {}: {}\n",
            suite.workloads.len(),
            suite.repeat,
            suite.description
        );
    }
    Ok(text)
}

/// `fsbench run --show-suite NAME`: the built-in suite's text, or a usage
/// error naming the ones there are.
pub fn shown(name: &str) -> anyhow::Result<&'static str> {
    builtin_text(name).ok_or_else(|| {
        crate::error::UsageError(format!(
            "--show-suite {name}: no such built-in suite ({})",
            builtin_names().join(", ")
        ))
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_suite_parses() {
        for name in builtin_names() {
            let suite = Suite::load(name).unwrap();
            assert!(!suite.workloads.is_empty(), "{name}");
            for entry in &suite.workloads {
                entry.scaled_args(0.02).unwrap();
                entry.scaled_commands(0.02).unwrap();
            }
        }
    }

    fn error_of(text: &str) -> String {
        format!("{:#}", Suite::parse("t.toml", text).unwrap_err())
    }

    #[test]
    fn an_unknown_key_is_named_with_its_line() {
        let e = error_of("[[workload]]\nkind = \"io\"\nthreads = 4\n");
        assert!(e.contains("threads"), "{e}");
        assert!(
            e.starts_with("suite t.toml:3:1: unknown field `threads`"),
            "{e}"
        );
    }

    #[test]
    fn labels_must_be_unique() {
        let e = error_of("[[workload]]\nkind = \"io\"\n[[workload]]\nkind = \"io\"\n");
        assert!(
            e.contains("label 'io' is already used by workload 1"),
            "{e}"
        );
    }

    #[test]
    fn args_come_as_a_line_or_a_list() {
        let line = Suite::parse(
            "t",
            "[[workload]]\nkind = \"io\"\nargs = \"-b 4k  --read 70\"\n",
        )
        .unwrap();
        let list = Suite::parse(
            "t",
            "[[workload]]\nkind = \"io\"\nargs = [\"-b\", \"4k\", \"--read\", \"70\"]\n",
        )
        .unwrap();
        let expected = ["-b", "4k", "--read", "70"];
        assert_eq!(line.workloads[0].scaled_args(1.0).unwrap(), expected);
        assert_eq!(list.workloads[0].scaled_args(1.0).unwrap(), expected);
    }

    #[test]
    fn a_crash_entry_is_set_apart_once() {
        let suite = Suite::parse(
            "t",
            "[[workload]]\nkind = \"io\"\n[[workload]]\nkind = \"crash\"\nargs = \"--cuts 50\"\n",
        )
        .unwrap();
        assert_eq!(
            suite.crash().unwrap().scaled_args(1.0).unwrap(),
            ["--cuts", "50"]
        );
        let measured: Vec<&str> = suite.measured().map(|e| e.kind.as_str()).collect();
        assert_eq!(measured, ["io"]);
        assert!(
            Suite::parse("t", "[[workload]]\nkind = \"io\"\n")
                .unwrap()
                .crash()
                .is_none()
        );
        let alone = error_of("[[workload]]\nkind = \"crash\"\n");
        assert!(alone.contains("use fsbench crash"), "{alone}");
        let twice = error_of(
            "[[workload]]\nkind = \"io\"\n[[workload]]\nkind = \"crash\"\n[[workload]]\nkind = \"crash\"\nlabel = \"again\"\n",
        );
        assert!(
            twice.contains("workload 3 (again): a second crash entry"),
            "{twice}"
        );
    }

    #[test]
    fn empty_and_malformed_suites_are_refused() {
        assert!(error_of("description = \"x\"\n").contains("workload"));
        assert!(error_of("[[workload]\n").starts_with("suite t.toml:1:"));
        assert!(error_of("repeat = 0\n[[workload]]\nkind = \"io\"\n").contains("repeat = 0"));
    }
}
