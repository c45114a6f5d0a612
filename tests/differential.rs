//! Differential tests against pj_dump (issue 12), on seeded mutants:
//!
//! 1. every input of the shipped examples, cut, flipped, spliced and with
//!    lines reordered, run through its source: whenever integrador exits 0
//!    the trace must be one pj_dump and our checker accept;
//! 2. our own traces mutated the same way: `integrador check` must take
//!    pj_dump 1.3.6's accept/reject decision on every one.
//!
//! CI runs a few hundred mutants; `INTEGRADOR_MUTANTS=N` runs N per part
//! for a longer campaign, `INTEGRADOR_SEED` picks another seed. Without
//! pj_dump (and INTEGRADOR_REQUIRE_PJDUMP unset) the pj_dump side is
//! skipped loudly and part 1 still checks with our checker.

mod common;

use common::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn mutants() -> usize {
    std::env::var("INTEGRADOR_MUTANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn seed() -> u64 {
    std::env::var("INTEGRADOR_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20261123)
}

/// Line boundaries of `data`.
fn lines(data: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in data.iter().enumerate() {
        if b == b'\n' {
            out.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < data.len() {
        out.push((start, data.len()));
    }
    out
}

/// One mutation of `data`; `text` inputs also get line-level mutations
/// and digit changes (times stepping back inside the reorder window).
fn mutate(rng: &mut Rng, data: &[u8], other: &[u8], text: bool) -> Vec<u8> {
    let mut d = data.to_vec();
    if d.is_empty() {
        return d;
    }
    let kinds = if text { 9 } else { 5 };
    match rng.below(kinds) {
        0 => d.truncate(rng.below(d.len())),
        1 => {
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(d.len());
                d[i] ^= 1 << rng.below(8);
            }
        }
        2 => {
            let i = rng.below(d.len());
            d[i] = [0u8, 0xff, b'\n', b' ', b'"', b'-', b'9', b'#'][rng.below(8)];
        }
        3 => {
            // Splice: a piece of another input.
            let at = rng.below(d.len());
            let from = rng.below(other.len().max(1));
            let n = rng.below(256).min(other.len().saturating_sub(from));
            d.splice(at..at, other[from..from + n].iter().copied());
        }
        4 => {
            // Overwrite a 4- or 8-byte field with an extreme value.
            let w = if rng.below(2) == 0 { 4 } else { 8 };
            if d.len() > w {
                let i = rng.below(d.len() - w);
                let v: [u8; 8] = [
                    [0xff; 8],
                    [0; 8],
                    0x7fff_ffff_ffff_ffffu64.to_le_bytes(),
                    0x8000_0000u64.to_le_bytes(),
                ][rng.below(4)];
                d[i..i + w].copy_from_slice(&v[..w]);
            }
        }
        k => {
            let ls = lines(&d);
            if ls.len() < 2 {
                return d;
            }
            let a = rng.below(ls.len());
            let b = rng.below(ls.len());
            let (la, lb) = (d[ls[a].0..ls[a].1].to_vec(), d[ls[b].0..ls[b].1].to_vec());
            match k {
                5 => {
                    // Swap two nearby lines.
                    let b = (a + 1 + rng.below(3)).min(ls.len() - 1);
                    if b <= a {
                        return d;
                    }
                    let lb = d[ls[b].0..ls[b].1].to_vec();
                    let mut out = d[..ls[a].0].to_vec();
                    out.extend_from_slice(&lb);
                    out.extend_from_slice(&d[ls[a].1..ls[b].0]);
                    out.extend_from_slice(&la);
                    out.extend_from_slice(&d[ls[b].1..]);
                    return out;
                }
                6 => {
                    // Duplicate a line elsewhere.
                    d.splice(ls[b].0..ls[b].0, la);
                }
                7 => {
                    d.drain(ls[a].0..ls[a].1);
                }
                _ => {
                    // Change one digit of a line.
                    let _ = lb;
                    let (s, e) = ls[a];
                    let digits: Vec<usize> = (s..e).filter(|&i| d[i].is_ascii_digit()).collect();
                    if !digits.is_empty() {
                        let i = digits[rng.below(digits.len())];
                        d[i] = b'0' + rng.below(10) as u8;
                    }
                }
            }
        }
    }
    d
}

fn example(rel: &str) -> PathBuf {
    root().join("examples").join(rel)
}

/// The sources of part 1: an option, the input to mutate, whether it is
/// text, and the fixed arguments around it.
fn cases() -> Vec<(&'static str, PathBuf, bool, Vec<String>)> {
    let pp = |f: &str| example(&format!("pingpong-localhost/{f}"));
    let nodes = pp("mpi.nodes").to_string_lossy().into_owned();
    vec![
        ("-ganglia", example("grid/domain-a.traced"), true, vec![]),
        ("-ganglia", pp("ganglia.traced"), true, vec![]),
        ("-os", pp("vm.os"), true, vec![]),
        (
            "-mpi",
            pp("mpi_pingpong.clog2"),
            false,
            vec!["-mpinodes".into(), nodes],
        ),
        (
            "-deck",
            example("deck/threads/rastro-0-0.rst"),
            false,
            vec![],
        ),
        (
            "-deck",
            example("deck/akypuera/rastro-0-0.rst"),
            false,
            vec!["--deck-map".into(), "akypuera".into()],
        ),
        ("-pcp", pp("pcp/vm.0"), false, vec![]),
        ("-pcp", pp("pcp/vm.meta"), false, vec![]),
    ]
}

/// Writes the mutant where its source expects it: libRastro files keep
/// their name (it carries the ids) beside their untouched siblings, a PCP
/// file its archive's other files.
fn place(dir: &Path, original: &Path, bytes: &[u8]) -> (PathBuf, Vec<String>) {
    let name = original.file_name().unwrap();
    let parent = original.parent().unwrap();
    let mut extra = Vec::new();
    let target = dir.join(name);
    let ext = original
        .extension()
        .map(|e| e.to_string_lossy().into_owned());
    match ext.as_deref() {
        Some("rst") | Some("0") | Some("meta") => {
            for e in fs::read_dir(parent).unwrap().flatten() {
                let p = e.path();
                if p.file_name() != Some(name) && p.is_file() {
                    fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
                }
            }
            if ext.as_deref() == Some("rst") {
                extra.push(format!("{}/*.rst", dir.display()));
            }
        }
        _ => {}
    }
    fs::write(&target, bytes).unwrap();
    if extra.is_empty() {
        let arg = if matches!(ext.as_deref(), Some("0") | Some("meta")) {
            dir.join(original.file_stem().unwrap())
        } else {
            target.clone()
        };
        extra.push(arg.to_string_lossy().into_owned());
    }
    (target, extra)
}

#[test]
fn exit_0_means_a_trace_pj_dump_accepts() {
    let n = match mutants() {
        0 => 320,
        n => n,
    };
    let pj = have_pj_dump();
    let mut rng = Rng(seed());
    let cases = cases();
    let originals: Vec<Vec<u8>> = cases.iter().map(|c| fs::read(&c.1).unwrap()).collect();
    let (mut accepted, mut refused) = (0, 0);
    let mut bad = Vec::new();
    for i in 0..n {
        let c = i % cases.len();
        let (option, path, text, fixed) = &cases[c];
        let other = &originals[(c + 1) % cases.len()];
        let bytes = mutate(&mut rng, &originals[c], other, *text);
        let d = tempdir();
        let (_, words) = place(d.path(), path, &bytes);
        let out = d.path().join("out.paje");
        let mut args: Vec<String> = vec!["-q".into(), option.to_string()];
        args.extend(words);
        args.extend(fixed.iter().cloned());
        args.extend(["-o".into(), out.to_string_lossy().into_owned()]);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_integrador"));
        cmd.args(&args);
        // Hostile input runs under an address-space cap (as `ulimit -v`):
        // a reader that grew without bound fails here instead of taking
        // the machine.
        // SAFETY: setrlimit touches only the child, before exec.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                let cap = libc::rlimit {
                    rlim_cur: 1 << 30,
                    rlim_max: 1 << 30,
                };
                libc::setrlimit(libc::RLIMIT_AS, &cap);
                Ok(())
            });
        }
        let o = cmd.output().unwrap();
        match o.status.code() {
            Some(0) => {
                accepted += 1;
                let ours = integrador(&["check", out.to_str().unwrap()]);
                let theirs = if pj { pj_dump_accepts(&out) } else { None };
                if !ours.status.success() || theirs == Some(false) {
                    let keep = std::env::temp_dir().join(format!("integrador-mutant-{i}"));
                    let _ = fs::remove_dir_all(&keep);
                    let _ = Command::new("cp")
                        .arg("-r")
                        .arg(d.path())
                        .arg(&keep)
                        .status();
                    bad.push(format!(
                        "mutant {i} ({option} {}): exit 0 but check={} pj_dump={theirs:?}; kept in {}\n{}",
                        path.display(),
                        ours.status.success(),
                        keep.display(),
                        String::from_utf8_lossy(&ours.stdout).lines().take(3).collect::<Vec<_>>().join("\n")
                    ));
                }
            }
            Some(1) | Some(2) => {
                refused += 1;
                let e = stderr(&o);
                assert_eq!(e.lines().count(), 1, "mutant {i}: one line: {e}");
                assert!(!out.exists(), "mutant {i}: no output left");
            }
            other => panic!("mutant {i} ({option}): exit {other:?}: {}", stderr(&o)),
        }
    }
    eprintln!(
        "{n} input mutants: {accepted} exit 0, {refused} refused; {} invalid",
        bad.len()
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Our example traces, integrated once per test run.
fn traces(dir: &Path) -> Vec<Vec<u8>> {
    let pp = |f: &str| {
        example(&format!("pingpong-localhost/{f}"))
            .to_string_lossy()
            .into_owned()
    };
    let runs: Vec<Vec<String>> = vec![
        vec![
            "-hierarchy".into(),
            root()
                .join("hierarchies/mpi+os+ganglia+pcp.toml")
                .to_string_lossy()
                .into_owned(),
            "-mpi".into(),
            pp("mpi_pingpong.clog2"),
            "-mpinodes".into(),
            pp("mpi.nodes"),
            "-ganglia".into(),
            pp("ganglia.traced"),
            "-os".into(),
            pp("vm.os"),
        ],
        vec![
            "-deck".into(),
            format!("{}/*.rst", example("deck/threads").display()),
        ],
    ];
    runs.iter()
        .enumerate()
        .map(|(i, args)| {
            let out = dir.join(format!("t{i}.paje"));
            let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
            a.extend(["-q", "-o", out.to_str().unwrap()]);
            let o = integrador(&a);
            assert!(o.status.success(), "{}", stderr(&o));
            fs::read(out).unwrap()
        })
        .collect()
}

#[test]
fn the_checker_takes_pj_dumps_decision() {
    if !have_pj_dump() {
        return;
    }
    let n = match mutants() {
        0 => 400,
        n => n,
    };
    let d = tempdir();
    let originals = traces(d.path());
    let mut rng = Rng(seed() ^ 0x5eed);
    let mut differ = Vec::new();
    let (mut rejected, mut both, mut undefined) = (0, 0, 0);
    let path = d.path().join("m.paje");
    for i in 0..n {
        let c = i % originals.len();
        let other = &originals[(c + 1) % originals.len()];
        let bytes = mutate(&mut rng, &originals[c], other, true);
        fs::write(&path, &bytes).unwrap();
        let theirs = pj_dump_accepts(&path).unwrap_or(true);
        let report = integrador::paje::check::check(std::io::Cursor::new(&bytes));
        // A time that is no number is read uninitialised by pj_dump: its
        // decision is chance (README: deliberate differences).
        if report.as_ref().is_ok_and(|r| r.garbage_times > 0) {
            undefined += 1;
            continue;
        }
        let ours = report.map(|r| r.accepted()).unwrap_or(false);
        if !theirs {
            rejected += 1;
        }
        if ours == theirs {
            both += 1;
        } else {
            let keep = std::env::temp_dir().join(format!("integrador-trace-mutant-{i}.paje"));
            fs::write(&keep, &bytes).unwrap();
            differ.push(format!(
                "mutant {i}: pj_dump accepts={theirs}, check accepts={ours}; kept in {}",
                keep.display()
            ));
        }
    }
    eprintln!(
        "{n} trace mutants: {undefined} with a time that is no number (pj_dump decides by chance); of the rest, pj_dump rejects {rejected}; same decision on {both}"
    );
    assert!(
        undefined < n / 4,
        "too few comparable mutants: {undefined} of {n}"
    );
    assert!(
        differ.is_empty(),
        "{} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}
