//! Scheduler events from the text the kernel's tools print
//! (`specs/sched.md`): tracefs `trace` text, `trace-cmd report` (with or
//! without the sched plugin's rewritten payloads) and `perf script`.
//!
//! One typed event per line, with its line number; comms may hold spaces,
//! `-` and `:`, so fields are found by their anchors (the `[cpu]` column,
//! ` prev_pid=`, ` ==> `…), never by splitting on spaces. Times are integer
//! nanoseconds on the trace's own clock (usually since boot).

use crate::Format;
/// A string of an event: a comm, a state, an event's name. Up to 24
/// bytes (every comm: the kernel keeps 15) it is held inline, with no
/// allocation of its own.
pub use compact_str::CompactString as Name;
use memchr::memmem::Finder;
use std::hash::BuildHasher;
use std::io::Read;
use std::sync::LazyLock;

/// What happened.
#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    /// `sched_switch`: `prev` left the CPU in `prev_state`, `next` came on.
    Switch {
        /// The task leaving.
        prev_comm: Name,
        /// Its pid.
        prev_pid: i32,
        /// Its state as printed (`S`, `D`, `R+`…; trace-cmd's plugin uses
        /// its own letters, see [`kernel_state`]).
        prev_state: Name,
        /// The task coming on.
        next_comm: Name,
        /// Its pid.
        next_pid: i32,
    },
    /// `sched_wakeup`, `sched_wakeup_new` or `sched_waking`.
    Wakeup {
        /// Which of the three.
        event: Name,
        /// The task woken.
        comm: Name,
        /// Its pid.
        pid: i32,
    },
    /// `sched_process_fork`.
    Fork {
        /// The parent's pid.
        pid: i32,
        /// The child's comm.
        child_comm: Name,
        /// The child's pid.
        child_pid: i32,
    },
    /// `sched_process_exit`.
    Exit {
        /// The task's pid.
        pid: i32,
    },
    /// A `trace_marker` write (`tracing_mark_write` or trace-cmd `print`).
    Marker(Name),
    /// Any other event, by name.
    Other(Name),
}

impl Default for Kind {
    fn default() -> Kind {
        Kind::Other(Name::default())
    }
}

impl Clone for Kind {
    fn clone(&self) -> Kind {
        match self {
            // Into an empty one of the same variant ([`Kind::clone_from`]).
            Kind::Switch { .. } | Kind::Wakeup { .. } => {
                let mut k = Kind::Exit { pid: 0 };
                k.clone_from(self);
                k
            }
            Kind::Fork {
                pid,
                child_comm,
                child_pid,
            } => Kind::Fork {
                pid: *pid,
                child_comm: child_comm.clone(),
                child_pid: *child_pid,
            },
            Kind::Exit { pid } => Kind::Exit { pid: *pid },
            Kind::Marker(t) => Kind::Marker(t.clone()),
            Kind::Other(t) => Kind::Other(t.clone()),
        }
    }

    /// Field by field into the same variant: a reader's hit copies a
    /// kept event into the batch's on every switch and wakeup line, and
    /// the derived form (a new value built on the stack, then moved) was
    /// a fifth of the decoding thread's samples, most of them loads
    /// stalled on the stores just before them.
    fn clone_from(&mut self, source: &Kind) {
        // A batch's event held whatever the converter read before, so the
        // variants often differ: the empty variant first (constant
        // stores), then its fields.
        match (&*self, source) {
            (Kind::Switch { .. }, Kind::Switch { .. })
            | (Kind::Wakeup { .. }, Kind::Wakeup { .. }) => {}
            (_, Kind::Switch { .. }) => {
                *self = Kind::Switch {
                    prev_comm: Name::const_new(""),
                    prev_pid: 0,
                    prev_state: Name::const_new(""),
                    next_comm: Name::const_new(""),
                    next_pid: 0,
                }
            }
            (_, Kind::Wakeup { .. }) => {
                *self = Kind::Wakeup {
                    event: Name::const_new(""),
                    comm: Name::const_new(""),
                    pid: 0,
                }
            }
            _ => {}
        }
        match (self, source) {
            (
                Kind::Switch {
                    prev_comm,
                    prev_pid,
                    prev_state,
                    next_comm,
                    next_pid,
                },
                Kind::Switch {
                    prev_comm: a,
                    prev_pid: b,
                    prev_state: c,
                    next_comm: d,
                    next_pid: e,
                },
            ) => {
                prev_comm.clone_from(a);
                prev_state.clone_from(c);
                next_comm.clone_from(d);
                (*prev_pid, *next_pid) = (*b, *e);
            }
            (
                Kind::Wakeup { event, comm, pid },
                Kind::Wakeup {
                    event: a,
                    comm: b,
                    pid: c,
                },
            ) => {
                event.clone_from(a);
                comm.clone_from(b);
                *pid = *c;
            }
            // (Neither a switch nor a wakeup: `clone` does not come back.)
            (this, source) => *this = source.clone(),
        }
    }
}

/// One event line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// 1-based line number.
    pub line: u64,
    /// The context task's comm.
    pub comm: Name,
    /// The context task's pid (perf: tid).
    pub pid: i32,
    /// Its thread-group id (the pid of its process), when the trace has
    /// it: ftrace's TGID column (`options/record-tgid`), perf's `pid/tid`.
    pub tgid: Option<i32>,
    /// CPU.
    pub cpu: u32,
    /// Time in ns on the trace clock.
    pub ts_ns: i64,
    /// The event.
    pub kind: Kind,
    /// Where the event is when its reader shares its kinds
    /// ([`TextReader::shared_kinds`]): [`Kinds::of`] finds it.
    pub slot: Slot,
}

/// Where an [`Event`]'s [`Kind`] is. A kernel trace repeats the same few
/// hundred event texts (a task switching with the same other one, in the
/// same state), and its reader keeps each text's kind in a slot: a
/// reader that shares its kinds leaves a repeated one in its slot, and
/// its consumer keeps a copy of the slots ([`Kinds`]), filled from the
/// events that fill them. The event then is its context and times, a
/// cache line, where the kind's names were two more, copied on one core
/// and read on the other.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Slot {
    /// In [`Event::kind`].
    #[default]
    Here,
    /// In [`Event::kind`], which is now slot `n`'s kind.
    Kept(u16),
    /// Slot `n`'s kind; [`Event::kind`] holds an older event's.
    Shared(u16),
}

/// The slots of a reader that shares its kinds, as its events fill them:
/// every event read must pass through [`Kinds::of`], in order.
#[derive(Debug, Default)]
pub struct Kinds {
    slots: Vec<Kind>,
}

impl Kinds {
    /// `ev`'s kind, and the slot it fills kept.
    #[inline]
    pub fn of<'a>(&'a mut self, ev: &'a Event) -> &'a Kind {
        match ev.slot {
            Slot::Here => &ev.kind,
            Slot::Kept(n) => {
                let n = usize::from(n);
                if self.slots.len() <= n {
                    self.slots
                        .resize_with(Parsed::SLOTS.max(n + 1), Kind::default);
                }
                if let Some(k) = self.slots.get_mut(n) {
                    k.clone_from(&ev.kind);
                }
                &ev.kind
            }
            // (A slot never filled is a reader's bug: an `Other` event,
            // which changes nothing.)
            Slot::Shared(n) => self.slots.get(usize::from(n)).unwrap_or(&OTHER),
        }
    }
}

static OTHER: Kind = Kind::Other(Name::const_new(""));

/// A line that does not parse, with its number.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct TextError {
    /// 1-based line number.
    pub line: u64,
    /// What is wrong.
    pub what: String,
}

/// Lost-event markers (`CPU:N [LOST n EVENTS]`, trace-cmd's `[n EVENTS
/// DROPPED]`) seen so far: (cpu, count).
pub type Lost = Vec<(u32, u64)>;

/// Streams the events of one text trace.
pub struct TextReader<R> {
    lines: integrador_lines::TextLines<R>,
    format: Format,
    line: u64,
    /// Bytes read before the last line, and up to its end.
    offsets: (u64, u64),
    /// The last line, when it had no newline (left out).
    pub cut: Option<u64>,
    /// Losses the trace reports.
    pub lost: Lost,
    contexts: Contexts,
    /// Whether events carry the context's comm and a wakeup's comm.
    task_names: bool,
    /// Whether repeated kinds stay in `parsed` ([`Slot::Shared`]).
    shared: bool,
    parsed: Parsed,
}

/// A slot of [`Parsed`]: an event's text and its kind.
type Entry = (Vec<u8>, Kind);

/// Switch and wakeup events read before, by their text from the event's
/// name to the line's end: a trace has few tasks per CPU, so the same
/// text comes again and again (in the kernel-trace fixtures, 264 texts
/// make 5,908 lines, and 167 make 1,611), and reading it again (the
/// payload's fields, then each name copied) was about a third of the
/// decoding thread's samples. A slot holds the latest text that hashed
/// to it; a hit is compared whole, so the event is the one the text
/// reads as.
#[derive(Default)]
struct Parsed {
    slots: Vec<Entry>,
    hasher: foldhash::fast::FixedState,
}

impl Parsed {
    /// Slots: a few times the texts of a trace of a few busy tasks per
    /// CPU; about 110 KiB, and the texts.
    const SLOTS: usize = 1024;
    /// Longer texts are read every time (a switch of two 15-byte comms
    /// is about 130 bytes).
    const MAX_KEY: usize = 200;

