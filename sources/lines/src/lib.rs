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

/// Text lines read a chunk at a time: each chunk's whole lines are
/// checked to be UTF-8 at once and lent one by one, with no copy of a
/// line and no check of its own. The lines, their ends and the errors
/// are [`read_text_line`]'s, in the same order: a line with bytes that
/// are not UTF-8, or longer than the bound, is an error at that line,
/// after the lines before it.
pub struct TextLines<R> {
    reader: R,
    /// Whole lines (and a last line without its newline, at the end),
    /// checked; those from `pos` on not yet lent.
    text: String,
    pos: usize,
    /// The line lent last, in `text`.
    last: (usize, usize),
    /// The bytes read after `text`'s last newline.
    tail: Vec<u8>,
    /// What comes once `text` is lent out, when not another chunk.
    stop: Option<Stop>,
    max: usize,
    /// Where `text`'s newlines are: for byte `i`, bit `i % 64` of word
    /// `i / 64`.
    ends: Vec<u64>,
    /// The word of `ends` the next newline is looked for in, and that
    /// word's newlines not yet lent (those before `pos` are cleared).
    word: usize,
    bits: u64,
}

enum Stop {
    End,
    NotText,
    TooLong,
    Read(io::Error),
    /// Given, and reading ended.
    Done,
}

/// Bytes asked of the reader at a time: a `BufReader` of this size or
/// smaller hands them over without copying them into its own buffer.
const CHUNK: usize = 1 << 16;

impl<R: Read> TextLines<R> {
    /// Reads `reader` with lines of at most `max` bytes, as [`read_line`].
    pub fn new(reader: R, max: usize) -> TextLines<R> {
        TextLines {
            reader,
            text: String::new(),
            pos: 0,
            last: (0, 0),
            tail: Vec::new(),
            stop: None,
            max,
            ends: Vec::new(),
            word: 0,
            bits: 0,
        }
    }

    /// The next line (its newline kept when it has one); `Ok(None)` at
    /// the end of the input, and after an error.
    pub fn next_text(&mut self) -> Result<Option<(&str, End)>, TextError> {
        while self.pos >= self.text.len() {
            match self.stop.take() {
                None => self.refill(),
                Some(Stop::End | Stop::Done) => {
                    self.stop = Some(Stop::Done);
                    return Ok(None);
                }
                Some(stop) => {
                    self.stop = Some(Stop::Done);
                    return Err(match stop {
                        Stop::NotText => TextError::NotText,
                        Stop::Read(e) => TextError::Read(e),
                        _ => TextError::Read(too_long(self.max)),
                    });
                }
            }
        }
        // `text` ends with a newline but for a last line without one.
        let (len, end) = match self.next_newline() {
            Some(i) => (i + 1 - self.pos, End::Newline),
            None => (self.text.len() - self.pos, End::Eof),
        };
        if len > self.max.saturating_add(1) {
            self.text.clear();
            self.pos = 0;
            self.stop = Some(Stop::Done);
            return Err(TextError::Read(too_long(self.max)));
        }
        self.last = (self.pos, self.pos + len);
        self.pos += len;
        Ok(Some((self.last(), end)))
    }

    /// The line [`TextLines::next_text`] lent last, again (empty before
    /// the first): a caller that looked at it in a loop takes it out of
    /// the loop this way.
    pub fn last(&self) -> &str {
        self.text.get(self.last.0..self.last.1).unwrap_or_default()
    }

    /// Where the newline that ends the line at `pos` is in `text`, and
    /// marks it used; `None` when no newline is left.
    #[inline]
    fn next_newline(&mut self) -> Option<usize> {
        while self.bits == 0 {
            self.word += 1;
            self.bits = *self.ends.get(self.word)?;
        }
        let i = self.word * 64 + self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(i)
    }

    /// Reads the next chunk and finds its newlines.
    fn refill(&mut self) {
        self.fill();
        newlines(self.text.as_bytes(), &mut self.ends);
        self.word = 0;
        self.bits = self.ends.first().copied().unwrap_or(0);
    }

