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
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{UsageError, usage};
use crate::input::{self, read_input_file};
use crate::size::parse_size;
use crate::workload::pattern::job::{
    Arrival, DEFAULT_VERIFY_ERRORS, Engine, Job, RATE_HINT, Seek, Stop, SyncFlag, Warmup, XferSize,
    parse_time, rate_value, short_size,
};
use crate::workload::pattern::{FileSpec, Plan};

/// vdbench's defaults.
const DEFAULT_THREADS: u32 = 8;
const DEFAULT_XFER: u64 = 4096;
const DEFAULT_ELAPSED: Duration = Duration::from_secs(30);
/// vdbench 5.04.06 starts from 1 s (5.04.07's guide says min(elapsed/2, 60)).
const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);
/// Nested `include=` files deeper than this are refused (a loop).
const MAX_INCLUDE_DEPTH: usize = 8;
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
    sds: Vec<Sd>,
    wds: Vec<Wd>,
    rds: Vec<Rd>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Sd {
    name: String,
    lun: Option<String>,
    size: Option<u64>,
    threads: Option<u32>,
    flags: Option<Flags>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Wd {
    name: String,
    sd: Option<String>,
    xfer: Option<XferSize>,
    read_pct: Option<f64>,
    seek: Option<Seek>,
    flags: Option<Flags>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Rd {
    name: String,
    wd: Option<String>,
    /// One run per rate (innermost loop); None = max.
    rates: Option<Vec<Option<f64>>>,
    elapsed: Option<Duration>,
    interval: Option<Duration>,
    warmup: Option<Duration>,
    flags: Option<Flags>,
    arrival: Option<Arrival>,
    /// For-loops in the order they appear (the first is outermost).
    loops: Vec<Loop>,
}

#[derive(Debug, Clone, PartialEq)]
enum Loop {
    Xfer(Vec<u64>),
    Threads(Vec<u32>),
    ReadPct(Vec<f64>),
    Seek(Vec<Seek>),
}

/// `openflags=`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Flags {
    direct: bool,
    sync: Option<SyncFlag>,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    General,
    Sd,
    Wd,
    Rd,
}

impl Section {
    fn name(self) -> &'static str {
        match self {
            Section::General => "general parameters",
            Section::Sd => "sd=",
            Section::Wd => "wd=",
            Section::Rd => "rd=",
        }
    }

    /// Keywords in vdbench's lookup order, and whether fsbench runs them.
    fn keywords(self) -> &'static [(&'static str, bool)] {
        match self {
            Section::General => &[
                ("validate", true),
                ("messagescan", true),
                ("data_errors", true),
                ("journal", false),
                ("compratio", false),
                ("dedupratio", false),
                ("pattern", false),
                ("concatenatesds", false),
                ("report", false),
                ("histogram", false),
                ("startcmd", false),
                ("endcmd", false),
                ("port", false),
                ("formatsds", false),
                ("formatxfersize", false),
                ("report_run_totals", false),
                ("create_anchors", false),
            ],
            Section::Sd => &[
                ("sd", true),
                ("lun", true),
                ("size", true),
                ("threads", true),
                ("openflags", true),
                ("host", false),
                ("hd", false),
                ("count", false),
                ("range", false),
                ("offset", false),
                ("align", false),
                ("hitarea", false),
                ("journal", false),
            ],
            Section::Wd => &[
                ("wd", true),
                ("sd", true),
                ("xfersize", true),
                ("rdpct", true),
                ("readpct", true),
                ("wrpct", true),
                ("writepct", true),
                ("seekpct", true),
                ("openflags", true),
                ("stride", false),
                ("range", false),
                ("hotband", false),
                ("skew", false),
                ("iorate", false),
                ("priority", false),
                ("rhpct", false),
                ("whpct", false),
                ("threads", false),
                ("host", false),
            ],
            Section::Rd => &[
                ("rd", true),
                ("wd", true),
                ("iorate", true),
                ("elapsed", true),
                ("interval", true),
                ("warmup", true),
                ("openflags", true),
                ("forxfersize", true),
                ("forthreads", true),
                ("forrdpct", true),
                ("forseekpct", true),
                ("xfersize", true),
                ("threads", true),
                ("rdpct", true),
                ("seekpct", true),
                ("sd", false),
                ("distribution", true),
                ("pause", false),
                ("maxdata", false),
                ("startcmd", false),
                ("endcmd", false),
                ("curve", false),
                ("stopcurve", false),
                ("forrhpct", false),
                ("forwhpct", false),
                ("forhitarea", false),
                ("forcompratio", false),
            ],
        }
    }
}

