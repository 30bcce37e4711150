//! `{...}` placeholders in suite parameters, multiplied by `--scale`, so one
//! suite serves a quick try (`--scale 0.02`) and the seeds' full sizes
//! (`--scale 1`).
//!
//! - `{5000}`: a count, rounded, at least 1.
//! - `{0.5}`: a factor (has a decimal point), e.g. a tree `--scale`.
//! - `{1g}`, `{300m}`: a size, rounded to whole MiB (at least 1m); `{64k}`
//!   to whole KiB (at least 1k).
use crate::error::usage;
use crate::size::parse_size;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// `text` with every placeholder replaced.
pub fn apply(text: &str, factor: f64) -> anyhow::Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            return usage(format!("'{text}': '{{' without a closing '}}'"));
        };
        out.push_str(&rest[..open]);
        out.push_str(&scaled(&rest[open + 1..open + close], factor, text)?);
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn scaled(inner: &str, factor: f64, text: &str) -> anyhow::Result<String> {
    let inner = inner.trim();
    let bad = || {
        usage(format!(
            "'{text}': '{{{inner}}}' is not a number or size to scale"
        ))
    };
    if inner.is_empty() {
        return bad();
    }
    if let Ok(value) = inner.parse::<f64>() {
        return Ok(match inner.chars().all(|c| c.is_ascii_digit()) {
            true => ((value * factor).round() as u64).max(1).to_string(),
            false => format_factor(value * factor),
        });
    }
    let Ok(bytes) = parse_size(inner, 1) else {
        return bad();
    };
    let scaled = bytes as f64 * factor;
    Ok(match inner.ends_with(['k', 'K']) {
        true => format!("{}k", ((scaled / KIB as f64).round() as u64).max(1)),
        false => format!("{}m", ((scaled / MIB as f64).round() as u64).max(1)),
    })
}

/// A factor with up to 6 significant digits and no trailing zeros.
fn format_factor(value: f64) -> String {
    let text = format!("{value:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::apply;

    #[test]
    fn counts_sizes_and_factors_scale() {
        assert_eq!(apply("set number {5000}", 0.02).unwrap(), "set number 100");
        assert_eq!(apply("{1g}", 0.02).unwrap(), "20m");
        assert_eq!(apply("{1g}:{64k}", 0.5).unwrap(), "512m:32k");
        assert_eq!(apply("{1.0}", 0.02).unwrap(), "0.02");
        assert_eq!(apply("{0.5}", 3.0).unwrap(), "1.5");
        assert_eq!(apply("-n {16}", 1.0).unwrap(), "-n 16");
    }

    #[test]
    fn tiny_scales_keep_at_least_one_unit() {
        assert_eq!(apply("{10}", 0.001).unwrap(), "1");
        assert_eq!(apply("{100m}", 0.0001).unwrap(), "1m");
        assert_eq!(apply("{4k}", 0.01).unwrap(), "1k");
    }

    #[test]
    fn text_without_placeholders_is_unchanged() {
        assert_eq!(apply("--read 70", 0.5).unwrap(), "--read 70");
    }

    #[test]
    fn malformed_placeholders_are_refused() {
        for bad in ["{", "{}", "{x}", "{1q}", "a{b"] {
            assert!(apply(bad, 1.0).is_err(), "{bad}");
        }
    }
}
