//! Progress on stderr, unless the user asked for quiet or this is an MPI
//! rank other than 0. On a terminal, a single-workload command prints one
//! line per phase; `fsbench run` shows a bar weighted by time, an ETA when
//! it is known, and the step and phase running, with how far a long phase
//! has got. Where stderr is not a terminal (a log, a pipe, CI) `fsbench
//! run` prints a plain line per finished step, no bar and no escape codes,
//! so a long run is not silent for minutes; a single command prints
//! nothing, its own output being the progress.
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::console::{stderr_line, stderr_text};
use crate::size::format_bytes_of;

/// How often a phase's amount may rewrite the status: a hot loop reports
/// every call, but only every 1/256 of the phase costs more than a compare.
const REPORTS_PER_PHASE: u64 = 256;

/// The width of the bar, in characters: narrow enough that an 80-column
/// terminal still shows the step and most of its phase.
const BAR_WIDTH: usize = 20;

pub struct Progress {
    display: Display,
}

enum Display {
    Off,
    Lines,
    Bar(Box<Bar>),
    Steps(Mutex<StepLines>),
}

/// What `fsbench run` says of a step off a terminal: "[3/12] bonnie on
/// ext4, repetition 1/3: done in 4.1 s" when it ends.
#[derive(Default)]
struct StepLines {
    /// Steps over all repetitions (the plan's), and those behind.
    total: u64,
    done: u64,
    running: Option<(Step, Instant)>,
}

/// A step of `fsbench run`: which repetition ("1/3", "1/≤10"), on which
/// target, of which workload.
pub struct Step {
    pub repetition: String,
    pub target: String,
    pub workload: String,
}

/// The bar of `fsbench run` and what it shows.
struct Bar {
    bar: indicatif::ProgressBar,
    /// Shared with the bar's `{timebar}` and `{eta}` keys, which read it
    /// at every redraw.
    schedule: Arc<Mutex<Timed>>,
    status: Mutex<Status>,
    /// The amount at which a phase's progress next rewrites the status:
    /// below it, `advance_phase` is a load and a compare.
    next_report: AtomicU64,
}

/// The status text: "2/3 ext4 tree-photos: Writing intelligently...
/// 3.2/16.0 GiB".
#[derive(Default)]
struct Status {
    step: String,
    phase: String,
}

impl Progress {
    /// One line per phase, unless `quiet`.
    pub fn new(quiet: bool) -> Self {
        let display = match !quiet && shown() {
            true => Display::Lines,
            false => Display::Off,
        };
        Progress { display }
    }

    /// `fsbench run`'s bar on a terminal, its lines elsewhere (nothing on
    /// the MPI ranks but 0).
    pub fn bar() -> Self {
        if !crate::scale::is_root() {
            return Progress {
                display: Display::Off,
            };
        }
        if !std::io::stderr().is_terminal() {
            return Progress {
                display: Display::Steps(Mutex::default()),
            };
        }
        let schedule = Arc::new(Mutex::new(Timed::default()));
        let bar = indicatif::ProgressBar::with_draw_target(
            None,
            indicatif::ProgressDrawTarget::stderr_with_hz(4),
        );
        bar.set_style(bar_style(&schedule));
        bar.enable_steady_tick(Duration::from_millis(250));
        Progress {
            display: Display::Bar(Box::new(Bar {
                bar,
                schedule,
                status: Mutex::default(),
                next_report: AtomicU64::new(0),
            })),
        }
    }

    /// Announces a phase ("Writing intelligently...").
    pub fn start(&self, what: &str) {
        match &self.display {
            Display::Off | Display::Steps(_) => {}
            Display::Lines => stderr_text!("{what}..."),
            Display::Bar(bar) => {
                bar.next_report.store(0, Ordering::Relaxed);
                let mut status = lock(&bar.status);
                status.phase = format!("{what}...");
                bar.bar.set_message(status.text(None));
            }
        }
    }

    /// Names the running phase on the bar only: for a phase that prints
    /// lines of its own (an io job's intervals), which an announcement
    /// would break.
    pub fn show(&self, what: &str) {
        if let Display::Bar(_) = &self.display {
            self.start(what);
        }
    }

