//! Streaming decoder of libRastro binary traces (`.rst`, fact sheet:
//! `specs/rastro.md`): the current layout (u64 seconds + u64 resolution
//! time base, u64 ticks per record, since Feb 2012) and the older one (u32
//! seconds, u32 microseconds), told apart from the INIT record.
//!
//! Numbers are in the writer's native byte order, told from the INIT
//! header ([`Endian`]); in practice little-endian.
//!
//! A decoder only: bytes in, typed records with their byte offsets out.
//! Records carry no process, thread or host: the file's INIT record does
//! ([`Init`]), and what an event id means is the integrator's business
//! (its event maps). No input makes the reader panic; a malformed record
//! ends the stream with an [`Error`] naming its offset.
//!
//! Values are stored grouped by type, not in call order (fact sheet §2):
//! a [`Record`] keeps one array per type, in storage order, which is the
//! call order within that type. A reader of integers only reads into an
//! [`IntRecord`] instead ([`RstReader::next_ints`]): the commonest records
//! go from the read buffer to its block of fixed size, no array filled;
//! [`RstReader::next_ints_of`] reads the records of the types a pass does
//! not want for their type and time only.
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::io::{BufRead, BufReader, Read};

pub mod encode;
mod ints;

pub use ints::IntRecord;

/// Event type of the INIT record, always first.
pub const INIT: u16 = 0x3fff;
/// Event type of the STOP record, always last.
pub const STOP: u16 = 0x3ffe;

const TIME_SET: u32 = 0x1_0000;
const LAST_FIRST: u32 = 0x2_0000;
const LAST_CONT: u32 = 0x2000_0000;
/// No real writer emits more values per record (the reference reader keeps
/// at most 15 per type, 7 types); a bound keeps a corrupt file from looping.
const MAX_FIELDS: usize = 256;
/// The reference reader copies strings into 100-byte buffers and its
/// events into 1000 bytes; a longer string is corruption, not data.
pub const MAX_STRING: usize = 1000;

/// The two on-disk layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Since librastro of February 2012: u64 seconds + u64 resolution when
    /// the time base is set, u64 ticks in every record.
    Current,
    /// Before: u32 seconds when the time base is set, u32 microseconds
    /// since it in every record.
    Old,
}

/// Byte order of a file's numbers: the writer's native order (libRastro
/// never swaps). x86 writers give little-endian files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    /// Least significant byte first.
    Little,
    /// Most significant byte first (SPARC, POWER writers).
    Big,
}

impl Endian {
    fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }
    fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }
    fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }

    /// The order in which the first word reads as an INIT header.
    fn of_init(head: &[u8]) -> Endian {
        match head.first_chunk::<4>() {
            Some(b)
                if u32::from_be_bytes(*b) >> 18 == u32::from(INIT)
                    && u32::from_le_bytes(*b) >> 18 != u32::from(INIT) =>
            {
                Endian::Big
            }
            _ => Endian::Little,
        }
    }
}

/// Value types, by their type nibble.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// Nibble 1: NUL-terminated, padded to 4 bytes (`s`).
    String,
    /// Nibble 2: f64 (`d`).
    Double,
    /// Nibble 3: f32 (`f`).
    Float,
    /// Nibble 4: u64 (`l`).
    U64,
    /// Nibble 5: u16 (`w`).
    U16,
    /// Nibble 6: u8 (`c`).
    U8,
    /// Nibble 7: u32 (`i`).
    U32,
}

impl FieldType {
    /// The type of a nibble; `None` for 0 (end of list) and 8..15.
    pub fn from_nibble(n: u32) -> Option<FieldType> {
        Some(match n {
            1 => FieldType::String,
            2 => FieldType::Double,
            3 => FieldType::Float,
            4 => FieldType::U64,
            5 => FieldType::U16,
            6 => FieldType::U8,
            7 => FieldType::U32,
            _ => return None,
        })
    }

    /// Bytes of a value of this type; `None` for a string's, which
    /// depends on the string.
    pub fn size(self) -> Option<usize> {
        match self {
            FieldType::String => None,
            FieldType::Double | FieldType::U64 => Some(8),
            FieldType::Float | FieldType::U32 => Some(4),
            FieldType::U16 => Some(2),
            FieldType::U8 => Some(1),
        }
    }

