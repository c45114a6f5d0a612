//! libRastro traces end to end: the DECK fixtures' messages, thread links
//! and mailbox clones, akypuera's trace against aky_converter, the
//! kernel's threads unified with DECK's, and clock correction.

mod common;

use common::*;
use integrador_rastro::encode::{Value, Writer};
use integrador_rastro::Layout;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// A link as written in our trace, times in exact ns.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Link {
    ty: String,
    value: String,
    from: String,
    to: String,
    seq: u64,
    start: i64,
    end: i64,
    size: i64,
}

/// Reads the links of one of our traces (ids of `paje::writer`), with
/// container names instead of aliases.
fn links(trace: &Path) -> Vec<Link> {
    let o = read_ours(trace);
    let mut starts: HashMap<&str, (i64, &[String])> = HashMap::new();
    let mut out = Vec::new();
    for (id, t, f) in &o.events {
        match id.as_str() {
            "13" => {
                starts.insert(&f[6], (*t, f.as_slice()));
            }
            "14" => {
                let (start, s) = starts.remove(f[6].as_str()).expect("start before end here");
                out.push(Link {
                    ty: o.name(&s[3]).to_string(),
                    value: o.name(&s[4]).to_string(),
                    from: o.name(&s[5]).to_string(),
                    to: o.name(&f[5]).to_string(),
                    seq: f[6].rsplit('_').next().unwrap().parse().unwrap(),
                    start,
                    end: *t,
                    size: s[7].parse().unwrap(),
                });
            }
            _ => {}
        }
    }
    assert!(starts.is_empty(), "links without end: {starts:?}");
    out.sort();
    out
}

fn rank_of(container: &str) -> u64 {
    container.rsplit(' ').next().unwrap().parse().unwrap()
}

/// (sender rank, receiver rank, seq, send ns, receive ns) of the links of
/// type `ty` (all with `None`).
type Msg = (u64, u64, u64, i64, i64);

fn link_set(trace: &Path, ty: Option<&str>) -> BTreeSet<Msg> {
    links(trace)
        .into_iter()
        .filter(|l| ty.is_none_or(|t| l.ty == t))
        .map(|l| (rank_of(&l.from), rank_of(&l.to), l.seq, l.start, l.end))
        .collect()
}

