//! Durations with units, and the clap value parsers every native size and
//! duration flag uses, so `2s`, `500ms`, `4k` and `1g` mean the same in
//! every subcommand. A bare duration is seconds; a bare size is bytes
//! (`crate::size`); only bonnie mode's `-s` keeps bonnie++'s MiB. And
//! counts said in words: ordinals (`1st`, `22nd`, `113th`).
use std::time::Duration;

use crate::error::usage;
use crate::size::parse_size;

/// Parses a time: `30` or `30s` (seconds), `500ms`, `10m` (minutes, as in
/// vdbench), `1h`; decimals allowed (`0.5s`).
pub fn parse_time(text: &str) -> anyhow::Result<Duration> {
    let trimmed = text.trim().to_ascii_lowercase();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let scale = match unit {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => {
            return usage(format!(
                "'{text}' is not a time (use e.g. 30, 30s, 500ms, 10m, 1h)"
            ));
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| crate::error::UsageError(format!("'{text}' is not a time (use e.g. 30s)")))?;
    let seconds = value * scale;
    if !seconds.is_finite() || seconds > 1e9 {
        return usage(format!("'{text}' is too long"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Clap's check of a `TIME` flag: the text if `parse_time` takes it. The
/// flag keeps its text because suites scale and merge flags as text; the
/// workload parses it with the same function.
pub fn time_arg(text: &str) -> Result<String, String> {
    parse_time(text)
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
}

/// Clap's check of a `SIZE` flag (a bare number is bytes).
pub fn size_arg(text: &str) -> Result<String, String> {
    parse_size(text, 1)
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
}

/// `n` as an ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 112th.
pub fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// "every write", "every 2nd write", "every 8th write": one in `n` of `what`.
pub fn every_nth(n: u64, what: &str) -> String {
    match n {
        1 => format!("every {what}"),
        n => format!("every {} {what}", ordinal(n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_checks_take_units() {
        assert!(time_arg("2s").is_ok() && time_arg("banana").is_err());
        assert!(size_arg("1m").is_ok() && size_arg("2s").is_err());
    }

    #[test]
    fn ordinals_take_the_suffix_english_gives_them() {
        let said: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112, 1003]
            .into_iter()
            .map(ordinal)
            .collect();
        assert_eq!(
            said,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd",
                "101st", "111th", "112th", "1003rd"
            ]
        );
        assert_eq!(every_nth(1, "write"), "every write");
        assert_eq!(every_nth(2, "write"), "every 2nd write");
        assert_eq!(every_nth(8, "write"), "every 8th write");
    }
}
