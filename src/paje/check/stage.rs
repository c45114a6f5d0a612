//! What the checker hands the sinks' replay ([`crate::sink::Replay`]):
//! every line pj_dump accepts, as model definitions and events. The
//! replay keeps the rows' state stacks for the checker (pj_dump's "pop of
//! a state that has no value" is the replay's empty stack), and an
//! encoder behind it hears the trace as it would hear a run of ours
//! (`integrador check` has none; a table writer would).

use super::replay::Nature;
use crate::model::{ContainerId, Event, LinkKey, Op, TypeId, ValueId};
use crate::registry::{ContainerDef, TypeDef, TypeKind, ValueDef};
use crate::sink::catalogue::Replica;
use crate::sink::{Book, Catalogue, Encoder, Replay, RunEnd, SinkStats};
use std::collections::HashMap;
use std::io;

/// An encoder that says nothing: `integrador check` only replays.
pub struct Quiet;

impl Encoder for Quiet {
    const INTERVALS: bool = false;
    type Out = ();

    fn event<C: Catalogue + ?Sized>(
        &mut self,
        _: &C,
        _: &Book,
        _: &Event,
        _: bool,
    ) -> io::Result<()> {
        Ok(())
    }
    fn finish(self, _: &RunEnd, _: &mut SinkStats) -> io::Result<()> {
        Ok(())
    }
}

/// A time of the trace (seconds, as pj_dump reads it) in nanoseconds.
fn ns(t: f64) -> i64 {
    // `as` saturates and maps NaN to 0: a garbage time stays a number.
    (t * 1e9).round() as i64
}

/// A container of the checker (0 is the root) as the model names it.
fn container(c: usize) -> ContainerId {
    match c {
        0 => ContainerId::ROOT,
        c => ContainerId(u32::try_from(c).unwrap_or(u32::MAX - 1)),
    }
}

fn ty(t: usize) -> TypeId {
    TypeId(u32::try_from(t).unwrap_or(u32::MAX))
}

/// The replay and the catalogue it reads, filled as the trace defines
/// things; the first failure of the encoder, kept for the end.
pub(super) struct Stage<E: Encoder> {
    replay: Replay<E>,
    cat: Replica,
    /// By type: each of its values' model id, by the checker's index.
    values: Vec<Vec<u32>>,
    next_value: u32,
    /// A link's key of a row (container, type, key) as a sequence number.
    keys: HashMap<(usize, usize, String), u64>,
    failed: Option<io::Error>,
}

impl<E: Encoder> Stage<E> {
    pub(super) fn new(enc: E) -> Stage<E> {
        Stage {
            replay: Replay::new(enc),
            cat: Replica::default(),
            values: Vec::new(),
            next_value: 0,
            keys: HashMap::new(),
            failed: None,
        }
    }

    fn keep(&mut self, r: io::Result<()>) {
        if let (Err(e), None) = (r, &self.failed) {
            self.failed = Some(e);
        }
    }

    /// A type, defined (`parent` 0 is the root type).
    pub(super) fn define_type(
        &mut self,
        t: usize,
        nature: Nature,
        parent: usize,
        name: &str,
        color: &str,
    ) {
        let kind = match nature {
            Nature::Container => TypeKind::Container,
            Nature::State => TypeKind::State,
            Nature::Variable => TypeKind::Variable,
            Nature::Event => TypeKind::Event,
            Nature::Link { start, end } => TypeKind::Link {
                start: ty(start),
                end: ty(end),
            },
        };
        let def = TypeDef {
            kind,
            parent: (parent != 0).then(|| ty(parent)),
            name: name.into(),
            color: (nature == Nature::Variable && !color.is_empty()).then(|| color.into()),
            // A Pajé trace says no units, nor which level is which.
            unit: None,
            role: None,
        };
        self.cat.put_type(ty(t), def);
    }

