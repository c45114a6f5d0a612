//! Streaming decoder of `trace.dat`, the file `trace-cmd record` writes
//! (versions 6 and 7, the latter with zstd-compressed sections), as
//! trace-cmd's `trace-cmd.dat.v6(5)` and `.v7(5)` describe it: the
//! header, the event format texts (field offsets are read from them), the
//! saved command lines, the options (uname, trace clock, CPU count) and
//! the per-CPU ring-buffer pages, with their time deltas, extended and
//! absolute timestamps, padding and lost-event flags. The CPUs' events
//! are merged on time.
//!
//! A decoder only: scheduler events in, with their CPU and trace-clock
//! time; no Pajé, no wall clock. No input makes it panic; memory holds one
//! page (or one compressed chunk) per CPU, whatever the file's size.
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

pub mod format;
mod ring;

use format::EventFormat;
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};

pub use ring::Cpu;

/// The magic: `\x17\x08\x44tracing`.
pub const MAGIC: &[u8] = b"\x17\x08\x44tracing";

/// Whether `head` starts a trace.dat.
pub fn detect(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

/// A decoding error at a byte offset of the file.
#[derive(Debug, thiserror::Error)]
#[error("byte {offset}: {what}")]
pub struct Error {
    /// Offset in the file (of the section or page being read).
    pub offset: u64,
    /// What went wrong.
    pub what: String,
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;

fn err<T>(offset: u64, what: impl Into<String>) -> Result<T> {
    Err(Error {
        offset,
        what: what.into(),
    })
}

/// The largest section or chunk read into memory: a damaged size must not
/// make the reader allocate the file's size.
pub const MAX_BLOCK: u64 = 256 << 20;

/// What happened, as the scheduler events say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// `sched_switch`.
    Switch {
        /// The task leaving.
        prev_comm: String,
        /// Its pid.
        prev_pid: i32,
        /// Its state, the kernel's bits (`prev_state`).
        prev_state: i64,
        /// The task coming on.
        next_comm: String,
        /// Its pid.
        next_pid: i32,
    },
    /// `sched_wakeup`, `sched_wakeup_new` or `sched_waking`.
    Wakeup {
        /// Which.
        event: String,
        /// The task woken.
        comm: String,
        /// Its pid.
        pid: i32,
    },
    /// `sched_process_fork`.
    Fork {
        /// The parent.
        pid: i32,
        /// The child's comm.
        child_comm: String,
        /// The child.
        child_pid: i32,
    },
    /// `sched_process_exit`.
    Exit {
        /// The task.
        pid: i32,
    },
    /// A `trace_marker` write (ftrace's `print` event).
    Print(String),
    /// Any other event, by name.
    Other(String),
}

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Record number, 1-based, in time order.
    pub index: u64,
    /// The CPU.
    pub cpu: u32,
    /// Time on the trace clock, ns.
    pub ts_ns: i64,
    /// The context task (`common_pid`).
    pub pid: i32,
    /// Its name, from the saved command lines and the switches seen.
    pub comm: String,
    /// What happened.
    pub kind: Kind,
}

/// The file's facts.
#[derive(Debug, Clone, Default)]
pub struct Info {
    /// 6 or 7.
    pub version: u32,
    /// Whether numbers are little-endian.
    pub little: bool,
    /// The traced machine's page size.
    pub page_size: usize,
    /// `uname` of the traced machine (option UNAME).
    pub uname: Option<String>,
    /// The trace clock (`[local] global ...`: the bracketed one).
    pub clock: Option<String>,
    /// Compression of v7 sections (`zstd`, `none`).
    pub compression: String,
    /// Option TSC2NSEC: (multiplier, shift, offset) that turn the counts
    /// of an `x86-tsc` clock into nanoseconds.
    pub tsc2nsec: Option<(u32, u32, u64)>,
}

impl Info {
    /// A record's time in ns: counts of an `x86-tsc` clock converted as
    /// trace-cmd does (`ts * mult >> shift`, then the offset).
    pub fn ns(&self, ts: i64) -> i64 {
        match (self.tsc2nsec, self.clock.as_deref()) {
            (Some((mult, shift, offset)), Some("x86-tsc")) => {
                let ns = (u128::from(ts as u64) * u128::from(mult)) >> shift.min(127);
                i64::try_from(ns.saturating_add(u128::from(offset))).unwrap_or(i64::MAX)
            }
            _ => ts,
        }
    }

