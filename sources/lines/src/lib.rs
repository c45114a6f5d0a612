//! Reading text one line at a time with a bound on the line's length.
//!
//! `BufRead::read_until` grows its buffer until it finds a newline, so a
//! file without one (`/dev/zero`, a binary file under a text option, a
//! 500 MB host name) takes all the memory there is. Every text decoder of
//! integrador reads through [`read_line`] instead: a line longer than the
//! bound is an error at that line, and a last line without its newline is
//! told apart, because a recording cut while it was written ends that way.

use std::io::{self, BufRead, Read};

/// The default bound: no line of a monitoring record comes near it.
pub const MAX_LINE: usize = 1 << 20;

/// How a line ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// With its newline.
    Newline,
    /// At the end of the input, without a newline: possibly cut.
    Eof,
}

/// Reads one line into `buf` (cleared first; the newline is kept when
/// there is one). `Ok(None)` at the end of the input. A line longer than
/// `max` bytes is an [`io::ErrorKind::InvalidData`] error, read no further.
pub fn read_line<R: BufRead + ?Sized>(
    r: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<End>> {
    buf.clear();
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok((!buf.is_empty()).then_some(End::Eof));
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if buf.len() + take > max.saturating_add(1) {
            return Err(too_long(max));
        }
        buf.extend_from_slice(&chunk[..take]);
        r.consume(take);
        if done {
            return Ok(Some(End::Newline));
        }
    }
}

/// What reading a line of text can meet besides the line.
#[derive(Debug)]
pub enum TextError {
    /// Reading failed, or the line is over the bound.
    Read(io::Error),
    /// The line is not UTF-8.
    NotText,
}

/// [`read_line`] into a `String`, keeping its allocation: the line must be
/// UTF-8.
pub fn read_text_line<R: BufRead + ?Sized>(
    r: &mut R,
    buf: &mut String,
    max: usize,
) -> Result<Option<End>, TextError> {
    let mut raw = std::mem::take(buf).into_bytes();
    let end = read_line(r, &mut raw, max).map_err(TextError::Read)?;
    *buf = String::from_utf8(raw).map_err(|_| TextError::NotText)?;
    Ok(end)
}

fn too_long(max: usize) -> io::Error {
    let size = if max >= 1 << 20 && max % (1 << 20) == 0 {
        format!("{} MiB", max >> 20)
    } else {
        format!("{max} bytes")
    };
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("line longer than {size}: not a text file of this format"),
    )
}

/// Reads a whole small text input (a hierarchy, an event map, a nodes
/// file) up to `max` bytes; more is an error rather than a memory hog.
pub fn read_to_string_bounded<R: Read>(r: R, max: u64) -> io::Result<String> {
    let mut text = String::new();
    let n = r.take(max + 1).read_to_string(&mut text)?;
    if n as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {} MiB: not a file of this kind", max >> 20),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_their_ends() {
        let mut r = io::BufReader::with_capacity(3, &b"ab\ncdefg\nlast"[..]);
        let mut b = Vec::new();
        assert_eq!(read_line(&mut r, &mut b, 100).unwrap(), Some(End::Newline));
        assert_eq!(b, b"ab\n");
        assert_eq!(read_line(&mut r, &mut b, 100).unwrap(), Some(End::Newline));
        assert_eq!(b, b"cdefg\n");
        assert_eq!(read_line(&mut r, &mut b, 100).unwrap(), Some(End::Eof));
        assert_eq!(b, b"last");
        assert_eq!(read_line(&mut r, &mut b, 100).unwrap(), None);
    }

    #[test]
    fn a_line_over_the_bound_stops_early() {
        let mut r = io::BufReader::new(io::repeat(0).take(1 << 30));
        let mut b = Vec::new();
        let e = read_line(&mut r, &mut b, 1000).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(b.len() <= 1001 + 8192);
        // Exactly at the bound is fine, newline included.
        let mut r = &b"12345\n"[..];
        assert!(read_line(&mut r, &mut b, 5).is_ok());
        let mut r = &b"123456\n"[..];
        assert!(read_line(&mut r, &mut b, 5).is_err());
    }

    #[test]
    fn bounded_whole_reads() {
        assert_eq!(read_to_string_bounded(&b"abc"[..], 3).unwrap(), "abc");
        assert!(read_to_string_bounded(&b"abcd"[..], 3).is_err());
    }
}
