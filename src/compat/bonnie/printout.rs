//! bonnie++'s human table and CSV line (format "1.98", as bonnie++ 2.00a
//! prints them), built from fsbench's result model. Differences, on
//! purpose: no "+++++" (every figure is measured; short phases get a note),
//! file-test rates in the table are the real rates (2.00a prints garbage
//! there), the io chunk size and the seeker count are not lost, and
//! num_dirs / file chunk size sit in the columns the header names.
use crate::result::{Flag, Metric, WorkloadResult};
use crate::workload::bonnie::{BonnieConfig, FileKind, MIB, Test};

use super::args::{DEFAULT_CHUNK, DEFAULT_SEEKERS, DEFAULT_SEEKS};

/// The CSV format version bon_csv2html and bon_csv2txt (2.00a) accept.
pub const CSV_FORMAT: &str = "1.98";
/// The "bonnie_version" field and the table's `Version` label.
pub const VERSION_LABEL: &str = "fsbench";

/// The header line of the 50 fields (bonnie++ prints only 48 names).
pub const CSV_HEADER: &str = "format_version,bonnie_version,name,concurrency,seed,file_size,\
io_chunk_size,seeks,seek_proc_count,putc,putc_cpu,put_block,put_block_cpu,rewrite,rewrite_cpu,\
getc,getc_cpu,get_block,get_block_cpu,seeks,seeks_cpu,num_files,max_size,min_size,num_dirs,\
file_chunk_size,seq_create,seq_create_cpu,seq_stat,seq_stat_cpu,seq_del,seq_del_cpu,ran_create,\
ran_create_cpu,ran_stat,ran_stat_cpu,ran_del,ran_del_cpu,putc_latency,put_block_latency,\
rewrite_latency,getc_latency,get_block_latency,seeks_latency,seq_create_latency,\
seq_stat_latency,seq_del_latency,ran_create_latency,ran_stat_latency,ran_del_latency";

/// The data tests (first table, CSV fields 10-21), then the file tests.
const DATA_TESTS: &[Test] = Test::ALL.split_at(6).0;
const FILE_TESTS: &[Test] = Test::ALL.split_at(6).1;

/// One CSV line for one run.
pub fn csv_line(config: &BonnieConfig, result: &WorkloadResult) -> String {
    let mut fields: Vec<String> = vec![
        CSV_FORMAT.into(),
        VERSION_LABEL.into(),
        csv_safe(&config.machine),
        config.concurrency.to_string(),
        seed_text(config),
    ];
    fields.extend(data_descriptor(config));
    for &test in DATA_TESTS {
        fields.extend(rate_and_cpu(test, result.metric(test.metric_name())));
    }
    fields.extend(file_descriptor(config));
    for &test in FILE_TESTS {
        fields.extend(rate_and_cpu(test, result.metric(test.metric_name())));
    }
    for test in Test::ALL {
        fields.push(
            result
                .metric(test.metric_name())
                .map(max_latency_text)
                .unwrap_or_default(),
        );
    }
    fields.join(",")
}

/// The CSV has no quoting: a comma in the label would shift every field.
fn csv_safe(text: &str) -> String {
    text.replace(',', "_")
}

fn seed_text(config: &BonnieConfig) -> String {
    match &config.seed {
        crate::workload::bonnie::Seed::Number(n) => n.to_string(),
        crate::workload::bonnie::Seed::File(path) => csv_safe(&path.display().to_string()),
    }
}

/// file_size, io_chunk_size, seeks, seek_proc_count (empty with `-s 0`).
fn data_descriptor(config: &BonnieConfig) -> [String; 4] {
    if config.file_size_mib == 0 {
        return Default::default();
    }
    [
        size_label(config.file_size_mib),
        chunk_label(config.chunk),
        config.seeks.to_string(),
        config.seekers.to_string(),
    ]
}

