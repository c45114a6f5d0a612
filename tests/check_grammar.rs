//! `integrador check` against pj_dump -q on small traces written from the
//! whole Pajé grammar, which no source of integrador writes: definitions
//! with fields in any order and of any field type, user fields (one name
//! twice, too, and fields under their old names), fields the event never
//! reads (`Line`, `File` and the other kinds' fields too), a known field
//! twice, lines short of a field or with one too many, types, values and
//! containers named by alias or by name, link keys used twice, colors of
//! every shape, quoted names with spaces, destroys, PajeTraceFile lines,
//! equal, decreasing and negative times spelled in any way spirit reads
//! (a hair under a time, which spirit rounds its own way, too);
//! every line spelled in the ways PajeNG's tokenizer reads (white space
//! of every kind, quotes, comments, `\r\n`, blank lines) and its quirks
//! (`""`, a `#` inside a word, a quote inside one or ending a line). Most
//! traces are meant to be valid; some get a mistake or two (a name used
//! twice, a pop of an empty stack, a link left open, a reference to the
//! wrong thing). The
//! mutants of `tests/differential.rs` start from integrador's own traces
//! and rarely reach these; each disagreement this test found was a rule
//! of PajeNG the checker lacked.
//!
//! `INTEGRADOR_GRAMMAR_CASES` (default 300) and `INTEGRADOR_SEED` set the
//! campaign; a trace the two decide apart is kept in the temp directory,
//! and `INTEGRADOR_GRAMMAR_KEEP=DIR` keeps every one.

mod common;
use common::*;
use std::collections::{HashMap, HashSet};

use integrador::paje::EventKind as K;
use K::*;

/// Fields PajeNG documents for each kind (the `Event` id comes first on
/// every line and is not listed).
const TYPE: &[&str] = &["Type", "Name", "Alias"];
const ON_ROW: &[&str] = &["Time", "Type", "Container"];
const WITH_VALUE: &[&str] = &["Time", "Type", "Container", "Value"];
const KINDS: [(K, &[&str]); 19] = [
    (DefineContainerType, TYPE),
    (DefineStateType, TYPE),
    (DefineVariableType, &["Type", "Name", "Alias", "Color"]),
    (DefineEventType, TYPE),
    (
        DefineLinkType,
        &[
            "Type",
            "StartContainerType",
            "EndContainerType",
            "Name",
            "Alias",
        ],
    ),
    (DefineEntityValue, &["Type", "Name", "Color", "Alias"]),
    (
        CreateContainer,
        &["Time", "Type", "Container", "Name", "Alias"],
    ),
    (DestroyContainer, &["Time", "Type", "Name"]),
    (NewEvent, WITH_VALUE),
    (SetState, WITH_VALUE),
    (PushState, WITH_VALUE),
    (PopState, ON_ROW),
    (ResetState, ON_ROW),
    (SetVariable, WITH_VALUE),
    (AddVariable, WITH_VALUE),
    (SubVariable, WITH_VALUE),
    (
        StartLink,
        &[
            "Time",
            "Type",
            "Container",
            "StartContainer",
            "Value",
            "Key",
        ],
    ),
    (
        EndLink,
        &["Time", "Type", "Container", "EndContainer", "Value", "Key"],
    ),
    (TraceFile, &["Container", "Type", "Filename"]),
];

/// Colors of every shape: PajeNG reads 3 or 4 words, or 6 or 7 hex digits.
const GOOD_COLORS: [&str; 5] = [
    "\"1 0 0\"",
    "0.5,0.5,0.5",
    "\"1 0 0 1\"",
    "ff0000",
    "ff00001",
];
const BAD_COLORS: [&str; 4] = ["ff000011", "zz", "\"1 2\"", "abc"];

struct Type {
    kind: K,
    parent: usize,
    ident: String,
    name: String,
    /// A link type's start and end container types.
    ends: (usize, usize),
    values: Vec<String>,
}

struct Container {
    ty: usize,
    ident: String,
    name: String,
}

