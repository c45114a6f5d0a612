//! CLOG2 (`CLOG-02.44`), the MPE2 log format (clog.md §2–§4):
//!
//! ```text
//! [0, 1024)                  preamble: NUL-separated ASCII tokens
//! [1024 + k·block_size, …)   blocks of records, each ended by ENDBLOCK
//! [commtable_fptr, EOF)      communicator table
//! ```
//!
//! Traps handled:
//! - the preamble is read as key → values, not by position, and the last
//!   key (`commtable_fptr=`) has three values (giga, unit, remainder);
//! - byte order comes from `is_big_endian=` (`"TRUE "`, trailing space):
//!   merged files are big-endian on every host, per-process files native;
//! - records never straddle a block; after ENDBLOCK the rest of the block
//!   is undefined and skipped;
//! - the COMMEVT body is 48 bytes (the header comment's "2 doubles" is
//!   stale).

use crate::bytes::{Cursor, Endian};
use crate::{read_full, Error, ErrorKind, Result};
use std::io::Read;

/// Size of the preamble.
pub const PREAMBLE_SIZE: usize = 1024;
/// Size of a record header: f64 time, i32 icomm, i32 rank, i32 thread,
/// i32 rectype.
pub const HEADER_SIZE: usize = 24;
/// Largest block size accepted. MPE's default is 64 KiB; anything near a
/// gigabyte is a corrupt preamble, and we allocate one block.
pub const MAX_BLOCK_SIZE: u32 = 1 << 28;
/// Largest communicator table accepted (entries).
pub const MAX_COMMS: i32 = 1 << 24;

/// Whether `head` starts like a CLOG2 file: `CLOG-02.` two digits, NUL.
pub fn looks_like(head: &[u8]) -> bool {
    match head.get(..11) {
        Some(h) => {
            h.starts_with(b"CLOG-02.")
                && h.get(8..10)
                    .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
                && h.get(10) == Some(&0)
        }
        None => false,
    }
}

/// The preamble, key by key. Keys are spelled as in the file
/// (`is_finalzed`, sic).
#[derive(Debug, Clone, PartialEq)]
pub struct Preamble {
    /// `CLOG-02.44`.
    pub version: String,
    /// `is_big_endian=`.
    pub big_endian: bool,
    /// `is_finalzed=`, when present.
    pub finalized: Option<bool>,
    /// `block_size=`.
    pub block_size: u32,
    /// `commtable_fptr=`: giga·unit + remainder; 0 when absent.
    pub commtable_fptr: u64,
    /// Every key (without `=`) and its value tokens, in file order.
    pub fields: Vec<(String, Vec<String>)>,
}