/// num_files, max_size, min_size, num_dirs, file_chunk_size (empty with `-n 0`).
fn file_descriptor(config: &BonnieConfig) -> [String; 5] {
    let files = &config.files;
    if files.num_k == 0 {
        return Default::default();
    }
    let (max, min) = match files.kind {
        FileKind::Sized { max, min } => (nonzero(max), nonzero(min)),
        FileKind::HardLinks => ("link".into(), String::new()),
        FileKind::SymLinks => ("symlink".into(), String::new()),
    };
    let dirs = if files.dirs > 1 {
        files.dirs.to_string()
    } else {
        String::new()
    };
    [
        files.num_k.to_string(),
        max,
        min,
        dirs,
        chunk_label(files.chunk),
    ]
}

fn nonzero(n: u64) -> String {
    if n == 0 { String::new() } else { n.to_string() }
}

/// `2G` for whole GiB, else `300M`.
fn size_label(mib: u64) -> String {
    if mib.is_multiple_of(1024) {
        format!("{}G", mib / 1024)
    } else {
        format!("{mib}M")
    }
}

/// Empty for the default 8192, else `16k`, `512`, `1m`.
fn chunk_label(chunk: usize) -> String {
    match chunk {
        DEFAULT_CHUNK => String::new(),
        c if c >= MIB as usize => format!("{}m", c / MIB as usize),
        c if c >= 1024 => format!("{}k", c / 1024),
        c => c.to_string(),
    }
}

/// CSV rate and CPU: KiB/s for data tests, seeks/s, files/s; empty when
/// the test did not run. Never "+++++".
fn rate_and_cpu(test: Test, metric: Option<&Metric>) -> [String; 2] {
    let Some(metric) = metric else {
        return Default::default();
    };
    let rate = match test {
        Test::Seeks => seeks_text(metric.value),
        _ if test.moves_data() => format!("{}", (metric.value * 1024.0) as u64),
        _ => format!("{}", metric.value as u64),
    };
    [rate, cpu_text(metric)]
}

