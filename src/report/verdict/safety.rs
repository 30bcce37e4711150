//! What a target can lose on a crash, as the verdict names it: its own
//! risk flags and its workloads' (a sync log), and the durability
//! workload's conclusion.
use crate::result::TargetResult;
use crate::storage::env::risk::short_name;

/// The short names of the target's risk flags, then its workloads' (a
/// sync log's, which the run's figures rest on), each once: the same
/// risks the reports' RISK lines say, so "risks: none found" never stands
/// beside one.
pub fn risks(target: &TargetResult) -> Vec<String> {
    let own = target.env.iter().flat_map(|e| &e.risks);
    let workloads = target.workloads.iter().flat_map(|w| &w.risks);
    let mut names: Vec<String> = Vec::new();
    for name in own.chain(workloads).map(|r| risk_name(&r.code)) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
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

/// The conclusion of the durability workload's last run on the target.
pub fn durability(target: &TargetResult) -> Option<String> {
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
