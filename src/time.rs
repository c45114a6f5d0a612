//! Times and durations for people: parsing `--reorder-window 10ms`,
//! writing nanoseconds as seconds (exactly, in the trace; rounded, in
//! messages) and epoch times as dates. One place, so every message and the
//! trace agree on how a time looks.

pub use crate::clock::{parse_epoch_ns, seconds_to_ns};

/// Appends nanoseconds as seconds with 9 decimals, exactly.
pub fn push_seconds(out: &mut Vec<u8>, ns: i64) {
    let mut s = Short::<SECONDS>::default();
    s.push_seconds(ns);
    s.append_to(out);
}

/// Room for ` <seconds>`: a space, a sign, 19 digits, a point and 9
/// decimals.
pub const SECONDS: usize = 32;

/// `00` to `99`.
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// The two decimal digits of `n` (below 100; its last two otherwise).
#[inline]
pub fn two_digits(n: u32) -> [u8; 2] {
    pair((n % 100) as usize)
}

/// The eight decimal digits of `n` (below 10^8), leading zeros kept,
/// computed in the lanes of one word: split into two halves of four
/// digits, each into two pairs, each pair into two digits, by
/// multiplications that divide exactly in their ranges (x * 5243 >> 19
/// is x / 100 below 43,699; y * 103 >> 10 is y / 10 below 179).
#[inline]
pub fn eight_digits(n: u32) -> [u8; 8] {
    let n = u64::from(n);
    let mut v = (n / 10_000) | ((n % 10_000) << 32);
    let hundreds = ((v * 5243) >> 19) & 0x0000_007f_0000_007f;
    v = hundreds | ((v - hundreds * 100) << 16);
    let tens = ((v * 103) >> 10) & 0x000f_000f_000f_000f;
    v = tens | ((v - tens * 10) << 8);
    (v | 0x3030_3030_3030_3030).to_le_bytes()
}

/// The digits of `d`, below 100.
#[inline]
fn pair(d: usize) -> [u8; 2] {
    match PAIRS.get(2 * d..2 * d + 2) {
        Some(&[a, b]) => [a, b],
        _ => [b'0', b'0'],
    }
}

/// `v` as `m / 10^k` with `k` from 1 to 4, when that is the shortest
/// decimal text that reads back as `v`: then it is the text ryu gives,
/// found at a fraction of ryu's cost (monitor samples are mostly written
/// with two decimals). `None` for anything else, left to ryu.
///
/// Why it is ryu's text: with `|m| < 2^50`, `v`'s rounding interval is
/// under a quarter of `10^-4` wide, so one 4-decimal number at most reads
/// back as `v`: the one `round(v * 10^4)` finds. `m / 10^4`, both exact
/// doubles, is rounded once, so it equals `v` exactly when that decimal
/// reads back as `v`. A shorter decimal that reads back as `v` is also a
/// 4-decimal one, so it is this one with its trailing zeros cut, which
/// makes it the shortest and, alone of its length, ryu's choice. At least
/// `10^-4` and below `2^50`, ryu writes it without an exponent.
#[inline]
pub fn few_decimals(v: f64) -> Option<(i64, u32)> {
    const LIMIT: f64 = (1u64 << 50) as f64;
    let x = v * 1e4;
    // NaN and the infinities fail this too.
    if x.abs() >= LIMIT || x.is_nan() {
        return None;
    }
    // `f64::round` without its libm call: below 2^50 adding a half is
    // exact, and the cast cuts toward zero.
    let m = (x + 0.5f64.copysign(x)) as i64;
    if m == 0 || m as f64 / 1e4 != v {
        return None;
    }
    // The trailing zeros of the four decimals, by their value: a loop of
    // divisions was a tenth of writing a two-decimal sample.
    let r = m.unsigned_abs() % 10_000;
    match r {
        // A whole number: not one of these.
        0 => None,
        _ if r.is_multiple_of(1_000) => Some((m / 1_000, 1)),
        _ if r.is_multiple_of(100) => Some((m / 100, 2)),
        _ if r.is_multiple_of(10) => Some((m / 10, 3)),
        _ => Some((m, 4)),
    }
}

