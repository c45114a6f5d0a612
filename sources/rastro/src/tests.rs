use super::encode::{Value, Writer};
use super::*;

fn read_all(bytes: &[u8]) -> (Init, Vec<Record>, End) {
    let mut r = RstReader::new(bytes).unwrap();
    let mut out = Vec::new();
    let mut rec = Record::default();
    while r.next_into(&mut rec).unwrap() {
        out.push(rec.clone());
    }
    (r.init().clone(), out, r.end().clone())
}

const T: i64 = 1_795_264_894_221_310_558;

#[test]
fn round_trip_current_layout_groups_values_by_type() {
    let mut w = Writer::new(Layout::Current, 1_000_000_000, 3, 1, "node04", T);
    // akypuera's PTP_SEND: called (dest, size, mark), stored mark first.
    w.event(
        5000,
        T + 10,
        &[Value::U32(1), Value::U32(1024), Value::U64(7)],
    );
    w.event(
        405,
        T + 20,
        &[
            Value::U32(1),
            Value::U32(8),
            Value::U32(2),
            Value::Str("mbox1"),
        ],
    );
    w.event(9, T + 30, &[]);
    w.stop(T + 40);
    let bytes = w.into_bytes();
    assert_eq!(bytes.len() % 4, 0);
    let (init, recs, end) = read_all(&bytes);
    assert_eq!((init.id1, init.id2, init.host.as_str()), (3, 1, "node04"));
    assert_eq!(init.time_ns, T);
    assert_eq!(init.layout, Layout::Current);
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[0].letters(), "lii");
    assert_eq!(
        (recs[0].u64s.clone(), recs[0].u32s.clone()),
        (vec![7], vec![1, 1024])
    );
    assert_eq!(recs[1].letters(), "iiis");
    assert_eq!(recs[1].strings, vec!["mbox1".to_string()]);
    assert_eq!(
        recs.iter().map(|r| r.time_ns - T).collect::<Vec<_>>(),
        [10, 20, 30]
    );
    assert!(matches!(end, End::Stop { trailing: 0, .. }));
}

#[test]
fn continuation_headers_carry_more_than_four_values() {
    let mut w = Writer::new(Layout::Current, 1_000_000_000, 0, 0, "h", T);
    let vals: Vec<Value> = (0..12)
        .map(|i| match i % 4 {
            0 => Value::U32(i),
            1 => Value::F64(f64::from(i)),
            2 => Value::U8(i as u8),
            _ => Value::Str(if i == 3 { "abc" } else { "" }),
        })
        .collect();
    w.event(77, T + 1, &vals);
    w.stop(T + 2);
    let (_, recs, _) = read_all(w.bytes());
    let r = &recs[0];
    assert_eq!(r.letters(), "dddiiiccc sss".replace(' ', ""));
    assert_eq!(r.u32s, vec![0, 4, 8]);
    assert_eq!(r.doubles, vec![1.0, 5.0, 9.0]);
    assert_eq!(r.u8s, vec![2, 6, 10]);
    assert_eq!(r.strings, vec!["abc", "", ""]);
}

#[test]
fn old_layout_is_detected_and_keeps_microseconds() {
    let t0 = 1_100_000_000_123_456_000; // 2004, microsecond clock
    let mut w = Writer::new(Layout::Old, 0, 2, 0, "ice01", t0);
    w.event(101, t0 + 5_000, &[Value::U32(2), Value::U32(4242)]);
    // More than an hour later: a new time base.
    w.event(102, t0 + 3_700_000_000_000, &[]);
    w.stop(t0 + 3_700_000_001_000);
    let (init, recs, end) = read_all(w.bytes());
    assert_eq!(init.layout, Layout::Old);
    assert_eq!(
        (init.id1, init.host.as_str(), init.resolution),
        (2, "ice01", 1_000_000)
    );
    assert_eq!(init.time_ns, t0);
    assert_eq!(recs[0].u32s, vec![2, 4242]);
    assert_eq!(recs[0].time_ns, t0 + 5_000);
    assert_eq!(recs[1].time_ns, t0 + 3_700_000_000_000);
    assert!(matches!(end, End::Stop { .. }));
}

