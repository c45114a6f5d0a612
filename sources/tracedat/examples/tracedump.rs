//! Prints the scheduler events of a trace.dat, one per line, or with
//! `--count` only how many there are and how fast they were read.
//!
//!     cargo run --release -p integrador-tracedat --example tracedump -- [--count] FILE

use integrador_tracedat::{Kind, TraceDat};
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count = args.iter().any(|a| a == "--count");
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: tracedump [--count] FILE");
        std::process::exit(2);
    };
    let start = std::time::Instant::now();
    let mut t = match TraceDat::open(|| std::fs::File::open(path)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let mut n = 0u64;
    loop {
        match t.next_event() {
            Ok(Some(e)) => {
                n += 1;
                if !count {
                    let what = match &e.kind {
                        Kind::Other(name) => name.clone(),
                        k => format!("{k:?}"),
                    };
                    let _ = writeln!(
                        out,
                        "{} [{:03}] {}.{:09} {}-{} {what}",
                        e.index,
                        e.cpu,
                        e.ts_ns / 1_000_000_000,
                        e.ts_ns % 1_000_000_000,
                        e.comm,
                        e.pid
                    );
                }
            }
            Ok(None) => break,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "{n} events in {secs:.3} s: {:.2} M events/s, {:.0} MB/s of file; lost {:?}",
        n as f64 / secs / 1e6,
        size as f64 / secs / 1e6,
        t.lost
    );
}