/// One definition: its parameters with full keyword names, and where it is.
struct Entry {
    at: String,
    section: Section,
    params: Vec<(&'static str, String)>,
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

    fn add(&mut self, entry: Entry, defaults: &mut (Sd, Wd, Rd)) -> anyhow::Result<()> {
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

    fn general(&mut self, entry: &Entry) -> anyhow::Result<()> {
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

    /// The jobs and files to run, and the directory of the luns (the
    /// target when the command line names none).
    pub fn plan(&self, overrides: &Overrides) -> anyhow::Result<(Plan, PathBuf)> {
        let mut files: Vec<(&Sd, FileSpec)> = Vec::new();
        let mut jobs = Vec::new();
        let mut lun_dir: Option<PathBuf> = None;
        for rd in &self.rds {
            let wd = find(&self.wds, rd.wd.as_deref(), "wd", &rd.name)?;
            let sd = find(&self.sds, wd.sd.as_deref(), "sd", &wd.name)?;
            let index = match files.iter().position(|(s, _)| s.name == sd.name) {
                Some(index) => index,
                None => {
                    let (dir, spec) = lun_file(sd)?;
                    check_same_dir(&mut lun_dir, dir, &sd.name)?;
                    if files.iter().any(|(_, f)| f.name == spec.name) {
                        return usage(format!(
                            "sd={}: another sd= uses a lun with the same file name {}",
                            sd.name, spec.name
                        ));
                    }
                    files.push((sd, spec));
                    files.len() - 1
                }
            };
            let base = base_job(rd, wd, sd, index, overrides)?;
            check_run_count(rd, jobs.len())?;
            jobs.extend(expand(&base, &rd.loops, rd.rates.as_deref())?);
        }
        let plan = Plan {
            files: files.into_iter().map(|(_, f)| f).collect(),
            jobs,
        };
        Ok((plan, lun_dir.expect("every run has an sd")))
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

fn find<'a, T>(list: &'a [T], wanted: Option<&str>, kind: &str, from: &str) -> anyhow::Result<&'a T>
where
    T: Named,
{
    let Some(wanted) = wanted else {
        return usage(format!("{from}: no {kind}= given"));
    };
    if wanted.starts_with('(') || wanted.contains('*') {
        return usage(format!(
            "{from}: {kind}={wanted}: fsbench runs one {kind} per definition (no lists or wildcards)"
        ));
    }
    list.iter()
        .find(|item| item.name() == wanted)
        .ok_or_else(|| UsageError(format!("{from}: {kind}={wanted} is not defined")).into())
}

trait Named {
    fn name(&self) -> &str;
}

impl Named for Sd {
    fn name(&self) -> &str {
        &self.name
    }
}

impl Named for Wd {
    fn name(&self) -> &str {
        &self.name
    }
}

/// The file an sd= describes: fsbench creates it under its scratch
/// directory with the lun's file name.
fn lun_file(sd: &Sd) -> anyhow::Result<(PathBuf, FileSpec)> {
    let Some(lun) = &sd.lun else {
        return usage(format!("sd={}: no lun= given", sd.name));
    };
    let path = Path::new(lun);
    if lun.starts_with("/dev/") || lun.starts_with("\\\\.\\") {
        return usage(format!(
            "sd={}: lun={lun} is a device; fsbench only uses files it creates in its scratch directory",
            sd.name
        ));
    }
    let Some(size) = sd.size else {
        return usage(format!(
            "sd={}: size= is needed (fsbench creates the file {lun})",
            sd.name
        ));
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| UsageError(format!("sd={}: lun={lun} has no file name", sd.name)))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((
        dir,
        FileSpec {
            name: name.to_string(),
            size,
        },
    ))
}

fn check_same_dir(known: &mut Option<PathBuf>, dir: PathBuf, sd: &str) -> anyhow::Result<()> {
    match known {
        Some(first) if *first != dir => usage(format!(
            "sd={sd}: its lun is in {}, another one in {}; fsbench runs on one target directory",
            dir.display(),
            first.display()
        )),
        Some(_) => Ok(()),
        None => {
            *known = Some(dir);
            Ok(())
        }
    }
}

/// The job of an RD before its loops, with vdbench's precedence.
fn base_job(rd: &Rd, wd: &Wd, sd: &Sd, file: usize, o: &Overrides) -> anyhow::Result<Job> {
    let flags = rd.flags.or(wd.flags).or(sd.flags).unwrap_or_default();
    if rd.rates.is_none() {
        return usage(format!("rd={}: iorate= is missing", rd.name));
    }
    let warmup = match (o.warmup, rd.warmup) {
        (Some(warmup), _) => warmup,
        (None, Some(time)) if !time.is_zero() => Warmup::Time(time),
        // vdbench's warmup=0: the first interval is left out.
        (None, _) => Warmup::FirstInterval,
    };
    Ok(Job {
        name: rd.name.clone(),
        loops: Vec::new(),
        file,
        xfer: wd.xfer.clone().unwrap_or(XferSize::Fixed(DEFAULT_XFER)),
        read_pct: wd.read_pct.unwrap_or(100.0),
        seek: wd.seek.unwrap_or(Seek::Percent(100.0)),
        threads: sd.threads.unwrap_or(DEFAULT_THREADS),
        engine: Engine::Sync,
        queue_depth: 1,
        direct: flags.direct,
        sync: flags.sync.unwrap_or(SyncFlag::None),
        fdatasync_every: 0,
        stop: Stop::Duration(o.elapsed.or(rd.elapsed).unwrap_or(DEFAULT_ELAPSED)),
        warmup,
        interval: o.interval.or(rd.interval).unwrap_or(DEFAULT_INTERVAL),
        rate: None,
        arrival: rd.arrival.unwrap_or_default(),
        seed: o.seed,
        verify: o.verify,
        verify_errors: o.verify_errors,
    })
}

/// Refuses `rd` when its runs, after the `earlier` runs of the file, would
/// pass [`MAX_RUNS`]; counted before any is made.
fn check_run_count(rd: &Rd, earlier: usize) -> anyhow::Result<()> {
    let rates = rd.rates.as_ref().map_or(1, Vec::len);
    let total = rd
        .loops
        .iter()
        .try_fold(rates, |runs, each| runs.checked_mul(each.len()))
        .and_then(|runs| runs.checked_add(earlier));
    match total {
        Some(total) if total <= MAX_RUNS => Ok(()),
        _ => usage(format!(
            "rd={}: the for-loops and rates expand to more than {MAX_RUNS} runs in all (fsbench's limit)",
            rd.name
        )),
    }
}

/// One job per combination of loop values (first loop outermost), the
/// rates innermost.
fn expand(base: &Job, loops: &[Loop], rates: Option<&[Option<f64>]>) -> anyhow::Result<Vec<Job>> {
    let mut jobs = vec![base.clone()];
    for each in loops {
        jobs = jobs.iter().flat_map(|job| each.apply(job)).collect();
    }
    let rates = rates.unwrap_or(&[None]);
    let several = rates.len() > 1;
    Ok(jobs
        .iter()
        .flat_map(|job| {
            rates.iter().map(move |&rate| {
                let mut job = job.clone();
                job.rate = rate;
                if several {
                    let shown = rate.map_or("max".to_string(), |r| format!("{r}"));
                    job.loops.push(("iorate".into(), shown));
                }
                job
            })
        })
        .collect())
}

impl Loop {
    /// How many values the loop takes.
    fn len(&self) -> usize {
        match self {
            Loop::Xfer(sizes) => sizes.len(),
            Loop::Threads(counts) => counts.len(),
            Loop::ReadPct(pcts) => pcts.len(),
            Loop::Seek(seeks) => seeks.len(),
        }
    }

    fn apply(&self, job: &Job) -> Vec<Job> {
        let with = |key: &str, value: String, set: &dyn Fn(&mut Job)| {
            let mut job = job.clone();
            set(&mut job);
            job.loops.push((key.into(), value));
            job
        };
        match self {
            Loop::Xfer(sizes) => sizes
                .iter()
                .map(|&s| with("xfersize", short_size(s), &|j| j.xfer = XferSize::Fixed(s)))
                .collect(),
            Loop::Threads(counts) => counts
                .iter()
                .map(|&t| with("threads", t.to_string(), &|j| j.threads = t))
                .collect(),
            Loop::ReadPct(pcts) => pcts
                .iter()
                .map(|&p| with("rdpct", format!("{p}"), &|j| j.read_pct = p))
                .collect(),
            Loop::Seek(seeks) => seeks
                .iter()
                .map(|&s| with("seekpct", s.describe(), &|j| j.seek = s))
                .collect(),
        }
    }
}

fn sd(entry: &Entry, default: &Sd) -> anyhow::Result<Sd> {
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

fn wd(entry: &Entry, default: &Wd) -> anyhow::Result<Wd> {
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

fn rd(entry: &Entry, default: &Rd) -> anyhow::Result<Rd> {
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

/// Reads `path` into logical lines, splicing `include=` files in place.
fn collect_lines(path: &Path, depth: usize, out: &mut Vec<(String, String)>) -> anyhow::Result<()> {
    if depth > MAX_INCLUDE_DEPTH {
        return usage(format!(
            "{}: include= nested more than {MAX_INCLUDE_DEPTH} deep (a loop?)",
            path.display()
        ));
    }
    let text = read_input_file(path, input::VDBENCH_PARMFILE)?;
    let mut pending: Option<(String, String)> = None;
    for (number, raw) in text.lines().enumerate() {
        let at = format!("{}:{}", path.display(), number + 1);
        let line = useful_part(raw);
        if line.is_empty() || line.starts_with(['*', '#', '/']) {
            continue;
        }
        if line.eq_ignore_ascii_case("eof") {
            break;
        }
        let (at, joined) = match pending.take() {
            Some((first, text)) => (first, text + line),
            None => (at, line.to_string()),
        };
        if joined.ends_with(',') {
            pending = Some((at, joined));
            continue;
        }
        if let Some(included) = joined.strip_prefix("include=") {
            let base = path.parent().unwrap_or(Path::new("."));
            collect_lines(&base.join(included), depth + 1, out)?;
            continue;
        }
        out.push((at, joined));
    }
    if let Some((at, _)) = pending {
        return usage(format!(
            "{at}: the last line ends with ',' but nothing follows"
        ));
    }
    Ok(())
}

/// The line up to its first blank outside double quotes (vdbench ignores
/// the rest: it is room for comments).
fn useful_part(line: &str) -> &str {
    let line = line.trim_start();
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Splits a logical line into `key=value` pairs and names their keywords.
fn entry(at: &str, text: &str) -> anyhow::Result<Entry> {
    let pairs = split_pairs(text).map_err(|e| UsageError(format!("{at}: {e}")))?;
    let first = pairs[0].0.to_ascii_lowercase();
    let section = match first.as_str() {
        "sd" => Section::Sd,
        "wd" => Section::Wd,
        "rd" => Section::Rd,
        "fsd" | "fwd" => {
            return usage(format!(
                "{at}: {first}= (vdbench's file-system workloads) is not supported by fsbench io"
            ));
        }
        "hd" | "rg" => {
            return usage(format!(
                "{at}: {first}= (hosts, replay groups) is not supported: fsbench io runs on this host"
            ));
        }
        _ => Section::General,
    };
    let name = match section {
        Section::General => String::new(),
        _ => format!(" {first}={}", pairs[0].1),
    };
    let params = pairs
        .into_iter()
        .map(|(key, value)| {
            Ok((
                keyword(section, &key).map_err(|e| UsageError(format!("{at}:{name}: {e}")))?,
                value,
            ))
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(Entry {
        at: at.to_string(),
        section,
        params,
    })
}

fn split_pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let bytes = text.as_bytes();
    for i in 0..=bytes.len() {
        let c = bytes.get(i).copied();
        match c {
            Some(b'(') => depth += 1,
            Some(b')') => depth -= 1,
            Some(b',') | None if depth == 0 => {
                let item = &text[start..i];
                if !item.is_empty() {
                    let (key, value) = item
                        .split_once('=')
                        .ok_or_else(|| format!("'{item}' is not keyword=value"))?;
                    if value.is_empty() {
                        return Err(format!("{key}= has no value"));
                    }
                    pairs.push((key.to_string(), value.to_string()));
                }
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(format!("unbalanced ')' in '{text}'"));
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced '(' in '{text}'"));
    }
    if pairs.is_empty() {
        return Err("empty line".into());
    }
    Ok(pairs)
}

/// The full keyword a typed one (any case, a prefix of 2+ letters) means.
fn keyword(section: Section, typed: &str) -> anyhow::Result<&'static str> {
    let typed = typed.to_ascii_lowercase();
    let table = section.keywords();
    let found = table.iter().find(|(name, _)| *name == typed).or_else(|| {
        (typed.len() >= 2)
            .then(|| table.iter().find(|(name, _)| name.starts_with(&typed)))
            .flatten()
    });
    match found {
        Some((name, true)) => Ok(name),
        Some((name, false)) => usage(format!(
            "'{name}' is a vdbench parameter fsbench does not support"
        )),
        None => usage(format!("unknown parameter '{typed}' in {}", section.name())),
    }
}

/// `(a,b,c)` → [a, b, c]; `a` → [a].
fn list(value: &str) -> Vec<String> {
    match value.strip_prefix('(').and_then(|v| v.strip_suffix(')')) {
        Some(inner) => inner.split(',').map(|s| s.trim().to_string()).collect(),
        None => vec![value.to_string()],
    }
}

/// The values of the numeric for-loop `key=value`; errors name both.
fn loop_values(
    key: &str,
    value: &str,
    parse: impl Fn(&str) -> anyhow::Result<u64>,
) -> anyhow::Result<Vec<u64>> {
    number_list(value, parse).map_err(|e| UsageError(format!("{key}={value}: {e:#}")).into())
}

/// A numeric list, with vdbench's ranges: `(lo-hi,step)` and `(lo-hi,d)`
/// (doubling, or halving when lo > hi).
fn number_list(
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

fn range_values(
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
fn doubling_values(lo: u64, hi: u64) -> anyhow::Result<Vec<u64>> {
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

fn single<'a>(key: &str, value: &'a str) -> anyhow::Result<&'a str> {
    if value.starts_with('(') {
        return usage(format!("{key}={value}: a single value is expected here"));
    }
    Ok(value)
}

fn name_value(key: &str, value: &str) -> anyhow::Result<String> {
    Ok(single(key, value)?.to_string())
}

/// `distribution=`: the inter-arrival times of a controlled rate.
fn arrival_value(value: &str) -> anyhow::Result<Arrival> {
    match value.to_ascii_lowercase().as_str() {
        "exponential" => Ok(Arrival::Exponential),
        "uniform" => Ok(Arrival::Uniform),
        "deterministic" => Ok(Arrival::Fixed),
        _ => usage(format!(
            "distribution={value}: fsbench supports exponential, uniform and deterministic"
        )),
    }
}

fn yes_no(key: &str, value: &str) -> anyhow::Result<bool> {
    match value.to_ascii_lowercase().as_str() {
        "yes" | "y" => Ok(true),
        "no" | "n" => Ok(false),
        _ => usage(format!(
            "{key}={value}: fsbench supports only {key}=yes or {key}=no"
        )),
    }
}

fn size_value(key: &str, value: &str) -> anyhow::Result<u64> {
    parse_size(single(key, value)?, 1)
}

fn count_value(key: &str, value: &str) -> anyhow::Result<u32> {
    single(key, value)?
        .parse()
        .map_err(|_| UsageError(format!("{key}={value}: not a whole number")).into())
}

fn time_value(key: &str, value: &str) -> anyhow::Result<Duration> {
    parse_time(single(key, value)?)
}

fn pct_value(key: &str, value: &str) -> anyhow::Result<f64> {
    let pct: f64 = single(key, value)?
        .parse()
        .map_err(|_| UsageError(format!("{key}={value}: not a number")))?;
    if !(0.0..=100.0).contains(&pct) {
        return usage(format!("{key}={value}: use 0 to 100"));
    }
    Ok(pct)
}

fn seek_value(value: &str) -> anyhow::Result<Seek> {
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
fn xfer_value(value: &str) -> anyhow::Result<XferSize> {
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

fn rates_value(value: &str) -> anyhow::Result<Vec<Option<f64>>> {
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

fn flags_value(value: &str) -> anyhow::Result<Flags> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
                size: 64 << 20
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
