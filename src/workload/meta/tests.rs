use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;
use crate::error::UsageError;
use crate::storage::marker::MARKER;
use crate::storage::scratch::Scratch;
use crate::workload::{Location, Progress};

fn config(files: u64, dirs: u32, threads: u32, ops: &[MetaOp]) -> MetaConfig {
    MetaConfig {
        files,
        dirs,
        file_size: 5000,
        threads,
        ops: ops.to_vec(),
        seed: 7,
        random_order: false,
    }
}

/// Runs `body` with the context the driver gives a workload alone in
/// `scratch` (its target probed), quietly.
fn with_context<R>(
    scratch: &Scratch,
    repetition: u32,
    body: impl FnOnce(&RunContext<'_>) -> R,
) -> R {
    let progress = Progress::new(true);
    let env = crate::storage::env::probe_target(scratch.path()).ok();
    let locations = [Location {
        name: "target",
        scratch,
    }];
    let ctx = RunContext {
        scratch,
        locations: &locations,
        repetition,
        step: 0,
        progress: &progress,
        env: env.as_ref(),
        cold: Default::default(),
    };
    body(&ctx)
}

/// Runs one repetition in a fresh scratch directory in `target`, and
/// checks that it leaves the scratch directory as it found it (the marker
/// alone) and a file beside it untouched.
fn run_in(target: &Path, config: MetaConfig) -> WorkloadResult {
    let sentinel = target.join("sentinel");
    std::fs::write(&sentinel, b"keep me").unwrap();
    let scratch = Scratch::create(target, "meta-test", false).unwrap();
    let result = with_context(&scratch, 3, |ctx| {
        Meta::new(config).unwrap().run(ctx).unwrap()
    });
    let left: Vec<_> = std::fs::read_dir(scratch.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, [MARKER], "only the marker is left");
    drop(scratch);
    assert_eq!(std::fs::read(&sentinel).unwrap(), b"keep me");
    result
}

fn run(config: MetaConfig) -> WorkloadResult {
    let target = tempfile::tempdir().unwrap();
    run_in(target.path(), config)
}

/// Whether the run skipped the xattr phases, checked to be consistent:
/// the note and no xattr metric, or a metric for each of `ops`' xattr
/// operations and no note.
fn xattrs_skipped(result: &WorkloadResult, ops: &[MetaOp]) -> bool {
    let note = result.notes.iter().any(|n| {
        n.starts_with("setxattr/getxattr skipped: ")
            && n.ends_with(" does not support user extended attributes")
    });
    for op in [MetaOp::Setxattr, MetaOp::Getxattr] {
        let measured = result.metric(op.metric_name()).is_some();
        assert_eq!(measured, !note && ops.contains(&op), "{result:?}");
    }
    note
}

/// Every timed op has a sound metric with the expected count.
fn assert_counts(result: &WorkloadResult, ops: &[MetaOp], files: u64, entries: u64) {
    let skipped = xattrs_skipped(result, ops);
    for &op in ops {
        if op.is_xattr() && skipped {
            continue;
        }
        let metric = result
            .metric(op.metric_name())
            .unwrap_or_else(|| panic!("{} missing: {result:?}", op.metric_name()));
        let expected = match op {
            MetaOp::ReaddirStat => entries,
            _ => files,
        };
        assert_eq!(metric.samples, expected, "{}", op.name());
        assert_eq!(metric.unit, "ops/s");
        assert!(metric.value.is_finite() && metric.value > 0.0, "{metric:?}");
        let latency = metric.latency.as_ref().unwrap();
        assert_eq!(latency.count, expected, "{}", op.name());
        assert!(latency.p50_ns <= latency.p99_ns, "{latency:?}");
    }
    let timed = ops.iter().filter(|op| !(skipped && op.is_xattr())).count();
    assert_eq!(result.metrics.len(), timed, "{result:?}");
}

#[test]
fn every_operation_is_timed_once_per_file() {
    let result = run(config(50, 4, 1, &MetaOp::ALL));
    // readdir_stat sees each file, its symlink and its hard link.
    assert_counts(&result, &MetaOp::ALL, 50, 150);
    assert_eq!(result.workload, "meta");
    assert_eq!(result.repetition, 3);
    assert_eq!(result.params["files"], 50);
    assert_eq!(result.params["ops"].as_array().unwrap().len(), 10);
    assert!(
        !result.notes.iter().any(|n| n.contains("not timed")),
        "{:?}",
        result.notes
    );
    let last_name = "unlink times removing each file's last name";
    assert!(result.notes.iter().any(|n| n.starts_with(last_name)));
}

#[test]
fn threads_own_directories_and_counts_stay_exact() {
    let ops = [
        MetaOp::Create,
        MetaOp::Rename,
        MetaOp::Link,
        MetaOp::ReaddirStat,
    ];
    let config = MetaConfig {
        random_order: true,
        ..config(101, 2, 3, &ops)
    };
    let result = run(config);
    assert_counts(&result, &ops, 101, 202);
    assert_eq!(result.params["dirs"], 3);
    assert!(
        result.notes[0].contains("spread over 3 directories, not 2"),
        "{:?}",
        result.notes
    );
}

#[test]
fn create_and_unlink_run_untimed_when_left_out() {
    let ops = [MetaOp::Getxattr, MetaOp::Truncate];
    let result = run(config(20, 1, 1, &ops));
    assert_counts(&result, &ops, 20, 0);
    for op in ["create", "unlink"] {
        let note = format!("{op} was not timed");
        assert!(
            result.notes.iter().any(|n| n.starts_with(&note)),
            "{:?}",
            result.notes
        );
    }
    let setxattr_untimed = result
        .notes
        .iter()
        .any(|n| n.starts_with("setxattr was not timed"));
    assert_eq!(
        setxattr_untimed,
        !xattrs_skipped(&result, &ops),
        "{:?}",
        result.notes
    );
}

#[test]
fn each_thread_has_its_own_files_in_every_order() {
    let meta_config = MetaConfig {
        random_order: true,
        ..config(23, 5, 2, &[MetaOp::Create])
    };
    let target = tempfile::tempdir().unwrap();
    let scratch = Scratch::create(target.path(), "order", false).unwrap();
    let rep = Repetition::create(&meta_config, &scratch, 0).unwrap();
    let (a, b) = (rep.files_of(0, 1), rep.files_of(1, 1));
    assert!(a.iter().all(|n| [0, 2, 4].contains(&(n % 5))), "{a:?}");
    assert!(b.iter().all(|n| [1, 3].contains(&(n % 5))), "{b:?}");
    let mut all: Vec<u32> = a.iter().chain(&b).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..23).collect::<Vec<_>>());
    assert_ne!(a, rep.files_of(0, 2), "another phase, another order");
    assert_eq!(a, rep.files_of(0, 1), "the seed decides");
    rep.remove().unwrap();
}

