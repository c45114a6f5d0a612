//! Clocks from the traces' own messages (`--sync-from-messages`,
//! `--write-sync`, the check of a sync file). The real fixture logs are
//! rewritten with one host's clock off by a known offset and drift: the
//! libRastro files through the project's encoder, the MPE logs by their
//! anchor's epoch (the offset) and that rank's record times (the drift),
//! patched where the decoder says each record is. The estimate must put
//! every event back within the band it reports.

mod common;
use common::*;
use integrador_clog::clog2::cargo_string;
use integrador_clog::{Body, Clog2Reader};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A duration as `format_duration` prints it (`61.331us`, `2.5ms`).
fn duration(s: &str) -> i64 {
    for (unit, scale) in [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)] {
        if let Some(v) = s.strip_suffix(unit) {
            if let Ok(v) = v.parse::<f64>() {
                return (v * scale).round() as i64;
            }
        }
    }
    panic!("not a duration: {s}")
}

/// The estimate the summary gives `host`: (offset ns at T0, half-width,
/// half-width with the drift the messages allow).
fn estimate(summary: &str, host: &str) -> (i64, i64, i64) {
    let line = summary
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{host}: offset ")) && l.contains(" ± "))
        .unwrap_or_else(|| panic!("no estimate for {host}: {summary}"));
    let rest = line.split(": offset ").nth(1).unwrap();
    let mut w = rest.split_whitespace();
    let secs = w.next().unwrap();
    assert_eq!(w.next(), Some("s"), "{line}");
    assert_eq!(w.next(), Some("±"), "{line}");
    let half = duration(w.next().unwrap());
    let neg = secs.starts_with('-');
    let (a, b) = secs.trim_start_matches(['+', '-']).split_once('.').unwrap();
    let ns = a.parse::<i64>().unwrap() * 1_000_000_000 + b.parse::<i64>().unwrap();
    let wide = line
        .split("; ± ")
        .nth(1)
        .and_then(|w| w.split_whitespace().next())
        .map_or(half, duration);
    (if neg { -ns } else { ns }, half, wide)
}

