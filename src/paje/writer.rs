//! Writes the unified trace in the Pajé format, following the writer rules
//! of `docs/output.md`:
//! - the whole `%EventDef` header first, then the origin line (T0 as an
//!   unused container type, see [`ORIGIN_PREFIX`]);
//! - aliases (`t<n>`, `c<n>`, `v<n>`) as every identifier, so no identifier
//!   ever needs quotes, numbered in the order their lines are written; human names are quoted only when they contain
//!   whitespace or `#`, are never empty and never contain `"`;
//! - a field that may be quoted is never last (PajeNG 1.3.9 joins lines
//!   after a quoted last token), so every definition ends with `Alias` or a
//!   plain identifier;
//! - types before containers, containers before their first use (declared
//!   lazily, in the order events need them), every container destroyed at
//!   the end, children before parents;
//! - times are written relative to the origin with 9 decimals from integer
//!   nanoseconds, so they are exact.

use crate::model::{ContainerId, Event, Op, TypeId, ValueId};
use crate::paje::header::{id_of, HEADER};
use crate::paje::lines::Text;
use crate::paje::EventKind;
use crate::registry::TypeKind;
use crate::sink::{Book, Catalogue, Encoder, RunEnd, SinkStats};
use std::io::{self, Write};

/// The start of the line that records T0: a container type, never used,
/// named `T0=<epoch seconds>` with alias `origin`. A `#` comment made ViTE
/// 1.2 warn on every file; an unused type is read silently by pj_dump and
/// ViTE alike, and a program finds T0 on the line after the header.
pub const ORIGIN_PREFIX: &str = "0 0 T0=";

/// T0 in ns from a trace line, if it is the origin line.
pub fn origin_of(line: &str) -> Option<i64> {
    let secs = line.strip_prefix(ORIGIN_PREFIX)?.strip_suffix(" origin")?;
    crate::clock::parse_epoch_ns(secs.as_bytes())
}

/// A streaming Pajé writer: the encoder that says what the replay
/// ([`crate::sink::Replay`]) hands it as Pajé lines. The replay decides
/// what is declared when, what each id's ordinal is (the aliases `t<n>`,
/// `c<n>`, `v<n>`), which pops are left out and which colour a value has;
/// this says each line.
pub struct PajeWriter<W: Write> {
    lines: Text<W>,
    origin: i64,
    absolute: bool,
    /// Lines written, and those of the header.
    written: u64,
    header: u64,
    /// The quoted text of each value written by name (an event's or a
    /// link's), by value id: a link's value is on every message line,
    /// and quoting it there was a tenth of the formatting.
    quoted: Vec<Option<Box<[u8]>>>,
}

impl<W: Write> PajeWriter<W> {
    /// Writes the header and the origin line. `origin` is T0 in ns
    /// (docs/output.md: the earliest time floored to the millisecond); with
    /// `absolute`, times are epoch seconds and no origin line is written.
    pub fn new(mut out: W, origin: i64, absolute: bool) -> io::Result<Self> {
        let mut head = Vec::with_capacity(2048);
        for (i, (kind, fields)) in HEADER.iter().enumerate() {
            writeln!(head, "%EventDef {} {i}", kind.name())?;
            for (name, ty) in *fields {
                writeln!(head, "%       {name} {ty}")?;
            }
            writeln!(head, "%EndEventDef")?;
        }
        if !absolute {
            head.extend_from_slice(ORIGIN_PREFIX.as_bytes());
            crate::time::push_seconds(&mut head, origin);
            head.extend_from_slice(b" origin\n");
        }
        out.write_all(&head)?;
        let lines = head.iter().filter(|&&b| b == b'\n').count() as u64;
        Ok(PajeWriter {
            lines: Text::new(out),
            origin,
            absolute,
            written: lines,
            header: lines - u64::from(!absolute),
            quoted: Vec::new(),
        })
    }

