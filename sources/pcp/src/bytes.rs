//! Reading a record's bytes: every field of every archive file is read
//! through one bounds-checked big-endian cursor (gimli's habit), so a
//! damaged record gives a message naming what was being read, never a
//! panic.

use crate::Stamp;

/// A cursor over `b[..end]`, at `at`.
pub(crate) struct Cursor<'a> {
    b: &'a [u8],
    pub(crate) at: usize,
    end: usize,
}

/// What a read that does not fit says.
pub(crate) type Res<T> = std::result::Result<T, String>;

impl<'a> Cursor<'a> {
    /// A cursor at `at` that reads no further than `end`.
    #[inline]
    pub(crate) fn new(b: &'a [u8], at: usize, end: usize) -> Cursor<'a> {
        Cursor {
            b,
            at,
            end: end.min(b.len()),
        }
    }

    /// Reads no further than `end` (a block inside the record).
    #[inline]
    pub(crate) fn shorten(&mut self, end: usize) {
        self.end = self.end.min(end);
    }

    /// Bytes left before the end.
    #[inline]
    pub(crate) fn left(&self) -> usize {
        self.end.saturating_sub(self.at)
    }

    /// The next `n` bytes.
    pub(crate) fn bytes(&mut self, n: usize, what: &str) -> Res<&'a [u8]> {
        if n > self.left() {
            return Err(format!(
                "{what} of {n} bytes does not fit in the record (offset {})",
                self.at
            ));
        }
        let s = self.b.get(self.at..self.at + n).unwrap_or_default();
        self.at += n;
        Ok(s)
    }

    #[inline]
    fn array<const N: usize>(&mut self, what: &str) -> Res<[u8; N]> {
        // `end` is within `b` (see `new`): one comparison, then the read.
        let whole = if self.end.saturating_sub(self.at) >= N {
            self.b.get(self.at..).and_then(|s| s.first_chunk::<N>())
        } else {
            None
        };
        match whole {
            Some(a) => {
                self.at += N;
                Ok(*a)
            }
            None => Err(self.short(what)),
        }
    }

    /// The message of a read past the end (kept out of the hot path).
    #[cold]
    #[inline(never)]
    fn short(&self, what: &str) -> String {
        format!("record ends inside {what} (offset {})", self.at)
    }

    /// A big-endian u32.
    #[inline]
    pub(crate) fn u32(&mut self, what: &str) -> Res<u32> {
        self.array::<4>(what).map(u32::from_be_bytes)
    }

    /// A big-endian i32.
    #[inline]
    pub(crate) fn i32(&mut self, what: &str) -> Res<i32> {
        self.array::<4>(what).map(i32::from_be_bytes)
    }

    /// A big-endian u64.
    #[inline]
    pub(crate) fn u64(&mut self, what: &str) -> Res<u64> {
        self.array::<8>(what).map(u64::from_be_bytes)
    }

    /// A timestamp: v2 `i32 sec, i32 usec`; v3 `sec low, sec high, nsec`
    /// (fact sheet §3: the low word first).
    pub(crate) fn stamp(&mut self, version: u8) -> Res<Stamp> {
        if version == 2 {
            let sec = self.i32("a timestamp")?;
            let usec = self.i32("a timestamp")?;
            if !(0..1_000_000).contains(&usec) {
                return Err("timestamp out of range".into());
            }
            Ok(Stamp {
                sec: i64::from(sec),
                nsec: usec as u32 * 1000,
            })
        } else {
            let lo = self.u32("a timestamp")?;
            let hi = self.u32("a timestamp")?;
            let nsec = self.u32("a timestamp")?;
            if nsec >= 1_000_000_000 {
                return Err("timestamp out of range".into());
            }
            Ok(Stamp {
                sec: ((u64::from(hi) << 32) | u64::from(lo)) as i64,
                nsec,
            })
        }
    }

    /// A count that must fit in the rest of the record at `each` bytes.
    pub(crate) fn count(&mut self, each: usize, what: &str) -> Res<usize> {
        let n = self.i32(what)?;
        if n < 0 {
            return Err(format!("{what} {n} is negative"));
        }
        let n = n as usize;
        if n.saturating_mul(each) > self.left() {
            return Err(format!("{what} {n} does not fit in the record"));
        }
        Ok(n)
    }

    /// A fixed-size, NUL-padded name field.
    pub(crate) fn name(&mut self, len: usize, what: &str) -> Res<String> {
        let f = self.bytes(len, what)?;
        let end = f.iter().position(|&c| c == 0).unwrap_or(f.len());
        Ok(String::from_utf8_lossy(f.get(..end).unwrap_or_default()).into_owned())
    }

    /// The rest of the record up to its first NUL, as text.
    pub(crate) fn text(&mut self, what: &str) -> Res<String> {
        let rest = self.bytes(self.left(), what)?;
        let end = rest.iter().position(|&x| x == 0).unwrap_or(rest.len());
        Ok(String::from_utf8_lossy(rest.get(..end).unwrap_or_default()).into_owned())
    }
}

/// The u32 length word at the start of a frame.
pub(crate) fn length_word(b: &[u8], at: usize) -> u32 {
    Cursor::new(b, at, at + 4).u32("a length word").unwrap_or(0)
}
