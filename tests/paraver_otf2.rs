//! The same run for the other viewer families (`docs/output.md`):
//! Paraver (`--format paraver`, or `-o FILE.prv`) and OTF2 (`--format
//! otf2`). Every shipped example and fixture run is written three ways;
//! the real readers accept each, and what they read back equals pj_dump
//! of the Pajé trace (`tests/viewers_same.py`):
//!
//! - OTF2: `otf2-print` (Debian `otf2-tools`) prints the archive without
//!   an error, and the OTF2 Python reader (Debian `python3-otf2`, in the
//!   system's Python) reads its events back;
//! - Paraver: BSC's `paramedir` (built from the public paraver-kernel
//!   source; `$INTEGRADOR_PARAMEDIR` or on the PATH) loads the trace
//!   without a record error and computes a state profile
//!   (`tests/paraver/state_profile.cfg`), and a reader in the test script
//!   reads the records, the `.pcf` and the `.row` back.
//!
//! A missing reader is skipped loudly; `.ci/run` requires them
//! (INTEGRADOR_REQUIRE_OTF2=1, INTEGRADOR_REQUIRE_PARAMEDIR=1).

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn required(var: &str) -> bool {
    std::env::var(var).as_deref() == Ok("1")
}

fn skip(var: &str, what: &str) -> bool {
    if required(var) {
        panic!("{what} is required ({var}=1) but missing");
    }
    eprintln!("\n*** SKIPPED: {what} missing; NOT checked by it ***\n");
    false
}

/// The Python with the OTF2 reader: Debian's `python3-otf2` is in the
/// system's Python, not in a venv.
fn otf2_python() -> String {
    std::env::var("INTEGRADOR_OTF2_PYTHON").unwrap_or_else(|_| "/usr/bin/python3".into())
}

fn have_otf2() -> bool {
    let print = Command::new("otf2-print").arg("--version").output().is_ok();
    let reader = Command::new(otf2_python())
        .args(["-c", "import otf2"])
        .output()
        .is_ok_and(|o| o.status.success());
    (print && reader)
        || skip(
            "INTEGRADOR_REQUIRE_OTF2",
            "otf2-print or python3-otf2 (apt-get install otf2-tools python3-otf2)",
        )
}

fn paramedir() -> Option<PathBuf> {
    let p = std::env::var_os("INTEGRADOR_PARAMEDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| "paramedir".into());
    let found = Command::new(&p).arg("--help").output().is_ok();
    if found {
        Some(p)
    } else {
        skip(
            "INTEGRADOR_REQUIRE_PARAMEDIR",
            "BSC's paramedir ($INTEGRADOR_PARAMEDIR)",
        );
        None
    }
}

/// Writes the run `args` as `name.paje`, `name.prv` and `name.otf2/`.
fn write_three(args: &[String], dir: &Path, name: &str, otf2: bool) -> (PathBuf, PathBuf, PathBuf) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let paje = dir.join(format!("{name}.paje"));
    let prv = dir.join(format!("{name}.prv"));
    let archive = dir.join(format!("{name}.otf2"));
    let mut outs = vec![
        vec!["-o", paje.to_str().unwrap()],
        vec!["-o", prv.to_str().unwrap()],
    ];
    if otf2 {
        outs.push(vec!["--format", "otf2", "-o", archive.to_str().unwrap()]);
    }
    for out in outs {
        let mut all = args.clone();
        all.push("-q");
        all.extend(out);
        let o = integrador(&all);
        assert!(o.status.success(), "{name} {all:?}: {}", stderr(&o));
    }
    (paje, prv, archive)
}

/// paramedir loads the trace (no record it could not read) and writes
/// the state profile.
fn profile(paramedir: &Path, prv: &Path, name: &str) -> PathBuf {
    let out = prv.with_extension("profile.txt");
    let cfg = root().join("tests/paraver/state_profile.cfg");
    let o = Command::new(paramedir)
        .arg(prv)
        .arg(&cfg)
        .arg(&out)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{name}: paramedir failed:\n{said}");
    assert!(
        !said.contains("Error") && !said.contains("Unkwnown"),
        "{name}: paramedir said:\n{said}"
    );
    assert!(out.is_file(), "{name}: paramedir wrote no profile:\n{said}");
    out
}

