//! What one read of the device counters costs, on the devices under a
//! directory: the snapshot every timed phase takes at each end. Used by
//! bench/counters.py, which weighs it against the shortest phase.
//!
//!     cargo run --release --example snapshot_cost -- /lab/ext4
use std::time::Instant;

use fsbench::measure::devices;

const ROUNDS: u32 = 2000;

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    let under = fsbench::storage::devices::resolve(std::path::Path::new(&dir));
    let _watch = devices::watch(&under, None);
    if devices::snapshot().is_none() {
        eprintln!("snapshot_cost: {dir}: no device counters to read");
        std::process::exit(2);
    }
    let start = Instant::now();
    for _ in 0..ROUNDS {
        std::hint::black_box(devices::snapshot());
    }
    let each = start.elapsed() / ROUNDS;
    let names: Vec<&str> = under.iter().map(|d| d.name.as_str()).collect();
    println!("one snapshot: {each:?} ({})", names.join(", "));
}
