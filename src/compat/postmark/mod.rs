//! PostMark compatibility: its command language (`command`), the session
//! that runs commands from configuration files, stdin or the `pm>` prompt
//! (`session`), what each source may do (`policy`), and its reports
//! (`report`).
pub mod command;
pub mod driven;
pub mod prompt;
pub mod report;
pub mod session;
