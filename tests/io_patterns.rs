//! `fsbench io` on a private tmpfs: each pattern's observed mix (read %,
//! share of sequential I/Os, counted by the engine) matches its parameters;
//! interval lines and the average that leaves out the warm-up; fixed
//! amounts, one-pass (eof) jobs and rate limits; the JSON time series and
//! per-direction latency percentiles; the same with the io_uring engine.
//! Runs are tiny (tenths of a second).
mod common;

use std::process::Command;

use common::{FSBENCH, Running, Sentinel, TmpfsMount, assert_no_scratch_left, read_json, run};
use serde_json::Value;

/// Runs `fsbench io MNT ARGS --json J` (ARGS split at blanks) and returns
/// its output and result.
fn io_json(mnt: &TmpfsMount, args: &str) -> (common::Output, Value) {
    io_json_launched(mnt, args, &[])
}

/// [`io_json`], with fsbench started by `launcher` (a command and its
/// arguments that runs the command line it is given), if any.
fn io_json_launched(mnt: &TmpfsMount, args: &str, launcher: &[&str]) -> (common::Output, Value) {
    let json = mnt.join("result.json");
    let mut full = vec!["io".to_string(), mnt.arg()];
    full.extend(args.split_whitespace().map(str::to_string));
    full.extend(["--json".to_string(), json.display().to_string()]);
    let out = match launcher {
        [] => run(&full),
        [program, launcher_args @ ..] => {
            let mut command = Command::new(program);
            command.args(launcher_args).arg(FSBENCH).args(&full);
            Running::spawn_command(&mut command, format!("{launcher:?} {full:?}")).wait()
        }
    };
    out.assert_success().assert_no_panic();
    let result = read_json(&json);
    std::fs::remove_file(json).unwrap();
    assert_no_scratch_left(mnt.path());
    (out, result)
}

fn workloads(result: &Value) -> &Vec<Value> {
    result["targets"][0]["workloads"].as_array().unwrap()
}

fn metric<'a>(workload: &'a Value, name: &str) -> &'a Value {
    workload["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no metric {name} in {workload:#}"))
}

/// The time series of one job's run.
fn intervals(workload: &Value) -> &Vec<Value> {
    workload["intervals"].as_array().unwrap()
}

fn observed(workload: &Value, field: &str) -> f64 {
    workload["params"]["observed"][field].as_f64().unwrap()
}

/// Within `tolerance` percentage points of `expected`.
fn assert_pct(what: &str, part: f64, whole: f64, expected: f64, tolerance: f64) {
    let pct = 100.0 * part / whole;
    assert!(
        (pct - expected).abs() <= tolerance,
        "{what}: {pct:.2} % observed, {expected} % asked ({part} of {whole})"
    );
}

#[test]
fn every_suite_pattern_gets_the_mix_it_asks_for_cached_and_direct() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let (out, result) = io_json(
        &mnt,
        "--suite patterns -s 8m --duration 0.3s --interval 0.1s --seed 7 -q",
    );
    sentinel.assert_intact();
    let jobs = workloads(&result);
    assert_eq!(jobs.len(), 18, "{out}");
    for job in jobs {
        let name = job["params"]["job"]["name"].as_str().unwrap();
        assert_eq!(job["label"], name, "reports tell the patterns apart");
        let read_pct = job["params"]["job"]["read_pct"].as_f64().unwrap();
        let seek_pct = job["params"]["job"]["seek"]["percent"].as_f64().unwrap();
        assert_eq!(
            job["params"]["job"]["direct"].as_bool().unwrap(),
            name.starts_with("d_")
        );
        let (reads, writes) = (observed(job, "reads"), observed(job, "writes"));
        let (sequential, random) = (observed(job, "sequential"), observed(job, "random"));
        let total = reads + writes;
        assert!(total > 500.0, "{name}: only {total} I/Os\n{out}");
        assert_eq!(total, sequential + random, "{name}");
        let tolerance = if read_pct == 50.0 { 3.0 } else { 0.0 };
        assert_pct(&format!("{name} reads"), reads, total, read_pct, tolerance);
        let tolerance = if seek_pct == 50.0 { 3.0 } else { 0.0 };
        assert_pct(
            &format!("{name} random"),
            random,
            total,
            seek_pct,
            tolerance,
        );
    }
    // The seed's table: one row per pattern, both modes side by side.
    let table: Vec<&str> = out
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("pattern"))
        .collect();
    assert_eq!(table.len(), 10, "{out}");
    assert!(
        table[0].contains("MiB/s") && table[0].contains("σ ms"),
        "{out}"
    );
    assert!(
        table[9].starts_with("seek50_mix") && !table[9].contains(" - "),
        "{out}"
    );
}

