//! The libRastro decoder against the real fixtures: every record of every
//! file equals `expected.json` (the exact decoding) and the text of
//! librastro's own `rastro_read`.

mod common;

use common::{fixture, read_json};
use integrador_rastro::{End, Record, RstReader, INIT, STOP};
use serde_json::Value;
use std::collections::BTreeMap;

const SCENARIOS: [&str; 3] = ["deck-pingpong", "deck-threads", "akypuera-pingpong"];

fn decode(path: &std::path::Path) -> (integrador_rastro::Init, Vec<Record>, End) {
    let mut r = RstReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = Vec::new();
    let mut rec = Record::default();
    while r.next_into(&mut rec).unwrap() {
        out.push(rec.clone());
    }
    (r.init().clone(), out, r.end().clone())
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .map(|a| a.iter().map(|x| x.as_u64().unwrap()).collect())
        .unwrap_or_default()
}

#[test]
fn every_file_matches_expected_json() {
    let mut files_seen = 0;
    for sc in SCENARIOS {
        let exp = read_json(&fixture(&format!("rastro/{sc}/expected.json")));
        for f in exp["files"].as_array().unwrap() {
            let name = f["file"].as_str().unwrap();
            let path = fixture(&format!("rastro/{sc}/{name}"));
            let (init, recs, end) = decode(&path);
            let ctx = format!("{sc}/{name}");
            assert_eq!(init.host, f["host"].as_str().unwrap(), "{ctx}");
            assert_eq!(init.id1, f["id1"].as_u64().unwrap(), "{ctx}");
            assert_eq!(init.id2, f["id2"].as_u64().unwrap(), "{ctx}");
            assert_eq!(
                init.resolution,
                f["clock_resolution"].as_u64().unwrap(),
                "{ctx}"
            );
            assert_eq!(
                init.time_ns as u64,
                f["init_record_t_ns"].as_u64().unwrap(),
                "{ctx}"
            );
            let End::Stop {
                offset,
                time_ns,
                trailing,
            } = end
            else {
                panic!("{ctx}: no STOP: {end:?}")
            };
            assert_eq!(trailing, 0);
            let len = std::fs::metadata(&path).unwrap().len();
            assert_eq!(offset + 12, len, "{ctx}: STOP is the last record");
            assert_eq!(
                time_ns as u64,
                f["stop_record_t_ns"].as_u64().unwrap(),
                "{ctx}"
            );
            assert_eq!(recs.len() as u64, f["n_events"].as_u64().unwrap(), "{ctx}");
            assert_eq!(
                recs.first().unwrap().time_ns as u64,
                f["first_event_t_ns"].as_u64().unwrap()
            );
            assert_eq!(
                recs.last().unwrap().time_ns as u64,
                f["last_event_t_ns"].as_u64().unwrap()
            );
            let mut counts: BTreeMap<String, u64> = BTreeMap::new();
            for r in &recs {
                assert!(r.ty != INIT && r.ty != STOP);
                *counts.entry(r.ty.to_string()).or_default() += 1;
            }
            let want: BTreeMap<String, u64> = f["count_by_type"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
                .collect();
            assert_eq!(counts, want, "{ctx}");
            let events = f["events"].as_array().unwrap();
            assert_eq!(events.len(), recs.len());
            for (e, r) in events.iter().zip(&recs) {
                assert_eq!(
                    r.time_ns as u64,
                    e["t_ns"].as_u64().unwrap(),
                    "{ctx} @{}",
                    r.offset
                );
                assert_eq!(u64::from(r.ty), e["type"].as_u64().unwrap());
                let u32s: Vec<u64> = r.u32s.iter().map(|&x| u64::from(x)).collect();
                assert_eq!(u32s, u64s(&e["u32"]), "{ctx} @{}", r.offset);
                assert_eq!(r.u64s, u64s(&e["u64"]), "{ctx} @{}", r.offset);
                let strs: Vec<String> = e["str"]
                    .as_array()
                    .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default();
                assert_eq!(r.strings, strs, "{ctx} @{}", r.offset);
                assert!(
                    r.doubles.is_empty()
                        && r.floats.is_empty()
                        && r.u16s.is_empty()
                        && r.u8s.is_empty()
                );
            }
            files_seen += 1;
        }
    }
    assert_eq!(files_seen, 2 + 5 + 2);
}

/// librastro's own reader, run once per file: each event's type, time
/// (printed `%.9f` from a double) and values.
#[test]
fn every_file_matches_rastro_read_text() {
    for sc in SCENARIOS {
        let text =
            std::fs::read_to_string(fixture(&format!("rastro/{sc}/rastro_read.per-file.txt")))
                .unwrap();
        let mut printed: Vec<(u16, String, Vec<String>)> = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.split_once(" type: ").map(|x| x.1) {
                let mut w = rest.split_whitespace();
                let ty: u16 = w.next().unwrap().parse().unwrap();
                assert_eq!(w.next(), Some("ts:"));
                printed.push((ty, w.next().unwrap().to_string(), Vec::new()));
            } else if line.starts_with('\t') {
                let vals = line
                    .split('(')
                    .skip(1)
                    .map(|v| v.split(')').next().unwrap().to_string());
                printed.last_mut().unwrap().2.extend(vals);
            }
        }
        let exp = read_json(&fixture(&format!("rastro/{sc}/expected.json")));
        let mut mine = Vec::new();
        for f in exp["files"].as_array().unwrap() {
            let path = fixture(&format!("rastro/{sc}/{}", f["file"].as_str().unwrap()));
            let (_, recs, _) = decode(&path);
            for r in recs {
                // rastro_read prints the double of the exact tick count.
                let secs = format!("{:.9}", r.time_ns as f64 / 1e9);
                // Its value lines come in its own type order.
                let mut vals: Vec<String> = Vec::new();
                vals.extend(r.strings.iter().cloned());
                vals.extend(r.u64s.iter().map(u64::to_string));
                vals.extend(r.u32s.iter().map(u32::to_string));
                mine.push((r.ty, secs, vals));
            }
        }
        assert_eq!(mine.len(), printed.len(), "{sc}");
        for (m, p) in mine.iter().zip(&printed) {
            assert_eq!((m.0, &m.1), (p.0, &p.1), "{sc}");
            let (mut a, mut b) = (m.2.clone(), p.2.clone());
            a.sort();
            b.sort();
            assert_eq!(a, b, "{sc} type {}", m.0);
        }
    }
}
