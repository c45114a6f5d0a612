//! What an output format implements ([`Encoder`]) and what the replay
//! hands it: the book of what was declared ([`Book`]) and the completed
//! intervals ([`Span`]).

use super::{Catalogue, RunEnd, SinkStats};
use crate::model::{ContainerId, Event, LinkKey, TypeId, ValueId};
use std::io;

/// Ordinals of one class of things, numbered in first-use order.
#[derive(Default)]
pub struct Ordinals {
    /// Ordinal + 1 by registry id; 0 = not declared yet.
    of: Vec<u32>,
    next: u32,
}

impl Ordinals {
    /// Whether `id` has its ordinal.
    #[inline]
    pub fn has(&self, id: u32) -> bool {
        self.of.get(id as usize).is_some_and(|&a| a != 0)
    }

    /// Gives `id` its ordinal if it has none; `true` the first time.
    pub fn mark(&mut self, id: u32) -> bool {
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

    /// The ordinal of `id` (from 0; 0 for one never declared).
    #[inline]
    pub fn get(&self, id: u32) -> u32 {
        self.of.get(id as usize).map_or(0, |a| a.saturating_sub(1))
    }

    /// How many were given.
    pub fn len(&self) -> u32 {
        self.next
    }

    /// Whether none was given.
    pub fn is_empty(&self) -> bool {
        self.next == 0
    }
}

/// What was declared, with the ordinal of each: types, containers, and
/// state values (the values a stack-ruled format declares; an event's or
/// a link's value is said by name).
#[derive(Default)]
pub struct Book {
    /// Types.
    pub types: Ordinals,
    /// Containers (never the root).
    pub containers: Ordinals,
    /// Values of state types.
    pub values: Ordinals,
    /// Values of event and link types (declared only for an encoder that
    /// takes intervals).
    pub named: Ordinals,
    /// The input (its index in the merge's order) the events handed now
    /// come from ([`crate::sink::TraceSink::source`]).
    pub source: u32,
}

impl Book {
    /// A type's ordinal.
    #[inline]
    pub fn ty(&self, t: TypeId) -> u32 {
        self.types.get(t.0)
    }
    /// A container's ordinal; `None` for the root.
    #[inline]
    pub fn container(&self, c: ContainerId) -> Option<u32> {
        (c != ContainerId::ROOT).then(|| self.containers.get(c.0))
    }
    /// A state value's ordinal.
    #[inline]
    pub fn value(&self, v: ValueId) -> u32 {
        self.values.get(v.0)
    }
}

/// Why an interval ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanEnd {
    /// A pop (or the end of that very state).
    Pop,
    /// A set state replaced the stack, or a new value the variable's.
    Set,
    /// Its container was destroyed.
    ContainerEnd,
    /// The trace ended with it open.
    TraceEnd,
}

impl SpanEnd {
    /// The word for it in a table.
    pub fn word(self) -> &'static str {
        match self {
            SpanEnd::Pop => "pop",
            SpanEnd::Set => "set",
            SpanEnd::ContainerEnd => "container_end",
            SpanEnd::TraceEnd => "trace_end",
        }
    }
}

/// A completed interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Span {
    /// A state, from its push (or set) to its end.
    State {
        /// Its row's container.
        container: ContainerId,
        /// Its row's type.
        ty: TypeId,
        /// The state.
        value: ValueId,
        /// Start, ns.
        start: i64,
        /// End, ns.
        end: i64,
        /// How many states were open under it when it started.
        depth: u32,
        /// Why it ended.
        cause: SpanEnd,
        /// The input that began it.
        source: u32,
    },
    /// A variable's value, from the time it was set to the next change.
    Variable {
        /// Its container.
        container: ContainerId,
        /// The variable.
        ty: TypeId,
        /// The value.
        value: f64,
        /// Start, ns.
        start: i64,
        /// End, ns.
        end: i64,
        /// Why it ended.
        cause: SpanEnd,
        /// The input that began it.
        source: u32,
    },
    /// An arrow whose two halves were met.
    Link {
        /// The common ancestor of both ends.
        container: ContainerId,
        /// Link type.
        ty: TypeId,
        /// Link value.
        value: ValueId,
        /// Where it starts.
        from: ContainerId,
        /// Where it ends.
        to: ContainerId,
        /// Start, ns.
        start: i64,
        /// End, ns.
        end: i64,
        /// Its key.
        key: LinkKey,
        /// Payload size.
        size: i64,
        /// Tag.
        tag: i64,
        /// The input of its start.
        source: u32,
    },
}

