//! `integrador check`: replays a Pajé trace with the rules of PajeNG 1.3.6
//! (`docs/output.md`, and PajeNG's `PajeEventDecoder.cc`,
//! `PajeSimulator.cc`, `PajeContainer.cc`) and reports every finding with
//! its line, where pj_dump stops at the first.
//!
//! Errors are what pj_dump rejects; warnings are what it accepts but is
//! suspect (README, "Exit status"). After an error the offending line has no effect and
//! the replay goes on, so later findings may follow from earlier ones.
//!
//! Memory is bounded by the number of types, containers, open states and
//! pending links, not by the length of the trace: only the last entity of
//! each (container, type) is kept, which is all pj_dump's order check reads.

mod replay;
mod spirit;
mod stage;
mod words;

pub use stage::Quiet;

use super::{EventKind, Field, FIELD_TYPES};
use crate::sink::Encoder;
use replay::{ContainerInfo, Fields, Nature, TypeInfo};
use spirit::parse_double;
use stage::Stage;
use std::collections::HashMap;
use std::io::BufRead;
use words::Words;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// pj_dump rejects the trace.
    Error,
    /// pj_dump accepts it, but something is suspect.
    Warning,
}

/// One finding.
#[derive(Debug, Clone)]
pub struct Finding {
    /// 1-based line (0 = end of file).
    pub line: u64,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong.
    pub message: String,
}

/// The result of a check.
#[derive(Debug, Default)]
pub struct Report {
    /// Findings in line order (at most [`MAX_FINDINGS`]).
    pub findings: Vec<Finding>,
    /// Errors found, including those not stored.
    pub errors: u64,
    /// Warnings found, including those not stored.
    pub warnings: u64,
    /// Lines read.
    pub lines: u64,
    /// Event lines replayed.
    pub events: u64,
    /// Lines whose time is not a number. pj_dump leaves such a time
    /// uninitialised (it printed 4.65e-310 in one run), so it accepts or
    /// rejects the trace by chance: the one decision the checker cannot
    /// take as pj_dump does.
    pub garbage_times: u64,
}

/// Findings kept in memory; the counts go on past it.
pub const MAX_FINDINGS: usize = 10_000;

/// How much of one quoted token a message shows.
const QUOTE_MAX: usize = 80;

/// Shortens every `quoted` token of a message to [`QUOTE_MAX`] bytes, so a
/// finding on a huge line stays one short line.
fn shorten(message: String) -> String {
    if message.len() <= 2 * QUOTE_MAX {
        return message;
    }
    let mut out = String::with_capacity(4 * QUOTE_MAX);
    for (i, part) in message.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 && part.len() > QUOTE_MAX {
            let mut end = QUOTE_MAX;
            while !part.is_char_boundary(end) {
                end -= 1;
            }
            out.push_str(&part[..end]);
            out.push_str(&format!("… ({} bytes)", part.len()));
        } else if part.len() > 4 * QUOTE_MAX {
            let mut end = 4 * QUOTE_MAX;
            while !part.is_char_boundary(end) {
                end -= 1;
            }
            out.push_str(&part[..end]);
            out.push('…');
        } else {
            out.push_str(part);
        }
    }
    out
}

impl Report {
    fn add(&mut self, line: u64, severity: Severity, message: String) {
        let message = shorten(message);
        match severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
        if self.findings.len() < MAX_FINDINGS {
            self.findings.push(Finding {
                line,
                severity,
                message,
            });
        }
    }

    /// Whether pj_dump would accept the trace.
    pub fn accepted(&self) -> bool {
        self.errors == 0
    }
}

#[derive(Clone)]
enum Slot {
    Known(Field),
    /// A field Pajé does not know, by its name.
    Extra(String),
}

#[derive(Clone)]
struct Definition {
    kind: EventKind,
    slots: Vec<Slot>,
}

struct Checker<E: Encoder> {
    report: Report,
    /// The sinks' replay, fed every line pj_dump accepts.
    stage: Stage<E>,
    defs: HashMap<String, Definition>,
    in_def: Option<(String, Definition, u64)>,
    types: Vec<TypeInfo>,
    type_ids: HashMap<String, usize>,
    containers: Vec<ContainerInfo>,
    container_ids: HashMap<String, usize>,
    last_time: Option<f64>,
    seen_event: bool,
    warned_decrease: bool,
    warned_after_destroy: bool,
}

/// Checks a whole trace.
pub fn check<R: BufRead>(input: R) -> std::io::Result<Report> {
    check_into(input, Quiet).map(|(report, ())| report)
}

