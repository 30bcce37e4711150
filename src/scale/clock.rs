//! How closely the ranks' clocks agree, read once at start-up. The
//! figures use the common clock (each rank's monotonic clock, zeroed as it
//! left the start-up barrier): its error is how far apart the ranks left
//! that barrier. Every rank reads both clocks as it leaves a few more
//! barriers; rank 0 compares the readings.
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::team::Team;

/// Barriers whose exit every rank reads: the least spread of several is
/// the clocks' own, not one late wake-up's.
const ROUNDS: usize = 8;

/// One rank's readings as it left each barrier: (common clock, wall
/// clock), seconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Readings {
    pub exits: Vec<(f64, f64)>,
}

/// This rank's readings; `common` turns an instant into common-clock
/// seconds.
pub fn read(team: &Team, common: impl Fn(Instant) -> f64) -> Readings {
    let exits = (0..ROUNDS)
        .map(|_| {
            team.barrier();
            let at = Instant::now();
            let wall = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            (common(at), wall)
        })
        .collect();
    Readings { exits }
}

/// The least spread (latest - earliest common-clock reading) at any one
/// barrier's exit: how closely the common clock agrees across ranks, the
/// network's latency included. None without readings from every rank.
pub fn spread(ranks: &[&Readings]) -> Option<f64> {
    let rounds = ranks.iter().map(|r| r.exits.len()).min()?;
    (0..rounds)
        .map(|round| {
            let times = ranks.iter().map(|r| r.exits[round].0);
            let latest = times.clone().fold(f64::NEG_INFINITY, f64::max);
            latest - times.fold(f64::INFINITY, f64::min)
        })
        .min_by(f64::total_cmp)
}

/// How far apart the ranks' wall clocks are: each rank's wall-clock time
/// at common-clock zero (the median over its readings), latest - earliest.
pub fn wall_skew(ranks: &[&Readings]) -> Option<f64> {
    let offsets: Vec<f64> = ranks
        .iter()
        .map(|r| median(r.exits.iter().map(|(common, wall)| wall - common).collect()))
        .collect::<Option<_>>()?;
    let latest = offsets.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(latest - offsets.iter().copied().fold(f64::INFINITY, f64::min))
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readings(offset: f64, wall_offset: f64, jitter: &[f64]) -> Readings {
        let exits = jitter
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let common = i as f64 * 0.001 + offset + j;
                (common, 1_700_000_000.0 + common + wall_offset)
            })
            .collect();
        Readings { exits }
    }

    /// A rank whose epoch is 2 ms late reads 2 ms more at every exit; a
    /// late wake-up in one round does not count.
    #[test]
    fn the_spread_is_the_closest_round_and_the_skew_the_wall_clocks() {
        let a = readings(0.0, 0.0, &[0.0, 0.0, 0.0]);
        let b = readings(0.002, 5.0, &[0.010, 0.0, 0.003]);
        let closest = spread(&[&a, &b]).unwrap();
        assert!((closest - 0.002).abs() < 1e-9, "{closest}");
        // b's wall clock is 5 s ahead, less the 2 ms its epoch was late.
        let skew = wall_skew(&[&a, &b]).unwrap();
        assert!((skew - 5.0).abs() < 0.01, "{skew}");
        assert_eq!(spread(&[&a, &Readings::default()]), None);
        assert_eq!(wall_skew(&[&a, &Readings::default()]), None);
    }
}
