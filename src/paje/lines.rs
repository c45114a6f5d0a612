//! The Pajé writer's lines, formatted as they are said and written in
//! chunks. The writer decides every line (which declarations come first,
//! which alias each id has, which pops are left out); [`Text`] turns its
//! tokens into digits (times, aliases, values) with the functions of
//! `src/paje/text.rs`. With threads, the whole writer runs on a core of
//! its own (crate::sink::thread), so the bytes are the same either way.

use super::text;
use std::io::{self, Write};

/// Bytes formatted before they are written: a few system calls per
/// megabyte, and the buffer stays in the caches.
const CHUNK: usize = 1 << 18;

/// Lines formatted at once and written in chunks.
pub struct Text<W: Write> {
    buf: Vec<u8>,
    seconds: text::Seconds,
    out: W,
}

impl<W: Write> Text<W> {
    /// Lines for `out`.
    pub fn new(out: W) -> Text<W> {
        Text {
            buf: Vec::with_capacity(CHUNK + 256),
            seconds: text::Seconds::default(),
            out,
        }
    }
}

impl<W: Write> Text<W> {
    /// A line starts with its event id.
    pub fn begin(&mut self, id: u8) {
        text::begin(&mut self.buf, id);
    }
    /// ` <seconds>` with 9 decimals, from ns.
    pub fn time(&mut self, ns: i64) {
        text::time(&mut self.buf, &mut self.seconds, ns);
    }
    /// ` <prefix><n>`: an alias.
    pub fn ident(&mut self, prefix: u8, n: u32) {
        text::ident(&mut self.buf, prefix, n);
    }
    /// ` <bytes>` as they are.
    pub fn word(&mut self, w: &[u8]) {
        text::word(&mut self.buf, w);
    }
    /// ` <name>`, quoted as [`super::name::push_name`] says.
    pub fn name(&mut self, name: &str) {
        text::name(&mut self.buf, name.as_bytes());
    }
    /// ` <n>`.
    pub fn int(&mut self, n: i64) {
        text::int(&mut self.buf, n);
    }
    /// ` k<channel>_<seq>`: a link key.
    pub fn key(&mut self, channel: u32, seq: u64) {
        text::key(&mut self.buf, channel, seq);
    }
    /// ` <value>`: shortest round-trip decimal, without a `.0`.
    pub fn double(&mut self, v: f64) {
        text::double(&mut self.buf, v);
    }
    /// The start of an entity's line, `<id> <time> c<container> t<type>
    /// [v<value>]` (`0` for the root container), at once (most lines
    /// start so).
    pub fn head(&mut self, id: u8, ns: i64, container: Option<u32>, ty: u32, value: Option<u32>) {
        text::head(
            &mut self.buf,
            &mut self.seconds,
            (id, ns),
            container,
            ty,
            value,
        );
    }
    /// Ends the line; writes what is buffered once it is a chunk.
    #[inline(always)]
    pub fn end(&mut self) -> io::Result<()> {
        self.buf.push(b'\n');
        if self.buf.len() >= CHUNK {
            return self.write_chunk();
        }
        Ok(())
    }

