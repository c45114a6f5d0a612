//! One CPU's ring-buffer pages (the kernel's `ring_buffer.c` layout, the
//! page header as the file's `header_page` text gives it): a page's base
//! time, its committed size and lost-event flags, then records whose
//! 32-bit headers hold a 5-bit type/length and a 27-bit time delta.

use crate::format::EventFormat;
use crate::{err, unzstd, CpuData, Endian, Result, MAX_BLOCK};
use std::collections::VecDeque;
use std::io::{Read, Seek, SeekFrom};

/// Record types above the data lengths.
const PADDING: u32 = 29;
const TIME_EXTEND: u32 = 30;
const TIME_STAMP: u32 = 31;
/// `commit` flags and mask (libtraceevent's kbuffer).
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
const COMMIT_MASK: u64 = (1 << 27) - 1;
/// An absolute timestamp holds 59 bits; the page's time gives the rest.
const TS_MSB: u64 = 0x1f << 59;

/// Where a page's fields are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    page: usize,
    ts_at: usize,
    commit_at: usize,
    commit_size: usize,
    data_at: usize,
}

impl Layout {
    /// From the `header_page` format (defaults: a 64-bit kernel's).
    pub(crate) fn of(h: &EventFormat, page: usize) -> Layout {
        let at = |n: &str, d: usize| h.field(n).map_or(d, |f| f.offset);
        Layout {
            page,
            ts_at: at("timestamp", 0),
            commit_at: at("commit", 8),
            commit_size: h.field("commit").map_or(8, |f| f.size),
            data_at: at("data", 16),
        }
    }
}

/// One CPU's stream of records.
pub struct Cpu<R> {
    r: R,
    d: CpuData,
    /// File bytes of this CPU not read yet.
    left: u64,
    /// Where the next read is.
    at: u64,
    compressed: bool,
    chunks: Option<u32>,
    layout: Layout,
    e: Endian,
    /// Pages read and not yet parsed, and the file offset of the first.
    block: Vec<u8>,
    block_pos: usize,
    block_offset: u64,
    /// Records of the current page: (time, file offset, bytes).
    ready: VecDeque<(i64, u64, Vec<u8>)>,
    ts: u64,
    /// Events the kernel lost on this CPU, as the pages report.
    pub lost: u64,
}

impl<R: Read + Seek> Cpu<R> {
    pub(crate) fn new(
        r: R,
        d: CpuData,
        compressed: bool,
        layout: Layout,
        e: Endian,
    ) -> Result<Cpu<R>> {
        Ok(Cpu {
            r,
            d,
            left: d.size,
            at: d.offset,
            compressed,
            chunks: None,
            layout,
            e,
            block: Vec::new(),
            block_pos: 0,
            block_offset: d.offset,
            ready: VecDeque::new(),
            ts: 0,
            lost: 0,
        })
    }

    /// The CPU's number.
    pub fn cpu(&self) -> u32 {
        self.d.cpu
    }

    fn read(&mut self, n: u64) -> Result<Vec<u8>> {
        if n > self.left || n > MAX_BLOCK {
            return err(
                self.at,
                format!(
                    "CPU {}: a block of {n} bytes runs past its data",
                    self.d.cpu
                ),
            );
        }
        let at = self.at;
        self.r.seek(SeekFrom::Start(at)).map_err(|e| crate::Error {
            offset: at,
            what: e.to_string(),
        })?;
        let mut buf = Vec::new();
        (&mut self.r)
            .take(n)
            .read_to_end(&mut buf)
            .map_err(|e| crate::Error {
                offset: at,
                what: e.to_string(),
            })?;
        if (buf.len() as u64) < n {
            return err(
                at,
                format!("CPU {}: the file ends inside its data", self.d.cpu),
            );
        }
        self.at += n;
        self.left -= n;
        Ok(buf)
    }

