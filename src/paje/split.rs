//! The Pajé writer on a thread of its own (issue 17: converting on one
//! core, writing on the other).
//!
//! The run's thread keeps the registry and hands each merged event on,
//! in batches through a bounded channel; before the first event that
//! names a container, type or value, it sends that definition (and its
//! parents'), once. The writer's thread keeps a copy of the definitions
//! it was sent (`Replica`) and runs the very [`PajeWriter`] the run's
//! thread runs with `--threads 1`: the same events in the same order,
//! definitions read at the same moments, so the same bytes
//! (`tests/threads.rs` compares them). Everything per event but a few
//! lookups (declarations, aliases, stacks, formatting, the writes) is on
//! the writer's thread.

use super::writer::{Aliases, Catalogue, PajeWriter, WriteStats};
use crate::model::{ContainerId, Event, Op, TypeId, ValueId};
use crate::registry::{ContainerDef, Registry, TypeDef, TypeKind, ValueDef};
use crate::write::TraceSink;
use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Items per batch: the channel and the wake-ups cost nothing per event,
/// and a batch (about 150 KB) stays in the caches.
const BATCH: usize = 2048;
/// Batches in flight.
const DEPTH: usize = 4;

/// What the writer's thread is sent.
enum Item {
    Event(Event),
    /// A container created before any event ([`TraceSink::create_in_order`]).
    Create(ContainerId, i64),
    // Definitions are rare: boxed, so that an item is an event's size.
    Type(TypeId, Box<TypeDef>),
    Container(ContainerId, Box<ContainerDef>),
    Value(ValueId, Box<ValueDef>),
}

/// The definitions sent so far, by id: what the writer's thread reads
/// instead of the registry.
struct Replica {
    types: Vec<Option<TypeDef>>,
    containers: Vec<Option<ContainerDef>>,
    values: Vec<Option<ValueDef>>,
    /// Read for an id never sent (a bug of the sender): a wrong name in
    /// the trace rather than a panic.
    unknown: (TypeDef, ContainerDef, ValueDef),
}

fn put<T>(v: &mut Vec<Option<T>>, i: u32, def: T) {
    let i = i as usize;
    if v.len() <= i {
        v.resize_with(i + 1, || None);
    }
    if let Some(slot) = v.get_mut(i) {
        *slot = Some(def);
    }
}

impl Replica {
    fn new() -> Replica {
        let name: crate::registry::Name = "unknown".into();
        Replica {
            types: Vec::new(),
            containers: Vec::new(),
            values: Vec::new(),
            unknown: (
                TypeDef {
                    kind: TypeKind::Container,
                    parent: None,
                    name: name.clone(),
                    color: None,
                },
                ContainerDef {
                    ty: TypeId(0),
                    parent: None,
                    name,
                },
                ValueDef {
                    ty: TypeId(0),
                    name: "unknown".into(),
                    color: None,
                },
            ),
        }
    }
}

impl Catalogue for Replica {
    fn type_def(&self, id: TypeId) -> &TypeDef {
        let found = self.types.get(id.0 as usize).and_then(Option::as_ref);
        found.unwrap_or(&self.unknown.0)
    }
    fn container(&self, id: ContainerId) -> &ContainerDef {
        let found = self.containers.get(id.0 as usize).and_then(Option::as_ref);
        found.unwrap_or(&self.unknown.1)
    }
    fn value(&self, id: ValueId) -> &ValueDef {
        let found = self.values.get(id.0 as usize).and_then(Option::as_ref);
        found.unwrap_or(&self.unknown.2)
    }
}

/// The containers (at most two), type and value an event names.
#[inline]
fn names(op: &Op) -> ([ContainerId; 2], TypeId, Option<ValueId>) {
    match *op {
        Op::SetVariable { container, ty, .. } | Op::PopState { container, ty } => {
            ([container, container], ty, None)
        }
        Op::SetState {
            container,
            ty,
            value,
        }
        | Op::PushState {
            container,
            ty,
            value,
        }
        | Op::NewEvent {
            container,
            ty,
            value,
        } => ([container, container], ty, Some(value)),
        Op::StartLink {
            container,
            ty,
            value,
            from: other,
            ..
        }
        | Op::EndLink {
            container,
            ty,
            value,
            to: other,
            ..
        } => ([container, other], ty, Some(value)),
    }
}

