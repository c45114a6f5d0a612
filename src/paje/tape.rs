//! The Pajé writer's lines as a tape of binary tokens, turned into text
//! on a second core (`issue 17`: decoding and converting on one side,
//! formatting and writing on the other).
//!
//! The writer decides every line (which declarations come first, which
//! alias each id has, which pops are left out) on the main thread, where
//! the registry is; what costs per event is turning numbers into digits
//! (times, aliases, values) and the `write` system calls. When the
//! writer has a core of its own (crate::prefetch::writer_thread) it
//! records each line as tokens, a few fixed-size copies ([`Taped`]), and
//! [`format()`] makes the text on a thread of its own; otherwise, and with
//! `--threads 1`, [`Text`] formats at once. Both write each token with
//! the same functions (`src/paje/text.rs`), so the bytes are the same
//! whichever thread formats them.

use super::text;
use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Tape bytes per chunk handed on: large enough that the channel, and
/// waking the formatting thread, cost nothing per line (256 KiB against
/// 64 KiB: 100 MB of PCP 0.39 -> 0.37 s, CLOG2 the same; 1.4 MiB more
/// memory), small enough to stay in the caches.
const CHUNK: usize = 1 << 18;
/// Chunks in flight between the writer and the formatting thread.
const DEPTH: usize = 4;

const BEGIN: u8 = 0;
const TIME: u8 = 1;
const IDENT: u8 = 2;
const WORD: u8 = 3;
const NAME: u8 = 4;
const INT: u8 = 5;
const KEY: u8 = 6;
const DOUBLE: u8 = 7;
const END: u8 = 8;
const HEAD: u8 = 9;
/// A word's bytes, the first time its id is written ([`Lines::word_id`]).
const WORD_DEF: u8 = 10;
/// A word by its id, its bytes sent before.
const WORD_ID: u8 = 11;
/// [`HEAD`] flags: the container is the root (written `0`); a value
/// alias follows the type's.
const ROOT: u8 = 1;
const VALUE: u8 = 2;

/// What the writer says of each line, token by token: recorded on a
/// [`Tape`] for another thread, or formatted at once as [`Text`].
pub trait Lines {
    /// What is left when the trace is written.
    type Out;
    /// A line starts with its event id.
    fn begin(&mut self, id: u8);
    /// ` <seconds>` with 9 decimals, from ns.
    fn time(&mut self, ns: i64);
    /// ` <prefix><n>`: an alias.
    fn ident(&mut self, prefix: u8, n: u32);
    /// ` <bytes>` as they are.
    fn word(&mut self, w: &[u8]);
    /// [`Lines::word`] of bytes that are the same every time for `id`
    /// (a value's quoted name, on every message line): a tape sends
    /// them once, then the id.
    fn word_id(&mut self, id: u32, w: &[u8]);
    /// ` <name>`, quoted as [`super::name::push_name`] says.
    fn name(&mut self, name: &str);
    /// ` <n>`.
    fn int(&mut self, n: i64);
    /// ` k<channel>_<seq>`: a link key.
    fn key(&mut self, channel: u32, seq: u64);
    /// ` <value>`: shortest round-trip decimal, without a `.0`.
    fn double(&mut self, v: f64);
    /// The start of an entity's line, `<id> <time> c<container> t<type>
    /// [v<value>]` (`0` for the root container), as the five calls write
    /// it: one token on a tape instead of five (most lines start so).
    fn head(&mut self, id: u8, ns: i64, container: Option<u32>, ty: u32, value: Option<u32>);
    /// Ends the line; hands on what is buffered once it is a chunk.
    fn end(&mut self) -> io::Result<()>;
    /// Hands on the rest and gives back the output.
    fn finish(self) -> io::Result<Self::Out>;
}

/// Lines formatted at once and written in chunks, on the caller's thread.
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

