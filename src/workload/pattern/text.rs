//! The text forms of a job's settings on the command line and in suites:
//! transfer sizes and mixes, seek percentages, I/O rates, steady-state
//! slopes.
use super::job::{RATE_HINT, rate_value};
use super::{Seek, XferSize};
use crate::error::{UsageError, usage};
use crate::size::parse_size;

/// `4k` or `4k:30,64k:70`.
pub fn parse_xfer(text: &str) -> anyhow::Result<XferSize> {
    if !text.contains(':') {
        return Ok(XferSize::Fixed(parse_size(text, 1)?));
    }
    text.split(',')
        .map(|item| {
            let Some((size, pct)) = item.split_once(':') else {
                return usage(format!(
                    "--xfersize {text}: write a mix as SIZE:PCT,SIZE:PCT (e.g. 4k:30,64k:70)"
                ));
            };
            let pct: f64 = pct.parse().map_err(|_| {
                UsageError(format!("--xfersize {text}: '{pct}' is not a percentage"))
            })?;
            Ok((parse_size(size, 1)?, pct))
        })
        .collect::<anyhow::Result<_>>()
        .map(XferSize::Mix)
}

pub fn parse_seek(text: &str) -> anyhow::Result<Seek> {
    match text.to_ascii_lowercase().as_str() {
        "seq" | "sequential" => Ok(Seek::Percent(0.0)),
        "random" => Ok(Seek::Percent(100.0)),
        "eof" => Ok(Seek::Eof),
        other => match other.parse::<f64>() {
            Ok(pct) => Ok(Seek::Percent(pct)),
            Err(_) => usage(format!(
                "--seek {text}: give a percentage, seq, random or eof"
            )),
        },
    }
}

pub fn parse_rate(text: Option<&str>) -> anyhow::Result<Option<f64>> {
    match text {
        None => Ok(None),
        Some(t) if t.eq_ignore_ascii_case("max") => Ok(None),
        Some(t) => match rate_value(t) {
            Some(rate) => Ok(Some(rate)),
            None => usage(format!("--rate {t}: {RATE_HINT}")),
        },
    }
}

/// `--until-steady=SLOPE`: a percentage, `%` optional (`5%`, `2.5`), as
/// a fraction.
pub fn parse_steady_slope(text: &str) -> anyhow::Result<f64> {
    let number = text.trim().trim_end_matches('%');
    match number.parse::<f64>() {
        Ok(pct) if pct > 0.0 && pct <= 100.0 => Ok(pct / 100.0),
        _ => usage(format!(
            "--until-steady={text}: give the steady state's slope limit as a percentage over 0 and at most 100 (e.g. --until-steady=5%)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_mixes_seeks_and_rates() {
        assert_eq!(parse_xfer("64k").unwrap(), XferSize::Fixed(65536));
        assert_eq!(
            parse_xfer("4k:30,64k:70").unwrap(),
            XferSize::Mix(vec![(4096, 30.0), (65536, 70.0)])
        );
        assert!(parse_xfer("4k:30,64k").is_err());
        assert_eq!(parse_seek("seq").unwrap(), Seek::Percent(0.0));
        assert_eq!(parse_seek("25").unwrap(), Seek::Percent(25.0));
        assert!(parse_seek("sometimes").is_err());
        assert_eq!(parse_rate(Some("max")).unwrap(), None);
        assert_eq!(parse_rate(Some("500")).unwrap(), Some(500.0));
        assert!(parse_rate(Some("fast")).is_err());
        assert_eq!(parse_steady_slope("5%").unwrap(), 0.05);
        assert_eq!(parse_steady_slope("10").unwrap(), 0.1);
        for bad in ["0", "-5%", "150%", "fast", "", "NaN"] {
            assert!(parse_steady_slope(bad).is_err(), "{bad}");
        }
    }
}