/// What a trace declared so far, and the state its events left.
struct World {
    /// Each definition's fields, by id.
    defs: Vec<Vec<String>>,
    /// Second definitions: (kind, id).
    alternatives: Vec<(K, usize)>,
    types: Vec<Type>,
    containers: Vec<Container>,
    /// Milliseconds.
    time: i64,
    /// Stacked states per (container, type).
    depth: HashMap<(usize, usize), usize>,
    /// (container, type) with a variable value.
    has_value: HashSet<(usize, usize)>,
    /// Open link halves: (container, type, key, value, is a start).
    open: Vec<(usize, usize, String, String, bool)>,
    counter: usize,
    /// Whether this trace gets deliberate mistakes.
    careless: bool,
    /// Whether its words get the tokenizer's quirks (some careless
    /// traces: in every one, they would hide the other mistakes).
    quirky: bool,
    out: String,
}

impl World {
    fn new(careless: bool, quirky: bool) -> World {
        World {
            defs: Vec::new(),
            alternatives: Vec::new(),
            types: vec![Type {
                kind: DefineContainerType,
                parent: 0,
                ident: "0".into(),
                name: "0".into(),
                ends: (0, 0),
                values: Vec::new(),
            }],
            containers: vec![Container {
                ty: 0,
                ident: "0".into(),
                name: "0".into(),
            }],
            time: 0,
            depth: HashMap::new(),
            has_value: HashSet::new(),
            open: Vec::new(),
            counter: 0,
            careless,
            quirky: careless && quirky,
            out: String::new(),
        }
    }

    /// A deliberate mistake, `percent` times in a hundred of a careless
    /// trace.
    fn oops(&self, rng: &mut Rng, percent: u64) -> bool {
        self.careless && rng.chance(percent)
    }

    /// A fresh name with `prefix` for a line of kind `k`, and its alias:
    /// none when `k`'s definition has no Alias field (an empty word
    /// cannot be written), else the name itself or another word; now and
    /// then (careless) a name used before.
    fn names(&mut self, rng: &mut Rng, prefix: &str, k: K) -> (String, String, String) {
        let n = if self.oops(rng, 10) && self.counter > 0 {
            rng.below(self.counter)
        } else {
            self.counter += 1;
            self.counter
        };
        // Now and then a name with a space, quoted (as written on every
        // line that names it).
        let name = if rng.chance(8) {
            format!("\"{prefix}{n} x\"")
        } else {
            format!("{prefix}{n}")
        };
        let id = KINDS.iter().position(|(x, _)| *x == k).unwrap_or(0);
        let alias = if !self.defs[id].iter().any(|f| f == "Alias") {
            String::new()
        } else if rng.chance(50) {
            name.clone()
        } else {
            format!("{prefix}a{n}")
        };
        // PajeNG keeps a thing under its alias, or its name without one.
        let ident = if alias.is_empty() { &name } else { &alias }.clone();
        (name, alias, ident)
    }

    /// The next time: mostly later, sometimes the same, now and then
    /// earlier (across rows that is fine) or negative.
    fn next_time(&mut self, rng: &mut Rng) -> String {
        let t = if rng.chance(2) {
            -500 - 1000 * rng.below(3) as i64
        } else if rng.chance(5) {
            (self.time - 300).max(0)
        } else if rng.chance(20) {
            self.time
        } else {
            self.time + 100 * (1 + rng.below(3)) as i64
        };
        self.time = self.time.max(t);
        let sign = if t < 0 { "-" } else { "" };
        // Spellings pj_dump reads as the same number (boost::spirit's
        // `double_` on the longest prefix that is one), and now and then
        // (careless) an infinity or NaN. Never a word with no number in
        // front: pj_dump would read a double never written (the checker
        // warns of it).
        match rng.below(100) {
            0..4 => format!("{t}e-3"),
            4..6 => format!("{sign}{}.{:03}E+0", t.abs() / 1000, t.abs() % 1000),
            6..8 if t >= 0 => format!("+0{}.{:03}", t / 1000, t % 1000),
            8..10 => format!("{sign}{}.{:03}ms", t.abs() / 1000, t.abs() % 1000),
            10..12 if t % 1000 == 0 => format!("{sign}{}.", t.abs() / 1000),
            12..14 if t.abs() < 1000 => format!("{sign}.{:03}", t.abs()),
            14 if self.careless => ["inf", "-Infinity", "nan"][rng.below(3)].into(),
            // A hair under the time: whether it rounds to the time or to
            // the double below is where spirit and a correctly rounded
            // parse part.
            15..19 if t > 0 => {
                let nines = "9".repeat(12 + rng.below(10));
                let (s, ms) = ((t - 1) / 1000, (t - 1) % 1000);
                format!("{s}.{ms:03}{nines}{}", rng.below(10))
            }
            // Leading zeros, which spirit counts as digits: 17 or more
            // make the time 0.
            19..21 if self.careless => {
                let zeros = "0".repeat(14 + rng.below(6));
                format!("{sign}{zeros}{}.{:03}", t.abs() / 1000, t.abs() % 1000)
            }
            _ => format!("{sign}{}.{:03}", t.abs() / 1000, t.abs() % 1000),
        }
    }