#[test]
fn interval_lines_and_the_average_leave_out_the_first_interval() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let (out, result) = io_json(&mnt, "-s 8m --read 70 --duration 0.5s --interval 0.1s");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Starting RD=io; I/O rate: Uncontrolled MAX"))
    );
    let rows: Vec<Vec<&str>> = lines
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 15 && f[0].contains(':'))
        .collect();
    let labels: Vec<&str> = rows.iter().map(|f| f[1]).collect();
    assert_eq!(labels, ["1", "2", "3", "4", "5", "avg_2-5"], "{out}");
    let job = &workloads(&result)[0];
    assert_eq!(job["label"], "4k-rand-read70", "{job:#}");
    let series = intervals(job);
    assert_eq!(series.len(), 5);
    assert_eq!(series[0]["warmup"], true);
    assert!(series[1..].iter().all(|s| s["warmup"] == false));
    // The metrics are the summed counters of intervals 2-5.
    let ops: f64 = series[1..]
        .iter()
        .map(|s| s["values"]["reads"].as_f64().unwrap() + s["values"]["writes"].as_f64().unwrap())
        .sum();
    let seconds: f64 = series[1..]
        .iter()
        .map(|s| s["seconds"].as_f64().unwrap())
        .sum();
    let rate = metric(job, "io_rate")["value"].as_f64().unwrap();
    assert!(
        (rate - ops / seconds).abs() / rate < 1e-9,
        "{rate} vs {}",
        ops / seconds
    );
    assert_eq!(metric(job, "io_rate")["samples"].as_f64().unwrap(), ops);
    for name in ["read_resp_ms", "write_resp_ms"] {
        let latency = &metric(job, name)["latency"];
        let p = |k: &str| latency[k].as_u64().unwrap();
        assert!(p("p50_ns") > 0 && p("p50_ns") <= p("p99_ns"), "{latency}");
        assert!(
            p("p99_ns") <= p("p9999_ns") && p("p9999_ns") <= p("max_ns"),
            "{latency}"
        );
    }
    assert!(
        metric(job, "mib_per_s")["flags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "too_short")
    );
}

#[test]
fn an_amount_is_transferred_exactly_and_eof_makes_one_pass() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let (_, result) = io_json(&mnt, "-s 8m -b 64k --read 0 --seek 0 --amount 5m");
    let job = &workloads(&result)[0];
    assert_eq!(metric(job, "mib_per_s")["samples"], 5 << 20);
    assert_eq!(observed(job, "wraps"), 0.0);
    let (_, result) = io_json(&mnt, "-s 4m -b 64k --read 0 --seek eof --warmup 0 -j 3");
    let job = &workloads(&result)[0];
    assert_eq!(observed(job, "writes"), 64.0);
    assert_eq!(metric(job, "mib_per_s")["samples"], 4 << 20);
}

#[test]
fn a_rate_limit_is_kept() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let (_, result) = io_json(
        &mnt,
        "-s 4m --rate 400 --arrival fixed -j 2 --duration 1s --warmup 0 --interval 0.25s",
    );
    let job = &workloads(&result)[0];
    let rate = metric(job, "io_rate")["value"].as_f64().unwrap();
    assert!(
        (380.0..=420.0).contains(&rate),
        "{rate} I/O/s for --rate 400"
    );
    let notes = job["notes"].to_string();
    assert!(notes.contains("rate-limited"), "{notes}");
}

/// Index of dispersion (variance / mean) of the I/Os per interval: about 1
/// for Poisson arrivals (exponential gaps), about 1/3 for uniform gaps
/// (a renewal process with CV² = 1/3), near 0 for fixed gaps. The variance
/// is estimated robustly, (1.4826 × median absolute deviation)², because a
/// stall of the VM moves I/Os into the next interval now and then.
fn dispersion(job: &Value) -> f64 {
    let mut counts: Vec<f64> = intervals(job)
        .iter()
        .map(|s| s["values"]["reads"].as_f64().unwrap())
        .collect();
    counts.pop(); // the last interval may be cut short
    let median = |values: &mut Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let mid = median(&mut counts);
    let mut deviations: Vec<f64> = counts.iter().map(|c| (c - mid).abs()).collect();
    let sigma = 1.4826 * median(&mut deviations);
    sigma * sigma / mid
}

