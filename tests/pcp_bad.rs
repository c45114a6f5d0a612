//! Broken PCP archives (the corpus in `tests/corpus/pcp/`, also the fuzz
//! seeds): each fails with one line naming the file and the byte offset,
//! exit 1, no output left. A last volume cut short (pmlogger still
//! writing) is read up to the cut and reported.
//!
//! The corpus is made from the real v2 archive; run with
//! `INTEGRADOR_REGEN_CORPUS=1` to rewrite it after changing the cases.

mod common;

use common::*;
use std::path::{Path, PathBuf};

const V2: &str = "pcp/pmlogger_v2/20261121.12.34";

fn corpus() -> PathBuf {
    root().join("tests/corpus/pcp")
}

fn real(ext: &str) -> Vec<u8> {
    std::fs::read(fixture(&format!("{V2}.{ext}"))).unwrap()
}

/// Offsets of the framed records of a file.
fn records(b: &[u8]) -> Vec<usize> {
    let mut at = 0;
    let mut out = Vec::new();
    while at + 4 <= b.len() {
        out.push(at);
        let len = u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize;
        at += len;
    }
    out
}

fn set_u32(mut v: Vec<u8>, at: usize, x: u32) -> Vec<u8> {
    v[at..at + 4].copy_from_slice(&x.to_be_bytes());
    v
}

/// (archive name, broken part, its bytes, expected message): the other
/// parts are the real archive's.
fn cases() -> Vec<(&'static str, &'static str, Vec<u8>, String)> {
    let (meta, vol) = (real("meta"), real("0"));
    let (mr, vr) = (records(&meta), records(&vol));
    // A DESC record whose indom no INDOM record defines: the first DESC
    // of a metric of indom 60.3 (network interfaces) pointed at 60.99.
    let desc = mr
        .iter()
        .copied()
        .find(|&at| {
            u32::from_be_bytes(meta[at + 4..at + 8].try_into().unwrap()) == 1
                && u32::from_be_bytes(meta[at + 16..at + 20].try_into().unwrap()) == 0x0f00_0003
        })
        .unwrap();
    let pmid = u32::from_be_bytes(meta[desc + 8..desc + 12].try_into().unwrap());
    let pmid = format!(
        "{}.{}.{}",
        pmid >> 22 & 0x1ff,
        pmid >> 10 & 0xfff,
        pmid & 0x3ff
    );
    let third = vr[3];
    let third_len = vr[4] - vr[3];
    vec![
        ("bad-magic", "0", set_u32(vol.clone(), 4, 0x5005_2609), "byte 0: not a PCP archive file: archive version 9, expected 2 or 3".into()),
        ("not-pcp", "meta", b"just some words, not an archive\n".to_vec(), "byte 0: not a PCP archive file".into()),
        (
            "trailer-mismatch",
            "0",
            set_u32(vol.clone(), third + third_len - 4, 7),
            format!("byte {third}: record length {third_len} at its start but 7 at its end"),
        ),
        ("length-too-small", "0", set_u32(vol.clone(), third, 4), format!("byte {third}: record length 4, expected at least 8")),
        (
            "unknown-indom",
            "meta",
            set_u32(meta.clone(), desc + 16, 0x0f00_0063),
            format!("byte {desc}: metric {pmid} names instance domain 60.99 that no record of this file defines"),
        ),
        (
            "bad-value-pointer",
            "0",
            {
                // The first value block pointer of record 3 (FLOAT load
                // averages come in blocks) pointed far outside.
                let mut v = vol.clone();
                let mut at = third + 4 + 8 + 4;
                let n = u32::from_be_bytes(v[third + 12..third + 16].try_into().unwrap());
                let mut done = false;
                for _ in 0..n {
                    let numval = u32::from_be_bytes(v[at + 4..at + 8].try_into().unwrap()) as i32;
                    if numval <= 0 {
                        at += 8;
                        continue;
                    }
                    let valfmt = u32::from_be_bytes(v[at + 8..at + 12].try_into().unwrap());
                    if valfmt != 0 && !done {
                        v[at + 16..at + 20].copy_from_slice(&0x00ff_ffffu32.to_be_bytes());
                        done = true;
                    }
                    at += 12 + 8 * numval as usize;
                }
                assert!(done);
                v
            },
            format!("byte {third}: value block pointer 16777215 points outside the record"),
        ),
    ]
}

fn archive_with(dir: &Path, name: &str, part: &str, bytes: &[u8]) -> PathBuf {
    for ext in ["meta", "0", "index"] {
        let b = if ext == part {
            bytes.to_vec()
        } else {
            real(ext)
        };
        std::fs::write(dir.join(format!("{name}.{ext}")), b).unwrap();
    }
    dir.join(name)
}