/// Receives more than 1 µs before their send, as the summary counts them.
fn violations(summary: &str) -> u64 {
    summary
        .split("  messages (")
        .nth(1)
        .and_then(|m| m.split(" causality violation").next())
        .and_then(|m| m.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no message counts: {summary}"))
}

/// Every timed line with its aliases resolved to names, sorted, so two
/// runs of the same inputs compare line by line.
fn named_lines(trace: &Path) -> Vec<(String, i64)> {
    let ours = read_ours(trace);
    let mut v: Vec<(String, i64)> = ours
        .events
        .iter()
        .filter(|e| e.0 != "0")
        .map(|(id, t, f)| {
            let words: Vec<&str> = f[2..].iter().map(|w| ours.name(w)).collect();
            (format!("{id} {}", words.join(" ")), *t)
        })
        .collect();
    v.sort();
    v
}

/// The worst |time moved| of the lines of two runs.
fn worst_shift(a: &Path, b: &Path) -> i64 {
    let (x, y) = (named_lines(a), named_lines(b));
    assert_eq!(x.len(), y.len());
    assert!(x.len() > 40);
    x.iter()
        .zip(&y)
        .map(|(p, q)| {
            assert_eq!(p.0, q.0);
            (p.1 - q.1).abs()
        })
        .max()
        .unwrap()
}

/// The shortest round trip between `a` and `b`'s containers: a message,
/// then the first one back after it arrived, from its send to the reply's
/// receive. Links drawn at one record (a DECK mailbox clone: both ends at
/// the same time) are no messages between clocks.
fn min_round_trip(trace: &Path, a: &str, b: &str) -> i64 {
    let ours = read_ours(trace);
    let mut parent: HashMap<String, (String, String)> = HashMap::new();
    for (id, _, f) in &ours.events {
        if id == "4" {
            parent.insert(f[5].clone(), (f[3].clone(), f[4].clone()));
        }
    }
    let host_of = |c: &str| {
        let mut c = c.to_string();
        while let Some((up, name)) = parent.get(&c) {
            if name == a || name == b {
                return name.clone();
            }
            c = up.clone();
        }
        String::new()
    };
    let mut sends: HashMap<String, (i64, String)> = HashMap::new();
    let mut msgs: Vec<(i64, String, i64, String)> = Vec::new();
    for (id, t, f) in &ours.events {
        match id.as_str() {
            "13" => {
                sends.insert(f[6].clone(), (*t, host_of(&f[5])));
            }
            "14" => {
                let (s, from) = sends.remove(&f[6]).unwrap();
                let to = host_of(&f[5]);
                if s != *t && !from.is_empty() && !to.is_empty() && from != to {
                    msgs.push((s, from, *t, to));
                }
            }
            _ => {}
        }
    }
    msgs.sort();
    let mut best = i64::MAX;
    for m in &msgs {
        if let Some(r) = msgs
            .iter()
            .filter(|r| r.1 == m.3 && r.3 == m.1 && r.0 >= m.2)
            .min_by_key(|r| r.0)
        {
            best = best.min(r.2 - m.0);
        }
    }
    assert!(best < i64::MAX, "no round trip in {}", trace.display());
    best
}

/// An MPE log with world rank `wrank`'s clock off: its anchor's epoch
/// moved by `offset_us`, its records' MPE times by `ppm` around the anchor.
fn skew_clog2(log: &Path, wrank: i32, offset_us: i64, ppm: f64, out: &Path) {
    let mut bytes = std::fs::read(log).unwrap();
    let mut r =
        Clog2Reader::new(std::io::BufReader::new(std::fs::File::open(log).unwrap())).unwrap();
    let big = r.preamble().big_endian;
    let mut recs = Vec::new();
    let mut comm: HashMap<(i32, i32), i32> = HashMap::new();
    while let Some(rec) = r.next_record().unwrap() {
        if let Body::Comm {
            icomm, rank, wrank, ..
        } = rec.body
        {
            comm.insert((icomm, rank), wrank);
        }
        recs.push(rec);
    }
    let world = |icomm: i32, rank: i32| comm.get(&(icomm, rank)).copied().unwrap_or(rank);
    let anchor_id = recs
        .iter()
        .find_map(|r| match &r.body {
            Body::EventDef { etype, name, .. } if name == "integrador_anchor" => Some(*etype),
            _ => None,
        })
        .expect("the log has anchors");
    let anchor = recs
        .iter()
        .find(|r| {
            world(r.icomm, r.rank) == wrank
                && matches!(r.body, Body::Cargo { etype, .. } if etype == anchor_id)
        })
        .expect("the rank has an anchor");
    let m_a = anchor.time;
    for rec in &recs {
        if world(rec.icomm, rec.rank) != wrank {
            continue;
        }
        let at = rec.offset as usize;
        if rec.offset == anchor.offset {
            let Body::Cargo { bytes: cargo, .. } = &rec.body else {
                unreachable!()
            };
            let text = std::str::from_utf8(cargo_string(cargo).unwrap()).unwrap();
            let (epoch, pid) = text.split_once(' ').unwrap();
            let (s, us) = epoch.split_once('.').unwrap();
            let t = s.parse::<i64>().unwrap() * 1_000_000 + us.parse::<i64>().unwrap() + offset_us;
            let new = format!(
                "{}.{:06} {pid}",
                t.div_euclid(1_000_000),
                t.rem_euclid(1_000_000)
            );
            let mut c = [0u8; 32];
            c[..2].copy_from_slice(&(new.len() as u16).to_be_bytes());
            c[2..2 + new.len()].copy_from_slice(new.as_bytes());
            bytes[at + 32..at + 64].copy_from_slice(&c);
        } else {
            let t = rec.time + (rec.time - m_a) * ppm / 1e6;
            let b = if big {
                t.to_be_bytes()
            } else {
                t.to_le_bytes()
            };
            bytes[at..at + 8].copy_from_slice(&b);
        }
    }
    std::fs::write(out, bytes).unwrap();
}

/// A set of inputs with one host's clock off.
struct Case {
    name: String,
    /// The options that read the untouched inputs and the skewed ones.
    plain: Vec<String>,
    skewed: Vec<String>,
    /// The skewed host's clock: offset and drift.
    offset: i64,
    ppm: i64,
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn rastro_case(dir: &Path, scenario: &str, map: Option<&str>, offset: i64, ppm: i64) -> Case {
    let src = fixtures().join(format!("rastro/{scenario}"));
    let t0 = read_json(&src.join("expected.json"))["files"][0]["init_record_t_ns"]
        .as_i64()
        .unwrap();
    let out = dir.join(format!("{scenario}{offset}{ppm}"));
    std::fs::create_dir_all(&out).unwrap();
    let files = skew_rastro(scenario, "node02", t0, offset, ppm, &out);
    let with = |files: Vec<String>| {
        let mut v = vec!["-deck".to_string()];
        v.extend(files);
        if let Some(m) = map {
            v.extend(["--deck-map".to_string(), m.to_string()]);
        }
        v
    };
    let glob = src.join("rastro-*.rst").to_str().unwrap().to_string();
    Case {
        name: format!("{scenario} {offset:+} ns {ppm:+} ppm"),
        plain: with(vec![glob]),
        skewed: with(
            files
                .iter()
                .map(|p| p.to_str().unwrap().to_string())
                .collect(),
        ),
        offset,
        ppm,
    }
}

fn clog2_case(dir: &Path, log: &str, offset: i64, ppm: i64) -> Case {
    let src = fixtures().join(format!("clog2/{log}"));
    let (clog, nodes) = (
        src.join(format!("{log}.clog2")),
        src.join(format!("{log}.nodes")),
    );
    let skewed = dir.join(format!("{log}{offset}{ppm}.clog2"));
    skew_clog2(&clog, 1, offset / 1000, ppm as f64, &skewed);
    let with = |p: &PathBuf| {
        vec![
            "-mpi".to_string(),
            p.to_str().unwrap().to_string(),
            "-mpinodes".to_string(),
            nodes.to_str().unwrap().to_string(),
        ]
    };
    Case {
        name: format!("{log} {offset:+} ns {ppm:+} ppm"),
        plain: with(&clog),
        skewed: with(&skewed),
        offset,
        ppm,
    }
}

/// The offsets and drifts of the issue: ahead, far ahead and fast, behind.
const SKEWS: [(i64, i64); 3] = [(250_000_000, 0), (1_500_000_000, 40), (-3_000_000_000, 0)];

/// Runs a case: uncorrected (receives before their sends, and the
/// advice), then corrected: none, every event back within the band, and
/// the band (without drift) no wider than the pair's shortest round trip.
///
/// The truth: the libRastro runs read one clock for both hosts (ns), so
/// the untouched files are right as they are. MPE places each rank by an
/// anchor of µs whose two clock reads are apart, and the untouched
/// pingpong log itself has receives before their send: its ranks are
/// truly apart, by what its own estimate says within its band, so the
/// skewed run is compared with the untouched one corrected the same way.
fn check(case: &Case, dir: &Path, anchors: bool) {
    let out = |n: &str| dir.join(format!("{}-{n}.paje", case.name.replace(' ', "_")));
    let mut args = strs(&case.skewed);
    let raw = run_ok(&args, &out("raw"));
    assert!(violations(&raw) > 0, "{}: {raw}", case.name);
    assert!(raw.contains("--sync-from-messages would apply"), "{raw}");

    args.push("--sync-from-messages");
    let fixed = run_ok(&args, &out("fixed"));
    assert_eq!(violations(&fixed), 0, "{}: {fixed}", case.name);
    let (est, half, wide) = estimate(&fixed, "node02");

    let mut plain = strs(&case.plain);
    run_ok(&plain, &out("plain"));
    plain.push("--sync-from-messages");
    let orig = run_ok(&plain, &out("orig"));
    let (est0, half0, wide0) = estimate(&orig, "node02");
    eprintln!(
        "{}: estimate {est} ns ± {half} (± {wide} with drift); untouched {est0} ± {half0} (± {wide0})",
        case.name
    );
    let (truth, allowed) = if anchors {
        (out("orig"), wide + wide0)
    } else {
        (out("plain"), wide)
    };
    let worst = worst_shift(&out("fixed"), &truth);
    eprintln!(
        "{}: worst event {worst} ns off (allowed {allowed})",
        case.name
    );
    assert!(
        worst <= allowed,
        "{}: {worst} > {allowed}\n{fixed}",
        case.name
    );
    // Undone to the ns when only an offset was added (the messages move
    // by exactly the skew).
    if case.ppm == 0 {
        assert_eq!(est + case.offset, est0, "{}", case.name);
    }

    let rtt = min_round_trip(&out("orig"), "node01", "node02");
    eprintln!(
        "{}: band {} ns, shortest round trip {rtt} ns",
        case.name,
        2 * half
    );
    assert!(2 * half <= rtt, "{}: band {half} vs rtt {rtt}", case.name);
}

#[test]
fn librastro_hosts_off_by_known_clocks_are_put_back() {
    let d = tempdir();
    for (scenario, map) in [
        ("deck-pingpong", None),
        ("akypuera-pingpong", Some("akypuera")),
    ] {
        for (offset, ppm) in SKEWS {
            check(
                &rastro_case(d.path(), scenario, map, offset, ppm),
                d.path(),
                false,
            );
        }
    }
}

#[test]
fn mpe_ranks_off_by_known_clocks_are_put_back() {
    let d = tempdir();
    for log in ["pingpong", "median"] {
        for (offset, ppm) in SKEWS {
            check(&clog2_case(d.path(), log, offset, ppm), d.path(), true);
        }
    }
}

/// The summary's line on `host` in the clocks from the messages.
fn line_of<'a>(summary: &'a str, host: &str) -> &'a str {
    summary
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{host}: ")) && l.contains("message(s) with"))
        .unwrap_or_else(|| panic!("no line for {host}: {summary}"))
}

