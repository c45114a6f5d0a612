//! Clock synchronisation against the thesis' table 4.6 (fixtures/sync):
//! every example of expected.json maps to its floor, from both file
//! layouts, and the correction reaches the written trace.

mod common;
use common::*;
use integrador::clock::{SyncFit, SyncTable};
use integrador::identity::HostIdentity;

fn table(name: &str) -> SyncTable {
    let path = fixture(&format!("sync/{name}"));
    let file = std::io::BufReader::new(std::fs::File::open(&path).unwrap());
    SyncTable::from_reader(&path, file, SyncFit::Endpoints).unwrap()
}

#[test]
fn thesis_worked_example_maps_exactly() {
    for name in ["thesis-table-4.6.sync", "thesis-table-4.6.plain.sync"] {
        let t = table(name);
        let (m, _, _) = t.lookup("paple03", &HostIdentity::default()).unwrap();
        assert_eq!(
            m.map(1094222084364200 * 1000).div_euclid(1000),
            1094221333343713,
            "{name}"
        );
    }
}

#[test]
fn every_expected_example_maps_to_its_floor() {
    let truth = read_json(&fixture("sync/thesis-table-4.6.expected.json"));
    let t = table("thesis-table-4.6.sync");
    assert_eq!(t.reference, truth["reference_host"].as_str().unwrap());
    let mut n = 0;
    for (host, facts) in truth["hosts"].as_object().unwrap() {
        let (m, _, _) = t.lookup(host, &HostIdentity::default()).unwrap();
        let ppm = facts["drift_ppm"].as_f64().unwrap();
        assert!(
            (m.drift_ppm() - ppm).abs() < 0.001,
            "{host}: {} vs {ppm}",
            m.drift_ppm()
        );
        for ex in facts["examples"].as_array().unwrap() {
            let ts = ex["t_s"].as_i64().unwrap();
            let floor = ex["floor"].as_i64().unwrap();
            assert_eq!(
                m.map(ts * 1000).div_euclid(1000),
                floor,
                "{host} {}",
                ex["label"]
            );
            n += 1;
        }
    }
    assert_eq!(n, 24);
}

#[test]
fn correction_reaches_the_trace() {
    // A kernel trace of paple03 read on its own clock: the state change at
    // local 1094222084.364200 s lands at reference 1094221333.343713999 s.
    let d = tempdir();
    let os = d.path().join("paple03.os");
    std::fs::write(
        &os,
        "1 time 1094222084 -\n2 unblock 364200 7\n3 block 364300 7\n",
    )
    .unwrap();
    let out = d.path().join("t.paje");
    let sync = fixture("sync/thesis-table-4.6.sync");
    let o = integrador(&[
        "-os",
        os.to_str().unwrap(),
        "-sync",
        sync.to_str().unwrap(),
        "--absolute-time",
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    let states: Vec<&str> = text.lines().filter(|l| l.starts_with("7 ")).collect();
    assert!(
        states[0].starts_with("7 1094221333.343713999 "),
        "{states:?}"
    );
    assert!(err.contains("clocks (reference paple):"), "{err}");
    assert!(err.contains("paple03: offset"), "{err}");
    assert!(err.contains("drift +9.754 ppm, 2 sync line(s)"), "{err}");
    assert_valid(&out);
}

#[test]
fn hosts_missing_from_the_sync_file_are_listed() {
    let d = tempdir();
    let out = d.path().join("t.paje");
    let sync = fixture("sync/thesis-table-4.6.sync");
    let os = fixture("unify/node01.os");
    let o = integrador(&[
        "-os",
        os.to_str().unwrap(),
        "-sync",
        sync.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("uncorrected (not in the sync file): node01"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn collector_clock_corrects_a_ganglia_recording() {
    // The recording names paple01 as its collector: every sample moves by
    // paple01's correction (about -1459.389 s).
    let d = tempdir();
    let g = d.path().join("g.traced");
    std::fs::write(&g, "# collector paple01\n1094222793 cpu_user node1 5\n").unwrap();
    let sync = fixture("sync/thesis-table-4.6.sync");
    let o = integrador(&[
        "-q",
        "-ganglia",
        g.to_str().unwrap(),
        "-sync",
        sync.to_str().unwrap(),
        "--absolute-time",
        "-o",
        "-",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    // 1094222793000000 us on paple01 -> floor of the exact reference time.
    let t = table("thesis-table-4.6.sync");
    let (m, _, _) = t.lookup("paple01", &HostIdentity::default()).unwrap();
    let mapped = m.map(1_094_222_793_000_000_000);
    let expected = format!(
        "6 {}.{:09} ",
        mapped / 1_000_000_000,
        mapped % 1_000_000_000
    );
    assert!(
        text.lines().any(|l| l.starts_with(&expected)),
        "{expected} in\n{text}"
    );
}

/// Three sync lines or more say how far a line may be off (the farthest
/// from the fitted line), and a drift that moves the clock across them by
/// no more than twice that is not applied: the line's offset halfway
/// across is. The summary says both; two lines say nothing of their
/// scatter and keep the thesis' line.
#[test]
fn sync_lines_carry_their_scatter_and_a_drift_within_it_is_dropped() {
    let d = tempdir();
    let os = d.path().join("n1.os");
    std::fs::write(&os, "1 time 1795264500 -\n2 unblock 100 7\n3 block 200 7\n").unwrap();
    let t0 = 1_795_264_400_000_000i64;
    // Five lines 50 s apart, scattered by up to 40 µs; n1 is 3 ms ahead and
    // gains `ppb` (parts per billion): 100 ppm moves it 20 ms across the
    // 200 s, 0.2 ppm 40 µs, less than twice the scatter.
    let scatter = [0i64, 40, -30, 25, 0];
    for (ppb, applied) in [(100_000i64, true), (200, false)] {
        let mut text = String::new();
        for (i, s) in scatter.iter().enumerate() {
            let x = t0 + i as i64 * 50_000_000;
            let local = x + 3_000 + (x - t0) * ppb / 1_000_000_000 + s;
            text.push_str(&format!("ref {x} n1 {local}\n"));
        }
        let sync = d.path().join(format!("s{ppb}.sync"));
        std::fs::write(&sync, text).unwrap();
        let out = d.path().join("t.paje");
        let o = integrador(&[
            "-os",
            os.to_str().unwrap(),
            "--os-host",
            "n1",
            "-sync",
            sync.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        let err = stderr(&o);
        assert!(o.status.success(), "{err}");
        let line = err.lines().find(|l| l.contains("n1: offset")).unwrap();
        eprintln!("{ppb} ppb: {line}");
        assert!(line.contains(" ± "), "{line}");

        assert_eq!(!line.contains("not applied"), applied, "{line}");
        if !applied {
            assert!(line.contains("within their scatter"), "{line}");
        }
        assert_valid(&out);
    }
}
