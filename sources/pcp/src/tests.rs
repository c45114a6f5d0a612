use super::*;

#[test]
fn v3_stamps_put_the_low_word_first() {
    let b = [0x67, 0xc2, 0x13, 0xf5, 0, 0, 0, 1, 0x02, 0xf1, 0xa2, 0xa3];
    let s = stamp(&b, 0, 3).unwrap();
    assert_eq!(s.sec, (1i64 << 32) | 0x67c2_13f5);
    assert_eq!(s.nsec, 0x02f1_a2a3);
}

#[test]
fn pmid_and_units_decode() {
    assert_eq!(meta::pmid_str(0x0f00_0800), "60.2.0");
    assert_eq!(meta::units_fields(0x1001_0000), [1, 0, 0, 1, 0, 0]);
    assert_eq!(meta::units_fields(0x0100_2000), [0, 1, 0, 0, 2, 0]);
}