    /// Reads the next chunk: its whole lines into `text` (all of it at
    /// the end of the input), or what stops the reading into `stop`.
    fn fill(&mut self) {
        // The last chunk's bytes are overwritten, not cleared: only what
        // it lacks is zeroed before a read (zeroing a whole chunk each time
        // cost as much as checking it).
        let mut v = std::mem::take(&mut self.text).into_bytes();
        (self.pos, self.last) = (0, (0, 0));
        let mut len = self.tail.len();
        if v.len() < len {
            v.resize(len, 0);
        }
        v.get_mut(..len)
            .unwrap_or_default()
            .copy_from_slice(&self.tail);
        self.tail.clear();
        let limit = self.max.saturating_add(1);
        loop {
            let from = len;
            if v.len() < from + CHUNK {
                v.resize(from + CHUNK, 0);
            }
            let (got, failed) = match read_full(
                &mut self.reader,
                v.get_mut(from..from + CHUNK).unwrap_or_default(),
            ) {
                Ok(n) => (n, None),
                Err((n, e)) => (n, Some(e)),
            };
            len += got;
            v.truncate(len);
            if let Some(e) = failed {
                // The whole lines read before it come first.
                self.stop = Some(Stop::Read(e));
                let whole = memchr::memrchr(b'\n', &v).map_or(0, |i| i + 1);
                v.truncate(whole);
                break;
            }
            if got < CHUNK {
                // The end: the last line goes too, with or without its
                // newline.
                self.stop = Some(Stop::End);
                break;
            }
            if let Some(i) = memchr::memrchr(b'\n', v.get(from..).unwrap_or_default()) {
                self.tail
                    .extend_from_slice(v.get(from + i + 1..).unwrap_or_default());
                v.truncate(from + i + 1);
                break;
            }
            if v.len() > limit {
                // One line, over the bound already.
                self.stop = Some(Stop::TooLong);
                v.clear();
                break;
            }
        }
        // simdutf8 checks a chunk of ASCII several times faster than
        // `String::from_utf8`, which is kept for the error's position.
        if simdutf8::basic::from_utf8(&v).is_ok() {
            // SAFETY: `v` was just checked to be UTF-8.
            self.text = unsafe { String::from_utf8_unchecked(v) };
            return;
        }
        self.text = match String::from_utf8(v) {
            Ok(t) => t,
            Err(e) => {
                // The lines before the first that is not text, then that
                // error (before any other that stopped the reading).
                let bad = e.utf8_error().valid_up_to();
                let mut v = e.into_bytes();
                let start =
                    memchr::memrchr(b'\n', v.get(..bad).unwrap_or_default()).map_or(0, |i| i + 1);
                v.truncate(start);
                self.stop = Some(Stop::NotText);
                String::from_utf8(v).unwrap_or_default()
            }
        };
    }
}

/// Sets `ends` to where `text`'s newlines are, a bit a byte (bit
/// `i % 64` of word `i / 64`). A chunk's newlines found at once, 16
/// bytes an instruction, then taken one by one from the bits: one
/// `memchr` a line cost more, its call, its set-up and its loop's exit
/// missed by the branch predictor as the lengths change.
fn newlines(text: &[u8], ends: &mut Vec<u64>) {
    #[cfg(target_arch = "x86_64")]
    let wide = std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    let wide = false;
    newlines_with(text, ends, wide);
}

/// [`newlines`], 32 bytes an instruction when `wide` (the processor has
/// AVX2: half the instructions of 16), else 16.
fn newlines_with(text: &[u8], ends: &mut Vec<u64>, wide: bool) {
    ends.clear();
    let blocks = text.chunks_exact(64);
    let rest = blocks.remainder();
    #[cfg(target_arch = "x86_64")]
    if wide {
        // SAFETY: only with AVX2, which the caller found.
        unsafe { blocks_avx2(text, ends) };
    } else {
        ends.extend(blocks.map(|b| b.try_into().map_or(0, block_newlines)));
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = wide;
        ends.extend(blocks.map(|b| b.try_into().map_or(0, block_newlines)));
    }
    if !rest.is_empty() {
        ends.push(memchr::memchr_iter(b'\n', rest).fold(0, |w, i| w | 1 << i));
    }
}

