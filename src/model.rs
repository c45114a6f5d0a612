//! The neutral vocabulary converters speak: a time on the reference clock
//! and an action on an entity registered in the [`Registry`]. Events are
//! small and `Copy`; names live in the registry.
//!
//! [`Registry`]: crate::registry::Registry

/// Index of a container in the registry.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct ContainerId(pub u32);

impl ContainerId {
    /// Pajé's root container `0`, which holds links between containers
    /// that share no other ancestor.
    pub const ROOT: ContainerId = ContainerId(u32::MAX);
}

/// Index of a type (container, state, variable, event or link type).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct TypeId(pub u32);

/// Index of a value of a state, event or link type.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct ValueId(pub u32);

/// What happens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// A variable takes a value (Pajé `PajeSetVariable`).
    SetVariable {
        /// Where.
        container: ContainerId,
        /// Which variable.
        ty: TypeId,
        /// The value.
        value: f64,
    },
    /// A state row changes state (Pajé `PajeSetState`).
    SetState {
        /// Where.
        container: ContainerId,
        /// Which state row.
        ty: TypeId,
        /// The new state.
        value: ValueId,
    },
    /// A state nests on top of the current one (`PajePushState`).
    PushState {
        /// Where.
        container: ContainerId,
        /// Which state row.
        ty: TypeId,
        /// The new state.
        value: ValueId,
    },
    /// The innermost state ends (`PajePopState`).
    PopState {
        /// Where.
        container: ContainerId,
        /// Which state row.
        ty: TypeId,
    },
    /// The state `value` of a row ends, wherever it is in the row's stack
    /// (an MPE state that ends under others). Each output nests as its
    /// format says: a stack-ruled one pops down to it and pushes the
    /// others back; an interval ends it alone ([`crate::sink::Replay`]).
    EndState {
        /// Where.
        container: ContainerId,
        /// Which state row.
        ty: TypeId,
        /// The state that ends (its innermost opening).
        value: ValueId,
    },
    /// A point event (`PajeNewEvent`).
    NewEvent {
        /// Where.
        container: ContainerId,
        /// Which event type.
        ty: TypeId,
        /// What happened.
        value: ValueId,
    },
    /// The start of an arrow (`PajeStartLink`), in a container that holds
    /// both ends.
    StartLink {
        /// The common ancestor of both ends.
        container: ContainerId,
        /// Link type.
        ty: TypeId,
        /// Link value.
        value: ValueId,
        /// Where the arrow starts.
        from: ContainerId,
        /// Pairs this half with its [`Op::EndLink`].
        key: LinkKey,
        /// Payload size in bytes (message size), written as a field.
        size: i64,
        /// Tag (message tag), written as a field.
        tag: i64,
    },
    /// The end of an arrow (`PajeEndLink`).
    EndLink {
        /// The common ancestor of both ends.
        container: ContainerId,
        /// Link type.
        ty: TypeId,
        /// Link value.
        value: ValueId,
        /// Where the arrow ends.
        to: ContainerId,
        /// Pairs this half with its [`Op::StartLink`].
        key: LinkKey,
    },
}

/// Identifies one arrow: a channel handed out by the registry (unique in
/// the run) and a sequence number within it, so both halves can compute
/// it without remembering anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkKey {
    /// Channel, from [`crate::registry::Registry::link_channel`].
    pub channel: u32,
    /// Number within the channel.
    pub seq: u64,
}

/// An event: an action at a time, in nanoseconds since the epoch on the
/// reference clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event {
    /// Reference-clock time, ns since the epoch.
    pub time: i64,
    /// The action.
    pub op: Op,
}

impl Op {
    /// The container the action happens in.
    pub fn container(&self) -> ContainerId {
        match *self {
            Op::SetVariable { container, .. }
            | Op::SetState { container, .. }
            | Op::PushState { container, .. }
            | Op::PopState { container, .. }
            | Op::EndState { container, .. }
            | Op::NewEvent { container, .. }
            | Op::StartLink { container, .. }
            | Op::EndLink { container, .. } => container,
        }
    }
}

/// A process's or thread's numbers, where an input said them: the
/// entity tables' `pid`, `tid` and `rank` (pids recycle and repeat on
/// other machines, so a container's name alone does not say them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcIds {
    /// The OS process id.
    pub pid: Option<i64>,
    /// The OS thread (task) id.
    pub tid: Option<i64>,
    /// The MPI rank (or DECK node) the process runs.
    pub rank: Option<i64>,
}
