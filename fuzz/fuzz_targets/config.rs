//! The hierarchy and event-map TOML parsers on arbitrary text, and the
//! nodes-file reader on the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = integrador::hierarchy::parse(text, "fuzz");
    let _ = integrador::eventmap::EventMap::parse(text, "fuzz");
    if let Ok(mut f) = tempfile::NamedTempFile::new() {
        use std::io::Write;
        if f.write_all(data).is_ok() {
            let _ = integrador::convert::mpi::read_nodes(f.path());
        }
    }
});