    /// The slot for `key`, its number, and whether it holds `key`'s
    /// event; `None` for a text too long to keep, or empty (as a slot
    /// never filled).
    #[inline]
    fn look(&mut self, key: &[u8]) -> Option<(&mut Entry, u16, bool)> {
        if key.is_empty() || key.len() > Self::MAX_KEY {
            return None;
        }
        if self.slots.is_empty() {
            self.slots.resize_with(Self::SLOTS, Default::default);
        }
        let i = self.hasher.hash_one(key) as usize % Self::SLOTS;
        let slot = self.slots.get_mut(i)?;
        let hit = slot.0 == key;
        Some((slot, i as u16, hit))
    }
}

/// Contexts met before, by the line's text up to its CPU column's `]`: a
/// line that starts with the same bytes has the same context ([`context`]
/// reads nothing after that `]`). A trace has few tasks per CPU, and the
/// tools pad their columns, so a line's prefix is nearly always as long
/// as the last one's and already known: one hash and one compare, where
/// reading the context again was about 490 instructions.
#[derive(Default)]
struct Contexts {
    /// The last line's prefix length, the next one's likely length.
    guess: usize,
    /// Each prefix's entry in `entries`.
    known: foldhash::HashMap<Box<[u8]>, u32>,
    entries: Vec<(Box<[u8]>, Known)>,
    /// Entries by a cheap hash of their prefix's two ends ([`slot`]),
    /// looked at before `known`: one multiplication and one compare,
    /// where hashing the whole prefix and probing the map was about 140
    /// instructions, on every line of both passes. Empty until the first
    /// prefix is kept; `u32::MAX` for none.
    recent: Vec<u32>,
}

/// The slots of [`Contexts::recent`]: a trace has few tasks per CPU.
const RECENT: usize = 256;

/// `prefix`'s slot in [`Contexts::recent`], from its first and last 16
/// bytes: the tools pad the comm on the left and the pid on the right,
/// so the pid and the CPU are in the last 16, and the first 8 are often
/// spaces. `None` when it is shorter than 16.
#[inline]
fn slot(prefix: &[u8]) -> Option<usize> {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let head = u64::from_le_bytes(*prefix.first_chunk::<8>()?);
    let mid = u64::from_le_bytes(*prefix.last_chunk::<16>()?.first_chunk::<8>()?);
    let end = u64::from_le_bytes(*prefix.last_chunk::<8>()?);
    let h = (mid ^ end.rotate_left(29)).wrapping_mul(K) ^ head;
    Some((h.wrapping_mul(K) >> 56) as usize % RECENT)
}

/// A context as [`Contexts`] keeps it: where the comm is in the line.
#[derive(Clone, Copy)]
struct Known {
    comm: (usize, usize),
    pid: i32,
    tgid: Option<i32>,
    cpu: u32,
}

impl Known {
    /// The context of `l`, whose prefix's `]` is at `close`.
    #[inline(always)]
    fn of(self, l: &str, close: usize) -> Option<Context<'_>> {
        let comm = l.get(self.comm.0..self.comm.1)?;
        Some((comm, self.pid, self.tgid, self.cpu, close))
    }
}

impl Contexts {
    /// More prefixes than this (a trace with more tasks and CPUs than
    /// any machine runs at once, or a hostile one) start the map again:
    /// memory stays bounded.
    const MAX: usize = 4096;

    /// The context of a line that begins with a known prefix, and the
    /// offset of that prefix's `]`. (Inlined in both passes: as a call,
    /// its entry and exit were 21 of its 78 instructions a line.)
    #[inline(always)]
    fn find(&mut self, l: &[u8]) -> Option<(Known, usize)> {
        let n = self.guess;
        let prefix = l.get(..n)?;
        if prefix.last() != Some(&b']') {
            return None;
        }
        let slot = slot(prefix);
        if let Some(&i) = slot.and_then(|s| self.recent.get(s)) {
            if let Some((p, k)) = self.entries.get(i as usize) {
                if same(p, prefix) {
                    return Some((*k, n - 1));
                }
            }
        }
        let i = *self.known.get(prefix)?;
        if let Some(r) = slot.and_then(|s| self.recent.get_mut(s)) {
            *r = i;
        }
        Some((self.entries.get(i as usize)?.1, n - 1))
    }

    fn keep(&mut self, l: &str, c: &Context<'_>) {
        let (comm, pid, tgid, cpu, close) = *c;
        let start = (comm.as_ptr() as usize).wrapping_sub(l.as_ptr() as usize);
        self.guess = 0;
        let Some(prefix) = l.as_bytes().get(..=close) else {
            return;
        };
        if l.get(start..start + comm.len()) != Some(comm) {
            return;
        }
        self.guess = prefix.len();
        if self.entries.len() >= Self::MAX {
            self.known.clear();
            self.entries.clear();
        }
        if self.recent.is_empty() || self.entries.is_empty() {
            self.recent.clear();
            self.recent.resize(RECENT, u32::MAX);
        }
        let k = Known {
            comm: (start, start + comm.len()),
            pid,
            tgid,
            cpu,
        };
        // A prefix kept before (not looked up: the line before had a
        // prefix of another length) is the same context, read again.
        let i = match self.known.get(prefix) {
            Some(&i) => i,
            None => {
                let i = self.entries.len() as u32;
                self.entries.push((prefix.into(), k));
                self.known.insert(prefix.into(), i);
                i
            }
        };
        if let Some(r) = slot(prefix).and_then(|s| self.recent.get_mut(s)) {
            *r = i;
        }
    }
}

/// Whether `a` and `b` hold the same bytes, compared a word at a time
/// in line: a line's prefix, 30 to 60 bytes, is compared once per line
/// in both passes, where the call to `memcmp` and its choice of a loop
/// cost more than the compare.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a == b;
    }
    let word = |s: &[u8], i: usize| {
        s.get(i..i + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
            .map(u64::from_ne_bytes)
    };
    let mut i = 0;
    while i + 8 <= n {
        if word(a, i) != word(b, i) {
            return false;
        }
        i += 8;
    }
    // The last word again, overlapping the one before.
    word(a, n - 8) == word(b, n - 8)
}

/// trace-cmd's sched plugin prints its own state letters (sched.md §3):
/// the kernel letter for a plugin letter.
pub fn kernel_state(plugin: &str) -> String {
    plugin
        .split('|')
        .map(|s| match s {
            "Z" => "X",
            "X" => "Z",
            "x" => "P",
            "W" => "I",
            o => o,
        })
        .collect::<Vec<_>>()
        .join("|")
}

fn ts_ns(t: &str) -> Option<i64> {
    let (s, f) = t.split_once('.')?;
    let sec: i64 = s.trim().parse().ok()?;
    if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac: i64 = f.parse().ok()?;
    sec.checked_mul(1_000_000_000)?
        .checked_add(frac * 10i64.pow(9 - f.len() as u32))
}

/// A field anchor with its memmem searcher built once for the whole run:
/// building one per call was a sixth of a kernel trace's time.
struct Key {
    text: &'static str,
    finder: LazyLock<Finder<'static>>,
}

macro_rules! key {
    ($name:ident = $text:literal) => {
        static $name: Key = Key {
            text: $text,
            finder: LazyLock::new(|| Finder::new($text)),
        };
    };
}

key!(SWITCH_FIELDS = "prev_pid=");
key!(PREV_COMM = "prev_comm=");
key!(PREV_PID = " prev_pid=");
key!(PREV_STATE = " prev_state=");
key!(ARROW = " ==> ");
key!(NEXT_COMM = "next_comm=");
key!(NEXT_PID = " next_pid=");
key!(COMM = "comm=");
key!(PID = " pid=");
key!(CHILD_COMM = "child_comm=");
key!(CHILD_PID = " child_pid=");

impl Key {
    fn find(&self, s: &str) -> Option<usize> {
        self.finder.find(s.as_bytes())
    }
}

/// The value after `key` up to the next anchor (or the end).
fn between<'a>(s: &'a str, key: &Key, until: Option<&Key>) -> Option<&'a str> {
    let i = key.find(s)? + key.text.len();
    let rest = s.get(i..)?;
    Some(match until {
        Some(u) => rest.get(..u.find(rest)?)?,
        None => rest,
    })
}

/// The leading integer of `s`: spaces before it allowed, text after it
/// ignored (`120 target_cpu=000`).
fn num(s: &str) -> Option<i32> {
    // Nearly always plain digits then a space or the end: read them in
    // one pass, without the general path's trimming and reparsing.
    let b = s.as_bytes();
    let (mut n, mut len) = (0i32, 0);
    for &c in b.iter().take(9) {
        if !c.is_ascii_digit() {
            break;
        }
        n = n * 10 + i32::from(c - b'0');
        len += 1;
    }
    if len > 0 && b.get(len).is_none_or(|&c| c != b'-' && !c.is_ascii_digit()) {
        return Some(n);
    }
    let s = s.trim_start();
    let end = s
        .bytes()
        .take_while(|b| *b == b'-' || b.is_ascii_digit())
        .count();
    s.get(..end)?.parse().ok()
}

/// `comm:pid [prio]`: split on the last `:` before the pid.
fn plugin_task(s: &str) -> Option<(&str, i32)> {
    let s = s.trim();
    let s = s.get(..s.rfind(" [").unwrap_or(s.len()))?;
    let (c, p) = s.rsplit_once(':')?;
    let pid = p.trim().parse().ok()?;
    Some((c, pid))
}

