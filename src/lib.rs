//! fsbench: benchmark file systems and storage configurations side by side.
//!
//! The crate is organised by concern: `storage` (targets, scratch directories, safety,
//! environment probe), `io` (aligned buffers and the syscalls workloads
//! issue), `measure` (clocks, CPU, latency histograms), `workload` (what is
//! measured), `compat` (the command languages and formats of the tools
//! fsbench replaces), `result` (the one result model) and `cli`.
pub mod cli;
pub mod compat;
pub mod error;
pub mod input;
pub mod interrupt;
pub mod io;
pub mod measure;
pub mod report;
pub mod result;
pub mod rng;
pub mod runner;
pub mod scale;
pub mod size;
pub mod storage;
pub mod suite;
pub mod workload;
