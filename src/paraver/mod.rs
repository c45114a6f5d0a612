//! The run as a Paraver trace (BSC): `.prv` records, the `.pcf` that
//! names their states and event types, the `.row` that names nodes,
//! tasks and threads (`docs/output.md`, "Paraver").
//!
//! Paraver draws programs: every container that carries data is a thread
//! of the process model ([`crate::sink::actors`]), on the CPU of its node
//! (one CPU a node). Each state row is an event type whose value is the
//! state pushed, 0 when one is popped (Paraver's "stacked value"); a
//! thread's first state row is also its Paraver state, the deepest
//! level. Point events are event types with a value per name, variables
//! event types whose value is the variable's in thousandths (Paraver's
//! values are integers), messages communication records.
//!
//! Records are written in time order, as a `.prv` has them ([`sort`]),
//! straight to the output; the header says the end time and every
//! object, known only at the end, and is put before them then, padded
//! with empty lines (which Paraver skips) to whole blocks that the file
//! system inserts in place ([`crate::output::Sink::prepend`]).

mod names;
mod sort;

use crate::model::{ContainerId, Event, Op, TypeId, ValueId};
use crate::registry::TypeKind;
use crate::sink::actors::{Actor, Actors};
use crate::sink::replay::Ordinals;
use crate::sink::{Book, Catalogue, Encoder, RunEnd, SinkStats, Span};
use names::Names;
use sort::Hold;
use std::io::{self, Write};

/// Paraver's values are integers: a variable's is written in
/// thousandths, and its event type says so.
pub const SCALE: f64 = 1000.0;

/// The first event type number: clear of the ranges Extrae uses (tens of
/// millions), so a trace of both can be read together.
pub const FIRST_TYPE: u32 = 1000;

/// Where the records go: a writer that can put a header, of whole
/// blocks of [`crate::output::BLOCK`] bytes, before what it was written.
pub trait Prepend: Write {
    /// Puts `head` before everything written.
    fn prepend(&mut self, head: &[u8]) -> io::Result<()>;
}

impl Prepend for crate::output::Sink {
    fn prepend(&mut self, head: &[u8]) -> io::Result<()> {
        crate::output::Sink::prepend(self, head)
    }
}

/// A header padded with newlines to whole blocks: Paraver skips empty
/// lines.
fn padded(header: String) -> Vec<u8> {
    let mut b = header.into_bytes();
    let block = crate::output::BLOCK as usize;
    b.resize(b.len().div_ceil(block) * block, b'\n');
    b
}

/// The three files' writers, before they are put in place.
pub struct Files<W> {
    /// The `.prv`.
    pub prv: W,
    /// The `.pcf`.
    pub pcf: W,
    /// The `.row`.
    pub row: W,
}

/// One state row's stack, and for a thread's Paraver state the start of
/// the level on top.
struct Row {
    ty: TypeId,
    stack: Vec<ValueId>,
    since: i64,
}

/// The encoder.
pub struct Paraver<W: Prepend> {
    pcf: W,
    row: W,
    body: sort::Reorder<W>,
    origin: i64,
    actors: Actors,
    /// A container's state rows, in the order they first changed: the
    /// first is its Paraver state.
    /// By thread (global number).
    rows: Vec<Vec<Row>>,
    names: Names,
    /// Event types (state, event and variable types), numbered as the
    /// replay declares them.
    used: Ordinals,
    last: i64,
    records: u64,
    line: Vec<u8>,
    /// `:cpu:appl:task:thread` of each thread, by its global number.
    prefixes: Vec<Box<[u8]>>,
    last_actor: Option<(ContainerId, Actor)>,
}

impl<W: Prepend> Paraver<W> {
    /// An encoder writing `files`, times from `origin` (T0).
    pub fn new(files: Files<W>, origin: i64) -> io::Result<Self> {
        Ok(Paraver {
            pcf: files.pcf,
            row: files.row,
            body: sort::Reorder::new(files.prv),
            origin,
            actors: Actors::default(),
            rows: Default::default(),
            names: Names::default(),
            used: Ordinals::default(),
            last: origin,
            records: 0,
            line: Vec::with_capacity(128),
            prefixes: Vec::new(),
            last_actor: None,
        })
    }

    fn actor<C: Catalogue + ?Sized>(&mut self, cat: &C, c: ContainerId) -> Option<Actor> {
        // Runs of events are mostly one container's (an archive's
        // samples): the last one is kept at hand.
        if let Some((_, a)) = self.last_actor.filter(|(l, _)| *l == c) {
            return Some(a);
        }
        let a = match self.actors.get(c) {
            Some(a) => a,
            None => {
                let a = self.actors.of(cat, c)?;
                self.names.learn(cat, &self.actors, a);
                let g = a.global as usize;
                if self.rows.len() <= g {
                    self.rows.resize_with(g + 1, Vec::new);
                }
                a
            }
        };
        self.last_actor = Some((c, a));
        Some(a)
    }

