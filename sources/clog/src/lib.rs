//! Streaming decoders of MPE logs (fact sheet: `specs/clog.md`):
//! - [`clog2`]: CLOG2 (`CLOG-02.44`), the format of MPE2, with its
//!   preamble, fixed-size blocks, both byte orders and the communicator
//!   table;
//! - [`legacy`]: the MPE 1.x CLOG format of the MPICH-1 era (`a.out.clog`),
//!   whose records [`legacy::Record::to_clog2`] restates in CLOG2 terms.
//!
//! Decoders only: bytes in, typed records with their byte offsets out.
//! Which host a rank ran on, how its clock maps to the epoch and how
//! records become states and messages are the integrator's business.
//! No input makes a reader panic; the first malformed byte ends the stream
//! with an [`Error`] naming its offset.
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

mod bytes;
pub mod clog2;
pub mod legacy;

pub use clog2::{
    Body, Clog2Reader, Coll, CommEntry, Event, Gcomm, Msg, Preamble, RawRecord, Record,
};
pub use legacy::LegacyReader;

/// MPE log formats, as told apart by content (clog.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `CLOG-02.nn`.
    Clog2,
    /// MPE 1.x CLOG: no preamble, big-endian records from byte 0.
    Legacy,
}

/// Tells the format from the first bytes of a file; `None` when it is
/// neither.
pub fn detect(head: &[u8]) -> Option<Format> {
    if clog2::looks_like(head) {
        Some(Format::Clog2)
    } else if legacy::looks_like(head) {
        Some(Format::Legacy)
    } else {
        None
    }
}

/// An MPE log of either format, read as CLOG2 records: MPE-1 CLOG records
/// are converted, and those CLOG2 has no counterpart for are skipped.
pub enum MpeReader<R> {
    /// A CLOG2 log.
    Clog2(Clog2Reader<R>),
    /// An MPE-1 CLOG log.
    Legacy(LegacyReader<R>),
}

impl<R: std::io::Read> MpeReader<R> {
    /// A reader of a log of `format` (as [`detect`] tells it).
    pub fn new(format: Format, inner: R) -> Result<Self> {
        Ok(match format {
            Format::Clog2 => MpeReader::Clog2(Clog2Reader::new(inner)?),
            Format::Legacy => MpeReader::Legacy(LegacyReader::new(inner)),
        })
    }

    /// The next record; `Ok(None)` at the end.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        match self {
            MpeReader::Clog2(r) => r.next_record(),
            MpeReader::Legacy(r) => loop {
                match r.next_record()? {
                    None => return Ok(None),
                    Some(rec) => {
                        if let Some(r2) = rec.to_clog2() {
                            return Ok(Some(r2));
                        }
                    }
                }
            },
        }
    }

    /// The communicator table (CLOG2 writes it at the end; MPE-1 has none).
    pub fn comm_table(&mut self) -> Result<Vec<CommEntry>> {
        match self {
            MpeReader::Clog2(r) => r.comm_table(),
            MpeReader::Legacy(_) => Ok(Vec::new()),
        }
    }

    /// The CLOG2 preamble; `None` for MPE-1, which has none.
    pub fn preamble(&self) -> Option<&Preamble> {
        match self {
            MpeReader::Clog2(r) => Some(r.preamble()),
            MpeReader::Legacy(_) => None,
        }
    }
}

/// What went wrong, without the position.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading the underlying stream failed.
    #[error("read error: {0}")]
    Io(#[from] std::io::Error),
    /// The file ends early.
    #[error("file ends {0}")]
    Truncated(String),
    /// The preamble is not a CLOG-02.44 preamble.
    #[error("bad preamble: {0}")]
    Preamble(String),
    /// A record header names a type this format does not have.
    #[error("unknown record type {0}")]
    UnknownRecord(i32),
    /// A record does not fit where it must.
    #[error("{0}")]
    Layout(String),
    /// A size or count no real file has.
    #[error("{0}")]
    Absurd(String),
}

/// A decoding error at a byte offset.
#[derive(Debug, thiserror::Error)]
#[error("byte {offset}: {kind}")]
pub struct Error {
    /// Offset from the start of the file.
    pub offset: u64,
    /// What went wrong.
    pub kind: ErrorKind,
}

impl Error {
    pub(crate) fn new(offset: u64, kind: ErrorKind) -> Error {
        Error { offset, kind }
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Reads until `buf` is full or the stream ends; returns the bytes read.
pub(crate) fn read_full<R: std::io::Read>(r: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        let Some(rest) = buf.get_mut(n..) else { break };
        match r.read(rest) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
