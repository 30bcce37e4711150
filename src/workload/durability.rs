//! `fsbench durability`: what a durable small write costs on a target, and
//! whether the stack really makes it durable. Six probes, each a series of
//! 4 KiB writes: fsync and fdatasync after an overwrite and after an
//! append, and O_SYNC and O_DSYNC overwrites. A flush that reaches a
//! spinning platter waits for the platter; when a rotational device
//! completes them faster than it can turn, something between the
//! application and the medium acknowledges writes it has not made durable.
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use anyhow::Context;
use rustix::fs::{Mode, OFlags};
use serde::Serialize;

use crate::measure::phase::{Measured, Rate};
use crate::measure::{LatencyRecorder, PhaseClock, PhaseTiming};
use crate::result::env::TargetEnv;
use crate::result::{LatencySummary, Metric, WorkloadResult};
use crate::rng::{Random, WyRand};
use crate::storage::just_closed;
use crate::workload::{RunContext, Workload};

/// The size of every write: one page, the unit of a small durable update
/// (a mail index entry, a database WAL record, a CNID update).
pub const BLOCK: usize = 4096;

/// A full turn of a 7200 rpm platter takes 8.3 ms; a flush that commits
/// data to it waits, on average, for a good part of one. Medians well
/// below this on a rotational device are not physical.
pub const ROTATIONAL_FLOOR_NS: u64 = 2_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Probe {
    FsyncOverwrite,
    FdatasyncOverwrite,
    FsyncAppend,
    FdatasyncAppend,
    OsyncWrite,
    OdsyncWrite,
}

impl Probe {
    pub const ALL: [Probe; 6] = [
        Probe::FsyncOverwrite,
        Probe::FdatasyncOverwrite,
        Probe::FsyncAppend,
        Probe::FdatasyncAppend,
        Probe::OsyncWrite,
        Probe::OdsyncWrite,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Probe::FsyncOverwrite => "fsync_overwrite",
            Probe::FdatasyncOverwrite => "fdatasync_overwrite",
            Probe::FsyncAppend => "fsync_append",
            Probe::FdatasyncAppend => "fdatasync_append",
            Probe::OsyncWrite => "osync_write",
            Probe::OdsyncWrite => "odsync_write",
        }
    }

    fn open_flags(self) -> OFlags {
        match self {
            Probe::OsyncWrite => OFlags::SYNC,
            Probe::OdsyncWrite => OFlags::DSYNC,
            _ => OFlags::empty(),
        }
    }

    fn appends(self) -> bool {
        matches!(self, Probe::FsyncAppend | Probe::FdatasyncAppend)
    }
}

/// How long each probe runs at most, and how many writes at most.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Limits {
    pub writes: u64,
    pub seconds: f64,
}

impl Limits {
    /// The limits, refused when a probe would do nothing or run for hours.
    pub fn new(writes: u64, seconds: f64) -> anyhow::Result<Limits> {
        if !(1..=10_000_000).contains(&writes) {
            return crate::error::usage(format!("--writes {writes}: must be 1 to 10000000"));
        }
        if !(seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0) {
            return crate::error::usage(format!(
                "--duration {seconds}s: must be above 0 and at most 1h"
            ));
        }
        Ok(Limits { writes, seconds })
    }
}

pub struct Durability {
    limits: Limits,
}

impl Durability {
    pub fn new(limits: Limits) -> Self {
        Durability { limits }
    }
}

impl Workload for Durability {
    fn kind(&self) -> &'static str {
        "durability"
    }

    fn planned_bytes(&self) -> u64 {
        // The append probes grow their file by one block per write.
        self.limits.writes * BLOCK as u64 + BLOCK as u64
    }

    fn planned_files(&self) -> u64 {
        Probe::ALL.len() as u64
    }

    fn run(&mut self, ctx: &RunContext<'_>) -> anyhow::Result<WorkloadResult> {
        let mut metrics = Vec::new();
        let mut medians = Vec::new();
        for probe in Probe::ALL {
            ctx.progress.start(probe.name());
            let outcome = run_probe(ctx, probe, self.limits)?;
            ctx.progress.done(outcome.timing.elapsed.as_secs_f64());
            if let Some(latency) = &outcome.latency {
                medians.push((probe, latency.p50_ns));
            }
            metrics.push(outcome.into_metric(probe));
        }
        // The verdict needs to know whether the device is rotational and
        // how the file system is mounted.
        let verdict = Verdict::judge(ctx.env, &medians);
        Ok(WorkloadResult {
            workload: self.kind().into(),
            repetition: ctx.repetition,
            params: serde_json::json!({
                "block_bytes": BLOCK,
                "limits": self.limits,
                "verdict": verdict,
            }),
            metrics,
            notes: verdict.lines(),
            ..Default::default()
        })
    }
}

