//! fio job files: `[global]` and `[job]` sections, the options that cover
//! nearly all real files, `include` and `${VAR}`, made into fsbench io
//! jobs (`plan`), and a linter that says what a file really measures.
pub mod jobfile;
mod lexer;
pub mod lint;
mod names;
pub mod plan;
pub mod printout;
pub mod report;
mod values;

use std::path::Path;

use crate::error::usage;
use crate::workload::pattern::Plan;
use lint::Finding;
pub use plan::Overrides;

/// The job files' plan (files in order, each job named as in its file),
/// the directory their `directory=` gives, the linter's findings, and what
/// a run of them needs to be told as fio would.
pub struct Loaded {
    pub plan: Plan,
    pub directory: Option<String>,
    pub findings: Vec<Finding>,
    pub known: Known,
}

/// What the job files say of their jobs, kept for after the run: fio's
/// reports, and the linter's findings from what the run measured.
#[derive(Clone, Default)]
pub struct Known {
    pub described: report::Described,
    pub jobs: Vec<jobfile::FioJob>,
}

/// Reads `paths` in order into one plan; each job carries its own
/// findings as notes, so the result shows them.
pub fn load(paths: &[impl AsRef<Path>], o: &Overrides, ram_bytes: u64) -> anyhow::Result<Loaded> {
    let mut all = Loaded {
        plan: Plan {
            files: Vec::new(),
            jobs: Vec::new(),
        },
        directory: None,
        findings: Vec::new(),
        known: Known::default(),
    };
    // fio numbers its threads (every clone of every job) from 1 across
    // the job files of a run.
    let mut threads = 1;
    for path in paths {
        let jobs = jobfile::read(path.as_ref())?;
        let findings = lint::lint(&jobs, ram_bytes);
        let plan::Planned {
            mut plan,
            directory,
            origins,
        } = plan::plan(&jobs, o, threads)?;
        threads += jobs.iter().map(|j| u64::from(j.numjobs)).sum::<u64>();
        // Groups count on across files, as fio's groupid does across a
        // run: the next file's first group never runs with this one's last.
        let groups_before = all
            .plan
            .jobs
            .last()
            .and_then(|j| j.group)
            .map_or(0, |g| g + 1);
        for job in &mut plan.jobs {
            job.move_files(all.plan.files.len());
            job.group = job.group.map(|g| g + groups_before);
            let own = findings.iter().filter(|f| f.job == job.name);
            job.notes.extend(own.map(|f| format!("fio lint: {f}")));
        }
        check_directory(&mut all.directory, directory)?;
        if let Some(twice) = plan
            .files
            .iter()
            .find(|f| all.plan.files.iter().any(|g| g.name == f.name))
        {
            return usage(format!(
                "{}: the file {} is also used by an earlier job file; give each its own filename=",
                path.as_ref().display(),
                twice.name
            ));
        }
        all.plan.files.extend(plan.files);
        all.plan.jobs.extend(plan.jobs);
        all.findings.extend(findings);
        all.known.described.add(&jobs, &origins);
        all.known.jobs.extend(jobs);
    }
    Ok(all)
}

