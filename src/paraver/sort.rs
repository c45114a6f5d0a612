//! The records in time order, as a `.prv` has them, in bounded memory.
//!
//! A record is complete only when what it says has ended: a state when
//! it ends (its time is its start), a message when both halves are met
//! (its time is its send). So a record may come after others of later
//! times. What is open says how far back one may still come: the start
//! of every state on top of a thread's stack and the send of every
//! message not met yet are **holds**; everything up to the earliest hold
//! (and up to now) is final and written, in order; what comes after the
//! earliest hold waits, sorted ([`Sorted`]: those that come in order are
//! only appended). A run whose records all come in order (metrics only)
//! never waits.
//!
//! Memory stays bounded: past [`LIMIT`] bytes waiting, the encoder cuts
//! every open state where it is (one record up to now, the same state
//! going on from now: Paraver draws and adds it up the same) and, if that
//! is not enough, lets the messages in flight go: their records are then
//! written where they complete, before records of earlier times.

use crate::order::{MinQueue, Sorted};
use std::collections::VecDeque;
use std::io::{self, BufWriter, Write};

/// Bytes of records waiting before the open states are cut.
pub const LIMIT: usize = 16 << 20;

/// Something open that a record of its time will complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Hold {
    /// The state on top of a thread's stack (its global number).
    State(u32),
    /// A message (its channel and sequence).
    Message(u32, u64),
}

/// Records in, records out by (time, arrival).
pub struct Reorder<W: Write> {
    body: BufWriter<W>,
    /// Waiting records of streams that come in time order (the events;
    /// each thread's states), by stream; and the head of each, smallest
    /// first. A k-way merge: the heap holds a record a stream.
    streams: Vec<Stream>,
    heads: MinQueue<(i64, u64), u32>,
    /// Waiting records of no ordered stream (messages complete in any
    /// order).
    loose: Sorted<(i64, u64), Box<[u8]>>,
    bytes: usize,
    seq: u64,
    holds: Holds,
    now: i64,
}

impl<W: Write> Reorder<W> {
    /// Records go to `body` as they become final.
    pub fn new(body: W) -> Reorder<W> {
        Reorder {
            body: BufWriter::with_capacity(256 << 10, body),
            streams: Vec::new(),
            heads: MinQueue::default(),
            loose: Sorted::default(),
            bytes: 0,
            seq: 0,
            holds: Holds::default(),
            now: i64::MIN,
        }
    }

    /// Times up to this one are final.
    fn mark(&self) -> i64 {
        self.holds.first().map_or(self.now, |t| t.min(self.now))
    }

    fn nothing_waits(&self) -> bool {
        self.heads.is_empty() && self.loose.is_empty()
    }

    /// One record (its line, newline included) of `time`, of the ordered
    /// `stream` if it has one (its records come in time order).
    pub fn push(&mut self, time: i64, line: &[u8], stream: Option<u32>) -> io::Result<()> {
        if self.nothing_waits() && time <= self.mark() {
            return self.body.write_all(line);
        }
        self.seq += 1;
        self.bytes += line.len();
        let key = (time, self.seq);
        let Some(n) = stream.map(|n| n as usize) else {
            self.loose.push(key, line.into());
            return Ok(());
        };
        if self.streams.len() <= n {
            self.streams.resize_with(n + 1, Stream::default);
        }
        let q = &mut self.streams[n];
        match q.keys.back() {
            None => self.heads.push(key, n as u32),
            // Out of its stream's order after all: with the loose ones.
            Some((last, _)) if *last > key => {
                self.loose.push(key, line.into());
                return Ok(());
            }
            Some(_) => {}
        }
        q.keys.push_back((key, line.len() as u32));
        q.bytes.extend(line);
        Ok(())
    }

