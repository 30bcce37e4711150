//! vdbench parameter files, the raw-I/O subset: general `validate=`,
//! `data_errors=` and `messagescan=`; `sd=` with lun/size/threads/openflags;
//! `wd=` with sd/xfersize/rdpct/seekpct/openflags; `rd=` with wd/iorate/
//! elapsed/interval/warmup/openflags/distribution and the
//! `forxfersize`/`forthreads`/`forrdpct`/
//! `forseekpct` loops (or their plain names). vdbench's lexical rules apply:
//! comments (`*`, `#`, `/`), continuation lines (a trailing comma),
//! `include=`, `eof`, keywords matched by prefix, `xxx=default` entries,
//! size suffixes in powers of 1024, `m`/`h` on times, `(lo-hi,step)` and
//! `(lo-hi,d)` ranges. Anything else is refused with an error naming it.
//!
//! Here the file becomes its definitions (`ParmFile`); `plan` makes them
//! jobs.
use std::path::Path;
use std::time::Duration;

use crate::error::{UsageError, usage};
use crate::size::parse_size;
use crate::workload::pattern::job::{
    Arrival, DEFAULT_VERIFY_ERRORS, Seek, SyncFlag, Warmup, XferSize,
};

use super::lexer::{Definition, Section, collect_lines, entry};
use super::values::*;

/// Most runs a parameter file may expand to, all its for-loops and rates
/// together: each is a job in memory and a run of `elapsed=`, so more is
/// a typing error (ranges such as `(1-4294967295,1)`).
pub const MAX_RUNS: usize = 10_000;

