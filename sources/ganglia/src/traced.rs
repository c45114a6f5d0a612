//! The `.traced` recording of the thesis' Ganglia helper
//! (docs/formats.md §2): one sample per line,
//! `<time> <metric> <host> <value>`, with optional `# collector <host>` and
//! `# cluster <name>` header lines.
//!
//! Traps handled:
//! - `time` may be integer or decimal epoch seconds; it is parsed exactly
//!   into nanoseconds (a double would lose microseconds at 1.8e9 s);
//! - header lines only count before the first sample: a later `# cluster`
//!   line is an ordinary comment, so a file cannot change its cluster midway;
//! - a value that is not a finite decimal number is an error, not a zero.

use std::io::BufRead;

/// Header facts of a recording: whose clock stamped it, which cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TracedHeader {
    /// `# collector <host>`: the host whose clock stamped the samples.
    pub collector: Option<String>,
    /// `# cluster <name>`: the Ganglia cluster of the hosts.
    pub cluster: Option<String>,
    /// `# reorder-window <duration>` (`20m`): how far back a line may
    /// step, as written (the reader of the samples parses it).
    pub reorder_window: Option<String>,
}

/// One sample. The caller owns it and passes it to
/// [`TracedReader::read_sample`], which reuses its strings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    /// 1-based line number.
    pub line: u64,
    /// Time in nanoseconds since the epoch, on the collector's clock.
    pub time_ns: i64,
    /// Ganglia metric name (`cpu_user`, `bytes_out`...).
    pub metric: String,
    /// Host name as Ganglia reported it.
    pub host: String,
    /// The value.
    pub value: f64,
}

/// What went wrong, without the position.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading the underlying stream failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Wrong number of fields on a sample line.
    #[error("expected 4 fields `<time> <metric> <host> <value>`, found {0}")]
    FieldCount(usize),
    /// The time field is not epoch seconds.
    #[error("time `{0}` is not epoch seconds (digits with an optional decimal part)")]
    BadTime(String),
    /// The value field is not a finite number.
    #[error("value `{0}` is not a finite decimal number")]
    BadValue(String),
    /// A header line is missing its argument.
    #[error("`# {0}` header line needs exactly one name")]
    BadHeader(&'static str),
    /// The line is not UTF-8.
    #[error("line is not valid UTF-8")]
    NotText,
}

/// A decoding error with its line.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {kind}")]
pub struct Error {
    /// 1-based line number.
    pub line: u64,
    /// What went wrong.
    pub kind: ErrorKind,
}

/// Result alias of this module.
pub type Result<T> = std::result::Result<T, Error>;

/// Streaming reader of a `.traced` recording.
pub struct TracedReader<R> {
    reader: R,
    buf: Vec<u8>,
    line: u64,
    /// The last line, when it had no newline (left out: the file was cut
    /// while it was written).
    cut: Option<u64>,
    header: TracedHeader,
    /// The first sample line, read while looking for header lines.
    pending: bool,
    failed: bool,
    /// The last time field read and its value: a recorder writes one
    /// time for all the samples of a round (a thousand lines of 64 hosts
    /// x 16 metrics), so it is compared, not parsed again.
    last_time: LastTime,
}

/// A time field's text (when short enough) and the time it gives.
struct LastTime {
    text: [u8; 24],
    /// `usize::MAX` before the first: no field matches.
    len: usize,
    ns: i64,
}

impl Default for LastTime {
    fn default() -> LastTime {
        LastTime {
            text: [0; 24],
            len: usize::MAX,
            ns: 0,
        }
    }
}

impl LastTime {
    #[inline]
    fn parse(&mut self, field: &[u8]) -> Option<i64> {
        if field.len() == self.len && self.text.get(..self.len) == Some(field) {
            return Some(self.ns);
        }
        let ns = parse_epoch_ns(field)?;
        if let Some(slot) = self.text.get_mut(..field.len()) {
            slot.copy_from_slice(field);
            self.len = field.len();
            self.ns = ns;
        }
        Some(ns)
    }
}

impl<R: BufRead> TracedReader<R> {
    /// Opens a recording and reads its header lines (the leading `#` lines).
    pub fn new(reader: R) -> Result<Self> {
        let mut me = TracedReader {
            reader,
            buf: Vec::with_capacity(128),
            line: 0,
            cut: None,
            header: TracedHeader::default(),
            pending: false,
            failed: false,
            last_time: LastTime::default(),
        };
        while me.next_line()? {
            let text = trim(&me.buf);
            if text.is_empty() {
                continue;
            }
            if text.first() == Some(&b'#') {
                let text = text.to_vec();
                me.header_line(&text)?;
                continue;
            }
            me.pending = true;
            break;
        }
        Ok(me)
    }