    /// The host name in `uname` (`Linux vm 6.18 x86_64` → `vm`).
    pub fn hostname(&self) -> Option<&str> {
        self.uname.as_deref()?.split_whitespace().nth(1)
    }
}

/// Reads numbers in the file's byte order.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Endian {
    little: bool,
}

impl Endian {
    pub(crate) fn u16(self, b: &[u8], at: usize) -> Option<u16> {
        let a = *b.get(at..)?.first_chunk::<2>()?;
        Some(if self.little {
            u16::from_le_bytes(a)
        } else {
            u16::from_be_bytes(a)
        })
    }

    pub(crate) fn u32(self, b: &[u8], at: usize) -> Option<u32> {
        let a = *b.get(at..)?.first_chunk::<4>()?;
        Some(if self.little {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        })
    }

    pub(crate) fn u64(self, b: &[u8], at: usize) -> Option<u64> {
        let a = *b.get(at..)?.first_chunk::<8>()?;
        Some(if self.little {
            u64::from_le_bytes(a)
        } else {
            u64::from_be_bytes(a)
        })
    }

    /// An unsigned field of `size` bytes (1, 2, 4 or 8).
    pub(crate) fn uint(self, b: &[u8], at: usize, size: usize) -> Option<u64> {
        match size {
            1 => b.get(at).map(|&x| u64::from(x)),
            2 => self.u16(b, at).map(u64::from),
            4 => self.u32(b, at).map(u64::from),
            8 => self.u64(b, at),
            _ => None,
        }
    }

    /// A signed field of `size` bytes.
    pub(crate) fn int(self, b: &[u8], at: usize, size: usize) -> Option<i64> {
        let v = self.uint(b, at, size)?;
        Some(match size {
            1 => i64::from(v as u8 as i8),
            2 => i64::from(v as u16 as i16),
            4 => i64::from(v as u32 as i32),
            _ => v as i64,
        })
    }
}

/// Where one CPU's data is, and how it is stored.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CpuData {
    pub(crate) cpu: u32,
    pub(crate) offset: u64,
    pub(crate) size: u64,
}

/// Reads `n` bytes at `offset`.
fn read_at<R: Read + Seek>(r: &mut R, offset: u64, n: u64) -> Result<Vec<u8>> {
    if n > MAX_BLOCK {
        return err(
            offset,
            format!("a block of {n} bytes, more than any trace.dat holds: the file is damaged"),
        );
    }
    r.seek(SeekFrom::Start(offset)).map_err(|e| Error {
        offset,
        what: e.to_string(),
    })?;
    let mut buf = Vec::new();
    r.take(n).read_to_end(&mut buf).map_err(|e| Error {
        offset,
        what: e.to_string(),
    })?;
    if (buf.len() as u64) < n {
        return err(offset, format!("the file ends inside a block of {n} bytes"));
    }
    Ok(buf)
}

/// Decompresses one zstd frame of a known size.
pub(crate) fn unzstd(data: &[u8], size: u64, offset: u64) -> Result<Vec<u8>> {
    if size > MAX_BLOCK {
        return err(
            offset,
            format!("a compressed block of {size} bytes: the file is damaged"),
        );
    }
    let mut out = Vec::new();
    let mut dec = ruzstd::decoding::StreamingDecoder::new(data).map_err(|e| Error {
        offset,
        what: format!("zstd: {e}"),
    })?;
    (&mut dec)
        .take(size + 1)
        .read_to_end(&mut out)
        .map_err(|e| Error {
            offset,
            what: format!("zstd: {e}"),
        })?;
    if out.len() as u64 != size {
        return err(
            offset,
            format!(
                "zstd block gives {} bytes, its header says {size}",
                out.len()
            ),
        );
    }
    Ok(out)
}

/// Reading the metadata's fields, from a block in memory (a v7 section)
/// or from the file itself (the v6 header, which runs up to the CPU
/// data: it is read as it is parsed, never whole).
trait Fields {
    fn off(&self) -> u64;
    fn u16(&mut self) -> Result<u16>;
    fn u32(&mut self) -> Result<u32>;
    fn u64(&mut self) -> Result<u64>;
    fn cstr(&mut self) -> Result<String>;
    fn bytes(&mut self, n: u64) -> Result<Vec<u8>>;
}

