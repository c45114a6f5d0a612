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
    // The in-place read the conversion uses, with its event view.
    if let Ok(mut r) = Clog2Reader::new(data) {
        while let Ok(Some(raw)) = r.next_raw() {
            let _ = (raw.event(), raw.body());
        }
    }
    let mut r = LegacyReader::new(data);
    while let Ok(Some(rec)) = r.next_record() {
        let _ = rec.to_clog2();
    }
});
