//! Prints a libRastro file record by record: `rstdump FILE...`, or
//! `rstdump --count FILE...` for the record count and timing only.

use integrador_rastro::{Record, RstReader};
use std::io::Write;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let count_only = args.first().is_some_and(|a| a == "--count");
    if count_only {
        args.remove(0);
    }
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let started = std::time::Instant::now();
    let (mut records, mut bytes) = (0u64, 0u64);
    for path in &args {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        };
        let mut r = match RstReader::new(file) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        };
        let i = r.init().clone();
        if !count_only {
            let _ = writeln!(
                out,
                "# {path}: host {} id1 {} id2 {} resolution {} layout {:?} init {}",
                i.host, i.id1, i.id2, i.resolution, i.layout, i.time_ns
            );
        }
        let mut rec = Record::default();
        loop {
            match r.next_into(&mut rec) {
                Ok(true) => {
                    records += 1;
                    if !count_only {
                        let _ = writeln!(
                            out,
                            "{} {} {} d{:?} l{:?} f{:?} i{:?} w{:?} c{:?} s{:?}",
                            rec.offset,
                            rec.time_ns,
                            rec.ty,
                            rec.doubles,
                            rec.u64s,
                            rec.floats,
                            rec.u32s,
                            rec.u16s,
                            rec.u8s,
                            rec.strings
                        );
                    }
                }
                Ok(false) => break,
                Err(e) => {
                    eprintln!("{path}: {e}");
                    std::process::exit(1);
                }
            }
        }
        bytes += r.offset();
        if !count_only {
            let _ = writeln!(out, "# end: {:?}", r.end());
        }
    }
    let s = started.elapsed().as_secs_f64();
    let _ = out.flush();
    if count_only {
        println!(
            "{records} records, {bytes} bytes in {s:.3} s: {:.1} M records/s, {:.0} MB/s",
            records as f64 / s / 1e6,
            bytes as f64 / s / 1e6
        );
    }
}
