//! The clocks report page (`--report`) opened in a real browser: headless
//! Chromium renders the page of the README example, the grid example and
//! a libRastro run whose node02 clock is off, with a sync file that is
//! wrong. Each host has its chart, drawn (its correction's line in the
//! DOM Chromium built, and pixels that are not white in the screenshot);
//! no console error. Chromium is required under
//! INTEGRADOR_REQUIRE_CHROMIUM=1 (.ci/run installs it); elsewhere a
//! missing one is skipped loudly.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("INTEGRADOR_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
        if found.is_some() {
            return found;
        }
    }
    if std::env::var_os("INTEGRADOR_REQUIRE_CHROMIUM").is_some_and(|v| v == "1") {
        panic!("chromium is required (INTEGRADOR_REQUIRE_CHROMIUM=1) and not found");
    }
    eprintln!("SKIPPED: chromium not found (set INTEGRADOR_CHROMIUM or install chromium)");
    None
}

/// Chromium on `page`: the DOM it built, its console's errors, and a
/// screenshot.
fn render(browser: &Path, page: &Path, shot: &Path) -> (String, Vec<String>) {
    let url = format!("file://{}", page.display());
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ];
    let dom = Command::new(browser)
        .args(common)
        .args(["--dump-dom", &url])
        .output()
        .expect("chromium runs");
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let shot_arg = format!("--screenshot={}", shot.display());
    let o = Command::new(browser)
        .args(common)
        .args([shot_arg.as_str(), "--window-size=1200,3000", &url])
        .output()
        .expect("chromium runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let console: Vec<String> = String::from_utf8_lossy(&dom.stderr)
        .lines()
        .chain(String::from_utf8_lossy(&o.stderr).lines())
        .filter(|l| l.contains("CONSOLE") && (l.contains("rror") || l.contains("Uncaught")))
        .map(str::to_string)
        .collect();
    (String::from_utf8_lossy(&dom.stdout).into_owned(), console)
}

/// The share of a PNG's pixels that are not white.
fn inked(png: &Path) -> f64 {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let bytes = &buf[..info.buffer_size()];
    let ink = bytes
        .chunks(px)
        .filter(|p| p.iter().take(3).any(|&c| c < 200))
        .count();
    ink as f64 / (bytes.len() / px) as f64
}

fn check(browser: &Path, dir: &Path, name: &str, args: &[&str], hosts: &[&str]) {
    let page = dir.join(format!("{name}.html"));
    let mut all = args.to_vec();
    all.extend(["-q", "--report", page.to_str().unwrap()]);
    let o = integrador(&all);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    let shot = dir.join(format!("{name}.png"));
    let (dom, console) = render(browser, &page, &shot);
    assert!(console.is_empty(), "{name}: console errors {console:?}");
    // One chart a host, each with its correction's line drawn.
    let sections: Vec<&str> = dom.split("<section class=\"host\"").skip(1).collect();
    let named: Vec<String> = sections
        .iter()
        .filter_map(|s| s.split("data-host=\"").nth(1)?.split('"').next())
        .map(str::to_string)
        .collect();
    let mut want: Vec<String> = hosts.iter().map(|h| h.to_string()).collect();
    want.sort();
    let mut got = named.clone();
    got.sort();
    assert_eq!(got, want, "{name}: one chart a host");
    for s in &sections {
        let chart = s.split("</section>").next().unwrap();
        assert!(chart.contains("<svg"), "{name}: a host without its chart");
        assert!(
            chart.contains("<polyline"),
            "{name}: a chart without its line"
        );
    }
    let ink = inked(&shot);
    eprintln!(
        "{name}: {} hosts, {:.1}% of the page inked",
        named.len(),
        ink * 100.0
    );
    assert!(ink > 0.005, "{name}: the page looks blank ({ink})");
}

#[test]
fn the_report_page_opens_in_chromium_with_a_chart_a_host() {
    let Some(browser) = chromium() else { return };
    let d = tempdir();
    let ex = |p: &str| root().join("examples").join(p).display().to_string();
    let h = root().join("hierarchies").display().to_string();
    let (_, readme) = example_runs().swap_remove(0);
    let r: Vec<&str> = readme.iter().map(String::as_str).collect();
    check(&browser, d.path(), "readme", &r, &["vm"]);

    let grid = [
        "-hierarchy".to_string(),
        format!("{h}/grid.toml"),
        "-sync".into(),
        ex("grid/timesync"),
        "-ganglia".into(),
        ex("grid/domain-a.traced"),
        ex("grid/domain-b.traced"),
    ];
    let g: Vec<&str> = grid.iter().map(String::as_str).collect();
    let o = integrador(&[&g[..], &["-o", d.path().join("g.paje").to_str().unwrap()]].concat());
    // The grid's machines, as the summary lists them.
    let summary = stderr(&o);
    let machines: Vec<String> = summary
        .split("  hosts:\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with("    "))
        .filter_map(|l| l.split(": Machine ").nth(1))
        .map(|m| m.split(' ').next().unwrap().to_string())
        .collect();
    assert!(machines.len() > 2, "{summary}");
    let m: Vec<&str> = machines.iter().map(String::as_str).collect();
    check(&browser, d.path(), "grid", &g, &m);

    // node02 3 ms behind and gaining 150 ppm, a sync file that says 0.
    let src = fixtures().join("rastro/deck-pingpong");
    let t0 = read_json(&src.join("expected.json"))["files"][0]["init_record_t_ns"]
        .as_i64()
        .unwrap();
    let files = skew_rastro("deck-pingpong", "node02", t0, -3_000_000, 150, d.path());
    let sync = d.path().join("wrong.sync");
    std::fs::write(
        &sync,
        format!(
            "node01 {t0} node02 {t0}\nnode01 {} node02 {}\n",
            t0 + 1_000_000_000,
            t0 + 1_000_000_000
        ),
    )
    .unwrap();
    let mut s = vec!["-deck"];
    s.extend(files.iter().map(|f| f.to_str().unwrap()));
    s.extend(["-sync", sync.to_str().unwrap()]);
    check(&browser, d.path(), "skewed", &s, &["node01", "node02"]);
}
