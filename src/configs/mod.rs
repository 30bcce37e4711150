//! Configurations fsbench builds and measures (`fsbench run --configs
//! FILE --images DIR`): the file that describes them, its sweep
//! (`[matrix]`, expanded as hyperfine's `-L`), and what the result records
//! of how each was built. `build` makes them: an image file in a marked
//! scratch directory, a loop device, mkfs, a mount.
use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::usage;

pub mod build;

/// What the result records of a target fsbench built.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Built {
    /// The mkfs command line as written in the configuration (after the
    /// sweep's substitution, `{dev}` still in it).
    pub mkfs: String,
    /// The mount options (empty: the file system's defaults).
    #[serde(default)]
    pub options: String,
    /// The file system type given to mount, if the configuration names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_type: Option<String>,
    /// The sweep's parameters of this configuration.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, String>,
    /// Every command run to build it, in order, exactly as run.
    #[serde(default)]
    pub commands: Vec<String>,
    /// What mkfs printed (stdout then stderr).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mkfs_output: String,
    /// What the file system says of the parameters mkfs gave it, after
    /// the command that asked (`dumpe2fs -h`, `xfs_info`, `btrfs
    /// filesystem show`); empty where fsbench knows no such command or it
    /// failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fs_info: String,
}

/// One configuration, its sweep parameters substituted.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub name: String,
    /// The mkfs command line, split into words; `{dev}` is its last.
    pub mkfs: Vec<String>,
    pub options: String,
    pub fs_type: Option<String>,
    pub parameters: BTreeMap<String, String>,
}

impl Config {
    /// The mkfs command line as the configuration gives it.
    pub fn mkfs_line(&self) -> String {
        self.mkfs.join(" ")
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    matrix: BTreeMap<String, Vec<String>>,
    #[serde(default, rename = "config")]
    configs: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    mkfs: String,
    #[serde(default)]
    options: String,
    #[serde(default, rename = "type")]
    fs_type: Option<String>,
}

/// The placeholder mkfs's device goes in.
pub const DEV: &str = "{dev}";

/// Reads and checks a configurations file; every error is one line.
pub fn load(path: &Path) -> anyhow::Result<Vec<Config>> {
    let shown = path.display();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => return usage(format!("--configs {shown}: {e}")),
    };
    parse(&text).or_else(|e| usage(format!("--configs {shown}: {e:#}")))
}

/// Parses a configurations file's text into its configurations, the
/// matrix expanded.
pub fn parse(text: &str) -> anyhow::Result<Vec<Config>> {
    let file: File = toml::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "{}",
            e.message().lines().next().unwrap_or("not TOML").trim()
        )
    })?;
    if file.configs.is_empty() {
        anyhow::bail!("no configurations: give [[config]] tables with name and mkfs");
    }
    for (key, values) in &file.matrix {
        if !is_word(key) {
            anyhow::bail!("matrix key {key:?}: use letters, digits, - and _");
        }
        if values.is_empty() {
            anyhow::bail!("matrix key {key}: no values");
        }
        if let Some(bad) = values.iter().find(|v| v.contains(['{', '}'])) {
            anyhow::bail!("matrix value {bad:?} of {key}: braces are not allowed");
        }
    }
    let mut configs = Vec::new();
    for entry in &file.configs {
        // An entry sweeps over the matrix keys it uses, and only those.
        let text = [&entry.name, &entry.mkfs, &entry.options];
        let used: BTreeMap<String, Vec<String>> = file
            .matrix
            .iter()
            .filter(|(key, _)| text.iter().any(|t| t.contains(&format!("{{{key}}}"))))
            .map(|(key, values)| (key.clone(), values.clone()))
            .collect();
        for parameters in product(&used) {
            configs.push(expand(entry, parameters)?);
        }
    }
    for (index, config) in configs.iter().enumerate() {
        if configs[..index].iter().any(|c| c.name == config.name) {
            anyhow::bail!(
                "two configurations are named {:?}: put the matrix keys in the name, e.g. {{journal}}",
                config.name
            );
        }
    }
    Ok(configs)
}

