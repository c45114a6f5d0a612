//! The text decoders answer every input with records or an error naming a
//! line, never a panic (the text-format counterpart of a fuzz target).

use integrador_ganglia::{Sample, TracedReader};
use integrador_sched::OsReader;
use proptest::prelude::*;

fn traced(bytes: &[u8]) {
    if let Ok(mut r) = TracedReader::new(bytes) {
        let mut s = Sample::default();
        while let Ok(true) = r.read_sample(&mut s) {
            assert!(s.line >= 1);
        }
    }
}

fn os(bytes: &[u8]) {
    if let Ok(mut r) = OsReader::new(bytes) {
        while let Ok(Some(rec)) = r.next_record() {
            assert!(rec.line >= 1);
        }
    }
}

/// Lines made of the formats' own vocabulary, so that the search reaches
/// deep into the parsers rather than failing on the first byte.
fn wordy() -> impl Strategy<Value = Vec<u8>> {
    let word = prop_oneof![
        Just("time".to_string()),
        Just("tempo".to_string()),
        Just("block".to_string()),
        Just("unblock".to_string()),
        Just("-".to_string()),
        Just("#".to_string()),
        Just("# thread".to_string()),
        Just("# collector".to_string()),
        Just("\n".to_string()),
        Just("\"".to_string()),
        "[0-9]{1,20}(\\.[0-9]{0,12})?",
        "[a-z_.]{1,12}",
        "[ \t\r]{1,3}",
    ];
    proptest::collection::vec(word, 0..40).prop_map(|w| w.join(" ").into_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        traced(&bytes);
        os(&bytes);
        let _ = integrador_timesync::read(&bytes[..]);
        let _ = integrador::paje::check::check(&bytes[..]);
    }

    #[test]
    fn vocabulary_soup(bytes in wordy()) {
        traced(&bytes);
        os(&bytes);
        let _ = integrador_timesync::read(&bytes[..]);
        let _ = integrador::paje::check::check(&bytes[..]);
    }
}

/// The Ganglia XML and RRD dump readers answer any bytes with samples or
/// an error: every prefix and byte corruption of real files, and random
/// bytes.
#[test]
fn ganglia_xml_readers_never_panic() {
    use integrador_ganglia::rrd::RrdDump;
    use integrador_ganglia::xml::{Entry, XmlReader};
    fn drain(b: &[u8]) {
        let mut r = XmlReader::new(b);
        let mut e = Entry::default();
        while let Ok(true) = r.next_entry(&mut e) {}
        let _ = RrdDump::read(b);
    }
    let fx = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let fx = std::env::var_os("INTEGRADOR_FIXTURES").map_or(fx, std::path::PathBuf::from);
    for f in [
        "ganglia/snapshots/snap_000.xml",
        "ganglia/rrd/node03.cluster.example.cpu_user.xml",
    ] {
        // The head of each file: the declaration, the DTD and the first
        // elements (every byte of a whole file takes minutes in debug).
        let mut b = std::fs::read(fx.join(f)).unwrap();
        b.truncate(6000);
        for cut in (0..b.len()).step_by(37) {
            drain(&b[..cut]);
        }
        for i in (0..b.len()).step_by(11) {
            for x in [b'<', b'"', 0xff, b'&'] {
                let mut m = b.clone();
                m[i] = x;
                drain(&m);
            }
        }
    }
    proptest::proptest!(|(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000))| {
        drain(&bytes);
    });
}