#[test]
fn a_failing_operation_names_itself_and_its_file() {
    let config = MetaConfig {
        file_size: 0,
        ..config(2000, 2, 2, &[MetaOp::Symlink])
    };
    let target = tempfile::tempdir().unwrap();
    let scratch = Scratch::create(target.path(), "fail", false).unwrap();
    let mut rep = Repetition::create(&config, &scratch, 0).unwrap();
    let e = with_context(&scratch, 0, |ctx| {
        rep.untimed(ctx, MetaOp::Create).unwrap();
        rep.made.after(MetaOp::Create);
        // File 1 is the first of thread 1 (in d1): its symlink's name is
        // taken, while thread 0 still has files to go.
        std::fs::create_dir(scratch.path().join("rep-0/d1/s1")).unwrap();
        format!("{:#}", rep.untimed(ctx, MetaOp::Symlink).unwrap_err())
    });
    assert!(e.starts_with("symlink /"), "{e}");
    assert!(e.contains("/rep-0/d1/f1 -> s1 failed: File exists"), "{e}");
}

#[test]
fn bad_values_are_one_line_usage_errors_naming_them() {
    let good = config(10, 2, 2, &[MetaOp::Create]);
    assert!(good.check().is_ok());
    let cases = [
        (
            MetaConfig {
                files: 0,
                ..good.clone()
            },
            "0 files",
        ),
        (
            MetaConfig {
                files: MAX_FILES + 1,
                ..good.clone()
            },
            "100000001 files",
        ),
        (
            MetaConfig {
                dirs: 0,
                ..good.clone()
            },
            "0 directories",
        ),
        (
            MetaConfig {
                dirs: 11,
                ..good.clone()
            },
            "11 directories",
        ),
        (
            MetaConfig {
                threads: 0,
                ..good.clone()
            },
            "0 threads",
        ),
        (
            MetaConfig {
                threads: 1025,
                files: 2000,
                ..good.clone()
            },
            "1025 threads",
        ),
        (
            MetaConfig {
                threads: 11,
                ..good.clone()
            },
            "11 threads for 10 files",
        ),
        (
            MetaConfig {
                file_size: MAX_FILE_SIZE + 1,
                ..good.clone()
            },
            "1073741825 bytes",
        ),
        (
            MetaConfig {
                ops: Vec::new(),
                ..good.clone()
            },
            "create,rename",
        ),
    ];
    for (config, names) in cases {
        let e = Meta::new(config).err().expect(names);
        assert!(e.is::<UsageError>(), "{e:#}");
        let line = format!("{e:#}");
        assert!(line.contains(names) && !line.contains('\n'), "{line}");
    }
}

