//! Hostile and unusual input (issue 12): whenever the exit is 0 the trace
//! is one pj_dump accepts; memory and time stay bounded; damage is
//! reported.

mod clog_build;
mod common;

use common::*;
use std::fs;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// MPE logs of threaded programs record states with thread ≠ 0: they go on
/// Thread containers, with the Thread type's own state type.
#[test]
fn mpe_threads_get_their_own_state_type() {
    let mut c = clog_build::Clog2::new(false, 1024);
    c.sdef(0.0, 1, 500, 501, "red", "Work");
    c.bare(0.001, 0, 500);
    c.thread = 1;
    c.bare(0.0015, 0, 500);
    c.bare(0.0025, 0, 501);
    c.thread = 0;
    c.bare(0.003, 0, 501);
    c.bare(0.004, 0, 600);
    let d = tempdir();
    let log = d.path().join("threads.clog2");
    fs::write(&log, c.finish()).unwrap();
    let nodes = d.path().join("nodes");
    fs::write(&nodes, "hostA\n").unwrap();
    let out = d.path().join("t.paje");
    run_ok(
        &[
            "-mpi",
            s(&log),
            "-mpinodes",
            s(&nodes),
            "--mpi-start",
            "1795264448",
        ],
        &out,
    );
    let text = fs::read_to_string(&out).unwrap();
    assert!(text.contains("mpe thread 1"), "{text}");
    assert_valid(&out);
}

/// Runs the binary under a 512 MiB address-space limit and GNU time; gives
/// the output and the peak RSS in KiB (None without /usr/bin/time).
fn bounded(args: &[&str]) -> (std::process::Output, Option<u64>) {
    let have_time = Path::new("/usr/bin/time").exists();
    let script = if have_time {
        r#"ulimit -v 524288; exec /usr/bin/time -f "rss=%M" "$@""#
    } else {
        r#"ulimit -v 524288; exec "$@""#
    };
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg("bash")
        .arg(env!("CARGO_BIN_EXE_integrador"))
        .args(args)
        .output()
        .unwrap();
    let err = stderr(&o);
    let rss = err
        .lines()
        .find_map(|l| l.strip_prefix("rss="))
        .and_then(|v| v.trim().parse().ok());
    (o, rss)
}

