//! `integrador check` agrees with pj_dump -q (accept/reject) on a corpus of
//! small traces, broken (`bad-*`) and valid but suspect (`ok-*`), and the
//! writer's output always passes both (property test).

mod common;
use common::*;
use integrador::hierarchy::Hierarchy;
use integrador::model::{Event, Op};
use integrador::paje::check::check;
use integrador::paje::writer::PajeWriter;
use integrador::registry::Registry;
use integrador::sink::{Replay, RunEnd};
use proptest::prelude::*;

#[test]
fn corpus_agrees_with_pj_dump() {
    let dir = root().join("tests/paje");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 25);
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let expected = if name.starts_with("ok-") {
            true
        } else {
            assert!(
                name.starts_with("bad-"),
                "{name}: corpus files are ok-* or bad-*"
            );
            false
        };
        let o = integrador(&["check", f.to_str().unwrap()]);
        let ours = o.status.success();
        let report = String::from_utf8_lossy(&o.stdout);
        assert_eq!(ours, expected, "{name}: integrador check says\n{report}");
        if !expected {
            assert!(
                report.contains(": error: "),
                "{name}: an error names its line:\n{report}"
            );
        }
        if let Some(pj) = pj_dump_accepts(&f) {
            assert_eq!(
                pj, expected,
                "{name}: pj_dump -q disagrees with the corpus label"
            );
        }
    }
}

#[test]
fn warnings_do_not_reject() {
    let f = root().join("tests/paje/ok-too-many-fields.paje");
    let o = integrador(&["check", f.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains(":88: warning: PajeSetState has 5 fields"));
}

#[test]
fn every_finding_is_listed_not_just_the_first() {
    let base = std::fs::read_to_string(root().join("tests/paje/ok-basic.paje")).unwrap();
    let kept: Vec<&str> = base.lines().filter(|l| !l.starts_with("5 ")).collect();
    let text = kept.join("\n") + "\n6 3.0 p9 S run\n6 3.0 p1 X run\n8 9.0 p2 S\n";
    let report = check(text.as_bytes()).unwrap();
    assert_eq!(report.errors, 3, "{:?}", report.findings);
    let lines: Vec<u64> = report
        .findings
        .iter()
        .filter(|f| f.severity == integrador::paje::check::Severity::Error)
        .map(|f| f.line)
        .collect();
    let n = kept.len() as u64;
    assert_eq!(lines, vec![n + 1, n + 2, n + 3]);
}

/// Writes random, time-ordered events on random machines and processes.
fn write_random(ops: &[(u8, u8, u16, u8)]) -> Vec<u8> {
    let mut reg = Registry::new(Hierarchy::builtin());
    let mut events = Vec::new();
    let mut time = 1_000_000_000_000i64;
    for &(host, pid, dt, what) in ops {
        time += i64::from(dt) * 1000;
        let m = reg.machine(&format!("node{host}.example"), None);
        let op = if what % 2 == 0 {
            let ty = reg.variable_type(reg.container(m).ty, &format!("metric {}", what % 5), None);
            Op::SetVariable {
                container: m,
                ty,
                value: f64::from(what) / 3.0,
            }
        } else {
            let p = reg.process(m, u32::from(pid)).unwrap();
            let ty = reg.state_type(reg.container(p).ty, "OS state");
            let v = reg.value_of(
                ty,
                if what % 3 == 0 { "running" } else { "blocked" },
                &Default::default(),
            );
            Op::SetState {
                container: p,
                ty,
                value: v,
            }
        };
        events.push(Event { time, op });
    }
    let w = PajeWriter::new(Vec::new(), 1_000_000_000_000, false).unwrap();
    let mut replay = Replay::new(w);
    for e in &events {
        replay.event(&reg, e).unwrap();
    }
    let end = RunEnd::empty();
    replay.finish(&reg, &end).unwrap().0
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn writer_output_passes_the_checker(ops in proptest::collection::vec((0u8..4, 0u8..5, 0u16..3, any::<u8>()), 0..80)) {
        let bytes = write_random(&ops);
        let report = check(&bytes[..]).unwrap();
        prop_assert!(report.accepted(), "{:?}", report.findings);
        prop_assert_eq!(report.warnings, 0, "{:?}", report.findings);
    }
}

#[test]
fn writer_output_passes_pj_dump() {
    let ops: Vec<(u8, u8, u16, u8)> = (0..500u32)
        .map(|i| ((i % 3) as u8, (i % 4) as u8, (i % 3) as u16, (i * 7) as u8))
        .collect();
    let d = tempdir();
    let f = d.path().join("random.paje");
    std::fs::write(&f, write_random(&ops)).unwrap();
    assert_valid(&f);
}
