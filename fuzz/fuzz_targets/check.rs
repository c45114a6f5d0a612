//! The Pajé checker on arbitrary bytes: a report, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = integrador::paje::check::check(data);
});
