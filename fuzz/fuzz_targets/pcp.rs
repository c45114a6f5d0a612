//! Feeds arbitrary bytes to the PCP decoders (a `.meta` file and a data
//! volume): they must return records or an error, never panic, hang or
//! allocate without bound.
#![no_main]

use integrador_pcp::meta::Metadata;
use integrador_pcp::{ResultRecord, VolumeReader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(md) = Metadata::read(data) {
        let _ = md.descs.len();
    }
    if let Ok(mut v) = VolumeReader::new(data) {
        let mut rec = ResultRecord::default();
        while let Ok(true) = v.next_into(&mut rec) {}
    }
});
