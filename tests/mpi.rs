//! Scale-out under MPI: `mpirun -np 4 fsbench ...` on a tmpfs, ranks on
//! localhost. The JSON's aggregate must equal the sum of the ranks' work
//! over (latest end − earliest start); a failing rank must stop the whole
//! job, named, with every rank's scratch data removed.
#![cfg(feature = "mpi")]

mod common;

use std::process::Command;

use common::*;
use serde_json::Value;

const RANKS: u32 = 4;

/// `mpirun -np N fsbench ARGS` with `env` passed to every rank, to completion.
fn mpirun<S: AsRef<str>>(np: u32, env: &[(&str, &str)], args: &[S]) -> Output {
    start_mpirun(np, env, args).wait()
}

/// A session directory base of its own for one mpirun: Open MPI makes its
/// top session directory with a check then a mkdir, which fails ("File
/// exists") when two mpiruns of the parallel tests start at once.
fn session_base() -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("ompi-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("cannot create a session directory base");
    dir
}

fn start_mpirun<S: AsRef<str>>(np: u32, env: &[(&str, &str)], args: &[S]) -> Running {
    let mut command = Command::new("mpirun");
    command.env("OMPI_MCA_orte_tmpdir_base", session_base());
    command.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "-np",
        &np.to_string(),
    ]);
    for (name, value) in env {
        command.args(["-x", &format!("{name}={value}")]);
    }
    command.arg(FSBENCH);
    let args: Vec<String> = args.iter().map(|a| a.as_ref().to_string()).collect();
    command.args(&args);
    let line = format!("mpirun -np {np} fsbench {}", args.join(" "));
    Running::spawn_command(&mut command, line)
}

/// The one workload result of a `--json` file.
fn workload(json: &std::path::Path) -> Value {
    let record = read_json(json);
    record["targets"][0]["workloads"][0].clone()
}

