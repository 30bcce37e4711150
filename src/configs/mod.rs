//! Configurations fsbench builds and measures (`fsbench run --configs
//! FILE --images DIR`): the file that describes them, its sweep
//! (`[matrix]`, expanded as hyperfine's `-L`), and what the result records
//! of how each was built. `build` makes them: an image file in a marked
//! scratch directory, a loop device, mkfs, a mount.
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::Deserialize;

use crate::error::usage;
use crate::storage::env::risk;

pub mod build;
mod kinds;
pub mod options;
pub mod place;
pub mod rounds;
mod sweep;

pub use kinds::Make;
pub use sweep::{MAX_CONFIGURATIONS, MAX_EXPANDED_BYTES};
use sweep::{Sweep, check_size};

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
    /// Risk code → the setting its setup gives the server that makes it
    /// so (see `Built::declared_risks`).
    pub declared_risks: BTreeMap<String, String>,
}

impl Config {
    /// The mkfs command line as the configuration gives it; empty when it
    /// runs none.
    pub fn mkfs_line(&self) -> String {
        self.mkfs_words().join(" ")
    }

    /// The mkfs command's words (`{dev}` among them); empty when it runs
    /// none.
    pub fn mkfs_words(&self) -> Vec<String> {
        self.make.kind().mkfs_words()
    }

    /// Why building it needs `--allow-shell` (the file makes fsbench run
    /// programs of its choosing as root), as the refusal says it after the
    /// configuration's name: its setup or teardown shell lines, or a mkfs
    /// program given by a path instead of a `mkfs.*` name looked up on
    /// PATH. None when it runs neither.
    pub fn shell_permission(&self) -> Option<String> {
        if !self.setup.is_empty() || !self.teardown.is_empty() {
            return Some("has setup or teardown commands: give --allow-shell to run them".into());
        }
        self.make.kind().shell_permission()
    }

    /// The smallest image its mkfs makes a file system on: mkfs.xfs
    /// (xfsprogs 5.19 on) refuses under 300 MiB, mkfs.btrfs under
    /// 114,294,784 bytes per device; any other, 16 MiB (room for a journal).
    pub fn minimum_image_bytes(&self) -> u64 {
        self.make.kind().minimum_image_bytes()
    }

    /// Whether it is made on an image fsbench creates in --images.
    pub fn on_image(&self, place: &place::Place) -> bool {
        self.make.kind().on_image(place)
    }

    /// Why it cannot be measured from several hosts under MPI; None when
    /// it can (setup commands that change a server, and a path every host
    /// sees). `{dir}` in a command names a directory on rank 0's host,
    /// which no other host has.
    pub fn one_host_only(&self) -> Option<&'static str> {
        let names_dir = self
            .setup
            .iter()
            .chain(&self.teardown)
            .any(|line| line.contains(DIR));
        match names_dir {
            true => Some(
                "has {dir} in a setup or teardown command, a directory on one host: name the directory every host sees",
            ),
            false => self.make.kind().one_host_only(),
        }
    }

    /// What it shares with other configurations, so they cannot be
    /// mounted side by side: its device, its source (two mounts of one
    /// block device share its superblock and options; so may two of one
    /// NFS export), or the resources its setup commands make (a pool of a
    /// given name); None when it is alone on what it uses (an image,
    /// a tmpfs). `wipe_default`: the device mkfs runs on when neither the
    /// configuration nor --images gives another.
    pub fn shares(&self, wipe_default: Option<&Path>) -> Option<String> {
        self.make.kind().shares(self, wipe_default)
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
    /// Whether mkfs's image is made into a recorded disk
    /// (`kinds::recorded`).
    #[serde(default)]
    recorded: bool,
    #[serde(default)]
    declared_risks: BTreeMap<String, String>,
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
            .chain(self.declared_risks.values().map(String::as_str))
            .collect()
    }
}

/// The placeholder mkfs's device goes in.
pub const DEV: &str = "{dev}";
/// The placeholder the configuration's directory goes in: its mount point,
/// or the empty directory its setup commands make it in.
pub const DIR: &str = "{dir}";

