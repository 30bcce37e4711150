//! fio's terminal report of a run, as fio prints it at the end: per job
//! (or group under group_reporting) its `read:`/`write:` lines, latencies,
//! percentiles, bandwidth and IOPS samples, latency distribution and CPU;
//! then `Run status group N (all jobs):` and `Disk stats`. It is written
//! from the run's fio JSON document (`report::document`), so both say the
//! same figures. Lines fio fills from what fsbench does not count (slat,
//! IO depths, submit and complete) are left out rather than shown as 0.
use serde_json::Value;

/// fio's report of `document`; `jobs[i]` is how many jobs entry i adds
/// up (fio's `jobs=`), `pid` the process that ran them.
pub fn text(document: &Value, jobs: &[u32], pid: u32) -> String {
    let entries = document["jobs"].as_array().map_or(&[][..], Vec::as_slice);
    let time = document["time"].as_str().unwrap_or("");
    let mut out = String::new();
    for (entry, count) in entries.iter().zip(jobs) {
        out += &job(entry, *count, pid, time);
    }
    let mut groups: Vec<u64> = entries
        .iter()
        .filter_map(|e| e["groupid"].as_u64())
        .collect();
    groups.dedup();
    for group in groups {
        let members: Vec<&Value> = entries.iter().filter(|e| e["groupid"] == group).collect();
        out += &run_status(group, &members);
    }
    if let Some(disks) = document["disk_util"].as_array() {
        out += "\nDisk stats (read/write):\n";
        for disk in disks {
            out += &disk_line(disk);
        }
    }
    out
}

