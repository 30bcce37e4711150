//! One footnote per kind of flag. A report of forty figures measured on a
//! busy host says so once, with how many and the range of their figures
//! ("busy host in 33 of 40 measurements: other processes used 54–106 % of
//! the CPU capacity"), not forty times with another percentage; where most
//! figures are the machine's other work's, the line says to repeat on a
//! quiet host. A kind that flagged one figure keeps that figure's own text.
use crate::result::{Flag, Metric};

/// The flags of a summary's cells, per kind, as they are met.
#[derive(Default)]
pub(super) struct FlagNotes {
    kinds: Vec<Tally>,
    /// Repetitions of headline metrics in the summary: the "of 40".
    measured: usize,
}

/// One kind of flag: the first metric that raised it (its own text, where
/// it is the only one) and the figures of every headline repetition that
/// raised it.
struct Tally {
    flag: Flag,
    first: Metric,
    flagged: usize,
    figures: Vec<Figures>,
}

/// What a flagged repetition measured that its flag is about.
#[derive(Clone, Copy)]
struct Figures {
    /// The share (%) or factor the flag is about: CPU used by others, the
    /// device's share of the bytes, the bytes moved over fsbench's own.
    main: Option<f64>,
    /// The hypervisor's steal (%), for a busy host.
    steal: Option<f64>,
}

impl FlagNotes {
    /// Counts `repetitions` of a headline metric, flagged or not.
    pub(super) fn measured(&mut self, repetitions: usize) {
        self.measured += repetitions;
    }

    /// Records `flag` raised by `metrics` (a cell's flagged repetitions);
    /// `headline` says whether they count in "N of M".
    pub(super) fn raised(&mut self, flag: Flag, metrics: &[&Metric], headline: bool) {
        let Some(first) = metrics.first() else {
            return;
        };
        let tally = match self.kinds.iter().position(|t| t.flag == flag) {
            Some(i) => &mut self.kinds[i],
            None => {
                self.kinds.push(Tally {
                    flag,
                    first: (*first).clone(),
                    flagged: 0,
                    figures: Vec::new(),
                });
                self.kinds.last_mut().expect("just pushed")
            }
        };
        if headline {
            tally.flagged += metrics.len();
            tally
                .figures
                .extend(metrics.iter().map(|m| figures(flag, m)));
        }
    }

    /// The footnote of `flag`.
    pub(super) fn text(&self, flag: Flag) -> String {
        let Some(tally) = self.kinds.iter().find(|t| t.flag == flag) else {
            return flag.describe().to_string();
        };
        match tally.flagged {
            0 | 1 => tally.first.flag_text(flag),
            n => tallied(flag, n, self.measured, &tally.figures),
        }
    }
}

/// The figures of `metric` that its `flag` is about.
fn figures(flag: Flag, metric: &Metric) -> Figures {
    let device = metric.device.as_ref();
    let percent = |ratio: Option<f64>| ratio.map(|r| 100.0 * r);
    let main = device.and_then(|d| match flag {
        Flag::BusyHost => d.others_cpu_percent,
        Flag::Disturbed => d
            .own_io_bytes
            .filter(|&own| own > 0)
            .map(|own| (d.read_bytes + d.written_bytes) as f64 / own as f64),
        Flag::ServedFromCache => percent(d.lowest_read_ratio()),
        Flag::NotYetOnDevice | Flag::AbsorbedByCache => percent(d.lowest_write_ratio()),
        _ => None,
    });
    let steal = device
        .filter(|_| flag == Flag::BusyHost)
        .and_then(|d| d.steal_percent);
    Figures { main, steal }
}

