//! The docs stay a map of the code: docs/architecture.md's layer diagram
//! and the README's layout name every top-level module `src/lib.rs`
//! declares (so a new module without a doc entry fails here), the README
//! and the map stay short enough to read, and every relative link in the
//! README and docs/*.md leads to a file that exists, and its `#anchor` to
//! a heading of that file (text moves between pages; links must follow).

use std::fs;
use std::path::{Path, PathBuf};

const README_MAX_LINES: usize = 400;
const ARCHITECTURE_MAX_LINES: usize = 350;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(relative: &str) -> String {
    let path = root().join(relative);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The modules `src/lib.rs` declares, `pub mod x;` or `mod x;`.
fn declared_modules(lib: &str) -> Vec<String> {
    lib.lines()
        .map(str::trim)
        .filter_map(|line| {
            let rest = line.strip_prefix("pub ").unwrap_or(line);
            let name = rest.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_string())
        })
        .collect()
}

/// The first fenced block after `heading`: the layer diagram.
fn fenced_block_after<'a>(text: &'a str, heading: &str) -> &'a str {
    let after = &text[text
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?}"))..];
    let open = after
        .find("```")
        .expect("no fenced block after the heading");
    let body = &after[open + 3..];
    let body = &body[body.find('\n').expect("an unterminated fence")..];
    &body[..body.find("```").expect("an unterminated fence")]
}

/// Whether `word` stands in `text` as a whole identifier, not inside
/// another one (`io` in `ratio` does not count).
fn names(text: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// The Markdown links `[text](target)` outside fenced code, as (file,
/// anchor): an empty file is the page itself; web links left out.
fn relative_links(markdown: &str) -> Vec<(String, String)> {
    let mut links = Vec::new();
    for line in outside_fences(markdown) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let tail = &rest[at + 2..];
            let Some(end) = tail.find(')') else { break };
            let target = &tail[..end];
            let external = target.contains("://") || target.starts_with("mailto:");
            if !target.is_empty() && !external {
                let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
                links.push((file.to_string(), anchor.to_string()));
            }
            rest = &tail[end..];
        }
    }
    links
}

fn outside_fences(markdown: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    markdown.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The anchors GitHub gives a page's headings: lower case, letters,
/// digits, `-` and `_` kept, spaces made `-`, the rest dropped; a repeated
/// heading gets `-1`, `-2`...
fn heading_anchors(markdown: &str) -> Vec<String> {
    let mut slugs: Vec<String> = Vec::new();
    let mut anchors = Vec::new();
    for line in outside_fences(markdown) {
        let title = line.trim_start_matches('#');
        if title.len() == line.len() || !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let seen = slugs.iter().filter(|s| **s == slug).count();
        anchors.push(if seen == 0 {
            slug.clone()
        } else {
            format!("{slug}-{seen}")
        });
        slugs.push(slug);
    }
    anchors
}

fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("a docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

#[test]
fn the_architecture_map_names_every_top_level_module() {
    let modules = declared_modules(&read("src/lib.rs"));
    assert!(
        modules.len() > 20 && modules.iter().any(|m| m == "cli"),
        "src/lib.rs read wrongly: {modules:?}"
    );
    let map = read("docs/architecture.md");
    let diagram = fenced_block_after(&map, "## Layers");
    let missing: Vec<&String> = modules.iter().filter(|m| !names(diagram, m)).collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md's layer diagram does not name {missing:?}"
    );
}

#[test]
fn the_readme_layout_names_every_top_level_module() {
    let modules = declared_modules(&read("src/lib.rs"));
    let readme = read("README.md");
    let layout = &readme[readme.find("## Layout").expect("a Layout section")..];
    let missing: Vec<&String> = modules
        .iter()
        .filter(|m| {
            !layout.contains(&format!("`src/{m}/`")) && !layout.contains(&format!("`src/{m}.rs`"))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "README's layout does not name {missing:?}"
    );
}

#[test]
fn the_readme_and_the_map_stay_short() {
    let readme = read("README.md").lines().count();
    let map = read("docs/architecture.md").lines().count();
    assert!(
        readme <= README_MAX_LINES,
        "README.md has {readme} lines, at most {README_MAX_LINES}: move detail to docs/"
    );
    assert!(
        map <= ARCHITECTURE_MAX_LINES,
        "docs/architecture.md has {map} lines, at most {ARCHITECTURE_MAX_LINES}: a map, not the code"
    );
}

#[test]
fn every_relative_link_leads_to_a_file_and_a_heading() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = fs::read_to_string(&file).expect("a Markdown file");
        let dir = file.parent().unwrap_or(Path::new("."));
        for (link, anchor) in relative_links(&text) {
            checked += 1;
            let target = if link.is_empty() {
                file.clone()
            } else {
                dir.join(&link)
            };
            if !target.exists() {
                broken.push(format!("{}: {link}: no such file", file.display()));
                continue;
            }
            let is_markdown = target.extension().is_some_and(|e| e == "md");
            if anchor.is_empty() || !is_markdown {
                continue;
            }
            let page = fs::read_to_string(&target).expect("a linked page");
            if !heading_anchors(&page).contains(&anchor) {
                broken.push(format!(
                    "{}: {link}#{anchor}: no such heading",
                    file.display()
                ));
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} links found: the link reader is wrong"
    );
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_readers_find_what_they_look_for() {
    assert_eq!(
        declared_modules("//! x\npub mod cli;\nmod io;\nuse x;\n"),
        ["cli", "io"]
    );
    assert!(names("a io, b", "io") && !names("ratio", "io") && !names("io_uring", "io"));
    let pair = |file: &str, anchor: &str| (file.to_string(), anchor.to_string());
    assert_eq!(
        relative_links("[a](b.md#c) [d](https://e) [f](#g)\n```\n[h](i.md)\n```\n[j](k/l.md)"),
        [pair("b.md", "c"), pair("", "g"), pair("k/l.md", "")]
    );
    assert_eq!(
        heading_anchors(
            "# `fsbench io`: I/O (fio)\n```\n# not a heading\n```\n## Notes\n## Notes, more\n## Notes\n#x\n"
        ),
        ["fsbench-io-io-fio", "notes", "notes-more", "notes-1"]
    );
    assert_eq!(
        fenced_block_after("# T\n## Layers\ntext\n```\ncli x\n```\n", "## Layers"),
        "\ncli x\n"
    );
}
