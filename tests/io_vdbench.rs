//! `fsbench io --vdbench PARMFILE`: a vdbench parameter file runs as is
//! (its lun becomes a file in the scratch directory under the lun's
//! directory), for-loops give one run each with vdbench's start line, and
//! bad files get one line naming the problem and write nothing.
mod common;

use common::{Sentinel, TmpfsMount, assert_no_scratch_left, path_arg as arg, read_json, run};

/// A parameter file outside the mount, with `MNT` replaced by the mount.
fn parmfile(mnt: &TmpfsMount, body: &str) -> tempfile::NamedTempFile {
    common::file_naming_mount(mnt, "", body)
}

#[test]
fn a_parameter_file_runs_its_loops_on_the_luns_directory() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let parm = parmfile(
        &mnt,
        "messagescan=no\n\
         sd=sd1,lun=MNT/vdb.dat,size=8m\n\
         wd=wd1,sd=sd1,xfersize=4k,rdpct=70,seekpct=50\n\
         rd=rd1,wd=wd1,iorate=max,elapsed=10,interval=1,forthreads=(1,2)\n\
         rd=rd2,wd=wd1,iorate=max,elapsed=10,interval=1,openflags=o_direct,forxfersize=(8k,16k)\n",
    );
    let json = mnt.join("r.json");
    let out = run(&[
        "io",
        "--vdbench",
        arg(&parm),
        "--duration",
        "0.3s",
        "--interval",
        "0.1s",
        "--json",
        json.to_str().unwrap(),
    ]);
    out.assert_success().assert_no_panic();
    let starts: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("Starting RD="))
        .collect();
    assert_eq!(
        starts,
        [
            "Starting RD=rd1; I/O rate: Uncontrolled MAX; elapsed=0.3; For loops: threads=1",
            "Starting RD=rd1; I/O rate: Uncontrolled MAX; elapsed=0.3; For loops: threads=2",
            "Starting RD=rd2; I/O rate: Uncontrolled MAX; elapsed=0.3; For loops: xfersize=8k",
            "Starting RD=rd2; I/O rate: Uncontrolled MAX; elapsed=0.3; For loops: xfersize=16k",
        ],
        "{out}"
    );
    assert_eq!(out.stdout.matches(" avg_2-3 ").count(), 4, "{out}");
    let result = read_json(&json);
    let target = &result["targets"][0];
    assert_eq!(target["path"], mnt.arg());
    let jobs = target["workloads"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    assert_eq!(jobs[1]["params"]["job"]["threads"], 2);
    assert_eq!(jobs[3]["params"]["job"]["direct"], true);
    assert_eq!(jobs[3]["params"]["file"]["name"], "vdb.dat");
    sentinel.assert_intact();
    std::fs::remove_file(json).unwrap();
    assert_no_scratch_left(mnt.path());
}

#[test]
fn validate_yes_turns_on_verification() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let parm = parmfile(
        &mnt,
        "validate=yes\nsd=sd1,lun=MNT/v.dat,size=1m,threads=2\nwd=wd1,sd=sd1,rdpct=50\n\
         rd=rd1,wd=wd1,iorate=max,elapsed=1,interval=1\n",
    );
    let out = run(&["io", "--vdbench", arg(&parm), "-d", "0.2s", "-i", "0.1s"]);
    out.assert_success();
    assert!(out.stdout.contains("threads=2 page cache verify"), "{out}");
}

#[test]
fn bad_parameter_files_name_the_problem_and_write_nothing() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let cases = [
        (
            "sd=sd1,lun=MNT/f,size=1m,hitarea=1m\n",
            "'hitarea' is a vdbench parameter fsbench does not support",
        ),
        (
            "sd=sd1,lun=MNT/f,size=1m\nwd=wd1,sd=sd1,xfersize=4k,foo=1\n",
            "unknown parameter 'foo'",
        ),
        (
            "sd=sd1,lun=MNT/f,size=1m\nwd=wd1,sd=sd1\nrd=rd1,wd=wd2,iorate=max\n",
            "wd=wd2 is not defined",
        ),
        (
            "sd=sd1,lun=MNT/f,size=1m\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1\n",
            "iorate= is missing",
        ),
        (
            "sd=sd1,lun=MNT/f,size=1m\nwd=wd1,sd=sd1,xfersize=1000\nrd=rd1,wd=wd1,iorate=max\n",
            "multiple of 512",
        ),
    ];
    for (body, needle) in cases {
        let parm = parmfile(&mnt, body);
        let out = run(&["io", "--vdbench", arg(&parm)]);
        out.assert_error(2, &[needle]);
        assert_eq!(std::fs::read_dir(mnt.path()).unwrap().count(), 0, "{out}");
    }
    run(&["io", "--vdbench", "/nonexistent/parm"]).assert_error(2, &["cannot read parameter file"]);
    let out = run(&["io", "--vdbench", "/tmp/x", "--read", "50"]);
    out.assert_code(2).assert_no_panic();
}
