//! The values of vdbench parameters: lists, `(lo-hi,step)` and `(lo-hi,d)`
//! ranges (counted before they are built, with overflow-safe arithmetic),
//! sizes, times, percentages, seek and transfer-size specs, open flags.
use std::time::Duration;

use super::parmfile::{Flags, MAX_RUNS};
use crate::error::{UsageError, usage};
use crate::size::parse_size;
use crate::workload::pattern::job::{
    Arrival, RATE_HINT, Seek, SyncFlag, XferSize, parse_time, rate_value,
};

/// `(a,b,c)` → [a, b, c]; `a` → [a].
pub(super) fn list(value: &str) -> Vec<String> {
    match value.strip_prefix('(').and_then(|v| v.strip_suffix(')')) {
        Some(inner) => inner.split(',').map(|s| s.trim().to_string()).collect(),
        None => vec![value.to_string()],
    }
}

/// The values of the numeric for-loop `key=value`; errors name both.
pub(super) fn loop_values(
    key: &str,
    value: &str,
    parse: impl Fn(&str) -> anyhow::Result<u64>,
) -> anyhow::Result<Vec<u64>> {
    number_list(value, parse).map_err(|e| UsageError(format!("{key}={value}: {e:#}")).into())
}

/// A numeric list, with vdbench's ranges: `(lo-hi,step)` and `(lo-hi,d)`
/// (doubling, or halving when lo > hi).
pub(super) fn number_list(
    value: &str,
    parse: impl Fn(&str) -> anyhow::Result<u64>,
) -> anyhow::Result<Vec<u64>> {
    let items = list(value);
    if let [range, step] = &items[..]
        && let Some((lo, hi)) = range.split_once('-')
    {
        let (lo, hi) = (parse(lo)?, parse(hi)?);
        return range_values(lo, hi, step, &parse);
    }
    items.iter().map(|v| parse(v)).collect()
}

pub(super) fn range_values(
    lo: u64,
    hi: u64,
    step: &str,
    parse: &impl Fn(&str) -> anyhow::Result<u64>,
) -> anyhow::Result<Vec<u64>> {
    if step.eq_ignore_ascii_case("d") {
        return doubling_values(lo, hi);
    }
    let step = parse(step)?;
    if step == 0 || hi < lo {
        return usage(format!(
            "range {lo}-{hi} with step {step}: give a rising range and a positive step"
        ));
    }
    let count = (hi - lo) / step + 1;
    if count > MAX_RUNS as u64 {
        return usage(format!(
            "range {lo}-{hi} with step {step} has {count} values, more than the {MAX_RUNS} runs fsbench makes of a file"
        ));
    }
    // Every value is at most hi, so none overflows.
    Ok((0..count).map(|i| lo + i * step).collect())
}

/// `(lo-hi,d)`: lo, doubled (or halved when lo > hi) until it reaches or
/// passes hi; at most 64 values, as a u64 doubles at most 63 times.
pub(super) fn doubling_values(lo: u64, hi: u64) -> anyhow::Result<Vec<u64>> {
    if lo == 0 {
        return usage("a doubling range cannot start at 0");
    }
    let mut values = vec![lo];
    let mut v = lo;
    while (lo < hi && v < hi) || (lo > hi && v > hi) {
        v = match lo < hi {
            true => v.checked_mul(2).ok_or_else(|| {
                UsageError(format!(
                    "range {lo}-{hi} doubles past the largest number fsbench takes"
                ))
            })?,
            false => v / 2,
        };
        values.push(v);
    }
    Ok(values)
}

pub(super) fn single<'a>(key: &str, value: &'a str) -> anyhow::Result<&'a str> {
    if value.starts_with('(') {
        return usage(format!("{key}={value}: a single value is expected here"));
    }
    Ok(value)
}

pub(super) fn name_value(key: &str, value: &str) -> anyhow::Result<String> {
    Ok(single(key, value)?.to_string())
}