    /// The letter of `rst_event_<letters>` for this type.
    pub fn letter(self) -> char {
        match self {
            FieldType::String => 's',
            FieldType::Double => 'd',
            FieldType::Float => 'f',
            FieldType::U64 => 'l',
            FieldType::U16 => 'w',
            FieldType::U8 => 'c',
            FieldType::U32 => 'i',
        }
    }
}

/// A file's INIT record: who wrote it, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Init {
    /// First id of `rst_init` (DECK: node rank; akypuera: MPI rank).
    pub id1: u64,
    /// Second id (DECK: thread index; akypuera: 0).
    pub id2: u64,
    /// The writer's `gethostname()`.
    pub host: String,
    /// The record's time, ns since the epoch.
    pub time_ns: i64,
    /// Clock resolution in ticks per second (1e6 for the old layout).
    pub resolution: u64,
    /// The file's layout.
    pub layout: Layout,
    /// The file's byte order.
    pub endian: Endian,
}

/// One event record. The reader refills the same value to save
/// allocations; the arrays hold this record's values only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    /// Offset of the record's header in the file.
    pub offset: u64,
    /// Event type (14 bits).
    pub ty: u16,
    /// Time in ns since the epoch, exact: `(seconds × resolution + ticks)
    /// × 1e9 / resolution`, floored when the resolution does not divide 1e9.
    pub time_ns: i64,
    /// Field types in storage order.
    pub fields: Vec<FieldType>,
    /// `d` values.
    pub doubles: Vec<f64>,
    /// `f` values.
    pub floats: Vec<f32>,
    /// `l` values.
    pub u64s: Vec<u64>,
    /// `i` values.
    pub u32s: Vec<u32>,
    /// `w` values.
    pub u16s: Vec<u16>,
    /// `c` values.
    pub u8s: Vec<u8>,
    /// `s` values, decoded lossily as UTF-8 (none when the reader skips
    /// them: [`RstReader::skip_strings`]).
    pub strings: Vec<String>,
}

impl Record {
    /// The `k`-th value of integer type `t` (`None` for other types).
    pub fn int(&self, t: FieldType, k: usize) -> Option<u64> {
        match t {
            FieldType::U32 => self.u32s.get(k).map(|&v| u64::from(v)),
            FieldType::U64 => self.u64s.get(k).copied(),
            FieldType::U16 => self.u16s.get(k).map(|&v| u64::from(v)),
            FieldType::U8 => self.u8s.get(k).map(|&v| u64::from(v)),
            _ => None,
        }
    }

    fn clear(&mut self) {
        self.fields.clear();
        self.doubles.clear();
        self.floats.clear();
        self.u64s.clear();
        self.u32s.clear();
        self.u16s.clear();
        self.u8s.clear();
        self.strings.clear();
    }

    /// The value types as a `rst_event_<letters>` suffix, in storage order.
    pub fn letters(&self) -> String {
        self.fields.iter().map(|f| f.letter()).collect()
    }
}

/// How the stream ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// Not yet at the end.
    Open,
    /// At the STOP record at this offset; `trailing` bytes follow it.
    Stop {
        /// Offset of the STOP record.
        offset: u64,
        /// Its time, ns since the epoch.
        time_ns: i64,
        /// Bytes after it, ignored.
        trailing: u64,
    },
    /// The file ends after a whole record but has no STOP record (the
    /// writer did not finish).
    NoStop {
        /// File length.
        offset: u64,
    },
    /// The file ends inside the record at `offset`; the records before it
    /// were read (fact sheet §4: a crashed writer).
    Truncated {
        /// Offset of the incomplete record.
        offset: u64,
        /// What was being read.
        what: &'static str,
    },
}