/// Every combination of the matrix's values (one empty one without a matrix).
fn product(matrix: &BTreeMap<String, Vec<String>>) -> Vec<BTreeMap<String, String>> {
    let mut all = vec![BTreeMap::new()];
    for (key, values) in matrix {
        all = all
            .into_iter()
            .flat_map(|partial| {
                values.iter().map(move |value| {
                    let mut next = partial.clone();
                    next.insert(key.clone(), value.clone());
                    next
                })
            })
            .collect();
    }
    all
}

/// One configuration of `entry` with `parameters` substituted, checked.
fn expand(entry: &Entry, parameters: BTreeMap<String, String>) -> anyhow::Result<Config> {
    let name = substitute(&entry.name, &parameters, "name", false)?;
    if !is_name(&name) {
        anyhow::bail!(
            "configuration name {name:?}: use letters, digits, '.', '-' and '_' (it names a directory and a target)"
        );
    }
    let mkfs = substitute(&entry.mkfs, &parameters, "mkfs", true)?;
    let options = substitute(&entry.options, &parameters, "options", false)?;
    let fs_type = match &entry.fs_type {
        Some(t) => Some(substitute(t, &parameters, "type", false)?),
        None => None,
    };
    let words = split_words(&mkfs)?;
    check_mkfs(&name, &words)?;
    if options.contains(char::is_whitespace) {
        anyhow::bail!(
            "{name}: mount options {options:?} contain a space: separate them with commas"
        );
    }
    if let Some(t) = &fs_type
        && !is_word(t)
    {
        anyhow::bail!("{name}: type {t:?} is not a file system type name");
    }
    let missing: Vec<String> = parameters
        .keys()
        .filter(|key| !entry.name.contains(&format!("{{{key}}}")))
        .map(|key| format!("{{{key}}}"))
        .collect();
    if !missing.is_empty() {
        anyhow::bail!(
            "configuration {:?}: its name must hold every matrix key it uses ({}), so that each configuration has a name of its own",
            entry.name,
            missing.join(", ")
        );
    }
    Ok(Config {
        name,
        mkfs: words,
        options,
        fs_type,
        parameters,
    })
}

/// `{key}` replaced by the parameter's value; any other `{…}` is refused
/// (`{dev}` is kept where `dev_allowed`).
fn substitute(
    text: &str,
    parameters: &BTreeMap<String, String>,
    field: &str,
    dev_allowed: bool,
) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        out += &rest[..start];
        let Some(len) = rest[start..].find('}') else {
            anyhow::bail!("{field} {text:?}: an unclosed '{{'");
        };
        let key = &rest[start + 1..start + len];
        match parameters.get(key) {
            Some(value) => out += value,
            None if key == "dev" && dev_allowed => out += DEV,
            None => anyhow::bail!(
                "{field} {text:?}: {{{key}}} is not a matrix key{}",
                match parameters.is_empty() {
                    true => " (there is no [matrix])".to_string(),
                    false => format!(
                        " ({})",
                        parameters.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                }
            ),
        }
        rest = &rest[start + len + 1..];
    }
    if rest.contains('}') {
        anyhow::bail!("{field} {text:?}: a '}}' without its '{{'");
    }
    Ok(out + rest)
}

/// The safety rule on a mkfs command line: a `mkfs.*` program, `{dev}` as
/// its one device, once and last, and no other device named.
fn check_mkfs(name: &str, words: &[String]) -> anyhow::Result<()> {
    let Some(program) = words.first() else {
        anyhow::bail!("{name}: mkfs is empty");
    };
    let base = Path::new(program)
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    let fs = base.strip_prefix("mkfs.").unwrap_or_default();
    if fs.is_empty() || !is_word(fs) {
        anyhow::bail!("{name}: mkfs runs {program:?}, not a mkfs.* program (e.g. mkfs.ext4)");
    }
    let devs = words.iter().filter(|w| w.contains(DEV)).count();
    if devs != 1 || words.last().map(String::as_str) != Some(DEV) {
        anyhow::bail!(
            "{name}: mkfs must end with {DEV}, the device fsbench makes, and name it once"
        );
    }
    // Some mkfs take several devices or files (mkfs.btrfs), or a journal
    // or data section elsewhere (-J device=, -d name=): no argument may
    // name a path or a device by label or UUID. (mkfs also runs in an
    // empty directory of fsbench's, so a bare name finds nothing.)
    let names_one = |w: &&String| {
        let upper = w.to_uppercase();
        w.contains('/') || upper.contains("UUID=") || upper.contains("LABEL=")
    };
    if let Some(other) = words[1..].iter().find(names_one) {
        anyhow::bail!(
            "{name}: mkfs names {other:?}: no path or device but {DEV}, the image fsbench makes, is allowed"
        );
    }
    Ok(())
}

