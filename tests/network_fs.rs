//! fsbench on real network file systems (issue 29): GlusterFS, sshfs and
//! Samba + smbnetfs, each served from a server host and mounted on two
//! client hosts through links shaped to 1 GbE (network namespaces on this
//! machine: tests/common/netlab.rs). A file crosses from one client to the
//! other, `fsbench env` names the file system, every workload runs on it
//! beside a sentinel, and the lab leaves nothing behind.
//!
//! Needs root and the packages scripts/test.sh installs; without them each
//! test says why it skips.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::netlab::{self, Fs, Host, LabSpec, NetLab, Share};
use common::*;
use serde_json::Value;

/// A lab of two clients at 1 GbE, or None (after saying why) when this
/// machine cannot build one serving `fs` (with MPI when `mpi`).
fn lab_for(fs: &[Fs], mpi: bool) -> Option<NetLab> {
    netlab::available(fs, mpi).then(|| NetLab::new(LabSpec::default()))
}

/// Starts `fs` in `lab`, saying how long the network and the service took.
fn start(lab: &mut NetLab, fs: Fs) -> Share {
    let share = lab.start(fs);
    eprintln!("{}: set up {:.2?}", lab.name(), lab.timings());
    share
}

/// Tears `lab` down and asserts nothing of it is left: no namespace, mount,
/// process, directory or subnet claim.
fn close_and_check(lab: NetLab) {
    let trace = lab.trace();
    let name = lab.name().to_string();
    let took = lab.close();
    eprintln!("{name}: teardown {took:.2?}");
    assert_eq!(trace.leftovers(), Vec::<String>::new(), "{name} left these");
}

// ---------------------------------------------------------------------------
// The lab itself.

#[test]
fn a_lab_is_gone_after_a_panicking_test() {
    if !netlab::available(&[Fs::Sshfs], false) {
        return;
    }
    let trace = std::sync::Mutex::new(None);
    let result = std::panic::catch_unwind(|| {
        let mut lab = NetLab::new(LabSpec::clients(1));
        lab.start(Fs::Sshfs);
        *trace.lock().unwrap() = Some(lab.trace());
        panic!("a failing test with a lab in use");
    });
    assert!(result.is_err());
    let trace = trace.into_inner().unwrap().expect("the lab was built");
    assert_eq!(trace.leftovers(), Vec::<String>::new());
}

/// What a killed run leaves (namespaces, a directory, a subnet claim, named
/// after a process that is gone) is removed by the next lab.
#[test]
fn a_killed_runs_lab_is_removed_by_the_next_one() {
    if !netlab::available(&[], false) {
        return;
    }
    let dead = dead_pid();
    let name = format!("fsbnl-{dead}-0");
    for host in ["srv", "c0"] {
        run_ok(Command::new("ip").args(["netns", "add", &format!("{name}-{host}")]));
    }
    let dir = Path::new("/tmp").join(&name);
    std::fs::create_dir_all(dir.join("gluster")).unwrap();
    let claim = Path::new("/tmp").join("fsbnl-net-255");
    // Another lab may hold that subnet: then the claim is not ours to plant.
    let planted_claim = std::os::unix::fs::symlink(&name, &claim).is_ok();
    let lab = NetLab::new(LabSpec::clients(1));
    assert!(!Path::new("/run/netns").join(format!("{name}-srv")).exists());
    assert!(!Path::new("/run/netns").join(format!("{name}-c0")).exists());
    assert!(!dir.exists());
    if planted_claim {
        assert!(std::fs::read_link(&claim).map_or(true, |l| l != Path::new(&name)));
    }
    close_and_check(lab);
}

/// Each client's link is shaped to its own rate at both ends, and a client
/// at 100 Mbit/s takes the time that rate needs to write a file. (Only the
/// slow side is timed: on 2 busy cores sshfs's encryption, not the link,
/// may bound the fast client.)
#[test]
fn a_client_link_is_shaped_to_its_rate() {
    if !netlab::available(&[Fs::Sshfs], false) {
        return;
    }
    let mut lab = NetLab::new(LabSpec::clients(2).rate(1, 100));
    for (client, rate) in [(0, "rate 1Gbit"), (1, "rate 100Mbit")] {
        for (host, device) in [
            (Host::Client(client), "eth0".to_string()),
            (Host::Server, format!("v{client}")),
        ] {
            let out = lab.run_in(host, &["tc", "qdisc", "show", "dev", &device]);
            let shown = String::from_utf8_lossy(&out.stdout);
            assert!(
                shown.contains("tbf") && shown.contains(rate),
                "{host:?} {device}: {shown}"
            );
        }
    }
    let share = start(&mut lab, Fs::Sshfs);
    let bytes = 6 << 20;
    let fast = timed_write(&lab, &share, 0, bytes);
    let slow = timed_write(&lab, &share, 1, bytes);
    eprintln!("6 MiB: {fast:.2?} at 1 GbE, {slow:.2?} at 100 Mbit/s");
    // 6 MiB at 100 Mbit/s is 0.50 s at least.
    assert!(slow >= Duration::from_millis(480), "{slow:?}");
    close_and_check(lab);
}

