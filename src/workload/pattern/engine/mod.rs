//! Running one job: worker threads issue the I/O, the calling thread
//! prints one line per interval as soon as every worker has handed in its
//! counters for it. The sync engine does one blocking pread/pwrite per I/O
//! per thread, like vdbench and fio's psync; the io_uring engine keeps
//! `queue_depth` I/Os in flight per thread.
//!
//! Sync response times are read around the I/O's system calls (a clock
//! read right before and right after), as vdbench and fio's clat do: the
//! tool's own per-I/O work (draws, counters, histograms), and whatever
//! interrupts the thread while it does that work, stays outside.
#[cfg(feature = "io-uring")]
mod uring;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use crossbeam_utils::CachePadded;
use rustix::fs::{Mode, OFlags};

use super::access::{Decisions, Op, Picker, Stream};
use super::board::{Board, Timeline};
use super::counters::{Counters, CpuShare, IntervalFigures, Row};
use super::data::{Payload, pread_full, pwrite_full};
use super::job::{Arrival, Engine, Job, Stop};
use super::verify::{BadBlock, BadBlocks, KeyMap};
use crate::measure::noise::CpuTime;
use crate::measure::{LatencyRecorder, ProcessUsage, devices, process_cpu_time};
use crate::rng::WyRand;
use crate::workload::threads::{StartLine, spawn_all};

/// Keeps the pacing draws apart from the access-pattern draws of a seed.
const PACER_SALT: u64 = 0x5041_4345_5253_4545;

/// Longest sleep between checks for a stop signal while pacing.
const MAX_NAP: Duration = Duration::from_millis(50);

/// Everything one job measured.
pub struct JobOutcome {
    /// When the first interval began: rows' `start_s` count from here.
    pub started: Instant,
    pub rows: Vec<Row>,
    pub decisions: Decisions,
    pub read_latency: LatencyRecorder,
    pub write_latency: LatencyRecorder,
    /// The fdatasyncs every N writes (`Job::fdatasync_every`), timed on
    /// their own as fio's `sync` figures; each is also in its write's.
    pub sync_latency: LatencyRecorder,
    /// Process CPU time over the measured (non-warm-up) part, in %.
    pub cpu_percent: f64,
    /// What the process used over the measured part (user and system
    /// time apart, context switches, faults).
    pub usage: ProcessUsage,
    /// What the devices under the target did over the measured part.
    pub device: Option<devices::Delta>,
    /// What they did in each interval, in the order of `rows` (None
    /// without counted devices).
    pub interval_devices: Vec<Option<devices::Delta>>,
    /// How long the closing fsync took (`Job::end_fsync` on a job that
    /// wrote), inside the last interval.
    pub sync_s: Option<f64>,
    /// What `--verify` found, in the order found (at most the job's limit).
    pub bad_blocks: Vec<BadBlock>,
}

/// What the threads of one job share.
struct Shared<'a> {
    job: &'a Job,
    fd: BorrowedFd<'a>,
    stream: Stream,
    board: Board,
    timeline: OnceLock<Timeline>,
    /// Bytes left to transfer after the warm-up (`Stop::Amount`): taken
    /// by every I/O, so on a cache line of its own (see `Stream`).
    budget: Option<CachePadded<AtomicU64>>,
    keys: Option<&'a KeyMap>,
    bad_blocks: BadBlocks,
}

/// A thread's results.
struct WorkerOutput {
    decisions: Decisions,
    read_latency: LatencyRecorder,
    write_latency: LatencyRecorder,
    sync_latency: LatencyRecorder,
}

