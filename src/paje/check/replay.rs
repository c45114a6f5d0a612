//! Replaying event lines as PajeSimulator does: types, containers, the
//! rows of each container and the links in flight; what pj_dump rejects
//! is an error.

use super::stage::RowOp;
use super::{parse_double, Checker};
use crate::paje::EventKind;
use crate::sink::Encoder;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Nature {
    Container,
    State,
    Variable,
    Event,
    Link { start: usize, end: usize },
}

pub(super) struct TypeInfo {
    pub(super) nature: Nature,
    pub(super) parent: Option<usize>,
    pub(super) name: String,
    pub(super) values: HashMap<String, usize>,
    pub(super) next_value: usize,
}

/// What pj_dump's order check reads of a (container, type) row; its
/// state stack is the sinks' replay's (`stage.rs`).
#[derive(Default)]
pub(super) struct Row {
    /// Start and end (None = open) of the last entity of this row.
    pub(super) last: Option<(f64, Option<f64>)>,
    /// The last entity is a state still open (then the top of the stack).
    pub(super) last_open: bool,
    pub(super) has_variable: bool,
    /// The variable's value, for an add or a sub.
    pub(super) value: f64,
    /// Value, time and side (start?) of the pending link half of each key.
    pub(super) pending: HashMap<String, (usize, f64, bool)>,
    pub(super) used_keys: HashSet<String>,
}

/// PajeNG's mark of a time not yet set: a container's end time before
/// its first event (a destroy earlier than it is "not time-ordered"),
/// the start of a link only ends were seen for.
pub(super) const UNSET: f64 = -1.0;

pub(super) struct ContainerInfo {
    pub(super) ty: usize,
    pub(super) name: String,
    pub(super) destroyed: bool,
    pub(super) end_time: f64,
    pub(super) children: Vec<usize>,
    pub(super) rows: HashMap<usize, Row>,
}

impl<E: Encoder> Checker<E> {
    pub(super) fn type_id(&self, id: &str) -> Result<usize, String> {
        self.type_ids
            .get(id)
            .copied()
            .ok_or_else(|| format!("unknown type `{id}`"))
    }

    pub(super) fn container_id(&self, id: &str, what: &str) -> Result<usize, String> {
        self.container_ids
            .get(id)
            .copied()
            .ok_or_else(|| format!("unknown {what}container `{id}`"))
    }

    fn define_type(&mut self, f: &Fields, nature: Nature, what: &str) -> Result<(), String> {
        let parent = self
            .type_id(&f.ty)
            .map_err(|_| format!("unknown container type `{}`", f.ty))?;
        if self.types[parent].nature != Nature::Container {
            return Err(format!("`{}` is not a container type", f.ty));
        }
        if nature == Nature::Container && f.name == "0" {
            return Err("the type name `0` is reserved".into());
        }
        let ident = if f.alias.is_empty() {
            f.name.clone()
        } else {
            f.alias.clone()
        };
        if self.type_ids.contains_key(&ident) {
            return Err(format!("{what} type `{ident}` already defined"));
        }
        // Only a variable type's Color is read (a container, state,
        // event or link type may carry anything there).
        if nature == Nature::Variable && !f.color.is_empty() && !color_ok(&f.color) {
            return Err(format!("cannot understand color `{}`", f.color));
        }
        self.types.push(TypeInfo {
            nature,
            parent: Some(parent),
            name: f.name.clone(),
            values: HashMap::new(),
            next_value: 0,
        });
        let t = self.types.len() - 1;
        self.type_ids.insert(ident, t);
        self.stage.define_type(t, nature, parent, &f.name, &f.color);
        Ok(())
    }

    fn value_of(&mut self, ty: usize, ident: &str) -> usize {
        let t = &mut self.types[ty];
        if let Some(&v) = t.values.get(ident) {
            return v;
        }
        let v = t.next_value;
        t.next_value += 1;
        t.values.insert(ident.to_string(), v);
        v
    }