/// Writes `bytes` through client `client` (synced); how long it took, after
/// checking that its link sent them.
fn timed_write(lab: &NetLab, share: &Share, client: usize, bytes: usize) -> Duration {
    let before = lab.client_counters(client);
    let started = Instant::now();
    write_synced(&share.clients[client].join(format!("data-{client}")), bytes);
    let took = started.elapsed();
    let sent = lab.client_counters(client).tx_bytes - before.tx_bytes;
    assert!(sent >= bytes as u64, "{sent} bytes sent for {bytes}");
    took
}

fn write_synced(path: &Path, bytes: usize) {
    use std::io::Write;
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(&vec![0x5a; bytes]).unwrap();
    file.sync_all().unwrap();
}

// ---------------------------------------------------------------------------
// Each network file system.

#[test]
fn glusterfs_serves_every_workload() {
    workloads_on(Fs::Gluster, "");
}

#[test]
fn sshfs_serves_every_workload() {
    workloads_on(Fs::Sshfs, "");
}

/// Every workload, PostMark unbuffered. What smbnetfs 0.6.3 (with
/// libsmbclient 4.17) does, found with strace, its debug log and smbd's:
///
/// - A write-only handle cannot read the file's attributes on the server
///   (smbd: NT_STATUS_ACCESS_DENIED to GETINFO), and two calls ask for
///   them through it: open(O_WRONLY | O_APPEND) of an existing file
///   (libsmbclient seeks to the end) and ftruncate (smbnetfs then
///   fstats the handle: EINVAL). smbnetfs takes either failure for a lost
///   connection: it retries on new ones for 4 s, answers EIO, and calls
///   on the mount, a listing of the share included, may fail with EIO for
///   seconds more. PostMark's buffered appends open as glibc's fopen "a"
///   does, O_WRONLY | O_CREAT | O_APPEND, and fsbench keeps PostMark's
///   calls as they are: see `smbnetfs_fails_buffered_postmark_in_one_line`.
///   meta's truncate opens its file read-write instead: the truncate
///   itself is the same.
/// - listxattr, of any size, fails the same way inside smbnetfs (smbd
///   sees nothing wrong); getxattr of a user, security or ACL name is
///   refused at once (EOPNOTSUPP). The tree copy asks those first and,
///   refused, lists no xattrs (its note: xattrs not copied).
/// - An unlink or rename of a file just closed may meet EBUSY: FUSE sends
///   the close on without waiting, and SMB will not delete a file its
///   server still holds open. `storage::just_closed` waits it out.
///
/// Samba through the kernel's cifs client is the path users take; this
/// kernel has no cifs.
#[test]
fn smbnetfs_serves_every_workload_it_can() {
    workloads_on(Fs::Smb, "set buffering false\n");
}

