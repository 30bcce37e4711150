//! The HTML report: the same result gives the same bytes (golden file), and
//! a real headless Chromium loads it with no console error, draws every
//! chart with no overlapping or clipped text, and takes a screenshot
//! (target/test-output/report_html/report.png) for a human to look at.
//!
//! The browser checks skip, saying why, only when chromium is not
//! installed (scripts/test.sh installs it).
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use fsbench::analysis::{Summary, names};
use fsbench::report::Reporter;
use fsbench::report::html::Html;
use fsbench::result::env::Risk;
use fsbench::result::{DeviceEvidence, Flag, RunResult};
use fsbench::results::load;

/// A result of real runs: bonnie and io on two tmpfs mounts, three
/// repetitions (see tests/fixtures/README.md).
const FIXTURE: &str = "tests/fixtures/run-two-targets.json";
/// The HTML the fixture must render to; `UPDATE_GOLDEN=1` rewrites it after
/// a deliberate change (then look at the screenshot).
const GOLDEN: &str = "tests/browser/report-two-targets.html";
/// Measures every chart inside the page and writes the result into it as
/// JSON, for `--dump-dom` to carry out.
const PROBE: &str = include_str!("browser/probe.js");
const BROWSER_TIMEOUT_S: &str = "120";

fn in_package(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn render_fixture() -> (RunResult, Summary, String) {
    let run = load(&in_package(FIXTURE)).expect("fixture loads");
    let summary = Summary::of(&run);
    let html = Html.render(&run, &summary).expect("report renders");
    (run, summary, html)
}

#[test]
fn same_result_gives_the_same_html() {
    let (_, _, first) = render_fixture();
    let (_, _, second) = render_fixture();
    assert!(first == second, "two renderings of one result differ");
    let golden = in_package(GOLDEN);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &first).unwrap();
    }
    let expected = std::fs::read_to_string(&golden).unwrap();
    if first != expected {
        let line = first
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| "at the end".into(), |n| format!("at line {}", n + 1));
        panic!("the report differs from {GOLDEN} {line}: run with UPDATE_GOLDEN=1 to accept");
    }
}

/// In the drawn page's change chart, as many bars are in the "better"
/// colour as the summary has significant improvements in each metric's
/// direction (a time that fell, a rate that rose), and as many in "worse"
/// as it has significant worsenings; the legend adds one swatch of each.
fn assert_change_colours_follow_directions(dom: &str, summary: &Summary) {
    let start = dom.find("id=\"overview\"").expect("a change section");
    let end = start + dom[start..].find("</section>").unwrap();
    let chart = &dom[start..end];
    let comparisons = summary
        .workloads
        .iter()
        .flat_map(|w| &w.metrics)
        .filter_map(|m| Some((m.direction, m.cells[1].as_ref()?.vs_baseline?)))
        .filter(|(_, c)| c.significant);
    let (mut better, mut worse) = (0, 0);
    for (direction, comparison) in comparisons {
        match direction.is_improvement(comparison.ratio) {
            true => better += 1,
            false => worse += 1,
        }
    }
    assert!(better + worse > 0, "the fixture has significant changes");
    let fills = |hex: &str| chart.matches(&format!("fill=\"{hex}\"")).count();
    assert_eq!(fills("#2B6CB0"), better + 1, "bars in the better colour");
    assert_eq!(fills("#D05A2C"), worse + 1, "bars in the worse colour");
}

/// The fixture with a risk flag on its second target (ext4 mounted
/// data=writeback, as the terminal report would say it).
fn fixture_with_a_risk() -> RunResult {
    let mut run = load(&in_package(FIXTURE)).expect("fixture loads");
    let env = run.targets[1].env.as_mut().expect("the fixture has an env");
    env.risks.push(Risk {
        code: "data_writeback".into(),
        message: "data=writeback: after a crash, recently written files can contain stale or garbage blocks".into(),
    });
    run
}

/// The fixture with device counters on get_block: target 0's reads came
/// from the page cache (the device read 2 % of them, flagged), target 1's
/// from the device (all of them).
fn fixture_with_device_counters() -> RunResult {
    let mut run = load(&in_package(FIXTURE)).expect("fixture loads");
    for (target, device_share) in [(0, 0.02), (1, 1.0)] {
        let metrics = run.targets[target]
            .workloads
            .iter_mut()
            .flat_map(|w| w.metrics.iter_mut().filter(|m| m.name == "get_block"));
        for metric in metrics {
            let read = 64u64 << 20;
            let device = (read as f64 * device_share) as u64;
            metric.device = Some(DeviceEvidence {
                read_bytes: device,
                written_bytes: 0,
                ops: 100,
                util_percent: 50.0,
                queue_depth: 1.0,
                service_ms: 1.0,
                workload_read_bytes: Some(read),
                workload_written_bytes: Some(0),
                read_ratio: Some(device as f64 / read as f64),
                ..Default::default()
            });
            metric.flags.retain(|f| *f == Flag::TooShort);
            if device_share < 0.1 {
                metric.flags.push(Flag::ServedFromCache);
            }
        }
    }
    run
}