impl<W: Write> Lines for Text<W> {
    type Out = W;
    fn begin(&mut self, id: u8) {
        text::begin(&mut self.buf, id);
    }
    fn time(&mut self, ns: i64) {
        text::time(&mut self.buf, &mut self.seconds, ns);
    }
    fn ident(&mut self, prefix: u8, n: u32) {
        text::ident(&mut self.buf, prefix, n);
    }
    fn word(&mut self, w: &[u8]) {
        text::word(&mut self.buf, w);
    }
    fn word_id(&mut self, _id: u32, w: &[u8]) {
        text::word(&mut self.buf, w);
    }
    fn name(&mut self, name: &str) {
        text::name(&mut self.buf, name.as_bytes());
    }
    fn int(&mut self, n: i64) {
        text::int(&mut self.buf, n);
    }
    fn key(&mut self, channel: u32, seq: u64) {
        text::key(&mut self.buf, channel, seq);
    }
    fn double(&mut self, v: f64) {
        text::double(&mut self.buf, v);
    }
    fn head(&mut self, id: u8, ns: i64, container: Option<u32>, ty: u32, value: Option<u32>) {
        text::head(
            &mut self.buf,
            &mut self.seconds,
            (id, ns),
            container,
            ty,
            value,
        );
    }
    fn end(&mut self) -> io::Result<()> {
        self.buf.push(b'\n');
        if self.buf.len() >= CHUNK {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
    fn finish(mut self) -> io::Result<W> {
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Lines recorded as tokens.
#[derive(Default)]
pub struct Tape {
    buf: Vec<u8>,
    /// The word ids whose bytes are on the tape already.
    sent: Vec<bool>,
}

impl Tape {
    fn begin(&mut self, id: u8) {
        self.buf.extend_from_slice(&[BEGIN, id]);
    }

    // Each token is one copy of fixed size: one capacity check a token.
    fn time(&mut self, ns: i64) {
        let [a, b, c, d, e, f, g, h] = ns.to_le_bytes();
        self.buf.extend_from_slice(&[TIME, a, b, c, d, e, f, g, h]);
    }

    fn ident(&mut self, prefix: u8, n: u32) {
        let [a, b, c, d] = n.to_le_bytes();
        self.buf.extend_from_slice(&[IDENT, prefix, a, b, c, d]);
    }

    fn bytes(&mut self, tag: u8, b: &[u8]) {
        // A name longer than u32 cannot come from a bounded input line.
        let n = u32::try_from(b.len()).unwrap_or(u32::MAX);
        self.buf.push(tag);
        self.buf.extend_from_slice(&n.to_le_bytes());
        self.buf.extend_from_slice(b.get(..n as usize).unwrap_or(b));
    }

    fn int(&mut self, n: i64) {
        let [a, b, c, d, e, f, g, h] = n.to_le_bytes();
        self.buf.extend_from_slice(&[INT, a, b, c, d, e, f, g, h]);
    }

    fn word_id(&mut self, id: u32, w: &[u8]) {
        let i = id as usize;
        if self.sent.get(i) == Some(&true) {
            let [a, b, c, d] = id.to_le_bytes();
            self.buf.extend_from_slice(&[WORD_ID, a, b, c, d]);
            return;
        }
        if self.sent.len() <= i {
            self.sent.resize(i + 1, false);
        }
        if let Some(s) = self.sent.get_mut(i) {
            *s = true;
        }
        self.buf.push(WORD_DEF);
        self.buf.extend_from_slice(&id.to_le_bytes());
        self.bytes(WORD, w);
    }

    fn key(&mut self, channel: u32, seq: u64) {
        self.buf.push(KEY);
        self.buf.extend_from_slice(&channel.to_le_bytes());
        self.buf.extend_from_slice(&seq.to_le_bytes());
    }

    fn double(&mut self, v: f64) {
        let [a, b, c, d, e, f, g, h] = v.to_le_bytes();
        self.buf
            .extend_from_slice(&[DOUBLE, a, b, c, d, e, f, g, h]);
    }

    fn head(&mut self, id: u8, ns: i64, container: Option<u32>, ty: u32, value: Option<u32>) {
        let flags =
            if container.is_none() { ROOT } else { 0 } | if value.is_some() { VALUE } else { 0 };
        let [n0, n1, n2, n3, n4, n5, n6, n7] = ns.to_le_bytes();
        let [c0, c1, c2, c3] = container.unwrap_or(0).to_le_bytes();
        let [t0, t1, t2, t3] = ty.to_le_bytes();
        let [v0, v1, v2, v3] = value.unwrap_or(0).to_le_bytes();
        self.buf.extend_from_slice(&[
            HEAD, id, flags, n0, n1, n2, n3, n4, n5, n6, n7, c0, c1, c2, c3, t0, t1, t2, t3, v0,
            v1, v2, v3,
        ]);
    }
}

/// Reads tokens back.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }

    fn slice(&mut self) -> Option<&'a [u8]> {
        let n = u32::from_le_bytes(self.take()?) as usize;
        let (s, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(s)
    }
}

/// What formatting keeps from one chunk of a tape to the next.
#[derive(Default)]
pub struct Held {
    seconds: text::Seconds,
    /// The bytes of each word id ([`WORD_DEF`]).
    words: Vec<Vec<u8>>,
}

/// Appends the text of `tape` to `out`. The tape is the writer's own, so
/// it is well formed; were it not, formatting would stop, not panic.
pub fn format(tape: &[u8], out: &mut Vec<u8>, held: &mut Held) {
    let Held { seconds, words } = held;
    let mut c = Cursor(tape);
    while let Some([tag]) = c.take::<1>() {
        let done = (|| -> Option<()> {
            match tag {
                BEGIN => text::begin(out, c.take::<1>()?[0]),
                TIME => text::time(out, seconds, i64::from_le_bytes(c.take()?)),
                IDENT => {
                    let [prefix] = c.take::<1>()?;
                    text::ident(out, prefix, u32::from_le_bytes(c.take()?));
                }
                WORD => text::word(out, c.slice()?),
                WORD_DEF => {
                    let i = u32::from_le_bytes(c.take()?) as usize;
                    let [WORD] = c.take::<1>()? else { return None };
                    let w = c.slice()?;
                    if words.len() <= i {
                        words.resize(i + 1, Vec::new());
                    }
                    *words.get_mut(i)? = w.to_vec();
                    text::word(out, w);
                }
                WORD_ID => {
                    let i = u32::from_le_bytes(c.take()?) as usize;
                    text::word(out, words.get(i)?);
                }
                NAME => text::name(out, c.slice()?),
                INT => text::int(out, i64::from_le_bytes(c.take()?)),
                KEY => {
                    let channel = u32::from_le_bytes(c.take()?);
                    text::key(out, channel, u64::from_le_bytes(c.take()?));
                }
                DOUBLE => text::double(out, f64::from_le_bytes(c.take()?)),
                END => out.push(b'\n'),
                HEAD => {
                    let [id, flags] = c.take::<2>()?;
                    let ns = i64::from_le_bytes(c.take()?);
                    let cont = u32::from_le_bytes(c.take()?);
                    let ty = u32::from_le_bytes(c.take()?);
                    let value = u32::from_le_bytes(c.take()?);
                    let cont = (flags & ROOT == 0).then_some(cont);
                    let value = (flags & VALUE != 0).then_some(value);
                    text::head(out, seconds, (id, ns), cont, ty, value);
                }
                _ => return None,
            }
            Some(())
        })();
        if done.is_none() {
            return;
        }
    }
}

/// Lines recorded on a tape and formatted and written by a thread of
/// their own; chunks go there and come back empty.
pub struct Taped<W: Write> {
    tape: Tape,
    /// Chunks to format.
    tx: Option<SyncSender<Vec<u8>>>,
    /// Chunks formatted, to fill again.
    back: Receiver<Vec<u8>>,
    /// Gives back the output, or the error that stopped it.
    done: Option<JoinHandle<io::Result<W>>>,
}

impl<W: Write + Send + 'static> Taped<W> {
    /// Starts the thread that writes to `out`.
    pub fn new(mut out: W) -> Taped<W> {
        let (tx, rx) = sync_channel::<Vec<u8>>(DEPTH);
        let (give, back) = sync_channel::<Vec<u8>>(DEPTH + 2);
        let done = std::thread::spawn(move || -> io::Result<W> {
            let mut text = Vec::with_capacity(CHUNK * 2);
            let mut held = Held::default();
            for mut tape in rx {
                format(&tape, &mut text, &mut held);
                out.write_all(&text)?;
                text.clear();
                tape.clear();
                let _ = give.try_send(tape);
            }
            out.flush()?;
            Ok(out)
        });
        Taped {
            tape: Tape::default(),
            tx: Some(tx),
            back,
            done: Some(done),
        }
    }
}

impl<W: Write> Taped<W> {
    /// Hands the tape to the thread.
    fn hand(&mut self) -> io::Result<()> {
        let fresh = self
            .back
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(CHUNK + 256));
        let full = std::mem::replace(&mut self.tape.buf, fresh);
        match self.tx.as_ref().map(|tx| tx.send(full)) {
            Some(Ok(())) => Ok(()),
            // The thread stopped: its error says why.
            _ => Err(self
                .stop()
                .err()
                .unwrap_or_else(|| io::Error::other("the formatting thread ended early"))),
        }
    }

    /// Closes the channel and waits for the thread.
    fn stop(&mut self) -> io::Result<W> {
        drop(self.tx.take());
        match self.done.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(io::Error::other("the formatting thread panicked")),
            None => Err(io::Error::other("the formatting thread ended early")),
        }
    }
}