/// The newlines of `text`'s whole 64-byte blocks, with AVX2.
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn blocks_avx2(text: &[u8], ends: &mut Vec<u64>) {
    use std::arch::x86_64::{
        _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_set1_epi8,
    };
    for b in text.chunks_exact(64) {
        // SAFETY: AVX2 is there (the caller's promise); the loads read
        // the two 32-byte halves of `b`, unaligned.
        let (lo, hi) = unsafe {
            let nl = _mm256_set1_epi8(b'\n' as i8);
            let p = b.as_ptr();
            (
                _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256(p.cast()), nl)),
                _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256(p.add(32).cast()), nl)),
            )
        };
        ends.push(u64::from(lo as u32) | u64::from(hi as u32) << 32);
    }
}

/// The newlines of 64 bytes, a bit a byte.
#[cfg(target_arch = "x86_64")]
#[inline]
fn block_newlines(block: &[u8; 64]) -> u64 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    let mut m = 0;
    for (k, q) in block.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is part of every x86_64; the load reads the 16
        // bytes of `q`, unaligned.
        let found = unsafe {
            _mm_movemask_epi8(_mm_cmpeq_epi8(
                _mm_loadu_si128(q.as_ptr().cast()),
                _mm_set1_epi8(b'\n' as i8),
            ))
        };
        m |= u64::from(found as u16) << (16 * k);
    }
    m
}

/// The newlines of 64 bytes, a bit a byte.
#[cfg(not(target_arch = "x86_64"))]
fn block_newlines(block: &[u8; 64]) -> u64 {
    memchr::memchr_iter(b'\n', block).fold(0, |w, i| w | 1 << i)
}

/// Fills `buf` from `r`, short only at the end of the input: the count,
/// or an error and the count before it.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> Result<usize, (usize, io::Error)> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(buf.get_mut(got..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((got, e)),
        }
    }
    Ok(got)
}

