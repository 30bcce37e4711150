//! A configurations file's sweep: which matrix keys each `[[config]]`
//! uses, how many configurations and how much text that makes (refused
//! past the caps before anything is expanded), and its combinations, one
//! at a time.
use std::collections::{BTreeMap, HashSet};

use super::Entry;

/// The most configurations one file makes, its matrix expanded (as
/// vdbench caps the runs its for-loops make): a few lines of matrix can
/// ask for millions, or more than a number holds.
pub const MAX_CONFIGURATIONS: usize = 10_000;

/// The most text the configurations of one file may hold together once
/// expanded (an estimate from above: each placeholder counted at its
/// widest value): a long line swept over many values would otherwise
/// make gigabytes of a file under the size limit.
pub const MAX_EXPANDED_BYTES: usize = 64 << 20;

/// What one configuration costs besides its text (the struct, its
/// vectors), for [`MAX_EXPANDED_BYTES`].
const CONFIG_OVERHEAD: usize = 512;

/// What each of its parameters costs besides its text (a map entry of
/// two strings).
const PARAMETER_OVERHEAD: usize = 96;

/// An entry and the matrix keys it sweeps over (those its texts use, and
/// only those), found in one pass over its texts.
pub(super) struct Sweep<'a> {
    pub(super) entry: &'a Entry,
    keys: BTreeMap<&'a str, &'a [String]>,
    /// How many configurations it makes; None: more than a usize holds.
    count: Option<usize>,
    /// The most text one of its configurations can hold.
    bytes: usize,
}

impl<'a> Sweep<'a> {
    pub(super) fn of(entry: &'a Entry, matrix: &'a BTreeMap<String, Vec<String>>) -> Sweep<'a> {
        let widest = |values: &[String]| values.iter().map(String::len).max().unwrap_or(0);
        let mut keys = BTreeMap::new();
        let mut bytes = CONFIG_OVERHEAD;
        for text in entry.texts() {
            bytes = bytes.saturating_add(text.len());
            for key in placeholders(text) {
                if let Some((key, values)) = matrix.get_key_value(key) {
                    // Each use is replaced by a value; the parameters
                    // hold the key and its value once more.
                    bytes = bytes.saturating_add(widest(values));
                    if keys.insert(key.as_str(), values.as_slice()).is_none() {
                        bytes =
                            bytes.saturating_add(key.len() + widest(values) + PARAMETER_OVERHEAD);
                    }
                }
            }
        }
        let count = keys
            .values()
            .try_fold(1usize, |count, values| count.checked_mul(values.len()));
        Sweep {
            entry,
            keys,
            count,
            bytes,
        }
    }

    /// Its name must hold every matrix key it uses, so that each of its
    /// configurations has a name of its own.
    pub(super) fn check_name(&self) -> anyhow::Result<()> {
        const SHOWN: usize = 8;
        let in_name: HashSet<&str> = placeholders(&self.entry.name).collect();
        let missing: Vec<&str> = self
            .keys
            .keys()
            .copied()
            .filter(|key| !in_name.contains(key))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let mut shown: Vec<String> = missing
            .iter()
            .take(SHOWN)
            .map(|key| format!("{{{key}}}"))
            .collect();
        if missing.len() > SHOWN {
            shown.push(format!("… {} in all", missing.len()));
        }
        anyhow::bail!(
            "configuration {:?}: its name must hold every matrix key it uses ({}), so that each configuration has a name of its own",
            self.entry.name,
            shown.join(", ")
        );
    }

    /// Every combination of the values of its keys, the last key's
    /// varying fastest (one empty one without keys); built one at a time,
    /// each once.
    pub(super) fn parameters(&self) -> impl Iterator<Item = BTreeMap<String, String>> + '_ {
        (0..self.count.unwrap_or(0)).map(|index| {
            let mut rest = index;
            let mut parameters = BTreeMap::new();
            for (&key, &values) in self.keys.iter().rev() {
                parameters.insert(key.to_string(), values[rest % values.len()].clone());
                rest /= values.len();
            }
            parameters
        })
    }

    /// `1000 × 1000 × 10`: the sizes of the keys it sweeps over (the
    /// first few of many).
    fn factors(&self) -> String {
        const SHOWN: usize = 8;
        let mut sizes: Vec<String> = self
            .keys
            .values()
            .take(SHOWN)
            .map(|values| values.len().to_string())
            .collect();
        if self.keys.len() > SHOWN {
            sizes.push(format!("… ({} keys)", self.keys.len()));
        }
        sizes.join(" × ")
    }
}

/// The keys of the `{…}` placeholders in `text`, as `substitute` reads
/// them.
fn placeholders(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let start = rest.find('{')?;
        let len = rest[start..].find('}')?;
        let key = &rest[start + 1..start + len];
        rest = &rest[start + len + 1..];
        Some(key)
    })
}

/// Refuses, before anything is expanded, a file that makes more than
/// [`MAX_CONFIGURATIONS`] configurations or more than
/// [`MAX_EXPANDED_BYTES`] of them; linear in the file.
pub(super) fn check_size(sweeps: &[Sweep]) -> anyhow::Result<()> {
    let total = sweeps.iter().try_fold(0usize, |total, sweep| {
        sweep.count.and_then(|count| total.checked_add(count))
    });
    // The first entry that makes the most (None, too many to count, is
    // the most).
    let Some(largest) = sweeps
        .iter()
        .rev()
        .max_by_key(|sweep| (sweep.count.is_none(), sweep.count))
    else {
        return Ok(());
    };
    if total.is_none_or(|total| total > MAX_CONFIGURATIONS) {
        let count = match total {
            Some(total) => total.to_string(),
            None => format!("more than {}", usize::MAX),
        };
        let others = match sweeps.len() - 1 {
            0 => String::new(),
            1 => ", and 1 other entry".into(),
            n => format!(", and {n} other entries"),
        };
        if largest.keys.is_empty() {
            anyhow::bail!(
                "the file makes {count} configurations ({} [[config]] tables); at most {MAX_CONFIGURATIONS}",
                sweeps.len()
            );
        }
        anyhow::bail!(
            "the matrix makes {count} configurations (entry {:?}: {}{others}); at most {MAX_CONFIGURATIONS}",
            largest.entry.name,
            largest.factors()
        );
    }
    let bytes = |sweep: &Sweep| {
        sweep
            .count
            .and_then(|count| count.checked_mul(sweep.bytes))
            .unwrap_or(usize::MAX)
    };
    let total = sweeps
        .iter()
        .fold(0usize, |total, sweep| total.saturating_add(bytes(sweep)));
    if total > MAX_EXPANDED_BYTES {
        let largest = sweeps
            .iter()
            .rev()
            .max_by_key(|sweep| bytes(sweep))
            .unwrap_or(largest);
        anyhow::bail!(
            "the matrix makes up to {} MiB of configurations (entry {:?}: {} configurations of up to {} bytes); at most {} MiB",
            total.div_ceil(1 << 20),
            largest.entry.name,
            largest.count.unwrap_or(usize::MAX),
            largest.bytes,
            MAX_EXPANDED_BYTES >> 20
        );
    }
    Ok(())
}
