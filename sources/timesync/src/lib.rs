//! Reader for clock-synchronisation files written by libRastro's
//! `rastro_timesync` (fact sheet: docs/formats.md §1).
//!
//! One measurement per line, `<refhost> <reftime> <host> <hosttime>`, with an
//! optional leading sequence number (as the thesis prints table 4.6). Times
//! are integer ticks since the Unix epoch: microseconds in thesis-era files,
//! nanoseconds in current ones. This crate only decodes: it knows nothing of
//! Maillet–Tron or of host identity; the integrator builds clock maps from
//! the records.
//!
//! [`SyncReader`] streams the records, so a file of millions of lines is
//! read in constant memory; [`read`] collects them for small files.
//!
//! Traps handled:
//! - the resolution is stated by `# resolution N` or inferred from magnitude
//!   (below 1e17 = µs); a file mixing both magnitudes is an error, because a
//!   silent guess would shift one host by a factor of 1000. A stated
//!   resolution must come before the first measurement, so that every
//!   record's resolution is known when it is read;
//! - values are parsed as integers, never floats (1e15 µs does not fit the
//!   precision a double would need to keep microseconds exact).
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::io::BufRead;

/// Ticks per second of microsecond files.
pub const MICROS: u64 = 1_000_000;
/// Ticks per second of nanosecond files.
pub const NANOS: u64 = 1_000_000_000;
/// Values at or above this magnitude are taken as nanoseconds when the file
/// does not state its resolution (docs/formats.md §1).
pub const NANO_THRESHOLD: i64 = 100_000_000_000_000_000;

/// One measurement: the reference host's clock and a monitored host's clock
/// read at (nearly) the same instant.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SyncRecord {
    /// 1-based line number in the file.
    pub line: u64,
    /// Name of the reference host.
    pub ref_host: String,
    /// Reference clock reading, in ticks.
    pub ref_time: i64,
    /// Name of the monitored host.
    pub host: String,
    /// Monitored host's clock reading, in ticks.
    pub host_time: i64,
}

/// A whole sync file: its measurements in file order and its resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncFile {
    /// Measurements in file order.
    pub records: Vec<SyncRecord>,
    /// Clock ticks per second.
    pub ticks_per_second: u64,
    /// Whether the resolution was stated by a `# resolution` line.
    pub resolution_stated: bool,
}

/// What went wrong, without the position.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading the underlying stream failed.
    #[error("read error: {0}")]
    Io(#[from] std::io::Error),
    /// A line does not have the expected number of fields.
    #[error("expected `[seq] <refhost> <reftime> <host> <hosttime>`, found {0} field(s)")]
    FieldCount(usize),
    /// A time or sequence field is not an integer.
    #[error("{field} `{text}` is not an integer")]
    NotInteger {
        /// Which field.
        field: &'static str,
        /// The offending text.
        text: String,
    },
    /// A `# resolution` line is malformed.
    #[error("`# resolution` needs a positive integer of ticks per second, found `{0}`")]
    BadResolution(String),
    /// Values of microsecond and nanosecond magnitude are mixed.
    #[error(
        "times mix microsecond and nanosecond magnitudes (value {0}); add a `# resolution` line"
    )]
    MixedResolution(i64),
    /// The file contains no measurement.
    #[error("no measurement line found")]
    Empty,
    /// The file is not UTF-8 text.
    #[error("line is not valid UTF-8")]
    NotText,
    /// A `# resolution` line follows a measurement.
    #[error("`# resolution` must come before the first measurement line")]
    LateResolution,
    /// The last line has no newline.
    #[error("the last line has no newline: the file is cut (re-run rastro_timesync, or end the line if it is whole)")]
    Cut,
}

/// A decoding error with the line it happened on (0 = the whole file).
#[derive(Debug, thiserror::Error)]
#[error("{}{kind}", if *.line > 0 { format!("line {}: ", .line) } else { String::new() })]
pub struct Error {
    /// 1-based line number, or 0 when the error concerns the whole file.
    pub line: u64,
    /// What went wrong.
    pub kind: ErrorKind,
}

