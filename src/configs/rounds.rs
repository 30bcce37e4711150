//! Measuring configurations: which can be built side by side (rounds),
//! when each is built and taken down, and what the result records of it.
//!
//! Configurations on images of their own coexist, so their repetitions are
//! interleaved by the driver like any targets'. Configurations sharing a
//! device, a source, or what setup commands make (a pool's name) cannot be
//! mounted at once: they go in successive rounds, one of each in a round,
//! every round built, measured over all repetitions, and taken down before
//! the next. With --fresh every repetition builds each round anew. A
//! configuration that cannot be built ends the run, unless --keep-going
//! leaves it out.
//!
//! Under MPI (`check_across_hosts` lets only configurations whose setup
//! commands change a server through): rank 0 alone builds a round and
//! takes it down; every rank waits for it, learns which configurations
//! were built, and measures their paths, which every host sees.
use std::ops::Range;
use std::path::PathBuf;

use super::Config;
use super::build::Builds;
use super::place::Place;
use crate::driver::Remount;
use crate::result::built::Built;
use crate::scale;

/// What measures the targets a round built (the driver, run by `fsbench
/// run` with its suite).
pub trait Measure {
    /// Measures `targets` (name, path) over `repetitions`, the references
    /// with them when `with_references`; the stopping rule's reason if it
    /// ended the repetitions early.
    /// `remount` unmounts and mounts a target of the round again, by name.
    fn measure(
        &mut self,
        targets: &[(String, PathBuf)],
        repetitions: Range<u32>,
        with_references: bool,
        remount: &Remount<'_>,
    ) -> anyhow::Result<Option<String>>;

    /// After a whole repetition of a --fresh run: the stopping rule's
    /// reason to stop, if it has one (the same on every MPI rank).
    fn stop_after_repetition(&mut self) -> anyhow::Result<Option<String>>;

    /// The most bytes a target holds at once while it is measured.
    fn planned_bytes(&self) -> anyhow::Result<u64>;
}

/// How the configurations are built over the run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Building {
    /// Every repetition on file systems built for it (`--fresh`).
    pub fresh: bool,
    /// A configuration that cannot be built is left out and the others
    /// measured (`--keep-going`), instead of ending the run.
    pub keep_going: bool,
}

/// What was built (with the time each took), what failed, and why the
/// repetitions stopped early, if they did.
#[derive(Debug, Default)]
pub struct BuildLog {
    pub built: Vec<(String, Built)>,
    /// Configurations that could not be built, with why (`--keep-going`:
    /// each said when it happened; the others were measured).
    pub failed: Vec<(String, String)>,
    pub stopped: Option<String>,
}

impl BuildLog {
    /// How long building took, and what share of the run's wall time.
    pub fn timing_line(&self, wall: std::time::Duration) -> String {
        let builds: u32 = self.built.iter().map(|(_, b)| b.builds).sum();
        format!(
            "fsbench: {builds} builds of {} configurations took {:.1} s ({:.1} % of the run's {:.1} s)\n",
            self.built.len(),
            self.build_seconds(),
            100.0 * self.build_seconds() / wall.as_secs_f64().max(1e-9),
            wall.as_secs_f64()
        )
    }

    /// The time spent building and taking down, over every configuration.
    pub fn build_seconds(&self) -> f64 {
        // A fold from +0.0: an empty f64 sum is -0.0, shown as "-0.0 s".
        self.built
            .iter()
            .fold(0.0, |sum, (_, b)| sum + b.build_seconds)
    }

    /// Adds a round's records: a configuration built again (--fresh)
    /// counts its builds and their time.
    fn absorb(&mut self, records: Vec<(String, Built)>) {
        for (name, record) in records {
            match self.built.iter_mut().find(|(n, _)| *n == name) {
                Some((_, kept)) => {
                    kept.builds += record.builds;
                    kept.build_seconds += record.build_seconds;
                    kept.commands = record.commands;
                }
                None => self.built.push((name, record)),
            }
        }
    }
}

