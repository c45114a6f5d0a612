//! A record's integer values, read straight from the reader's buffer
//! into a block of fixed size: for readers that look at integers only
//! (event maps), without the [`Record`]'s arrays to fill and copy out.

use super::*;

/// Integer values an [`IntRecord`] holds in place.
const INLINE: usize = 4;

/// The integer values of one event record (its doubles, floats and
/// strings are read past). Up to 4 values (one header's) are held in place; a record
/// with more is kept whole.
#[derive(Debug, Default)]
pub struct IntRecord {
    /// Offset of the record's header in the file.
    pub offset: u64,
    /// Event type (14 bits).
    pub ty: u16,
    /// Time in ns since the epoch, as [`Record::time_ns`].
    pub time_ns: i64,
    /// The `i` values, then the `l`, `w` and `c` ones; `ends[t]` is
    /// where the values of the `t`-th of those types end.
    vals: [u64; INLINE],
    ends: [u8; 4],
    /// A record with more integers than fit, whole (its box is kept for
    /// the next one).
    big: Option<Box<Record>>,
    is_big: bool,
}

impl Clone for IntRecord {
    fn clone(&self) -> IntRecord {
        let mut r = IntRecord::default();
        r.clone_from(self);
        r
    }

    /// A copy of fixed size, but for a whole record, whose box is kept.
    #[inline]
    fn clone_from(&mut self, src: &IntRecord) {
        self.offset = src.offset;
        self.ty = src.ty;
        self.time_ns = src.time_ns;
        self.vals = src.vals;
        self.ends = src.ends;
        self.is_big = src.is_big;
        if let (true, Some(b)) = (src.is_big, &src.big) {
            match &mut self.big {
                Some(mine) => mine.clone_from(b),
                None => self.big = Some(b.clone()),
            }
        }
    }
}

impl IntRecord {
    /// The `k`-th value of integer type `t` (`None` for other types).
    #[inline]
    pub fn int(&self, t: FieldType, k: usize) -> Option<u64> {
        if self.is_big {
            return self.big.as_ref()?.int(t, k);
        }
        let e = self.ends;
        let (lo, hi) = match t {
            FieldType::U32 => (0, e[0]),
            FieldType::U64 => (e[0], e[1]),
            FieldType::U16 => (e[1], e[2]),
            FieldType::U8 => (e[2], e[3]),
            _ => return None,
        };
        let i = usize::from(lo) + k;
        if i < usize::from(hi) {
            self.vals.get(i).copied()
        } else {
            None
        }
    }

    /// Takes `rec`'s integers.
    pub fn fill(&mut self, rec: &Record) {
        self.offset = rec.offset;
        self.ty = rec.ty;
        self.time_ns = rec.time_ns;
        let n = rec.u32s.len() + rec.u64s.len() + rec.u16s.len() + rec.u8s.len();
        self.is_big = n > INLINE;
        if self.is_big {
            match &mut self.big {
                Some(b) => (**b).clone_from(rec),
                None => self.big = Some(Box::new(rec.clone())),
            }
            return;
        }
        // Loops per type, no chained iterator: most records have none or
        // one value, and the chain's set-up was most of this copy.
        let vals = &mut self.vals;
        let mut k = 0usize;
        let mut put = |v: u64| {
            if let Some(slot) = vals.get_mut(k) {
                *slot = v;
            }
            k += 1;
        };
        rec.u32s.iter().for_each(|&v| put(u64::from(v)));
        let e0 = rec.u32s.len();
        rec.u64s.iter().for_each(|&v| put(v));
        let e1 = e0 + rec.u64s.len();
        rec.u16s.iter().for_each(|&v| put(u64::from(v)));
        let e2 = e1 + rec.u16s.len();
        rec.u8s.iter().for_each(|&v| put(u64::from(v)));
        // At most INLINE values: each end fits a byte.
        self.ends = [e0 as u8, e1 as u8, e2 as u8, n as u8];
    }
}

