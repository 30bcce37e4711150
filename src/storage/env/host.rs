//! The host: kernel and architecture (uname), distribution (os-release),
//! CPU model and count, memory (/proc and /sys), and how much written data
//! the kernel lets wait in the page cache.
use std::sync::OnceLock;

use super::{HostEnv, UNKNOWN};

/// This machine's host name (uname's nodename).
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// Describes this machine. Never fails: unknown fields become `None`,
/// "unknown" or 0.
pub fn probe_host() -> HostEnv {
    let uname = rustix::system::uname();
    HostEnv {
        hostname: text_or_unknown(uname.nodename().to_bytes()),
        kernel: text_or_unknown(uname.release().to_bytes()),
        kernel_version: text_or_unknown(uname.version().to_bytes()),
        os: read_os_pretty_name(),
        arch: text_or_unknown(uname.machine().to_bytes()),
        cpu_model: read_text("/proc/cpuinfo").and_then(|info| cpu_model_from_cpuinfo(&info)),
        cpu_count: online_cpu_count(),
        ram_bytes: read_text("/proc/meminfo")
            .and_then(|info| mem_total_from_meminfo(&info))
            .unwrap_or(0),
    }
}

fn text_or_unknown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.is_empty() {
        UNKNOWN.to_string()
    } else {
        text.into_owned()
    }
}

/// os-release(5): /etc/os-release wins when it exists; /usr/lib is the fallback.
fn read_os_pretty_name() -> Option<String> {
    ["/etc/os-release", "/usr/lib/os-release"]
        .into_iter()
        .find_map(read_text)
        .and_then(|release| os_release_value(&release, "PRETTY_NAME"))
}

/// The value of `key` in os-release's shell-like `KEY="value"` syntax.
fn os_release_value(release: &str, key: &str) -> Option<String> {
    let raw = release.lines().find_map(|line| {
        let (name, value) = line.split_once('=')?;
        (name.trim() == key).then(|| value.trim())
    })?;
    let value = unquote_shell(raw);
    (!value.is_empty()).then_some(value)
}

/// Strips one level of shell quoting: '...' is literal, "..." honours
/// backslash escapes (os-release allows \" \\ \$ \`).
fn unquote_shell(raw: &str) -> String {
    if let Some(inner) = raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return inner.to_string();
    }
    let inner = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .unwrap_or(raw);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            _ => out.push(c),
        }
    }
    out
}

/// /proc/cpuinfo names the CPU differently per architecture: x86 "model
/// name", 32-bit ARM "Processor", MIPS "cpu model", POWER "cpu", RISC-V
/// "uarch". Tried in this order; arm64 has none of them and gives `None`.
const CPU_MODEL_KEYS: [&str; 5] = ["model name", "Processor", "cpu model", "cpu", "uarch"];

fn cpu_model_from_cpuinfo(cpuinfo: &str) -> Option<String> {
    CPU_MODEL_KEYS
        .iter()
        .find_map(|key| cpuinfo_value(cpuinfo, key))
}

/// The first non-empty value of `key` ("key<tabs>: value" lines).
fn cpuinfo_value(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        let value = value.trim();
        (name.trim() == key && !value.is_empty()).then(|| value.to_string())
    })
}

/// CPUs online now (hotplug and `maxcpus=` can leave some offline), falling
/// back to what the scheduler lets us use if sysfs is absent.
pub fn online_cpu_count() -> usize {
    read_attribute("/sys/devices/system/cpu/online")
        .and_then(|list| count_cpu_list(&list))
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(0)
}

/// Counts a kernel CPU list such as "0-3,5,7-8" (7 CPUs).
fn count_cpu_list(list: &str) -> Option<usize> {
    let list = list.trim();
    if list.is_empty() {
        return None;
    }
    list.split(',').try_fold(0usize, |total, range| {
        let (first, last) = range.split_once('-').unwrap_or((range, range));
        let first: usize = first.trim().parse().ok()?;
        let last: usize = last.trim().parse().ok()?;
        let count = last.checked_sub(first)?.checked_add(1)?;
        total.checked_add(count)
    })
}

