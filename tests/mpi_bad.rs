//! Broken MPE logs (the corpus in `tests/corpus/clog/`, also the fuzz
//! target's seeds): each gives exit 1 and one line naming the byte offset
//! and what was expected, and leaves no output behind.
//!
//! The corpus is made from a small valid log built field by field; run
//! with `INTEGRADOR_REGEN_CORPUS=1` to rewrite it after changing the cases.

mod clog_build;
mod common;
use clog_build::*;
use common::*;
use std::path::PathBuf;

fn corpus() -> PathBuf {
    root().join("tests/corpus/clog")
}

/// A valid little log: three 256-byte blocks, big-endian.
fn valid() -> Vec<u8> {
    let mut b = Clog2::new(true, 256);
    b.comm(0.0, 0, 0, 0, 0, "n1");
    b.comm(0.0, 0, 1, 1, 0, "n1");
    b.edef(0.0, 5000, "white", "integrador_anchor", "%s");
    b.cargo(0.00001, 0, 5000, "1795265512.000010 100");
    b.bare(0.001, 0, 600);
    b.bare(0.002, 0, 601);
    b.sdef(0.003, 300, 600, 601, "red", "work");
    b.comm_table = vec![(0, 1, "n1"), (1, 1, "n1")];
    b.finish()
}

fn replace(mut v: Vec<u8>, from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let at = v
        .windows(from.len())
        .position(|w| w == from)
        .expect("pattern");
    v[at..at + from.len()].copy_from_slice(to);
    v
}

/// Replaces text inside the NUL-padded preamble (lengths may differ).
fn pre_replace(v: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let pre = &v[..1024];
    let at = pre
        .windows(from.len())
        .position(|w| w == from)
        .expect("pattern");
    let mut out = pre[..at].to_vec();
    out.extend_from_slice(to);
    out.extend_from_slice(&pre[at + from.len()..]);
    out.resize(1024, 0);
    out.extend_from_slice(&v[1024..]);
    out
}

fn set_i32(mut v: Vec<u8>, at: usize, x: i32) -> Vec<u8> {
    v[at..at + 4].copy_from_slice(&x.to_be_bytes());
    v
}

/// Offset of the n-th record header of the first block (they are laid
/// out back to back from byte 1024).
fn cases() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let v = valid();
    let fptr = v.len() - 4 - 2 * 40;
    // The BAREEVT at 0.001 s.
    let bare_at = v
        .windows(8)
        .position(|w| w == 0.001f64.to_be_bytes())
        .unwrap();
    // A block filled with eight 32-byte BAREEVTs and no ENDBLOCK.
    let mut no_endblock = v[..1024].to_vec();
    for i in 0..8 {
        no_endblock.extend_from_slice(&(f64::from(i) * 0.001).to_be_bytes());
        for x in [0i32, 0, 0, 5, 600, 0] {
            no_endblock.extend_from_slice(&x.to_be_bytes());
        }
    }
    vec![
        ("truncated-preamble.clog2", v[..500].to_vec(), "byte 500: file ends inside the 1024-byte preamble"),
        ("truncated-block.clog2", v[..1124].to_vec(), "byte 1124: file ends inside the block that starts at byte 1024: 100 of 256 bytes"),
        ("bad-version.clog2", replace(v.clone(), b"CLOG-02.44", b"CLOG-02.40"), "byte 0: bad preamble: version `CLOG-02.40` is not supported"),
        ("no-byte-order.clog2", replace(v.clone(), b"is_big_endian=", b"is_bog_endian="), "byte 1024: bad preamble: no `is_big_endian=` token"),
        ("bad-byte-order.clog2", replace(v.clone(), b"TRUE \0is_f", b"MAYBE\0is_f"), "bad preamble: `is_big_endian=` is `MAYBE`, expected TRUE or FALSE"),
        ("block-size-0.clog2", pre_replace(&v, b"block_size=\x00256\x00", b"block_size=\x000\x00"), "block_size=0 is outside 24..=268435456"),
        ("absurd-block-size.clog2", pre_replace(&v, b"block_size=\x00256\x00", b"block_size=\x00999\x00"), "commtable_fptr=1792 is not 1024 + a whole number of 999-byte blocks"),
        ("huge-block-size.clog2", pre_replace(&v, b"block_size=\x00256\x00", b"block_size=\x0099999999999\x00"), "block_size=99999999999 is outside 24..=268435456"),
        ("unknown-record.clog2", set_i32(v.clone(), bare_at + 20, 42), "unknown record type 42"),
        ("negative-record.clog2", set_i32(v.clone(), 1024 + 20, -7), "byte 1024: unknown record type -7"),
        ("no-endblock.clog2", no_endblock, "byte 1280: record header runs past the end of the block at byte 1280 (no ENDBLOCK record?)"),
        ("no-endlog.clog2", {
            let at = v.windows(8).position(|w| w == 100000000f64.to_be_bytes()).unwrap();
            set_i32(v.clone(), at + 20, 1)
        }, "no ENDLOG record before the communicator table at byte"),
        ("absurd-comm-count.clog2", set_i32(v.clone(), fptr, i32::MAX), "communicator table count 2147483647 is outside 0..=16777216"),
        ("truncated-comm-table.clog2", v[..v.len() - 20].to_vec(), "file ends inside communicator table entry 1 of 2"),
        ("bad-anchor.clog2", replace(v.clone(), b"1795265512.000010 100", b"yesterday at noon 100"), "integrador_anchor event of rank 0: cargo `yesterday at noon 100` is not `<epoch_seconds>.<microseconds> <pid>`"),
        ("nan-time.clog2", { let mut x = v.clone(); x[bare_at..bare_at + 8].copy_from_slice(&f64::NAN.to_be_bytes()); x }, "time NaN is not a finite number of seconds"),
        ("legacy-bad-length.clog", [legacy_record(0.5, 1, 0, &legacy_body(&[600, 0, 1, 0], Some(("", 16)))), legacy_record(0.5, 1, 0, &legacy_body(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], None))].concat(), "byte 56: record type 1 has length 8 (×8 bytes), expected 7"),
        ("legacy-truncated.clog", legacy_record(0.5, 1, 0, &legacy_body(&[600, 0, 1, 0], Some(("", 16))))[..40].to_vec(), "byte 0: file ends inside a record of type 1"),
        ("legacy-no-endlog.clog", legacy_record(0.5, 1, 0, &legacy_body(&[600, 0, 1, 0], Some(("", 16)))), "byte 56: file ends before the ENDLOG record"),
    ]
}

