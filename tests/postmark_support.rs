//! Shared by the PostMark tests (included with `#[path]`; built alone it
//! holds no tests): configurations with what PostMark 1.53 does with
//! them, configuration files, and the counts of a PostMark report or of
//! fsbench's JSON result.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The counts of PostMark's report, in its order: created (alone,
/// mixed), read, appended, deleted (alone, mixed).
pub type Counts = [u64; 8];

/// A configuration (`{A}` and `{B}` stand for location directories) and
/// what PostMark 1.53 does with it: its report's counts and the exact
/// bytes read and written (its own float counters print 44169824 for
/// seed 000's 44169867 bytes written).
pub struct Vector {
    pub settings: &'static [&'static str],
    pub counts: Counts,
    pub bytes: (u64, u64),
}

pub const DEFAULTS: Vector = Vector {
    settings: &["set location {A}"],
    counts: [764, 500, 264, 243, 257, 764, 528, 236],
    bytes: (1_430_770, 4_662_068),
};

/// Seed 000's configuration (the netatalk article).
pub const SEED_000: Vector = Vector {
    settings: &[
        "set location {A}",
        "set number 5000",
        "set transactions 5000",
        "set buffering false",
    ],
    counts: [7454, 5000, 2454, 2524, 2476, 7454, 4908, 2546],
    bytes: (14_180_621, 44_169_867),
};

pub const TWO_LOCATIONS: Vector = Vector {
    settings: &[
        "set location {A} 3",
        "set location +{B}",
        "set subdirectories 4",
        "set number 1000",
        "set transactions 5000",
    ],
    counts: [3507, 1000, 2507, 2471, 2522, 3507, 1014, 2493],
    bytes: (16_009_405, 22_899_619),
};

/// Other sizes, blocks (larger than stdio's buffer), seed and biases.
pub const MIXED: Vector = Vector {
    settings: &[
        "set location {A}",
        "set size 1000 20000",
        "set read 4096",
        "set write 8192",
        "set number 2000",
        "set transactions 10000",
        "set seed 7",
        "set bias read 3",
        "set bias create 6",
    ],
    counts: [7948, 2000, 5948, 3069, 6916, 7948, 4000, 3948],
    bytes: (39_702_090, 106_426_793),
};

/// `settings` with `{A}` and `{B}` replaced by directories.
pub fn with_locations(settings: &[&str], a: &Path, b: &Path) -> Vec<String> {
    settings
        .iter()
        .map(|s| {
            s.replace("{A}", a.to_str().unwrap())
                .replace("{B}", b.to_str().unwrap())
        })
        .collect()
}

/// The eight counts of the "Files:" section of a verbose report
/// (PostMark's or fsbench's: the layout is the same).
pub fn report_counts(report: &str) -> Counts {
    let values: Vec<u64> = report
        .lines()
        .skip_while(|line| *line != "Files:")
        .skip(1)
        .take(8)
        .map(|line| {
            line.split_whitespace()
                .find_map(|word| word.parse().ok())
                .unwrap_or_else(|| panic!("no count in {line:?}\n{report}"))
        })
        .collect();
    values
        .try_into()
        .unwrap_or_else(|_| panic!("no Files: section\n{report}"))
}

/// The counts in one workload result of fsbench's JSON.
pub fn json_counts(workload: &serde_json::Value) -> Counts {
    [
        "create",
        "create_alone",
        "create_mixed",
        "read",
        "append",
        "delete",
        "delete_alone",
        "delete_mixed",
    ]
    .map(|name| samples(workload, name))
}

/// A metric's `samples` in a workload result (files, transactions, bytes).
pub fn samples(workload: &serde_json::Value, metric: &str) -> u64 {
    metric_of(workload, metric)["samples"]
        .as_u64()
        .unwrap_or_else(|| panic!("metric {metric} has no samples"))
}

pub fn metric_of<'a>(workload: &'a serde_json::Value, metric: &str) -> &'a serde_json::Value {
    workload["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .find(|m| m["name"] == metric)
        .unwrap_or_else(|| panic!("no metric {metric} in {workload}"))
}

/// Bytes read and written by a workload result.
pub fn json_bytes(workload: &serde_json::Value) -> (u64, u64) {
    (
        samples(workload, "data_read"),
        samples(workload, "data_written"),
    )
}

/// The workload results in fsbench's JSON, in run order.
pub fn workloads(result: &serde_json::Value) -> Vec<serde_json::Value> {
    result["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .flat_map(|t| t["workloads"].as_array().expect("workloads").clone())
        .collect()
}

/// Writes `lines` as a configuration file `name` in `dir`.
pub fn write_config(dir: &Path, name: &str, lines: &[impl AsRef<str>]) -> PathBuf {
    let path = dir.join(name);
    let text: String = lines.iter().map(|l| format!("{}\n", l.as_ref())).collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// `set location DIR`, for a directory that must exist.
pub fn location(dir: &Path) -> String {
    format!("set location {}", dir.display())
}

/// Creates `dir/name` and returns it.
pub fn subdir(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(&path).unwrap();
    path
}