fn seeks_text(value: f64) -> String {
    if value >= 1000.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

fn cpu_text(metric: &Metric) -> String {
    format!("{}", metric.cpu_percent.unwrap_or(0.0) as u64)
}

/// bonnie++'s latency format: the maximum, truncated to `us`, `ms` or `s`.
fn max_latency_text(metric: &Metric) -> String {
    let Some(latency) = &metric.latency else {
        return String::new();
    };
    let us = latency.max_ns / 1000;
    if us > 99_999_999 {
        format!("{}s", us / 1_000_000)
    } else if us > 99_999 {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

/// The human table, bonnie++ 2.00a's layout (80 columns), plus notes for
/// flagged figures.
pub fn text_report(config: &BonnieConfig, result: &WorkloadResult) -> String {
    let mut out = String::new();
    if config.file_size_mib > 0 {
        out.push_str(&data_table(config, result));
    }
    if config.files.num_k > 0 {
        out.push_str(&file_table(config, result));
    } else {
        out.push('\n');
    }
    out.push_str(&notes(result));
    out
}

fn version_line(title: &str) -> String {
    format!("{:<20}{title}\n", format!("Version {VERSION_LABEL}"))
}

fn data_table(config: &BonnieConfig, result: &WorkloadResult) -> String {
    let mut out = version_line("------Sequential Output------ --Sequential Input- --Random-");
    out.push_str(
        "                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n",
    );
    out.push_str(
        "Name:Size etc        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n",
    );
    out.push_str(&row_label(&config.machine, &data_label(config)));
    for &test in DATA_TESTS {
        out.push_str(&text_cell(test, result.metric(test.metric_name())));
    }
    out.push('\n');
    out.push_str(&latency_line(DATA_TESTS, result));
    out
}

fn file_table(config: &BonnieConfig, result: &WorkloadResult) -> String {
    let mut out = version_line("------Sequential Create------ --------Random Create--------");
    out.push_str(&format!(
        "{:<20}-Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--\n",
        truncate(&config.machine, 19)
    ));
    let header = match config.files.kind {
        FileKind::Sized { min, .. } if min > 0 => "files:max:min",
        FileKind::Sized { max, .. } if max > 0 => "files:max",
        _ => "files",
    };
    out.push_str(&format!(
        "{header:>19}  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n"
    ));
    out.push_str(&format!("{:>19}", file_label(config)));
    for &test in FILE_TESTS {
        out.push_str(&text_cell(test, result.metric(test.metric_name())));
    }
    out.push('\n');
    out.push_str(&latency_line(FILE_TESTS, result));
    out
}

fn truncate(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// `size[:chunk[:concurrency[:seeks[:seekers]]]]`, defaults empty, trailing
/// colons stripped: `1G`, `256M:16k`, `64M::4`, `1G:::1000:3`.
fn data_label(config: &BonnieConfig) -> String {
    let or_empty = |value: String, default: String| {
        if value == default {
            String::new()
        } else {
            value
        }
    };
    let parts = [
        size_label(config.file_size_mib),
        chunk_label(config.chunk),
        or_empty(config.concurrency.to_string(), "1".into()),
        or_empty(config.seeks.to_string(), DEFAULT_SEEKS.to_string()),
        or_empty(config.seekers.to_string(), DEFAULT_SEEKERS.to_string()),
    ];
    parts.join(":").trim_end_matches(':').to_string()
}

/// `num`, `num:max:min`, `num:link`, `num:symlink`, then `/dirs`.
fn file_label(config: &BonnieConfig) -> String {
    let files = &config.files;
    let mut label = match files.kind {
        FileKind::Sized { max: 0, .. } => files.num_k.to_string(),
        FileKind::Sized { max, min } => format!("{}:{max}:{min}", files.num_k),
        FileKind::HardLinks => format!("{}:link", files.num_k),
        FileKind::SymLinks => format!("{}:symlink", files.num_k),
    };
    if files.dirs > 1 {
        label.push_str(&format!("/{}", files.dirs));
    }
    label
}

/// Machine name truncated so that name, a space and the label fit 19
/// columns; a label too long for that starts the line and overflows.
fn row_label(machine: &str, label: &str) -> String {
    if label.len() >= 19 {
        return label.to_string();
    }
    let name = truncate(machine, 18 - label.len());
    format!("{name:<w$} {label}", w = 18 - label.len())
}

/// ` rate cpu` in 5 + 3 columns.
fn text_cell(test: Test, metric: Option<&Metric>) -> String {
    let Some(metric) = metric else {
        return format!(" {:>5} {:>3}", "", "");
    };
    let rate = match test {
        Test::Seeks if metric.value < 1000.0 => format!("{:.1}", metric.value),
        _ if test.moves_data() => throughput_text(metric.value * 1024.0),
        _ => count_rate_text(metric.value),
    };
    format!(" {rate:>5} {:>3}", cpu_text(metric))
}

/// bonnie++ 1.98's units: KiB/s below 10000, then MiB/s, then GiB/s.
fn throughput_text(kib_per_s: f64) -> String {
    let mib = kib_per_s / 1024.0;
    if kib_per_s < 10_000.0 {
        format!("{}k", kib_per_s as u64)
    } else if mib < 100.0 {
        format!("{mib:.1}m")
    } else if mib < 1000.0 {
        format!("{}m", mib.round() as u64)
    } else {
        format!("{:.1}g", mib / 1024.0)
    }
}

/// Files/s or seeks/s in at most 5 columns: exact below 100000, then in
/// thousands (`325k`), then millions (`12m`); the CSV has the exact figure.
fn count_rate_text(per_s: f64) -> String {
    if per_s < 100_000.0 {
        format!("{}", per_s as u64)
    } else if per_s < 9_999_500.0 {
        format!("{}k", (per_s / 1e3).round() as u64)
    } else {
        format!("{}m", (per_s / 1e6).round() as u64)
    }
}

fn latency_line(tests: &[Test], result: &WorkloadResult) -> String {
    let mut line = format!("{:<17}", "Latency");
    for test in tests {
        let text = result
            .metric(test.metric_name())
            .map(max_latency_text)
            .unwrap_or_default();
        line.push_str(&format!(" {text:>9}"));
    }
    line.trim_end().to_string() + "\n"
}

/// Notes for flagged figures and anything the workload reported.
fn notes(result: &WorkloadResult) -> String {
    let mut out = String::new();
    for flag in [Flag::TooShort, Flag::FitsInPageCache, Flag::WritesCached] {
        let flagged: Vec<&str> = result
            .metrics
            .iter()
            .filter(|m| m.flags.contains(&flag))
            .map(|m| m.name.as_str())
            .collect();
        if !flagged.is_empty() {
            out.push_str(&format!(
                "Note: {} ({}).\n",
                flag.describe(),
                flagged.join(", ")
            ));
        }
    }
    // What the device counters showed, with their figures, per test.
    for metric in &result.metrics {
        for flag in metric.flags.iter().filter(|f| f.from_device()) {
            let text = metric.flag_text(*flag);
            out.push_str(&format!("Note: {} {text}.\n", metric.name));
        }
    }
    for note in &result.notes {
        out.push_str(&format!("Note: {note}.\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Direction, LatencySummary};
    use crate::workload::bonnie::{FileTestConfig, Seed};

    fn config() -> BonnieConfig {
        BonnieConfig {
            machine: "box".into(),
            file_size_mib: 2048,
            chunk: 8192,
            seeks: 8192,
            seekers: 5,
            byte_io_mib: 3,
            files: FileTestConfig {
                num_k: 16,
                kind: FileKind::Sized { max: 0, min: 0 },
                dirs: 1,
                chunk: 8192,
            },
            ram_mib: 0,
            concurrency: 1,
            fsync_every_write: false,
            direct: false,
            shared_dir: false,
            seed: Seed::Number(42),
        }
    }

    fn metric(test: Test, value: f64, max_ns: u64) -> Metric {
        Metric {
            name: test.metric_name().into(),
            value,
            unit: test.rate().unit.into(),
            direction: Direction::HigherIsBetter,
            samples: 1,
            elapsed_s: 1.0,
            cpu_percent: Some(42.9),
            latency: Some(LatencySummary {
                count: 1,
                min_ns: 1,
                mean_ns: 1.0,
                p50_ns: 1,
                p90_ns: 1,
                p99_ns: 1,
                p999_ns: 1,
                p9999_ns: 1,
                max_ns,
                histogram: None,
            }),
            flags: vec![],
            across_ranks: Default::default(),
            phase: None,
            detail: false,
            device: None,
            cliff: None,
        }
    }

    fn result(metrics: Vec<Metric>) -> WorkloadResult {
        WorkloadResult {
            workload: "bonnie".into(),
            repetition: 0,
            params: serde_json::Value::Null,
            metrics,
            notes: vec![],
            ..Default::default()
        }
    }

    fn full_result() -> WorkloadResult {
        let values = [
            2.5, 476.7, 1200.0, 3.9, 3900.0, 12518.0, 112015.0, 650000.0, 33121.0, 98.0, 5.5,
            125535.0,
        ];
        let latencies = [
            4_463_000,
            1_353_000,
            200_000,
            2_643_000,
            154_000,
            120_000_000,
            627_000,
            267,
            3_634_000,
            584_000,
            99_000,
            4_572_000,
        ];
        result(
            Test::ALL
                .iter()
                .zip(values)
                .zip(latencies)
                .map(|((&t, v), l)| metric(t, v, l))
                .collect(),
        )
    }

    #[test]
    fn csv_line_has_the_1_98_layout() {
        let line = csv_line(&config(), &full_result());
        assert_eq!(
            line,
            "1.98,fsbench,box,1,42,2G,,8192,5,2560,42,488140,42,1228800,42,3993,42,3993600,42,12518,42,\
16,,,,,112015,42,650000,42,33121,42,98,42,5,42,125535,42,\
4463us,1353us,200us,2643us,154us,120ms,627us,0us,3634us,584us,99us,4572us"
        );
        assert_eq!(line.split(',').count(), 50);
        assert_eq!(CSV_HEADER.split(',').count(), 50);
    }

    #[test]
    fn skipped_sections_leave_empty_fields() {
        let mut cfg = config();
        cfg.file_size_mib = 0;
        let files_only = result(
            Test::ALL[6..]
                .iter()
                .map(|&t| metric(t, 1000.0, 1000))
                .collect(),
        );
        let fields: Vec<String> = csv_line(&cfg, &files_only)
            .split(',')
            .map(String::from)
            .collect();
        assert_eq!(fields.len(), 50);
        assert!(fields[5..21].iter().all(|f| f.is_empty()), "{fields:?}");
        assert_eq!(fields[21], "16");

        let mut cfg = config();
        cfg.files.num_k = 0;
        let data_only = result(
            Test::ALL[..6]
                .iter()
                .map(|&t| metric(t, 100.0, 1000))
                .collect(),
        );
        let fields: Vec<String> = csv_line(&cfg, &data_only)
            .split(',')
            .map(String::from)
            .collect();
        assert!(fields[21..38].iter().all(|f| f.is_empty()), "{fields:?}");
        assert_eq!(fields[38], "1us");
    }

    #[test]
    fn file_descriptors_sit_under_their_header_names() {
        let mut cfg = config();
        cfg.files = FileTestConfig {
            num_k: 4,
            kind: FileKind::Sized {
                max: 4096,
                min: 1024,
            },
            dirs: 2,
            chunk: 16384,
        };
        cfg.chunk = 16384;
        let fields: Vec<String> = csv_line(&cfg, &full_result())
            .split(',')
            .map(String::from)
            .collect();
        assert_eq!(&fields[21..26], ["4", "4096", "1024", "2", "16k"]);
        assert_eq!(fields[6], "16k");
        let mut links = config();
        links.files.kind = FileKind::SymLinks;
        let fields: Vec<String> = csv_line(&links, &full_result())
            .split(',')
            .map(String::from)
            .collect();
        assert_eq!(&fields[22..24], ["symlink", ""]);
    }

    #[test]
    fn table_keeps_80_columns_and_bonnie_units() {
        let text = text_report(&config(), &full_result());
        for line in text.lines().filter(|l| !l.starts_with("Note")) {
            assert!(line.len() <= 80, "{line:?} is {} wide", line.len());
        }
        let row = text.lines().nth(3).unwrap();
        assert_eq!(
            row,
            "box              2G 2560k  42  477m  42  1.2g  42 3993k  42  3.8g  42 12518  42"
        );
        let files = text.lines().nth(8).unwrap();
        assert_eq!(
            files,
            "                 16  112k  42  650k  42 33121  42    98  42     5  42  126k  42"
        );
        assert!(!text.contains("+++"));
    }

    #[test]
    fn labels_keep_non_defaults() {
        let mut cfg = config();
        cfg.file_size_mib = 256;
        cfg.chunk = 16384;
        cfg.seeks = 1000;
        cfg.seekers = 3;
        assert_eq!(data_label(&cfg), "256M:16k::1000:3");
        assert_eq!(
            row_label("averyveryverylongmachinename", "256M:16k::1000:3"),
            "av 256M:16k::1000:3"
        );
        cfg.files = FileTestConfig {
            num_k: 64,
            kind: FileKind::Sized {
                max: 4096,
                min: 1024,
            },
            dirs: 4,
            chunk: 8192,
        };
        assert_eq!(file_label(&cfg), "64:4096:1024/4");
    }
}
