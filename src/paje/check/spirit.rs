//! A time as pj_dump reads it: boost::spirit Qi's `double_` on the start
//! of the field (`PajeTraceEvent::setTime`), as Boost 1.74 (the one
//! Debian's pajeng 1.3.6 is built with) does it. That is not a correctly
//! rounded parse: the digits go into a 64-bit integer (at most 17 before
//! the point, leading zeros counted; after the point, as many as fit),
//! the rest are dropped, the integer becomes a double (one rounding) and
//! is scaled by one multiplication or division by a power of ten (a
//! second one). So `1.9999999999999998`, as `%.17g` prints the double
//! just below 2, is 2 to pj_dump, and 17 zeros then `3.0` is 0. Times
//! compared as pj_dump compares them need the same doubles.

use std::sync::LazyLock;

/// Digits spirit takes before the point: `2 + 53 * 0.30103` for a double.
const MAX_DIGITS: usize = 17;

/// `1e0` to `1e308`, each the double nearest to it (spirit's table of
/// literals).
static POW10: LazyLock<Vec<f64>> = LazyLock::new(|| {
    (0..=308)
        .map(|k| format!("1e{k}").parse().unwrap_or(f64::INFINITY))
        .collect()
});

fn pow10(k: i32) -> f64 {
    usize::try_from(k)
        .ok()
        .and_then(|k| POW10.get(k).copied())
        .unwrap_or(f64::INFINITY)
}

/// The double spirit reads at the start of `s`; `None` where it reads
/// none (pj_dump's time is then a double never written).
pub(super) fn parse_double(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    let neg = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let n = unsigned(b, &mut i)?;
    Some(if neg { -n } else { n })
}

/// The number after the sign, from `b[*i]` on.
fn unsigned(b: &[u8], i: &mut usize) -> Option<f64> {
    let digit = |i: usize| b.get(i).filter(|d| d.is_ascii_digit()).map(|d| d - b'0');
    // The integer part: leading zeros (up to 17) are passed over but
    // count towards the 17 digits.
    let mut zeros = 0;
    while zeros < MAX_DIGITS && b.get(*i) == Some(&b'0') {
        *i += 1;
        zeros += 1;
    }
    let (mut acc, mut count) = (0u64, 0);
    while count + zeros < MAX_DIGITS {
        let Some(d) = digit(*i) else { break };
        acc = acc * 10 + u64::from(d);
        *i += 1;
        count += 1;
    }
    let got_number = count + zeros >= 1;
    let mut excess = 0i32;
    if got_number {
        while digit(*i).is_some() {
            *i += 1;
            excess = excess.wrapping_add(1);
        }
    } else if let Some(special) = nan_or_inf(b, i) {
        return Some(special);
    }
    let mut frac = 0i32;
    if b.get(*i) == Some(&b'.') {
        *i += 1;
        if excess != 0 {
            while digit(*i).is_some() {
                *i += 1;
            }
        } else {
            // As many digits as the integer takes without overflow; the
            // rest are passed over.
            let from = *i;
            while let Some(d) = digit(*i) {
                match acc
                    .checked_mul(10)
                    .and_then(|a| a.checked_add(u64::from(d)))
                {
                    Some(a) => acc = a,
                    None => break,
                }
                *i += 1;
            }
            frac = (*i - from) as i32;
            while digit(*i).is_some() {
                *i += 1;
            }
            if frac == 0 && !got_number {
                return None;
            }
        }
    } else if !got_number {
        return None;
    }
    if matches!(b.get(*i), Some(b'e' | b'E')) {
        let e_pos = *i;
        *i += 1;
        match exponent(b, i) {
            Some(exp) => return scale(exp.wrapping_add(excess).wrapping_sub(frac), acc),
            // No exponent after the `e`: it is not read, and neither are
            // the digits past the 17th.
            None => {
                *i = e_pos;
                return scale(-frac, acc);
            }
        }
    }
    if frac != 0 {
        scale(-frac, acc)
    } else if excess != 0 {
        scale(excess, acc)
    } else {
        Some(acc as f64)
    }
}

/// `nan`, `nan(...)`, `inf` or `infinity`, in any case.
fn nan_or_inf(b: &[u8], i: &mut usize) -> Option<f64> {
    let word = |at: usize, w: &[u8]| {
        b.get(at..at + w.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(w))
    };
    if word(*i, b"nan") {
        let mut at = *i + 3;
        if b.get(at) == Some(&b'(') {
            // Up to its `)`; without one, no number at all.
            let close = b.get(at..)?.iter().position(|&c| c == b')')?;
            at += close + 1;
        }
        *i = at;
        return Some(f64::NAN);
    }
    if word(*i, b"inf") {
        *i += if word(*i + 3, b"inity") { 8 } else { 3 };
        return Some(f64::INFINITY);
    }
    None
}

