//! PostMark compatibility: its command language (`command`), the session
//! that runs commands from configuration files, stdin or the `pm>` prompt
//! (`session`), and its reports (`report`).
pub mod command;
pub mod report;
pub mod session;
