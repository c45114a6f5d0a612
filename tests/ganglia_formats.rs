//! Ganglia's own formats against the real fixtures: gmond XML snapshots
//! (distinct samples per host and metric, first and last times) and
//! `rrdtool dump` files (the known rows of the finest AVERAGE archive).

mod common;

use common::{fixture, read_json};
use integrador_ganglia::xml::{Entry, XmlReader};
use std::collections::{BTreeMap, BTreeSet};

fn snapshots() -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(fixture("ganglia/snapshots"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    v.sort();
    v
}

#[test]
fn gmond_snapshots_give_the_expected_distinct_samples() {
    let exp = read_json(&fixture("ganglia/snapshots/samples.expected.json"));
    let mut entries = 0;
    let mut samples: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for p in snapshots() {
        let mut r = XmlReader::new(std::io::BufReader::new(std::fs::File::open(&p).unwrap()));
        let mut e = Entry::default();
        while r.next_entry(&mut e).unwrap() {
            entries += 1;
            samples
                .entry(format!("{} {}", e.host, e.metric))
                .or_default()
                .insert(e.time);
        }
        assert_eq!(r.counts.documents, 1);
    }
    assert_eq!(
        entries,
        exp["numeric_metric_entries_in_snapshots"].as_u64().unwrap()
    );
    let distinct: usize = samples.values().map(BTreeSet::len).sum();
    assert_eq!(distinct as u64, exp["distinct_samples"].as_u64().unwrap());
    let want = exp["per_host_metric"].as_object().unwrap();
    assert_eq!(samples.len(), want.len());
    for (k, v) in want {
        let s = &samples[k];
        assert_eq!(s.len() as u64, v["count"].as_u64().unwrap(), "{k}");
        assert_eq!(*s.first().unwrap(), v["first"].as_i64().unwrap(), "{k}");
        assert_eq!(*s.last().unwrap(), v["last"].as_i64().unwrap(), "{k}");
    }
}

/// Several documents in one file, and gmond's sloppiness: an unescaped `&`
/// and a Latin-1 byte in attribute values.
#[test]
fn concatenated_and_sloppy_documents() {
    let mut all = Vec::new();
    for p in snapshots().iter().take(3) {
        all.extend(std::fs::read(p).unwrap());
    }
    let text = String::from_utf8(all).unwrap();
    let sloppy = text.replacen("OWNER=\"", "OWNER=\"R&D \u{e9}quipe ", 1);
    let mut bytes = sloppy.into_bytes();
    // Make the é a Latin-1 byte, as gmond would write it.
    let i = bytes.windows(2).position(|w| w == [0xc3, 0xa9]).unwrap();
    bytes.splice(i..i + 2, [0xe9]);
    let mut r = XmlReader::new(&bytes[..]);
    let mut e = Entry::default();
    let mut n = 0;
    while r.next_entry(&mut e).unwrap() {
        n += 1;
        assert_eq!(e.cluster.as_deref(), Some("cluster.example"));
    }
    assert_eq!(r.counts.documents, 3);
    assert!(n > 100, "{n}");
}

#[test]
fn rrd_dumps_give_the_known_rows_of_the_finest_average() {
    use integrador_ganglia::rrd::{host_metric, RrdDump};
    let mut n = 0;
    for name in [
        "node02.cluster.example.bytes_in",
        "node03.cluster.example.cpu_user",
    ] {
        let path = fixture(&format!("ganglia/rrd/{name}.xml"));
        let exp = read_json(&fixture(&format!("ganglia/rrd/{name}.expected.json")));
        let d =
            RrdDump::read(std::io::BufReader::new(std::fs::File::open(&path).unwrap())).unwrap();
        assert_eq!(d.step, exp["step"].as_i64().unwrap());
        assert_eq!(d.lastupdate, exp["lastupdate"].as_i64().unwrap());
        let (host, metric) = host_metric(&path).unwrap();
        assert_eq!(format!("{host}.{metric}"), name);
        for (i, r) in exp["rra"].as_array().unwrap().iter().enumerate() {
            let rows = d.timed_rows(i);
            assert_eq!(rows.len() as u64, r["rows"].as_u64().unwrap());
            assert_eq!(
                rows[0].0,
                r["first_row_time"].as_i64().unwrap(),
                "{name} rra {i}"
            );
            assert_eq!(rows.last().unwrap().0, r["last_row_time"].as_i64().unwrap());
        }
        let i = d.finest("AVERAGE").unwrap();
        assert_eq!(i, 0);
        let known: Vec<(i64, f64)> = d
            .timed_rows(i)
            .into_iter()
            .filter(|(_, v)| !v[0].is_nan())
            .map(|(t, v)| (t, v[0]))
            .collect();
        let want = exp["rra"][i]["known"].as_array().unwrap();
        assert_eq!(known.len(), want.len(), "{name}");
        for (k, w) in known.iter().zip(want) {
            assert_eq!(k.0, w["time"].as_i64().unwrap());
            let wv = w["values"][0].as_f64().unwrap();
            assert!(
                (k.1 - wv).abs() <= 1e-9 * wv.abs().max(1.0),
                "{name}: {k:?} vs {w}"
            );
        }
        n += known.len();
    }
    assert!(n > 30);
}

/// (host metric) → [(epoch s, value)] of one of our traces.
fn series(trace: &std::path::Path) -> BTreeMap<String, Vec<(i64, f64)>> {
    let o = common::read_ours(trace);
    let mut out: BTreeMap<String, Vec<(i64, f64)>> = BTreeMap::new();
    for (t, f) in o.of("6") {
        assert_eq!(t % 1_000_000_000, 0, "whole seconds");
        out.entry(format!("{} {}", o.name(&f[2]), o.name(&f[3])))
            .or_default()
            .push((t / 1_000_000_000, f[4].parse().unwrap()));
    }
    out
}

/// A directory of snapshots, or the same snapshots concatenated in one
/// file: each distinct sample once, at LOCALTIME − TN.
#[test]
fn a_snapshot_series_integrates_each_sample_once() {
    let d = common::tempdir();
    let (a, b) = (d.path().join("dir.paje"), d.path().join("cat.paje"));
    common::run_ok(
        &["-ganglia", fixture("ganglia/snapshots").to_str().unwrap()],
        &a,
    );
    let cat = d.path().join("all.xml");
    let mut all = Vec::new();
    for p in snapshots() {
        all.extend(std::fs::read(p).unwrap());
    }
    std::fs::write(&cat, all).unwrap();
    common::run_ok(&["-ganglia", cat.to_str().unwrap()], &b);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let s = series(&a);
    let exp = read_json(&fixture("ganglia/snapshots/samples.expected.json"));
    let want = exp["per_host_metric"].as_object().unwrap();
    assert_eq!(s.len(), want.len());
    // The expected file counts exact (time) triples; the same sample seen
    // again a second off (the wobble) is integrated once.
    let wobbles = common::snapshot_wobbles(&fixture("ganglia/snapshots"));
    assert!(!wobbles.is_empty(), "the fixture shows the wobble");
    for (k, v) in want {
        let mine = &s[k];
        let w = wobbles.get(k).copied().unwrap_or(0);
        assert_eq!(mine.len() as u64, v["count"].as_u64().unwrap() - w, "{k}");
        assert_eq!(mine.first().unwrap().0, v["first"].as_i64().unwrap(), "{k}");
        assert!(
            mine.last().unwrap().0.abs_diff(v["last"].as_i64().unwrap()) <= w,
            "{k}"
        );
    }
}

#[test]
fn rrd_dumps_integrate_their_known_rows() {
    let d = common::tempdir();
    let out = d.path().join("rrd.paje");
    common::run_ok(
        &["-ganglia", fixture("ganglia/rrd").to_str().unwrap()],
        &out,
    );
    let s = series(&out);
    for name in [
        "node02.cluster.example.bytes_in",
        "node03.cluster.example.cpu_user",
    ] {
        let exp = read_json(&fixture(&format!("ganglia/rrd/{name}.expected.json")));
        let (host, metric) = name.rsplit_once('.').unwrap();
        let mine = &s[&format!("{host} {metric}")];
        let want = exp["rra"][0]["known"].as_array().unwrap();
        assert_eq!(mine.len(), want.len());
        for (m, w) in mine.iter().zip(want) {
            assert_eq!(m.0, w["time"].as_i64().unwrap());
            let wv = w["values"][0].as_f64().unwrap();
            assert!((m.1 - wv).abs() <= 1e-9 * wv.abs().max(1.0));
        }
    }
}