/// A few bytes of text built in place and appended to a line with one
/// copy of fixed size. The numbers of a line are a few bytes each, and
/// appending a slice of unknown length calls `memcpy`, which cost more
/// than making the digits (4% of an akypuera run, on the writing thread).
///
/// `CAP` bytes of room, the most its text may take (bytes past it are
/// dropped): each token its own size, as the block is cleared and copied
/// whole (` k<u32>_<u64>`, a link key, 33 bytes; ` C<u32>`, an alias, 12).
#[derive(Clone, Copy)]
pub struct Short<const CAP: usize> {
    bytes: [u8; CAP],
    len: usize,
}

impl<const CAP: usize> Default for Short<CAP> {
    fn default() -> Self {
        Short {
            bytes: [0; CAP],
            len: 0,
        }
    }
}

impl<const CAP: usize> Short<CAP> {
    /// Appends one byte.
    #[inline]
    pub fn push(&mut self, b: u8) {
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    /// Appends `n` in decimal.
    #[inline]
    pub fn push_u64(&mut self, n: u64) {
        // Most numbers written are small (aliases, counts, decimals).
        let width = match n {
            0..10 => 1,
            10..100 => 2,
            _ => n.ilog10() as usize + 1,
        };
        self.push_digits(n, width);
    }

    /// Appends the last `width` decimal digits of `n`, zeros first: two
    /// at a time from a table, half the divisions of one at a time (the
    /// nine decimals of every time were a tenth of the writing thread).
    #[inline]
    fn push_digits(&mut self, mut n: u64, width: usize) {
        let end = (self.len + width).min(CAP);
        // By index from the end, not by a chunk iterator: its set-up cost
        // as much as the digits of a short number.
        let mut i = end;
        while i >= self.len + 2 {
            i -= 2;
            if let Some(two) = self.bytes.get_mut(i..i + 2) {
                two.copy_from_slice(&pair((n % 100) as usize));
            }
            n /= 100;
        }
        if i > self.len {
            if let Some(first) = self.bytes.get_mut(self.len) {
                *first = b'0' + (n % 10) as u8;
            }
        }
        self.len = end;
    }

    /// Appends `n` in decimal, with its sign.
    #[inline]
    pub fn push_i64(&mut self, n: i64) {
        if n < 0 {
            self.push(b'-');
        }
        self.push_u64(n.unsigned_abs());
    }

    /// Appends `n / 10^decimals` with its `decimals` digits (1 to 9).
    #[inline]
    pub fn push_fixed(&mut self, n: i64, decimals: u32) {
        if n < 0 {
            self.push(b'-');
        }
        // Divisions by constants: multiplications.
        let scale = match decimals {
            1 => 10,
            2 => 100,
            3 => 1_000,
            4 => 10_000,
            d => 10u64.pow(d),
        };
        let abs = n.unsigned_abs();
        self.push_u64(abs / scale);
        self.push(b'.');
        self.push_digits(abs % scale, decimals as usize);
    }

    /// Appends nanoseconds as seconds with 9 decimals, exactly.
    #[inline]
    pub fn push_seconds(&mut self, ns: i64) {
        if ns < 0 {
            self.push(b'-');
        }
        let abs = ns.unsigned_abs();
        self.push_u64(abs / 1_000_000_000);
        self.push(b'.');
        self.push_digits(abs % 1_000_000_000, 9);
    }

    /// Rewrites the last nine digits as `new`'s decimals, in this text
    /// and in `copy`, a copy of it just taken (as long as it): a text
    /// that [`push_seconds`](Self::push_seconds) ended, for a time in the
    /// same second. All nine at once, without a branch: rewriting only
    /// the trailing pairs that changed took a loop whose exit the branch
    /// predictor missed as the number of pairs changed.
    #[inline]
    pub fn replace_decimals(&mut self, copy: &mut [u8], new: u64) {
        let d = new % 1_000_000_000;
        let first = b'0' + (d / 100_000_000) as u8;
        let rest = eight_digits((d % 100_000_000) as u32);
        let i = self.len.saturating_sub(9);
        for t in [&mut self.bytes[..], copy] {
            if let Some((f, r)) = t.get_mut(i..i + 9).and_then(|t| t.split_first_mut()) {
                *f = first;
                r.copy_from_slice(&rest);
            }
        }
    }

    /// Appends the text to `out`: the whole block, then the excess cut.
    #[inline]
    pub fn append_to(&self, out: &mut Vec<u8>) {
        let at = out.len();
        out.extend_from_slice(&self.bytes);
        out.truncate(at + self.len);
    }
}

/// Nanoseconds as seconds with 9 decimals (`-0.500000000`), for messages.
pub fn seconds(ns: i64) -> String {
    let mut v = Vec::new();
    push_seconds(&mut v, ns);
    String::from_utf8_lossy(&v).into_owned()
}

/// Nanoseconds as seconds with milliseconds (`60.000`, `-0.250`).
pub fn millis(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!(
        "{sign}{}.{:03}",
        a / 1_000_000_000,
        a % 1_000_000_000 / 1_000_000
    )
}

/// An epoch time as a UTC date, `2026-11-21 12:34:08` (whole seconds).
pub fn utc(ns: i64) -> String {
    chrono::DateTime::from_timestamp(ns.div_euclid(1_000_000_000), 0).map_or_else(
        || format!("{ns} ns"),
        |d| d.format("%Y-%m-%d %H:%M:%S").to_string(),
    )
}

/// Parses `10ms`, `1s`, `250us`, `5ns`, `20m`, `1h`, `0` into nanoseconds.
pub fn parse_duration(s: &str) -> std::result::Result<i64, String> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let (num, unit) = s.split_at(digits);
    let n: i64 = num
        .parse()
        .map_err(|_| format!("`{s}`: expected a number with a unit, as 10ms"))?;
    let scale = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "" if n == 0 => 1,
        _ => return Err(format!("`{s}`: the unit must be ns, us, ms, s, m or h")),
    };
    n.checked_mul(scale)
        .ok_or_else(|| format!("`{s}` is too long"))
}

