//! The neutral vocabulary converters speak: a time on the reference clock
//! and an action on an entity registered in the [`Registry`]. Events are
//! small and `Copy`; names live in the registry.
//!
//! [`Registry`]: crate::registry::Registry

/// Index of a container in the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContainerId(pub u32);

/// Index of a type (container, state, variable, event or link type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub u32);

/// Index of a value of a state, event or link type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
            Op::SetVariable { container, .. } | Op::SetState { container, .. } => container,
        }
    }
}