fn otf2_print_accepts(anchor: &Path, name: &str) {
    let o = Command::new("otf2-print").arg(anchor).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && err.trim().is_empty(),
        "{name}: otf2-print said:\n{err}"
    );
    let g = Command::new("otf2-print")
        .arg("-G")
        .arg(anchor)
        .output()
        .unwrap();
    assert!(
        g.status.success(),
        "{name}: otf2-print -G: {}",
        String::from_utf8_lossy(&g.stderr)
    );
}

/// Writes the run three ways and checks that the readers read each back
/// as pj_dump reads the Pajé trace.
fn reads_the_same(name: &str, args: &[String], dir: &Path, otf2: bool, paramedir: Option<&Path>) {
    let (paje, prv, archive) = write_three(args, dir, name, otf2);
    let dump = dir.join(format!("{name}.dump"));
    std::fs::write(&dump, pj_dump_lines(&paje).unwrap().join("\n")).unwrap();
    let mut check: Vec<String> = vec![
        root().join("tests/viewers_same.py").display().to_string(),
        dump.display().to_string(),
        "--prv".into(),
        prv.display().to_string(),
    ];
    if otf2 {
        let anchor = archive.join("traces.otf2");
        otf2_print_accepts(&anchor, name);
        check.extend(["--otf2".into(), anchor.display().to_string()]);
    }
    if let Some(p) = paramedir {
        check.extend([
            "--profile".into(),
            profile(p, &prv, name).display().to_string(),
        ]);
    }
    // The script reads OTF2 with the system's Python; without OTF2 any
    // python3 does.
    let py = if otf2 {
        otf2_python()
    } else {
        "python3".into()
    };
    let o = Command::new(py).args(&check).output().unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{name}:\n{said}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    eprintln!("{name}:\n{said}");
}

#[test]
fn every_run_reads_the_same_in_paraver_and_otf2_as_in_pj_dump() {
    if !have_pj_dump() {
        return;
    }
    let otf2 = have_otf2();
    let paramedir = paramedir();
    let d = tempdir();
    for (name, args) in fixture_runs() {
        reads_the_same(name, &args, d.path(), otf2, paramedir.as_deref());
    }
}

/// A location with more events than one of libotf2's chunks holds: its
/// chunks are written out as they fill (`src/otf2/pool.rs`), and the
/// archive still reads back as pj_dump reads the Pajé trace. So does the
/// `.prv`, whose records wait behind nothing here.
#[test]
fn a_location_longer_than_a_chunk_is_written_as_it_goes() {
    if !have_pj_dump() {
        return;
    }
    let otf2 = have_otf2();
    let d = tempdir();
    let traced = d.path().join("long.traced");
    let mut text = String::from("# collector node1\n# cluster grid\n");
    let mut v: u64 = 7;
    for t in 0..60_000u64 {
        for m in [
            "cpu_user",
            "cpu_system",
            "load_one",
            "mem_free",
            "bytes_in",
            "bytes_out",
        ] {
            v = (v * 1_103_515_245 + 12_345) % 2_147_483_648;
            text.push_str(&format!(
                "{}.{:03} {m} node1 {}.{:02}\n",
                1_795_265_500 + t / 10,
                (t % 10) * 100,
                v % 1000,
                v % 100
            ));
        }
    }
    std::fs::write(&traced, text).unwrap();
    let args = vec!["-ganglia".to_string(), traced.display().to_string()];
    reads_the_same("long", &args, d.path(), otf2, paramedir().as_deref());
    if otf2 {
        let biggest = std::fs::read_dir(d.path().join("long.otf2/traces"))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .max()
            .unwrap();
        assert!(
            biggest > 4 << 20,
            "no location past one chunk: {biggest} bytes"
        );
    }
}

