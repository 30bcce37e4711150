//! Bad input never panics and never writes: usage errors exit 2, runs that
//! cannot happen exit 1, each with one line on stderr starting
//! `fsbench: error:` (clap's own parse errors may span several lines, but
//! still exit 2 without a panic).
mod common;

use std::os::unix::fs::PermissionsExt;

use common::{TmpfsMount, bonnie_args, listing, quick_bonnie_args, run};

/// Runs `fsbench bonnie -d MNT ARGS` on a fresh tmpfs mounted with
/// `options` and checks the exit code, the one-line error, and that the
/// mount is still empty.
fn bonnie_error_on(options: &str, args: &[&str], code: i32, needles: &[&str]) {
    let Some(mnt) = TmpfsMount::with_options(options) else {
        return;
    };
    let out = run(&bonnie_args(&mnt.arg(), args));
    out.assert_error(code, needles);
    assert_eq!(out.stdout, "", "nothing on stdout\n{out}");
    assert!(
        listing(mnt.path()).is_empty(),
        "bad input wrote to the target\n{out}"
    );
}

/// A clap-level parse error: exit 2, a message, no panic, no output.
fn parse_error(args: &[&str]) {
    let out = run(args);
    out.assert_code(2).assert_no_panic();
    assert!(!out.stderr.trim().is_empty(), "{out}");
    assert_eq!(out.stdout, "", "{out}");
}

/// The table of bad `bonnie` flags: one `#[test]` per row, named by it,
/// that checks each of its cases with [`bonnie_error_on`]. A case is
/// `[ARGS] => CODE [NEEDLES]` (the error mentions every needle); a row runs
/// on a 64 MiB tmpfs unless `on "OPTIONS"` follows its name.
macro_rules! bad_bonnie_flags {
    (@options) => { "size=64m" };
    (@options $options:literal) => { $options };
    ($(
        $(#[$attr:meta])*
        $name:ident $(on $options:literal)?:
            $([$($arg:expr),*] => $code:literal [$($needle:expr),*]),+;
    )*) => {$(
        $(#[$attr])*
        #[test]
        fn $name() {
            let options = bad_bonnie_flags!(@options $($options)?);
            $(bonnie_error_on(options, &[$($arg),*], $code, &[$($needle),*]);)+
        }
    )*};
}

bad_bonnie_flags! {
    size_not_a_number: ["-s", "banana"] => 2 ["-s", "banana"];
    size_not_whole_mib: ["-s", "1.5"] => 2 ["-s"];
    size_too_large_to_represent: ["-s", "99999999999999999999t"] => 2 ["too large"];
    size_spec_with_five_fields: ["-s", "1:2:3:4:5"] => 2 ["-s"];
    chunk_not_a_power_of_two: ["-s", "1g:1000"] => 2 ["power of two"];
    chunk_too_small_and_too_large:
        ["-s", "1:128"] => 2 ["chunk"],
        ["-s", "1:2m"] => 2 ["chunk"];
    zero_seeks_or_seekers:
        ["-s", "1:8k:0"] => 2 ["seeks"],
        ["-s", "1:8k:8:0"] => 2 ["seekers"],
        ["-s", "1:8k:8:2000"] => 2 ["seekers"];
    file_spec_with_six_fields: ["-n", "1:2:3:4:5:6"] => 2 ["-n"];
    file_max_below_min: ["-n", "10:5:100"] => 2 ["below min"];
    file_count_not_a_number: ["-n", "lots"] => 2 ["-n"];
    zero_directories_or_more_directories_than_files:
        ["-n", "1:0:0:0"] => 2 ["directories"],
        ["-n", "1:0:0:5000"] => 2 ["directories"];
    unknown_link_kind: ["-n", "1:-3"] => 2 ["-n"];
    nothing_to_test: ["-s", "0", "-n", "0"] => 2 ["nothing to test"];
    zero_runs: ["-s", "1", "-n", "0", "-x", "0"] => 2 ["-x 0"];
    concurrency_out_of_range:
        ["-s", "1", "-n", "0", "-c", "0"] => 2 ["-c 0"],
        ["-s", "1", "-n", "0", "-c", "201"] => 2 ["-c 201"];
    semaphore_modes_are_refused:
        ["-s", "1", "-n", "0", "-y", "s"] => 2 ["not supported"],
        ["-s", "1", "-n", "0", "-p", "3"] => 2 ["not supported"];
    per_char_size_not_a_number: ["-s", "1", "-n", "0", "-fx"] => 2 ["-fx"];
    unknown_user_and_group:
        ["-s", "1", "-n", "0", "-u", "nosuchuser"] => 2 ["nosuchuser"],
        ["-s", "1", "-n", "0", "-g", "nosuchgroup"] => 2 ["nosuchgroup"];
    not_enough_space on "size=16m":
        ["-s", "64", "-n", "0", "-r", "0"] => 2 ["not enough space"];
    absurd_file_count_is_refused_for_memory:
        ["-n", "99999999"] => 2 ["-n 99999999", "memory"];
    // 1024 files + directory + data file + marker, but fewer inodes free.
    too_few_free_inodes on "size=64m,nr_inodes=1000":
        ["-s", "0", "-n", "1", "-r", "0"] => 2 ["not enough free inodes"];
    /// Bug: `total_files() * per_file` in `planned_bytes`
    /// (src/workload/bonnie/mod.rs:254) wraps to 0 for 1024 files of 16 PiB,
    /// so the space check passes and the run fills the file system until
    /// ENOSPC instead of being refused up front (debug build: panic).
    file_sizes_overflowing_the_space_plan_are_refused on "size=16m":
        ["-s", "0", "-n", "1:16384t:16384t", "-r", "0"] => 2 ["not enough space"];
    /// Bug: a missing `-Z` file exits 1 ("run failed") while an empty one
    /// exits 2; both are bad flag values (exit 2). It is also read only after
    /// the scratch directory exists, once per `-x` repetition.
    missing_random_number_file_is_a_usage_error:
        ["-s", "1", "-f", "-n", "0", "-Z", "/nonexistent/rand"] => 2 ["/nonexistent/rand"];
}

#[test]
fn missing_target_directory() {
    let out = run(&bonnie_args(
        "/nonexistent/fsbench-test",
        &["-s", "1", "-n", "0"],
    ));
    out.assert_error(2, &["/nonexistent/fsbench-test", "does not exist"]);
    assert!(!std::path::Path::new("/nonexistent").exists());
}

#[test]
fn a_file_as_target() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"data").unwrap();
    let out = run(&bonnie_args(
        file.to_str().unwrap(),
        &["-s", "1", "-n", "0"],
    ));
    out.assert_error(2, &["not a directory"]);
    assert_eq!(std::fs::read(&file).unwrap(), b"data");
    assert_eq!(listing(dir.path()), ["plain-file"]);
}

