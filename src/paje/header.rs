//! The `%EventDef` header every trace starts with, and the event ids it
//! gives: the writer's contract with PajeNG and ViTE (docs/output.md).

use crate::paje::EventKind;

/// The header: event ids are the index in this table.
pub const HEADER: [(EventKind, &[(&str, &str)]); 15] = [
    (
        EventKind::DefineContainerType,
        &[("Type", "string"), ("Name", "string"), ("Alias", "string")],
    ),
    (
        EventKind::DefineStateType,
        &[("Type", "string"), ("Name", "string"), ("Alias", "string")],
    ),
    (
        EventKind::DefineVariableType,
        &[
            ("Type", "string"),
            ("Name", "string"),
            ("Color", "color"),
            ("Alias", "string"),
        ],
    ),
    (
        EventKind::DefineEntityValue,
        &[
            ("Type", "string"),
            ("Name", "string"),
            ("Color", "color"),
            ("Alias", "string"),
        ],
    ),
    (
        EventKind::CreateContainer,
        &[
            ("Time", "date"),
            ("Type", "string"),
            ("Container", "string"),
            ("Name", "string"),
            ("Alias", "string"),
        ],
    ),
    (
        EventKind::DestroyContainer,
        &[("Time", "date"), ("Type", "string"), ("Name", "string")],
    ),
    (
        EventKind::SetVariable,
        &[
            ("Time", "date"),
            ("Container", "string"),
            ("Type", "string"),
            ("Value", "double"),
        ],
    ),
    (
        EventKind::SetState,
        &[
            ("Time", "date"),
            ("Container", "string"),
            ("Type", "string"),
            ("Value", "string"),
        ],
    ),
    // The value is a name (only state values are declared, see
    // `entity`), which may be quoted, so it is not the last field.
    (
        EventKind::NewEvent,
        &[
            ("Time", "date"),
            ("Container", "string"),
            ("Value", "string"),
            ("Type", "string"),
        ],
    ),
    (
        EventKind::DefineEventType,
        &[("Type", "string"), ("Name", "string"), ("Alias", "string")],
    ),
    (
        EventKind::DefineLinkType,
        &[
            ("Type", "string"),
            ("StartContainerType", "string"),
            ("EndContainerType", "string"),
            ("Name", "string"),
            ("Alias", "string"),
        ],
    ),
    (
        EventKind::PushState,
        &[
            ("Time", "date"),
            ("Container", "string"),
            ("Type", "string"),
            ("Value", "string"),
        ],
    ),
    (
        EventKind::PopState,
        &[
            ("Time", "date"),
            ("Container", "string"),
            ("Type", "string"),
        ],
    ),
    // Message size and tag ride along as extra fields (PajeNG keeps
    // fields it does not know); the key stays before them.
    (
        EventKind::StartLink,
        &[
            ("Time", "date"),
            ("Container", "string"),
            ("Type", "string"),
            ("Value", "string"),
            ("StartContainer", "string"),
            ("Key", "string"),
            ("Size", "int"),
            ("Tag", "int"),
        ],
    ),
    (
        EventKind::EndLink,
        &[
            ("Time", "date"),
            ("Container", "string"),
            ("Type", "string"),
            ("Value", "string"),
            ("EndContainer", "string"),
            ("Key", "string"),
        ],
    ),
];

/// The id of `kind` in this header.
pub fn id_of(kind: EventKind) -> u32 {
    HEADER
        .iter()
        .position(|(k, _)| *k == kind)
        .map_or(0, |i| i as u32)
}