fn pcp(arg: &Path, trace: &Path) -> (std::process::Output, String) {
    let o = integrador(&["-pcp", arg.to_str().unwrap(), "-o", trace.to_str().unwrap()]);
    let err = stderr(&o);
    (o, err)
}

#[test]
fn broken_archives_fail_with_file_and_offset() {
    let regen = std::env::var("INTEGRADOR_REGEN_CORPUS").as_deref() == Ok("1");
    for (name, part, bytes, want) in cases() {
        let file = format!("{name}.{part}");
        let path = corpus().join(&file);
        if regen {
            std::fs::create_dir_all(corpus()).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        }
        let on_disk = std::fs::read(&path)
            .unwrap_or_else(|_| panic!("{file} missing: INTEGRADOR_REGEN_CORPUS=1"));
        assert_eq!(on_disk, bytes, "{file} is stale: INTEGRADOR_REGEN_CORPUS=1");
        let d = tempdir();
        let base = archive_with(d.path(), name, part, &bytes);
        let out = tempdir();
        let trace = out.path().join("x.paje");
        let (o, err) = pcp(&base, &trace);
        assert_eq!(o.status.code(), Some(1), "{file}: {err}");
        assert_eq!(err.lines().count(), 1, "{file}: one line: {err}");
        assert!(
            err.contains(&format!("{file}: ")),
            "{file} names the file: {err}"
        );
        assert!(err.contains(&want), "{file}: expected `{want}` in: {err}");
        assert!(!trace.exists());
        assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
    }
}

#[test]
fn a_missing_meta_is_named() {
    let d = tempdir();
    std::fs::write(d.path().join("a.0"), real("0")).unwrap();
    let trace = d.path().join("x.paje");
    let (o, err) = pcp(&d.path().join("a.0"), &trace);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no a.meta: not a PCP archive, or its metadata is missing"),
        "{err}"
    );
    assert!(!trace.exists());
}

/// The last volume cut inside a record is what pmlogger leaves while it
/// writes: read up to the cut, and say so. A cut volume followed by
/// another is broken.
#[test]
fn truncated_volumes() {
    let vol = real("0");
    let r = records(&vol);
    let cut = r[10] + 17;
    let d = tempdir();
    let base = archive_with(d.path(), "cut", "0", &vol[..cut]);
    let trace = d.path().join("x.paje");
    let (o, err) = pcp(&base, &trace);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "cut.0: byte {}: the volume ends inside a record",
            r[10]
        )),
        "{err}"
    );
    assert_valid(&trace);
    // Damage is named under -q too.
    let quiet = run_ok(&["-q", "-pcp", base.to_str().unwrap()], &trace);
    assert!(
        quiet.contains("the volume ends inside a record"),
        "-q: {quiet}"
    );

    // The same cut volume with a volume 1 after it.
    let mut v1 = vol[..r[1]].to_vec();
    v1[20..24].copy_from_slice(&1u32.to_be_bytes());
    v1.extend_from_slice(&vol[r[11]..]);
    std::fs::write(d.path().join("cut.1"), v1).unwrap();
    std::fs::remove_file(&trace).unwrap();
    let (o, err) = pcp(&base, &trace);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "cut.0: byte {}: the volume ends inside a record, and a later volume follows",
            r[10]
        )),
        "{err}"
    );
    assert!(!trace.exists());
}

/// No input makes the decoders panic: every prefix and single-byte
/// corruption of the real `.meta` and of the first records of the volume.
#[test]
fn decoders_never_panic() {
    use integrador_pcp::meta::Metadata;
    use integrador_pcp::{ResultRecord, VolumeReader};
    fn drain(b: &[u8]) {
        let _ = Metadata::read(b);
        if let Ok(mut v) = VolumeReader::new(b) {
            let mut rec = ResultRecord::default();
            while let Ok(true) = v.next_into(&mut rec) {}
        }
    }
    let meta = real("meta");
    let vol = real("0");
    let head = &vol[..records(&vol)[6]];
    for b in [&meta[..], head] {
        for cut in (0..b.len()).step_by(7) {
            drain(&b[..cut]);
        }
        for i in 0..b.len() {
            for x in [0x00, 0xff, 0x80] {
                let mut m = b.to_vec();
                m[i] = x;
                drain(&m);
            }
        }
    }
    proptest::proptest!(|(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000))| {
        drain(&bytes);
        let mut with_label = vol[..132].to_vec();
        with_label.extend_from_slice(&bytes);
        drain(&with_label);
    });
}
