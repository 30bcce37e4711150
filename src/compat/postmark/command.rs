//! PostMark's command language, one line at a time.
//!
//! PostMark matches a line by the prefix of a command name and then skips
//! one character, so `set numbers 100000` sets 100000 files, `set size
//! 10K 20K` means 10 to 20 bytes and `set bias read abc` means 0. fsbench
//! reads the same commands word by word and refuses what PostMark would
//! silently misread, with PostMark's own message where it has one.
use crate::error::{UsageError, usage};
use crate::workload::postmark::{Location, MAX_INT};
use crate::workload::threads::MAX_THREADS;

/// PostMark's commands in its order, with its help texts (and `set
/// threads`, fsbench's).
pub const COMMANDS: [(&str, &str); 18] = [
    ("set size", "Sets low and high bounds of files"),
    ("set number", "Sets number of simultaneous files"),
    ("set seed", "Sets seed for random number generator"),
    ("set transactions", "Sets number of transactions"),
    ("set location", "Sets location of working files"),
    ("set subdirectories", "Sets number of subdirectories"),
    ("set read", "Sets read block size"),
    ("set write", "Sets write block size"),
    ("set buffering", "Sets usage of buffered I/O"),
    (
        "set bias read",
        "Sets the chance of choosing read over append",
    ),
    (
        "set bias create",
        "Sets the chance of choosing create over delete",
    ),
    ("set report", "Choose verbose or terse report format"),
    (
        "set threads",
        "Sets number of independent instances run at once (fsbench)",
    ),
    ("run", "Runs one iteration of benchmark"),
    ("load", "Read configuration file"),
    ("show", "Displays current configuration"),
    ("help", "Prints out available commands"),
    ("quit", "Exit program"),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Set(Setting),
    /// `run [FILE]`: the report is appended to FILE.
    Run {
        report_file: Option<String>,
    },
    Load(String),
    /// `show [FILE]`: the configuration is appended to FILE.
    Show {
        file: Option<String>,
    },
    /// `help [PREFIX]`.
    Help(String),
    Quit,
    /// `!command`, or `!` alone for `$SHELL`.
    Shell(Option<String>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    Size {
        low: u32,
        high: u32,
    },
    Number(u32),
    Seed(u32),
    Transactions(u32),
    Location(LocationChange),
    Subdirectories(u32),
    ReadBlock(u32),
    WriteBlock(u32),
    Buffering(bool),
    /// None is PostMark's -1: that half of each transaction is skipped.
    BiasRead(Option<u32>),
    BiasCreate(Option<u32>),
    Report(ReportFormat),
    Threads(u32),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocationChange {
    /// `set location PATH [WEIGHT]`: the list becomes this one location.
    Replace(Location),
    /// `set location +PATH [WEIGHT]`.
    Add(Location),
    /// `set location -PATH`.
    Remove(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    Verbose,
    Terse,
}

impl ReportFormat {
    pub fn name(self) -> &'static str {
        match self {
            ReportFormat::Verbose => "verbose",
            ReportFormat::Terse => "terse",
        }
    }
}

/// Parses one line; None for a blank line or a `#` comment (PostMark
/// answers both with "Eh?" and goes on).
pub fn parse(line: &str) -> anyhow::Result<Option<Command>> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    if let Some(shell) = line.strip_prefix('!') {
        let shell = shell.trim();
        return Ok(Some(Command::Shell(
            (!shell.is_empty()).then(|| shell.into()),
        )));
    }
    let line = match line {
        "?" => "help",
        "exit" => "quit",
        other => other,
    };
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some((name, args)) = COMMANDS.iter().find_map(|(name, _)| {
        let name_words: Vec<&str> = name.split(' ').collect();
        words
            .strip_prefix(name_words.as_slice())
            .map(|args| (*name, args))
    }) else {
        return usage(unknown_command(line, &words));
    };
    parse_command(name, args, rest_of_line(line, name))
        .map(Some)
        .map_err(|e| UsageError(format!("'{line}': {e}")).into())
}

fn unknown_command(line: &str, words: &[&str]) -> String {
    if words.first() == Some(&"set") {
        let settings: Vec<&str> = COMMANDS
            .iter()
            .filter_map(|(name, _)| name.strip_prefix("set "))
            .collect();
        format!(
            "unknown setting '{line}' (settings: {})",
            settings.join(", ")
        )
    } else {
        format!("unknown command '{line}' (PostMark: \"Eh?\"; 'help' lists the commands)")
    }
}

/// The text after the command name, for file names (which may hold
/// spaces, as in PostMark).
fn rest_of_line<'a>(line: &'a str, name: &str) -> &'a str {
    let mut rest = line;
    for word in name.split(' ') {
        rest = rest.trim_start()[word.len()..].trim_start();
    }
    rest.trim()
}