/// Checks a whole trace and replays what pj_dump accepts of it into
/// `enc`, as the sinks' replay hands a run of ours to an encoder. The
/// encoder's output is whole only where the report accepts the trace.
pub fn check_into<R: BufRead, E: Encoder>(
    mut input: R,
    enc: E,
) -> std::io::Result<(Report, E::Out)> {
    let mut c = Checker::new(enc);
    let mut buf = Vec::with_capacity(256);
    let mut more = Vec::new();
    let max = integrador_lines::MAX_LINE;
    'lines: loop {
        match integrador_lines::read_line(&mut input, &mut buf, max) {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => {
                c.too_long(e)?;
                break;
            }
        }
        c.report.lines += 1;
        let line = c.report.lines;
        let mut words = Words::default();
        // A line whose last quote swallowed its newline goes on with the
        // next one, within the same bound.
        while !words.scan(&buf) {
            match integrador_lines::read_line(&mut input, &mut more, max) {
                Ok(Some(_)) if buf.len() + more.len() > max => {
                    c.report.lines += 1;
                    let at = c.report.lines;
                    c.error(at, format!("a quote at the end of line {line} joins the lines after it past {max} bytes: pj_dump would read them as one line"));
                    break 'lines;
                }
                Ok(Some(_)) => {
                    c.report.lines += 1;
                    buf.extend_from_slice(&more);
                }
                Ok(None) => {
                    words.finish(buf.len());
                    break;
                }
                Err(e) => {
                    c.too_long(e)?;
                    break 'lines;
                }
            }
        }
        if let Some(at) = words.nul {
            // pj_dump 1.3.6 loops forever or aborts on a NUL byte it meets.
            let before = buf.get(..at).unwrap_or_default();
            let start = memchr::memrchr(b'\n', before).map_or(0, |n| n + 1);
            let joined = memchr::memchr_iter(b'\n', before).count() as u64;
            c.error(
                line + joined,
                format!(
                    "NUL byte at column {}: pj_dump cannot read this line",
                    at - start + 1
                ),
            );
            continue;
        }
        c.line(line, &buf, &words);
    }
    c.finish();
    let Checker { report, stage, .. } = c;
    Ok((report, stage.finish()?))
}

impl<E: Encoder> Checker<E> {
    fn new(enc: E) -> Checker<E> {
        let root_type = TypeInfo {
            nature: Nature::Container,
            parent: None,
            name: "0".into(),
            values: HashMap::new(),
            next_value: 0,
        };
        let root = ContainerInfo {
            ty: 0,
            name: "0".into(),
            destroyed: false,
            end_time: replay::UNSET,
            children: Vec::new(),
            rows: HashMap::new(),
        };
        Checker {
            report: Report::default(),
            stage: Stage::new(enc),
            defs: HashMap::new(),
            in_def: None,
            types: vec![root_type],
            type_ids: HashMap::from([("0".to_string(), 0)]),
            containers: vec![root],
            container_ids: HashMap::from([("0".to_string(), 0)]),
            last_time: None,
            seen_event: false,
            warned_decrease: false,
            warned_after_destroy: false,
        }
    }

    fn error(&mut self, line: u64, msg: String) {
        self.report.add(line, Severity::Error, msg);
    }

    fn warn(&mut self, line: u64, msg: String) {
        self.report.add(line, Severity::Warning, msg);
    }

    /// A line over the bound ends the check there; any other failure to
    /// read is no finding but the check's own failure.
    fn too_long(&mut self, e: std::io::Error) -> std::io::Result<()> {
        if e.kind() != std::io::ErrorKind::InvalidData {
            return Err(e);
        }
        // Deliberately stricter than pj_dump, which would read on: a trace
        // line of a megabyte is no trace a tool wrote.
        self.report.lines += 1;
        let line = self.report.lines;
        self.error(line, e.to_string());
        Ok(())
    }

