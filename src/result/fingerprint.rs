//! What makes two runs of a target comparable: the file system and how it
//! was built, its mount options, the disk, the kernel, fsbench, the suite
//! and the workloads' parameters, the host's CPU and RAM. Two runs with the
//! same fingerprint measured the same thing the same way; where they
//! differ, [`differences`] says what changed ("kernel 6.1.0 → 6.6.0").
//!
//! Computed from what the result already holds, so a result saved before
//! fingerprints existed gets its own on load ([`refresh`]); it reads only
//! the result model.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{RunResult, TargetResult};

/// One target's fingerprint in one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Fingerprint {
    /// 16 hex digits: FNV-1a (64 bits) of every field below, so the same
    /// settings give the same id on every machine and in every run.
    pub id: String,
    /// The file system type: `ext4`, `tmpfs`, `nfs4`.
    pub fs_type: String,
    /// The mkfs command line of a configuration fsbench built (empty for
    /// a target it was given).
    pub mkfs: String,
    pub mount_options: String,
    /// The disk's model and firmware revision (empty: no disk, or a
    /// virtual one that names neither).
    pub device: String,
    /// The kernel release (`6.1.0-18-amd64`).
    pub kernel: String,
    pub fsbench: String,
    /// The suite `fsbench run` ran, or the command that made the result
    /// (`fsbench io`).
    pub suite: String,
    /// Per workload (as reports name it), its parameters as `path = value`
    /// lines' parts, without what differs from run to run by design
    /// ([`VOLATILE_PARAMETERS`]).
    pub workloads: BTreeMap<String, BTreeMap<String, String>>,
    pub cpu: String,
    /// MemTotal rounded to whole GiB: the kernel's own reservations move
    /// it by megabytes from one release to the next.
    pub ram_gib: u64,
}

/// Parameters a workload records that differ between runs of the same
/// settings: a seed drawn at random, what the run observed or measured
/// (`observed`, `space`), and the host's name and memory (the host's
/// fields say those). Left out wherever they appear in the parameters.
const VOLATILE_PARAMETERS: [&str; 5] = ["seed", "observed", "space", "machine", "ram_mib"];

impl Fingerprint {
    /// The fingerprint of `run`'s target `target`.
    pub fn of(run: &RunResult, target: &TargetResult) -> Fingerprint {
        let env = target.env.as_ref();
        let text = |field: Option<&String>| field.cloned().unwrap_or_default();
        let built = target.built.as_ref();
        let mut fingerprint = Fingerprint {
            id: String::new(),
            fs_type: text(env.map(|e| &e.fs_type)),
            mkfs: text(built.map(|b| &b.mkfs)),
            mount_options: text(env.map(|e| &e.mount_options)),
            device: device_text(target),
            kernel: run.host.kernel.clone(),
            fsbench: run.fsbench_version.clone(),
            suite: run.suite.clone().unwrap_or_else(|| run.made_by()),
            workloads: workload_parameters(target),
            cpu: run.host.cpu_model.clone().unwrap_or_default(),
            ram_gib: (run.host.ram_bytes as f64 / GIB).round() as u64,
        };
        fingerprint.id = fingerprint.hash_id();
        fingerprint
    }

    /// FNV-1a of the fields but the id, as their JSON (whose maps are
    /// sorted by key, so equal fields give equal text).
    fn hash_id(&self) -> String {
        let bare = Fingerprint {
            id: String::new(),
            ..self.clone()
        };
        let text = serde_json::to_string(&bare).unwrap_or_default();
        format!("{:016x}", fnv1a(text.as_bytes()))
    }
}

const GIB: f64 = (1u64 << 30) as f64;

/// 64-bit FNV-1a: small, fixed, and the same everywhere (Rust's own
/// hasher is seeded at random per process).
fn fnv1a(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET_BASIS, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(PRIME)
    })
}

/// `model, firmware F`, from the disk's facts.
fn device_text(target: &TargetResult) -> String {
    let Some(facts) = target.env.as_ref().and_then(|e| e.device_facts.as_ref()) else {
        return String::new();
    };
    let firmware = facts.firmware.as_ref().map(|f| format!("firmware {f}"));
    let parts: Vec<String> = facts.model.iter().cloned().chain(firmware).collect();
    parts.join(", ")
}