/// The command `name` with its argument words `args`; errors are bare
/// messages that `parse` prefixes with the line.
fn parse_command(name: &str, args: &[&str], rest: &str) -> Result<Command, String> {
    let setting = match name {
        "set size" => parse_size(args)?,
        "set number" => Setting::Number(positive(args, "invalid number of files")?),
        "set seed" => Setting::Seed(positive(args, "invalid seed for random numbers")?),
        "set transactions" => {
            Setting::Transactions(positive(args, "invalid number of transactions")?)
        }
        "set location" => Setting::Location(parse_location(args)?),
        "set subdirectories" => {
            Setting::Subdirectories(non_negative(args, "invalid number of subdirectories")?)
        }
        "set read" => Setting::ReadBlock(positive(args, "invalid read block size")?),
        "set write" => Setting::WriteBlock(positive(args, "invalid write block size")?),
        "set buffering" => Setting::Buffering(match args {
            ["true"] => true,
            ["false"] => false,
            _ => return Err("no buffering mode (true/false) specified".into()),
        }),
        "set bias read" => Setting::BiasRead(parse_bias(args)?),
        "set bias create" => Setting::BiasCreate(parse_bias(args)?),
        "set report" => Setting::Report(match args {
            ["verbose"] => ReportFormat::Verbose,
            ["terse"] => ReportFormat::Terse,
            _ => return Err("either 'verbose' or 'terse' required".into()),
        }),
        "set threads" => Setting::Threads(parse_threads(args)?),
        _ => return parse_action(name, args, rest),
    };
    Ok(Command::Set(setting))
}

/// The commands that do something rather than set something.
fn parse_action(name: &str, args: &[&str], rest: &str) -> Result<Command, String> {
    let optional_file = || (!rest.is_empty()).then(|| rest.to_string());
    match name {
        "run" => Ok(Command::Run {
            report_file: optional_file(),
        }),
        "show" => Ok(Command::Show {
            file: optional_file(),
        }),
        "load" => optional_file()
            .map(Command::Load)
            .ok_or_else(|| "no configuration file specified".into()),
        "help" => Ok(Command::Help(rest.to_string())),
        "quit" if args.is_empty() => Ok(Command::Quit),
        "quit" => Err("quit takes no argument".into()),
        _ => unreachable!("every name in COMMANDS is handled"),
    }
}

/// One whole number. PostMark reads numbers with `atoi`, which stops at
/// the first non-digit (so `10K` is 10) and wraps large values; here
/// the whole word must be a number within `int` range.
fn one_number(args: &[&str], message: &str) -> Result<i64, String> {
    match args {
        [word] => parse_int(word).map_err(|why| format!("{message} ({why})")),
        [] => Err(format!("{message} (no value given)")),
        _ => Err(format!("{message} (one value expected)")),
    }
}

fn parse_int(word: &str) -> Result<i64, String> {
    let digits = word.strip_prefix(['+', '-']).unwrap_or(word);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        let hint = match word.find(|c: char| !c.is_ascii_digit()) {
            Some(i) if i > 0 => format!("; PostMark would read it as {}", &word[..i]),
            _ => String::new(),
        };
        return Err(format!("'{word}' is not a whole number{hint}"));
    }
    word.parse::<i64>()
        .ok()
        .filter(|n| n.unsigned_abs() <= u64::from(MAX_INT))
        .ok_or_else(|| format!("'{word}' is larger than PostMark's limit {MAX_INT}"))
}

/// A number of at least `min`.
fn at_least(args: &[&str], min: i64, message: &str) -> Result<u32, String> {
    match one_number(args, message)? {
        n if n >= min => Ok(n as u32),
        n => Err(format!("{message} ({n}: must be at least {min})")),
    }
}

/// A number above zero, as PostMark demands for most settings.
fn positive(args: &[&str], message: &str) -> Result<u32, String> {
    at_least(args, 1, message)
}

/// 0 or more (PostMark refuses `set subdirectories 0`, which would mean
/// the same as 1: none).
fn non_negative(args: &[&str], message: &str) -> Result<u32, String> {
    at_least(args, 0, message)
}