    fn line(&mut self, line: u64, bytes: &[u8], words: &Words) {
        let (dropped, comment) = (words.dropped, words.comment);
        let words: Vec<String> = words
            .get(bytes)
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        if comment && self.seen_event {
            self.warn(
                line,
                "comment after the first event line (ViTE warns on every comment)".into(),
            );
        }
        if dropped > 0 {
            self.warn(
                line,
                format!("more than 20 fields: pj_dump drops the last {dropped}"),
            );
        }
        let Some(first) = words.first() else { return };
        if first.starts_with('%') {
            self.definition_line(line, &words);
        } else {
            if let Some((id, def, start)) = self.in_def.take() {
                // pj_dump knows a definition from its %EventDef line on: an
                // event line inside it uses it as it stands (a field not
                // defined yet reads as empty), and the definition stays
                // open for more fields and its end, where it is checked.
                self.warn(
                    line,
                    format!(
                        "definition of {} (line {start}) is not closed by %EndEventDef before this line",
                        def.kind.name()
                    ),
                );
                self.defs.insert(id.clone(), def.clone());
                self.in_def = Some((id, def, start));
            }
            self.seen_event = true;
            self.event_line(line, &words);
        }
    }

    fn definition_line(&mut self, line: u64, w: &[String]) {
        let first = w.first().map(String::as_str).unwrap_or("%");
        let mut n = 1;
        let key = match first.get(1..) {
            Some("") | None => {
                n = 2;
                w.get(1).map(String::as_str).unwrap_or("")
            }
            Some(k) => k,
        };
        match self.in_def.take() {
            None => {
                if key != "EventDef" || w.len() != n + 2 {
                    return self.error(line, "`%EventDef <event name> <event id>` expected".into());
                }
                let (name, id) = (w[n].clone(), w[n + 1].clone());
                if self.defs.contains_key(&id) {
                    return self.error(line, format!("redefinition of event id `{id}`"));
                }
                let Some(kind) = EventKind::from_name(&name) else {
                    return self.error(line, format!("unknown event name `{name}`"));
                };
                self.in_def = Some((
                    id,
                    Definition {
                        kind,
                        slots: vec![Slot::Known(Field::Event)],
                    },
                    line,
                ));
            }
            Some((id, mut def, start)) => {
                if key == "EndEventDef" {
                    self.close_definition(line, id, def, start);
                    return;
                }
                let Some(ty) = w.get(n) else {
                    self.error(line, format!("field `{key}` has no type"));
                    self.in_def = Some((id, def, start));
                    return;
                };
                if !FIELD_TYPES.contains(&ty.as_str()) {
                    self.error(
                        line,
                        format!("field type `{ty}` is not one of {}", FIELD_TYPES.join(", ")),
                    );
                } else {
                    match Field::from_name(key) {
                        Some(f)
                            if def
                                .slots
                                .iter()
                                .any(|s| matches!(s, Slot::Known(k) if *k == f)) =>
                        {
                            self.error(line, format!("field `{key}` is defined twice"));
                        }
                        Some(f) => def.slots.push(Slot::Known(f)),
                        None => def.slots.push(Slot::Extra(key.to_string())),
                    }
                }
                self.in_def = Some((id, def, start));
            }
        }
    }

    /// Ends a definition: kept when it has every field its event needs.
    fn close_definition(&mut self, line: u64, id: String, def: Definition, start: u64) {
        let missing: Vec<&str> = def
            .kind
            .obligatory()
            .iter()
            .filter(|f| {
                !def.slots
                    .iter()
                    .any(|s| matches!(s, Slot::Known(k) if k == *f))
            })
            .map(|f| f.name())
            .collect();
        if missing.is_empty() {
            self.defs.insert(id, def);
        } else {
            self.error(
                line,
                format!(
                    "definition of {} (line {start}) lacks field(s) {}",
                    def.kind.name(),
                    missing.join(", ")
                ),
            );
        }
    }