/// On the untouched fixtures the true offset is 0 (every rank on one
/// machine): the libRastro estimates hold 0 within their band. MPE's
/// anchors place ranks a few µs apart; where 0 is outside the band, the
/// log itself has receives before their sends without any correction,
/// which proves the ranks apart, as the estimate says. A ring's messages
/// go one way per pair: only a bound is known, and said.
#[test]
fn untouched_fixtures_estimate_zero_within_their_band() {
    let d = tempdir();
    for (scenario, map) in [
        ("deck-pingpong", None),
        ("deck-threads", None),
        ("akypuera-pingpong", Some("akypuera")),
    ] {
        let glob = fixtures().join(format!("rastro/{scenario}/rastro-*.rst"));
        let mut args = vec!["-deck", glob.to_str().unwrap(), "--sync-from-messages"];
        if let Some(m) = map {
            args.extend(["--deck-map", m]);
        }
        let s = run_ok(&args, &d.path().join(format!("{scenario}.paje")));
        let hosts: Vec<&str> = s
            .lines()
            .filter(|l| l.contains(" ± ") && l.contains("message(s) with"))
            .collect();
        assert!(!hosts.is_empty(), "{scenario}: {s}");
        for l in hosts {
            let host = l.trim_start().split(':').next().unwrap();
            let (est, _, wide) = estimate(&s, host);
            eprintln!("{scenario}: {}", l.trim());
            assert!(est.abs() <= wide, "{scenario}: {l}");
        }
    }
    for log in ["pingpong", "median", "ring"] {
        let src = fixtures().join(format!("clog2/{log}"));
        let (clog, nodes) = (
            src.join(format!("{log}.clog2")),
            src.join(format!("{log}.nodes")),
        );
        let base = [
            "-mpi",
            clog.to_str().unwrap(),
            "-mpinodes",
            nodes.to_str().unwrap(),
        ];
        let plain = run_ok(&base, &d.path().join(format!("{log}-plain.paje")));
        let mut args = base.to_vec();
        args.push("--sync-from-messages");
        let s = run_ok(&args, &d.path().join(format!("{log}.paje")));
        for l in s.lines().filter(|l| l.contains("message(s) with")) {
            eprintln!("{log}: {}", l.trim());
            let host = l.trim_start().split(':').next().unwrap();
            if !l.contains(" ± ") {
                assert!(l.contains("only a"), "{log}: {l}");
                continue;
            }
            let (est, _, wide) = estimate(&s, host);
            assert!(
                est.abs() <= wide || violations(&plain) > 0,
                "{log}: {l}\n{plain}"
            );
        }
        if log == "ring" {
            assert!(line_of(&s, "node02").contains("only a lower bound"), "{s}");
        }
    }
}

