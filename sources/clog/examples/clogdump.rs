//! Prints every record of an MPE log, one per line, in the spirit of
//! `clog2_print` (for eyeballing and for comparing with it).
use integrador_clog::{detect, Clog2Reader, Format, LegacyReader};
use std::io::BufReader;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: clogdump FILE")?;
    let mut head = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(std::fs::File::open(&path)?, 64),
        &mut head,
    )?;
    let file = BufReader::new(std::fs::File::open(&path)?);
    match detect(&head) {
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
