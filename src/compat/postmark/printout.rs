//! PostMark's reports, in its 1.53 layout: the verbose report (`set report
//! verbose`) and the one-line terse report. The layout is PostMark's; the
//! numbers are not rounded the way PostMark rounds them: its times are
//! whole seconds from `time()` (0 counted as 1), its verbose rates are
//! truncated integers and its byte totals single-precision floats. Here
//! seconds have 3 decimals (from ns clocks), rates 2, and bytes are exact.
use std::fmt::Write;

use crate::workload::postmark::{Op, RunSummary};

const MIB: f64 = 1_048_576.0;
const KIB: f64 = 1024.0;

/// PostMark's `scalef`: megabytes above 1 MiB, else kilobytes (even below
/// 1 KiB), and `0.000000 bytes` for nothing.
pub fn scale_bytes(bytes: f64) -> String {
    if bytes / MIB > 1.0 {
        format!("{:.2} megabytes", bytes / MIB)
    } else if bytes != 0.0 {
        format!("{:.2} kilobytes", bytes / KIB)
    } else {
        format!("{bytes:.6} bytes")
    }
}

/// PostMark's `scale` (used by `show`): whole bytes below 1 KiB.
pub fn scale_size(bytes: u32) -> String {
    let value = f64::from(bytes);
    if value >= MIB {
        format!("{:.2} megabytes", value / MIB)
    } else if value >= KIB {
        format!("{:.2} kilobytes", value / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// The figures both reports print, with PostMark's names: E, Tt, Ic, Id
/// in seconds and the counts.
struct Printed {
    total_s: f64,
    transactions_s: f64,
    creation_s: f64,
    deletion_s: f64,
    transactions: f64,
    created: f64,
    created_alone: f64,
    read: f64,
    appended: f64,
    deleted: f64,
    deleted_alone: f64,
    bytes_read: f64,
    bytes_written: f64,
}

impl Printed {
    fn of(summary: &RunSummary) -> Self {
        let c = &summary.counts;
        let t = &summary.timing;
        Printed {
            total_s: t.total.elapsed.as_secs_f64(),
            transactions_s: t.transactions.elapsed.as_secs_f64(),
            creation_s: t.creation.elapsed.as_secs_f64(),
            deletion_s: t.deletion.elapsed.as_secs_f64(),
            transactions: c.transactions as f64,
            created: c.created() as f64,
            created_alone: c.of(Op::CreateAlone) as f64,
            read: c.of(Op::Read) as f64,
            appended: c.of(Op::Append) as f64,
            deleted: c.deleted() as f64,
            deleted_alone: c.of(Op::DeleteAlone) as f64,
            bytes_read: c.bytes_read as f64,
            bytes_written: c.bytes_written as f64,
        }
    }

    fn created_mixed(&self) -> f64 {
        self.created - self.created_alone
    }

    fn deleted_mixed(&self) -> f64 {
        self.deleted - self.deleted_alone
    }
}

/// `count / seconds`, 0 for an interval too short to measure.
fn rate(count: f64, seconds: f64) -> f64 {
    crate::measure::phase::per_second(count, seconds)
}

impl Printed {
    /// The eleven rates of the terse report, in its order, each over the
    /// interval PostMark divides it by.
    fn rates(&self) -> [f64; 11] {
        let (e, tt) = (self.total_s, self.transactions_s);
        [
            rate(self.transactions, tt),
            rate(self.created, e),
            rate(self.created_alone, self.creation_s),
            rate(self.created_mixed(), tt),
            rate(self.read, tt),
            rate(self.appended, tt),
            rate(self.deleted, e),
            rate(self.deleted_alone, self.deletion_s),
            rate(self.deleted_mixed(), tt),
            rate(self.bytes_read, e),
            rate(self.bytes_written, e),
        ]
    }
}

/// The verbose report, ending with a note when the run ran out of files
/// (PostMark prints no report then).
pub fn verbose(summary: &RunSummary) -> String {
    let f = Printed::of(summary);
    let [
        transactions,
        created,
        created_alone,
        created_mixed,
        read,
        appended,
        deleted,
        deleted_alone,
        deleted_mixed,
        bytes_read,
        bytes_written,
    ] = f.rates();
    let mut text = format!(
        "Time:\n\t{:.3} seconds total\n\t{:.3} seconds of transactions ({transactions:.2} per second)\n\nFiles:\n",
        f.total_s, f.transactions_s
    );
    let files = [
        ("\t", f.created, " created", created),
        (
            "\t\tCreation alone: ",
            f.created_alone,
            " files",
            created_alone,
        ),
        (
            "\t\tMixed with transactions: ",
            f.created_mixed(),
            " files",
            created_mixed,
        ),
        ("\t", f.read, " read", read),
        ("\t", f.appended, " appended", appended),
        ("\t", f.deleted, " deleted", deleted),
        (
            "\t\tDeletion alone: ",
            f.deleted_alone,
            " files",
            deleted_alone,
        ),
        (
            "\t\tMixed with transactions: ",
            f.deleted_mixed(),
            " files",
            deleted_mixed,
        ),
    ];
    // Writing to a String cannot fail.
    for (before, count, after, rate) in files {
        let _ = writeln!(text, "{before}{count}{after} ({rate:.2} per second)");
    }
    let _ = write!(
        text,
        "\nData:\n\t{} read ({} per second)\n\t{} written ({} per second)\n",
        scale_bytes(f.bytes_read),
        scale_bytes(bytes_read),
        scale_bytes(f.bytes_written),
        scale_bytes(bytes_written),
    );
    if summary.out_of_files {
        let _ = writeln!(
            text,
            "\nOut of files: {} of {} transactions ran.",
            summary.counts.transactions,
            summary.configured_transactions()
        );
    }
    text
}

/// The terse report: `E Tt T/Tt C/E N/Ic (C-N)/Tt Rd/Tt A/Tt D/E Dz/Id
/// (D-Dz)/Tt BR/E BW/E` (PostMark 1.53's fields; bytes per second
/// unscaled).
pub fn terse(summary: &RunSummary) -> String {
    let f = Printed::of(summary);
    let mut line = format!("{:.3} {:.3}", f.total_s, f.transactions_s);
    for value in f.rates() {
        let _ = write!(line, " {value:.2}");
    }
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::postmark::RunSummary;

    /// PostMark's default run (764 created, 243 read, ...), with 0.5 s of
    /// creation, 2 s of transactions and 0.5 s of deletion.
    fn default_run() -> RunSummary {
        RunSummary::example([500, 264, 243, 257, 236, 528], 1_430_770, 4_662_068, 500)
    }

    #[test]
    fn verbose_has_postmarks_layout_with_exact_figures() {
        let expected = "Time:\n\
            \t3.000 seconds total\n\
            \t2.000 seconds of transactions (250.00 per second)\n\
            \n\
            Files:\n\
            \t764 created (254.67 per second)\n\
            \t\tCreation alone: 500 files (1000.00 per second)\n\
            \t\tMixed with transactions: 264 files (132.00 per second)\n\
            \t243 read (121.50 per second)\n\
            \t257 appended (128.50 per second)\n\
            \t764 deleted (254.67 per second)\n\
            \t\tDeletion alone: 528 files (1056.00 per second)\n\
            \t\tMixed with transactions: 236 files (118.00 per second)\n\
            \n\
            Data:\n\
            \t1.36 megabytes read (465.75 kilobytes per second)\n\
            \t4.45 megabytes written (1.48 megabytes per second)\n";
        assert_eq!(verbose(&default_run()), expected);
    }

    #[test]
    fn terse_is_one_line_of_thirteen_fields() {
        assert_eq!(
            terse(&default_run()),
            "3.000 2.000 250.00 254.67 1000.00 132.00 121.50 128.50 254.67 1056.00 118.00 \
             476923.33 1554022.67\n"
        );
    }

    #[test]
    fn out_of_files_is_said_after_the_report() {
        let mut run = default_run();
        run.out_of_files = true;
        run.counts.transactions = 120;
        assert!(verbose(&run).ends_with("\nOut of files: 120 of 500 transactions ran.\n"));
    }

    #[test]
    fn scales_like_postmark() {
        assert_eq!(scale_bytes(703.0), "0.69 kilobytes");
        assert_eq!(scale_bytes(0.0), "0.000000 bytes");
        assert_eq!(scale_bytes(1_430_770.0), "1.36 megabytes");
        assert_eq!(scale_bytes(1_048_576.0), "1024.00 kilobytes");
        assert_eq!(scale_size(10_000), "9.77 kilobytes");
        assert_eq!(scale_size(512), "512 bytes");
        assert_eq!(scale_size(2_000_000), "1.91 megabytes");
    }
}
