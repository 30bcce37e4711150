//! Scale-out: one fsbench process per MPI rank (`mpirun -np N fsbench
//! ...`), all on one shared file system, with one correct result.
//!
//! Workloads see a tiny interface and no MPI: [`phase`] around each timed
//! phase (the ranks start it together and agree on its outcome at its
//! end), [`note_span`] for a timing made of phases. The runner uses
//! [`scratch_id`] and [`combine`]; the CLI [`init`] and [`finish`]. Without
//! the `mpi` feature, or when no MPI launcher started the process, the
//! team has one rank and every call here is a no-op: fsbench runs exactly
//! as it does alone.
pub mod aggregate;
mod clock;
mod log;
#[cfg(feature = "mpi")]
mod mpi;
mod team;

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use aggregate::{RankReport, Setup};
pub use log::{Latency, Span};
use serde::Serialize;
use serde::de::DeserializeOwned;
use team::Team;
pub use team::{RankFailed, exit_code_of};

use crate::measure::{PhaseTiming, checkpoint};
use crate::result::WorkloadResult;
use crate::result::env::TargetEnv;

thread_local! {
    /// MPI is used from the main thread only: the team lives there.
    static TEAM: RefCell<Option<Team>> = const { RefCell::new(None) };
}
/// Copies of the team's rank and size, readable from any thread.
static RANK: AtomicU32 = AtomicU32::new(0);
static SIZE: AtomicU32 = AtomicU32::new(1);
/// Zero of the job's common clock: the moment this rank left the start-up
/// barrier. Monotonic times measured from there are comparable across
/// ranks and hosts without trusting the hosts' wall clocks to agree, up to
/// how far apart the ranks leave the barrier. On one host that was
/// measured with each rank reading CLOCK_MONOTONIC right after
/// MPI_Barrier (OpenMPI, 20 barriers per run, `mpirun --oversubscribe`),
/// on 2 cores while builds ran: 0-3 µs with `-np 2`; with `-np 4`
/// (4 ranks on 2 cores) from 4 µs to 10 ms. Across hosts it
/// also includes network latency (not measured).
static EPOCH: OnceLock<Instant> = OnceLock::new();
/// This rank's clock readings at start-up (`clock`), sent with each of
/// its results.
static CLOCK: OnceLock<clock::Readings> = OnceLock::new();

/// Joins the job the launcher started (if any); call once, first thing.
/// Whether an MPI launcher started this process (before `init`).
pub fn launched_by_mpi() -> bool {
    team::launched_by_mpi()
}

pub fn init() -> anyhow::Result<()> {
    let team = Team::launch()?;
    RANK.store(team.rank(), Ordering::Relaxed);
    SIZE.store(team.size(), Ordering::Relaxed);
    crate::storage::set_processes(team.size());
    if team.rank() != 0 {
        crate::console::leave_reports_to_another_process();
        crate::interrupt::leave_answers_to_another_process();
    }
    if team.size() > 1 {
        checkpoint::enable();
        crate::measure::latency::keep_histograms_with(log::add_latency);
        hooks::load();
        crate::interrupt::stop_on_sigusr1()?;
    }
    team.barrier();
    let _ = EPOCH.set(Instant::now());
    if team.size() > 1 {
        let _ = CLOCK.set(clock::read(&team, common_seconds));
    }
    TEAM.with(|t| *t.borrow_mut() = Some(team));
    Ok(())
}

/// Ends the job once the outcome is settled and reported: waits for every
/// rank (mpirun kills the rest as soon as one exits with an error, so no
/// rank may leave before all have cleaned up and rank 0 has spoken), then
/// finalises MPI.
pub fn finish() {
    with_team(Team::barrier);
    // Dropping an MPI team finalises MPI.
    TEAM.with(|t| *t.borrow_mut() = None);
}

pub fn rank() -> u32 {
    RANK.load(Ordering::Relaxed)
}