/// Beside each figure with counters, a bar as long as the device's share
/// of the bytes, in the warning colour where the counters flagged it.
#[test]
fn device_bars_are_as_long_as_the_device_share_and_warn_where_flagged() {
    let run = fixture_with_device_counters();
    let summary = Summary::of(&run);
    let html = Html.render(&run, &summary).unwrap();
    let bars: Vec<&str> = html
        .split("<span class=\"device")
        .skip(1)
        .map(|rest| &rest[..rest.find("</span></span>").unwrap_or(rest.len())])
        .collect();
    assert_eq!(bars.len(), 2, "one bar per cell with counters: {bars:?}");
    let cached = bars
        .iter()
        .find(|b| b.contains("width: 2.0%"))
        .expect("2 %");
    assert!(cached.starts_with(" flagged\""), "{cached}");
    let device = bars
        .iter()
        .find(|b| b.contains("width: 100.0%"))
        .expect("100 %");
    assert!(device.starts_with('"'), "not flagged: {device}");
    assert!(html.contains("dev 2%") && html.contains("dev 100%"));
    // The fixture itself (tmpfs) has no counters and no bar.
    let (_, _, plain) = render_fixture();
    assert!(!plain.contains("<span class=\"device"));
}

/// The risk flags come first, every one of them, as in the terminal
/// report's RISK lines.
#[test]
fn risks_come_first_in_the_html() {
    let run = fixture_with_a_risk();
    let summary = Summary::of(&run);
    let html = Html.render(&run, &summary).unwrap();
    assert!(!summary.risks.is_empty(), "the fixture has a risk flag");
    let risks = html.find("id=\"risks\"").expect("a risk section");
    let warnings = html.find("id=\"warnings\"").expect("a warnings section");
    assert!(risks < warnings, "risks before warnings");
    for (target, text) in &summary.risks {
        let line = format!("<strong>{target}</strong>: {text}");
        assert!(html.contains(&line), "missing {line}");
    }
}

#[test]
fn report_is_self_contained() {
    let (_, _, html) = render_fixture();
    for remote in ["http://", "https://", "<script", "<link", "@import", "url("] {
        // The SVG namespace is an identifier, not something loaded.
        let found = html
            .replace("xmlns=\"http://www.w3.org/2000/svg\"", "")
            .contains(remote);
        assert!(!found, "the report refers to {remote}");
    }
}

#[test]
fn report_loads_in_chromium_with_every_chart_drawn() {
    let Some(browser) = Browser::find() else {
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    let (run, summary, expected) = render_fixture();
    let out = browser.out_dir.clone();
    let page = out.join("report.html");
    let fixture = in_package(FIXTURE);
    common::run(&[
        "report",
        &fixture.to_string_lossy(),
        "--html",
        &page.to_string_lossy(),
    ])
    .assert_success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html == expected,
        "`fsbench report --html` differs from Html.render"
    );

    let risky = out.join("risky.json");
    std::fs::write(
        &risky,
        serde_json::to_string(&fixture_with_a_risk()).unwrap(),
    )
    .unwrap();
    let risky_page = out.join("risky.html");
    common::run(&[
        "report",
        &risky.to_string_lossy(),
        "--format",
        "html",
        "-o",
        &risky_page.to_string_lossy(),
    ])
    .assert_success();
    let (dom, _) = browser.dump_dom(&risky_page);
    assert!(
        dom.contains("id=\"risks\""),
        "the risk section is in the page"
    );
    assert!(
        dom.contains("data=writeback: after a crash"),
        "with its text"
    );
    let verdict = dom
        .find("id=\"verdict\"")
        .expect("the verdict is in the page");
    assert!(
        verdict < dom.find("id=\"risks\"").unwrap(),
        "the verdict comes first"
    );
    assert!(
        dom.contains("not crash-safe: data=writeback"),
        "the verdict names the lost safety"
    );
    assert_change_colours_follow_directions(&dom, &Summary::of(&fixture_with_a_risk()));
    let charts = browser.probe("probe.html", &html);
    assert_charts_drawn(&charts);
    assert_every_chart_present(&run, &summary, &charts);

    let screenshot = out.join("report.png");
    browser.screenshot(&page, &screenshot);
    let size = std::fs::metadata(&screenshot).map_or(0, |m| m.len());
    assert!(
        size > 50_000,
        "screenshot {} is {size} bytes",
        screenshot.display()
    );
    eprintln!("screenshot: {}", screenshot.display());
}