    fn color(&self, rng: &mut Rng) -> String {
        if !self.oops(rng, 10) {
            GOOD_COLORS[rng.below(GOOD_COLORS.len())].into()
        } else {
            BAD_COLORS[rng.below(BAD_COLORS.len())].into()
        }
    }

    /// Writes a line of kind `k` whose fields are `given` by name (a field
    /// not given is `x`, as a user field's value), now and then a word
    /// short or one too long.
    fn line(&mut self, rng: &mut Rng, k: K, given: &[(&str, &str)]) {
        let get = |f: &str| given.iter().find(|g| g.0 == f).map(|g| g.1.to_string());
        // Any of the kind's definitions.
        let mut ids = vec![KINDS.iter().position(|(x, _)| *x == k).unwrap_or(0)];
        ids.extend(
            self.alternatives
                .iter()
                .filter(|(x, _)| *x == k)
                .map(|a| a.1),
        );
        let id = ids[rng.below(ids.len())];
        let mut words = vec![id.to_string()];
        for f in self.defs[id].clone() {
            let w = match f.as_str() {
                "Time" => self.next_time(rng),
                "Color" => get("Color").unwrap_or_else(|| self.color(rng)),
                "Key" => get("Key").unwrap_or_else(|| "k0".into()),
                other => get(other).unwrap_or_else(|| "x".into()),
            };
            words.push(w);
        }
        if rng.chance(1) && words.len() > 2 {
            words.pop();
        } else if rng.chance(2) {
            words.push("extra".into());
        }
        self.spell(rng, &words);
    }

    /// Writes `words` as one line, spelled in the ways PajeNG's tokenizer
    /// reads alike: any run of white space between words (`\t`, `\r`,
    /// `\v`, `\f` too) and before the first, none after a quoted word, a
    /// plain word quoted, a `#` comment at the end, `\r\n`, blank and
    /// comment lines before it. Now and then (in a quirky trace) a spelling
    /// that changes the line: a `#` in a word (the line ends there), `""`
    /// (the string runs on to the next quote: the tokenizer steps over the
    /// closing one), a quote inside a word (kept), a quote at the end (the
    /// next line joins this one).
    fn spell(&mut self, rng: &mut Rng, words: &[String]) {
        const SPACES: [&str; 7] = [" ", "  ", "\t", " \t ", "\r", "\x0b", "\x0c"];
        match rng.below(100) {
            0 => self.out.push('\n'),
            1 => self.out.push_str("# a comment line\n"),
            2 => self.out.push_str(" \t\n"),
            _ => {}
        }
        if rng.chance(5) {
            self.out.push_str(SPACES[rng.below(SPACES.len())]);
        }
        for (i, w) in words.iter().enumerate() {
            let plain = !w.is_empty() && !w.contains(['"', ' ', '#']);
            let glued = i > 0 && words[i - 1].starts_with('"') && rng.chance(10);
            if i > 0 && !glued {
                let space = if rng.chance(90) {
                    " "
                } else {
                    SPACES[rng.below(SPACES.len())]
                };
                self.out.push_str(space);
            }
            if plain && self.quirky && rng.chance(1) {
                // Careless: the line is cut at the `#`.
                self.out.push_str(&format!("{w}#{}", rng.below(9)));
            } else if plain && self.quirky && rng.chance(1) {
                self.out.push_str("\"\"");
            } else if plain && self.quirky && rng.chance(1) {
                self.out.push_str(&format!("{w}\"q"));
            } else if plain && rng.chance(4) {
                self.out.push_str(&format!("\"{w}\""));
            } else {
                self.out.push_str(w);
            }
        }
        if self.quirky && rng.chance(1) {
            // An opening quote at the end: its newline is never looked
            // at, so the next line joins this one.
            self.out.push_str(" \"");
        }
        match rng.below(100) {
            0..3 => self.out.push_str(" # the end"),
            3..6 => self.out.push('\r'),
            6 => self.out.push('\t'),
            _ => {}
        }
        self.out.push('\n');
    }

