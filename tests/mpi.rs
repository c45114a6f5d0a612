//! MPE logs: the decoder against the fixtures' ground truth (expected.json
//! and MPE's own `clog2_print`), the conversion against the same text, the
//! merge with OS and Ganglia data, the MPE-1 CLOG format, and bad input.

mod clog_build;
mod common;
use clog_build::*;
use common::*;
use integrador_clog::{Body, Clog2Reader, Format, LegacyReader, Msg, Record};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};

const FIXTURES: [&str; 3] = ["pingpong", "ring", "median"];

fn clog2(name: &str) -> PathBuf {
    fixture(&format!("clog2/{name}/{name}.clog2"))
}

fn decode(
    path: &Path,
) -> (
    Vec<Record>,
    Vec<integrador_clog::CommEntry>,
    integrador_clog::Preamble,
) {
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut r = Clog2Reader::new(f).unwrap();
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        out.push(rec);
    }
    let table = r.comm_table().unwrap();
    (out, table, r.preamble().clone())
}

/// Decimal seconds (`-0.000152`, `1795264142.824145`) to ns, exactly.
fn ns(s: &str) -> i64 {
    let (neg, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let mut frac = frac.to_string();
    assert!(frac.len() <= 9, "{s}");
    while frac.len() < 9 {
        frac.push('0');
    }
    let v = int.parse::<i64>().unwrap() * 1_000_000_000 + frac.parse::<i64>().unwrap();
    if neg {
        -v
    } else {
        v
    }
}

fn key_values(line: &str) -> HashMap<&str, &str> {
    line.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .collect()
}

#[test]
fn detects_formats_by_content() {
    let head = std::fs::read(clog2("ring")).unwrap();
    assert_eq!(integrador_clog::detect(&head[..64]), Some(Format::Clog2));
    let legacy = legacy_record(0.5, 7, 0, &legacy_body(&[1, 10], Some(("a.c", 40))));
    assert_eq!(integrador_clog::detect(&legacy), Some(Format::Legacy));
    assert_eq!(
        integrador_clog::detect(b"1795265500.5 cpu_user vm 1\n"),
        None
    );
    assert_eq!(integrador_clog::detect(b"CLOG-02.4"), None);
}

#[test]
fn decoder_matches_expected_json() {
    for name in FIXTURES {
        let dir = fixture(&format!("clog2/{name}"));
        let exp = read_json(&dir.join("expected.json"));
        let (records, table, pre) = decode(&clog2(name));

        // Preamble, key by key.
        let ep = &exp["preamble"];
        assert_eq!(pre.big_endian, ep["is_big_endian"].as_bool().unwrap());
        assert_eq!(pre.finalized, ep["is_finalzed"].as_bool());
        assert_eq!(
            u64::from(pre.block_size),
            ep["block_size"].as_u64().unwrap()
        );
        assert_eq!(pre.commtable_fptr, ep["commtable_fptr"].as_u64().unwrap());
        for (k, v) in ep.as_object().unwrap() {
            if let Some(n) = v.as_i64() {
                if k != "commtable_fptr" {
                    assert_eq!(pre.int(k), Some(n), "{name}: preamble {k}");
                }
            }
        }

        // Record counts: total, per type, per rank.
        assert_eq!(
            records.len() as u64,
            exp["records_total"].as_u64().unwrap(),
            "{name}"
        );
        let mut by_type: BTreeMap<&str, u64> = BTreeMap::new();
        let mut by_rank: BTreeMap<String, u64> = BTreeMap::new();
        for r in &records {
            *by_type.entry(r.body.name()).or_default() += 1;
            if !matches!(r.body, Body::EndBlock | Body::EndLog) {
                *by_rank.entry(r.rank.to_string()).or_default() += 1;
            }
        }
        for (t, n) in exp["records_by_type"].as_object().unwrap() {
            assert_eq!(
                by_type.get(t.as_str()).copied().unwrap_or(0),
                n.as_u64().unwrap(),
                "{name}: {t}"
            );
        }
        for (r, n) in exp["records_by_rank"].as_object().unwrap() {
            assert_eq!(by_rank.get(r).copied(), n.as_u64(), "{name}: rank {r}");
        }
        let blocks = records
            .iter()
            .filter(|r| matches!(r.body, Body::EndBlock))
            .count()
            + 1;
        assert_eq!(blocks as u64, exp["num_blocks"].as_u64().unwrap());

        // State and event definitions.
        let states: Vec<Value> = records
            .iter()
            .filter_map(|r| match &r.body {
                Body::StateDef {
                    state,
                    start,
                    end,
                    color,
                    name,
                    format,
                } => Some(serde_json::json!({
                    "state_id": state, "name": name, "start_event": start, "end_event": end,
                    "color": color, "format": format })),
                _ => None,
            })
            .collect();
        let mut want = exp["states"].as_array().unwrap().clone();
        let mut got = states;
        let sort = |v: &mut Vec<Value>| v.sort_by_key(|s| s["state_id"].as_i64());
        sort(&mut want);
        sort(&mut got);
        assert_eq!(got, want, "{name}: states");
        for e in exp["event_defs"].as_array().unwrap() {
            assert!(
                records.iter().any(|r| matches!(&r.body,
                Body::EventDef { etype, name, color, format }
                    if i64::from(*etype) == e["event_id"].as_i64().unwrap()
                    && name == e["name"].as_str().unwrap()
                    && color == e["color"].as_str().unwrap()
                    && format == e["format"].as_str().unwrap())),
                "{name}: {e}"
            );
        }

        // Communicator table and processor names.
        let et = exp["comm_table"].as_array().unwrap();
        assert_eq!(table.len(), et.len());
        for (g, w) in table.iter().zip(et) {
            assert_eq!(i64::from(g.local_id), w["local_id"].as_i64().unwrap());
            assert_eq!(i64::from(g.kind), w["kind"].as_i64().unwrap());
            assert_eq!(g.gcomm.processor, w["processor_name"].as_str().unwrap());
        }
        let mut comm: HashMap<(i32, i32), i32> = HashMap::new();
        let mut processor = BTreeMap::new();
        for r in &records {
            if let Body::Comm {
                etype,
                icomm,
                rank,
                wrank,
                gcomm,
            } = &r.body
            {
                comm.insert((*icomm, *rank), *wrank);
                if *etype == 1 {
                    processor.insert(*wrank, gcomm.processor.clone());
                }
            }
        }
        let want: Vec<&str> = exp["processor_name_by_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(
            processor.values().map(String::as_str).collect::<Vec<_>>(),
            want
        );

        // Messages, grouped in world ranks.
        let mut sends: BTreeMap<(i32, i32, i32, i32), u64> = BTreeMap::new();
        let mut recvs: BTreeMap<(i32, i32, i32, i32), u64> = BTreeMap::new();
        for r in &records {
            if let Body::Msg(Msg {
                etype,
                icomm,
                rank,
                tag,
                size,
            }) = r.body
            {
                let me = comm[&(r.icomm, r.rank)];
                let partner = comm[&(icomm, rank)];
                if etype == -101 {
                    *sends.entry((me, partner, tag, size)).or_default() += 1;
                } else {
                    *recvs.entry((partner, me, tag, size)).or_default() += 1;
                }
            }
        }
        for (field, got) in [
            ("sends_by_src_dst_tag_size", &sends),
            ("recvs_by_src_dst_tag_size", &recvs),
        ] {
            let want: BTreeMap<(i32, i32, i32, i32), u64> = exp["messages"][field]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    let f = |k: &str| m[k].as_i64().unwrap() as i32;
                    (
                        (f("src"), f("dst"), f("tag"), f("size")),
                        m["count"].as_u64().unwrap(),
                    )
                })
                .collect();
            assert_eq!(got, &want, "{name}: {field}");
        }

        // Anchors: cargo bytes, decoded text and exact MPE time.
        let anchor_id = exp["anchor_event_id"].as_i64().unwrap() as i32;
        for a in exp["anchors"].as_array().unwrap() {
            let rank = a["rank"].as_i64().unwrap() as i32;
            let rec = records
                .iter()
                .find(|r| {
                    matches!(r.body, Body::Cargo { etype, .. } if etype == anchor_id)
                        && comm[&(r.icomm, r.rank)] == rank
                })
                .unwrap_or_else(|| panic!("{name}: no anchor for rank {rank}"));
            let Body::Cargo { bytes, .. } = &rec.body else {
                unreachable!()
            };
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(hex, a["cargo_hex"].as_str().unwrap());
            let text = integrador_clog::clog2::cargo_string(bytes).unwrap();
            assert_eq!(
                std::str::from_utf8(text).unwrap(),
                a["cargo_text"].as_str().unwrap()
            );
            assert_eq!(
                rec.time,
                a["mpe_time"].as_f64().unwrap(),
                "{name}: rank {rank}"
            );
        }

        // First and last records, and the ENDLOG sentinel.
        let printed: Vec<&Record> = records
            .iter()
            .filter(|r| !matches!(r.body, Body::EndBlock | Body::EndLog))
            .collect();
        assert_eq!(
            printed[0].time,
            exp["first_timestamp"]["value"].as_f64().unwrap()
        );
        assert_eq!(
            printed.last().unwrap().time,
            exp["last_timestamp"]["value"].as_f64().unwrap()
        );
        assert_eq!(
            records.last().unwrap().time,
            exp["endlog_time"].as_f64().unwrap()
        );
        assert!(
            printed.windows(2).all(|w| w[0].time <= w[1].time),
            "{name}: merged file is time sorted"
        );
    }
}