/// Four targets with long names (the fixture's two, renamed): legends wrap,
/// labels fit, colours stay apart.
#[test]
fn many_targets_with_long_names_lay_out_cleanly() {
    let Some(browser) = Browser::find() else {
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    let (mut run, _, _) = render_fixture();
    let names = [
        "xfs-on-md-raid1",
        "ext4",
        "ext4-writeback-nobarrier",
        "tmpfs",
    ];
    let originals = std::mem::take(&mut run.targets);
    for (i, name) in names.into_iter().enumerate() {
        let mut target = originals[i % originals.len()].clone();
        target.name = name.to_string();
        run.targets.push(target);
    }
    let summary = Summary::of(&run);
    let html = Html.render(&run, &summary).unwrap();
    std::fs::write(browser.out_dir.join("four-targets.html"), &html).unwrap();
    let charts = browser.probe("four-targets-probe.html", &html);
    assert_charts_drawn(&charts);
    assert_every_chart_present(&run, &summary, &charts);
}

/// The console check above is only worth something if it catches errors.
#[test]
fn console_errors_of_a_broken_page_are_caught() {
    let Some(browser) = Browser::find() else {
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    let page = browser.out_dir.join("broken.html");
    let broken = "<!DOCTYPE html><html><body><p>x</p>\
                  <script>console.error('logged'); no_such_function();</script></body></html>";
    std::fs::write(&page, broken).unwrap();
    let (_, log) = browser.dump_dom(&page);
    let messages = console_messages(&log);
    assert!(
        messages.iter().any(|m| m.contains("logged"))
            && messages.iter().any(|m| m.contains("no_such_function")),
        "{log}"
    );
}

/// The text checks above are only worth something if they catch faults.
#[test]
fn probe_catches_overlapping_and_cut_off_text() {
    let Some(browser) = Browser::find() else {
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    let page = browser.out_dir.join("bad-chart.html");
    let svg = r#"<svg width="300" height="200" viewBox="0 0 300 200" xmlns="http://www.w3.org/2000/svg">
        <text x="10" y="40" font-size="16">first label</text>
        <text x="30" y="44" font-size="16">second label</text>
        <text x="260" y="100" font-size="16">cut off at the edge</text></svg>"#;
    let html = format!("<!DOCTYPE html><html><body>{svg}<script>{PROBE}</script></body></html>");
    std::fs::write(&page, html).unwrap();
    let (dom, _) = browser.dump_dom(&page);
    let charts = probe_result(&dom);
    assert_eq!(charts.len(), 1);
    assert_eq!(charts[0].overlaps, ["first label / second label"]);
    assert_eq!(charts[0].clipped, ["cut off at the edge"]);
}

/// Headless Chromium with a profile of its own, writing under
/// target/test-output/report_html/.
struct Browser {
    binary: PathBuf,
    out_dir: PathBuf,
    profile: tempfile::TempDir,
}

impl Browser {
    fn find() -> Option<Browser> {
        let binary = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())?;
        let out_dir = in_package("target/test-output/report_html");
        std::fs::create_dir_all(&out_dir).unwrap();
        Some(Browser {
            binary,
            out_dir,
            profile: tempfile::tempdir().unwrap(),
        })
    }

    /// Runs chromium on `page` with `args`; returns stdout and stderr.
    fn run(&self, page: &Path, args: &[&str]) -> (String, String) {
        let output = Command::new("timeout")
            .arg(BROWSER_TIMEOUT_S)
            .arg(&self.binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
            ])
            .arg(format!("--user-data-dir={}", self.profile.path().display()))
            .args([
                "--enable-logging=stderr",
                "--v=0",
                "--window-size=1400,3000",
            ])
            .args(args)
            .arg(format!("file://{}", page.display()))
            .output()
            .expect("chromium starts");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "chromium failed: {stderr}");
        (String::from_utf8_lossy(&output.stdout).into_owned(), stderr)
    }

    /// The DOM after the page loaded and its scripts ran, and the log.
    fn dump_dom(&self, page: &Path) -> (String, String) {
        self.run(page, &["--dump-dom"])
    }

    /// Loads `html` with probe.js added (as `name` in the output
    /// directory), checks the console stayed silent, and returns what the
    /// probe measured.
    fn probe(&self, name: &str, html: &str) -> Vec<ChartProbe> {
        let page = self.out_dir.join(name);
        let script = format!("<script>{PROBE}</script></body>");
        std::fs::write(&page, html.replace("</body>", &script)).unwrap();
        let (dom, log) = self.dump_dom(&page);
        let console = console_messages(&log);
        assert!(console.is_empty(), "console output: {console:?}");
        probe_result(&dom)
    }

    fn screenshot(&self, page: &Path, png: &Path) {
        self.run(page, &[&format!("--screenshot={}", png.display())]);
    }
}