    /// How far the running phase has got, in bytes: called from hot loops,
    /// so it only compares against the next amount worth showing (a 1/256
    /// of the phase) before doing anything else. Returns whether it showed
    /// it (and so took time a timed loop must not count).
    pub fn advance_phase(&self, done: u64, total: u64) -> bool {
        let Display::Bar(bar) = &self.display else {
            return false;
        };
        if done < bar.next_report.load(Ordering::Relaxed) {
            return false;
        }
        let step = (total / REPORTS_PER_PHASE).max(1);
        bar.next_report.store(done + step, Ordering::Relaxed);
        let amount = format_bytes_of(done.min(total), total);
        bar.bar.set_message(lock(&bar.status).text(Some(&amount)));
        true
    }

    /// Ends the line started by `start`.
    pub fn done(&self, seconds: f64) {
        if let Display::Lines = self.display {
            stderr_line!("done ({seconds:.3} s)");
        }
    }

    /// The steps the run will take (the bar's length) and what is known
    /// of their time.
    pub fn plan(&self, schedule: Schedule) {
        if let Display::Steps(lines) = &self.display {
            lock(lines).total = schedule.total_steps();
        }
        if let Display::Bar(bar) = &self.display {
            let steps = schedule.total_steps();
            // The schedule first: a redraw between the two must not find a
            // length without its times.
            *lock(&bar.schedule) = Timed {
                schedule,
                step_began: None,
            };
            bar.bar.set_length(steps);
        }
    }

    /// Step `slot` of a repetition begins (its index among the steps of a
    /// repetition, whatever order they run in): what the status shows
    /// before its phases ("1/3 ext4 bonnie").
    pub fn begin_step(&self, step: Step, slot: usize) {
        if let Display::Steps(lines) = &self.display {
            lock(lines).running = Some((step, Instant::now()));
            return;
        }
        if let Display::Bar(bar) = &self.display {
            let mut status = lock(&bar.status);
            *status = Status {
                step: step.status(),
                phase: String::new(),
            };
            bar.bar.set_message(status.text(None));
            let mut timed = lock(&bar.schedule);
            timed.schedule.begin(slot);
            timed.step_began = Some((slot, Instant::now()));
        }
    }

    /// The step begun last ended: its time is learnt for the ETA, or
    /// said in a line off a terminal.
    pub fn end_step(&self) {
        if let Display::Steps(lines) = &self.display {
            let mut lines = lock(lines);
            lines.done += 1;
            if let Some((step, began)) = lines.running.take() {
                let line = step.done_line(lines.done, lines.total, began.elapsed());
                stderr_line!("fsbench: {line}");
            }
        }
        if let Display::Bar(bar) = &self.display {
            let mut timed = lock(&bar.schedule);
            if let Some((slot, began)) = timed.step_began.take() {
                timed.schedule.finished(slot, began.elapsed().as_secs_f64());
            }
            bar.bar.inc(1);
        }
    }

    /// Step `slot` is skipped (a resumed run's record holds it): the bar
    /// moves on, and the ETA counts it as done.
    pub fn skip_step(&self, slot: usize) {
        if let Display::Steps(lines) = &self.display {
            lock(lines).done += 1;
        }
        if let Display::Bar(bar) = &self.display {
            lock(&bar.schedule).schedule.skipped(slot);
            bar.bar.inc(1);
        }
    }

    /// The run is over: the bar goes.
    pub fn finish(&self) {
        if let Display::Bar(bar) = &self.display {
            bar.bar.finish_and_clear();
        }
    }
}

/// Whether progress shows at all: on a terminal, on rank 0.
fn shown() -> bool {
    crate::scale::is_root() && std::io::stderr().is_terminal()
}