#[test]
fn microsecond_resolution_current_layout() {
    let t0 = 1_795_264_894_000_001_000;
    let mut w = Writer::new(Layout::Current, 1_000_000, 0, 0, "h", t0);
    w.event(1, t0 + 2_000, &[]);
    w.stop(t0 + 3_000);
    let (init, recs, _) = read_all(w.bytes());
    assert_eq!((init.layout, init.resolution), (Layout::Current, 1_000_000));
    assert_eq!(recs[0].time_ns, t0 + 2_000);
}

#[test]
fn missing_stop_and_truncation_end_the_stream_with_a_report() {
    let mut w = Writer::new(Layout::Current, 1_000_000_000, 0, 0, "h", T);
    w.event(1, T + 1, &[Value::U32(5)]);
    let whole = w.bytes().len();
    w.event(2, T + 2, &[Value::U32(6), Value::U32(7)]);
    let bytes = w.into_bytes();
    let (_, recs, end) = read_all(&bytes);
    assert_eq!(recs.len(), 2);
    assert_eq!(
        end,
        End::NoStop {
            offset: bytes.len() as u64
        }
    );
    let (_, recs, end) = read_all(&bytes[..bytes.len() - 3]);
    assert_eq!(recs.len(), 1);
    assert!(matches!(end, End::Truncated { offset, .. } if offset == whole as u64));
}

#[test]
fn bad_input_is_an_error_at_its_offset() {
    let mut w = Writer::new(Layout::Current, 1_000_000_000, 0, 0, "h", T);
    let at = w.bytes().len();
    w.event(1, T + 1, &[Value::U32(5)]);
    w.stop(T + 2);
    let mut bytes = w.into_bytes();
    // Type nibble 9 in the first field.
    bytes[at + 1] = (bytes[at + 1] & 0x0f) | 0x90;
    let mut r = RstReader::new(&bytes[..]).unwrap();
    let e = r.next_into(&mut Record::default()).unwrap_err();
    assert_eq!(e.offset, at as u64);
    assert!(e.to_string().contains("bad type code 9"), "{e}");

    // Not INIT first.
    let mut w = Writer::new(Layout::Current, 1_000_000_000, 0, 0, "h", T);
    w.stop(T);
    let mut b = w.into_bytes();
    b[2] = 0x00;
    b[3] = 0x10;
    let e = RstReader::new(&b[..]).err().unwrap();
    assert!(e.to_string().contains("expected INIT"), "{e}");

    // A string that never ends within the limit.
    let mut w = Writer::new(Layout::Current, 1_000_000_000, 0, 0, "h", T);
    let at = w.bytes().len();
    let long = "x".repeat(MAX_STRING + 10);
    w.event(3, T + 1, &[Value::Str(&long)]);
    let e = {
        let mut r = RstReader::new(w.bytes()).unwrap();
        r.next_into(&mut Record::default()).unwrap_err()
    };
    assert!(e.to_string().contains("string without terminator"), "{e}");
    assert!(e.offset > at as u64);
    // The same when strings are read past.
    let skipped = {
        let mut r = RstReader::new(w.bytes()).unwrap().skip_strings();
        r.next_into(&mut Record::default()).unwrap_err()
    };
    assert_eq!(skipped.to_string(), e.to_string());
}

