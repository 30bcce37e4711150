//! Human sizes: `4G`, `512k`, `1.5GiB`, `300M`, `4096`. Suffixes are binary
//! (k = 1024), as in every storage tool users know (dd, fio, bonnie++).
use crate::error::usage;

/// Parses a byte count; `default_unit` multiplies a bare number (bonnie++'s
/// `-s 300` means 300 MiB, fio's `bs=4096` means bytes).
pub fn parse_size(text: &str, default_unit: u64) -> anyhow::Result<u64> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, suffix) = trimmed.split_at(split);
    if number.is_empty() {
        return usage(format!(
            "'{text}' is not a size (expected e.g. 512k, 4G, 300M)"
        ));
    }
    let multiplier = match suffix_multiplier(suffix) {
        Some(0) => default_unit,
        Some(m) => m,
        None => {
            return usage(format!(
                "'{text}': unknown size suffix '{suffix}' (use k, M, G or T)"
            ));
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| crate::error::UsageError(format!("'{text}' is not a size")))?;
    let bytes = value * multiplier as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return usage(format!("'{text}' is too large"));
    }
    Ok(bytes.round() as u64)
}

/// Parses a link speed as network people write it, in bits per second
/// with decimal prefixes (`1gbit`, `100mbit`, `2.5Gbit/s`, as tc takes
/// them), into bytes per second.
pub fn parse_bit_rate(text: &str) -> anyhow::Result<u64> {
    let lower = text.trim().to_ascii_lowercase();
    let stem = lower.strip_suffix("/s").unwrap_or(&lower);
    let refuse = || {
        usage(format!(
            "'{text}' is not a link speed (expected e.g. 1gbit, 100mbit, 25gbit)"
        ))
    };
    let Some(stem) = stem.strip_suffix("bit") else {
        return refuse();
    };
    let (number, prefix) = match stem.char_indices().last() {
        Some((at, c)) if c.is_ascii_alphabetic() => (&stem[..at], Some(c)),
        _ => (stem, None),
    };
    let multiplier = match prefix {
        None => 1.0,
        Some('k') => 1e3,
        Some('m') => 1e6,
        Some('g') => 1e9,
        Some('t') => 1e12,
        Some(_) => return refuse(),
    };
    let bits = match number.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && n > 0.0 => n * multiplier,
        _ => return refuse(),
    };
    let bytes = (bits / 8.0).round();
    if !(1.0..u64::MAX as f64).contains(&bytes) {
        return refuse();
    }
    Ok(bytes as u64)
}

/// 0 means "no suffix": the caller's default unit applies.
fn suffix_multiplier(suffix: &str) -> Option<u64> {
    let lower = suffix.to_ascii_lowercase();
    let stem = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    Some(match stem {
        "" if lower.is_empty() => 0,
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return None,
    })
}

/// Formats bytes with a binary unit and one decimal: `1.5 GiB`, `512.0 KiB`.
pub fn format_bytes(bytes: u64) -> String {
    match binary_unit(bytes) {
        (_, "B") => format!("{bytes} B"),
        (size, unit) => format!("{:.1} {unit}", bytes as f64 / size),
    }
}

/// Part of an amount in the amount's unit, for progress: `3.2/16.0 GiB`.
pub fn format_bytes_of(done: u64, total: u64) -> String {
    match binary_unit(total) {
        (_, "B") => format!("{done}/{total} B"),
        (size, unit) => format!(
            "{:.1}/{:.1} {unit}",
            done as f64 / size,
            total as f64 / size
        ),
    }
}

/// The largest binary unit `bytes` has at least one of (B below 1 KiB),
/// with its size in bytes.
fn binary_unit(bytes: u64) -> (f64, &'static str) {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut size = 1.0;
    let mut unit = 0;
    while bytes as f64 >= size * 1024.0 && unit + 1 < UNITS.len() {
        size *= 1024.0;
        unit += 1;
    }
    (size, UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_speeds_are_decimal_bits_per_second() {
        assert_eq!(parse_bit_rate("1gbit").unwrap(), 125_000_000);
        assert_eq!(parse_bit_rate("100mbit").unwrap(), 12_500_000);
        assert_eq!(parse_bit_rate("2.5Gbit/s").unwrap(), 312_500_000);
        assert_eq!(parse_bit_rate("8000bit").unwrap(), 1000);
        for bad in [
            "1g",
            "fast",
            "0gbit",
            "-1gbit",
            "1xbit",
            "bit",
            "1e400gbit",
            "",
        ] {
            let e = parse_bit_rate(bad).unwrap_err().to_string();
            assert!(e.contains("is not a link speed"), "{bad}: {e}");
        }
    }

    #[test]
    fn parses_suffixes_as_binary_units() {
        assert_eq!(parse_size("512k", 1).unwrap(), 512 * 1024);
        assert_eq!(parse_size("4G", 1).unwrap(), 4 << 30);
        assert_eq!(parse_size("1.5GiB", 1).unwrap(), 3 << 29);
        assert_eq!(parse_size("300", 1 << 20).unwrap(), 300 << 20);
        assert_eq!(parse_size("4096B", 1 << 20).unwrap(), 4096);
    }

    #[test]
    fn formats_a_part_in_the_unit_of_the_whole() {
        assert_eq!(format_bytes_of(3435973837, 16 << 30), "3.2/16.0 GiB");
        assert_eq!(format_bytes_of(0, 100), "0/100 B");
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["banana", "", "12x", "k", "1.2.3M"] {
            assert!(parse_size(bad, 1).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn formats_bytes() {
        assert_eq!(format_bytes(100), "100 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(16 << 20), "16.0 MiB");
        assert_eq!(format_bytes(1023), "1023 B");
        assert_eq!(format_bytes(270_553_174_016), "252.0 GiB");
        assert_eq!(format_bytes(u64::MAX), "16.0 EiB");
    }
}
