//! fio's lexical rules: `[section]` headers, `key=value` and bare `key`
//! lines, `;` and `#` comments (whole lines, or the rest of a line as fio
//! cuts them), `include FILE` relative to the including file, and
//! `${VAR}` taken from the environment.
use std::path::Path;

use super::names::canonical;
use crate::error::usage;
use crate::input::{self, MAX_INCLUDE_DEPTH, read_input_file};

/// One option as written: where, its key (fio's name of it, lower case:
/// an alias is read as the option it names) and its value (None for a
/// bare flag such as `time_based`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Opt {
    pub(super) at: String,
    pub(super) key: String,
    pub(super) value: Option<String>,
}

/// A `[name]` section and its options, in order.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Section {
    pub(super) at: String,
    pub(super) name: String,
    pub(super) options: Vec<Opt>,
}

/// The sections of `path`, its includes spliced in place.
pub(super) fn read_sections(path: &Path) -> anyhow::Result<Vec<Section>> {
    let mut sections = Vec::new();
    let mut budget = Budget {
        left: input::FIO_JOBFILE.limit,
    };
    collect(path, 0, &mut sections, &mut budget)?;
    Ok(sections)
}

/// What is left of the most text a job file and its includes may expand
/// to: each file is bounded, and so is what its `${VAR}`s make of it (one
/// line of many `${VAR}` of a large value would grow without end).
struct Budget {
    left: u64,
}

impl Budget {
    /// Takes `bytes` more of expanded text, or says where it ran out.
    fn take(&mut self, at: &str, bytes: usize) -> anyhow::Result<()> {
        match self.left.checked_sub(bytes as u64) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => usage(format!(
                "{at}: the job file, its includes and their ${{VAR}}s expanded come to more than {} MiB, the most fsbench reads",
                input::FIO_JOBFILE.limit >> 20
            )),
        }
    }
}