    /// The line of an event on an entity row: `Time Container Type
    /// [Value]` (`Time Container Value Type` for a point event). Only
    /// state values are declared: ViTE 1.2 complains about a declared
    /// value of an event or link type, so those are written by name.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn entity<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        kind: EventKind,
        time: i64,
        (container, ty): (ContainerId, TypeId),
        value: Option<ValueId>,
        state: bool,
    ) {
        match (value, state) {
            (Some(v), true) => self.head(book, kind, time, container, ty, Some(v)),
            (Some(v), false) if kind == EventKind::NewEvent => {
                self.begin(kind);
                self.time(time);
                self.cont(book, container);
                self.value_name(cat, v);
                self.ty(book, ty);
            }
            (Some(v), false) => {
                self.head(book, kind, time, container, ty, None);
                self.value_name(cat, v);
            }
            (None, _) => self.head(book, kind, time, container, ty, None),
        }
    }

    fn begin(&mut self, kind: EventKind) {
        self.lines.begin(byte_id(kind));
    }

    /// `begin`, `time`, `cont`, `ty` and `val` at once (see [`Text::head`]).
    #[inline]
    fn head(
        &mut self,
        book: &Book,
        kind: EventKind,
        t: i64,
        c: ContainerId,
        ty: TypeId,
        value: Option<ValueId>,
    ) {
        let v = value.map(|v| book.value(v));
        let (id, rel) = (byte_id(kind), self.rel(t));
        self.lines.head(id, rel, book.container(c), book.ty(ty), v);
    }

    fn end(&mut self) -> io::Result<()> {
        self.written += 1;
        self.lines.end()
    }

    fn word(&mut self, w: &[u8]) {
        self.lines.word(w);
    }

    fn ty(&mut self, book: &Book, t: TypeId) {
        self.lines.ident(b't', book.ty(t));
    }

    fn cont(&mut self, book: &Book, c: ContainerId) {
        match book.container(c) {
            Some(a) => self.lines.ident(b'c', a),
            None => self.word(b"0"),
        }
    }

    fn int(&mut self, n: i64) {
        self.lines.int(n);
    }

    /// A link's key: ours as `k{channel}_{seq}`, a replayed one (a trace
    /// rebuilt from tables) as it was written.
    fn key<C: Catalogue + ?Sized>(&mut self, cat: &C, key: crate::model::LinkKey) {
        match cat.key_name(key) {
            Some(name) => self.lines.name(name),
            None => self.lines.key(key.channel, key.seq),
        }
    }

    fn name(&mut self, name: &str) {
        self.lines.name(name);
    }

    /// A value's name as [`PajeWriter::name`] writes it, quoted once.
    fn value_name<C: Catalogue + ?Sized>(&mut self, cat: &C, v: ValueId) {
        let i = v.0 as usize;
        if self.quoted.len() <= i {
            self.quoted.resize(i + 1, None);
        }
        let Some(slot) = self.quoted.get_mut(i) else {
            return;
        };
        let q = slot.get_or_insert_with(|| {
            let mut q = Vec::new();
            super::name::push_name(&mut q, &cat.value(v).name);
            q.into_boxed_slice()
        });
        self.lines.word(q);
    }

    fn time(&mut self, t: i64) {
        self.lines.time(self.rel(t));
    }

    /// A time as the trace writes it: from T0 unless absolute.
    fn rel(&self, t: i64) -> i64 {
        let origin = if self.absolute { 0 } else { self.origin };
        t - origin
    }

    fn double(&mut self, v: f64) {
        self.lines.double(v);
    }
}

impl<W: Write> Encoder for PajeWriter<W> {
    const INTERVALS: bool = false;
    const CUT: bool = true;
    type Out = W;