/// The run's side: events and definitions batched to the writer's thread.
pub struct Split<W> {
    batch: Vec<Item>,
    /// The ids whose definitions were sent.
    types: Aliases,
    containers: Aliases,
    values: Aliases,
    tx: Option<SyncSender<Vec<Item>>>,
    /// Batches written, to fill again.
    back: Receiver<Vec<Item>>,
    /// Gives back the output and the counts, or the error that stopped it.
    done: Option<JoinHandle<io::Result<(W, WriteStats)>>>,
}

impl<W: Write + Send + 'static> Split<W> {
    /// Starts the writer's thread: it writes the header to `out`, then
    /// every line (see [`PajeWriter::new`]).
    pub fn new(out: W, origin: i64, absolute: bool) -> Split<W> {
        let (tx, rx) = sync_channel::<Vec<Item>>(DEPTH);
        let (give, back) = sync_channel::<Vec<Item>>(DEPTH + 2);
        let done = crate::prefetch::spawn(move || -> io::Result<(W, WriteStats)> {
            let mut paje = PajeWriter::new(out, origin, absolute)?;
            let mut defs = Replica::new();
            for mut batch in rx {
                for item in batch.drain(..) {
                    match item {
                        Item::Event(e) => paje.write_event(&defs, &e)?,
                        Item::Create(c, time) => paje.create_in_order(&defs, &[c], time)?,
                        Item::Type(id, d) => put(&mut defs.types, id.0, *d),
                        Item::Container(id, d) => put(&mut defs.containers, id.0, *d),
                        Item::Value(id, d) => put(&mut defs.values, id.0, *d),
                    }
                }
                let _ = give.try_send(batch);
            }
            paje.finish(&defs)
        });
        Split {
            batch: Vec::with_capacity(BATCH),
            types: Aliases::default(),
            containers: Aliases::default(),
            values: Aliases::default(),
            tx: Some(tx),
            back,
            done: Some(done),
        }
    }
}

impl<W> Split<W> {
    /// Whether every definition `op` needs was sent.
    #[inline]
    fn known(&self, op: &Op) -> bool {
        let ([a, b], ty, value) = names(op);
        let has = |c: ContainerId| c == ContainerId::ROOT || self.containers.has(c.0);
        has(a) && has(b) && self.types.has(ty.0) && value.is_none_or(|v| self.values.has(v.0))
    }

    /// Sends what `op` names that was not sent yet, parents first.
    #[inline(never)]
    fn send_names(&mut self, reg: &Registry, op: &Op) {
        let ([a, b], ty, value) = names(op);
        self.send_container(reg, a);
        self.send_container(reg, b);
        self.send_type(reg, ty);
        if let Some(v) = value {
            self.send_value(reg, v);
        }
    }

    fn send_type(&mut self, reg: &Registry, ty: TypeId) {
        if !self.types.mark(ty.0) {
            return;
        }
        let def = reg.type_def(ty);
        if let Some(p) = def.parent {
            self.send_type(reg, p);
        }
        if let TypeKind::Link { start, end } = def.kind {
            self.send_type(reg, start);
            self.send_type(reg, end);
        }
        self.batch.push(Item::Type(ty, Box::new(def.clone())));
    }

    fn send_container(&mut self, reg: &Registry, c: ContainerId) {
        if c == ContainerId::ROOT || !self.containers.mark(c.0) {
            return;
        }
        let def = reg.container(c);
        if let Some(p) = def.parent {
            self.send_container(reg, p);
        }
        self.send_type(reg, def.ty);
        self.batch.push(Item::Container(c, Box::new(def.clone())));
    }

    fn send_value(&mut self, reg: &Registry, v: ValueId) {
        if !self.values.mark(v.0) {
            return;
        }
        let def = reg.value(v);
        self.send_type(reg, def.ty);
        self.batch.push(Item::Value(v, Box::new(def.clone())));
    }