/// Every record `clog2_print` prints, field by field, in file order.
/// The in-place read (`next_raw`) gives the very records `next_record`
/// decodes, and its event view the very fields of their bodies.
#[test]
fn raw_records_are_the_decoded_ones() {
    for name in FIXTURES {
        let (records, _, _) = decode(&clog2(name));
        let f = std::io::BufReader::new(std::fs::File::open(clog2(name)).unwrap());
        let mut r = Clog2Reader::new(f).unwrap();
        let mut i = 0;
        let mut events = 0;
        while let Some(raw) = r.next_raw().unwrap() {
            let rec = raw.record().unwrap();
            assert_eq!(rec, records[i], "{name}: record {i}");
            let expected = rec.body.event();
            let is_event = matches!(
                rec.body,
                Body::Bare { .. } | Body::Cargo { .. } | Body::Msg(_) | Body::Coll(_)
            );
            assert_eq!(expected.is_some(), is_event, "{name}: record {i}");
            events += usize::from(expected.is_some());
            assert_eq!(raw.event(), expected, "{name}: record {i}");
            i += 1;
        }
        assert_eq!(i, records.len(), "{name}");
        assert!(events > 0, "{name}: no event records");
    }
}

#[test]
fn decoder_matches_clog2_print() {
    let cases = FIXTURES
        .iter()
        .map(|n| (clog2(n), fixture(&format!("clog2/{n}/{n}.clog2_print.txt"))))
        .chain([(
            fixture("scenarios/pingpong-localhost/mpi/mpi_pingpong.clog2"),
            fixture("scenarios/pingpong-localhost/mpi/clog2-print.txt"),
        )]);
    for (file, print) in cases {
        let (records, _, _) = decode(&file);
        let text = std::fs::read_to_string(&print).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("ts=")).collect();
        let ours: Vec<&Record> = records
            .iter()
            .filter(|r| !matches!(r.body, Body::EndBlock | Body::EndLog))
            .collect();
        assert_eq!(ours.len(), lines.len(), "{}", file.display());
        for (r, line) in ours.iter().zip(&lines) {
            let kv = key_values(line);
            let ctx = format!("{}: {line}", file.display());
            assert_eq!(format!("{:.6}", r.time), kv["ts"], "{ctx}");
            // The header's icomm/rank come first in the line.
            let mut words = line.split_whitespace();
            let head: Vec<&str> = words.by_ref().take(5).collect();
            assert_eq!(head[1], format!("icomm={}", r.icomm), "{ctx}");
            assert_eq!(head[2], format!("rank={}", r.rank), "{ctx}");
            assert_eq!(head[3], format!("thd={}", r.thread), "{ctx}");
            assert_eq!(head[4], format!("type={}", r.body.name()), "{ctx}");
            let body: HashMap<&str, &str> = words.filter_map(|w| w.split_once('=')).collect();
            match &r.body {
                Body::Bare { etype } | Body::Cargo { etype, .. } => {
                    assert_eq!(body["et"], etype.to_string(), "{ctx}")
                }
                Body::Msg(Msg {
                    etype,
                    icomm,
                    rank,
                    tag,
                    size,
                }) => {
                    assert_eq!(
                        body["et"],
                        if *etype == -101 { "send" } else { "recv" },
                        "{ctx}"
                    );
                    assert_eq!(body["icomm"], icomm.to_string(), "{ctx}");
                    assert_eq!(body["rank"], rank.to_string(), "{ctx}");
                    assert_eq!(body["tag"], tag.to_string(), "{ctx}");
                    assert_eq!(body["sz"], size.to_string(), "{ctx}");
                }
                Body::StateDef {
                    state,
                    start,
                    end,
                    color,
                    name,
                    ..
                } => {
                    assert_eq!(
                        (
                            body["state"],
                            body["s_et"],
                            body["e_et"],
                            body["color"],
                            body["name"]
                        ),
                        (
                            state.to_string().as_str(),
                            start.to_string().as_str(),
                            end.to_string().as_str(),
                            color.as_str(),
                            name.as_str()
                        ),
                        "{ctx}"
                    );
                }
                Body::EventDef {
                    etype,
                    color,
                    name,
                    format,
                } => {
                    assert_eq!(
                        (body["et"], body["color"], body["name"], body["fmt"]),
                        (
                            etype.to_string().as_str(),
                            color.as_str(),
                            name.as_str(),
                            format.as_str()
                        ),
                        "{ctx}"
                    );
                }
                Body::ConstDef { etype, value, name } => {
                    assert_eq!(
                        (body["et"], body["name"], body["value"]),
                        (
                            etype.to_string().as_str(),
                            name.as_str(),
                            value.to_string().as_str()
                        ),
                        "{ctx}"
                    );
                }
                Body::Comm {
                    icomm,
                    rank,
                    wrank,
                    gcomm,
                    ..
                } => {
                    assert_eq!(body["icomm"], icomm.to_string(), "{ctx}");
                    assert_eq!(body["rank"], rank.to_string(), "{ctx}");
                    assert_eq!(body["wrank"], wrank.to_string(), "{ctx}");
                    assert_eq!(
                        body["gcomm"],
                        format!("{}-{:.6}-{}", gcomm.random, gcomm.time, gcomm.processor),
                        "{ctx}"
                    );
                }
                Body::TimeShift { shift } => {
                    assert_eq!(body["shift"], format!("{:.6}", shift), "{ctx}")
                }
                other => panic!("{ctx}: unexpected {other:?}"),
            }
        }
    }
}