    fn event_line(&mut self, line: u64, w: &[String]) {
        let Some(id) = w.first() else { return };
        let Some(def) = self.defs.get(id) else {
            return self.error(line, format!("event id `{id}` has not been defined"));
        };
        let kind = def.kind;
        let slots: Vec<Option<Field>> = def
            .slots
            .iter()
            .map(|s| {
                if let Slot::Known(f) = s {
                    Some(*f)
                } else {
                    None
                }
            })
            .collect();
        // Only a short line can lack a user field.
        let missing_user_field = (w.len() < slots.len())
            .then(|| missing_user_field(&def.slots, w.len()))
            .flatten();
        if w.len() < slots.len() {
            // pj_dump complains and reads the line anyway; it aborts only
            // when a field the event needs lies beyond the line's end.
            let need = slots.len();
            // A user field (a name Pajé does not know) is read only where
            // the event makes or ends an entity: the replay knows when.
            let missing_needed = slots
                .iter()
                .skip(w.len())
                .any(|f| f.is_some_and(|f| pj_dump_reads(kind, f)));
            if missing_needed {
                return self.error(
                    line,
                    format!(
                        "{} needs {need} fields, the line has {} (pj_dump aborts)",
                        kind.name(),
                        w.len()
                    ),
                );
            }
            self.warn(
                line,
                format!(
                    "{} has {need} fields, the line has {}: pj_dump complains and reads the line without the missing ones",
                    kind.name(),
                    w.len()
                ),
            );
        }
        if w.len() > slots.len() {
            let need = slots.len();
            self.warn(
                line,
                format!(
                    "{} has {need} fields, the line has {}: pj_dump complains and ignores the rest",
                    kind.name(),
                    w.len()
                ),
            );
        }
        let get = |f: Field| -> String {
            slots
                .iter()
                .position(|s| *s == Some(f))
                .and_then(|i| w.get(i))
                .cloned()
                .unwrap_or_default()
        };
        let fields = Fields {
            missing_user_field,
            time: get(Field::Time),
            name: get(Field::Name),
            ty: get(Field::Type),
            container: get(Field::Container),
            start_type: get(Field::StartContainerType),
            end_type: get(Field::EndContainerType),
            start_container: get(Field::StartContainer),
            end_container: get(Field::EndContainer),
            value: get(Field::Value),
            key: get(Field::Key),
            alias: get(Field::Alias),
            color: get(Field::Color),
        };
        self.report.events += 1;
        let has_time = slots.contains(&Some(Field::Time));
        if !has_time && kind.obligatory().contains(&Field::Time) {
            // Only a definition still open lacks its Time: pj_dump then
            // leaves the event's time uninitialised.
            self.report.garbage_times += 1;
            self.warn(
                line,
                format!(
                    "{} without a Time field; pj_dump reads garbage",
                    kind.name()
                ),
            );
        }
        let mut time = 0.0;
        if has_time {
            time = match parse_double(&fields.time) {
                Some(t) => t,
                None => {
                    self.report.garbage_times += 1;
                    self.warn(
                        line,
                        format!(
                            "time `{}` is not a number; pj_dump reads garbage or 0",
                            fields.time
                        ),
                    );
                    0.0
                }
            };
            if time < 0.0 {
                self.warn(line, format!("negative time {}", fields.time));
            }
            if let Some(last) = self.last_time {
                if time < last && !self.warned_decrease {
                    self.warned_decrease = true;
                    self.warn(line, format!("time {} is earlier than the previous line's {last}: pj_dump closes the trace at the last line's time", fields.time));
                }
            }
            self.last_time = Some(time);
        }
        if let Err(msg) = self.apply(kind, &fields, time, line) {
            self.error(line, msg);
        }
    }

    fn finish(&mut self) {
        if let Some((_, def, start)) = self.in_def.take() {
            // pj_dump 1.3.6 drops a definition cut by the end of the file
            // and accepts the trace.
            self.warn(
                start,
                format!(
                    "definition of {} is not closed by %EndEventDef (the file is cut?)",
                    def.kind.name()
                ),
            );
        }
        let end = self.last_time.unwrap_or(0.0);
        // pj_dump closes every container at the last time read, the root
        // included, and fails on links still pending in any of them.
        if let Err(msg) = self.destroy(0, end) {
            self.error(0, format!("at end of file: {msg}"));
        }
    }
}

/// Whether pj_dump reads known field `f` of a `kind` line: every event's
/// Time (PajeTraceEvent::setTime), then what its handler asks for: the
/// obligatory fields, the Alias of a definition or a container, the Color
/// of a variable type or a value. Any other known field is never read.
fn pj_dump_reads(kind: EventKind, f: Field) -> bool {
    use EventKind::*;
    let reads_alias = matches!(
        kind,
        DefineContainerType
            | DefineStateType
            | DefineVariableType
            | DefineEventType
            | DefineLinkType
            | DefineEntityValue
            | CreateContainer
    );
    let reads_color = matches!(kind, DefineVariableType | DefineEntityValue);
    f == Field::Time
        || kind.obligatory().contains(&f)
        || (f == Field::Alias && reads_alias)
        || (f == Field::Color && reads_color)
}

/// The first user field an entity made from a line of `len` fields
/// cannot read: PajeNG finds a user field by its name, so each name is
/// read where it first appears in the definition, and only those places
/// need to be on the line.
fn missing_user_field(slots: &[Slot], len: usize) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    for (i, s) in slots.iter().enumerate() {
        if let Slot::Extra(name) = s {
            if seen.contains(&name.as_str()) {
                continue;
            }
            if i >= len {
                return Some(name.clone());
            }
            seen.push(name);
        }
    }
    None
}