impl Preamble {
    /// The first value of `key` as an integer.
    pub fn int(&self, key: &str) -> Option<i64> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.first())
            .and_then(|v| v.trim().parse().ok())
    }

    /// Parses the 1024 preamble bytes.
    pub fn parse(bytes: &[u8]) -> Result<Preamble> {
        let bad = |offset: usize, msg: String| Error::new(offset as u64, ErrorKind::Preamble(msg));
        let mut tokens = Vec::new();
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if b == 0 {
                if i > start {
                    tokens.push((start, bytes.get(start..i).unwrap_or_default()));
                }
                start = i + 1;
            }
        }
        if start < bytes.len() {
            return Err(bad(
                start,
                "the last token is not NUL-terminated within the 1024-byte preamble".into(),
            ));
        }
        let mut it = tokens.into_iter();
        let Some((_, version)) = it.next() else {
            return Err(bad(0, "empty (expected `CLOG-02.44`)".into()));
        };
        let version = String::from_utf8_lossy(version).into_owned();
        if version != "CLOG-02.44" {
            return Err(bad(
                0,
                format!("version `{version}` is not supported (only CLOG-02.44 is; 2.40 has another preamble)"),
            ));
        }
        let mut fields: Vec<(String, Vec<String>)> = Vec::new();
        let mut offsets = Vec::new();
        for (at, tok) in it {
            let Ok(text) = std::str::from_utf8(tok) else {
                return Err(bad(at, "token is not ASCII text".into()));
            };
            if let Some(key) = text.strip_suffix('=') {
                fields.push((key.to_string(), Vec::new()));
                offsets.push(at);
            } else if let Some((_, values)) = fields.last_mut() {
                values.push(text.trim().to_string());
            } else {
                return Err(bad(at, format!("value `{text}` before any `key=` token")));
            }
        }
        let find = |key: &str| -> Result<(usize, &Vec<String>)> {
            fields
                .iter()
                .zip(&offsets)
                .find(|((k, _), _)| k == key)
                .map(|((_, v), &at)| (at, v))
                .ok_or_else(|| bad(PREAMBLE_SIZE, format!("no `{key}=` token")))
        };
        let boolean = |at: usize, key: &str, v: &[String]| -> Result<bool> {
            match v.first().map(String::as_str) {
                Some("TRUE") => Ok(true),
                Some("FALSE") => Ok(false),
                Some(other) => Err(bad(
                    at,
                    format!("`{key}=` is `{other}`, expected TRUE or FALSE"),
                )),
                None => Err(bad(
                    at,
                    format!("`{key}=` has no value, expected TRUE or FALSE"),
                )),
            }
        };
        let number = |at: usize, key: &str, v: Option<&String>| -> Result<u64> {
            v.and_then(|s| s.parse::<u64>().ok()).ok_or_else(|| {
                bad(
                    at,
                    match v {
                        Some(v) => format!("`{key}=` is `{v}`, expected a non-negative integer"),
                        None => format!("`{key}=` has no value, expected a non-negative integer"),
                    },
                )
            })
        };
        let (at, v) = find("is_big_endian")?;
        let big_endian = boolean(at, "is_big_endian", v)?;
        let finalized = match find("is_finalzed") {
            Ok((at, v)) => Some(boolean(at, "is_finalzed", v)?),
            Err(_) => None,
        };
        let (at, v) = find("block_size")?;
        let block_size = number(at, "block_size", v.first())?;
        if block_size < HEADER_SIZE as u64 || block_size > u64::from(MAX_BLOCK_SIZE) {
            return Err(Error::new(
                at as u64,
                ErrorKind::Absurd(format!(
                    "block_size={block_size} is outside {HEADER_SIZE}..={MAX_BLOCK_SIZE}"
                )),
            ));
        }
        let commtable_fptr = match find("commtable_fptr") {
            Ok((at, v)) => {
                if v.len() != 3 {
                    return Err(bad(
                        at,
                        format!(
                            "`commtable_fptr=` has {} values, expected 3 (giga, unit, remainder)",
                            v.len()
                        ),
                    ));
                }
                let giga = number(at, "commtable_fptr", v.first())?;
                let unit = number(at, "commtable_fptr", v.get(1))?;
                let rest = number(at, "commtable_fptr", v.get(2))?;
                giga.checked_mul(unit)
                    .and_then(|g| g.checked_add(rest))
                    .ok_or_else(|| {
                        Error::new(
                            at as u64,
                            ErrorKind::Absurd("commtable_fptr overflows 64 bits".into()),
                        )
                    })?
            }
            Err(_) => 0,
        };
        Ok(Preamble {
            version,
            big_endian,
            finalized,
            block_size: block_size as u32,
            commtable_fptr,
            fields,
        })
    }
}

/// A communicator's global id (`CLOG_CommGID_t`): 32 bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Gcomm {
    /// Random part.
    pub random: i32,
    /// Creation time (MPI_Wtime of the creator).
    pub time: f64,
    /// The creator's processor name (`MPI_Get_processor_name`).
    pub processor: String,
}

/// A point-to-point message end (`MSGEVT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Msg {
    /// −101 send, −102 receive.
    pub etype: i32,
    /// Communicator of the partner rank.
    pub icomm: i32,
    /// Partner rank within `icomm`.
    pub rank: i32,
    /// Tag.
    pub tag: i32,
    /// Bytes.
    pub size: i32,
}