/// A writer dropped on an error still waits for its thread: the output
/// it holds (a temporary file) must be gone before the run ends.
impl<W: Write> Drop for Taped<W> {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(done) = self.done.take() {
            let _ = done.join();
        }
    }
}

impl<W: Write> Lines for Taped<W> {
    type Out = W;
    fn begin(&mut self, id: u8) {
        self.tape.begin(id);
    }
    fn time(&mut self, ns: i64) {
        self.tape.time(ns);
    }
    fn ident(&mut self, prefix: u8, n: u32) {
        self.tape.ident(prefix, n);
    }
    fn word(&mut self, w: &[u8]) {
        self.tape.bytes(WORD, w);
    }
    fn word_id(&mut self, id: u32, w: &[u8]) {
        self.tape.word_id(id, w);
    }
    fn name(&mut self, name: &str) {
        self.tape.bytes(NAME, name.as_bytes());
    }
    fn int(&mut self, n: i64) {
        self.tape.int(n);
    }
    fn key(&mut self, channel: u32, seq: u64) {
        self.tape.key(channel, seq);
    }
    fn double(&mut self, v: f64) {
        self.tape.double(v);
    }
    fn head(&mut self, id: u8, ns: i64, container: Option<u32>, ty: u32, value: Option<u32>) {
        self.tape.head(id, ns, container, ty, value);
    }
    fn end(&mut self) -> io::Result<()> {
        self.tape.buf.push(END);
        if self.tape.buf.len() >= CHUNK {
            self.hand()?;
        }
        Ok(())
    }
    fn finish(mut self) -> io::Result<W> {
        self.hand()?;
        self.stop()
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

    fn line<L: Lines>(t: &mut L, i: u32) {
        t.begin(13);
        t.time(i64::from(i) * 1_000_003 - 1_500_000_000);
        t.ident(b'c', i % 17);
        t.double(f64::from(i) / 7.0);
        t.end().unwrap();
        t.begin(16);
        t.time(42);
        t.name(if i % 2 == 0 { "OS state" } else { "a\"b" });
        t.word(b"0");
        // The same bytes for an id every time; ids met in any order.
        let w: [&[u8]; 3] = [b"x", b"\"a b\"", b"yz"];
        t.word_id(i % 3 * 5, w[(i % 3) as usize]);
        t.key(3, u64::from(i));
        t.int(-5);
        t.double(12.0);
        t.end().unwrap();
        let c = (i % 3 != 0).then_some(i);
        t.head(
            12,
            i64::from(i) * 999,
            c,
            i % 5,
            (i % 2 == 0).then_some(i * 7),
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

    #[test]
    fn a_cut_tape_stops_without_a_panic() {
        let mut t = Tape::default();
        t.begin(1);
        t.time(5);
        t.bytes(NAME, b"abc");
        t.word_id(7, b"w");
        t.buf.push(END);
        t.head(2, 6, Some(300), 4, Some(5));
        t.word_id(7, b"w");
        t.buf.push(END);
        let whole = "1 0.000000005 abc w\n2 0.000000006 c300 t4 v5 w\n";
        for n in 0..=t.buf.len() {
            let mut out = Vec::new();
            format(&t.buf[..n], &mut out, &mut Held::default());
            assert!(whole.as_bytes().starts_with(&out));
            assert_eq!(out.len() == whole.len(), n == t.buf.len());
        }
    }

    #[test]
    fn the_thread_writes_what_inline_writes() {
        let mut text = Text::new(Vec::new());
        let mut taped = Taped::new(Vec::new());
        for i in 0..50_000u32 {
            line(&mut text, i);
            line(&mut taped, i);
        }
        let (a, b) = (text.finish().unwrap(), taped.finish().unwrap());
        assert!(a.len() > 4 * CHUNK);
        assert!(a == b, "the formatting thread wrote other bytes");
    }
}