#[test]
fn empty_target_path() {
    let out = run(&bonnie_args("x=", &["-s", "1", "-n", "0"]));
    out.assert_error(2, &["empty path"]);
}

#[test]
fn directory_not_writable_for_the_user() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let dir = mnt.join("root-only");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = run(&bonnie_args(
        dir.to_str().unwrap(),
        &["-u", "nobody", "-s", "1", "-n", "0", "-r", "0"],
    ));
    out.assert_error(2, &["not writable"]);
    assert!(listing(&dir).is_empty());
    assert_eq!(listing(mnt.path()), ["root-only"]);
}

/// Bug: `num_k * 1024` overflows u64 (src/compat/bonnie/args.rs:135 and
/// :138, src/cli/bonnie.rs:156, src/workload/bonnie/mod.rs:80). Debug
/// builds panic "attempt to multiply with overflow"; release builds wrap:
/// `-n 18014398509481984` (2^54) is refused with "more directories (1)
/// than files (0)", `-n 18014398509481985` with "1024 files need about
/// 17592186044415 MiB". (Before 189eeab, `-r 0` let the latter run 1024
/// files while reporting 18014398509481985.)
#[test]
fn file_count_overflowing_u64_is_refused_sensibly() {
    for count in ["18014398509481984", "18014398509481985"] {
        let Some(mnt) = TmpfsMount::new("64m") else {
            return;
        };
        let out = run(&bonnie_args(
            &mnt.arg(),
            &["-s", "0", "-n", count, "-r", "0"],
        ));
        out.assert_code(2);
        let line = out.assert_one_line_error();
        assert!(
            !line.contains("files (0)") && !line.contains(" 1024 files"),
            "the error misstates the file count\n{out}"
        );
        assert!(listing(mnt.path()).is_empty());
    }
}