proptest::proptest! {
    #[test]
    fn never_panics(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
        if let Ok(mut r) = RstReader::new(&data[..]) {
            let mut rec = Record::default();
            while let Ok(true) = r.next_into(&mut rec) {}
        }
    }

    /// Garbage after a valid INIT: no panic, and the integer reader
    /// reads as many records, ending the same way, or fails where the
    /// record reader fails.
    #[test]
    fn never_panics_after_a_valid_init(tail in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
        let w = Writer::new(Layout::Current, 1_000_000_000, 0, 0, "h", T);
        let mut data = w.into_bytes();
        data.extend_from_slice(&tail);
        let mut r = RstReader::new(&data[..]).unwrap();
        let mut rec = Record::default();
        let mut ri = RstReader::new(&data[..]).unwrap();
        let (mut ints, mut spare) = (IntRecord::default(), Record::default());
        loop {
            let a = r.next_into(&mut rec);
            let b = ri.next_ints(&mut ints, &mut spare);
            match (a, b) {
                (Ok(true), Ok(true)) => proptest::prop_assert!(ints_match(&ints, &rec)),
                (Ok(false), Ok(false)) => {
                    proptest::prop_assert_eq!(r.end(), ri.end());
                    break;
                }
                (Err(x), Err(y)) => {
                    proptest::prop_assert_eq!(x.to_string(), y.to_string());
                    break;
                }
                (a, b) => proptest::prop_assert!(false, "{:?} against {:?}", a, b),
            }
        }
    }

    /// Every resolution gives `floor(ticks × 1e9 / resolution)`, the
    /// nanosecond and microsecond ones (read without a division) included.
    #[test]
    fn times_are_exact_at_every_resolution(
        res in proptest::sample::select(vec![1_000u64, 1_000_000, 1_000_000_000, 1_000_003, 2_500_000_000]),
        dt in 0i64..4_000_000_000_000,
    ) {
        let t0 = 1_795_264_894_000_000_000;
        let mut w = Writer::new(Layout::Current, res, 0, 0, "h", t0);
        w.event(1, t0 + dt, &[]);
        w.stop(t0 + dt);
        let (_, recs, _) = read_all(w.bytes());
        let ticks = i128::from(t0 + dt) * i128::from(res) / 1_000_000_000;
        let want = ticks * 1_000_000_000 / i128::from(res);
        proptest::prop_assert_eq!(i128::from(recs[0].time_ns), want);
    }
}

#[test]
fn big_endian_files_read_like_little_endian_ones() {
    for layout in [Layout::Current, Layout::Old] {
        let t = if layout == Layout::Old {
            1_100_000_000_123_456_000
        } else {
            T
        };
        let mk = |e: Endian| {
            let mut w = Writer::with_endian(e, layout, 1_000_000_000, 7, 2, "sparc01", t);
            w.event(
                405,
                t + 5_000,
                &[
                    Value::U32(1),
                    Value::U32(8),
                    Value::U32(2),
                    Value::Str("mb"),
                ],
            );
            w.event(
                9,
                t + 6_000,
                &[
                    Value::F64(2.5),
                    Value::U16(513),
                    Value::U64(1 << 40),
                    Value::F32(1.5),
                ],
            );
            w.stop(t + 9_000);
            w.into_bytes()
        };
        let (le, be) = (mk(Endian::Little), mk(Endian::Big));
        assert_ne!(le, be);
        let (il, rl, _) = read_all(&le);
        let (ib, rb, end) = read_all(&be);
        assert_eq!((il.endian, ib.endian), (Endian::Little, Endian::Big));
        assert_eq!(
            (ib.id1, ib.id2, ib.host.as_str(), ib.layout),
            (7, 2, "sparc01", layout)
        );
        assert_eq!(rl, rb);
        assert_eq!(rb[1].doubles, vec![2.5]);
        assert_eq!(rb[1].u16s, vec![513]);
        assert!(matches!(end, End::Stop { .. }));
    }
}

/// A reader that hands out at most `n` bytes per call, so records
/// straddle the buffer and take the stream path.
struct Trickle<'a> {
    data: &'a [u8],
    n: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.n.min(buf.len()).min(self.data.len());
        buf[..k].copy_from_slice(&self.data[..k]);
        self.data = &self.data[k..];
        Ok(k)
    }
}