pub fn size() -> u32 {
    SIZE.load(Ordering::Relaxed)
}

/// Rank 0 alone prints and writes reports.
pub fn is_root() -> bool {
    rank() == 0
}

fn multi_rank() -> bool {
    size() > 1
}

fn with_team<T>(f: impl FnOnce(&Team) -> T) -> T {
    TEAM.with(|t| match t.borrow().as_ref() {
        Some(team) => f(team),
        None => f(&Team::solo()),
    })
}

/// See [`Team::agree`]: every rank gets `outcome`, or every rank gets the
/// failure of the lowest rank that failed.
pub fn agree<T>(outcome: anyhow::Result<T>) -> anyhow::Result<T> {
    match multi_rank() {
        false => outcome,
        true => with_team(|team| team.agree(outcome)),
    }
}

/// Rank 0's `value` on every rank (the others pass anything, e.g. a
/// default), after an agreement on every rank's: what rank 0 alone knows
/// (which configurations its setup commands built, why its results say to
/// stop) so that every rank takes the same next step. Alone: `value`.
pub fn from_root<T: Serialize + DeserializeOwned>(value: anyhow::Result<T>) -> anyhow::Result<T> {
    if !multi_rank() {
        return value;
    }
    let bytes = value.and_then(|v| Ok(serde_json::to_vec(&v)?));
    let shared = with_team(|team| team.share_from_root(bytes))?;
    Ok(serde_json::from_slice(&shared)?)
}

/// The id of this rank's scratch directory: rank 0's run id, plus `-r<N>`
/// in a multi-rank run (alone: the run id itself).
pub fn scratch_id(run_id: &str) -> anyhow::Result<String> {
    if !multi_rank() {
        return Ok(run_id.to_string());
    }
    let shared = with_team(|team| team.share_from_root(Ok(run_id.as_bytes().to_vec())))?;
    Ok(format!("{}-r{}", String::from_utf8_lossy(&shared), rank()))
}

/// Rank 0's scratch directory, given this rank's (see [`scratch_id`]):
/// where the ranks of a `--shared-dir` run meet, inside a directory
/// fsbench marked as its own. Alone: `own` itself.
pub fn root_scratch(own: &Path) -> PathBuf {
    rank_scratch(own, 0)
}

/// Rank `other`'s scratch directory, given this rank's: its sibling.
/// Alone: `own` itself.
pub fn rank_scratch(own: &Path, other: u32) -> PathBuf {
    let suffix = format!("-r{}", rank());
    let name = own.file_name().map(|n| n.to_string_lossy().into_owned());
    match name.as_deref().and_then(|n| n.strip_suffix(&suffix)) {
        Some(stem) if multi_rank() => own.with_file_name(format!("{stem}-r{other}")),
        _ => own.to_path_buf(),
    }
}

/// The rank on the next host whose files this rank reads instead of its
/// own (IOR's `-C`, IO500's shifted reads): so that no host reads what it
/// wrote, from its own cache. Every rank calls it at the same point.
pub fn next_host_peer() -> anyhow::Result<u32> {
    let host = crate::storage::env::host_name().into_bytes();
    let names = with_team(|team| team.gather(Ok(host)))?;
    let plan = match names {
        Some(all) => {
            let hosts: Vec<String> = all
                .iter()
                .map(|name| String::from_utf8_lossy(name).into_owned())
                .collect();
            peers_on_next_host(&hosts).and_then(|peers| Ok(serde_json::to_vec(&peers)?))
        }
        None => Ok(Vec::new()),
    };
    let shared = with_team(|team| team.share_from_root(plan))?;
    let peers: Vec<u32> = serde_json::from_slice(&shared)?;
    Ok(peers[rank() as usize])
}