/// The file read in order from `at` (v6).
struct Stream<'a, R> {
    r: std::io::BufReader<&'a mut R>,
    at: u64,
    e: Endian,
}

impl<R: Read> Stream<'_, R> {
    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        let at = self.at;
        self.r.read_exact(&mut a).map_err(|_| Error {
            offset: at,
            what: "the file ends inside its header".into(),
        })?;
        self.at += N as u64;
        Ok(a)
    }
}

impl<R: Read> Fields for Stream<'_, R> {
    fn off(&self) -> u64 {
        self.at
    }
    fn u16(&mut self) -> Result<u16> {
        let a = self.array::<2>()?;
        Ok(self.e.u16(&a, 0).unwrap_or(0))
    }
    fn u32(&mut self) -> Result<u32> {
        let a = self.array::<4>()?;
        Ok(self.e.u32(&a, 0).unwrap_or(0))
    }
    fn u64(&mut self) -> Result<u64> {
        let a = self.array::<8>()?;
        Ok(self.e.u64(&a, 0).unwrap_or(0))
    }
    fn cstr(&mut self) -> Result<String> {
        use std::io::BufRead;
        let at = self.at;
        let mut v = Vec::new();
        // A name is short: a damaged file cannot make this read far.
        loop {
            let buf = self.r.fill_buf().map_err(|e| Error {
                offset: at,
                what: e.to_string(),
            })?;
            if buf.is_empty() || v.len() > 4096 {
                return err(at, "a string without its terminating NUL");
            }
            match buf.iter().position(|&c| c == 0) {
                Some(n) => {
                    v.extend_from_slice(buf.get(..n).unwrap_or_default());
                    self.r.consume(n + 1);
                    break;
                }
                None => {
                    let n = buf.len();
                    v.extend_from_slice(buf);
                    self.r.consume(n);
                }
            }
        }
        self.at += v.len() as u64 + 1;
        Ok(String::from_utf8_lossy(&v).into_owned())
    }
    fn bytes(&mut self, n: u64) -> Result<Vec<u8>> {
        let at = self.at;
        if n > MAX_BLOCK {
            return err(
                at,
                format!("a block of {n} bytes, more than any trace.dat holds: the file is damaged"),
            );
        }
        let mut v = Vec::new();
        (&mut self.r)
            .take(n)
            .read_to_end(&mut v)
            .map_err(|e| Error {
                offset: at,
                what: e.to_string(),
            })?;
        if (v.len() as u64) < n {
            return err(at, format!("the file ends inside a block of {n} bytes"));
        }
        self.at += n;
        Ok(v)
    }
}

impl Fields for Cur<'_> {
    fn off(&self) -> u64 {
        Cur::off(self)
    }
    fn u16(&mut self) -> Result<u16> {
        Cur::u16(self)
    }
    fn u32(&mut self) -> Result<u32> {
        Cur::u32(self)
    }
    fn u64(&mut self) -> Result<u64> {
        Cur::u64(self)
    }
    fn cstr(&mut self) -> Result<String> {
        Cur::cstr(self)
    }
    fn bytes(&mut self, n: u64) -> Result<Vec<u8>> {
        Cur::bytes(self, n).map(<[u8]>::to_vec)
    }
}

/// A cursor over an in-memory block (a v7 section).
struct Cur<'a> {
    b: &'a [u8],
    at: usize,
    e: Endian,
    base: u64,
}

