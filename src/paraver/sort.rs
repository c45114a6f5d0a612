//! The records in time order, as a `.prv` has them, in bounded memory.
//!
//! A record is complete only when what it says has ended: a state when
//! it ends (its time is its start), a message when both halves are met
//! (its time is its send). But its place is known when it begins: the
//! run is then at its time. So a state that goes on top of a thread's
//! stack, or a message that is sent, takes a **slot** at the end of the
//! queue of records, and every record that completes at once (an event
//! at the run's time) goes after it; when the state ends, or the message
//! is met, its record fills its slot. The queue is written out from its
//! front up to the first slot not filled yet. Everything goes in in the
//! run's order, which is time order: no record is ever sorted.
//!
//! Memory stays bounded: past [`LIMIT`] bytes waiting, the encoder cuts
//! the state whose slot holds the queue back where it is (one record up
//! to now, the same state going on from now in a new slot: Paraver draws
//! and adds it up the same); a message that holds it back is let go: its
//! record is written where it completes, after records of later times.

use std::collections::VecDeque;
use std::io::{self, BufWriter, Write};

/// Bytes of records waiting before the slot at the front is cut.
pub const LIMIT: usize = 16 << 20;

/// What a slot waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// The state on top of a thread's stack (its global number).
    State(u32),
    /// A message (its channel and sequence).
    Message(u32, u64),
}

/// A place in the queue.
#[derive(Clone, Copy)]
enum Entry {
    /// A complete record of `len` bytes, next in `ring`.
    Bytes(u32),
    /// A slot not filled yet.
    Slot(Hold),
    /// A slot filled: the record is `fills[i]`.
    Filled(u32),
    /// A slot with nothing in it (a state of no length, a message let
    /// go).
    Empty,
}

/// Records in, records out in the order of their places.
pub struct Reorder<W: Write> {
    out: BufWriter<W>,
    queue: VecDeque<Entry>,
    /// The number of the place at the queue's front (places are numbered
    /// from 0 as they are taken).
    base: u64,
    /// The bytes of the complete records, one after the other from
    /// `head`: appended, and taken from the front.
    ring: Vec<u8>,
    head: usize,
    /// Filled slots' records, and the buffers free for the next ones
    /// (kept, with their room, so that filling allocates nothing).
    fills: Vec<Vec<u8>>,
    free: Vec<u32>,
    /// The open slot of each thread's state (`u64::MAX`: none), and of
    /// each message in flight.
    state_slot: Vec<u64>,
    message_slot: foldhash::HashMap<(u32, u64), u64>,
    bytes: usize,
}

impl<W: Write> Reorder<W> {
    /// Records go to `out` as their turn comes.
    pub fn new(out: W) -> Reorder<W> {
        Reorder {
            out: BufWriter::with_capacity(256 << 10, out),
            queue: VecDeque::new(),
            base: 0,
            ring: Vec::new(),
            head: 0,
            fills: Vec::new(),
            free: Vec::new(),
            state_slot: Vec::new(),
            message_slot: Default::default(),
            bytes: 0,
        }
    }

    /// A complete record (its line, newline included), at the run's time.
    pub fn record(&mut self, line: &[u8]) -> io::Result<()> {
        if self.queue.is_empty() {
            return self.out.write_all(line);
        }
        self.ring.extend_from_slice(line);
        self.queue.push_back(Entry::Bytes(line.len() as u32));
        self.bytes += line.len();
        Ok(())
    }

    /// `who` begins at the run's time: its record's place.
    pub fn open(&mut self, who: Hold) {
        let place = self.base + self.queue.len() as u64;
        if let Some(old) = self.set_slot(who, Some(place)) {
            // Opened twice: the first place stays empty.
            if let Some(e) = self.entry(old) {
                *e = Entry::Empty;
            }
        }
        self.queue.push_back(Entry::Slot(who));
    }

    /// `who`'s record (empty: none), in its place; false if `who` has no
    /// place (a message let go): then nothing is written.
    pub fn close(&mut self, who: Hold, line: &[u8]) -> io::Result<bool> {
        let Some(place) = self.set_slot(who, None) else {
            return Ok(false);
        };
        let filled = if line.is_empty() {
            Entry::Empty
        } else {
            let i = match self.free.pop() {
                Some(i) => i,
                None => {
                    self.fills.push(Vec::new());
                    self.fills.len() as u32 - 1
                }
            };
            self.fills[i as usize].extend_from_slice(line);
            self.bytes += line.len();
            Entry::Filled(i)
        };
        if let Some(e) = self.entry(place) {
            *e = filled;
        }
        if place == self.base {
            self.drain()?;
        }
        Ok(true)
    }

    /// What holds the queue back when more than [`LIMIT`] waits.
    pub fn blocking(&self) -> Option<Hold> {
        if self.bytes <= LIMIT {
            return None;
        }
        match self.queue.front() {
            Some(Entry::Slot(who)) => Some(*who),
            _ => None,
        }
    }

