//! `--cmd`: the user's own command (rsync, cp, tar...) timed on the same
//! dataset, like hyperfine, with `{src}` and `{dst}` replaced by the
//! dataset and an empty directory in the scratch directory.
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::Context;

use crate::error::usage;

const PLACEHOLDERS: [&str; 2] = ["src", "dst"];

#[derive(Debug, Clone, PartialEq)]
pub struct CommandTemplate {
    pub text: String,
}

impl CommandTemplate {
    /// Accepts a command whose only placeholders are `{src}` and `{dst}`.
    pub fn parse(text: &str) -> anyhow::Result<CommandTemplate> {
        if text.trim().is_empty() {
            return usage("--cmd: the command is empty");
        }
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else {
                return usage(format!(
                    "--cmd '{text}': '{{' without '}}'; use {{src}} and {{dst}}"
                ));
            };
            let name = &rest[open + 1..open + close];
            if !PLACEHOLDERS.contains(&name) {
                return usage(format!(
                    "--cmd '{text}': unknown placeholder {{{name}}}; use {{src}} and {{dst}}"
                ));
            }
            rest = &rest[open + close + 1..];
        }
        Ok(CommandTemplate { text: text.into() })
    }

    /// The shell command line with both placeholders replaced by quoted
    /// paths.
    pub fn render(&self, src: &Path, dst: &Path) -> String {
        self.text
            .replace("{src}", &shell_quote(src))
            .replace("{dst}", &shell_quote(dst))
    }
}

/// `'path'`, with any `'` in it escaped for sh.
fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// Runs `line` with `sh -c` (its output goes to stderr, so fsbench's
/// report on stdout stays clean) and waits for it; on SIGINT/SIGTERM the
/// command's whole process group is stopped first.
pub fn run(line: &str) -> anyhow::Result<()> {
    let stderr = std::io::stderr().as_fd().try_clone_to_owned()?;
    let mut child = Command::new("sh")
        .args(["-c", line])
        .stdin(Stdio::null())
        .stdout(Stdio::from(stderr))
        .process_group(0)
        .spawn()
        .context("cannot start sh")?;
    let status = wait_interruptibly(&mut child)?;
    if !status.success() {
        anyhow::bail!("--cmd {line}: {status}");
    }
    Ok(())
}

fn wait_interruptibly(child: &mut Child) -> anyhow::Result<std::process::ExitStatus> {
    let pid = rustix::process::Pid::from_child(child);
    let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if let Err(e) = crate::interrupt::check() {
            // SAFETY: plain syscall; the group is the child's own (process_group(0)).
            unsafe { libc::kill(-(pid.as_raw_nonzero().get()), libc::SIGTERM) };
            let _ = child.wait();
            return Err(e);
        }
        wait_readable(pidfd.as_ref());
    }
}

/// Sleeps until the child exits (its pidfd becomes readable) or 50 ms
/// pass, whichever is first; the timeout lets signals be noticed.
fn wait_readable(pidfd: Option<&std::os::fd::OwnedFd>) {
    use std::os::fd::AsRawFd;
    match pidfd {
        Some(fd) => {
            let mut poll = libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd we own, for the duration of the call.
            unsafe { libc::poll(&mut poll, 1, 50) };
        }
        None => std::thread::sleep(std::time::Duration::from_millis(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_src_dst_and_refuses_other_placeholders() {
        let t = CommandTemplate::parse("rsync -a {src}/ {dst}/").unwrap();
        assert_eq!(
            t.render(Path::new("/a b"), Path::new("/it's")),
            r"rsync -a '/a b'/ '/it'\''s'/"
        );
        for bad in ["cp -a {source} {dst}", "cp {src", "", "  "] {
            assert!(CommandTemplate::parse(bad).is_err(), "{bad}");
        }
    }
}