/// What one probe measured.
struct ProbeMeasured {
    writes: u64,
    timing: PhaseTiming,
    latency: Option<LatencySummary>,
}

impl ProbeMeasured {
    /// Durable writes per second, with the latency of each write and its
    /// sync.
    fn into_metric(self, probe: Probe) -> Metric {
        Measured::over(&self.timing)
            .rate(probe.name(), Rate::per_second("writes/s"), self.writes)
            .with_latency(self.latency)
    }
}

/// One probe: its own file, writes until the count or the time is reached;
/// each sample is the write plus its sync (the cost a program pays).
fn run_probe(ctx: &RunContext<'_>, probe: Probe, limits: Limits) -> anyhow::Result<ProbeMeasured> {
    let name = format!("durability-{}", probe.name());
    let file: File = rustix::fs::openat(
        ctx.scratch.dir(),
        name.as_str(),
        OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC | probe.open_flags(),
        Mode::from_bits_truncate(0o644),
    )
    .with_context(|| format!("cannot create {name}"))?
    .into();
    let mut block = vec![0u8; BLOCK];
    // Incompressible, and different on every run.
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64;
    WyRand::new(seed).fill(&mut block);
    if !probe.appends() {
        // The overwrite probes rewrite an allocated, synced block.
        write_block(&file, &mut block, 0, 0)?;
        file.sync_all().context("fsync")?;
    }
    let mut latency = LatencyRecorder::new();
    let clock = PhaseClock::start();
    let mut start = Instant::now();
    let deadline = start + Duration::from_secs_f64(limits.seconds);
    let mut writes = 0;
    // One clock read per write: the end of one sample starts the next.
    while writes < limits.writes && start < deadline {
        crate::interrupt::check()?;
        let offset = if probe.appends() {
            writes * BLOCK as u64
        } else {
            0
        };
        write_block(&file, &mut block, offset, writes)?;
        sync(&file, probe)?;
        start = latency.record_since(start);
        writes += 1;
    }
    let timing = clock.stop();
    drop(file);
    just_closed::unlink(ctx.scratch.dir(), name.as_str())
        .with_context(|| format!("cannot remove {name}"))?;
    Ok(ProbeMeasured {
        writes,
        timing,
        latency: latency.summary_for_metric(),
    })
}

/// Writes the block with a fresh sequence number in its first bytes, so
/// no layer can skip it as a rewrite of identical data.
fn write_block(file: &File, block: &mut [u8], offset: u64, sequence: u64) -> anyhow::Result<()> {
    block[..8].copy_from_slice(&sequence.to_le_bytes());
    file.write_all_at(block, offset).context("write")
}

fn sync(file: &File, probe: Probe) -> anyhow::Result<()> {
    match probe {
        Probe::FsyncOverwrite | Probe::FsyncAppend => file.sync_all().context("fsync"),
        Probe::FdatasyncOverwrite | Probe::FdatasyncAppend => file.sync_data().context("fdatasync"),
        Probe::OsyncWrite | Probe::OdsyncWrite => Ok(()),
    }
}

/// The honesty check's conclusion, with the facts it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub conclusion: Conclusion,
    /// Why, in sentences: what was measured and what follows.
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Conclusion {
    /// Flush times are physically plausible and no setting disables them.
    Plausible,
    /// Writes are acknowledged before they are durable.
    NotDurable,
    /// Nothing the measurement can tell (e.g. an SSD with power-loss
    /// protection and one without look alike).
    Unknown,
}

