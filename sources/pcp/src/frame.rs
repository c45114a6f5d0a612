//! `u32 len | payload | u32 len` framing, shared by every archive file.

use crate::{Error, ErrorKind, Result};
use std::io::Read;

/// What [`Framed::next`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// A whole record at this offset is in the buffer.
    Record(u64),
    /// The end of the file, or a zero length word (nothing more written).
    End,
    /// The file ends inside the record at this offset (pmlogger may still
    /// be writing, or the file was cut).
    Truncated(u64),
}

/// The longest record read: a pmResult of every metric of a large host
/// is a few MiB; a corrupt length word must not make the reader hold a
/// gigabyte of a decompressed volume.
pub const MAX_RECORD: u32 = 64 << 20;

/// Reads framed records one at a time.
pub struct Framed<R> {
    r: R,
    offset: u64,
}

impl<R: Read> Framed<R> {
    /// Frames records of `r`, whose first byte is at file offset 0.
    pub fn new(r: R) -> Framed<R> {
        Framed { r, offset: 0 }
    }

    /// Offset of the next record.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads the next record, length words included, into `buf`.
    pub fn next(&mut self, buf: &mut Vec<u8>) -> Result<Next> {
        let start = self.offset;
        buf.clear();
        let io = |e: std::io::Error| Error {
            offset: start,
            kind: ErrorKind::Io(e),
        };
        (&mut self.r).take(4).read_to_end(buf).map_err(io)?;
        match buf.len() {
            0 => return Ok(Next::End),
            4 => {}
            _ => return Ok(Next::Truncated(start)),
        }
        let len = crate::bytes::length_word(buf, 0);
        if len == 0 {
            return Ok(Next::End);
        }
        if len > MAX_RECORD {
            return Err(Error {
                offset: start,
                kind: ErrorKind::Framing(format!(
                    "record length {len} is beyond {} MiB, more than any record pmlogger writes: the file is damaged",
                    MAX_RECORD >> 20
                )),
            });
        }
        if len < 8 {
            return Err(Error {
                offset: start,
                kind: ErrorKind::Framing(format!(
                    "record length {len}, expected at least 8 (both length words)"
                )),
            });
        }
        // The buffer grows with the bytes that really arrive, so a corrupt
        // length cannot make it allocate more than the file holds.
        let want = u64::from(len) - 4;
        (&mut self.r).take(want).read_to_end(buf).map_err(io)?;
        if (buf.len() as u64) < u64::from(len) {
            return Ok(Next::Truncated(start));
        }
        let trailer = crate::bytes::length_word(buf, len as usize - 4);
        if trailer != len {
            return Err(Error {
                offset: start,
                kind: ErrorKind::Framing(format!(
                    "record length {len} at its start but {trailer} at its end (byte {})",
                    start + u64::from(len) - 4
                )),
            });
        }
        self.offset += u64::from(len);
        Ok(Next::Record(start))
    }
}
