//! Prints every record of an MPE log, one per line, in the spirit of
//! `clog2_print` (for eyeballing and for comparing with it); with
//! `--count`, only decodes and counts (the decode benchmark).
use integrador_clog::{detect, Clog2Reader, Format, LegacyReader};
use std::io::BufReader;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let count = args.get(1).is_some_and(|a| a == "--count");
    let path = args
        .get(if count { 2 } else { 1 })
        .ok_or("usage: clogdump [--count] FILE")?
        .clone();
    let mut head = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(std::fs::File::open(&path)?, 64),
        &mut head,
    )?;
    let file = BufReader::new(std::fs::File::open(&path)?);
    match detect(&head) {
        Some(Format::Clog2) if count => {
            // Decode only: every record is built, none printed.
            let mut r = Clog2Reader::new(file)?;
            let mut n = 0u64;
            while let Some(rec) = r.next_record()? {
                n += 1;
                std::hint::black_box(rec);
            }
            println!("{n} records");
        }
        Some(Format::Clog2) => {
            let mut r = Clog2Reader::new(file)?;
            println!("{:?}", r.preamble());
            while let Some(rec) = r.next_record()? {
                println!(
                    "@{} ts={:.6} icomm={} rank={} thd={} {:?}",
                    rec.offset, rec.time, rec.icomm, rec.rank, rec.thread, rec.body
                );
            }
            for e in r.comm_table()? {
                println!("{e:?}");
            }
        }
        Some(Format::Legacy) => {
            let mut r = LegacyReader::new(file);
            while let Some(rec) = r.next_record()? {
                println!(
                    "@{} ts={:.6} proc={} {:?}",
                    rec.offset, rec.time, rec.procid, rec.body
                );
            }
        }
        None => return Err("not an MPE log".into()),
    }
    Ok(())
}
