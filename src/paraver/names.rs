//! What the `.prv` header, the `.pcf` and the `.row` say, gathered as the
//! records are written (the finished encoder no longer sees the
//! registry).

use super::{FIRST_TYPE, SCALE};
use crate::model::TypeId;
use crate::registry::TypeKind;
use crate::sink::actors::{Actor, Actors};
use crate::sink::Catalogue;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// One event type of the `.pcf`.
struct EventType {
    label: String,
    /// Values by number.
    values: BTreeMap<u32, String>,
}

/// The names, by the numbers the records use.
#[derive(Default)]
pub struct Names {
    nodes: Vec<String>,
    tasks: Vec<Vec<String>>,
    threads: Vec<String>,
    /// Event types, by their number less [`FIRST_TYPE`].
    types: Vec<EventType>,
    /// State values by state number: name and colour.
    states: BTreeMap<u32, (String, Option<String>)>,
}

impl Names {
    /// Names what the actor `a` brought that is new: its node, task,
    /// thread.
    pub fn learn<C: Catalogue + ?Sized>(&mut self, cat: &C, actors: &Actors, a: Actor) {
        while self.nodes.len() < actors.nodes.len() {
            let c = actors.nodes[self.nodes.len()];
            self.nodes.push(Actors::path(cat, c));
        }
        while self.tasks.len() < actors.apps.len() {
            self.tasks.push(Vec::new());
        }
        for (names, app) in self.tasks.iter_mut().zip(&actors.apps) {
            while names.len() < app.tasks.len() {
                names.push(Actors::path(cat, app.tasks[names.len()].container));
            }
        }
        if a.global as usize == self.threads.len() {
            self.threads
                .push(Actors::path(cat, actors.threads[a.global as usize]));
        }
    }

    /// The next event type (numbered in the order they come).
    pub fn event_type<C: Catalogue + ?Sized>(&mut self, cat: &C, ty: TypeId) {
        let def = cat.type_def(ty);
        let mut label = def.name.to_string();
        let mut values = BTreeMap::new();
        match def.kind {
            TypeKind::Variable => {
                let unit = def
                    .unit
                    .as_deref()
                    .map(|u| format!(" {u}"))
                    .unwrap_or_default();
                label = format!("{label} (x{SCALE}{unit})");
            }
            TypeKind::State => {
                values.insert(0, "End".to_string());
            }
            _ => {}
        }
        self.types.push(EventType { label, values });
    }

    /// The value `n` of the event type numbered `ty` (from 0).
    pub fn value(&mut self, ty: u32, n: u32, name: &str) {
        if let Some(t) = self.types.get_mut(ty as usize) {
            t.values.insert(n, name.to_string());
        }
    }

    /// The Paraver state `n`.
    pub fn state(&mut self, n: u32, name: &str, color: Option<&str>) {
        self.states
            .insert(n, (name.to_string(), color.map(str::to_string)));
    }
}

/// A Pajé colour (`r g b` in 0..1) as Paraver's `{r,g,b}` in 0..255.
fn rgb(color: &str) -> Option<String> {
    let parts: Vec<f64> = color
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let [r, g, b] = parts[..] else { return None };
    let c = |x: f64| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
    Some(format!("{{{},{},{}}}", c(r), c(g), c(b)))
}

impl Names {
    /// The `.prv` header: date of T0, end time, nodes (one CPU each),
    /// applications with their tasks' threads and nodes.
    pub fn header(&self, actors: &Actors, origin: i64, ftime: i64) -> String {
        let date = chrono::DateTime::from_timestamp(
            origin.div_euclid(1_000_000_000),
            origin.rem_euclid(1_000_000_000) as u32,
        )
        .map(|d| d.format("%d/%m/%Y at %H:%M").to_string())
        .unwrap_or_else(|| "01/01/1970 at 00:00".to_string());
        let cpus = vec!["1"; actors.nodes.len()].join(",");
        let mut h = format!(
            "#Paraver ({date}):{ftime}_ns:{}({cpus}):{}",
            actors.nodes.len(),
            actors.apps.len()
        );
        for app in &actors.apps {
            let tasks: Vec<String> = app
                .tasks
                .iter()
                .map(|t| format!("{}:{}", t.threads.len(), t.node))
                .collect();
            h.push_str(&format!(":{}({})", app.tasks.len(), tasks.join(",")));
        }
        h.push('\n');
        h
    }

    /// The `.pcf`: the view's defaults, the states and their colours,
    /// the event types and their values.
    pub fn write_pcf(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(out, "DEFAULT_OPTIONS\n")?;
        writeln!(out, "LEVEL               THREAD")?;
        writeln!(out, "UNITS               NANOSEC")?;
        writeln!(out, "LOOK_BACK           100")?;
        writeln!(out, "SPEED               1")?;
        writeln!(out, "FLAG_ICONS          ENABLED")?;
        writeln!(out, "NUM_OF_STATE_COLORS {}", self.states.len() + 1)?;
        writeln!(out, "YMAX_SCALE          37\n\n")?;
        writeln!(out, "DEFAULT_SEMANTIC\n")?;
        writeln!(out, "THREAD_FUNC          State As Is\n\n")?;
        writeln!(out, "STATES")?;
        writeln!(out, "0    (no state)")?;
        for (n, (name, _)) in &self.states {
            writeln!(out, "{n}    {name}")?;
        }
        writeln!(out, "\n\nSTATES_COLOR")?;
        writeln!(out, "0    {{255,255,255}}")?;
        for (n, (_, color)) in &self.states {
            if let Some(c) = color.as_deref().and_then(rgb) {
                writeln!(out, "{n}    {c}")?;
            }
        }
        for (i, t) in self.types.iter().enumerate() {
            writeln!(out, "\n\nEVENT_TYPE")?;
            writeln!(out, "0    {}    {}", FIRST_TYPE as usize + i, t.label)?;
            if !t.values.is_empty() {
                writeln!(out, "VALUES")?;
                for (n, name) in &t.values {
                    writeln!(out, "{n}      {name}")?;
                }
            }
        }
        Ok(())
    }

    /// The `.row`: the names of CPUs, nodes, applications, tasks and
    /// threads, as the header numbers them.
    pub fn write_row(&self, actors: &Actors, out: &mut impl Write) -> io::Result<()> {
        writeln!(out, "LEVEL CPU SIZE {}", self.nodes.len())?;
        for (i, n) in self.nodes.iter().enumerate() {
            writeln!(out, "{}.{n}", i + 1)?;
        }
        writeln!(out, "\nLEVEL NODE SIZE {}", self.nodes.len())?;
        for n in &self.nodes {
            writeln!(out, "{n}")?;
        }
        writeln!(out, "\nLEVEL APPL SIZE {}", actors.apps.len())?;
        for a in &actors.apps {
            writeln!(out, "{}", a.class.name())?;
        }
        let tasks: Vec<&String> = self.tasks.iter().flatten().collect();
        writeln!(out, "\nLEVEL TASK SIZE {}", tasks.len())?;
        for t in tasks {
            writeln!(out, "{t}")?;
        }
        // Threads in the header's order: by application, task, thread.
        let mut threads = Vec::new();
        for app in &actors.apps {
            for t in &app.tasks {
                for &c in &t.threads {
                    if let Some(a) = actors.get(c) {
                        threads.push(&self.threads[a.global as usize]);
                    }
                }
            }
        }
        writeln!(out, "\nLEVEL THREAD SIZE {}", threads.len())?;
        for t in threads {
            writeln!(out, "{t}")?;
        }
        Ok(())
    }
}