/// Runs `job` on the open file `fd` of `file_size` bytes; `on_row` sees
/// each interval line as it completes.
pub fn run_job(
    job: &Job,
    fd: BorrowedFd<'_>,
    file_size: u64,
    keys: Option<&KeyMap>,
    on_row: &mut dyn FnMut(&Row) -> anyhow::Result<()>,
) -> anyhow::Result<JobOutcome> {
    let shared = Shared {
        job,
        fd,
        stream: Stream::new(job, file_size),
        board: Board::new(job.threads as usize),
        timeline: OnceLock::new(),
        budget: match job.stop {
            Stop::Amount(bytes) => Some(CachePadded::new(AtomicU64::new(bytes))),
            Stop::Duration(_) => None,
        },
        keys,
        bad_blocks: BadBlocks::new(job.verify_errors),
    };
    let ready = StartLine::new(job.threads as usize);
    let mut outcome = std::thread::scope(|scope| {
        let workers = (0..job.threads).map(|id| {
            let (shared, ready) = (&shared, &ready);
            move || {
                // Opened before the start, outside the measured time.
                let fd = own_descriptor(shared.fd);
                ready.wait()?;
                match job.engine {
                    Engine::Sync => sync_worker(shared, fd, id),
                    #[cfg(feature = "io-uring")]
                    Engine::IoUring => uring::worker(shared, fd, id),
                    #[cfg(not(feature = "io-uring"))]
                    Engine::IoUring => unreachable!("refused by uring_refusal"),
                }
            }
        });
        let workers = spawn_all(scope, "io", workers, || ready.call_off())?;
        let devices_at_start = devices::snapshot();
        let start = Instant::now();
        let _ = shared.timeline.set(Timeline {
            start,
            interval: job.interval,
            total: job.total_intervals(),
            end: job.run_time().map(|t| start + t),
            warmup: job.warmup_intervals(),
        });
        ready.go();
        let report = report_intervals(&shared, devices_at_start, on_row);
        if report.is_err() {
            shared.board.stop_all();
        }
        let outputs: Vec<_> = workers
            .into_iter()
            .map(|w| w.join().expect("I/O worker thread panicked"))
            .collect();
        let report = report?;
        let mut outcome = JobOutcome {
            started: start,
            rows: report.rows,
            decisions: Decisions::default(),
            read_latency: LatencyRecorder::new(),
            write_latency: LatencyRecorder::new(),
            sync_latency: LatencyRecorder::new(),
            cpu_percent: report.cpu_percent,
            usage: report.usage,
            device: report.device,
            interval_devices: report.interval_devices,
            sync_s: report.sync_s,
            bad_blocks: Vec::new(),
        };
        for output in outputs {
            let output = output?;
            outcome.decisions.add(&output.decisions);
            outcome.read_latency.merge(&output.read_latency);
            outcome.write_latency.merge(&output.write_latency);
            outcome.sync_latency.merge(&output.sync_latency);
        }
        anyhow::Ok(outcome)
    })?;
    outcome.bad_blocks = shared.bad_blocks.into_found();
    Ok(outcome)
}

/// The job's file opened again, as it is open (O_DIRECT, O_DSYNC...), for
/// one thread: threads of one process that share a descriptor share its
/// kernel file object, whose reference count every pread and pwrite
/// takes and drops (the descriptor table being shared), a cache line
/// bouncing between the cores at every I/O. fio's jobs each open their
/// own.
fn own_descriptor(fd: BorrowedFd<'_>) -> anyhow::Result<OwnedFd> {
    let flags = rustix::fs::fcntl_getfl(fd).context("cannot read the data file's open flags")?;
    let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    rustix::fs::open(&path, flags | OFlags::CLOEXEC, Mode::empty())
        .context("cannot open the data file again for an I/O thread")
}

/// What the reporting loop measured.
struct Reported {
    rows: Vec<Row>,
    /// The devices' counters over each row's interval.
    interval_devices: Vec<Option<devices::Delta>>,
    /// The process CPU % of the measured part.
    cpu_percent: f64,
    usage: ProcessUsage,
    /// What the devices did over the measured part.
    device: Option<devices::Delta>,
    sync_s: Option<f64>,
}

