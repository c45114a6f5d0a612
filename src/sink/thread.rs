//! A sink on a thread of its own (issue 17: converting on one core,
//! writing on the other).
//!
//! The run's thread keeps the registry and hands each merged event on,
//! in batches through a bounded channel; before the first event that
//! names a container, type or value, it sends that definition (and its
//! parents'), once. The sink's thread keeps a copy of the definitions it
//! was sent ([`Replica`]) and runs the very [`Replay`] and encoder the
//! run's thread runs with `--threads 1`: the same events in the same
//! order, definitions read at the same moments, so the same bytes
//! (`tests/threads.rs` compares them). Everything per event but a few
//! lookups (the books, the formatting, the writes) is on that thread.

use super::catalogue::Replica;
use super::replay::Ordinals;
use super::{CommitWith, Cut, Done, Encoder, Replay, RunEnd, SinkStats, TraceSink};
use crate::model::{ContainerId, Event, Op, TypeId, ValueId};
use crate::registry::{ContainerDef, Registry, TypeDef, TypeKind, ValueDef};
use std::io;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Items per batch: the channel and the wake-ups cost nothing per event,
/// and a batch (about 150 KB) stays in the caches.
const BATCH: usize = 2048;
/// Batches in flight.
const DEPTH: usize = 4;

/// What the sink's thread is sent.
enum Item {
    Event(Event),
    /// A container created before any event ([`TraceSink::create_in_order`]).
    Create(ContainerId, i64),
    // Definitions are rare: boxed, so that an item is an event's size.
    Type(TypeId, Box<TypeDef>),
    Container(ContainerId, Box<ContainerDef>),
    Value(ValueId, Box<ValueDef>),
    /// The run's end, last.
    End(Box<RunEnd>),
    /// The events that follow come from this input.
    Source(u32),
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
        | Op::EndState {
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

/// What the sink's thread gives back: the encoder's output and the counts.
type Finished<O> = io::Result<(O, SinkStats)>;

/// The run's side: events and definitions batched to the sink's thread.
pub struct OnThread<E: Encoder> {
    batch: Vec<Item>,
    /// The ids whose definitions were sent.
    types: Ordinals,
    containers: Ordinals,
    values: Ordinals,
    tx: Option<SyncSender<Vec<Item>>>,
    /// Batches written, to fill again.
    back: Receiver<Vec<Item>>,
    /// Gives back the output and the counts, or the error that stopped it.
    done: Option<JoinHandle<Finished<E::Out>>>,
    commit: Option<CommitWith<E::Out>>,
}

impl<E> OnThread<E>
where
    E: Encoder + 'static,
    E::Out: Send + 'static,
{
    /// Starts the sink's thread: it makes its encoder with `make` (which
    /// may write a header), then replays every event into it. `commit`
    /// makes the finished output the output.
    pub fn new(
        make: impl FnOnce() -> io::Result<E> + Send + 'static,
        commit: CommitWith<E::Out>,
    ) -> OnThread<E> {
        OnThread::within(make, commit, Cut::default())
    }

    /// [`OnThread::new`] for the window `cut` of the run.
    pub fn within(
        make: impl FnOnce() -> io::Result<E> + Send + 'static,
        commit: CommitWith<E::Out>,
        cut: Cut,
    ) -> OnThread<E> {
        let (tx, rx) = sync_channel::<Vec<Item>>(DEPTH);
        let (give, back) = sync_channel::<Vec<Item>>(DEPTH + 2);
        let done = crate::prefetch::spawn(move || -> Finished<E::Out> {
            let mut replay = Replay::new(make()?).within(cut);
            let mut defs = Replica::default();
            let mut end = None;
            for mut batch in rx {
                // Read in place: an event moved out of its item first was
                // copied through the stack, and reading it back stalled on
                // the copy's unaligned stores (perf: 6% of a DECK run's
                // writer thread on one load).
                for item in &batch {
                    match item {
                        Item::Event(e) => replay.event(&defs, e)?,
                        Item::Create(c, time) => replay.create_in_order(&defs, &[*c], *time)?,
                        Item::Type(id, d) => defs.put_type(*id, TypeDef::clone(d)),
                        Item::Container(id, d) => defs.put_container(*id, ContainerDef::clone(d)),
                        Item::Value(id, d) => defs.put_value(*id, ValueDef::clone(d)),
                        Item::End(e) => end = Some(e.clone()),
                        Item::Source(s) => replay.set_source(*s),
                    }
                }
                batch.clear();
                let _ = give.try_send(batch);
            }
            match end {
                Some(end) => replay.finish(&defs, &end),
                None => Err(io::Error::other("the sink's thread was not told the end")),
            }
        });
        OnThread {
            batch: Vec::with_capacity(BATCH),
            types: Ordinals::default(),
            containers: Ordinals::default(),
            values: Ordinals::default(),
            tx: Some(tx),
            back,
            done: Some(done),
            commit: Some(commit),
        }
    }
}

impl<E: Encoder> OnThread<E> {
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

    /// Hands the batch to the sink's thread.
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
                .unwrap_or_else(|| io::Error::other("the sink's thread ended early"))),
        }
    }

    /// Closes the channel and waits for the thread.
    fn stop(&mut self) -> Finished<E::Out> {
        drop(self.tx.take());
        match self.done.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(io::Error::other("the sink's thread panicked")),
            None => Err(io::Error::other("the sink's thread ended early")),
        }
    }
}

/// A sink dropped on an error still waits for its thread: the output it
/// holds (a temporary file) must be gone before the run ends.
impl<E: Encoder> Drop for OnThread<E> {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(done) = self.done.take() {
            let _ = done.join();
        }
    }
}

impl<E: Encoder> TraceSink for OnThread<E>
where
    E::Out: Send + 'static,
{
    fn create_in_order(
        &mut self,
        reg: &Registry,
        order: &[ContainerId],
        time: i64,
    ) -> io::Result<()> {
        for &c in order {
            self.send_container(reg, c);
            self.batch.push(Item::Create(c, time));
        }
        Ok(())
    }

    fn source(&mut self, source: u32) {
        self.batch.push(Item::Source(source));
    }

    fn write_run(&mut self, reg: &Registry, events: &[Event]) -> io::Result<()> {
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

    fn finish(mut self: Box<Self>, _reg: &Registry, end: &RunEnd) -> io::Result<Done> {
        self.batch.push(Item::End(Box::new(end.clone())));
        self.hand()?;
        let (out, stats) = self.stop()?;
        let commit = self
            .commit
            .take()
            .ok_or_else(|| io::Error::other("the sink was finished twice"))?;
        Ok(Done {
            stats,
            commit: Box::new(move || commit(out)),
        })
    }
}