fn collect(
    path: &Path,
    depth: usize,
    sections: &mut Vec<Section>,
    budget: &mut Budget,
) -> anyhow::Result<()> {
    if depth > MAX_INCLUDE_DEPTH {
        return usage(format!(
            "{}: include nested more than {MAX_INCLUDE_DEPTH} deep (a loop?)",
            path.display()
        ));
    }
    let text = read_input_file(path, input::FIO_JOBFILE)?;
    // A line is quoted in an error only once this file has shown a
    // [section] header, or when it is an option of the file the user named
    // (`size=1m` before any section): `include /etc/shadow` must not print
    // root's line.
    let mut a_job_file = false;
    for (number, raw) in text.lines().enumerate() {
        let at = format!("{}:{}", path.display(), number + 1);
        let line = without_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        let quoted = a_job_file || (depth == 0 && option(&at, line).is_some());
        let shown = |line: &str| match quoted {
            true => format!("'{line}'"),
            false => "this line (not quoted: no [section] before it, so maybe not a job file)"
                .to_string(),
        };
        // fio expands `${VAR}` in options only: a section's name and an
        // include's file are taken as written (`[job-${RWMODE}]` is that
        // job's name).
        if let Some(included) = line.strip_prefix("include ") {
            budget.take(&at, line.len())?;
            let base = path.parent().unwrap_or(Path::new("."));
            collect(&base.join(included.trim()), depth + 1, sections, budget)?;
        } else if let Some(name) = line.strip_prefix('[') {
            budget.take(&at, line.len())?;
            let Some(section) = header(&at, name) else {
                return usage(format!("{at}: {} is not a [section] header", shown(line)));
            };
            a_job_file = true;
            sections.push(section);
        } else {
            let Some(section) = sections.last_mut() else {
                return usage(format!(
                    "{at}: {} comes before any [section]: fio options belong to [global] or a [job]",
                    shown(line)
                ));
            };
            let substituted = substitute(&at, line, budget)?;
            let line = substituted.trim();
            match option(&at, line) {
                Some(option) => section.options.push(option?),
                None => {
                    return usage(format!(
                        "{at}: {} is not key=value or a bare key",
                        shown(line)
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The line up to a `;` or `#` (fio cuts comments there).
fn without_comment(line: &str) -> &str {
    line.split(['#', ';']).next().unwrap_or("")
}

/// The section a header line opens (`rest` follows its `[`); None when
/// it is not one.
fn header(at: &str, rest: &str) -> Option<Section> {
    let name = rest.strip_suffix(']').map(str::trim)?;
    (!name.is_empty()).then(|| Section {
        at: at.to_string(),
        name: name.to_string(),
        options: Vec::new(),
    })
}

/// The option a `key=value` or bare `key` line sets; None when the line is
/// neither, an error for a key without its value.
fn option(at: &str, line: &str) -> Option<anyhow::Result<Opt>> {
    let (key, value) = match line.split_once('=') {
        Some((key, value)) => (key.trim(), Some(value.trim().to_string())),
        None => (line, None),
    };
    // fio's option names are words of letters, digits and '_'; a line of
    // another file (`root:$y$...` of /etc/shadow, NULs of
    // /proc/self/environ) is not taken for one.
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if key.is_empty()
        || !key.chars().all(is_name)
        || line.chars().any(|c| c.is_control() && c != '\t')
    {
        return None;
    }
    if value.as_deref() == Some("") {
        return Some(usage(format!("{at}: {key}= has no value")));
    }
    Some(Ok(Opt {
        at: at.to_string(),
        key: canonical(&key.to_ascii_lowercase()).to_string(),
        value,
    }))
}

/// The line with every `${VAR}` replaced by the environment's value, taken
/// from `budget` as it grows.
fn substitute(at: &str, line: &str, budget: &mut Budget) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        budget.take(at, start)?;
        out.push_str(&rest[..start]);
        let Some(len) = rest[start + 2..].find('}') else {
            return usage(format!("{at}: '${{' without its closing '}}'"));
        };
        let name = &rest[start + 2..start + 2 + len];
        match std::env::var(name) {
            Ok(value) => {
                budget.take(at, value.len())?;
                out.push_str(&value);
            }
            Err(_) => {
                return usage(format!(
                    "{at}: ${{{name}}} is not set in the environment (or not text)"
                ));
            }
        }
        rest = &rest[start + 3 + len..];
    }
    budget.take(at, rest.len())?;
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(text: &str) -> anyhow::Result<Vec<Section>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jobs.fio");
        std::fs::write(&path, text).unwrap();
        read_sections(&path)
    }

    #[test]
    fn reads_sections_flags_and_comments() {
        let read = sections("; head\n[global]\nbs=4k # trailing\n\n[job1]\n time_based\n").unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].name, "global");
        let bs = &read[0].options[0];
        assert_eq!((bs.key.as_str(), bs.value.as_deref()), ("bs", Some("4k")));
        assert!(bs.at.ends_with("jobs.fio:3"), "{}", bs.at);
        assert_eq!(read[1].options[0].value, None);
    }

    #[test]
    fn substitutes_the_environment() {
        // PATH is set wherever tests run (setting a variable would race
        // with the other tests' threads).
        let path = std::env::var("PATH").unwrap();
        let read = sections("[j]\ndescription=${PATH}!\n").unwrap();
        assert_eq!(read[0].options[0].value, Some(format!("{path}!")));
        let e = sections("[j]\nbs=${FSBENCH_FIO_UNSET_X}\n").unwrap_err();
        assert!(format!("{e:#}").contains("jobs.fio:2: ${FSBENCH_FIO_UNSET_X} is not set"));
    }

    /// fio keeps `${VAR}` of a header and of an include as written.
    #[test]
    fn section_names_and_includes_are_not_substituted() {
        let read = sections("[job-${PATH}]\nsize=1m\n").unwrap();
        assert_eq!(read[0].name, "job-${PATH}");
        let e = sections("[j]\ninclude ${PATH}.fio\n").unwrap_err();
        assert!(format!("{e:#}").contains("${PATH}.fio"), "{e:#}");
    }

    #[test]
    fn includes_are_relative_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/common.fio"), "[global]\nsize=1m\n").unwrap();
        std::fs::write(dir.path().join("main.fio"), "include sub/common.fio\n[j]\n").unwrap();
        let read = read_sections(&dir.path().join("main.fio")).unwrap();
        assert_eq!(read.len(), 2);
        std::fs::write(dir.path().join("loop.fio"), "include loop.fio\n").unwrap();
        let e = read_sections(&dir.path().join("loop.fio")).unwrap_err();
        assert!(
            format!("{e:#}").contains("nested more than 8 deep"),
            "{e:#}"
        );
        std::fs::write(dir.path().join("big.fio"), vec![b'#'; 2 << 20]).unwrap();
        std::fs::write(dir.path().join("inc.fio"), "include big.fio\n").unwrap();
        let e = read_sections(&dir.path().join("inc.fio")).unwrap_err();
        assert!(
            format!("{e:#}").contains("job file larger than 1 MiB"),
            "{e:#}"
        );
    }

    #[test]
    fn malformed_lines_are_named() {
        let cases = [
            ("bs=4k\n", "jobs.fio:1: 'bs=4k' comes before any [section]"),
            (
                "[j\n",
                "jobs.fio:1: this line (not quoted: no [section] before it",
            ),
            ("[j]\n[k\n", "jobs.fio:2: '[k' is not a [section] header"),
            ("[]\n", "is not a [section] header"),
            ("[j]\nbs=\n", "jobs.fio:2: bs= has no value"),
            ("[j]\nb s=4k\n", "is not key=value"),
            ("[j]\nbs=${X\n", "without its closing"),
            ("[j]\ninclude missing.fio\n", "cannot read job file"),
        ];
        for (text, needle) in cases {
            let e = format!("{:#}", sections(text).unwrap_err());
            assert!(e.contains(needle) && !e.contains('\n'), "{text:?}: {e}");
        }
    }

    /// `include /etc/shadow` once printed root's line of it.
    #[test]
    fn an_included_file_that_is_not_a_job_file_is_never_quoted() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("shadow");
        std::fs::write(&secret, "root:$y$j9T$secret:19000:0:99999:7:::\n").unwrap();
        let text = format!("[j]\ninclude {}\n", secret.display());
        let e = format!("{:#}", sections(&text).unwrap_err());
        assert!(e.contains("shadow:1: this line (not quoted"), "{e}");
        assert!(!e.contains("secret") && !e.contains("root:"), "{e}");
        let environ = dir.path().join("environ");
        std::fs::write(&environ, "TOKEN=hunter2\0HOME=/root\0").unwrap();
        let text = format!("[j]\ninclude {}\n", environ.display());
        let e = format!("{:#}", sections(&text).unwrap_err());
        assert!(
            e.contains("environ:1: this line (not quoted") && !e.contains("hunter2"),
            "{e}"
        );
    }

    /// 2,000 `${PATH}` on one line of each of many lines: refused once the
    /// expanded text passes the bound, before it is built.
    #[test]
    fn variables_expand_to_a_bounded_text() {
        let path = std::env::var("PATH").unwrap();
        let line = "description=".to_string() + &"${PATH}".repeat(2000) + "\n";
        let lines = (input::FIO_JOBFILE.limit as usize) / (path.len() * 2000) + 2;
        let e = format!(
            "{:#}",
            sections(&("[j]\n".to_string() + &line.repeat(lines))).unwrap_err()
        );
        assert!(e.contains("come to more than 1 MiB"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