/// `set size LOW [HIGH]`: HIGH defaults to LOW (fixed-size files).
fn parse_size(args: &[&str]) -> Result<Setting, String> {
    const MISSING: &str = "no file size low or high bounds specified";
    let (low, high) = match args {
        [low] => (*low, *low),
        [low, high] => (*low, *high),
        [] => return Err(MISSING.into()),
        _ => return Err("at most two sizes (low and high) expected".into()),
    };
    let low = positive(&[low], "invalid low file size")?;
    let high = positive(&[high], "invalid high file size")?;
    if high < low {
        // PostMark silently uses the low bound for both.
        return Err(format!(
            "the high bound {high} is below the low bound {low}"
        ));
    }
    Ok(Setting::Size { low, high })
}

/// `set location [+|-]PATH [WEIGHT]`.
fn parse_location(args: &[&str]) -> Result<LocationChange, String> {
    let (path, weight) = match args {
        [] => return Err("no directory name specified".into()),
        [path] => (*path, 1),
        [path, weight] => (*path, parse_weight(weight)?),
        _ => return Err("paths with spaces are not supported (PostMark cuts them too)".into()),
    };
    let location = |path: &str| {
        if path.is_empty() {
            return Err("no directory name specified".to_string());
        }
        Ok(Location {
            path: path.into(),
            weight,
        })
    };
    if let Some(path) = path.strip_prefix('+') {
        return Ok(LocationChange::Add(location(path)?));
    }
    if let Some(path) = path.strip_prefix('-') {
        return match args {
            [_] if !path.is_empty() => Ok(LocationChange::Remove(path.into())),
            [_] => Err("no directory name specified".into()),
            _ => Err("removing a location takes no weight".into()),
        };
    }
    Ok(LocationChange::Replace(location(path)?))
}

fn parse_weight(word: &str) -> Result<u32, String> {
    // PostMark prints "ignoring invalid weight" and uses 1.
    let invalid = |why: String| format!("invalid weight '{word}' ({why})");
    match parse_int(word).map_err(invalid)? {
        n if n > 0 => Ok(n as u32),
        n => Err(invalid(format!("{n}: must be at least 1"))),
    }
}

/// `set bias read|create X`: 0 to 10 tenths, or -1 to skip that half.
fn parse_bias(args: &[&str]) -> Result<Option<u32>, String> {
    let message = "no bias specified (0-10 for greater chance,-1 to disable)";
    match one_number(args, message)? {
        -1 => Ok(None),
        n @ 0..=10 => Ok(Some(n as u32)),
        n => Err(format!("{message} ({n} is out of range)")),
    }
}

