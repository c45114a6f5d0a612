//! The text of each token of a Pajé line ([`super::lines::Text`]).

use crate::time::{Short, SECONDS};

pub fn begin(out: &mut Vec<u8>, id: u8) {
    // Event ids are below 100 (the header defines a few dozen).
    let [a, b] = crate::time::two_digits(u32::from(id % 100));
    match id {
        0..10 => out.push(b),
        10..100 => out.extend_from_slice(&[a, b]),
        _ => out.extend_from_slice(&[b'0' + id / 100, a, b]),
    }
}

/// The text of the latest time: a sampled source writes many lines
/// at one time, and each copies it instead of formatting it again.
#[derive(Default)]
pub struct Seconds {
    ns: Option<i64>,
    /// ` <seconds>`.
    text: Short<SECONDS>,
}

// The tokens of a line are written inline, their rare cases out of line:
// as calls, their entries and exits were a quarter of their instructions
// (three or four calls a line).
#[inline(always)]
pub fn time(out: &mut Vec<u8>, last: &mut Seconds, ns: i64) {
    const S: i64 = 1_000_000_000;
    match last.ns {
        Some(prev) if prev == ns => last.text.append_to(out),
        // In the same second (most lines): only the decimals change.
        // The old text is copied out first, then both are rewritten:
        // copied just after its narrow rewrite, the copy's wide loads
        // waited for those stores to land (store forwarding fails on
        // them), a quarter of this function's samples.
        Some(prev) if prev >= 0 && ns >= 0 && prev / S == ns / S => {
            let at = out.len();
            last.text.append_to(out);
            let copy = out.get_mut(at..).unwrap_or_default();
            last.text.replace_decimals(copy, ns as u64);
            last.ns = Some(ns);
        }
        _ => new_second(out, last, ns),
    }
}

/// [`time`] in another second than the last time's.
#[cold]
#[inline(never)]
fn new_second(out: &mut Vec<u8>, last: &mut Seconds, ns: i64) {
    last.text = Short::default();
    last.text.push(b' ');
    last.text.push_seconds(ns);
    last.ns = Some(ns);
    last.text.append_to(out);
}

#[inline(always)]
pub fn ident(out: &mut Vec<u8>, prefix: u8, n: u32) {
    // Most aliases are below 100 (the containers, types and values of
    // a run): a copy of fixed size, no digit loop.
    if n < 100 {
        let [a, b] = crate::time::two_digits(n);
        if n < 10 {
            out.extend_from_slice(&[b' ', prefix, b]);
        } else {
            out.extend_from_slice(&[b' ', prefix, a, b]);
        }
        return;
    }
    long_ident(out, prefix, n);
}

/// [`ident`] of 100 and more.
#[inline(never)]
fn long_ident(out: &mut Vec<u8>, prefix: u8, n: u32) {
    let mut s = Short::<16>::default();
    s.push(b' ');
    s.push(prefix);
    s.push_u64(u64::from(n));
    s.append_to(out);
}

/// [`super::Lines::head`].
#[inline]
pub fn head(
    out: &mut Vec<u8>,
    last: &mut Seconds,
    (id, ns): (u8, i64),
    container: Option<u32>,
    ty: u32,
    value: Option<u32>,
) {
    begin(out, id);
    time(out, last, ns);
    match container {
        Some(c) => ident(out, b'c', c),
        None => word(out, b"0"),
    }
    ident(out, b't', ty);
    if let Some(v) = value {
        ident(out, b'v', v);
    }
}

pub fn word(out: &mut Vec<u8>, w: &[u8]) {
    out.push(b' ');
    out.extend_from_slice(w);
}

pub fn name(out: &mut Vec<u8>, name: &[u8]) {
    out.push(b' ');
    crate::paje::name::push_name_bytes(out, name);
}

pub fn int(out: &mut Vec<u8>, n: i64) {
    let mut s = Short::<24>::default();
    s.push(b' ');
    s.push_i64(n);
    s.append_to(out);
}

pub fn key(out: &mut Vec<u8>, channel: u32, seq: u64) {
    let mut s = Short::<40>::default();
    s.push(b' ');
    s.push(b'k');
    s.push_u64(u64::from(channel));
    s.push(b'_');
    s.push_u64(seq);
    s.append_to(out);
}

pub fn double(out: &mut Vec<u8>, v: f64) {
    // Most samples are whole (counts, bytes): written as integers they
    // are the very text ryu gives, without its `.0`, at a third of the
    // cost. ryu keeps -0, fractions and what it writes with exponents.
    // (`fract` is a libm call: the cast tells a whole number too.)
    if v.abs() < 1e15 && (v as i64) as f64 == v && !(v == 0.0 && v.is_sign_negative()) {
        let n = v as i64;
        // Below 100 (zeros, most of a PCP archive's rates): one copy
        // of fixed size.
        if (0..100).contains(&n) {
            let [a, b] = crate::time::two_digits(n as u32);
            if n < 10 {
                out.extend_from_slice(&[b' ', b]);
            } else {
                out.extend_from_slice(&[b' ', a, b]);
            }
            return;
        }
        let mut s = Short::<24>::default();
        s.push(b' ');
        s.push_i64(n);
        s.append_to(out);
        return;
    }
    if let Some((m, k)) = crate::time::few_decimals(v) {
        let mut s = Short::<24>::default();
        s.push(b' ');
        s.push_fixed(m, k);
        s.append_to(out);
        return;
    }
    out.push(b' ');
    let mut r = ryu::Buffer::new();
    let s = r.format(v);
    // ryu writes whole numbers as `12.0`; the `.0` adds nothing.
    out.extend_from_slice(s.strip_suffix(".0").unwrap_or(s).as_bytes());
}
