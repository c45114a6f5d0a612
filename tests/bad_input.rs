//! Bad input: one clear line naming file and line, a non-zero exit, and no
//! output file left behind (not even a temporary one).

mod common;
use common::*;
use std::path::Path;

/// Runs with `args` (plus `-o out`) and expects failure `code`, one line on
/// stderr containing every `needle`, and nothing left in the output dir.
fn fails(dir: &Path, args: &[&str], code: i32, needles: &[&str]) {
    let out = dir.join("out.paje");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-o", out.to_str().unwrap()]);
    let o = integrador(&all);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "one line expected: {err}");
    assert!(err.starts_with("integrador: error: "), "{err}");
    for n in needles {
        assert!(err.contains(n), "{err:?} should contain {n:?}");
    }
    assert!(!out.exists(), "output left behind");
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("integrador") || n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn truncated_traced_line() {
    let d = tempdir();
    let f = write(
        d.path(),
        "t.traced",
        "1795264448 cpu_user node01 1.5\n1795264448 cpu_user node02\n",
    );
    fails(
        d.path(),
        &["-ganglia", &f],
        1,
        &["t.traced: line 2: expected 4 fields", "found 3"],
    );
}

#[test]
fn non_numeric_value() {
    let d = tempdir();
    let f = write(
        d.path(),
        "t.traced",
        "# c\n1795264448 cpu_user node01 lots\n",
    );
    fails(
        d.path(),
        &["-ganglia", &f],
        1,
        &["t.traced: line 2: value `lots` is not a finite decimal number"],
    );
}

#[test]
fn unknown_record_kind() {
    let d = tempdir();
    let f = write(d.path(), "h.os", "1 time 1795264911 -\n2 wakeup 5 10\n");
    fails(
        d.path(),
        &["-os", &f],
        1,
        &["h.os: line 2: unknown record kind `wakeup`"],
    );
}

#[test]
fn error_after_much_output_leaves_nothing() {
    let d = tempdir();
    let mut text = String::from("1 time 1795264911 -\n");
    for i in 0..200_000u32 {
        let kind = if i % 2 == 0 { "unblock" } else { "block" };
        text.push_str(&format!(
            "{} {kind} {} {}\n",
            i + 2,
            i % 1_000_000 / 2 * 2,
            100 + i % 7
        ));
        if i % 1000 == 999 {
            text.push_str(&format!("{} time {} -\n", i + 2, 1795264912 + i / 1000));
        }
    }
    text.push_str("999999 block 12 notapid\n");
    let f = write(d.path(), "big.os", &text);
    fails(
        d.path(),
        &["-os", &f],
        1,
        &["big.os: line", "pid `notapid` is not a task id"],
    );
}

#[test]
fn missing_file() {
    let d = tempdir();
    fails(
        d.path(),
        &["-ganglia", "/nonexistent/ganglia.traced"],
        1,
        &["-ganglia /nonexistent/ganglia.traced: no such file or directory"],
    );
    fails(
        d.path(),
        &[
            "-ganglia",
            &traced_example(),
            "-sync",
            "/nonexistent/timesync",
        ],
        1,
        &["-sync /nonexistent/timesync: no such file"],
    );
}

fn traced_example() -> String {
    root()
        .join("examples/grid/domain-a.traced")
        .display()
        .to_string()
}

/// A file under the wrong option gets advice naming the option that
/// reads it, not its wrong reader's parse error; so does a directory, and
/// a file given without an option. Nothing is written.
#[test]
fn wrong_format_gets_advice() {
    let d = tempdir();
    let ex = |f: &str| root().join("examples").join(f).display().to_string();
    let data = |f: &str| fixture(f).display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "-ganglia".into(),
                ex("pingpong-localhost/mpi_pingpong.clog2"),
            ],
            "is an MPE log, not Ganglia data: give it with -mpi",
        ),
        (
            vec!["-os".into(), ex("pingpong-localhost/pcp/vm.0")],
            "is a file of a PCP archive, not a kernel scheduler trace: give the archive with -pcp",
        ),
        (
            vec![
                "-ganglia".into(),
                data("scenarios/pingpong-localhost/sched/trace.dat"),
            ],
            "is a trace-cmd binary file (trace.dat), not Ganglia data: give it with -os",
        ),
        (
            vec!["-ganglia".into(), data("sched/pingpong-pipe/perf.data")],
            "is a perf binary file (perf.data), not Ganglia data: run `perf script -i",
        ),
        (
            vec!["-pcp".into(), data("pcp/multihost")],
            "(under -pcp) is a directory: give the files in it, e.g. -pcp '",
        ),
        (
            vec!["-deck".into(), ex("deck/threads")],
            "(under -deck) is a directory: give the files in it, e.g. -deck '",
        ),
        (
            vec!["-pcp".into(), ex("pingpong-localhost/mpi_pingpong.clog2")],
            "is an MPE log, not a PCP archive: give it with -mpi",
        ),
        (
            vec!["-ganglia".into(), ex("pingpong-localhost/vm.os")],
            "is a kernel .os recording, not Ganglia data: give it with -os",
        ),
        (
            vec!["-os".into(), ex("pingpong-localhost/ganglia.traced")],
            "is a Ganglia .traced recording, not a kernel scheduler trace: give it with -ganglia",
        ),
        (
            vec!["-ganglia".into(), ex("grid/timesync")],
            "is a clock-sync file (rastro_timesync), not Ganglia data: give it with -sync",
        ),
        (
            vec![
                "-sync".into(),
                ex("grid/domain-a.traced"),
                "-ganglia".into(),
                ex("grid/domain-a.traced"),
            ],
            "is a Ganglia .traced recording, not a clock-sync file: give it with -ganglia",
        ),
        (
            vec![
                "-mpi".into(),
                ex("deck/threads/rastro-0-0.rst"),
                "-mpinodes".into(),
                ex("pingpong-localhost/mpi.nodes"),
            ],
            "is a libRastro trace, not an MPE log: give it with -deck",
        ),
        (
            vec![ex("pingpong-localhost/mpi_pingpong.clog2")],
            "is an MPE log given without an option: give it with -mpi",
        ),
    ];
    for (args, want) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails(d.path(), &args, 2, &[want]);
    }
}

