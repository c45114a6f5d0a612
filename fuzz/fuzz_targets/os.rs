//! The `.os` kernel-trace reader on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut r) = integrador_sched::os::OsReader::new(data) {
        while let Ok(Some(_)) = r.next_record() {}
    }
});
