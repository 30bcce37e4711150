//! Error kinds that decide the exit code. Everything else is an
//! `anyhow::Error` and means "the run failed" (exit 1).
use thiserror::Error;

/// Bad command-line input or configuration, or a target that cannot be
/// used as given (missing, read-only, too small): exit code 2.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The run was stopped by a signal: exit code 128 + signal.
#[derive(Debug, Error)]
#[error("interrupted by {name}")]
pub struct Interrupted {
    pub name: &'static str,
    pub signal: i32,
}

/// The line fsbench prints after `fsbench: error: `: the context chain
/// joined by ": " (anyhow's alternate form), with control characters
/// escaped, so that input a message quotes (a newline in a JSON string or a
/// parameter) cannot spread it over several lines.
pub fn error_line(e: &anyhow::Error) -> String {
    format!("{e:#}")
        .chars()
        .flat_map(|c| match c.is_control() {
            true => c.escape_default().collect::<Vec<_>>(),
            false => vec![c],
        })
        .collect()
}

/// Shorthand for returning a usage error from a parser.
pub fn usage<T>(msg: impl Into<String>) -> anyhow::Result<T> {
    Err(UsageError(msg.into()).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_lines_escape_what_input_put_in_them() {
        let e = anyhow::Error::new(UsageError("unknown variant `\n\t`".into())).context("r.json");
        assert_eq!(error_line(&e), "r.json: unknown variant `\\n\\t`");
    }
}
