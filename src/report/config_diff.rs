//! What changed in the configuration between two runs of the same target:
//! risk flags gained or lost, file system type and mount options. A
//! comparison shows it before any number: `ext4` against `ext4
//! data=writeback` is faster because it is no longer crash-safe, and that
//! is the first thing a reader must see.
use crate::result::{RunResult, TargetResult};
use crate::storage::env::TargetEnv;

/// The differences of one target between a run and a later one.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetDiff {
    pub target: String,
    /// Risk messages the later run has and the first has not.
    pub risks_gained: Vec<String>,
    /// Risk messages the first run has and the later one has not.
    pub risks_lost: Vec<String>,
    /// `fs_type mount_options` before and after, when they differ.
    pub mount: Option<(String, String)>,
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
    let (a, b) = (first.env.as_ref()?, later.env.as_ref()?);
    let only_in = |x: &TargetEnv, y: &TargetEnv| -> Vec<String> {
        x.risks
            .iter()
            .filter(|r| !y.risks.iter().any(|o| o.code == r.code))
            .map(|r| r.message.clone())
            .collect()
    };
    let mount = |env: &TargetEnv| format!("{} {}", env.fs_type, env.mount_options);
    let diff = TargetDiff {
        target: later.name.clone(),
        risks_gained: only_in(b, a),
        risks_lost: only_in(a, b),
        mount: (mount(a) != mount(b)).then(|| (mount(a), mount(b))),
    };
    let differs =
        !diff.risks_gained.is_empty() || !diff.risks_lost.is_empty() || diff.mount.is_some();
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
        if let Some((from, to)) = &diff.mount {
            text += &format!("  mount: {from}\n      → {to}\n");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::env::risk::Risk;

    fn run_with(name: &str, options: &str, risks: &[&str]) -> RunResult {
        let mut run = crate::driver::record::new_run_result("t");
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
        });
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
        assert!(text.contains("data=writeback,barrier=0"), "{text}");
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
