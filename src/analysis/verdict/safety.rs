//! What a target can lose on a crash, as the verdict names it: its own
//! risk flags and its workloads' (a sync log), and what its durability
//! was found to be: measured by power cuts, else judged by the durability
//! workload's timing.
use crate::result::TargetResult;
use crate::result::env::Risk;
use crate::storage::env::risk::{declared_by, declared_name, short_name};

/// What a target can lose on a crash, as its verdict says it.
#[derive(Debug, Clone, Default)]
pub struct Safety {
    /// Short names of what its configuration can lose ("data=writeback").
    pub risks: Vec<String>,
    /// What its durability was found to be, when anything tested it.
    pub durability: Option<String>,
    /// Measured by power cuts: the cuts that lost acknowledged data or the
    /// file system, the cuts, and of those the ones left unmountable.
    pub cuts_losing: Option<(usize, usize)>,
    pub cuts_unmountable: usize,
}

impl Safety {
    /// The target's risks and durability.
    pub fn of(target: &TargetResult) -> Safety {
        Safety::of_configuration(target, &[])
    }

    /// The target's risks and durability but for what the workloads named
    /// `placed` risk: placements of a sync log the run compares on purpose
    /// (its never-synced one among them) are the comparison's subject, not
    /// a risk of the configuration.
    pub fn of_configuration(target: &TargetResult, placed: &[String]) -> Safety {
        Safety {
            risks: risks_but(target, placed),
            durability: durability(target),
            cuts_losing: target.durability.as_ref().map(|d| (d.failed(), d.states)),
            cuts_unmountable: target
                .durability
                .as_ref()
                .map_or(0, |d| d.states_unmountable),
        }
    }

    /// The sentence's clause on safety: measured losses first, the risk
    /// flags beside them; None when there is nothing to say.
    pub fn clause(&self) -> Option<String> {
        let risks = self.risks.join(", ");
        match (self.cuts_losing, self.risks.is_empty()) {
            (Some((0, _)), true) => None,
            (Some((0, cuts)), false) => Some(format!(
                "{risks}, yet 0 of {cuts} simulated power cuts lost acknowledged data"
            )),
            (Some((losing, cuts)), _) => {
                let why: Vec<String> = (self.cuts_unmountable > 0)
                    .then(|| format!("{} left it unmountable", self.cuts_unmountable))
                    .into_iter()
                    .chain((!self.risks.is_empty()).then_some(risks))
                    .collect();
                let why = match why.is_empty() {
                    true => String::new(),
                    false => format!(" ({})", why.join("; ")),
                };
                Some(format!(
                    "not crash-safe: lost data in {losing} of {cuts} simulated power cuts{why}"
                ))
            }
            (None, false) => Some(format!("not crash-safe: {risks}")),
            (None, true) => None,
        }
    }
}

/// The short names of the target's risk flags, those its configuration
/// declared (with the setting it named), then its workloads' (a sync
/// log's, which the run's figures rest on), each once: the same risks the
/// reports' RISK lines say, so "risks: none found" never stands beside
/// one.
pub fn risks(target: &TargetResult) -> Vec<String> {
    risks_but(target, &[])
}