impl Error {
    fn at(line: u64, kind: ErrorKind) -> Self {
        Error { line, kind }
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Reads a whole sync file into memory. For small files and tests; the
/// integrator streams with [`SyncReader`].
pub fn read<R: BufRead>(reader: R) -> Result<SyncFile> {
    let mut r = SyncReader::new(reader);
    let mut records = Vec::new();
    let mut rec = SyncRecord::default();
    while r.read_record(&mut rec)? {
        records.push(rec.clone());
    }
    if records.is_empty() {
        return Err(Error::at(0, ErrorKind::Empty));
    }
    Ok(SyncFile {
        records,
        ticks_per_second: r.ticks_per_second(),
        resolution_stated: r.resolution_stated(),
    })
}

/// Streams the measurements of a sync file, one line in memory at a time.
pub struct SyncReader<R> {
    reader: R,
    buf: Vec<u8>,
    line_no: u64,
    stated: Option<u64>,
    /// Whether the values read so far are of nanosecond magnitude.
    nano: Option<bool>,
    records: u64,
}

impl<R: BufRead> SyncReader<R> {
    /// A reader at the start of a sync file.
    pub fn new(reader: R) -> Self {
        SyncReader {
            reader,
            buf: Vec::new(),
            line_no: 0,
            stated: None,
            nano: None,
            records: 0,
        }
    }

    /// Ticks per second of the records read so far: the stated resolution,
    /// else the one their magnitude shows (microseconds when none was read).
    pub fn ticks_per_second(&self) -> u64 {
        match (self.stated, self.nano) {
            (Some(t), _) => t,
            (None, Some(true)) => NANOS,
            _ => MICROS,
        }
    }

    /// Whether a `# resolution` line stated the resolution.
    pub fn resolution_stated(&self) -> bool {
        self.stated.is_some()
    }

    /// Measurements read so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Reads the next measurement into `rec` (its strings are reused);
    /// `false` at the end of the file.
    pub fn read_record(&mut self, rec: &mut SyncRecord) -> Result<bool> {
        loop {
            let end = integrador_lines::read_line(
                &mut self.reader,
                &mut self.buf,
                integrador_lines::MAX_LINE,
            )
            .map_err(|e| Error::at(self.line_no + 1, e.into()))?;
            match end {
                None => return Ok(false),
                // A sync file cut in the middle of a number would place a
                // host years away: its last line without a newline is an
                // error.
                Some(integrador_lines::End::Eof) => {
                    return Err(Error::at(self.line_no + 1, ErrorKind::Cut));
                }
                Some(integrador_lines::End::Newline) => {}
            }
            self.line_no += 1;
            let line = self.line_no;
            let text = std::str::from_utf8(&self.buf)
                .map_err(|_| Error::at(line, ErrorKind::NotText))?
                .trim();
            if text.is_empty() {
                continue;
            }
            if let Some(comment) = text.strip_prefix('#') {
                let mut words = comment.split_whitespace();
                if words.next() == Some("resolution") {
                    let value = words.next().unwrap_or("");
                    match value.parse::<u64>() {
                        Ok(v) if v > 0 && words.next().is_none() => {
                            if self.records > 0 {
                                return Err(Error::at(line, ErrorKind::LateResolution));
                            }
                            self.stated = Some(v);
                        }
                        _ => {
                            return Err(Error::at(
                                line,
                                ErrorKind::BadResolution(value.to_string()),
                            ))
                        }
                    }
                }
                continue;
            }
            parse_line(line, text, rec)?;
            if self.stated.is_none() {
                for v in [rec.ref_time, rec.host_time] {
                    let is_nano = v >= NANO_THRESHOLD;
                    match self.nano {
                        None => self.nano = Some(is_nano),
                        Some(n) if n != is_nano => {
                            return Err(Error::at(line, ErrorKind::MixedResolution(v)))
                        }
                        _ => {}
                    }
                }
            }
            self.records += 1;
            return Ok(true);
        }
    }
}

fn parse_line(line: u64, text: &str, rec: &mut SyncRecord) -> Result<()> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let fields: &[&str] = match words.len() {
        4 => &words,
        5 => {
            let seq = words.first().copied().unwrap_or("");
            seq.parse::<u64>().map_err(|_| {
                Error::at(
                    line,
                    ErrorKind::NotInteger {
                        field: "sequence number",
                        text: seq.to_string(),
                    },
                )
            })?;
            words.get(1..).unwrap_or(&[])
        }
        n => return Err(Error::at(line, ErrorKind::FieldCount(n))),
    };
    let [ref_host, ref_time, host, host_time] = fields else {
        return Err(Error::at(line, ErrorKind::FieldCount(words.len())));
    };
    rec.line = line;
    rec.ref_time = parse_ticks(line, "reference time", ref_time)?;
    rec.host_time = parse_ticks(line, "host time", host_time)?;
    rec.ref_host.clear();
    rec.ref_host.push_str(ref_host);
    rec.host.clear();
    rec.host.push_str(host);
    Ok(())
}

fn parse_ticks(line: u64, field: &'static str, text: &str) -> Result<i64> {
    // Only plain digits: `+5` or `1e15` would be accepted by a looser parser
    // and hide a mangled file.
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::at(
            line,
            ErrorKind::NotInteger {
                field,
                text: text.to_string(),
            },
        ));
    }
    text.parse::<i64>().map_err(|_| {
        Error::at(
            line,
            ErrorKind::NotInteger {
                field,
                text: text.to_string(),
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts_give_the_same_records() {
        let seq = "1 paple 1094221332965040 paple01 1094222792354177\n";
        let plain = "paple 1094221332965040 paple01 1094222792354177\n";
        let a = read(seq.as_bytes()).unwrap();
        let b = read(plain.as_bytes()).unwrap();
        assert_eq!(a.records, b.records);
        assert_eq!(a.ticks_per_second, MICROS);
    }

    #[test]
    fn nanosecond_files_are_detected() {
        let f = read("ref 1795264911000000000 a 1795264911000001000\n".as_bytes()).unwrap();
        assert_eq!(f.ticks_per_second, NANOS);
    }

    #[test]
    fn mixed_magnitudes_are_refused() {
        let text = "ref 1795264911000000 a 1795264911000001\nref 1795264911000000000 a 1795264911000001000\n";
        let e = read(text.as_bytes()).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(matches!(e.kind, ErrorKind::MixedResolution(_)));
    }

    #[test]
    fn a_resolution_after_a_measurement_is_refused() {
        let e = read("ref 5 a 6\n# resolution 1000\n".as_bytes()).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(matches!(e.kind, ErrorKind::LateResolution));
    }

    #[test]
    fn stated_resolution_wins() {
        let f = read("# resolution 1000\nref 5 a 6\n".as_bytes()).unwrap();
        assert_eq!(f.ticks_per_second, 1000);
        assert!(f.resolution_stated);
    }

    #[test]
    fn malformed_lines_name_their_line() {
        for (text, line) in [
            ("\n\nref 12 a\n", 3),
            ("ref 1x a 5\n", 1),
            ("# c\nref 1 a 5 6 7\n", 2),
            ("x ref 1 a 5\n", 1),
            ("ref -1 a 5\n", 1),
            ("# resolution zero\n", 1),
        ] {
            let e = read(text.as_bytes()).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
        }
        assert!(matches!(
            read("# only\n".as_bytes()).unwrap_err().kind,
            ErrorKind::Empty
        ));
    }

    #[test]
    fn every_prefix_is_an_answer_not_a_panic() {
        let text = "1 paple 1094221332965040 paple01 1094222792354177\n5 paple 1094221337489491 paple01 1094222796878767\n";
        for i in 0..text.len() {
            let _ = read(text.as_bytes().get(..i).unwrap());
        }
    }
}
