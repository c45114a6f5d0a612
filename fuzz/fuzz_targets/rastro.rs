//! Feeds arbitrary bytes to the libRastro decoder (both layouts): it must
//! return records or an error, never panic, hang or allocate without bound,
//! and its integer readers must read the very integers the record reader
//! reads (the one that wants some types only: their integers, and every
//! record's type, time and offset).
#![no_main]

use integrador_rastro::{FieldType, IntRecord, Record, RstReader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(mut r) = RstReader::new(data) else {
        return;
    };
    let mut ints_reader = RstReader::new(data).ok();
    let mut some_reader = RstReader::new(data).ok();
    let (mut ints, mut spare) = (IntRecord::default(), Record::default());
    let (mut some, mut some_spare) = (IntRecord::default(), Record::default());
    // Odd type ids wanted: the others are read past.
    let want = |t: u16| t % 2 == 1;
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
        if let Some(sr) = some_reader.as_mut() {
            assert!(matches!(sr.next_ints_of(&mut some, &mut some_spare, want), Ok(true)));
            assert_eq!((some.ty, some.time_ns, some.offset), (rec.ty, rec.time_ns, rec.offset));
            if want(rec.ty) {
                for (k, &v) in rec.u32s.iter().enumerate() {
                    assert_eq!(some.int(FieldType::U32, k), Some(u64::from(v)));
                }
            }
        }
    }
    let _ = r.end();
});
