//! What changed between two runs of the same target: risk flags gained or
//! lost, and every difference of the target's fingerprint (file system,
//! mkfs and mount options, device, kernel, fsbench, suite and parameters,
//! host). A comparison shows it before any number: `ext4` against `ext4
//! data=writeback` is faster because it is no longer crash-safe, and that
//! is the first thing a reader must see.
use super::verdict::own_risks;
use crate::result::env::Risk;
use crate::result::fingerprint;
use crate::result::{RunResult, TargetResult};

/// The differences of one target between a run and a later one.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetDiff {
    pub target: String,
    /// Risk messages the later run has and the first has not.
    pub risks_gained: Vec<String>,
    /// Risk messages the first run has and the later one has not.
    pub risks_lost: Vec<String>,
    /// What changed in its fingerprint (`fingerprint::differences`).
    pub changed: Vec<String>,
}

/// Each target of `after` against its match in `before` (by name, or by
/// position when each run has one target); only targets that differ.
pub fn differences(before: &RunResult, after: &RunResult, by_position: bool) -> Vec<TargetDiff> {
    after
        .targets
        .iter()
        .enumerate()
        .filter_map(|(index, later)| {
            let first = match by_position {
                true => before.targets.get(index),
                false => before.targets.iter().find(|t| t.name == later.name),
            }?;
            difference(first, later)
        })
        .collect()
}

fn difference(first: &TargetResult, later: &TargetResult) -> Option<TargetDiff> {
    let (a, b) = (own_risks(first), own_risks(later));
    let only_in = |x: &[Risk], y: &[Risk]| -> Vec<String> {
        x.iter()
            .filter(|r| !y.iter().any(|o| o.code == r.code))
            .map(|r| r.message.clone())
            .collect()
    };
    let changed = match (&first.fingerprint, &later.fingerprint) {
        (Some(a), Some(b)) => fingerprint::differences(a, b),
        _ => Vec::new(),
    };
    let diff = TargetDiff {
        target: later.name.clone(),
        risks_gained: only_in(&b, &a),
        risks_lost: only_in(&a, &b),
        changed,
    };
    let differs =
        !diff.risks_gained.is_empty() || !diff.risks_lost.is_empty() || !diff.changed.is_empty();
    differs.then_some(diff)
}

/// The lines a comparison starts with; empty when nothing differs.
pub fn render(diffs: &[TargetDiff], before: &str, after: &str) -> String {
    let mut text = String::new();
    for diff in diffs {
        text += &format!(
            "CONFIGURATION {} changed from {before} to {after}:\n",
            diff.target
        );
        for risk in &diff.risks_gained {
            text += &format!("  RISK gained: {risk}\n");
        }
        for risk in &diff.risks_lost {
            text += &format!("  risk gone: {risk}\n");
        }
        for change in &diff.changed {
            text += &format!("  {change}\n");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::env::TargetEnv;

    fn run_with(name: &str, options: &str, risks: &[&str]) -> RunResult {
        let mut run = crate::driver::recording::new_run_result("t");
        run.targets.push(TargetResult {
            name: name.into(),
            path: "/mnt/x".into(),
            env: Some(TargetEnv {
                fs_type: "ext4".into(),
                mount_options: options.into(),
                risks: risks
                    .iter()
                    .map(|code| Risk {
                        code: code.to_string(),
                        message: format!("{code}: can lose data"),
                    })
                    .collect(),
                ..Default::default()
            }),
            workloads: Vec::new(),
            cleanup: None,
            reference: false,
            built: None,
            durability: None,
            fingerprint: None,
        });
        fingerprint::refresh(&mut run);
        run
    }

    #[test]
    fn a_lost_safety_is_said_first() {
        let safe = run_with("ext4", "rw,relatime", &[]);
        let risky = run_with(
            "ext4",
            "rw,relatime,data=writeback,barrier=0",
            &["data_writeback", "nobarrier"],
        );
        let diffs = differences(&safe, &risky, false);
        assert_eq!(diffs.len(), 1);
        assert_eq!(diffs[0].risks_gained.len(), 2);
        assert!(diffs[0].risks_lost.is_empty());
        let text = render(&diffs, "a.json", "b.json");
        assert!(
            text.starts_with("CONFIGURATION ext4 changed from a.json to b.json"),
            "{text}"
        );
        assert!(
            text.contains("RISK gained: data_writeback: can lose data"),
            "{text}"
        );
        assert!(
            text.contains("mount options rw,relatime → rw,relatime,data=writeback,barrier=0"),
            "{text}"
        );
        // Back again: the risks are gone, and that is said too.
        let back = render(&differences(&risky, &safe, false), "b.json", "a.json");
        assert!(back.contains("risk gone: nobarrier"), "{back}");
    }

    #[test]
    fn the_same_configuration_says_nothing() {
        let a = run_with("ext4", "rw", &["volatile"]);
        let b = run_with("ext4", "rw", &["volatile"]);
        assert!(differences(&a, &b, false).is_empty());
        // Targets matched by name: another name is not this target.
        let other = run_with("xfs", "rw,data=writeback", &["data_writeback"]);
        assert!(differences(&a, &other, false).is_empty());
        assert_eq!(
            differences(&a, &other, true).len(),
            1,
            "one target per run: by position"
        );
    }
}