/// An event's [`Kind`] as read, borrowed from its line: stored into the
/// reader's event in place ([`Payload::store`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Payload<'a> {
    Switch {
        prev_comm: &'a str,
        prev_pid: i32,
        prev_state: &'a str,
        next_comm: &'a str,
        next_pid: i32,
    },
    Wakeup {
        event: &'a str,
        comm: &'a str,
        pid: i32,
    },
    Fork {
        pid: i32,
        child_comm: &'a str,
        child_pid: i32,
    },
    Exit {
        pid: i32,
    },
    Marker(&'a str),
    Other(&'a str),
}

/// Overwrites `dst` with `s`, in its own buffer.
#[inline]
fn set(dst: &mut Name, s: &str) {
    dst.clear();
    dst.push_str(s);
}

impl Payload<'_> {
    /// Writes this into `kind`: into its own strings when it is of the
    /// same kind (nearly always: a trace is mostly switches and
    /// wakeups), else as a new kind.
    fn store(self, kind: &mut Kind) {
        match (self, &mut *kind) {
            (
                Payload::Switch {
                    prev_comm: a,
                    prev_pid: b,
                    prev_state: c,
                    next_comm: d,
                    next_pid: e,
                },
                Kind::Switch {
                    prev_comm,
                    prev_pid,
                    prev_state,
                    next_comm,
                    next_pid,
                },
            ) => {
                set(prev_comm, a);
                set(prev_state, c);
                set(next_comm, d);
                (*prev_pid, *next_pid) = (b, e);
            }
            (
                Payload::Wakeup {
                    event: a,
                    comm: b,
                    pid: c,
                },
                Kind::Wakeup { event, comm, pid },
            ) => {
                set(event, a);
                set(comm, b);
                *pid = c;
            }
            (Payload::Marker(a), Kind::Marker(t)) | (Payload::Other(a), Kind::Other(t)) => {
                set(t, a);
            }
            (p, k) => *k = p.owned(),
        }
    }

    /// This as a new [`Kind`].
    fn owned(self) -> Kind {
        match self {
            Payload::Switch {
                prev_comm,
                prev_pid,
                prev_state,
                next_comm,
                next_pid,
            } => Kind::Switch {
                prev_comm: prev_comm.into(),
                prev_pid,
                prev_state: prev_state.into(),
                next_comm: next_comm.into(),
                next_pid,
            },
            Payload::Wakeup { event, comm, pid } => Kind::Wakeup {
                event: event.into(),
                comm: comm.into(),
                pid,
            },
            Payload::Fork {
                pid,
                child_comm,
                child_pid,
            } => Kind::Fork {
                pid,
                child_comm: child_comm.into(),
                child_pid,
            },
            Payload::Exit { pid } => Kind::Exit { pid },
            Payload::Marker(t) => Kind::Marker(t.into()),
            Payload::Other(t) => Kind::Other(t.into()),
        }
    }
}

/// A payload read left to right, field after field, where the kernel
/// prints them: no search starts before the last field's end, and none
/// goes further than the next space or two.
struct Fields<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Fields<'a> {
    /// Steps over `key`, which must come next.
    #[inline]
    fn expect(&mut self, key: &str) -> Option<()> {
        let end = self.at + key.len();
        (self.s.as_bytes().get(self.at..end)? == key.as_bytes()).then(|| self.at = end)
    }

    /// The text up to the next `key` (a comm may hold spaces: only the
    /// whole key ends it), stepping over both.
    #[inline]
    fn until(&mut self, key: &str) -> Option<&'a str> {
        let (b, k) = (self.s.as_bytes(), key.as_bytes());
        let first = *k.first()?;
        let mut i = self.at;
        // Each key starts with a byte that is rare before it (a space,
        // mostly): to each one ([`byte_from`]), then the whole key. (A
        // loop that tested the key at every position was a tenth of the
        // decoder.)
        loop {
            i = byte_from(b, i, first)?;
            if b.get(i..i + k.len())? == k {
                let v = self.s.get(self.at..i)?;
                self.at = i + k.len();
                return Some(v);
            }
            i += 1;
        }
    }

    /// The number that comes next, as [`num`] reads it.
    fn int(&self) -> Option<i32> {
        num(self.s.get(self.at..)?)
    }
}

