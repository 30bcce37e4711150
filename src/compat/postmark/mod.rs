//! PostMark compatibility: its command language (`command`), the session
//! that runs commands from configuration files, stdin or the `pm>` prompt
//! (`session`, `prompt`), each `run` through the driver (`driven`), and
//! what PostMark prints at the end of a run (`printout`: its verbose and
//! terse reports). What each source of commands may do is `crate::policy`.
pub mod command;
pub mod driven;
pub mod interpreter;
pub mod printout;
pub mod prompt;
