//! Windows (`--from`/`--to`, `integrador paje TABLES`, docs/windows.md):
//! for every shipped example and fixture and 20 seeded windows each, the
//! window's Pajé trace through pj_dump equals the whole trace's pj_dump
//! rows cut to the window (starts raised to T1, ends lowered to T2, rows
//! outside dropped), whether it comes from the integration or from the
//! tables; pj_dump accepts every window. The tables of consecutive
//! windows, put together, are the whole run's (DuckDB, in
//! `tests/tables_sql.rs`).

mod common;
use common::*;
use std::path::Path;

/// A time of pj_dump's (`-l 9`) as exact nanoseconds after T0.
fn ns(s: &str) -> i64 {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (w, f) = s.split_once('.').unwrap_or((s, ""));
    let v =
        w.parse::<i64>().unwrap() * 1_000_000_000 + format!("{f:0<9}")[..9].parse::<i64>().unwrap();
    if neg {
        -v
    } else {
        v
    }
}

/// A time as pj_dump writes a container's (`%g`: 6 significant digits).
fn g6(ns: i64) -> String {
    let f = ns as f64 / 1e9;
    if f == 0.0 {
        return "0".into();
    }
    let exp = f.abs().log10().floor() as i32;
    let decimals = (5 - exp).max(0) as usize;
    let t = format!("{f:.decimals$}");
    match t.contains('.') {
        true => t.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => t,
    }
}

/// A container's time as pj_dump writes it, in nanoseconds.
fn g_ns(s: &str) -> i64 {
    (s.trim().parse::<f64>().unwrap() * 1e9).round() as i64
}

fn secs(ns: i64) -> String {
    format!(
        "{}.{:09}",
        ns.div_euclid(1_000_000_000),
        ns.rem_euclid(1_000_000_000)
    )
}

/// pj_dump's rows of `trace`, 9 decimals.
fn dump(trace: &Path) -> Vec<Vec<String>> {
    let o = std::process::Command::new("pj_dump")
        .args(["-l", "9"])
        .arg(trace)
        .output()
        .expect("pj_dump runs");
    assert!(
        o.status.success(),
        "pj_dump rejects {}: {}",
        trace.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.split(", ").map(str::to_string).collect())
        .collect()
}

/// The rows of a dump in `[t1, t2)`, cut at its edges, sorted. The root
/// container's row (pj_dump starts it at 0 whatever the trace) is left
/// out.
fn cut(rows: &[Vec<String>], t1: i64, t2: i64) -> Vec<String> {
    let mut out = Vec::new();
    for r in rows {
        let mut r = r.clone();
        match r[0].as_str() {
            "Container" if r[2] == "0" => continue,
            "Event" => {
                let t = ns(&r[3]);
                if t < t1 || t >= t2 {
                    continue;
                }
            }
            "Container" => {
                // pj_dump writes a container's times with 6 digits.
                let (s, e) = (g_ns(&r[3]), g_ns(&r[4]));
                if e < t1 || s >= t2 {
                    continue;
                }
                let (s, e) = (s.max(t1), e.min(t2));
                r[3] = g6(s);
                r[4] = g6(e);
                // Its duration is of the unrounded times: not compared.
                r[5] = String::new();
            }
            "State" | "Variable" | "Link" => {
                let (s, e) = (ns(&r[3]), ns(&r[4]));
                if e < t1 || s >= t2 {
                    continue;
                }
                let (s, e) = (s.max(t1), e.min(t2));
                r[3] = secs(s);
                r[4] = secs(e);
                r[5] = secs(e - s);
            }
            _ => {}
        }
        out.push(r.join(", "));
    }
    out.sort();
    out
}

/// Every row of a window's dump, as [`cut`] writes them (times again
/// from the text, so that both sides are written alike).
fn whole(rows: &[Vec<String>]) -> Vec<String> {
    cut(rows, i64::MIN / 2, i64::MAX / 2)
}

/// The first difference of two sorted row lists, for a message.
fn first_difference(a: &[String], b: &[String]) -> String {
    let only_a: Vec<_> = a
        .iter()
        .filter(|x| b.binary_search(x).is_err())
        .take(5)
        .collect();
    let only_b: Vec<_> = b
        .iter()
        .filter(|x| a.binary_search(x).is_err())
        .take(5)
        .collect();
    format!("only in the cut: {only_a:#?}\nonly in the window: {only_b:#?}")
}