#[test]
fn records_straddling_the_buffer_decode_the_same() {
    let mut w = Writer::new(Layout::Current, 1_000_000_000, 1, 2, "h", T);
    for i in 0..20_000u32 {
        let name = "m".repeat((i % 23) as usize);
        w.event(
            405,
            T + i64::from(i) * 100,
            &[
                Value::U32(i),
                Value::Str(&name),
                Value::U64(u64::from(i) << 33),
                Value::U8(i as u8),
            ],
        );
    }
    w.stop(T + 3_000_000);
    let bytes = w.into_bytes();
    assert!(bytes.len() > 3 << 16);
    let (_, whole, end_a) = read_all(&bytes);
    for n in [1, 7, 4093, 65_537] {
        let mut r = RstReader::new(Trickle { data: &bytes, n }).unwrap();
        let mut rec = Record::default();
        let mut k = 0;
        while r.next_into(&mut rec).unwrap() {
            assert_eq!(rec, whole[k], "chunk {n}, record {k}");
            k += 1;
        }
        assert_eq!(k, 20_000);
        assert_eq!(r.end(), &end_a);
    }
}

/// A writer in the old layout (µs) or the current one (ns), big-endian
/// or not.
fn writer(old: bool, big: bool) -> Writer {
    let layout = if old { Layout::Old } else { Layout::Current };
    let res = if old { 1_000_000 } else { 1_000_000_000 };
    let endian = if big { Endian::Big } else { Endian::Little };
    Writer::with_endian(endian, layout, res, 1, 2, "h", T)
}

