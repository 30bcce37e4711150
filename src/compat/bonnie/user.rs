//! bonnie++'s `-u user[:group]` and `-g group`: the run switches to that
//! user and group for the whole process before anything is created, so
//! the writability checks and every file are that user's.
use std::ffi::CString;

use crate::error::usage;

/// Switches to `user` (and its primary group, or `group`), or only to
/// `group`; nothing when neither is given.
pub fn switch_to(user: Option<&str>, group: Option<&str>) -> anyhow::Result<()> {
    match (user, group) {
        (Some(user), group) => drop_privileges(user, group),
        (None, Some(group)) => set_group(resolve_group(group)?),
        (None, None) => Ok(()),
    }
}

/// `-u user[:group]`: group first, then user (a user can no longer change
/// its group).
fn drop_privileges(spec: &str, group: Option<&str>) -> anyhow::Result<()> {
    let (user, group_in_spec) = match spec.split_once(':') {
        Some((u, g)) => (u, Some(g)),
        None => (spec, None),
    };
    let (uid, primary_gid) = resolve_user(user)?;
    let gid = match group.or(group_in_spec) {
        Some(g) => resolve_group(g)?,
        None => primary_gid,
    };
    set_group(gid)?;
    // SAFETY: plain syscall wrapper; glibc applies it to every thread.
    if unsafe { libc::setuid(uid) } != 0 {
        anyhow::bail!(
            "cannot switch to user {user}: {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

fn set_group(gid: u32) -> anyhow::Result<()> {
    // SAFETY: plain syscall wrappers with valid arguments.
    let failed = unsafe { libc::setgroups(1, &gid) != 0 || libc::setgid(gid) != 0 };
    if failed {
        anyhow::bail!(
            "cannot switch to group {gid}: {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

/// A user name or numeric uid → (uid, primary gid). An unknown numeric uid
/// gets group `nogroup`, as in bonnie++.
fn resolve_user(user: &str) -> anyhow::Result<(u32, u32)> {
    let name = CString::new(user)?;
    // SAFETY: getpwnam/getpwuid return NULL or a pointer valid until the
    // next call; we copy the two fields out at once.
    unsafe {
        let entry = match user.parse::<u32>() {
            Ok(uid) => libc::getpwuid(uid),
            Err(_) => libc::getpwnam(name.as_ptr()),
        };
        if !entry.is_null() {
            return Ok(((*entry).pw_uid, (*entry).pw_gid));
        }
    }
    match user.parse::<u32>() {
        Ok(uid) => Ok((uid, resolve_group("nogroup")?)),
        Err(_) => usage(format!("-u {user}: no such user")),
    }
}

fn resolve_group(group: &str) -> anyhow::Result<u32> {
    if let Ok(gid) = group.parse::<u32>() {
        return Ok(gid);
    }
    let name = CString::new(group)?;
    // SAFETY: as in resolve_user.
    let entry = unsafe { libc::getgrnam(name.as_ptr()) };
    if entry.is_null() {
        return usage(format!("no such group: {group}"));
    }
    // SAFETY: non-null entry from getgrnam.
    Ok(unsafe { (*entry).gr_gid })
}
