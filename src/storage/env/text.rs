//! The text report of `fsbench env`: one aligned "key: value" block for
//! the host, then one per target.
use std::fmt::Write as _;

use super::{HostEnv, TargetEnv};
use crate::size::format_bytes;

/// Human-readable report: one aligned "key: value" block for the host, then
/// one per target. Absent values are shown as "-".
pub fn render_text(host: &HostEnv, targets: &[TargetEnv]) -> String {
    let mut blocks = vec![render_block("host", &host_rows(host))];
    blocks.extend(
        targets
            .iter()
            .map(|t| render_block(&format!("target {}", t.path), &target_rows(t))),
    );
    blocks.join("\n")
}

type Rows = Vec<(&'static str, String)>;

fn host_rows(host: &HostEnv) -> Rows {
    // 0 means the probe could not tell, not an empty machine.
    let known = |n: u64, show: fn(u64) -> String| if n == 0 { "-".to_string() } else { show(n) };
    vec![
        ("hostname", host.hostname.clone()),
        ("os", or_dash(host.os.as_deref())),
        ("kernel", host.kernel.clone()),
        ("kernel version", host.kernel_version.clone()),
        ("arch", host.arch.clone()),
        ("cpu model", or_dash(host.cpu_model.as_deref())),
        (
            "cpus online",
            known(host.cpu_count as u64, |n| n.to_string()),
        ),
        ("memory", known(host.ram_bytes, format_bytes)),
    ]
}

fn target_rows(target: &TargetEnv) -> Rows {
    let rotational = target.rotational.map(|r| if r { "yes" } else { "no" });
    let risks = target.risks.iter().map(|r| ("RISK", r.message.clone()));
    let mut rows = vec![
        ("path", target.path.clone()),
        ("mount point", target.mount_point.clone()),
        ("fs type", target.fs_type.clone()),
        ("source", target.source.clone()),
        ("mount options", target.mount_options.clone()),
        (
            "loop backing file",
            or_dash(target.loop_backing_file.as_deref()),
        ),
        ("block device", or_dash(target.block_device.as_deref())),
        ("counters of", counted_devices(target)),
        ("rotational", or_dash(rotational)),
        ("scheduler", or_dash(target.scheduler.as_deref())),
        ("write cache", or_dash(target.write_cache.as_deref())),
        ("raid level", or_dash(target.raid_level.as_deref())),
        (
            "device",
            target
                .device_facts
                .as_ref()
                .map_or_else(|| "-".to_string(), |f| f.described()),
        ),
        ("total size", format_bytes(target.total_bytes)),
        ("free size", format_bytes(target.free_bytes)),
        ("total inodes", target.total_inodes.to_string()),
        ("free inodes", target.free_inodes.to_string()),
    ];
    rows.extend(risks);
    rows
}

/// The devices whose counters count the target's I/O, then those beneath
/// them: "loop0; beneath: vda"; "no device" (tmpfs); a network mount's
/// counters and link.
fn counted_devices(target: &TargetEnv) -> String {
    if let Some(network) = &target.network {
        return network_text(network);
    }
    let names = |counted: bool| {
        let devices = target.devices.iter().filter(|d| d.counted == counted);
        devices
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (names(true), names(false)) {
        (counted, _) if counted.is_empty() => "no device".to_string(),
        (counted, below) if below.is_empty() => counted,
        (counted, below) => format!("{counted}; beneath: {below}"),
    }
}

/// "NFS client counters (mountstats); link 117.7 MiB/s (eth0, 1000 Mb/s
/// as its device reports)", "network interfaces (all but lo); link
/// unknown (give --link-speed)".
fn network_text(network: &crate::result::env::NetworkMount) -> String {
    use crate::result::env::Network;
    let counters = match network.counters {
        Network::Nfs { .. } => "NFS client counters (mountstats)",
        Network::Interfaces => "network interfaces (all but lo)",
    };
    let link = match (network.link_bytes_per_s, &network.link_source) {
        (Some(b), Some(source)) => format!("{}/s ({source})", format_bytes(b)),
        (Some(b), None) => format!("{}/s", format_bytes(b)),
        (None, _) => "unknown (give --link-speed)".to_string(),
    };
    format!("{counters}; link {link}")
}

fn or_dash(value: Option<&str>) -> String {
    value.unwrap_or("-").to_string()
}

/// A title line, then "  key:  value" rows with values in one column.
fn render_block(title: &str, rows: &[(&str, String)]) -> String {
    let width = rows.iter().map(|(key, _)| key.len() + 1).max().unwrap_or(0);
    let mut out = format!("{title}\n");
    for (key, value) in rows {
        let label = format!("{key}:");
        // Writing to a String cannot fail.
        let _ = writeln!(out, "  {label:<width$} {value}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::env::tests::{sample_host, sample_target};

    #[test]
    fn text_report_has_aligned_blocks_and_dashes() {
        let text = render_text(&sample_host(), &[sample_target()]);
        let blocks: Vec<&str> = text.split("\n\n").collect();
        assert_eq!(blocks.len(), 2, "{text}");
        assert!(blocks[0].starts_with("host\n"));
        assert!(blocks[1].starts_with("target /mnt/t\n"));
        assert!(text.contains("  os:             -\n"), "{text}");
        assert!(text.contains("  memory:         16.0 GiB\n"), "{text}");
        assert!(text.contains("  total size:        16.0 MiB\n"), "{text}");
        assert!(text.contains("  free size:         15.5 MiB\n"), "{text}");
        assert!(text.contains("  rotational:        no\n"), "{text}");
        assert!(text.contains("  block device:      -\n"), "{text}");
        assert!(text.contains("  counters of:       no device\n"), "{text}");
        assert!(text.contains("  free inodes:       999\n"), "{text}");
        // Every value of a block starts in the same column.
        for block in blocks {
            let columns: Vec<usize> = block
                .lines()
                .skip(1)
                .map(|line| {
                    line.find(": ").map_or(0, |c| {
                        c + 2 + line[c + 2..].len() - line[c + 2..].trim_start().len()
                    })
                })
                .collect();
            assert!(columns.windows(2).all(|w| w[0] == w[1]), "{block}");
        }
    }

    #[test]
    fn a_network_mount_says_what_counts_it_and_its_link() {
        use crate::result::env::{Network, NetworkMount};
        let nfs = TargetEnv {
            network: Some(NetworkMount {
                counters: Network::Nfs {
                    mount_point: "/mnt/t".into(),
                },
                link_bytes_per_s: Some(125_000_000),
                link_source: Some("given with --link-speed".into()),
            }),
            ..sample_target()
        };
        let text = render_text(&sample_host(), &[nfs]);
        assert!(
            text.contains(
                "  counters of:       NFS client counters (mountstats); link 119.2 MiB/s (given with --link-speed)\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn unknown_host_numbers_show_as_dash() {
        let host = HostEnv {
            cpu_count: 0,
            ram_bytes: 0,
            ..sample_host()
        };
        let text = render_text(&host, &[]);
        assert!(text.contains("  cpus online:    -\n"), "{text}");
        assert!(text.contains("  memory:         -\n"), "{text}");
    }
}
