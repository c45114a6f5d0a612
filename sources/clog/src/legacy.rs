//! The MPE 1.x CLOG format of the MPICH-1 era (clog.md §5): no preamble,
//! big-endian, a sequence of fixed-size blocks (65536 bytes; 1024 for
//! MPICH ≤ 1.1.2, recognised from the first block). Each record is a
//! 24-byte header (f64 time, i32 rectype, i32 length in 8-byte units for
//! the whole record, i32 procid, i32 pad) and a body.
//!
//! TRAP: point-to-point messages are RAWEVENTs with etype −101/−102,
//! `data` = partner and the text `"<tag> <size>"`; [`Record::to_clog2`]
//! turns them into CLOG2 MSGEVT records.

use crate::bytes::{Cursor, Endian};
use crate::clog2::{self, Body as Body2, Coll, Msg};
use crate::{read_full, Error, ErrorKind, Result};
use std::io::Read;

/// Block size of MPE 1.x.
pub const BLOCK_SIZE: usize = 65536;
/// Block size of MPICH ≤ 1.1.2.
pub const OLD_BLOCK_SIZE: usize = 1024;
const HEADER: usize = 24;

/// Whole-record length in 8-byte units for rectypes −2..=8 (0 unused).
fn units(rectype: i32) -> Option<usize> {
    Some(match rectype {
        -2 | -1 => 3,
        1 => 7,
        2 | 3 | 5 => 6,
        4 => 5,
        6 => 10,
        7 => 9,
        8 => 4,
        _ => return None,
    })
}

/// Whether `head` starts like an old CLOG file: a big-endian finite time
/// in [0, 1e9), a rectype of the table and the length it must have.
pub fn looks_like(head: &[u8]) -> bool {
    header_ok(head)
}

fn header_ok(bytes: &[u8]) -> bool {
    let Some(h) = bytes.get(..16) else {
        return false;
    };
    let mut c = Cursor::new(h, Endian::Big);
    let (Some(t), Some(rt), Some(len)) = (c.f64(), c.i32(), c.i32()) else {
        return false;
    };
    t.is_finite() && (0.0..1e9).contains(&t) && units(rt).is_some_and(|u| u as i32 == len)
}

/// A record body, field for field.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// End of the log (time `1000000.0`).
    EndLog,
    /// End of a block.
    EndBlock,
    /// An event; messages are RAWEVENTs with etype −101/−102.
    Raw {
        /// Event type.
        etype: i32,
        /// Data (the partner of a message).
        data: i32,
        /// Source location id.
        srcloc: i32,
        /// Text (`"<tag> <size>"` for a message).
        string: String,
    },
    /// A message record (unused by MPE's wrappers, see the TRAP above).
    Msg {
        /// Event type.
        etype: i32,
        /// Tag.
        tag: i32,
        /// Partner.
        partner: i32,
        /// Communicator.
        comm: i32,
        /// Bytes.
        size: i32,
        /// Source location id.
        srcloc: i32,
    },
    /// A collective.
    Coll {
        /// Event type.
        etype: i32,
        /// Root.
        root: i32,
        /// Communicator.
        comm: i32,
        /// Bytes.
        size: i32,
        /// Source location id.
        srcloc: i32,
    },
    /// A communicator event (101 init, 102 dup, 103 split, …, 106 free).
    Comm {
        /// Event type.
        etype: i32,
        /// Parent communicator.
        parent: i32,
        /// New communicator.
        newcomm: i32,
        /// Source location id.
        srcloc: i32,
    },
    /// A solo event description.
    EventDef {
        /// Event type.
        etype: i32,
        /// Description.
        description: String,
    },
    /// A state description.
    StateDef {
        /// State id.
        state: i32,
        /// Start event type.
        start: i32,
        /// End event type.
        end: i32,
        /// Color.
        color: String,
        /// Description.
        description: String,
    },
    /// A source location.
    SrcLoc {
        /// Id.
        srcloc: i32,
        /// Line.
        lineno: i32,
        /// File.
        file: String,
    },
    /// A clock shift.
    Shift {
        /// Seconds.
        shift: f64,
    },
}

/// One record.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Offset of its header in the file.
    pub offset: u64,
    /// Seconds since the run's start.
    pub time: f64,
    /// World rank of the process that logged it.
    pub procid: i32,
    /// Type and fields.
    pub body: Body,
}

