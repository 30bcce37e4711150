//! The `fsbench` binary: everything lives in the library; this only maps the
//! outcome to an exit code.
fn main() {
    std::process::exit(fsbench::cli::main());
}