/// PostMark as it runs by default, its appends through stdio, meets
/// smbnetfs's fault at its first append (see above): fsbench stops with
/// one error naming the file and the errno, and once the mount answers
/// again `fsbench clean` removes what its own cleanup could not reach.
#[test]
fn smbnetfs_fails_buffered_postmark_in_one_line() {
    let Some(mut lab) = lab_for(&[Fs::Smb], false) else {
        return;
    };
    let share = start(&mut lab, Fs::Smb);
    let target = share.clients[0].display().to_string();
    let config = lab.dir().join("postmark.cfg");
    std::fs::write(&config, postmark_config(&target, "")).unwrap();
    let out = fsbench_on(&lab, 0, &["postmark", &config.display().to_string()]);
    out.assert_code(1).assert_no_panic();
    let errors: Vec<&str> = out
        .stderr
        .lines()
        .filter(|line| line.starts_with("fsbench: error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{out}");
    assert!(
        errors[0].contains("cannot open") && errors[0].ends_with("Input/output error (os error 5)"),
        "if smbnetfs now takes O_WRONLY | O_APPEND, run PostMark buffered in \
         smbnetfs_serves_every_workload_it_can\n{out}"
    );
    wait_until(
        Duration::from_secs(60),
        "the smbnetfs mount's recovery",
        || std::fs::read_dir(&share.clients[0]).is_ok(),
    );
    fsbench_on(&lab, 0, &["clean", &target]).assert_success();
    assert_no_scratch_left(&share.clients[0]);
    close_and_check(lab);
}

/// The smallest run on smbnetfs: fsbench makes its scratch directory,
/// writes its marker as `.fsbench-scratch.new` and renames it; smbnetfs
/// (SMB: no renaming a file open without delete sharing) refuses that
/// while the marker is open (EBUSY, after EINVAL for RENAME_NOREPLACE),
/// so fsbench closes it, renames it and opens it again.
#[test]
fn smbnetfs_takes_a_scratch_directory() {
    let Some(mut lab) = lab_for(&[Fs::Smb], false) else {
        return;
    };
    let share = start(&mut lab, Fs::Smb);
    let target = &share.clients[0];
    fsbench_on(
        &lab,
        0,
        &[
            "io",
            &target.display().to_string(),
            "-s",
            "1m",
            "--duration",
            "0.2s",
            "--interval",
            "0.1s",
            "--warmup",
            "0",
        ],
    )
    .assert_success();
    assert_no_scratch_left(target);
    close_and_check(lab);
}

/// One lab serving `fs`: every workload runs through client 0 beside a
/// sentinel (PostMark with `postmark_sets`, its `set` lines of its own),
/// which client 1 then sees intact; the lab goes without a trace.
fn workloads_on(fs: Fs, postmark_sets: &str) {
    let Some(mut lab) = lab_for(&[fs], false) else {
        return;
    };
    let share = start(&mut lab, fs);
    let target = &share.clients[0];
    let sentinel = Sentinel::plant(target);
    let outside = lab.dir().join("results");
    std::fs::create_dir_all(&outside).unwrap();
    for (kind, args) in workloads(&target.display().to_string(), &outside, postmark_sets) {
        let started = Instant::now();
        runs_with_sane_figures(&lab, kind, &args, &outside.join(format!("{kind}.json")));
        eprintln!("{}: {kind} {:.2?}", fs.name(), started.elapsed());
        assert_no_scratch_left(target);
        sentinel.assert_intact();
    }
    sentinel_seen_through(&share.clients[1]);
    close_and_check(lab);
}

/// The other client sees the sentinel's files as they were planted.
fn sentinel_seen_through(dir: &Path) {
    let read = |name: &str| std::fs::read(dir.join(name)).ok();
    assert_eq!(read("SENTINEL").as_deref(), Some(SENTINEL_CONTENT));
    assert_eq!(
        read("sentinel-dir/inner.txt").as_deref(),
        Some(SENTINEL_INNER)
    );
    assert_eq!(
        read("sentinel-dir/sub/deeper.txt").as_deref(),
        Some(SENTINEL_INNER)
    );
}

/// A file written (and synced: sshfs sends writes without waiting for
/// their replies, so a close alone may leave some in flight on a busy
/// machine) through client 0 reads back through client 1, and each
/// client's own link counted the bytes it moved.
fn a_file_crosses_from_client_to_client(lab: &NetLab, share: &Share) {
    let bytes = 1 << 20;
    let contents: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
    let (sent_before, received_before) = (lab.client_counters(0), lab.client_counters(1));
    use std::io::Write;
    let mut written = std::fs::File::create(share.clients[0].join("crossing")).unwrap();
    written.write_all(&contents).unwrap();
    written.sync_all().unwrap();
    drop(written);
    let read = std::fs::read(share.clients[1].join("crossing")).unwrap();
    assert!(
        read == contents,
        "{:?}: client 1 read other bytes",
        share.fs
    );
    let sent = lab.client_counters(0).tx_bytes - sent_before.tx_bytes;
    let received = lab.client_counters(1).rx_bytes - received_before.rx_bytes;
    assert!(sent >= bytes as u64, "{:?}: client 0 sent {sent}", share.fs);
    assert!(
        received >= bytes as u64,
        "{:?}: client 1 received {received}",
        share.fs
    );
    std::fs::remove_file(share.clients[1].join("crossing")).unwrap();
}

/// A small PostMark run on `target`, with `sets` (`set` lines) of its own.
fn postmark_config(target: &str, sets: &str) -> String {
    format!("set location {target}\nset number 100\nset transactions 200\n{sets}run\nquit\n")
}

/// Every workload kind, small: `(kind, fsbench arguments)` on `target`, with
/// its input files (PostMark's configuration, with `postmark_sets`) in
/// `outside`.
fn workloads(
    target: &str,
    outside: &Path,
    postmark_sets: &str,
) -> Vec<(&'static str, Vec<String>)> {
    let postmark = outside.join("postmark.cfg");
    std::fs::write(&postmark, postmark_config(target, postmark_sets)).unwrap();
    let strings = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        (
            "bonnie",
            bonnie_args(target, &["-s", "4", "-f", "-n", "1", "-r", "0"]),
        ),
        (
            "postmark",
            strings(&["postmark", &postmark.display().to_string()]),
        ),
        (
            "io",
            strings(&[
                "io",
                target,
                "-s",
                "8m",
                "-b",
                "64k",
                "--read",
                "50",
                "--duration",
                "0.6s",
                "--interval",
                "0.3s",
                "--warmup",
                "0",
            ]),
        ),
        (
            "tree",
            strings(&[
                "tree",
                target,
                "--dataset",
                "photos",
                "--scale",
                "0.001",
                "--ops",
                "copy,find,read,delete",
                "--no-drop-caches",
            ]),
        ),
        (
            "meta",
            strings(&["meta", target, "-n", "200", "--dirs", "2"]),
        ),
        (
            "durability",
            strings(&["durability", target, "--writes", "20", "-d", "1s"]),
        ),
    ]
}

/// `fsbench ARGS` on client `client`'s host, in its network namespace, as a
/// user runs it on a client: the interfaces it counts are the ones its
/// mount's traffic crosses.
fn fsbench_on<S: AsRef<str>>(lab: &NetLab, client: usize, args: &[S]) -> Output {
    let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    let mut command = lab.command_in(Host::Client(client), FSBENCH);
    command.args(&args);
    let line = format!("fsbench {} (on client {client})", args.join(" "));
    Running::spawn_command(&mut command, line).wait()
}