/// For the ranks on `hosts` (rank i on hosts[i]), the rank each reads
/// from: the one in its place among the ranks of the next host (hosts in
/// the order of their first rank, the last followed by the first).
fn peers_on_next_host(hosts: &[String]) -> anyhow::Result<Vec<u32>> {
    let mut order: Vec<&str> = Vec::new();
    for host in hosts {
        if !order.contains(&host.as_str()) {
            order.push(host);
        }
    }
    let ranks_on = |host: &str| -> Vec<u32> {
        (0..hosts.len() as u32)
            .filter(|&r| hosts[r as usize] == host)
            .collect()
    };
    if order.len() < 2 {
        return crate::error::usage(format!(
            "--cross-host needs ranks on two hosts or more: all {} ranks are on {}",
            hosts.len(),
            order.first().copied().unwrap_or("?")
        ));
    }
    let counts: Vec<usize> = order.iter().map(|h| ranks_on(h).len()).collect();
    if counts.iter().any(|&c| c != counts[0]) {
        return crate::error::usage(
            "--cross-host needs as many ranks on every host (each reads one other rank's files)",
        );
    }
    Ok((0..hosts.len())
        .map(|r| {
            let host = order.iter().position(|h| *h == hosts[r]).expect("listed");
            let place = ranks_on(&hosts[r])
                .iter()
                .position(|&x| x == r as u32)
                .expect("listed");
            ranks_on(order[(host + 1) % order.len()])[place]
        })
        .collect())
}

/// Refuses a command that does not run under MPI yet.
pub fn require_single(command: &str) -> anyhow::Result<()> {
    match multi_rank() {
        false => Ok(()),
        true => crate::error::usage(format!(
            "fsbench {command} does not run under MPI (yet): use bonnie, postmark, tree, io or run"
        )),
    }
}

/// Standard output on rank 0, a sink on the others.
pub fn root_stdout() -> Box<dyn Write> {
    match is_root() {
        true => Box::new(std::io::stdout()),
        false => Box::new(std::io::sink()),
    }
}

/// Runs one timed phase in step with the other ranks: they start it
/// together once all agree nobody failed, and agree on its outcome at its
/// end, so a failure anywhere stops every rank here. `timing` picks the
/// phase's timing from its outcome, which places it on the common clock.
pub fn phase<T>(
    timing: impl FnOnce(&T) -> PhaseTiming,
    body: impl FnOnce() -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    if !multi_rank() {
        return body();
    }
    let waiting = Instant::now();
    agree(Ok(()))?;
    let start_wait_s = waiting.elapsed().as_secs_f64();
    checkpoint::restart();
    let outcome = hooks::before_phase().and_then(|()| body());
    let measured = outcome
        .as_ref()
        .ok()
        .map(|value| (timing(value), checkpoint::take()));
    let waiting = Instant::now();
    let outcome = agree(outcome);
    if let Some((timing, (ops, points))) = measured.filter(|_| outcome.is_ok()) {
        let checkpoints = points
            .into_iter()
            .map(|(at, count)| (common_seconds(at), count))
            .collect();
        log::add_span(Span {
            start_wait_s,
            end_wait_s: waiting.elapsed().as_secs_f64(),
            ..span_of(&timing, ops, checkpoints)
        });
    }
    outcome
}

/// Records a timing made of several phases (e.g. PostMark's total), so
/// the metrics measured over it can be aggregated too.
pub fn note_span(timing: &PhaseTiming) {
    if multi_rank() {
        log::add_span(span_of(timing, 0, Vec::new()));
    }
}

fn common_seconds(at: Instant) -> f64 {
    let epoch = EPOCH.get().copied().unwrap_or(at);
    at.saturating_duration_since(epoch).as_secs_f64()
}

fn span_of(timing: &PhaseTiming, ops: u64, checkpoints: Vec<(f64, u64)>) -> Span {
    let start_s = common_seconds(timing.started);
    Span {
        phase: timing.id(),
        start_s,
        end_s: start_s + timing.elapsed.as_secs_f64(),
        ops,
        checkpoints,
        start_wait_s: 0.0,
        end_wait_s: 0.0,
    }
}

