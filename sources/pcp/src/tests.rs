use super::*;

#[test]
fn v3_stamps_put_the_low_word_first() {
    let b = [0x67, 0xc2, 0x13, 0xf5, 0, 0, 0, 1, 0x02, 0xf1, 0xa2, 0xa3];
    let s = bytes::Cursor::new(&b, 0, b.len()).stamp(3).unwrap();
    assert_eq!(s.sec, (1i64 << 32) | 0x67c2_13f5);
    assert_eq!(s.nsec, 0x02f1_a2a3);
}

#[test]
fn a_short_record_names_what_was_read() {
    let b = [0u8, 0, 0, 1, 0, 0];
    let mut c = bytes::Cursor::new(&b, 0, b.len());
    assert_eq!(c.u32("a PMID").unwrap(), 1);
    assert_eq!(
        c.u32("a PMID").unwrap_err(),
        "record ends inside a PMID (offset 4)"
    );
    assert!(c.stamp(2).is_err());
}

#[test]
fn pmid_and_units_decode() {
    let p = Pmid(0x0f00_0800);
    assert_eq!(p.to_string(), "60.2.0");
    assert_eq!((p.domain(), p.cluster(), p.item()), (60, 2, 0));
    assert_eq!(InDom::NULL.to_string(), "PM_INDOM_NULL");
    assert_eq!(InDom(0x0f00_0003).to_string(), "60.3");
    assert_eq!(meta::units_fields(0x1001_0000), [1, 0, 0, 1, 0, 0]);
    assert_eq!(meta::units_fields(0x0100_2000), [0, 1, 0, 0, 2, 0]);
}