/// The offset of the first `x` in `b` from `i` on, eight bytes a step:
/// the few bytes to a field's end are of any number, and a loop of one
/// byte a step missed its exit nearly every time (memchr's set-up costs
/// more than these few bytes).
#[inline]
fn byte_from(b: &[u8], mut i: usize, x: u8) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let pattern = u64::from_ne_bytes([x; 8]);
    while let Some(w) = b.get(i..).and_then(|t| t.first_chunk::<8>()) {
        // A zero byte where `x` is; the lowest flagged byte is the first
        // zero (a false flag can only come above a true one).
        let v = u64::from_le_bytes(*w) ^ pattern;
        let zero = v.wrapping_sub(ONES) & !v & HIGH;
        if zero != 0 {
            return Some(i + (zero.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    Some(i + b.get(i..)?.iter().position(|&c| c == x)?)
}

/// ftrace's and perf's sched_switch (`prev_comm= prev_pid= prev_prio=
/// prev_state= ==> next_comm= next_pid= next_prio=`), in that order;
/// `None` sends any other shape to the general reading.
fn switch_in_order(p: &str) -> Option<Payload<'_>> {
    let mut f = Fields { s: p, at: 0 };
    f.expect("prev_comm=")?;
    let prev_comm = f.until(" prev_pid=")?;
    let prev_pid = f.int()?;
    f.until(" prev_state=")?;
    let prev_state = f.until(" ==> ")?;
    f.expect("next_comm=")?;
    let next_comm = f.until(" next_pid=")?;
    let next_pid = f.int()?;
    Some(Payload::Switch {
        prev_comm,
        prev_pid,
        prev_state,
        next_comm,
        next_pid,
    })
}

/// sched_switch's fields wherever they are, each found from the start.
fn switch_by_search(p: &str) -> Option<Payload<'_>> {
    Some(Payload::Switch {
        prev_comm: between(p, &PREV_COMM, Some(&PREV_PID))?,
        prev_pid: num(between(p, &PREV_PID, None)?)?,
        prev_state: between(p, &PREV_STATE, Some(&ARROW))?,
        next_comm: between(p, &NEXT_COMM, Some(&NEXT_PID))?,
        next_pid: num(between(p, &NEXT_PID, None)?)?,
    })
}

/// A wakeup's leading `comm= pid=` fields.
fn wakeup_in_order(p: &str) -> Option<(&str, i32)> {
    let mut f = Fields { s: p, at: 0 };
    f.expect("comm=")?;
    let comm = f.until(" pid=")?;
    Some((comm, f.int()?))
}

fn payload_kind<'a>(event: &'a str, p: &'a str) -> Option<Payload<'a>> {
    Some(match event {
        "sched_switch" => {
            if let Some(k) = switch_in_order(p) {
                k
            } else if SWITCH_FIELDS.find(p).is_some() {
                switch_by_search(p)?
            } else {
                // trace-cmd's plugin: `prev:pid [prio] STATE ==> next:pid [prio]`.
                let (left, right) = p.split_once(" ==> ")?;
                let close = left.rfind("] ")?;
                let (prev_comm, prev_pid) = plugin_task(left.get(..=close)?)?;
                let prev_state = left.get(close + 2..)?.trim();
                let (next_comm, next_pid) = plugin_task(right)?;
                Payload::Switch {
                    prev_comm,
                    prev_pid,
                    prev_state,
                    next_comm,
                    next_pid,
                }
            }
        }
        "sched_wakeup" | "sched_wakeup_new" | "sched_waking" => {
            let (comm, pid) = if let Some(w) = wakeup_in_order(p) {
                w
            } else if PID.find(p).is_some() {
                (
                    between(p, &COMM, Some(&PID))?,
                    num(between(p, &PID, None)?)?,
                )
            } else {
                plugin_task(p.get(..p.rfind(" CPU:").unwrap_or(p.len()))?)?
            };
            Payload::Wakeup { event, comm, pid }
        }
        "sched_process_fork" => Payload::Fork {
            pid: num(between(p, &PID, None)?)?,
            child_comm: between(p, &CHILD_COMM, Some(&CHILD_PID))?,
            child_pid: num(between(p, &CHILD_PID, None)?)?,
        },
        "sched_process_exit" => Payload::Exit {
            pid: num(between(p, &PID, None)?)?,
        },
        "tracing_mark_write" => Payload::Marker(p.trim()),
        "print" => {
            // trace-cmd: `0xffffffff8149ab1a: text`.
            let t = match p.trim().split_once(": ") {
                Some((a, b)) if a.starts_with("0x") => b,
                _ => p.trim(),
            };
            Payload::Marker(t)
        }
        other => Payload::Other(other),
    })
}

impl<R: Read> TextReader<R> {
    /// Reads `format` text (ftrace, trace-cmd or perf) from `reader`.
    pub fn new(reader: R, format: Format) -> TextReader<R> {
        TextReader {
            lines: integrador_lines::TextLines::new(reader, integrador_lines::MAX_LINE),
            format,
            line: 0,
            offsets: (0, 0),
            cut: None,
            lost: Vec::new(),
            contexts: Contexts::default(),
            task_names: true,
            shared: false,
            parsed: Parsed::default(),
        }
    }

    /// Without the context's comm ([`Event::comm`]) and a wakeup's woken
    /// comm, which are left empty: for a caller that knows every task's
    /// name from elsewhere (integrador's first pass) and reads neither.
    /// Every other field is read as before, and lines are checked as
    /// before. (Two copies of the four a switch line makes, and one of a
    /// wakeup's three.)
    pub fn without_task_names(mut self) -> TextReader<R> {
        self.task_names = false;
        self
    }

    /// Leaves a repeated event's kind in the reader's slot ([`Slot`]):
    /// whoever reads the events finds each kind through a [`Kinds`].
    pub fn shared_kinds(mut self) -> TextReader<R> {
        self.shared = true;
        self
    }

    /// Lines read so far (comments and the like included).
    pub fn lines_read(&self) -> u64 {
        self.line
    }

    /// Reads lines up to the next event line; `Ok(None)` at the end.
    /// Comments, lost-event markers and perf call-chain frames are passed.
    fn next_line(&mut self) -> Result<Option<(u64, Head<'_>)>, TextError> {
        let Some(line) = self.next_context()? else {
            return Ok(None);
        };
        Ok(Some((line.number, line.head()?)))
    }

    /// The next event line with only its context parsed (a pass that
    /// wants to know who ran, not what happened, parses nothing more and
    /// allocates nothing); `Ok(None)` at the end.
    pub fn next_context(&mut self) -> Result<Option<Line<'_>>, TextError> {
        let known = loop {
            let read = read(
                &mut self.lines,
                &mut self.line,
                &mut self.offsets,
                &mut self.cut,
            );
            let Some(l) = read? else {
                return Ok(None);
            };
            // A line that starts like an event line read before is one:
            // no comment, loss marker or perf frame starts with the text
            // up to a `[cpu]` column's `]` (none holds such a column, or
            // it would not be what it is). The checks below cost as much
            // as the rest of the context's reading.
            if let Some(k) = self.contexts.find(l.as_bytes()) {
                break Some(k);
            }
            let t = l.trim_ascii_start();
            if t.is_empty()
                || t.starts_with('#')
                || t.starts_with("cpus=")
                || t.starts_with("version =")
            {
                continue;
            }
            if let Some(lost) = lost_marker(t) {
                self.lost.push(lost);
                continue;
            }
            if self.format == Format::Perf && perf_frame(t) {
                continue;
            }
            break None;
        };
        // The line again: the loop cannot lend it past itself.
        let number = self.line;
        let l = self.lines.last().trim_ascii_end();
        let c = match known.and_then(|(k, close)| k.of(l, close)) {
            Some(c) => c,
            None => {
                let c = context(l, self.format).map_err(|what| line_error(number, what, l))?;
                self.contexts.keep(l, &c);
                c
            }
        };
        let (comm, pid, tgid, cpu, close) = c;
        Ok(Some(Line {
            number,
            at: self.offsets.0,
            comm,
            pid,
            tgid,
            cpu,
            close,
            format: self.format,
            text: l,
        }))
    }

    /// The next event; `Ok(None)` at the end.
    pub fn next_event(&mut self) -> Result<Option<Event>, TextError> {
        let mut ev = Event::default();
        Ok(self.read_into(&mut ev)?.then_some(ev))
    }

    /// Overwrites `ev` with the next event, reusing its strings;
    /// `Ok(false)` at the end.
    pub fn read_into(&mut self, ev: &mut Event) -> Result<bool, TextError> {
        // Out of `self` while the line borrows it, and put back after,
        // an error or not.
        let mut parsed = std::mem::take(&mut self.parsed);
        let read = self.read_parsed(ev, &mut parsed);
        // The default put in its place holds nothing (no slot is made
        // before the first look): forgotten rather than dropped, whose
        // glue ran on every line (19 instructions of ~1,000).
        let empty = std::mem::replace(&mut self.parsed, parsed);
        debug_assert_eq!(empty.slots.capacity(), 0);
        std::mem::forget(empty);
        read
    }

    fn read_parsed(&mut self, ev: &mut Event, parsed: &mut Parsed) -> Result<bool, TextError> {
        let task_names = self.task_names;
        let Some((line, h)) = self.next_line()? else {
            return Ok(false);
        };
        // The event and its payload are read from the line's text from
        // the event's name on, and from nothing else.
        let from = (h.event.as_ptr() as usize).wrapping_sub(h.text.as_ptr() as usize);
        let key = h.text.as_bytes().get(from..).unwrap_or_default();
        let cached = match h.event {
            "sched_switch" | "sched_waking" | "sched_wakeup" => parsed.look(key),
            _ => None,
        };
        let fill = |ev: &mut Event| {
            ev.line = line;
            if task_names {
                set(&mut ev.comm, h.comm);
            } else {
                ev.comm.clear();
            }
            ev.pid = h.pid;
            ev.tgid = h.tgid;
            ev.cpu = h.cpu;
            ev.ts_ns = h.ts_ns;
        };
        if let Some((slot, n, true)) = cached {
            fill(ev);
            if self.shared {
                ev.slot = Slot::Shared(n);
            } else {
                ev.kind.clone_from(&slot.1);
                ev.slot = Slot::Here;
            }
            return Ok(true);
        }
        let mut kind = payload_kind(h.event, h.payload).ok_or_else(|| TextError {
            line,
            what: format!(
                "{} payload does not parse: `{}`",
                h.event,
                h.text.trim_start().chars().take(120).collect::<String>()
            ),
        })?;
        // Field by field, strings into the event's own buffers: neither a
        // new `Event` nor new strings.
        fill(ev);
        if !task_names {
            if let Payload::Wakeup { comm, .. } = &mut kind {
                *comm = "";
            }
        }
        kind.store(&mut ev.kind);
        ev.slot = Slot::Here;
        if let Some((slot, n, false)) = cached {
            slot.0.clear();
            slot.0.extend_from_slice(key);
            slot.1.clone_from(&ev.kind);
            if self.shared {
                ev.slot = Slot::Kept(n);
            }
        }
        Ok(true)
    }
}

/// An event line's context and event, borrowed from the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head<'a> {
    /// The context task's comm.
    pub comm: &'a str,
    /// Its pid (perf: tid).
    pub pid: i32,
    /// Its thread group, when the trace has it.
    pub tgid: Option<i32>,
    /// CPU.
    pub cpu: u32,
    /// Time in ns on the trace clock.
    pub ts_ns: i64,
    /// The event's name (`sched_switch`).
    pub event: &'a str,
    /// Its payload text.
    pub payload: &'a str,
    /// The whole line, for messages.
    pub text: &'a str,
}

/// A reader's next line, trailing space removed, counted in `line` and
/// `offsets` (bytes before it, and up to its end); `Ok(None)` at the end,
/// where a last line without its newline is left out and told in `cut`.
/// (The reader's fields one by one: the line borrows the first only.)
fn read<'a, R: Read>(
    lines: &'a mut integrador_lines::TextLines<R>,
    line: &mut u64,
    offsets: &mut (u64, u64),
    cut: &mut Option<u64>,
) -> Result<Option<&'a str>, TextError> {
    let next = *line + 1;
    offsets.0 = offsets.1;
    let read = lines.next_text().map_err(|e| TextError {
        line: next,
        what: match e {
            integrador_lines::TextError::Read(e) => e.to_string(),
            integrador_lines::TextError::NotText => "line is not valid UTF-8".into(),
        },
    })?;
    match read {
        None => Ok(None),
        Some((_, integrador_lines::End::Eof)) => {
            *cut = Some(next);
            Ok(None)
        }
        Some((l, integrador_lines::End::Newline)) => {
            *line = next;
            offsets.1 += l.len() as u64;
            Ok(Some(l.trim_ascii_end()))
        }
    }
}

fn line_error(line: u64, what: String, l: &str) -> TextError {
    TextError {
        line,
        what: format!(
            "{what}: `{}`",
            l.trim_start().chars().take(120).collect::<String>()
        ),
    }
}

/// An event line whose context is parsed, its event not yet.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    /// 1-based line number.
    pub number: u64,
    /// The byte offset of its start in what the reader reads.
    pub at: u64,
    /// The context task's comm.
    pub comm: &'a str,
    /// Its pid (perf: tid).
    pub pid: i32,
    /// Its thread group, when the trace has it.
    pub tgid: Option<i32>,
    cpu: u32,
    /// The `]` of the `[cpu]` column.
    close: usize,
    format: Format,
    /// The whole line.
    pub text: &'a str,
}

impl<'a> Line<'a> {
    /// The line's time and event.
    // Inlined with `event_part`, the head's fields stay in registers:
    // returned through memory, the caller's copy of the result loaded
    // what the callee had just stored in other widths and stalled (a
    // tenth of the decoding thread's samples).
    #[inline(always)]
    pub fn head(&self) -> Result<Head<'a>, TextError> {
        event_part(self).map_err(|what| line_error(self.number, what.to_string(), self.text))
    }
}

/// The context of an event line (trailing space removed): comm, pid,
/// tgid, CPU and the offset of the CPU column's `]`. Every line of a
/// trace comes here (twice: pass 1 reads the contexts), so it scans bytes
/// with memchr and trims ASCII space only: the tools pad their columns
/// with spaces.
type Context<'a> = (&'a str, i32, Option<i32>, u32, usize);