/// A lock that a panic elsewhere does not make unusable: progress is
/// display only.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Step {
    /// On the bar: "1/3 ext4 bonnie".
    fn status(&self) -> String {
        format!("{} {} {}", self.repetition, self.target, self.workload)
    }

    /// Off a terminal, once it ended as step `done` of `total`: "[3/12]
    /// bonnie on ext4, repetition 1/3: done in 4.1 s".
    fn done_line(&self, done: u64, total: u64, took: Duration) -> String {
        format!(
            "[{done}/{total}] {} on {}, repetition {}: done in {:.1} s",
            self.workload,
            self.target,
            self.repetition,
            took.as_secs_f64()
        )
    }
}

impl Status {
    /// The step, the phase and how far it has got, in one line that the
    /// bar's `{wide_msg}` cuts to the terminal's width.
    fn text(&self, amount: Option<&str>) -> String {
        let mut text = self.step.clone();
        if !self.phase.is_empty() {
            let _ = write!(text, ": {}", self.phase);
        }
        if let Some(amount) = amount {
            let _ = write!(text, " {amount}");
        }
        text
    }
}

/// "00:01:23 [=====>     ] 4/30 ETA 2m10s 1/3 ext4 bonnie: Rewriting...
/// 1.2/4.0 GiB": `{timebar}` and `{eta}` read the schedule at each redraw,
/// so the bar moves and the ETA counts down within a step.
fn bar_style(schedule: &Arc<Mutex<Timed>>) -> indicatif::ProgressStyle {
    let for_bar = Arc::clone(schedule);
    let for_eta = Arc::clone(schedule);
    indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{timebar}] {pos}/{len}{eta} {wide_msg}",
    )
    .expect("the template is valid")
    .with_key(
        "timebar",
        move |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let timed = lock(&for_bar);
            let fraction = timed
                .schedule
                .fraction(state.elapsed().as_secs_f64(), timed.in_step());
            let _ = w.write_str(&bar_text(fraction, BAR_WIDTH));
        },
    )
    .with_key(
        "eta",
        move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let timed = lock(&for_eta);
            if let Some(text) = timed.schedule.eta_text(timed.in_step()) {
                let _ = write!(w, " {text}");
            }
        },
    )
}

/// "=====>    " for `fraction` of `width` characters.
fn bar_text(fraction: f64, width: usize) -> String {
    let filled = ((fraction.clamp(0.0, 1.0) * width as f64) as usize).min(width);
    let head = usize::from(filled < width && filled > 0);
    let full = filled.saturating_sub(head);
    format!(
        "{}{}{}",
        "=".repeat(full),
        ">".repeat(head),
        " ".repeat(width - full - head)
    )
}

/// The schedule, with the step running and since when.
#[derive(Default)]
struct Timed {
    schedule: Schedule,
    step_began: Option<(usize, Instant)>,
}

impl Timed {
    /// Seconds into the step running (0 between steps).
    fn in_step(&self) -> f64 {
        self.step_began
            .map_or(0.0, |(_, began)| began.elapsed().as_secs_f64())
    }
}

/// What is known of the time a run's steps take, for the ETA: per step of
/// a repetition, the time it took last (learnt as the first repetition
/// runs), else the time its workload plans (an io job's warm-up and
/// duration), else nothing. An ETA is given only when every step still to
/// run has a time; steps differ too much (a minute-long io job beside a
/// second of metadata) for a count of steps to say anything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schedule {
    /// Per step of a repetition (its slot), the time it is expected to take.
    estimates: Vec<Option<f64>>,
    /// The slots of the current repetition still to run: repetitions may
    /// run their steps in different orders (the driver rotates the targets).
    pending: Vec<bool>,
    /// The slot running now.
    running: Option<usize>,
    repetitions: u32,
    /// A stopping rule may end the run before its last repetition: the
    /// ETA is then an upper bound.
    open_ended: bool,
    /// Steps finished, over all repetitions.
    done: u64,
}

impl Schedule {
    /// `planned`: per step of a repetition, by slot, the time its workload
    /// plans for it, if it knows.
    pub fn new(planned: Vec<Option<f64>>, repetitions: u32, open_ended: bool) -> Schedule {
        Schedule {
            pending: vec![true; planned.len()],
            running: None,
            estimates: planned,
            repetitions,
            open_ended,
            done: 0,
        }
    }