/// What went wrong, without the position.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading the underlying stream failed.
    #[error("read error: {0}")]
    Io(#[from] std::io::Error),
    /// The first record is not an INIT record.
    #[error("not a libRastro trace: {0}")]
    NotRastro(String),
    /// A header holds a type nibble that is not 1..7, or a nibble after
    /// the end of the list.
    #[error("bad type code {nibble} in header {header:#010x}")]
    BadType {
        /// The header word.
        header: u32,
        /// The nibble.
        nibble: u32,
    },
    /// A record does not fit what a writer produces.
    #[error("{0}")]
    Layout(String),
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

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;

fn err<T>(offset: u64, kind: ErrorKind) -> Result<T> {
    Err(Error { offset, kind })
}

/// Reading inside a record: the stream ended (`None`) or gave bytes.
enum Short {
    Eof,
    Err(Error),
}

impl From<Error> for Short {
    fn from(e: Error) -> Short {
        Short::Err(e)
    }
}

/// Appends the type nibbles of a header to `out`: `count` nibbles, MSB
/// first, ending at the first 0.
fn nibbles(header: u32, count: u32, out: &mut Vec<FieldType>, offset: u64) -> Result<()> {
    let mut ended = false;
    for i in 0..count {
        let n = (header >> (4 * (count - 1 - i))) & 0xf;
        if n == 0 {
            ended = true;
            continue;
        }
        match FieldType::from_nibble(n) {
            Some(t) if !ended => out.push(t),
            _ => return err(offset, ErrorKind::BadType { header, nibble: n }),
        }
    }
    if out.len() > MAX_FIELDS {
        return err(
            offset,
            ErrorKind::Layout(format!("more than {MAX_FIELDS} values in one record")),
        );
    }
    Ok(())
}

/// The INIT record decoded from the start of a file in one layout, and its
/// length; `Err` says why it is not one.
fn parse_init(head: &[u8], layout: Layout) -> std::result::Result<(Init, usize), String> {
    let endian = Endian::of_init(head);
    let u32_at =
        |o: usize| -> Option<u32> { Some(endian.u32(*head.get(o..)?.first_chunk::<4>()?)) };
    let u64_at =
        |o: usize| -> Option<u64> { Some(endian.u64(*head.get(o..)?.first_chunk::<8>()?)) };
    let short = || "the file ends inside its first record".to_string();
    let header = u32_at(0).ok_or_else(short)?;
    let ty = header >> 18;
    if ty != u32::from(INIT) {
        return Err(format!(
            "the first record has event type {ty}, expected INIT ({INIT})"
        ));
    }
    if header & 0xffff != 0x4410 || header & LAST_FIRST == 0 {
        return Err(format!(
            "the INIT record's header {header:#010x} does not declare (u64 id1, u64 id2, string host)"
        ));
    }
    if header & TIME_SET == 0 {
        return Err("the INIT record does not set the time base".into());
    }
    let (time_ns, resolution, ids_at) = match layout {
        Layout::Current => {
            let secs = u64_at(4).ok_or_else(short)?;
            let res = u64_at(12).ok_or_else(short)?;
            let ticks = u64_at(20).ok_or_else(short)?;
            if res < 1000 {
                return Err(format!("clock resolution {res} is not a clock's"));
            }
            let t = time_ns(secs, res, ticks).ok_or("time out of range")?;
            (t, res, 28)
        }
        Layout::Old => {
            let secs = u32_at(4).ok_or_else(short)?;
            let us = u32_at(8).ok_or_else(short)?;
            (old_time_ns(secs, us), 1_000_000, 12)
        }
    };
    let id1 = u64_at(ids_at).ok_or_else(short)?;
    let id2 = u64_at(ids_at + 8).ok_or_else(short)?;
    let s_at = ids_at + 16;
    let rest = head.get(s_at..).ok_or_else(short)?;
    let Some(nul) = rest.iter().take(MAX_STRING + 1).position(|&b| b == 0) else {
        return Err("the host name has no terminator".into());
    };
    let host = String::from_utf8_lossy(rest.get(..nul).unwrap_or_default()).into_owned();
    let len = align4(s_at + nul + 1);
    Ok((
        Init {
            id1,
            id2,
            host,
            time_ns,
            resolution,
            layout,
            endian,
        },
        len,
    ))
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

fn time_ns(secs: u64, res: u64, ticks: u64) -> Option<i64> {
    let total = u128::from(secs) * u128::from(res) + u128::from(ticks);
    let ns = total.checked_mul(1_000_000_000)? / u128::from(res);
    i64::try_from(ns).ok()
}

fn old_time_ns(secs: u32, us: u32) -> i64 {
    // Both fit: u32 seconds × 1e9 + u32 µs × 1e3 < 2^63.
    i64::from(secs) * 1_000_000_000 + i64::from(us) * 1_000
}

/// Whether the record after INIT starts with a valid header (when the
/// head holds it).
fn next_header_ok(head: &[u8], at: usize) -> bool {
    match head.get(at..).and_then(|b| b.first_chunk::<4>()) {
        None => true,
        Some(b) => nibbles(Endian::of_init(head).u32(*b), 4, &mut Vec::new(), 0).is_ok(),
    }
}

/// Tells the layout from the first bytes of a file (fact sheet §5) and
/// decodes the INIT record. The current layout is taken when its reading
/// is clock-like (high half of the seconds 0, resolution 1e3, 1e6 or 1e9):
/// a bad INIT or a later bad header is then that file's error, not a
/// reason to read it another way. Otherwise the layout whose INIT gives
/// (u64, u64, non-empty host) followed by a valid header wins.
pub fn detect(head: &[u8]) -> std::result::Result<(Init, usize), String> {
    let endian = Endian::of_init(head);
    let u32_at = |o: usize| {
        head.get(o..)
            .and_then(|b| b.first_chunk::<4>())
            .map(|b| endian.u32(*b))
    };
    let res = head
        .get(12..)
        .and_then(|b| b.first_chunk::<8>())
        .map(|b| endian.u64(*b));
    // The strongest sign: a zero high half of the seconds, then a clock
    // resolution. Such a file is read in the current layout or not at all.
    if u32_at(8) == Some(0) && res.is_some_and(|r| [1_000, 1_000_000, 1_000_000_000].contains(&r)) {
        return parse_init(head, Layout::Current);
    }
    let us_ok = u32_at(8).is_some_and(|us| us < 1_000_000);
    match parse_init(head, Layout::Old) {
        Ok((init, len)) if us_ok && !init.host.is_empty() && next_header_ok(head, len) => {
            return Ok((init, len))
        }
        _ => {}
    }
    match parse_init(head, Layout::Current) {
        Ok((init, len)) if next_header_ok(head, len) => Ok((init, len)),
        Ok((_, len)) => Err(format!(
            "the record after INIT (byte {len}) has an invalid header in either layout"
        )),
        Err(e) => Err(e),
    }
}

/// Where a record's bytes come from: the buffered stream, or (the fast
/// path) a slice of its buffer that may hold the whole record.
trait Src {
    /// Offset of the next byte in the file.
    fn offset(&self) -> u64;
    fn bytes<const N: usize>(&mut self) -> std::result::Result<[u8; N], Short>;
    /// Appends a NUL-terminated string to `out` (`None`: checks that it
    /// ends in time and skips it), then skips its padding.
    fn string_into(&mut self, out: Option<&mut String>) -> std::result::Result<(), Short>;

    fn pad(&mut self) -> std::result::Result<(), Short> {
        let pad = (4 - (self.offset() % 4)) % 4;
        for _ in 0..pad {
            self.bytes::<1>()?;
        }
        Ok(())
    }
}

fn long_string(start: u64) -> Short {
    Short::Err(Error {
        offset: start,
        kind: ErrorKind::Layout(format!(
            "string without terminator within {MAX_STRING} bytes"
        )),
    })
}

/// A slice of the stream's buffer starting at file offset `base`.
struct Slice<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
}

impl Src for Slice<'_> {
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn pad(&mut self) -> std::result::Result<(), Short> {
        let pad = ((4 - (self.offset() % 4)) % 4) as usize;
        if self.buf.len().saturating_sub(self.pos) < pad {
            return Err(Short::Eof);
        }
        self.pos += pad;
        Ok(())
    }

    fn bytes<const N: usize>(&mut self) -> std::result::Result<[u8; N], Short> {
        let b = self
            .buf
            .get(self.pos..)
            .and_then(|r| r.first_chunk::<N>())
            .ok_or(Short::Eof)?;
        self.pos += N;
        Ok(*b)
    }

    fn string_into(&mut self, out: Option<&mut String>) -> std::result::Result<(), Short> {
        let start = self.offset();
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        let window = rest.get(..MAX_STRING + 1).unwrap_or(rest);
        let Some(nul) = memchr::memchr(0, window) else {
            return Err(if window.len() > MAX_STRING {
                long_string(start)
            } else {
                Short::Eof
            });
        };
        if let Some(out) = out {
            out.push_str(&String::from_utf8_lossy(
                window.get(..nul).unwrap_or_default(),
            ));
        }
        self.pos += nul + 1;
        self.pad()
    }
}