/// The bytes of `w` with `recs` added at their time steps (past an hour:
/// a new time base) and a STOP.
fn file(mut w: Writer, recs: &[(u16, i64, Vec<Value<'_>>)]) -> Vec<u8> {
    let mut t = T;
    for (ty, step, values) in recs {
        t += step;
        w.event(*ty, t, values);
    }
    w.stop(t);
    w.into_bytes()
}

/// One value of a random record.
fn value_strategy() -> impl proptest::strategy::Strategy<Value = Value<'static>> {
    use proptest::prelude::*;
    prop_oneof![
        any::<u32>().prop_map(Value::U32),
        any::<u64>().prop_map(Value::U64),
        any::<u16>().prop_map(Value::U16),
        any::<u8>().prop_map(Value::U8),
        any::<u32>().prop_map(|b| Value::F32(f32::from_bits(b & 0x7f7f_ffff))),
        any::<u64>().prop_map(|b| Value::F64(f64::from_bits(b & 0x7fef_ffff_ffff_ffff))),
        // Lengths around the padding, and the longest string allowed.
        proptest::sample::select(vec![
            "",
            "a",
            "abcd",
            "mbox-7",
            &*"y".repeat(MAX_STRING).leak()
        ])
        .prop_map(Value::Str),
    ]
}

/// Up to 39 random records (type, time step, values), each of fewer than
/// `values` values.
fn records(
    values: usize,
) -> impl proptest::strategy::Strategy<Value = Vec<(u16, i64, Vec<Value<'static>>)>> {
    proptest::collection::vec(
        (
            0u16..0x3000,
            0i64..7_200_000_000_000,
            proptest::collection::vec(value_strategy(), 0..values),
        ),
        1..40,
    )
}

proptest::proptest! {
    /// Records read straight from the buffer (one header, no string to
    /// keep: the common case) decode as the general path decodes them,
    /// which a reader handing out one byte at a time forces, in both
    /// layouts and byte orders.
    #[test]
    fn the_buffer_fast_path_decodes_as_the_general_path(
        recs in records(10),
        (old, big) in proptest::prelude::any::<(bool, bool)>(),
    ) {
        let mut w = writer(old, big);
        // Past the first 4096 bytes, which the reader keeps whole: there
        // the one-byte reader takes the general path.
        let filler = "f".repeat(900);
        for _ in 0..5 {
            w.event(7, T, &[Value::Str(&filler)]);
        }
        let bytes = file(w, &recs);
        let (_, whole, end) = read_all(&bytes);
        proptest::prop_assert_eq!(whole.len(), recs.len() + 5);
        for (rec, (ty, _, values)) in whole.iter().skip(5).zip(&recs) {
            proptest::prop_assert_eq!(rec.ty, *ty);
            let u32s: Vec<u64> = values.iter().filter_map(|v| match *v {
                Value::U32(x) => Some(u64::from(x)),
                _ => None,
            }).collect();
            let u64s: Vec<u64> = values.iter().filter_map(|v| match *v {
                Value::U64(x) => Some(x),
                _ => None,
            }).collect();
            proptest::prop_assert_eq!(rec.u32s.iter().map(|&x| u64::from(x)).collect::<Vec<_>>(), u32s);
            proptest::prop_assert_eq!(&rec.u64s, &u64s);
            proptest::prop_assert_eq!(rec.fields.len(), values.len());
        }
        let mut r = RstReader::new(Trickle { data: &bytes, n: 1 }).unwrap();
        let mut rec = Record::default();
        let mut k = 0;
        while r.next_into(&mut rec).unwrap() {
            proptest::prop_assert_eq!(&rec, &whole[k]);
            k += 1;
        }
        proptest::prop_assert_eq!(k, whole.len());
        proptest::prop_assert_eq!(r.end(), &end);
        // Strings read past: the same records without their text, from
        // the buffer and from the stream.
        for n in [1, bytes.len()] {
            let mut r = RstReader::new(Trickle { data: &bytes, n }).unwrap().skip_strings();
            let mut k = 0;
            while r.next_into(&mut rec).unwrap() {
                let mut want = whole[k].clone();
                want.strings.clear();
                proptest::prop_assert_eq!(&rec, &want);
                k += 1;
            }
            proptest::prop_assert_eq!(k, whole.len());
            proptest::prop_assert_eq!(r.end(), &end);
        }
    }
}

/// Every integer of `rec`, by type and rank, as [`IntRecord::int`] gives
/// them, and `None` one past each type's last.
fn ints_match(ints: &IntRecord, rec: &Record) -> bool {
    let of = |t: FieldType| -> Vec<u64> {
        match t {
            FieldType::U32 => rec.u32s.iter().map(|&v| u64::from(v)).collect(),
            FieldType::U64 => rec.u64s.clone(),
            FieldType::U16 => rec.u16s.iter().map(|&v| u64::from(v)).collect(),
            _ => rec.u8s.iter().map(|&v| u64::from(v)).collect(),
        }
    };
    ints.offset == rec.offset
        && ints.ty == rec.ty
        && ints.time_ns == rec.time_ns
        && [
            FieldType::U32,
            FieldType::U64,
            FieldType::U16,
            FieldType::U8,
        ]
        .into_iter()
        .all(|t| {
            let want = of(t);
            want.iter()
                .enumerate()
                .all(|(k, &v)| ints.int(t, k) == Some(v))
                && ints.int(t, want.len()).is_none()
        })
        && ints.int(FieldType::Double, 0).is_none()
}

proptest::proptest! {
    /// `next_ints` gives each record's integers as `next_into` reads
    /// them, straight from the buffer or through the general path (one
    /// byte at a time), strings kept or read past, in both layouts and
    /// byte orders, records with more integers than fit in place too;
    /// and ends the file the same way.
    #[test]
    fn next_ints_reads_the_integers_next_into_reads(
        recs in records(16),
        (old, big, skip) in proptest::prelude::any::<(bool, bool, bool)>(),
    ) {
        let bytes = file(writer(old, big), &recs);
        let (_, whole, end) = read_all(&bytes);
        for n in [1, bytes.len()] {
            let r = RstReader::new(Trickle { data: &bytes, n }).unwrap();
            let mut r = if skip { r.skip_strings() } else { r };
            let (mut ints, mut spare) = (IntRecord::default(), Record::default());
            let mut k = 0;
            while r.next_ints(&mut ints, &mut spare).unwrap() {
                proptest::prop_assert!(ints_match(&ints, &whole[k]), "record {}", k);
                // A copy holds the same.
                let mut copy = IntRecord::default();
                copy.clone_from(&ints);
                proptest::prop_assert!(ints_match(&copy, &whole[k]));
                k += 1;
            }
            proptest::prop_assert_eq!(k, whole.len());
            proptest::prop_assert_eq!(r.end(), &end);
        }
    }

    /// `next_ints_of` gives every record's offset, type and time as
    /// `next_into` reads them, the integers of the wanted types, none of
    /// the others read from the buffer, and ends the file the same way.
    #[test]
    fn next_ints_of_reads_the_wanted_integers(
        recs in records(16),
        (old, big, skip) in proptest::prelude::any::<(bool, bool, bool)>(),
        wanted in proptest::collection::vec(proptest::prelude::any::<bool>(), 8),
    ) {
        let bytes = file(writer(old, big), &recs);
        let (_, whole, end) = read_all(&bytes);
        let want = |t: u16| wanted.get(usize::from(t) % 8).copied().unwrap_or(false);
        for n in [1, bytes.len()] {
            let r = RstReader::new(Trickle { data: &bytes, n }).unwrap();
            let mut r = if skip { r.skip_strings() } else { r };
            let (mut ints, mut spare) = (IntRecord::default(), Record::default());
            let mut k = 0;
            while r.next_ints_of(&mut ints, &mut spare, want).unwrap() {
                let w = &whole[k];
                proptest::prop_assert_eq!((ints.offset, ints.ty, ints.time_ns), (w.offset, w.ty, w.time_ns));
                if want(ints.ty) {
                    proptest::prop_assert!(ints_match(&ints, w), "record {}", k);
                }
                k += 1;
            }
            proptest::prop_assert_eq!(k, whole.len());
            proptest::prop_assert_eq!(r.end(), &end);
        }
    }
}

/// Every pattern of one to three values, each type at each place, in a
/// scrambled order and twice over: more patterns than the reader keeps
/// shapes of, numbers after strings (no shape), strings after numbers
/// (read past by length). `next_ints` reads each as `next_into` does.
#[test]
fn every_short_pattern_reads_its_integers() {
    let names = ["", "abc", "abcd", "a string of some length"];
    let value = |t: usize, i: usize| -> Value<'static> {
        let i64v = i as u64;
        match t {
            0 => Value::Str(names[i % names.len()]),
            1 => Value::F64(i as f64 * 0.5),
            2 => Value::F32(i as f32),
            3 => Value::U64(i64v << 35 | i64v),
            4 => Value::U16(i as u16),
            5 => Value::U8(i as u8),
            _ => Value::U32(i as u32 * 7),
        }
    };
    let mut patterns: Vec<Vec<usize>> = Vec::new();
    for n in 1..=3u32 {
        for code in 0..7usize.pow(n) {
            patterns.push((0..n).map(|k| code / 7usize.pow(k) % 7).collect());
        }
    }
    for old in [false, true] {
        let mut w = writer(old, false);
        let mut t = T;
        for round in 0..2 {
            for k in 0..patterns.len() {
                // A stride prime to the count: every pattern, scrambled.
                let p = &patterns[(k * 131 + round) % patterns.len()];
                let values: Vec<Value> = p
                    .iter()
                    .enumerate()
                    .map(|(j, &ty)| value(ty, k + j))
                    .collect();
                t += 1_000;
                w.event(1 + (k % 50) as u16, t, &values);
            }
        }
        w.stop(t);
        let bytes = w.into_bytes();
        let (_, whole, end) = read_all(&bytes);
        assert_eq!(whole.len(), 2 * patterns.len());
        for skip in [false, true] {
            let r = RstReader::new(bytes.as_slice()).unwrap();
            let mut r = if skip { r.skip_strings() } else { r };
            let (mut ints, mut spare) = (IntRecord::default(), Record::default());
            let mut k = 0;
            while r.next_ints(&mut ints, &mut spare).unwrap() {
                assert!(
                    ints_match(&ints, &whole[k]),
                    "old {old}, skip {skip}, record {k}"
                );
                k += 1;
            }
            assert_eq!(k, whole.len());
            assert_eq!(r.end(), &end);
        }
    }
}