#[test]
fn missing_random_number_file_fails_cleanly() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let out = run(&bonnie_args(
        &mnt.arg(),
        &["-s", "1", "-f", "-n", "0", "-Z", "/nonexistent/rand"],
    ));
    assert!(matches!(out.status.code(), Some(1 | 2)), "{out}");
    out.assert_one_line_error();
    assert!(listing(mnt.path()).is_empty());
}

#[test]
fn unwritable_json_path_fails_cleanly() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let json = "/nonexistent/dir/result.json";
    let out = run(&quick_bonnie_args(&mnt.arg(), &["--json", json]));
    out.assert_error(2, &[json]);
    assert!(listing(mnt.path()).is_empty());
}

#[test]
fn clap_level_parse_errors() {
    parse_error(&[]);
    parse_error(&["frobnicate"]);
    parse_error(&["bonnie", "--bogus"]);
    parse_error(&["bonnie", "-x", "-1"]);
    parse_error(&["bonnie", "-x", "many"]);
    parse_error(&["bonnie", "-z", "-1"]);
    parse_error(&["bonnie", "-z", "1", "-Z", "/etc/hostname"]);
    parse_error(&["bonnie", "-r", "lots"]);
    parse_error(&["bonnie", "-c", "abc"]);
    parse_error(&["bonnie", "-d"]);
    parse_error(&["clean"]);
    parse_error(&["env", "--bogus"]);
}

#[test]
fn clean_on_a_missing_directory() {
    let out = run(&["clean", "/nonexistent/fsbench-target"]);
    out.assert_error(2, &["/nonexistent/fsbench-target"]);
}

#[test]
fn clean_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"data").unwrap();
    let out = run(&["clean", file.to_str().unwrap()]);
    out.assert_error(2, &["not a directory"]);
    assert_eq!(std::fs::read(&file).unwrap(), b"data");
}

#[test]
fn env_on_a_missing_directory_fails_cleanly() {
    let out = run(&["env", "/nonexistent/fsbench-target"]);
    assert_ne!(out.status.code(), Some(0), "{out}");
    out.assert_one_line_error();
    assert!(out.stderr.contains("/nonexistent/fsbench-target"), "{out}");
}

/// Bug: a missing target is bad usage (exit 2) for `bonnie` and `clean`,
/// but `env` exits 1 (src/cli/env.rs: the probe error is not a UsageError).
#[test]
fn env_on_a_missing_directory_exits_2() {
    let out = run(&["env", "/nonexistent/fsbench-target"]);
    out.assert_error(2, &["/nonexistent/fsbench-target"]);
}

/// `fsbench run --precision`/`--max-repeat` nonsense: a one-line usage
/// error (exit 2) before the target is touched.
#[test]
fn precision_flags_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().display().to_string();
    let cases: [(&[&str], &str); 11] = [
        (&["--precision", "0"], "--precision 0"),
        (&["--precision", "0%"], "above 0"),
        (&["--precision", "-5%"], "--precision -5%"),
        (&["--precision", "100%"], "below 100"),
        (&["--precision", "150"], "below 100"),
        (&["--precision", "five"], "--precision five"),
        (&["--max-repeat", "5"], "needs --precision"),
        (&["--max-time", "1h"], "needs --precision"),
        (&["--precision", "5%", "--max-time", "soon"], "not a time"),
        (
            &["--precision", "5%", "--max-repeat", "2"],
            "--max-repeat 2",
        ),
        (
            &["--precision", "5%", "--repeat", "4", "--max-repeat", "3"],
            "below the 4 repetitions",
        ),
    ];
    for (flags, needle) in cases {
        let mut args = vec!["run", "--no-save", "-t", &target];
        args.extend(flags);
        run(&args).assert_error(2, &[needle]);
        assert!(
            listing(dir.path()).is_empty(),
            "{flags:?} wrote to the target"
        );
    }
}
