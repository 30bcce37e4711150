//! The HTML report's durability section: what the power cuts lost, each
//! configuration's row marked where it lost acknowledged data.
use serde::Serialize;

use crate::report::durability;
use crate::result::RunResult;

/// The durability table (`report::durability`), its findings and legend.
#[derive(Serialize)]
pub(super) struct DurabilityView {
    title: &'static str,
    header: Vec<&'static str>,
    rows: Vec<DurabilityRowView>,
    findings: Vec<String>,
    legend: &'static str,
}

#[derive(Serialize)]
struct DurabilityRowView {
    cells: Vec<String>,
    /// Whether the configuration lost acknowledged data in any cut: its
    /// row is marked as a failure.
    losing: bool,
}

impl DurabilityView {
    pub(super) fn of(run: &RunResult) -> Option<DurabilityView> {
        let judged = durability::judged(run);
        if judged.is_empty() {
            return None;
        }
        let rows = durability::rows(&judged)
            .into_iter()
            .zip(&judged)
            .map(|(cells, (_, d))| DurabilityRowView {
                cells: cells.to_vec(),
                losing: d.failed() > 0,
            })
            .collect();
        Some(DurabilityView {
            title: durability::TITLE,
            header: durability::HEADER.to_vec(),
            rows,
            findings: durability::findings(&judged),
            legend: durability::LEGEND,
        })
    }
}
