//! `fsbench io --verify` finds what the test does to its data file while
//! the run is frozen (SIGSTOP, so no I/O of fsbench is in flight): a byte
//! flipped in a block, and a block put back to an older, self-consistent
//! copy (a lost write, which a checksum alone cannot see). The report names
//! the block's offset. A run keeps going after a bad block (reporting each,
//! failing at the end) until `--verify-errors` of them. Every 512-byte sector of a verified block starts with
//! its offset (u64 LE, bytes 0..8) and its write generation (u32 LE, 8..12).
mod common;

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{
    Frozen, Running, Sentinel, TmpfsMount, assert_no_scratch_left, run, wait_for_scratch,
    wait_until,
};

/// The block the tests tamper with: the 4th of 16.
const BLOCK: u64 = 3 * 4096;

/// `fsbench io MNT` and `args` split at blanks.
fn io_args(mnt: &TmpfsMount, args: &str) -> Vec<String> {
    let mut full = vec!["io".to_string(), mnt.arg()];
    full.extend(args.split_whitespace().map(str::to_string));
    full
}

/// A verified run of 4k I/Os on a 64 KiB file (16 blocks) with `extra` flags.
fn verified_run(mnt: &TmpfsMount, extra: &str) -> Running {
    Running::spawn(&io_args(
        mnt,
        &format!(
            "-s 64k -b 4k --read 50 --verify --rate 2000 --warmup 0 --interval 0.5s --seed 3 {extra}"
        ),
    ))
}

fn read_block(file: &Path) -> Vec<u8> {
    read_block_at(file, BLOCK)
}

fn write_block(file: &Path, block: &[u8]) {
    write_block_at(file, block, BLOCK);
}

fn read_block_at(file: &Path, offset: u64) -> Vec<u8> {
    let mut block = vec![0u8; 4096];
    std::fs::File::open(file)
        .unwrap()
        .read_exact_at(&mut block, offset)
        .unwrap();
    block
}

fn write_block_at(file: &Path, block: &[u8], offset: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.write_all_at(block, offset).unwrap();
}

/// Flips a byte in each block at `offsets` while the run is frozen.
fn corrupt(fsbench: &Running, file: &Path, offsets: &[u64]) {
    let _frozen = Frozen::new(fsbench);
    for &offset in offsets {
        let mut block = read_block_at(file, offset);
        block[700] ^= 0x40;
        write_block_at(file, &block, offset);
    }
}

/// Exit 1; stderr is one `fsbench: verify: bad block at offset N` line per
/// bad block, then the error line. Returns the offsets and the error line.
fn bad_blocks_and_error(out: &common::Output) -> (Vec<u64>, String) {
    out.assert_code(1).assert_no_panic();
    let lines: Vec<&str> = out.stderr.lines().collect();
    let (error, reports) = lines.split_last().expect("an error line");
    assert!(error.starts_with("fsbench: error: verify: "), "{out}");
    let offsets = reports
        .iter()
        .map(|line| {
            let rest = line
                .strip_prefix("fsbench: verify: bad block at offset ")
                .unwrap_or_else(|| panic!("not a bad-block line: {line}\n{out}"));
            rest.split(' ').next().unwrap().parse().unwrap()
        })
        .collect();
    (offsets, error.to_string())
}

fn generation(block: &[u8]) -> u32 {
    assert_eq!(u64::from_le_bytes(block[..8].try_into().unwrap()), BLOCK);
    u32::from_le_bytes(block[8..12].try_into().unwrap())
}

/// Starts a verified run and returns it with its data file, laid out.
fn start(mnt: &TmpfsMount, extra: &str) -> (Running, PathBuf) {
    let mut fsbench = verified_run(mnt, extra);
    let scratch = wait_for_scratch(mnt.path(), &mut fsbench);
    let file = scratch.join("io.dat");
    wait_until(common::STARTUP_TIMEOUT, "the laid-out data file", || {
        assert!(fsbench.is_running(), "the run ended too early");
        std::fs::metadata(&file).is_ok_and(|m| m.len() == 64 << 10)
    });
    std::thread::sleep(Duration::from_millis(200));
    (fsbench, file)
}