/// Runs `fsbench ARGS --json JSON` on client 0: success, no panic, and
/// figures that make sense (every metric a finite, non-negative number, and
/// at least one above zero).
fn runs_with_sane_figures(lab: &NetLab, kind: &str, args: &[String], json: &Path) {
    let mut all = args.to_vec();
    all.extend(["--json".to_string(), json.display().to_string()]);
    let out = fsbench_on(lab, 0, &all);
    out.assert_success().assert_no_panic();
    let record = read_json(json);
    let workload = &record["targets"][0]["workloads"][0];
    let metrics = workload["metrics"].as_array().cloned().unwrap_or_default();
    assert!(!metrics.is_empty(), "{kind}: no metrics\n{out}");
    for metric in &metrics {
        let value = metric["value"].as_f64();
        assert!(
            value.is_some_and(|v| v.is_finite() && v >= 0.0),
            "{kind}: {}\n{out}",
            metric
        );
    }
    assert!(
        metrics.iter().any(|m| m["value"].as_f64() > Some(0.0)),
        "{kind}: every figure is zero\n{out}"
    );
}

// ---------------------------------------------------------------------------
// What `fsbench env` says.

/// The environment record of `path` as client `client` sees it: its
/// target's `env`.
fn env_on(lab: &NetLab, client: usize, path: &Path) -> Value {
    let out = fsbench_on(
        lab,
        client,
        &["env", &path.display().to_string(), "--json", "-"],
    );
    out.assert_success().assert_no_panic();
    let record: Value = serde_json::from_str(&out.stdout).unwrap();
    record["targets"][0]["env"].clone()
}

/// One lab serving all three: through each, a file crosses from client to
/// client, and `fsbench env` on each client names the file system and
/// counts its traffic on the network interfaces (but smbnetfs's: see
/// `env_counts_smbnetfs_traffic_on_the_network`).
#[test]
fn each_file_system_crosses_clients_and_env_names_it() {
    let Some(mut lab) = lab_for(&Fs::ALL, false) else {
        return;
    };
    for fs in Fs::ALL {
        let share = start(&mut lab, fs);
        a_file_crosses_from_client_to_client(&lab, &share);
        for (client, dir) in share.clients.iter().enumerate() {
            let env = env_on(&lab, client, dir);
            assert_eq!(env["fs_type"], fs.mount_type(), "{env:#}");
            assert_eq!(env["network"]["counters"], "interfaces", "{env:#}");
            // The client's eth0 is a veth, whose 10 Gb/s is no speed: the
            // tbf shaping it to 1 GbE is.
            assert_eq!(env["network"]["link_bytes_per_s"], 125_000_000, "{env:#}");
            assert_eq!(
                env["network"]["link_source"], "eth0, shaped by tbf to 1000 Mbit/s",
                "{env:#}"
            );
        }
    }
    close_and_check(lab);
}

/// `fsbench env` on smbnetfs counts the client's interfaces: fuse.smbnetfs
/// is a network file system (src/storage/devices.rs NETWORK_FS).
#[test]
fn env_counts_smbnetfs_traffic_on_the_network() {
    let Some(mut lab) = lab_for(&[Fs::Smb], false) else {
        return;
    };
    let share = start(&mut lab, Fs::Smb);
    let env = env_on(&lab, 0, &share.clients[0]);
    assert_eq!(env["network"]["counters"], "interfaces", "{env:#}");
    close_and_check(lab);
}

// ---------------------------------------------------------------------------
// MPI across the client hosts.

/// A lab of `spec` serving GlusterFS, and the one path at which every
/// host sees its own client's mount (as MPI ranks need); None where the
/// lab cannot run here.
#[cfg(feature = "mpi")]
fn gluster_on_every_host(spec: LabSpec) -> Option<(NetLab, Share, String)> {
    if !netlab::available(&[Fs::Gluster], true) {
        return None;
    }
    let mut lab = NetLab::new(spec);
    let share = start(&mut lab, Fs::Gluster);
    let target = lab.same_path(&share.clients).display().to_string();
    Some((lab, share, target))
}

/// `mpirun fsbench ARGS`, one rank per client host, to a successful end.
#[cfg(feature = "mpi")]
fn mpirun_fsbench(lab: &NetLab, args: &[&str]) -> Output {
    let mut command = lab.mpirun(1);
    command.arg(FSBENCH).args(args);
    let out =
        Running::spawn_command(&mut command, format!("mpirun fsbench {}", args.join(" "))).wait();
    out.assert_success().assert_no_panic();
    out
}

/// `mpirun` over the lab's two client hosts runs one rank in each, under
/// each host's own name.
#[test]
fn mpirun_places_a_rank_on_each_client_host() {
    let Some(lab) = lab_for(&[], true) else {
        return;
    };
    let out = lab.mpirun(1).arg("hostname").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<&str> = stdout.lines().collect();
    names.sort();
    let expected: Vec<String> = lab.client_hosts().map(|h| lab.namespace(h)).collect();
    assert_eq!(names, expected);
    close_and_check(lab);
}

