//! Feeds arbitrary bytes to the libRastro decoder (both layouts): it must
//! return records or an error, never panic, hang or allocate without bound,
//! and its integer reader must read the very integers the record reader
//! reads.
#![no_main]

use integrador_rastro::{FieldType, IntRecord, Record, RstReader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(mut r) = RstReader::new(data) else {
        return;
    };
    let mut ints_reader = RstReader::new(data).ok();
    let (mut ints, mut spare) = (IntRecord::default(), Record::default());
    let mut rec = Record::default();
    while let Ok(true) = r.next_into(&mut rec) {
        let _ = rec.letters();
        if let Some(ir) = ints_reader.as_mut() {
            assert!(matches!(ir.next_ints(&mut ints, &mut spare), Ok(true)));
            assert_eq!((ints.ty, ints.time_ns, ints.offset), (rec.ty, rec.time_ns, rec.offset));
            for (k, &v) in rec.u32s.iter().enumerate() {
                assert_eq!(ints.int(FieldType::U32, k), Some(u64::from(v)));
            }
            for (k, &v) in rec.u64s.iter().enumerate() {
                assert_eq!(ints.int(FieldType::U64, k), Some(v));
            }
        }
    }
    let _ = r.end();
});