impl Msg {
    fn read(c: &mut Cursor) -> Option<Msg> {
        Some(Msg {
            etype: c.i32()?,
            icomm: c.i32()?,
            rank: c.i32()?,
            tag: c.i32()?,
            size: c.i32()?,
        })
    }
}

/// A collective (`COLLEVT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coll {
    /// Event type.
    pub etype: i32,
    /// Root rank.
    pub root: i32,
    /// Bytes.
    pub size: i32,
}

impl Coll {
    fn read(c: &mut Cursor) -> Option<Coll> {
        Some(Coll {
            etype: c.i32()?,
            root: c.i32()?,
            size: c.i32()?,
        })
    }
}

/// A record type's body.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// End of the log (time `100000000.0`).
    EndLog,
    /// End of a block: the rest of the block is skipped.
    EndBlock,
    /// A state: instances are events `start` … `end`.
    StateDef {
        /// State id.
        state: i32,
        /// Start event type.
        start: i32,
        /// Final event type.
        end: i32,
        /// X11 color name.
        color: String,
        /// Name.
        name: String,
        /// Cargo format (`%s`, `Count=%d`…).
        format: String,
    },
    /// A solo event.
    EventDef {
        /// Event type.
        etype: i32,
        /// X11 color name.
        color: String,
        /// Name.
        name: String,
        /// Cargo format.
        format: String,
    },
    /// A named constant (`MPI_ANY_SOURCE`…).
    ConstDef {
        /// Always −201.
        etype: i32,
        /// Value.
        value: i32,
        /// Name.
        name: String,
    },
    /// An event without cargo.
    Bare {
        /// Event type.
        etype: i32,
    },
    /// An event with 32 bytes of cargo (never byte-swapped).
    Cargo {
        /// Event type.
        etype: i32,
        /// Raw cargo.
        bytes: [u8; 32],
    },
    /// A point-to-point message end.
    Msg(Msg),
    /// A collective.
    Coll(Coll),
    /// A communicator event: maps `(icomm, rank)` to world rank `wrank`.
    Comm {
        /// 0 world create, 1 self create, 10 free, 100.. intra, 1000 inter.
        etype: i32,
        /// The communicator.
        icomm: i32,
        /// Rank within it.
        rank: i32,
        /// World rank.
        wrank: i32,
        /// Global id.
        gcomm: Gcomm,
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
    /// A clock shift, stored negated; later records already include it.
    TimeShift {
        /// Shift in seconds.
        shift: f64,
    },
}

impl Body {
    /// The event fields of an event record, as [`RawRecord::event`] reads
    /// them in place; `None` for any other type.
    pub fn event(&self) -> Option<Event<'_>> {
        Some(match self {
            Body::Bare { etype } => Event::Bare { etype: *etype },
            Body::Cargo { etype, bytes } => Event::Cargo {
                etype: *etype,
                bytes,
            },
            Body::Msg(m) => Event::Msg(*m),
            Body::Coll(c) => Event::Coll(*c),
            _ => return None,
        })
    }

    /// The `clog2_print` name of the record type.
    pub fn name(&self) -> &'static str {
        match self {
            Body::EndLog => "elog",
            Body::EndBlock => "eblk",
            Body::StateDef { .. } => "sdef",
            Body::EventDef { .. } => "edef",
            Body::ConstDef { .. } => "cdef",
            Body::Bare { .. } => "bare",
            Body::Cargo { .. } => "cago",
            Body::Msg(_) => "msg",
            Body::Coll(_) => "coll",
            Body::Comm { .. } => "comm",
            Body::SrcLoc { .. } => "loc",
            Body::TimeShift { .. } => "shft",
        }
    }
}

/// Body size of each rectype 0..=11 (clog.md §3).
const BODY_SIZE: [usize; 12] = [0, 0, 112, 104, 40, 8, 40, 24, 16, 48, 48, 8];