impl Verdict {
    /// Judges from the target's environment and each probe's median
    /// latency. Never guesses: without evidence the conclusion is Unknown.
    pub fn judge(env: Option<&TargetEnv>, medians: &[(Probe, u64)]) -> Verdict {
        let mut reasons = Vec::new();
        let Some(env) = env else {
            reasons.push("the target's device could not be probed: no verdict".into());
            return Verdict {
                conclusion: Conclusion::Unknown,
                reasons,
            };
        };
        let fastest = medians.iter().min_by_key(|(_, ns)| *ns).copied();
        let risky: Vec<&str> = env
            .risks
            .iter()
            .filter(|r| {
                matches!(
                    r.code.as_str(),
                    "volatile" | "nobarrier" | "write_back_cache" | "nfs_async"
                )
            })
            .map(|r| r.message.as_str())
            .collect();
        if !risky.is_empty() {
            reasons.extend(risky.iter().map(|m| format!("configuration: {m}")));
            return Verdict {
                conclusion: Conclusion::NotDurable,
                reasons,
            };
        }
        if let (Some(device), Some(_)) = (env.virtual_device(), fastest) {
            reasons.push(format!(
                "cannot tell (virtual or loop device): {device} reports itself rotational or not whatever lies beneath it, so the speed of its flushes is no evidence either way"
            ));
            return Verdict {
                conclusion: Conclusion::Unknown,
                reasons,
            };
        }
        match (env.rotational, fastest) {
            (Some(true), Some((probe, ns))) if ns < ROTATIONAL_FLOOR_NS => {
                reasons.push(format!(
                    "the device is rotational, yet the median {} took {} — less than a platter can physically commit (~{} ms at 7200 rpm): a cache acknowledges writes it has not made durable (write-back cache without flushes, or a controller/virtual disk ignoring them)",
                    probe.name(),
                    format_ms(ns),
                    ROTATIONAL_FLOOR_NS / 1_000_000
                ));
                Verdict {
                    conclusion: Conclusion::NotDurable,
                    reasons,
                }
            }
            (Some(true), Some((probe, ns))) => {
                reasons.push(format!(
                    "the device is rotational and the fastest median ({} at {}) is what committing to a platter takes",
                    probe.name(),
                    format_ms(ns)
                ));
                Verdict {
                    conclusion: Conclusion::Plausible,
                    reasons,
                }
            }
            (_, None) => {
                reasons.push("no write completed: no verdict".into());
                Verdict {
                    conclusion: Conclusion::Unknown,
                    reasons,
                }
            }
            (_, Some((probe, ns))) => {
                reasons.push(format!(
                    "the device is not (known to be) rotational; the median {} took {}: flash and virtual disks can be honest at any speed, so speed alone proves nothing here",
                    probe.name(),
                    format_ms(ns)
                ));
                Verdict {
                    conclusion: Conclusion::Unknown,
                    reasons,
                }
            }
        }
    }

    /// The verdict as report notes.
    pub fn lines(&self) -> Vec<String> {
        let head = match self.conclusion {
            Conclusion::Plausible => "durability: plausible",
            Conclusion::NotDurable => {
                "durability: NOT DURABLE — acknowledged writes can be lost on power failure"
            }
            Conclusion::Unknown => "durability: cannot tell from timing",
        };
        std::iter::once(head.to_string())
            .chain(self.reasons.iter().cloned())
            .collect()
    }
}

