//! The one replay of model events, shared by every output format: what
//! PajeNG's simulator and Aiyra keep, kept once.
//!
//! It owns the books: which types, values and containers were declared
//! (each with its ordinal, its place in first-use order within its class,
//! and, through [`super::ids`], a key from what it is), when containers
//! are created (before their first use, parents first) and destroyed (at
//! the end, children first), the state stack of every row (value, start,
//! depth), the value of every variable, the halves of links in flight,
//! and the colours of state values. A pop on an empty stack is left out
//! and counted; a state that ends under others ([`Op::EndState`]) is
//! turned into the pops and pushes a stack-ruled format needs, while the
//! intervals keep the others whole.
//!
//! An [`Encoder`] hears, in order, each declaration and creation, each
//! event as a stack-ruled format writes it, each destruction and, when it
//! asks for them ([`Encoder::INTERVALS`]), every completed interval
//! ([`Span`]). Memory is the open entities: a row's stack, a variable's
//! last value, a link's first half.

mod intervals;
mod window;

pub use super::encoder::{Book, Encoder, Held, Ordinals, Span, SpanEnd};
use super::{Catalogue, RunEnd, SinkStats};
use crate::model::{ContainerId, Event, Op, TypeId, ValueId};
use crate::registry::TypeKind;
use std::io;
use window::{give, Gate, Phase};
pub use window::{Cut, Points};

/// A container's place in the replay's tables by id: the root container
/// (which a replayed trace may give rows) first, then each id.
#[inline]
fn slot(c: ContainerId) -> usize {
    c.0.wrapping_add(1) as usize
}

/// An open state: its value, start, and how many states were open under
/// it when it started (it keeps that depth if one below ends first).
#[derive(Clone, Copy)]
struct Open {
    value: ValueId,
    depth: u32,
    start: i64,
    source: u32,
}

/// A state row: its type and stack.
struct Row {
    ty: u32,
    stack: Vec<Open>,
}

/// A variable's current value (intervals only).
#[derive(Clone, Copy)]
struct Current {
    ty: u32,
    value: f64,
    start: i64,
    source: u32,
}

/// The first half of a link in flight (intervals only).
#[derive(Clone, Copy)]
struct Half {
    container: ContainerId,
    ty: TypeId,
    value: ValueId,
    /// The container it starts or ends at.
    at: ContainerId,
    time: i64,
    start: bool,
    size: i64,
    tag: i64,
    source: u32,
}

/// The replay feeding one encoder.
pub struct Replay<E> {
    enc: E,
    book: Book,
    /// Containers in creation order: destroyed in reverse, children first.
    created: Vec<ContainerId>,
    /// By container id: created and not destroyed (a replayed trace may
    /// destroy a container before the end).
    alive: Vec<bool>,
    /// By container id: the containers created in it, destroyed with it.
    children: Vec<Vec<ContainerId>>,
    /// By container id: its state rows (a container has a few; a hash per
    /// state change cost 5% on state-heavy traces).
    rows: Vec<Vec<Row>>,
    /// By container id: its variables' current values (intervals only).
    vars: Vec<Vec<Current>>,
    /// Where each (container, variable type) is in its container's list.
    var_at: foldhash::HashMap<(u32, u32), u32>,
    /// Links in flight by key (intervals only).
    halves: foldhash::HashMap<(u32, u64), Half>,
    stats: SinkStats,
    /// The window and the reference points asked for.
    cut: Cut,
    /// Where the replay is in the window, and what it hands on.
    gate: Gate,
    /// Whether the starts, values and halves of what is open are kept
    /// (for intervals, or to carry them into a window).
    keep: bool,
    /// By container id: its creation time.
    made: Vec<i64>,
    /// The counts when the window opened.
    base: SinkStats,
    /// The next regular reference point.
    next_point: i64,
    /// When the replay started, to measure the wait for the window.
    started: std::time::Instant,
}

impl<E: Encoder> Replay<E> {
    /// A replay feeding `enc`.
    pub fn new(enc: E) -> Replay<E> {
        Replay {
            enc,
            book: Book::default(),
            created: Vec::new(),
            alive: Vec::new(),
            children: Vec::new(),
            rows: Vec::new(),
            vars: Vec::new(),
            var_at: foldhash::HashMap::default(),
            halves: foldhash::HashMap::default(),
            stats: SinkStats::default(),
            cut: Cut::default(),
            gate: Gate::default(),
            keep: E::INTERVALS,
            made: Vec::new(),
            base: SinkStats::default(),
            next_point: i64::MAX,
            started: std::time::Instant::now(),
        }
    }

    /// The events that follow come from input `source`.
    pub fn set_source(&mut self, source: u32) {
        self.book.source = source;
    }

