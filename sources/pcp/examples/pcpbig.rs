//! Makes a large v2 archive for benchmarks from a real one: `pcpbig SRC
//! OUT MB` copies SRC's `.meta` and repeats the data records of its first
//! volume, each pass shifted in time past the previous one, until OUT.0
//! holds MB megabytes. libpcp reads the result (`pmdumplog -a OUT`).
//! `pcpbig SRC OUT MB HOST` names the archive's host HOST (a grid of
//! many hosts made from one archive, `benches/scale.sh`).

use integrador_pcp::{archive, Archive};
use std::io::{Read, Write};
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(src), Some(out), Some(mb)) = (
        args.first(),
        args.get(1),
        args.get(2).and_then(|m| m.parse::<u64>().ok()),
    ) else {
        eprintln!("usage: pcpbig SRC_ARCHIVE OUT_BASE MEGABYTES [HOST]");
        std::process::exit(2);
    };
    let a = Archive::find(&Archive::base_of(Path::new(src))).expect("source archive");
    let mut meta = Vec::new();
    archive::open(&a.meta)
        .expect("open .meta")
        .read_to_end(&mut meta)
        .expect("read .meta");
    let mut vol = Vec::new();
    let first = a.volumes.first().expect("a volume");
    archive::open(&first.path)
        .expect("open volume")
        .read_to_end(&mut vol)
        .expect("read volume");
    let be32 = |b: &[u8], at: usize| u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    assert_eq!(be32(&vol, 4), 0x5005_2602, "v2 archives only");
    let mut recs = Vec::new();
    let mut at = 0;
    while at + 4 <= vol.len() {
        let len = be32(&vol, at) as usize;
        recs.push(at..at + len);
        at += len;
    }
    let label = recs[0].clone();
    let data = &recs[1..];
    let (t0, t1) = (
        be32(&vol, data[0].start + 4) as i32,
        be32(&vol, data[data.len() - 1].start + 4) as i32,
    );
    let period = t1 - t0 + 1;
    let mut label = vol[label].to_vec();
    if let Some(host) = args.get(3) {
        // A v2 label's host name: 64 bytes, NUL padded, after the
        // record's length, magic, pid, time and volume number.
        let mut name = [0u8; 64];
        let n = host.len().min(63);
        name[..n].copy_from_slice(&host.as_bytes()[..n]);
        meta[24..88].copy_from_slice(&name);
        label[24..88].copy_from_slice(&name);
    }
    std::fs::write(format!("{out}.meta"), &meta).expect("write .meta");
    let mut w =
        std::io::BufWriter::new(std::fs::File::create(format!("{out}.0")).expect("create volume"));
    w.write_all(&label).expect("write");
    let (mut size, mut pass) = (0u64, 0i32);
    while size < mb * 1_000_000 {
        for r in data {
            let mut rec = vol[r.clone()].to_vec();
            let sec = be32(&rec, 4) as i32 + pass * period;
            rec[4..8].copy_from_slice(&sec.to_be_bytes());
            w.write_all(&rec).expect("write");
            size += rec.len() as u64;
        }
        pass += 1;
    }
    w.flush().expect("flush");
    eprintln!(
        "{out}.0: {size} bytes, {pass} passes of {} records",
        data.len()
    );
}