/// The first bad block (the limit is 1) stops the run, reported with its
/// offset and `needles`.
fn assert_caught(fsbench: Running, mnt: &TmpfsMount, needles: &[&str]) {
    let out = fsbench.wait_for(Duration::from_secs(20));
    let (offsets, error) = bad_blocks_and_error(&out);
    assert_eq!(offsets, [BLOCK], "{out}");
    assert!(
        error.contains(&format!("bad block at offset {BLOCK} ")),
        "{out}"
    );
    for needle in needles {
        assert!(error.contains(needle), "{needle}: {out}");
    }
    assert_no_scratch_left(mnt.path());
}

/// Stop at the first bad block, well before the run's 30 s.
const FIRST_STOPS: &str = "--duration 30s --verify-errors 1";

#[test]
fn a_corrupted_block_is_reported_with_its_offset() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let (fsbench, file) = start(&mnt, FIRST_STOPS);
    {
        let _frozen = Frozen::new(&fsbench);
        let mut block = read_block(&file);
        block[700] ^= 0x40;
        write_block(&file, &block);
    }
    assert_caught(
        fsbench,
        &mnt,
        &["verify", "corrupt data", "first bad byte at offset 12988"],
    );
    sentinel.assert_intact();
}

#[test]
fn a_reverted_write_is_reported_as_a_lost_write() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let (fsbench, file) = start(&mnt, FIRST_STOPS);
    let old = {
        let _frozen = Frozen::new(&fsbench);
        read_block(&file)
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(
            Instant::now() < deadline,
            "block {BLOCK} was never rewritten"
        );
        std::thread::sleep(Duration::from_millis(20));
        let _frozen = Frozen::new(&fsbench);
        if generation(&read_block(&file)) != generation(&old) {
            write_block(&file, &old);
            break;
        }
    }
    assert_caught(fsbench, &mnt, &["verify", "stale data", "lost write"]);
}

#[test]
fn every_bad_block_is_reported_and_the_run_fails_at_its_end() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let (fsbench, file) = start(&mnt, "--duration 3s");
    let started = Instant::now();
    let tampered = [4096, 5 * 4096, 11 * 4096];
    corrupt(&fsbench, &file, &tampered);
    let out = fsbench.wait_for(Duration::from_secs(20));
    let (mut offsets, error) = bad_blocks_and_error(&out);
    offsets.sort_unstable();
    assert_eq!(offsets, tampered, "each bad block once\n{out}");
    assert!(
        error.contains("3 bad blocks") && error.contains("corrupt data"),
        "{out}"
    );
    assert!(
        started.elapsed() > Duration::from_millis(1500),
        "the run went on after the first bad block\n{out}"
    );
    assert!(out.stdout.contains("avg_"), "it ran to its end\n{out}");
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn the_run_stops_at_the_bad_block_limit() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let (fsbench, file) = start(&mnt, "--duration 30s --verify-errors 4");
    let tampered: Vec<u64> = (0..8).map(|b| b * 2 * 4096).collect();
    corrupt(&fsbench, &file, &tampered);
    let out = fsbench.wait_for(Duration::from_secs(20));
    let (offsets, error) = bad_blocks_and_error(&out);
    assert_eq!(offsets.len(), 4, "{out}");
    assert!(offsets.iter().all(|o| tampered.contains(o)), "{out}");
    assert!(
        error.contains("4 bad blocks") && error.contains("--verify-errors 4"),
        "{out}"
    );
    assert_no_scratch_left(mnt.path());
}

#[test]
fn an_untouched_run_verifies_cleanly_with_threads() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let out = run(&io_args(
        &mnt,
        "-s 1m -b 4k:50,8k:50 --read 50 --seek 50 --verify -j 4 --duration 0.4s --interval 0.1s",
    ));
    out.assert_success();
    assert!(out.stdout.contains(" verify"), "{out}");
    assert_no_scratch_left(mnt.path());
}