fn parse_threads(args: &[&str]) -> Result<u32, String> {
    let message = "invalid number of threads";
    match positive(args, message)? {
        n if n <= MAX_THREADS => Ok(n),
        n => Err(format!("{message} ({n}: at most {MAX_THREADS})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(line: &str) -> Command {
        parse(line)
            .unwrap_or_else(|e| panic!("{line}: {e}"))
            .unwrap_or_else(|| panic!("{line}: no command"))
    }

    fn set(line: &str) -> Setting {
        match ok(line) {
            Command::Set(setting) => setting,
            other => panic!("{line}: {other:?}"),
        }
    }

    fn err(line: &str) -> String {
        let e = parse(line).expect_err(line);
        assert!(e.downcast_ref::<UsageError>().is_some(), "{line}: {e}");
        e.to_string()
    }

    fn at(path: &str, weight: u32) -> Location {
        Location {
            path: path.into(),
            weight,
        }
    }

    #[test]
    fn parses_every_setting() {
        assert_eq!(
            set("set size 100 200"),
            Setting::Size {
                low: 100,
                high: 200
            }
        );
        assert_eq!(
            set("set size 1000"),
            Setting::Size {
                low: 1000,
                high: 1000
            }
        );
        assert_eq!(set("set number 5000"), Setting::Number(5000));
        assert_eq!(set("set seed 7"), Setting::Seed(7));
        assert_eq!(set("set transactions 5000"), Setting::Transactions(5000));
        assert_eq!(set("set subdirectories 10"), Setting::Subdirectories(10));
        assert_eq!(set("set subdirectories 0"), Setting::Subdirectories(0));
        assert_eq!(set("set read 4096"), Setting::ReadBlock(4096));
        assert_eq!(set("set write 64"), Setting::WriteBlock(64));
        assert_eq!(set("set buffering false"), Setting::Buffering(false));
        assert_eq!(set("set buffering true"), Setting::Buffering(true));
        assert_eq!(set("set bias read 10"), Setting::BiasRead(Some(10)));
        assert_eq!(set("set bias create -1"), Setting::BiasCreate(None));
        assert_eq!(
            set("set report terse"),
            Setting::Report(ReportFormat::Terse)
        );
        assert_eq!(set("set threads 4"), Setting::Threads(4));
    }

    #[test]
    fn parses_locations_with_weights() {
        assert_eq!(
            set("set location /mnt/a 3"),
            Setting::Location(LocationChange::Replace(at("/mnt/a", 3)))
        );
        assert_eq!(
            set("set location +/mnt/b"),
            Setting::Location(LocationChange::Add(at("/mnt/b", 1)))
        );
        assert_eq!(
            set("set location -/mnt/b"),
            Setting::Location(LocationChange::Remove("/mnt/b".into()))
        );
    }

    #[test]
    fn parses_actions_aliases_and_blank_lines() {
        assert_eq!(ok("run"), Command::Run { report_file: None });
        assert_eq!(
            ok("run my report.txt"),
            Command::Run {
                report_file: Some("my report.txt".into())
            }
        );
        assert_eq!(ok("show"), Command::Show { file: None });
        assert_eq!(
            ok("show cfg.txt"),
            Command::Show {
                file: Some("cfg.txt".into())
            }
        );
        assert_eq!(ok("load other.cfg"), Command::Load("other.cfg".into()));
        assert_eq!(ok("help set b"), Command::Help("set b".into()));
        assert_eq!(ok("?"), Command::Help(String::new()));
        assert_eq!(ok("quit"), Command::Quit);
        assert_eq!(ok("exit"), Command::Quit);
        assert_eq!(ok("!ls -l"), Command::Shell(Some("ls -l".into())));
        assert_eq!(ok("!"), Command::Shell(None));
        // CRLF files and extra blanks, which PostMark mishandles.
        assert_eq!(
            set("set report verbose\r"),
            Setting::Report(ReportFormat::Verbose)
        );
        assert_eq!(set("  set   number\t7 "), Setting::Number(7));
        for quiet in ["", "   ", "# a comment", "\r"] {
            assert_eq!(parse(quiet).unwrap(), None, "{quiet:?}");
        }
    }

    /// Each line is refused with a message that quotes the line and says
    /// the text given.
    fn assert_refused(cases: &[(&str, &str)]) {
        for (line, message) in cases {
            let e = err(line);
            assert!(e.contains(&format!("'{line}'")), "{e}");
            assert!(e.contains(message), "{line}: {e}");
        }
    }

    #[test]
    fn refuses_unknown_commands() {
        assert_refused(&[
            ("frobnicate", "unknown command 'frobnicate'"),
            ("SET SIZE 10", "unknown command"),
            ("set nubmer 5000", "unknown setting 'set nubmer 5000'"),
            // PostMark's prefix match would take these.
            ("set numbers 100000", "unknown setting"),
            ("quitting", "unknown command"),
            ("quit now", "no argument"),
        ]);
    }

    #[test]
    fn refuses_what_postmark_misreads() {
        assert_refused(&[
            (
                "set size 10K 20K",
                "'10K' is not a whole number; PostMark would read it as 10",
            ),
            (
                "set size 5000 100",
                "high bound 100 is below the low bound 5000",
            ),
            ("set bias read abc", "not a whole number"),
            ("set location /mnt/a heavy", "invalid weight 'heavy'"),
            ("set location /mnt/a 0", "invalid weight '0'"),
            (
                "set transactions 5000000000",
                "larger than PostMark's limit",
            ),
            ("set location /my dir 2", "spaces"),
        ]);
    }

    #[test]
    fn refuses_bad_values_with_postmarks_messages() {
        assert_refused(&[
            ("set size", "no file size low or high bounds specified"),
            ("set size 0", "invalid low file size"),
            ("set size 1 2 3", "at most two sizes"),
            ("set number 0", "invalid number of files"),
            ("set number -5", "invalid number of files"),
            ("set number", "invalid number of files (no value given)"),
            ("set number 1 2", "one value expected"),
            ("set seed 0", "invalid seed for random numbers"),
            ("set transactions x", "invalid number of transactions"),
            ("set location", "no directory name specified"),
            ("set location +", "no directory name specified"),
            ("set location -/a 2", "takes no weight"),
            ("set subdirectories -1", "invalid number of subdirectories"),
            ("set read 0", "invalid read block size"),
            ("set write abc", "invalid write block size"),
            (
                "set buffering yes",
                "no buffering mode (true/false) specified",
            ),
            ("set buffering", "no buffering mode"),
            ("set bias read 11", "no bias specified"),
            ("set bias create -2", "out of range"),
            ("set report csv", "either 'verbose' or 'terse' required"),
            ("set threads 0", "invalid number of threads"),
            ("set threads 5000", "at most 1024"),
            ("load", "no configuration file specified"),
        ]);
    }
}
