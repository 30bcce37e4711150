//! PostMark's commands from stdin: at a `pm>` prompt on a terminal, where
//! an error is shown and the session goes on, else line by line as
//! PostMark reads them, where an error ends the session.
use std::io::{IsTerminal, Write};

use anyhow::Context;

use super::interpreter::{Flow, Runner, Session};
use crate::console::stderr_line;
use crate::error::{Interrupted, usage};
use crate::input::StdinLines;
use crate::policy::{Origin, Policy};
use crate::scale;

const MPI_NEEDS_CONFIG: &str =
    "under MPI, give the commands in a CONFIG file: stdin reaches rank 0 alone";

/// A whole session: the startup file's commands, then stdin's (unless the
/// file quits). Under MPI stdin reaches rank 0 alone: every rank runs the
/// file only.
pub fn run_session(
    runner: &mut dyn Runner,
    startup: Option<&std::path::Path>,
    policy: Policy,
) -> anyhow::Result<()> {
    let mut stdout = scale::root_stdout();
    let mut session = Session::new(runner, &mut stdout, policy);
    let flow = match startup {
        Some(path) => session.execute_file(path)?,
        None if scale::size() > 1 => return usage(MPI_NEEDS_CONFIG),
        None => Flow::Continue,
    };
    if flow == Flow::Continue && scale::size() == 1 {
        read_stdin(&mut session)?;
    }
    Ok(())
}

/// Commands from stdin. On a terminal: a `pm>` prompt, and an error
/// is shown and the session goes on; otherwise an error ends it.
fn read_stdin(session: &mut Session<'_>) -> anyhow::Result<()> {
    let interactive = std::io::stdin().is_terminal();
    let origin = match interactive {
        true => Origin::Prompt,
        false => Origin::Written,
    };
    let mut stdout = std::io::stdout();
    let mut say = |text: &str| {
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
            .context("cannot write to standard output")
    };
    if interactive {
        say(&format!(
            "fsbench {} PostMark mode: PostMark 1.53's commands ('help' lists them)\n",
            env!("CARGO_PKG_VERSION")
        ))?;
    }
    let mut lines = StdinLines::new();
    for number in 1.. {
        if interactive {
            say("pm>")?;
        }
        let Some(line) = lines.next_line()? else {
            break;
        };
        match session.execute(&line, origin) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Quit) => break,
            Err(e) if interactive && e.downcast_ref::<Interrupted>().is_none() => {
                stderr_line!("fsbench: error: {}", crate::error::error_line(&e));
            }
            Err(e) => return Err(e.context(format!("<stdin>:{number}"))),
        }
    }
    Ok(())
}