    /// A type of `kind`; now and then (careless) any type.
    fn type_of(&self, rng: &mut Rng, kind: K) -> Option<usize> {
        if self.oops(rng, 4) {
            return Some(rng.below(self.types.len()));
        }
        let all: Vec<usize> = (0..self.types.len())
            .filter(|&t| self.types[t].kind == kind && (kind != DefineContainerType || t > 0))
            .collect();
        all.get(rng.below(all.len())).copied()
    }

    /// A container that type `t` may live in; now and then (careless)
    /// any.
    fn container_for(&self, rng: &mut Rng, t: usize) -> Option<usize> {
        self.container_typed(rng, self.types[t].parent)
    }

    /// A container of type `ty`; now and then (careless) any.
    fn container_typed(&self, rng: &mut Rng, ty: usize) -> Option<usize> {
        if self.oops(rng, 4) {
            return Some(rng.below(self.containers.len()));
        }
        let fit: Vec<usize> = (0..self.containers.len())
            .filter(|&c| self.containers[c].ty == ty)
            .collect();
        fit.get(rng.below(fit.len())).copied()
    }

    /// How type `t` is named on a line (see [`World::refer`]).
    fn type_ref(&self, rng: &mut Rng, t: usize) -> String {
        self.refer(rng, &self.types[t].ident, &self.types[t].name)
    }

    /// How a container or value is named on a line: its identifier, or
    /// (careless) its name when it has an alias.
    fn refer(&self, rng: &mut Rng, ident: &str, name: &str) -> String {
        if ident != name && self.oops(rng, 10) {
            name.to_string()
        } else {
            ident.to_string()
        }
    }
}

/// The definitions: each kind's fields in some order, with now and then a
/// user field (twice, too), a field the kind never reads, an optional
/// field left out; and now and then a second definition of a kind under
/// another id, with fields of its own (between events, too).
fn definitions(rng: &mut Rng, w: &mut World) {
    for (id, (k, _)) in KINDS.iter().enumerate() {
        definition(rng, w, *k, id);
    }
    for _ in 0..rng.below(3) {
        alternative(rng, w);
    }
}

/// A second definition of some kind under the next free id (before the
/// events or between them).
fn alternative(rng: &mut Rng, w: &mut World) {
    let k = KINDS[rng.below(KINDS.len())].0;
    let id = w.defs.len();
    definition(rng, w, k, id);
    w.alternatives.push((k, id));
}