/// `risks` without those of the workloads named `placed`.
fn risks_but(target: &TargetResult, placed: &[String]) -> Vec<String> {
    let name = |r: &Risk| risk_name(&r.code);
    let own = target.env.iter().flat_map(|e| &e.risks).map(name);
    let declared = target
        .built
        .iter()
        .flat_map(|b| &b.declared_risks)
        .map(|(code, setting)| declared_name(code, setting));
    let workloads = target
        .workloads
        .iter()
        .filter(|w| !placed.contains(&w.name().to_string()))
        .flat_map(|w| &w.risks)
        .map(name);
    let mut names: Vec<String> = Vec::new();
    for name in own.chain(declared).chain(workloads) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// A target's own risk flags: those probed from its mount, then those its
/// configuration declared (what a server does, which no probe sees).
pub fn own_risks(target: &TargetResult) -> Vec<Risk> {
    let probed = target.env.iter().flat_map(|e| e.risks.iter().cloned());
    let declared = target.built.iter().flat_map(declared_by);
    probed.chain(declared).collect()
}

/// A risk's short name; a sync log's says so ("sync log never synced",
/// "sync log: volatile (RAM)").
fn risk_name(code: &str) -> String {
    match code.strip_prefix("sync_log_") {
        Some("not_synced") => "sync log never synced".to_string(),
        Some(own) => format!("sync log: {}", short_name(own)),
        None => short_name(code).to_string(),
    }
}

/// What the target's power cuts lost ("0 of 200 cuts lost acknowledged
/// data"), else the conclusion of the durability workload's last run on
/// it.
pub fn durability(target: &TargetResult) -> Option<String> {
    if let Some(cuts) = &target.durability {
        return Some(cuts.summary());
    }
    let run = target
        .workloads
        .iter()
        .rev()
        .find(|w| w.workload == "durability")?;
    let conclusion = run.params.get("verdict")?.get("conclusion")?.as_str()?;
    Some(
        match conclusion {
            "plausible" => "plausible",
            "not_durable" => "NOT DURABLE (acknowledged writes can be lost)",
            _ => "cannot tell",
        }
        .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn safety(risks: &[&str], cuts_losing: Option<(usize, usize)>) -> Safety {
        Safety {
            risks: risks.iter().map(|r| r.to_string()).collect(),
            durability: None,
            cuts_losing,
            cuts_unmountable: 0,
        }
    }

    /// A risk the target's configuration declared is among its risks, in
    /// the verdict's words with the setting that raised it, and among its
    /// own risks (the RISK lines, what `compare` says was gained).
    #[test]
    fn a_declared_risk_is_named_with_where_it_came_from() {
        let target: TargetResult = serde_json::from_str(
            r#"{"name":"a","path":"/a","env":null,"workloads":[],"cleanup":null,
                "built":{"declared_risks":{"server_async":"sync always = no"}}}"#,
        )
        .unwrap();
        let names = risks(&target);
        assert_eq!(
            names,
            [
                "server acknowledges writes before its disk has them: a server crash loses them (declared: sync always = no)"
            ]
        );
        assert_eq!(
            Safety::of(&target).clause().unwrap(),
            format!("not crash-safe: {}", names[0])
        );
        let own = own_risks(&target);
        assert_eq!(own.len(), 1);
        assert!(
            own[0]
                .message
                .ends_with("(declared by its configuration: sync always = no)")
        );
    }

    /// Measured losses come first and say what was measured; a flag that
    /// the cuts did not bear out is said with that evidence beside it.
    #[test]
    fn the_clause_puts_measured_losses_before_the_flags() {
        assert_eq!(safety(&[], None).clause(), None);
        assert_eq!(safety(&[], Some((0, 200))).clause(), None);
        assert_eq!(
            safety(&["barriers off"], None).clause().unwrap(),
            "not crash-safe: barriers off"
        );
        assert_eq!(
            safety(&["barriers off"], Some((24, 200))).clause().unwrap(),
            "not crash-safe: lost data in 24 of 200 simulated power cuts (barriers off)"
        );
        assert_eq!(
            safety(&[], Some((3, 50))).clause().unwrap(),
            "not crash-safe: lost data in 3 of 50 simulated power cuts"
        );
        let unmountable = Safety {
            cuts_unmountable: 32,
            ..safety(&["barriers off"], Some((39, 40)))
        };
        assert_eq!(
            unmountable.clause().unwrap(),
            "not crash-safe: lost data in 39 of 40 simulated power cuts (32 left it unmountable; barriers off)"
        );
        assert_eq!(
            safety(&["data=writeback"], Some((0, 200)))
                .clause()
                .unwrap(),
            "data=writeback, yet 0 of 200 simulated power cuts lost acknowledged data"
        );
    }
}