impl Cur<'_> {
    fn off(&self) -> u64 {
        self.base + self.at as u64
    }

    fn u32(&mut self) -> Result<u32> {
        let v = self.e.u32(self.b, self.at);
        let Some(v) = v else {
            return err(self.off(), "the file ends inside a number");
        };
        self.at += 4;
        Ok(v)
    }

    fn u64(&mut self) -> Result<u64> {
        let v = self.e.u64(self.b, self.at);
        let Some(v) = v else {
            return err(self.off(), "the file ends inside a number");
        };
        self.at += 8;
        Ok(v)
    }

    fn u16(&mut self) -> Result<u16> {
        let v = self.e.u16(self.b, self.at);
        let Some(v) = v else {
            return err(self.off(), "the file ends inside a number");
        };
        self.at += 2;
        Ok(v)
    }

    fn cstr(&mut self) -> Result<String> {
        let rest = self.b.get(self.at..).unwrap_or_default();
        let Some(n) = rest.iter().position(|&c| c == 0) else {
            return err(self.off(), "a string without its terminating NUL");
        };
        let s = String::from_utf8_lossy(rest.get(..n).unwrap_or_default()).into_owned();
        self.at += n + 1;
        Ok(s)
    }

    fn bytes(&mut self, n: u64) -> Result<&[u8]> {
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.at.checked_add(n))
            .filter(|&e| e <= self.b.len());
        let Some(end) = end else {
            return err(
                self.off(),
                format!("a block of {n} bytes runs past its end"),
            );
        };
        let s = self.b.get(self.at..end).unwrap_or_default();
        self.at = end;
        Ok(s)
    }
}

/// What the metadata holds, whatever the version.
#[derive(Default)]
struct Meta {
    formats: HashMap<u16, EventFormat>,
    header_page: Option<EventFormat>,
    cmdlines: HashMap<i32, String>,
    cpus: Vec<CpuData>,
}

impl Meta {
    /// A header_page text: its fields (no name or id).
    fn header_page(&mut self, text: &str) {
        let fixed = format!("name: header_page\nID: 0\n{text}");
        self.header_page = format::parse(&fixed);
    }

    /// An events section: `count` × (u64 size, format text).
    fn formats(&mut self, c: &mut impl Fields) -> Result<()> {
        let n = c.u32()?;
        for _ in 0..n {
            let size = c.u64()?;
            let text = String::from_utf8_lossy(&c.bytes(size)?).into_owned();
            if let Some(f) = format::parse(&text) {
                self.formats.insert(f.id, f);
            }
        }
        Ok(())
    }

    /// The event formats of every system.
    fn systems(&mut self, c: &mut impl Fields) -> Result<()> {
        let n = c.u32()?;
        for _ in 0..n {
            let _system = c.cstr()?;
            self.formats(c)?;
        }
        Ok(())
    }

    /// `saved_cmdlines`: `pid comm` lines.
    fn cmdlines(&mut self, text: &[u8]) {
        for line in String::from_utf8_lossy(text).lines() {
            if let Some((pid, comm)) = line.trim().split_once(' ') {
                if let Ok(pid) = pid.parse() {
                    self.cmdlines.insert(pid, comm.to_string());
                }
            }
        }
    }
}

/// A trace.dat being read.
pub struct TraceDat<R> {
    info: Info,
    e: Endian,
    formats: HashMap<u16, EventFormat>,
    /// The saved command lines (the names at the end of the capture, as
    /// trace-cmd report shows the context), then the names switches carry
    /// for tasks the list does not hold.
    saved: HashMap<i32, String>,
    seen: HashMap<i32, String>,
    cpus: Vec<Cpu<R>>,
    index: u64,
    /// Lost events the pages report, per CPU.
    pub lost: Vec<(u32, u64)>,
}

impl<R: Read + Seek> TraceDat<R> {
    /// Opens a file; `open` gives a fresh reader of it (one per CPU).
    pub fn open(mut open: impl FnMut() -> std::io::Result<R>) -> Result<TraceDat<R>> {
        let io = |e: std::io::Error| Error {
            offset: 0,
            what: e.to_string(),
        };
        let mut r = open().map_err(io)?;
        let len = file_len(&mut r)?;
        let head = read_at(&mut r, 0, 64.min(len))?;
        if !detect(&head) {
            return err(0, "not a trace.dat (no \\x17\\x08\\x44tracing magic)");
        }
        let vend = head.iter().skip(10).position(|&c| c == 0).map(|p| p + 10);
        let Some(vend) = vend else {
            return err(10, "no version string");
        };
        let version: u32 = String::from_utf8_lossy(head.get(10..vend).unwrap_or_default())
            .parse()
            .map_err(|_| Error {
                offset: 10,
                what: "the version is not a number".into(),
            })?;
        let little = head.get(vend + 1) == Some(&0);
        let e = Endian { little };
        let page_size = e.u32(&head, vend + 3).unwrap_or(0) as usize;
        if !(1024..=(1 << 20)).contains(&page_size) {
            return err(
                vend as u64 + 3,
                format!("page size {page_size}: expected a kernel page size"),
            );
        }
        let mut info = Info {
            version,
            little,
            page_size,
            compression: "none".into(),
            ..Info::default()
        };
        let mut meta = Meta::default();
        let after = vend as u64 + 7;
        let compressed = match version {
            6 => {
                v6(&mut r, after, e, &mut meta, &mut info)?;
                false
            }
            7 => v7(&mut r, after, e, &mut meta, &mut info)?,
            v => return err(10, format!("trace.dat version {v}, expected 6 or 7")),
        };
        let header_page = meta.header_page.take().unwrap_or_default();
        let layout = ring::Layout::of(&header_page, page_size);
        let mut cpus = Vec::new();
        for d in &meta.cpus {
            let r = open().map_err(io)?;
            cpus.push(Cpu::new(r, *d, compressed, layout, e)?);
        }
        let n = cpus.len();
        Ok(TraceDat {
            info,
            e,
            formats: meta.formats,
            saved: meta.cmdlines,
            seen: HashMap::new(),
            cpus,
            index: 0,
            lost: Vec::with_capacity(n),
        })
    }

