//! bonnie++ compatibility: its option syntax (`args`) and its text table and
//! CSV line (`report`), in the 1.98 format bonnie++ 2.00a prints.
pub mod args;
pub mod report;
pub mod user;
