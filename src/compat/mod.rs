//! The command languages and output formats of the tools fsbench replaces.
pub mod bonnie;
pub mod fio;
pub mod postmark;
pub mod vdbench;