/// The reporting loop: one row per interval, until every worker is done
/// (or, with `--until-steady`, until the measured rates are steady). The
/// devices' counters are read at every boundary (`devices_at_start` at
/// the start), for each interval's device rates and the measured part's.
fn report_intervals(
    shared: &Shared<'_>,
    devices_at_start: Option<devices::Counters>,
    on_row: &mut dyn FnMut(&Row) -> anyhow::Result<()>,
) -> anyhow::Result<Reported> {
    let timeline = shared.timeline.get().expect("set before the workers start");
    let mut reported = Reported {
        rows: Vec::new(),
        interval_devices: Vec::new(),
        cpu_percent: 0.0,
        usage: ProcessUsage::default(),
        device: None,
        sync_s: None,
    };
    let mut cpu_before = CpuTime::now();
    let mut counters_before = devices_at_start;
    let mut measured_from = Mark::new(timeline.start, devices_at_start);
    let mut measured_rates = Vec::new();
    for index in 0.. {
        let boundary = timeline.boundary(index);
        shared.board.sleep_until(boundary);
        let cpu_now = CpuTime::now();
        let collected = shared.board.collect(index);
        let begun = timeline.start + timeline.interval * index;
        let ended = match collected.finished_at {
            Some(at) if collected.done => at.min(boundary).max(begun),
            _ => boundary,
        };
        if collected.done {
            reported.sync_s = end_fsync(shared)?;
        }
        let ended = ended + Duration::from_secs_f64(reported.sync_s.unwrap_or(0.0));
        let counters_now = devices::snapshot();
        let seconds = (ended - begun).as_secs_f64();
        let cpu = cpu_before
            .zip(cpu_now)
            .map(|(then, now)| CpuShare::between(&then, &now));
        cpu_before = cpu_now;
        let row = Row {
            label: (index + 1).to_string(),
            at: SystemTime::now(),
            start_s: (begun - timeline.start).as_secs_f64(),
            seconds,
            warmup: index < timeline.warmup,
            counters: collected.counters,
            figures: IntervalFigures::new(&collected.counters, seconds, cpu),
        };
        on_row(&row)?;
        let interval_device = devices::between(counters_before, counters_now, seconds);
        reported.interval_devices.push(interval_device);
        counters_before = counters_now;
        if !row.warmup {
            measured_rates.push(row.figures.mib_per_s);
        }
        reported.rows.push(row);
        if index + 1 == timeline.warmup {
            measured_from = Mark::new(ended, counters_now);
        }
        // --until-steady: the workers stop at their next I/O, and the
        // interval they are in ends with them.
        if shared.job.until_steady && shared.job.steady.holds(&measured_rates) {
            shared.board.stop_all();
        }
        if collected.done {
            (reported.cpu_percent, reported.device) = measured_from.until(ended, counters_now);
            reported.usage = ProcessUsage::now().since(&measured_from.usage);
            return Ok(reported);
        }
    }
    unreachable!("the interval loop only ends by returning")
}

/// Where the measured part began: the time, the process CPU time and the
/// devices' counters then.
struct Mark {
    at: Instant,
    cpu: Duration,
    usage: ProcessUsage,
    devices: Option<devices::Counters>,
}

impl Mark {
    fn new(at: Instant, devices: Option<devices::Counters>) -> Mark {
        Mark {
            at,
            cpu: process_cpu_time(),
            usage: ProcessUsage::now(),
            devices,
        }
    }

    /// The process CPU % and what the devices did from here to `ended`,
    /// when their counters read `devices_now`.
    fn until(
        &self,
        ended: Instant,
        devices_now: Option<devices::Counters>,
    ) -> (f64, Option<devices::Delta>) {
        let wall = ended.saturating_duration_since(self.at).as_secs_f64();
        let cpu = process_cpu_time().saturating_sub(self.cpu).as_secs_f64();
        let device = devices::between(self.devices, devices_now, wall);
        (super::counters::ratio(100.0 * cpu, wall), device)
    }
}

/// With `end_fsync`, once every worker is done: fsyncs the file, so the
/// job's time includes getting its writes to stable storage (fio's
/// end_fsync; the last interval lasts the fsync longer). Returns how long
/// it took, None when the job did not sync.
fn end_fsync(shared: &Shared<'_>) -> anyhow::Result<Option<f64>> {
    let job = shared.job;
    if !(job.end_fsync && job.writes()) {
        return Ok(None);
    }
    let fsync = Instant::now();
    rustix::fs::fsync(shared.fd)
        .map_err(|e| anyhow::anyhow!("fsync at the end of the job failed: {e}"))?;
    Ok(Some(fsync.elapsed().as_secs_f64()))
}

