//! The top-level modules of `src/` form no cycle: each depends only on
//! modules below it (docs/architecture.md draws the layers), so a module
//! can be read, tested and changed knowing only what lies beneath it.
//!
//! A module depends on another when its code (test modules left out)
//! names `crate::<other>` — in a path, a `use crate::{...}` group, or a
//! macro's `$crate::`. The check reads the sources; it needs no build.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<PathBuf>>>;

#[test]
fn no_cycle_among_the_top_level_modules() {
    let graph = module_graph(Path::new(env!("CARGO_MANIFEST_DIR")).join("src").as_path());
    assert!(
        graph.len() > 10,
        "too few modules found: {:?}",
        graph.keys()
    );
    let cycles = cycles(&graph);
    let told: Vec<String> = cycles.iter().map(|c| tell(&graph, c)).collect();
    assert!(
        told.is_empty(),
        "cycles among src/* modules:\n{}",
        told.join("\n")
    );
}

/// The check finds a cycle where there is one, and its edges' files.
#[test]
fn a_cycle_is_found_and_told_with_its_files() {
    let mut graph = Graph::new();
    let mut edge = |from: &str, to: &str| {
        let file = PathBuf::from(format!("src/{from}.rs"));
        graph.entry(to.to_string()).or_default();
        let edges = graph.entry(from.to_string()).or_default();
        edges.entry(to.to_string()).or_default().insert(file);
    };
    edge("result", "size");
    edge("storage", "result");
    edge("report", "storage");
    edge("storage", "report");
    let found = cycles(&graph);
    assert_eq!(
        found,
        vec![vec!["report".to_string(), "storage".to_string()]]
    );
    let told = tell(&graph, &found[0]);
    assert!(told.contains("report -> storage (src/report.rs)"), "{told}");
    assert!(
        told.contains("storage -> report (src/storage.rs)"),
        "{told}"
    );
}

/// Test code is not a dependency; a path in a comment or a string is not
/// either; the rest is, however it is written.
#[test]
fn dependencies_are_read_from_code_only() {
    let source = r##"
//! Uses crate::comment in a comment.
use crate::{alpha::A, beta};
use crate::gamma::G;
macro_rules! m { () => { $crate::delta::f() } }
fn f() { let s = "crate::string"; let r = r#"crate::raw"#; let c = '{'; crate::epsilon::g(); }
#[cfg(test)]
fn helper() { crate::zeta::h(); }
fn after() { crate::eta::i(); }
#[cfg(test)]
mod tests { use crate::theta::T; }
"##;
    let names = named_modules(&code_only(source));
    let expected = ["alpha", "beta", "delta", "epsilon", "eta", "gamma"];
    assert_eq!(names, expected.iter().map(|s| s.to_string()).collect());
}

/// Every top-level module of `src` (lib.rs and main.rs are the crate's
/// roots, not modules) and the modules each one names.
fn module_graph(src: &Path) -> Graph {
    let modules: BTreeMap<String, PathBuf> = std::fs::read_dir(src)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter_map(|path| Some((module_name(&path)?, path)))
        .collect();
    let mut graph = Graph::new();
    for (module, path) in &modules {
        let edges = graph.entry(module.clone()).or_default();
        for file in rust_files(path) {
            let code = code_only(&std::fs::read_to_string(&file).unwrap());
            let named = named_modules(&code);
            let others = named
                .into_iter()
                .filter(|n| n != module && modules.contains_key(n));
            for other in others {
                edges.entry(other).or_default().insert(file.clone());
            }
        }
    }
    graph
}

/// `src/x.rs` and `src/x/` are module `x`; a `src/x.rs` beside `src/x/`
/// is one module, counted once.
fn module_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    if path.is_dir() {
        return Some(name.to_string());
    }
    let stem = name.strip_suffix(".rs")?;
    let root = matches!(stem, "lib" | "main");
    (!root && !path.with_extension("").is_dir()).then(|| stem.to_string())
}

/// The `.rs` files of a module: the file itself, or every file in its
/// directory, and `x.rs` beside a directory `x/`.
fn rust_files(path: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if path.is_dir() {
        let beside = path.with_extension("rs");
        if beside.is_file() {
            files.push(beside);
        }
        let mut pending = vec![path.to_path_buf()];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let entry = entry.unwrap().path();
                match entry.is_dir() {
                    true => pending.push(entry),
                    false if entry.extension().is_some_and(|e| e == "rs") => files.push(entry),
                    false => {}
                }
            }
        }
    } else {
        files.push(path.to_path_buf());
    }
    files.sort();
    files
}

/// The modules a piece of code names after `crate::`, one level deep: in
/// paths, `$crate::` in macros, and `use crate::{a::x, b}` groups.
fn named_modules(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let preceded = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if preceded.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        match rest.strip_prefix('{') {
            Some(group) => names.extend(group_heads(group)),
            None => names.extend(identifier(rest)),
        }
    }
    names
}

/// The first path segment of each item of a `{...}` use group.
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => item_start = true,
            c if item_start && !c.is_whitespace() => {
                item_start = false;
                heads.extend(identifier(&group[at..]));
            }
            _ => {}
        }
    }
    heads
}

fn identifier(text: &str) -> Option<String> {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    (end > 0).then(|| text[..end].to_string())
}