    pub fn total_steps(&self) -> u64 {
        self.estimates.len() as u64 * u64::from(self.repetitions)
    }

    /// Step `slot` begins.
    pub fn begin(&mut self, slot: usize) {
        self.running = Some(slot);
    }

    /// Step `slot` finished after `seconds`: later repetitions of it are
    /// expected to take as long. When every slot has run, the next
    /// repetition begins.
    pub fn finished(&mut self, slot: usize, seconds: f64) {
        if let Some(estimate) = self.estimates.get_mut(slot) {
            *estimate = Some(seconds);
        }
        self.running = None;
        self.leave(slot);
    }

    /// Step `slot` is not run this repetition (a resumed run's record
    /// holds its result): it is done, and tells nothing of its time.
    pub fn skipped(&mut self, slot: usize) {
        self.leave(slot);
    }

    /// Step `slot` is behind: when every slot is, the next repetition
    /// begins.
    fn leave(&mut self, slot: usize) {
        if let Some(pending) = self.pending.get_mut(slot) {
            *pending = false;
        }
        self.done += 1;
        if self.pending.iter().all(|p| !p) {
            self.pending.fill(true);
        }
    }

    /// Seconds left, `in_step` seconds into the step running; None while
    /// a step still to run has no known time, and before there is a plan.
    pub fn remaining(&self, in_step: f64) -> Option<f64> {
        let per_repetition = self.estimates.len() as u64;
        if self.total_steps() == 0 {
            return None;
        }
        if self.done >= self.total_steps() {
            return Some(0.0);
        }
        let repetitions_after = u64::from(self.repetitions) - 1 - self.done / per_repetition;
        let sum = |steps: &mut dyn Iterator<Item = Option<f64>>| steps.sum::<Option<f64>>();
        // A step that overruns its estimate is taken to end now.
        let this_step = match self.running {
            Some(slot) => (self.estimates[slot]? - in_step).max(0.0),
            None => 0.0,
        };
        let still_to_run = (0..self.estimates.len())
            .filter(|&slot| self.pending[slot] && Some(slot) != self.running)
            .map(|slot| self.estimates[slot]);
        let rest_of_repetition = sum(&mut still_to_run.into_iter())?;
        let later = match repetitions_after {
            0 => 0.0,
            n => n as f64 * sum(&mut self.estimates.iter().copied())?,
        };
        Some(this_step + rest_of_repetition + later)
    }

    /// How much of the run is done, by time when the rest is known (a long
    /// step fills its share of the bar), else by steps.
    pub fn fraction(&self, elapsed: f64, in_step: f64) -> f64 {
        let total = self.total_steps();
        match self.remaining(in_step) {
            Some(left) if elapsed + left > 0.0 => elapsed / (elapsed + left),
            _ if total == 0 => 0.0,
            _ => self.done as f64 / total as f64,
        }
    }

    /// "ETA 2m10s" ("ETA ≤2m10s" when a stopping rule may end the run
    /// sooner); None while it is not known.
    pub fn eta_text(&self, in_step: f64) -> Option<String> {
        let left = self.remaining(in_step)?.ceil() as u64;
        let bound = if self.open_ended { "≤" } else { "" };
        Some(format!("ETA {bound}{}", short_duration(left)))
    }
}