/// Refuses the configurations that cannot be measured from several hosts
/// (a run under MPI: rank 0 alone runs the setup and teardown commands,
/// then every rank measures the configuration's path), in one line naming
/// the first and why.
pub fn check_across_hosts(configs: &[Config]) -> anyhow::Result<()> {
    match configs
        .iter()
        .find_map(|c| c.one_host_only().map(|why| (c, why)))
    {
        Some((config, why)) => usage(format!(
            "--configs under MPI: {} {why}; across hosts only configurations whose setup commands change a server, with the path every host sees it at, can be measured",
            config.name
        )),
        None => Ok(()),
    }
}

/// Reads and checks a configurations file (at most
/// [`crate::input::CONFIGS`]'s limit); every error is one line.
pub fn load(path: &Path) -> anyhow::Result<Vec<Config>> {
    let shown = path.display();
    let text = crate::input::read_input_file(path, crate::input::CONFIGS)
        .or_else(|e| usage(format!("--configs: {e:#}")))?;
    parse(&text).or_else(|e| {
        usage(format!(
            "--configs {}",
            crate::input::located(&shown.to_string(), &e)
        ))
    })
}

/// Parses a configurations file's text into its configurations, the
/// matrix expanded.
pub fn parse(text: &str) -> anyhow::Result<Vec<Config>> {
    let file: File = crate::input::parse_toml(text)?;
    if file.configs.is_empty() {
        anyhow::bail!(
            "no configurations: give [[config]] tables with a name and {}",
            kinds::keys()
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
    let sweeps: Vec<Sweep> = file
        .configs
        .iter()
        .map(|entry| Sweep::of(entry, &file.matrix))
        .collect();
    check_size(&sweeps)?;
    let mut configs = Vec::new();
    for sweep in &sweeps {
        sweep.check_name()?;
        for parameters in sweep.parameters() {
            configs.push(expand(sweep.entry, parameters)?);
        }
    }
    let mut names = HashSet::new();
    if let Some(config) = configs.iter().find(|c| !names.insert(c.name.as_str())) {
        anyhow::bail!(
            "two configurations are named {:?}: put the matrix keys in the name, e.g. {{journal}}",
            config.name
        );
    }
    Ok(configs)
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
    let make = kinds::read(entry, &name, &parameters)?;
    let runtime = make.kind().placeholders();
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
    check_options(&name, &options)?;
    if let Some(t) = &fs_type {
        if t.starts_with('-') {
            anyhow::bail!("{name}: type {t:?} starts with '-': mount would read it as an option");
        }
        if !is_fs_type(t) {
            anyhow::bail!("{name}: type {t:?} is not a file system type name");
        }
    }
    make.kind().check(&name, fs_type.as_deref(), &options)?;
    let declared_risks = entry
        .declared_risks
        .iter()
        .map(|(code, setting)| declared_risk(&name, code, &fill(setting, "declared_risks", &[])?))
        .collect::<anyhow::Result<_>>()?;
    Ok(Config {
        name,
        make,
        options,
        fs_type,
        setup,
        teardown,
        parameters,
        declared_risks,
    })
}

/// One of configuration `name`'s declared risks, checked: a code fsbench
/// knows what it loses, and the setting that makes it so, said (the
/// reports quote it as the flag's evidence).
fn declared_risk(name: &str, code: &str, setting: &str) -> anyhow::Result<(String, String)> {
    if !risk::DECLARABLE.iter().any(|(known, _)| *known == code) {
        let known: Vec<&str> = risk::DECLARABLE.iter().map(|(c, _)| *c).collect();
        anyhow::bail!(
            "{name}: declared_risks: {code:?} is not a risk fsbench knows ({})",
            known.join(", ")
        );
    }
    if setting.trim().is_empty() {
        anyhow::bail!(
            "{name}: declared_risks.{code}: say which setting makes it so, e.g. \"sync always = no\""
        );
    }
    Ok((code.to_string(), setting.trim().to_string()))
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

/// mount(8)'s verbs: each makes mount do something else than mount the
/// file system fsbench built or names (bind or move another mount,
/// remount one, change propagation), whatever the source and directory.
/// `b`, `r` and `m` are the short forms of bind, rbind and move.
const MOUNT_VERBS: &[&str] = &[
    "bind",
    "rbind",
    "move",
    "remount",
    "make-shared",
    "make-slave",
    "make-private",
    "make-unbindable",
    "make-rshared",
    "make-rslave",
    "make-rprivate",
    "make-runbindable",
    "shared",
    "slave",
    "private",
    "unbindable",
    "rshared",
    "rslave",
    "rprivate",
    "runbindable",
    "b",
    "r",
    "m",
];

/// Options mount(8) acts on itself and passes no file system: a loop
/// device of its own over a file (`loop`, `offset`, `sizelimit`,
/// `encryption`) and the helpers it runs (`helper`, `uhelper`); also every
/// `x-mount.*` (util-linux's userspace options: `X-mount.mkdir`,
/// `X-mount.subdir=`, `X-mount.idmap=`...).
const MOUNT_OWN_OPTIONS: &[&str] = &[
    "loop",
    "offset",
    "sizelimit",
    "encryption",
    "helper",
    "uhelper",
];

/// The rule on a configuration's mount options: only the file system's
/// own. No mount verb (`rbind` of a shared source, `move`, `remount`), no
/// option mount(8) acts on itself (`loop`, `X-mount.mkdir`), and nothing
/// that starts with '-'. Each comma-separated option is compared by its
/// key (before '='), case and quotes aside.
fn check_options(name: &str, options: &str) -> anyhow::Result<()> {
    if options.starts_with('-') {
        anyhow::bail!(
            "{name}: mount options {options:?} start with '-': mount would read them as an option"
        );
    }
    for option in options.split(',') {
        let key = option.split_once('=').map_or(option, |(key, _)| key);
        let key: String = key
            .chars()
            .filter(|c| !matches!(c, '"' | '\'' | '\\'))
            .collect::<String>()
            .to_ascii_lowercase();
        let why = if key.starts_with('-') {
            "starts with '-': no option of a file system does"
        } else if MOUNT_VERBS.contains(&key.as_str()) {
            "is a mount verb, not an option of the file system: fsbench mounts each configuration itself"
        } else if key.starts_with("x-mount.") || MOUNT_OWN_OPTIONS.contains(&key.as_str()) {
            "is one mount(8) acts on itself, not an option of the file system: fsbench mounts each configuration itself"
        } else {
            continue;
        };
        anyhow::bail!("{name}: mount option {option:?} {why}");
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
        let samba = parse(include_str!("../../configs/samba-sync.toml")).unwrap();
        let declared = |configs: &[Config]| -> Vec<Vec<String>> {
            configs
                .iter()
                .map(|c| c.declared_risks.keys().cloned().collect())
                .collect()
        };
        assert_eq!(declared(&samba), [vec![], vec!["server_async".to_string()]]);
        assert!(samba[1].setup[0].starts_with("ssh nas "));
        let gluster = parse(include_str!("../../configs/gluster-write-behind.toml")).unwrap();
        assert_eq!(
            declared(&gluster),
            [
                vec![],
                vec!["client_write_behind".to_string()],
                vec!["client_write_behind".to_string()]
            ]
        );
        // Both run across hosts: every configuration names its path.
        assert!(check_across_hosts(&samba).is_ok());
        assert!(check_across_hosts(&gluster).is_ok());
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

    /// A declared risk is one fsbench knows what it loses, with the
    /// setting that makes it so (substituted like the rest of the entry).
    #[test]
    fn a_declared_risk_needs_a_known_code_and_its_setting() {
        let configs = parse(
            "matrix = { v = [\"no\"] }\n[[config]]\nname = \"a-{v}\"\nsetup = [\"true\"]\npath = \"/mnt/nas\"\n\
             declared_risks = { server_async = \" sync always = {v} \" }\n",
        )
        .unwrap();
        assert_eq!(
            configs[0].declared_risks["server_async"],
            "sync always = no"
        );
        let e = refusal("source = \"tmpfs\"\ndeclared_risks = { fast = \"x\" }");
        assert_eq!(
            e,
            "a: declared_risks: \"fast\" is not a risk fsbench knows (server_async, client_write_behind)"
        );
        let e = refusal("source = \"tmpfs\"\ndeclared_risks = { server_async = \" \" }");
        assert!(
            e.starts_with("a: declared_risks.server_async: say which setting makes it so"),
            "{e}"
        );
    }

    /// Under MPI rank 0 alone builds: only setup commands that change a
    /// server, measured at a path every host sees, can be measured from
    /// every host; the refusal names the configuration and why.
    #[test]
    fn only_a_server_s_settings_at_a_common_path_run_across_hosts() {
        let refused = |body: &str| {
            let configs = parse(&format!("[[config]]\nname = \"a\"\n{body}")).unwrap();
            check_across_hosts(&configs).map_err(|e| e.to_string())
        };
        assert_eq!(
            refused("setup = [\"ssh nas true\"]\npath = \"/mnt/nas\""),
            Ok(())
        );
        let cases = [
            (
                "mkfs = \"mkfs.ext4 {dev}\"",
                "a is made by mkfs on one host",
            ),
            (
                "mkfs = \"mkfs.ext4 {dev}\"\nrecorded = true",
                "a is a recorded disk",
            ),
            (
                "source = \"nas:/export\"",
                "a is a mount fsbench makes on one host",
            ),
            (
                "setup = [\"zpool create -m {dir} p sdb\"]",
                "a has {dir} in a setup or teardown command",
            ),
            (
                "setup = [\"ssh nas true\"]\nteardown = [\"rm -r {dir}/x\"]\npath = \"/mnt/nas\"",
                "a has {dir} in a setup or teardown command",
            ),
            ("setup = [\"ssh nas true\"]", "a has the path {dir}"),
        ];
        for (body, why) in cases {
            let e = refused(body).unwrap_err();
            assert!(e.starts_with(&format!("--configs under MPI: {why}")), "{e}");
            assert!(
                e.ends_with("with the path every host sees it at, can be measured"),
                "{e}"
            );
        }
    }

    /// The error of parsing one configuration with `body`.
    fn refusal(body: &str) -> String {
        match parse(&format!("[[config]]\nname = \"a\"\n{body}")) {
            Ok(configs) => panic!("{body:?} parsed: {configs:?}"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn mount_verbs_and_mount_s_own_options_are_refused_in_options() {
        let verbs = [
            "bind",
            "rbind",
            "move",
            "remount,ro",
            "make-shared",
            "make-rslave",
            "make-private",
            "make-runbindable",
            "shared",
            "rprivate",
            "unbindable",
            "noatime,RBind",
            "\\\"bind\\\"",
            "B",
            "R",
            "m",
        ];
        for verb in verbs {
            let e = refusal(&format!(
                "source = \"tmpfs\"\ntype = \"tmpfs\"\noptions = \"{verb}\""
            ));
            assert!(
                e.contains("is a mount verb, not an option of the file system"),
                "{verb}: {e}"
            );
            assert!(e.starts_with("a: mount option "), "{verb}: {e}");
        }
        let own = [
            "loop",
            "loop=/dev/loop7",
            "offset=4096",
            "sizelimit=1m",
            "encryption=aes",
            "X-mount.mkdir",
            "x-mount.subdir=x",
            "X-MOUNT.idmap=u:0:1000:1",
            "helper=x",
        ];
        for option in own {
            let e = refusal(&format!(
                "mkfs = \"mkfs.ext4 {{dev}}\"\noptions = \"noatime,{option}\""
            ));
            assert!(e.contains(&format!("{option:?}")), "{option}: {e}");
            assert!(e.contains("mount(8) acts on itself"), "{option}: {e}");
        }
        // What a file system takes passes, also when it looks like a verb.
        for options in [
            "noatime,data=writeback,barrier=0",
            "vers=3,sync",
            "size=64m,mode=0700",
            "ro",
            "bind_mode=x",
            "rbinder",
            "x-systemd.automount",
        ] {
            let configs = parse(&format!(
                "[[config]]\nname = \"a\"\nsource = \"tmpfs\"\noptions = \"{options}\"\n"
            ))
            .unwrap();
            assert_eq!(configs[0].options, options);
        }
    }

    #[test]
    fn a_matrix_value_cannot_bring_a_verb_in() {
        let e = parse(
            r#"
            matrix = { o = ["noatime", "rbind"] }
            [[config]]
            name = "a-{o}"
            source = "tmpfs"
            options = "{o}"
            "#,
        )
        .unwrap_err();
        assert!(
            format!("{e:#}").starts_with("a-rbind: mount option \"rbind\" is a mount verb"),
            "{e:#}"
        );
    }

    #[test]
    fn a_leading_dash_is_refused_in_source_type_and_options() {
        let e = refusal("source = \"-a\"\ntype = \"ext4\"");
        assert!(e.contains("source \"-a\" starts with '-'"), "{e}");
        let e = refusal("source = \"tmpfs\"\ntype = \"-a\"");
        assert!(e.contains("type \"-a\" starts with '-'"), "{e}");
        let e = refusal("source = \"tmpfs\"\noptions = \"--bind\"");
        assert!(e.contains("options \"--bind\" start with '-'"), "{e}");
        let e = refusal("mkfs = \"mkfs.ext4 {dev}\"\noptions = \"noatime,-a\"");
        assert!(e.contains("option \"-a\" starts with '-'"), "{e}");
    }

    #[test]
    fn a_mkfs_program_given_by_a_path_needs_the_shell_permission() {
        let one = |body: &str| parse(&format!("[[config]]\nname = \"a\"\n{body}")).unwrap();
        let why = |body: &str| one(body)[0].shell_permission();
        assert_eq!(why("mkfs = \"mkfs.ext4 -F {dev}\""), None);
        assert_eq!(why("source = \"tmpfs\""), None);
        for program in ["/tmp/x/mkfs.evil", "../../tmp/x/mkfs.evil", "./mkfs.ext4"] {
            let why = why(&format!("mkfs = \"{program} {{dev}}\"")).unwrap();
            assert!(
                why.contains(&format!("runs mkfs by its path {program:?}")),
                "{why}"
            );
            assert!(why.ends_with("give --allow-shell to run it"), "{why}");
        }
        let why = why("source = \"tmpfs\"\nteardown = [\"true\"]").unwrap();
        assert!(why.starts_with("has setup or teardown commands"), "{why}");
        // Still a mkfs.* program, whatever its directory.
        assert!(refusal("mkfs = \"/tmp/x/evil {dev}\"").contains("not a mkfs.* program"));
    }

    /// A matrix of `sizes.len()` keys of that many values each, and one
    /// entry that uses them all.
    fn matrix_file(sizes: &[usize]) -> String {
        let mut text = String::from("[matrix]\n");
        for (key, size) in sizes.iter().enumerate() {
            let values: Vec<String> = (0..*size).map(|v| format!("\"{v}\"")).collect();
            text += &format!("k{key} = [{}]\n", values.join(","));
        }
        let keys: Vec<String> = (0..sizes.len()).map(|k| format!("{{k{k}}}")).collect();
        text + &format!(
            "[[config]]\nname = \"x-{}\"\nsource = \"tmpfs\"\ntype = \"tmpfs\"\n",
            keys.join("-")
        )
    }

    fn parse_error(text: &str) -> String {
        format!("{:#}", parse(text).unwrap_err())
    }

    #[test]
    fn a_matrix_past_the_cap_is_refused_before_it_is_expanded() {
        let e = parse_error(&matrix_file(&[1000, 1000]));
        assert_eq!(
            e,
            "the matrix makes 1000000 configurations (entry \"x-{k0}-{k1}\": 1000 × 1000); at most 10000"
        );
        let e = parse_error(&matrix_file(&[1000, 1000, 1000]));
        assert!(
            e.starts_with("the matrix makes 1000000000 configurations"),
            "{e}"
        );
        // 1000^7 is more than a u64 holds.
        let e = parse_error(&matrix_file(&[1000; 7]));
        assert!(
            e.starts_with("the matrix makes more than 18446744073709551615 configurations"),
            "{e}"
        );
        assert!(
            e.contains("1000 × 1000 × 1000 × 1000 × 1000 × 1000 × 1000)"),
            "{e}"
        );
        let e = parse_error(&matrix_file(&[2; 20]));
        assert!(
            e.contains("2 × 2 × 2 × 2 × 2 × 2 × 2 × 2 × … (20 keys)"),
            "{e}"
        );
        // The cap itself passes.
        assert_eq!(
            parse(&matrix_file(&[100, 100])).unwrap().len(),
            MAX_CONFIGURATIONS
        );
    }

    #[test]
    fn the_cap_counts_every_entry_of_the_file() {
        let mut two = matrix_file(&[100, 60]);
        two += "[[config]]\nname = \"y-{k0}-{k1}\"\nsource = \"tmpfs\"\n";
        let e = parse_error(&two);
        assert!(e.starts_with("the matrix makes 12000 configurations (entry \"x-{k0}-{k1}\": 100 × 60, and 1 other entry)"), "{e}");
        let many: String = (0..=MAX_CONFIGURATIONS)
            .map(|n| format!("[[config]]\nname = \"c{n}\"\nsource = \"tmpfs\"\n"))
            .collect();
        assert_eq!(
            parse_error(&many),
            "the file makes 10001 configurations (10001 [[config]] tables); at most 10000"
        );
        // Keys an entry does not use do not multiply it.
        let unused = matrix_file(&[1000, 1000]).replace("name = \"x-{k0}-{k1}\"", "name = \"x\"");
        assert_eq!(parse(&unused).unwrap().len(), 1);
    }

    #[test]
    fn a_sweep_of_long_texts_is_refused_for_its_size() {
        let long = "o".repeat(20_000);
        let text = format!(
            "[matrix]\nk0 = [{}]\nlong = [\"{long}\"]\n             [[config]]\nname = \"x-{{k0}}-{{long}}\"\nsource = \"tmpfs\"\noptions = \"{{long}}\"\n",
            (0..5000)
                .map(|v| format!("\"{v}\""))
                .collect::<Vec<_>>()
                .join(",")
        );
        let e = parse_error(&text);
        assert!(e.starts_with("the matrix makes up to "), "{e}");
        assert!(e.ends_with("MiB of configurations (entry \"x-{k0}-{long}\": 5000 configurations of up to 60742 bytes); at most 64 MiB"), "{e}");
    }

    #[test]
    fn many_keys_are_read_in_one_pass() {
        // Each combination is built once, and the name is searched once
        // per entry, not once per key and configuration (which took
        // minutes for a file of this size).
        const KEYS: usize = 30_000;
        let mut text = String::from("[matrix]\n");
        let mut name = String::from("x");
        for key in 0..KEYS {
            text += &format!("k{key} = [\"\"]\n");
            name += &format!("{{k{key}}}");
        }
        let configs = parse(&format!(
            "{text}[[config]]\nname = \"{name}\"\nsource = \"tmpfs\"\n"
        ))
        .unwrap();
        assert_eq!(configs.len(), 1);
        assert_eq!(configs[0].name, "x");
        assert_eq!(configs[0].parameters.len(), KEYS);
        let e = parse_error(&format!(
            "{text}[[config]]\nname = \"x\"\nsource = \"tmpfs\"\noptions = \"{}\"\n",
            name.trim_start_matches('x')
        ));
        assert!(
            e.ends_with("({k0}, {k1}, {k10}, {k100}, {k1000}, {k10000}, {k10001}, {k10002}, … 30000 in all), so that each configuration has a name of its own"),
            "{e}"
        );
    }

    #[test]
    fn two_configurations_of_one_name_are_refused() {
        let e = parse_error(
            "matrix = { j = [\"a\", \"a\"] }\n[[config]]\nname = \"x-{j}\"\nsource = \"tmpfs\"\n",
        );
        assert!(e.starts_with("two configurations are named \"x-a\""), "{e}");
    }

    #[test]
    fn quotes_group_words() {
        assert_eq!(
            split_words("mkfs.xfs -L 'my label' \"\" {dev}").unwrap(),
            ["mkfs.xfs", "-L", "my label", "", "{dev}"]
        );
    }
}
