//! Writes a libRastro run for benchmarks: `rstgen [--akypuera] NODES
//! ITERS DIR` makes `DIR/rastro-<n>-0.rst` for NODES nodes on hosts
//! `bench01`.., each doing ITERS rounds of a ring exchange.
//!
//! - By default a DECK program: post to the next node, retrieve from the
//!   previous one, sleep, with the DECK map's event ids.
//! - With `--akypuera`, an MPI program as akypuera records it (its ids as
//!   in the akypuera-pingpong fixture: 1000 at start, MPI_Init and
//!   MPI_Comm_rank, 161/5000/162 for a send with its mark, 155/5001/156
//!   for a receive, MPI_Finalize, 1002/1003 at the end), so integrador
//!   and akypuera's own `aky_converter` read the same files.

use integrador_rastro::encode::{Value, Writer};
use integrador_rastro::Layout;
use std::io::Write;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let aky = args.first().is_some_and(|a| a == "--akypuera");
    if aky {
        args.remove(0);
    }
    let (Some(n), Some(iters), Some(dir)) = (
        args.first().and_then(|a| a.parse::<u32>().ok()),
        args.get(1).and_then(|a| a.parse::<u64>().ok()),
        args.get(2),
    ) else {
        eprintln!("usage: rstgen [--akypuera] NODES ITERS DIR");
        std::process::exit(2);
    };
    let t0: i64 = if aky {
        1_795_265_018_000_000_000
    } else {
        1_795_264_000_000_000_000
    };
    for r in 0..n {
        let path = std::path::Path::new(dir).join(format!("rastro-{r}-0.rst"));
        let file = std::fs::File::create(&path).expect("create output");
        let mut out = std::io::BufWriter::new(file);
        let host = format!("bench{:02}", r + 1);
        let mut w = Writer::new(Layout::Current, 1_000_000_000, u64::from(r), 0, &host, t0);
        if aky {
            akypuera(&mut w, &mut out, r, n, iters, t0);
        } else {
            deck(&mut w, &mut out, r, n, iters, t0);
        }
        out.write_all(&w.drain()).expect("write");
        out.flush().expect("flush");
    }
}

/// A DECK node: a mailbox ring.
fn deck(w: &mut Writer, out: &mut impl Write, r: u32, n: u32, iters: u64, t0: i64) {
    let step = 10_000; // ns per round
    w.event(101, t0 + 100, &[Value::U32(r), Value::U32(10_000 + r)]);
    let next = (r + 1) % n;
    let prev = (r + n - 1) % n;
    for k in 0..iters {
        let t = t0 + 1_000 + (k as i64) * step + i64::from(r) * 7;
        w.event(
            405,
            t,
            &[
                Value::U32(next),
                Value::U32(1024),
                Value::U32(k as u32),
                Value::Str("mbox"),
            ],
        );
        w.event(406, t + 1_000, &[Value::Str("mbox")]);
        w.event(
            407,
            t + 3_000,
            &[
                Value::Str("mbox"),
                Value::U32(prev),
                Value::U32(1024),
                Value::U32(k as u32),
            ],
        );
        w.event(207, t + 4_000, &[]);
        w.event(208, t + 8_000, &[]);
        if k % 4096 == 0 {
            out.write_all(&w.drain()).expect("write");
        }
    }
    let end = t0 + 1_000 + (iters as i64) * step + 5_000;
    w.event(102, end, &[]);
    w.stop(end);
}

/// An MPI rank under akypuera: MPI_Send to the next rank, MPI_Recv from
/// the previous one.
fn akypuera(w: &mut Writer, out: &mut impl Write, r: u32, n: u32, iters: u64, t0: i64) {
    let step = 10_000; // ns per round
    for (k, id) in [1000, 49, 50, 55, 56].into_iter().enumerate() {
        w.event(id, t0 + 10 * k as i64, &[]);
    }
    let next = (r + 1) % n;
    let prev = (r + n - 1) % n;
    for k in 0..iters {
        // A send, then the receive of what the previous rank sent in
        // this round (sent 4 µs before at most: after it in time).
        let t = t0 + 1_000 + (k as i64) * step + i64::from(r) * 7;
        w.event(161, t, &[Value::U64(k), Value::U32(1024)]);
        w.event(
            5000,
            t + 500,
            &[Value::U64(k), Value::U32(next), Value::U32(1024)],
        );
        w.event(162, t + 1_000, &[]);
        w.event(155, t + 2_000, &[Value::U32(1024)]);
        w.event(5001, t + 6_000, &[Value::U32(prev)]);
        w.event(156, t + 6_000, &[]);
        if k % 4096 == 0 {
            out.write_all(&w.drain()).expect("write");
        }
    }
    let end = t0 + 1_000 + (iters as i64) * step + 7_000;
    for (k, id) in [11, 12, 1002, 1003].into_iter().enumerate() {
        w.event(id, end + 10 * k as i64, &[]);
    }
    w.stop(end + 100);
}