#[test]
fn names_parse_back_and_metrics_follow_them() {
    for op in MetaOp::ALL {
        assert_eq!(MetaOp::parse(op.name()), Some(op));
        assert_eq!(op.metric_name(), format!("{}_ops_s", op.name()));
    }
    assert_eq!(MetaOp::parse("stat"), None);
    assert_eq!(MetaOp::names().split(',').count(), MetaOp::ALL.len());
}

#[test]
fn the_plan_counts_blocks_and_inodes() {
    let meta = Meta::new(MetaConfig {
        file_size: 5000,
        ..config(10, 3, 4, &[MetaOp::Symlink])
    })
    .unwrap();
    assert_eq!(meta.planned_bytes(), 10 * 8192);
    // 10 files, 10 symlinks, 4 directories (one per thread), rep-<n>.
    assert_eq!(meta.planned_files(), 25);
}

/// A file system mounted for the test, unmounted when dropped.
struct Mount(PathBuf);

impl Mount {
    /// None when not root, or when the mount fails.
    fn new(fs_type: &str, dir: &Path) -> Option<Mount> {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: mounting a {fs_type} needs root");
            return None;
        }
        let mounted = Command::new("mount")
            .args(["-t", fs_type, "fsbench-meta-test"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("skipped: cannot mount a {fs_type} here");
        }
        mounted.then(|| Mount(dir.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Runs the xattr operations on a fresh `fs_type`; None when it cannot
/// be mounted.
fn xattrs_on(fs_type: &str) -> Option<WorkloadResult> {
    let dir = tempfile::tempdir().unwrap();
    let mount = Mount::new(fs_type, dir.path())?;
    let ops = [MetaOp::Setxattr, MetaOp::Getxattr];
    let result = run_in(&mount.0, config(30, 2, 2, &ops));
    assert_counts(&result, &ops, 30, 0);
    Some(result)
}

fn names_fs_in_a_note(result: &WorkloadResult, fs_type: &str) -> bool {
    let note = format!("skipped: {fs_type} does not support");
    result.notes.iter().any(|n| n.contains(&note))
}

#[test]
fn on_tmpfs_xattrs_work_or_are_skipped_with_a_note() {
    // tmpfs takes user xattrs since Linux 6.6.
    if let Some(result) = xattrs_on("tmpfs") {
        let skipped = xattrs_skipped(&result, &[MetaOp::Setxattr, MetaOp::Getxattr]);
        assert_eq!(skipped, names_fs_in_a_note(&result, "tmpfs"), "{result:?}");
    }
}

#[test]
fn on_ramfs_xattrs_are_skipped_with_a_note() {
    if let Some(result) = xattrs_on("ramfs") {
        assert!(names_fs_in_a_note(&result, "ramfs"), "{result:?}");
        assert!(result.metrics.is_empty(), "{result:?}");
    }
}