/// The buffered stream itself, for records that straddle its buffer.
struct Stream<'a, B: BufRead> {
    src: &'a mut B,
    offset: &'a mut u64,
    scratch: &'a mut Vec<u8>,
}

impl<B: BufRead> Stream<'_, B> {
    fn fill(&mut self) -> std::result::Result<&[u8], Short> {
        let offset = *self.offset;
        self.src.fill_buf().map_err(|e| {
            Short::Err(Error {
                offset,
                kind: e.into(),
            })
        })
    }
}

impl<B: BufRead> Src for Stream<'_, B> {
    fn offset(&self) -> u64 {
        *self.offset
    }

    fn bytes<const N: usize>(&mut self) -> std::result::Result<[u8; N], Short> {
        let mut b = [0u8; N];
        let mut got = 0;
        while got < N {
            let avail = self.fill()?;
            if avail.is_empty() {
                return Err(Short::Eof);
            }
            let n = avail.len().min(N - got);
            if let (Some(dst), Some(src)) = (b.get_mut(got..got + n), avail.get(..n)) {
                dst.copy_from_slice(src);
            }
            self.src.consume(n);
            got += n;
            *self.offset += n as u64;
        }
        Ok(b)
    }

    fn string_into(&mut self, out: Option<&mut String>) -> std::result::Result<(), Short> {
        let start = *self.offset;
        self.scratch.clear();
        loop {
            let offset = *self.offset;
            let avail = self.src.fill_buf().map_err(|e| {
                Short::Err(Error {
                    offset,
                    kind: e.into(),
                })
            })?;
            if avail.is_empty() {
                return Err(Short::Eof);
            }
            let (take, done) = match memchr::memchr(0, avail) {
                Some(i) => (i, true),
                None => (avail.len(), false),
            };
            let piece = avail.get(..take).unwrap_or_default();
            self.scratch.extend_from_slice(piece);
            let used = take + usize::from(done);
            self.src.consume(used);
            *self.offset += used as u64;
            if self.scratch.len() > MAX_STRING {
                return Err(long_string(start));
            }
            if done {
                break;
            }
        }
        if let Some(out) = out {
            out.push_str(&String::from_utf8_lossy(self.scratch));
        }
        self.pad()
    }
}

