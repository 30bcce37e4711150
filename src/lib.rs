//! fsbench: benchmark file systems and storage configurations side by side.
//!
//! The crate is organised by concern: `storage` (targets, scratch
//! directories, safety, environment probe), `io` (aligned buffers and the
//! syscalls workloads issue), `measure` (clocks, CPU, latency histograms,
//! phases into metrics), `workload` (what is measured), `driver` (the one
//! lifecycle that runs workloads on targets), `suite` (suite files),
//! `compat` (the command languages and formats of the tools fsbench
//! replaces), `result` (the one result model), `report` (its views),
//! `scale` (MPI) and `cli` (arguments, the registry of workload kinds,
//! dispatch). docs/architecture.md is the map.
pub mod analysis;
pub mod cli;
pub mod compat;
pub mod configs;
pub mod console;
pub mod crash;
pub mod driver;
pub mod error;
pub mod history;
pub mod input;
pub mod interrupt;
pub mod io;
pub mod kernel_file;
pub mod measure;
pub mod own_session;
pub mod policy;
pub mod report;
pub mod result;
pub mod results;
pub mod rng;
pub mod scale;
pub mod session;
pub mod shell;
pub mod size;
pub mod storage;
pub mod suite;
pub mod units;
pub mod workload;