/// "45s", "2m05s", "3h01m": short, so the status keeps the room.
pub fn short_duration(seconds: u64) -> String {
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m{:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h{:02}m", seconds / 3600, seconds / 60 % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eta_waits_for_every_step_still_to_run_to_have_a_time() {
        // An io job that plans 60 s beside a tree that plans nothing, twice.
        let mut schedule = Schedule::new(vec![Some(60.0), None], 2, false);
        assert_eq!(schedule.total_steps(), 4);
        assert_eq!(schedule.remaining(0.0), None);
        assert_eq!(schedule.eta_text(0.0), None);
        schedule.begin(0);
        schedule.finished(0, 61.0);
        schedule.begin(1);
        assert_eq!(schedule.remaining(5.0), None, "the tree is not known yet");
        schedule.finished(1, 9.0);
        // Repetition 2, in the other order (the driver rotates the
        // targets): both are learnt.
        assert_eq!(schedule.remaining(0.0), Some(70.0));
        schedule.begin(1);
        assert_eq!(schedule.remaining(4.0), Some(5.0 + 61.0));
        assert_eq!(schedule.eta_text(4.0).unwrap(), "ETA 1m06s");
        // A step that overruns counts as ending now, never as negative.
        assert_eq!(schedule.remaining(100.0), Some(61.0));
        schedule.finished(1, 9.0);
        schedule.begin(0);
        assert_eq!(schedule.remaining(20.0), Some(41.0));
        schedule.finished(0, 61.0);
        assert_eq!(schedule.remaining(0.0), Some(0.0));
    }

    /// A resumed run skips what its record holds: the ETA counts only
    /// the steps still to run.
    #[test]
    fn skipped_steps_are_done_and_leave_the_eta() {
        let mut schedule = Schedule::new(vec![Some(30.0), Some(60.0)], 2, false);
        assert_eq!(schedule.remaining(0.0), Some(180.0));
        schedule.skipped(0);
        schedule.skipped(1);
        // The first repetition was held whole: one repetition is left.
        assert_eq!(schedule.remaining(0.0), Some(90.0));
        schedule.skipped(1);
        schedule.begin(0);
        assert_eq!(schedule.remaining(10.0), Some(20.0));
        schedule.finished(0, 30.0);
        assert_eq!(schedule.remaining(0.0), Some(0.0));
    }

    #[test]
    fn planned_times_give_an_eta_from_the_start() {
        let mut schedule = Schedule::new(vec![Some(30.0), Some(3600.0)], 3, true);
        schedule.begin(0);
        assert_eq!(schedule.remaining(10.0), Some(20.0 + 3600.0 + 2.0 * 3630.0));
        assert_eq!(schedule.eta_text(0.0).unwrap(), "ETA ≤3h01m");
        assert_eq!(short_duration(125), "2m05s");
    }

    #[test]
    fn the_bar_fills_by_time_when_known_else_by_steps() {
        let mut schedule = Schedule::new(vec![Some(90.0), None], 1, false);
        assert_eq!(schedule.fraction(10.0, 10.0), 0.0, "by steps: none done");
        schedule.finished(0, 90.0);
        assert_eq!(schedule.fraction(90.0, 0.0), 0.5);
        let mut timed = Schedule::new(vec![Some(90.0), Some(10.0)], 1, false);
        timed.begin(0);
        assert_eq!(timed.fraction(45.0, 45.0), 0.45);
        // Before the plan: no ETA, an empty bar.
        assert_eq!(Schedule::default().eta_text(0.0), None);
        assert_eq!(Schedule::default().fraction(1.0, 0.0), 0.0);
        assert_eq!(bar_text(0.5, 10), "====>     ");
        assert_eq!(bar_text(0.0, 4), "    ");
        assert_eq!(bar_text(1.0, 4), "====");
    }

    #[test]
    fn the_status_is_one_line_of_step_phase_and_amount() {
        let status = Status {
            step: "2/3 ext4 bonnie".into(),
            phase: "Writing intelligently...".into(),
        };
        assert_eq!(
            status.text(Some("3.2/16.0 GiB")),
            "2/3 ext4 bonnie: Writing intelligently... 3.2/16.0 GiB"
        );
        assert_eq!(Status::default().text(None), "");
    }

    #[test]
    fn a_phase_report_shows_nothing_where_progress_is_off() {
        let progress = Progress::new(true);
        assert!((0..=1000).all(|done| !progress.advance_phase(done, 1000)));
    }

    #[test]
    fn a_finished_step_is_one_plain_line() {
        let step = Step {
            repetition: "1/3".into(),
            target: "ext4".into(),
            workload: "bonnie".into(),
        };
        assert_eq!(step.status(), "1/3 ext4 bonnie");
        assert_eq!(
            step.done_line(3, 12, Duration::from_millis(4140)),
            "[3/12] bonnie on ext4, repetition 1/3: done in 4.1 s"
        );
    }
}
