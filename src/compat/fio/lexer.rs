//! fio's lexical rules: `[section]` headers, `key=value` and bare `key`
//! lines, `;` and `#` comments (whole lines, or the rest of a line as fio
//! cuts them), `include FILE` relative to the including file, and
//! `${VAR}` taken from the environment.
use std::path::Path;

use crate::error::usage;
use crate::input::{self, MAX_INCLUDE_DEPTH, read_input_file};

/// One option as written: where, its key (lower case) and its value
/// (None for a bare flag such as `time_based`).
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
    collect(path, 0, &mut sections)?;
    Ok(sections)
}

fn collect(path: &Path, depth: usize, sections: &mut Vec<Section>) -> anyhow::Result<()> {
    if depth > MAX_INCLUDE_DEPTH {
        return usage(format!(
            "{}: include nested more than {MAX_INCLUDE_DEPTH} deep (a loop?)",
            path.display()
        ));
    }
    let text = read_input_file(path, input::FIO_JOBFILE)?;
    for (number, raw) in text.lines().enumerate() {
        let at = format!("{}:{}", path.display(), number + 1);
        let line = substitute(&at, without_comment(raw))?;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(included) = line.strip_prefix("include ") {
            let base = path.parent().unwrap_or(Path::new("."));
            collect(&base.join(included.trim()), depth + 1, sections)?;
        } else if let Some(name) = line.strip_prefix('[') {
            sections.push(header(&at, name)?);
        } else {
            let Some(section) = sections.last_mut() else {
                return usage(format!(
                    "{at}: '{line}' comes before any [section]: fio options belong to [global] or a [job]"
                ));
            };
            section.options.push(option(&at, line)?);
        }
    }
    Ok(())
}

/// The line up to a `;` or `#` (fio cuts comments there).
fn without_comment(line: &str) -> &str {
    line.split(['#', ';']).next().unwrap_or("")
}

fn header(at: &str, rest: &str) -> anyhow::Result<Section> {
    let name = match rest.strip_suffix(']') {
        Some(name) if !name.trim().is_empty() => name.trim(),
        _ => return usage(format!("{at}: '[{rest}' is not a [section] header")),
    };
    Ok(Section {
        at: at.to_string(),
        name: name.to_string(),
        options: Vec::new(),
    })
}

fn option(at: &str, line: &str) -> anyhow::Result<Opt> {
    let (key, value) = match line.split_once('=') {
        Some((key, value)) => (key.trim(), Some(value.trim().to_string())),
        None => (line, None),
    };
    if key.is_empty() || key.contains(char::is_whitespace) {
        return usage(format!("{at}: '{line}' is not key=value or a bare key"));
    }
    if value.as_deref() == Some("") {
        return usage(format!("{at}: {key}= has no value"));
    }
    Ok(Opt {
        at: at.to_string(),
        key: key.to_ascii_lowercase(),
        value,
    })
}

/// The line with every `${VAR}` replaced by the environment's value.
fn substitute(at: &str, line: &str) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let Some(len) = rest[start + 2..].find('}') else {
            return usage(format!("{at}: '${{' without its closing '}}'"));
        };
        let name = &rest[start + 2..start + 2 + len];
        match std::env::var(name) {
            Ok(value) => out.push_str(&value),
            Err(_) => {
                return usage(format!(
                    "{at}: ${{{name}}} is not set in the environment (or not text)"
                ));
            }
        }
        rest = &rest[start + 3 + len..];
    }
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
            ("[j\n", "jobs.fio:1: '[j' is not a [section] header"),
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
}