/// The time base a file's records are relative to.
struct Clock {
    /// Ticks of the current time base (seconds × resolution).
    base: u128,
    resolution: u64,
}

impl Clock {
    /// `ticks` after the time base, in ns since the epoch; `None` beyond
    /// i64.
    #[inline]
    fn ns(&self, ticks: u128) -> Option<i64> {
        let total = self.base.checked_add(ticks)?;
        // Nanosecond and microsecond clocks (libRastro's current and old
        // layouts) need no 128-bit division, a library call per record:
        // the same value, without it.
        let ns = if self.resolution == 1_000_000_000 {
            Some(total)
        } else if self.resolution == 1_000_000 {
            total.checked_mul(1_000)
        } else {
            total
                .checked_mul(1_000_000_000)
                .map(|x| x / u128::from(self.resolution))
        };
        ns.and_then(|x| i64::try_from(x).ok())
    }
}

/// The first `N` bytes of `v` (zeros past its end).
#[inline]
fn word<const N: usize>(v: &[u8]) -> [u8; N] {
    v.first_chunk::<N>().copied().unwrap_or([0; N])
}

/// The commonest records, read straight from the buffer: one header, no
/// new time base, and strings only when the reader reads past them (in
/// the current layout, 12 bytes and the values). Fills `rec` and gives
/// the record's length; `None`, with `rec` untouched, for any other
/// record, one that straddles the buffer or a time out of range: the
/// general path then reads it, or says what is wrong.
#[inline]
fn simple(
    avail: &[u8],
    init: &Init,
    clock: &Clock,
    strings: bool,
    rec: &mut Record,
) -> Option<usize> {
    let e = init.endian;
    // Values go in as they are met; on `None` the general path clears
    // `rec` and reads the record again.
    rec.clear();
    let head = simple_with(avail, init, clock, strings, |t, v| {
        match t {
            FieldType::Double => rec.doubles.push(f64::from_bits(e.u64(word(v)))),
            FieldType::Float => rec.floats.push(f32::from_bits(e.u32(word(v)))),
            FieldType::U64 => rec.u64s.push(e.u64(word(v))),
            FieldType::U16 => rec.u16s.push(e.u16(word(v))),
            FieldType::U8 => rec.u8s.push(v.first().copied().unwrap_or(0)),
            FieldType::U32 => rec.u32s.push(e.u32(word(v))),
            FieldType::String => {}
        }
        rec.fields.push(t);
    })?;
    rec.ty = head.ty;
    rec.time_ns = head.time_ns;
    Some(head.end)
}