/// A path that exists is taken as it is, even with glob characters.
#[test]
fn an_existing_path_with_glob_characters_is_literal() {
    let d = tempdir();
    let f = d.path().join("run[1].traced");
    std::fs::copy(traced_example(), &f).unwrap();
    let out = d.path().join("o.paje");
    let o = integrador(&[
        "-q",
        "-ganglia",
        f.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn unmatched_glob() {
    let d = tempdir();
    let pat = format!("{}/*.os", d.path().display());
    fails(d.path(), &["-os", &pat], 1, &["matches no file"]);
}

#[test]
fn malformed_sync_file() {
    let d = tempdir();
    let g = write(d.path(), "g.traced", "1795264448 cpu_user node01 1.5\n");
    let s = write(d.path(), "bad.sync", "paple 1094221332965040 paple01 1094222792354177\npaple 10942213x paple01 1094222796878767\n");
    fails(
        d.path(),
        &["-ganglia", &g, "-sync", &s],
        1,
        &["bad.sync: line 2: reference time `10942213x` is not an integer"],
    );
    let s = write(
        d.path(),
        "mixed.sync",
        "r 1094221332965040 a 1094222792354177\nr 1795264911000000000 a 1795264911000001000\n",
    );
    fails(
        d.path(),
        &["-ganglia", &g, "-sync", &s],
        1,
        &["mixed.sync: line 2: times mix microsecond and nanosecond"],
    );
    let s = write(d.path(), "back.sync", "r 20 a 50\nr 30 a 40\n");
    fails(
        d.path(),
        &["-ganglia", &g, "-sync", &s],
        1,
        &["back.sync: host `a` (lines 1, 2)"],
    );
}

#[test]
fn bad_toml() {
    let d = tempdir();
    let g = write(d.path(), "g.traced", "1795264448 cpu_user node01 1.5\n");
    let h = write(
        d.path(),
        "h.toml",
        "[[container]]\nname = \"Machine\"\nrole = \"machine\"\ncolour = \"red\"\n",
    );
    fails(
        d.path(),
        &["-ganglia", &g, "-hierarchy", &h],
        1,
        &["h.toml: line 4: unknown field `colour`"],
    );
    let h = write(d.path(), "syntax.toml", "[[container]\n");
    fails(
        d.path(),
        &["-ganglia", &g, "-hierarchy", &h],
        1,
        &["syntax.toml: line 1:"],
    );
    let h = write(
        d.path(),
        "undef.toml",
        "[[container]]\nname = \"Machine\"\nrole = \"machine\"\n[ganglia]\nlevel = \"Host\"\n",
    );
    fails(
        d.path(),
        &["-ganglia", &g, "-hierarchy", &h],
        1,
        &["undef.toml: line 5: [ganglia] level `Host` is not a defined container type"],
    );
}

#[test]
fn time_beyond_the_reorder_window() {
    let d = tempdir();
    let f = write(
        d.path(),
        "t.traced",
        "1795264448.5 a h 1\n1795264448.495 a h 2\n1795264448.3 a h 3\n",
    );
    fails(
        d.path(),
        &["-ganglia", &f],
        1,
        &[
            "t.traced: line 3: time goes back 200ms before line 1",
            "--reorder-window",
        ],
    );
    // A wider window sorts them instead.
    let out = d.path().join("ok.paje");
    let o = integrador(&[
        "-ganglia",
        &f,
        "--reorder-window",
        "1s",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("2 reordered"), "{}", stderr(&o));
    assert_valid(&out);
}

/// An MPE log found in order hands its events on as converted; one whose
/// record steps back (inside the window) is still sorted, not refused.
#[test]
fn a_clog2_record_stepping_back_is_sorted() {
    let d = tempdir();
    let mut log = std::fs::read(fixture("clog2/ring/ring.clog2")).unwrap();
    // The record at byte 1664 (rank 2's first state start, 141 µs) moved
    // 1 µs back, before the record ahead of it; CLOG2 is big-endian here.
    let at = 1664;
    let was = f64::from_be_bytes(log[at..at + 8].try_into().unwrap());
    assert!((was - 0.000141).abs() < 1e-6, "{was}");
    log[at..at + 8].copy_from_slice(&0.000140_f64.to_be_bytes());
    let f = d.path().join("back.clog2");
    std::fs::write(&f, &log).unwrap();
    let err = run_ok(&["-mpi", f.to_str().unwrap()], &d.path().join("back.paje"));
    assert!(err.contains("1 reordered"), "{err}");
}

#[test]
fn small_steps_back_are_sorted_and_counted() {
    let d = tempdir();
    let f = write(
        d.path(),
        "t.traced",
        "1795264448.005 a h 1\n1795264448.001 a h 2\n1795264448.003 b h 3\n1795264449 a h 4\n",
    );
    let out = d.path().join("ok.paje");
    let o = integrador(&["-ganglia", &f, "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("2 reordered"), "{}", stderr(&o));
    assert_valid(&out);
    let text = std::fs::read_to_string(&out).unwrap();
    let times: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("6 "))
        .map(|l| l.split(' ').nth(1).unwrap())
        .collect();
    assert_eq!(
        times,
        // T0 is the earliest time floored to the millisecond.
        vec!["0.000000000", "0.002000000", "0.004000000", "0.999000000"]
    );
}

#[test]
fn option_problems() {
    let d = tempdir();
    let g = write(d.path(), "g.traced", "1795264448 cpu_user node01 1.5\n");
    fails(
        d.path(),
        &["-ganglia", &g, "--pcp-raw"],
        2,
        &["--pcp-raw", "-pcp"],
    );
    fails(
        d.path(),
        &["-ganglia", &g, "--deck-map", "akypuera"],
        2,
        &["--deck-map", "-deck"],
    );
    fails(
        d.path(),
        &["-ganglia", &g, "--boot-epoch", "soon"],
        2,
        &["--boot-epoch `soon`"],
    );
    // Forcing ftrace on a file of another option's format gets advice;
    // on one of no known format, the file and line.
    fails(
        d.path(),
        &["-os", &g, "--os-format", "ftrace"],
        2,
        &["g.traced (under -os) is a Ganglia .traced recording"],
    );
    let junk = write(d.path(), "junk.txt", "hello there\n");
    fails(
        d.path(),
        &["-os", &junk, "--os-format", "ftrace"],
        1,
        &["junk.txt: line 1: no `[cpu]` column"],
    );
    // Forcing a format on a file of another names the file.
    fails(
        d.path(),
        &["-ganglia", &g, "--ganglia-format", "xml"],
        1,
        &["g.traced: no <GANGLIA_XML> document"],
    );
    // A snapshot cut inside a tag names the byte.
    let xml = std::fs::read_to_string(fixture("ganglia/snapshots/snap_000.xml")).unwrap();
    let cut = xml.find("<METRIC").unwrap() + 20;
    let x = write(d.path(), "cut.xml", &xml[..cut]);
    fails(d.path(), &["-ganglia", &x], 1, &["cut.xml: byte "]);
}

#[test]
fn mpi_input_problems() {
    let d = tempdir();
    let g = write(d.path(), "g.traced", "1795264448 cpu_user node01 1.5\n");
    // A file of another option's format gets advice; one of no known
    // format, its reader's message.
    fails(
        d.path(),
        &["-mpi", &g],
        2,
        &["g.traced (under -mpi) is a Ganglia .traced recording"],
    );
    let junk = write(d.path(), "junk.clog2", "hello\n");
    fails(
        d.path(),
        &["-mpi", &junk],
        1,
        &["junk.clog2: not an MPE log"],
    );
    // A missing log.
    fails(d.path(), &["-mpi", "nope.clog2"], 1, &["nope.clog2"]);
    // A bad nodes file names its line.
    let log = fixture("clog2/ring/ring.clog2");
    let nodes = write(d.path(), "bad.nodes", "node01\nnode02:zero\n");
    fails(
        d.path(),
        &["-mpi", log.to_str().unwrap(), "-mpinodes", &nodes],
        1,
        &["bad.nodes: line 2: expected `host` or `host:N`"],
    );
    let empty = write(d.path(), "empty.nodes", "# nothing\n\n");
    fails(
        d.path(),
        &["-mpi", log.to_str().unwrap(), "-mpinodes", &empty],
        1,
        &["empty.nodes: no host"],
    );
}