    /// The common checks of events on a container: the container, the type,
    /// its nature and its parent type.
    fn target(
        &self,
        f: &Fields,
        nature: fn(Nature) -> bool,
        what: &str,
    ) -> Result<(usize, usize), String> {
        let c = self.container_id(&f.container, "")?;
        let t = self.type_id(&f.ty)?;
        if !nature(self.types[t].nature) {
            return Err(format!("type `{}` is not a{what} type", f.ty));
        }
        if self.types[t].parent != Some(self.containers[c].ty) {
            return Err(format!(
                "type `{}` is not a child type of container type `{}` of `{}`",
                self.types[t].name, self.types[self.containers[c].ty].name, f.container
            ));
        }
        Ok((c, t))
    }

    fn skip_destroyed(&mut self, c: usize, line: u64) -> bool {
        if self.containers[c].destroyed {
            if !self.warned_after_destroy {
                self.warned_after_destroy = true;
                self.warn(
                    line,
                    format!(
                        "event in container `{}` after its destruction: pj_dump ignores it",
                        self.containers[c].name
                    ),
                );
            }
            return true;
        }
        false
    }

    pub(super) fn destroy(&mut self, c: usize, time: f64) -> Result<(), String> {
        self.stage.destroy(c, time);
        let mut stack = vec![c];
        let mut result = Ok(());
        while let Some(x) = stack.pop() {
            // PajeContainer::recursiveDestroy goes on into the children of
            // a container destroyed before: one created in it since is
            // destroyed now.
            stack.extend(self.containers[x].children.iter().copied());
            if self.containers[x].destroyed {
                continue;
            }
            self.containers[x].destroyed = true;
            let pending: usize = self.containers[x]
                .rows
                .values()
                .map(|r| r.pending.len())
                .sum();
            if pending > 0 && result.is_ok() {
                result = Err(format!(
                    "incomplete links at the end of container `{}` ({pending} unmatched)",
                    self.containers[x].name
                ));
            }
            self.containers[x].rows.clear();
            self.containers[x].end_time = time;
        }
        result
    }
    /// Replays one event line as PajeSimulator would.
    pub(super) fn apply(
        &mut self,
        kind: EventKind,
        f: &Fields,
        time: f64,
        line: u64,
    ) -> Result<(), String> {
        use EventKind::*;
        match kind {
            DefineContainerType => self.define_type(f, Nature::Container, "container"),
            DefineStateType => self.define_type(f, Nature::State, "state"),
            DefineVariableType => self.define_type(f, Nature::Variable, "variable"),
            DefineEventType => self.define_type(f, Nature::Event, "event"),
            DefineLinkType => self.define_link_type(f),
            DefineEntityValue => self.define_value(f),
            CreateContainer => self.create(f, time),
            DestroyContainer => self.destroy_line(f, time, line),
            NewEvent | SetState | PushState | PopState | ResetState | SetVariable | AddVariable
            | SubVariable => self.entity_event(kind, f, time, line),
            StartLink | EndLink => self.link_event(kind, f, time, line),
            TraceFile => Ok(()),
        }
    }

    fn define_link_type(&mut self, f: &Fields) -> Result<(), String> {
        let start = self
            .type_id(&f.start_type)
            .map_err(|_| format!("unknown start container type `{}`", f.start_type))?;
        let end = self
            .type_id(&f.end_type)
            .map_err(|_| format!("unknown end container type `{}`", f.end_type))?;
        self.define_type(f, Nature::Link { start, end }, "link")
    }

