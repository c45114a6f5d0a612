use super::*;
use std::fs::File;
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/sched/pingpong-pipe")
        .join(name)
}

fn decode(name: &str) -> (Info, Vec<Event>) {
    let p = data(name);
    let mut t = TraceDat::open(|| File::open(&p)).unwrap();
    let mut out = Vec::new();
    while let Some(e) = t.next_event().unwrap() {
        out.push(e);
    }
    (t.info().clone(), out)
}

/// (cpu, µs, event name) of every line of `trace-cmd report`.
fn report() -> Vec<(u32, i64, String)> {
    let text = std::fs::read_to_string(data("trace-cmd-report.txt")).unwrap();
    let mut v = Vec::new();
    for l in text.lines() {
        let Some(open) = l.find(" [") else { continue };
        let Some(close) = l[open..].find(']').map(|c| open + c) else {
            continue;
        };
        let Ok(cpu) = l[open + 2..close].parse::<u32>() else {
            continue;
        };
        let rest = l[close + 1..].trim_start();
        let Some((time, rest)) = rest.split_once(": ") else {
            continue;
        };
        let (s, f) = time.trim().split_once('.').unwrap();
        let us = s.parse::<i64>().unwrap() * 1_000_000 + f.parse::<i64>().unwrap();
        let event = rest.split(':').next().unwrap().trim().to_string();
        v.push((cpu, us, event));
    }
    v
}

fn name(k: &Kind) -> String {
    match k {
        Kind::Switch { .. } => "sched_switch".into(),
        Kind::Wakeup { event, .. } => event.clone(),
        Kind::Fork { .. } => "sched_process_fork".into(),
        Kind::Exit { .. } => "sched_process_exit".into(),
        Kind::Print(_) => "print".into(),
        Kind::Other(n) => n.clone(),
    }
}

#[test]
fn both_versions_give_what_trace_cmd_report_prints() {
    let mut want = report();
    want.sort();
    for file in ["trace.dat", "trace-v6.dat"] {
        let (info, events) = decode(file);
        assert_eq!(info.hostname(), Some("vm"), "{file}");
        let mut got: Vec<(u32, i64, String)> = events
            .iter()
            .map(|e| (e.cpu, (e.ts_ns + 500) / 1000, name(&e.kind)))
            .collect();
        // report rounds to the microsecond. Time order, as it prints.
        assert!(
            events.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns),
            "{file}"
        );
        got.sort();
        assert_eq!(got.len(), want.len(), "{file}");
        assert_eq!(got, want, "{file}");
    }
}

#[test]
fn the_marker_and_names_come_through() {
    let (_, events) = decode("trace.dat");
    let marker = events
        .iter()
        .find_map(|e| match &e.kind {
            Kind::Print(t) if t.contains("integrador_epoch=") => Some(t.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        marker.starts_with("integrador_epoch=1795264911.293570"),
        "{marker}"
    );
    // The context is named as report names it (the saved command lines).
    let first = events.iter().find(|e| e.pid == 32147).unwrap();
    assert_eq!(first.comm, "epoch_marker");
}

#[test]
fn damage_is_an_error_not_a_panic() {
    let b = std::fs::read(data("trace.dat")).unwrap();
    for cut in [0, 5, 12, 40, 200, 5000, b.len() / 2, b.len() - 3] {
        let part = b[..cut].to_vec();
        let r = TraceDat::open(|| Ok(std::io::Cursor::new(part.clone())));
        if let Ok(mut t) = r {
            while let Ok(Some(_)) = t.next_event() {}
        }
    }
    let mut x = b.clone();
    for i in (100..x.len()).step_by(997) {
        x[i] ^= 0x5a;
    }
    if let Ok(mut t) = TraceDat::open(|| Ok(std::io::Cursor::new(x.clone()))) {
        while let Ok(Some(_)) = t.next_event() {}
    }
}

#[test]
fn tsc_counts_become_nanoseconds_as_trace_cmd_computes_them() {
    let mut i = Info {
        tsc2nsec: Some((0x8000_0000, 32, 1_000)),
        clock: Some("x86-tsc".into()),
        ..Info::default()
    };
    // mult / 2^shift = 1/2: two counts per ns, then the offset.
    assert_eq!(i.ns(2_000_000), 1_001_000);
    i.clock = Some("local".into());
    assert_eq!(i.ns(2_000_000), 2_000_000);
}