/// Builds, measures and takes down every configuration, round by round
/// (see the module's text), over `repetitions`, as `building` says. What
/// was built so far is in `outcome` even when it returns an error.
pub fn run(
    configs: &[Config],
    place: &Place,
    building: Building,
    repetitions: Range<u32>,
    run_id: &str,
    measure: &mut dyn Measure,
    outcome: &mut BuildLog,
) -> anyhow::Result<()> {
    let rounds = rounds(configs, place);
    let planned = measure.planned_bytes()?;
    let mut count = 0;
    let mut build_round = |round: &[usize]| {
        count += 1;
        let chosen: Vec<&Config> = round.iter().map(|&i| &configs[i]).collect();
        let id = format!("{run_id}-b{count}");
        Round::build(&chosen, place, planned, &id, building.keep_going)
    };
    if !building.fresh {
        for (index, round) in rounds.iter().enumerate() {
            let built = build_round(round)?;
            let ran = measure_built(&built, measure, repetitions.clone(), index == 0);
            let ran = close(built, outcome, ran)?;
            outcome.stopped = ran.or(outcome.stopped.take());
        }
        return Ok(());
    }
    for repetition in repetitions {
        for (index, round) in rounds.iter().enumerate() {
            let built = build_round(round)?;
            let ran = measure_built(&built, measure, repetition..repetition + 1, index == 0);
            close(built, outcome, ran)?;
        }
        if let Some(reason) = measure.stop_after_repetition()? {
            outcome.stopped = Some(reason);
            break;
        }
    }
    Ok(())
}

/// The images of a round are sparse: they grow as the workloads write, so
/// the work directory must have room for what every one of them will hold
/// (a full disk under a loop device shows as I/O errors inside it).
fn check_room_for_images(round: &[&Config], place: &Place, planned: u64) -> anyhow::Result<()> {
    let images = round.iter().filter(|c| c.on_image(place)).count() as u64;
    if images == 0 {
        return Ok(());
    }
    crate::storage::check_room_to_write(
        "--images",
        &place.work_dir,
        images.saturating_mul(planned.min(place.image_size)),
        images,
        "use a smaller --image-size or --scale",
    )
}

/// A round as this rank has it: what rank 0 built, and the targets.
struct Round {
    /// The configurations built (alone: by this process); None on the
    /// other MPI ranks.
    builds: Option<Builds>,
    /// The configurations built, as targets (name, path), on every rank.
    targets: Vec<(String, PathBuf)>,
}

impl Round {
    /// Rank 0 builds `chosen` (their setup commands run there alone);
    /// every rank then learns which were built, and under MPI checks that
    /// it sees each one's path. `planned`: the most bytes a target holds;
    /// `keep_going`: as `Builds::create` takes it.
    fn build(
        chosen: &[&Config],
        place: &Place,
        planned: u64,
        id: &str,
        keep_going: bool,
    ) -> anyhow::Result<Round> {
        let builds = match scale::is_root() {
            true => check_room_for_images(chosen, place, planned)
                .and_then(|()| Builds::create(chosen, place, id, keep_going))
                .map(Some),
            false => Ok(None),
        };
        let (builds, targets) = match builds {
            Ok(builds) => {
                let targets = builds.as_ref().map_or_else(Vec::new, Builds::targets);
                (builds, Ok(targets))
            }
            Err(e) => (None, Err(e)),
        };
        // A failure here on any rank drops `builds`: it is taken down.
        let targets = scale::from_root(targets)?;
        if scale::size() > 1 {
            scale::agree(
                targets
                    .iter()
                    .try_for_each(|(name, path)| seen_here(name, path)),
            )?;
        }
        Ok(Round { builds, targets })
    }
}

/// Whether this host sees configuration `name`'s path: every rank
/// measures the path rank 0's setup commands made ready.
fn seen_here(name: &str, path: &std::path::Path) -> anyhow::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    anyhow::bail!(
        "configuration {name}: its path {} is not a directory on this host: every host must see the server's share at that path",
        path.display()
    )
}