/// Splits a command line into words: blanks separate, single or double
/// quotes group (no other shell syntax).
pub fn split_words(line: &str) -> anyhow::Result<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_default().push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_default().push(c),
        }
    }
    if quote.is_some() {
        anyhow::bail!("{line:?}: an unclosed quote");
    }
    words.extend(word);
    Ok(words)
}

fn is_word(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A configuration name: it names a directory and a target.
fn is_name(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with('.')
        && text.len() <= 64
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matrix_expands_into_every_combination() {
        let configs = parse(
            r#"
            matrix = { journal = ["ordered", "writeback"], bs = ["1024", "4096"] }
            [[config]]
            name = "ext4-{journal}-{bs}"
            mkfs = "mkfs.ext4 -q -b {bs} {dev}"
            options = "data={journal}"
            "#,
        )
        .unwrap();
        let names: Vec<&str> = configs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "ext4-ordered-1024",
                "ext4-writeback-1024",
                "ext4-ordered-4096",
                "ext4-writeback-4096"
            ]
        );
        assert_eq!(configs[1].mkfs, ["mkfs.ext4", "-q", "-b", "1024", "{dev}"]);
        assert_eq!(configs[1].options, "data=writeback");
        assert_eq!(configs[1].parameters["journal"], "writeback");
    }

    #[test]
    fn unsafe_or_wrong_configurations_are_refused() {
        let one = |mkfs: &str, name: &str| {
            parse(&format!(
                "[[config]]\nname = \"{name}\"\nmkfs = \"{mkfs}\"\n"
            ))
            .map(|_| ())
            .map_err(|e| e.to_string())
        };
        assert!(one("mkfs.ext4 {dev}", "a").is_ok());
        assert!(
            one("rm -rf {dev}", "a")
                .unwrap_err()
                .contains("not a mkfs.*")
        );
        assert!(one("mkfs.ext4 /dev/sda", "a").is_err());
        assert!(one("mkfs.ext4 /dev/sda {dev}", "a").is_err());
        assert!(one("mkfs.ext4 {dev} -q", "a").is_err());
        assert!(one("mkfs.btrfs -f other.img/x {dev}", "a").is_err());
        assert!(one("mkfs.ext4 -J device=UUID=1234 {dev}", "a").is_err());
        assert!(one("mkfs.xfs -d name=/etc/passwd {dev}", "a").is_err());
        assert!(one("mkfs.xfs -f -s size=4096 {dev}", "a").is_ok());
        assert!(
            one("mkfs.ext4 {dev}", "a-{journal}")
                .unwrap_err()
                .contains("not a matrix key")
        );
        assert!(one("mkfs.ext4 {dev}", "../x").is_err());
        assert!(
            parse("")
                .unwrap_err()
                .to_string()
                .contains("no configurations")
        );
    }

    #[test]
    fn a_result_from_before_built_loads() {
        let target: crate::result::TargetResult = serde_json::from_str(
            r#"{"name":"a","path":"/a","env":null,"workloads":[],"cleanup":null}"#,
        )
        .unwrap();
        assert_eq!(target.built, None);
        let text = serde_json::to_string(&target).unwrap();
        assert!(!text.contains("built"), "{text}");
    }

    #[test]
    fn quotes_group_words() {
        assert_eq!(
            split_words("mkfs.xfs -L 'my label' \"\" {dev}").unwrap(),
            ["mkfs.xfs", "-L", "my label", "", "{dev}"]
        );
    }
}