    /// The file's facts.
    pub fn info(&self) -> &Info {
        &self.info
    }

    /// The next event in time order (ties: the lower CPU); `Ok(None)` at
    /// the end.
    pub fn next_event(&mut self) -> Result<Option<Event>> {
        let mut best: Option<(usize, i64)> = None;
        for (i, c) in self.cpus.iter_mut().enumerate() {
            if let Some(ts) = c.peek()? {
                if best.is_none_or(|(_, b)| ts < b) {
                    best = Some((i, ts));
                }
            }
        }
        let Some((i, _)) = best else {
            self.lost = self.cpus.iter().map(|c| (c.cpu(), c.lost)).collect();
            return Ok(None);
        };
        let Some(c) = self.cpus.get_mut(i) else {
            return Ok(None);
        };
        let Some((ts, offset, rec)) = c.take() else {
            return Ok(None);
        };
        let cpu = c.cpu();
        self.index += 1;
        let ts = self.info.ns(ts);
        self.decode(cpu, ts, offset, &rec).map(Some)
    }

    fn decode(&mut self, cpu: u32, ts: i64, offset: u64, rec: &[u8]) -> Result<Event> {
        let e = self.e;
        let id = e.u16(rec, 0).unwrap_or(0);
        let pid = e.int(rec, 4, 4).unwrap_or(0) as i32;
        let Some(f) = self.formats.get(&id) else {
            return err(
                offset,
                format!("record of event type {id}, which no format of the file describes"),
            );
        };
        let int = |name: &str| -> i64 {
            f.field(name)
                .and_then(|x| e.int(rec, x.offset, x.size))
                .unwrap_or(0)
        };
        let text = |name: &str| -> String {
            let Some(x) = f.field(name) else {
                return String::new();
            };
            let (start, len) = if x.data_loc {
                let d = e.u32(rec, x.offset).unwrap_or(0);
                ((d & 0xffff) as usize, (d >> 16) as usize)
            } else if x.size == 0 {
                (x.offset, rec.len().saturating_sub(x.offset))
            } else {
                (x.offset, x.size)
            };
            let s = rec
                .get(start..start.saturating_add(len).min(rec.len()))
                .unwrap_or_default();
            let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
            String::from_utf8_lossy(s.get(..end).unwrap_or_default()).into_owned()
        };
        let kind = match f.name.as_str() {
            "sched_switch" => Kind::Switch {
                prev_comm: text("prev_comm"),
                prev_pid: int("prev_pid") as i32,
                prev_state: int("prev_state"),
                next_comm: text("next_comm"),
                next_pid: int("next_pid") as i32,
            },
            "sched_wakeup" | "sched_wakeup_new" | "sched_waking" => Kind::Wakeup {
                event: f.name.clone(),
                comm: text("comm"),
                pid: int("pid") as i32,
            },
            "sched_process_fork" => Kind::Fork {
                pid: int("parent_pid") as i32,
                child_comm: text("child_comm"),
                child_pid: int("child_pid") as i32,
            },
            "sched_process_exit" => Kind::Exit {
                pid: int("pid") as i32,
            },
            "print" => Kind::Print(text("buf").trim_end().to_string()),
            other => Kind::Other(other.to_string()),
        };
        if let Kind::Switch {
            prev_comm,
            prev_pid,
            next_comm,
            next_pid,
            ..
        } = &kind
        {
            for (p, c) in [(prev_pid, prev_comm), (next_pid, next_comm)] {
                if *p > 0 && !self.saved.contains_key(p) && self.seen.get(p) != Some(c) {
                    self.seen.insert(*p, c.clone());
                }
            }
        }
        let comm = match self.saved.get(&pid).or_else(|| self.seen.get(&pid)) {
            Some(c) => c.clone(),
            None if pid == 0 => "<idle>".into(),
            None => "<...>".into(),
        };
        Ok(Event {
            index: self.index,
            cpu,
            ts_ns: ts,
            pid,
            comm,
            kind,
        })
    }
}