/// [`simple`] into an [`IntRecord`]: its length, or `None` (`rec` then
/// holds anything) for a record the general path reads: STOP and INIT
/// records too, which end the file or are wrong there.
#[inline]
fn simple_ints(
    avail: &[u8],
    init: &Init,
    clock: &Clock,
    strings: bool,
    offset: u64,
    rec: &mut IntRecord,
) -> Option<usize> {
    let e = init.endian;
    // At most four values (one header's nibbles), each with its group
    // (u32, u64, u16, u8), then put in that order.
    let mut met = [(0usize, 0u64); 4];
    let mut n = 0usize;
    let mut count = [0usize; 4];
    let head = simple_with(avail, init, clock, strings, |t, v| {
        let (g, x) = match t {
            FieldType::U32 => (0, u64::from(e.u32(word(v)))),
            FieldType::U64 => (1, e.u64(word(v))),
            FieldType::U16 => (2, u64::from(e.u16(word(v)))),
            FieldType::U8 => (3, u64::from(v.first().copied().unwrap_or(0))),
            _ => return,
        };
        if let (Some(slot), Some(c)) = (met.get_mut(n), count.get_mut(g)) {
            *slot = (g, x);
            *c += 1;
            n += 1;
        }
    })?;
    if head.ty == STOP || head.ty == INIT {
        return None;
    }
    rec.offset = offset;
    rec.ty = head.ty;
    rec.time_ns = head.time_ns;
    rec.is_big = false;
    let [c0, c1, c2, _] = count;
    let mut at = [0, c0, c0 + c1, c0 + c1 + c2];
    for &(g, x) in met.iter().take(n) {
        if let Some(k) = at.get_mut(g) {
            if let Some(slot) = rec.vals.get_mut(*k) {
                *slot = x;
            }
            *k += 1;
        }
    }
    // At most four values: each end fits a byte.
    rec.ends = [c0 as u8, (c0 + c1) as u8, (c0 + c1 + c2) as u8, n as u8];
    Some(head.end)
}

/// Where the integers of a record lie, by its header's field nibbles:
/// worked out once per nibble pattern, not once per record (walking the
/// nibbles was most of reading a record). Strings after the last number
/// (DECK's records end with one) are read past by length; a pattern with
/// a number after a string, or a bad nibble, is left to [`simple_ints`].
#[derive(Debug, Clone, Copy, Default)]
struct Shape {
    /// The pattern + 1 (0: no shape here yet).
    key: u32,
    /// Whether the pattern has a shape (else [`simple_ints`] reads it).
    ok: bool,
    /// Where the fixed-size values end (not aligned).
    fixed: u16,
    /// Strings after them.
    strings: u8,
    /// Integers, and where each type's end in [`IntRecord::vals`] order.
    n: u8,
    ends: [u8; 4],
    /// Each integer in [`IntRecord::vals`] order: its offset in the
    /// record and its group (0 u32, 1 u64, 2 u16, 3 u8).
    at: [(u16, u8); 4],
}

/// Shapes met in a file, by a hash of their pattern (a file has a few
/// dozen event types at most).
#[derive(Debug, Clone, Default)]
pub(crate) struct Shapes([Shape; 32]);

impl Shapes {
    /// The shape of `pattern` (a header's low 16 bits) in a record whose
    /// values start at `head`; `None` when it has none.
    #[inline]
    fn get(&mut self, pattern: u32, head: usize) -> Option<&Shape> {
        let h = (pattern ^ (pattern >> 5) ^ (pattern >> 10)) as usize & 31;
        let slot = self.0.get_mut(h)?;
        if slot.key != pattern + 1 {
            *slot = shape_of(pattern, head);
        }
        Some(&*slot).filter(|s| s.ok)
    }
}