/// A window's edge as the command line gives it (`--from`, `--to`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instant {
    /// Epoch nanoseconds on the reference clock.
    Epoch(i64),
    /// Nanoseconds after the run's T0.
    AfterT0(i64),
}

impl Instant {
    /// Its epoch nanoseconds, T0 at `origin`.
    pub fn at(self, origin: i64) -> i64 {
        match self {
            Instant::Epoch(t) => t,
            Instant::AfterT0(d) => origin.saturating_add(d),
        }
    }
}

/// `1795264448.25` (epoch seconds, exact to the nanosecond) or `+90s`
/// (a duration after T0).
pub fn parse_instant(s: &str) -> std::result::Result<Instant, String> {
    if let Some(d) = s.strip_prefix('+') {
        return parse_duration(d).map(Instant::AfterT0);
    }
    let bad =
        || format!("`{s}`: expected epoch seconds (1795264448.5) or a duration after T0 (+90s)");
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |x: &str| x.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(frac) || frac.len() > 9 {
        return Err(bad());
    }
    let secs: i64 = whole.parse().map_err(|_| bad())?;
    let nanos: i64 = format!("{frac:0<9}").parse().map_err(|_| bad())?;
    secs.checked_mul(1_000_000_000)
        .and_then(|n| n.checked_add(nanos))
        .map(Instant::Epoch)
        .ok_or_else(bad)
}