fn definition(rng: &mut Rng, w: &mut World, k: K, id: usize) {
    let (_, fields) = KINDS.iter().find(|(x, _)| *x == k).unwrap();
    let name = k.name();
    let mut f: Vec<String> = fields.iter().map(|s| s.to_string()).collect();
    if rng.chance(10) {
        f.retain(|x| x != "Alias");
    }
    if rng.chance(5) {
        f.retain(|x| x != "Color");
    }
    for (extra, percent) in [
        ("Foo", 12),
        ("Foo", 4),
        ("Color", 8),
        ("Alias", 8),
        ("Time", 6),
        ("Key", 4),
        ("Line", 3),
        ("File", 3),
        ("Filename", 3),
        ("Value", 2),
        ("Name", 2),
        ("Container", 2),
        ("EndContainer", 2),
    ] {
        if rng.chance(percent) && (extra == "Foo" || !f.iter().any(|x| x == extra)) {
            f.push(extra.into());
        }
    }
    // Quirky: a known field twice, or `Event` (every definition has it
    // already): pj_dump rejects both.
    if w.quirky && rng.chance(3) && !f.is_empty() {
        let again = f[rng.below(f.len())].clone();
        f.push(again);
    } else if w.quirky && rng.chance(1) {
        f.push("Event".into());
    }
    if rng.chance(50) {
        for i in (1..f.len()).rev() {
            f.swap(i, rng.below(i + 1));
        }
    }
    let head = if rng.chance(5) {
        "% EventDef"
    } else {
        "%EventDef"
    };
    w.spell(rng, &[head.into(), name.into(), id.to_string()]);
    // Any field type PajeNG knows: it reads every field as text.
    const TYPES: [&str; 7] = ["string", "float", "double", "int", "hex", "date", "color"];
    for x in &mut f {
        let ty = match x.as_str() {
            _ if rng.chance(10) => TYPES[rng.below(TYPES.len())],
            _ if w.quirky && rng.chance(1) => "text",
            "Time" => "date",
            "Color" => "color",
            _ => "string",
        };
        // Quirky: a field under its old name, which pj_dump takes as a
        // user field unless given `--no-strict`.
        let old = match x.as_str() {
            "Type" => "ContainerType",
            "StartContainerType" => "SourceContainerType",
            "EndContainer" => "DestContainer",
            _ => "",
        };
        if !old.is_empty() && w.quirky && rng.chance(2) {
            *x = old.into();
        }
        if rng.chance(80) {
            w.spell(rng, &["%".into(), x.clone(), ty.into()]);
        } else {
            w.spell(rng, &[format!("%{x}"), ty.into()]);
        }
    }
    w.spell(rng, &["%EndEventDef".into()]);
    w.defs.push(f);
}

fn define_type(rng: &mut Rng, w: &mut World, kind: K) {
    let parent = if kind == DefineContainerType {
        rng.below(w.types.len())
    } else {
        w.type_of(rng, DefineContainerType).unwrap_or(0)
    };
    let parent = if w.types[parent].kind == DefineContainerType || w.careless {
        parent
    } else {
        0
    };
    let ends = (
        w.type_of(rng, DefineContainerType).unwrap_or(0),
        w.type_of(rng, DefineContainerType).unwrap_or(0),
    );
    let (name, alias, ident) = w.names(rng, "T", kind);
    let ptype = w.type_ref(rng, parent);
    let (s, e) = (w.type_ref(rng, ends.0), w.type_ref(rng, ends.1));
    let given = [
        ("Type", ptype.as_str()),
        ("Name", &name),
        ("Alias", &alias),
        ("StartContainerType", &s),
        ("EndContainerType", &e),
    ];
    w.line(rng, kind, &given);
    w.types.push(Type {
        kind,
        parent,
        ident,
        name,
        ends,
        values: Vec::new(),
    });
}

fn define_value(rng: &mut Rng, w: &mut World) {
    let kinds = [DefineStateType, DefineEventType, DefineLinkType];
    let kind = kinds[rng.below(3)];
    let Some(t) = w.type_of(rng, kind) else {
        return;
    };
    let (name, alias, ident) = w.names(rng, "v", DefineEntityValue);
    let ty = w.type_ref(rng, t);
    let given = [("Type", ty.as_str()), ("Name", &name), ("Alias", &alias)];
    w.line(rng, DefineEntityValue, &given);
    w.types[t].values.push(ident);
}

fn create(rng: &mut Rng, w: &mut World) {
    let Some(t) = w.type_of(rng, DefineContainerType) else {
        return;
    };
    let Some(p) = w.container_for(rng, t) else {
        return;
    };
    let (name, alias, ident) = w.names(rng, "c", CreateContainer);
    let ty = w.type_ref(rng, t);
    let parent = w.refer(
        rng,
        &w.containers[p].ident.clone(),
        &w.containers[p].name.clone(),
    );
    let given = [
        ("Type", ty.as_str()),
        ("Container", &parent),
        ("Name", &name),
        ("Alias", &alias),
    ];
    w.line(rng, CreateContainer, &given);
    w.containers.push(Container { ty: t, ident, name });
}

