//! The `.os` recording of the thesis' patched Linux scheduler
//! (docs/formats.md §3): `<seq> <kind> <time> <pid>` per line.
//!
//! Traps handled:
//! - `block`/`unblock` times are microseconds *within the second of the last
//!   `time` record*; the reader resolves them to absolute nanoseconds, and a
//!   state record before any `time` record is an error (it has no second);
//! - kinds come in English and in the thesis' Portuguese (`tempo`,
//!   `bloqueio`, `desbloqueio`);
//! - header lines (`# host`, `# thread <tid> <pid>`) only count before the
//!   first record.

use std::io::BufRead;

/// Header facts of an `.os` file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OsHeader {
    /// `# host <name>`: overrides the host taken from the file name.
    pub host: Option<String>,
    /// `# thread <tid> <pid>` lines: task `tid` is a thread of process `pid`.
    pub threads: Vec<(u32, u32)>,
}

/// Record kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OsKind {
    /// `time` / `tempo`: a new second starts.
    Time,
    /// `block` / `bloqueio`: the task left the CPU (TASK_INTERRUPTIBLE).
    Block,
    /// `unblock` / `desbloqueio`: the task was put on a CPU (TASK_RUNNING).
    Unblock,
}

/// One record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OsRecord {
    /// 1-based line number.
    pub line: u64,
    /// The file's own sequence number.
    pub seq: u64,
    /// Kind of record.
    pub kind: OsKind,
    /// Absolute time in nanoseconds since the epoch, on the host's clock.
    pub time_ns: i64,
    /// The task id (`None` for `time` records).
    pub pid: Option<u32>,
}