/// pj_dump lines split on ", ".
fn dump(trace: &Path) -> Option<Vec<Vec<String>>> {
    Some(
        pj_dump_lines(trace)?
            .iter()
            .map(|l| l.split(", ").map(|s| s.trim().to_string()).collect())
            .collect(),
    )
}

fn origin(trace: &Path) -> i64 {
    let text = std::fs::read_to_string(trace).unwrap();
    text.lines()
        .find_map(integrador::paje::writer::origin_of)
        .unwrap()
}

/// `12628 rank 0` → 0.
fn rank_of(container: &str) -> i32 {
    container.rsplit(' ').next().unwrap().parse().unwrap()
}

/// The state intervals and messages of our trace equal those computed
/// from `clog2_print`'s text with each rank placed by its anchor (µs
/// printing and pj_dump's 6 decimals leave at most 2 µs between them).
#[test]
fn conversion_matches_clog2_print() {
    for name in FIXTURES {
        let dir = fixture(&format!("clog2/{name}"));
        let exp = read_json(&dir.join("expected.json"));
        let out = tempdir();
        let trace = out.path().join(format!("{name}.paje"));
        let o = integrador(&[
            "-mpi",
            clog2(name).to_str().unwrap(),
            "-mpinodes",
            dir.join(format!("{name}.nodes")).to_str().unwrap(),
            "-o",
            trace.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_valid(&trace);
        let t0 = origin(&trace);
        let Some(lines) = dump(&trace) else { continue };

        // Offsets from the anchors, exactly as docs/formats.md §5 says.
        let mut offset = HashMap::new();
        for a in exp["anchors"].as_array().unwrap() {
            let mpe = integrador::clock::seconds_to_ns(a["mpe_time"].as_f64().unwrap()).unwrap();
            offset.insert(
                a["rank"].as_i64().unwrap() as i32,
                ns(a["epoch"].as_str().unwrap()) - mpe,
            );
        }
        let text = std::fs::read_to_string(dir.join(format!("{name}.clog2_print.txt"))).unwrap();
        let mut defs: HashMap<i32, (String, bool)> = HashMap::new();
        for l in text.lines().filter(|l| l.contains("type=sdef")) {
            let kv = key_values(l);
            defs.insert(kv["s_et"].parse().unwrap(), (kv["name"].to_string(), true));
            defs.insert(kv["e_et"].parse().unwrap(), (kv["name"].to_string(), false));
        }
        let rel = |rank: i32, ts: &str| ns(ts) + offset[&rank] - t0;
        let mut open: HashMap<(i32, String), VecDeque<i64>> = HashMap::new();
        let mut want_states: BTreeMap<(i32, String), Vec<(i64, i64)>> = BTreeMap::new();
        let mut sends: HashMap<(i32, i32, i32), VecDeque<i64>> = HashMap::new();
        let mut recvs: HashMap<(i32, i32, i32), VecDeque<i64>> = HashMap::new();
        for l in text.lines().filter(|l| l.starts_with("ts=")) {
            let kv = key_values(l);
            let rank: i32 = l.split_whitespace().nth(2).unwrap()[5..].parse().unwrap();
            let t = rel(rank, kv["ts"]);
            if l.contains("type=bare") {
                if let Some((s, start)) = defs.get(&kv["et"].parse::<i32>().unwrap()) {
                    let q = open.entry((rank, s.clone())).or_default();
                    if *start {
                        q.push_back(t);
                    } else {
                        let b = q.pop_front().expect("end after start");
                        want_states
                            .entry((rank, s.clone()))
                            .or_default()
                            .push((b, t));
                    }
                }
            } else if l.contains("type=msg") {
                let partner: i32 = l
                    .split("rank=")
                    .nth(2)
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                let tag: i32 = kv["tag"].parse().unwrap();
                if kv["et"] == "send" {
                    sends.entry((rank, partner, tag)).or_default().push_back(t);
                } else {
                    recvs.entry((partner, rank, tag)).or_default().push_back(t);
                }
            }
        }
        let mut want_links: Vec<(i32, i32, i64, i64)> = Vec::new();
        for (k, s) in &sends {
            for (a, b) in s.iter().zip(&recvs[k]) {
                want_links.push((k.0, k.1, *a, *b));
            }
        }

        let us = |s: &str| ns(s);
        let mut got_states: BTreeMap<(i32, String), Vec<(i64, i64)>> = BTreeMap::new();
        let mut got_links = Vec::new();
        for f in &lines {
            if f[0] == "State" && f[2] == "MPI state" && f[7] != "executing" {
                got_states
                    .entry((rank_of(&f[1]), f[7].clone()))
                    .or_default()
                    .push((us(&f[3]), us(&f[4])));
            }
            if f[0] == "Link" {
                got_links.push((rank_of(&f[7]), rank_of(&f[8]), us(&f[3]), us(&f[4])));
            }
        }
        assert!(
            want_states.len() >= 5 && want_links.len() >= 12,
            "{name}: the text was read"
        );
        let close = |a: i64, b: i64| (a - b).abs() <= 2_000;
        assert_eq!(
            got_states
                .iter()
                .map(|(k, v)| (k.clone(), v.len()))
                .collect::<Vec<_>>(),
            want_states
                .iter()
                .map(|(k, v)| (k.clone(), v.len()))
                .collect::<Vec<_>>(),
            "{name}: state instances per rank"
        );
        for (k, want) in &want_states {
            let mut got = got_states[k].clone();
            let mut want = want.clone();
            got.sort();
            want.sort();
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    close(g.0, w.0) && close(g.1, w.1),
                    "{name} {k:?}: {g:?} vs {w:?}"
                );
            }
        }
        got_links.sort();
        want_links.sort();
        assert_eq!(got_links.len(), want_links.len(), "{name}: links");
        for (g, w) in got_links.iter().zip(&want_links) {
            assert!(
                g.0 == w.0 && g.1 == w.1 && close(g.2, w.2) && close(g.3, w.3),
                "{name}: {g:?} vs {w:?}"
            );
        }
        let sum = exp["messages"]["send"].as_u64().unwrap();
        assert_eq!(got_links.len() as u64, sum);
    }
}

