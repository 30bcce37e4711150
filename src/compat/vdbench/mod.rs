//! vdbench: its parameter files (a subset: `sd=`, `wd=`, `rd=` with
//! for-loops) and its interval report (`printout`, and `sink`, which
//! prints it as a run goes).
mod lexer;
pub mod parmfile;
mod plan;
pub mod printout;
pub mod sink;
mod values;