/// What the page wrote to the console (errors, uncaught exceptions, failed
/// loads): Chromium logs each as an `INFO:CONSOLE` line.
fn console_messages(log: &str) -> Vec<String> {
    log.lines()
        .filter(|line| line.contains(":CONSOLE") || line.contains("Uncaught"))
        .map(str::to_string)
        .collect()
}

/// What probe.js measured about one `<svg>` in the laid-out page.
#[derive(Debug, serde::Deserialize)]
struct ChartProbe {
    title: String,
    width: f64,
    height: f64,
    /// Shapes drawn (rect, line, polyline, path, circle), background included.
    shapes: usize,
    texts: usize,
    /// Pairs of texts whose boxes intersect.
    overlaps: Vec<String>,
    /// Texts reaching outside the chart.
    clipped: Vec<String>,
}

const PROBE_START: &str = "<pre id=\"probe\">";

fn probe_result(dom: &str) -> Vec<ChartProbe> {
    // The last one: the script itself mentions the element.
    let start = dom.rfind(PROBE_START).expect("probe ran") + PROBE_START.len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("probe output: {e}: {json}"))
}

fn assert_charts_drawn(charts: &[ChartProbe]) {
    assert!(!charts.is_empty(), "no chart in the page");
    for chart in charts {
        let what = format!("chart {:?}", chart.title);
        assert!(
            chart.width > 100.0 && chart.height > 100.0,
            "{what} is {chart:?}"
        );
        // Background, plot frame and at least a bar or a line.
        assert!(
            chart.shapes >= 3,
            "{what} draws only {} shapes",
            chart.shapes
        );
        // Title, axis names and tick labels.
        assert!(chart.texts >= 4, "{what} has only {} texts", chart.texts);
        assert!(
            chart.overlaps.is_empty(),
            "{what}: texts overlap: {:?}",
            chart.overlaps
        );
        assert!(
            chart.clipped.is_empty(),
            "{what}: texts cut off: {:?}",
            chart.clipped
        );
    }
}

/// A bar chart per metric, a latency plot per metric with latencies, a
/// time series per workload with intervals, and the change chart of each
/// target against the baseline.
fn assert_every_chart_present(run: &RunResult, summary: &Summary, charts: &[ChartProbe]) {
    let titles: Vec<&str> = charts.iter().map(|c| c.title.as_str()).collect();
    let mut expected = Vec::new();
    for workload in &summary.workloads {
        for metric in &workload.metrics {
            let name = names::human(&metric.name, &metric.unit);
            expected.push(format!("{}: {name}", workload.name));
            let timed = metric.cells.iter().flatten().any(|c| c.latency.is_some());
            if timed {
                expected.push(format!("{}: {name} latency", workload.name));
            }
        }
        let has_intervals = run
            .targets
            .iter()
            .flat_map(|t| &t.workloads)
            .any(|w| w.name() == workload.name && !w.intervals.is_empty());
        let series = titles
            .iter()
            .filter(|t| t.starts_with(&format!("{}: ", workload.name)) && t.ends_with("over time"))
            .count();
        assert_eq!(
            has_intervals,
            series > 0,
            "{}: {series} time series",
            workload.name
        );
    }
    for title in &expected {
        assert!(
            titles.contains(&title.as_str()),
            "no chart {title:?} in {titles:?}"
        );
    }
    let baseline = &summary.targets[summary.baseline];
    for target in summary.targets.iter().filter(|t| *t != baseline) {
        let change = format!("{target} vs {baseline}: change");
        assert!(
            titles.iter().any(|t| t.starts_with(&change)),
            "no chart {change:?} in {titles:?}"
        );
    }
}
