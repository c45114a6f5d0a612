//! Writes a synthetic but well-formed merged CLOG2 log for benchmarks:
//! `clog2gen RANKS ITERATIONS OUT`. Each rank logs what MPE's `-mpilog`
//! wrappers would for a ring exchange: a user state `compute`, then
//! MPI_Send (start, MSGEVT, end) to the next rank and MPI_Recv (start,
//! MSGEVT, end) from the previous one; each rank has its world and self
//! communicator records and an `integrador_anchor` event; rank 0 writes
//! the definitions at the end, as MPE does. Big-endian, 64 KiB blocks,
//! records in time order (as MPE's merger writes them).
use std::io::{BufWriter, Write};

const BLOCK: usize = 65536;

struct Out<W: Write> {
    w: W,
    block: Vec<u8>,
    blocks: u64,
}

impl<W: Write> Out<W> {
    fn record(&mut self, t: f64, rank: i32, rectype: i32, body: &[u8]) {
        if self.block.len() + 24 + body.len() + 24 > BLOCK {
            self.raw(0.0, rank, 1, &[]);
            self.block.resize(BLOCK, 0);
            self.w.write_all(&self.block).unwrap();
            self.block.clear();
            self.blocks += 1;
        }
        self.raw(t, rank, rectype, body);
    }

    fn raw(&mut self, t: f64, rank: i32, rectype: i32, body: &[u8]) {
        self.block.extend_from_slice(&t.to_be_bytes());
        for v in [0, rank, 0, rectype] {
            self.block.extend_from_slice(&v.to_be_bytes());
        }
        self.block.extend_from_slice(body);
    }
}

/// A rank's record of one phase: rectype and body.
type Record<'a> = dyn Fn(i32) -> (i32, Vec<u8>) + 'a;

fn ints(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|i| i.to_be_bytes()).collect()
}

fn text(s: &str, n: usize) -> Vec<u8> {
    let mut b = s.as_bytes().to_vec();
    b.resize(n, 0);
    b
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(ranks), Some(iters), Some(path), None) = (
        args.first().and_then(|a| a.parse::<i32>().ok()),
        args.get(1).and_then(|a| a.parse::<u64>().ok()),
        args.get(2).cloned(),
        args.get(3),
    ) else {
        eprintln!("usage: clog2gen RANKS ITERATIONS OUT");
        std::process::exit(2);
    };
    let mut file = BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut pre = Vec::new();
    // The table offset is only known at the end: the preamble is
    // rewritten then.
    file.write_all(&[0u8; 1024]).unwrap();
    let mut o = Out {
        w: file,
        block: Vec::with_capacity(BLOCK),
        blocks: 0,
    };
    let us = 1e-6;
    let mut t = 0.0;
    for r in 0..ranks {
        let mut b = ints(&[0, 0, r, r, 7]);
        b.extend_from_slice(&1.5f64.to_be_bytes());
        b.extend_from_slice(&text(&format!("node{:02}", r / 8), 20));
        o.record(t, r, 9, &b);
        let mut b = ints(&[1, 1 + r, 0, r, 8 + r]);
        b.extend_from_slice(&1.5f64.to_be_bytes());
        b.extend_from_slice(&text(&format!("node{:02}", r / 8), 20));
        o.record(t, r, 9, &b);
        let anchor = format!("1795265512.{:06} {}", 100 + r, 10000 + r);
        let mut b = ints(&[5000, 0]);
        let mut cargo = (anchor.len() as u16).to_be_bytes().to_vec();
        cargo.extend_from_slice(anchor.as_bytes());
        cargo.resize(32, 0);
        b.extend_from_slice(&cargo);
        o.record(t + us, r, 6, &b);
        t += 2.0 * us;
    }
    // Phase by phase, rank by rank 1 ns apart: globally sorted, as MPE's
    // merger writes.
    let ns = 1e-9;
    for _ in 0..iters {
        let phases: [(f64, &Record<'_>); 6] = [
            (0.0, &|_| (5, ints(&[600, 0]))),
            (5.0, &|_| (5, ints(&[601, 0]))),
            (6.0, &|_| (5, ints(&[160, 0]))),
            (7.0, &|r| (7, ints(&[-101, 0, (r + 1) % ranks, 3, 1024, 0]))),
            (8.0, &|_| (5, ints(&[161, 0]))),
            (9.0, &|_| (5, ints(&[154, 0]))),
        ];
        for (dt, rec) in phases {
            for r in 0..ranks {
                let (rt, body) = rec(r);
                o.record(t + dt * us + f64::from(r) * ns, r, rt, &body);
            }
        }
        t += 20.0 * us;
        for r in 0..ranks {
            let body = ints(&[-102, 0, (r + ranks - 1) % ranks, 3, 1024, 0]);
            o.record(t + f64::from(r) * ns, r, 7, &body);
        }
        for r in 0..ranks {
            o.record(t + us + f64::from(r) * ns, r, 5, &ints(&[155, 0]));
        }
        t += 10.0 * us;
    }
    for (id, s, e, color, name) in [
        (77, 154, 155, "green", "MPI_Recv"),
        (80, 160, 161, "blue", "MPI_Send"),
        (300, 600, 601, "red", "compute"),
    ] {
        let mut b = ints(&[id, s, e, 0]);
        b.extend(text(color, 24));
        b.extend(text(name, 32));
        b.extend(text("", 40));
        o.record(t, 0, 2, &b);
    }
    let mut b = ints(&[5000, 0]);
    b.extend(text("white", 24));
    b.extend(text("integrador_anchor", 32));
    b.extend(text("%s", 40));
    o.record(t, 0, 3, &b);
    o.raw(100000000.0, 0, 0, &[]);
    o.block.resize(BLOCK, 0);
    o.w.write_all(&o.block).unwrap();
    o.blocks += 1;
    o.w.write_all(&0i32.to_be_bytes()).unwrap();
    let mut file = o.w.into_inner().unwrap();
    let fptr = 1024 + o.blocks * BLOCK as u64;
    for tok in [
        "CLOG-02.44".to_string(),
        "is_big_endian=".into(),
        "TRUE ".into(),
        "is_finalzed=".into(),
        "TRUE ".into(),
        "block_size=".into(),
        BLOCK.to_string(),
        "max_comm_world_size=".into(),
        ranks.to_string(),
        "commtable_fptr=".into(),
        (fptr >> 30).to_string(),
        "1073741824".into(),
        (fptr & ((1 << 30) - 1)).to_string(),
    ] {
        pre.extend_from_slice(tok.as_bytes());
        pre.push(0);
    }
    pre.resize(1024, 0);
    use std::io::{Seek, SeekFrom};
    file.seek(SeekFrom::Start(0)).unwrap();
    file.write_all(&pre).unwrap();
}