/// One record.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Offset of its header in the file.
    pub offset: u64,
    /// Seconds since the run's start, on MPE's clock.
    pub time: f64,
    /// Communicator the event was logged under.
    pub icomm: i32,
    /// Rank within `icomm` (not always the world rank).
    pub rank: i32,
    /// MPE thread id.
    pub thread: i32,
    /// Type and fields.
    pub body: Body,
}

/// A record as it lies in its block: the header decoded, the body not
/// yet ([`Clog2Reader::next_raw`]).
#[derive(Debug, Clone, Copy)]
pub struct RawRecord<'a> {
    /// Offset of its header in the file.
    pub offset: u64,
    /// Seconds since the run's start, on MPE's clock.
    pub time: f64,
    /// Communicator the event was logged under.
    pub icomm: i32,
    /// Rank within `icomm`.
    pub rank: i32,
    /// MPE thread id.
    pub thread: i32,
    /// Record type (0..=11).
    pub rectype: i32,
    body: &'a [u8],
    endian: Endian,
}

/// An event record's fields, borrowed from its block ([`RawRecord::event`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event<'a> {
    /// [`Body::Bare`].
    Bare {
        /// Event type.
        etype: i32,
    },
    /// [`Body::Cargo`].
    Cargo {
        /// Event type.
        etype: i32,
        /// Raw cargo.
        bytes: &'a [u8; 32],
    },
    /// [`Body::Msg`].
    Msg(Msg),
    /// [`Body::Coll`].
    Coll(Coll),
}

impl<'a> RawRecord<'a> {
    /// The body, decoded (definitions' strings allocated); `None` only if
    /// the body is shorter than its type's, which the reader rules out.
    pub fn body(&self) -> Option<Body> {
        decode_body(self.rectype, &mut Cursor::new(self.body, self.endian))
    }

    /// The whole record, owned.
    #[inline]
    pub fn record(&self) -> Option<Record> {
        Some(Record {
            offset: self.offset,
            time: self.time,
            icomm: self.icomm,
            rank: self.rank,
            thread: self.thread,
            body: self.body()?,
        })
    }

    /// The event fields of an event record (bare, cargo, message,
    /// collective), read without copying; `None` for any other type.
    #[inline]
    pub fn event(&self) -> Option<Event<'a>> {
        let mut c = Cursor::new(self.body, self.endian);
        Some(match self.rectype {
            5 => Event::Bare { etype: c.i32()? },
            6 => {
                let (etype, _pad) = (c.i32()?, c.i32()?);
                let bytes = self.body.get(8..40)?.try_into().ok()?;
                Event::Cargo { etype, bytes }
            }
            7 => Event::Msg(Msg::read(&mut c)?),
            8 => Event::Coll(Coll::read(&mut c)?),
            _ => return None,
        })
    }
}

/// An entry of the communicator table.
#[derive(Debug, Clone, PartialEq)]
pub struct CommEntry {
    /// Global id.
    pub gcomm: Gcomm,
    /// Local id (the `icomm` of records).
    pub local_id: i32,
    /// −1 unknown, 0 inter, 1 intra, 2 local, 3 remote.
    pub kind: i32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Reading,
    Ended,
    /// At the block limit ([`Clog2Reader::stop_at_block`]), before ENDLOG.
    Stopped,
    Failed,
}

/// Streaming reader: one block in memory at a time.
pub struct Clog2Reader<R> {
    inner: R,
    preamble: Preamble,
    endian: Endian,
    block: Vec<u8>,
    /// File offset of `block`'s first byte.
    block_start: u64,
    /// Position of the next record in `block`; `None` = load the next one.
    pos: Option<usize>,
    /// The file offset at which to stop instead of loading a block.
    limit: Option<u64>,
    /// File offset just past the last byte read from `inner`.
    consumed: u64,
    state: State,
}