fn file_len<R: Seek>(r: &mut R) -> Result<u64> {
    r.seek(SeekFrom::End(0)).map_err(|e| Error {
        offset: 0,
        what: e.to_string(),
    })
}

/// Version 6: everything in order after the initial format.
fn v6<R: Read + Seek>(
    r: &mut R,
    after: u64,
    e: Endian,
    meta: &mut Meta,
    info: &mut Info,
) -> Result<()> {
    r.seek(SeekFrom::Start(after)).map_err(|e| Error {
        offset: after,
        what: e.to_string(),
    })?;
    let mut c = Stream {
        r: std::io::BufReader::new(r),
        at: after,
        e,
    };
    for want in ["header_page", "header_event"] {
        let name = c.cstr()?;
        if name != want {
            return err(c.off(), format!("`{name}`, expected `{want}`"));
        }
        let size = c.u64()?;
        let text = String::from_utf8_lossy(&c.bytes(size)?).into_owned();
        if want == "header_page" {
            meta.header_page(&text);
        }
    }
    meta.formats(&mut c)?;
    meta.systems(&mut c)?;
    let n = u64::from(c.u32()?);
    c.bytes(n)?; // kallsyms
    let n = u64::from(c.u32()?);
    c.bytes(n)?; // printk formats
    let n = c.u64()?;
    let cmd = c.bytes(n)?;
    meta.cmdlines(&cmd);
    let ncpu = c.u32()?;
    loop {
        let what = c.bytes(10)?;
        match what.as_slice() {
            b"options  \0" => loop {
                let id = c.u16()?;
                if id == 0 {
                    break;
                }
                let size = u64::from(c.u32()?);
                let data = c.bytes(size)?;
                option(id, &data, e, info, meta, after)?;
            },
            b"flyrecord\0" => {
                for cpu in 0..ncpu {
                    let offset = c.u64()?;
                    let size = c.u64()?;
                    meta.cpus.push(CpuData { cpu, offset, size });
                }
                return Ok(());
            }
            b"latency  \0" => return err(c.off(), "a latency trace (text), not a flyrecord"),
            _ => return err(c.off(), "expected `options`, `flyrecord` or `latency`"),
        }
    }
}

/// One option of either version (v7 section options aside).
fn option(
    id: u16,
    data: &[u8],
    e: Endian,
    info: &mut Info,
    meta: &mut Meta,
    base: u64,
) -> Result<()> {
    let text = || {
        let end = data.iter().position(|&c| c == 0).unwrap_or(data.len());
        String::from_utf8_lossy(data.get(..end).unwrap_or_default()).into_owned()
    };
    match id {
        4 => {
            let t = text();
            info.clock = t
                .split_whitespace()
                .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
                .map(str::to_string)
                .or(Some(t.trim().to_string()));
        }
        5 => info.uname = Some(text()),
        14 => {
            let mult = e.u32(data, 0).unwrap_or(0);
            let shift = e.u32(data, 4).unwrap_or(0);
            let offset = e.u64(data, 8).unwrap_or(0);
            info.tsc2nsec = (mult > 0).then_some((mult, shift, offset));
        }
        // v7 BUFFER: where the top instance's CPU data is.
        3 => {
            let mut c = Cur {
                b: data,
                at: 0,
                e,
                base,
            };
            let _section = c.u64()?;
            let name = c.cstr()?;
            let _clock = c.cstr()?;
            if !name.is_empty() {
                return Ok(()); // another instance than the top one
            }
            // trace-cmd 3.x writes the page size before the CPU count.
            let rest = data.len() - c.at;
            let count_at = if rest >= 8 && (rest - 8).is_multiple_of(20) {
                c.at + 4
            } else {
                c.at
            };
            c.at = count_at;
            let n = c.u32()?;
            for _ in 0..n {
                let cpu = c.u32()?;
                let offset = c.u64()?;
                let size = c.u64()?;
                meta.cpus.push(CpuData { cpu, offset, size });
            }
        }
        _ => {}
    }
    Ok(())
}