/// [`Shapes::get`] worked out.
fn shape_of(pattern: u32, head: usize) -> Shape {
    let none = Shape {
        key: pattern + 1,
        ..Shape::default()
    };
    let mut met = [(0u16, 0u8); 4];
    let mut count = [0u8; 4];
    let mut n = 0usize;
    let mut pos = head;
    let mut strings = 0u8;
    let mut left = pattern & 0xffff;
    while left != 0 {
        let Some(t) = FieldType::from_nibble((left >> 12) & 0xf) else {
            return none;
        };
        left = (left << 4) & 0xffff;
        let Some(size) = t.size() else {
            strings += 1;
            continue;
        };
        if strings > 0 {
            return none;
        }
        let g = match t {
            FieldType::U32 => Some(0u8),
            FieldType::U64 => Some(1),
            FieldType::U16 => Some(2),
            FieldType::U8 => Some(3),
            _ => None,
        };
        if let Some(g) = g {
            if let (Some(m), Some(c)) = (met.get_mut(n), count.get_mut(usize::from(g))) {
                *m = (pos as u16, g);
                *c += 1;
                n += 1;
            }
        }
        pos += size;
    }
    let [c0, c1, c2, _] = count;
    let mut next = [0, c0, c0 + c1, c0 + c1 + c2];
    let mut at = [(0u16, 0u8); 4];
    for &(off, g) in met.iter().take(n) {
        if let Some(k) = next.get_mut(usize::from(g)) {
            if let Some(a) = at.get_mut(usize::from(*k)) {
                *a = (off, g);
            }
            *k += 1;
        }
    }
    Shape {
        key: pattern + 1,
        ok: true,
        fixed: pos as u16,
        strings,
        n: n as u8,
        ends: [c0, c0 + c1, c0 + c1 + c2, n as u8],
        at,
    }
}

/// A record's type, time, shape and length, when it is read straight
/// from the buffer by shape: one header, no new time base, strings only
/// when read past (`strings` false), whole in `avail`, not STOP or INIT.
/// `None`: [`simple_ints`] decides.
#[inline(always)]
fn shaped<'s>(
    avail: &[u8],
    init: &Init,
    clock: &Clock,
    strings: bool,
    shapes: &'s mut Shapes,
) -> Option<(u16, i64, &'s Shape, usize)> {
    let (header, head, ticks) = simple_head(avail, init)?;
    let shape = shapes.get(header & 0xffff, head)?;
    let end = match shape.strings {
        0 => align4(usize::from(shape.fixed)),
        _ if strings => return None,
        n => past_strings(avail, usize::from(shape.fixed), n)?,
    };
    let ty = (header >> 18) as u16;
    if avail.len() < end || ty == STOP || ty == INIT {
        return None;
    }
    Some((ty, clock.ns(u128::from(ticks))?, shape, end))
}

/// Where `n` strings from `pos` end ([`past_string`]).
#[inline(never)]
fn past_strings(avail: &[u8], mut pos: usize, n: u8) -> Option<usize> {
    for _ in 0..n {
        pos = past_string(avail, pos)?;
    }
    Some(pos)
}

/// [`simple_ints`] by shape ([`shaped`]); `None` for a record it leaves
/// to [`simple_ints`].
#[inline(always)]
fn shaped_ints(
    avail: &[u8],
    init: &Init,
    clock: &Clock,
    strings: bool,
    shapes: &mut Shapes,
    offset: u64,
    rec: &mut IntRecord,
) -> Option<usize> {
    let (ty, time_ns, shape, end) = shaped(avail, init, clock, strings, shapes)?;
    let e = init.endian;
    for (slot, &(off, g)) in rec
        .vals
        .iter_mut()
        .zip(&shape.at)
        .take(usize::from(shape.n))
    {
        let v = avail.get(usize::from(off)..).unwrap_or_default();
        *slot = match g {
            0 => u64::from(e.u32(word(v))),
            1 => e.u64(word(v)),
            2 => u64::from(e.u16(word(v))),
            _ => u64::from(v.first().copied().unwrap_or(0)),
        };
    }
    rec.offset = offset;
    rec.ty = ty;
    rec.time_ns = time_ns;
    rec.is_big = false;
    rec.ends = shape.ends;
    Some(end)
}