/// The window `[from, to)` of a run with T0 at `origin`, with `points`;
/// T1 ≥ T2 is a usage error.
pub fn window(
    from: Option<Instant>,
    to: Option<Instant>,
    origin: i64,
    points: crate::sink::Points,
) -> crate::error::Result<crate::sink::Cut> {
    let (from, to) = (from.map(|t| t.at(origin)), to.map(|t| t.at(origin)));
    if let (Some(a), Some(b)) = (from, to) {
        if a >= b {
            return Err(crate::error::Error::usage(format!(
                "--from {} is not before --to {}: a window needs T1 < T2",
                seconds(a),
                seconds(b)
            )));
        }
    }
    Ok(crate::sink::Cut { from, to, points })
}

/// A window for messages: `[T1, T2)`, `from T1 on`, `before T2`.
pub fn window_text(from: Option<i64>, to: Option<i64>) -> String {
    match (from, to) {
        (Some(a), Some(b)) => format!("[{}, {})", seconds(a), seconds(b)),
        (Some(a), None) => format!("from {} on", seconds(a)),
        (None, Some(b)) => format!("before {}", seconds(b)),
        (None, None) => "of the whole run".to_string(),
    }
}

/// A window that holds no time of a run spanning `[first, last]`, T0 at
/// `origin`: a usage error naming the span (`what` says where the run is).
pub fn outside(
    from: Option<i64>,
    to: Option<i64>,
    first: i64,
    last: Option<i64>,
    origin: i64,
    what: &str,
) -> crate::error::Error {
    let rel = |t: i64| format!("+{}s", millis(t - origin));
    let run = match last {
        Some(b) => format!(
            "[{}, {}] ({} to {} after T0)",
            seconds(first),
            seconds(b),
            rel(first),
            rel(b)
        ),
        None => format!("from {} on", seconds(first)),
    };
    crate::error::Error::usage(format!(
        "the window {} holds no time of the run{what}, which spans {run}",
        window_text(from, to)
    ))
}