/// `/dev/zero` under every text option: one line of NUL bytes that never
/// ends. Each reader stops at its line or size bound: exit 1, a message
/// naming the input, RSS well under 64 MB.
#[test]
fn endless_input_under_every_text_option_is_bounded() {
    let d = tempdir();
    let out = d.path().join("x.paje");
    let g = root().join("examples/grid/domain-a.traced");
    let cases: Vec<Vec<&str>> = vec![
        vec!["-ganglia", "/dev/zero"],
        vec!["-ganglia", "/dev/zero", "--ganglia-format", "traced"],
        vec!["-os", "/dev/zero"],
        vec!["-os", "/dev/zero", "--os-format", "ftrace"],
        vec!["-os", "/dev/zero", "--os-format", "os"],
        vec!["-ganglia", s(&g), "-sync", "/dev/zero"],
        vec!["-ganglia", s(&g), "-hierarchy", "/dev/zero"],
        vec!["-mpi", "/dev/zero"],
        vec!["-deck", "/dev/zero"],
    ];
    for args in cases {
        let mut a = args.clone();
        a.extend(["-o", s(&out)]);
        let t = std::time::Instant::now();
        let (o, rss) = bounded(&a);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains("/dev/zero"), "{args:?}: names the input: {e}");
        if let Some(kb) = rss {
            assert!(kb < 64 * 1024, "{args:?}: peak RSS {kb} KiB");
        }
        assert!(
            t.elapsed().as_secs() < 30,
            "{args:?}: took {:?}",
            t.elapsed()
        );
        assert!(!out.exists());
    }
    // A nodes file and the checker too.
    let clog = root().join("examples/pingpong-localhost/mpi_pingpong.clog2");
    let (o, rss) = bounded(&["-mpi", s(&clog), "-mpinodes", "/dev/zero", "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(rss.is_none_or(|kb| kb < 64 * 1024), "{rss:?}");
    let (o, rss) = bounded(&["check", "/dev/zero"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("longer than"));
    assert!(rss.is_none_or(|kb| kb < 64 * 1024), "{rss:?}");
    // pj_dump joins a line ending in an opening quote to the next one; a
    // trace where every line closes a string and opens another is one
    // endless line to it. The checker's line bound holds across the joins.
    let chain = d.path().join("chain.paje");
    fs::write(&chain, format!("a \"\n{}", "\" \"\n".repeat(600_000))).unwrap();
    let (o, rss) = bounded(&["check", s(&chain)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(report.contains("joins the lines after it past"), "{report}");
    assert!(rss.is_none_or(|kb| kb < 64 * 1024), "{rss:?}");
    // Times of 800 kB that are numbers up to their middle: the number is
    // found in one pass (trying every prefix took 54 s a line). Spirit
    // reads none in 400,000 digits (past 1e308), so each is a time pj_dump
    // leaves unwritten: a warning, not a decision.
    let basic = fs::read_to_string(root().join("tests/paje/ok-basic.paje")).unwrap();
    let long = format!("{}{}", "1".repeat(400_000), "x".repeat(400_000));
    let times = basic
        .replace("6 1.0 p1", &format!("6 {long} p1"))
        .replace("9 1.0 n1", &format!("9 {long} n1"))
        .replace("9 2.0 n1", &format!("9 {long} n1"));
    let f = d.path().join("long-times.paje");
    fs::write(&f, times).unwrap();
    let t = std::time::Instant::now();
    let (o, _) = bounded(&["check", s(&f)]);
    let report = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{report}");
    assert_eq!(report.matches("is not a number").count(), 3, "{report}");
    assert!(t.elapsed().as_secs() < 30, "took {:?}", t.elapsed());
}

/// A recording cut in the middle of its last line: the line is left out
/// and the cut is reported, even with -q.
#[test]
fn a_cut_last_line_is_reported_not_parsed() {
    let d = tempdir();
    let g = fs::read_to_string(root().join("examples/grid/domain-a.traced")).unwrap();
    let cut = &g[..g.trim_end().len() - 2];
    let f = d.path().join("cut.traced");
    fs::write(&f, cut).unwrap();
    let out = d.path().join("x.paje");
    let o = integrador(&["-q", "-ganglia", s(&f), "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("warnings") && e.contains("has no newline") && e.contains("cut.traced"),
        "{e}"
    );
    let lines = g
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .count();
    assert_eq!(
        count_events(&out, "PajeSetVariable"),
        lines - 1,
        "the cut line is left out"
    );
    assert_valid(&out);
    // A sync file cut mid-number is refused: it would place a host years away.
    let sync = d.path().join("timesync");
    fs::write(&sync, "node01.cluster.example 1795264448.0 17952").unwrap();
    let o = integrador(&["-ganglia", s(&f), "-sync", s(&sync), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no newline"), "{}", stderr(&o));
}

/// Many distinct hosts, each in its own `[clusters]` entry and with its
/// own sync line pair: every host lands in its cluster and is corrected.
/// (Host, cluster and sync lookups go through identity keys; a scan per
/// lookup made 30,000 of each take minutes. benches/hostile.sh times a
/// million.)
#[test]
fn many_hosts_clusters_and_sync_lines() {
    let n = 20_000;
    let d = tempdir();
    let mut traced = String::from("# collector h0000000\n");
    let mut h = fs::read_to_string(root().join("hierarchies/ganglia.toml")).unwrap();
    h.push_str("[clusters]\n");
    let mut sync = String::new();
    for i in 0..n {
        traced.push_str(&format!(
            "{}.{:03} load_one h{i:07} {}\n",
            1795264448 + i / 1000,
            i % 1000,
            i % 7
        ));
        h.push_str(&format!("c{i:05} = [\"h{i:07}\"]\n"));
        sync.push_str(&format!(
            "{} ref 1795264448000000 h{i:07} 1795264448000000\n",
            2 * i + 1
        ));
        sync.push_str(&format!(
            "{} ref 1795264458000000 h{i:07} 1795264458000000\n",
            2 * i + 2
        ));
    }
    let (t, hp, sp) = (
        d.path().join("g.traced"),
        d.path().join("h.toml"),
        d.path().join("sync"),
    );
    fs::write(&t, traced).unwrap();
    fs::write(&hp, h).unwrap();
    fs::write(&sp, sync).unwrap();
    let out = d.path().join("x.paje");
    let o = integrador(&[
        "-ganglia",
        s(&t),
        "-hierarchy",
        s(&hp),
        "-sync",
        s(&sp),
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = fs::read_to_string(&out).unwrap();
    for i in [0, n / 2, n - 1] {
        assert!(text.contains(&format!(" c{i:05} ")), "cluster c{i:05}");
    }
    assert_eq!(count_events(&out, "PajeSetVariable"), n as usize);
    // The collector h0000000 is found among the sync file's hosts.
    let e = stderr(&o);
    assert!(e.contains("clocks (reference ref)"), "{e}");
    assert!(!e.contains("uncorrected"), "{e}");
}

const SNAPSHOT: &str = r#"<?xml version="1.0" encoding="ISO-8859-1" standalone="yes"?>
<GANGLIA_XML VERSION="3.7.2" SOURCE="gmond">
<CLUSTER NAME="c" LOCALTIME="1795264448" OWNER="x" LATLONG="x" URL="x">
<HOST NAME="n1" IP="127.0.0.1" REPORTED="1795264440" TN="8" TMAX="20" DMAX="0" LOCATION="x" GMOND_STARTED="0">
<METRIC NAME="load_one" VAL="0.5" TYPE="float" UNITS="" TN="8" TMAX="70" DMAX="0" SLOPE="both"></METRIC>
</HOST>
<HOST NAME="n2" IP="127.0.0.2" REPORTED="1795264440" TN="8" TMAX="20" DMAX="0" LOCATION="x" GMOND_STARTED="0">
<METRIC NAME="load_one" VAL="0.7" TYPE="float" UNITS="" TN="8" TMAX="70" DMAX="0" SLOPE="both"></METRIC>
</HOST>
</CLUSTER>
</GANGLIA_XML>
"#;

/// A snapshot cut between elements keeps what came before the cut and
/// says so; a cut `rrdtool dump` is refused (its rows are timed from the
/// end of each archive, so a cut one cannot be placed).
#[test]
fn cut_xml_is_reported_and_cut_rrd_refused() {
    let d = tempdir();
    let whole = d.path().join("whole.xml");
    fs::write(&whole, SNAPSHOT).unwrap();
    let out = d.path().join("x.paje");
    let o = integrador(&["-q", "-ganglia", s(&whole), "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    assert_eq!(count_events(&out, "PajeSetVariable"), 2);
    let cut = d.path().join("cut.xml");
    let at = SNAPSHOT.find("<HOST NAME=\"n2\"").unwrap();
    fs::write(&cut, &SNAPSHOT[..at]).unwrap();
    let o = integrador(&["-q", "-ganglia", s(&cut), "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("cut.xml: a snapshot is cut at byte"), "{e}");
    assert_eq!(
        count_events(&out, "PajeSetVariable"),
        1,
        "n1's sample is kept"
    );
    assert_valid(&out);

    let rrd = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<rrd><version>0003</version><step>15</step><lastupdate>1795264500</lastupdate>\n<ds><name> sum </name><type> GAUGE </type></ds>\n<rra><cf>AVERAGE</cf><pdp_per_row>1</pdp_per_row><database>\n<row><v>1.0e+00</v></row>\n<row><v>2.0e+00</v></row>\n</database></rra>\n</rrd>\n";
    let full = d.path().join("n1.load_one.xml");
    let run_rrd = || {
        integrador(&[
            "-q",
            "-ganglia",
            s(&full),
            "--ganglia-format",
            "rrd",
            "-o",
            s(&out),
        ])
    };
    fs::write(&full, rrd).unwrap();
    let o = run_rrd();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(count_events(&out, "PajeSetVariable"), 2);
    let cut_at = rrd.find("<row><v>2.0").unwrap();
    fs::write(&full, &rrd[..cut_at]).unwrap();
    let o = run_rrd();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("the dump is cut"), "{}", stderr(&o));
}

/// A sync file is streamed: half a million lines of two hosts need no more
/// memory than two, and the default fit gives the trace that the first and
/// last line of each host give.
#[test]
fn a_long_sync_file_is_streamed() {
    let d = tempdir();
    let n = 250_000i64;
    let line = |i: i64, host: &str, skew: i64| {
        format!(
            "ref {} {host} {}\n",
            1795264448000000 + i * 40,
            1795264448000000 + i * 40 + skew + i % 3
        )
    };
    let (mut long, mut short) = (String::new(), String::new());
    for i in 0..n {
        for (host, skew) in [("n1", 5_000), ("n2", -7_000)] {
            let l = line(i, host, skew);
            if i == 0 || i == n - 1 {
                short.push_str(&l);
            }
            long.push_str(&l);
        }
    }
    let traced = "# collector n2\n1795264450.5 load_one n1 1\n1795264455.25 load_one n2 2\n";
    let (t, lp, sp) = (
        d.path().join("g.traced"),
        d.path().join("long.sync"),
        d.path().join("short.sync"),
    );
    fs::write(&t, traced).unwrap();
    fs::write(&lp, long).unwrap();
    fs::write(&sp, short).unwrap();
    let (a, b) = (d.path().join("a.paje"), d.path().join("b.paje"));
    let (o, rss) = bounded(&["-ganglia", s(&t), "-sync", s(&lp), "-o", s(&a)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(rss.is_none_or(|kb| kb < 64 * 1024), "peak RSS {rss:?} KiB");
    let o = integrador(&["-ganglia", s(&t), "-sync", s(&sp), "-o", s(&b)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read(&a).unwrap(), fs::read(&b).unwrap());
    // The least-squares fit reads every line, in the same memory.
    let (o, rss) = bounded(&[
        "-ganglia",
        s(&t),
        "-sync",
        s(&lp),
        "--sync-fit",
        "-o",
        s(&a),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(rss.is_none_or(|kb| kb < 64 * 1024), "peak RSS {rss:?} KiB");
}

/// A large kernel trace under an address-space limit 32 MiB above what the
/// program maps for its code and data, with threads:
/// the first pass's second half and the decoder each run on a thread, and
/// they allocate from the one malloc arena (`output::fit_address_limit`);
/// with glibc's arena per thread the run aborted. Same bytes as
/// `--threads 1`.
#[test]
fn threads_fit_a_tight_address_limit() {
    let d = tempdir();
    let text =
        fs::read_to_string(root().join("tests/data/sched/pingpong-pipe/ftrace.txt")).unwrap();
    // The fixture's events again and again, each copy 10 s later (its
    // epoch marker kept once), past the 8 MiB at which the first pass
    // splits.
    let mut big = String::new();
    for k in 0..12 {
        for line in text.lines() {
            if k > 0 && (line.starts_with('#') || line.contains("integrador_epoch")) {
                continue;
            }
            let shifted = line.split_once(": ").and_then(|(head, rest)| {
                let (ctx, t) = head.rsplit_once(' ')?;
                let t: f64 = t.parse().ok()?;
                Some(format!("{ctx} {:.6}: {rest}", t + 10.0 * f64::from(k)))
            });
            big.push_str(shifted.as_deref().unwrap_or(line));
            big.push('\n');
        }
    }
    assert!(big.len() > 9 << 20, "{}", big.len());
    let input = d.path().join("big.txt");
    fs::write(&input, &big).unwrap();
    // 32 MiB beyond what the program itself maps (a debug build's code
    // alone is 30 MB): the threads' stacks and buffers must fit in that.
    let exe = env!("CARGO_BIN_EXE_integrador");
    let mapped_kib = std::process::Command::new("size")
        .arg(exe)
        .output()
        .ok()
        .and_then(|o| {
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            let dec = text
                .lines()
                .nth(1)?
                .split_whitespace()
                .nth(3)?
                .parse::<u64>()
                .ok()?;
            Some(dec / 1024)
        })
        .unwrap_or(64 * 1024);
    let limit = format!("ulimit -v {}; exec \"$@\"", mapped_kib + 32 * 1024);
    let run = |threads: &str, out: &Path| {
        std::process::Command::new("bash")
            .arg("-c")
            .arg(&limit)
            .arg("bash")
            .arg(env!("CARGO_BIN_EXE_integrador"))
            .args([
                "-os",
                s(&input),
                "--os-host",
                "node01",
                "--threads",
                threads,
                "-q",
            ])
            .args(["-o", s(out)])
            .output()
            .unwrap()
    };
    let (two, one) = (d.path().join("two.paje"), d.path().join("one.paje"));
    for (t, out) in [("2", &two), ("1", &one)] {
        let o = run(t, out);
        assert_eq!(o.status.code(), Some(0), "--threads {t}: {}", stderr(&o));
    }
    assert!(fs::read(&two).unwrap() == fs::read(&one).unwrap());
    assert_valid(&two);
}
