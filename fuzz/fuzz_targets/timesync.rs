//! The rastro_timesync reader and both clock fits on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = integrador_timesync::read(data);
    for fit in [integrador::clock::SyncFit::Endpoints, integrador::clock::SyncFit::LeastSquares] {
        if let Ok(t) = integrador::clock::SyncTable::from_reader(std::path::Path::new("f"), data, fit) {
            let ids = integrador::identity::HostIdentity::default();
            for h in &t.hosts {
                if let Some((m, _, _)) = t.lookup(&h.host, &ids) {
                    let _ = m.map(i64::MAX);
                    let _ = m.map(i64::MIN);
                    let _ = m.map(0);
                }
            }
        }
    }
});