/// A thread's view of the current interval: its private counters, handed
/// to the board at each boundary, and its latency histograms.
struct Tally<'a> {
    board: &'a Board,
    timeline: &'a Timeline,
    worker: usize,
    index: u32,
    boundary: Instant,
    counters: Counters,
    read_latency: LatencyRecorder,
    write_latency: LatencyRecorder,
    sync_latency: LatencyRecorder,
}

impl<'a> Tally<'a> {
    fn new(board: &'a Board, timeline: &'a Timeline, worker: usize) -> Tally<'a> {
        Tally {
            board,
            timeline,
            worker,
            index: 0,
            boundary: timeline.boundary(0),
            counters: Counters::default(),
            read_latency: LatencyRecorder::new(),
            write_latency: LatencyRecorder::new(),
            sync_latency: LatencyRecorder::new(),
        }
    }

    fn measuring(&self) -> bool {
        self.index >= self.timeline.warmup
    }

    /// Hands in every interval that ended before `now` (not the last one,
    /// which the thread closes when it finishes).
    #[inline]
    fn advance(&mut self, now: Instant) {
        while now >= self.boundary && !self.timeline.is_last(self.index) {
            self.board.close(self.worker, self.index, &self.counters);
            self.counters = Counters::default();
            self.index += 1;
            self.boundary = self.timeline.boundary(self.index);
        }
    }

    /// True once the job's time is up.
    #[inline]
    fn over(&self, now: Instant) -> bool {
        now >= self.boundary && self.timeline.is_last(self.index)
    }

    #[inline]
    fn record(&mut self, op: &Op, ns: u64) {
        self.counters.record(op.write, op.len, ns);
        if self.measuring() {
            let latency = if op.write {
                &mut self.write_latency
            } else {
                &mut self.read_latency
            };
            latency.record_ns(ns);
        }
    }

    /// An fdatasync's own time (already inside its write's).
    #[inline]
    fn record_sync(&mut self, ns: u64) {
        if self.measuring() {
            self.sync_latency.record_ns(ns);
        }
    }

    fn finish(self, at: Instant, decisions: Decisions) -> WorkerOutput {
        self.board
            .finish(self.worker, self.index, &self.counters, at);
        WorkerOutput {
            decisions,
            read_latency: self.read_latency,
            write_latency: self.write_latency,
            sync_latency: self.sync_latency,
        }
    }
}

/// Stops the other workers and tells the reporting thread when a worker
/// fails or panics, so nobody waits for it.
struct FailGuard<'a> {
    board: &'a Board,
    worker: usize,
    armed: bool,
}

impl FailGuard<'_> {
    fn new(board: &Board, worker: u32) -> FailGuard<'_> {
        FailGuard {
            board,
            worker: worker as usize,
            armed: true,
        }
    }
}

impl Drop for FailGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.board.stop_all();
            self.board.abandon(self.worker);
        }
    }
}

/// Spaces a thread's I/Os to its share of the rate, with gaps drawn from
/// the job's arrival distribution (a seeded stream per thread). Each thread
/// of N paces rate/N: N independent Poisson streams add up to one Poisson
/// stream of the whole rate, as vdbench's single generator makes. Due times
/// follow the schedule, not the completions, so a thread that falls
/// behind issues back to back until it catches up (open loop).
struct Pacer {
    next_due: Instant,
    /// Mean gap of this thread, in seconds.
    mean: f64,
    arrival: Arrival,
    rng: WyRand,
}

impl Pacer {
    fn new(job: &Job, start: Instant, thread: u32) -> Option<Pacer> {
        let rate = job.rate?;
        let mean = f64::from(job.threads) / rate;
        let mut rng = WyRand::for_stream(job.seed ^ PACER_SALT, u64::from(thread));
        // Fixed gaps are staggered across the threads; drawn ones start
        // with a draw.
        let first = match job.arrival {
            Arrival::Fixed => mean * f64::from(thread) / f64::from(job.threads),
            arrival => arrival.gap(mean, &mut rng),
        };
        Some(Pacer {
            next_due: start + gap_duration(first),
            mean,
            arrival: job.arrival,
            rng,
        })
    }