impl<R: Read> Clog2Reader<R> {
    /// Reads and checks the preamble.
    pub fn new(mut inner: R) -> Result<Self> {
        let mut pre = [0u8; PREAMBLE_SIZE];
        let n = read_full(&mut inner, &mut pre).map_err(|e| Error::new(0, e.into()))?;
        if n < PREAMBLE_SIZE {
            return Err(Error::new(
                n as u64,
                ErrorKind::Truncated(format!(
                    "inside the {PREAMBLE_SIZE}-byte preamble ({n} bytes)"
                )),
            ));
        }
        let preamble = Preamble::parse(&pre)?;
        let fptr = preamble.commtable_fptr;
        let bs = u64::from(preamble.block_size);
        if fptr != 0
            && (fptr < PREAMBLE_SIZE as u64 || !(fptr - PREAMBLE_SIZE as u64).is_multiple_of(bs))
        {
            return Err(Error::new(
                0,
                ErrorKind::Preamble(format!(
                    "commtable_fptr={fptr} is not 1024 + a whole number of {bs}-byte blocks"
                )),
            ));
        }
        Ok(Clog2Reader {
            inner,
            endian: if preamble.big_endian {
                Endian::Big
            } else {
                Endian::Little
            },
            block: Vec::new(),
            block_start: PREAMBLE_SIZE as u64,
            pos: None,
            limit: None,
            consumed: PREAMBLE_SIZE as u64,
            preamble,
            state: State::Reading,
        })
    }

    /// A reader of the log whose `preamble` was read elsewhere, starting
    /// at block `block` (counted from 0 after the preamble): `inner` is
    /// already at that block's first byte. Offsets in records and errors
    /// are the file's. One half of a log can so be read while another
    /// reader reads the other ([`Self::stop_at_block`]).
    pub fn resume(inner: R, preamble: Preamble, block: u64) -> Result<Self> {
        let start = block
            .checked_mul(u64::from(preamble.block_size))
            .and_then(|b| b.checked_add(PREAMBLE_SIZE as u64))
            .ok_or_else(|| {
                Error::new(
                    0,
                    ErrorKind::Absurd(format!("block {block} is beyond any file")),
                )
            })?;
        Ok(Clog2Reader {
            inner,
            endian: if preamble.big_endian {
                Endian::Big
            } else {
                Endian::Little
            },
            block: Vec::new(),
            block_start: start,
            pos: None,
            limit: None,
            consumed: start,
            preamble,
            state: State::Reading,
        })
    }

    /// Ends the records before block `block` instead of reading on:
    /// [`Self::next_raw`] then says `None` there, as at ENDLOG, and
    /// [`Self::ended`] tells the two apart.
    pub fn stop_at_block(&mut self, block: u64) {
        self.limit = block
            .checked_mul(u64::from(self.preamble.block_size))
            .and_then(|b| b.checked_add(PREAMBLE_SIZE as u64));
    }

    /// Whether the ENDLOG record was read.
    pub fn ended(&self) -> bool {
        self.state == State::Ended
    }

    /// The preamble.
    pub fn preamble(&self) -> &Preamble {
        &self.preamble
    }

    fn fail(&mut self, offset: u64, kind: ErrorKind) -> Error {
        self.state = State::Failed;
        Error::new(offset, kind)
    }

    fn load_block(&mut self) -> Result<()> {
        let start = self.consumed;
        let fptr = self.preamble.commtable_fptr;
        if fptr != 0 && start >= fptr {
            return Err(self.fail(
                start,
                ErrorKind::Layout(format!(
                    "no ENDLOG record before the communicator table at byte {fptr}"
                )),
            ));
        }
        let size = self.preamble.block_size as usize;
        // Grows with the bytes that actually arrive: a preamble claiming a
        // huge block on a small file costs no more than the file.
        self.block.clear();
        let n = match (&mut self.inner)
            .take(size as u64)
            .read_to_end(&mut self.block)
        {
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
        if n < size {
            return Err(self.fail(
                start + n as u64,
                ErrorKind::Truncated(format!(
                    "inside the block that starts at byte {start}: {n} of {size} bytes"
                )),
            ));
        }
        self.block_start = start;
        self.pos = Some(0);
        Ok(())
    }

    /// The next record, ENDBLOCK and ENDLOG included; `Ok(None)` after
    /// ENDLOG. After an error, always `Ok(None)`.
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        let Some(raw) = self.next_raw()? else {
            return Ok(None);
        };
        let offset = raw.offset;
        match raw.record() {
            Some(rec) => Ok(Some(rec)),
            None => Err(self.fail(offset, ErrorKind::Layout("short body".into()))),
        }
    }