/// What the file says, before it becomes jobs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParmFile {
    pub validate: bool,
    /// `data_errors=N`: bad blocks before a verified run stops.
    pub data_errors: Option<u32>,
    pub(super) sds: Vec<Sd>,
    pub(super) wds: Vec<Wd>,
    pub(super) rds: Vec<Rd>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Sd {
    pub(super) name: String,
    pub(super) lun: Option<String>,
    pub(super) size: Option<u64>,
    pub(super) threads: Option<u32>,
    pub(super) flags: Option<Flags>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Wd {
    pub(super) name: String,
    pub(super) sd: Option<String>,
    pub(super) xfer: Option<XferSize>,
    pub(super) read_pct: Option<f64>,
    pub(super) seek: Option<Seek>,
    pub(super) flags: Option<Flags>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Rd {
    pub(super) name: String,
    pub(super) wd: Option<String>,
    /// One run per rate (innermost loop); None = max.
    pub(super) rates: Option<Vec<Option<f64>>>,
    pub(super) elapsed: Option<Duration>,
    pub(super) interval: Option<Duration>,
    pub(super) warmup: Option<Duration>,
    pub(super) flags: Option<Flags>,
    pub(super) arrival: Option<Arrival>,
    /// For-loops in the order they appear (the first is outermost).
    pub(super) loops: Vec<Loop>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Loop {
    Xfer(Vec<u64>),
    Threads(Vec<u32>),
    ReadPct(Vec<f64>),
    Seek(Vec<Seek>),
}

/// `openflags=`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Flags {
    pub(super) direct: bool,
    pub(super) sync: Option<SyncFlag>,
}

/// Run-wide settings the command line adds (vdbench's -e, -i, -w).
#[derive(Debug, Clone)]
pub struct Overrides {
    pub elapsed: Option<Duration>,
    pub interval: Option<Duration>,
    pub warmup: Option<Warmup>,
    pub verify: bool,
    /// Bad blocks before a verified job stops (`data_errors=` or the
    /// command line).
    pub verify_errors: u32,
    pub seed: u64,
}

impl Default for Overrides {
    fn default() -> Self {
        Overrides {
            elapsed: None,
            interval: None,
            warmup: None,
            verify: false,
            verify_errors: DEFAULT_VERIFY_ERRORS,
            seed: 0,
        }
    }
}

impl ParmFile {
    pub fn read(path: &Path) -> anyhow::Result<ParmFile> {
        let mut lines = Vec::new();
        collect_lines(path, 0, &mut lines)?;
        ParmFile::parse(&lines)
    }

    /// Parses logical lines (`(where, text)`, includes already spliced).
    fn parse(lines: &[(String, String)]) -> anyhow::Result<ParmFile> {
        let mut file = ParmFile::default();
        let mut defaults = (Sd::default(), Wd::default(), Rd::default());
        let mut current = Section::General;
        for (at, text) in lines {
            let entry = entry(at, text)?;
            if entry.section < current {
                return usage(format!(
                    "{at}: {} after {}: vdbench reads general parameters, then sd=, wd=, rd=, in that order",
                    entry.section.name(),
                    current.name()
                ));
            }
            current = entry.section;
            file.add(entry, &mut defaults)?;
        }
        if file.rds.is_empty() {
            return usage("the parameter file has no rd= (run definition): nothing to run");
        }
        Ok(file)
    }

    fn add(&mut self, entry: Definition, defaults: &mut (Sd, Wd, Rd)) -> anyhow::Result<()> {
        let at = entry.at.clone();
        let context = |e: anyhow::Error| UsageError(format!("{at}: {e:#}"));
        match entry.section {
            Section::General => self.general(&entry).map_err(context)?,
            Section::Sd => {
                let sd = sd(&entry, &defaults.0).map_err(context)?;
                store(&mut self.sds, &mut defaults.0, sd, |s| &s.name, &entry.at)?;
            }
            Section::Wd => {
                let wd = wd(&entry, &defaults.1).map_err(context)?;
                store(&mut self.wds, &mut defaults.1, wd, |w| &w.name, &entry.at)?;
            }
            Section::Rd => {
                let rd = rd(&entry, &defaults.2).map_err(context)?;
                store(&mut self.rds, &mut defaults.2, rd, |r| &r.name, &entry.at)?;
            }
        }
        Ok(())
    }

    fn general(&mut self, entry: &Definition) -> anyhow::Result<()> {
        for (key, value) in &entry.params {
            match *key {
                "validate" => self.validate = yes_no(key, value)?,
                "data_errors" => self.data_errors = Some(count_value(key, value)?),
                // fsbench never scans system logs; accepted so files run as is.
                "messagescan" => {
                    yes_no(key, value)?;
                }
                _ => unreachable!("only supported keywords reach here"),
            }
        }
        Ok(())
    }
}

/// Stores a parsed definition, or makes it the new default for its kind.
fn store<T: Clone>(
    list: &mut Vec<T>,
    default: &mut T,
    item: T,
    name: impl Fn(&T) -> &String,
    at: &str,
) -> anyhow::Result<()> {
    if name(&item) == "default" {
        *default = item;
        return Ok(());
    }
    if list.iter().any(|other| name(other) == name(&item)) {
        return usage(format!("{at}: {} is defined twice", name(&item)));
    }
    list.push(item);
    Ok(())
}

fn sd(entry: &Definition, default: &Sd) -> anyhow::Result<Sd> {
    let mut sd = default.clone();
    for (key, value) in &entry.params {
        match *key {
            "sd" => sd.name = name_value(key, value)?,
            "lun" => sd.lun = Some(value.clone()),
            "size" => sd.size = Some(size_value(key, value)?),
            "threads" => sd.threads = Some(count_value(key, value)?),
            "openflags" => sd.flags = Some(flags_value(value)?),
            _ => unreachable!("only supported keywords reach here"),
        }
    }
    Ok(sd)
}

fn wd(entry: &Definition, default: &Wd) -> anyhow::Result<Wd> {
    let mut wd = default.clone();
    for (key, value) in &entry.params {
        match *key {
            "wd" => wd.name = name_value(key, value)?,
            "sd" => wd.sd = Some(value.clone()),
            "xfersize" => wd.xfer = Some(xfer_value(value)?),
            "rdpct" | "readpct" => wd.read_pct = Some(pct_value(key, value)?),
            "wrpct" | "writepct" => wd.read_pct = Some(100.0 - pct_value(key, value)?),
            "seekpct" => wd.seek = Some(seek_value(value)?),
            "openflags" => wd.flags = Some(flags_value(value)?),
            _ => unreachable!("only supported keywords reach here"),
        }
    }
    Ok(wd)
}

fn rd(entry: &Definition, default: &Rd) -> anyhow::Result<Rd> {
    let mut rd = default.clone();
    for (key, value) in &entry.params {
        match *key {
            "rd" => rd.name = name_value(key, value)?,
            "wd" => rd.wd = Some(value.clone()),
            "iorate" => rd.rates = Some(rates_value(value)?),
            "elapsed" => rd.elapsed = Some(time_value(key, value)?),
            "interval" => rd.interval = Some(time_value(key, value)?),
            "warmup" => rd.warmup = Some(time_value(key, value)?),
            "openflags" => rd.flags = Some(flags_value(value)?),
            "distribution" => rd.arrival = Some(arrival_value(value)?),
            "forxfersize" | "xfersize" => {
                rd.loops
                    .push(Loop::Xfer(loop_values(key, value, |v| parse_size(v, 1))?))
            }
            "forthreads" | "threads" => rd.loops.push(Loop::Threads(
                loop_values(key, value, |v| count_value("threads", v).map(u64::from))?
                    .into_iter()
                    .map(|t| t as u32)
                    .collect(),
            )),
            "forrdpct" | "rdpct" => rd.loops.push(Loop::ReadPct(
                list(value)
                    .iter()
                    .map(|v| pct_value(key, v))
                    .collect::<anyhow::Result<_>>()?,
            )),
            "forseekpct" | "seekpct" => rd.loops.push(Loop::Seek(
                list(value)
                    .iter()
                    .map(|v| seek_value(v))
                    .collect::<anyhow::Result<_>>()?,
            )),
            _ => unreachable!("only supported keywords reach here"),
        }
    }
    Ok(rd)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::workload::pattern::job::Stop;
    use crate::workload::pattern::{FileSpec, Layout, Plan};

    fn parse(text: &str) -> anyhow::Result<ParmFile> {
        let lines: Vec<(String, String)> = {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("parm");
            std::fs::write(&path, text).unwrap();
            let mut lines = Vec::new();
            collect_lines(&path, 0, &mut lines)?;
            lines
        };
        ParmFile::parse(&lines)
    }

    fn plan(text: &str) -> anyhow::Result<(Plan, PathBuf)> {
        parse(text)?.plan(&Overrides::default())
    }

    fn error(text: &str) -> String {
        match plan(text) {
            Ok(p) => panic!("accepted: {p:?}"),
            Err(e) => format!("{e:#}"),
        }
    }

    const BASIC: &str = "\
* a comment
messagescan=no
sd=sd1,lun=/mnt/test/vdb.dat,size=64m,threads=4   anything after a blank is ignored
wd=wd1,sd=sd1,xf=8k,rdpct=70,se=50
rd=rd1,wd=wd1,iorate=max,el=10,in=1,warmup=2
";

    #[test]
    fn reads_a_basic_file_with_prefixes_and_comments() {
        let (plan, dir) = plan(BASIC).unwrap();
        assert_eq!(dir, PathBuf::from("/mnt/test"));
        assert_eq!(
            plan.files,
            [FileSpec {
                name: "vdb.dat".into(),
                size: 64 << 20,
                layout: Layout::Written,
            }]
        );
        let job = &plan.jobs[0];
        assert_eq!(job.name, "rd1");
        assert_eq!(job.xfer, XferSize::Fixed(8192));
        assert_eq!(
            (job.read_pct, job.seek, job.threads),
            (70.0, Seek::Percent(50.0), 4)
        );
        assert_eq!(job.stop, Stop::Duration(Duration::from_secs(10)));
        assert_eq!(job.warmup, Warmup::Time(Duration::from_secs(2)));
        assert_eq!(job.rate, None);
    }

    #[test]
    fn applies_vdbench_defaults_and_default_entries() {
        let (plan, _) = plan(
            "sd=default,size=1m\nsd=sd1,lun=f\nwd=wd1,sd=sd1\nrd=default,iorate=100\nrd=rd1,wd=wd1\n",
        )
        .unwrap();
        let job = &plan.jobs[0];
        assert_eq!(plan.files[0].size, 1 << 20);
        assert_eq!(job.xfer, XferSize::Fixed(4096));
        assert_eq!(
            (job.read_pct, job.seek, job.threads),
            (100.0, Seek::Percent(100.0), 8)
        );
        assert_eq!(job.stop, Stop::Duration(Duration::from_secs(30)));
        assert_eq!(job.interval, Duration::from_secs(1));
        assert_eq!(job.warmup, Warmup::FirstInterval);
        assert_eq!(job.rate, Some(100.0));
        assert!(!job.end_fsync, "vdbench does not sync at the end of a run");
    }

    #[test]
    fn expands_for_loops_in_order_with_rates_innermost() {
        let (plan, _) = plan(
            "sd=sd1,lun=f,size=1m\nwd=wd1,sd=sd1\n\
             rd=rd1,wd=wd1,iorate=(100,max),forthreads=(1-2,1),forxfersize=(4k-16k,d),elapsed=4\n",
        )
        .unwrap();
        assert_eq!(plan.jobs.len(), 2 * 3 * 2);
        let loops: Vec<String> = plan.jobs[..3]
            .iter()
            .map(|j| {
                j.loops
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert_eq!(
            loops,
            [
                "threads=1 xfersize=4k iorate=100",
                "threads=1 xfersize=4k iorate=max",
                "threads=1 xfersize=8k iorate=100"
            ]
        );
        assert_eq!(plan.jobs[11].threads, 2);
        assert_eq!(plan.jobs[11].xfer, XferSize::Fixed(16384));
    }

    #[test]
    fn openflags_precedence_and_continuation_lines() {
        let (plan, _) = plan(
            "sd=sd1,lun=f,size=1m,openflags=o_sync\n\
             wd=wd1,sd=sd1,\n  xfersize=(4k,25,64k,75),wrpct=30\n\
             rd=rd1,wd=wd1,iorate=max\n\
             rd=rd2,wd=wd1,iorate=max,openflags=o_direct\n",
        )
        .unwrap();
        assert_eq!(plan.jobs[0].sync, SyncFlag::Dsync);
        assert!(!plan.jobs[0].direct);
        assert!(plan.jobs[1].direct);
        assert_eq!(plan.jobs[1].sync, SyncFlag::None);
        assert_eq!(plan.jobs[0].read_pct, 70.0);
        assert_eq!(
            plan.jobs[0].xfer,
            XferSize::Mix(vec![(4096, 25.0), (65536, 75.0)])
        );
    }

    #[test]
    fn include_files_are_spliced_relative_to_the_includer() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("sds"), "sd=sd1,lun=f,size=1m\n").unwrap();
        let main = dir.path().join("main");
        std::fs::write(
            &main,
            "include=sds\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max\neof\ngarbage",
        )
        .unwrap();
        let parsed = ParmFile::read(&main).unwrap();
        assert_eq!(parsed.plan(&Overrides::default()).unwrap().0.jobs.len(), 1);
    }

    #[test]
    fn bad_input_is_named() {
        let cases = [
            (
                "sd=sd1,lun=f,size=1m,hitarea=1m\n",
                "'hitarea' is a vdbench parameter fsbench does not support",
            ),
            (
                "sd=sd1,lun=f,size=1m,bogus=1\n",
                "unknown parameter 'bogus'",
            ),
            ("sd=sd1,lun=f,size=1m\nwd=wd1,sd=sd1,skew=50\n", "'skew'"),
            (
                "sd=sd1,lun=f\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max\n",
                "size= is needed",
            ),
            (
                "sd=sd1,lun=/dev/sdb,size=1m\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max\n",
                "is a device",
            ),
            (
                "sd=sd1,lun=f,size=1m\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1\n",
                "iorate= is missing",
            ),
            (
                "sd=sd1,lun=f,size=1m\nwd=wd1,sd=sd2\nrd=rd1,wd=wd1,iorate=max\n",
                "sd=sd2 is not defined",
            ),
            ("wd=wd1,sd=sd1\nsd=sd1,lun=f,size=1m\n", "in that order"),
            (
                "sd=sd1,lun=f,size=1m\nsd=sd1,lun=g,size=1m\n",
                "defined twice",
            ),
            ("fsd=fsd1,anchor=/x\n", "file-system workloads"),
            (
                "sd=sd1,lun=f,size=1m\nwd=wd1,sd=sd1,seekpct=150\n",
                "use 0 to 100",
            ),
            (
                "sd=sd1,lun=f,size=1m\nwd=wd1,sd=sd1,xfersize=(4k,8k,512)\n",
                "(min,max,align)",
            ),
            ("sd=sd1,lun=f,size=1m,openflags=fsync\n", "openflags=fsync"),
            (
                "sd=sd1,lun=f,size=1m\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=curve\n",
                "curve",
            ),
            ("sd=sd1,lun=f,size=(1m\n", "unbalanced"),
            ("sd=sd1,lun\n", "not keyword=value"),
            ("sd=sd1,lun=f,size=1m,\n", "nothing follows"),
            ("messagescan=no\n", "no rd="),
            (
                "sd=sd1,lun=f,size=1m\nwd=wd1,sd=(sd1,sd2)\nrd=rd1,wd=wd1,iorate=max\n",
                "one sd per definition",
            ),
            ("validate=maybe\n", "validate=yes or validate=no"),
            (
                "sd=sd1,lun=f,size=1m\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max,forthreads=(4-2,1)\n",
                "rising range",
            ),
            (
                "sd=sd1,lun=f,size=1m\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max,forxfersize=(1-16000000t,d)\n",
                "forxfersize=(1-16000000t,d): range 1-17592186044416000000 doubles past",
            ),
            (
                "sd=sd1,lun=f,size=1m\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max,forthreads=(1-4294967295,1)\n",
                "has 4294967295 values, more than the 10000 runs",
            ),
            (
                "sd=sd1,lun=f,size=1m\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=(1,2,3,4,5,6,7,8,9,10,11),forthreads=(1-1000,1)\n",
                "rd=rd1: the for-loops and rates expand to more than 10000 runs",
            ),
            (
                "sd=sd1,lun=f,size=1m\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max,forthreads=(1-10000,1)\nrd=rd2,wd=wd1,iorate=max\n",
                "rd=rd2: the for-loops and rates expand to more than 10000 runs",
            ),
        ];
        for (text, needle) in cases {
            let err = error(text);
            assert!(err.contains(needle), "{text:?}: {err}");
        }
        assert!(error(BASIC.replace("sd=sd1,lun", "sd=sd1,x=1,lun").as_str()).contains("parm:3"));
    }

    #[test]
    fn overrides_replace_timing_and_turn_on_verification() {
        let parsed = parse(BASIC).unwrap();
        let overrides = Overrides {
            elapsed: Some(Duration::from_millis(300)),
            interval: Some(Duration::from_millis(100)),
            warmup: Some(Warmup::Time(Duration::ZERO)),
            verify: true,
            verify_errors: 7,
            seed: 5,
        };
        let (plan, _) = parsed.plan(&overrides).unwrap();
        let job = &plan.jobs[0];
        assert_eq!(job.stop, Stop::Duration(Duration::from_millis(300)));
        assert_eq!(job.warmup, Warmup::Time(Duration::ZERO));
        assert!(job.verify && job.seed == 5 && job.verify_errors == 7);
        let parsed = parse(
            "validate=yes\ndata_errors=3\nsd=sd1,lun=f,size=1m\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max\n",
        )
        .unwrap();
        assert!(parsed.validate);
        assert_eq!(parsed.data_errors, Some(3));
    }

    #[test]
    fn distribution_sets_the_arrival_times() {
        let job = |extra: &str| {
            plan(&format!(
                "sd=sd1,lun=f,size=1m\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=100{extra}\n"
            ))
            .map(|(plan, _)| plan.jobs[0].arrival)
        };
        assert_eq!(job("").unwrap(), Arrival::Exponential);
        assert_eq!(job(",distribution=uniform").unwrap(), Arrival::Uniform);
        assert_eq!(job(",distribution=deterministic").unwrap(), Arrival::Fixed);
        let err = job(",distribution=spike").unwrap_err().to_string();
        assert!(err.contains("distribution=spike"), "{err}");
    }
}
