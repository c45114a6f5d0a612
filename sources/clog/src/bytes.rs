//! Checked reads of fixed-size fields with an explicit byte order.

/// Byte order of a file's numbers (character arrays are never swapped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    /// Most significant byte first (every merged CLOG2 and every old CLOG).
    Big,
    /// Least significant byte first (unmerged per-process CLOG2 on x86).
    Little,
}

/// A cursor over one record's bytes. Callers check the record's length
/// first, so a short read is a bug in the caller's table, reported as
/// `None` instead of a panic.
pub struct Cursor<'a> {
    buf: &'a [u8],
    endian: Endian,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8], endian: Endian) -> Self {
        Cursor { buf, endian }
    }

    pub fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.buf.split_first_chunk::<N>()?;
        self.buf = rest;
        Some(*head)
    }

    pub fn i32(&mut self) -> Option<i32> {
        let b = self.array::<4>()?;
        Some(match self.endian {
            Endian::Big => i32::from_be_bytes(b),
            Endian::Little => i32::from_le_bytes(b),
        })
    }

    pub fn f64(&mut self) -> Option<f64> {
        let b = self.array::<8>()?;
        Some(match self.endian {
            Endian::Big => f64::from_be_bytes(b),
            Endian::Little => f64::from_le_bytes(b),
        })
    }

    /// A NUL-padded character field of `n` bytes, as text up to the first
    /// NUL (invalid UTF-8 replaced).
    pub fn text(&mut self, n: usize) -> Option<String> {
        let field = self.buf.get(..n)?;
        self.buf = self.buf.get(n..)?;
        let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
        Some(String::from_utf8_lossy(field.get(..end)?).into_owned())
    }
}
