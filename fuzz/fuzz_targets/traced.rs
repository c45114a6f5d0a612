//! The `.traced` reader on arbitrary bytes: samples or a line error,
//! never a panic or unbounded memory.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut r) = integrador_ganglia::TracedReader::new(data) {
        let mut s = integrador_ganglia::Sample::default();
        while let Ok(true) = r.read_sample(&mut s) {}
        let _ = r.cut_line();
    }
});
