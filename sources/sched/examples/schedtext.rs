//! Parses a scheduler text trace and prints counts and speed:
//! `schedtext FILE` (format detected from the first 4 KiB).

use integrador_sched::text::TextReader;
use std::io::Read;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: schedtext FILE");
        std::process::exit(2);
    };
    let mut head = vec![0; 4096];
    let n = std::fs::File::open(&path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or_else(|e| {
            eprintln!("{path}: {e}");
            std::process::exit(1)
        });
    head.truncate(n);
    let format = integrador_sched::detect(&head);
    let file = std::fs::File::open(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    });
    let started = std::time::Instant::now();
    let mut r = TextReader::new(file, format);
    let mut events = 0u64;
    // One event filled again and again, as integrador's converter does.
    let mut ev = integrador_sched::text::Event::default();
    loop {
        match r.read_into(&mut ev) {
            Ok(true) => events += 1,
            Ok(false) => break,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1)
            }
        }
    }
    let s = started.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    println!(
        "{format:?}: {events} events in {s:.2} s: {:.2} M lines/s, {:.0} MB/s",
        events as f64 / s / 1e6,
        bytes as f64 / s / 1e6
    );
}