/// Each workload's parameters, flattened, from its first result (every
/// repetition runs the same parameters).
fn workload_parameters(target: &TargetResult) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut workloads = BTreeMap::new();
    for result in &target.workloads {
        workloads
            .entry(result.name().to_string())
            .or_insert_with(|| flattened(&result.params));
    }
    workloads
}

/// `params` as `path → value`, paths joined by dots (`job.xfer.fixed`),
/// the volatile ones left out.
pub fn flattened(params: &serde_json::Value) -> BTreeMap<String, String> {
    let mut flat = BTreeMap::new();
    flatten_into(params, String::new(), &mut flat);
    flat
}

fn flatten_into(value: &serde_json::Value, path: String, flat: &mut BTreeMap<String, String>) {
    let child = |key: &str| match path.is_empty() {
        true => key.to_string(),
        false => format!("{path}.{key}"),
    };
    match value {
        serde_json::Value::Object(map) => {
            for (key, inner) in map {
                if !VOLATILE_PARAMETERS.contains(&key.as_str()) {
                    flatten_into(inner, child(key), flat);
                }
            }
        }
        serde_json::Value::Array(items) => {
            for (index, inner) in items.iter().enumerate() {
                flatten_into(inner, child(&index.to_string()), flat);
            }
        }
        other => {
            flat.insert(path, other.to_string());
        }
    }
}

/// What changed from `a` to `b`, one phrase each, in the order a reader
/// looks for a cause: the storage first, then the system, then the
/// benchmark ("mount options rw,relatime → rw,noatime").
pub fn differences(a: &Fingerprint, b: &Fingerprint) -> Vec<String> {
    let fields: [(&str, &str, &str); 8] = [
        ("file system", &a.fs_type, &b.fs_type),
        ("mkfs", &a.mkfs, &b.mkfs),
        ("mount options", &a.mount_options, &b.mount_options),
        ("device", &a.device, &b.device),
        ("kernel", &a.kernel, &b.kernel),
        ("CPU", &a.cpu, &b.cpu),
        ("fsbench", &a.fsbench, &b.fsbench),
        ("suite", &a.suite, &b.suite),
    ];
    let mut changed: Vec<String> = fields
        .iter()
        .filter(|(_, before, after)| before != after)
        .map(|(what, before, after)| format!("{what} {} → {}", shown(before), shown(after)))
        .collect();
    if a.ram_gib != b.ram_gib {
        changed.push(format!("RAM {} GiB → {} GiB", a.ram_gib, b.ram_gib));
    }
    changed.extend(workload_differences(&a.workloads, &b.workloads));
    changed
}

/// An empty field as a reader sees it.
fn shown(text: &str) -> &str {
    match text.is_empty() {
        true => "(none)",
        false => text,
    }
}

/// Workloads added or left out, and each parameter that changed.
fn workload_differences(
    a: &BTreeMap<String, BTreeMap<String, String>>,
    b: &BTreeMap<String, BTreeMap<String, String>>,
) -> Vec<String> {
    let mut changed = Vec::new();
    for (name, before) in a {
        match b.get(name) {
            None => changed.push(format!("workload {name} left out")),
            Some(after) => changed.extend(parameter_differences(name, before, after)),
        }
    }
    for name in b.keys().filter(|name| !a.contains_key(*name)) {
        changed.push(format!("workload {name} added"));
    }
    changed
}