    fn define_value(&mut self, f: &Fields) -> Result<(), String> {
        let t = self.type_id(&f.ty)?;
        match self.types[t].nature {
            Nature::Container => {
                return Err(format!(
                    "cannot define value `{}` for container type `{}`",
                    f.name, f.ty
                ))
            }
            Nature::Variable => {
                return Err(format!(
                    "cannot define value `{}` for variable type `{}`",
                    f.name, f.ty
                ))
            }
            _ => {}
        }
        // PajeNG keeps a value under its identifier only (the alias, or
        // the name without one): a name is in use only as another
        // value's identifier, and an event naming a value by the name
        // of one that has an alias makes a new value.
        let values = &self.types[t].values;
        let taken = if !f.alias.is_empty() && values.contains_key(f.alias.as_str()) {
            Some(&f.alias)
        } else if values.contains_key(f.name.as_str()) {
            Some(&f.name)
        } else {
            None
        };
        if let Some(ident) = taken {
            return Err(format!(
                "value `{ident}` of type `{}` is defined twice",
                f.ty
            ));
        }
        if !f.color.is_empty() && !color_ok(&f.color) {
            return Err(format!("cannot understand color `{}`", f.color));
        }
        let ident = if f.alias.is_empty() {
            &f.name
        } else {
            &f.alias
        };
        let v = self.value_of(t, ident);
        self.stage.value(t, v, &f.name, &f.color);
        Ok(())
    }

    fn create(&mut self, f: &Fields, time: f64) -> Result<(), String> {
        let ident = if f.alias.is_empty() {
            f.name.clone()
        } else {
            f.alias.clone()
        };
        if ident == "0" {
            return Err("the container name `0` is reserved".into());
        }
        let t = self
            .type_id(&f.ty)
            .map_err(|_| format!("unknown container type `{}`", f.ty))?;
        if self.types[t].nature != Nature::Container {
            return Err(format!("`{}` is not a container type", f.ty));
        }
        let p = self.container_id(&f.container, "")?;
        if self.types[t].parent != Some(self.containers[p].ty) {
            return Err(format!(
                "container type `{}` is not a child type of `{}`, the type of `{}`",
                self.types[t].name, self.types[self.containers[p].ty].name, f.container
            ));
        }
        if self.container_ids.contains_key(&ident) {
            return Err(format!("container `{ident}` already exists"));
        }
        read_user_fields(f, EventKind::CreateContainer)?;
        self.containers.push(ContainerInfo {
            ty: t,
            name: f.name.clone(),
            destroyed: false,
            end_time: UNSET,
            children: Vec::new(),
            rows: HashMap::new(),
        });
        let id = self.containers.len() - 1;
        self.containers[p].children.push(id);
        self.container_ids.insert(ident, id);
        self.stage.create(id, t, p, &f.name, time);
        Ok(())
    }

    fn destroy_line(&mut self, f: &Fields, time: f64, line: u64) -> Result<(), String> {
        let t = self
            .type_id(&f.ty)
            .map_err(|_| format!("unknown container type `{}`", f.ty))?;
        let c = self.container_id(&f.name, "")?;
        if self.containers[c].ty != t {
            return Err(format!("container `{}` is not of type `{}`", f.name, f.ty));
        }
        let end = self.containers[c].end_time;
        if time < end {
            return Err(if end == UNSET {
                format!(
                    "container `{}` is destroyed at {time}, before -1, where PajeNG starts a container's end time",
                    f.name
                )
            } else {
                format!(
                    "container `{}` is destroyed at {time}, before its last event at {end}",
                    f.name
                )
            });
        }
        if self.containers[c].destroyed {
            self.warn(line, format!("container `{}` is destroyed twice", f.name));
            return Ok(());
        }
        self.destroy(c, time)
    }