/// An event on a row: a state, a variable or a plain event, kept valid
/// unless the trace is careless.
fn row_event(rng: &mut Rng, w: &mut World) {
    let kind = [
        DefineStateType,
        DefineStateType,
        DefineVariableType,
        DefineEventType,
    ][rng.below(4)];
    let Some(t) = w.type_of(rng, kind) else {
        return;
    };
    let Some(c) = w.container_for(rng, t) else {
        return;
    };
    let key = (c, t);
    let depth = w.depth.get(&key).copied().unwrap_or(0);
    let k = match w.types[t].kind {
        DefineStateType => {
            let pick = [
                SetState, PushState, PushState, PopState, PopState, ResetState,
            ][rng.below(6)];
            if pick == PopState && depth == 0 && !w.oops(rng, 30) {
                PushState
            } else {
                pick
            }
        }
        DefineVariableType => {
            let pick = [SetVariable, AddVariable, SubVariable][rng.below(3)];
            if pick != SetVariable && !w.has_value.contains(&key) && !w.oops(rng, 30) {
                SetVariable
            } else {
                pick
            }
        }
        _ => NewEvent,
    };
    match k {
        SetState | ResetState => {
            w.depth.insert(key, usize::from(k == SetState));
        }
        PushState => {
            w.depth.insert(key, depth + 1);
        }
        PopState => {
            w.depth.insert(key, depth.saturating_sub(1));
        }
        SetVariable => {
            w.has_value.insert(key);
        }
        _ => {}
    }
    let value = if matches!(k, SetVariable | AddVariable | SubVariable) {
        ["3", "2.5", "-1", "0"][rng.below(4)].to_string()
    } else if w.types[t].values.is_empty() || rng.chance(30) {
        format!("u{}", rng.below(3))
    } else {
        let v = &w.types[t].values;
        v[rng.below(v.len())].clone()
    };
    let ty = w.type_ref(rng, t);
    let cont = w.refer(
        rng,
        &w.containers[c].ident.clone(),
        &w.containers[c].name.clone(),
    );
    let given = [
        ("Type", ty.as_str()),
        ("Container", &cont),
        ("Value", &value),
    ];
    w.line(rng, k, &given);
}

/// A link half: a new one, or the other half of an open one (now and
/// then the same half again).
fn link(rng: &mut Rng, w: &mut World, close: bool) {
    let (c, t, key, value, start) = if !w.open.is_empty() && (close || rng.chance(50)) {
        let (c, t, key, value, was_start) = w.open.remove(rng.below(w.open.len()));
        let start = if rng.chance(5) { was_start } else { !was_start };
        (c, t, key, value, start)
    } else {
        let Some(t) = w.type_of(rng, DefineLinkType) else {
            return;
        };
        let Some(c) = w.container_for(rng, t) else {
            return;
        };
        let ends = w.types[t].ends;
        let have = |ty: usize| w.containers.iter().any(|c| c.ty == ty);
        let ends_exist = have(ends.0) && have(ends.1);
        if !ends_exist && !w.careless {
            return;
        }
        w.counter += 1;
        let key = format!("k{}", w.counter);
        let values = &w.types[t].values;
        let value = if values.is_empty() || rng.chance(30) {
            "u0".to_string()
        } else {
            values[rng.below(values.len())].clone()
        };
        let start = rng.chance(50);
        w.open.push((c, t, key.clone(), value.clone(), start));
        (c, t, key, value, start)
    };
    let ends = w.types[t].ends;
    let (ty, end_ty) = (w.type_ref(rng, t), if start { ends.0 } else { ends.1 });
    let other = w.container_typed(rng, end_ty).unwrap_or(0);
    let other = w.containers[other].ident.clone();
    let cont = w.containers[c].ident.clone();
    let given = [
        ("Type", ty.as_str()),
        ("Container", &cont),
        ("StartContainer", &other),
        ("EndContainer", &other),
        ("Value", &value),
        ("Key", &key),
    ];
    w.line(rng, if start { StartLink } else { EndLink }, &given);
}