impl<R: Read> RstReader<R> {
    /// Reads the next record straight from the buffer with `read`, which
    /// gets the buffered bytes, the file's INIT and clock, whether
    /// strings are kept and the record's offset, and gives the record's
    /// length; `false` when it gives `None` (the general path's record)
    /// or the file has ended.
    #[inline(always)]
    fn read_buffered(
        &mut self,
        read: impl FnOnce(&[u8], &Init, &Clock, bool, u64, &mut Shapes) -> Option<usize>,
    ) -> Result<bool> {
        if self.end != End::Open {
            return Ok(false);
        }
        let start = self.offset;
        let avail = match self.src.fill_buf() {
            Ok(b) => b,
            Err(e) => return err(start, e.into()),
        };
        let Some(len) = read(
            avail,
            &self.init,
            &self.clock,
            self.strings,
            start,
            &mut self.shapes,
        ) else {
            return Ok(false);
        };
        self.src.consume(len);
        self.offset += len as u64;
        Ok(true)
    }

    /// [`RstReader::next_into`] for a reader of integers: `rec` gets the
    /// next record's integer values, the commonest records read straight
    /// from the buffer.
    // Inlined where it is called (a pass's loop): it was, until a second
    // caller made it a call of its own (+4% on the decoding thread).
    #[inline(always)]
    pub fn next_ints(&mut self, rec: &mut IntRecord, spare: &mut Record) -> Result<bool> {
        let simple = |avail: &[u8], init: &Init, clock: &Clock, strings, start, shapes: &mut _| {
            shaped_ints(avail, init, clock, strings, shapes, start, rec)
                .or_else(|| simple_ints(avail, init, clock, strings, start, rec))
        };
        if self.read_buffered(simple)? {
            return Ok(true);
        }
        self.general_ints(rec, spare)
    }

    /// The general path's record, its integers copied into `rec`.
    fn general_ints(&mut self, rec: &mut IntRecord, spare: &mut Record) -> Result<bool> {
        let more = self.next_into(spare)?;
        if more {
            rec.fill(spare);
        }
        Ok(more)
    }

    /// [`RstReader::next_ints`] for a pass that needs every record's type
    /// and time but the values of the types `want` names only: a record
    /// of another type read straight from the buffer gets its offset,
    /// type and time, and no values (they are read past, not copied
    /// out). A first pass over a run wants one record type in three.
    pub fn next_ints_of(
        &mut self,
        rec: &mut IntRecord,
        spare: &mut Record,
        want: impl Fn(u16) -> bool,
    ) -> Result<bool> {
        // One look at the buffer: a wanted record is read whole from it
        // there and then.
        let some = |avail: &[u8], init: &Init, clock: &Clock, strings, start, shapes: &mut _| {
            let ty = (init.endian.u32(*avail.first_chunk::<4>()?) >> 18) as u16;
            if want(ty) {
                return shaped_ints(avail, init, clock, strings, shapes, start, rec)
                    .or_else(|| simple_ints(avail, init, clock, strings, start, rec));
            }
            let (ty, time_ns, end) = match shaped(avail, init, clock, strings, shapes) {
                Some((ty, time_ns, _, end)) => (ty, time_ns, end),
                None => {
                    let head = simple_with(avail, init, clock, strings, |_, _| {})
                        .filter(|h| h.ty != STOP && h.ty != INIT)?;
                    (head.ty, head.time_ns, head.end)
                }
            };
            rec.offset = start;
            rec.ty = ty;
            rec.time_ns = time_ns;
            rec.is_big = false;
            rec.ends = [0; 4];
            Some(end)
        };
        if self.read_buffered(some)? {
            return Ok(true);
        }
        self.general_ints(rec, spare)
    }
}