/// fsbench built with MPI runs one job over both client hosts on GlusterFS,
/// each rank seeing its own host's mount at one path: the result has one
/// host per client, named as the hosts are, and each rank's operations
/// crossed its own host's link.
#[cfg(feature = "mpi")]
#[test]
fn fsbench_runs_one_mpi_job_over_two_hosts() {
    let Some((lab, share, target)) = gluster_on_every_host(LabSpec::default()) else {
        return;
    };
    let json = lab.dir().join("mpi.json");
    let args = ["meta", &target, "-n", "200", "--dirs", "2", "--json"];
    let before: Vec<_> = (0..lab.clients()).map(|c| lab.client_counters(c)).collect();
    let mut with_json = args.to_vec();
    with_json.push(json.to_str().unwrap());
    let out = mpirun_fsbench(&lab, &with_json);
    let result = &read_json(&json)["targets"][0]["workloads"][0];
    let hosts = result["scale"]["hosts"]
        .as_array()
        .expect("per-host results");
    let names: Vec<&str> = hosts.iter().filter_map(|h| h["host"].as_str()).collect();
    let expected: Vec<String> = lab.client_hosts().map(|h| lab.namespace(h)).collect();
    assert_eq!(names, expected, "{out}");
    for (client, before) in before.iter().enumerate() {
        let sent = lab.client_counters(client).tx_bytes - before.tx_bytes;
        assert!(
            sent > 64 << 10,
            "client {client} sent only {sent} bytes\n{out}"
        );
    }
    assert_no_scratch_left(&share.clients[0]);
    close_and_check(lab);
}

/// `fsbench io` over two hosts, the same path on each, 1 MiB sequential
/// reads of a file per rank: run as `mpirun ... fsbench io ARGS --json`,
/// the job's read-rate metric.
#[cfg(feature = "mpi")]
fn mpi_io(lab: &NetLab, target: &str, extra: &[&str], name: &str) -> (serde_json::Value, Output) {
    let mut args = vec!["-s", "160m", "--duration", "1s"];
    args.extend(extra);
    mpi_io_with(lab, target, &args, name)
}

/// `mpi_io` with only the reading flags fixed: `args` give the size and
/// the end.
#[cfg(feature = "mpi")]
fn mpi_io_with(
    lab: &NetLab,
    target: &str,
    extra: &[&str],
    name: &str,
) -> (serde_json::Value, Output) {
    let json = lab.dir().join(format!("{name}.json"));
    let mut args = vec![
        "io",
        target,
        "-b",
        "1m",
        "--read",
        "100",
        "--seek",
        "0",
        "--interval",
        "0.5s",
        "--warmup",
        "0",
        "-q",
    ];
    args.extend(extra);
    args.extend(["--json", json.to_str().unwrap()]);
    let out = mpirun_fsbench(lab, &args);
    let result = read_json(&json)["targets"][0]["workloads"][0].clone();
    (result, out)
}