fn context(l: &str, format: Format) -> Result<Context<'_>, String> {
    // The `[cpu]` column anchors the context.
    let Some((open, close)) = cpu_column(l.as_bytes()) else {
        return Err("no `[cpu]` column where a trace line has one".into());
    };
    // Digits only (cpu_column saw to it): read as `parse` would, without
    // its sign and radix handling.
    let cpu = l
        .as_bytes()
        .get(open + 1..close)
        .and_then(|c| {
            c.iter().try_fold(0u32, |n, d| {
                n.checked_mul(10)?
                    .checked_add(u32::from(d.wrapping_sub(b'0')))
            })
        })
        .ok_or("bad CPU number")?;
    let ctx = l.get(..open).unwrap_or_default().trim_ascii_end();
    let (comm, pid, tgid) = match format {
        Format::Perf => {
            let (c, p) = ctx
                .rsplit_once(char::is_whitespace)
                .ok_or("no tid before the CPU")?;
            // `pid/tid` with -F +pid: the tid is the task, the pid its
            // process.
            let (pid, tid) = match p.split_once('/') {
                Some((pid, tid)) => (pid.parse().ok(), tid),
                None => (None, p),
            };
            (c.trim(), tid.parse().map_err(|_| "bad tid")?, pid)
        }
        _ => {
            // An optional `(tgid)` column precedes the CPU; `(-------)`
            // for the idle task.
            let paren = memchr::memrchr(b'(', ctx.as_bytes())
                .filter(|&i| i > 0 && ctx.as_bytes().get(i - 1) == Some(&b' '))
                .map(|i| i - 1);
            let (ctx, tgid) = match paren {
                Some(i) if ctx.ends_with(')') => (
                    ctx.get(..i).unwrap_or(ctx).trim_ascii_end(),
                    ctx.get(i + 2..ctx.len() - 1)
                        .and_then(|g| g.trim_ascii().parse::<i32>().ok()),
                ),
                _ => (ctx, None),
            };
            // The pid is a few bytes from the end: a plain loop.
            let dash = ctx
                .bytes()
                .rposition(|c| c == b'-')
                .ok_or("no `comm-pid` before the CPU")?;
            let (c, p) = (
                ctx.get(..dash).unwrap_or_default(),
                ctx.get(dash + 1..).unwrap_or_default(),
            );
            (c.trim_ascii(), pid_after_dash(p).ok_or("bad pid")?, tgid)
        }
    };
    Ok((comm, pid, tgid, cpu, close))
}

/// `p.trim_ascii().parse::<i32>()` for the text after a context's last
/// `-`, which holds none: an optional `+`, then digits. Read in one pass
/// (`parse` was a tenth of the context's reading).
fn pid_after_dash(p: &str) -> Option<i32> {
    let p = p.trim_ascii();
    let digits = p.strip_prefix('+').unwrap_or(p).as_bytes();
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0i32, |n, &d| {
        if !d.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_add(i32::from(d - b'0'))
    })
}

/// The rest of a line after its context: time, event and payload.
/// Offsets into the line's bytes, each byte looked at once: the
/// `trim`/`position`/`get` steps on sub-slices it was before cost about
/// 490 instructions a line.
#[inline(always)]
fn event_part<'a>(line: &Line<'a>) -> Result<Head<'a>, &'static str> {
    let (l, close, format) = (line.text, line.close, line.format);
    let b = l.as_bytes();
    let start = skip_space(b, close + 1);
    // Optional flags column, then `<time>:`.
    let mut j = start;
    while b.get(j).is_some_and(|&c| c != b' ') {
        j += 1;
    }
    // A first word that ends in `:` is the time itself. (With no space
    // at all there is no `: ` either, so no time: the same error.)
    let at = if j < b.len() && !(j > start && b.get(j - 1) == Some(&b':')) {
        skip_space(b, j + 1)
    } else {
        start
    };
    let (ts_ns, after) = match plain_time(b.get(at..).unwrap_or_default()) {
        Some((ts, after)) => (ts, at + after),
        None => {
            let rest = b.get(at..).unwrap_or_default();
            let colon = time_end(rest).ok_or("no `<time>:`")?;
            let time = l.get(at..at + colon).unwrap_or_default();
            (
                ts_ns(time).ok_or("time is not `<seconds>.<fraction>`")?,
                at + colon + 2,
            )
        }
    };
    let from = skip_space(b, after);
    // The scheduler's own names, compared whole (none holds a `:`); any
    // other name is a few bytes long: a plain loop. (The loop's exit,
    // after a name of any length, was a fifth of this function.)
    let mut c = from + known_event(b.get(from..).unwrap_or_default());
    while b.get(c).is_some_and(|&x| x != b':') {
        c += 1;
    }
    if c >= b.len() {
        return Err("no `<event>:`");
    }
    let (event, payload) = (
        l.get(from..c).unwrap_or_default(),
        l.get(c + 1..).unwrap_or_default(),
    );
    // perf names events `sched:sched_switch`.
    let (event, payload) = match format {
        Format::Perf => match payload.split_once(':') {
            Some((name, p)) if !name.contains(' ') => (name, p),
            _ => (event, payload),
        },
        _ => (event, payload),
    };
    Ok(Head {
        comm: line.comm,
        pid: line.pid,
        tgid: line.tgid,
        cpu: line.cpu,
        ts_ns,
        event: event.trim_ascii(),
        payload: payload.trim_ascii_start(),
        text: l,
    })
}

/// The length of the event name `b` starts with when it is one of the
/// scheduler events every trace is made of, followed by its `:`; else 0.
#[inline]
fn known_event(b: &[u8]) -> usize {
    // Two overlapping words each, and one branch: a `match` on the
    // arrays compared byte by byte, a branch each.
    const fn words(s: &[u8; 13]) -> (u64, u64) {
        let [a, b, c, d, e, f, g, h, i, j, k, l, m] = *s;
        (
            u64::from_le_bytes([a, b, c, d, e, f, g, h]),
            u64::from_le_bytes([f, g, h, i, j, k, l, m]),
        )
    }
    const SWITCH: (u64, u64) = words(b"sched_switch:");
    const WAKING: (u64, u64) = words(b"sched_waking:");
    const WAKEUP: (u64, u64) = words(b"sched_wakeup:");
    let (Some(head), Some(tail)) = (
        b.first_chunk::<8>(),
        b.get(5..).and_then(|t| t.first_chunk::<8>()),
    ) else {
        return 0;
    };
    let w = (u64::from_le_bytes(*head), u64::from_le_bytes(*tail));
    if (w == SWITCH) | (w == WAKING) | (w == WAKEUP) {
        12
    } else {
        0
    }
}

/// The offset of the first byte from `i` on that is not ASCII space.
#[inline]
fn skip_space(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The time at the start of `b` in its usual shape, `<digits>.<1 to 9
/// digits>: `, read in one pass: (ns, the offset after `: `). Any other
/// shape is left to [`time_end`] and [`ts_ns`], which read it the same
/// way when it is this one.
fn plain_time(b: &[u8]) -> Option<(i64, usize)> {
    if let Some(t) = short_time(b) {
        return Some(t);
    }
    // One loop per part, each digit read once (iterator chains that
    // counted the digits, then read them, were 12% of the decoder). At
    // most 18 digits of seconds, which cannot overflow; a longer run is
    // left to the general path.
    let mut i = 0;
    let mut sec = 0i64;
    while let Some(v) = b.get(i).map(|d| d.wrapping_sub(b'0')).filter(|&v| v < 10) {
        if i == 18 {
            return None;
        }
        sec = sec * 10 + i64::from(v);
        i += 1;
    }
    if i == 0 || b.get(i) != Some(&b'.') {
        return None;
    }
    let from = i + 1;
    i = from;
    let mut frac = 0i64;
    while let Some(v) = b.get(i).map(|d| d.wrapping_sub(b'0')).filter(|&v| v < 10) {
        if i - from == 9 {
            return None;
        }
        frac = frac * 10 + i64::from(v);
        i += 1;
    }
    let f = i - from;
    if f == 0 || b.get(i..i + 2) != Some(b": ") {
        return None;
    }
    let ns = sec
        .checked_mul(1_000_000_000)?
        .checked_add(frac * FRACTION.get(f)?)?;
    Some((ns, i + 2))
}

/// [`plain_time`] for its most common shape, 1 to 7 digits, `.`, 1 to 7
/// digits, `: ` (ftrace's microseconds), read eight bytes at a time:
/// `None` for any other (then the loops read it). The digit loops were a
/// tenth of the decoding thread's instructions.
fn short_time(b: &[u8]) -> Option<(i64, usize)> {
    let (n, sec) = leading_digits(u64::from_le_bytes(*b.first_chunk::<8>()?))?;
    if b.get(n) != Some(&b'.') {
        return None;
    }
    let word = b.get(n + 1..)?.first_chunk::<8>()?;
    let (f, frac) = leading_digits(u64::from_le_bytes(*word))?;
    let end = n + 1 + f;
    if b.get(end..end + 2) != Some(b": ") {
        return None;
    }
    // Below 10^7 each: no overflow.
    let (sec, frac) = (sec as i64, frac as i64);
    Some((sec * 1_000_000_000 + frac * FRACTION.get(f)?, end + 2))
}

/// Nanoseconds in a unit of a fraction's last digit, by its digits.
const FRACTION: [i64; 10] = [
    1_000_000_000,
    100_000_000,
    10_000_000,
    1_000_000,
    100_000,
    10_000,
    1_000,
    100,
    10,
    1,
];

/// How many of the eight bytes of `w` (first byte lowest) are decimal
/// digits before the first one that is not, and their value: `None`
/// when none is, or all eight are (a number that may go on).
fn leading_digits(w: u64) -> Option<(usize, u64)> {
    const LANES: u64 = 0x0101_0101_0101_0101;
    // Each byte minus `0` (digits become 0 to 9, the rest 10 or more);
    // a byte is no digit when it is 10 or more: adding 0x76 to its low
    // seven bits sets its top bit, and no carry leaves the byte.
    let x = w ^ (LANES * b'0' as u64);
    let above = (x & (LANES * 0x7f)).wrapping_add(LANES * 0x76);
    let not_digit = (above | x) & (LANES * 0x80);
    let n = (not_digit.trailing_zeros() / 8) as usize;
    if !(1..8).contains(&n) {
        return None;
    }
    // The `n` digits moved to the top, zeros before them, then summed
    // in pairs, fours and eights by multiplications (the first digit is
    // the lowest byte, the most significant).
    let v = x << (8 * (8 - n));
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    let lo = v & 0x0000_00ff_0000_00ff;
    let hi = (v >> 16) & 0x0000_00ff_0000_00ff;
    let v = lo
        .wrapping_mul(100 + (1_000_000 << 32))
        .wrapping_add(hi.wrapping_mul(1 + (10_000 << 32)))
        >> 32;
    Some((n, v))
}

/// The first `: ` of `b`.
fn time_end(b: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b':', b).find(|&i| b.get(i + 1) == Some(&b' '))
}

