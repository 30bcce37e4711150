//! vdbench: its parameter files (a subset: `sd=`, `wd=`, `rd=` with
//! for-loops) and its interval report.
pub mod parmfile;
pub mod report;