    /// Writes the full chunk: once in 256 KiB, out of line so that
    /// [`Text::end`] inlines.
    #[cold]
    #[inline(never)]
    fn write_chunk(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
    /// Writes the rest and gives back the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each token's block holds its longest text.
    #[test]
    fn tokens_at_their_longest() {
        let mut out = Vec::new();
        text::begin(&mut out, u8::MAX);
        text::time(&mut out, &mut text::Seconds::default(), i64::MIN);
        text::ident(&mut out, b'C', u32::MAX);
        for n in [0, 9, 10, 99, 100] {
            text::ident(&mut out, b'V', n);
        }
        text::int(&mut out, i64::MIN);
        text::key(&mut out, u32::MAX, u64::MAX);
        text::double(&mut out, -999_999_999_999_999.0);
        let want = format!(
            "255 -9223372036.854775808 C{} V0 V9 V10 V99 V100 {} k{}_{} -999999999999999",
            u32::MAX,
            i64::MIN,
            u32::MAX,
            u64::MAX
        );
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    fn line<W: Write>(t: &mut Text<W>, i: u32) {
        t.begin(13);
        t.time(i64::from(i) * 1_000_003 - 1_500_000_000);
        t.ident(b'c', i % 17);
        t.double(f64::from(i) / 7.0);
        t.end().unwrap();
        t.begin(16);
        t.time(42);
        t.name(if i.is_multiple_of(2) {
            "OS state"
        } else {
            "a\"b"
        });
        t.word(b"0");
        let w: [&[u8]; 3] = [b"x", b"\"a b\"", b"yz"];
        t.word(w[(i % 3) as usize]);
        t.key(3, u64::from(i));
        t.int(-5);
        t.double(12.0);
        t.end().unwrap();
        let c = (!i.is_multiple_of(3)).then_some(i);
        t.head(
            12,
            i64::from(i) * 999,
            c,
            i % 5,
            i.is_multiple_of(2).then_some(i * 7),
        );
        t.end().unwrap();
    }

    #[test]
    fn tokens_format_as_the_writer_wrote_them() {
        let mut t = Text::new(Vec::new());
        line(&mut t, 0);
        assert_eq!(
            String::from_utf8(t.finish().unwrap()).unwrap(),
            "13 -1.500000000 c0 0\n16 0.000000042 \"OS state\" 0 x k3_0 -5 12\n12 0.000000000 0 t0 v0\n"
        );
        let mut t = Text::new(Vec::new());
        line(&mut t, 101);
        let text = String::from_utf8(t.finish().unwrap()).unwrap();
        assert_eq!(text.lines().nth(2), Some("12 0.000100899 c101 t1"));
    }

    /// What `text::double` wrote before whole numbers and short decimals
    /// took their own paths: ryu's text without its `.0`.
    fn by_ryu(v: f64) -> String {
        let mut r = ryu::Buffer::new();
        let s = r.format(v);
        format!(" {}", s.strip_suffix(".0").unwrap_or(s))
    }

    proptest::proptest! {
        #[test]
        fn whole_numbers_are_written_as_ryu_writes_them(
            n in proptest::num::i64::ANY,
            shift in 0u32..64,
            bits in proptest::num::u64::ANY,
        ) {
            let whole = (n >> shift) as f64;
            let any = f64::from_bits(bits);
            for v in [whole, -whole, any, any.trunc(), 1e15, -1e15, 1e15 - 1.0, 0.0, -0.0] {
                let mut out = Vec::new();
                text::double(&mut out, v);
                proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), by_ryu(v), "{}", v);
            }
        }
    }

    proptest::proptest! {
        /// Times in a row, near one another or not, each as the plain
        /// formatting writes it.
        #[test]
        fn times_in_a_row_are_each_their_own_text(
            base: i64,
            // Across seconds, by a few ns, within a second.
            steps in proptest::collection::vec(
                proptest::prop_oneof![-3_000_000_000i64..3_000_000_000, -1_000i64..1_000, 0..10i64.pow(8)],
                1..30,
            ),
        ) {
            let mut last = text::Seconds::default();
            let mut ns = base / 2;
            for step in steps {
                ns = ns.saturating_add(step);
                let mut out = Vec::new();
                text::time(&mut out, &mut last, ns);
                proptest::prop_assert_eq!(
                    String::from_utf8(out).unwrap(),
                    format!(" {}", crate::time::seconds(ns))
                );
            }
        }
    }

    #[test]
    fn consecutive_times_copy_one_text() {
        let mut last = text::Seconds::default();
        let mut out = Vec::new();
        for ns in [
            5,
            5,
            -1_500_000_000,
            -1_500_000_000,
            5,
            999_999_999,
            1_000_000_000,
            1_000_000_007,
        ] {
            text::time(&mut out, &mut last, ns);
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            " 0.000000005 0.000000005 -1.500000000 -1.500000000 0.000000005 0.999999999 1.000000000 1.000000007"
        );
    }
}
