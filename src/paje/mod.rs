//! The Pajé trace format as PajeNG 1.3.6 reads it (`docs/output.md`): the
//! event and field vocabulary shared by the writer and the checker.

pub mod check;
pub mod header;
pub mod lines;
pub mod name;
#[cfg(test)]
mod sink_tests;
pub(crate) mod text;
pub mod writer;

/// Pajé events known to PajeNG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum EventKind {
    DefineContainerType,
    DefineVariableType,
    DefineStateType,
    DefineEventType,
    DefineLinkType,
    DefineEntityValue,
    CreateContainer,
    DestroyContainer,
    NewEvent,
    SetState,
    PushState,
    PopState,
    ResetState,
    SetVariable,
    AddVariable,
    SubVariable,
    StartLink,
    EndLink,
    TraceFile,
}

/// Standard field names (docs/output.md); any other name is a user field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum Field {
    Event,
    Time,
    Name,
    Type,
    Container,
    StartContainerType,
    EndContainerType,
    StartContainer,
    EndContainer,
    Value,
    Key,
    Alias,
    Color,
    Line,
    File,
    Filename,
}

const EVENT_NAMES: [(EventKind, &str); 19] = [
    (EventKind::DefineContainerType, "PajeDefineContainerType"),
    (EventKind::DefineVariableType, "PajeDefineVariableType"),
    (EventKind::DefineStateType, "PajeDefineStateType"),
    (EventKind::DefineEventType, "PajeDefineEventType"),
    (EventKind::DefineLinkType, "PajeDefineLinkType"),
    (EventKind::DefineEntityValue, "PajeDefineEntityValue"),
    (EventKind::CreateContainer, "PajeCreateContainer"),
    (EventKind::DestroyContainer, "PajeDestroyContainer"),
    (EventKind::NewEvent, "PajeNewEvent"),
    (EventKind::SetState, "PajeSetState"),
    (EventKind::PushState, "PajePushState"),
    (EventKind::PopState, "PajePopState"),
    (EventKind::ResetState, "PajeResetState"),
    (EventKind::SetVariable, "PajeSetVariable"),
    (EventKind::AddVariable, "PajeAddVariable"),
    (EventKind::SubVariable, "PajeSubVariable"),
    (EventKind::StartLink, "PajeStartLink"),
    (EventKind::EndLink, "PajeEndLink"),
    (EventKind::TraceFile, "PajeTraceFile"),
];

const FIELD_NAMES: [(Field, &str); 16] = [
    (Field::Event, "Event"),
    (Field::Time, "Time"),
    (Field::Name, "Name"),
    (Field::Type, "Type"),
    (Field::Container, "Container"),
    (Field::StartContainerType, "StartContainerType"),
    (Field::EndContainerType, "EndContainerType"),
    (Field::StartContainer, "StartContainer"),
    (Field::EndContainer, "EndContainer"),
    (Field::Value, "Value"),
    (Field::Key, "Key"),
    (Field::Alias, "Alias"),
    (Field::Color, "Color"),
    (Field::Line, "Line"),
    (Field::File, "File"),
    (Field::Filename, "Filename"),
];

/// Field types PajeNG accepts in a definition.
pub const FIELD_TYPES: [&str; 7] = ["string", "date", "double", "int", "hex", "color", "float"];

impl EventKind {
    /// The event's name in `%EventDef` lines.
    pub fn name(self) -> &'static str {
        EVENT_NAMES
            .iter()
            .find(|(k, _)| *k == self)
            .map_or("", |(_, n)| n)
    }

    /// The event named `name`.
    pub fn from_name(name: &str) -> Option<EventKind> {
        EVENT_NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(k, _)| *k)
    }

    /// Fields a definition must have (PajeDefinitions.cc, besides `Event`).
    pub fn obligatory(self) -> &'static [Field] {
        use Field::*;
        match self {
            EventKind::DefineContainerType
            | EventKind::DefineVariableType
            | EventKind::DefineStateType
            | EventKind::DefineEventType
            | EventKind::DefineEntityValue => &[Name, Type],
            EventKind::DefineLinkType => &[Name, Type, StartContainerType, EndContainerType],
            EventKind::CreateContainer => &[Time, Name, Type, Container],
            EventKind::DestroyContainer => &[Time, Name, Type],
            EventKind::NewEvent | EventKind::SetState | EventKind::PushState => {
                &[Time, Type, Container, Value]
            }
            EventKind::PopState | EventKind::ResetState => &[Time, Type, Container],
            EventKind::SetVariable | EventKind::AddVariable | EventKind::SubVariable => {
                &[Time, Type, Container, Value]
            }
            EventKind::StartLink => &[Time, Type, Container, Value, StartContainer, Key],
            EventKind::EndLink => &[Time, Type, Container, Value, EndContainer, Key],
            EventKind::TraceFile => &[Container, Type, Filename],
        }
    }
}

impl Field {
    /// The field named `name` (strict names only, as pj_dump without `-n`).
    pub fn from_name(name: &str) -> Option<Field> {
        FIELD_NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(f, _)| *f)
    }

    /// The field's name.
    pub fn name(self) -> &'static str {
        FIELD_NAMES
            .iter()
            .find(|(f, _)| *f == self)
            .map_or("", |(_, n)| n)
    }
}
