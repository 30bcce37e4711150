//! The JSON format: the result itself, pretty-printed (what `--json` wrote,
//! re-serialised, so a re-rendered file reads like the original).
use super::{Reporter, Summary};
use crate::result::RunResult;

pub struct Json;

impl Reporter for Json {
    fn render(&self, run: &RunResult, _summary: &Summary) -> anyhow::Result<String> {
        let mut text = serde_json::to_string_pretty(run)?;
        text.push('\n');
        Ok(text)
    }
}
