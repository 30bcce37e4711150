//! Configurations fsbench builds and measures (`fsbench run --configs
//! FILE --images DIR`): the file that describes them, its sweep
//! (`[matrix]`, expanded as hyperfine's `-L`), and what the result records
//! of how each was built. `build` makes them: an image file in a marked
//! scratch directory, a loop device, mkfs, a mount.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::usage;

pub mod build;
pub mod session;

/// What the result records of a target fsbench built.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Built {
    /// The mkfs command line as written in the configuration (after the
    /// sweep's substitution, `{dev}` still in it); empty for a mount of an
    /// existing source or a configuration its setup commands make.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mkfs: String,
    /// What mkfs ran on: the image file fsbench made, or the device named
    /// with --wipe.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub device: String,
    /// The existing source mounted (`server:/export`, `/dev/sdb1`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// The mount options (empty: the file system's defaults).
    #[serde(default)]
    pub options: String,
    /// The file system type given to mount, if the configuration names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_type: Option<String>,
    /// The sweep's parameters of this configuration.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, String>,
    /// Every command run to build it and take it down, in order, exactly
    /// as run (of the last build, with --fresh).
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
    /// What it shares with other configurations (a device, a source, the
    /// setup commands' resources), so that it was measured one after
    /// another with them, not interleaved; None: it had its own image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares: Option<String>,
    /// How many times it was built: 1, or one per repetition with --fresh.
    #[serde(default = "one")]
    pub builds: u32,
    /// The time spent building it and taking it down, over every build.
    #[serde(default)]
    pub build_seconds: f64,
}

fn one() -> u32 {
    1
}

/// One configuration, its sweep parameters substituted.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub name: String,
    pub make: Make,
    pub options: String,
    pub fs_type: Option<String>,
    /// Shell command lines run after the file system is mounted (or, for
    /// `Make::Commands`, to make it); `{dir}` and `{dev}` filled in then.
    pub setup: Vec<String>,
    /// Shell command lines run when it is taken down, before the unmount.
    pub teardown: Vec<String>,
    pub parameters: BTreeMap<String, String>,
}

/// How a configuration comes to be.
#[derive(Debug, Clone, PartialEq)]
pub enum Make {
    /// mkfs, split into words with `{dev}` last, on an image fsbench
    /// makes or on `device` (which --wipe must name).
    Mkfs {
        words: Vec<String>,
        device: Option<PathBuf>,
    },
    /// A mount of an existing source: an NFS export, a device with other
    /// options, a tmpfs.
    Mount { source: String },
    /// The setup commands make it; the target is `path` (`{dir}` in it
    /// filled in: an empty directory fsbench made for it).
    Commands { path: String },
}

impl Config {
    /// The mkfs command line as the configuration gives it; empty when it
    /// runs none.
    pub fn mkfs_line(&self) -> String {
        match &self.make {
            Make::Mkfs { words, .. } => words.join(" "),
            _ => String::new(),
        }
    }

    /// Whether it is made on an image fsbench creates in --images.
    pub fn on_image(&self, place: &build::Place) -> bool {
        matches!(self.make, Make::Mkfs { device: None, .. }) && place.images
    }