/// Formats nanoseconds for messages: `11ns`, `2.5ms`, `1.2s`.
pub fn format_duration(ns: i64) -> String {
    let abs = ns.unsigned_abs();
    let (value, unit) = if abs >= 1_000_000_000 {
        (ns as f64 / 1e9, "s")
    } else if abs >= 1_000_000 {
        (ns as f64 / 1e6, "ms")
    } else if abs >= 1_000 {
        (ns as f64 / 1e3, "us")
    } else {
        return format!("{ns}ns");
    };
    format!("{}{unit}", (value * 1000.0).round() / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`few_decimals`] finds, written, is ryu's text; what it
    /// leaves is what ryu writes otherwise.
    fn agrees_with_ryu(v: f64) {
        let ours = few_decimals(v).map(|(m, k)| {
            let mut s = Short::<24>::default();
            s.push_fixed(m, k);
            let mut out = Vec::new();
            s.append_to(&mut out);
            String::from_utf8(out).unwrap()
        });
        let mut r = ryu::Buffer::new();
        let theirs = r.format(v);
        if let Some(ours) = ours {
            assert_eq!(ours, theirs, "{v:e}");
        } else if v.fract() != 0.0 && v.abs() >= 1e-4 && v.abs() < 1e11 {
            // Left to ryu: not one to four decimals.
            let decimals = theirs.split_once('.').map_or(0, |(_, d)| d.len());
            assert!(theirs.contains('e') || decimals > 4, "{v:e}: {theirs}");
        }
    }

    #[test]
    fn few_decimals_are_ryus_text() {
        for k in 1..=4u32 {
            let edge = (1i64 << 50) / 10i64.pow(4 - k);
            for m in (-300_000i64..=300_000).chain(edge - 20_000..edge + 20) {
                let text = format!(
                    "{}{}.{:0w$}",
                    if m < 0 { "-" } else { "" },
                    m.unsigned_abs() / 10u64.pow(k),
                    m.unsigned_abs() % 10u64.pow(k),
                    w = k as usize
                );
                let v: f64 = text.parse().unwrap();
                agrees_with_ryu(v);
                if m % 10 != 0 && m.unsigned_abs() * 10u64.pow(4 - k) < 1 << 50 {
                    assert_eq!(few_decimals(v), Some((m, k)), "{text}");
                }
            }
        }
        for v in [
            0.1 + 0.2,
            1e-5,
            1e-4,
            0.00015,
            1e15 + 0.5,
            2.5e-300,
            -0.0,
            0.0,
        ] {
            agrees_with_ryu(v);
        }
        // Doubles from their bits, spread over every exponent.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..300_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x);
            if v.is_finite() {
                agrees_with_ryu(v);
                // And near the short decimals, a few ulps off.
                let near = (v.fract() * 100.0).round() / 100.0 + v.trunc();
                for ulps in -2i64..=2 {
                    agrees_with_ryu(f64::from_bits(near.to_bits().wrapping_add_signed(ulps)));
                }
            }
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10ms"), Ok(10_000_000));
        assert_eq!(parse_duration("2s"), Ok(2_000_000_000));
        assert_eq!(parse_duration("0"), Ok(0));
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("ms").is_err());
        assert_eq!(format_duration(11), "11ns");
        assert_eq!(format_duration(2_500_000), "2.5ms");
    }

    #[test]
    fn seconds_are_exact() {
        assert_eq!(seconds(1_500_000_001), "1.500000001");
        assert_eq!(seconds(-500_000_000), "-0.500000000");
        assert_eq!(millis(60_000_000_000), "60.000");
        assert_eq!(millis(-250_000_000), "-0.250");
        assert_eq!(utc(1_795_264_448_000_000_000), "2026-11-21 12:34:08");
        assert_eq!(seconds(i64::MIN), "-9223372036.854775808");
        assert_eq!(seconds(0), "0.000000000");
    }

    #[test]
    fn short_text_at_every_width() {
        let mut n = 1u64;
        for _ in 0..20 {
            for v in [n - 1, n, n + 1, n.saturating_mul(7) / 3] {
                let mut s = Short::<24>::default();
                s.push_u64(v);
                let mut out = Vec::new();
                s.append_to(&mut out);
                assert_eq!(out, v.to_string().into_bytes());
            }
            n = n.saturating_mul(10);
        }
        for ns in [
            0,
            5,
            99,
            100,
            999_999_999,
            1_000_000_000,
            1_000_000_001,
            -7,
            i64::MIN,
            i64::MAX,
        ] {
            let abs = ns.unsigned_abs();
            let sign = if ns < 0 { "-" } else { "" };
            let plain = format!("{sign}{}.{:09}", abs / 1_000_000_000, abs % 1_000_000_000);
            assert_eq!(seconds(ns), plain);
        }
    }

    #[test]
    fn eight_digits_are_the_plain_ones() {
        for n in (0..100_000_000)
            .step_by(997)
            .chain([0, 9, 10, 99_999_999, 12_345_678])
        {
            assert_eq!(eight_digits(n), *format!("{n:08}").as_bytes(), "{n}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_eight_digits_are_the_plain_ones(n in 0u32..100_000_000) {
            let plain = format!("{n:08}");
            proptest::prop_assert_eq!(&eight_digits(n)[..], plain.as_bytes());
        }

        /// The fixed-block text is the plain formatting, for every value.
        #[test]
        fn short_text_is_the_plain_text(ns: i64, n: u64, m: i64) {
            let abs = ns.unsigned_abs();
            let sign = if ns < 0 { "-" } else { "" };
            let plain = format!("{sign}{}.{:09}", abs / 1_000_000_000, abs % 1_000_000_000);
            proptest::prop_assert_eq!(seconds(ns), plain);
            let mut s = Short::<48>::default();
            s.push(b' ');
            s.push_u64(n);
            s.push(b'_');
            s.push_i64(m);
            let mut out = b"x".to_vec();
            s.append_to(&mut out);
            proptest::prop_assert_eq!(out, format!("x {n}_{m}").into_bytes());
        }
    }
}