#[cfg(feature = "mpi")]
fn flag_names(metric: &serde_json::Value) -> Vec<String> {
    metric["flags"]
        .as_array()
        .map(|f| {
            f.iter()
                .filter_map(|f| f.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The issue's lab run, both ways. Each rank reading the file it laid out
/// is flagged served from cache exactly when its host's link carried under
/// half the bytes it read. With `--cross-host` each rank reads the other
/// host's file: the links carry what was read, nothing is flagged, and the
/// rate stays within the two 1 GbE links.
#[cfg(feature = "mpi")]
#[test]
fn cross_host_reads_cross_the_links_and_own_reads_are_judged_by_them() {
    let Some((lab, share, target)) = gluster_on_every_host(LabSpec::default()) else {
        return;
    };
    let rate_of = |result: &serde_json::Value| {
        let metrics = result["metrics"].as_array().unwrap();
        metrics
            .iter()
            .find(|m| m["name"] == "mib_per_s")
            .unwrap()
            .clone()
    };

    let (own, out) = mpi_io(&lab, &target, &[], "own");
    let metric = rate_of(&own);
    let device = &metric["device"];
    let ratio = device["read_ratio"].as_f64().expect("the links' bytes");
    let flags = flag_names(&metric);
    assert_eq!(
        flags.contains(&"served_from_cache".to_string()),
        ratio < 0.5,
        "read ratio {ratio}, flags {flags:?}\n{out}"
    );
    assert_eq!(
        device["link_bytes_per_s"], 250_000_000,
        "two shaped links\n{out}"
    );
    eprintln!(
        "own files: {} MiB/s, read ratio {ratio:.2}, {flags:?}",
        metric["value"]
    );

    let (crossed, out) = mpi_io(&lab, &target, &["--cross-host"], "crossed");
    let metric = rate_of(&crossed);
    let ratio = metric["device"]["read_ratio"].as_f64().unwrap();
    assert!(
        ratio >= 0.8,
        "the links carried only {ratio} of the reads\n{out}"
    );
    let flags = flag_names(&metric);
    assert!(
        !flags.contains(&"served_from_cache".to_string())
            && !flags.contains(&"exceeds_device".to_string()),
        "{flags:?}\n{out}"
    );
    let mib_per_s = metric["value"].as_f64().unwrap();
    eprintln!("cross-host: {mib_per_s:.1} MiB/s, read ratio {ratio:.2}, {flags:?}\n{out}");
    assert!(
        mib_per_s * 1048576.0 <= 250e6 * 1.05,
        "{mib_per_s} MiB/s through 2 GbE\n{out}"
    );
    assert!(
        crossed["notes"].to_string().contains("rank 0 on rank 1's"),
        "{}",
        crossed["notes"]
    );
    assert_no_scratch_left(&share.clients[0]);
    close_and_check(lab);
}

/// Client 1 behind a 100 Mbit/s link, each rank reading 24 MiB of the
/// other host's file: client 1's host is named the straggler with its
/// lag, and the stonewall rate and the fast host's own figure are not
/// dragged down to the job's.
#[cfg(feature = "mpi")]
#[test]
fn a_host_behind_a_slow_link_is_named_the_straggler() {
    let Some((lab, share, target)) = gluster_on_every_host(LabSpec::default().rate(1, 100)) else {
        return;
    };
    let args = ["-s", "32m", "--amount", "24m", "--cross-host"];
    let (result, out) = mpi_io_with(&lab, &target, &args, "straggler");
    let index = result["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .position(|m| m["name"] == "mib_per_s")
        .unwrap();
    let scale = &result["scale"];
    let spread = &scale["spread"][index];
    let slow = lab.namespace(Host::Client(1));
    assert_eq!(spread["straggler"]["name"], slow.as_str(), "{out}");
    let share_of_span = spread["straggler"]["share"].as_f64().unwrap();
    assert!(
        share_of_span > 0.5,
        "lag {share_of_span} of the span\n{out}"
    );
    assert!(
        result["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n.as_str())
            .any(|n| n.starts_with("straggler in ")
                && n.contains("mib_per_s")
                && n.contains(&format!(": {slow} (ranks 1) ended"))),
        "{}",
        result["notes"]
    );
    let job = result["metrics"][index]["value"].as_f64().unwrap();
    let stonewall = spread["stonewall_value"].as_f64().unwrap();
    let per_host: Vec<f64> = scale["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["metrics"][index]["value"].as_f64().unwrap())
        .collect();
    eprintln!("job {job:.1} MiB/s, stonewall {stonewall:.1}, per host {per_host:?}\n{out}");
    assert!(stonewall > 3.0 * job, "{out}");
    assert!(per_host[0] > 5.0 * per_host[1], "{per_host:?}\n{out}");
    assert_no_scratch_left(&share.clients[0]);
    close_and_check(lab);
}

/// The issue's combined run: `fsbench run` with io (cross-host reads),
/// meta and tree over two client hosts on GlusterFS through 1 GbE links,
/// one saved result whose every workload has both hosts in its per-host
/// table and sums its ranks' work.
#[cfg(feature = "mpi")]
#[test]
fn a_suite_runs_over_two_hosts_as_one_result() {
    let Some((lab, share, target)) = gluster_on_every_host(LabSpec::default()) else {
        return;
    };
    let suite = lab.dir().join("two-hosts.toml");
    std::fs::write(
        &suite,
        r#"description = "io, meta and tree over two hosts"
repeat = 1

[[workload]]
kind = "io"
label = "seq-read-1m"
args = "-s 96m -b 1m --read 100 --seek 0 --duration 1s --interval 0.5s --warmup 0 --cross-host"

[[workload]]
kind = "meta"
args = "-n 200 --dirs 2"

[[workload]]
kind = "tree"
args = "--dataset photos --scale 0.001 --ops copy,find,read,delete"
"#,
    )
    .unwrap();
    let saved = lab.dir().join("saved");
    let args = [
        "run",
        "--suite",
        suite.to_str().unwrap(),
        "-t",
        &format!("gluster={target}"),
        "--save-dir",
        saved.to_str().unwrap(),
    ];
    let out = mpirun_fsbench(&lab, &args);
    eprintln!("{out}");
    let file = std::fs::read_dir(&saved)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let record = read_json(&file);
    let hosts: Vec<String> = lab.client_hosts().map(|h| lab.namespace(h)).collect();
    let workloads = record["targets"][0]["workloads"].as_array().unwrap();
    let kinds: Vec<&str> = workloads
        .iter()
        .filter_map(|w| w["workload"].as_str())
        .collect();
    assert_eq!(kinds, ["io", "meta", "tree"]);
    for workload in workloads {
        let scale = &workload["scale"];
        let names: Vec<&str> = scale["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|h| h["host"].as_str())
            .collect();
        assert_eq!(names, hosts, "{}", workload["workload"]);
        for (index, metric) in workload["metrics"].as_array().unwrap().iter().enumerate() {
            let by_rank: u64 = scale["per_rank"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["metrics"][index]["samples"].as_u64().unwrap())
                .sum();
            assert_eq!(metric["samples"].as_u64(), Some(by_rank), "{metric}");
        }
    }
    assert!(
        workloads[0]["notes"]
            .to_string()
            .contains("cross-host (IOR -C)")
    );
    assert_no_scratch_left(&share.clients[0]);
    close_and_check(lab);
}

// ---------------------------------------------------------------------------
// The seeds' sync/async question as configurations, from two hosts.

/// A configurations file's `[[config]]` table: `name`, made by `setup`
/// (shell lines run on the server, which also log the setting it made to
/// `seen`), taken down by `teardown`, measured at `path`; `declared`: its
/// `declared_risks` line, if any.
#[cfg(feature = "mpi")]
fn server_config(
    name: &str,
    path: &str,
    setup: &[String],
    teardown: &str,
    declared: &str,
) -> String {
    let toml = |line: &String| serde_json::to_string(line).unwrap();
    let setup: Vec<String> = setup.iter().map(toml).collect();
    format!(
        "[[config]]\nname = \"{name}\"\npath = \"{path}\"\nsetup = [{}]\nteardown = [{}]\n{declared}\n",
        setup.join(", "),
        toml(&teardown.to_string())
    )
}

/// The sync/async question's workload, small: 4 KiB writes for 1 s per
/// rank, as a database's or a mail server's.
#[cfg(feature = "mpi")]
const SYNC_SUITE: &str = r#"description = "the sync/async question: small writes"
repeat = 1

[[workload]]
kind = "io"
label = "write-4k"
args = "-s 2m -b 4k --read 0 --seek 0 --duration 1s --interval 0.5s --warmup 0"
"#;

/// Repetitions of a sync/async comparison: enough for the verdict's test
/// to decide a difference of 1.4x at the spread 2 busy cores give (4 did
/// not, with another comparison running beside it).
#[cfg(feature = "mpi")]
const SYNC_REPEAT: usize = 6;

/// Held by a sync/async comparison while it measures: the async settings
/// are bound by the CPUs (FUSE daemons, servers and ranks on 2 cores), so
/// two comparisons at once would each measure the other.
#[cfg(feature = "mpi")]
fn comparison_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// `mpirun fsbench run --configs --allow-shell` over the lab's client
/// hosts with `configs` (a file's text), [`SYNC_SUITE`] repeated
/// [`SYNC_REPEAT`] times, its scratch directory in the lab; its output and
/// result, after checking that rank 0 left nothing in that directory.
#[cfg(feature = "mpi")]
fn compare_from_every_host(lab: &NetLab, configs: &str) -> (Output, Value) {
    let file = lab.dir().join("configs.toml");
    std::fs::write(&file, configs).unwrap();
    let suite = lab.dir().join("sync.toml");
    std::fs::write(&suite, SYNC_SUITE).unwrap();
    let work = lab.dir().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let json = lab.dir().join("sync.json");
    let repeat = SYNC_REPEAT.to_string();
    let _turn = comparison_lock();
    let out = mpirun_fsbench(
        lab,
        &[
            "run",
            "--configs",
            file.to_str().unwrap(),
            "--allow-shell",
            "--images",
            work.to_str().unwrap(),
            "--suite",
            suite.to_str().unwrap(),
            "--repeat",
            &repeat,
            "--no-save",
            "--json",
            json.to_str().unwrap(),
            "-q",
        ],
    );
    eprintln!("{out}");
    assert_eq!(listing(&work), Vec::<String>::new(), "rank 0's scratch");
    (out, read_json(&json))
}

/// Per target of `record`, named `names` in order: the mean I/O rate of its
/// [`SYNC_REPEAT`] results, each checked to be measured from every client
/// host of `lab`, and its teardown commands, checked to have run.
#[cfg(feature = "mpi")]
fn rates_from_every_host(lab: &NetLab, record: &Value, names: &[&str]) -> Vec<f64> {
    let hosts: Vec<String> = lab.client_hosts().map(|h| lab.namespace(h)).collect();
    let targets = record["targets"].as_array().unwrap();
    let measured: Vec<&str> = targets.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(measured, names);
    let mut rates = Vec::new();
    for target in targets {
        let results = target["workloads"].as_array().unwrap();
        assert_eq!(results.len(), SYNC_REPEAT, "{}", target["name"]);
        for result in results {
            let on: Vec<&str> = result["scale"]["hosts"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|h| h["host"].as_str())
                .collect();
            assert_eq!(on, hosts, "{}: measured from both hosts", target["name"]);
        }
        let rates_of = results
            .iter()
            .map(|r| metric_named(r, "io_rate")["value"].as_f64().unwrap());
        rates.push(rates_of.sum::<f64>() / results.len() as f64);
        let commands = target["built"]["commands"].as_array().unwrap();
        assert!(commands.len() >= 3, "setup and teardown ran: {commands:?}");
    }
    eprintln!("4 KiB writes, IO/s: {names:?} {rates:.0?}");
    rates
}

/// The verdict's sentence on `target` in `out` (its lines unwrapped),
/// after checking it says `target` is not crash-safe for `risk` (the
/// verdict's words, with what the configuration declared) and that a
/// RISK line gives the whole text, starting with `risk_line`.
#[cfg(feature = "mpi")]
fn verdict_with_risk(out: &Output, target: &str, risk: &str, risk_line: &str) -> String {
    let report = unwrapped(&out.stdout);
    let sentence = report
        .split(&format!("→ {target}: "))
        .nth(1)
        .unwrap_or_else(|| panic!("no verdict sentence for {target}\n{out}"));
    assert!(
        sentence.contains(&format!("not crash-safe: {risk}")),
        "{sentence}"
    );
    assert!(
        report.contains(&format!("RISK {target}: {risk_line}")),
        "{out}"
    );
    sentence.to_string()
}

/// The issue's sync/async comparison as a user runs it: `mpirun fsbench run
/// --configs` over both client hosts, Samba's `sync always = yes` against
/// `no`, the setting changed on the server by rank 0's setup commands. One
/// result holds both configurations measured from both hosts; the server's
/// configuration said each setting while it was measured, and the async
/// one was faster (under `yes` smbd fsyncs every write); the verdict names
/// it faster and says what it can lose and where that flag came from; the
/// teardown put the setting back, and nothing is left.
///
/// Only the direction is asserted: the prototype measured 500 new 4 KiB
/// writes in 4.4 s against 0.38 s, but these overwrite a laid-out file
/// (an fsync of an overwrite is cheaper on this machine's disk) from two
/// clients at once (whose fsyncs share ext4's journal commits): 1.5-2x
/// here. The share is on the machine's disk: on the lab's tmpfs an fsync
/// costs nothing.
#[cfg(feature = "mpi")]
#[test]
fn a_server_s_sync_setting_is_compared_from_two_hosts_with_its_risk() {
    if !netlab::available(&[Fs::Smb], true) {
        return;
    }
    let mut lab = NetLab::new(LabSpec::default());
    let Some(disk) = lab.disk_dir("disk") else {
        return;
    };
    let smb = start(&mut lab, Fs::Smb);
    let share = lab.add_smb_share(&smb, "disk", &disk, "sync always = no\n");
    let sentinel = Sentinel::plant(&share.clients[0]);
    let path = lab.same_path(&share.clients).display().to_string();
    let seen = lab.dir().join("seen");
    let config = lab.smb_config().display().to_string();
    // What configs/samba-sync.toml runs through `ssh nas`.
    let set = |value: &str| {
        let sed =
            format!(r"sed -i '/^\[disk\]/,/^\[/ s/^\(sync always =\).*/\1 {value}/' {config}");
        lab.on_server(&format!("{sed} && {}", lab.smb_reload()))
    };
    let log = lab.on_server(&format!(
        "testparm -s --section-name disk --parameter-name 'sync always' {config} >> {}",
        seen.display()
    ));
    let entry = |value: &str, declared: &str| {
        let name = format!("samba-sync-always-{value}");
        server_config(
            &name,
            &path,
            &[set(value), log.clone()],
            &set("no"),
            declared,
        )
    };
    let configs = entry("yes", "")
        + &entry(
            "no",
            "declared_risks = { server_async = \"sync always = no\" }",
        );
    let (out, record) = compare_from_every_host(&lab, &configs);
    let said = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(said.lines().collect::<Vec<_>>(), ["Yes", "No"], "setup");
    let names = ["samba-sync-always-yes", "samba-sync-always-no"];
    let rates = rates_from_every_host(&lab, &record, &names);
    assert!(rates[1] > rates[0], "{rates:?}\n{out}");
    let targets = &record["targets"];
    assert_eq!(targets[0]["built"]["declared_risks"], Value::Null);
    assert_eq!(
        targets[1]["built"]["declared_risks"]["server_async"],
        "sync always = no"
    );
    let sentence = verdict_with_risk(
        &out,
        names[1],
        "server acknowledges writes before its disk has them: a server crash loses them (declared: sync always = no)",
        "the server acknowledges writes before its disk has them",
    );
    let first = sentence.split(';').next().unwrap();
    assert!(first.contains("x faster write-4k"), "{sentence}");
    assert_eq!(lab.smb_parameter("disk", "sync always"), "No", "teardown");
    sentinel.assert_intact();
    assert_no_scratch_left(&share.clients[0]);
    close_and_check(lab);
}

/// The same question on GlusterFS: the volume's write-behind off against
/// on (with flush-behind, the defaults), set on the server by rank 0's
/// setup commands while both clients keep the volume mounted (each takes
/// the new option at its next operation). Both are measured from both
/// hosts, each with the setting it declares; the verdict says what a
/// client crash loses with write-behind, as declared; the teardown
/// resets the option.
///
/// Its speed is not asserted: write-behind hides the round trip to the
/// brick (2.1-2.3x faster when this test ran alone, 2.5-3x for `dd`
/// through one client), but beside the rest of the suite on 2 cores the
/// CPUs bound both settings alike in some runs (0.98x to 5.5x were seen).
#[cfg(feature = "mpi")]
#[test]
fn a_volume_s_write_behind_is_compared_from_two_hosts_with_its_risk() {
    let Some((lab, share, path)) = gluster_on_every_host(LabSpec::default()) else {
        return;
    };
    let sentinel = Sentinel::plant(&share.clients[0]);
    let seen = lab.dir().join("seen");
    let option = "performance.write-behind";
    // What configs/gluster-write-behind.toml runs through `ssh nas`.
    let set = |value: &str| lab.gluster_line(&format!("volume set fsbench {option} {value}"));
    let log = format!(
        "{} | grep '^{option} ' >> {}",
        lab.gluster_line(&format!("volume get fsbench {option}")),
        seen.display()
    );
    let reset = lab.gluster_line(&format!("volume reset fsbench {option}"));
    let declared = "declared_risks = { client_write_behind = \"performance.write-behind on\" }";
    let configs = server_config(
        "gluster-write-behind-off",
        &path,
        &[set("off"), log.clone()],
        &reset,
        "",
    ) + &server_config(
        "gluster-write-behind-on",
        &path,
        &[set("on"), log],
        &reset,
        declared,
    );
    let (out, record) = compare_from_every_host(&lab, &configs);
    let said = std::fs::read_to_string(&seen).unwrap();
    let values: Vec<&str> = said
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(values, ["off", "on"], "setup");
    let names = ["gluster-write-behind-off", "gluster-write-behind-on"];
    rates_from_every_host(&lab, &record, &names);
    verdict_with_risk(
        &out,
        names[1],
        "client acknowledges writes before the server has them: a client crash loses them (declared: performance.write-behind on)",
        "the client acknowledges writes before the server has them",
    );
    assert_eq!(lab.gluster_option(option), "on", "teardown: the default");
    sentinel.assert_intact();
    assert_no_scratch_left(&share.clients[0]);
    close_and_check(lab);
}
