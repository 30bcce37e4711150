//! fio's option names: an alias in fio's options table (its `.alias`
//! fields) is read as the option it names, so every option is known, and
//! written into fio's JSON, under fio's own name, as fio writes it
//! (`readwrite=randread` is `"rw" : "randread"`: fio-plot looks for `rw`).

/// (alias, fio's name): every `.alias` of fio 3.33's options table.
const ALIASES: [(&str, &str); 21] = [
    ("readwrite", "rw"),
    ("iodepth_batch_submit", "iodepth_batch"),
    ("iodepth_batch_complete", "iodepth_batch_complete_min"),
    ("io_limit", "io_size"),
    ("fill_fs", "fill_device"),
    ("fileoffset", "offset"),
    ("blocksize", "bs"),
    ("blockalign", "ba"),
    ("blocksize_range", "bsrange"),
    ("blocksize_unaligned", "bs_unaligned"),
    ("nr_files", "nrfiles"),
    ("timeout", "runtime"),
    ("iomem", "mem"),
    ("mem_align", "iomem_align"),
    ("ratemin", "rate_min"),
    ("ratecycle", "rate_cycle"),
    ("wait_for_previous", "stonewall"),
    ("disable_bw", "disable_bw_measurement"),
    ("ss", "steadystate"),
    ("ss_dur", "steadystate_duration"),
    ("ss_ramp", "steadystate_ramp_time"),
];

/// fio's name of the option `key` (lower case) names.
pub(super) fn canonical(key: &str) -> &str {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == key)
        .map_or(key, |(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_name_fio_s_options_and_names_stay() {
        assert_eq!(canonical("readwrite"), "rw");
        assert_eq!(canonical("nr_files"), "nrfiles");
        assert_eq!(canonical("timeout"), "runtime");
        for name in [
            "rw",
            "ioengine",
            "bs",
            "buffered",
            "rwmixwrite",
            "new_group",
        ] {
            assert_eq!(canonical(name), name);
        }
        // No alias names another alias: one step reaches fio's name.
        for (_, name) in ALIASES {
            assert_eq!(canonical(name), name);
        }
    }
}