#[test]
fn broken_logs_fail_with_their_byte_offset() {
    let regen = std::env::var("INTEGRADOR_REGEN_CORPUS").as_deref() == Ok("1");
    let out = tempdir();
    for (name, bytes, want) in cases() {
        let path = corpus().join(name);
        if regen {
            std::fs::write(&path, &bytes).unwrap();
        }
        let on_disk = std::fs::read(&path)
            .unwrap_or_else(|_| panic!("{name} missing: INTEGRADOR_REGEN_CORPUS=1"));
        assert_eq!(on_disk, bytes, "{name} is stale: INTEGRADOR_REGEN_CORPUS=1");
        let trace = out.path().join("x.paje");
        let nodes = out.path().join("nodes");
        std::fs::write(&nodes, "n1:4\n").unwrap();
        let o = integrador(&[
            "-mpi",
            path.to_str().unwrap(),
            "-mpinodes",
            nodes.to_str().unwrap(),
            "--mpi-start",
            "1795265512",
            "-o",
            trace.to_str().unwrap(),
        ]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
        assert!(
            err.contains(&format!("{name}: ")),
            "{name} names the file: {err}"
        );
        assert!(err.contains(want), "{name}: expected `{want}` in: {err}");
        assert!(err.contains("byte "), "{name} names a byte offset: {err}");
        assert!(!trace.exists());
        assert_eq!(
            std::fs::read_dir(out.path()).unwrap().count(),
            1,
            "{name}: only the nodes file is left"
        );
    }
    // The valid base decodes, so every failure above is the mutation's.
    let path = out.path().join("valid.clog2");
    std::fs::write(&path, valid()).unwrap();
    let trace = out.path().join("ok.paje");
    let o = integrador(&[
        "-mpi",
        path.to_str().unwrap(),
        "-o",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_valid(&trace);
}

/// No input makes the decoders panic: arbitrary bytes, and every prefix
/// and single-byte corruption of a real log.
#[test]
fn decoders_never_panic() {
    use integrador_clog::{Clog2Reader, LegacyReader};
    fn drain(bytes: &[u8]) {
        if let Ok(mut r) = Clog2Reader::new(bytes) {
            while let Ok(Some(_)) = r.next_record() {}
            let _ = r.comm_table();
        }
        let mut r = LegacyReader::new(bytes);
        while let Ok(Some(_)) = r.next_record() {}
    }
    let real = std::fs::read(fixture("clog2/ring/ring.clog2")).unwrap();
    for cut in (0..real.len()).step_by(97) {
        drain(&real[..cut]);
    }
    let v = valid();
    for i in 0..v.len() {
        for x in [0x00, 0xff, 0x80] {
            let mut m = v.clone();
            m[i] = x;
            drain(&m);
        }
    }
    proptest::proptest!(|(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000))| {
        drain(&bytes);
        let mut with_preamble = v[..1024].to_vec();
        with_preamble.extend_from_slice(&bytes);
        drain(&with_preamble);
    });
}
