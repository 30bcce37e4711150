//! Measuring in a CPU share of its own, as fio's jobs do.
//!
//! With autogroup scheduling (`/proc/sys/kernel/sched_autogroup_enabled`,
//! on in most distributions' kernels) the kernel shares CPU time first
//! between sessions, then between the tasks of each session. fio's job
//! processes each call `setsid()`, so each has a share of its own; a
//! command started from a shell shares the shell's session's share with
//! whatever else that shell started. With four CPU burners started from
//! the shell on 2 cores, fio kept its IO/s and `fsbench io` lost a third
//! of them: its I/O thread waited behind the burners of its own session
//! (up to a scheduler tick, 4 ms, per completion at queue depth 1), and so
//! did the loop device's workers behind the session holding the CPU,
//! while fio's job, alone in its session, was run at once.
//!
//! [`measure_apart`] does what fio does: the process forks, the child
//! starts a session of its own and measures, and the first process stays
//! in the shell's session, where the terminal's signals (Ctrl-C, Ctrl-Z,
//! a hang-up) and anyone's `kill` reach it, passes them on to the child,
//! and ends as the child ended. The child dies with it (`SIGKILL`, so a
//! `kill -9` of the process the user started still stops the run).
use std::sync::atomic::{AtomicI32, Ordering};

/// Signals passed on to the child as they are.
const RELAYED: [libc::c_int; 8] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGWINCH,
    libc::SIGCONT,
];

/// The measuring child's pid, for the signal handlers (0: none).
static CHILD: AtomicI32 = AtomicI32::new(0);

/// Where the calling process stands after [`measure_apart`].
#[derive(Debug, PartialEq, Eq)]
pub enum Apart {
    /// This process measures: it is the child in a session of its own, or
    /// no other session would give it a share of its own.
    Measuring,
    /// The child has ended; this process is to exit with this code.
    Ended(i32),
}

/// Moves the measuring into a session of its own where sessions share
/// the CPU (see the module's text); call it before any thread starts.
/// Where a session of its own would change nothing (no autogroup, already
/// a session's leader) or the fork fails, this process measures.
pub fn measure_apart() -> Apart {
    if !sessions_share_cpu() || leads_its_session() {
        return Apart::Measuring;
    }
    let relayed = signal_set(&RELAYED);
    let mut before = empty_set();
    // Blocked across the fork: a signal that comes before the parent
    // relays is held until it does, and the child starts with none.
    // SAFETY: valid sets we own.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, &relayed, &mut before) };
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: called before any thread is started, so the child is a
    // copy of a single-threaded process.
    match unsafe { libc::fork() } {
        -1 => {
            restore_mask(&before);
            Apart::Measuring
        }
        0 => {
            become_apart(parent);
            restore_mask(&before);
            Apart::Measuring
        }
        child => {
            CHILD.store(child, Ordering::Relaxed);
            install_relays();
            restore_mask(&before);
            Apart::Ended(exit_code(wait_for(child)))
        }
    }
}

/// Whether the kernel shares CPU time between sessions first.
fn sessions_share_cpu() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .is_ok_and(|text| text.trim() == "1")
}

fn leads_its_session() -> bool {
    // SAFETY: getsid(0) and getpid have no preconditions.
    unsafe { libc::getsid(0) == libc::getpid() }
}

/// The child: dies with the process the user started, then starts its
/// own session (and so its own autogroup).
fn become_apart(parent: libc::pid_t) {
    // SAFETY: plain prctl/getppid/setsid/_exit calls on this process.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        // The parent died before the request: nobody is left to relay.
        if libc::getppid() != parent {
            libc::_exit(1);
        }
        // A forked child leads no process group, so setsid cannot fail.
        libc::setsid();
    }
}

fn empty_set() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the zeroed set we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        set
    }
}

fn signal_set(signals: &[libc::c_int]) -> libc::sigset_t {
    let mut set = empty_set();
    for &signal in signals.iter().chain(&[libc::SIGTSTP]) {
        // SAFETY: a valid set and signal number.
        unsafe { libc::sigaddset(&mut set, signal) };
    }
    set
}

fn restore_mask(before: &libc::sigset_t) {
    // SAFETY: a valid set we own.
    unsafe { libc::sigprocmask(libc::SIG_SETMASK, before, std::ptr::null_mut()) };
}

fn install_relays() {
    let relay: extern "C" fn(libc::c_int) = relay;
    let stop_both: extern "C" fn(libc::c_int) = stop_both;
    for &signal in &RELAYED {
        set_handler(signal, relay as libc::sighandler_t);
    }
    set_handler(libc::SIGTSTP, stop_both as libc::sighandler_t);
}

fn set_handler(signal: libc::c_int, handler: libc::sighandler_t) {
    // SAFETY: a zeroed sigaction is valid; the handlers only call
    // async-signal-safe functions (kill, raise) and read an atomic.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, std::ptr::null_mut());
    }
}

extern "C" fn relay(signal: libc::c_int) {
    let child = CHILD.load(Ordering::Relaxed);
    if child > 0 {
        // SAFETY: kill is async-signal-safe; the child is not yet reaped.
        unsafe { libc::kill(child, signal) };
    }
}

/// Ctrl-Z: the child stops, then this process (the shell's `fg` sends
/// SIGCONT to this process, which passes it on).
extern "C" fn stop_both(_: libc::c_int) {
    let child = CHILD.load(Ordering::Relaxed);
    if child > 0 {
        // SAFETY: kill and raise are async-signal-safe.
        unsafe {
            libc::kill(child, libc::SIGSTOP);
            libc::raise(libc::SIGSTOP);
        }
    }
}

/// The child's wait status, once it has ended.
fn wait_for(child: libc::pid_t) -> libc::c_int {
    let mut status = 0;
    loop {
        // SAFETY: our own child; a valid pointer to our local.
        let reaped = unsafe { libc::waitpid(child, &mut status, 0) };
        if reaped == child {
            return status;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            // Cannot happen for our own unreaped child; end as failed.
            return 1 << 8;
        }
    }
}

/// The exit code that ends this process as the child ended: its code,
/// or death by its signal (raised here with the default action), or, if
/// that signal does not end a process, 128 + its number.
fn exit_code(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        return libc::WEXITSTATUS(status);
    }
    let signal = libc::WTERMSIG(status);
    set_handler(signal, libc::SIG_DFL);
    // SAFETY: restores the default action, then raises the signal on this
    // process; nothing of ours is left to clean up.
    unsafe {
        let mut set = empty_set();
        libc::sigaddset(&mut set, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signal);
    }
    128 + signal
}