/// One repetition's result of this rank → the job's result on rank 0
/// (aggregated over all ranks), None on the others; or the failure of any
/// rank, on every rank. Alone: `result` as is.
/// `target`: this rank's view of the target, to tell hosts that see it
/// differently.
pub fn combine(
    result: anyhow::Result<WorkloadResult>,
    target: Option<&TargetEnv>,
) -> anyhow::Result<Option<WorkloadResult>> {
    if !multi_rank() {
        return result.map(Some);
    }
    let (spans, latencies) = log::take();
    let bytes = result.and_then(|result| {
        let mut report = RankReport::new(
            rank(),
            crate::storage::env::probe_host(),
            result,
            spans,
            latencies,
        );
        report.clock = CLOCK.get().cloned().unwrap_or_default();
        report.setup = Setup::of(target);
        Ok(serde_json::to_vec(&report)?)
    });
    let Some(all) = with_team(|team| team.gather(bytes))? else {
        return Ok(None);
    };
    let reports = all
        .iter()
        .map(|bytes| serde_json::from_slice::<RankReport>(bytes))
        .collect::<Result<Vec<_>, _>>()?;
    aggregate::aggregate(&reports).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    /// Ranks placed by slot (0,2 on a; 1,3 on b) or by block (0,1 on a;
    /// 2,3 on b): each reads the rank in its place on the other host.
    #[test]
    fn each_rank_reads_its_counterpart_on_the_next_host() {
        let by_slot = peers_on_next_host(&hosts(&["a", "b", "a", "b"])).unwrap();
        assert_eq!(by_slot, [1, 0, 3, 2]);
        let by_block = peers_on_next_host(&hosts(&["a", "a", "b", "b"])).unwrap();
        assert_eq!(by_block, [2, 3, 0, 1]);
        let three = peers_on_next_host(&hosts(&["a", "b", "c"])).unwrap();
        assert_eq!(three, [1, 2, 0], "the last host reads the first's");
    }

    #[test]
    fn cross_host_reads_need_two_hosts_with_as_many_ranks() {
        let one = peers_on_next_host(&hosts(&["a", "a"])).unwrap_err();
        assert!(one.to_string().contains("two hosts or more"), "{one}");
        let uneven = peers_on_next_host(&hosts(&["a", "a", "b"])).unwrap_err();
        assert!(uneven.to_string().contains("as many ranks"), "{uneven}");
    }
}

/// Hidden hooks for the integration tests, read only in multi-rank runs
/// and not for users.
mod hooks {
    use super::*;

    /// FSBENCH_TEST_RANK_DELAY_MS=N: rank r starts each timed phase r × N
    /// ms after the ranks agreed to start it, so they finish at known,
    /// different times (tests the timing rule).
    /// FSBENCH_TEST_FAIL_RANK=R: rank R fails its first timed phase
    /// (tests that a failing rank stops and cleans up every rank).
    static DELAY: OnceLock<Duration> = OnceLock::new();
    static FAIL_RANK: OnceLock<Option<u32>> = OnceLock::new();

    fn env_number(name: &str) -> Option<u64> {
        std::env::var(name).ok()?.parse().ok()
    }

    pub fn load() {
        let delay = env_number("FSBENCH_TEST_RANK_DELAY_MS").unwrap_or(0);
        let _ = DELAY.set(Duration::from_millis(delay * u64::from(rank())));
        let fail = env_number("FSBENCH_TEST_FAIL_RANK").map(|r| r as u32);
        let _ = FAIL_RANK.set(fail);
    }

    pub fn before_phase() -> anyhow::Result<()> {
        if FAIL_RANK.get().copied().flatten() == Some(rank()) {
            anyhow::bail!("test fault injected (FSBENCH_TEST_FAIL_RANK)");
        }
        std::thread::sleep(DELAY.get().copied().unwrap_or_default());
        Ok(())
    }
}
