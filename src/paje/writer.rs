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
use crate::registry::{ContainerDef, Registry, TypeDef, TypeKind, ValueDef};
use std::io::{self, Write};

/// What the writer wrote, for the summary.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteStats {
    /// Lines written.
    pub lines: u64,
    /// Lines of the `%EventDef` header (the rest are event lines, as
    /// `integrador check` counts them).
    pub header_lines: u64,
    /// Model events written (not counting declarations).
    pub events: u64,
    /// Containers created.
    pub containers: u64,
    /// Variable changes written.
    pub variables: u64,
    /// State changes written (set, push, pop).
    pub states: u64,
    /// Point events written.
    pub events_point: u64,
    /// Arrows written (counted at their start).
    pub links: u64,
    /// Time of the last event (ns, reference clock).
    pub last_time: Option<i64>,
    /// Pops that found their row's stack empty in time order (a damaged
    /// or reordered input), left out: pj_dump rejects them.
    pub skipped_pops: u64,
}

impl WriteStats {
    /// Event lines: every line after the `%EventDef` header, definitions
    /// and container events included (what `integrador check` counts).
    pub fn event_lines(&self) -> u64 {
        self.lines - self.header_lines
    }
}

/// The writer's aliases of one kind of id, numbered in the order the
/// writer first meets them: the trace depends on the events written, not
/// on the order in which converters happened to register things (which
/// follows how far each read ahead). The writer's other side on the run's
/// thread (crate::paje::split) keeps the ids it sent in one too.
#[derive(Default)]
pub(super) struct Aliases {
    /// Alias + 1 by registry id; 0 = not met yet.
    of: Vec<u32>,
    next: u32,
}

impl Aliases {
    pub(super) fn has(&self, id: u32) -> bool {
        self.of.get(id as usize).is_some_and(|&a| a != 0)
    }

    /// Gives `id` its alias if it has none; `true` the first time.
    pub(super) fn mark(&mut self, id: u32) -> bool {
        let i = id as usize;
        if self.of.len() <= i {
            self.of.resize(i + 1, 0);
        }
        match self.of.get_mut(i) {
            Some(a) if *a == 0 => {
                self.next += 1;
                *a = self.next;
                true
            }
            _ => false,
        }
    }

    fn get(&self, id: u32) -> u32 {
        self.of.get(id as usize).map_or(0, |a| a.saturating_sub(1))
    }
}

/// What the writer reads of the registry: the definitions of what it
/// declares and creates, and each event type's kind. The run's registry
/// is one; a writer on a thread of its own reads a copy of the
/// definitions it was sent (crate::paje::split).
pub trait Catalogue {
    /// A type by id.
    fn type_def(&self, id: TypeId) -> &TypeDef;
    /// A container by id.
    fn container(&self, id: ContainerId) -> &ContainerDef;
    /// A value by id.
    fn value(&self, id: ValueId) -> &ValueDef;
}

impl Catalogue for Registry {
    fn type_def(&self, id: TypeId) -> &TypeDef {
        Registry::type_def(self, id)
    }
    fn container(&self, id: ContainerId) -> &ContainerDef {
        Registry::container(self, id)
    }
    fn value(&self, id: ValueId) -> &ValueDef {
        Registry::value(self, id)
    }
}

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

