//! The hierarchy (with every kind's section) and event-map TOML parsers
//! on arbitrary text, and the nodes-file reader on the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(h) = integrador::hierarchy::parse(text, "fuzz") {
        // The sources' sections, each read by its kind.
        let _ = integrador::convert::configure(&mut integrador::convert::kinds(), &h);
    }
    let _ = integrador::eventmap::EventMap::parse(text, "fuzz");
    if let Ok(mut f) = tempfile::NamedTempFile::new() {
        use std::io::Write;
        if f.write_all(data).is_ok() {
            let _ = integrador::convert::mpi::read_nodes(f.path());
        }
    }
});