    /// Loads the next block of pages; `false` at the end of the CPU's data.
    fn load(&mut self) -> Result<bool> {
        // At the end the block stays empty: nothing is read twice.
        self.block.clear();
        self.block_pos = 0;
        self.block_offset = self.at;
        if !self.compressed {
            if self.left == 0 {
                return Ok(false);
            }
            let n = self.left.min(self.layout.page as u64 * 16);
            self.block = self.read(n)?;
            return Ok(true);
        }
        let chunks = match self.chunks {
            Some(c) => c,
            None => {
                // The size trace-cmd records leaves out this count.
                self.left = self.left.saturating_add(4);
                let b = self.read(4)?;
                self.e.u32(&b, 0).unwrap_or(0)
            }
        };
        if chunks == 0 {
            self.chunks = Some(0);
            return Ok(false);
        }
        self.chunks = Some(chunks - 1);
        let h = self.read(8)?;
        let csize = u64::from(self.e.u32(&h, 0).unwrap_or(0));
        let usize_ = u64::from(self.e.u32(&h, 4).unwrap_or(0));
        let at = self.at;
        let data = self.read(csize)?;
        self.block = unzstd(&data, usize_, at)?;
        Ok(true)
    }

    /// Parses the next page into `ready`; `false` at the end.
    fn page(&mut self) -> Result<bool> {
        let l = self.layout;
        if self.block_pos >= self.block.len() && !self.load()? {
            return Ok(false);
        }
        let start = self.block_pos;
        let end = (start + l.page).min(self.block.len());
        self.block_pos = end;
        // In a compressed file, offsets name the chunk.
        let page_offset = if self.compressed {
            self.block_offset
        } else {
            self.block_offset + start as u64
        };
        let page = self.block.get(start..end).unwrap_or_default();
        let e = self.e;
        let Some(base) = e.u64(page, l.ts_at) else {
            return err(page_offset, "a page shorter than its header");
        };
        let commit = e.uint(page, l.commit_at, l.commit_size).unwrap_or(0);
        let size = (commit & COMMIT_MASK) as usize;
        let data_end = l.data_at + size;
        if data_end > page.len() {
            return err(
                page_offset,
                format!("page commits {size} bytes, more than the page holds"),
            );
        }
        if commit & MISSED_EVENTS != 0 {
            let n = if commit & MISSED_STORED != 0 {
                e.uint(page, data_end, l.commit_size).unwrap_or(1)
            } else {
                1
            };
            self.lost = self.lost.saturating_add(n);
        }
        let mut ts = base;
        let mut pos = l.data_at;
        while pos + 4 <= data_end {
            let w = e.u32(page, pos).unwrap_or(0);
            let (kind, delta) = if e.little {
                (w & 0x1f, u64::from(w >> 5))
            } else {
                (w >> 27, u64::from(w & 0x07ff_ffff))
            };
            let array0 = u64::from(e.u32(page, pos + 4).unwrap_or(0));
            let (len, data) = match kind {
                0 => {
                    // The length (of itself and the data) is in array[0].
                    let len = array0 as usize;
                    if len < 4 {
                        return err(page_offset + pos as u64, "a record of length under 4");
                    }
                    (4 + len, Some((pos + 8, pos + 4 + len)))
                }
                1..=28 => {
                    let n = kind as usize * 4;
                    (4 + n, Some((pos + 4, pos + 4 + n)))
                }
                PADDING => {
                    if delta == 0 {
                        break; // the rest of the page is padding
                    }
                    (4 + array0 as usize, None)
                }
                TIME_EXTEND => {
                    ts = ts.wrapping_add((array0 << 27) | delta);
                    (8, None)
                }
                _ => {
                    debug_assert_eq!(kind, TIME_STAMP);
                    ts = ((array0 << 27) | delta) | (base & TS_MSB);
                    (8, None)
                }
            };
            if pos + len > data_end {
                return err(
                    page_offset + pos as u64,
                    "a record runs past its page's data",
                );
            }
            if let Some((a, b)) = data {
                ts = ts.wrapping_add(delta);
                let rec = page.get(a..b).unwrap_or_default().to_vec();
                let t = i64::try_from(ts).unwrap_or(i64::MAX);
                self.ready.push_back((t, page_offset + pos as u64, rec));
            }
            pos += len;
        }
        self.ts = ts;
        Ok(true)
    }

    /// The time of the next record, loading pages as needed.
    pub(crate) fn peek(&mut self) -> Result<Option<i64>> {
        while self.ready.is_empty() {
            if !self.page()? {
                return Ok(None);
            }
        }
        Ok(self.ready.front().map(|r| r.0))
    }

    /// Takes the record [`peek`](Self::peek) saw.
    pub(crate) fn take(&mut self) -> Option<(i64, u64, Vec<u8>)> {
        self.ready.pop_front()
    }
}
