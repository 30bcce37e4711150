//! The values of fio options: sizes with fio's suffixes and `kb_base`,
//! times, whole numbers, booleans, percentages, `bssplit` lists.
use std::time::Duration;

use crate::error::{UsageError, usage};
use crate::workload::pattern::job::{XferSize, parse_time};

/// A size as fio reads it: a number, then `k`/`m`/`g`/`t`/`p` with an
/// optional `b`, or `kib`-style. With `kb_base=1024` (fio's default)
/// both mean powers of 1024; with `kb_base=1000`, `kb` means 1000 and
/// `kib` 1024.
pub(super) fn size(value: &str, kb_base: u64) -> anyhow::Result<u64> {
    let text = value.trim().to_ascii_lowercase();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| UsageError(format!("'{value}' is not a size (use e.g. 4k, 64m, 1g)")))?;
    let (power, binary) = match suffix {
        "" | "b" => (0, false),
        _ => {
            let rest = suffix.strip_suffix('b').unwrap_or(suffix);
            let (letter, binary) = match rest.strip_suffix('i') {
                Some(letter) => (letter, true),
                None => (rest, false),
            };
            match ["k", "m", "g", "t", "p"].iter().position(|l| *l == letter) {
                Some(index) => (index as u32 + 1, binary),
                None => {
                    return usage(format!(
                        "'{value}' is not a size (fio's suffixes: k, m, g, t, p, with b or ib)"
                    ));
                }
            }
        }
    };
    let base = if binary { 1024 } else { kb_base };
    base.checked_pow(power)
        .and_then(|unit| number.checked_mul(unit))
        .ok_or_else(|| UsageError(format!("'{value}' is too large")).into())
}

/// A time; a bare number is seconds (fio's default unit for runtime,
/// ramp_time and startdelay). fio's `us` is refused by `parse_time`.
pub(super) fn time(value: &str) -> anyhow::Result<Duration> {
    parse_time(value)
}

pub(super) fn count(value: &str) -> anyhow::Result<u32> {
    value
        .trim()
        .parse()
        .map_err(|_| UsageError(format!("'{value}' is not a whole number")).into())
}

/// fio's booleans: a bare key is on; 0/1, also yes/no, true/false.
pub(super) fn flag(value: Option<&str>) -> anyhow::Result<bool> {
    match value.map(str::to_ascii_lowercase).as_deref() {
        None | Some("1" | "yes" | "true" | "on") => Ok(true),
        Some("0" | "no" | "false" | "off") => Ok(false),
        Some(other) => usage(format!("'{other}' is not 0 or 1")),
    }
}

pub(super) fn percent(value: &str) -> anyhow::Result<f64> {
    let pct = count(value)?;
    if pct > 100 {
        return usage(format!("{pct}: use 0 to 100"));
    }
    Ok(f64::from(pct))
}

/// `bssplit=4k/10:64k/50:1m/` — sizes and shares; an empty share (or 0,
/// which fio reads as empty) takes what the others leave, split evenly
/// (fio's rule). A `,` (separate read and write mixes) is refused.
pub(super) fn bssplit(value: &str, kb_base: u64) -> anyhow::Result<XferSize> {
    if value.contains(',') {
        return usage(format!(
            "'{value}': separate read and write mixes are not supported; give one mix"
        ));
    }
    let mut pairs = Vec::new();
    let mut open = Vec::new();
    for item in value.split(':') {
        let (bs, share) = item.split_once('/').unwrap_or((item, ""));
        let pct = match share {
            "" | "0" => {
                open.push(pairs.len());
                0.0
            }
            share => percent(share)?,
        };
        pairs.push((size(bs, kb_base)?, pct));
    }
    let given: f64 = pairs.iter().map(|(_, pct)| pct).sum();
    if !open.is_empty() {
        let each = (100.0 - given).max(0.0) / open.len() as f64;
        for index in open {
            pairs[index].1 = each;
        }
    }
    Ok(XferSize::Mix(pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio_and_kb_base() {
        let cases = [
            ("4096", 1024, 4096),
            ("4k", 1024, 4096),
            ("4K", 1024, 4096),
            ("4kb", 1024, 4096),
            ("4kib", 1024, 4096),
            ("22m", 1024, 22 << 20),
            ("1g", 1024, 1 << 30),
            ("2t", 1024, 2 << 40),
            ("4k", 1000, 4000),
            ("4kb", 1000, 4000),
            ("4kib", 1000, 4096),
            ("1MiB", 1000, 1 << 20),
        ];
        for (text, base, bytes) in cases {
            assert_eq!(size(text, base).unwrap(), bytes, "{text} base {base}");
        }
        for bad in ["", "k", "4x", "1.5m", "4kk", "99999999999p"] {
            assert!(size(bad, 1024).is_err(), "{bad}");
        }
    }

    #[test]
    fn bssplit_fills_open_shares() {
        assert_eq!(
            bssplit("4k/10:64k/50:1m/", 1024).unwrap(),
            XferSize::Mix(vec![(4096, 10.0), (65536, 50.0), (1 << 20, 40.0)])
        );
        assert_eq!(
            bssplit("4k/0:8k/50", 1024).unwrap(),
            XferSize::Mix(vec![(4096, 50.0), (8192, 50.0)]),
            "fio reads a 0 share as an empty one"
        );
        assert!(bssplit("4k/50,8k/100", 1024).is_err());
        assert!(bssplit("4k/101", 1024).is_err());
    }

    #[test]
    fn flags_and_counts() {
        assert!(flag(None).unwrap() && flag(Some("1")).unwrap());
        assert!(!flag(Some("0")).unwrap());
        assert!(flag(Some("2")).is_err());
        assert!(count("-1").is_err());
        assert_eq!(time("1m").unwrap(), Duration::from_secs(60));
    }
}