/// MemTotal in bytes.
fn mem_total_from_meminfo(meminfo: &str) -> Option<u64> {
    crate::kernel_file::field_bytes(meminfo, "MemTotal")
}

/// How many bytes of written data may stay dirty in the page cache before
/// a writer has to wait for the storage (the kernel's dirty threshold),
/// probed once per process: a write phase that wrote less, unsynced, never
/// waited for the device. None when /proc does not say.
pub fn dirty_limit_bytes() -> Option<u64> {
    static LIMIT: OnceLock<Option<u64>> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let number = |path| read_attribute(path)?.trim().parse::<u64>().ok();
        let available = read_text("/proc/meminfo")
            .and_then(|m| crate::kernel_file::field_bytes(&m, "MemAvailable"));
        dirty_limit(
            number("/proc/sys/vm/dirty_bytes")?,
            number("/proc/sys/vm/dirty_ratio")?,
            available?,
        )
    })
}

/// The dirty threshold from `vm.dirty_bytes` when set (non-zero), else
/// `vm.dirty_ratio` percent of the memory available for the page cache
/// (MemAvailable: close to the kernel's "dirtyable" memory).
fn dirty_limit(dirty_bytes: u64, dirty_ratio: u64, available: u64) -> Option<u64> {
    if dirty_bytes > 0 {
        return Some(dirty_bytes);
    }
    (dirty_ratio > 0).then(|| available / 100 * dirty_ratio.min(100))
}

/// A whole /proc table or small system file (os-release), or `None` if it
/// can't be read or is longer than such a file can be.
fn read_text(path: &str) -> Option<String> {
    crate::kernel_file::read_text(path, crate::kernel_file::TABLE)
}

/// A one-value sysfs or /proc/sys attribute, bounded likewise.
fn read_attribute(path: &str) -> Option<String> {
    crate::kernel_file::read_text(path, crate::kernel_file::ATTRIBUTE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_files_parse() {
        let release =
            "NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n";
        assert_eq!(
            os_release_value(release, "PRETTY_NAME").as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(os_release_value(release, "ID").as_deref(), Some("debian"));
        assert_eq!(
            os_release_value("PRETTY_NAME='A \\ B'", "PRETTY_NAME").as_deref(),
            Some("A \\ B")
        );
        assert_eq!(
            os_release_value(r#"PRETTY_NAME="Say \"hi\"""#, "PRETTY_NAME").as_deref(),
            Some("Say \"hi\"")
        );
        assert_eq!(os_release_value("PRETTY_NAME=\"\"", "PRETTY_NAME"), None);
        assert_eq!(os_release_value("NAME=x", "PRETTY_NAME"), None);

        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU\n";
        assert_eq!(
            cpu_model_from_cpuinfo(x86).as_deref(),
            Some("Intel(R) Xeon(R) CPU")
        );
        let power = "processor\t: 0\ncpu\t\t: POWER9, altivec supported\n";
        assert_eq!(
            cpu_model_from_cpuinfo(power).as_deref(),
            Some("POWER9, altivec supported")
        );
        let arm64 = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n";
        assert_eq!(cpu_model_from_cpuinfo(arm64), None);

        assert_eq!(
            mem_total_from_meminfo("MemTotal:       24684084 kB\nMemFree: 1 kB\n"),
            Some(24684084 * 1024)
        );
        assert_eq!(mem_total_from_meminfo("MemFree: 1 kB\n"), None);

        assert_eq!(count_cpu_list("0-3,5,7-8\n"), Some(7));
        assert_eq!(count_cpu_list("0"), Some(1));
        assert_eq!(count_cpu_list(""), None);
        assert_eq!(count_cpu_list("3-1"), None);
        assert_eq!(count_cpu_list("a-b"), None);
    }

    #[test]
    fn the_dirty_threshold_is_dirty_bytes_or_the_ratio_of_available_memory() {
        assert_eq!(dirty_limit(64 << 20, 20, 10 << 30), Some(64 << 20));
        assert_eq!(dirty_limit(0, 20, 10_000), Some(2_000));
        assert_eq!(dirty_limit(0, 0, 10_000), None);
        assert!(dirty_limit_bytes().is_none_or(|limit| limit > 0));
    }
}