#[test]
fn the_same_inputs_give_the_same_bytes() {
    let (_, args) = fixture_runs().into_iter().next().unwrap();
    let otf2 = have_otf2();
    let (a, b) = (tempdir(), tempdir());
    write_three(&args, a.path(), "run", otf2);
    write_three(&args, b.path(), "run", otf2);
    let mut files: Vec<String> = ["run.prv", "run.pcf", "run.row"].map(String::from).to_vec();
    if otf2 {
        files.push("run.otf2/traces.def".into());
        for e in std::fs::read_dir(a.path().join("run.otf2/traces")).unwrap() {
            files.push(format!(
                "run.otf2/traces/{}",
                e.unwrap().file_name().to_string_lossy()
            ));
        }
        // libotf2 gives every archive a random trace identifier (its own
        // mark of a trace's identity, with no call to set it): the anchor
        // file says the same but for that.
        let anchor = |d: &Path| {
            let o = Command::new("otf2-print")
                .arg("-A")
                .arg(d.join("run.otf2/traces.otf2"))
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.lines()
                .filter(|l| !l.starts_with("Trace identifier"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(anchor(a.path()), anchor(b.path()));
    }
    assert!(files.len() > 4 || !otf2, "no event files: {files:?}");
    for f in files {
        let (x, y) = (
            std::fs::read(a.path().join(&f)).unwrap(),
            std::fs::read(b.path().join(&f)).unwrap(),
        );
        assert!(x == y, "{f} differs between two runs");
    }
}

#[test]
fn format_mistakes_are_usage_errors_and_leave_nothing() {
    let d = tempdir();
    let clog = root().join("examples/pingpong-localhost/mpi_pingpong.clog2");
    let nodes = root().join("examples/pingpong-localhost/mpi.nodes");
    let base = [
        "-mpi",
        clog.to_str().unwrap(),
        "-mpinodes",
        nodes.to_str().unwrap(),
    ];
    let prv = d.path().join("x.prv");
    // A FIFO cannot take the header, written last: refused before it is
    // opened (opening it would wait for a reader).
    let fifo = d.path().join("fifo.prv");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["-o", fifo.to_str().unwrap()], "regular file"),
        (vec!["--format", "paraver", "-o", "-"], "not `-`"),
        (vec!["--format", "otf2", "-o", "-"], "not `-`"),
        (
            vec!["--format", "paraver", "-o", "x.paje"],
            "names the .prv",
        ),
        (
            vec!["--from", "+1s", "-o", prv.to_str().unwrap()],
            "whole run",
        ),
        (vec!["--format", "nonsense", "-o", "x"], "nonsense"),
    ];
    for (extra, says) in cases {
        let mut all = base.to_vec();
        all.extend(extra.iter().copied());
        let o = integrador(&all);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{extra:?}: {}", stderr(&o));
    }
    // A directory that is not an archive of ours is left as it is.
    let theirs = d.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("notes.txt"), "mine").unwrap();
    let mut all = base.to_vec();
    all.extend(["--format", "otf2", "-o", theirs.to_str().unwrap()]);
    let o = integrador(&all);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(theirs.join("notes.txt")).unwrap(),
        "mine"
    );
    // The .pcf beside the .prv is never an input.
    let input = d.path().join("y.pcf");
    std::fs::copy(
        root().join("examples/pingpong-localhost/ganglia.traced"),
        &input,
    )
    .unwrap();
    let before = std::fs::read(&input).unwrap();
    let y = d.path().join("y.prv");
    let o = integrador(&[
        "-ganglia",
        input.to_str().unwrap(),
        "-o",
        y.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(&input).unwrap(), before);
    assert!(!y.exists());
    // A run that fails on its input leaves none of the three files.
    let bad = d.path().join("bad.clog2");
    std::fs::write(&bad, b"not a clog2 file at all, far too short").unwrap();
    let o = integrador(&[
        "-mpi",
        bad.to_str().unwrap(),
        "-mpinodes",
        nodes.to_str().unwrap(),
        "-o",
        prv.to_str().unwrap(),
    ]);
    assert_ne!(o.status.code(), Some(0));
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        !left.iter().any(|f| {
            let f = f.to_string_lossy();
            f.starts_with('x') || f.contains(".tmp") || f == "y.prv" || f == "y.row"
        }),
        "left behind: {left:?}"
    );
}

#[test]
fn a_second_run_replaces_an_archive_of_ours() {
    if !have_otf2() {
        return;
    }
    let (_, args) = fixture_runs().into_iter().next().unwrap();
    let d = tempdir();
    write_three(&args, d.path(), "run", true);
    let (_, _, archive) = write_three(&args, d.path(), "run", true);
    assert!(archive.join("traces.otf2").is_file());
    assert!(archive.join(integrador::outputs::OTF2_MARKER).is_file());
}