/// A streaming Pajé writer. It runs on the run's thread, or on a thread
/// of its own behind [`crate::paje::split::Split`].
pub struct PajeWriter<W: Write> {
    lines: Text<W>,
    origin: i64,
    absolute: bool,
    created: Vec<ContainerId>,
    /// The writer's own book of what it declared and created, by id: the
    /// registry is a catalogue the writer only reads.
    types: Aliases,
    values: Aliases,
    containers: Aliases,
    values_declared: u32,
    stats: WriteStats,
    /// Depth of each (container, state type) stack as written.
    /// Indexed by container id: (state type, depth) of its few rows; a
    /// hash per state change cost 5% on state-heavy traces.
    depth: Vec<Vec<(u32, u32)>>,
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
        let header = lines - u64::from(!absolute);
        Ok(PajeWriter {
            lines: Text::new(out),
            origin,
            absolute,
            created: Vec::new(),
            types: Aliases::default(),
            values: Aliases::default(),
            containers: Aliases::default(),
            values_declared: 0,
            depth: Vec::new(),
            quoted: Vec::new(),
            stats: WriteStats {
                lines,
                header_lines: header,
                ..WriteStats::default()
            },
        })
    }

    /// Creates containers at `time` in the given order, before any event:
    /// a viewer shows sibling rows in creation order.
    pub fn create_in_order(
        &mut self,
        reg: &impl Catalogue,
        order: &[ContainerId],
        time: i64,
    ) -> io::Result<()> {
        for &c in order {
            self.create_container(reg, c, time)?;
        }
        Ok(())
    }

    /// Counts so far.
    pub fn stats(&self) -> WriteStats {
        self.stats
    }

    /// Writes one event, declaring first whatever it refers to.
    pub fn write_event(&mut self, reg: &impl Catalogue, ev: &Event) -> io::Result<()> {
        debug_assert!(
            self.stats.last_time.is_none_or(|t| t <= ev.time),
            "merge order broken"
        );
        self.stats.last_time = Some(ev.time);
        self.stats.events += 1;
        match ev.op {
            Op::SetVariable {
                container,
                ty,
                value,
            } => {
                self.create_container(reg, container, ev.time)?;
                self.declare_type(reg, ty)?;
                self.head(EventKind::SetVariable, ev.time, container, ty, None);
                self.double(value);
                self.stats.variables += 1;
            }
            Op::SetState {
                container,
                ty,
                value,
            } => {
                *self.depth_of(container, ty) = 1;
                self.entity(
                    reg,
                    EventKind::SetState,
                    ev.time,
                    container,
                    ty,
                    Some(value),
                )?;
                self.stats.states += 1;
            }
            Op::PushState {
                container,
                ty,
                value,
            } => {
                *self.depth_of(container, ty) += 1;
                self.entity(
                    reg,
                    EventKind::PushState,
                    ev.time,
                    container,
                    ty,
                    Some(value),
                )?;
                self.stats.states += 1;
            }
            Op::PopState { container, ty } => {
                match self.depth_of(container, ty) {
                    d if *d > 0 => *d -= 1,
                    _ => {
                        self.stats.events -= 1;
                        self.stats.skipped_pops += 1;
                        return Ok(());
                    }
                }
                self.entity(reg, EventKind::PopState, ev.time, container, ty, None)?;
                self.stats.states += 1;
            }
            Op::NewEvent {
                container,
                ty,
                value,
            } => {
                self.entity(
                    reg,
                    EventKind::NewEvent,
                    ev.time,
                    container,
                    ty,
                    Some(value),
                )?;
                self.stats.events_point += 1;
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
                self.create_container(reg, from, ev.time)?;
                self.entity(
                    reg,
                    EventKind::StartLink,
                    ev.time,
                    container,
                    ty,
                    Some(value),
                )?;
                self.cont(from);
                self.key(key);
                self.int(size);
                self.int(tag);
                self.stats.links += 1;
            }
            Op::EndLink {
                container,
                ty,
                value,
                to,
                key,
            } => {
                self.create_container(reg, to, ev.time)?;
                self.entity(reg, EventKind::EndLink, ev.time, container, ty, Some(value))?;
                self.cont(to);
                self.key(key);
            }
        }
        self.end()
    }

    /// The stack depth of a state row, as written so far.
    #[inline]
    fn depth_of(&mut self, container: ContainerId, ty: TypeId) -> &mut u32 {
        let c = container.0 as usize;
        // A row seen before, nearly always: its container's first.
        let known = match self.depth.get(c).and_then(|rows| rows.first()) {
            Some(&(t, _)) if t == ty.0 => Some(0),
            _ => None,
        };
        let i = match known {
            Some(i) => i,
            None => self.depth_row(c, ty),
        };
        &mut self.depth[c][i].1
    }

    /// [`PajeWriter::depth_of`]'s row index, added when new.
    #[inline(never)]
    fn depth_row(&mut self, c: usize, ty: TypeId) -> usize {
        if self.depth.len() <= c {
            self.depth.resize_with(c + 1, Vec::new);
        }
        let rows = &mut self.depth[c];
        match rows.iter().position(|(t, _)| *t == ty.0) {
            Some(i) => i,
            None => {
                rows.push((ty.0, 0));
                rows.len() - 1
            }
        }
    }

    /// Starts the line of an event on an entity row: `Time Container Type
    /// [Value]` (`Time Container Value Type` for a point event), declaring
    /// what it refers to first. Only state values are declared: ViTE 1.2
    /// complains about a declared value of an event or link type, so those
    /// are written by name.
    fn entity(
        &mut self,
        reg: &impl Catalogue,
        kind: EventKind,
        time: i64,
        container: ContainerId,
        ty: TypeId,
        value: Option<ValueId>,
    ) -> io::Result<()> {
        self.create_container(reg, container, time)?;
        self.declare_type(reg, ty)?;
        let state = reg.type_def(ty).kind == TypeKind::State;
        if let (Some(v), true) = (value, state) {
            self.declare_value(reg, v)?;
        }
        match (value, state) {
            (Some(v), true) => self.head(kind, time, container, ty, Some(v)),
            (Some(v), false) if kind == EventKind::NewEvent => {
                self.begin(kind);
                self.time(time);
                self.cont(container);
                self.value_name(reg, v);
                self.ty(ty);
            }
            (Some(v), false) => {
                self.head(kind, time, container, ty, None);
                self.value_name(reg, v);
            }
            (None, _) => self.head(kind, time, container, ty, None),
        }
        Ok(())
    }

    /// Destroys every container at the last event's time, children first,
    /// and flushes. Returns the output and the counts.
    pub fn finish(mut self, reg: &impl Catalogue) -> io::Result<(W, WriteStats)> {
        if let Some(end) = self.stats.last_time {
            // Children are always created after their parents, so the
            // reverse creation order destroys children first.
            for c in std::mem::take(&mut self.created).into_iter().rev() {
                self.begin(EventKind::DestroyContainer);
                self.time(end);
                self.ty(reg.container(c).ty);
                self.cont(c);
                self.end()?;
            }
        }
        let out = self.lines.finish()?;
        Ok((out, self.stats))
    }

    // The three `declare`/`create` steps are asked for every event and
    // are done once: the test is inlined, the work is not (the calls were
    // 3% of the converting thread).
    #[inline]
    fn declare_type(&mut self, reg: &impl Catalogue, ty: TypeId) -> io::Result<()> {
        if self.types.has(ty.0) {
            return Ok(());
        }
        self.declare_type_now(reg, ty)
    }

    #[inline(never)]
    fn declare_type_now(&mut self, reg: &impl Catalogue, ty: TypeId) -> io::Result<()> {
        // Its alias is given when its line is written, after its parents':
        // aliases count up through the file.
        let def = reg.type_def(ty).clone();
        if let Some(p) = def.parent {
            self.declare_type(reg, p)?;
        }
        if let TypeKind::Link { start, end } = def.kind {
            self.declare_type(reg, start)?;
            self.declare_type(reg, end)?;
        }
        let kind = match def.kind {
            TypeKind::Container => EventKind::DefineContainerType,
            TypeKind::State => EventKind::DefineStateType,
            TypeKind::Variable => EventKind::DefineVariableType,
            TypeKind::Event => EventKind::DefineEventType,
            TypeKind::Link { .. } => EventKind::DefineLinkType,
        };
        self.begin(kind);
        match def.parent {
            Some(p) => self.ty(p),
            None => self.word(b"0"),
        }
        if let TypeKind::Link { start, end } = def.kind {
            self.ty(start);
            self.ty(end);
        }
        self.name(&def.name);
        if def.kind == TypeKind::Variable {
            self.name(def.color.as_deref().unwrap_or("0.5 0.5 0.5"));
        }
        self.types.mark(ty.0);
        self.ty(ty);
        self.end()
    }

    #[inline]
    fn declare_value(&mut self, reg: &impl Catalogue, v: ValueId) -> io::Result<()> {
        if self.values.has(v.0) {
            return Ok(());
        }
        self.declare_value_now(reg, v)
    }

    #[inline(never)]
    fn declare_value_now(&mut self, reg: &impl Catalogue, v: ValueId) -> io::Result<()> {
        let def = reg.value(v).clone();
        self.declare_type(reg, def.ty)?;
        let color = def.color.clone().unwrap_or_else(|| {
            crate::color::VALUES[self.values_declared as usize % crate::color::VALUES.len()]
                .to_string()
        });
        self.values_declared += 1;
        self.begin(EventKind::DefineEntityValue);
        self.ty(def.ty);
        self.name(&def.name);
        self.name(&color);
        self.values.mark(v.0);
        self.val(v);
        self.end()
    }

    #[inline]
    fn create_container(
        &mut self,
        reg: &impl Catalogue,
        c: ContainerId,
        time: i64,
    ) -> io::Result<()> {
        if c == ContainerId::ROOT || self.containers.has(c.0) {
            return Ok(());
        }
        self.create_container_now(reg, c, time)
    }

    #[inline(never)]
    fn create_container_now(
        &mut self,
        reg: &impl Catalogue,
        c: ContainerId,
        time: i64,
    ) -> io::Result<()> {
        let def = reg.container(c).clone();
        if let Some(p) = def.parent {
            self.create_container(reg, p, time)?;
        }
        self.declare_type(reg, def.ty)?;
        self.begin(EventKind::CreateContainer);
        self.time(time);
        self.ty(def.ty);
        match def.parent {
            Some(p) => self.cont(p),
            None => self.word(b"0"),
        }
        self.name(&def.name);
        self.containers.mark(c.0);
        self.cont(c);
        self.created.push(c);
        self.stats.containers += 1;
        self.end()
    }

    fn begin(&mut self, kind: EventKind) {
        self.lines.begin(byte_id(kind));
    }

    /// `begin`, `time`, `cont`, `ty` and `val` at once (see [`Lines::head`]).
    fn head(
        &mut self,
        kind: EventKind,
        t: i64,
        c: ContainerId,
        ty: TypeId,
        value: Option<ValueId>,
    ) {
        let c = (c != ContainerId::ROOT).then(|| self.containers.get(c.0));
        let v = value.map(|v| self.values.get(v.0));
        let (id, rel) = (byte_id(kind), self.rel(t));
        self.lines.head(id, rel, c, self.types.get(ty.0), v);
    }

    fn end(&mut self) -> io::Result<()> {
        self.stats.lines += 1;
        self.lines.end()
    }

    fn word(&mut self, w: &[u8]) {
        self.lines.word(w);
    }

    fn ty(&mut self, t: TypeId) {
        let a = self.types.get(t.0);
        self.lines.ident(b't', a);
    }

    fn val(&mut self, v: ValueId) {
        let a = self.values.get(v.0);
        self.lines.ident(b'v', a);
    }

    fn cont(&mut self, c: ContainerId) {
        if c == ContainerId::ROOT {
            return self.word(b"0");
        }
        let a = self.containers.get(c.0);
        self.lines.ident(b'c', a);
    }

    fn int(&mut self, n: i64) {
        self.lines.int(n);
    }

    fn key(&mut self, key: crate::model::LinkKey) {
        self.lines.key(key.channel, key.seq);
    }

    fn name(&mut self, name: &str) {
        self.lines.name(name);
    }

    /// A value's name as [`PajeWriter::name`] writes it, quoted once.
    fn value_name(&mut self, reg: &impl Catalogue, v: ValueId) {
        let i = v.0 as usize;
        if self.quoted.len() <= i {
            self.quoted.resize(i + 1, None);
        }
        let Some(slot) = self.quoted.get_mut(i) else {
            return;
        };
        let q = slot.get_or_insert_with(|| {
            let mut q = Vec::new();
            super::name::push_name(&mut q, &reg.value(v).name);
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

/// An event kind's id as a line's first token: fewer than 256 kinds, so
/// it fits a byte.
fn byte_id(kind: EventKind) -> u8 {
    u8::try_from(id_of(kind)).unwrap_or(u8::MAX)
}
