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
    let v = w.parse::<i64>().unwrap() * 1_000_000_000 + format!("{f:0<9}")[..9].parse::<i64>().unwrap();
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
    format!("{}.{:09}", ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000))
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
    let only_a: Vec<_> = a.iter().filter(|x| b.binary_search(x).is_err()).take(5).collect();
    let only_b: Vec<_> = b.iter().filter(|x| a.binary_search(x).is_err()).take(5).collect();
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
    assert!(got == want, "{what} differs from the cut\n{}", first_difference(want, &got));
    assert_eq!(pj_dump_accepts(trace), Some(true), "{what}");
    assert_vite_clean(trace, what);
}

#[test]
fn windows_equal_the_cut_of_the_whole_trace() {
    if !have_pj_dump() {
        return;
    }
    let tmp = tempdir();
    for (i, (name, args)) in example_runs().into_iter().enumerate() {
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
        all.extend(["-q", "--tables", pointed.to_str().unwrap(), "--checkpoint-every", "500ms"]);
        let o = integrador(&all);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let rows = dump(&full);
        // Without a window, the tables give the whole trace back.
        for dir in [&tables, &pointed] {
            let back = tmp.path().join(format!("{name}.back.paje"));
            paje_of(&[dir], "", "", &back);
            assert_cut(&back, &whole(&rows), &format!("{name}: the whole trace from {}", dir.display()));
        }
        let end = rows
            .iter()
            .filter(|r| r[0] == "Container")
            .map(|r| g_ns(&r[4]))
            .max()
            .unwrap();
        let mut seen = 0;
        for (k, (t1, t2)) in windows(end, 61 + i as u64).into_iter().enumerate() {
            let want = cut(&rows, t1, t2);
            seen += want.iter().filter(|r| !r.starts_with("Container")).count();
            let (from, to) = (format!("+{t1}ns"), format!("+{t2}ns"));
            let what = |how: &str| format!("{name} window {k} [{}, {}) {how}", secs(t1), secs(t2));
            // From the integration.
            let w = tmp.path().join(format!("{name}.{k}.paje"));
            let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
            all.extend(["-q", "-o", w.to_str().unwrap(), "--from", &from, "--to", &to]);
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
        assert!(seen > 100, "{name}: the windows held {seen} rows but containers");
    }
}
