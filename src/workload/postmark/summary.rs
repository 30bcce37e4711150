//! What a run measured, summed over its instances, and its form in the
//! result model: one metric per figure of PostMark's report, each rate
//! over the interval PostMark divides it by, with per-operation latency
//! and the CPU % of that interval.
use super::PostmarkConfig;
use super::engine::{Counts, FileOps, Instance, Op};
use crate::measure::phase::{Measured, Rate};
use crate::measure::{LatencyRecorder, PhaseTiming};
use crate::result::{LatencySummary, WorkloadResult};
use crate::workload::synclog::SyncStats;

/// The three phases and the whole (PostMark's t0..t3).
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub creation: PhaseTiming,
    pub transactions: PhaseTiming,
    pub deletion: PhaseTiming,
    /// From the first create to the last delete.
    pub total: PhaseTiming,
}

pub struct RunSummary {
    pub config: PostmarkConfig,
    pub counts: Counts,
    pub timing: Timing,
    latency: [LatencyRecorder; Op::ALL.len()],
    /// Some instance found no file left and stopped its transactions.
    pub out_of_files: bool,
    /// What the sync log did, when the run kept one.
    pub sync_log: Option<SyncStats>,
}

impl RunSummary {
    pub(super) fn collect<F: FileOps>(
        config: &PostmarkConfig,
        instances: &[Instance<'_, F>],
        timing: Timing,
    ) -> Self {
        let mut counts = Counts::default();
        let mut latency: [LatencyRecorder; Op::ALL.len()] =
            std::array::from_fn(|_| LatencyRecorder::new());
        for instance in instances {
            counts.add(instance.counts());
            for op in Op::ALL {
                latency[op as usize].merge(instance.latency(op));
            }
        }
        RunSummary {
            config: config.clone(),
            counts,
            timing,
            latency,
            out_of_files: instances.iter().any(|i| i.ran_out_of_files()),
            sync_log: None,
        }
    }

    /// Transactions asked for, over all instances.
    pub fn configured_transactions(&self) -> u64 {
        u64::from(self.config.transactions) * u64::from(self.config.threads)
    }

    fn latency_of(&self, ops: &[Op]) -> Option<LatencySummary> {
        let mut merged = LatencyRecorder::new();
        for &op in ops {
            merged.merge(&self.latency[op as usize]);
        }
        merged.summary_for_metric()
    }

    /// The result-model view. `ram_bytes` (0 if unknown) decides whether
    /// reads are flagged as likely served from the page cache.
    pub fn to_workload_result(&self, repetition: u32, ram_bytes: u64) -> WorkloadResult {
        use Op::{Append, CreateAlone, CreateMixed, DeleteAlone, DeleteMixed, Read};
        let (c, t) = (&self.counts, &self.timing);
        let file_ops: [(&'static str, u64, PhaseTiming, &[Op]); 8] = [
            ("create", c.created(), t.total, &[CreateAlone, CreateMixed]),
            (
                "create_alone",
                c.of(CreateAlone),
                t.creation,
                &[CreateAlone],
            ),
            (
                "create_mixed",
                c.of(CreateMixed),
                t.transactions,
                &[CreateMixed],
            ),
            ("read", c.of(Read), t.transactions, &[Read]),
            ("append", c.of(Append), t.transactions, &[Append]),
            ("delete", c.deleted(), t.total, &[DeleteAlone, DeleteMixed]),
            (
                "delete_alone",
                c.of(DeleteAlone),
                t.deletion,
                &[DeleteAlone],
            ),
            (
                "delete_mixed",
                c.of(DeleteMixed),
                t.transactions,
                &[DeleteMixed],
            ),
        ];
        let data = [
            ("data_read", c.bytes_read),
            ("data_written", c.bytes_written),
        ];
        let cached = self.fits_in(ram_bytes);
        // Of PostMark's figures, the reads depend on the page cache, and
        // the ones that write data (never synced) may not reach the
        // storage: flagged when all it wrote fits under the dirty limit.
        let writes = |name: &str| {
            matches!(
                name,
                "create" | "create_alone" | "create_mixed" | "append" | "data_written"
            )
        };
        let over = |phase: &PhaseTiming, name: &str| {
            let measured = Measured {
                fits_in_page_cache: cached && matches!(name, "read" | "data_read"),
                ..Measured::over(phase)
            };
            // The data figures weigh the device counters by their bytes.
            let measured = match name {
                "data_read" => measured.moved(c.bytes_read, 0),
                "data_written" => measured.moved(0, c.bytes_written),
                _ => measured,
            };
            measured.left_dirty(writes(name).then_some(c.bytes_written))
        };
        let transactions = Rate::per_second("transactions/s");
        let mut metrics = vec![over(&t.transactions, "transactions").rate(
            "transactions",
            transactions,
            c.transactions,
        )];
        metrics.extend(file_ops.map(|(name, work, phase, ops)| {
            over(&phase, name)
                .rate(name, Rate::per_second("files/s"), work)
                .with_latency(self.latency_of(ops))
        }));
        metrics.extend(
            data.map(|(name, work)| over(&t.total, name).rate(name, Rate::MIB_PER_S, work)),
        );
        let mut result = WorkloadResult {
            workload: "postmark".into(),
            repetition,
            params: serde_json::to_value(&self.config).unwrap_or_default(),
            metrics,
            notes: self.notes(),
            ..Default::default()
        };
        if let Some(log) = &self.sync_log {
            // Every create and delete waits for its record, from the
            // first create to the last delete.
            log.add_to(&mut result, t.total);
        }
        result
    }

    /// True when every file the run keeps fits in RAM.
    fn fits_in(&self, ram_bytes: u64) -> bool {
        let all: u64 = (0..self.config.locations.len().max(1))
            .map(|i| self.config.planned_bytes(i))
            .sum();
        ram_bytes > 0 && all < ram_bytes
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.out_of_files {
            notes.push(format!(
                "out of files: {} of {} transactions ran (PostMark prints no report here)",
                self.counts.transactions,
                self.configured_transactions()
            ));
        }
        let threads = self.config.threads;
        if threads > 1 {
            notes.push(format!(
                "{threads} independent instances in t0..t{} with seeds {}..{}; counts are their sums",
                threads - 1,
                self.config.instance_seed(0),
                self.config.instance_seed(threads - 1)
            ));
        }
        notes
    }
}

#[cfg(test)]
impl RunSummary {
    /// A run of the default configuration with these counts (`ops` in
    /// `Op::ALL` order), 0.5 s of creation, 2 s of transactions, 0.5 s of
    /// deletion and 3 s in all, for report tests.
    pub fn example(ops: [u64; 6], bytes_read: u64, bytes_written: u64, transactions: u64) -> Self {
        let phase = |ms| {
            PhaseTiming::new(
                std::time::Instant::now(),
                std::time::Duration::from_millis(ms),
                std::time::Duration::from_millis(ms / 2),
            )
        };
        RunSummary {
            config: PostmarkConfig::default(),
            counts: Counts::example(ops, bytes_read, bytes_written, transactions),
            timing: Timing {
                creation: phase(500),
                transactions: phase(2000),
                deletion: phase(500),
                total: phase(3000),
            },
            latency: std::array::from_fn(|_| LatencyRecorder::new()),
            out_of_files: false,
            sync_log: None,
        }
    }
}