/// The exponent after the `e`: a signed 32-bit integer, or none (no
/// digit, or too large).
fn exponent(b: &[u8], i: &mut usize) -> Option<i32> {
    let mut at = *i;
    let neg = match b.get(at) {
        Some(b'-') => {
            at += 1;
            true
        }
        Some(b'+') => {
            at += 1;
            false
        }
        _ => false,
    };
    let from = at;
    let mut n: i32 = 0;
    while let Some(d) = b.get(at).filter(|d| d.is_ascii_digit()) {
        let d = i32::from(d - b'0');
        n = n.checked_mul(10).and_then(|n| {
            if neg {
                n.checked_sub(d)
            } else {
                n.checked_add(d)
            }
        })?;
        at += 1;
    }
    if at == from {
        return None;
    }
    *i = at;
    Some(n)
}

/// `acc` times ten to `exp`, as spirit's `scale`: `None` past a double's
/// decimal exponents.
fn scale(exp: i32, acc: u64) -> Option<f64> {
    const MAX_EXP: i32 = 308;
    const MIN_EXP: i32 = -307;
    if exp >= 0 {
        if exp > MAX_EXP {
            return None;
        }
        return Some(acc as f64 * pow10(exp));
    }
    if exp < MIN_EXP {
        // Spirit's "roundoff compensation" at the lowest exponents.
        let mut n = ((acc / 10) * 10) as f64;
        n += (acc % 10) as f64;
        n /= pow10(-MIN_EXP);
        let exp = exp - MIN_EXP;
        if exp < MIN_EXP {
            return None;
        }
        return Some(n / pow10(-exp));
    }
    Some(acc as f64 / pow10(-exp))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: Option<f64>, b: Option<f64>) -> bool {
        match (a, b) {
            (Some(x), Some(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
            (None, None) => true,
            _ => false,
        }
    }

    /// Each against pj_dump 1.3.6's reading, found by the decision it took
    /// on a trace whose order turns on it (tests/paje: ok-seventeen-digit-
    /// time-read-as-spirit-rounds-it, bad-time-after-seventeen-zeros-is-
    /// zero) or by following Boost 1.74's code.
    #[test]
    fn reads_as_spirit_does() {
        let cases: [(&str, Option<f64>); 27] = [
            ("1.5", Some(1.5)),
            ("2abc", Some(2.0)),
            ("1e3", Some(1000.0)),
            ("abc", None),
            ("", None),
            ("-", None),
            (".", None),
            ("+.e1", None),
            (".5", Some(0.5)),
            ("7.", Some(7.0)),
            ("-0.25x", Some(-0.25)),
            ("5e", Some(5.0)),
            ("1.5e-", Some(1.5)),
            ("1e+3.5", Some(1000.0)),
            // The nearest double is below 2; spirit's is 2.
            (
                "1.9999999999999998889776975374843459576368331909179687499",
                Some(2.0),
            ),
            // 17 digits, as `%.17g` prints: 19999999999999998 is halfway
            // between two doubles and goes to the even one, 2e16.
            ("1.9999999999999998", Some(2.0)),
            ("1.9999999999999997", Some(1.9999999999999996)),
            // 17 zeros take the 17 digits: the 3 is past them.
            ("000000000000000003.0", Some(0.0)),
            ("00000000000000003.0", Some(3.0)),
            // 21 digits: 17 taken, 4 dropped and counted.
            ("100000000000000000000", Some(1e20)),
            // ...but an `e` with no exponent drops the count too.
            ("12345678901234567890e", Some(12345678901234567.0)),
            ("1e308", Some(1e308)),
            ("1e309", None),
            ("1e-700", None),
            ("1e99999999999", Some(1.0)),
            ("-Infinity", Some(f64::NEG_INFINITY)),
            ("infinit", Some(f64::INFINITY)),
        ];
        for (s, want) in cases {
            assert!(same(parse_double(s), want), "{s:?}: {:?}", parse_double(s));
        }
        assert!(parse_double("nan(abc)x").is_some_and(f64::is_nan));
        assert!(parse_double("NaN(").is_none());
        // Below -307, in two divisions: a subnormal, and 0 under them.
        assert!(parse_double("1e-320").is_some_and(|v| v > 0.0 && v < 1e-319));
        assert_eq!(parse_double("1e-400"), Some(0.0));
    }

    proptest::proptest! {
        /// Where every step is exact (at most 15 digits, a power of ten
        /// up to 1e22), spirit's one rounding is the correct one: the
        /// double Rust reads.
        #[test]
        fn short_numbers_are_rust_s(
            sign in "[-+]?",
            int in "[0-9]{0,8}",
            frac in "[0-9]{0,7}",
            exp in proptest::option::of(-7i32..=7),
            tail in "[a-z ]{0,2}",
        ) {
            let text = match exp {
                Some(e) => format!("{sign}{int}.{frac}e{e}"),
                None => format!("{sign}{int}.{frac}"),
            };
            let number = text.clone();
            let rust = if int.is_empty() && frac.is_empty() {
                None
            } else {
                Some(number.parse::<f64>().unwrap())
            };
            let ours = parse_double(&format!("{text}{tail}"));
            proptest::prop_assert!(same(ours, rust), "{:?}: {:?} vs {:?}", text, ours, rust);
        }
    }
}