    /// The next record as its header and body bytes, borrowed from the
    /// block in memory: nothing is copied or allocated, and a caller that
    /// needs only events ([`RawRecord::event`]) skips decoding the rest.
    /// The record's size is checked against its type, so its body always
    /// decodes. `Ok(None)` after ENDLOG and after an error.
    // Inlined into the caller's loop, the record stays in registers: a
    // record returned through memory and read back at once made the main
    // thread wait for its stores (100 MB log: 0.55 -> 0.47 s).
    #[inline(always)]
    pub fn next_raw(&mut self) -> Result<Option<RawRecord<'_>>> {
        if self.state != State::Reading {
            return Ok(None);
        }
        let pos = match self.pos {
            Some(p) => p,
            None => {
                if self.limit.is_some_and(|l| self.consumed >= l) {
                    self.state = State::Stopped;
                    return Ok(None);
                }
                self.load_block()?;
                0
            }
        };
        let offset = self.block_start + pos as u64;
        let block_end = self.block_start + self.block.len() as u64;
        let rest = self.block.get(pos..).unwrap_or_default();
        if rest.len() < HEADER_SIZE {
            return Err(self.fail(
                offset,
                ErrorKind::Layout(format!(
                    "record header runs past the end of the block at byte {block_end} (no ENDBLOCK record?)"
                )),
            ));
        }
        let mut c = Cursor::new(rest, self.endian);
        let (Some(time), Some(icomm), Some(rank), Some(thread), Some(rectype)) =
            (c.f64(), c.i32(), c.i32(), c.i32(), c.i32())
        else {
            return Err(self.fail(offset, ErrorKind::Layout("short header".into())));
        };
        let Some(&body_size) = usize::try_from(rectype).ok().and_then(|t| BODY_SIZE.get(t)) else {
            return Err(self.fail(offset, ErrorKind::UnknownRecord(rectype)));
        };
        let size = HEADER_SIZE + body_size;
        if rest.len() < size {
            return Err(self.fail(
                offset,
                ErrorKind::Layout(format!(
                    "record type {rectype} ({size} bytes) runs past the end of the block at byte {block_end}"
                )),
            ));
        }
        match rectype {
            1 => self.pos = None,
            0 => self.state = State::Ended,
            _ => self.pos = Some(pos + size),
        }
        let body = self
            .block
            .get(pos + HEADER_SIZE..pos + size)
            .unwrap_or_default();
        Ok(Some(RawRecord {
            offset,
            time,
            icomm,
            rank,
            thread,
            rectype,
            body,
            endian: self.endian,
        }))
    }

    /// Reads the communicator table. Call after [`Self::next_record`]
    /// returned ENDLOG; an unmerged file without a table gives `[]`.
    pub fn comm_table(&mut self) -> Result<Vec<CommEntry>> {
        if self.state != State::Ended {
            return Err(Error::new(
                self.consumed,
                ErrorKind::Layout("the communicator table is read after ENDLOG".into()),
            ));
        }
        let fptr = self.preamble.commtable_fptr;
        if fptr == 0 {
            return Ok(Vec::new());
        }
        if fptr < self.consumed {
            return Err(self.fail(
                fptr,
                ErrorKind::Layout(format!(
                    "the communicator table starts inside the block that ends at byte {}",
                    self.consumed
                )),
            ));
        }
        let skip = fptr - self.consumed;
        let skipped = std::io::copy(&mut (&mut self.inner).take(skip), &mut std::io::sink())
            .map_err(|e| Error::new(self.consumed, e.into()))?;
        self.consumed += skipped;
        if skipped < skip {
            return Err(self.fail(
                self.consumed,
                ErrorKind::Truncated(format!("before the communicator table at byte {fptr}")),
            ));
        }
        let mut four = [0u8; 4];
        let n = read_full(&mut self.inner, &mut four).map_err(|e| Error::new(fptr, e.into()))?;
        if n < 4 {
            return Err(self.fail(
                fptr,
                ErrorKind::Truncated("inside the communicator table's count".into()),
            ));
        }
        let count = Cursor::new(&four, self.endian).i32().unwrap_or(-1);
        if !(0..=MAX_COMMS).contains(&count) {
            return Err(self.fail(
                fptr,
                ErrorKind::Absurd(format!(
                    "communicator table count {count} is outside 0..={MAX_COMMS}"
                )),
            ));
        }
        let mut out = Vec::with_capacity(count.min(1024) as usize);
        let mut entry = [0u8; 40];
        for i in 0..count as u64 {
            let at = fptr + 4 + 40 * i;
            let n = read_full(&mut self.inner, &mut entry).map_err(|e| Error::new(at, e.into()))?;
            if n < 40 {
                return Err(self.fail(
                    at + n as u64,
                    ErrorKind::Truncated(format!("inside communicator table entry {i} of {count}")),
                ));
            }
            let mut c = Cursor::new(&entry, self.endian);
            let (Some(gcomm), Some(local_id), Some(kind)) = (gcomm(&mut c), c.i32(), c.i32())
            else {
                return Err(self.fail(at, ErrorKind::Layout("short table entry".into())));
            };
            out.push(CommEntry {
                gcomm,
                local_id,
                kind,
            });
        }
        self.state = State::Failed;
        Ok(out)
    }
}

