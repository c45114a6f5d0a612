//! Helpers shared by the integration tests: where the fixtures are, how to
//! run the binary, and pj_dump (required under INTEGRADOR_REQUIRE_PJDUMP=1).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `../shared/fixtures` relative to the workspace root, or
/// `$INTEGRADOR_FIXTURES`.
pub fn fixtures() -> PathBuf {
    if let Some(p) = std::env::var_os("INTEGRADOR_FIXTURES") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures")
}

pub fn fixture(rel: &str) -> PathBuf {
    let p = fixtures().join(rel);
    assert!(
        p.exists(),
        "fixture {} is missing (set INTEGRADOR_FIXTURES)",
        p.display()
    );
    p
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn integrador(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_integrador"))
        .args(args)
        .output()
        .expect("integrador runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh temporary directory for outputs.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// Whether pj_dump is usable; under INTEGRADOR_REQUIRE_PJDUMP=1 its absence
/// fails the test, elsewhere it is reported loudly and the check skipped.
pub fn have_pj_dump() -> bool {
    let ok = Command::new("pj_dump").arg("--version").output().is_ok();
    if !ok {
        if std::env::var("INTEGRADOR_REQUIRE_PJDUMP").as_deref() == Ok("1") {
            panic!("pj_dump is required (INTEGRADOR_REQUIRE_PJDUMP=1) but not installed: apt-get install pajeng");
        }
        eprintln!("\n*** SKIPPED: pj_dump not installed; the trace was NOT validated by PajeNG (apt-get install pajeng) ***\n");
    }
    ok
}

/// pj_dump -q: Some(accepted) or None when pj_dump is absent.
pub fn pj_dump_accepts(trace: &Path) -> Option<bool> {
    if !have_pj_dump() {
        return None;
    }
    let o = Command::new("pj_dump")
        .arg("-q")
        .arg(trace)
        .output()
        .expect("pj_dump runs");
    Some(o.status.success())
}

/// The full pj_dump output lines, or None when pj_dump is absent.
pub fn pj_dump_lines(trace: &Path) -> Option<Vec<String>> {
    if !have_pj_dump() {
        return None;
    }
    let o = Command::new("pj_dump")
        .arg(trace)
        .output()
        .expect("pj_dump runs");
    assert!(
        o.status.success(),
        "pj_dump rejected {}: {}",
        trace.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    Some(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

/// Asserts that pj_dump and `integrador check` both accept the trace.
pub fn assert_valid(trace: &Path) {
    if let Some(ok) = pj_dump_accepts(trace) {
        assert!(ok, "pj_dump -q rejects {}", trace.display());
    }
    let c = integrador(&["check", trace.to_str().unwrap()]);
    assert!(
        c.status.success(),
        "integrador check rejects {}:\n{}",
        trace.display(),
        String::from_utf8_lossy(&c.stdout)
    );
}

/// Counts lines of our own output by Pajé event name (from its header).
pub fn count_events(trace: &Path, name: &str) -> usize {
    let text = std::fs::read_to_string(trace).unwrap();
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("%EventDef {name} ")))
        .unwrap_or_else(|| panic!("no {name} in header"))
        .trim()
        .to_string();
    text.lines()
        .filter(|l| l.split_whitespace().next() == Some(id.as_str()))
        .count()
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The fields of a Pajé line, double quotes grouping words.
pub fn paje_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Runs `integrador ARGS -o OUT`, expects success and a trace both pj_dump
/// and our checker accept; returns stderr (the summary).
pub fn run_ok(args: &[&str], out: &Path) -> String {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-o", out.to_str().unwrap()]);
    let o = integrador(&all);
    let err = stderr(&o);
    assert!(o.status.success(), "{args:?}: {err}");
    assert_valid(out);
    err
}