/// `distribution=`: the inter-arrival times of a controlled rate.
pub(super) fn arrival_value(value: &str) -> anyhow::Result<Arrival> {
    match value.to_ascii_lowercase().as_str() {
        "exponential" => Ok(Arrival::Exponential),
        "uniform" => Ok(Arrival::Uniform),
        "deterministic" => Ok(Arrival::Fixed),
        _ => usage(format!(
            "distribution={value}: fsbench supports exponential, uniform and deterministic"
        )),
    }
}

pub(super) fn yes_no(key: &str, value: &str) -> anyhow::Result<bool> {
    match value.to_ascii_lowercase().as_str() {
        "yes" | "y" => Ok(true),
        "no" | "n" => Ok(false),
        _ => usage(format!(
            "{key}={value}: fsbench supports only {key}=yes or {key}=no"
        )),
    }
}

pub(super) fn size_value(key: &str, value: &str) -> anyhow::Result<u64> {
    parse_size(single(key, value)?, 1)
}

pub(super) fn count_value(key: &str, value: &str) -> anyhow::Result<u32> {
    single(key, value)?
        .parse()
        .map_err(|_| UsageError(format!("{key}={value}: not a whole number")).into())
}

pub(super) fn time_value(key: &str, value: &str) -> anyhow::Result<Duration> {
    parse_time(single(key, value)?)
}

pub(super) fn pct_value(key: &str, value: &str) -> anyhow::Result<f64> {
    let pct: f64 = single(key, value)?
        .parse()
        .map_err(|_| UsageError(format!("{key}={value}: not a number")))?;
    if !(0.0..=100.0).contains(&pct) {
        return usage(format!("{key}={value}: use 0 to 100"));
    }
    Ok(pct)
}

pub(super) fn seek_value(value: &str) -> anyhow::Result<Seek> {
    match value.to_ascii_lowercase().as_str() {
        "random" => Ok(Seek::Percent(100.0)),
        "seq" | "sequential" => Ok(Seek::Percent(0.0)),
        "eof" | "-1" => Ok(Seek::Eof),
        other if other.starts_with("poisson") || other.starts_with("(poisson") => {
            usage(format!("seekpct={value}: poisson seeks are not supported"))
        }
        _ => pct_value("seekpct", value).map(Seek::Percent),
    }
}

/// `4k` or a distribution `(4k,30,64k,70)`; `(min,max,align)` is refused.
pub(super) fn xfer_value(value: &str) -> anyhow::Result<XferSize> {
    let items = list(value);
    match items.len() {
        1 => Ok(XferSize::Fixed(parse_size(&items[0], 1)?)),
        n if n % 2 == 0 => items
            .chunks(2)
            .map(|pair| {
                let pct = pct_value("xfersize", &pair[1])?;
                Ok((parse_size(&pair[0], 1)?, pct))
            })
            .collect::<anyhow::Result<_>>()
            .map(XferSize::Mix),
        _ => usage(format!(
            "xfersize={value}: the (min,max,align) form is not supported; give one size or (size,pct,...) pairs"
        )),
    }
}

pub(super) fn rates_value(value: &str) -> anyhow::Result<Vec<Option<f64>>> {
    list(value)
        .iter()
        .map(|item| match item.to_ascii_lowercase().as_str() {
            "max" => Ok(None),
            "curve" => usage("iorate=curve is not supported (give rates or max)"),
            text => match rate_value(text) {
                Some(rate) => Ok(Some(rate)),
                None => usage(format!("iorate={item}: {RATE_HINT}")),
            },
        })
        .collect()
}

pub(super) fn flags_value(value: &str) -> anyhow::Result<Flags> {
    let mut flags = Flags::default();
    for item in list(value) {
        match item.to_ascii_lowercase().as_str() {
            "o_direct" | "directio" => flags.direct = true,
            // vdbench opens all three as O_DSYNC on Linux.
            "o_sync" | "o_dsync" | "o_rsync" => flags.sync = Some(SyncFlag::Dsync),
            _ => {
                return usage(format!(
                    "openflags={item} is not supported (use o_direct, directio, o_sync, o_dsync, o_rsync)"
                ));
            }
        }
    }
    Ok(flags)
}