#[test]
fn arrivals_are_spaced_by_their_distribution() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    // The dispersion of counts in 25 ms intervals is the pacer's only while
    // fsbench runs when its I/Os are due: on a busy machine a runnable
    // thread waits its turn for milliseconds, and an open-loop pacer then
    // issues the late I/Os in the next interval, which spreads the counts
    // of every distribution alike (uniform came out at 0.79 with load 12 on
    // 2 cores). A real-time fsbench (SCHED_FIFO, which only real-time work
    // delays) takes the CPU from any other test or burner when it wakes.
    let mut seen = Vec::new();
    for arrival in ["exponential", "uniform", "fixed"] {
        let (out, result) = io_json_launched(
            &mnt,
            &format!(
                "-s 4m --rate 4000 --arrival {arrival} --seed 9 --duration 4s --warmup 0 --interval 0.025s"
            ),
            &["chrt", "--fifo", "10"],
        );
        let job = &workloads(&result)[0];
        let rate = metric(job, "io_rate")["value"].as_f64().unwrap();
        assert!(
            (3600.0..=4400.0).contains(&rate),
            "{arrival}: {rate} I/O/s for --rate 4000\n{out}"
        );
        seen.push((arrival, dispersion(job)));
    }
    // 160 intervals of ~100 I/Os: the MAD estimate of the variance has a
    // relative σ of about 0.18 here, so 1 ± 0.18 for Poisson counts and
    // 0.33 ± 0.06 for uniform gaps. Stalls of a loaded machine only add to
    // it, so the upper bounds are loose; the lower ones are 3 σ away.
    let [(_, exponential), (_, uniform), (_, fixed)] = seen[..] else {
        unreachable!()
    };
    assert!((0.45..3.0).contains(&exponential), "{seen:?}");
    assert!((0.12..0.9).contains(&uniform), "{seen:?}");
    assert!(exponential > 1.5 * uniform, "{seen:?}");
    assert!(fixed < 0.2, "{seen:?}");
}

#[test]
fn a_transfer_size_mix_and_sync_options_run() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let (out, result) = io_json(
        &mnt,
        "-s 8m -b 4k:50,16k:50 --read 50 --sync dsync --fdatasync-every 4 --duration 0.3s --interval 0.1s -j 2",
    );
    let job = &workloads(&result)[0];
    let bytes_per_io = intervals(job)[1]["values"]["bytes_per_io"]
        .as_f64()
        .unwrap();
    assert!(
        (8000.0..12500.0).contains(&bytes_per_io),
        "{bytes_per_io}\n{out}"
    );
    assert!(out.stdout.contains("xfersize=(4k,50,16k,50)"), "{out}");
}

#[test]
fn io_uring_keeps_the_mix_and_several_ios_in_flight() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let (out, result) = io_json(
        &mnt,
        "-s 8m --engine io_uring --iodepth 16 --read 50 --seek 50 -j 2 --direct --duration 0.4s --interval 0.1s",
    );
    let job = &workloads(&result)[0];
    let total = observed(job, "reads") + observed(job, "writes");
    assert!(total > 1000.0, "{out}");
    assert_pct("reads", observed(job, "reads"), total, 50.0, 3.0);
    assert_pct("random", observed(job, "random"), total, 50.0, 3.0);
    let depth = intervals(job)[2]["values"]["queue_depth"].as_f64().unwrap();
    assert!(
        depth > 2.0,
        "queue depth {depth} with 2 × 16 in flight\n{out}"
    );
    assert!(out.stdout.contains("io_uring qd=16"), "{out}");
}

#[test]
fn io_uring_transfers_exact_amounts_and_single_passes() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let (_, result) = io_json(
        &mnt,
        "-s 4m -b 64k --engine io_uring --iodepth 8 --read 0 --seek eof",
    );
    assert_eq!(observed(&workloads(&result)[0], "writes"), 64.0);
    let (_, result) = io_json(
        &mnt,
        "-s 8m -b 4k --engine io_uring --iodepth 8 --read 100 --amount 3m",
    );
    assert_eq!(
        metric(&workloads(&result)[0], "mib_per_s")["samples"],
        3 << 20
    );
}
