//! Broken trace.dat files (the corpus in `tests/corpus/tracedat/`, also
//! the fuzz seeds): each fails with one line naming the file and what is
//! wrong, exit 1, no output left. Made from the real captures; run with
//! `INTEGRADOR_REGEN_CORPUS=1` to rewrite the corpus after changing them.

mod common;

use common::*;
use std::path::PathBuf;

const CAP: &str = "sched/pingpong-pipe";

fn corpus() -> PathBuf {
    root().join("tests/corpus/tracedat")
}

/// (file name, bytes, expected message part).
fn cases() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let v7 = std::fs::read(fixture(&format!("{CAP}/trace.dat"))).unwrap();
    let v6 = std::fs::read(fixture(&format!("{CAP}/trace-v6.dat"))).unwrap();
    assert!(v6.len() > 4096);
    let mut version = v6[..4096].to_vec();
    version[10] = b'9';
    let mut chunk = v7.clone();
    // The first CPU's first compressed chunk (its data starts at a page
    // boundary; 4-byte count, 8-byte chunk header, then the zstd frame).
    let cpu0 = 0x21000;
    for b in &mut chunk[cpu0 + 12..cpu0 + 40] {
        *b ^= 0xa5;
    }
    vec![
        ("cut-header.dat", v7[..300].to_vec(), "byte "),
        // Inside the second CPU's data (which starts at 0x26000).
        ("cut-data.dat", v7[..160_000].to_vec(), "ends inside"),
        (
            "version-9.dat",
            version,
            "trace.dat version 9, expected 6 or 7",
        ),
        ("bad-chunk.dat", chunk, "zstd"),
    ]
}

#[test]
fn broken_files_fail_with_one_line() {
    let regen = std::env::var_os("INTEGRADOR_REGEN_CORPUS").is_some();
    let d = tempdir();
    for (name, bytes, want) in cases() {
        if regen {
            std::fs::create_dir_all(corpus()).unwrap();
            std::fs::write(corpus().join(name), &bytes).unwrap();
        }
        let path = corpus().join(name);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            bytes,
            "{name}: corpus out of date"
        );
        let out = d.path().join("x.paje");
        let o = integrador(&[
            "-os",
            path.to_str().unwrap(),
            "--os-host",
            "vm",
            "-o",
            out.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(
            err.contains(name) && err.contains(want),
            "{name}: expected `{want}` in {err}"
        );
        assert!(!out.exists(), "{name}: output left");
    }
}