    /// The header facts.
    pub fn header(&self) -> &TracedHeader {
        &self.header
    }

    /// The number of a last line that had no newline and was left out.
    pub fn cut_line(&self) -> Option<u64> {
        self.cut
    }

    /// Line number of the last line read.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Reads the next sample into `sample`. Returns `Ok(false)` at the end.
    /// After an error the reader reports the end from then on.
    pub fn read_sample(&mut self, sample: &mut Sample) -> Result<bool> {
        if self.failed {
            return Ok(false);
        }
        let r = self.read_sample_inner(sample);
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    fn read_sample_inner(&mut self, sample: &mut Sample) -> Result<bool> {
        loop {
            if self.pending {
                self.pending = false;
            } else if !self.next_line()? {
                return Ok(false);
            }
            let text = trim(&self.buf);
            if text.is_empty() || text.first() == Some(&b'#') {
                continue;
            }
            let line = self.line;
            let err = |kind| Error { line, kind };
            let Some([time, metric, host, value]) = four_fields(text) else {
                let n = trim(&self.buf)
                    .split(|b| b.is_ascii_whitespace())
                    .filter(|f| !f.is_empty())
                    .count();
                return Err(err(ErrorKind::FieldCount(n)));
            };
            let field = |(a, b): (usize, usize)| text.get(a..b).unwrap_or_default();
            sample.line = line;
            sample.time_ns = self.last_time.parse(field(time)).ok_or_else(|| {
                err(ErrorKind::BadTime(
                    String::from_utf8_lossy(field(time)).into_owned(),
                ))
            })?;
            // The whole line checked once (nearly always UTF-8) instead
            // of each field: three checks a sample were a tenth of a
            // recording's run. A line that fails takes the field-by-field
            // way, which finds the same first error as before.
            let bad_value = || {
                err(ErrorKind::BadValue(
                    String::from_utf8_lossy(field(value)).into_owned(),
                ))
            };
            match std::str::from_utf8(text) {
                Ok(t) => {
                    let field = |(a, b): (usize, usize)| t.get(a..b).unwrap_or_default();
                    sample.metric.clear();
                    sample.metric.push_str(field(metric));
                    if sample.host != field(host) {
                        sample.host.clear();
                        sample.host.push_str(field(host));
                    }
                    sample.value = parse_value(field(value)).ok_or_else(bad_value)?;
                }
                Err(_) => {
                    set_str(&mut sample.metric, field(metric)).map_err(err)?;
                    set_str(&mut sample.host, field(host)).map_err(err)?;
                    let v = std::str::from_utf8(field(value)).map_err(|_| bad_value())?;
                    sample.value = parse_value(v).ok_or_else(bad_value)?;
                }
            }
            return Ok(true);
        }
    }

    fn next_line(&mut self) -> Result<bool> {
        let end = integrador_lines::read_line(
            &mut self.reader,
            &mut self.buf,
            integrador_lines::MAX_LINE,
        )
        .map_err(|e| Error {
            line: self.line + 1,
            kind: e.into(),
        })?;
        match end {
            None => Ok(false),
            Some(integrador_lines::End::Eof) => {
                self.cut = Some(self.line + 1);
                Ok(false)
            }
            Some(integrador_lines::End::Newline) => {
                self.line += 1;
                Ok(true)
            }
        }
    }

    fn header_line(&mut self, text: &[u8]) -> Result<()> {
        let line = self.line;
        let text = std::str::from_utf8(text).map_err(|_| Error {
            line,
            kind: ErrorKind::NotText,
        })?;
        let mut words = text.trim_start_matches('#').split_whitespace();
        let key = words.next();
        let (slot, name) = match key {
            Some("collector") => (&mut self.header.collector, "collector"),
            Some("cluster") => (&mut self.header.cluster, "cluster"),
            Some("reorder-window") => (&mut self.header.reorder_window, "reorder-window"),
            _ => return Ok(()),
        };
        match (words.next(), words.next()) {
            (Some(v), None) => {
                *slot = Some(v.to_string());
                Ok(())
            }
            _ => Err(Error {
                line,
                kind: ErrorKind::BadHeader(name),
            }),
        }
    }
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if first.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = s {
        if last.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    s
}

fn set_str(dst: &mut String, src: &[u8]) -> std::result::Result<(), ErrorKind> {
    let s = std::str::from_utf8(src).map_err(|_| ErrorKind::NotText)?;
    dst.clear();
    dst.push_str(s);
    Ok(())
}

/// Parses `digits[.digits]` epoch seconds into nanoseconds, exactly.
/// Digits beyond the ninth decimal are dropped (floor), since the integrator
/// keeps nanoseconds.
pub fn parse_epoch_ns(text: &[u8]) -> Option<i64> {
    // One pass over the digits: this runs once a sample.
    let (mut secs, mut rest) = (0i64, text);
    let mut n = 0;
    while let [d @ b'0'..=b'9', r @ ..] = rest {
        n += 1;
        if n > 11 {
            return None;
        }
        secs = secs * 10 + i64::from(d - b'0');
        rest = r;
    }
    if n == 0 {
        return None;
    }
    let (mut nanos, mut k) = (0i64, 0u32);
    match rest {
        [] => {}
        [b'.', frac @ ..] => {
            for &d in frac {
                if !d.is_ascii_digit() {
                    return None;
                }
                if k < 9 {
                    nanos = nanos * 10 + i64::from(d - b'0');
                    k += 1;
                }
            }
        }
        _ => return None,
    }
    secs.checked_mul(1_000_000_000)?
        .checked_add(nanos * 10i64.pow(9 - k))
}

/// The four whitespace-separated fields of a sample line (trimmed) as
/// byte ranges; `None` when there are not exactly four.
fn four_fields(t: &[u8]) -> Option<[(usize, usize); 4]> {
    let mut out = [(0, 0); 4];
    let mut n = 0;
    // Where the field being read starts: just after the last whitespace.
    let mut from = 0;
    let mut gap = |at: usize| -> Option<()> {
        if at > from {
            *out.get_mut(n)? = (from, at);
            n += 1;
        }
        from = at + 1;
        Some(())
    };
    // ASCII whitespace is all at or below b' ': eight bytes at a time,
    // the bytes up to 0x20 are found with a few word operations (a byte
    // by byte loop was a third of the decoding thread), then each is
    // tested for whitespace (the rest are control characters, parts of a
    // field as any other byte).
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Added to a byte's low seven bits, sets its high bit from 0x21 up.
    const ABOVE_SPACE: u64 = 0x5f5f_5f5f_5f5f_5f5f;
    let mut chunks = t.chunks_exact(8);
    let mut base = 0;
    for c in &mut chunks {
        let x = u64::from_le_bytes(c.try_into().ok()?);
        // High bit set: above 0x20 (or not ASCII); no carry crosses a byte.
        let above = (((x & LOW7) + ABOVE_SPACE) | x) & HIGH;
        let mut low = !above & HIGH;
        while low != 0 {
            let i = (low.trailing_zeros() / 8) as usize;
            low &= low - 1;
            if c.get(i).is_some_and(u8::is_ascii_whitespace) {
                gap(base + i)?;
            }
        }
        base += 8;
    }
    for (i, b) in chunks.remainder().iter().enumerate() {
        if b.is_ascii_whitespace() {
            gap(base + i)?;
        }
    }
    gap(t.len())?;
    (n == 4).then_some(out)
}

fn parse_value(text: &str) -> Option<f64> {
    // The usual decimal first: it reads digits, a point and a sign only.
    if let Some(v) = plain_decimal(text.as_bytes()) {
        return Some(v);
    }
    // `str::parse::<f64>` also takes `inf`, `NaN` and `infinity`; a monitor
    // value of that kind is a broken recording, not a number to plot.
    if !text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
    {
        return None;
    }
    let v: f64 = text.parse().ok()?;
    v.is_finite().then_some(v)
}

/// `-?digits(.digits)?` with at most 15 digits in all, as `str::parse`
/// reads it: the digits make an integer below 2^53 and 10^decimals is an
/// exact double, so their quotient is rounded once, to the nearest double
/// of the decimal (the first of `str::parse`'s own ways). Anything else
/// is `None`, left to `str::parse`.
fn plain_decimal(b: &[u8]) -> Option<f64> {
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let (negative, b) = match b {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, b),
    };
    let (mut m, mut digits, mut decimals, mut dot) = (0u64, 0usize, 0usize, None);
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'0'..=b'9' => {
                m = m * 10 + u64::from(c - b'0');
                digits += 1;
                if digits > 15 {
                    return None;
                }
                if dot.is_some() {
                    decimals += 1;
                }
            }
            b'.' if dot.is_none() && i > 0 => dot = Some(i),
            _ => return None,
        }
    }
    if digits == 0 || (dot.is_some() && decimals == 0) {
        return None;
    }
    let v = m as f64 / POW10.get(decimals)?;
    Some(if negative { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Result<(TracedHeader, Vec<Sample>)> {
        let mut r = TracedReader::new(text.as_bytes())?;
        let mut out = Vec::new();
        let mut s = Sample::default();
        while r.read_sample(&mut s)? {
            out.push(s.clone());
        }
        Ok((r.header().clone(), out))
    }

    #[test]
    fn thesis_example_line() {
        let (h, s) = all("1096944667 bytes_out athlon01.lsc.ufsm.br 0.59\n").unwrap();
        assert_eq!(h, TracedHeader::default());
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].time_ns, 1_096_944_667_000_000_000);
        assert_eq!(s[0].metric, "bytes_out");
        assert_eq!(s[0].host, "athlon01.lsc.ufsm.br");
        assert_eq!(s[0].value, 0.59);
        assert_eq!(s[0].line, 1);
    }

    #[test]
    fn header_lines_and_decimal_times() {
        let text = "# recording\n# cluster lsc.example\n# collector athlon01\n\n1795265500.519 cpu_wio vm 0.0\n# cluster ignored\n1795265502.5 cpu_wio vm 1e2\n";
        let (h, s) = all(text).unwrap();
        assert_eq!(h.cluster.as_deref(), Some("lsc.example"));
        assert_eq!(h.collector.as_deref(), Some("athlon01"));
        assert_eq!(s[0].time_ns, 1_795_265_500_519_000_000);
        assert_eq!(s[0].line, 5);
        assert_eq!(s[1].time_ns, 1_795_265_502_500_000_000);
        assert_eq!(s[1].value, 100.0);
    }

    #[test]
    fn bad_lines_name_their_line() {
        for (text, line) in [
            ("1 m h 1\n1 m h\n", 2),
            ("1 m h 1 extra\n", 1),
            ("x m h 1\n", 1),
            ("1.5.2 m h 1\n", 1),
            ("1 m h abc\n", 1),
            ("1 m h nan\n", 1),
            ("1 m h inf\n", 1),
            ("# cluster\n", 1),
            ("-5 m h 1\n", 1),
        ] {
            let e = all(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
        }
    }

    #[test]
    fn every_prefix_is_an_answer_not_a_panic() {
        let text = "# cluster c\n# collector k\n1795265500.519 cpu_wio vm 0.0\n1795265502 cpu_user vm 12.5\n";
        for i in 0..text.len() {
            let _ = all(text.get(..i).unwrap());
        }
    }

    /// A time like the line before's is taken from it, one unlike it
    /// (same length, another length, a bad one) is read again.
    #[test]
    fn repeated_times_read_as_new_ones() {
        let text = "1.5 m h 1\n1.5 m h 2\n2.5 m h 3\n1.5 m h 4\n1.50 m h 5\n1795264911.123456789012 m h 6\n1795264911.123456789012 m h 7\n1795264911.12345678901234567 m h 8\n1795264911.12345678901234567 m h 9\n";
        let (_, s) = all(text).unwrap();
        let times: Vec<i64> = s.iter().map(|s| s.time_ns).collect();
        let big = 1_795_264_911_123_456_789;
        assert_eq!(
            times,
            [
                1_500_000_000,
                1_500_000_000,
                2_500_000_000,
                1_500_000_000,
                1_500_000_000,
                big,
                big,
                big,
                big
            ]
        );
        let e = all("1.5 m h 1\n1.5x m h 2\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
    }

    #[test]
    fn epoch_parsing_is_exact() {
        assert_eq!(
            parse_epoch_ns(b"1795264911.2935701239"),
            Some(1_795_264_911_293_570_123)
        );
        assert_eq!(parse_epoch_ns(b"0.000000001"), Some(1));
        assert_eq!(parse_epoch_ns(b"12."), Some(12_000_000_000));
        assert_eq!(parse_epoch_ns(b".5"), None);
        assert_eq!(parse_epoch_ns(b"99999999999999"), None);
    }

    /// The one-pass readings of a time and of a line's fields agree with
    /// the plain ones on every string over a small alphabet, up to six
    /// bytes long (and on long digit runs).
    #[test]
    fn one_pass_readings_agree_with_plain_ones() {
        fn plain_epoch(text: &[u8]) -> Option<i64> {
            let (int, frac) = match text.iter().position(|&b| b == b'.') {
                Some(dot) => (&text[..dot], &text[dot + 1..]),
                None => (text, &[][..]),
            };
            if int.is_empty() || int.len() > 11 || !int.iter().all(u8::is_ascii_digit) {
                return None;
            }
            if !frac.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let secs: i64 = std::str::from_utf8(int).unwrap().parse().unwrap();
            let mut nanos: i64 = 0;
            for i in 0..9 {
                nanos = nanos * 10 + frac.get(i).map_or(0, |&d| i64::from(d - b'0'));
            }
            secs.checked_mul(1_000_000_000)?.checked_add(nanos)
        }
        // Values: the short reading is `str::parse`'s wherever it reads.
        let mut read = 0;
        for v in [
            "0",
            "-0",
            "51.39",
            "-7.5",
            "0.1",
            "123456789012345",
            "1234567890123456",
            "9007199254740993",
            "0.000000000000001",
            "99999999999999.9",
            "1.",
            ".5",
            "+5",
            "1e5",
            "--1",
            "1.2.3",
            "",
            "-",
            "00012.50",
        ] {
            if let Some(fast) = plain_decimal(v.as_bytes()) {
                read += 1;
                assert_eq!(fast.to_bits(), v.parse::<f64>().unwrap().to_bits(), "{v}");
            }
        }
        assert_eq!(read, 8);
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 15 + 1) as usize;
            let m = (x >> 8) % 10u64.pow(digits as u32);
            let text = format!("{m:0digits$}");
            let dot = (x >> 60) as usize % digits;
            let v = if dot == 0 {
                text
            } else {
                format!("{}.{}", &text[..dot], &text[dot..])
            };
            let v = if x & 1 == 1 { format!("-{v}") } else { v };
            let fast = plain_decimal(v.as_bytes()).unwrap_or_else(|| panic!("{v}"));
            assert_eq!(fast.to_bits(), v.parse::<f64>().unwrap().to_bits(), "{v}");
        }
        let alphabet = b"09.x \t";
        let mut strings: Vec<Vec<u8>> = vec![Vec::new()];
        for _ in 0..6 {
            let longer: Vec<Vec<u8>> = strings
                .iter()
                .filter(|s| s.len() == strings.last().unwrap().len())
                .flat_map(|s| {
                    alphabet.iter().map(move |&c| {
                        let mut t = s.clone();
                        t.push(c);
                        t
                    })
                })
                .collect();
            strings.extend(longer);
        }
        for n in [9, 10, 11, 12, 30] {
            strings.push("9".repeat(n).into_bytes());
            strings.push(format!("{}.123456789123", "7".repeat(n)).into_bytes());
        }
        // Lines of every length up to 80 from bytes around the whitespace
        // ones, each word of eight read at every offset.
        let alphabet = b"a9. \t\n\x0b\x0c\r\x00\x1f\x20\x21\x7f\x80\xa0\xff";
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 81) as usize;
            let mut y = x;
            let s: Vec<u8> = (0..len)
                .map(|_| {
                    y = y.rotate_left(7) ^ 0x9E37_79B9_7F4A_7C15;
                    // Mostly letters and spaces, as a sample line is.
                    let k = (y >> 11) as usize % (alphabet.len() * 2);
                    alphabet.get(k).copied().unwrap_or(if k.is_multiple_of(3) {
                        b' '
                    } else {
                        b'a'
                    })
                })
                .collect();
            strings.push(s);
        }
        for s in &strings {
            assert_eq!(parse_epoch_ns(s), plain_epoch(s), "{s:?}");
            let t = trim(s);
            let plain: Vec<&[u8]> = t
                .split(|b| b.is_ascii_whitespace())
                .filter(|f| !f.is_empty())
                .collect();
            let fast = four_fields(t).map(|f| f.map(|(a, b)| &t[a..b]).to_vec());
            assert_eq!(fast, (plain.len() == 4).then_some(plain), "{s:?}");
        }
    }
}