    fn entity_event(
        &mut self,
        kind: EventKind,
        f: &Fields,
        time: f64,
        line: u64,
    ) -> Result<(), String> {
        use EventKind::*;
        let (nature, what): (fn(Nature) -> bool, &str) = match kind {
            NewEvent => (|n| n == Nature::Event, "n event"),
            SetVariable | AddVariable | SubVariable => (|n| n == Nature::Variable, " variable"),
            _ => (|n| n == Nature::State, " state"),
        };
        let (c, t) = self.target(f, nature, what)?;
        let value = match kind {
            NewEvent | SetState | PushState => {
                // pj_dump creates undeclared values on the fly.
                let v = self.value_of(t, &f.value);
                Some(self.stage.value(t, v, &f.value, ""))
            }
            _ => None,
        };
        if matches!(kind, SetVariable | AddVariable | SubVariable)
            && parse_double(&f.value).is_none()
        {
            self.warn(
                line,
                format!("value `{}` is not a number; pj_dump reads it as 0", f.value),
            );
        }
        if self.skip_destroyed(c, line) {
            return Ok(());
        }
        let depth = self.stage.depth(c, t);
        let row = self.containers[c].rows.entry(t).or_default();
        // The events that make or end an entity read the user fields:
        // all but a reset, and a variable's change at the time of its
        // last value (which updates that value in place).
        let reads = match kind {
            ResetState => false,
            SetVariable | AddVariable | SubVariable => {
                !row.last.is_some_and(|(start, _)| start == time)
            }
            _ => true,
        };
        row_event(row, kind, time, depth)?;
        if reads {
            read_user_fields(f, kind)?;
        }
        // The value as its text says it, rounded once (pj_dump's own
        // reading, `parse_double`, can be one unit off in the last place);
        // pj_dump reads a value that is no number as 0.
        let number = || {
            let exact = f.value.parse::<f64>().ok().filter(|v| v.is_finite());
            exact.or_else(|| parse_double(&f.value)).unwrap_or(0.0)
        };
        let op = match (kind, value) {
            (NewEvent, Some(v)) => RowOp::Point(v),
            (SetState, Some(v)) => RowOp::Set(v),
            (PushState, Some(v)) => RowOp::Push(v),
            (PopState, _) => RowOp::Pop,
            (SetVariable | AddVariable | SubVariable, _) => {
                row.value = match kind {
                    SetVariable => number(),
                    AddVariable => row.value + number(),
                    _ => row.value - number(),
                };
                RowOp::Variable(row.value)
            }
            _ => RowOp::Reset,
        };
        self.stage.event(c, t, time, op);
        self.containers[c].end_time = time;
        Ok(())
    }

    fn link_event(
        &mut self,
        kind: EventKind,
        f: &Fields,
        time: f64,
        line: u64,
    ) -> Result<(), String> {
        use EventKind::*;
        let (c, t) = self.target(f, |n| matches!(n, Nature::Link { .. }), " link")?;
        let (other_name, which) = if kind == StartLink {
            (&f.start_container, "start ")
        } else {
            (&f.end_container, "end ")
        };
        let other = self.container_id(other_name, which)?;
        let Nature::Link { start, end } = self.types[t].nature else {
            return Ok(());
        };
        let expected = if kind == StartLink { start } else { end };
        if self.containers[other].ty != expected {
            return Err(format!(
                "container `{other_name}` has type `{}`, but link type `{}` {}s at `{}`",
                self.types[self.containers[other].ty].name,
                self.types[t].name,
                if kind == StartLink { "start" } else { "end" },
                self.types[expected].name
            ));
        }
        let value = self.value_of(t, &f.value);
        if self.skip_destroyed(c, line) {
            return Ok(());
        }
        let row = self.containers[c].rows.entry(t).or_default();
        if row.used_keys.contains(&f.key) {
            return Err(format!(
                "link key `{}` was already used in this container and type",
                f.key
            ));
        }
        // Either half makes or completes the link: both read them.
        read_user_fields(f, kind)?;
        match row.pending.remove(&f.key) {
            None => {
                row.pending
                    .insert(f.key.clone(), (value, time, kind == StartLink));
            }
            Some((other_half, other_time, other_start)) => {
                if other_half != value {
                    return Err(format!(
                        "link `{}`: value `{}` differs from the other half's",
                        f.key, f.value
                    ));
                }
                // Two starts (or two ends) with one key: pj_dump
                // completes the pending half with this one too.
                check_order(row, time)?;
                // The completed link spans from its start to its end,
                // whichever came first in the file; later lines are
                // ordered against that span. A second start moves the
                // start and leaves no end; a second end moves the end
                // of a link that starts at -1 (PajeNG's no time).
                let span = match (other_start, kind == StartLink) {
                    (true, false) => (other_time, Some(time)),
                    (false, true) => (time, Some(other_time)),
                    (true, true) => (time, None),
                    (false, false) => (UNSET, Some(time)),
                };
                row.last = Some(span);
                row.last_open = false;
                row.used_keys.insert(f.key.clone());
            }
        }
        let value = self.stage.value(t, value, &f.value, "");
        self.stage
            .link(c, t, value, kind == StartLink, other, &f.key, time);
        self.containers[c].end_time = time;
        Ok(())
    }
}

