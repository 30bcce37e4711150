//! `fsbench io --verify` finds what the test does to its data file while
//! the run is frozen (SIGSTOP, so no I/O of fsbench is in flight): a byte
//! flipped in a block, and a block put back to an older, self-consistent
//! copy (a lost write, which a checksum alone cannot see). The report names
//! the block's offset. Every 512-byte sector of a verified block starts with
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

fn verified_run(mnt: &TmpfsMount) -> Running {
    Running::spawn(&io_args(
        mnt,
        "-s 64k -b 4k --read 50 --verify --rate 2000 --duration 30s --warmup 0 --interval 0.5s --seed 3",
    ))
}

fn read_block(file: &Path) -> Vec<u8> {
    let mut block = vec![0u8; 4096];
    std::fs::File::open(file)
        .unwrap()
        .read_exact_at(&mut block, BLOCK)
        .unwrap();
    block
}

fn write_block(file: &Path, block: &[u8]) {
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.write_all_at(block, BLOCK).unwrap();
}

fn generation(block: &[u8]) -> u32 {
    assert_eq!(u64::from_le_bytes(block[..8].try_into().unwrap()), BLOCK);
    u32::from_le_bytes(block[8..12].try_into().unwrap())
}

/// Starts a verified run and returns it with its data file, laid out.
fn start(mnt: &TmpfsMount) -> (Running, PathBuf) {
    let mut fsbench = verified_run(mnt);
    let scratch = wait_for_scratch(mnt.path(), &mut fsbench);
    let file = scratch.join("io.dat");
    wait_until(common::STARTUP_TIMEOUT, "the laid-out data file", || {
        assert!(fsbench.is_running(), "the run ended too early");
        std::fs::metadata(&file).is_ok_and(|m| m.len() == 64 << 10)
    });
    std::thread::sleep(Duration::from_millis(200));
    (fsbench, file)
}

fn assert_caught(fsbench: Running, mnt: &TmpfsMount, needles: &[&str]) {
    let out = fsbench.wait_for(Duration::from_secs(20));
    let line = out.assert_error(1, needles);
    assert!(
        line.contains(&format!("bad block at offset {BLOCK} ")),
        "{out}"
    );
    assert_no_scratch_left(mnt.path());
}

#[test]
fn a_corrupted_block_is_reported_with_its_offset() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let (fsbench, file) = start(&mnt);
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
    let (fsbench, file) = start(&mnt);
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
fn an_untouched_run_verifies_cleanly_with_threads() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let out = run(&io_args(
        &mnt,
        "-s 1m -b 4k:50,8k:50 --read 50 --seek 50 --verify -t 4 --duration 0.4s --interval 0.1s",
    ));
    out.assert_success();
    assert!(out.stdout.contains(" verify"), "{out}");
    assert_no_scratch_left(mnt.path());
}
