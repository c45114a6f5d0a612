//! The command line of cli.md: thesis and GNU spellings, globs, stdout,
//! exit codes, the summary.

mod common;
use common::*;

fn traced() -> String {
    fixture("ganglia/cluster-example.traced")
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn thesis_and_gnu_spellings_are_the_same_run() {
    let d = tempdir();
    let (a, b) = (d.path().join("a.paje"), d.path().join("b.paje"));
    let os = fixture("unify/node01.os");
    let o1 = integrador(&[
        "-hierarchy",
        "hierarchies/ganglia+os.toml",
        "-ganglia",
        &traced(),
        "-os",
        os.to_str().unwrap(),
        "-output",
        a.to_str().unwrap(),
    ]);
    let o2 = integrador(&[
        "--hierarchy",
        "hierarchies/ganglia+os.toml",
        "--ganglia",
        &traced(),
        "--os",
        os.to_str().unwrap(),
        "--output",
        b.to_str().unwrap(),
    ]);
    assert!(
        o1.status.success() && o2.status.success(),
        "{} {}",
        stderr(&o1),
        stderr(&o2)
    );
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn dash_o_dash_writes_to_stdout() {
    let d = tempdir();
    let f = d.path().join("f.paje");
    let o = integrador(&["-q", "-ganglia", &traced(), "-o", "-"]);
    assert!(o.status.success());
    let o2 = integrador(&["-q", "-ganglia", &traced(), "-o", f.to_str().unwrap()]);
    assert!(o2.status.success());
    assert_eq!(o.stdout, std::fs::read(&f).unwrap());
    assert!(o.stderr.is_empty(), "-q is quiet");
}

#[test]
fn quoted_globs_are_expanded() {
    let d = tempdir();
    let out = d.path().join("g.paje");
    let pattern = format!("{}/domain-*.traced", fixture("grid").display());
    let o = integrador(&[
        "-q",
        "-hierarchy",
        "hierarchies/grid.toml",
        "-ganglia",
        &pattern,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // 876 samples, less the 148 of constant inventory metrics grid.toml
    // leaves out.
    assert_eq!(count_events(&out, "PajeSetVariable"), 876 - 148);
}

#[test]
fn summary_names_sources_hosts_clocks_and_t0() {
    let d = tempdir();
    let out = d.path().join("s.paje");
    let o = integrador(&[
        "-ganglia",
        fixture("grid/domain-a.traced").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("T0 = 1795264448.000 (2026-11-21 12:34:08 UTC)"),
        "{err}"
    );
    assert!(
        err.contains("ganglia domain-a.traced: 546 records, 546 events"),
        "{err}"
    );
    assert!(
        err.contains(
            "node01.cluster.example: Machine node01.cluster.example in cluster cluster.example"
        ),
        "{err}"
    );
    assert!(err.contains("no sync file"), "{err}");
    assert!(err.lines().count() <= 25, "one screen at most:\n{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("%EventDef"));
    // T0 is recorded where pj_dump and ViTE both read it silently.
    let origin = text.lines().find_map(integrador::paje::writer::origin_of);
    assert_eq!(origin, Some(1_795_264_448_000_000_000));
}

#[test]
fn absolute_time_writes_epoch_seconds() {
    let o = integrador(&["-q", "--absolute-time", "-ganglia", &traced(), "-o", "-"]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("6 1795264448.000000000 ")),
        "epoch times expected"
    );
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let o = integrador(&["-ganglia", &traced()]);
    assert_eq!(o.status.code(), Some(2), "missing -o");
    let o = integrador(&["--frobnicate", "-o", "x"]);
    assert_eq!(o.status.code(), Some(2));
    let o = integrador(&["-ofile.paje", "-ganglia", &traced()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("-o FILE"));
    let o = integrador(&["-o", "x.paje"]);
    assert_eq!(o.status.code(), Some(2), "no input");
    let o = integrador(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "--ganglia",
        "--os",
        "--sync",
        "--hierarchy",
        "Examples",
        "Exit status",
    ] {
        assert!(help.contains(needle), "help lacks {needle}");
    }
}

#[test]
fn check_exit_codes() {
    let ok = root().join("tests/paje/ok-basic.paje");
    let bad = root().join("tests/paje/bad-pop-empty.paje");
    assert_eq!(
        integrador(&["check", ok.to_str().unwrap()]).status.code(),
        Some(0)
    );
    let o = integrador(&["check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout)
        .contains("bad-pop-empty.paje:88: error: pop of a state that has no value"));
    assert_eq!(
        integrador(&["check", "/nonexistent.paje"]).status.code(),
        Some(1)
    );
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let d = tempdir();
    let f = d.path().join("big.traced");
    let text: String = (0..200_000)
        .map(|i| {
            format!(
                "{} cpu_user node{} {}\n",
                1795264448 + i / 100,
                i % 7,
                i % 100
            )
        })
        .collect();
    std::fs::write(&f, text).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_integrador"))
        .args(["-q", "-ganglia", f.to_str().unwrap(), "-o", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    // The pipe's read end is dropped here, as `| head -c 100` does.
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
}

/// Every example of `--help` runs as printed, from a directory that holds
/// the checkout's `examples/` and `hierarchies/` (pasted into a shell on
/// a fresh clone, they are run from its top).
#[test]
fn every_help_example_runs_on_the_shipped_data() {
    let o = integrador(&["--help"]);
    let help = String::from_utf8(o.stdout).unwrap();
    let d = tempdir();
    for dir in ["examples", "hierarchies"] {
        std::os::unix::fs::symlink(root().join(dir), d.path().join(dir)).unwrap();
    }
    let bin = env!("CARGO_BIN_EXE_integrador");
    let mut ran = 0;
    // A command continues on the next line after a trailing backslash.
    let examples = help.split_once("Examples").unwrap().1.replace("\\\n", " ");
    for line in examples.lines().map(str::trim) {
        // A pipe into xargs runs integrador too (a plan's tasks).
        let command = if line.contains("| xargs") {
            line.replace("integrador ", "\"$BIN\" ")
        } else if let Some(rest) = line.strip_prefix("integrador ") {
            match ["check", "tables", "paje", "plan", "task", "gather"]
                .iter()
                .any(|c| rest.starts_with(c))
            {
                true => format!("\"$BIN\" {rest}"),
                false => format!("\"$BIN\" -q {rest}"),
            }
        } else {
            continue;
        };
        let o = std::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .env("BIN", bin)
            .current_dir(d.path())
            .output()
            .unwrap();
        // OTF2 is written by libotf2, opened at run time.
        let no_otf2 = stderr(&o).contains("needs libotf2");
        if no_otf2 && std::env::var("INTEGRADOR_REQUIRE_OTF2").as_deref() != Ok("1") {
            eprintln!("\n*** SKIPPED: `{line}`: libotf2 is not installed ***\n");
            continue;
        }
        assert!(
            o.status.success(),
            "`{line}` failed:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            stderr(&o)
        );
        ran += 1;
    }
    assert!(ran >= 9, "only {ran} examples found in:\n{help}");
}

/// A bare `integrador` shows a short usage (exit 2), not a complaint about
/// a missing option; completions and the manual page come from the same
/// definitions as `--help`.
#[test]
fn bare_command_completions_and_man_page() {
    let o = integrador(&[]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("usage: integrador") && e.contains("--help"),
        "{e}"
    );
    for shell in ["bash", "zsh", "fish"] {
        let o = integrador(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("hierarchy"),
            "{shell}"
        );
    }
    let o = integrador(&["man"]);
    assert!(o.status.success());
    let man = String::from_utf8_lossy(&o.stdout);
    assert!(
        man.contains(".TH integrador 1") && man.contains("ganglia"),
        "{man}"
    );
}

/// The summary's event count is the number of event lines `check` counts;
/// a sync file that corrects nothing is a warning; the same host under two
/// names is listed once among the uncorrected; two sources setting one
/// variable are kept apart with a note.
#[test]
fn summary_counts_and_notes_are_right() {
    let d = tempdir();
    let out = d.path().join("s.paje");
    let a = root().join("examples/grid/domain-a.traced");
    // The collector named short and long: one host.
    let short = d.path().join("short.traced");
    let text = std::fs::read_to_string(&a)
        .unwrap()
        .replace("# collector node01.cluster.example", "# collector node01");
    std::fs::write(&short, text).unwrap();
    let sync = fixture("sync/thesis-table-4.6.sync");
    let o = integrador(&[
        "-ganglia",
        a.to_str().unwrap(),
        short.to_str().unwrap(),
        "-sync",
        sync.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let events: u64 = err
        .split_once(": ")
        .and_then(|(_, r)| r.split_once(": "))
        .and_then(|(_, r)| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    let report =
        integrador::paje::check::check(std::io::BufReader::new(std::fs::File::open(&out).unwrap()))
            .unwrap();
    assert_eq!(events, report.events, "{err}");
    assert!(err.contains("corrects no clock of this run"), "{err}");
    let uncorrected = err
        .lines()
        .find(|l| l.contains("uncorrected"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(!uncorrected.contains(','), "listed once: {uncorrected}");
    assert!(
        err.contains("domain-a.traced and short.traced set the same")
            && err.contains(" (short.traced)`"),
        "{err}"
    );
}

/// Machines the sources name when they open come in natural order
/// (node2 before node10), ranks 0..n, whatever order the data has.
#[test]
fn rows_come_in_natural_order() {
    let d = tempdir();
    let os = root().join("examples/pingpong-localhost/vm.os");
    let text = std::fs::read_to_string(&os).unwrap();
    let mut files = Vec::new();
    for host in ["node10", "node2", "node1"] {
        let p = d.path().join(format!("{host}.os"));
        std::fs::write(&p, text.replace("# host vm", &format!("# host {host}"))).unwrap();
        files.push(p);
    }
    let out = d.path().join("o.paje");
    let mut args = vec!["-q", "-os"];
    args.extend(files.iter().map(|p| p.to_str().unwrap()));
    args.extend(["-o", out.to_str().unwrap()]);
    let o = integrador(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let created: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("4 "))
        .map(|l| paje_fields(l)[4].clone())
        .filter(|n| n.starts_with("node"))
        .collect();
    assert_eq!(created, ["node1", "node2", "node10"]);

    let glob = root().join("examples/deck/threads/*.rst");
    run_ok(&["-q", "-deck", glob.to_str().unwrap()], &out);
    let ranks: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("4 "))
        .map(|l| paje_fields(l)[4].clone())
        .filter(|n| n.contains(" rank "))
        .collect();
    assert_eq!(ranks.len(), 3, "{ranks:?}");
    for (i, r) in ranks.iter().enumerate() {
        assert!(r.ends_with(&format!(" rank {i}")), "{ranks:?}");
    }
}