    /// The model id of value `v` (the checker's index) of type `t`,
    /// defined with `name` the first time.
    pub(super) fn value(&mut self, t: usize, v: usize, name: &str, color: &str) -> ValueId {
        if self.values.len() <= t {
            self.values.resize_with(t + 1, Vec::new);
        }
        let of_type = &mut self.values[t];
        if let Some(&id) = of_type.get(v) {
            return ValueId(id);
        }
        let id = self.next_value;
        self.next_value += 1;
        of_type.resize(v + 1, id);
        let def = ValueDef {
            ty: ty(t),
            name: name.to_string(),
            color: (!color.is_empty()).then(|| color.to_string()),
        };
        self.cat.put_value(ValueId(id), def);
        ValueId(id)
    }

    /// A container, created at `time`.
    pub(super) fn create(&mut self, c: usize, t: usize, parent: usize, name: &str, time: f64) {
        let def = ContainerDef {
            ty: ty(t),
            parent: (parent != 0).then(|| container(parent)),
            name: name.into(),
            ids: Default::default(),
        };
        self.cat.put_container(container(c), def);
        let r = self
            .replay
            .create_in_order(&self.cat, &[container(c)], ns(time));
        self.keep(r);
    }

    /// A container, destroyed at `time` with the ones in it.
    pub(super) fn destroy(&mut self, c: usize, time: f64) {
        let r = self.replay.destroy(&self.cat, container(c), ns(time));
        self.keep(r);
    }

    /// How many states are open in a row.
    pub(super) fn depth(&self, c: usize, t: usize) -> usize {
        self.replay.depth(container(c), ty(t))
    }

    /// An event on a row, which pj_dump accepted.
    pub(super) fn event(&mut self, c: usize, t: usize, time: f64, op: RowOp) {
        let (container, ty) = (container(c), ty(t));
        let op = match op {
            RowOp::Set(value) => Op::SetState {
                container,
                ty,
                value,
            },
            RowOp::Push(value) => Op::PushState {
                container,
                ty,
                value,
            },
            RowOp::Pop => Op::PopState { container, ty },
            RowOp::Reset => {
                let r = self.replay.reset(&self.cat, container, ty, ns(time));
                return self.keep(r);
            }
            RowOp::Point(value) => Op::NewEvent {
                container,
                ty,
                value,
            },
            RowOp::Variable(value) => Op::SetVariable {
                container,
                ty,
                value,
            },
        };
        let r = self.replay.event(&self.cat, &Event { time: ns(time), op });
        self.keep(r);
    }

    /// A link's half, which pj_dump accepted.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn link(
        &mut self,
        c: usize,
        t: usize,
        value: ValueId,
        start: bool,
        other: usize,
        key: &str,
        time: f64,
    ) {
        let seq = match self.keys.get(&(c, t, key.to_string())) {
            Some(&seq) => seq,
            None => {
                let seq = self.cat.put_key_name(key);
                self.keys.insert((c, t, key.to_string()), seq);
                seq
            }
        };
        let key = LinkKey {
            channel: crate::sink::catalogue::REPLAYED_KEYS,
            seq,
        };
        let (container, ty, other) = (container(c), ty(t), container(other));
        let op = match start {
            true => Op::StartLink {
                container,
                ty,
                value,
                from: other,
                key,
                size: 0,
                tag: 0,
            },
            false => Op::EndLink {
                container,
                ty,
                value,
                to: other,
                key,
            },
        };
        let r = self.replay.event(&self.cat, &Event { time: ns(time), op });
        self.keep(r);
    }

    /// The end: what is left is destroyed at the replay's last time.
    pub(super) fn finish(self) -> io::Result<E::Out> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let end = RunEnd::empty();
        self.replay.finish(&self.cat, &end).map(|(out, _)| out)
    }
}

/// What happens on a row, for [`Stage::event`].
pub(super) enum RowOp {
    Set(ValueId),
    Push(ValueId),
    Pop,
    Reset,
    Point(ValueId),
    Variable(f64),
}