/// Measures a round's configurations that were built (none: nothing).
fn measure_built(
    round: &Round,
    measure: &mut dyn Measure,
    repetitions: Range<u32>,
    with_references: bool,
) -> anyhow::Result<Option<String>> {
    if round.targets.is_empty() {
        return Ok(None);
    }
    // Only rank 0 holds what it built; the kinds that can run under MPI
    // cannot be remounted, which rank 0 says for all.
    let remount = |name: &str| match &round.builds {
        Some(builds) => builds.remount(name),
        None => Ok(()),
    };
    measure.measure(&round.targets, repetitions, with_references, &remount)
}

/// Takes a round down (rank 0) and keeps its records and failures, then
/// every rank agrees on how the round went (`ran`, its measuring), so
/// none goes on before the teardown is done. A signal that came while it
/// was taken down (it always is, whole) ends the run.
fn close<T>(round: Round, outcome: &mut BuildLog, ran: anyhow::Result<T>) -> anyhow::Result<T> {
    let closed = match round.builds {
        Some(builds) => take_down(builds, outcome),
        None => Ok(()),
    };
    // `ran` first: a failure the ranks agreed on already takes no more
    // agreement, on every rank alike.
    scale::agree(ran.and_then(|value| closed.map(|()| value)))
}

/// Takes `builds` down and keeps their records and failures.
fn take_down(mut builds: Builds, outcome: &mut BuildLog) -> anyhow::Result<()> {
    let failed = std::mem::take(&mut builds.failed);
    outcome.absorb(builds.finish());
    for (name, why) in failed {
        if !outcome.failed.iter().any(|(n, _)| *n == name) {
            outcome.failed.push((name, why));
        }
    }
    crate::interrupt::check()
}

/// The configurations by round, as indices: a round holds every
/// configuration alone on what it uses and the next one of each group
/// sharing something, in the file's order.
pub fn rounds(configs: &[Config], place: &Place) -> Vec<Vec<usize>> {
    let shares: Vec<Option<String>> = configs
        .iter()
        .map(|c| c.shares(place.wipe_default()))
        .collect();
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    for (index, shared) in shares.iter().enumerate() {
        // After the last round that already holds one of its group.
        let round = match shared {
            None => 0,
            Some(what) => rounds
                .iter()
                .rposition(|r| r.iter().any(|&i| shares[i].as_ref() == Some(what)))
                .map_or(0, |last| last + 1),
        };
        if round == rounds.len() {
            rounds.push(Vec::new());
        }
        rounds[round].push(index);
    }
    rounds
}

