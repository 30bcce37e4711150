//! bonnie++'s option values: `-s size[:chunk[:seeks[:seekers]]]`,
//! `-n num[:max[:min[:dirs[:chunk]]]]`, `-f[N]`, with its units and
//! defaults, and clear errors where bonnie++ prints only its usage text.
use crate::error::usage;
use crate::size::parse_size;
use crate::workload::bonnie::{FileKind, FileTestConfig, MIB};
use crate::workload::threads::MAX_THREADS;

pub const DEFAULT_CHUNK: usize = 8192;
pub const DEFAULT_SEEKS: u64 = 8192;
pub const DEFAULT_SEEKERS: u32 = 5;
pub const DEFAULT_BYTE_IO_MIB: u64 = 3;
pub const DEFAULT_FILES_K: u64 = 16;
/// A bound far beyond any real run (2^30 × 1024 = 2^40 files): keeps every
/// file count and size product inside u64, and every file index within the
/// 10 hex digits of bonnie++'s names.
pub const MAX_FILES_K: u64 = 1 << 30;
/// bonnie++'s floor for the automatic data size.
const MIN_AUTO_SIZE_MIB: u64 = 300;

#[derive(Debug, Clone, PartialEq)]
pub struct SizeSpec {
    pub file_size_mib: u64,
    pub chunk: usize,
    pub seeks: u64,
    pub seekers: u32,
}

/// `-s size[:chunk[:seeks[:seekers]]]`; size in MiB unless suffixed.
pub fn parse_size_spec(text: &str) -> anyhow::Result<SizeSpec> {
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() > 4 {
        return usage(format!("-s {text}: at most size:chunk:seeks:seekers"));
    }
    let field = |i: usize| parts.get(i).copied().filter(|p| !p.is_empty());
    let bytes = parse_size(parts[0], MIB).map_err(|e| prefixed("-s", e))?;
    if bytes % MIB != 0 {
        return usage(format!(
            "-s {text}: the file size must be a whole number of MiB"
        ));
    }
    let chunk = match field(1) {
        Some(c) => parse_chunk(c, "-s")?,
        None => DEFAULT_CHUNK,
    };
    let seeks = match field(2) {
        Some(s) => parse_count(s, "-s seeks")?,
        None => DEFAULT_SEEKS,
    };
    let seekers = match field(3) {
        Some(s) => parse_count(s, "-s seekers")?,
        None => u64::from(DEFAULT_SEEKERS),
    };
    if seeks == 0 || !(1..=u64::from(MAX_THREADS)).contains(&seekers) {
        return usage(format!(
            "-s {text}: seeks must be at least 1 and seekers 1 to {MAX_THREADS}"
        ));
    }
    Ok(SizeSpec {
        file_size_mib: bytes / MIB,
        chunk,
        seeks,
        seekers: seekers as u32,
    })
}

/// A chunk size: a power of two from 256 bytes to 1 MiB, as bonnie++ demands.
fn parse_chunk(text: &str, flag: &str) -> anyhow::Result<usize> {
    let chunk = parse_size(text, 1).map_err(|e| prefixed(flag, e))?;
    if !(256..=MIB).contains(&chunk) || !chunk.is_power_of_two() {
        return usage(format!(
            "{flag}: chunk size {text} must be a power of two from 256 to 1m"
        ));
    }
    Ok(chunk as usize)
}

/// A count with bonnie++'s optional `k` (×1024).
fn parse_count(text: &str, what: &str) -> anyhow::Result<u64> {
    parse_scaled_count(text, 'k', what)
}

/// A whole number, multiplied by 1024 when it ends in `suffix`.
fn parse_scaled_count(text: &str, suffix: char, what: &str) -> anyhow::Result<u64> {
    let (digits, multiplier) = match text.strip_suffix([suffix, suffix.to_ascii_uppercase()]) {
        Some(d) => (d, 1024),
        None => (text, 1),
    };
    match digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(multiplier))
    {
        Some(n) => Ok(n),
        None => usage(format!("{what}: '{text}' is not a whole number")),
    }
}

/// `-n num[:max[:min[:dirs[:chunk]]]]`: num in units of 1024 files (`m`
/// multiplies by 1024); sizes in bytes with k/m/g; max -1 / -2 for hard /
/// symbolic links.
pub fn parse_file_spec(text: &str) -> anyhow::Result<FileTestConfig> {
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() > 5 {
        return usage(format!(
            "-n {text}: at most num:max:min:dirs:chunk (5 fields)"
        ));
    }
    let field = |i: usize| parts.get(i).copied().filter(|p| !p.is_empty());
    let num_k = parse_file_count(parts[0])?;
    if num_k > MAX_FILES_K {
        return usage(format!(
            "-n {text}: too many files (at most {MAX_FILES_K} × 1024)"
        ));
    }
    let max = field(1)
        .map(parse_max_size)
        .transpose()?
        .unwrap_or(MaxSize::Bytes(0));
    let min = match field(2) {
        Some(m) => parse_size(m, 1).map_err(|e| prefixed("-n min", e))?,
        None => 0,
    };
    let kind = match max {
        MaxSize::Bytes(max) if max < min => {
            return usage(format!("-n {text}: max size {max} is below min size {min}"));
        }
        MaxSize::Bytes(max) => FileKind::Sized { max, min },
        MaxSize::HardLinks => FileKind::HardLinks,
        MaxSize::SymLinks => FileKind::SymLinks,
    };
    let dirs = field(3)
        .map(|d| parse_count(d, "-n dirs"))
        .transpose()?
        .unwrap_or(1);
    let chunk = field(4)
        .map(|c| parse_chunk(c, "-n"))
        .transpose()?
        .unwrap_or(DEFAULT_CHUNK);
    if dirs == 0 {
        return usage(format!(
            "-n {text}: the number of directories must be at least 1"
        ));
    }
    if num_k > 0 && dirs > num_k * 1024 {
        return usage(format!(
            "-n {text}: more directories ({dirs}) than files ({})",
            num_k * 1024
        ));
    }
    Ok(FileTestConfig {
        num_k,
        kind,
        dirs,
        chunk,
    })
}

