//! Durations with units, and the clap value parsers every native size and
//! duration flag uses, so `2s`, `500ms`, `4k` and `1g` mean the same in
//! every subcommand. A bare duration is seconds; a bare size is bytes
//! (`crate::size`); only bonnie mode's `-s` keeps bonnie++'s MiB.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_checks_take_units() {
        assert!(time_arg("2s").is_ok() && time_arg("banana").is_err());
        assert!(size_arg("1m").is_ok() && size_arg("2s").is_err());
    }
}