/// Something open at a reference point (a checkpoint, `docs/tables.md`):
/// what a window that starts there must carry into it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Held {
    /// A container alive, created at `since`.
    Container {
        /// The container.
        container: ContainerId,
        /// Its creation.
        since: i64,
    },
    /// An open state.
    State {
        /// Its row's container.
        container: ContainerId,
        /// Its row's type.
        ty: TypeId,
        /// The state.
        value: ValueId,
        /// How many states were open under it when it started.
        depth: u32,
        /// Its start.
        since: i64,
        /// The input that began it.
        source: u32,
    },
    /// A variable's current value.
    Variable {
        /// Its container.
        container: ContainerId,
        /// The variable.
        ty: TypeId,
        /// The value.
        value: f64,
        /// When it was set.
        since: i64,
        /// The input that set it.
        source: u32,
    },
    /// A link whose one half was met.
    Link {
        /// The common ancestor of both ends.
        container: ContainerId,
        /// Link type.
        ty: TypeId,
        /// Link value.
        value: ValueId,
        /// Its start's container, when the start was met.
        from: Option<ContainerId>,
        /// Its end's container, when the end was met (first).
        to: Option<ContainerId>,
        /// The time of the half met.
        since: i64,
        /// Its key.
        key: LinkKey,
        /// Payload size (a start's).
        size: i64,
        /// Tag (a start's).
        tag: i64,
        /// The input of the half met.
        source: u32,
    },
}

/// What an output format says of the replayed run. Each call comes once
/// everything it names was declared and created.
pub trait Encoder {
    /// Whether it takes [`Span`]s; a format that writes events as they
    /// come (Pajé text) does not, and the replay then keeps no start
    /// times, values or link halves for it.
    const INTERVALS: bool;
    /// How it shows a window of the run (`--from`/`--to`): cut at the
    /// window's edges, as a viewer's trace of that time alone (what is
    /// open at the start created and pushed there, everything closed at
    /// the end: Pajé), or else by the completion rule (an interval in
    /// the window where it ends, with its true start; what is open at the
    /// end a [`Held`] at a checkpoint: the tables).
    const CUT: bool = false;
    /// A type, first used (its parents and link ends declared before).
    /// A format that names nothing (a watcher) leaves these three as they
    /// are.
    fn declare_type<C: Catalogue + ?Sized>(
        &mut self,
        _cat: &C,
        _book: &Book,
        _ty: TypeId,
    ) -> io::Result<()> {
        Ok(())
    }
    /// A value, first used, with its colour (given when the hierarchy
    /// names none; only state values are coloured so).
    fn declare_value<C: Catalogue + ?Sized>(
        &mut self,
        _cat: &C,
        _book: &Book,
        _v: ValueId,
        _color: Option<&str>,
    ) -> io::Result<()> {
        Ok(())
    }
    /// A container, created before its first use at `time`.
    fn create<C: Catalogue + ?Sized>(
        &mut self,
        _cat: &C,
        _book: &Book,
        _c: ContainerId,
        _time: i64,
    ) -> io::Result<()> {
        Ok(())
    }
    /// An event as a stack-ruled format writes it: never an
    /// [`Op::EndState`], never a pop on an empty stack. `state` tells
    /// whether its type is a state type.
    fn event<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        ev: &Event,
        state: bool,
    ) -> io::Result<()>;
    /// A completed interval (only when [`Encoder::INTERVALS`]).
    fn span<C: Catalogue + ?Sized>(&mut self, _cat: &C, _book: &Book, _s: &Span) -> io::Result<()> {
        Ok(())
    }
    /// Something open at the reference point `at` (only when
    /// [`Encoder::INTERVALS`]): every [`Held`] of one point comes at once,
    /// containers first.
    fn checkpoint<C: Catalogue + ?Sized>(
        &mut self,
        _cat: &C,
        _book: &Book,
        _at: i64,
        _held: &Held,
    ) -> io::Result<()> {
        Ok(())
    }
    /// The run ends: what is still open is closed and every container
    /// destroyed next.
    fn ending(&mut self) {}
    /// A container destroyed at `time`, after its children.
    fn destroy<C: Catalogue + ?Sized>(
        &mut self,
        _cat: &C,
        _book: &Book,
        _c: ContainerId,
        _time: i64,
    ) -> io::Result<()> {
        Ok(())
    }
    /// What is left when the output is complete (the stream written to).
    type Out;
    /// The end: everything written and flushed. `stats` has the replay's
    /// counts; the encoder sets `records`.
    fn finish(self, end: &RunEnd, stats: &mut SinkStats) -> io::Result<Self::Out>;
}