/// The seeded windows of a run whose data spans `[0, end]` after T0:
/// random edges, some before the first event or after the last.
fn windows(end: i64, seed: u64) -> Vec<(i64, i64)> {
    let mut rng = Rng(seed);
    let span = end.max(1_000);
    (0..20)
        .map(|_| {
            let a = rng.below(span as usize + 1) as i64;
            let b = rng.below(span as usize + 1) as i64;
            let (a, b) = (a.min(b), a.max(b) + 1);
            // Now and then a window that reaches past the run's end.
            if rng.chance(15) {
                (a, span + 1_000_000)
            } else {
                (a, b)
            }
        })
        .collect()
}

/// Writes the window `[from, to)` of the tables in `dirs` to `out`.
fn paje_of(dirs: &[&Path], from: &str, to: &str, out: &Path) {
    let mut args: Vec<&str> = vec!["paje"];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap()));
    for (flag, t) in [("--from", from), ("--to", to)] {
        if !t.is_empty() {
            args.extend([flag, t]);
        }
    }
    args.extend(["-o", out.to_str().unwrap()]);
    let o = integrador(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
}

/// Asserts that a window trace equals the cut it should, and that
/// pj_dump and ViTE take it.
fn assert_cut(trace: &Path, want: &[String], what: &str) {
    let got = whole(&dump(trace));
    assert!(
        got == want,
        "{what} differs from the cut\n{}",
        first_difference(want, &got)
    );
    assert_eq!(pj_dump_accepts(trace), Some(true), "{what}");
    assert_vite_clean(trace, what);
}

#[test]
fn windows_equal_the_cut_of_the_whole_trace() {
    if !have_pj_dump() {
        return;
    }
    let tmp = tempdir();
    // Every kind of source: the examples, and every fixture run of
    // tests/threads.rs (kernel traces of each format, PCP, Ganglia's).
    let mut runs = example_runs();
    runs.extend(fixture_runs().into_iter().filter(|(n, _)| *n != "readme"));
    for (i, (name, args)) in runs.into_iter().enumerate() {
        let full = tmp.path().join(format!("{name}.paje"));
        // The run's tables with the default reference points (none in
        // runs this short: one segment) and with one every 500 ms (many).
        let tables = tmp.path().join(format!("{name}.tables"));
        let pointed = tmp.path().join(format!("{name}.pointed"));
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        all.extend(["-q", "-o", full.to_str().unwrap()]);
        all.extend(["--tables", tables.to_str().unwrap()]);
        let o = integrador(&all);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        all.extend([
            "-q",
            "--tables",
            pointed.to_str().unwrap(),
            "--checkpoint-every",
            "500ms",
        ]);
        let o = integrador(&all);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let rows = dump(&full);
        // Without a window, the tables give the whole trace back.
        for dir in [&tables, &pointed] {
            let back = tmp.path().join(format!("{name}.back.paje"));
            paje_of(&[dir], "", "", &back);
            assert_cut(
                &back,
                &whole(&rows),
                &format!("{name}: the whole trace from {}", dir.display()),
            );
        }
        let end = rows
            .iter()
            .filter(|r| r[0] == "Container")
            .map(|r| g_ns(&r[4]))
            .max()
            .unwrap();
        let mut seen = 0;
        // And windows whose edges fall inside messages in flight.
        let mids: Vec<i64> = rows
            .iter()
            .filter(|r| r[0] == "Link")
            .map(|r| (ns(&r[3]) + ns(&r[4])) / 2)
            .collect();
        let mut plan = windows(end, 61 + i as u64);
        let mut rng = Rng(7 + i as u64);
        for _ in 0..(if mids.is_empty() { 0 } else { 4 }) {
            let (a, b) = (mids[rng.below(mids.len())], mids[rng.below(mids.len())]);
            if a != b {
                plan.push((a.min(b), a.max(b)));
            }
        }
        for (k, (t1, t2)) in plan.into_iter().enumerate() {
            let want = cut(&rows, t1, t2);
            seen += want.iter().filter(|r| !r.starts_with("Container")).count();
            let (from, to) = (format!("+{t1}ns"), format!("+{t2}ns"));
            let what = |how: &str| format!("{name} window {k} [{}, {}) {how}", secs(t1), secs(t2));
            // From the integration.
            let w = tmp.path().join(format!("{name}.{k}.paje"));
            let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
            all.extend([
                "-q",
                "-o",
                w.to_str().unwrap(),
                "--from",
                &from,
                "--to",
                &to,
            ]);
            let o = integrador(&all);
            assert!(o.status.success(), "{name} [{from}, {to}): {}", stderr(&o));
            assert_cut(&w, &want, &what("from the integration"));
            // From the tables, with and without reference points.
            for dir in [&tables, &pointed] {
                let wt = tmp.path().join(format!("{name}.{k}.t.paje"));
                paje_of(&[dir], &from, &to, &wt);
                assert_cut(&wt, &want, &what(&format!("from {}", dir.display())));
            }
        }
        assert!(
            seen > 100,
            "{name}: the windows held {seen} rows but containers"
        );
    }
}