/// A simple record's type, time and length ([`simple_with`]).
struct Head {
    ty: u16,
    time_ns: i64,
    end: usize,
}

/// [`simple`]'s reading of a record, whole in `avail`: its header, time
/// and length; `value(type, bytes)` for each value in turn (the bytes
/// from where it starts; none for a string). `None` for a record
/// the general path reads, after any number of values.
#[inline(always)]
fn simple_with(
    avail: &[u8],
    init: &Init,
    clock: &Clock,
    strings: bool,
    mut value: impl FnMut(FieldType, &[u8]),
) -> Option<Head> {
    let (header, head, ticks) = simple_head(avail, init)?;
    // The types, most significant nibble first, up to the first 0; after
    // it only zeros (else the general path names the bad code). A record
    // with a string to keep leaves at its string. A string read past ends
    // at its NUL, as the general path looks for it (within MAX_STRING
    // bytes), and is padded to 4 like the whole record (records start
    // 4-aligned: INIT's length is).
    let mut pos = head;
    let mut left = header & 0xffff;
    while left != 0 {
        let t = FieldType::from_nibble((left >> 12) & 0xf)?;
        pos = match t.size() {
            Some(size) => {
                value(t, avail.get(pos..).unwrap_or_default());
                pos + size
            }
            None if strings => return None,
            None => {
                value(t, &[]);
                past_string(avail, pos)?
            }
        };
        left = (left << 4) & 0xffff;
    }
    let time_ns = clock.ns(u128::from(ticks))?;
    let end = align4(pos);
    if avail.len() < end {
        return None;
    }
    Some(Head {
        ty: (header >> 18) as u16,
        time_ns,
        end,
    })
}

/// A simple record's header, where its values start and its time in
/// ticks: `None` unless it has one header and no new time base, or when
/// `avail` ends before its time.
#[inline(always)]
fn simple_head(avail: &[u8], init: &Init) -> Option<(u32, usize, u64)> {
    let e = init.endian;
    let header = e.u32(*avail.first_chunk::<4>()?);
    if header & (TIME_SET | LAST_FIRST) != LAST_FIRST {
        return None;
    }
    let rest = avail.get(4..)?;
    Some(match init.layout {
        Layout::Current => (header, 12, e.u64(*rest.first_chunk::<8>()?)),
        Layout::Old => (header, 8, u64::from(e.u32(*rest.first_chunk::<4>()?))),
    })
}

/// Where a string read past from `pos` ends: at its NUL, looked for
/// within [`MAX_STRING`] bytes as the general path does, padded to 4.
#[inline(always)]
fn past_string(avail: &[u8], pos: usize) -> Option<usize> {
    let rest = avail.get(pos..)?;
    let window = rest.get(..=MAX_STRING).unwrap_or(rest);
    Some(align4(pos + memchr::memchr(0, window)? + 1))
}