    /// The smallest waiting key.
    fn first(&self) -> Option<(i64, u64)> {
        match (self.heads.peek().map(|(k, _)| *k), self.loose.first()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Writes out the record of the smallest key; its length.
    fn pop_into(&mut self) -> io::Result<usize> {
        let from_streams = match (self.heads.peek(), self.loose.first()) {
            (None, None) => return Ok(0),
            (Some((a, _)), Some(b)) => *a < b,
            (a, _) => a.is_some(),
        };
        if !from_streams {
            let Some((_, line)) = self.loose.pop() else {
                return Ok(0);
            };
            self.body.write_all(&line)?;
            return Ok(line.len());
        }
        let Some((_, &n)) = self.heads.peek() else {
            return Ok(0);
        };
        let q = &mut self.streams[n as usize];
        let Some((_, len)) = q.keys.pop_front() else {
            return Ok(0);
        };
        let len = len as usize;
        let (a, b) = q.bytes.as_slices();
        let first = len.min(a.len());
        self.body.write_all(&a[..first])?;
        self.body.write_all(&b[..len - first])?;
        q.bytes.drain(..len);
        let next = q.keys.front().map(|(k, _)| (*k, n));
        self.heads.replace_top(next);
        Ok(len)
    }

    /// Something open since `time`.
    pub fn hold(&mut self, time: i64, what: Hold) {
        self.holds.hold(time, what);
    }

    /// What was open is complete (its record pushed).
    pub fn release(&mut self, what: Hold) {
        self.holds.release(what);
    }

    /// The run is at `now`: what is final is written.
    pub fn advance(&mut self, now: i64) -> io::Result<()> {
        self.now = self.now.max(now);
        if self.nothing_waits() {
            return Ok(());
        }
        let mark = self.mark();
        while self.first().is_some_and(|(t, _)| t <= mark) {
            self.bytes -= self.pop_into()?;
        }
        Ok(())
    }

    /// Whether more waits than [`LIMIT`].
    pub fn full(&self) -> bool {
        self.bytes > LIMIT
    }

    /// Messages in flight no longer hold records back.
    pub fn let_messages_go(&mut self) {
        self.holds.let_messages_go();
    }

    /// Every record written, in order: where they went.
    pub fn finish(mut self) -> io::Result<W> {
        self.holds = Holds::default();
        self.advance(i64::MAX)?;
        self.body.into_inner().map_err(|e| e.into_error())
    }
}

/// The waiting records of one ordered stream: their keys and lengths,
/// and their bytes one after the other in a ring (no allocation a
/// record).
#[derive(Default)]
struct Stream {
    keys: VecDeque<((i64, u64), u32)>,
    bytes: VecDeque<u8>,
}

/// The holds, oldest first: a list through slots (one a thread, by its
/// number; one a message in flight), each hold moved to the end as it is
/// taken. Holds are taken at the run's time, the latest yet, so the list
/// stays in time order and its head is the earliest: every operation is
/// O(1) (a balanced tree or a heap was a fifth of the Paraver writer's
/// time).
#[derive(Default)]
struct Holds {
    slots: Vec<Slot>,
    head: Option<u32>,
    tail: Option<u32>,
    /// The slots of threads: slot of thread n (`u32::MAX`: none yet).
    thread_slot: Vec<u32>,
    message_slot: foldhash::HashMap<(u32, u64), u32>,
    free: Vec<u32>,
}

#[derive(Clone, Copy)]
struct Slot {
    time: i64,
    prev: Option<u32>,
    next: Option<u32>,
    linked: bool,
}

impl Holds {
    fn first(&self) -> Option<i64> {
        self.head.map(|h| self.slots[h as usize].time)
    }

    fn slot_of(&mut self, what: Hold, make: bool) -> Option<u32> {
        let found = match what {
            Hold::State(n) => self
                .thread_slot
                .get(n as usize)
                .copied()
                .filter(|&s| s != u32::MAX),
            Hold::Message(c, q) => self.message_slot.get(&(c, q)).copied(),
        };
        if found.is_some() || !make {
            return found;
        }
        let blank = Slot {
            time: 0,
            prev: None,
            next: None,
            linked: false,
        };
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(blank);
            self.slots.len() as u32 - 1
        });
        match what {
            Hold::State(n) => {
                let n = n as usize;
                if self.thread_slot.len() <= n {
                    self.thread_slot.resize(n + 1, u32::MAX);
                }
                self.thread_slot[n] = slot;
            }
            Hold::Message(c, q) => {
                self.message_slot.insert((c, q), slot);
            }
        }
        Some(slot)
    }