    fn declare_type<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        ty: TypeId,
    ) -> io::Result<()> {
        let def = cat.type_def(ty);
        let kind = match def.kind {
            TypeKind::Container => EventKind::DefineContainerType,
            TypeKind::State => EventKind::DefineStateType,
            TypeKind::Variable => EventKind::DefineVariableType,
            TypeKind::Event => EventKind::DefineEventType,
            TypeKind::Link { .. } => EventKind::DefineLinkType,
        };
        self.begin(kind);
        match def.parent {
            Some(p) => self.ty(book, p),
            None => self.word(b"0"),
        }
        if let TypeKind::Link { start, end } = def.kind {
            self.ty(book, start);
            self.ty(book, end);
        }
        self.name(&def.name);
        if def.kind == TypeKind::Variable {
            self.name(def.color.as_deref().unwrap_or("0.5 0.5 0.5"));
        }
        self.ty(book, ty);
        self.end()
    }

    fn declare_value<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        v: ValueId,
        color: Option<&str>,
    ) -> io::Result<()> {
        let def = cat.value(v);
        // An event's or a link's value is said by name on its lines.
        if cat.type_def(def.ty).kind != TypeKind::State {
            return Ok(());
        }
        self.begin(EventKind::DefineEntityValue);
        self.ty(book, def.ty);
        self.name(&def.name);
        self.name(color.unwrap_or("0.5 0.5 0.5"));
        self.lines.ident(b'v', book.value(v));
        self.end()
    }

    fn create<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        c: ContainerId,
        time: i64,
    ) -> io::Result<()> {
        let def = cat.container(c);
        self.begin(EventKind::CreateContainer);
        self.time(time);
        self.ty(book, def.ty);
        match def.parent {
            Some(p) => self.cont(book, p),
            None => self.word(b"0"),
        }
        self.name(&def.name);
        self.cont(book, c);
        self.end()
    }

    #[inline]
    fn event<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        ev: &Event,
        state: bool,
    ) -> io::Result<()> {
        let t = ev.time;
        match ev.op {
            Op::SetVariable {
                container,
                ty,
                value,
            } => {
                self.head(book, EventKind::SetVariable, t, container, ty, None);
                self.double(value);
            }
            Op::SetState {
                container,
                ty,
                value,
            } => {
                let at = (container, ty);
                self.entity(cat, book, EventKind::SetState, t, at, Some(value), state);
            }
            Op::PushState {
                container,
                ty,
                value,
            } => {
                let at = (container, ty);
                self.entity(cat, book, EventKind::PushState, t, at, Some(value), state);
            }
            // The replay turns a state's end into pops; none comes here.
            Op::PopState { container, ty } | Op::EndState { container, ty, .. } => {
                let at = (container, ty);
                self.entity(cat, book, EventKind::PopState, t, at, None, state);
            }
            Op::NewEvent {
                container,
                ty,
                value,
            } => {
                let at = (container, ty);
                self.entity(cat, book, EventKind::NewEvent, t, at, Some(value), state);
            }
            Op::StartLink {
                container,
                ty,
                value,
                from,
                key,
                size,
                tag,
            } => {
                let at = (container, ty);
                self.entity(cat, book, EventKind::StartLink, t, at, Some(value), state);
                self.cont(book, from);
                self.key(cat, key);
                self.int(size);
                self.int(tag);
            }
            Op::EndLink {
                container,
                ty,
                value,
                to,
                key,
            } => {
                let at = (container, ty);
                self.entity(cat, book, EventKind::EndLink, t, at, Some(value), state);
                self.cont(book, to);
                self.key(cat, key);
            }
        }
        self.end()
    }

    fn destroy<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        c: ContainerId,
        time: i64,
    ) -> io::Result<()> {
        self.begin(EventKind::DestroyContainer);
        self.time(time);
        self.ty(book, cat.container(c).ty);
        self.cont(book, c);
        self.end()
    }

    fn finish(self, _end: &RunEnd, stats: &mut SinkStats) -> io::Result<W> {
        // What `integrador check` counts: every line after the header.
        stats.records = self.written - self.header;
        self.lines.finish()
    }
}

/// An event kind's id as a line's first token: fewer than 256 kinds, so
/// it fits a byte.
fn byte_id(kind: EventKind) -> u8 {
    u8::try_from(id_of(kind)).unwrap_or(u8::MAX)
}