/// Decodes one record from `src` into `rec`; its strings only when
/// `pool` is given (their buffers come from there).
fn parse<S: Src>(
    src: &mut S,
    init: &Init,
    clock: &mut Clock,
    mut pool: Option<&mut Vec<String>>,
    rec: &mut Record,
) -> std::result::Result<(), Short> {
    let e = init.endian;
    let start = src.offset();
    rec.clear();
    rec.offset = start;
    let header = e.u32(src.bytes()?);
    rec.ty = (header >> 18) as u16;
    let ticks: u128 = match init.layout {
        Layout::Current => {
            if header & TIME_SET != 0 {
                let secs = e.u64(src.bytes()?);
                let res = e.u64(src.bytes()?);
                if res == 0 {
                    return Err(Short::Err(Error {
                        offset: start,
                        kind: ErrorKind::Layout("clock resolution 0".into()),
                    }));
                }
                clock.resolution = res;
                clock.base = u128::from(secs) * u128::from(res);
            }
            u128::from(e.u64(src.bytes()?))
        }
        Layout::Old => {
            if header & TIME_SET != 0 {
                clock.base = u128::from(e.u32(src.bytes()?)) * 1_000_000;
            }
            u128::from(e.u32(src.bytes()?))
        }
    };
    let Some(ns) = clock.ns(ticks) else {
        return Err(Short::Err(Error {
            offset: start,
            kind: ErrorKind::Layout("time out of range".into()),
        }));
    };
    rec.time_ns = ns;
    nibbles(header, 4, &mut rec.fields, start)?;
    let mut last = header & LAST_FIRST != 0;
    while !last {
        let at = src.offset();
        let h = e.u32(src.bytes()?);
        if h & 0xd000_0000 != 0 {
            return Err(Short::Err(Error {
                offset: at,
                kind: ErrorKind::Layout(format!(
                    "continuation header {h:#010x} has bits outside the last flag and 7 type codes"
                )),
            }));
        }
        nibbles(h & 0x0fff_ffff, 7, &mut rec.fields, at)?;
        last = h & LAST_CONT != 0;
    }
    for i in 0..rec.fields.len() {
        let Some(&f) = rec.fields.get(i) else { break };
        match f {
            FieldType::String => match pool.as_deref_mut() {
                Some(pool) => {
                    let mut s = pool.pop().unwrap_or_default();
                    s.clear();
                    src.string_into(Some(&mut s))?;
                    rec.strings.push(s);
                }
                None => src.string_into(None)?,
            },
            FieldType::Double => rec.doubles.push(f64::from_bits(e.u64(src.bytes()?))),
            FieldType::Float => rec.floats.push(f32::from_bits(e.u32(src.bytes()?))),
            FieldType::U64 => rec.u64s.push(e.u64(src.bytes()?)),
            FieldType::U16 => rec.u16s.push(e.u16(src.bytes()?)),
            FieldType::U8 => rec.u8s.extend_from_slice(&src.bytes::<1>()?),
            FieldType::U32 => rec.u32s.push(e.u32(src.bytes()?)),
        }
    }
    src.pad()
}

/// Reads one `.rst` file record by record.
pub struct RstReader<R: Read> {
    src: BufReader<std::io::Chain<std::io::Cursor<Vec<u8>>, R>>,
    offset: u64,
    init: Init,
    clock: Clock,
    end: End,
    scratch: Vec<u8>,
    pool: Vec<String>,
    strings: bool,
    shapes: ints::Shapes,
}

impl<R: Read> RstReader<R> {
    /// Reads the INIT record; fails unless the file starts with one.
    pub fn new(mut inner: R) -> Result<RstReader<R>> {
        let mut head = Vec::with_capacity(4096);
        (&mut inner)
            .take(4096)
            .read_to_end(&mut head)
            .map_err(|e| Error {
                offset: 0,
                kind: e.into(),
            })?;
        let (init, len) = detect(&head).map_err(|m| Error {
            offset: 0,
            kind: ErrorKind::NotRastro(m),
        })?;
        let clock = match init.layout {
            // Recomputed from the INIT bytes: the base is in ticks.
            Layout::Current => {
                let secs = head
                    .get(4..12)
                    .and_then(|b| b.first_chunk::<8>())
                    .map_or(0, |b| init.endian.u64(*b));
                Clock {
                    base: u128::from(secs) * u128::from(init.resolution),
                    resolution: init.resolution,
                }
            }
            Layout::Old => {
                let secs = head
                    .get(4..8)
                    .and_then(|b| b.first_chunk::<4>())
                    .map_or(0, |b| init.endian.u32(*b));
                Clock {
                    base: u128::from(secs) * 1_000_000,
                    resolution: 1_000_000,
                }
            }
        };
        let mut cursor = std::io::Cursor::new(head);
        cursor.set_position(len as u64);
        Ok(RstReader {
            src: BufReader::with_capacity(1 << 16, cursor.chain(inner)),
            offset: len as u64,
            init,
            clock,
            end: End::Open,
            scratch: Vec::new(),
            pool: Vec::new(),
            strings: true,
            shapes: ints::Shapes::default(),
        })
    }