    /// What it shares with other configurations, so they cannot be
    /// mounted side by side: its device, its source (two mounts of one
    /// block device share its superblock and options; so may two of one
    /// NFS export), or the resources its setup commands make (a pool of a
    /// given name); None when it is alone on what it uses (an image,
    /// a tmpfs). `wipe_default`: the device mkfs runs on when neither the
    /// configuration nor --images gives another.
    pub fn shares(&self, wipe_default: Option<&Path>) -> Option<String> {
        match &self.make {
            Make::Mkfs {
                device: Some(d), ..
            } => Some(d.display().to_string()),
            Make::Mkfs { device: None, .. } => wipe_default.map(|d| d.display().to_string()),
            Make::Mount { source } => match self.fs_type.as_deref() {
                Some("tmpfs" | "ramfs") => None,
                _ => Some(source.clone()),
            },
            Make::Commands { .. } => Some("the setup commands' resources".into()),
        }
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
    #[serde(default)]
    mkfs: Option<String>,
    #[serde(default)]
    device: Option<String>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    setup: Vec<String>,
    #[serde(default)]
    teardown: Vec<String>,
    #[serde(default)]
    options: String,
    #[serde(default, rename = "type")]
    fs_type: Option<String>,
}

impl Entry {
    /// Every text of the entry a matrix key may appear in.
    fn texts(&self) -> Vec<&str> {
        let optional = [&self.mkfs, &self.device, &self.source, &self.path];
        [self.name.as_str(), self.options.as_str()]
            .into_iter()
            .chain(optional.into_iter().flatten().map(String::as_str))
            .chain(self.fs_type.as_deref())
            .chain(self.setup.iter().chain(&self.teardown).map(String::as_str))
            .collect()
    }
}

/// The placeholder mkfs's device goes in.
pub const DEV: &str = "{dev}";
/// The placeholder the configuration's directory goes in: its mount point,
/// or the empty directory its setup commands make it in.
pub const DIR: &str = "{dir}";

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
        anyhow::bail!(
            "no configurations: give [[config]] tables with a name and mkfs, source or setup"
        );
    }
    for (key, values) in &file.matrix {
        if !is_word(key) || matches!(key.as_str(), "dev" | "dir") {
            anyhow::bail!("matrix key {key:?}: use letters, digits, - and _ (not dev or dir)");
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
        let texts = entry.texts();
        let used: BTreeMap<String, Vec<String>> = file
            .matrix
            .iter()
            .filter(|(key, _)| texts.iter().any(|t| t.contains(&format!("{{{key}}}"))))
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
    let fill = |text: &str, field: &str, kept: &[&str]| substitute(text, &parameters, field, kept);
    let name = fill(&entry.name, "name", &[])?;
    if !is_name(&name) {
        anyhow::bail!(
            "configuration name {name:?}: use letters, digits, '.', '-' and '_' (it names a directory and a target)"
        );
    }
    let options = fill(&entry.options, "options", &[])?;
    let fs_type = entry
        .fs_type
        .as_deref()
        .map(|t| fill(t, "type", &[]))
        .transpose()?;
    let make = make(entry, &name, &parameters)?;
    let runtime: &[&str] = match make {
        Make::Mkfs { .. } => &[DEV, DIR],
        _ => &[DIR],
    };
    let commands = |lines: &[String], field: &str| {
        lines
            .iter()
            .map(|line| fill(line, field, runtime))
            .collect::<anyhow::Result<Vec<_>>>()
    };
    let setup = commands(&entry.setup, "setup")?;
    let teardown = commands(&entry.teardown, "teardown")?;
    if options.contains(char::is_whitespace) {
        anyhow::bail!(
            "{name}: mount options {options:?} contain a space: separate them with commas"
        );
    }
    if let Some(t) = &fs_type
        && !is_fs_type(t)
    {
        anyhow::bail!("{name}: type {t:?} is not a file system type name");
    }
    if matches!(make, Make::Commands { .. }) && (fs_type.is_some() || !options.is_empty()) {
        anyhow::bail!(
            "{name}: type and options are for a mount fsbench makes; its setup commands make this one"
        );
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
        make,
        options,
        fs_type,
        setup,
        teardown,
        parameters,
    })
}

/// What makes the configuration: exactly one of mkfs, source, or setup
/// commands with no mkfs or source.
fn make(entry: &Entry, name: &str, parameters: &BTreeMap<String, String>) -> anyhow::Result<Make> {
    let fill = |text: &str, field: &str, kept: &[&str]| substitute(text, parameters, field, kept);
    if entry.device.is_some() && entry.mkfs.is_none() {
        anyhow::bail!("{name}: device is where mkfs runs: give mkfs too");
    }
    if entry.path.is_some() && (entry.mkfs.is_some() || entry.source.is_some()) {
        anyhow::bail!("{name}: path is for a configuration its setup commands make");
    }
    match (&entry.mkfs, &entry.source) {
        (Some(_), Some(_)) => {
            anyhow::bail!(
                "{name}: give mkfs (a file system to make) or source (one to mount), not both"
            )
        }
        (Some(mkfs), None) => {
            let words = split_words(&fill(mkfs, "mkfs", &[DEV])?)?;
            check_mkfs(name, &words)?;
            let device = entry
                .device
                .as_deref()
                .map(|d| fill(d, "device", &[]))
                .transpose()?
                .map(PathBuf::from);
            if let Some(d) = &device
                && !d.starts_with("/dev/")
            {
                anyhow::bail!("{name}: device {} is not under /dev", d.display());
            }
            Ok(Make::Mkfs { words, device })
        }
        (None, Some(source)) => {
            let source = fill(source, "source", &[])?;
            if source.is_empty() || source.contains(char::is_whitespace) {
                anyhow::bail!("{name}: source {source:?} is empty or holds a space");
            }
            Ok(Make::Mount { source })
        }
        (None, None) if !entry.setup.is_empty() => {
            let path = fill(entry.path.as_deref().unwrap_or(DIR), "path", &[DIR])?;
            if !path.starts_with('/') && !path.starts_with(DIR) {
                anyhow::bail!("{name}: path {path:?} is not absolute");
            }
            Ok(Make::Commands { path })
        }
        (None, None) => anyhow::bail!(
            "{name}: give mkfs (a file system to make), source (one to mount) or setup (commands that make it)"
        ),
    }
}