/// Version 7: sections, found from the options.
fn v7<R: Read + Seek>(
    r: &mut R,
    after: u64,
    e: Endian,
    meta: &mut Meta,
    info: &mut Info,
) -> Result<bool> {
    let len = file_len(r)?;
    let head = read_at(r, after, 64.min(len.saturating_sub(after)))?;
    let mut c = Cur {
        b: &head,
        at: 0,
        e,
        base: after,
    };
    info.compression = c.cstr()?;
    let _version = c.cstr()?;
    let compressed = info.compression != "none";
    if compressed && info.compression != "zstd" {
        return err(
            after,
            format!(
                "sections compressed with `{}`: only zstd is read",
                info.compression
            ),
        );
    }
    let mut next = c.u64()?;
    let mut seen = 0;
    while next != 0 {
        seen += 1;
        if seen > 64 {
            return err(
                next,
                "more than 64 options sections: the chain of sections loops",
            );
        }
        let (id, body) = section(r, next, e, compressed)?;
        if id != 0 {
            return err(
                next,
                format!("section {id} where an options section was expected"),
            );
        }
        let mut c = Cur {
            b: &body,
            at: 0,
            e,
            base: next,
        };
        next = 0;
        while c.at < body.len() {
            let oid = c.u16()?;
            let size = u64::from(c.u32()?);
            let data = c.bytes(size)?.to_vec();
            match oid {
                0 => {
                    next = e.u64(&data, 0).unwrap_or(0);
                    break;
                }
                16..=21 => {
                    let at = e.u64(&data, 0).unwrap_or(0);
                    let (_, s) = section(r, at, e, compressed)?;
                    let mut sc = Cur {
                        b: &s,
                        at: 0,
                        e,
                        base: at,
                    };
                    match oid {
                        16 => {
                            for want in ["header_page", "header_event"] {
                                let name = sc.cstr()?;
                                if name != want {
                                    return err(at, format!("`{name}`, expected `{want}`"));
                                }
                                let size = sc.u64()?;
                                let text = String::from_utf8_lossy(sc.bytes(size)?).into_owned();
                                if want == "header_page" {
                                    meta.header_page(&text);
                                }
                            }
                        }
                        17 => meta.formats(&mut sc)?,
                        18 => meta.systems(&mut sc)?,
                        21 => {
                            let n = sc.u64()?;
                            let cmd = sc.bytes(n)?.to_vec();
                            meta.cmdlines(&cmd);
                        }
                        _ => {}
                    }
                }
                _ => option(oid, &data, e, info, meta, next)?,
            }
        }
    }
    Ok(compressed)
}

/// A v7 section at `at`: its id and its (decompressed) body.
fn section<R: Read + Seek>(
    r: &mut R,
    at: u64,
    e: Endian,
    compressed: bool,
) -> Result<(u16, Vec<u8>)> {
    let h = read_at(r, at, 16)?;
    let id = e.u16(&h, 0).unwrap_or(0);
    let flags = e.u16(&h, 2).unwrap_or(0);
    let size = e.u64(&h, 8).unwrap_or(0);
    let body = read_at(r, at + 16, size)?;
    if flags & 1 == 0 {
        return Ok((id, body));
    }
    if !compressed {
        return err(
            at,
            "a compressed section in a file that names no compression",
        );
    }
    let csize = e.u32(&body, 0).unwrap_or(0) as usize;
    let usize_ = u64::from(e.u32(&body, 4).unwrap_or(0));
    let data = body.get(8..8 + csize).unwrap_or_default();
    Ok((id, unzstd(data, usize_, at)?))
}

#[cfg(test)]
mod tests;