/// Whether the Python has DuckDB; required under INTEGRADOR_REQUIRE_DUCKDB=1.
fn have_duckdb() -> bool {
    have_module("duckdb", "INTEGRADOR_REQUIRE_DUCKDB")
}

/// The tables of K = 1, 3, 7 consecutive windows of every example, put
/// together, are the whole run's (DuckDB, `tests/windows_sql.py`), and
/// each window's checkpoint holds what the run has open at its end; the
/// windows' tables together give the whole Pajé trace back.
#[test]
fn windows_put_together_are_the_whole_run() {
    let duck = have_duckdb();
    let pj = have_pj_dump();
    let tmp = tempdir();
    for (name, args) in example_runs() {
        let full = tmp.path().join(format!("{name}.paje"));
        let run_tables = tmp.path().join(format!("{name}.whole"));
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        all.extend([
            "-q",
            "-o",
            full.to_str().unwrap(),
            "--tables",
            run_tables.to_str().unwrap(),
        ]);
        all.extend(["--checkpoint-every", "2s"]);
        let o = integrador(&all);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let text = std::fs::read_to_string(&full).unwrap();
        // The run's span from its trace: the last time written.
        let end = text
            .lines()
            .filter(|l| l.starts_with("5 "))
            .filter_map(|l| l.split(' ').nth(1))
            .map(ns)
            .max()
            .unwrap();
        for k in [1usize, 3, 7] {
            let edges: Vec<String> = (1..k)
                .map(|i| format!("+{}ns", end * i as i64 / k as i64))
                .collect();
            let mut dirs = Vec::new();
            for i in 0..k {
                let dir = tmp.path().join(format!("{name}.k{k}.{i}"));
                let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
                all.extend([
                    "-q",
                    "--tables",
                    dir.to_str().unwrap(),
                    "--checkpoint-every",
                    "2s",
                ]);
                if i > 0 {
                    all.extend(["--from", &edges[i - 1]]);
                }
                if i + 1 < k {
                    all.extend(["--to", &edges[i]]);
                }
                let o = integrador(&all);
                assert!(
                    o.status.success(),
                    "{name} K={k} window {i}: {}",
                    stderr(&o)
                );
                dirs.push(dir);
            }
            if duck {
                let o = std::process::Command::new(python())
                    .arg(root().join("tests/windows_sql.py"))
                    .arg(&run_tables)
                    .args(&dirs)
                    .output()
                    .expect("python runs");
                let out = String::from_utf8_lossy(&o.stdout);
                assert!(
                    o.status.success(),
                    "{name} K={k}: {out}{}",
                    String::from_utf8_lossy(&o.stderr)
                );
                assert!(out.contains("put together are the whole run"), "{out}");
            }
            if pj {
                let back = tmp.path().join(format!("{name}.k{k}.paje"));
                let refs: Vec<&Path> = dirs.iter().map(|d| d.as_path()).collect();
                paje_of(&refs, "", "", &back);
                let want = whole(&dump(&full));
                let got = whole(&dump(&back));
                assert!(
                    got == want,
                    "{name} K={k}: the windows' tables together are not the whole trace\n{}",
                    first_difference(&want, &got)
                );
            }
        }
    }
}

/// A tables directory whose `run.parquet` says schema version `v`.
fn with_version(dir: &Path, v: i32) {
    use parquet::data_type::Int32Type;
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    let schema = std::sync::Arc::new(
        parquet::schema::parser::parse_message_type(
            "message run { REQUIRED INT32 schema_version; }",
        )
        .unwrap(),
    );
    let props = WriterProperties::builder()
        .set_key_value_metadata(Some(vec![KeyValue::new(
            "integrador.schema_version".to_string(),
            v.to_string(),
        )]))
        .build();
    let file = std::fs::File::create(dir.join("run.parquet")).unwrap();
    let mut w = SerializedFileWriter::new(file, schema, std::sync::Arc::new(props)).unwrap();
    let mut g = w.next_row_group().unwrap();
    let mut c = g.next_column().unwrap().unwrap();
    c.typed::<Int32Type>()
        .write_batch(&[v], None, None)
        .unwrap();
    c.close().unwrap();
    g.close().unwrap();
    w.close().unwrap();
}