    fn unlink(&mut self, s: u32) {
        let Slot {
            prev, next, linked, ..
        } = self.slots[s as usize];
        if !linked {
            return;
        }
        match prev {
            Some(p) => self.slots[p as usize].next = next,
            None => self.head = next,
        }
        match next {
            Some(n) => self.slots[n as usize].prev = prev,
            None => self.tail = prev,
        }
        self.slots[s as usize].linked = false;
    }

    fn hold(&mut self, time: i64, what: Hold) {
        let Some(s) = self.slot_of(what, true) else {
            return;
        };
        self.unlink(s);
        // After the last hold of a time not later (a hold taken earlier
        // than the latest is put in its place).
        let mut after = self.tail;
        while let Some(a) = after.filter(|&a| self.slots[a as usize].time > time) {
            after = self.slots[a as usize].prev;
        }
        let next = match after {
            Some(a) => self.slots[a as usize].next,
            None => self.head,
        };
        self.slots[s as usize] = Slot {
            time,
            prev: after,
            next,
            linked: true,
        };
        match after {
            Some(a) => self.slots[a as usize].next = Some(s),
            None => self.head = Some(s),
        }
        match next {
            Some(n) => self.slots[n as usize].prev = Some(s),
            None => self.tail = Some(s),
        }
    }

    fn release(&mut self, what: Hold) {
        let Some(s) = self.slot_of(what, false) else {
            return;
        };
        self.unlink(s);
        if let Hold::Message(c, q) = what {
            self.message_slot.remove(&(c, q));
            self.free.push(s);
        }
    }

    fn let_messages_go(&mut self) {
        let slots: Vec<u32> = self.message_slot.drain().map(|(_, s)| s).collect();
        for s in slots {
            self.unlink(s);
            self.free.push(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(r: Reorder<Vec<u8>>) -> String {
        String::from_utf8(r.finish().unwrap()).unwrap()
    }

    #[test]
    fn a_record_behind_an_open_state_waits_for_it() {
        let mut r = Reorder::new(Vec::new());
        r.hold(0, Hold::State(1));
        r.advance(5).unwrap();
        r.push(5, b"e5\n", Some(0)).unwrap();
        r.push(7, b"e7\n", Some(0)).unwrap();
        // The state of 0..8 completes: it goes first.
        r.release(Hold::State(1));
        r.push(0, b"s0\n", Some(1)).unwrap();
        r.advance(8).unwrap();
        r.push(8, b"e8\n", Some(0)).unwrap();
        assert_eq!(written(r), "s0\ne5\ne7\ne8\n");
    }

    #[test]
    fn ties_keep_their_arrival_and_in_order_records_never_wait() {
        let mut r = Reorder::new(Vec::new());
        for t in [1, 1, 2, 3] {
            r.advance(t).unwrap();
            r.push(t, format!("{t}\n").as_bytes(), Some(0)).unwrap();
            assert_eq!(r.bytes, 0);
        }
        r.hold(3, Hold::Message(0, 9));
        r.advance(4).unwrap();
        r.push(4, b"4a\n", Some(0)).unwrap();
        r.push(4, b"4b\n", Some(0)).unwrap();
        r.release(Hold::Message(0, 9));
        r.push(3, b"m3\n", None).unwrap();
        r.advance(4).unwrap();
        assert_eq!(written(r), "1\n1\n2\n3\nm3\n4a\n4b\n");
    }
}