pub(super) struct Fields {
    /// A user field the line is too short to hold (see
    /// `missing_user_field`): reading it into an entity aborts pj_dump.
    pub(super) missing_user_field: Option<String>,
    pub(super) time: String,
    pub(super) name: String,
    pub(super) ty: String,
    pub(super) container: String,
    pub(super) start_type: String,
    pub(super) end_type: String,
    pub(super) start_container: String,
    pub(super) end_container: String,
    pub(super) value: String,
    pub(super) key: String,
    pub(super) alias: String,
    pub(super) color: String,
}

/// PajeEntity::addPajeTraceEvent: each user field read from the line,
/// past its end for a short one (`std::out_of_range`, the end of pj_dump).
fn read_user_fields(f: &Fields, kind: EventKind) -> Result<(), String> {
    match &f.missing_user_field {
        Some(name) => Err(format!(
            "{} lacks its user field `{name}`, which pj_dump reads into the entity (pj_dump aborts)",
            kind.name()
        )),
        None => Ok(()),
    }
}

/// PajeContainer::checkTimeOrder: nothing may start before the last entity
/// of its row starts or ends.
fn check_order(row: &Row, time: f64) -> Result<(), String> {
    if let Some((start, end)) = row.last {
        if start > time || end.is_some_and(|e| e > time) {
            return Err(format!("trace is not time-ordered: {time} is before the last entity of this container and type ({})", end.map_or(start, |e| e.max(start))));
        }
    }
    Ok(())
}

/// One event on a row, as PajeContainer orders it. `depth` is how many
/// states are open in the row (the replay's stack).
fn row_event(row: &mut Row, kind: EventKind, time: f64, depth: usize) -> Result<(), String> {
    use EventKind::*;
    match kind {
        NewEvent => {
            check_order(row, time)?;
            row.last = Some((time, Some(time)));
            row.last_open = false;
        }
        SetState | PushState | PopState | ResetState => {
            check_order(row, time)?;
            if kind == PopState && depth == 0 {
                return Err("pop of a state that has no value".into());
            }
            // A set or a reset empties the stack, a pop takes its top: the
            // last entity ends there if it is a state still open (then it
            // is the top, nothing having started after it).
            if kind != PushState && row.last_open {
                if let Some((s, _)) = row.last {
                    row.last = Some((s, Some(time)));
                }
                row.last_open = false;
            }
            if kind == SetState || kind == PushState {
                row.last = Some((time, None));
                row.last_open = true;
            }
        }
        SetVariable | AddVariable | SubVariable => {
            if kind != SetVariable && !row.has_variable {
                return Err(format!(
                    "{} on a variable that has no value yet",
                    kind.name()
                ));
            }
            if let Some((start, _)) = row.last {
                check_order(row, time)?;
                if start == time {
                    return Ok(());
                }
            }
            row.has_variable = true;
            row.last = Some((time, None));
            row.last_open = false;
        }
        _ => {}
    }
    Ok(())
}

/// PajeSimulator::getColor: 3 or 4 numbers separated by spaces or commas
/// (each read with `atof`, so any word counts), else hex digits read two
/// at a time into three components: six digits, or seven (the last one
/// read and dropped).
fn color_ok(c: &str) -> bool {
    let parts = c.split([' ', ',']).filter(|p| !p.is_empty()).count();
    if parts == 3 || parts == 4 {
        return true;
    }
    (c.len() == 6 || c.len() == 7) && c.bytes().all(|b| b.is_ascii_hexdigit())
}
