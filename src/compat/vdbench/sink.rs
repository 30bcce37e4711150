//! vdbench's report as an I/O workload runs: its events become the
//! console lines (or, in a suite, only the warnings and bad blocks).
use std::cell::RefCell;
use std::rc::Rc;
use std::time::SystemTime;

use super::printout::{HEADER_EVERY, header, job_line, row_line, start_line};
use crate::console::{Stream, emit};
use crate::workload::pattern::counters::IntervalFigures;
use crate::workload::pattern::{Event, Sink};

/// Only what the user must see: warnings and bad blocks, on stderr.
pub fn warnings_sink() -> Sink {
    Box::new(|event| match event {
        Event::Warning(text) => emit(Stream::Stderr, &format!("fsbench: warning: {text}\n")),
        Event::BadBlock(block) => emit(Stream::Stderr, &format!("fsbench: {block}\n")),
        _ => Ok(()),
    })
}

/// Prints the workload's events as vdbench's report; remembers each job's
/// average for the suite table.
pub fn report_sink(
    to: Stream,
    quiet: bool,
    averages: Rc<RefCell<Vec<(String, IntervalFigures)>>>,
) -> Sink {
    let mut current = String::new();
    let mut lines = 0u32;
    Box::new(move |event| match event {
        Event::Start(job, file) => {
            current = job.name.clone();
            lines = 0;
            let mut text = format!(
                "\n{}\n{}\n",
                start_line(job),
                job_line(job, &file.name, file.size)
            );
            if !quiet {
                text.push_str(&header(SystemTime::now()));
            }
            emit(to, &text)
        }
        Event::Interval(row) if !quiet => {
            let mut text = String::new();
            if lines > 0 && lines.is_multiple_of(HEADER_EVERY) {
                text.push_str(&header(SystemTime::now()));
            }
            lines += 1;
            text.push_str(&row_line(row));
            emit(to, &text)
        }
        Event::Interval(_) | Event::Finished(_) => Ok(()),
        Event::Warning(text) => emit(Stream::Stderr, &format!("fsbench: warning: {text}\n")),
        Event::BadBlock(block) => emit(Stream::Stderr, &format!("fsbench: {block}\n")),
        Event::Average(row) => {
            averages
                .borrow_mut()
                .push((current.clone(), row.figures.clone()));
            let text = if quiet {
                format!("{}{}", header(SystemTime::now()), row_line(row))
            } else {
                row_line(row)
            };
            emit(to, &text)
        }
    })
}