    /// The start of a record: `kind:cpu:appl:task:thread`, the thread's
    /// part formatted once.
    fn head(&mut self, kind: u8, a: Actor) {
        let g = a.global as usize;
        while self.prefixes.len() <= g {
            self.prefixes.push(Box::default());
        }
        if self.prefixes[g].is_empty() {
            let mut p = Vec::new();
            for n in [a.node, a.app, a.task, a.thread] {
                p.push(b':');
                p.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
            }
            self.prefixes[g] = p.into();
        }
        let l = &mut self.line;
        l.clear();
        l.push(kind);
        l.extend_from_slice(&self.prefixes[g]);
    }

    fn num(&mut self, n: i64) {
        self.line.push(b':');
        self.line
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }

    /// The record built, complete at the run's time.
    fn put(&mut self) -> io::Result<()> {
        self.line.push(b'\n');
        self.records += 1;
        self.body.record(&self.line)
    }

    /// The record built, in the place `who` took when it began ([`sort`]).
    fn put_in(&mut self, who: Hold) -> io::Result<()> {
        self.line.push(b'\n');
        self.records += 1;
        if !self.body.close(who, &self.line)? {
            // Its place was given up: where it completes.
            self.body.record(&self.line)?;
        }
        Ok(())
    }

    fn rel(&self, t: i64) -> i64 {
        t - self.origin
    }

    /// An event type's number (declared before its first event).
    fn ty(&self, ty: TypeId) -> i64 {
        FIRST_TYPE as i64 + self.used.get(ty.0) as i64
    }

    /// A change of a state row at `t`: the event record (`pops` zeros,
    /// then the value pushed), and the Paraver state's record of the
    /// level that was on top.
    fn state<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        (c, ty): (ContainerId, TypeId),
        change: Change,
        t: i64,
    ) -> io::Result<()> {
        let Some(a) = self.actor(cat, c) else {
            return Ok(());
        };
        let code = self.ty(ty);
        let rows = &mut self.rows[a.global as usize];
        let i = match rows.iter().position(|r| r.ty == ty) {
            Some(i) => i,
            None => {
                rows.push(Row {
                    ty,
                    stack: Vec::new(),
                    since: t,
                });
                rows.len() - 1
            }
        };
        let shown = i == 0;
        let row = &mut rows[i];
        let before = row.stack.last().copied();
        let since = row.since;
        let pops = match change {
            Change::Set(_) | Change::End => std::mem::take(&mut row.stack).len(),
            Change::Pop => row.stack.pop().map_or(0, |_| 1),
            Change::Push(_) => 0,
        };
        if let Change::Set(v) | Change::Push(v) = change {
            row.stack.push(v);
        }
        if row.stack.last().copied() != before {
            row.since = t;
        }
        let after = row.stack.last().copied();
        self.head(b'2', a);
        self.num(self.rel(t));
        for _ in 0..pops {
            self.num(code);
            self.num(0);
        }
        if let Change::Set(v) | Change::Push(v) = change {
            self.num(code);
            self.num(book.value(v) as i64 + 1);
        }
        if pops > 0 || after.is_some() {
            self.put()?;
        }
        if !shown || after == before {
            return Ok(());
        }
        if let Some(v) = before {
            self.segment(a, v, book, since, t)?;
        }
        if after.is_some() {
            self.body.open(Hold::State(a.global));
        }
        Ok(())
    }

    /// The state record of `v` on top from `since` to `t`.
    fn segment(&mut self, a: Actor, v: ValueId, book: &Book, since: i64, t: i64) -> io::Result<()> {
        let who = Hold::State(a.global);
        if since >= t {
            return self.body.close(who, &[]).map(drop);
        }
        self.head(b'1', a);
        self.num(self.rel(since));
        self.num(self.rel(t));
        self.num(book.value(v) as i64 + 1);
        self.put_in(who)
    }

    /// An event record of one (type, value) pair: a point event's or a
    /// variable's.
    fn point<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        (c, ty): (ContainerId, TypeId),
        value: i64,
        t: i64,
    ) -> io::Result<()> {
        let Some(a) = self.actor(cat, c) else {
            return Ok(());
        };
        let code = self.ty(ty);
        self.head(b'2', a);
        self.num(self.rel(t));
        self.num(code);
        self.num(value);
        self.put()
    }

    /// The run is at `t`: past the limit of what may wait, the state
    /// whose place holds the records back is cut at `t`, or the message
    /// let go ([`sort`]).
    fn limit(&mut self, book: &Book, t: i64) -> io::Result<()> {
        while let Some(who) = self.body.blocking() {
            let Hold::State(g) = who else {
                self.body.let_go(who)?;
                continue;
            };
            let Some(a) = (self.actors.threads.get(g as usize)).and_then(|&c| self.actors.get(c))
            else {
                break;
            };
            let Some(row) = self.rows[g as usize].first_mut() else {
                break;
            };
            // Begun now: all that waits is of now, and nothing to cut.
            let Some(&top) = row.stack.last().filter(|_| row.since < t) else {
                break;
            };
            let since = std::mem::replace(&mut row.since, t);
            self.segment(a, top, book, since, t)?;
            self.body.open(who);
        }
        Ok(())
    }

    /// The records of one event.
    fn record<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        ev: &Event,
    ) -> io::Result<()> {
        let t = ev.time;
        self.last = self.last.max(t);
        match ev.op {
            Op::SetState {
                container,
                ty,
                value,
            } => self.state(cat, book, (container, ty), Change::Set(value), t),
            Op::PushState {
                container,
                ty,
                value,
            } => self.state(cat, book, (container, ty), Change::Push(value), t),
            Op::PopState { container, ty } => {
                self.state(cat, book, (container, ty), Change::Pop, t)
            }
            // The replay hands a stack-ruled format pops and pushes.
            Op::EndState { .. } => Ok(()),
            Op::NewEvent {
                container,
                ty,
                value,
            } => self.point(cat, (container, ty), book.named.get(value.0) as i64 + 1, t),
            // `as` saturates: a value past ±9.2e15 is written at the bound.
            Op::SetVariable {
                container,
                ty,
                value,
            } => self.point(cat, (container, ty), (value * SCALE).round() as i64, t),
            Op::StartLink { from, key, .. } => {
                self.actor(cat, from);
                // Its record, of this time, comes when its end is met.
                self.body.open(Hold::Message(key.channel, key.seq));
                Ok(())
            }
            Op::EndLink { to, .. } => {
                self.actor(cat, to);
                Ok(())
            }
        }
    }
}