fn gcomm(c: &mut Cursor) -> Option<Gcomm> {
    Some(Gcomm {
        random: c.i32()?,
        time: c.f64()?,
        processor: c.text(20)?,
    })
}

fn decode_body(rectype: i32, c: &mut Cursor) -> Option<Body> {
    Some(match rectype {
        0 => Body::EndLog,
        1 => Body::EndBlock,
        2 => {
            let (state, start, end, _pad) = (c.i32()?, c.i32()?, c.i32()?, c.i32()?);
            Body::StateDef {
                state,
                start,
                end,
                color: c.text(24)?,
                name: c.text(32)?,
                format: c.text(40)?,
            }
        }
        3 => {
            let (etype, _pad) = (c.i32()?, c.i32()?);
            Body::EventDef {
                etype,
                color: c.text(24)?,
                name: c.text(32)?,
                format: c.text(40)?,
            }
        }
        4 => Body::ConstDef {
            etype: c.i32()?,
            value: c.i32()?,
            name: c.text(32)?,
        },
        5 => Body::Bare { etype: c.i32()? },
        6 => {
            let (etype, _pad) = (c.i32()?, c.i32()?);
            Body::Cargo {
                etype,
                bytes: c.array::<32>()?,
            }
        }
        7 => Body::Msg(Msg::read(c)?),
        8 => Body::Coll(Coll::read(c)?),
        9 => Body::Comm {
            etype: c.i32()?,
            icomm: c.i32()?,
            rank: c.i32()?,
            wrank: c.i32()?,
            gcomm: gcomm(c)?,
        },
        10 => Body::SrcLoc {
            srcloc: c.i32()?,
            lineno: c.i32()?,
            file: c.text(40)?,
        },
        11 => Body::TimeShift { shift: c.f64()? },
        _ => return None,
    })
}

/// Decodes MPE's `'s'` cargo packing: a big-endian u16 length, then that
/// many bytes (clog.md §4). `None` when the length overruns the cargo.
pub fn cargo_string(bytes: &[u8; 32]) -> Option<&[u8]> {
    let (len, rest) = bytes.split_first_chunk::<2>()?;
    rest.get(..usize::from(u16::from_be_bytes(*len)))
}