/// T1 ≥ T2, a window outside the run and tables of another schema are
/// usage errors (exit 2) that say what is wrong, and leave no output.
#[test]
fn window_mistakes_are_usage_errors() {
    let tmp = tempdir();
    let (name, args) = example_runs().swap_remove(0);
    let tables = tmp.path().join("t");
    let out = tmp.path().join("w.paje");
    let run = |extra: &[&str]| {
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        all.extend(["-q", "-o", out.to_str().unwrap()]);
        all.extend(extra);
        integrador(&all)
    };
    let o = run(&["--tables", tables.to_str().unwrap()]);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    std::fs::remove_file(&out).unwrap();
    let usage = |o: std::process::Output, says: &[&str]| {
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        for s in says {
            assert!(e.contains(s), "{e:?} does not say {s:?}");
        }
        assert!(!out.exists(), "an output was left after: {e}");
    };
    usage(
        run(&["--from", "+20s", "--to", "+10s"]),
        &["not before", "T1 < T2"],
    );
    usage(run(&["--from", "+10s", "--to", "+10s"]), &["not before"]);
    // The README run spans about 31 s after T0.
    usage(
        run(&["--from", "+100s", "--to", "+200s"]),
        &["holds no time of the run", "spans ["],
    );
    usage(
        run(&["--to", "1000000000"]),
        &["holds no time of the run", "spans ["],
    );
    usage(run(&["--from", "yesterday"]), &["epoch seconds"]);
    let paje = |extra: &[&str]| {
        let mut all = vec![
            "paje",
            tables.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ];
        all.extend(extra);
        integrador(&all)
    };
    usage(paje(&["--from", "+20s", "--to", "+10s"]), &["not before"]);
    usage(
        paje(&["--from", "+100s"]),
        &["holds no time of the run", "spans ["],
    );
    // An output among the tables it reads: refused, the table untouched.
    let states = tables.join("states.parquet");
    let before = std::fs::read(&states).unwrap();
    let o = integrador(&[
        "paje",
        tables.to_str().unwrap(),
        "-o",
        states.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("inside the tables directory"),
        "{}",
        stderr(&o)
    );
    assert!(
        std::fs::read(&states).unwrap() == before,
        "a table was overwritten"
    );
    let o = paje(&["--from", "+12s", "--to", "+13s"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_file(&out).unwrap();
    with_version(&tables, 1);
    usage(
        paje(&[]),
        &[
            "schema version 1",
            &format!("reads version {}", integrador::tables::SCHEMA_VERSION),
        ],
    );
    let plain = tmp.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let o = integrador(&["paje", plain.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    usage(o, &["not a tables directory"]);
}

/// A damaged table (cut short, or its bytes overwritten) is an input
/// error naming the file, never a panic, and leaves no output; read
/// under an address-space limit.
#[test]
fn damaged_tables_are_input_errors() {
    let tmp = tempdir();
    let (name, args) = example_runs().swap_remove(0);
    let tables = tmp.path().join("t");
    let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
    all.extend(["-q", "--tables", tables.to_str().unwrap()]);
    let o = integrador(&all);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    let out = tmp.path().join("w.paje");
    for table in ["states", "variables", "containers", "types", "checkpoints"] {
        let path = tables.join(format!("{table}.parquet"));
        let good = std::fs::read(&path).unwrap();
        let mut rng = Rng(table.len() as u64);
        let cut = good[..good.len() / 2].to_vec();
        let mut flipped = good.clone();
        for _ in 0..64 {
            let i = rng.below(flipped.len());
            flipped[i] ^= 0x5a;
        }
        for (how, bytes) in [("cut short", cut), ("overwritten", flipped)] {
            std::fs::write(&path, &bytes).unwrap();
            // Under 1 GiB of address space: a damaged size must not be
            // believed (a dictionary page once asked for 64 GB).
            let o = std::process::Command::new("bash")
                .arg("-c")
                .arg(r#"ulimit -v 1048576; exec "$@""#)
                .arg("bash")
                .arg(env!("CARGO_BIN_EXE_integrador"))
                .args([
                    "paje",
                    tables.to_str().unwrap(),
                    "-o",
                    out.to_str().unwrap(),
                ])
                .output()
                .unwrap();
            let e = stderr(&o);
            assert!(!e.contains("panicked"), "{table} {how}: {e}");
            if o.status.success() {
                // Bytes overwritten where the reader does not look (a
                // page's statistics) may go unnoticed; the trace must
                // then still be one pj_dump takes.
                assert!(pj_dump_accepts(&out).unwrap_or(true), "{table} {how}");
                std::fs::remove_file(&out).unwrap();
                continue;
            }
            assert_eq!(o.status.code(), Some(1), "{table} {how}: {e}");
            assert!(
                e.contains(&format!("{table}.parquet")),
                "{table} {how}: {e}"
            );
            assert!(!out.exists(), "{table} {how}: an output was left");
        }
        std::fs::write(&path, &good).unwrap();
    }
}
