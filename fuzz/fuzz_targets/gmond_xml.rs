//! The gmond/gmetad XML reader on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = integrador_ganglia::xml::XmlReader::new(data);
    let mut e = integrador_ganglia::xml::Entry::default();
    while let Ok(true) = r.next_entry(&mut e) {}
});