/// The code of a file without comments, string and character literals,
/// and items under `#[cfg(test)]` (a test module, a test-only helper).
fn code_only(source: &str) -> String {
    let plain = strip_literals(source);
    let mut code = String::new();
    let mut rest = plain.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        code.push_str(&rest[..at]);
        rest = skip_item(&rest[at + "#[cfg(test)]".len()..]);
    }
    code.push_str(rest);
    code
}

/// What follows the item at the start of `text`: up to its `;` or its
/// outermost closing brace (literals are already blanked).
fn skip_item(text: &str) -> &str {
    let mut depth = 0;
    for (at, c) in text.char_indices() {
        match c {
            ';' if depth == 0 => return &text[at + 1..],
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[at + 1..];
                }
            }
            _ => {}
        }
    }
    ""
}

/// `source` with comments, strings (raw ones included) and character
/// literals replaced by a space, so braces and paths in them count for
/// nothing. A lifetime (`'a`) is code.
fn strip_literals(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let next = |k: usize| chars.get(i + k).copied();
        let skipped = match (chars[i], next(1)) {
            ('/', Some('/')) => until(&chars, i, "\n"),
            ('/', Some('*')) => until(&chars, i + 2, "*/"),
            ('"', _) => end_of_string(&chars, i + 1),
            ('r', Some('#' | '"')) if is_raw_start(&chars, i) => end_of_raw(&chars, i + 1),
            ('\'', Some('\\')) => until(&chars, i + 2, "'"),
            ('\'', Some(_)) if next(2) == Some('\'') => i + 3,
            _ => i,
        };
        if skipped == i {
            out.push(chars[i]);
            i += 1;
        } else {
            out.push(' ');
            i = skipped;
        }
    }
    out
}

/// Just past the first `end` at or after `from` (or the end of input).
fn until(chars: &[char], from: usize, end: &str) -> usize {
    let end: Vec<char> = end.chars().collect();
    (from..chars.len())
        .find(|&k| chars[k..].starts_with(&end))
        .map_or(chars.len(), |k| k + end.len())
}

/// Just past the closing quote of a string whose contents start at `from`.
fn end_of_string(chars: &[char], from: usize) -> usize {
    let mut k = from;
    while k < chars.len() {
        match chars[k] {
            '\\' => k += 2,
            '"' => return k + 1,
            _ => k += 1,
        }
    }
    chars.len()
}

/// `r"`, `r#"`: a raw string, not an identifier ending in r (`for"`).
fn is_raw_start(chars: &[char], at: usize) -> bool {
    let after_word = at > 0 && (chars[at - 1].is_alphanumeric() || chars[at - 1] == '_');
    let hashes = chars[at + 1..].iter().take_while(|&&c| c == '#').count();
    !after_word && chars.get(at + 1 + hashes) == Some(&'"')
}

/// Just past a raw string whose hashes start at `from`.
fn end_of_raw(chars: &[char], from: usize) -> usize {
    let hashes = chars[from..].iter().take_while(|&&c| c == '#').count();
    let close: String = std::iter::once('"')
        .chain(std::iter::repeat_n('#', hashes))
        .collect();
    until(chars, from + hashes + 1, &close)
}

/// Every cycle: each strongly connected component of more than one
/// module (Tarjan's algorithm), its members sorted.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    let mut tarjan = Tarjan::default();
    for module in graph.keys() {
        if !tarjan.index.contains_key(module) {
            tarjan.visit(graph, module);
        }
    }
    let mut found: Vec<Vec<String>> = tarjan
        .components
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|mut c| {
            c.sort();
            c
        })
        .collect();
    found.sort();
    found
}

#[derive(Default)]
struct Tarjan {
    index: BTreeMap<String, usize>,
    low: BTreeMap<String, usize>,
    stack: Vec<String>,
    on_stack: BTreeSet<String>,
    components: Vec<Vec<String>>,
}

impl Tarjan {
    fn visit(&mut self, graph: &Graph, module: &str) {
        let order = self.index.len();
        self.index.insert(module.to_string(), order);
        self.low.insert(module.to_string(), order);
        self.stack.push(module.to_string());
        self.on_stack.insert(module.to_string());
        for next in graph[module].keys() {
            if !self.index.contains_key(next) {
                self.visit(graph, next);
                let low = self.low[module].min(self.low[next]);
                self.low.insert(module.to_string(), low);
            } else if self.on_stack.contains(next) {
                let low = self.low[module].min(self.index[next]);
                self.low.insert(module.to_string(), low);
            }
        }
        if self.low[module] == self.index[module] {
            let mut component = Vec::new();
            while let Some(member) = self.stack.pop() {
                self.on_stack.remove(&member);
                let done = member == module;
                component.push(member);
                if done {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

/// A cycle told as its edges, each with the files that make it.
fn tell(graph: &Graph, cycle: &[String]) -> String {
    let mut lines = vec![format!("cycle: {}", cycle.join(", "))];
    for from in cycle {
        for (to, files) in &graph[from] {
            if cycle.contains(to) {
                let files: Vec<String> = files.iter().map(|f| short(f)).collect();
                lines.push(format!("  {from} -> {to} ({})", files.join(" ")));
            }
        }
    }
    lines.join("\n")
}

/// A file's path from `src/` on, as people name it.
fn short(path: &Path) -> String {
    let text = path.display().to_string();
    match text.find("src/") {
        Some(at) => text[at..].to_string(),
        None => text,
    }
}
