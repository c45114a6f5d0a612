//! The `rrdtool dump` reader on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(d) = integrador_ganglia::rrd::RrdDump::read(data) {
        if let Some(i) = d.finest("AVERAGE") {
            let _ = d.timed_rows(i);
        }
    }
});