    /// Reads past string values instead of decoding them: each is still
    /// checked to end within [`MAX_STRING`] bytes, and listed in
    /// [`Record::fields`], but [`Record::strings`] stays empty (for a
    /// reader of the integers only: most of a string record's cost was
    /// its UTF-8 conversion).
    pub fn skip_strings(mut self) -> RstReader<R> {
        self.strings = false;
        self
    }

    /// The file's INIT record.
    pub fn init(&self) -> &Init {
        &self.init
    }

    /// How the stream ended ([`End::Open`] until it has).
    pub fn end(&self) -> &End {
        &self.end
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// One record: from the buffer when it holds the whole record (the
    /// common case), else from the stream, which refills as it goes.
    fn record(&mut self, rec: &mut Record) -> std::result::Result<(), Short> {
        let start = self.offset;
        let avail = self.src.fill_buf().map_err(|e| {
            Short::Err(Error {
                offset: start,
                kind: e.into(),
            })
        })?;
        if !rec.strings.is_empty() {
            self.pool.append(&mut rec.strings);
        }
        if let Some(len) = simple(avail, &self.init, &self.clock, self.strings, rec) {
            rec.offset = start;
            self.src.consume(len);
            self.offset += len as u64;
            return Ok(());
        }
        let mut fast = Slice {
            buf: avail,
            pos: 0,
            base: start,
        };
        let pool = self.strings.then_some(&mut self.pool);
        match parse(&mut fast, &self.init, &mut self.clock, pool, rec) {
            Ok(()) => {
                let n = fast.pos;
                self.src.consume(n);
                self.offset += n as u64;
                return Ok(());
            }
            Err(Short::Err(e)) => return Err(Short::Err(e)),
            // The record goes past the buffer: read it again from the
            // stream (nothing was consumed; the time base it may have
            // set is set again the same way).
            Err(Short::Eof) => {}
        }
        let mut slow = Stream {
            src: &mut self.src,
            offset: &mut self.offset,
            scratch: &mut self.scratch,
        };
        let pool = self.strings.then_some(&mut self.pool);
        parse(&mut slow, &self.init, &mut self.clock, pool, rec)
    }

    /// Reads the next event record into `rec`; `Ok(false)` at the end
    /// (STOP, or the end of the file: see [`RstReader::end`]).
    pub fn next_into(&mut self, rec: &mut Record) -> Result<bool> {
        if self.end != End::Open {
            return Ok(false);
        }
        let start = self.offset;
        match self.record(rec) {
            Ok(()) => {}
            Err(Short::Err(e)) => return Err(e),
            Err(Short::Eof) => {
                self.end = if self.offset == start {
                    End::NoStop { offset: start }
                } else {
                    End::Truncated {
                        offset: start,
                        what: "the file ends inside this record",
                    }
                };
                return Ok(false);
            }
        }
        if rec.ty == STOP {
            let mut trailing = 0u64;
            loop {
                let n = match self.src.fill_buf() {
                    Ok(b) => b.len(),
                    Err(e) => return err(self.offset, e.into()),
                };
                if n == 0 {
                    break;
                }
                self.src.consume(n);
                trailing += n as u64;
            }
            self.end = End::Stop {
                offset: start,
                time_ns: rec.time_ns,
                trailing,
            };
            return Ok(false);
        }
        if rec.ty == INIT {
            return err(
                start,
                ErrorKind::Layout("a second INIT record inside the file".into()),
            );
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests;