/// The same of `expected.json`'s messages, numbered by `seq_field`.
fn expected_messages(exp: &serde_json::Value, seq_field: &str) -> BTreeSet<Msg> {
    exp["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["sender_rank"].as_u64().unwrap(),
                m["receiver_rank"].as_u64().unwrap(),
                m[seq_field].as_u64().unwrap(),
                m["send_t_ns"].as_i64().unwrap(),
                m["recv_t_ns"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn deck(scenario: &str, out: &Path) -> String {
    let glob = fixtures().join(format!("rastro/{scenario}/rastro-*.rst"));
    run_ok(&["-deck", glob.to_str().unwrap()], out)
}

#[test]
fn deck_messages_equal_expected_json() {
    for sc in ["deck-pingpong", "deck-threads"] {
        let d = tempdir();
        let out = d.path().join("o.paje");
        deck(sc, &out);
        let exp = read_json(&fixture(&format!("rastro/{sc}/expected.json")));
        let mine = link_set(&out, Some("DECK message"));
        let want = expected_messages(&exp, "seq");
        assert_eq!(mine, want, "{sc}");
        assert_eq!(want.len(), if sc == "deck-pingpong" { 8 } else { 4 });
    }
}

/// akypuera's messages, paired first-in first-out per (sender, receiver)
/// by the akypuera map: the FIFO index is the link's sequence number.
#[test]
fn akypuera_messages_equal_expected_json() {
    let d = tempdir();
    let out = d.path().join("o.paje");
    let glob = fixtures().join("rastro/akypuera-pingpong/rastro-*.rst");
    run_ok(
        &["-deck", glob.to_str().unwrap(), "--deck-map", "akypuera"],
        &out,
    );
    let exp = read_json(&fixture("rastro/akypuera-pingpong/expected.json"));
    let mine = link_set(&out, None);
    let want = expected_messages(&exp, "fifo_index");
    let sizes: BTreeSet<i64> = links(&out).iter().map(|l| l.size).collect();
    assert_eq!(sizes, BTreeSet::from([1024]));
    assert_eq!(mine, want);
    assert_eq!(want.len(), 10);
}

#[test]
fn mailbox_links_carry_size_and_clones_go_from_owner_to_cloner() {
    let d = tempdir();
    let out = d.path().join("o.paje");
    deck("deck-pingpong", &out);
    let all = links(&out);
    let exp = read_json(&fixture("rastro/deck-pingpong/expected.json"));
    for m in exp["messages"].as_array().unwrap() {
        let l = all
            .iter()
            .find(|l| l.ty == "DECK message" && l.start == m["send_t_ns"].as_i64().unwrap())
            .unwrap();
        assert_eq!(l.size, m["size"].as_i64().unwrap());
        assert_eq!(l.value, "mbox");
    }
    let clones: BTreeSet<(u64, u64, i64, i64)> = all
        .iter()
        .filter(|l| l.ty == "DECK mbox clone")
        .map(|l| (rank_of(&l.from), rank_of(&l.to), l.start, l.end))
        .collect();
    let want: BTreeSet<(u64, u64, i64, i64)> = exp["mbox_clones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let t = c["clone_out_t_ns"].as_i64().unwrap();
            (
                c["owner_rank"].as_u64().unwrap(),
                c["cloner_rank"].as_u64().unwrap(),
                t,
                t,
            )
        })
        .collect();
    assert_eq!(clones, want);
}

#[test]
fn thread_links_go_from_creator_to_created_and_from_joined_to_joiner() {
    let d = tempdir();
    let out = d.path().join("o.paje");
    deck("deck-threads", &out);
    let all = links(&out);
    let exp = read_json(&fixture("rastro/deck-threads/expected.json"));
    // Thread containers are named "<tid> thread <index>", the main
    // thread's is its Process "<pid> rank 0".
    let pid = exp["files"][0]["events"][0]["u32"][1].as_u64().unwrap();
    let main = format!("{pid} rank 0");
    let thread = |idx: u64| -> String {
        let f = exp["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id1"] == 0 && f["id2"] == idx)
            .unwrap();
        let tid = f["events"][0]["u32"][1].as_u64().unwrap();
        format!("{tid} thread {idx}")
    };
    let mut n = 0;
    for t in exp["thread_links"].as_array().unwrap() {
        let (ty, from, to, start, end) = if t["kind"] == "create" {
            let idx = t["new_thread_index"].as_u64().unwrap();
            (
                "DECK thread create",
                main.clone(),
                thread(idx),
                t["create_t_ns"].clone(),
                t["created_t_ns"].clone(),
            )
        } else {
            let idx = t["joined_thread_index"].as_u64().unwrap();
            (
                "DECK thread join",
                thread(idx),
                main.clone(),
                t["thread_done_t_ns"].clone(),
                t["join_out_t_ns"].clone(),
            )
        };
        let found = all.iter().any(|l| {
            l.ty == ty
                && l.from == from
                && l.to == to
                && l.start == start.as_i64().unwrap()
                && l.end == end.as_i64().unwrap()
        });
        assert!(
            found,
            "{ty} {from} -> {to} at {start}..{end} missing from {all:#?}"
        );
        n += 1;
    }
    assert_eq!(n, 4);
    assert_eq!(
        all.iter()
            .filter(|l| l.ty.starts_with("DECK thread"))
            .count(),
        4
    );
}

/// (kind, container or ends, value, start s, end s).
type Dumped = Vec<(String, String, String, f64, f64)>;

/// pj_dump's State and Link lines of a trace: (kind, container or ends,
/// value, start s, end s).
fn dump(trace: &Path) -> Option<Dumped> {
    let lines = pj_dump_lines(trace)?;
    let mut out = Vec::new();
    for l in lines {
        let f: Vec<&str> = l.split(", ").collect();
        match f[0] {
            "State" => out.push((
                "State".into(),
                f[1].into(),
                f[7].into(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
            )),
            "Link" => out.push((
                "Link".into(),
                format!("{} -> {}", f[7], f[8]),
                String::new(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
            )),
            _ => {}
        }
    }
    Some(out)
}

/// akypuera's own converter against ours with the akypuera map: the same
/// states (per rank, value, start, end) and the same links (from, to,
/// start, end), once the origins are aligned. Differences in names only:
/// aky's `rank0` is our `rank 0`.
#[test]
fn akypuera_trace_matches_aky_converter() {
    let d = tempdir();
    let out = d.path().join("aky.paje");
    let glob = fixtures().join("rastro/akypuera-pingpong/rastro-*.rst");
    run_ok(
        &["-deck", glob.to_str().unwrap(), "--deck-map", "akypuera"],
        &out,
    );
    let theirs_path = fixture("rastro/akypuera-pingpong/aky_converter.paje");
    let (Some(ours), Some(theirs)) = (dump(&out), dump(&theirs_path)) else {
        return;
    };
    let exp = read_json(&fixture("rastro/akypuera-pingpong/expected.json"));
    // aky's times are relative to the first event it read; ours to T0.
    let first = exp["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["first_event_t_ns"].as_i64().unwrap())
        .min()
        .unwrap();
    let t0 = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .find_map(integrador::paje::writer::origin_of)
        .unwrap();
    let shift = (first - t0) as f64 / 1e9;
    let norm = |v: Dumped, shift: f64| {
        let mut v: Vec<_> = v
            .into_iter()
            .map(|(k, c, val, s, e)| {
                let c = c.replace("rank0", "rank 0").replace("rank1", "rank 1");
                (k, c, val, s + shift, e + shift)
            })
            .collect();
        v.sort_by(|a, b| {
            (&a.0, &a.1, &a.2)
                .cmp(&(&b.0, &b.1, &b.2))
                .then(a.3.total_cmp(&b.3))
        });
        v
    };
    let ours = norm(ours, 0.0);
    let theirs = norm(theirs, shift);
    assert_eq!(
        ours.len(),
        theirs.len(),
        "ours {ours:#?}\ntheirs {theirs:#?}"
    );
    assert_eq!(ours.iter().filter(|x| x.0 == "Link").count(), 10);
    assert_eq!(ours.iter().filter(|x| x.0 == "State").count(), 2 * 14);
    for (a, b) in ours.iter().zip(&theirs) {
        assert_eq!((&a.0, &a.1, &a.2), (&b.0, &b.1, &b.2));
        // pj_dump prints µs; aky's doubles lose up to 0.25 µs more.
        assert!(
            (a.3 - b.3).abs() < 1.6e-6 && (a.4 - b.4).abs() < 1.6e-6,
            "{a:?} vs {b:?}"
        );
    }
}

/// The kernel's view of node01 (a `.os` file naming the DECK threads'
/// tids) and DECK's land in the same containers: each DECK thread's
/// container has a DECK state row and an OS state row.
#[test]
fn deck_threads_are_unified_with_kernel_threads() {
    let exp = read_json(&fixture("rastro/deck-threads/expected.json"));
    let files = exp["files"].as_array().unwrap();
    let pid = files[0]["events"][0]["u32"][1].as_u64().unwrap();
    let tids: Vec<u64> = files[1..3]
        .iter()
        .map(|f| f["events"][0]["u32"][1].as_u64().unwrap())
        .collect();
    let t = files[0]["first_event_t_ns"].as_i64().unwrap();
    let (sec, us) = (t / 1_000_000_000, (t % 1_000_000_000) / 1000);
    let d = tempdir();
    let os = d.path().join("node01.os");
    let mut text = format!(
        "# host node01\n# thread {} {pid}\n# thread {} {pid}\n1 time {sec} -\n",
        tids[0], tids[1]
    );
    for (i, task) in [pid, tids[0], tids[1]].iter().enumerate() {
        text += &format!("{} unblock {} {task}\n", 2 * i + 2, us + 1000 + i as i64);
        text += &format!("{} block {} {task}\n", 2 * i + 3, us + 2000 + i as i64);
    }
    std::fs::write(&os, text).unwrap();
    let out = d.path().join("o.paje");
    let glob = fixtures().join("rastro/deck-threads/rastro-*.rst");
    let h = root().join("hierarchies/deck+os+ganglia+pcp.toml");
    run_ok(
        &[
            "-deck",
            glob.to_str().unwrap(),
            "-os",
            os.to_str().unwrap(),
            "-hierarchy",
            h.to_str().unwrap(),
        ],
        &out,
    );
    let Some(lines) = pj_dump_lines(&out) else {
        return;
    };
    let mut rows: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for l in &lines {
        let f: Vec<&str> = l.split(", ").collect();
        if f[0] == "State" {
            rows.entry(f[1].to_string())
                .or_default()
                .insert(f[2].to_string());
        }
    }
    let both: BTreeSet<String> = ["DECK state", "OS state"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for name in [
        format!("{pid} rank 0"),
        format!("{} thread 1", tids[0]),
        format!("{} thread 2", tids[1]),
    ] {
        assert_eq!(rows.get(&name), Some(&both), "{name}: {rows:#?}");
    }
    let containers = lines.iter().filter(|l| l.starts_with("Container")).count();
    // Root, cluster, 3 machines, 3 processes, 2 threads: nothing doubled.
    assert_eq!(containers, 1 + 1 + 3 + 3 + 2, "{lines:#?}");
}

/// Every (time, line) of the trace body, for comparing two traces.
fn timed_lines(trace: &Path) -> Vec<(i64, String)> {
    read_ours(trace)
        .events
        .into_iter()
        .filter(|e| matches!(e.0.as_str(), "4" | "7" | "8" | "11" | "12" | "13" | "14"))
        .map(|(id, t, f)| (t, format!("{id} {}", f[2..].join(" "))))
        .collect()
}

#[test]
fn a_skewed_and_drifting_host_is_restored_within_a_microsecond() {
    let exp = read_json(&fixture("rastro/deck-pingpong/expected.json"));
    let t0 = exp["files"][1]["init_record_t_ns"].as_i64().unwrap();
    let d = tempdir();
    // node02's clock runs 3 ms behind and gains 150 ppm: without
    // correction its receives come before rank 0's sends.
    let (offset, ppm) = (-3_000_000i64, 150i64);
    let files = skew_rastro("deck-pingpong", "node02", t0, offset, ppm, d.path());
    let local = |t: i64| t + offset + (t - t0) * ppm / 1_000_000;
    // Two measurements, before and after the run, as rastro_timesync
    // prints them (ns).
    let (a, b) = (t0 - 1_000_000_000, t0 + 2_000_000_000);
    let sync = d.path().join("timesync");
    std::fs::write(
        &sync,
        format!(
            "node01 {a} node02 {}\nnode01 {b} node02 {}\n",
            local(a),
            local(b)
        ),
    )
    .unwrap();
    let args: Vec<String> = files
        .iter()
        .map(|p| p.to_str().unwrap().to_string())
        .collect();

    let skewed = d.path().join("skewed.paje");
    let mut argv: Vec<&str> = vec!["-deck"];
    argv.extend(args.iter().map(String::as_str));
    let err = run_ok(&argv, &skewed);
    let early: u64 = err
        .split("  messages (")
        .nth(1)
        .and_then(|m| m.split(" causality violation").next())
        .and_then(|m| m.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    eprintln!("uncorrected: {early} receive(s) more than 1 µs before their send");
    assert!(
        early >= 4,
        "the skew should put receives before sends: {err}"
    );

    let fixed = d.path().join("fixed.paje");
    argv.extend(["-sync", sync.to_str().unwrap()]);
    let err = run_ok(&argv, &fixed);
    assert!(
        err.contains("0 causality violation(s) beyond 1 µs"),
        "{err}"
    );

    let orig = d.path().join("orig.paje");
    deck("deck-pingpong", &orig);
    let (x, y) = (timed_lines(&fixed), timed_lines(&orig));
    assert_eq!(x.len(), y.len());
    eprintln!("{} timed lines compared", x.len());
    assert!(x.len() > 60);
    let mut worst = 0;
    let mut sorted_x = x.clone();
    let mut sorted_y = y.clone();
    sorted_x.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    sorted_y.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    for (p, q) in sorted_x.iter().zip(&sorted_y) {
        assert_eq!(p.1, q.1);
        worst = worst.max((p.0 - q.0).abs());
    }
    eprintln!(
        "worst restored-time error: {worst} ns over {} lines",
        x.len()
    );
    assert!(worst <= 1_000, "worst error {worst} ns");
}

/// Two ranks of a mailbox run, in `layout`: rank 0 sends 64 bytes at
/// 5 µs, rank 1 receives them at 7 µs; with `step_back`, rank 1 also has
/// a record 500 ns before the one ahead of it.
fn mailbox_pair(dir: &Path, layout: Layout, step_back: bool, t: i64) -> [String; 2] {
    let resolution = 1_000_000_000;
    let mut a = Writer::new(layout, resolution, 0, 0, "ice01", t);
    a.event(101, t + 1_000, &[Value::U32(0), Value::U32(500)]);
    let send = [
        Value::U32(1),
        Value::U32(64),
        Value::U32(0),
        Value::Str("mbox1"),
    ];
    a.event(405, t + 5_000, &send);
    a.event(102, t + 9_000, &[]);
    a.stop(t + 9_000);
    let mut b = Writer::new(layout, resolution, 1, 0, "ice02", t);
    b.event(101, t + 2_000, &[Value::U32(1), Value::U32(600)]);
    if step_back {
        b.event(406, t + 3_500, &[Value::Str("mbox1")]);
    }
    b.event(406, t + 3_000, &[Value::Str("mbox1")]);
    let recv = [
        Value::Str("mbox1"),
        Value::U32(0),
        Value::U32(64),
        Value::U32(0),
    ];
    b.event(407, t + 7_000, &recv);
    b.event(102, t + 8_000, &[]);
    b.stop(t + 8_000);
    let (pa, pb) = (dir.join("rastro-0-0.rst"), dir.join("rastro-1-0.rst"));
    std::fs::write(&pa, a.into_bytes()).unwrap();
    std::fs::write(&pb, b.into_bytes()).unwrap();
    [pa, pb].map(|p| p.to_str().unwrap().to_string())
}

/// Files of the old (pre-2012) layout, microsecond clock, integrate like
/// current ones.
#[test]
fn old_layout_files_integrate() {
    let d = tempdir();
    let t = 1_100_000_000_000_000_000i64;
    let [pa, pb] = mailbox_pair(d.path(), Layout::Old, false, t);
    let out = d.path().join("o.paje");
    run_ok(&["-deck", &pa, &pb], &out);
    let l = links(&out);
    assert_eq!(l.len(), 1);
    assert_eq!(
        (l[0].from.as_str(), l[0].to.as_str()),
        ("500 rank 0", "600 rank 1")
    );
    assert_eq!(
        (l[0].start - t, l[0].end - t, l[0].size),
        (5_000, 7_000, 64)
    );
}

/// A file whose times step back (within the reorder window): the first
/// pass, which merges only the records it needs while every file's times
/// go forward, walks the run again in full and matches the same link.
#[test]
fn a_file_whose_times_step_back_is_scanned_in_full() {
    let d = tempdir();
    let t = 1_100_000_000_000_000_000i64;
    let [pa, pb] = mailbox_pair(d.path(), Layout::Current, true, t);
    for threads in ["1", "2"] {
        let out = d.path().join(format!("o{threads}.paje"));
        run_ok(&["-deck", &pa, &pb, "--threads", threads], &out);
        let l = links(&out);
        assert_eq!(l.len(), 1);
        assert_eq!(
            (l[0].start - t, l[0].end - t, l[0].size),
            (5_000, 7_000, 64)
        );
    }
}

/// A user map for another instrumentation: no Rust code, and the same
/// machinery (fifo keys, push/pop pairs, point events).
#[test]
fn a_user_map_drives_other_instrumentation() {
    let d = tempdir();
    let map = d.path().join("mine.toml");
    std::fs::write(
        &map,
        r#"
[map]
name = "mine"

[links.msg]
level = "rank"

[pairs]
compute = [10, 11]

[[event]]
id = 20
name = "send"
fields = ["i to", "l bytes"]
event = "send"
link_start = { link = "msg", key = ["id1", "to"], fifo = true, to = "to", size = "bytes" }

[[event]]
id = 21
name = "recv"
fields = ["i from"]
link_end = { link = "msg", key = ["from", "id1"], fifo = true, from = "from" }
"#,
    )
    .unwrap();
    let t = 1_795_264_000_000_000_000i64;
    let mut a = Writer::new(Layout::Current, 1_000_000_000, 0, 0, "h1", t);
    a.event(10, t + 10, &[]);
    a.event(20, t + 20, &[Value::U32(1), Value::U64(8)]);
    a.event(20, t + 30, &[Value::U32(1), Value::U64(16)]);
    a.event(11, t + 40, &[]);
    a.event(99, t + 50, &[]);
    a.stop(t + 60);
    let mut b = Writer::new(Layout::Current, 1_000_000_000, 1, 0, "h2", t);
    b.event(21, t + 35, &[Value::U32(0)]);
    b.event(21, t + 45, &[Value::U32(0)]);
    b.event(21, t + 55, &[Value::U32(0)]);
    b.stop(t + 60);
    let (pa, pb) = (d.path().join("a.rst"), d.path().join("b.rst"));
    std::fs::write(&pa, a.into_bytes()).unwrap();
    std::fs::write(&pb, b.into_bytes()).unwrap();
    let out = d.path().join("o.paje");
    let err = run_ok(
        &[
            "-deck",
            pa.to_str().unwrap(),
            pb.to_str().unwrap(),
            "--deck-map",
            map.to_str().unwrap(),
        ],
        &out,
    );
    let l = links(&out);
    assert_eq!(
        l.iter()
            .map(|l| (l.seq, l.start - t, l.end - t, l.size))
            .collect::<Vec<_>>(),
        [(0, 20, 35, 8), (1, 30, 45, 16)]
    );
    assert!(
        err.contains("0 send(s) and 1 receive(s) unmatched"),
        "{err}"
    );
    assert!(
        err.contains("event ids the map does not define, ignored: 99 (1)"),
        "{err}"
    );
    assert_eq!(count_events(&out, "PajeNewEvent"), 2);
    assert_eq!(count_events(&out, "PajePushState"), 1);
}

/// The same files give the same bytes (files are merged on time, ties by
/// file order, then record order).
#[test]
fn output_is_deterministic() {
    let d = tempdir();
    let (a, b) = (d.path().join("a.paje"), d.path().join("b.paje"));
    deck("deck-threads", &a);
    deck("deck-threads", &b);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}