/// What went wrong, without the position.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading the underlying stream failed.
    #[error("read error: {0}")]
    Io(#[from] std::io::Error),
    /// Wrong number of fields.
    #[error("expected 4 fields `<seq> <kind> <time> <pid>`, found {0}")]
    FieldCount(usize),
    /// Unknown record kind.
    #[error("unknown record kind `{0}` (expected time, block or unblock, or tempo, bloqueio, desbloqueio)")]
    UnknownKind(String),
    /// A numeric field is not a number.
    #[error("{field} `{text}` is not {expected}")]
    BadNumber {
        /// Field name.
        field: &'static str,
        /// The offending text.
        text: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A state record came before any time record.
    #[error("`{0}` record before any `time` record: its second is unknown")]
    NoSecond(&'static str),
    /// A `# host` or `# thread` line is malformed.
    #[error("malformed `# {0}` header line")]
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

/// Streaming reader of an `.os` file.
pub struct OsReader<R> {
    reader: R,
    buf: String,
    line: u64,
    /// The last line, when it had no newline (left out).
    cut: Option<u64>,
    header: OsHeader,
    pending: bool,
    second: Option<i64>,
    failed: bool,
}

impl<R: BufRead> OsReader<R> {
    /// Opens a file and reads its header lines.
    pub fn new(reader: R) -> Result<Self> {
        let mut me = OsReader {
            reader,
            buf: String::with_capacity(64),
            line: 0,
            cut: None,
            header: OsHeader::default(),
            pending: false,
            second: None,
            failed: false,
        };
        while me.next_line()? {
            let text = me.buf.trim();
            if text.is_empty() {
                continue;
            }
            if let Some(comment) = text.strip_prefix('#') {
                let comment = comment.to_string();
                me.header_line(&comment)?;
                continue;
            }
            me.pending = true;
            break;
        }
        Ok(me)
    }

    /// The header facts.
    pub fn header(&self) -> &OsHeader {
        &self.header
    }

    /// Reads the next record (`time` records included). `Ok(None)` at the
    /// end; after an error, the end from then on.
    pub fn next_record(&mut self) -> Result<Option<OsRecord>> {
        if self.failed {
            return Ok(None);
        }
        let r = self.next_inner();
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    fn next_inner(&mut self) -> Result<Option<OsRecord>> {
        loop {
            if self.pending {
                self.pending = false;
            } else if !self.next_line()? {
                return Ok(None);
            }
            let text = self.buf.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            let line = self.line;
            let err = |kind| Error { line, kind };
            let mut f = text.split_ascii_whitespace();
            let (Some(seq), Some(kind), Some(time), Some(pid)) =
                (f.next(), f.next(), f.next(), f.next())
            else {
                return Err(err(ErrorKind::FieldCount(
                    text.split_ascii_whitespace().count(),
                )));
            };
            if f.next().is_some() {
                return Err(err(ErrorKind::FieldCount(
                    text.split_ascii_whitespace().count(),
                )));
            }
            let seq = number(seq, "sequence number", "a non-negative integer").map_err(err)?;
            let kind = match kind {
                "time" | "tempo" => OsKind::Time,
                "block" | "bloqueio" => OsKind::Block,
                "unblock" | "desbloqueio" => OsKind::Unblock,
                other => return Err(err(ErrorKind::UnknownKind(other.to_string()))),
            };
            if kind == OsKind::Time {
                let secs = number(time, "time", "epoch seconds").map_err(err)?;
                if pid != "-" {
                    return Err(err(ErrorKind::BadNumber {
                        field: "pid",
                        text: pid.to_string(),
                        expected: "`-` on a time record",
                    }));
                }
                let secs = i64::try_from(secs)
                    .ok()
                    .filter(|s| *s <= i64::MAX / 1_000_000_000)
                    .ok_or_else(|| {
                        err(ErrorKind::BadNumber {
                            field: "time",
                            text: time.to_string(),
                            expected: "epoch seconds",
                        })
                    })?;
                self.second = Some(secs);
                return Ok(Some(OsRecord {
                    line,
                    seq,
                    kind,
                    time_ns: secs * 1_000_000_000,
                    pid: None,
                }));
            }
            let name = if kind == OsKind::Block {
                "block"
            } else {
                "unblock"
            };
            let second = self.second.ok_or_else(|| err(ErrorKind::NoSecond(name)))?;
            let micros = number(time, "time", "microseconds 0..999999")
                .ok()
                .filter(|us| *us < 1_000_000)
                .ok_or_else(|| {
                    err(ErrorKind::BadNumber {
                        field: "time",
                        text: time.to_string(),
                        expected: "microseconds 0..999999",
                    })
                })?;
            let pid = number(pid, "pid", "a task id")
                .ok()
                .and_then(|p| u32::try_from(p).ok())
                .ok_or_else(|| {
                    err(ErrorKind::BadNumber {
                        field: "pid",
                        text: pid.to_string(),
                        expected: "a task id",
                    })
                })?;
            // micros < 1e6 was checked above, so the cast is lossless.
            return Ok(Some(OsRecord {
                line,
                seq,
                kind,
                time_ns: second * 1_000_000_000 + micros as i64 * 1000,
                pid: Some(pid),
            }));
        }
    }

    fn next_line(&mut self) -> Result<bool> {
        let line = self.line + 1;
        let end = integrador_lines::read_text_line(
            &mut self.reader,
            &mut self.buf,
            integrador_lines::MAX_LINE,
        )
        .map_err(|e| Error {
            line,
            kind: match e {
                integrador_lines::TextError::Read(e) => e.into(),
                integrador_lines::TextError::NotText => ErrorKind::NotText,
            },
        })?;
        match end {
            None => Ok(false),
            Some(integrador_lines::End::Eof) => {
                self.cut = Some(line);
                Ok(false)
            }
            Some(integrador_lines::End::Newline) => {
                self.line = line;
                Ok(true)
            }
        }
    }

    /// The number of a last line that had no newline and was left out.
    pub fn cut_line(&self) -> Option<u64> {
        self.cut
    }

    fn header_line(&mut self, comment: &str) -> Result<()> {
        let line = self.line;
        let mut w = comment.split_ascii_whitespace();
        match w.next() {
            Some("host") => match (w.next(), w.next()) {
                (Some(h), None) => self.header.host = Some(h.to_string()),
                _ => {
                    return Err(Error {
                        line,
                        kind: ErrorKind::BadHeader("host"),
                    })
                }
            },
            Some("thread") => {
                let tid = w.next().and_then(|t| t.parse::<u32>().ok());
                let pid = w.next().and_then(|t| t.parse::<u32>().ok());
                match (tid, pid, w.next()) {
                    (Some(t), Some(p), None) => self.header.threads.push((t, p)),
                    _ => {
                        return Err(Error {
                            line,
                            kind: ErrorKind::BadHeader("thread"),
                        })
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

fn number(
    text: &str,
    field: &'static str,
    expected: &'static str,
) -> std::result::Result<u64, ErrorKind> {
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ErrorKind::BadNumber {
            field,
            text: text.to_string(),
            expected,
        });
    }
    text.parse::<u64>().map_err(|_| ErrorKind::BadNumber {
        field,
        text: text.to_string(),
        expected,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Result<(OsHeader, Vec<OsRecord>)> {
        let mut r = OsReader::new(text.as_bytes())?;
        let mut v = Vec::new();
        while let Some(rec) = r.next_record()? {
            v.push(rec);
        }
        Ok((r.header().clone(), v))
    }

    #[test]
    fn thesis_table_4_5() {
        let text =
            "1\ttempo\t1096072237\t-\n2\tdesbloqueio\t703861\t23208\n3\tbloqueio\t703869\t23208\n";
        let (_, v) = all(text).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[1].kind, OsKind::Unblock);
        assert_eq!(v[1].time_ns, 1_096_072_237_703_861_000);
        assert_eq!(v[2].kind, OsKind::Block);
        assert_eq!(v[2].pid, Some(23208));
    }

    #[test]
    fn header_lines() {
        let (h, v) = all("# host node01\n# thread 12631 12628\n# other\n1 time 5 -\n").unwrap();
        assert_eq!(h.host.as_deref(), Some("node01"));
        assert_eq!(h.threads, vec![(12631, 12628)]);
        assert_eq!(v.len(), 1);
    }

    #[test]
    fn bad_lines_name_their_line() {
        for (text, line) in [
            ("1 time 5 -\n2 unblock 12\n", 2),
            ("1 time 5 -\n2 wake 12 1\n", 2),
            ("1 unblock 12 1\n", 1),
            ("1 time 5 -\n2 block 1000000 1\n", 2),
            ("1 time x -\n", 1),
            ("1 time 5 7\n", 1),
            ("1 time 5 -\n2 block 5 -3\n", 2),
            ("# thread 1\n", 1),
        ] {
            let e = all(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
        }
    }

    #[test]
    fn every_prefix_is_an_answer_not_a_panic() {
        let text = "# host h\n# thread 2 1\n1 time 1795264911 -\n2 unblock 431212 32149\n3 block 431367 32149\n";
        for i in 0..text.len() {
            let _ = all(text.get(..i).unwrap());
        }
    }
}
