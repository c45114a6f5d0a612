//! Feeds arbitrary bytes to both MPE log decoders: they must return
//! records or an error, never panic, hang or allocate without bound.
#![no_main]

use integrador_clog::{Clog2Reader, LegacyReader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut r) = Clog2Reader::new(data) {
        while let Ok(Some(rec)) = r.next_record() {
            if let integrador_clog::Body::Cargo { bytes, .. } = &rec.body {
                let _ = integrador_clog::clog2::cargo_string(bytes);
            }
        }
        let _ = r.comm_table();
    }
    // The in-place read the conversion uses, with its event view, and the
    // log read in two halves as a split first pass reads it.
    if let Ok(mut r) = Clog2Reader::new(data) {
        let preamble = r.preamble().clone();
        r.stop_at_block(1);
        while let Ok(Some(raw)) = r.next_raw() {
            let _ = (raw.event(), raw.body());
        }
        let at = 1024 + preamble.block_size as usize;
        if let (false, Some(rest)) = (r.ended(), data.get(at..)) {
            if let Ok(mut r) = Clog2Reader::resume(rest, preamble, 1) {
                while let Ok(Some(raw)) = r.next_raw() {
                    let _ = raw.event();
                }
                let _ = r.comm_table();
            }
        }
    }
    let mut r = LegacyReader::new(data);
    while let Ok(Some(rec)) = r.next_record() {
        let _ = rec.to_clog2();
    }
});