impl Record {
    /// The same facts as a CLOG2 record (world communicator 0, thread 0):
    /// RAWEVENTs −101/−102 become MSGEVTs when their text is
    /// `"<tag> <size>"`, other RAWEVENTs become BAREEVTs; communicator
    /// events have no CLOG2 equivalent and give `None`.
    pub fn to_clog2(&self) -> Option<clog2::Record> {
        let body = match &self.body {
            Body::EndLog => Body2::EndLog,
            Body::EndBlock => Body2::EndBlock,
            Body::Raw {
                etype,
                data,
                string,
                ..
            } => match (*etype, message_text(string)) {
                (-101 | -102, Some((tag, size))) => Body2::Msg(Msg {
                    etype: *etype,
                    icomm: 0,
                    rank: *data,
                    tag,
                    size,
                }),
                _ => Body2::Bare { etype: *etype },
            },
            Body::Msg {
                etype,
                tag,
                partner,
                size,
                ..
            } => Body2::Msg(Msg {
                etype: *etype,
                icomm: 0,
                rank: *partner,
                tag: *tag,
                size: *size,
            }),
            Body::Coll {
                etype, root, size, ..
            } => Body2::Coll(Coll {
                etype: *etype,
                root: *root,
                size: *size,
            }),
            Body::Comm { .. } => return None,
            Body::EventDef { etype, description } => Body2::EventDef {
                etype: *etype,
                color: String::new(),
                name: description.clone(),
                format: String::new(),
            },
            Body::StateDef {
                state,
                start,
                end,
                color,
                description,
            } => Body2::StateDef {
                state: *state,
                start: *start,
                end: *end,
                color: color.clone(),
                name: description.clone(),
                format: String::new(),
            },
            Body::SrcLoc {
                srcloc,
                lineno,
                file,
            } => Body2::SrcLoc {
                srcloc: *srcloc,
                lineno: *lineno,
                file: file.clone(),
            },
            Body::Shift { shift } => Body2::TimeShift { shift: *shift },
        };
        Some(clog2::Record {
            offset: self.offset,
            time: self.time,
            icomm: 0,
            rank: self.procid,
            thread: 0,
            body,
        })
    }
}

/// `"<tag> <size>"` of a message RAWEVENT.
fn message_text(s: &str) -> Option<(i32, i32)> {
    let mut it = s.split_ascii_whitespace();
    let tag = it.next()?.parse().ok()?;
    let size = it.next()?.parse().ok()?;
    Some((tag, size))
}

/// Streaming reader: one block in memory at a time.
pub struct LegacyReader<R> {
    inner: R,
    block: Vec<u8>,
    /// Valid bytes in `block`.
    len: usize,
    block_start: u64,
    pos: Option<usize>,
    block_size: Option<usize>,
    consumed: u64,
    done: bool,
}

impl<R: Read> LegacyReader<R> {
    /// A reader; the block size is recognised from the first block.
    pub fn new(inner: R) -> Self {
        LegacyReader {
            inner,
            block: vec![0; BLOCK_SIZE],
            len: 0,
            block_start: 0,
            pos: None,
            block_size: None,
            consumed: 0,
            done: false,
        }
    }

    /// The block size in use, once known.
    pub fn block_size(&self) -> Option<usize> {
        self.block_size
    }

    fn fail(&mut self, offset: u64, kind: ErrorKind) -> Error {
        self.done = true;
        Error::new(offset, kind)
    }

    fn load_block(&mut self) -> Result<()> {
        let start = self.consumed;
        let n = match read_full(&mut self.inner, &mut self.block) {
            Ok(n) => n,
            Err(e) => return Err(self.fail(start, e.into())),
        };
        self.consumed += n as u64;
        if n == 0 {
            return Err(self.fail(
                start,
                ErrorKind::Truncated("before the ENDLOG record (truncated log?)".into()),
            ));
        }
        self.len = n;
        self.block_start = start;
        self.pos = Some(0);
        Ok(())
    }

