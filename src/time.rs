//! Times and durations for people: parsing `--reorder-window 10ms`,
//! writing nanoseconds as seconds (exactly, in the trace; rounded, in
//! messages) and epoch times as dates. One place, so every message and the
//! trace agree on how a time looks.

pub use crate::clock::{parse_epoch_ns, seconds_to_ns};

/// Appends nanoseconds as seconds with 9 decimals, exactly.
pub fn push_seconds(out: &mut Vec<u8>, ns: i64) {
    let mut b = itoa::Buffer::new();
    if ns < 0 {
        out.push(b'-');
    }
    let abs = ns.unsigned_abs();
    out.extend_from_slice(b.format(abs / 1_000_000_000).as_bytes());
    out.push(b'.');
    let frac = abs % 1_000_000_000;
    let digits = b.format(frac);
    out.extend(std::iter::repeat_n(b'0', 9 - digits.len()));
    out.extend_from_slice(digits.as_bytes());
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
    }
}