    /// Hands the batch to the writer's thread.
    fn hand(&mut self) -> io::Result<()> {
        let fresh = self
            .back
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let full = std::mem::replace(&mut self.batch, fresh);
        match self.tx.as_ref().map(|tx| tx.send(full)) {
            Some(Ok(())) => Ok(()),
            // The thread stopped: its error says why.
            _ => Err(self
                .stop()
                .err()
                .unwrap_or_else(|| io::Error::other("the writer's thread ended early"))),
        }
    }

    /// Closes the channel and waits for the thread.
    fn stop(&mut self) -> io::Result<(W, WriteStats)> {
        drop(self.tx.take());
        match self.done.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(io::Error::other("the writer's thread panicked")),
            None => Err(io::Error::other("the writer's thread ended early")),
        }
    }
}

/// A writer dropped on an error still waits for its thread: the output
/// it holds (a temporary file) must be gone before the run ends.
impl<W> Drop for Split<W> {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(done) = self.done.take() {
            let _ = done.join();
        }
    }
}

impl<W> TraceSink for Split<W> {
    type Out = W;

    fn create_in_order(
        &mut self,
        reg: &mut Registry,
        order: &[ContainerId],
        time: i64,
    ) -> io::Result<()> {
        for &c in order {
            self.send_container(reg, c);
            self.batch.push(Item::Create(c, time));
        }
        Ok(())
    }

    #[inline]
    fn write_event(&mut self, reg: &mut Registry, ev: &Event) -> io::Result<()> {
        self.write_run(reg, std::slice::from_ref(ev))
    }

    fn write_run(&mut self, reg: &mut Registry, events: &[Event]) -> io::Result<()> {
        for ev in events {
            if !self.known(&ev.op) {
                self.send_names(reg, &ev.op);
            }
            self.batch.push(Item::Event(*ev));
        }
        if self.batch.len() >= BATCH {
            self.hand()?;
        }
        Ok(())
    }