/// The scenario: MPI, kernel and Ganglia data of one machine in one trace;
/// each rank's Process holds its MPI row and its OS row, and the MPI row
/// lies inside the process' life as the kernel saw it.
#[test]
fn scenario_merges_mpi_with_os_and_ganglia() {
    let dir = fixture("scenarios/pingpong-localhost");
    let exp = read_json(&dir.join("expected.json"));
    let out = tempdir();
    let trace = out.path().join("s.paje");
    let p = |r: &str| dir.join(r).to_str().unwrap().to_string();
    let o = integrador(&[
        "-mpi",
        &p("mpi/mpi_pingpong.clog2"),
        "-mpinodes",
        &p("mpi.nodes"),
        "-os",
        &p("sched/vm.os"),
        "-ganglia",
        &p("ganglia/ganglia.traced"),
        "-o",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_valid(&trace);
    let summary = stderr(&o);
    assert!(
        summary.contains(
            "messages (mpi_pingpong.clog2): 200 matched, 0 send(s) and 0 receive(s) unmatched"
        ),
        "{summary}"
    );
    for r in exp["mpi"]["ranks"].as_array().unwrap() {
        // The summary's anchor offset, rounded to µs, is expected.json's.
        let rank = r["rank"].as_i64().unwrap();
        let pid = r["pid"].as_i64().unwrap();
        let line = summary
            .lines()
            .find(|l| l.contains(&format!("rank {rank} on vm: pid {pid},")))
            .unwrap_or_else(|| panic!("{summary}"));
        let off = ns(line.rsplit("offset ").next().unwrap().trim());
        let want = ns(r["mpe_to_epoch_offset"].as_str().unwrap());
        assert!((off - want).abs() <= 500, "rank {rank}: {off} vs {want}");
    }
    let t0 = origin(&trace);
    let Some(lines) = dump(&trace) else { return };
    for r in exp["mpi"]["ranks"].as_array().unwrap() {
        let rank = r["rank"].as_i64().unwrap();
        let pid = r["pid"].as_i64().unwrap();
        let name = format!("{pid} rank {rank}");
        let rows: std::collections::BTreeSet<&str> = lines
            .iter()
            .filter(|f| f[0] == "State" && f[1] == name)
            .map(|f| f[2].as_str())
            .collect();
        assert_eq!(
            rows.into_iter().collect::<Vec<_>>(),
            vec!["MPI state", "OS state"],
            "{name}"
        );
        let exec = lines
            .iter()
            .find(|f| f[0] == "State" && f[1] == name && f[7] == "executing")
            .unwrap();
        let os = &exp["sched"]["rank_pids"][pid.to_string()];
        let life = (
            ns(os["first_switch_epoch"].as_str().unwrap()) - t0,
            ns(os["last_switch_epoch"].as_str().unwrap()) - t0,
        );
        let (a, b) = (ns(&exec[3]), ns(&exec[4]));
        assert!(
            life.0 < a && b < life.1,
            "{name}: MPI {a}..{b} outside OS life {life:?}"
        );
        // And the MPI run interval of expected.json holds it.
        let run = exp["mpi"]["run_interval_epoch"].as_array().unwrap();
        assert!(ns(run[0].as_str().unwrap()) - t0 <= a + 1_000);
        assert!(b <= ns(run[1].as_str().unwrap()) - t0 + 1_000);
    }
    // Both ranks' arrows, all complete (pj_dump would have refused a
    // dangling one, and so would the checker).
    assert_eq!(lines.iter().filter(|f| f[0] == "Link").count(), 200);
    assert!(lines
        .iter()
        .any(|f| f[0] == "Variable" && f[2] == "cpu_user"));
}

/// An MPE-1 CLOG file, written field by field from clog.md §5, decodes to
/// exactly the records it encodes, across a block boundary.
#[test]
fn legacy_clog_built_from_the_spec() {
    for block in [65536usize, 1024] {
        let recs = [
            (0.0, 7, 0, legacy_body(&[1, 12], Some(("ring.c", 40)))),
            (0.0, 4, 0, legacy_body(&[101, 0, 91, 1], None)),
            (
                0.0,
                6,
                0,
                legacy_body(&[1, 500, 501, 0], Some(("red", 24)))
                    .into_iter()
                    .chain(b"User_Broadcast\0\0".iter().copied())
                    .collect(),
            ),
            (0.0, 5, 0, legacy_body(&[700, 0], Some(("tick", 16)))),
            (0.001, 1, 0, legacy_body(&[500, 0, 1, 0], Some(("", 16)))),
            (0.0015, 1, 1, legacy_body(&[500, 0, 1, 0], Some(("", 16)))),
            (
                0.002,
                1,
                0,
                legacy_body(&[-101, 1, 1, 0], Some(("1 0", 16))),
            ),
        ];
        let second = [
            (
                0.003,
                1,
                1,
                legacy_body(&[-102, 0, 1, 0], Some(("1 0", 16))),
            ),
            (0.004, 1, 0, legacy_body(&[501, 0, 1, 0], Some(("", 16)))),
            (0.0045, 1, 1, legacy_body(&[700, 0, 1, 0], Some(("", 16)))),
            (0.005, 1, 1, legacy_body(&[501, 0, 1, 0], Some(("", 16)))),
            (0.005, 8, 1, (-0.25f64).to_be_bytes().to_vec()),
            (1000000.0, -2, 0, vec![]),
        ];
        let mut file = Vec::new();
        for (t, rt, p, b) in &recs {
            file.extend(legacy_record(*t, *rt, *p, b));
        }
        let endblock_at = file.len();
        file.extend(legacy_record(0.0, -1, 0, &[]));
        file.resize(block, 0xEE);
        let second_at = file.len();
        for (t, rt, p, b) in &second {
            file.extend(legacy_record(*t, *rt, *p, b));
        }
        file.resize(2 * block, 0);

        assert_eq!(integrador_clog::detect(&file), Some(Format::Legacy));
        let mut r = LegacyReader::new(&file[..]);
        let mut got = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            got.push(rec);
        }
        assert_eq!(r.block_size(), Some(block));
        use integrador_clog::legacy::Body as L;
        let raw = |etype, data, s: &str| L::Raw {
            etype,
            data,
            srcloc: 1,
            string: s.into(),
        };
        let want = vec![
            (
                0,
                0.0,
                0,
                L::SrcLoc {
                    srcloc: 1,
                    lineno: 12,
                    file: "ring.c".into(),
                },
            ),
            (
                72,
                0.0,
                0,
                L::Comm {
                    etype: 101,
                    parent: 0,
                    newcomm: 91,
                    srcloc: 1,
                },
            ),
            (
                112,
                0.0,
                0,
                L::StateDef {
                    state: 1,
                    start: 500,
                    end: 501,
                    color: "red".into(),
                    description: "User_Broadcast".into(),
                },
            ),
            (
                192,
                0.0,
                0,
                L::EventDef {
                    etype: 700,
                    description: "tick".into(),
                },
            ),
            (240, 0.001, 0, raw(500, 0, "")),
            (296, 0.0015, 1, raw(500, 0, "")),
            (352, 0.002, 0, raw(-101, 1, "1 0")),
            (endblock_at as u64, 0.0, 0, L::EndBlock),
            (second_at as u64, 0.003, 1, raw(-102, 0, "1 0")),
            (second_at as u64 + 56, 0.004, 0, raw(501, 0, "")),
            (second_at as u64 + 112, 0.0045, 1, raw(700, 0, "")),
            (second_at as u64 + 168, 0.005, 1, raw(501, 0, "")),
            (second_at as u64 + 224, 0.005, 1, L::Shift { shift: -0.25 }),
            (second_at as u64 + 256, 1000000.0, 0, L::EndLog),
        ];
        let got_t: Vec<_> = got
            .iter()
            .map(|r| (r.offset, r.time, r.procid, r.body.clone()))
            .collect();
        assert_eq!(got_t, want, "block size {block}");

        // RAWEVENT messages become MSGEVTs in CLOG2 terms.
        let msgs: Vec<Body> = got
            .iter()
            .filter_map(|r| r.to_clog2())
            .map(|r| r.body)
            .filter(|b| matches!(b, Body::Msg(_)))
            .collect();
        assert_eq!(
            msgs,
            vec![
                Body::Msg(Msg {
                    etype: -101,
                    icomm: 0,
                    rank: 1,
                    tag: 1,
                    size: 0
                }),
                Body::Msg(Msg {
                    etype: -102,
                    icomm: 0,
                    rank: 0,
                    tag: 1,
                    size: 0
                }),
            ]
        );

        // And it integrates: no anchor in MPE-1 logs, so a start is given.
        let out = tempdir();
        let log = out.path().join("old.clog");
        std::fs::write(&log, &file).unwrap();
        let nodes = out.path().join("nodes");
        std::fs::write(&nodes, "# two hosts\nold1\n\nold2\n").unwrap();
        let trace = out.path().join("old.paje");
        let args = [
            "-mpi",
            log.to_str().unwrap(),
            "-mpinodes",
            nodes.to_str().unwrap(),
            "-o",
            trace.to_str().unwrap(),
        ];
        let o = integrador(&args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "no anchor, no start: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains("--mpi-start"), "{}", stderr(&o));
        assert!(!trace.exists());
        let mut with_start = args.to_vec();
        with_start.extend(["--mpi-start", "1000000000.5"]);
        let o = integrador(&with_start);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_valid(&trace);
        assert!(stderr(&o).contains("1 matched"), "{}", stderr(&o));
        if let Some(lines) = dump(&trace) {
            let states: Vec<_> = lines
                .iter()
                .filter(|f| f[0] == "State" && f[7] == "User_Broadcast")
                .collect();
            assert_eq!(states.len(), 2);
            let link = lines.iter().find(|f| f[0] == "Link").unwrap();
            assert_eq!(
                (link[3].as_str(), link[4].as_str()),
                // T0 is the first event (0.501 s after the start) floored
                // to the millisecond.
                ("0.001000", "0.002000")
            );
            assert_eq!((link[7].as_str(), link[8].as_str()), ("rank 0", "rank 1"));
            assert!(lines
                .iter()
                .any(|f| f[0] == "Event" && f.last().unwrap() == "tick"));
        }
    }
}

/// Converts an MPE log (its bytes) on its own: the run must succeed with
/// a valid trace. Gives the directory (kept while the trace is read), the
/// trace and what the run printed.
fn convert_log(file: &[u8]) -> (tempfile::TempDir, PathBuf, String) {
    let out = tempdir();
    let log = out.path().join("log.clog2");
    std::fs::write(&log, file).unwrap();
    let trace = out.path().join("log.paje");
    let o = integrador(&["-mpi", log.to_str().unwrap(), "-o", trace.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_valid(&trace);
    (out, trace, stderr(&o))
}

/// Unmatched sends and receives are reported, not drawn, not fatal; a
/// little-endian (unmerged) file with processor names and no nodes file;
/// a state that ends under another is closed without breaking nesting.
/// A log begun with ranks 0 and 1 on hostA and hostB, each anchored
/// (pids 100 and 200).
fn two_anchored_ranks() -> Clog2 {
    let mut b = Clog2::new(false, 512);
    b.comm(0.0, 0, 0, 0, 0, "hostA");
    b.comm(0.0, 0, 1, 1, 0, "hostA");
    b.comm(0.0, 1, 0, 0, 1, "hostB");
    b.comm(0.0, 1, 1, 2, 0, "hostB");
    b.edef(0.0, 5000, "white", "integrador_anchor", "%s");
    b.cargo(0.00001, 0, 5000, "1795265512.000010 100");
    b.cargo(0.00002, 1, 5000, "1795265512.000020 200");
    b
}

/// A log long enough that its first pass is split between two cores
/// (64 blocks or more): definitions, communicators, anchors, messages and
/// MPE threads in both halves, one state redefined in the second.
fn long_log(junk_blocks: usize) -> Vec<u8> {
    let mut b = two_anchored_ranks();
    b.junk_blocks = junk_blocks;
    b.sdef(0.0, 300, 600, 601, "orange", "A");
    let mut t = 0.001;
    for i in 0..1500 {
        t += 0.0001;
        let rank = i % 2;
        b.thread = i32::from(i % 7 == 0);
        match i % 5 {
            0 => b.bare(t, rank, 600),
            1 => b.bare(t, rank, 601),
            2 => b.bare(t, rank, 602),
            3 => b.bare(t, rank, 603),
            _ => b.msg(t, rank, rank == 0, 1 - rank, i % 3, 64),
        }
        if i == 1000 {
            b.thread = 0;
            b.sdef(t, 301, 602, 603, "forest green", "B");
            b.sdef(t, 302, 600, 601, "red", "A again");
            b.cargo(t, 0, 5000, "1795265599.000010 999");
        }
    }
    b.thread = 0;
    b.edef(t, 7000, "blue", "late event", "");
    b.bare(t + 0.0001, 1, 7000);
    b.finish()
}

/// Pass 1 of a long log, split between two cores, finds what one reading
/// in order finds: same trace, same report, same errors, and an ENDLOG in
/// the first half ends the log whatever follows it.
#[test]
fn first_pass_split_reads_as_one() {
    let dir = tempdir();
    let cut_at = |file: &[u8], frac: f64| file[..(file.len() as f64 * frac) as usize].to_vec();
    let long = long_log(0);
    assert!(long.len() > 1024 + 100 * 512, "long enough to split");
    let mut bad_first = long.clone();
    // A record type no CLOG2 has: the type field of the second block's
    // first record.
    let at = 1024 + 512 + 20;
    bad_first[at..at + 4].copy_from_slice(&99i32.to_le_bytes());
    let cases = [
        ("long", long.clone()),
        ("cut-second-half", cut_at(&long, 0.8)),
        ("bad-first-half", cut_at(&bad_first, 0.8)),
        // 200 blocks of junk after ENDLOG: the second half starts in them.
        ("junk-after-endlog", {
            let mut b = Clog2::new(false, 512);
            b.junk_blocks = 200;
            b.comm(0.0, 0, 0, 0, 0, "hostA");
            b.comm(0.0, 0, 1, 1, 0, "hostA");
            b.bare(0.001, 0, 600);
            b.bare(0.002, 0, 601);
            b.finish()
        }),
    ];
    for (name, file) in cases {
        let log = dir.path().join(format!("{name}.clog2"));
        std::fs::write(&log, &file).unwrap();
        let mut runs = Vec::new();
        for threads in ["1", "2"] {
            let trace = dir.path().join(format!("{name}-{threads}.paje"));
            let o = integrador(&[
                "--threads",
                threads,
                "-mpi",
                log.to_str().unwrap(),
                "--mpi-start",
                "1795265512",
                "-o",
                trace.to_str().unwrap(),
            ]);
            let s = stderr(&o).replace(&format!("{name}-{threads}.paje"), "OUT");
            runs.push((o.status.code(), s, std::fs::read(&trace).ok()));
        }
        assert_eq!(
            (&runs[0].0, &runs[0].1),
            (&runs[1].0, &runs[1].1),
            "{name}: --threads 1 and 2 differ"
        );
        assert!(runs[0].2 == runs[1].2, "{name}: the traces differ");
        let (code, s, trace) = &runs[0];
        match name {
            "long" | "junk-after-endlog" => {
                assert_eq!(*code, Some(0), "{name}: {s}");
                assert_valid(&dir.path().join(format!("{name}-1.paje")));
                assert!(trace.is_some());
            }
            "cut-second-half" => {
                assert_eq!(*code, Some(1), "{name}: {s}");
                assert!(s.contains("file ends"), "{name}: {s}");
            }
            _ => {
                assert_eq!(*code, Some(1), "{name}: {s}");
                assert!(
                    s.contains(&format!("byte {}: unknown record type 99", at - 20)),
                    "{name}: {s}"
                );
            }
        }
    }
    // The redefinition in the second half wins, as in order.
    let s = std::fs::read_to_string(dir.path().join("long-2.paje")).unwrap();
    assert!(
        s.contains("\"A again\""),
        "the second half's definition is used"
    );
}

#[test]
fn unmatched_messages_and_crossed_states_are_reported() {
    let mut b = two_anchored_ranks();
    b.bare(0.001, 0, 600); // A starts
    b.bare(0.002, 0, 602); // B starts inside A
    b.bare(0.003, 0, 601); // A ends while B is open: crossed
    b.bare(0.004, 0, 603); // B ends
    b.bare(0.0045, 0, 603); // an end without a start
    for i in 0..3 {
        b.msg(0.005 + f64::from(i) * 0.001, 0, true, 1, 9, 64);
    }
    b.msg(0.0065, 1, false, 0, 9, 64);
    b.msg(0.0070, 1, false, 0, 4, 8); // tag 4 was never sent
    b.bare(0.008, 1, 600); // left open at the end
    b.sdef(0.009, 300, 600, 601, "orange", "A");
    b.sdef(0.009, 301, 602, 603, "forest green", "B");
    let (_dir, trace, s) = convert_log(&b.finish());
    for want in [
        "1 matched, 2 send(s) and 1 receive(s) unmatched",
        "unmatched 0->1 tag 9: 2 send(s) without a receive",
        "unmatched 0->1 tag 4: 1 receive(s) without a send",
        "state pairing: 1 end(s) without a start, 1 start(s) never ended, 1 crossed",
    ] {
        assert!(s.contains(want), "missing `{want}` in\n{s}");
    }
    assert_eq!(count_events(&trace, "PajeStartLink"), 1);
    assert_eq!(count_events(&trace, "PajeEndLink"), 1);
    if let Some(lines) = dump(&trace) {
        // Hosts from the processor names; one arrow between machines,
        // held by their cluster.
        let link = lines.iter().find(|f| f[0] == "Link").unwrap();
        assert_eq!(link[1], "cluster");
        assert_eq!(
            (link[7].as_str(), link[8].as_str()),
            ("100 rank 0", "200 rank 1")
        );
        let mut a: Vec<_> = lines
            .iter()
            .filter(|f| f[0] == "State" && f[7] == "A")
            .map(|f| (f[3].clone(), f[4].clone()))
            .collect();
        a.sort();
        assert_eq!(
            a,
            vec![
                ("0.001000".into(), "0.003000".into()),
                ("0.008000".into(), "0.008000".into())
            ]
        );
        let mut bs: Vec<_> = lines
            .iter()
            .filter(|f| f[0] == "State" && f[7] == "B")
            .map(|f| (f[3].clone(), f[4].clone()))
            .collect();
        bs.sort();
        // B is popped with A and pushed back at 0.003.
        assert_eq!(
            bs,
            vec![
                ("0.002000".into(), "0.003000".into()),
                ("0.003000".into(), "0.004000".into())
            ]
        );
    }
}

/// A message whose partner rank logged nothing is counted and not
/// drawn, on either side of a channel, whether a rank's message before
/// went to the same channel or not; the messages around it are drawn.
#[test]
fn messages_to_a_rank_that_logged_nothing_are_counted_not_drawn() {
    let mut b = two_anchored_ranks();
    b.msg(0.001, 0, true, 1, 9, 64);
    b.msg(0.002, 0, true, 5, 9, 64); // rank 5 logged nothing
    b.msg(0.003, 0, true, 5, 9, 64);
    b.msg(0.004, 0, true, 1, 9, 64);
    b.msg(0.005, 1, false, 0, 9, 64);
    b.msg(0.006, 1, false, 5, 3, 8); // a receive from it
    b.msg(0.007, 1, false, 0, 9, 64);
    let (_dir, trace, s) = convert_log(&b.finish());
    assert!(
        s.contains("3 message record(s) name a partner rank that logged nothing"),
        "{s}"
    );
    assert_eq!(count_events(&trace, "PajeStartLink"), 2);
    assert_eq!(count_events(&trace, "PajeEndLink"), 2);
}

/// The shipped MPI hierarchies integrate the scenario: MPE log, kernel
/// trace, Ganglia and the pmlogger archive of the same machine.
#[test]
fn shipped_mpi_hierarchies_integrate_the_scenario() {
    let dir = fixture("scenarios/pingpong-localhost");
    let p = |r: &str| dir.join(r).to_str().unwrap().to_string();
    for (h, with_os) in [("mpi+os+ganglia+pcp.toml", true), ("mpi+pcp.toml", false)] {
        let out = tempdir();
        let trace = out.path().join("h.paje");
        let hierarchy = root().join("hierarchies").join(h);
        let mut args = vec![
            "-mpi".to_string(),
            p("mpi/mpi_pingpong.clog2"),
            "-mpinodes".into(),
            p("mpi.nodes"),
            "-hierarchy".into(),
            hierarchy.to_str().unwrap().into(),
            "-pcp".into(),
            p("pcp/vm.0"),
            "-o".into(),
            trace.to_str().unwrap().into(),
        ];
        if with_os {
            args.extend([
                "-os".into(),
                p("sched/vm.os"),
                "-ganglia".into(),
                p("ganglia/ganglia.traced"),
            ]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = integrador(&args);
        assert!(o.status.success(), "{h}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("archive v2 of host vm"), "{h}: {err}");
        assert!(!err.contains("unified with"), "one Machine vm: {err}");
        assert_valid(&trace);
        assert_eq!(count_events(&trace, "PajeStartLink"), 200, "{h}");
    }
}

/// Clock correction applies per rank's host: moving node02's clock moves
/// rank 1 exactly, and the receives it now seems to make before their
/// sends are reported per host pair with the worst.
#[test]
fn sync_corrects_each_rank_by_its_host() {
    let dir = fixture("clog2/pingpong");
    let out = tempdir();
    let sync = out.path().join("timesync");
    // node02's clock reads 500 µs ahead of node01's (the reference).
    std::fs::write(
        &sync,
        "# resolution 1000000\nnode01 1795264142000000 node02 1795264142000500\n",
    )
    .unwrap();
    let run = |extra: &[&str], name: &str| {
        let trace = out.path().join(name);
        let (log, nodes) = (clog2("pingpong"), dir.join("pingpong.nodes"));
        let mut args = vec![
            "-mpi",
            log.to_str().unwrap(),
            "-mpinodes",
            nodes.to_str().unwrap(),
            "-o",
            trace.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = integrador(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_valid(&trace);
        (trace, stderr(&o))
    };
    let (plain, _) = run(&[], "plain.paje");
    let (synced, summary) = run(&["-sync", sync.to_str().unwrap()], "synced.paje");
    assert!(
        summary.contains("node02: offset -0.000500 s at T0"),
        "{summary}"
    );
    assert!(
        summary.contains("node01 -> node02: 200 receive(s) before their send; worst"),
        "{summary}"
    );
    let (Some(a), Some(b)) = (dump(&plain), dump(&synced)) else {
        return;
    };
    // Epoch times: T0 moves with the correction of the earliest event.
    let (ta, tb) = (origin(&plain), origin(&synced));
    let anchor = |lines: &[Vec<String>], rank: &str| {
        let t0 = if std::ptr::eq(lines, a.as_slice()) {
            ta
        } else {
            tb
        };
        t0 + lines
            .iter()
            .find(|f| f[0] == "Event" && f[1].ends_with(rank) && f[4] == "integrador_anchor")
            .map(|f| ns(&f[3]))
            .unwrap()
    };
    assert_eq!(anchor(&a, "rank 1") - anchor(&b, "rank 1"), 500_000);
    assert_eq!(anchor(&a, "rank 0"), anchor(&b, "rank 0"));
}

/// A log without anchors takes its start from the hierarchy's [mpi]
/// section; --mpi-start wins over it. Without a nodes file or processor
/// names, a rank has no host: an error.
#[test]
fn start_from_the_hierarchy_and_hosts_required() {
    let out = tempdir();
    let log = out.path().join("old.clog");
    let mut file = legacy_record(0.25, 1, 0, &legacy_body(&[700, 0, 1, 0], Some(("", 16))));
    file.extend(legacy_record(1000000.0, -2, 0, &[]));
    std::fs::write(&log, &file).unwrap();
    let trace = out.path().join("o.paje");
    let o = integrador(&[
        "-mpi",
        log.to_str().unwrap(),
        "--mpi-start",
        "1000",
        "-o",
        trace.to_str().unwrap(),
    ]);
    // A missing -mpinodes is a missing option: a usage problem (cli.md).
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("rank 0: no host"), "{}", stderr(&o));
    let nodes = out.path().join("nodes");
    std::fs::write(&nodes, "old1\n").unwrap();
    let h = out.path().join("h.toml");
    let base = std::fs::read_to_string(root().join("hierarchies/mpi+pcp.toml")).unwrap();
    std::fs::write(
        &h,
        base.replace("[mpi]\n", "[mpi]\nstart = \"1000000000.5\"\n"),
    )
    .unwrap();
    let args = [
        "-mpi",
        log.to_str().unwrap(),
        "-mpinodes",
        nodes.to_str().unwrap(),
        "-hierarchy",
        h.to_str().unwrap(),
        "-o",
        trace.to_str().unwrap(),
        "--absolute-time",
    ];
    let o = integrador(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("rank 0 on old1: no anchor; placed by the given start 1000000000.500000000"),
        "{}",
        stderr(&o)
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("8 1000000000.750000000 ")),
        "the event at MPE 0.25 s:\n{text}"
    );
    let mut with_cli = args.to_vec();
    with_cli.extend(["--mpi-start", "2000000000"]);
    let o = integrador(&with_cli);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("8 2000000000.250000000 ")),
        "{text}"
    );
}

#[test]
fn same_inputs_same_bytes() {
    let dir = fixture("clog2/median");
    let out = tempdir();
    let run = |name: &str| {
        let trace = out.path().join(name);
        let o = integrador(&[
            "-q",
            "-mpi",
            clog2("median").to_str().unwrap(),
            "-mpinodes",
            dir.join("median.nodes").to_str().unwrap(),
            "-o",
            trace.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read(trace).unwrap()
    };
    assert_eq!(run("a.paje"), run("b.paje"));
}