    /// Counts so far.
    pub fn stats(&self) -> SinkStats {
        self.stats
    }

    /// Creates containers at `time` in the given order, before any event:
    /// a viewer shows sibling rows in creation order.
    pub fn create_in_order<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        order: &[ContainerId],
        time: i64,
    ) -> io::Result<()> {
        if time >= self.gate.edge {
            self.cross(cat, time)?;
        }
        // A container made after a window's end is none of its.
        if self.gate.phase == Phase::After {
            return Ok(());
        }
        for &c in order {
            self.create(cat, c, time)?;
        }
        Ok(())
    }

    /// Replays one event.
    pub fn event<C: Catalogue + ?Sized>(&mut self, cat: &C, ev: &Event) -> io::Result<()> {
        if ev.time >= self.gate.edge {
            self.cross(cat, ev.time)?;
        }
        if self.gate.phase == Phase::After {
            return self.after(cat, ev);
        }
        // A replayed trace may step back (pj_dump reads it on, closing
        // at the last line's time); the merge never does.
        self.stats.last_time = Some(ev.time);
        let (t, source) = (ev.time, self.book.source);
        let state = match ev.op {
            Op::SetVariable {
                container,
                ty,
                value,
            } => {
                self.create(cat, container, t)?;
                self.declare_type(cat, ty)?;
                if self.keep {
                    self.set_variable(cat, container, ty, value, t)?;
                }
                self.stats.variables += 1;
                false
            }
            Op::SetState {
                container,
                ty,
                value,
            } => {
                let (c, i) = self.row_at(container, ty);
                if E::INTERVALS && self.gate.phase == Phase::In {
                    // Every state open in the row ends, innermost first,
                    // read in place (one lookup of the row, no move).
                    for open in self.rows[c][i].stack.iter().rev() {
                        let span = Span::State {
                            container,
                            ty,
                            value: open.value,
                            start: open.start,
                            end: t,
                            depth: open.depth,
                            cause: SpanEnd::Set,
                            source: open.source,
                        };
                        give(&mut self.enc, cat, &self.book, &mut self.gate, &span)?;
                    }
                }
                let stack = &mut self.rows[c][i].stack;
                stack.clear();
                stack.push(Open {
                    value,
                    depth: 0,
                    start: t,
                    source,
                });
                self.stats.states += 1;
                self.entity(cat, container, ty, Some(value), t)?
            }
            Op::PushState {
                container,
                ty,
                value,
            } => {
                let stack = self.stack(container, ty);
                let depth = stack.len() as u32;
                stack.push(Open {
                    value,
                    depth,
                    start: t,
                    source,
                });
                self.stats.states += 1;
                self.entity(cat, container, ty, Some(value), t)?
            }
            Op::PopState { container, ty } => {
                let Some(open) = self.stack(container, ty).pop() else {
                    self.stats.skipped_pops += 1;
                    return Ok(());
                };
                if E::INTERVALS {
                    self.state_span(cat, container, ty, open, t, SpanEnd::Pop)?;
                }
                self.stats.states += 1;
                self.entity(cat, container, ty, None, t)?
            }
            Op::EndState {
                container,
                ty,
                value,
            } => return self.end_state(cat, container, ty, value, t),
            Op::NewEvent {
                container,
                ty,
                value,
            } => {
                self.stats.events_point += 1;
                self.entity(cat, container, ty, Some(value), t)?
            }
            Op::StartLink {
                container,
                ty,
                value,
                from,
                ..
            } => {
                self.create(cat, from, t)?;
                self.stats.links += 1;
                self.entity(cat, container, ty, Some(value), t)?
            }
            Op::EndLink {
                container,
                ty,
                value,
                to,
                ..
            } => {
                self.create(cat, to, t)?;
                self.entity(cat, container, ty, Some(value), t)?
            }
        };
        self.stats.events += 1;
        if self.gate.phase == Phase::In {
            self.enc.event(cat, &self.book, ev, state)?;
        }
        if self.keep {
            self.link_half(cat, ev)?;
        }
        Ok(())
    }

    /// The end of the state `value` of a row, wherever it is in the stack:
    /// its interval ends alone, and a stack-ruled format is told the pops
    /// down to it and the pushes of the states above it back.
    fn end_state<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        container: ContainerId,
        ty: TypeId,
        value: ValueId,
        t: i64,
    ) -> io::Result<()> {
        let stack = self.stack(container, ty);
        let Some(depth) = stack.iter().rposition(|o| o.value == value) else {
            self.stats.skipped_pops += 1;
            return Ok(());
        };
        let open = stack.remove(depth);
        let above: Vec<ValueId> = stack[depth..].iter().map(|o| o.value).collect();
        if E::INTERVALS {
            self.state_span(cat, container, ty, open, t, SpanEnd::Pop)?;
        }
        let pops = (0..=above.len()).map(|_| Op::PopState { container, ty });
        let pushes = above.into_iter().map(|value| Op::PushState {
            container,
            ty,
            value,
        });
        for op in pops.chain(pushes) {
            self.stats.events += 1;
            self.stats.states += 1;
            if self.gate.phase == Phase::In {
                self.enc
                    .event(cat, &self.book, &Event { time: t, op }, true)?;
            }
        }
        Ok(())
    }

    /// What an event on an entity row needs declared: its container, its
    /// type, and a state's value. Whether the type is a state type.
    #[inline]
    fn entity<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        container: ContainerId,
        ty: TypeId,
        value: Option<ValueId>,
        t: i64,
    ) -> io::Result<bool> {
        self.create(cat, container, t)?;
        self.declare_type(cat, ty)?;
        let state = cat.type_def(ty).kind == TypeKind::State;
        if let Some(v) = value {
            if state {
                self.declare_value(cat, v)?;
            } else if E::INTERVALS && self.book.named.mark(v.0) {
                let color = cat.value(v).color.as_deref();
                self.enc.declare_value(cat, &self.book, v, color)?;
            }
        }
        Ok(state)
    }

    /// The stack of a state row.
    #[inline]
    fn stack(&mut self, container: ContainerId, ty: TypeId) -> &mut Vec<Open> {
        let (c, i) = self.row_at(container, ty);
        &mut self.rows[c][i].stack
    }

    /// Where a state row is in `rows`.
    #[inline]
    fn row_at(&mut self, container: ContainerId, ty: TypeId) -> (usize, usize) {
        let c = slot(container);
        // A row seen before, nearly always: its container's first.
        let first = matches!(self.rows.get(c).and_then(|r| r.first()), Some(r) if r.ty == ty.0);
        let i = if first { 0 } else { self.row_index(c, ty) };
        (c, i)
    }

    /// [`Replay::stack`]'s row index, added when new.
    #[inline(never)]
    fn row_index(&mut self, c: usize, ty: TypeId) -> usize {
        if self.rows.len() <= c {
            self.rows.resize_with(c + 1, Vec::new);
        }
        let rows = &mut self.rows[c];
        match rows.iter().position(|r| r.ty == ty.0) {
            Some(i) => i,
            None => {
                rows.push(Row {
                    ty: ty.0,
                    stack: Vec::new(),
                });
                rows.len() - 1
            }
        }
    }

    // The three declare/create steps are asked for every event and done
    // once: the test is inlined, the work is not.
    #[inline]
    fn declare_type<C: Catalogue + ?Sized>(&mut self, cat: &C, ty: TypeId) -> io::Result<()> {
        if self.book.types.has(ty.0) {
            return Ok(());
        }
        self.declare_type_now(cat, ty)
    }

    #[inline(never)]
    fn declare_type_now<C: Catalogue + ?Sized>(&mut self, cat: &C, ty: TypeId) -> io::Result<()> {
        // Parents and link ends first: ordinals count up through a file.
        let def = cat.type_def(ty);
        let (parent, kind) = (def.parent, def.kind);
        if let Some(p) = parent {
            self.declare_type(cat, p)?;
        }
        if let TypeKind::Link { start, end } = kind {
            self.declare_type(cat, start)?;
            self.declare_type(cat, end)?;
        }
        self.book.types.mark(ty.0);
        self.enc.declare_type(cat, &self.book, ty)
    }

    #[inline]
    fn declare_value<C: Catalogue + ?Sized>(&mut self, cat: &C, v: ValueId) -> io::Result<()> {
        if self.book.values.has(v.0) {
            return Ok(());
        }
        self.declare_value_now(cat, v)
    }

    #[inline(never)]
    fn declare_value_now<C: Catalogue + ?Sized>(&mut self, cat: &C, v: ValueId) -> io::Result<()> {
        let def = cat.value(v);
        self.declare_type(cat, def.ty)?;
        // The palette by the value's key: the same value gets the same
        // colour in every output, window and task of a run.
        let key = super::ids::value_key(cat, v).to_le_bytes();
        let color = match &def.color {
            Some(c) => c.as_str(),
            None => crate::color::pick(&crate::color::VALUES, &key),
        };
        self.book.values.mark(v.0);
        self.enc.declare_value(cat, &self.book, v, Some(color))
    }

    #[inline]
    fn create<C: Catalogue + ?Sized>(&mut self, cat: &C, c: ContainerId, t: i64) -> io::Result<()> {
        if c == ContainerId::ROOT || self.book.containers.has(c.0) {
            return Ok(());
        }
        self.create_now(cat, c, t)
    }

    #[inline(never)]
    fn create_now<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        c: ContainerId,
        t: i64,
    ) -> io::Result<()> {
        let def = cat.container(c);
        let (parent, ty) = (def.parent, def.ty);
        if let Some(p) = parent {
            self.create(cat, p, t)?;
        }
        self.declare_type(cat, ty)?;
        self.book.containers.mark(c.0);
        self.created.push(c);
        let i = c.0 as usize;
        if self.alive.len() <= i {
            self.alive.resize(i + 1, false);
        }
        self.alive[i] = true;
        if let Some(p) = parent {
            let p = p.0 as usize;
            if self.children.len() <= p {
                self.children.resize_with(p + 1, Vec::new);
            }
            self.children[p].push(c);
        }
        if self.made.len() <= i {
            self.made.resize(i + 1, 0);
        }
        self.made[i] = t;
        self.stats.containers += 1;
        // A format that shows the window cut creates what is alive at its
        // start there (`Replay::open`).
        if E::CUT && self.gate.phase == Phase::Before {
            return Ok(());
        }
        self.enc.create(cat, &self.book, c, t)
    }

    /// How many states are open in a row.
    pub fn depth(&self, container: ContainerId, ty: TypeId) -> usize {
        let rows = self.rows.get(slot(container));
        let row = rows.and_then(|r| r.iter().find(|r| r.ty == ty.0));
        row.map_or(0, |r| r.stack.len())
    }

    /// Ends every state open in a row without a new one (a replayed
    /// trace's `PajeResetState`).
    pub fn reset<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        container: ContainerId,
        ty: TypeId,
        t: i64,
    ) -> io::Result<()> {
        if E::INTERVALS {
            self.close_row(cat, container, ty, t, SpanEnd::Set)?;
        }
        self.stack(container, ty).clear();
        Ok(())
    }

    /// Destroys a container of a replayed trace at `t`, with what is open
    /// in it, and every container created in it, children first. One
    /// never created or destroyed before is left alone.
    pub fn destroy<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        c: ContainerId,
        t: i64,
    ) -> io::Result<()> {
        if t >= self.gate.edge {
            self.cross(cat, t)?;
        }
        // After a window its end closes everything.
        if self.gate.phase == Phase::After {
            return Ok(());
        }
        // Post-order over the live subtree, without recursion.
        let mut order = Vec::new();
        let mut todo = vec![c];
        while let Some(x) = todo.pop() {
            let i = x.0 as usize;
            // One destroyed before may hold one created in it since
            // (PajeContainer::recursiveDestroy goes on into it too).
            if let Some(a) = self.alive.get_mut(i).filter(|a| **a) {
                *a = false;
                order.push(x);
            }
            if let Some(kids) = self.children.get_mut(i) {
                todo.extend(std::mem::take(kids));
            }
        }
        for x in order.into_iter().rev() {
            if E::INTERVALS {
                self.close_container(cat, x, t, SpanEnd::ContainerEnd)?;
            }
            if let Some(rows) = self.rows.get_mut(slot(x)) {
                rows.clear();
            }
            // Before the window it ended in no window's time; after it,
            // its end is another window's.
            if self.gate.phase == Phase::In {
                self.enc.destroy(cat, &self.book, x, t)?;
            }
        }
        Ok(())
    }

    /// Destroys every container at the last event's time, children first,
    /// and ends the encoder's output. Returns it and the counts.
    pub fn finish<C: Catalogue + ?Sized>(
        mut self,
        cat: &C,
        end: &RunEnd,
    ) -> io::Result<(E::Out, SinkStats)> {
        let last = match self.gate.phase {
            // What was open at the window's end is in its checkpoint (or,
            // cut, closed there).
            Phase::After => self.cut.to.filter(|_| E::CUT),
            // Nothing reached the window: nothing of it to end.
            Phase::Before => None,
            Phase::In => self.stats.last_time,
        };
        if let Some(t) = last {
            self.enc.ending();
            // Children are always created after their parents, so the
            // reverse creation order destroys children first.
            for c in std::mem::take(&mut self.created).into_iter().rev() {
                if !self.alive.get(c.0 as usize).copied().unwrap_or(false) {
                    continue;
                }
                if E::INTERVALS && self.gate.phase == Phase::In {
                    self.close_container(cat, c, t, SpanEnd::TraceEnd)?;
                }
                self.enc.destroy(cat, &self.book, c, t)?;
            }
        }
        let mut stats = self.window_stats();
        let out = self.enc.finish(end, &mut stats)?;
        Ok((out, stats))
    }
}