fn number(value: &Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

/// `args` with `--json` on `np` ranks, successful; its output and workload
/// result (the JSON file, in `mnt`, is removed again).
fn mpirun_json<S: AsRef<str>>(
    np: u32,
    mnt: &TmpfsMount,
    env: &[(&str, &str)],
    args: &[S],
) -> (Output, Value) {
    let json = mnt.join("result.json");
    let mut all: Vec<String> = args.iter().map(|a| a.as_ref().to_string()).collect();
    all.extend(["--json".to_string(), json.to_str().unwrap().to_string()]);
    let out = mpirun(np, env, &all);
    out.assert_success();
    let result = workload(&json);
    std::fs::remove_file(&json).unwrap();
    (out, result)
}

/// `bonnie -s 0 -n FILES EXTRA` on 4 ranks: as `mpirun_json`.
fn bonnie_file_tests(
    mnt: &TmpfsMount,
    env: &[(&str, &str)],
    files: &str,
    extra: &[&str],
) -> (Output, Value) {
    let mut args = vec!["-s", "0", "-n", files, "-r", "0"];
    args.extend(extra);
    mpirun_json(RANKS, mnt, env, &bonnie_args(&mnt.arg(), &args))
}

/// `io` on `mnt` with `--json`: 70 % random reads of 4 KiB, a file of
/// `size` per rank, plus `extra`; as `mpirun_json`.
fn io(np: u32, mnt: &TmpfsMount, size: &str, extra: &[&str]) -> (Output, Value) {
    let target = mnt.arg();
    let mut args = vec![
        "io", &target, "-s", size, "-b", "4k", "--read", "70", "--seek", "100",
    ];
    args.extend(extra);
    mpirun_json(np, mnt, &[], &args)
}

/// For every metric: samples = the ranks' sum, elapsed = latest end −
/// earliest start of the ranks' phases, and a rate = samples over it.
fn assert_aggregate_is_sum_of_ranks(result: &Value, ranks: u32) {
    let scale = &result["scale"];
    assert_eq!(scale["ranks"], ranks, "{scale}");
    let per_rank = scale["per_rank"].as_array().unwrap();
    assert_eq!(per_rank.len(), ranks as usize);
    let metrics = result["metrics"].as_array().unwrap();
    assert!(!metrics.is_empty());
    for (i, metric) in metrics.iter().enumerate() {
        let name = metric["name"].as_str().unwrap();
        let parts: Vec<&Value> = per_rank.iter().map(|r| &r["metrics"][i]).collect();
        let sum: u64 = parts.iter().map(|p| p["samples"].as_u64().unwrap()).sum();
        assert_eq!(metric["samples"].as_u64(), Some(sum), "{name}");
        let first_start = parts
            .iter()
            .map(|p| number(&p["start_s"]))
            .fold(f64::INFINITY, f64::min);
        let last_end = parts
            .iter()
            .map(|p| number(&p["start_s"]) + number(&p["elapsed_s"]))
            .fold(0.0, f64::max);
        let elapsed = number(&metric["elapsed_s"]);
        assert!(
            (elapsed - (last_end - first_start)).abs() < 1e-6,
            "{name}: {elapsed} vs {last_end} - {first_start}"
        );
        let per_sample = match metric["unit"].as_str().unwrap() {
            "files/s" | "transactions/s" | "IO/s" | "ops/s" => Some(1.0),
            "MiB/s" => Some(1.0 / (1u64 << 20) as f64),
            _ => None,
        };
        if let Some(per_sample) = per_sample {
            let rate = sum as f64 * per_sample / elapsed;
            assert!(
                (number(&metric["value"]) - rate).abs() < 1e-6 * rate,
                "{name}"
            );
        }
    }
    let hosts = scale["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 1, "ranks on localhost");
    assert_eq!(
        hosts[0]["ranks"],
        serde_json::json!((0..ranks).collect::<Vec<_>>())
    );
    assert!(
        hosts[0]["env"]["kernel"]
            .as_str()
            .is_some_and(|k| !k.is_empty())
    );
}

#[test]
fn bonnie_file_tests_on_four_ranks_add_up() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("256m") else {
        return;
    };
    let (out, result) = bonnie_file_tests(&mnt, &[], "1", &[]);
    assert_aggregate_is_sum_of_ranks(&result, RANKS);
    assert_eq!(result["metrics"][0]["samples"], 4 * 1024);
    assert!(out.stderr.contains("per rank"), "{out}");
    // One table and CSV line: rank 0's, with the aggregate.
    assert_eq!(out.csv_lines().len(), 1, "{out}");
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn postmark_on_four_ranks_adds_up() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("256m") else {
        return;
    };
    let config = mnt.join("pm.cfg");
    let commands = format!(
        "set location {}\nset number 300\nset transactions 600\nrun\nquit\n",
        mnt.arg()
    );
    std::fs::write(&config, commands).unwrap();
    let (_, result) = mpirun_json(RANKS, &mnt, &[], &["postmark", config.to_str().unwrap()]);
    assert_aggregate_is_sum_of_ranks(&result, RANKS);
    let transactions = &result["metrics"][0];
    assert_eq!(transactions["name"], "transactions");
    assert_eq!(transactions["samples"], 4 * 600);
    std::fs::remove_file(&config).unwrap();
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn meta_on_four_ranks_adds_up() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("256m") else {
        return;
    };
    let (_, result) = mpirun_json(
        RANKS,
        &mnt,
        &[],
        &["meta", &mnt.arg(), "-n", "400", "--dirs", "2"],
    );
    assert_aggregate_is_sum_of_ranks(&result, RANKS);
    assert_eq!(metric_named(&result, "create_ops_s")["samples"], 4 * 400);
    assert_eq!(metric_named(&result, "unlink_ops_s")["samples"], 4 * 400);
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn tree_on_four_ranks_adds_up() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("512m") else {
        return;
    };
    let (_, result) = mpirun_json(
        RANKS,
        &mnt,
        &[],
        &[
            "tree",
            &mnt.arg(),
            "--dataset",
            "small",
            "--scale",
            "0.002",
            "--ops",
            "find,copy,delete",
            "--no-drop-caches",
            "--sync-log",
            "target",
        ],
    );
    assert_aggregate_is_sum_of_ranks(&result, RANKS);
    assert!(
        number(&metric_named(&result, "sync_log_records")["samples"]) > 0.0,
        "every rank's sync log is in the aggregate"
    );
    let copy = metric_named(&result, "copy_s");
    assert_eq!(
        copy["value"], copy["elapsed_s"],
        "a time metric is the aggregate time"
    );
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

/// Four ranks lay their datasets and copies down on one tmpfs at once:
/// each rank's readings count all four, so a rank's own figure would be
/// about 4; the job's is rank 0's growth over all ranks' bytes, about 1
/// (tmpfs counts pages: a few large files take what they hold).
#[test]
fn space_on_four_ranks_is_the_shared_growth_over_all_bytes() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("512m") else {
        return;
    };
    let (_, result) = mpirun_json(
        RANKS,
        &mnt,
        &[],
        &[
            "tree",
            &mnt.arg(),
            "--dataset",
            "images",
            "--scale",
            "0.005",
            "--ops",
            "copy",
        ],
    );
    let per_rank = result["scale"]["per_rank"].as_array().unwrap();
    for op in ["generate", "copy"] {
        let name = format!("{op}_space");
        let space = metric_named(&result, &name);
        let value = number(&space["value"]);
        assert!((0.95..1.2).contains(&value), "{name}: {value}");
        // Every rank's bytes: 27.5 MB each.
        assert_eq!(space["samples"].as_u64(), Some(4 * 27_500_000), "{name}");
        let i = result["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .position(|m| m["name"] == name.as_str())
            .unwrap();
        for rank in per_rank {
            assert_eq!(number(&rank["metrics"][i]["value"]), value, "{name}");
        }
    }
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

/// How far the ranks' common clock can be off: it starts at a barrier,
/// which four ranks on two busy cores left up to 10 ms apart (measured, see
/// src/scale/mod.rs).
const BARRIER_SKEW_S: f64 = 0.05;

/// Rank r starts each phase r × 300 ms late: the aggregate time spans the
/// first start to the last end (≥ 0.9 s) although no rank took that long.
#[test]
fn aggregate_time_runs_from_earliest_start_to_latest_end() {
    let Some(mnt) = TmpfsMount::new("128m") else {
        return;
    };
    let (_, result) = bonnie_file_tests(&mnt, &[("FSBENCH_TEST_RANK_DELAY_MS", "300")], "1", &[]);
    assert_aggregate_is_sum_of_ranks(&result, RANKS);
    let create = &result["metrics"][0];
    let spread = &result["scale"]["spread"][0];
    let elapsed = number(&create["elapsed_s"]);
    assert!(elapsed >= 0.9 - BARRIER_SKEW_S, "{create}");
    assert_eq!(number(&spread["last_done_s"]), elapsed);
    assert!(number(&spread["slowest_s"]) < 0.9, "{spread}");
    for (r, part) in result["scale"]["per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let start = number(&part["metrics"][0]["start_s"]);
        assert!(
            start >= 0.3 * r as f64 - BARRIER_SKEW_S,
            "rank {r} started at {start}"
        );
    }
    // When rank 0 was done, the late ranks had done little or nothing.
    let first_done = number(&spread["first_done_s"]);
    assert!(first_done < 0.3, "{spread}");
    assert!(
        number(&spread["stonewall_samples"]) < 2.0 * 1024.0,
        "{spread}"
    );
}

/// `fsbench report` of a saved multi-rank result shows the breakdown too.
#[test]
fn a_saved_result_reports_its_ranks() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let json = mnt.join("result.json");
    let path = json.to_str().unwrap();
    mpirun(
        2,
        &[],
        &bonnie_args(
            &mnt.arg(),
            &["-s", "0", "-n", "1", "-r", "0", "--json", path],
        ),
    )
    .assert_success();
    let out = run(&["report", path]);
    out.assert_success();
    for needle in ["2 ranks", "stonewall", "per host", "rank 1"] {
        assert!(out.stdout.contains(needle), "{needle}\n{out}");
    }
}

/// `--shared-dir`: every rank's files in one directory (three of them
/// here); each rank still stats and deletes exactly its own.
#[test]
fn ranks_share_one_directory_with_shared_dir() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("256m") else {
        return;
    };
    let (_, result) = bonnie_file_tests(&mnt, &[], "1:0:0:3", &["--shared-dir"]);
    assert_eq!(result["params"]["shared_dir"], true);
    assert_aggregate_is_sum_of_ranks(&result, RANKS);
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn a_failing_rank_fails_the_job_by_name_and_every_rank_cleans_up() {
    assert_failing_rank_cleans_up(2, &[]);
}

/// Rank 0 fails while the others fill its scratch directory.
#[test]
fn a_failing_rank_0_in_a_shared_directory_leaves_nothing() {
    assert_failing_rank_cleans_up(0, &["--shared-dir"]);
}

/// A failed job, without a panic, whose one fsbench error line (rank 0
/// alone reports; mpirun adds lines of its own) contains `needle`.
fn assert_job_failed_naming(out: &Output, needle: &str) {
    assert_ne!(out.code(), 0, "{out}");
    out.assert_no_panic();
    let errors: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("fsbench: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "rank 0 alone reports\n{out}");
    assert!(errors[0].contains(needle), "{needle}\n{out}");
}

fn assert_failing_rank_cleans_up(rank: u32, extra: &[&str]) {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    let mut args = vec!["-s", "0", "-n", "1", "-r", "0"];
    args.extend(extra);
    let out = mpirun(
        RANKS,
        &[("FSBENCH_TEST_FAIL_RANK", &rank.to_string())],
        &bonnie_args(&mnt.arg(), &args),
    );
    let host = fsbench::storage::env::host_name();
    assert_job_failed_naming(&out, &format!("rank {rank} on host {host}"));
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

/// SIGUSR1 to mpirun (which forwards it; a Ctrl-C it answers by killing
/// the ranks a second later) stops every rank cleanly.
#[test]
fn sigusr1_to_mpirun_stops_every_rank_cleanly() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("1g") else {
        return;
    };
    let mut run = start_mpirun(
        RANKS,
        &[],
        &bonnie_args(&mnt.arg(), &["-s", "0", "-n", "256", "-r", "0"]),
    );
    wait_until(STARTUP_TIMEOUT, "every rank's scratch directory", || {
        scratch_dirs(mnt.path()).len() == RANKS as usize || !run.is_running()
    });
    run.signal(libc::SIGUSR1);
    let out = run.wait();
    out.assert_code(128 + libc::SIGUSR1);
    assert!(out.stderr.contains("interrupted by SIGUSR1"), "{out}");
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

/// `io` on 4 ranks, each on its own file: the aggregate IO/s and MiB/s
/// are all ranks' I/Os over the common span; response times are the
/// statistics of all ranks' I/Os, not rates.
#[test]
fn io_on_four_ranks_adds_up() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("256m") else {
        return;
    };
    let (out, result) = io(RANKS, &mnt, "16m", &["--duration", "1s", "--warmup", "0s"]);
    assert_aggregate_is_sum_of_ranks(&result, RANKS);
    let elapsed = number(&result["metrics"][0]["elapsed_s"]);
    assert!((1.0..1.5).contains(&elapsed), "{elapsed}");
    let per_rank = result["scale"]["per_rank"].as_array().unwrap();
    let index = |name: &str| {
        result["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .position(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no metric {name}"))
    };
    let ranks_of = |name: &str| -> Vec<f64> {
        let i = index(name);
        per_rank
            .iter()
            .map(|r| number(&r["metrics"][i]["value"]))
            .collect()
    };
    let job = |name: &str| number(&metric_named(&result, name)["value"]);
    // The largest response time is the largest rank's.
    let max = ranks_of("resp_max_ms")
        .into_iter()
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(job("resp_max_ms"), max);
    // The mean response time lies among the ranks' (a sum would not).
    let means = ranks_of("resp_ms");
    let lowest = means.iter().copied().fold(f64::INFINITY, f64::min);
    let highest = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert!((lowest..=highest).contains(&job("resp_ms")), "{means:?}");
    // Latency histograms are merged: their count is every rank's I/Os.
    let resp = metric_named(&result, "resp_ms");
    assert_eq!(resp["latency"]["count"], resp["samples"]);
    // 70 % reads: the rate of all I/Os exceeds any one rank's.
    let rates = ranks_of("io_rate");
    assert!(rates.iter().all(|&r| job("io_rate") > r), "{rates:?}");
    assert_eq!(
        out.stdout.matches("avg_").count(),
        1,
        "rank 0 alone prints\n{out}"
    );
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

/// The phase of an io job is its measured part: 2 s with the first 1 s
/// interval as warm-up measure 1 s on every rank, and the time series is
/// rank 0's (both intervals, the warm-up marked).
#[test]
fn io_aggregates_the_measured_part_after_the_warm_up() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let (_, result) = io(2, &mnt, "8m", &["--duration", "2s", "--interval", "1s"]);
    let elapsed = number(&result["metrics"][0]["elapsed_s"]);
    assert!((1.0..1.4).contains(&elapsed), "{elapsed}");
    for part in result["scale"]["per_rank"].as_array().unwrap() {
        let own = number(&part["metrics"][0]["elapsed_s"]);
        assert!((own - 1.0).abs() < 0.05, "{part}");
    }
    let intervals = result["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 2, "{result}");
    assert_eq!(intervals[0]["warmup"], true);
    assert_no_scratch_left(mnt.path());
}

/// A `run` suite file in `mnt` holding `text`; its path.
fn suite_file(mnt: &TmpfsMount, text: &str) -> String {
    let suite = mnt.join("suite.toml");
    std::fs::write(&suite, text).unwrap();
    suite.to_str().unwrap().to_string()
}

/// `run` on 4 ranks: a small suite of every kind that runs under MPI,
/// each workload combined over the ranks, the result saved once.
#[test]
fn a_suite_runs_on_four_ranks() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("512m") else {
        return;
    };
    let suite = suite_file(&mnt, SMALL_SUITE);
    let save_dir = mnt.join("results");
    let out = mpirun(
        RANKS,
        &[],
        &[
            "run",
            "--suite",
            &suite,
            "-t",
            &format!("fs={}", mnt.arg()),
            "--save-dir",
            save_dir.to_str().unwrap(),
        ],
    );
    out.assert_success();
    let saved: Vec<_> = std::fs::read_dir(&save_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "saved once, by rank 0: {saved:?}");
    assert_eq!(
        out.stderr.matches("result saved to").count(),
        1,
        "rank 0 alone reports\n{out}"
    );
    let record = read_json(&saved[0]);
    let workloads = record["targets"][0]["workloads"].as_array().unwrap();
    let kinds: Vec<&str> = workloads
        .iter()
        .map(|w| w["workload"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["bonnie", "postmark", "io", "tree", "meta"]);
    for result in workloads {
        assert_aggregate_is_sum_of_ranks(result, RANKS);
    }
    std::fs::remove_dir_all(&save_dir).unwrap();
    std::fs::remove_file(&suite).unwrap();
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

/// A rank failing in a suite stops every rank, named once, and every
/// rank's scratch directories (one per workload inside one per target)
/// are removed.
#[test]
fn a_failing_rank_in_a_suite_stops_the_job_and_every_rank_cleans_up() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("512m") else {
        return;
    };
    let suite = suite_file(&mnt, SMALL_SUITE);
    let out = mpirun(
        RANKS,
        &[("FSBENCH_TEST_FAIL_RANK", "2")],
        &["run", "--suite", &suite, "-t", &mnt.arg(), "--no-save"],
    );
    assert_job_failed_naming(&out, "rank 2 on host");
    std::fs::remove_file(&suite).unwrap();
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

/// A suite with a durability workload is refused under MPI, up front.
#[test]
fn a_suite_with_durability_is_refused_under_mpi() {
    let Some(mnt) = TmpfsMount::new("16m") else {
        return;
    };
    let suite = suite_file(
        &mnt,
        "description = \"d\"\n[[workload]]\nkind = \"durability\"\nargs = \"\"\n",
    );
    let out = mpirun(
        2,
        &[],
        &["run", "--suite", &suite, "-t", &mnt.arg(), "--no-save"],
    );
    assert_eq!(out.code(), 2, "{out}");
    assert!(
        out.stderr.contains("durability) does not run under MPI"),
        "{out}"
    );
    std::fs::remove_file(&suite).unwrap();
    assert_no_scratch_left(mnt.path());
}

#[test]
fn commands_without_mpi_support_refuse_to_run_under_it() {
    let Some(mnt) = TmpfsMount::new("16m") else {
        return;
    };
    let out = mpirun(2, &[], &["durability", &mnt.arg()]);
    assert_ne!(out.code(), 0, "{out}");
    assert!(out.stderr.contains("does not run under MPI"), "{out}");
    assert_no_scratch_left(mnt.path());
}

/// Built with MPI but started without mpirun: one rank, as always.
#[test]
fn without_a_launcher_the_mpi_build_runs_alone() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let json = mnt.join("result.json");
    let out = run(&bonnie_args(
        &mnt.arg(),
        &[
            "-s",
            "0",
            "-n",
            "1",
            "-r",
            "0",
            "--json",
            json.to_str().unwrap(),
        ],
    ));
    out.assert_success();
    let result = workload(&json);
    assert!(result.get("scale").is_none(), "{result}");
    assert!(!out.stderr.contains("per rank"), "{out}");
}

/// A `--configs` file's text: configurations made by `setup` commands (each
/// a TOML string) at `path`, named `names`, each logging its setup and
/// teardown to `log`.
fn logged_configs(names: &[(&str, &str)], path: &str, log: &std::path::Path) -> String {
    let log = log.display();
    names
        .iter()
        .map(|(name, setup)| {
            format!(
                "[[config]]\nname = \"{name}\"\npath = \"{path}\"\n\
                 setup = [\"echo setup {name} >> {log}\", \"{setup}\"]\n\
                 teardown = [\"echo teardown {name} >> {log}\"]\n"
            )
        })
        .collect()
}

/// The quickest suite: one short io job.
const IO_SUITE: &str = "description = \"io\"\nrepeat = 1\n[[workload]]\nkind = \"io\"\n\
    args = \"-s 1m -b 64k --read 0 --duration 0.2s --interval 0.1s --warmup 0\"\n";

/// `run --configs` on two ranks: rank 0 alone runs each configuration's
/// setup and teardown, once; every rank measures its path, one result per
/// configuration; with --keep-going a configuration whose setup fails is
/// left out on every rank (they agree on it), the other still measured,
/// and the run exits 1 naming it.
#[test]
fn configurations_are_built_by_rank_0_and_measured_by_every_rank() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let log = mnt.join("commands.log");
    let configs = mnt.join("configs.toml");
    let text = logged_configs(&[("broken", "false"), ("good", "true")], &mnt.arg(), &log);
    std::fs::write(&configs, text).unwrap();
    let suite = suite_file(&mnt, IO_SUITE);
    let json = mnt.join("result.json");
    let out = mpirun(
        2,
        &[],
        &[
            "run",
            "--configs",
            configs.to_str().unwrap(),
            "--allow-shell",
            "--keep-going",
            "--images",
            &mnt.arg(),
            "--suite",
            &suite,
            "--no-save",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code(), 1, "{out}");
    assert!(
        out.stderr
            .contains("configuration broken not built: `false` failed"),
        "{out}"
    );
    assert!(
        out.stderr.contains(
            "1 of the configurations could not be built (broken); the others were measured"
        ),
        "{out}"
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        logged.lines().collect::<Vec<_>>(),
        [
            "setup broken",
            "teardown broken",
            "setup good",
            "teardown good"
        ]
    );
    let record = read_json(&json);
    let targets = record["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 1, "{record}");
    assert_eq!(targets[0]["name"], "good");
    let ranks = &targets[0]["workloads"][0]["scale"]["per_rank"];
    assert_eq!(ranks.as_array().map(Vec::len), Some(2), "{record}");
    for file in [&log, &configs, &json] {
        std::fs::remove_file(file).unwrap();
    }
    std::fs::remove_file(&suite).unwrap();
    sentinel.assert_intact();
    assert_no_scratch_left(mnt.path());
}

/// Under MPI a configuration rank 0 alone could make on its host (mkfs, a
/// mount, the `{dir}` fsbench makes) is refused before anything runs, in
/// one line naming it (rank 0's, for all).
#[test]
fn configurations_one_host_makes_are_refused_under_mpi() {
    let Some(mnt) = TmpfsMount::new("16m") else {
        return;
    };
    let configs = mnt.join("configs.toml");
    let cases = [
        (
            "mkfs = \"mkfs.ext4 {dev}\"",
            "ext4 is made by mkfs on one host",
        ),
        (
            "setup = [\"touch {dir}/x\"]",
            "ext4 has {dir} in a setup or teardown command, a directory on one host",
        ),
    ];
    for (body, why) in cases {
        std::fs::write(&configs, format!("[[config]]\nname = \"ext4\"\n{body}\n")).unwrap();
        let out = mpirun(
            2,
            &[],
            &[
                "run",
                "--configs",
                configs.to_str().unwrap(),
                "--allow-shell",
                "--no-save",
            ],
        );
        assert_eq!(out.code(), 2, "{out}");
        // One line of fsbench's (mpirun adds its own block after it).
        let said: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.starts_with("fsbench"))
            .collect();
        assert_eq!(said.len(), 1, "{out}");
        assert!(
            said[0].contains(&format!("--configs under MPI: {why}")),
            "{out}"
        );
    }
    std::fs::remove_file(&configs).unwrap();
    assert_no_scratch_left(mnt.path());
}

/// With a stopping rule (`--precision`) rank 0 alone reads the results,
/// and every rank stops where it does: the job ends (no rank waits in a
/// repetition the others left), each target measured as often.
#[test]
fn every_rank_stops_where_the_precision_rule_stops_rank_0() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let suite = suite_file(&mnt, IO_SUITE);
    let json = mnt.join("result.json");
    for dir in ["a", "b"] {
        std::fs::create_dir(mnt.join(dir)).unwrap();
    }
    let (a, b) = (mnt.join("a"), mnt.join("b"));
    let out = mpirun(
        2,
        &[],
        &[
            "run",
            "--suite",
            &suite,
            "-t",
            &format!("a={}", a.display()),
            "-t",
            &format!("b={}", b.display()),
            "--precision",
            "90%",
            "--repeat",
            "2",
            "--max-repeat",
            "8",
            "--no-save",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    out.assert_success();
    let record = read_json(&json);
    let counts: Vec<usize> = record["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["workloads"].as_array().unwrap().len())
        .collect();
    assert!(counts[0] < 8 && counts[0] == counts[1], "{counts:?}\n{out}");
    for file in [&json, &std::path::PathBuf::from(&suite)] {
        std::fs::remove_file(file).unwrap();
    }
    for dir in [&a, &b] {
        assert_no_scratch_left(dir);
        std::fs::remove_dir(dir).unwrap();
    }
}