enum MaxSize {
    Bytes(u64),
    HardLinks,
    SymLinks,
}

fn parse_max_size(text: &str) -> anyhow::Result<MaxSize> {
    match text {
        "-1" => Ok(MaxSize::HardLinks),
        "-2" => Ok(MaxSize::SymLinks),
        _ => Ok(MaxSize::Bytes(
            parse_size(text, 1).map_err(|e| prefixed("-n max", e))?,
        )),
    }
}

/// The number of files, in units of 1024; `m` multiplies by 1024 again.
fn parse_file_count(text: &str) -> anyhow::Result<u64> {
    parse_scaled_count(text, 'm', "-n (files, in units of 1024)")
}

/// `-f` alone skips the per-char tests, `-fN` sets their size in MiB.
pub fn parse_per_char(flag: Option<&str>) -> anyhow::Result<u64> {
    match flag {
        None => Ok(DEFAULT_BYTE_IO_MIB),
        Some("") => Ok(0),
        Some(n) => match n.parse() {
            Ok(mib) => Ok(mib),
            Err(_) => usage(format!("-f{n}: expected a number of MiB")),
        },
    }
}

/// bonnie++'s default data size: twice RAM, at least 300 MiB, rounded up to
/// a whole GiB when more than half a GiB over.
pub fn default_file_size_mib(ram_mib: u64) -> u64 {
    let size = MIN_AUTO_SIZE_MIB.max(2 * ram_mib);
    if size % 1024 > 512 {
        size.next_multiple_of(1024)
    } else {
        size
    }
}

fn prefixed(flag: &str, err: anyhow::Error) -> anyhow::Error {
    crate::error::UsageError(format!("{flag}: {err}")).into()
}

/// The file tests hold every name in memory (about 24 bytes a file); refuse
/// counts that would not fit in half of the real RAM (whatever `-r` says)
/// rather than swap or be killed.
pub fn check_name_memory(files: &FileTestConfig, ram_mib: u64) -> anyhow::Result<()> {
    let needed = files.num_k.saturating_mul(1024).saturating_mul(24);
    if ram_mib > 0 && needed > ram_mib * MIB / 2 {
        return usage(format!(
            "-n {}: {} files need about {} MiB of memory for their names; RAM is {ram_mib} MiB",
            files.num_k,
            files.num_k * 1024,
            needed / MIB
        ));
    }
    Ok(())
}

/// bonnie++'s default seed: pid XOR time.
pub fn default_seed() -> u32 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    std::process::id() ^ now.as_secs() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_spec_defaults_and_suffixes() {
        let spec = parse_size_spec("2g").unwrap();
        assert_eq!(
            spec,
            SizeSpec {
                file_size_mib: 2048,
                chunk: 8192,
                seeks: 8192,
                seekers: 5
            }
        );
        let spec = parse_size_spec("256:16k:1k:3").unwrap();
        assert_eq!(
            spec,
            SizeSpec {
                file_size_mib: 256,
                chunk: 16384,
                seeks: 1024,
                seekers: 3
            }
        );
        assert_eq!(parse_size_spec("0").unwrap().file_size_mib, 0);
        assert_eq!(parse_size_spec("512::100").unwrap().chunk, 8192);
    }

    #[test]
    fn size_spec_rejects_bad_values() {
        for bad in [
            "banana",
            "1g:1000",
            "1g:128",
            "1g:2m",
            "1:2:3:4:5",
            "100k",
            "1g:8k:0",
            "1g:8k:8:0",
        ] {
            assert!(parse_size_spec(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn file_spec_fields() {
        let f = parse_file_spec("64:4k:1k:4:16k").unwrap();
        assert_eq!(f.num_k, 64);
        assert_eq!(
            f.kind,
            FileKind::Sized {
                max: 4096,
                min: 1024
            }
        );
        assert_eq!((f.dirs, f.chunk), (4, 16384));
        assert_eq!(parse_file_spec("1m").unwrap().num_k, 1024);
        assert_eq!(parse_file_spec("1:-1").unwrap().kind, FileKind::HardLinks);
        assert_eq!(parse_file_spec("1:-2::2").unwrap().kind, FileKind::SymLinks);
        assert_eq!(
            parse_file_spec("16").unwrap().kind,
            FileKind::Sized { max: 0, min: 0 }
        );
        assert_eq!(parse_file_spec("0").unwrap().num_k, 0);
    }

    #[test]
    fn file_spec_rejects_bad_values() {
        for bad in [
            "1:2:3:4:5:6",
            "10:5:100",
            "x",
            "1:0:0:0",
            "1:0:0:5000",
            "1:-3",
        ] {
            assert!(parse_file_spec(bad).is_err(), "{bad} accepted");
        }
        let err = parse_file_spec("10:5:100").unwrap_err().to_string();
        assert!(err.contains("below min"), "{err}");
    }

    #[test]
    fn per_char_flag_and_default_size() {
        assert_eq!(parse_per_char(None).unwrap(), 3);
        assert_eq!(parse_per_char(Some("")).unwrap(), 0);
        assert_eq!(parse_per_char(Some("20")).unwrap(), 20);
        assert!(parse_per_char(Some("x")).is_err());
        assert_eq!(default_file_size_mib(24104), 48208);
        assert_eq!(default_file_size_mib(100), 300);
        assert_eq!(default_file_size_mib(800), 2048);
    }
}