    /// Sleeps until the next I/O is due or `boundary`, whichever is first;
    /// returns the time read after waking and whether the I/O is due.
    fn wait(&mut self, board: &Board, boundary: Instant) -> anyhow::Result<(Instant, bool)> {
        loop {
            let now = Instant::now();
            if now >= self.next_due {
                let gap = self.arrival.gap(self.mean, &mut self.rng);
                self.next_due += gap_duration(gap);
                return Ok((now, true));
            }
            if now >= boundary || board.stopping() {
                return Ok((now, false));
            }
            crate::interrupt::check()?;
            std::thread::sleep((self.next_due.min(boundary) - now).min(MAX_NAP));
        }
    }
}

/// Longest gap between two paced I/Os: longer than any job runs.
const MAX_GAP: Duration = Duration::from_secs(1_000_000_000);

/// A drawn gap in seconds as a duration. Checked rates keep gaps far below
/// [`MAX_GAP`]; a longer draw waits that long instead of overflowing the
/// clock, and one that is not a positive number does not wait.
fn gap_duration(seconds: f64) -> Duration {
    Duration::try_from_secs_f64(seconds.max(0.0)).map_or(MAX_GAP, |gap| gap.min(MAX_GAP))
}

/// The I/O of one thread: a buffer and the fsync-every-N counter.
struct SyncIo<'a> {
    fd: BorrowedFd<'a>,
    payload: Payload,
    keys: Option<&'a KeyMap>,
    /// Where `--verify` keeps what it finds; full means stop the job.
    bad_blocks: &'a BadBlocks,
    board: &'a Board,
    sync_every: u32,
    writes_since_sync: u32,
}

impl SyncIo<'_> {
    /// Runs `op`; the time of the fdatasync that followed it, if one did.
    #[inline]
    fn execute(&mut self, op: &Op) -> anyhow::Result<Option<u64>> {
        let len = op.len as usize;
        if let Some(keys) = self.keys {
            return self.verified(keys, op);
        }
        if op.write {
            pwrite_full(self.fd, self.payload.stamped(op.offset, len), op.offset)?;
            self.after_write()
        } else {
            pread_full(self.fd, self.payload.space(len), op.offset)?;
            Ok(None)
        }
    }

    /// With `--verify`: read and check the blocks (for a write too, before
    /// overwriting them), then write the next generation.
    fn verified(&mut self, keys: &KeyMap, op: &Op) -> anyhow::Result<Option<u64>> {
        let locked = keys.lock(op.offset, op.len)?;
        let buf = self.payload.space(op.len as usize);
        pread_full(self.fd, buf, op.offset)?;
        let bad = keys.check(buf, op.offset);
        if !bad.is_empty() && self.bad_blocks.add(bad) {
            self.board.stop_all();
        }
        if op.write {
            locked.fill_next(buf, op.offset);
            pwrite_full(self.fd, buf, op.offset)?;
            locked.commit();
            return self.after_write();
        }
        Ok(None)
    }

    /// The fdatasync every N writes; its time when it ran.
    fn after_write(&mut self) -> anyhow::Result<Option<u64>> {
        if self.sync_every == 0 {
            return Ok(None);
        }
        self.writes_since_sync += 1;
        if self.writes_since_sync < self.sync_every {
            return Ok(None);
        }
        self.writes_since_sync = 0;
        let started = Instant::now();
        rustix::fs::fdatasync(self.fd).map_err(|e| anyhow::anyhow!("fdatasync failed: {e}"))?;
        Ok(Some(started.elapsed().as_nanos() as u64))
    }
}

/// Takes up to `len` bytes from the amount left; 0 when it is used up.
fn take_budget(budget: &AtomicU64, len: u64) -> u64 {
    let mut left = budget.load(Ordering::Relaxed);
    loop {
        let take = left.min(len);
        if take == 0 {
            return 0;
        }
        match budget.compare_exchange_weak(left, left - take, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => return take,
            Err(now) => left = now,
        }
    }
}

/// Why `job` cannot have its io_uring engine here (None: it can, or it
/// does not ask for it).
pub fn uring_refusal(job: &Job) -> Option<String> {
    if job.engine != Engine::IoUring {
        return None;
    }
    #[cfg(feature = "io-uring")]
    return uring::new_ring(job.queue_depth)
        .err()
        .map(|e| format!("the kernel refuses io_uring ({e})"));
    #[cfg(not(feature = "io-uring"))]
    Some("this fsbench was built without the io-uring feature".into())
}