/// fsbench runs on one target directory.
fn check_directory(known: &mut Option<String>, new: Option<String>) -> anyhow::Result<()> {
    match (known.as_ref(), new) {
        (Some(first), Some(other)) if *first != other => usage(format!(
            "directory={other} and directory={first}: fsbench runs the job files on one target directory"
        )),
        (None, Some(other)) => {
            *known = Some(other);
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::workload::pattern::{Engine, Layout, Seek, Stop, SyncFlag, Warmup, XferSize};

    const KUBESTR: &str = "\
[global]
randrepeat=0
verify=0
ioengine=libaio
direct=1
gtod_reduce=1
[job1]
name=read_iops
bs=4K
iodepth=64
size=2G
readwrite=randread
time_based
ramp_time=2s
runtime=15s
[job2]
name=write_bw
bs=128K
iodepth=64
size=2G
readwrite=write
time_based
ramp_time=2s
runtime=15s
";

    fn load_text(text: &str) -> anyhow::Result<Loaded> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jobs.fio");
        std::fs::write(&path, text).unwrap();
        let o = Overrides {
            seed: None,
            clock_seed: 7,
            verify: false,
        };
        load(&[path], &o, 8 << 30)
    }

    fn error(text: &str) -> String {
        match load_text(text) {
            Ok(l) => panic!("accepted: {:?}", l.plan),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn kubestr_jobs_inherit_global_and_are_linted() {
        let loaded = load_text(KUBESTR).unwrap();
        let [read, write] = &loaded.plan.jobs[..] else {
            panic!("{:?}", loaded.plan.jobs)
        };
        assert_eq!(read.name, "read_iops");
        assert_eq!(
            (read.engine, read.queue_depth, read.direct),
            (Engine::IoUring, 64, true)
        );
        assert_eq!((read.read_pct, read.seek), (100.0, Seek::Percent(100.0)));
        assert_eq!(read.stop, Stop::Duration(Duration::from_secs(15)));
        assert_eq!(read.warmup, Warmup::Time(Duration::from_secs(2)));
        assert_eq!(read.seed, 7, "randrepeat=0: a fresh seed");
        assert_eq!((write.read_pct, write.seek), (0.0, Seek::Percent(0.0)));
        assert_eq!(write.xfer, XferSize::Fixed(128 << 10));
        assert_eq!(loaded.plan.files.len(), 2);
        assert_eq!(loaded.plan.files[0].name, "read_iops.0.0");
        assert_eq!(loaded.plan.files[1].size, 2 << 30);
        // readwrite= is fio's rw, and fio's JSON says so.
        let options = &loaded.known.described.jobs[0].options;
        assert!(
            options.contains(&("rw".into(), "randread".into())),
            "{options:?}"
        );
        assert!(!options.iter().any(|(key, _)| key == "readwrite"));
        let keys: Vec<(&str, &str)> = loaded
            .findings
            .iter()
            .map(|f| (f.job.as_str(), f.key))
            .collect();
        assert_eq!(
            keys,
            [
                ("read_iops", "gtod_reduce"),
                ("write_bw", "stonewall"),
                ("write_bw", "gtod_reduce")
            ]
        );
        let merged: Vec<(String, &str)> = lint::merged(&loaded.findings)
            .into_iter()
            .map(|f| (f.job, f.key))
            .collect();
        assert_eq!(
            merged,
            [
                ("read_iops, write_bw".to_string(), "gtod_reduce"),
                ("write_bw".to_string(), "stonewall")
            ]
        );
        assert!(
            loaded.findings[0].at.ends_with("jobs.fio:6"),
            "{}",
            loaded.findings[0]
        );
        assert!(
            write
                .notes
                .iter()
                .any(|n| n.contains("libaio ran on io_uring"))
        );
        assert!(
            write
                .notes
                .iter()
                .any(|n| n.contains("fio group 0: ran at once with read_iops"))
        );
        assert_eq!((read.group, write.group), (Some(0), Some(0)));
        assert!(write.notes.iter().any(|n| n.starts_with("fio lint: ")));
    }

    #[test]
    fn size_bound_jobs_move_size_per_clone_and_loop() {
        let loaded = load_text(
            "[global]\nsize=4m\nstonewall\n[w]\nrw=write\nfdatasync=1\nnumjobs=2\nloops=3\n\
             [r]\nrw=randrw\nrwmixwrite=30\nbssplit=4k/50:64k/\nrandseed=9\nfsync=4\nsync=dsync\n",
        )
        .unwrap();
        let [w0, w1, r] = &loaded.plan.jobs[..] else {
            panic!("{:?}", loaded.plan.jobs)
        };
        assert_eq!(w0.stop, Stop::Amount(3 * (4 << 20)), "per clone");
        assert_eq!(
            (w0.threads, w0.fdatasync_every, w0.end_fsync),
            (1, 1, false)
        );
        assert_eq!(
            (w0.label(), w1.label()),
            ("w clone=0".into(), "w clone=1".into())
        );
        assert_eq!(
            (w0.file, w1.file, w0.group, w1.group),
            (0, 1, Some(0), Some(0))
        );
        let names: Vec<&str> = loaded.plan.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["w.0.0", "w.1.0", "r.0.0"], "$jobnum is the clone's");
        assert_eq!(w0.warmup, Warmup::Time(Duration::ZERO));
        assert_eq!(w0.seed, 0xb189_9bed, "randrepeat=1: fio's fixed seed");
        assert_eq!((r.read_pct, r.seed, r.fdatasync_every), (70.0, 9, 4));
        assert_eq!(r.xfer, XferSize::Mix(vec![(4096, 50.0), (65536, 50.0)]));
        assert_eq!(r.sync, SyncFlag::Dsync);
        assert!(loaded.findings.iter().all(|f| f.key != "stonewall"));
        let options: Vec<usize> = loaded
            .known
            .described
            .jobs
            .iter()
            .map(|j| j.options.len())
            .collect();
        assert_eq!(options, [4, 4, 6], "each clone has its fio job's options");
    }

    #[test]
    fn group_reporting_clones_are_one_job_on_their_files() {
        let loaded = load_text(
            "[global]\nsize=1m\nnumjobs=3\ngroup_reporting\n[own]\n[shared]\nstonewall\nfilename=f\n",
        )
        .unwrap();
        let [own, shared] = &loaded.plan.jobs[..] else {
            panic!("{:?}", loaded.plan.jobs)
        };
        assert_eq!((own.clone_files.as_slice(), own.file), (&[0, 1, 2][..], 0));
        assert_eq!(shared.clone_files, [3, 3, 3]);
        assert_eq!(
            own.copies().iter().map(|c| c.file).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert!(own.copies().iter().all(|c| c.clone_files.is_empty()));
        assert_eq!(loaded.plan.files.len(), 4);
        assert!(own.notes.iter().any(|n| n.contains("reported as one")));
    }

    #[test]
    fn groups_count_on_across_files() {
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<_> = ["a", "b"]
            .iter()
            .map(|name| {
                let path = dir.path().join(format!("{name}.fio"));
                std::fs::write(&path, format!("[{name}1]\nsize=1m\n[{name}2]\nsize=1m\n")).unwrap();
                path
            })
            .collect();
        let loaded = load(&paths, &Overrides::default(), 8 << 30).unwrap();
        let groups: Vec<Option<u32>> = loaded.plan.jobs.iter().map(|j| j.group).collect();
        assert_eq!(groups, [Some(0), Some(0), Some(1), Some(1)]);
    }

    #[test]
    fn a_shared_filename_is_one_file() {
        let loaded = load_text(
            "[global]\nfilename=data\ndirectory=/mnt/x\n[a]\nsize=1m\n[b]\nsize=2m\nrw=randread\n",
        )
        .unwrap();
        assert_eq!(loaded.plan.files.len(), 1);
        assert_eq!(loaded.plan.files[0].size, 2 << 20);
        assert_eq!(loaded.directory.as_deref(), Some("/mnt/x"));
    }

    #[test]
    fn bad_files_are_one_line_naming_file_line_and_key() {
        let cases = [
            (
                "[j]\nrw=read:4k\nsize=1m\n",
                "jobs.fio:2: rw: 'read:4k': fsbench cannot leave holes",
            ),
            ("[j]\nioengine=mmap\n", "jobs.fio:2: ioengine: 'mmap'"),
            ("[j]\nbogus=1\n", "jobs.fio:2: bogus: not a fio option"),
            ("[j]\nbs=4k,8k\n", "separate read and write block sizes"),
            ("[j]\nrw=trim\n", "does not trim"),
            ("[j]\nnrfiles=4\n", "one file"),
            ("[j]\nfilename=/dev/sdb\n", "plain file name"),
            ("[j]\nrw=write\n", "size= is needed"),
            ("[j]\nsize=1m\ntime_based\n", "runtime= is needed"),
            (
                "[j]\nsize=1m\nrate=1m,2m\n",
                "separate read and write rates",
            ),
            ("[j]\nsize=1x\n", "jobs.fio:2: size: '1x' is not a size"),
            (
                "[j]\nsize=1m\nbs=2300\ndirect=1\n",
                "jobs.fio:3: bs: block size 2300 must be a positive multiple of 512 bytes with direct=1",
            ),
            ("[global]\nsize=1m\n", "no [job] section"),
            (
                "[j]\nfilename_format=$jobname.$clientuid\n",
                "$jobname, $jobnum and $filenum",
            ),
            ("[j]\nrandseed=x\n", "'x' is not a whole number"),
            ("[j]\ndirect\nruntime\n", "runtime: needs a value"),
        ];
        for (text, needle) in cases {
            let e = error(text);
            assert!(e.contains(needle) && !e.contains('\n'), "{text:?}: {e}");
        }
    }

    #[test]
    fn the_etcd_check_writes_its_odd_blocks_buffered() {
        let loaded =
            load_text("[etcd]\nrw=write\nioengine=sync\nfdatasync=1\nbs=2300\nsize=22m\n").unwrap();
        let job = &loaded.plan.jobs[0];
        assert_eq!(job.xfer, XferSize::Fixed(2300));
        assert!(!job.direct);
        assert_eq!(job.fdatasync_every, 1);
        assert_eq!(loaded.plan.files[0].size, 22 << 20);
    }

    #[test]
    fn files_are_made_as_fio_makes_them() {
        let layouts = |text: &str| -> Vec<Layout> {
            let loaded = load_text(text).unwrap();
            loaded.plan.files.iter().map(|f| f.layout).collect()
        };
        let one = |options: &str| layouts(&format!("[j]\nsize=1m\n{options}"))[0];
        assert_eq!(one("rw=write\n"), Layout::Allocated, "fallocate=native");
        assert_eq!(one("rw=write\nfallocate=none\n"), Layout::Sparse);
        assert_eq!(one("rw=randwrite\noverwrite=1\n"), Layout::Written);
        assert_eq!(one("rw=randrw\n"), Layout::Written, "it reads");
        assert_eq!(one("rw=write\nverify=crc32c\n"), Layout::Written);
        // A file one job writes and the next reads is written whole.
        let shared = "[w]\nsize=1m\nrw=write\nfilename=f\n[r]\nstonewall\nsize=1m\nfilename=f\n";
        assert_eq!(layouts(shared), [Layout::Written]);
        let e = error("[j]\nsize=1m\nfallocate=sometimes\n");
        assert!(e.contains("jobs.fio:3: fallocate: 'sometimes'"), "{e}");
    }

    #[test]
    fn the_linter_finds_each_mistake() {
        let loaded = load_text(
            "[a]\nsize=1m\niodepth=16\ndisable_lat=1\ntime_based\nruntime=3\n[b]\nstonewall\nsize=1m\nrw=randwrite\nruntime=2\n",
        )
        .unwrap();
        let keys: Vec<&str> = loaded.findings.iter().map(|f| f.key).collect();
        assert_eq!(
            keys,
            [
                "iodepth",
                "direct",
                "disable_lat",
                "time_based",
                "direct",
                "runtime"
            ]
        );
        let line = loaded.findings[0].to_string();
        assert!(
            line.contains("jobs.fio:3: [a] iodepth: iodepth=16 with a synchronous engine"),
            "{line}"
        );
        assert!(line.contains("; instead: ioengine=io_uring"), "{line}");
    }
}