/// `{key}` replaced by the parameter's value; any other `{…}` is refused,
/// but for the placeholders in `kept` (filled in when it is built).
fn substitute(
    text: &str,
    parameters: &BTreeMap<String, String>,
    field: &str,
    kept: &[&str],
) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        out += &rest[..start];
        let Some(len) = rest[start..].find('}') else {
            anyhow::bail!("{field} {text:?}: an unclosed '{{'");
        };
        let placeholder = &rest[start..start + len + 1];
        let key = &placeholder[1..placeholder.len() - 1];
        match parameters.get(key) {
            Some(value) => out += value,
            None if kept.contains(&placeholder) => out += placeholder,
            None => anyhow::bail!(
                "{field} {text:?}: {placeholder} is not a matrix key{}",
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

/// A file system type as mount takes it: `ext4`, `nfs4`, `fuse.sshfs`.
fn is_fs_type(text: &str) -> bool {
    text.split('.').all(is_word)
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
        assert_eq!(configs[1].mkfs_line(), "mkfs.ext4 -q -b 1024 {dev}");
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
    fn the_example_files_parse_into_their_configurations() {
        let names = |text: &str| -> Vec<String> {
            parse(text).unwrap().into_iter().map(|c| c.name).collect()
        };
        assert_eq!(
            names(include_str!("../../configs/seed000.toml")),
            ["xfs-4k-sectors", "ext4-user_xattr"]
        );
        assert_eq!(
            names(include_str!("../../configs/seed003.toml")),
            ["ext4-defaults", "ext4-noatime-writeback-nobarrier"]
        );
        assert_eq!(
            names(include_str!("../../configs/filesystems.toml")),
            ["ext4", "xfs", "btrfs"]
        );
        let zfs = parse(include_str!("../../configs/zfs-special.toml")).unwrap();
        assert_eq!(zfs.len(), 2 + 2 * 3);
        let one = zfs.iter().find(|c| c.name == "zfs-1M-64k").unwrap();
        assert!(one.setup[0].contains("-O recordsize=1M -O special_small_blocks=64k -m {dir} "));
        assert_eq!(one.parameters.len(), 2);
        assert!(matches!(one.make, Make::Commands { .. }));
    }

    #[test]
    fn each_configuration_is_made_one_way() {
        let one = |body: &str| {
            parse(&format!("[[config]]\nname = \"a\"\n{body}"))
                .map(|c| c[0].make.clone())
                .map_err(|e| e.to_string())
        };
        assert!(matches!(
            one("source = \"tmpfs\"\ntype = \"tmpfs\""),
            Ok(Make::Mount { .. })
        ));
        assert!(
            one("mkfs = \"mkfs.ext4 {dev}\"\nsource = \"/dev/sdb\"")
                .unwrap_err()
                .contains("not both")
        );
        assert!(
            one("options = \"noatime\"")
                .unwrap_err()
                .contains("give mkfs")
        );
        assert!(
            one("source = \"/dev/sdb\"\ndevice = \"/dev/sdb\"")
                .unwrap_err()
                .contains("give mkfs too")
        );
        assert!(
            one("mkfs = \"mkfs.ext4 {dev}\"\ndevice = \"sdb\"")
                .unwrap_err()
                .contains("not under /dev")
        );
        assert!(
            one("setup = [\"true\"]\npath = \"relative\"")
                .unwrap_err()
                .contains("not absolute")
        );
        assert!(
            one("setup = [\"true\"]\noptions = \"noatime\"")
                .unwrap_err()
                .contains("setup commands make")
        );
        assert!(
            one("source = \"tmpfs\"\nsetup = [\"echo {dev}\"]")
                .unwrap_err()
                .contains("{dev} is not a matrix key")
        );
        assert_eq!(
            one("setup = [\"zpool create -m {dir} p sdb\"]").unwrap(),
            Make::Commands { path: DIR.into() }
        );
    }

    #[test]
    fn quotes_group_words() {
        assert_eq!(
            split_words("mkfs.xfs -L 'my label' \"\" {dev}").unwrap(),
            ["mkfs.xfs", "-L", "my label", "", "{dev}"]
        );
    }
}