fn int(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

fn float(value: &Value) -> f64 {
    value.as_f64().unwrap_or(0.0)
}

/// fio's `num2str`: `value` in the largest unit of `units` (each `base`
/// times the one before) that keeps it within `width` characters, with
/// the decimals that still fit (`23.8k`, `341k`, `1333MiB`, `5655.5k`).
fn num2str(value: f64, width: usize, base: f64, units: &[&str]) -> String {
    let digits = |v: f64| (v.max(1.0).log10().floor() as usize) + 1;
    let (mut scaled, mut unit) = (value, 0);
    while digits(scaled.round()) > width && unit + 1 < units.len() {
        scaled /= base;
        unit += 1;
    }
    let decimals = match unit {
        0 => 0,
        _ => width.saturating_sub(digits(scaled) + 1),
    };
    format!("{scaled:.decimals$}{}", units[unit])
}

const BINARY: [&str; 5] = ["", "Ki", "Mi", "Gi", "Ti"];
const DECIMAL: [&str; 5] = ["", "k", "M", "G", "T"];

/// A rate of bytes/s as fio shows it: `93.0MiB/s (97.5MB/s)`.
fn bandwidth(bytes_per_s: f64) -> (String, String) {
    (
        num2str(bytes_per_s, 4, 1024.0, &BINARY) + "B/s",
        num2str(bytes_per_s, 4, 1000.0, &DECIMAL) + "B/s",
    )
}

/// An amount of bytes as fio shows it: `112MiB` and `(117MB)`.
fn amount(bytes: f64) -> (String, String) {
    (
        num2str(bytes, 4, 1024.0, &BINARY) + "B",
        num2str(bytes, 4, 1000.0, &DECIMAL) + "B",
    )
}

fn job(entry: &Value, count: u32, pid: u32, time: &str) -> String {
    let mut out = format!(
        "{}: (groupid={}, jobs={count}): err= 0: pid={pid}: {time}\n",
        entry["jobname"].as_str().unwrap_or(""),
        int(&entry["groupid"])
    );
    for dir in ["read", "write"] {
        if int(&entry[dir]["total_ios"]) > 0 {
            out += &direction(dir, &entry[dir]);
        }
    }
    for (key, unit) in [
        ("latency_ns", "nsec"),
        ("latency_us", "usec"),
        ("latency_ms", "msec"),
    ] {
        out += &distribution(&entry[key], unit);
    }
    let sync = &entry["sync"]["lat_ns"];
    if int(&sync["N"]) > 0 {
        out += "  fsync/fdatasync/sync_file_range:\n";
        out += &latency("    sync", sync);
        out += &percentiles("    sync", &sync["percentile"]);
    }
    out += &format!(
        "  cpu          : usr={:.2}%, sys={:.2}%, ctx={}, majf={}, minf={}\n",
        float(&entry["usr_cpu"]),
        float(&entry["sys_cpu"]),
        int(&entry["ctx"]),
        int(&entry["majf"]),
        int(&entry["minf"])
    );
    let ios = |key: &str| {
        ["read", "write", "trim"]
            .map(|dir| int(&entry[dir][key]).to_string())
            .join(",")
            + ",0"
    };
    out += &format!(
        "     issued rwts: total={} short={} dropped={}\n",
        ios("total_ios"),
        ios("short_ios"),
        ios("drop_ios")
    );
    out += &format!(
        "     latency   : target={}, window={}, percentile={:.2}%, depth={}\n",
        int(&entry["latency_target"]),
        int(&entry["latency_window"]),
        float(&entry["latency_percentile"]),
        int(&entry["latency_depth"])
    );
    out
}

/// One direction's lines: the IOPS/BW line, clat and lat, the
/// percentiles, and the bandwidth and IOPS samples.
fn direction(dir: &str, block: &Value) -> String {
    let (bw, bw_dec) = bandwidth(float(&block["bw_bytes"]));
    let (io, _) = amount(float(&block["io_bytes"]));
    let iops = num2str(float(&block["iops"]), 4, 1000.0, &DECIMAL);
    let mut out = format!(
        "  {dir}: IOPS={iops}, BW={bw} ({bw_dec})({io}/{}msec)\n",
        int(&block["runtime"])
    );
    out += &latency("    clat", &block["clat_ns"]);
    out += &latency("     lat", &block["lat_ns"]);
    out += &percentiles("    clat", &block["clat_ns"]["percentile"]);
    if int(&block["bw_samples"]) > 0 {
        out += &format!(
            "   bw (  KiB/s): min={:5}, max={:5}, per={:.2}%, avg={:.2}, stdev={:.2}, samples={}\n",
            int(&block["bw_min"]),
            int(&block["bw_max"]),
            float(&block["bw_agg"]),
            float(&block["bw_mean"]),
            float(&block["bw_dev"]),
            int(&block["bw_samples"])
        );
        out += &format!(
            "   iops        : min={:5}, max={:5}, avg={:.2}, stdev={:.2}, samples={}\n",
            int(&block["iops_min"]),
            int(&block["iops_max"]),
            float(&block["iops_mean"]),
            float(&block["iops_stddev"]),
            int(&block["iops_samples"])
        );
    }
    out
}

/// `clat (usec): min=23, max=693, avg=40.95, stdev=24.60`: in ns, or
/// scaled to µs or ms as fio scales them (where the minimum is over 2 of
/// the next unit, the maximum over 99999 of this one and the deviation
/// over 1000).
fn latency(label: &str, stats: &Value) -> String {
    let (mut min, mut max) = (float(&stats["min"]), float(&stats["max"]));
    let (mut mean, mut dev) = (float(&stats["mean"]), float(&stats["stddev"]));
    let mut unit = 0;
    while unit < 2 && min > 2000.0 && max > 99999.0 && dev > 1000.0 {
        (min, max, mean, dev) = (min / 1000.0, max / 1000.0, mean / 1000.0, dev / 1000.0);
        unit += 1;
    }
    format!(
        "{label} ({}): min={}, max={}, avg={mean:.2}, stdev={dev:.2}\n",
        ["nsec", "usec", "msec"][unit],
        num2str(min.floor(), 6, 1000.0, &DECIMAL),
        num2str(max.floor(), 6, 1000.0, &DECIMAL)
    )
}

/// fio's percentile table, four to a line, in ns or scaled to µs or ms
/// by fio's rule on its smallest and largest value.
fn percentiles(label: &str, map: &Value) -> String {
    let Some(map) = map.as_object() else {
        return String::new();
    };
    let mut values: Vec<(f64, u64)> = map
        .iter()
        .filter_map(|(p, ns)| Some((p.parse().ok()?, ns.as_u64()?)))
        .collect();
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (low, high) = match (values.first(), values.last()) {
        (Some(first), Some(last)) => (first.1, last.1),
        _ => return String::new(),
    };
    let (unit, divisor) = if low > 2_000_000 && high > 99_999_999 {
        ("msec", 1_000_000)
    } else if low > 2000 && high > 99_999 {
        ("usec", 1000)
    } else {
        ("nsec", 1)
    };
    let out = format!("{label} percentiles ({unit}):\n");
    let cells: Vec<String> = values
        .iter()
        .map(|(p, ns)| format!("{p:5.2}th=[{:5}]", ns / divisor))
        .collect();
    let lines: Vec<String> = cells
        .chunks(4)
        .map(|line| format!("     | {}", line.join(", ")))
        .collect();
    out + &lines.join(",\n") + "\n"
}

/// `lat (usec)   : 2=59.33%, 4=38.04%`: the buckets that hold I/Os,
/// five to a line.
fn distribution(map: &Value, unit: &str) -> String {
    let Some(map) = map.as_object() else {
        return String::new();
    };
    let mut buckets: Vec<(u64, &str, f64)> = map
        .iter()
        .map(|(bound, share)| {
            let order = bound.trim_start_matches(">=").parse::<u64>().unwrap_or(0);
            let order = order * 2 + u64::from(bound.starts_with(">="));
            (order, bound.as_str(), float(share))
        })
        .filter(|&(_, _, share)| share > 0.0)
        .collect();
    buckets.sort_by_key(|&(order, _, _)| order);
    let cells: Vec<String> = buckets
        .iter()
        .map(|(_, bound, share)| format!("{bound}={:.2}%", share.max(0.01)))
        .collect();
    let lines = cells
        .chunks(5)
        .map(|line| format!("  lat ({unit})   : {}\n", line.join(", ")));
    lines.collect()
}

/// `Run status group 0 (all jobs):` and a line per direction: the group's
/// bandwidth (its bytes over its longest runtime), its jobs' lowest and
/// highest, its bytes and its jobs' runtimes.
fn run_status(group: u64, members: &[&Value]) -> String {
    let mut out = format!("\nRun status group {group} (all jobs):\n");
    for (dir, label) in [("read", "READ"), ("write", "WRITE")] {
        let active: Vec<&Value> = members
            .iter()
            .map(|m| &m[dir])
            .filter(|block| int(&block["total_ios"]) > 0)
            .collect();
        if active.is_empty() {
            continue;
        }
        let bytes: u64 = active.iter().map(|b| int(&b["io_bytes"])).sum();
        let runtimes: Vec<u64> = active.iter().map(|b| int(&b["runtime"])).collect();
        let (shortest, longest) = (
            runtimes.iter().copied().min().unwrap_or(0),
            runtimes.iter().copied().max().unwrap_or(0),
        );
        let rates: Vec<f64> = active.iter().map(|b| float(&b["bw_bytes"])).collect();
        let lowest = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let highest = rates.iter().copied().fold(0.0, f64::max);
        let (bw, bw_dec) = bandwidth(bytes as f64 * 1000.0 / longest.max(1) as f64);
        let ((low, low_dec), (high, high_dec)) = (bandwidth(lowest), bandwidth(highest));
        let (io, io_dec) = amount(bytes as f64);
        out += &format!(
            "{label:>7}: bw={bw} ({bw_dec}), {low}-{high} ({low_dec}-{high_dec}), io={io} ({io_dec}), run={shortest}-{longest}msec\n"
        );
    }
    out
}

/// `vda: ios=116454/8649, merge=0/57, ticks=10727/5239, in_queue=15965, util=49.73%`
fn disk_line(disk: &Value) -> String {
    format!(
        "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2}%\n",
        disk["name"].as_str().unwrap_or(""),
        int(&disk["read_ios"]),
        int(&disk["write_ios"]),
        int(&disk["read_merges"]),
        int(&disk["write_merges"]),
        int(&disk["read_ticks"]),
        int(&disk["write_ticks"]),
        int(&disk["in_queue"]),
        float(&disk["util"])
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_scaled_as_fio_scales_them() {
        let iops = |v| num2str(v, 4, 1000.0, &DECIMAL);
        assert_eq!(
            [iops(6086.0), iops(23814.0), iops(341333.0)],
            ["6086", "23.8k", "341k"]
        );
        assert_eq!(amount(8388608.0), ("8192KiB".into(), "8389kB".into()));
        assert_eq!(amount(117440512.0), ("112MiB".into(), "117MB".into()));
        assert_eq!(bandwidth(97542144.0).0, "93.0MiB/s");
        assert_eq!(num2str(5655500.0, 6, 1000.0, &DECIMAL), "5655.5k");
        assert_eq!(num2str(34976.0, 6, 1000.0, &DECIMAL), "34976");
    }

    #[test]
    fn latencies_and_percentiles_pick_fio_s_unit() {
        let stats =
            serde_json::json!({"min": 23000, "max": 693000, "mean": 40950.0, "stddev": 24600.0});
        assert_eq!(
            latency("    clat", &stats),
            "    clat (usec): min=23, max=693, avg=40.95, stdev=24.60\n"
        );
        let map = serde_json::json!({"1.000000": 54000, "50.000000": 143000, "99.990000": 5538000});
        let table = percentiles("    clat", &map);
        assert!(
            table.starts_with("    clat percentiles (usec):\n"),
            "{table}"
        );
        assert!(
            table.contains("     |  1.00th=[   54], 50.00th=[  143], 99.99th=[ 5538]\n"),
            "{table}"
        );
        let shares = serde_json::json!({"2": 59.33, "4": 38.04, "10": 0.0, "1000": 0.001});
        assert_eq!(
            distribution(&shares, "usec"),
            "  lat (usec)   : 2=59.33%, 4=38.04%, 1000=0.01%\n"
        );
    }
}
