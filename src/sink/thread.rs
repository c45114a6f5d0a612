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
use super::{Commit1, Done, Encoder, Replay, RunEnd, SinkStats, TraceSink};
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
    commit: Option<Commit1<E::Out>>,
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
        commit: Commit1<E::Out>,
    ) -> OnThread<E> {
        let (tx, rx) = sync_channel::<Vec<Item>>(DEPTH);
        let (give, back) = sync_channel::<Vec<Item>>(DEPTH + 2);
        let done = crate::prefetch::spawn(move || -> Finished<E::Out> {
            let mut replay = Replay::new(make()?);
            let mut defs = Replica::default();
            let mut end = None;
            for mut batch in rx {
                for item in batch.drain(..) {
                    match item {
                        Item::Event(e) => replay.event(&defs, &e)?,
                        Item::Create(c, time) => replay.create_in_order(&defs, &[c], time)?,
                        Item::Type(id, d) => defs.put_type(id, *d),
                        Item::Container(id, d) => defs.put_container(id, *d),
                        Item::Value(id, d) => defs.put_value(id, *d),
                        Item::End(e) => end = Some(e),
                    }
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchy::{Display, Hierarchy};
    use crate::model::LinkKey;
    use crate::paje::writer::PajeWriter;
    use crate::sink::Staged;
    use std::io::Write;
    use std::sync::{Arc, Mutex};

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
            let op = match what % 8 {
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
                7 => {
                    // A state that ends wherever it is in the stack.
                    let ty = reg.state_type(pty, "state");
                    let value = reg.value_of(ty, &format!("s{}", what % 4), &plain);
                    Op::EndState {
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

    /// A sink's bytes, kept where the test can read them after the
    /// commit moved the output away.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| io::Error::other("poisoned"))?
                .extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn end() -> RunEnd {
        RunEnd {
            report: crate::report::RunReport::empty(),
        }
    }

    fn write(
        mut sink: Box<dyn TraceSink>,
        reg: &mut Registry,
        up_front: &[ContainerId],
        events: &[Event],
    ) -> io::Result<SinkStats> {
        sink.create_in_order(reg, up_front, 1_000_000_000_000)?;
        // Event by event, then in runs of several lengths (a lone
        // source's way).
        let (one, runs) = events.split_at(events.len() / 3);
        for e in one {
            sink.write_run(reg, std::slice::from_ref(e))?;
        }
        for (i, run) in runs.chunks(97).enumerate() {
            let (a, b) = run.split_at((i * 31) % run.len().max(1));
            sink.write_run(reg, a)?;
            sink.write_run(reg, b)?;
        }
        let done = sink.finish(reg, &end())?;
        (done.commit)().map_err(|e| io::Error::other(e.to_string()))?;
        Ok(done.stats)
    }

    fn inline<W: Write + Send + 'static>(out: W) -> Box<dyn TraceSink> {
        let paje = PajeWriter::new(out, 1_000_000_000_000, false).unwrap();
        Box::new(Staged::new(paje, Box::new(|_| Ok(()))))
    }

    fn threaded<W: Write + Send + 'static>(out: W) -> Box<dyn TraceSink> {
        let make = move || PajeWriter::new(out, 1_000_000_000_000, false);
        Box::new(OnThread::new(make, Box::new(|_| Ok(()))))
    }

    fn same_bytes(ops: &[(u8, u8, u8, u16)]) -> Result<(), String> {
        let (mut reg, up_front, evs) = events(ops);
        let (a, b) = (Shared::default(), Shared::default());
        let sa = write(inline(a.clone()), &mut reg, &up_front, &evs).map_err(|e| e.to_string())?;
        let sb =
            write(threaded(b.clone()), &mut reg, &up_front, &evs).map_err(|e| e.to_string())?;
        if *a.0.lock().unwrap() != *b.0.lock().unwrap() {
            return Err("the sink's thread wrote other bytes".into());
        }
        if sa != sb {
            return Err(format!("other counts: {sa:?} / {sb:?}"));
        }
        Ok(())
    }

    proptest::proptest! {
        /// The sink on its own thread writes what it writes inline,
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
        let all = Shared::default();
        write(inline(all.clone()), &mut reg, &up_front, &evs).unwrap();
        let whole = all.0.lock().unwrap().len();
        assert!(whole > 1_000_000);
        // In the header, in the first chunk of lines, in the last one.
        for left in [10, 300_000, whole - 1] {
            match write(threaded(Full { left }), &mut reg, &up_front, &evs) {
                Err(e) => assert_eq!(e.kind(), io::ErrorKind::StorageFull, "{e}"),
                Ok(_) => panic!("a full disk after {left} bytes went unnoticed"),
            }
        }
    }
}