    fn finish(mut self, _reg: &Registry) -> io::Result<(W, WriteStats)> {
        self.hand()?;
        self.stop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchy::{Display, Hierarchy};
    use crate::model::LinkKey;

    /// Random events on machines and processes made as they come (so
    /// definitions reach the writer's thread between events): variables,
    /// states pushed and popped past their depth, point events, links
    /// whose other end is a container not created yet; some containers
    /// created up front.
    fn events(ops: &[(u8, u8, u8, u16)]) -> (Registry, Vec<ContainerId>, Vec<Event>) {
        let mut reg = Registry::new(Hierarchy::builtin());
        let plain = Display::default();
        let up_front: Vec<ContainerId> = (0..2)
            .map(|h| reg.machine(&format!("node{h}"), None))
            .collect();
        let mut time = 1_000_000_000_000i64;
        let mut out = Vec::new();
        for (i, &(host, pid, what, dt)) in ops.iter().enumerate() {
            time += i64::from(dt) * 100;
            let m = reg.machine(&format!("node{}", host % 5), None);
            let p = reg.process(m, u32::from(pid % 4)).unwrap_or(m);
            let mty = reg.container(m).ty;
            let pty = reg.container(p).ty;
            let op = match what % 7 {
                0 => Op::SetVariable {
                    container: m,
                    ty: reg.variable_type(mty, &format!("metric {}", what % 3), None),
                    value: f64::from(what) / 7.0,
                },
                1 | 2 => {
                    let ty = reg.state_type(pty, "state");
                    let value = reg.value_of(ty, &format!("s{}", what % 4), &plain);
                    if what % 7 == 1 {
                        Op::PushState {
                            container: p,
                            ty,
                            value,
                        }
                    } else {
                        Op::SetState {
                            container: p,
                            ty,
                            value,
                        }
                    }
                }
                3 => Op::PopState {
                    container: p,
                    ty: reg.state_type(pty, "state"),
                },
                4 => {
                    let ty = reg.event_type(pty, "event");
                    let value = reg.value_of(ty, &format!("e {}", what % 2), &plain);
                    Op::NewEvent {
                        container: p,
                        ty,
                        value,
                    }
                }
                k => {
                    let other = reg.machine(&format!("node{}", (host / 8) % 7), None);
                    let other = reg.process(other, u32::from(what % 3)).unwrap_or(other);
                    let (container, ty, value) = reg.link(p, other, "message", "m", &plain);
                    let key = LinkKey {
                        channel: 1,
                        seq: i as u64,
                    };
                    if k == 5 {
                        Op::StartLink {
                            container,
                            ty,
                            value,
                            from: p,
                            key,
                            size: i64::from(dt),
                            tag: 0,
                        }
                    } else {
                        Op::EndLink {
                            container,
                            ty,
                            value,
                            to: other,
                            key,
                        }
                    }
                }
            };
            out.push(Event { time, op });
        }
        (reg, up_front, out)
    }

    fn write<S: TraceSink>(
        mut sink: S,
        reg: &mut Registry,
        up_front: &[ContainerId],
        events: &[Event],
    ) -> io::Result<(S::Out, WriteStats)> {
        sink.create_in_order(reg, up_front, 1_000_000_000_000)?;
        // Event by event, then in runs of several lengths (a lone
        // source's way).
        let (one, runs) = events.split_at(events.len() / 3);
        for e in one {
            sink.write_event(reg, e)?;
        }
        for (i, run) in runs.chunks(97).enumerate() {
            let (a, b) = run.split_at((i * 31) % run.len().max(1));
            sink.write_run(reg, a)?;
            sink.write_run(reg, b)?;
        }
        sink.finish(reg)
    }

    fn same_bytes(ops: &[(u8, u8, u8, u16)]) -> Result<(), String> {
        let (mut reg, up_front, evs) = events(ops);
        let origin = 1_000_000_000_000;
        let inline = PajeWriter::new(Vec::new(), origin, false).map_err(|e| e.to_string())?;
        let (a, sa) = write(inline, &mut reg, &up_front, &evs).map_err(|e| e.to_string())?;
        let split = Split::new(Vec::new(), origin, false);
        let (b, sb) = write(split, &mut reg, &up_front, &evs).map_err(|e| e.to_string())?;
        if a != b {
            return Err("the writer's thread wrote other bytes".into());
        }
        if format!("{sa:?}") != format!("{sb:?}") {
            return Err(format!("other counts: {sa:?} / {sb:?}"));
        }
        Ok(())
    }

    proptest::proptest! {
        /// The writer on its own thread writes what it writes inline,
        /// and counts the same.
        #[test]
        fn the_thread_writes_what_inline_writes(
            ops in proptest::collection::vec(
                (0u8..40, 0u8..8, proptest::num::u8::ANY, 0u16..20), 0..300),
        ) {
            proptest::prop_assert_eq!(same_bytes(&ops), Ok(()));
        }
    }

    #[test]
    fn many_batches_write_what_inline_writes() {
        let ops: Vec<(u8, u8, u8, u16)> = (0..20_000u32)
            .map(|i| {
                (
                    (i * 7 % 40) as u8,
                    (i % 8) as u8,
                    (i * 13) as u8,
                    (i % 9) as u16,
                )
            })
            .collect();
        assert_eq!(same_bytes(&ops), Ok(()));
    }

    /// Fails every write after `left` bytes.
    struct Full {
        left: usize,
    }

    impl Write for Full {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            if self.left == 0 {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            let n = b.len().min(self.left);
            self.left -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_comes_back_as_its_error() {
        let ops: Vec<(u8, u8, u8, u16)> = (0..50_000u32)
            .map(|i| ((i % 40) as u8, (i % 8) as u8, (i * 13) as u8, 1))
            .collect();
        let (mut reg, up_front, evs) = events(&ops);
        let inline = PajeWriter::new(Vec::new(), 1_000_000_000_000, false).unwrap();
        let whole = write(inline, &mut reg, &up_front, &evs).unwrap().0.len();
        assert!(whole > 1_000_000);
        // In the header, in the first chunk of lines, in the last one.
        for left in [10, 300_000, whole - 1] {
            let split = Split::new(Full { left }, 1_000_000_000_000, false);
            match write(split, &mut reg, &up_front, &evs) {
                Err(e) => assert_eq!(e.kind(), io::ErrorKind::StorageFull, "{e}"),
                Ok(_) => panic!("a full disk after {left} bytes went unnoticed"),
            }
        }
    }
}