fn pingpong_inputs(kind: &str) -> Vec<String> {
    let p = |s: PathBuf| s.to_str().unwrap().to_string();
    match kind {
        "deck" => vec![
            "-deck".into(),
            p(fixtures().join("rastro/deck-pingpong/rastro-*.rst")),
        ],
        _ => vec![
            "-mpi".into(),
            p(fixtures().join("clog2/pingpong/pingpong.clog2")),
            "-mpinodes".into(),
            p(fixtures().join("clog2/pingpong/pingpong.nodes")),
        ],
    }
}

/// A sync file that moves node02 by 10 ms is outside the band its
/// messages allow, and said so (even with -q); one that is right is not.
#[test]
fn a_wrong_sync_file_is_reported() {
    let d = tempdir();
    for kind in ["deck", "mpi"] {
        for (shift, wrong) in [(10_000_000i64, true), (0, false)] {
            let sync = d.path().join(format!("{kind}{shift}.sync"));
            let t = 1_795_264_000_000_000_000i64;
            std::fs::write(
                &sync,
                format!(
                    "node01 {t} node02 {}\nnode01 {} node02 {}\n",
                    t - shift,
                    t + 1_000_000_000_000,
                    t + 1_000_000_000_000 - shift
                ),
            )
            .unwrap();
            let inputs = pingpong_inputs(kind);
            let mut args = strs(&inputs);
            args.extend(["-sync", sync.to_str().unwrap(), "-q"]);
            let s = run_ok(&args, &d.path().join(format!("{kind}{shift}.paje")));
            let said = s.contains("the correction of node02 against node01 is")
                && s.contains("outside what their");
            eprintln!("{kind} shifted {shift} ns: {}", s.trim());
            assert_eq!(said, wrong, "{kind} {shift}: {s}");
            if wrong {
                // By how much: the 10 ms less the band.
                let by = s
                    .split("the correction of node02 against node01 is ")
                    .nth(1)
                    .and_then(|r| r.split_whitespace().next())
                    .map(duration)
                    .unwrap();
                assert!(by > 9_000_000 && by <= 10_000_000, "{by}: {s}");
            }
        }
    }
}