/// A perf call-chain line by its shape: an address, a symbol and the
/// DSO in parentheses (`ffffffff8104f45a __schedule+0x2ea
/// ([kernel.kallsyms])`), with no `[cpu]` column. The alphabet of the
/// first word decides nothing: tasks are named `cc1`, `dd`, `bc`, `ed`.
fn perf_frame(t: &str) -> bool {
    let mut words = t.split_whitespace();
    let address = words
        .next()
        .is_some_and(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_hexdigit()));
    address
        && words.next().is_some()
        && t.ends_with(')')
        && t.contains(" (")
        && cpu_column(t.as_bytes()).is_none()
}

/// The first `[digits]` column of a line: its bracket offsets.
fn cpu_column(b: &[u8]) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'[', b.get(from..)?) {
        let open = from + i;
        let close = open + b.get(open..)?.iter().position(|&c| c == b']')?;
        if close > open + 1 && b.get(open + 1..close)?.iter().all(u8::is_ascii_digit) {
            return Some((open, close));
        }
        from = open + 1;
    }
    None
}

fn lost_marker(t: &str) -> Option<(u32, u64)> {
    let rest = t.strip_prefix("CPU:")?;
    let (cpu, rest) = rest.split_once(' ')?;
    let n: String = rest
        .trim_start_matches('[')
        .trim_start_matches("LOST ")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((cpu.trim().parse().ok()?, n.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `event_part` as it was, trimming and searching sub-slices: the
    /// reference the one-walk form must agree with.
    fn event_part_reference<'a>(line: &Line<'a>) -> Result<Head<'a>, &'static str> {
        let (l, close, format) = (line.text, line.close, line.format);
        let rest = l.get(close + 1..).unwrap_or_default().trim_ascii_start();
        // Optional flags column, then `<time>:`.
        let rest = match rest.bytes().position(|b| b == b' ') {
            Some(sp) if !rest.get(..sp).unwrap_or_default().ends_with(':') => {
                rest.get(sp + 1..).unwrap_or_default().trim_ascii_start()
            }
            Some(_) => rest,
            None if rest.ends_with(':') => rest,
            None => "",
        };
        let (ts_ns, rest) = match plain_time(rest.as_bytes()) {
            Some((ts, after)) => (ts, rest.get(after..).unwrap_or_default()),
            None => {
                let colon = time_end(rest.as_bytes()).ok_or("no `<time>:`")?;
                let (time, rest) = (
                    rest.get(..colon).unwrap_or_default(),
                    rest.get(colon + 2..).unwrap_or_default(),
                );
                (
                    ts_ns(time).ok_or("time is not `<seconds>.<fraction>`")?,
                    rest,
                )
            }
        };
        let rest = rest.trim_ascii_start();
        // The event's name is a few bytes long: a plain loop.
        let c = rest
            .bytes()
            .position(|b| b == b':')
            .ok_or("no `<event>:`")?;
        let (event, payload) = (
            rest.get(..c).unwrap_or_default(),
            rest.get(c + 1..).unwrap_or_default(),
        );
        // perf names events `sched:sched_switch`.
        let (event, payload) = match format {
            Format::Perf => match payload.split_once(':') {
                Some((name, p)) if !name.contains(' ') => (name, p),
                _ => (event, payload),
            },
            _ => (event, payload),
        };
        Ok(Head {
            comm: line.comm,
            pid: line.pid,
            tgid: line.tgid,
            cpu: line.cpu,
            ts_ns,
            event: event.trim_ascii(),
            payload: payload.trim_ascii_start(),
            text: l,
        })
    }

    /// The time, event and payload read in one walk are those the
    /// reference reads, on lines of every tool's shape, each cut short
    /// at every byte and with every byte replaced by a separator.
    #[test]
    fn event_parts_are_the_references() {
        let lines = [
            (
                Format::Ftrace,
                "  bash-12  [001] d..2.  10.000003: sched_switch: prev_comm=bash prev_pid=12",
            ),
            (
                Format::Ftrace,
                "  bash-12  (   10) [001] ....  5.1: sched_waking: comm=a pid=7",
            ),
            (Format::Ftrace, "  bash-12  [001]  10.000003 : print: text"),
            (
                Format::TraceCmd,
                "bash-12 [001] 10.000003: sched_switch: bash:12 [120] S ==> a:7 [120]",
            ),
            (
                Format::TraceCmd,
                "bash-12 [001] 123456789012.123456789012: x:",
            ),
            (
                Format::Perf,
                "bash 10/12 [001] 10.000001: sched:sched_process_exit: comm=bash pid=12",
            ),
            (
                Format::Perf,
                "bash 12 [001] 10.000001:   1 sched:sched_switch: a b:c",
            ),
            (Format::Perf, "bash 12 [001] 10:\tx y: z"),
        ];
        let mut n = 0;
        for (format, base) in lines {
            let mut variants = Vec::new();
            for k in 0..=base.len() {
                variants.push(base[..k].to_string());
                for sep in [" ", ":", ".", "\t", "9", ""] {
                    if k < base.len() {
                        variants.push(format!("{}{sep}{}", &base[..k], &base[k + 1..]));
                    }
                }
            }
            for v in variants {
                let v = v.trim_ascii_end();
                let Ok((comm, pid, tgid, cpu, close)) = context(v, format) else {
                    continue;
                };
                let line = Line {
                    number: 1,
                    at: 0,
                    comm,
                    pid,
                    tgid,
                    cpu,
                    close,
                    format,
                    text: v,
                };
                assert_eq!(event_part(&line), event_part_reference(&line), "{v:?}");
                n += 1;
            }
        }
        assert!(n > 1000, "{n} lines compared");
    }

    /// A trace read whole (each line's context taken from a line before
    /// that starts alike) gives each event as a reader of that line
    /// alone does, in every format: same task on the same CPU, another
    /// CPU, a comm that holds brackets and digits, a tgid column, a line
    /// cut right after its CPU column, a CPU number that runs on past the
    /// last one's `]`, perf's `pid/tid`; and into one event filled again
    /// and again, whatever kind came before.
    #[test]
    fn contexts_taken_from_the_line_before_are_the_lines_own() {
        let ftrace = [
            "  bash-12  [001] d..2.  10.000001: sched_waking: comm=a pid=7 prio=120 target_cpu=001",
            "  bash-12  [001] d..2.  10.000002: sched_wakeup: comm=a pid=7 prio=120 target_cpu=001",
            "  bash-12  [001] d..2.  10.000003: sched_switch: prev_comm=bash prev_pid=12 prev_prio=120 prev_state=S ==> next_comm=a next_pid=7 next_prio=120",
            "  bash-12  [002] d..2.  10.000004: sched_waking: comm=a pid=7 prio=120 target_cpu=001",
            " a[1]b-13  [002] d..2.  10.000005: sched_waking: comm=a pid=7 prio=120 target_cpu=001",
            " a[1]b-13  [002] d..2.  10.000006: sched_process_exit: comm=a[1]b pid=13 prio=120",
            " a[1]b-14  [002] d..2.  10.000007: sched_process_exit: comm=a[1]b pid=14 prio=120",
            "  bash-12  (   10) [001] d..2.  10.000008: sched_process_exit: comm=bash pid=12 prio=120",
            "  bash-12  (   10) [001] d..2.  10.000009: sched_process_exit: comm=bash pid=12 prio=120",
            "  bash-12  (   11) [001] d..2.  10.000010: sched_process_exit: comm=bash pid=12 prio=120",
            "  bash-12  [001] d..2.  10.000013: sched_process_fork: comm=bash pid=12 child_comm=bash child_pid=15",
            "  bash-12  [001] d..2.  10.000014: tracing_mark_write: hello",
            "  bash-12  [001] d..2.  10.000015: irq_handler_entry: irq=1 name=x",
            "  bash-12  [001] d..2.  10.000016: sched_switch: prev_comm=bash prev_pid=12 prev_prio=120 prev_state=R+ ==> next_comm=kworker/0:1 next_pid=8 next_prio=120",
            "  kworker/0:1-8  [001] d..2.  10.000016: sched_switch: prev_comm=kworker/0:1 prev_pid=8 prev_prio=120 prev_state=D ==> next_comm=bash next_pid=12 next_prio=120",
            "  bash-12  [001] d..2.  10.000017: sched_wakeup: comm=a b pid=7 prio=120 target_cpu=001",
            "  bash-12  [001] d..2.  10.000018: sched_wakeup_new: comm=c pid=9 prio=120 target_cpu=001",
            // Names past the 24 bytes a `Name` holds inline, between short
            // ones in the same fields: the heap and back.
            "  a-thread-name-longer-than-24-12  [001] d..2.  10.000019: sched_switch: prev_comm=a-thread-name-longer-than-24 prev_pid=12 prev_prio=120 prev_state=S ==> next_comm=b next_pid=7 next_prio=120",
            "  b-7  [001] d..2.  10.000020: sched_switch: prev_comm=b prev_pid=7 prev_prio=120 prev_state=R+ ==> next_comm=another-name-of-more-than-24-bytes next_pid=16 next_prio=120",
            "  bash-12  [001] d..2.  10.000021: tracing_mark_write: a marker text of more than twenty-four bytes",
            "  bash-12  [001]",
            "  bash-12  [001] d..2.  10.000011: sched_process_exit: comm=bash pid=12 prio=120",
            "  bash-12  [0011] d..2.  10.000012: sched_process_exit: comm=bash pid=12 prio=120",
        ];
        let perf = [
            "bash 10/12 [001] 10.000001: sched:sched_process_exit: comm=bash pid=12 prio=120",
            "bash 10/12 [001] 10.000002: sched:sched_process_exit: comm=bash pid=12 prio=120",
            "bash 10/13 [001] 10.000003: sched:sched_process_exit: comm=bash pid=13 prio=120",
        ];
        for (format, lines) in [(Format::Ftrace, &ftrace[..]), (Format::Perf, &perf[..])] {
            // Then backwards: each line's prefix was met lines before,
            // not just on the line before.
            let lines: Vec<&str> = lines.iter().chain(lines.iter().rev()).copied().collect();
            let text = lines.join("\n") + "\n";
            let mut whole = TextReader::new(text.as_bytes(), format);
            let mut reused = Event::default();
            // The same lines read without the task names, into an event
            // of their own: the same events but for those two names.
            let mut lean = TextReader::new(text.as_bytes(), format).without_task_names();
            let mut lean_ev = Event::default();
            let mut end = 0;
            for (i, l) in lines.iter().enumerate() {
                end += l.len() + 1;
                let alone_text = format!("{l}\n");
                let mut alone = TextReader::new(alone_text.as_bytes(), format);
                let a = alone.next_event().map_err(|e| e.what);
                // One event filled again and again, as a converter reads:
                // its strings are overwritten in place, or the kind
                // replaced when it changes.
                let w = whole
                    .read_into(&mut reused)
                    .map(|more| more.then(|| reused.clone()))
                    .map_err(|e| e.what);
                let n = lean
                    .read_into(&mut lean_ev)
                    .map(|more| more.then(|| lean_ev.clone()))
                    .map_err(|e| e.what);
                match (a, w) {
                    (Ok(Some(mut a)), Ok(Some(w))) => {
                        a.line = i as u64 + 1;
                        assert_eq!(a, w, "{l}");
                        a.comm.clear();
                        if let Kind::Wakeup { comm, .. } = &mut a.kind {
                            comm.clear();
                        }
                        assert_eq!(n, Ok(Some(a)), "{l}, without task names");
                    }
                    (Err(a), Err(w)) => {
                        assert_eq!(a, w, "{l}");
                        assert_eq!(n, Err(a), "{l}, without task names");
                        // An error ends a reading: go on after the line.
                        let rest = text.as_bytes().get(end..).unwrap();
                        whole = TextReader::new(rest, format);
                        whole.line = i as u64 + 1;
                        lean = TextReader::new(rest, format).without_task_names();
                        lean.line = i as u64 + 1;
                    }
                    (a, w) => panic!("{l}: alone {a:?}, in the trace {w:?}"),
                }
            }
        }
    }

    /// The readings in the kernel's order agree with the readings by
    /// search wherever both read a payload, comms with spaces, `=`, `:`
    /// and digits included; numbers read by the short path are the
    /// general path's.
    #[test]
    fn in_order_readings_agree_with_the_general_ones() {
        for (prev, state, next) in [
            ("bash", "S", "swapper/1"),
            ("kworker/u4:2", "R+", "<idle>"),
            ("a b c", "D|K", "x y"),
            ("", "R", ""),
            ("n=1 p:2", "I", "99"),
            ("x ==> y", "S", "z"),
        ] {
            for (pp, np) in [("0", "1"), ("4101", "2147483647"), ("12", "007")] {
                let p = format!(
                    "prev_comm={prev} prev_pid={pp} prev_prio=-1 prev_state={state} ==> next_comm={next} next_pid={np} next_prio=120"
                );
                let fast = switch_in_order(&p);
                assert!(fast.is_some(), "{p}");
                assert_eq!(fast, switch_by_search(&p), "{p}");
                let w = format!("comm={prev} pid={pp} prio=120 target_cpu=001");
                let fast = wakeup_in_order(&w).map(|(c, p)| (c.to_string(), p));
                let slow = (|| {
                    Some((
                        between(&w, &COMM, Some(&PID))?.to_string(),
                        num(between(&w, &PID, None)?)?,
                    ))
                })();
                assert_eq!(fast, slow, "{w}");
            }
        }
        for s in [
            "0",
            "123 x",
            "-5",
            "1-2",
            "2147483647",
            "2147483648",
            "12345678901",
            "  12",
            "007",
            "9",
            "x",
            "",
        ] {
            let slow = {
                let t = s.trim_start();
                let end = t
                    .bytes()
                    .take_while(|b| *b == b'-' || b.is_ascii_digit())
                    .count();
                t.get(..end).and_then(|d| d.parse::<i32>().ok())
            };
            assert_eq!(num(s), slow, "{s:?}");
        }
        for t in [
            "2740.000760: x",
            "0.1: x",
            "12.123456789: x",
            "1.1234567890: x",
            "99999999999999999999.1: x",
            "1.: x",
            ".5: x",
            "5.5:x",
            "9223372036.854775807: x",
            "9223372036.854775808: x",
            "9223372037.0: x",
            "9223372036854775807.0: x",
            "9223372036854775808.0: x",
            "0000000001.000000001: x",
            "7.123456789",
            "7.12:",
            "7.12: ",
        ] {
            let slow = time_end(t.as_bytes()).and_then(|c| Some((ts_ns(t.get(..c)?)?, c + 2)));
            if let Some(fast) = plain_time(t.as_bytes()) {
                assert_eq!(Some(fast), slow, "{t}");
            }
        }
        assert_eq!(plain_time(b"2740.000760: x"), Some((2_740_000_760_000, 13)));
    }

    /// A context's pid and CPU are read as `parse` reads them.
    #[test]
    fn pids_and_cpus_read_as_parse_does() {
        for p in [
            "12",
            " 12 ",
            "+12",
            "+",
            "",
            "0",
            "007",
            "2147483647",
            "2147483648",
            "1x",
            "x1",
            "1 2",
            "++1",
            "99999999999",
        ] {
            assert_eq!(
                pid_after_dash(p),
                p.trim_ascii().parse::<i32>().ok(),
                "{p:?}"
            );
        }
        for cpu in ["0", "001", "4294967295", "4294967296", "99999999999"] {
            let l = format!("  bash-12  [{cpu}] d..2.  10.000001: x: y");
            let parsed = cpu.parse::<u32>().ok();
            let read = context(&l, Format::Ftrace).ok().map(|c| c.3);
            assert_eq!(read, parsed, "{cpu}");
        }
    }

    /// A kind copied over another, of any variant, names inline or on
    /// the heap (over 24 bytes), is the kind it was copied from.
    #[test]
    fn kinds_copied_over_any_kind_are_equal() {
        let long = "a comm longer than twenty-four bytes";
        let kinds = |n: &str| {
            vec![
                Kind::Switch {
                    prev_comm: n.into(),
                    prev_pid: 1,
                    prev_state: "R+".into(),
                    next_comm: format!("{n}2").into(),
                    next_pid: 2,
                },
                Kind::Wakeup {
                    event: "sched_waking".into(),
                    comm: n.into(),
                    pid: 3,
                },
                Kind::Fork {
                    pid: 4,
                    child_comm: n.into(),
                    child_pid: 5,
                },
                Kind::Exit { pid: 6 },
                Kind::Marker(n.into()),
                Kind::Other(n.into()),
            ]
        };
        let all: Vec<Kind> = [kinds("sh"), kinds(long), kinds("")].concat();
        for from in &all {
            assert_eq!(&from.clone(), from);
            for to in &all {
                let mut k = to.clone();
                k.clone_from(from);
                assert_eq!(&k, from, "{to:?} <- {from:?}");
            }
        }
    }

    /// An event whose text was read before is taken from the reader's
    /// slots: in traces of more texts than slots, which share slots and
    /// push each other out, met again in another order, each event is
    /// still the one its line reads as alone; a waking and a wakeup of
    /// the same payload stay apart, and so do the same lines read in
    /// perf's shape and without the task names.
    #[test]
    fn events_read_again_from_their_text_are_their_lines_own() {
        // Four texts for each `i`: more texts than slots in a round.
        let n = Parsed::SLOTS as i32 / 3;
        let mut ftrace = Vec::new();
        let mut perf = Vec::new();
        for round in 0..3 {
            for i in 0..n {
                let p = if round == 1 { n - i } else { i };
                let q = (p * 7) % n;
                let (a, b) = (format!("t{p}"), format!("u {q}"));
                let ts = format!("{}.{:06}", 10 + round, i);
                for (event, payload) in [
                    ("sched_waking", format!("comm={a} pid={p} prio=120 target_cpu=001")),
                    ("sched_wakeup", format!("comm={a} pid={p} prio=120 target_cpu=001")),
                    ("sched_switch", format!("prev_comm={a} prev_pid={p} prev_prio=120 prev_state=S ==> next_comm={b} next_pid={q} next_prio=120")),
                    ("sched_switch", format!("prev_comm={a} prev_pid={p} prev_prio=120 prev_state=R+ ==> next_comm={b} next_pid={q} next_prio=120")),
                ] {
                    ftrace.push(format!("  bash-12  [001] d..2.  {ts}: {event}: {payload}"));
                    perf.push(format!("bash 12 [001] {ts}: sched:{event}: {payload}"));
                }
            }
            // One text longer than a slot keeps, twice.
            let long = "x".repeat(Parsed::MAX_KEY);
            for _ in 0..2 {
                ftrace.push(format!("  bash-12  [001] d..2.  10.5: sched_waking: comm={long} pid=3 prio=120 target_cpu=001"));
            }
        }
        for (format, lines) in [(Format::Ftrace, ftrace), (Format::Perf, perf)] {
            let text = lines.join("\n") + "\n";
            for (names, shared) in [(true, false), (false, false), (false, true), (true, true)] {
                let mut r = TextReader::new(text.as_bytes(), format);
                if !names {
                    r = r.without_task_names();
                }
                if shared {
                    r = r.shared_kinds();
                }
                let mut kinds = Kinds::default();
                // Events in a ring, as in a thread's batches: a shared
                // kind leaves the event's own older one behind.
                let mut ring: Vec<Event> = (0..3).map(|_| Event::default()).collect();
                let mut slots = [0; 3];
                for (i, l) in lines.iter().enumerate() {
                    let ev = &mut ring[i % 3];
                    assert!(r.read_into(ev).unwrap(), "{l}");
                    let one = format!("{l}\n");
                    let mut alone = TextReader::new(one.as_bytes(), format);
                    if !names {
                        alone = alone.without_task_names();
                    }
                    let mut want = alone.next_event().unwrap().unwrap();
                    want.line = i as u64 + 1;
                    slots[match ev.slot {
                        Slot::Here => 0,
                        Slot::Kept(_) => 1,
                        Slot::Shared(_) => 2,
                    }] += 1;
                    assert_eq!(kinds.of(ev), &want.kind, "{l}");
                    let mut ev = ev.clone();
                    (ev.kind, ev.slot) = (want.kind.clone(), Slot::Here);
                    assert_eq!(ev, want, "{l}");
                }
                assert!(!r.read_into(&mut ring[0]).unwrap());
                // The shared reader shared, and filled its slots first.
                assert_eq!(slots[2] > 0, shared, "{slots:?}");
                assert_eq!(slots[1] > 0, shared, "{slots:?}");
            }
        }
    }

    /// Tasks whose names are hex digits keep their events; call-chain
    /// frames under an event are skipped by their shape.
    #[test]
    fn perf_tasks_with_hex_names_are_not_frames() {
        let text = "\
             cc1  4101 [000]  2740.161572: sched:sched_switch: prev_comm=cc1 prev_pid=4101 prev_prio=120 prev_state=S ==> next_comm=dd next_pid=4102 next_prio=120
\tffffffff8104f45a __schedule+0x2ea ([kernel.kallsyms])
\t    7f2a1c0e4a3d [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)
              dd  4102 [000]  2740.161601: sched:sched_switch: prev_comm=dd prev_pid=4102 prev_prio=120 prev_state=R ==> next_comm=bc next_pid=4103 next_prio=120
              bc  4103 [000]  2740.161621: sched:sched_switch: prev_comm=bc prev_pid=4103 prev_prio=120 prev_state=S ==> next_comm=ed next_pid=4104 next_prio=120
              ed  4104 [001]  2740.161633: sched:sched_waking: comm=cc1 pid=4101 prio=120 target_cpu=000
";
        let mut r = TextReader::new(text.as_bytes(), Format::Perf);
        let mut comms = Vec::new();
        while let Some(ev) = r.next_event().unwrap() {
            comms.push(ev.comm);
        }
        assert_eq!(comms, ["cc1", "dd", "bc", "ed"]);
        assert!(perf_frame(
            "ffffffff8104f45a __schedule+0x2ea ([kernel.kallsyms])"
        ));
        assert!(!perf_frame(
            "cc1  4101 [000]  2740.161572: sched:sched_switch: x (y)"
        ));
    }

    /// The one-pass readings (times, field ends, event names) are the
    /// general ones, on any text made of the bytes they look for and the
    /// ones around them.
    mod times {
        use super::super::{byte_from, known_event, plain_time, same, short_time, time_end, ts_ns};
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(5_000))]
            /// A word at a time compares as a byte at a time: equal
            /// strings of every length, and strings that differ in one
            /// byte anywhere, or in length.
            #[test]
            fn words_compare_as_bytes(
                a in proptest::collection::vec(any::<u8>(), 0..70),
                at in any::<usize>(),
                flip in 1u8..=255,
                cut in 0usize..3,
            ) {
                prop_assert!(same(&a, &a.clone()));
                let mut b = a.clone();
                if let Some(x) = b.get_mut(at % a.len().max(1)) {
                    *x ^= flip;
                }
                prop_assert_eq!(same(&a, &b), a == b);
                let shorter = &a[..a.len().saturating_sub(cut)];
                prop_assert_eq!(same(&a, shorter), a.as_slice() == shorter);
            }

            /// Eight bytes a step, the usual shape reads as the general
            /// path does, whenever eight bytes of fraction are there.
            #[test]
            fn short_times_as_the_general_path(
                sec in "[0-9]{1,7}",
                frac in "[0-9]{1,7}",
                tail in "[ -~]{0,12}",
            ) {
                let t = format!("{sec}.{frac}: {tail}");
                let slow = time_end(t.as_bytes())
                    .and_then(|c| Some((ts_ns(t.get(..c)?)?, c + 2)));
                let fast = short_time(t.as_bytes());
                prop_assert_eq!(fast.is_some(), t.len() >= sec.len() + 9, "{}", t);
                if let Some(fast) = fast {
                    prop_assert_eq!(Some(fast), slow, "{}", t);
                }
            }

            #[test]
            fn times_as_the_general_path(t in "[0-9]{0,21}(\\.[0-9]{0,11})?(: ?|:x| :)?[a-z]?") {
                let slow = time_end(t.as_bytes())
                    .and_then(|c| Some((ts_ns(t.get(..c)?)?, c + 2)));
                if let Some(fast) = plain_time(t.as_bytes()) {
                    prop_assert_eq!(Some(fast), slow, "{}", t);
                } else {
                    // The shape it reads, with 1 to 18 digits, then 1 to 9.
                    let shaped = t.split_once('.').is_some_and(|(s, f)| {
                        let f = f.split(':').next().unwrap_or("");
                        (1..=18).contains(&s.len())
                            && (1..=9).contains(&f.len())
                            && t.contains(": ")
                    });
                    prop_assert!(!shaped || slow.is_none(), "{}", t);
                }
            }

            /// Eight bytes a step find what one byte a step finds, from
            /// any offset, with the byte anywhere (or nowhere, or past
            /// the last whole word).
            #[test]
            fn bytes_found_a_word_at_a_time(
                b in proptest::collection::vec(prop_oneof![Just(b' '), Just(b'='), any::<u8>()], 0..40),
                from in 0usize..44,
                x in prop_oneof![Just(b' '), Just(b'='), Just(0u8), Just(0x80u8), any::<u8>()],
            ) {
                let slow = b.get(from..).and_then(|t| t.iter().position(|&c| c == x)).map(|p| from + p);
                prop_assert_eq!(byte_from(&b, from, x), slow);
            }

            /// The names compared a word at a time are the three, each
            /// with its `:`, and nothing else is.
            #[test]
            fn known_events_by_words(
                name in prop_oneof![
                    Just("sched_switch".to_string()),
                    Just("sched_waking".to_string()),
                    Just("sched_wakeup".to_string()),
                    Just("sched_wakeup_new".to_string()),
                    "sched_[a-z_]{0,8}",
                    "[a-z_]{0,14}",
                ],
                cut in 0usize..20,
                after in "[: a-z]{0,3}",
            ) {
                let line = format!("{name}{after}");
                let b = line.as_bytes().get(..cut.min(line.len())).unwrap_or_default();
                let named = ["sched_switch:", "sched_waking:", "sched_wakeup:"]
                    .iter()
                    .any(|n| b.starts_with(n.as_bytes()));
                prop_assert_eq!(known_event(b), if named { 12 } else { 0 }, "{:?}", line);
            }
        }
    }
}
