//! `fsbench crash --configs FILE`: the configurations built on a recorded
//! disk and cut off at hundreds of points (`crate::crash`).
use std::path::{Path, PathBuf};

use clap::Args;

use super::flags::parse_flags;
use super::output::check_json_path;
use crate::configs::Config;
use crate::configs::place::Place;
use crate::console::{Stream, emit};
use crate::crash::oracle::Unsynced;
use crate::crash::{self, Options};
use crate::driver::Recording;
use crate::driver::recording::{new_run_id, new_run_result};
use crate::error::usage;
use crate::result::durability::{Durability, Model};
use crate::result::{RunResult, TargetResult};

#[derive(Debug, Args)]
pub struct CrashArgs {
    /// The configurations (the file `fsbench run --configs` reads); each
    /// must be made by mkfs on an image.
    #[arg(long, value_name = "FILE")]
    configs: PathBuf,
    /// The directory the images, the block logs and the mount points go
    /// in [default: /var/tmp].
    #[arg(long, value_name = "DIR")]
    images: Option<PathBuf>,
    #[command(flatten)]
    flags: CrashFlags,
}

/// How the configurations are cut off: `fsbench crash`'s flags, and the
/// `args` of a suite's crash entry (`fsbench run --configs`).
#[derive(Debug, Args)]
pub struct CrashFlags {
    /// Each recorded disk's size (sparse): a model of the disk, kept
    /// small so that checking a state is quick.
    #[arg(long, value_name = "SIZE", default_value = "512m", value_parser = crate::units::size_arg)]
    image_size: String,
    /// Crash states checked per configuration (at most).
    #[arg(long, value_name = "N", default_value_t = 200)]
    cuts: usize,
    /// The seed of the workload and of the cuts.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How the disk behaves at the cut: flush (loses everything since the
    /// last flush), cache (any part of it, writes torn at sector size),
    /// lying (ignores flushes; the last --cache bytes never land).
    #[arg(long, value_enum, default_value_t = Model::Cache)]
    model: Model,
    /// The disk's volatile write cache (cache and lying models).
    #[arg(long, value_name = "SIZE", default_value = "8m", value_parser = crate::units::size_arg)]
    cache: String,
    /// The disk's atomic write unit: longer writes may be torn at this
    /// size (cache model). 4k: today's disks (512e, 4Kn, most SSDs); 512:
    /// old 512n disks.
    #[arg(long, value_name = "SIZE", default_value = "4k", value_parser = crate::units::size_arg)]
    sector: String,
    /// About how much the crash workload writes.
    #[arg(long, value_name = "SIZE", default_value = "16m", value_parser = crate::units::size_arg)]
    workload_size: String,
    /// Keep one reproducer per kind of failure here: the crash state's
    /// image and a JSON naming the cut, the operations and the files.
    #[arg(long, value_name = "DIR")]
    keep_failures: Option<PathBuf>,
    /// Acknowledge the sync log's records without syncing them: seed
    /// 000's CNID database never synced or on a RAM disk, as `--sync-log-mode
    /// none` measures its speed.
    #[arg(long)]
    unsynced_log: bool,
    /// Test only: leave out the fsync of this operation (and still
    /// acknowledge it), to prove the checker can fail.
    #[arg(long, value_name = "OP", hide = true)]
    skip_fsync_of: Option<usize>,
}

/// A suite's crash entry: its `args`, `fsbench crash`'s flags.
pub fn entry_options(args: &[String]) -> anyhow::Result<Options> {
    parse_flags::<CrashFlags>(args)?.options()
}

/// The crash workload's smallest size: its files rewritten in place are
/// written whole first.
const MIN_WORKLOAD: u64 = 2 << 20;

pub fn run(args: CrashArgs, json: Option<&Path>) -> anyhow::Result<()> {
    check_json_path(json)?;
    let (configs, place, options) = plan(&args)?;
    let recordables = crash::recordables(&configs, &place)?;
    place.check(&configs)?;
    let run_id = new_run_id();
    let mut recording = Recording::new(new_run_result(&run_id), json);
    let judged = crash::judge_all(&recordables, &place, &options, &run_id, |config, found| {
        let target = judged_target(config, found);
        recording.record.targets.push(target)
    });
    match judged {
        Ok(()) => {
            recording.finish()?;
            show(&recording.record)
        }
        Err(e) if recording.record.targets.is_empty() => Err(e),
        // The configurations judged before the failure are kept: their
        // table, and the record without an end time (incomplete).
        Err(e) => {
            // The failure is what must be told: a table that cannot be
            // written (a closed pipe) does not take its place.
            let _ = show(&recording.record);
            Err(recording.failed(e))
        }
    }
}

/// A configuration's target in the record: what its power cuts found.
fn judged_target(config: &Config, durability: Durability) -> TargetResult {
    TargetResult {
        name: config.name.clone(),
        path: String::new(),
        env: None,
        workloads: Vec::new(),
        cleanup: None,
        reference: false,
        built: None,
        durability: Some(durability),
        fingerprint: None,
    }
}

/// The durability table of the configurations judged, on stdout.
fn show(record: &RunResult) -> anyhow::Result<()> {
    let judged = crate::report::durability::judged(record);
    let width = crate::report::terminal::Terminal::for_stdout().width;
    emit(
        Stream::Stdout,
        &crate::report::durability::text(&judged, width),
    )
}

/// The configurations, where they go and the options (refused here or,
/// what only the configurations tell, by `run` before anything is built).
fn plan(args: &CrashArgs) -> anyhow::Result<(Vec<Config>, Place, Options)> {
    let options = args.flags.options()?;
    let configs = crate::configs::load(&args.configs)?;
    if !rustix::process::geteuid().is_root() {
        return usage(
            "crash needs root: it mounts a FUSE recorder, attaches loop devices, runs mkfs and mounts",
        );
    }
    let place = options.place(Place::work_dir(args.images.as_deref())?);
    Ok((configs, place, options))
}

impl CrashFlags {
    /// The options they give, refused here when they cannot be.
    fn options(&self) -> anyhow::Result<Options> {
        if self.cuts == 0 {
            return usage("--cuts 0: give at least one crash state to check");
        }
        if let Some(dir) = &self.keep_failures
            && !dir.is_dir()
        {
            return usage(format!(
                "--keep-failures {}: not a directory",
                dir.display()
            ));
        }
        let size = |text: &str| crate::size::parse_size(text, 1);
        Ok(Options {
            image_bytes: size(&self.image_size)?,
            cuts: self.cuts,
            seed: self.seed,
            model: self.model,
            cache_bytes: size(&self.cache)?,
            sector_bytes: match size(&self.sector)? {
                sector @ (512 | 4096) => sector,
                other => return usage(format!("--sector {other}: give 512 or 4k")),
            },
            workload_bytes: match size(&self.workload_size)? {
                bytes if bytes < MIN_WORKLOAD => {
                    return usage(
                        "--workload-size: at least 2m (the files rewritten in place take 1.25 MiB)",
                    );
                }
                bytes => bytes,
            },
            keep_failures: self.keep_failures.clone(),
            unsynced: Unsynced {
                op: self.skip_fsync_of,
                sync_log: self.unsynced_log,
            },
        })
    }
}
