//! The results directory: where `fsbench run` saves by default, away from
//! what it measures.
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The results directory relative to the current directory: where
/// `fsbench run` saves, and `fsbench postmark` writes the report files its
/// configuration file names, when there is no data home (see [`results_dir`]).
pub const RESULTS_DIR: &str = "fsbench-results";

/// What [`results_dir`] depends on, passed in so that it can be tested
/// without touching the process environment.
#[derive(Debug, Clone, Default)]
pub struct ResultsEnv {
    pub xdg_data_home: Option<OsString>,
    pub home: Option<OsString>,
    /// The current directory, absolute.
    pub cwd: PathBuf,
}

impl ResultsEnv {
    /// The process's own environment and current directory.
    pub fn of_process() -> ResultsEnv {
        ResultsEnv {
            xdg_data_home: std::env::var_os("XDG_DATA_HOME"),
            home: std::env::var_os("HOME"),
            cwd: std::env::current_dir().unwrap_or_default(),
        }
    }
}

/// Where saved results go by default: `$XDG_DATA_HOME/fsbench/results`
/// (XDG_DATA_HOME defaulting to `$HOME/.local/share`), so a run never
/// litters the directory it is started from. Without either, the current
/// directory's `fsbench-results`, unless that is inside one of `measured`
/// (its files would be written on the file system under test).
pub fn results_dir(env: &ResultsEnv, measured: &[PathBuf]) -> anyhow::Result<PathBuf> {
    // The XDG spec: an unset, empty or relative value is ignored.
    let absolute = |value: &Option<OsString>| {
        value
            .as_ref()
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    let data_home = absolute(&env.xdg_data_home)
        .or_else(|| absolute(&env.home).map(|home| home.join(".local/share")));
    if let Some(data_home) = data_home {
        return Ok(data_home.join("fsbench").join("results"));
    }
    match measured.iter().find(|target| env.cwd.starts_with(target)) {
        None => Ok(PathBuf::from(RESULTS_DIR)),
        Some(target) => crate::error::usage(format!(
            "neither XDG_DATA_HOME nor HOME is set, and the current directory is inside \
             the target {}: give --save-dir DIR (or set XDG_DATA_HOME) so the \
             results are not written on the file system being measured",
            target.display()
        )),
    }
}

/// The directory a run measuring `targets` saves in: `given` (`--save-dir`),
/// or the default away from the targets ([`results_dir`]); refused before
/// anything is measured when another user could swap it.
pub fn for_run(given: Option<&Path>, targets: &[PathBuf]) -> anyhow::Result<PathBuf> {
    let dir = match given {
        Some(dir) => dir.to_path_buf(),
        None => {
            let env = ResultsEnv::of_process();
            let measured: Vec<PathBuf> = targets.iter().map(|t| comparable(t, &env.cwd)).collect();
            results_dir(&env, &measured)?
        }
    };
    super::check_directory(&dir)?;
    Ok(dir)
}

/// `path` as [`results_dir`] compares it with the current directory:
/// absolute, through symbolic links when it exists.
fn comparable(path: &Path, cwd: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| cwd.join(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(xdg: Option<&str>, home: Option<&str>, cwd: &str) -> ResultsEnv {
        ResultsEnv {
            xdg_data_home: xdg.map(OsString::from),
            home: home.map(OsString::from),
            cwd: PathBuf::from(cwd),
        }
    }

    #[test]
    fn results_go_to_the_data_home() {
        let measured = [PathBuf::from("/work")];
        let dir = |xdg, home| results_dir(&env(xdg, home, "/work"), &measured).unwrap();
        let xdg = Path::new("/data/fsbench/results");
        assert_eq!(dir(Some("/data"), Some("/root")), xdg);
        assert_eq!(dir(Some("/data"), None), xdg);
        let home = Path::new("/root/.local/share/fsbench/results");
        assert_eq!(dir(None, Some("/root")), home);
        // The XDG spec ignores empty and relative values.
        assert_eq!(dir(Some(""), Some("/root")), home);
        assert_eq!(dir(Some("data"), Some("/root")), home);
    }

    #[test]
    fn without_a_data_home_the_current_directory_serves_unless_it_is_measured() {
        let measured = [PathBuf::from("/mnt/a"), PathBuf::from("/work")];
        let here = results_dir(&env(None, None, "/home/u"), &measured).unwrap();
        assert_eq!(here, Path::new(RESULTS_DIR));
        let relative_home = results_dir(&env(Some(""), Some("u"), "/srv"), &measured).unwrap();
        assert_eq!(relative_home, Path::new(RESULTS_DIR));
        for cwd in ["/work", "/work/sub"] {
            let e = results_dir(&env(None, None, cwd), &measured).unwrap_err();
            assert!(e.is::<crate::error::UsageError>());
            let e = e.to_string();
            assert!(e.contains("--save-dir DIR") && e.contains("/work"), "{e}");
        }
    }
}
