//! vdbench: its parameter files (a subset: `sd=`, `wd=`, `rd=` with
//! for-loops) and its interval report.
mod lexer;
pub mod parmfile;
mod plan;
pub mod report;
pub mod sink;
mod values;