    /// The next record, ENDBLOCK and ENDLOG included; `Ok(None)` after
    /// ENDLOG or an error.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        if self.done {
            return Ok(None);
        }
        let pos = match self.pos {
            Some(p) if p < self.len => p,
            _ => {
                self.load_block()?;
                0
            }
        };
        let offset = self.block_start + pos as u64;
        let rest = self.block.get(pos..self.len).unwrap_or_default();
        if rest.len() < HEADER {
            return Err(self.fail(
                offset,
                ErrorKind::Truncated("inside a record header".into()),
            ));
        }
        let mut c = Cursor::new(rest, Endian::Big);
        let (Some(time), Some(rectype), Some(length), Some(procid), Some(_pad)) =
            (c.f64(), c.i32(), c.i32(), c.i32(), c.i32())
        else {
            return Err(self.fail(offset, ErrorKind::Layout("short header".into())));
        };
        let Some(u) = units(rectype) else {
            return Err(self.fail(offset, ErrorKind::UnknownRecord(rectype)));
        };
        if length != u as i32 {
            return Err(self.fail(
                offset,
                ErrorKind::Layout(format!(
                    "record type {rectype} has length {length} (×8 bytes), expected {u}"
                )),
            ));
        }
        let size = u * 8;
        if rest.len() < size {
            let kind = if self.len < self.block.len() {
                ErrorKind::Truncated(format!("inside a record of type {rectype}"))
            } else {
                ErrorKind::Layout(format!(
                    "record type {rectype} ({size} bytes) runs past the end of the block"
                ))
            };
            return Err(self.fail(offset, kind));
        }
        let Some(body) = decode_body(rectype, &mut c) else {
            return Err(self.fail(offset, ErrorKind::Layout("short body".into())));
        };
        match body {
            Body::EndLog => self.done = true,
            Body::EndBlock => {
                let bs = match self.block_size {
                    Some(bs) => bs,
                    None => self.recognise_block_size(pos),
                };
                // Jump to the next block boundary.
                let next = (pos / bs + 1) * bs;
                self.pos = Some(next);
                if next >= self.len {
                    self.pos = None;
                }
            }
            _ => self.pos = Some(pos + size),
        }
        Ok(Some(Record {
            offset,
            time,
            procid,
            body,
        }))
    }

    /// The first ENDBLOCK tells the block size: one before byte 1024
    /// followed by a valid header at 1024 means MPICH ≤ 1.1.2's 1 KiB
    /// blocks. The block buffer, read at 64 KiB, is then reinterpreted.
    fn recognise_block_size(&mut self, pos: usize) -> usize {
        let old = pos < OLD_BLOCK_SIZE
            && self
                .block
                .get(OLD_BLOCK_SIZE..self.len)
                .is_some_and(header_ok);
        let bs = if old { OLD_BLOCK_SIZE } else { BLOCK_SIZE };
        self.block_size = Some(bs);
        bs
    }
}

fn decode_body(rectype: i32, c: &mut Cursor) -> Option<Body> {
    Some(match rectype {
        -2 => Body::EndLog,
        -1 => Body::EndBlock,
        1 => {
            let (etype, data, srcloc, _pad) = (c.i32()?, c.i32()?, c.i32()?, c.i32()?);
            Body::Raw {
                etype,
                data,
                srcloc,
                string: c.text(16)?,
            }
        }
        2 => Body::Msg {
            etype: c.i32()?,
            tag: c.i32()?,
            partner: c.i32()?,
            comm: c.i32()?,
            size: c.i32()?,
            srcloc: c.i32()?,
        },
        3 => Body::Coll {
            etype: c.i32()?,
            root: c.i32()?,
            comm: c.i32()?,
            size: c.i32()?,
            srcloc: c.i32()?,
        },
        4 => Body::Comm {
            etype: c.i32()?,
            parent: c.i32()?,
            newcomm: c.i32()?,
            srcloc: c.i32()?,
        },
        5 => {
            let (etype, _pad) = (c.i32()?, c.i32()?);
            Body::EventDef {
                etype,
                description: c.text(16)?,
            }
        }
        6 => {
            let (state, start, end, _pad) = (c.i32()?, c.i32()?, c.i32()?, c.i32()?);
            Body::StateDef {
                state,
                start,
                end,
                color: c.text(24)?,
                description: c.text(16)?,
            }
        }
        7 => Body::SrcLoc {
            srcloc: c.i32()?,
            lineno: c.i32()?,
            file: c.text(40)?,
        },
        8 => Body::Shift { shift: c.f64()? },
        _ => return None,
    })
}