/// Takes the next I/O of a thread, within the amount left after warm-up;
/// None when the job has no more I/O for it.
#[inline]
fn next_op(shared: &Shared<'_>, picker: &mut Picker, measuring: bool) -> Option<Op> {
    let mut op = picker.next(&shared.stream)?;
    if let (Some(budget), true) = (&shared.budget, measuring) {
        op.len = take_budget(budget, op.len);
        if op.len == 0 {
            return None;
        }
    }
    Some(op)
}

fn sync_worker(
    shared: &Shared<'_>,
    fd: anyhow::Result<OwnedFd>,
    id: u32,
) -> anyhow::Result<WorkerOutput> {
    let job = shared.job;
    let timeline = shared.timeline.get().expect("set before the workers start");
    let mut guard = FailGuard::new(&shared.board, id);
    let fd = fd?;
    let mut picker = Picker::new(job, &shared.stream, id);
    let mut io = SyncIo {
        fd: fd.as_fd(),
        payload: Payload::new(job.xfer.largest() as usize, job.seed, id),
        keys: shared.keys,
        bad_blocks: &shared.bad_blocks,
        board: &shared.board,
        sync_every: job.fdatasync_every,
        writes_since_sync: 0,
    };
    let mut tally = Tally::new(&shared.board, timeline, id as usize);
    let mut pacer = Pacer::new(job, timeline.start, id);
    let mut last = timeline.start;
    loop {
        if shared.board.stopping() {
            break;
        }
        crate::interrupt::check()?;
        if let Some(pacer) = &mut pacer {
            let (now, due) = pacer.wait(&shared.board, tally.boundary)?;
            tally.advance(now);
            if tally.over(now) {
                break;
            }
            if !due {
                continue;
            }
            last = now;
        }
        let Some(op) = next_op(shared, &mut picker, tally.measuring()) else {
            break;
        };
        let issued = Instant::now();
        let synced = io.execute(&op)?;
        let now = Instant::now();
        let ns = now.saturating_duration_since(issued).as_nanos() as u64;
        last = now;
        tally.advance(now);
        tally.record(&op, ns);
        if let Some(sync_ns) = synced {
            tally.record_sync(sync_ns);
        }
        if tally.over(now) {
            break;
        }
    }
    guard.armed = false;
    Ok(tally.finish(last, picker.decisions))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread's descriptor has the file's open flags (O_DSYNC here) and
    /// a file description of its own: a flag changed on one is not on the
    /// other.
    #[test]
    fn each_thread_gets_the_file_open_as_it_is_but_its_own() {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .write(true)
            .custom_flags(libc::O_DSYNC)
            .open(dir.path().join("data"))
            .unwrap();
        let own = own_descriptor(file.as_fd()).unwrap();
        let flags = rustix::fs::fcntl_getfl(&own).unwrap();
        assert_eq!(flags, rustix::fs::fcntl_getfl(&file).unwrap());
        assert_ne!(flags.bits() & libc::O_DSYNC as u32, 0, "{flags:?}");
        rustix::fs::fcntl_setfl(&own, flags | OFlags::NONBLOCK).unwrap();
        assert!(
            !rustix::fs::fcntl_getfl(&file)
                .unwrap()
                .contains(OFlags::NONBLOCK)
        );
    }

    #[test]
    fn budget_is_shared_out_exactly() {
        let budget = AtomicU64::new(10_000);
        assert_eq!(take_budget(&budget, 4096), 4096);
        assert_eq!(take_budget(&budget, 4096), 4096);
        assert_eq!(take_budget(&budget, 4096), 1808);
        assert_eq!(take_budget(&budget, 4096), 0);
    }

    #[test]
    fn gaps_beyond_the_clock_wait_the_longest_gap() {
        assert_eq!(gap_duration(0.5), Duration::from_millis(500));
        assert_eq!(gap_duration(1e25), MAX_GAP);
        assert_eq!(gap_duration(f64::INFINITY), MAX_GAP);
        assert_eq!(gap_duration(f64::NAN), Duration::ZERO);
        assert_eq!(gap_duration(-1.0), Duration::ZERO);
    }
}