/// --write-sync keeps the corrections as a sync file that -sync reads
/// back: the same trace to the ns, no receive before its send, and the
/// file names every estimated host.
#[test]
fn write_sync_round_trips() {
    let d = tempdir();
    let case = rastro_case(d.path(), "deck-pingpong", None, 1_500_000_000, 40);
    let sync = d.path().join("written.sync");
    let mut args = strs(&case.skewed);
    args.extend([
        "--sync-from-messages",
        "--write-sync",
        sync.to_str().unwrap(),
    ]);
    run_ok(&args, &d.path().join("a.paje"));
    let text = std::fs::read_to_string(&sync).unwrap();
    eprintln!("{text}");
    assert!(text.contains("# resolution 1000000000"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.contains(" node02 ")).count(),
        2,
        "{text}"
    );
    let mut again = strs(&case.skewed);
    again.extend(["-sync", sync.to_str().unwrap()]);
    let s = run_ok(&again, &d.path().join("b.paje"));
    assert_eq!(violations(&s), 0, "{s}");
    let worst = worst_shift(&d.path().join("a.paje"), &d.path().join("b.paje"));
    assert!(worst <= 1, "{worst}");

    // Without --sync-from-messages the file is the same: what the option
    // would apply.
    let plain_sync = d.path().join("plain.sync");
    let mut args = strs(&case.skewed);
    args.extend(["--write-sync", plain_sync.to_str().unwrap()]);
    run_ok(&args, &d.path().join("c.paje"));
    let strip = |t: &str| {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        strip(&std::fs::read_to_string(&plain_sync).unwrap()),
        strip(&text)
    );
}

