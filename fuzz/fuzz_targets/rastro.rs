//! Feeds arbitrary bytes to the libRastro decoder (both layouts): it must
//! return records or an error, never panic, hang or allocate without bound.
#![no_main]

use integrador_rastro::{Record, RstReader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut r) = RstReader::new(data) {
        let mut rec = Record::default();
        while let Ok(true) = r.next_into(&mut rec) {
            let _ = rec.letters();
        }
        let _ = r.end();
    }
});
