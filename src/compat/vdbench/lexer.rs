//! vdbench's lexical rules: logical lines (comments, blanks, continuation
//! lines ending in a comma, `include=`, `eof`), `key=value` pairs with
//! parenthesised lists, and keywords matched by prefix in each section.
use std::path::Path;

use crate::error::{UsageError, usage};
use crate::input::{self, MAX_INCLUDE_DEPTH, read_input_file};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Section {
    General,
    Sd,
    Wd,
    Rd,
}

impl Section {
    pub(super) fn name(self) -> &'static str {
        match self {
            Section::General => "general parameters",
            Section::Sd => "sd=",
            Section::Wd => "wd=",
            Section::Rd => "rd=",
        }
    }

    /// Keywords in vdbench's lookup order, and whether fsbench runs them.
    pub(super) fn keywords(self) -> &'static [(&'static str, bool)] {
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
pub(super) struct Definition {
    pub(super) at: String,
    pub(super) section: Section,
    pub(super) params: Vec<(&'static str, String)>,
}

/// Reads `path` into logical lines, splicing `include=` files in place.
pub(super) fn collect_lines(
    path: &Path,
    depth: usize,
    out: &mut Vec<(String, String)>,
) -> anyhow::Result<()> {
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
pub(super) fn entry(at: &str, text: &str) -> anyhow::Result<Definition> {
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
    Ok(Definition {
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