/// What a state row's stack does.
#[derive(Clone, Copy)]
enum Change {
    Set(ValueId),
    Push(ValueId),
    Pop,
    /// Its container ends: every level closes.
    End,
}

impl<W: Prepend> Encoder for Paraver<W> {
    // Messages are written whole, from both halves.
    const INTERVALS: bool = true;

    fn declare_type<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        _: &Book,
        ty: TypeId,
    ) -> io::Result<()> {
        let kind = cat.type_def(ty).kind;
        if matches!(kind, TypeKind::State | TypeKind::Event | TypeKind::Variable) {
            self.used.mark(ty.0);
            self.names.event_type(cat, ty);
        }
        Ok(())
    }

    // A state value is a Paraver state and a value of its row's event
    // type (the book numbers them from 0, Paraver from 1); an event's is a
    // value of its type.
    fn declare_value<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        v: ValueId,
        color: Option<&str>,
    ) -> io::Result<()> {
        let def = cat.value(v);
        if !self.used.has(def.ty.0) {
            return Ok(());
        }
        let n = match cat.type_def(def.ty).kind {
            TypeKind::State => {
                let n = book.value(v) + 1;
                self.names.state(n, &def.name, color);
                n
            }
            _ => book.named.get(v.0) + 1,
        };
        self.names.value(self.used.get(def.ty.0), n, &def.name);
        Ok(())
    }

    fn event<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        ev: &Event,
        _state: bool,
    ) -> io::Result<()> {
        self.record(cat, book, ev)?;
        self.limit(book, ev.time)
    }

    fn span<C: Catalogue + ?Sized>(&mut self, cat: &C, book: &Book, s: &Span) -> io::Result<()> {
        let Span::Link {
            from,
            to,
            start,
            end,
            size,
            tag,
            key,
            ..
        } = *s
        else {
            return Ok(());
        };
        let who = Hold::Message(key.channel, key.seq);
        let (Some(a), Some(b)) = (self.actor(cat, from), self.actor(cat, to)) else {
            return self.body.close(who, &[]).map(drop);
        };
        let (start, end) = (self.rel(start), self.rel(end));
        self.head(b'3', a);
        self.num(start);
        self.num(start);
        for n in [b.node, b.app, b.task, b.thread] {
            self.num(n as i64);
        }
        self.num(end);
        self.num(end);
        self.num(size.max(0));
        self.num(tag.max(0));
        self.put_in(who)?;
        self.limit(book, self.last)
    }

    fn destroy<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        c: ContainerId,
        time: i64,
    ) -> io::Result<()> {
        self.last = self.last.max(time);
        let Some(g) = self.actors.get(c).map(|a| a.global as usize) else {
            return Ok(());
        };
        let open: Vec<TypeId> = (self.rows[g].iter())
            .filter(|r| !r.stack.is_empty())
            .map(|r| r.ty)
            .collect();
        for ty in open {
            self.state(cat, book, (c, ty), Change::End, time)?;
        }
        self.rows[g].clear();
        self.limit(book, time)
    }

    type Out = Files<W>;

    fn finish(self, _end: &RunEnd, stats: &mut SinkStats) -> io::Result<Files<W>> {
        let ftime = self.rel(self.last).max(0);
        let header = self.names.header(&self.actors, self.origin, ftime);
        let mut prv = self.body.finish()?;
        prv.prepend(&padded(header))?;
        prv.flush()?;
        let (mut pcf, mut row) = (self.pcf, self.row);
        self.names.write_pcf(&mut pcf)?;
        pcf.flush()?;
        self.names.write_row(&self.actors, &mut row)?;
        row.flush()?;
        stats.records = self.records;
        Ok(Files { prv, pcf, row })
    }
}
