//! Broken libRastro files (the corpus in `tests/corpus/rastro/`, also the
//! fuzz seeds): each fails with one line naming the file and the byte
//! offset, exit 1, no output left; a file cut short (a crashed writer) is
//! read up to the cut and reported, as the format's reader does.
//!
//! The corpus is made from a real fixture file; run with
//! `INTEGRADOR_REGEN_CORPUS=1` to rewrite it after changing the cases.

mod common;

use common::*;
use integrador_rastro::{Record, RstReader};
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    root().join("tests/corpus/rastro")
}

/// The real rank-0 file of the DECK ping-pong, and its records' (offset,
/// type).
fn valid() -> (Vec<u8>, Vec<(usize, u16)>) {
    let bytes = std::fs::read(fixture("rastro/deck-pingpong/rastro-0-0.rst")).unwrap();
    let mut r = RstReader::new(&bytes[..]).unwrap();
    let mut rec = Record::default();
    let mut at = Vec::new();
    while r.next_into(&mut rec).unwrap() {
        at.push((rec.offset as usize, rec.ty));
    }
    (bytes, at)
}

/// Runs `-deck FILE -o TRACE`: the status and stderr.
fn deck(file: &Path, trace: &Path) -> (std::process::Output, String) {
    let o = integrador(&[
        "-deck",
        file.to_str().unwrap(),
        "-o",
        trace.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    (o, err)
}

fn header_at(v: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(v[at..at + 4].try_into().unwrap())
}

fn set_u32(mut v: Vec<u8>, at: usize, x: u32) -> Vec<u8> {
    v[at..at + 4].copy_from_slice(&x.to_le_bytes());
    v
}

fn cases() -> Vec<(&'static str, Vec<u8>, String)> {
    let (v, at) = valid();
    let find = |ty: u16| at.iter().find(|r| r.1 == ty).unwrap().0;
    let (r101, r401) = (find(101), find(401));
    let mut long_string = v[..r401 + 12].to_vec();
    long_string.extend(std::iter::repeat_n(b'x', 1100));
    long_string.extend_from_slice(&v[r401 + 20..]);
    // 405 has nibbles i i i s; make it "not last" with a continuation
    // header whose reserved high bit is set.
    let r405 = find(405);
    let mut bad_cont = v[..r405].to_vec();
    bad_cont.extend_from_slice(&(header_at(&v, r405) & !0x2_0000).to_le_bytes());
    bad_cont.extend_from_slice(&v[r405 + 4..r405 + 12]);
    bad_cont.extend_from_slice(&0x8000_0000u32.to_le_bytes());
    bad_cont.extend_from_slice(&v[r405 + 12..]);
    // A record setting a new time base with resolution 0.
    let mut res0 = v[..r101].to_vec();
    res0.extend_from_slice(&(header_at(&v, r101) | 0x1_0000).to_le_bytes());
    res0.extend_from_slice(&1_795_264_893u64.to_le_bytes());
    res0.extend_from_slice(&0u64.to_le_bytes());
    res0.extend_from_slice(&v[r101 + 4..]);
    // A second INIT: the first record again.
    let mut second_init = v[..r101].to_vec();
    second_init.extend_from_slice(&v[..r101]);
    second_init.extend_from_slice(&v[r101..]);
    vec![
        (
            "missing-init.rst",
            set_u32(v.clone(), 0, (101 << 18) | 0x3_0000),
            "byte 0: not a libRastro trace: the first record has event type 101, expected INIT (16383)".into(),
        ),
        (
            "init-fields.rst",
            set_u32(v.clone(), 0, 0xffff_4400),
            "byte 0: not a libRastro trace: the INIT record's header 0xffff4400 does not declare (u64 id1, u64 id2, string host)".into(),
        ),
        (
            "init-host-unterminated.rst",
            {
                let mut x = v[..44].to_vec();
                x.extend(std::iter::repeat_n(b'n', 1200));
                x
            },
            "byte 0: not a libRastro trace: the host name has no terminator".into(),
        ),
        ("empty.rst", Vec::new(), "byte 0: not a libRastro trace: the file ends inside its first record".into()),
        (
            "bad-type-code.rst",
            set_u32(v.clone(), r101, (header_at(&v, r101) & !0xf000) | 0x9000),
            format!("byte {r101}: bad type code 9 in header"),
        ),
        (
            "nibble-after-end.rst",
            set_u32(v.clone(), r101, (header_at(&v, r101) & !0xffff) | 0x7070),
            format!("byte {r101}: bad type code 7 in header"),
        ),
        (
            "string-without-terminator.rst",
            long_string,
            format!("byte {}: string without terminator within 1000 bytes", r401 + 12),
        ),
        (
            "bad-continuation.rst",
            bad_cont,
            format!("byte {}: continuation header 0x80000000", r405 + 12),
        ),
        ("resolution-0.rst", res0, format!("byte {r101}: clock resolution 0")),
        ("second-init.rst", second_init, format!("byte {r101}: a second INIT record inside the file")),
    ]
}

#[test]
fn broken_files_fail_with_their_byte_offset() {
    let regen = std::env::var("INTEGRADOR_REGEN_CORPUS").as_deref() == Ok("1");
    let out = tempdir();
    for (name, bytes, want) in cases() {
        let path = corpus().join(name);
        if regen {
            std::fs::create_dir_all(corpus()).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        }
        let on_disk = std::fs::read(&path)
            .unwrap_or_else(|_| panic!("{name} missing: INTEGRADOR_REGEN_CORPUS=1"));
        assert_eq!(on_disk, bytes, "{name} is stale: INTEGRADOR_REGEN_CORPUS=1");
        let trace = out.path().join("x.paje");
        let (o, err) = deck(&path, &trace);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
        assert!(
            err.contains(&format!("{name}: ")),
            "{name} names the file: {err}"
        );
        assert!(err.contains(&want), "{name}: expected `{want}` in: {err}");
        assert!(!trace.exists());
        assert_eq!(
            std::fs::read_dir(out.path()).unwrap().count(),
            0,
            "{name}: nothing left"
        );
    }
}

/// A writer that crashed leaves a file without STOP, possibly cut inside
/// a record: the records before the cut are converted, the summary names
/// the file and the byte, and the trace is valid.
#[test]
fn files_cut_short_are_read_up_to_the_cut_and_reported() {
    let (v, at) = valid();
    let d = tempdir();
    let last = at.last().unwrap().0;
    for (name, bytes, want) in [
        (
            "cut-inside-record.rst",
            v[..last + 6].to_vec(),
            format!("byte {last}: the file ends inside this record; read up to there"),
        ),
        (
            "no-stop.rst",
            v[..v.len() - 12].to_vec(),
            format!("no STOP record at byte {}", v.len() - 12),
        ),
    ] {
        let path = d.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let trace = d.path().join("x.paje");
        let (o, err) = deck(&path, &trace);
        assert!(o.status.success(), "{name}: {err}");
        assert!(
            err.contains(name) && err.contains(&want),
            "{name}: expected `{want}` in {err}"
        );
        assert_valid(&trace);
        // Damage is named under -q too.
        let quiet = run_ok(&["-q", "-deck", path.to_str().unwrap()], &trace);
        assert!(
            quiet.contains(&want),
            "{name}: -q: expected `{want}` in {quiet}"
        );
    }
}

/// A clock stepping back further than the reorder window is an error
/// naming the file and record.
#[test]
fn time_going_back_beyond_the_window_names_the_record() {
    let (v, at) = valid();
    let d = tempdir();
    let r = at[5].0;
    // Ticks of record 5 (no time base in it): 200 ms earlier.
    let ticks = u64::from_le_bytes(v[r + 4..r + 12].try_into().unwrap());
    let mut x = v.clone();
    x[r + 4..r + 12].copy_from_slice(&(ticks - 200_000_000).to_le_bytes());
    let path = d.path().join("back.rst");
    std::fs::write(&path, x).unwrap();
    let trace = d.path().join("x.paje");
    let (o, err) = deck(&path, &trace);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("back.rst: byte {r}: time goes back 199.98")),
        "{err}"
    );
    assert!(!trace.exists());
}

/// No input makes the decoder panic: every prefix and single-byte
/// corruption of a real file, and random bytes after a valid INIT.
#[test]
fn decoder_never_panics() {
    fn drain(bytes: &[u8]) {
        if let Ok(mut r) = RstReader::new(bytes) {
            let mut rec = Record::default();
            while let Ok(true) = r.next_into(&mut rec) {}
        }
    }
    let (v, at) = valid();
    for cut in 0..v.len() {
        drain(&v[..cut]);
    }
    for i in 0..v.len() {
        for x in [0x00, 0xff, 0x80, 0x10] {
            let mut m = v.clone();
            m[i] = x;
            drain(&m);
        }
    }
    let init = at[0].0;
    proptest::proptest!(|(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000))| {
        drain(&bytes);
        let mut with_init = v[..init].to_vec();
        with_init.extend_from_slice(&bytes);
        drain(&with_init);
    });
}