/// --write-sync never overwrites an input nor the trace, and a run whose
/// messages link no two hosts writes no file and says so.
#[test]
fn write_sync_refusals() {
    let d = tempdir();
    let inputs = pingpong_inputs("mpi");
    let log = inputs[1].clone();
    let before = std::fs::read(&log).unwrap();
    let out = d.path().join("t.paje");
    let mut args = strs(&inputs);
    args.extend(["--write-sync", &log, "-o", out.to_str().unwrap()]);
    let o = integrador(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("refusing to overwrite an input"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&log).unwrap(), before);
    assert!(!out.exists());

    let mut args = strs(&inputs);
    args.extend([
        "--write-sync",
        out.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let o = integrador(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    // All ranks on one host: no pair of hosts.
    let one = d.path().join("one.nodes");
    std::fs::write(&one, "node01\nnode01\n").unwrap();
    let sync = d.path().join("none.sync");
    let s = run_ok(
        &[
            "-mpi",
            &log,
            "-mpinodes",
            one.to_str().unwrap(),
            "--write-sync",
            sync.to_str().unwrap(),
        ],
        &d.path().join("one.paje"),
    );
    assert!(s.contains("not written: no message links two hosts"), "{s}");
    assert!(!sync.exists());
}

/// Every damaged MPE log and libRastro file of the bad-input corpus ends
/// the same way with the first pass of --sync-from-messages as without:
/// the same exit status and the same first line of error, never a panic
/// (each run capped at 1 GiB of address space).
#[test]
fn damaged_inputs_fail_the_same_with_the_first_pass() {
    let d = tempdir();
    let nodes = fixtures().join("clog2/pingpong/pingpong.nodes");
    let good = fixtures().join("rastro/deck-pingpong/rastro-0-0.rst");
    let mut cases: Vec<Vec<String>> = Vec::new();
    for (dir, option) in [("clog", "-mpi"), ("rastro", "-deck")] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/corpus").join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for p in files {
            let mut args = vec![option.to_string(), p.to_str().unwrap().to_string()];
            if option == "-mpi" {
                args.extend(["-mpinodes".to_string(), nodes.to_str().unwrap().to_string()]);
            } else {
                args.insert(1, good.to_str().unwrap().to_string());
            }
            cases.push(args);
        }
    }
    assert!(cases.len() > 20);
    for (i, args) in cases.iter().enumerate() {
        let mut seen = Vec::new();
        for extra in [None, Some("--sync-from-messages")] {
            let out = d.path().join(format!("{i}.paje"));
            let mut a = strs(args);
            a.extend(extra);
            a.extend(["-o", out.to_str().unwrap()]);
            // Hostile input: under an address-space cap, as `ulimit -v`.
            let o = std::process::Command::new("sh")
                .args(["-c", r#"ulimit -v 1048576; exec "$@""#, "sh"])
                .arg(env!("CARGO_BIN_EXE_integrador"))
                .args(&a)
                .output()
                .unwrap();
            assert_ne!(
                o.status.code(),
                Some(101),
                "{args:?} {extra:?}: {}",
                stderr(&o)
            );
            let first = stderr(&o)
                .lines()
                .next()
                .unwrap_or("")
                .replace(out.to_str().unwrap(), "OUT");
            seen.push((
                o.status.code(),
                if o.status.success() {
                    String::new()
                } else {
                    first
                },
            ));
        }
        assert_eq!(seen[0], seen[1], "{args:?}");
    }
}

/// The first pass reads a pipe's spooled copy: a log given as a pipe gives
/// the same trace as the file.
#[test]
fn the_first_pass_reads_a_pipe_once() {
    let d = tempdir();
    let src = fixtures().join("clog2/pingpong");
    let (log, nodes) = (src.join("pingpong.clog2"), src.join("pingpong.nodes"));
    let (piped, file) = (d.path().join("piped.paje"), d.path().join("file.paje"));
    let o = std::process::Command::new("bash")
        .args([
            "-c",
            r#""$0" -mpi <(cat "$1") -mpinodes "$2" --sync-from-messages -q -o "$3""#,
        ])
        .arg(env!("CARGO_BIN_EXE_integrador"))
        .args([&log, &nodes, &piped])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_valid(&piped);
    run_ok(
        &[
            "-mpi",
            log.to_str().unwrap(),
            "-mpinodes",
            nodes.to_str().unwrap(),
            "--sync-from-messages",
        ],
        &file,
    );
    assert_eq!(
        std::fs::read(&piped).unwrap(),
        std::fs::read(&file).unwrap()
    );
}

/// A sync file against a reference that sends no message (rastro_timesync
/// run on the front-end): node01 and node02 are both corrected by it, and
/// their messages bound the difference of the two corrections. Returns the
/// run's summary and, when it warns of the pair, by how much (ns).
fn against_frontend(
    d: &Path,
    name: &str,
    inputs: &[String],
    node02: i64,
) -> (String, Option<(i64, i64)>) {
    let sync = d.join(format!("{name}.sync"));
    let t = 1_795_264_000_000_000_000i64;
    let far = t + 1_000_000_000_000;
    std::fs::write(
        &sync,
        format!(
            "frontend {t} node01 {t}\nfrontend {far} node01 {far}\nfrontend {t} node02 {}\nfrontend {far} node02 {}\n",
            t + node02,
            far + node02
        ),
    )
    .unwrap();
    let mut args = strs(inputs);
    args.extend(["-sync", sync.to_str().unwrap(), "-q"]);
    let s = run_ok(&args, &d.join(format!("{name}.paje")));
    assert!(
        !s.lines()
            .any(|l| l.trim_end().ends_with(':') && l.contains("clock")),
        "an empty list: {s}"
    );
    let by = s
        .lines()
        .find(|l| l.contains("the correction of node02 against node01 is"))
        .map(|w| {
            assert!(w.contains(sync.to_str().unwrap()), "the file is named: {w}");
            let by = w
                .split(" outside")
                .next()
                .and_then(|r| r.rsplit(' ').next())
                .map(duration)
                .unwrap();
            let band = w
                .split("more, ± ")
                .nth(1)
                .and_then(|r| r.split(')').next())
                .map(duration)
                .unwrap();
            (by, band)
        });
    (s, by)
}

/// The issue's case: node02 truly +250 ms, the file says +260 ms (and 0
/// for node01): the pair is about 10 ms outside, said even with -q; the
/// right file says nothing.
#[test]
fn a_sync_file_against_a_silent_reference_is_checked_pair_by_pair() {
    let d = tempdir();
    let skewed = d.path().join("pingpong-250ms.clog2");
    let src = fixtures().join("clog2/pingpong");
    skew_clog2(&src.join("pingpong.clog2"), 1, 250_000, 0.0, &skewed);
    let inputs = vec![
        "-mpi".to_string(),
        skewed.to_str().unwrap().to_string(),
        "-mpinodes".to_string(),
        src.join("pingpong.nodes").to_str().unwrap().to_string(),
    ];
    let (s, by) = against_frontend(d.path(), "wrong", &inputs, 260_000_000);
    let (by, _) = by.unwrap_or_else(|| panic!("no warning: {s}"));
    // The pingpong's own ranks are apart by a little (its anchors are
    // µs): about 10 ms less the band.
    assert!(by > 9_000_000 && by <= 10_500_000, "{by}: {s}");
    let (s, by) = against_frontend(d.path(), "right", &inputs, 250_000_000);
    assert_eq!(by, None, "{s}");
}

/// The shipped MPE and libRastro ping-pongs with sync files wrong by ±1 ms
/// and ±10 ms are each warned of, by about that much; a right one is not.
#[test]
fn sync_files_wrong_by_a_millisecond_or_ten_are_found() {
    let d = tempdir();
    for kind in ["deck", "mpi"] {
        let inputs = pingpong_inputs(kind);
        for wrong in [1_000_000i64, -1_000_000, 10_000_000, -10_000_000, 0] {
            let (s, by) = against_frontend(d.path(), &format!("{kind}{wrong}"), &inputs, wrong);
            eprintln!("{kind} {wrong:+} ns: {by:?}");
            match by {
                // Outside by the error less the band the messages leave
                // (their latency), give or take the ranks' own clocks (one
                // for libRastro; MPE's anchors a few µs apart).
                Some((by, band)) => assert!(
                    wrong != 0 && by <= wrong.abs() + 50_000 && by >= wrong.abs() - band - 50_000,
                    "{kind} {wrong}: {by} ± {band}: {s}"
                ),
                None => assert_eq!(wrong, 0, "{kind} {wrong}: no warning: {s}"),
            }
        }
    }
}