fn too_long(max: usize) -> io::Error {
    let size = if max >= 1 << 20 && max.is_multiple_of(1 << 20) {
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

    /// Whatever the reads' sizes, the lines of a [`TextLines`] are
    /// read_text_line's, with the same ends and the same error at the
    /// same line: over-long lines, bytes that are not UTF-8 (in the
    /// last line too), a last line without its newline, lines longer
    /// than a chunk.
    #[test]
    fn text_lines_are_read_text_lines() {
        let long = [b"x".repeat(3 * CHUNK), b"\nend\n".to_vec()].concat();
        let many: Vec<u8> = (0..5000)
            .flat_map(|i| format!("line {i} {}\n", "y".repeat(i % 97)).into_bytes())
            .collect();
        let inputs: Vec<(Vec<u8>, usize)> = vec![
            (b"ab\ncdefg\nlast".to_vec(), 12),
            (b"\n\n\nx\n".to_vec(), 12),
            (b"".to_vec(), 12),
            (b"short\nthis one is over the bound\nafter\n".to_vec(), 12),
            (b"ok\n\xff\xfe not text\nok\n".to_vec(), 12),
            (b"ok\nlast \xff".to_vec(), 12),
            (b"caf\xc3\xa9\n\xc3".to_vec(), 12),
            (long.clone(), 4 * CHUNK),
            (long, CHUNK),
            (many.clone(), 200),
            ([&many[..], b"\xff\n"].concat(), 200),
        ];
        for (input, max) in inputs {
            // The reader fails after this many bytes (`usize::MAX`: never).
            let fails = [usize::MAX, input.len() / 2, input.len().saturating_sub(1)];
            for (piece, fail) in [1, 7, 4096, CHUNK, 3 * CHUNK]
                .into_iter()
                .flat_map(|p| fails.map(|f| (p, f)))
            {
                let mut want = Vec::new();
                let mut r = io::BufReader::with_capacity(64, Pieces(&input, piece, fail));
                let mut b = String::new();
                loop {
                    match read_text_line(&mut r, &mut b, max) {
                        Ok(Some(end)) => want.push(Ok((b.clone(), end))),
                        Ok(None) => break,
                        Err(e) => {
                            want.push(Err(format!("{e:?}").split('(').next().unwrap().to_string()));
                            break;
                        }
                    }
                }
                let mut got = Vec::new();
                let mut lines = TextLines::new(Pieces(&input, piece, fail), max);
                loop {
                    match lines.next_text() {
                        Ok(Some((l, end))) => {
                            let l = l.to_string();
                            assert_eq!(lines.last(), l);
                            got.push(Ok((l, end)));
                        }
                        Ok(None) => break,
                        Err(e) => {
                            got.push(Err(format!("{e:?}").split('(').next().unwrap().to_string()));
                            assert!(matches!(lines.next_text(), Ok(None)));
                            break;
                        }
                    }
                }
                assert_eq!(
                    got.len(),
                    want.len(),
                    "{} bytes in pieces of {piece}",
                    input.len()
                );
                assert_eq!(got, want, "{} bytes in pieces of {piece}", input.len());
            }
        }
    }

    /// A reader that gives at most `.1` bytes a read, and fails once it
    /// has given `.2`.
    struct Pieces<'a>(&'a [u8], usize, usize);

    impl Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.2 == 0 {
                return Err(io::Error::other("failed"));
            }
            let n = buf.len().min(self.1).min(self.0.len()).min(self.2);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            self.2 -= n;
            Ok(n)
        }
    }

    proptest::proptest! {
        /// The newlines found 64 bytes at a time are memchr's, wherever
        /// they fall against the blocks and whatever is left after the
        /// last whole block.
        #[test]
        fn newlines_are_memchrs(
            text in proptest::collection::vec(
                proptest::prop_oneof![Just(b'\n'), Just(b'a'), Just(0x8a_u8), proptest::num::u8::ANY],
                0..400,
            )
        ) {
            let want: Vec<usize> = memchr::memchr_iter(b'\n', &text).collect();
            #[cfg(target_arch = "x86_64")]
            let ways = if std::arch::is_x86_feature_detected!("avx2") { vec![false, true] } else { vec![false] };
            #[cfg(not(target_arch = "x86_64"))]
            let ways = vec![false];
            for wide in ways {
                let mut ends = Vec::new();
                newlines_with(&text, &mut ends, wide);
                proptest::prop_assert_eq!(ends.len(), text.len().div_ceil(64));
                let found: Vec<usize> = ends
                    .iter()
                    .enumerate()
                    .flat_map(|(w, &bits)| (0..64).filter(move |b| bits >> b & 1 == 1).map(move |b| w * 64 + b))
                    .collect();
                proptest::prop_assert_eq!(&found, &want, "wide: {}", wide);
            }
        }

        /// Lines of every length, lent from chunks in pieces of any size,
        /// are read_text_line's.
        #[test]
        fn any_lines_are_read_text_lines(
            lens in proptest::collection::vec(0usize..200, 0..60),
            last in proptest::bool::ANY,
            piece in 1usize..300,
        ) {
            let mut input = Vec::new();
            for (i, n) in lens.iter().enumerate() {
                input.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, *n));
                input.push(b'\n');
            }
            if last {
                input.extend_from_slice(b"no newline");
            }
            let mut want = Vec::new();
            let mut r = io::BufReader::with_capacity(64, &input[..]);
            let mut b = String::new();
            while let Some(end) = read_text_line(&mut r, &mut b, 150).map_err(|e| format!("{e:?}")).unwrap_or(None) {
                want.push((b.clone(), end));
            }
            let mut got = Vec::new();
            let mut lines = TextLines::new(Pieces(&input, piece, usize::MAX), 150);
            while let Ok(Some((l, end))) = lines.next_text() {
                got.push((l.to_string(), end));
            }
            proptest::prop_assert_eq!(got, want);
        }
    }

    use proptest::strategy::Just;

    #[test]
    fn bounded_whole_reads() {
        assert_eq!(read_to_string_bounded(&b"abc"[..], 3).unwrap(), "abc");
        assert!(read_to_string_bounded(&b"abcd"[..], 3).is_err());
    }
}
