//! bonnie++ compatibility: its option syntax (`args`), switching user
//! (`user`), and what it prints (`printout`: its text table and CSV line,
//! in the 1.98 format bonnie++ 2.00a prints).
pub mod args;
pub mod printout;
pub mod user;