/// A PajeTraceFile line: PajeNG reads its fields and does nothing else.
fn trace_file(rng: &mut Rng, w: &mut World) {
    let c = w.containers[rng.below(w.containers.len())].ident.clone();
    let t = rng.below(w.types.len());
    let t = w.type_ref(rng, t);
    let given = [
        ("Container", c.as_str()),
        ("Type", &t),
        ("Filename", "part.paje"),
    ];
    w.line(rng, TraceFile, &given);
}

fn destroy(rng: &mut Rng, w: &mut World) {
    let c = 1 + rng.below(w.containers.len() - 1);
    let ty = w.type_ref(rng, w.containers[c].ty);
    let name = w.containers[c].ident.clone();
    w.line(rng, DestroyContainer, &[("Type", &ty), ("Name", &name)]);
}

/// A whole trace.
fn trace(rng: &mut Rng) -> String {
    let mut w = World::new(rng.chance(40), rng.chance(30));
    definitions(rng, &mut w);
    for _ in 0..1 + rng.below(3) {
        define_type(rng, &mut w, DefineContainerType);
    }
    for _ in 0..2 + rng.below(5) {
        let kind = [
            DefineStateType,
            DefineVariableType,
            DefineEventType,
            DefineLinkType,
        ][rng.below(4)];
        define_type(rng, &mut w, kind);
    }
    for _ in 0..rng.below(5) {
        define_value(rng, &mut w);
    }
    for _ in 0..2 + rng.below(4) {
        create(rng, &mut w);
    }
    for _ in 0..10 + rng.below(30) {
        match rng.below(10) {
            0..=5 => row_event(rng, &mut w),
            6..=8 => link(rng, &mut w, false),
            _ if rng.chance(10) => alternative(rng, &mut w),
            _ if rng.chance(10) => trace_file(rng, &mut w),
            _ if rng.chance(30) && w.containers.len() > 1 => destroy(rng, &mut w),
            _ => create(rng, &mut w),
        }
    }
    // The open links closed, but for a careless trace now and then.
    while !w.open.is_empty() && !w.oops(rng, 30) {
        link(rng, &mut w, true);
    }
    w.out
}

#[test]
fn the_checker_takes_pj_dumps_decision_on_the_whole_grammar() {
    if !have_pj_dump() {
        return;
    }
    let cases: usize = std::env::var("INTEGRADOR_GRAMMAR_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let seed: u64 = std::env::var("INTEGRADOR_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20261127);
    let keep_all = std::env::var_os("INTEGRADOR_GRAMMAR_KEEP").map(std::path::PathBuf::from);
    let mut rng = Rng(seed);
    let dir = tempdir();
    let (mut accepted, mut differ) = (0, Vec::new());
    for i in 0..cases {
        let text = trace(&mut rng);
        let f = keep_all
            .as_ref()
            .map_or(dir.path(), |d| d.as_path())
            .join(format!("g{i}.paje"));
        std::fs::write(&f, &text).unwrap();
        let theirs = pj_dump_accepts(&f).unwrap_or(false);
        let ours = integrador::paje::check::check(text.as_bytes())
            .unwrap()
            .accepted();
        accepted += usize::from(theirs);
        if theirs != ours {
            let keep = std::env::temp_dir().join(format!("integrador-grammar-{seed}-{i}.paje"));
            std::fs::write(&keep, &text).unwrap();
            differ.push(format!(
                "case {i}: pj_dump accepts={theirs}, check accepts={ours}; kept in {}",
                keep.display()
            ));
        }
    }
    eprintln!("{cases} grammar traces (seed {seed}): pj_dump accepted {accepted}");
    // Both decisions must come often, or the cases test little.
    assert!(
        accepted * 5 >= cases && accepted * 5 <= cases * 4,
        "{accepted} of {cases} accepted"
    );
    assert!(
        differ.is_empty(),
        "{} disagreement(s):\n{}",
        differ.len(),
        differ.join("\n")
    );
}