/// "busy host in 33 of 40 measurements: other processes used 54–106 % of
/// the CPU capacity, the hypervisor stole 0–2 %: most figures were measured
/// on a busy machine; repeat on a quiet host".
fn tallied(flag: Flag, flagged: usize, measured: usize, figures: &[Figures]) -> String {
    let main = |unit: &str| range(figures.iter().filter_map(|f| f.main), unit);
    let count = format!("in {flagged} of {measured} measurements");
    let most = 2 * flagged > measured;
    match flag {
        Flag::BusyHost => {
            let stole = range(figures.iter().filter_map(|f| f.steal), " %")
                .map_or(String::new(), |s| format!(", the hypervisor stole {s}"));
            let used = main(" %").map_or(String::new(), |u| {
                format!(": other processes used {u} of the CPU capacity{stole}")
            });
            let advice = match most {
                true => "most figures were measured on a busy machine; repeat on a quiet host",
                false => "measured on a busy machine",
            };
            format!("busy host {count}{used}: {advice}")
        }
        Flag::Disturbed => {
            let times = main("×").map_or(String::new(), |t| {
                format!(": the devices moved {t} the bytes fsbench itself caused")
            });
            let advice = match most {
                true => "most figures include other processes' I/O; repeat on a quiet host",
                false => "other processes' I/O was measured with them",
            };
            format!("disturbed {count}{times}: {advice}")
        }
        Flag::ServedFromCache => format!(
            "served from the page cache {count}{}",
            main(" %").map_or(String::new(), |s| format!(
                ": the device read {s} of the bytes read"
            ))
        ),
        Flag::NotYetOnDevice => format!(
            "not yet on the device {count}: no sync{}",
            main(" %").map_or(String::new(), |s| format!(
                ", and the device wrote {s} of the bytes written"
            ))
        ),
        Flag::AbsorbedByCache => format!(
            "absorbed by the page cache {count}: synced, but the device wrote {} of the bytes \
             written (rewrites of the same blocks met in the page cache)",
            main(" %").unwrap_or_else(|| "under half".to_string())
        ),
        other => format!(
            "{} ({flagged} of {measured} measurements)",
            other.describe()
        ),
    }
}

/// "54–106 %", or "67 %" where every figure rounds alike; None without
/// figures.
fn range(values: impl Iterator<Item = f64>, unit: &str) -> Option<String> {
    let (low, high) = values.fold(None, |span: Option<(f64, f64)>, v| match span {
        None => Some((v, v)),
        Some((low, high)) => Some((low.min(v), high.max(v))),
    })?;
    let shown = |v: f64| match v < 10.0 && unit == "×" {
        true => format!("{v:.1}"),
        false => format!("{v:.0}"),
    };
    Some(match shown(low) == shown(high) {
        true => format!("{}{unit}", shown(low)),
        false => format!("{}–{}{unit}", shown(low), shown(high)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::DeviceEvidence;

    fn busy(others: f64) -> Metric {
        let mut metric = Metric::test("m", "MiB/s", crate::result::Direction::HigherIsBetter, 1.0);
        metric.flags = vec![Flag::BusyHost];
        metric.device = Some(DeviceEvidence {
            others_cpu_percent: Some(others),
            steal_percent: Some(1.0),
            ..DeviceEvidence::default()
        });
        metric
    }

    #[test]
    fn many_busy_figures_are_one_line_with_their_range_and_the_advice() {
        let mut notes = FlagNotes::default();
        let metrics: Vec<Metric> = [54.0, 106.0, 70.0].map(busy).into();
        notes.measured(4);
        for metric in &metrics {
            notes.raised(Flag::BusyHost, &[metric], true);
        }
        assert_eq!(
            notes.text(Flag::BusyHost),
            "busy host in 3 of 4 measurements: other processes used 54–106 % of the CPU \
             capacity, the hypervisor stole 1 %: most figures were measured on a busy machine; \
             repeat on a quiet host"
        );
    }

    #[test]
    fn a_few_busy_figures_are_not_told_to_repeat() {
        let mut notes = FlagNotes::default();
        let metrics: Vec<Metric> = [60.0, 65.0].map(busy).into();
        notes.measured(10);
        notes.raised(Flag::BusyHost, &[&metrics[0], &metrics[1]], true);
        let text = notes.text(Flag::BusyHost);
        assert!(
            text.starts_with("busy host in 2 of 10 measurements"),
            "{text}"
        );
        assert!(text.ends_with(": measured on a busy machine"), "{text}");
    }

    #[test]
    fn one_flagged_figure_keeps_its_own_text() {
        let mut notes = FlagNotes::default();
        let metric = busy(67.0);
        notes.measured(5);
        notes.raised(Flag::BusyHost, &[&metric], true);
        assert_eq!(notes.text(Flag::BusyHost), metric.flag_text(Flag::BusyHost));
    }

    #[test]
    fn details_do_not_count_but_give_a_text() {
        let mut notes = FlagNotes::default();
        let metric = busy(67.0);
        notes.raised(Flag::BusyHost, &[&metric, &metric], false);
        assert_eq!(notes.text(Flag::BusyHost), metric.flag_text(Flag::BusyHost));
    }
}