/// The Paraver check fails where BSC's reader would: a record out of
/// time order, a thread the header does not have, a state the `.pcf` does
/// not name (each on a copy of a good trace).
#[test]
fn the_paraver_check_rejects_a_damaged_trace() {
    if !have_pj_dump() {
        return;
    }
    let (_, args) = fixture_runs().into_iter().next().unwrap();
    let d = tempdir();
    let (paje, prv, _) = write_three(&args, d.path(), "run", false);
    let dump = d.path().join("run.dump");
    std::fs::write(&dump, pj_dump_lines(&paje).unwrap().join("\n")).unwrap();
    let check = |prv: &Path| {
        Command::new("python3")
            .arg(root().join("tests/viewers_same.py"))
            .arg(&dump)
            .arg("--prv")
            .arg(prv)
            .output()
            .unwrap()
    };
    assert!(check(&prv).status.success());
    let text = std::fs::read_to_string(&prv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The first and the last record swapped; a thread number past the
    // last; a state the .pcf has not.
    let mut swapped = lines.clone();
    let n = swapped.len() - 1;
    swapped.swap(1, n);
    let state = lines.iter().position(|l| l.starts_with("1:")).unwrap();
    let mut unknown_thread = lines.clone();
    let bad_thread = lines[state].replacen(":1:", ":99:", 2);
    unknown_thread[state] = &bad_thread;
    let mut unknown_state = lines.clone();
    let bad_state = format!("{}:999", lines[state].rsplit_once(':').unwrap().0);
    unknown_state[state] = &bad_state;
    for (what, body) in [
        ("order", swapped),
        ("thread", unknown_thread),
        ("state", unknown_state),
    ] {
        let copy = d.path().join(format!("{what}.prv"));
        std::fs::write(&copy, body.join("\n") + "\n").unwrap();
        for ext in ["pcf", "row"] {
            std::fs::copy(prv.with_extension(ext), copy.with_extension(ext)).unwrap();
        }
        let o = check(&copy);
        assert!(
            !o.status.success(),
            "{what}: a damaged trace passed:\n{}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
}

/// ViTE reads OTF2 too: it opens the shipped example's archive and draws
/// its locations, their states and the machine's metrics. What it says
/// is only what ViTE 1.2 does not implement (`docs/output.md`): string
/// parameters, and communicators made of a group of ranks (the form OTF2
/// defines and Score-P writes), so it draws no messages.
#[test]
fn vite_draws_the_otf2_archive() {
    if !have_otf2() || !have_vite() {
        return;
    }
    let d = tempdir();
    let ex = root().join("examples/pingpong-localhost");
    let archive = d.path().join("run.otf2");
    let o = integrador(&[
        "-mpi",
        ex.join("mpi_pingpong.clog2").to_str().unwrap(),
        "-mpinodes",
        ex.join("mpi.nodes").to_str().unwrap(),
        "-ganglia",
        ex.join("ganglia.traced").to_str().unwrap(),
        "--format",
        "otf2",
        "-q",
        "-o",
        archive.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (said, _, picture) = vite(&archive.join("traces.otf2"));
    // Its complaints: only what it does not implement.
    assert!(
        said.contains("0 errors and 0 warnings"),
        "ViTE said\n{said}"
    );
    let known = [
        "0 errors and 0 warnings",
        "callback_ParameterString not implemented",
        "cannot find rank",
    ];
    for line in said.lines() {
        let l = line.to_lowercase();
        if l.contains("warning") || l.contains("error") || l.contains("implemented") {
            assert!(
                known.iter().any(|k| line.contains(k)) || line.trim() == "Not yet implemented",
                "ViTE said something new: {line}\n{said}"
            );
        }
    }
    for name in ["12628 rank 0", "12629 rank 1", "grid/cluster/vm"] {
        assert!(picture.contains(name), "no {name} in ViTE's picture");
    }
    // The metrics' curves are labelled with their range; the states are
    // rectangles, hundreds of them (a handful frame the containers).
    assert!(
        picture.contains("max: "),
        "no metric curve in ViTE's picture"
    );
    let rects = picture.matches("<rect").count();
    assert!(rects > 300, "{rects} rectangles: ViTE drew no states");
}