fn format_ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::env::Risk;

    fn disk(rotational: Option<bool>, risks: &[&str]) -> TargetEnv {
        TargetEnv {
            rotational,
            risks: risks
                .iter()
                .map(|code| Risk {
                    code: code.to_string(),
                    message: format!("{code} message"),
                })
                .collect(),
            ..Default::default()
        }
    }

    fn medians(ms: &[f64]) -> Vec<(Probe, u64)> {
        Probe::ALL
            .iter()
            .zip(ms)
            .map(|(p, ms)| (*p, (ms * 1e6) as u64))
            .collect()
    }

    #[test]
    fn a_virtual_or_loop_device_gives_no_verdict_from_speed() {
        for device in ["loop3", "vda", "xvdb", "nbd0", "zram0"] {
            let env = TargetEnv {
                block_device: Some(device.into()),
                ..disk(Some(true), &[])
            };
            let v = Verdict::judge(Some(&env), &medians(&[0.05, 0.04, 0.06]));
            assert_eq!(v.conclusion, Conclusion::Unknown, "{device}: {v:?}");
            assert!(
                v.reasons[0].contains("cannot tell (virtual or loop device)"),
                "{v:?}"
            );
        }
        // A real disk whose name starts like a virtual one is not one.
        let real = TargetEnv {
            block_device: Some("sda".into()),
            ..disk(Some(true), &[])
        };
        let v = Verdict::judge(Some(&real), &medians(&[0.05, 0.04, 0.06]));
        assert_eq!(v.conclusion, Conclusion::NotDurable, "{v:?}");
        // The configuration is evidence on any device.
        let risky = TargetEnv {
            block_device: Some("loop3".into()),
            ..disk(Some(true), &["nobarrier"])
        };
        let v = Verdict::judge(Some(&risky), &medians(&[0.05]));
        assert_eq!(v.conclusion, Conclusion::NotDurable, "{v:?}");
    }

    #[test]
    fn a_platter_that_syncs_in_microseconds_is_not_durable() {
        let v = Verdict::judge(Some(&disk(Some(true), &[])), &medians(&[0.05, 0.04, 0.06]));
        assert_eq!(v.conclusion, Conclusion::NotDurable);
        assert!(v.reasons[0].contains("fdatasync_overwrite"), "{v:?}");
        assert!(v.reasons[0].contains("0.040 ms"), "{v:?}");
    }

    #[test]
    fn a_platter_at_rotation_speed_is_plausible() {
        let v = Verdict::judge(Some(&disk(Some(true), &[])), &medians(&[8.1, 4.2, 12.0]));
        assert_eq!(v.conclusion, Conclusion::Plausible);
        assert!(v.reasons[0].contains("4.200 ms"), "{v:?}");
    }

    #[test]
    fn the_floor_is_the_boundary() {
        let just_below = [(Probe::FsyncOverwrite, ROTATIONAL_FLOOR_NS - 1)];
        let at = [(Probe::FsyncOverwrite, ROTATIONAL_FLOOR_NS)];
        let hdd = disk(Some(true), &[]);
        assert_eq!(
            Verdict::judge(Some(&hdd), &just_below).conclusion,
            Conclusion::NotDurable
        );
        assert_eq!(
            Verdict::judge(Some(&hdd), &at).conclusion,
            Conclusion::Plausible
        );
    }

    #[test]
    fn fast_flash_proves_nothing() {
        let v = Verdict::judge(Some(&disk(Some(false), &[])), &medians(&[0.02]));
        assert_eq!(v.conclusion, Conclusion::Unknown);
        let v = Verdict::judge(Some(&disk(None, &[])), &medians(&[0.02]));
        assert_eq!(v.conclusion, Conclusion::Unknown);
    }

    #[test]
    fn settings_that_skip_flushes_are_not_durable_whatever_the_timing() {
        for code in ["nobarrier", "volatile", "write_back_cache", "nfs_async"] {
            let v = Verdict::judge(Some(&disk(Some(false), &[code])), &medians(&[9.0]));
            assert_eq!(v.conclusion, Conclusion::NotDurable, "{code}");
            assert!(v.reasons[0].contains(code), "{v:?}");
        }
        // data=writeback loses file contents, not flushes: timing decides.
        let v = Verdict::judge(
            Some(&disk(Some(true), &["data_writeback"])),
            &medians(&[9.0]),
        );
        assert_eq!(v.conclusion, Conclusion::Plausible);
    }

    #[test]
    fn no_evidence_no_verdict() {
        assert_eq!(
            Verdict::judge(None, &medians(&[0.01])).conclusion,
            Conclusion::Unknown
        );
        let v = Verdict::judge(Some(&disk(Some(true), &[])), &[]);
        assert_eq!(v.conclusion, Conclusion::Unknown);
    }
}