fn parameter_differences(
    workload: &str,
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut paths: Vec<&String> = before.keys().chain(after.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter(|path| before.get(*path) != after.get(*path))
        .map(|path| {
            let value = |map: &BTreeMap<String, String>| {
                map.get(path).map_or("(none)".to_string(), Clone::clone)
            };
            format!("{workload} {path} {} → {}", value(before), value(after))
        })
        .collect()
}

/// Computes every target's fingerprint from what the run holds: after
/// each result the driver adds, after a configuration's build record is
/// attached, and on load. A loaded result's fingerprint is computed anew
/// rather than trusted, so that results saved before fingerprints existed
/// have one and results saved by another version of fsbench get the same
/// id for the same settings.
pub fn refresh(run: &mut RunResult) {
    for index in 0..run.targets.len() {
        run.targets[index].fingerprint = Some(Fingerprint::of(run, &run.targets[index]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = include_str!("../../tests/fixtures/run-two-targets.json");

    fn old_run() -> RunResult {
        serde_json::from_str(OLD).unwrap()
    }

    #[test]
    fn fnv1a_gives_the_published_values() {
        // The FNV test vectors: the empty string and "a".
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn the_id_is_stable_and_follows_every_field() {
        let run = old_run();
        let first = Fingerprint::of(&run, &run.targets[0]);
        assert_eq!(first, Fingerprint::of(&run, &run.targets[0]));
        assert_eq!(first.id.len(), 16);
        let mut kernel = run.clone();
        kernel.host.kernel = "6.6.0".into();
        let other = Fingerprint::of(&kernel, &kernel.targets[0]);
        assert_ne!(first.id, other.id);
        assert_eq!(
            differences(&first, &other),
            [format!("kernel {} → 6.6.0", run.host.kernel)]
        );
    }

    #[test]
    fn seeds_and_observations_do_not_split_runs_but_settings_do() {
        let params = |seed: u64, xfer: u64| {
            serde_json::json!({
                "job": {"seed": seed, "xfer": {"fixed": xfer}, "name": "w"},
                "observed": {"reads": seed},
            })
        };
        assert_eq!(flattened(&params(1, 4096)), flattened(&params(2, 4096)));
        let a = Fingerprint {
            workloads: [("w".to_string(), flattened(&params(1, 4096)))].into(),
            ..Fingerprint::default()
        };
        let b = Fingerprint {
            workloads: [("w".to_string(), flattened(&params(2, 1 << 20)))].into(),
            ..Fingerprint::default()
        };
        assert_eq!(differences(&a, &b), ["w job.xfer.fixed 4096 → 1048576"]);
        let none = Fingerprint::default();
        assert_eq!(differences(&a, &none), ["workload w left out"]);
        assert_eq!(differences(&none, &a), ["workload w added"]);
    }

    #[test]
    fn changes_are_told_storage_first_and_an_empty_field_as_none() {
        let a = Fingerprint {
            mount_options: "rw,relatime".into(),
            fsbench: "0.1.0".into(),
            ram_gib: 16,
            ..Fingerprint::default()
        };
        let b = Fingerprint {
            mount_options: "rw,noatime,nobarrier".into(),
            fsbench: "0.2.0".into(),
            mkfs: "mkfs.ext4 -b 1024 {dev}".into(),
            ram_gib: 32,
            ..Fingerprint::default()
        };
        assert_eq!(
            differences(&a, &b),
            [
                "mkfs (none) → mkfs.ext4 -b 1024 {dev}",
                "mount options rw,relatime → rw,noatime,nobarrier",
                "fsbench 0.1.0 → 0.2.0",
                "RAM 16 GiB → 32 GiB",
            ]
        );
        assert!(differences(&a, &a).is_empty());
    }

    #[test]
    fn an_old_result_gets_its_fingerprint_and_a_loaded_one_follows_the_data() {
        let mut run = old_run();
        assert!(run.targets.iter().all(|t| t.fingerprint.is_none()));
        refresh(&mut run);
        let first = run.targets[0].fingerprint.clone().unwrap();
        assert_eq!(first.fs_type, "tmpfs");
        let mut names: Vec<&str> = run.targets[0].workloads.iter().map(|w| w.name()).collect();
        names.dedup();
        assert_eq!(first.workloads.len(), names.len());
        let text = serde_json::to_string(&run).unwrap();
        let mut back: RunResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back.targets[0].fingerprint.as_ref(), Some(&first));
        back.targets[0].fingerprint.as_mut().unwrap().kernel = "edited".into();
        refresh(&mut back);
        assert_eq!(back.targets[0].fingerprint.as_ref(), Some(&first));
    }
}