    /// `who`'s place is given up: its record, if it comes, is written
    /// where it completes.
    pub fn let_go(&mut self, who: Hold) -> io::Result<()> {
        if let Some(place) = self.set_slot(who, None) {
            if let Some(e) = self.entry(place) {
                *e = Entry::Empty;
            }
            if place == self.base {
                self.drain()?;
            }
        }
        Ok(())
    }

    /// Every record written, in order (a slot never filled stays empty):
    /// where they went.
    pub fn finish(mut self) -> io::Result<W> {
        for e in self.queue.iter_mut() {
            if let Entry::Slot(_) = e {
                *e = Entry::Empty;
            }
        }
        self.drain()?;
        self.out.into_inner().map_err(|e| e.into_error())
    }

    fn entry(&mut self, place: u64) -> Option<&mut Entry> {
        let i = place.checked_sub(self.base)?;
        self.queue.get_mut(usize::try_from(i).ok()?)
    }

    /// Sets `who`'s slot; the one it had.
    fn set_slot(&mut self, who: Hold, place: Option<u64>) -> Option<u64> {
        match who {
            Hold::State(n) => {
                let n = n as usize;
                if self.state_slot.len() <= n {
                    self.state_slot.resize(n + 1, u64::MAX);
                }
                let old = std::mem::replace(&mut self.state_slot[n], place.unwrap_or(u64::MAX));
                (old != u64::MAX).then_some(old)
            }
            Hold::Message(c, q) => match place {
                Some(p) => self.message_slot.insert((c, q), p),
                None => self.message_slot.remove(&(c, q)),
            },
        }
    }

    /// Writes the queue's front up to the first slot not filled.
    fn drain(&mut self) -> io::Result<()> {
        // Records one after the other in the ring go out in one write.
        let mut run = 0usize;
        while let Some(&e) = self.queue.front() {
            match e {
                Entry::Slot(_) => break,
                Entry::Bytes(len) => run += len as usize,
                Entry::Filled(i) => {
                    self.flush_run(&mut run)?;
                    let f = &mut self.fills[i as usize];
                    self.out.write_all(f)?;
                    self.bytes -= f.len();
                    f.clear();
                    self.free.push(i);
                }
                Entry::Empty => {}
            }
            self.queue.pop_front();
            self.base += 1;
        }
        self.flush_run(&mut run)?;
        if self.queue.is_empty() {
            self.ring.clear();
            self.head = 0;
        } else if self.head > (1 << 20) && self.head * 2 > self.ring.len() {
            // The ring's front half is written: what waits moves down.
            self.ring.drain(..self.head);
            self.head = 0;
        }
        Ok(())
    }

    fn flush_run(&mut self, run: &mut usize) -> io::Result<()> {
        if *run > 0 {
            self.out
                .write_all(&self.ring[self.head..self.head + *run])?;
            self.head += *run;
            self.bytes -= *run;
            *run = 0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(r: Reorder<Vec<u8>>) -> String {
        String::from_utf8(r.finish().unwrap()).unwrap()
    }

    #[test]
    fn a_record_after_an_open_state_waits_for_it() {
        let mut r = Reorder::new(Vec::new());
        r.record(b"e0\n").unwrap();
        r.open(Hold::State(1));
        r.record(b"e5\n").unwrap();
        r.record(b"e7\n").unwrap();
        // The state of 0..8 completes: it goes in its place, first.
        assert!(r.close(Hold::State(1), b"s0\n").unwrap());
        r.record(b"e8\n").unwrap();
        assert_eq!(written(r), "e0\ns0\ne5\ne7\ne8\n");
    }

    #[test]
    fn slots_fill_in_any_order_and_a_message_let_go_comes_where_it_completes() {
        let mut r = Reorder::new(Vec::new());
        r.open(Hold::Message(0, 9));
        r.open(Hold::State(2));
        r.record(b"4a\n").unwrap();
        r.open(Hold::State(3));
        r.record(b"4b\n").unwrap();
        assert!(r.close(Hold::State(3), b"s3\n").unwrap());
        assert!(r.close(Hold::State(2), b"").unwrap());
        r.let_go(Hold::Message(0, 9)).unwrap();
        // Let go: no place; the caller writes it as it completes.
        assert!(!r.close(Hold::Message(0, 9), b"m\n").unwrap());
        r.record(b"m\n").unwrap();
        // Never filled: empty.
        r.open(Hold::State(4));
        r.record(b"5\n").unwrap();
        assert_eq!(written(r), "4a\ns3\n4b\nm\n5\n");
    }

    #[test]
    fn the_slot_in_front_is_what_blocks_past_the_limit() {
        let mut r = Reorder::new(Vec::new());
        r.open(Hold::State(0));
        let line = vec![b'x'; 1 << 20];
        for _ in 0..16 {
            r.record(&line).unwrap();
            assert_eq!(r.blocking(), None);
        }
        r.record(b"\n").unwrap();
        assert_eq!(r.blocking(), Some(Hold::State(0)));
        r.close(Hold::State(0), b"s\n").unwrap();
        assert_eq!((r.blocking(), r.bytes), (None, 0));
    }
}