/// Each configuration's record gets what it shares with others, so the
/// report can say why it was measured apart from them.
pub fn mark_shared(configs: &[Config], place: &Place, outcome: &mut BuildLog) {
    for (name, record) in &mut outcome.built {
        let Some(config) = configs.iter().find(|c| c.name == *name) else {
            continue;
        };
        let shared = config.shares(place.wipe_default());
        let others = shared.as_ref().is_some_and(|what| {
            configs
                .iter()
                .filter(|c| c.shares(place.wipe_default()).as_ref() == Some(what))
                .count()
                > 1
        });
        record.shares = shared.filter(|_| others);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(images: bool, wipe: &[&str]) -> Place {
        Place {
            work_dir: PathBuf::from("/var/tmp"),
            images,
            image_size: 1 << 30,
            direct_io: true,
            wipe: wipe.iter().map(PathBuf::from).collect(),
        }
    }

    /// An image too small for its mkfs is refused before anything is
    /// built, naming the least size (not mkfs's usage text mid-run).
    #[test]
    fn an_image_too_small_for_its_file_system_is_refused_up_front() {
        let configs = super::super::parse(
            "[[config]]\nname = \"x\"\nmkfs = \"mkfs.xfs -f {dev}\"\n\
             [[config]]\nname = \"b\"\nmkfs = \"mkfs.btrfs -f {dev}\"\n\
             [[config]]\nname = \"e\"\nmkfs = \"mkfs.ext4 -F {dev}\"\n",
        )
        .unwrap();
        let sized = |bytes: u64| Place {
            image_size: bytes,
            ..place(true, &[])
        };
        let refused = |bytes: u64, from: usize| {
            let err = sized(bytes).check(&configs[from..]).unwrap_err();
            err.to_string()
        };
        assert_eq!(
            refused(64 << 20, 0),
            "x: --image-size 64.0 MiB is too small for mkfs.xfs: at least 300.0 MiB"
        );
        assert_eq!(
            refused(100 << 20, 1),
            "b: --image-size 100.0 MiB is too small for mkfs.btrfs: at least 109.0 MiB"
        );
        assert!(sized(300 << 20).check(&configs).is_ok());
        assert!(sized(109 << 20).check(&configs[1..]).is_ok());
        assert!(sized(16 << 20).check(&configs[2..]).is_ok());
    }

    #[test]
    fn images_coexist_and_what_is_shared_goes_round_by_round() {
        let configs = super::super::parse(
            r#"
            [[config]]
            name = "img-a"
            mkfs = "mkfs.ext4 {dev}"
            [[config]]
            name = "dev-1"
            mkfs = "mkfs.ext4 {dev}"
            device = "/dev/sdx"
            [[config]]
            name = "before"
            source = "/dev/sdy1"
            [[config]]
            name = "dev-2"
            mkfs = "mkfs.xfs {dev}"
            device = "/dev/sdx"
            [[config]]
            name = "after"
            source = "/dev/sdy1"
            options = "noatime"
            [[config]]
            name = "ram"
            source = "tmpfs"
            type = "tmpfs"
            [[config]]
            name = "img-b"
            mkfs = "mkfs.xfs {dev}"
            "#,
        )
        .unwrap();
        let place = place(true, &["/dev/sdx"]);
        assert_eq!(rounds(&configs, &place), [vec![0, 1, 2, 5, 6], vec![3, 4]]);
        let mut outcome = BuildLog {
            built: configs
                .iter()
                .map(|c| (c.name.clone(), Built::default()))
                .collect(),
            ..BuildLog::default()
        };
        mark_shared(&configs, &place, &mut outcome);
        let shares: Vec<Option<&str>> = outcome
            .built
            .iter()
            .map(|(_, b)| b.shares.as_deref())
            .collect();
        assert_eq!(
            shares,
            [
                None,
                Some("/dev/sdx"),
                Some("/dev/sdy1"),
                Some("/dev/sdx"),
                Some("/dev/sdy1"),
                None,
                None
            ]
        );
    }

    #[test]
    fn without_images_every_mkfs_shares_the_one_wiped_device() {
        let configs = super::super::parse(
            "[[config]]\nname = \"a\"\nmkfs = \"mkfs.ext4 {dev}\"\n\
             [[config]]\nname = \"b\"\nmkfs = \"mkfs.xfs {dev}\"\n",
        )
        .unwrap();
        assert_eq!(
            rounds(&configs, &place(false, &["/dev/sdx"])),
            [vec![0], vec![1]]
        );
        assert_eq!(rounds(&configs, &place(true, &["/dev/sdx"])), [vec![0, 1]]);
    }

    #[test]
    fn fresh_builds_add_up() {
        let mut outcome = BuildLog::default();
        let record = |seconds| Built {
            builds: 1,
            build_seconds: seconds,
            ..Built::default()
        };
        outcome.absorb(vec![("a".into(), record(1.0))]);
        outcome.absorb(vec![("a".into(), record(2.0))]);
        assert_eq!(outcome.built.len(), 1);
        assert_eq!(outcome.built[0].1.builds, 2);
        assert_eq!(outcome.built[0].1.build_seconds, 3.0);
        assert_eq!(outcome.build_seconds(), 3.0);
    }
}
