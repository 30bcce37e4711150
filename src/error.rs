//! Error kinds that decide the exit code. Everything else is an
//! `anyhow::Error` and means "the run failed" (exit 1).
use thiserror::Error;

/// Bad command-line input or configuration: exit code 2.
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

/// Shorthand for returning a usage error from a parser.
pub fn usage<T>(msg: impl Into<String>) -> anyhow::Result<T> {
    Err(UsageError(msg.into()).into())
}
