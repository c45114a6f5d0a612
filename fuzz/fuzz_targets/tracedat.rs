//! Feeds arbitrary bytes to the trace.dat decoder: it must return events
//! or an error, never panic, hang or allocate without bound.
#![no_main]

use integrador_tracedat::TraceDat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let open = || Ok(std::io::Cursor::new(data));
    if let Ok(mut t) = TraceDat::open(open) {
        let mut n = 0u32;
        while let Ok(Some(_)) = t.next_event() {
            n += 1;
            if n > 1_000_000 {
                break;
            }
        }
    }
});
