//! Writes a DECK-like libRastro run for benchmarks: `rstgen NODES ITERS
//! DIR` makes `DIR/rastro-<n>-0.rst` for NODES nodes on hosts `bench01`..,
//! each doing ITERS rounds of a ring exchange (post to the next node,
//! retrieve from the previous one, sleep), with the DECK map's event ids.

use integrador_rastro::encode::{Value, Writer};
use integrador_rastro::Layout;
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(n), Some(iters), Some(dir)) = (
        args.first().and_then(|a| a.parse::<u32>().ok()),
        args.get(1).and_then(|a| a.parse::<u64>().ok()),
        args.get(2),
    ) else {
        eprintln!("usage: rstgen NODES ITERS DIR");
        std::process::exit(2);
    };
    let t0: i64 = 1_795_264_000_000_000_000;
    let step = 10_000; // ns per round
    for r in 0..n {
        let path = std::path::Path::new(dir).join(format!("rastro-{r}-0.rst"));
        let file = std::fs::File::create(&path).expect("create output");
        let mut out = std::io::BufWriter::new(file);
        let host = format!("bench{:02}", r + 1);
        let mut w = Writer::new(Layout::Current, 1_000_000_000, u64::from(r), 0, &host, t0);
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
        out.write_all(&w.drain()).expect("write");
        out.flush().expect("flush");
    }
}
