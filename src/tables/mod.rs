//! The entity tables (`docs/tables.md`): the integrated run as Parquet
//! files, one a table, that DuckDB and Spark query. An [`Encoder`] of the
//! sinks' replay: it writes each interval as the replay completes it
//! (states, variables, links), each point event, each container at its
//! end, each type and value at its first use; the run's provenance
//! (`run`, `inputs`, `clocks`) at the end, from the run's report.
//!
//! Ids are the replay's keys ([`crate::sink::ids`]): 64-bit hashes of what
//! a thing is, the same in every run, window and task of the same inputs.

pub mod columns;
mod held;
mod points;
pub(crate) mod provenance;
pub mod read;
pub mod replay;
pub mod window;

use crate::model::{ContainerId, Event, Op, TypeId, ValueId};
use crate::registry::TypeKind;
use crate::sink::ids::{container_key, type_key, value_key};
use crate::sink::{Book, Catalogue, Encoder, RunEnd, SinkStats, Span, SpanEnd};
use columns::{col, opt, time, unique, Col, Kind, Names, Table};
use parquet::data_type::ByteArray;
use std::io;
use std::path::Path;

/// The version of the tables' schema, in the `run` table and every
/// file's metadata; a reader refuses a directory of another.
pub const SCHEMA_VERSION: i32 = 2;

/// The file that marks a directory as a tables directory of ours: a
/// directory without it is never replaced.
pub const MARKER: &str = "integrador-tables.txt";

pub(crate) const STATES: &[Col] = &[
    col("container_id", Kind::I64),
    col("type_id", Kind::I64),
    col("type", Kind::Str),
    col("value_id", Kind::I64),
    col("value", Kind::Str),
    time("start_ns"),
    time("end_ns"),
    col("depth", Kind::I32),
    col("end_cause", Kind::Str),
    col("source", Kind::I32),
];
pub(crate) const VARIABLES: &[Col] = &[
    col("container_id", Kind::I64),
    col("type_id", Kind::I64),
    col("type", Kind::Str),
    time("start_ns"),
    time("end_ns"),
    col("value", Kind::F64),
    col("end_cause", Kind::Str),
    col("source", Kind::I32),
];
pub(crate) const EVENTS: &[Col] = &[
    col("container_id", Kind::I64),
    col("type_id", Kind::I64),
    col("type", Kind::Str),
    col("value_id", Kind::I64),
    col("value", Kind::Str),
    time("time_ns"),
    col("source", Kind::I32),
];
pub(crate) const LINKS: &[Col] = &[
    col("link_id", Kind::I64),
    col("type_id", Kind::I64),
    col("type", Kind::Str),
    col("value_id", Kind::I64),
    col("value", Kind::Str),
    col("container_id", Kind::I64),
    col("from_container_id", Kind::I64),
    col("to_container_id", Kind::I64),
    time("start_ns"),
    time("end_ns"),
    opt("size_bytes", Kind::I64),
    opt("tag", Kind::I64),
    unique("key"),
    col("source", Kind::I32),
];
pub(crate) const CONTAINERS: &[Col] = &[
    col("container_id", Kind::I64),
    opt("parent_id", Kind::I64),
    col("type_id", Kind::I64),
    col("type", Kind::Str),
    opt("role", Kind::Str),
    col("name", Kind::Str),
    col("path", Kind::Str),
    opt("host", Kind::Str),
    opt("cluster", Kind::Str),
    opt("pid", Kind::I64),
    opt("tid", Kind::I64),
    opt("rank", Kind::I64),
    time("create_ns"),
    time("destroy_ns"),
    col("row_order", Kind::I64),
];
pub(crate) const TYPES: &[Col] = &[
    col("type_id", Kind::I64),
    opt("parent_type_id", Kind::I64),
    col("nature", Kind::Str),
    col("name", Kind::Str),
    opt("color", Kind::Str),
    opt("unit", Kind::Str),
    opt("from_type_id", Kind::I64),
    opt("to_type_id", Kind::I64),
];
pub(crate) const VALUES: &[Col] = &[
    col("value_id", Kind::I64),
    col("type_id", Kind::I64),
    col("name", Kind::Str),
    opt("color", Kind::Str),
];
/// A task's series (`Tables::series`).
pub(crate) const SERIES: &[Col] = &[col("container_id", Kind::I64), col("type_id", Kind::I64)];
/// A container created and not yet destroyed: when, and its place in the
/// order a viewer shows rows.
#[derive(Clone, Copy, Default)]
struct Alive {
    key: i64,
    created: i64,
    order: i64,
}

/// A registry id's key and the [`Names`] number of its name, cached at
/// its declaration.
#[derive(Clone, Copy, Default)]
struct Named {
    key: i64,
    name: u32,
}

fn put<T: Default + Clone>(v: &mut Vec<T>, i: u32, x: T) {
    let i = i as usize;
    if v.len() <= i {
        v.resize(i + 1, T::default());
    }
    v[i] = x;
}

/// The tables of one run being written in a directory.
pub struct Tables {
    states: Table,
    variables: Table,
    events: Table,
    links: Table,
    containers: Table,
    types: Table,
    values: Table,
    checkpoints: Table,
    dir: std::path::PathBuf,
    /// Added to every time: a replayed trace's T0 (its times are from it).
    shift: i64,
    tnames: Vec<Named>,
    vnames: Vec<Named>,
    alive: Vec<Alive>,
    next_order: i64,
    /// The rows' strings, by number.
    names: Names,
    /// The causes' words' numbers, by [`SpanEnd`]'s order.
    causes: [u32; 4],
    /// Read for an id never declared (a bug of the replay): no panic.
    unknown: Named,
    /// A plan's task: its source's index in the whole run, added to the
    /// `source` of every row (`docs/scale.md`).
    part: Option<u32>,
    /// A task's rows still open at its end (`states_at_end`,
    /// `variables_at_end`): the gather ends them at the whole run's end.
    open_at_end: Option<(Table, Table)>,
    /// The replay is closing what is open at the end.
    ending: bool,
    /// A task's series (container and variable type keys): two tasks
    /// that set one series would be kept apart by a run on one machine,
    /// which the gather cannot do, and refuses.
    series: std::collections::HashSet<(i64, i64)>,
    last_series: (i64, i64),
}

/// Every file's key-value metadata (`docs/tables.md`): the schema, the
/// writer, the run's T0.
pub(crate) fn file_meta(t0: i64) -> Vec<(String, String)> {
    vec![
        (
            "integrador.schema_version".to_string(),
            SCHEMA_VERSION.to_string(),
        ),
        (
            "integrador.version".to_string(),
            env!("CARGO_PKG_VERSION").to_string(),
        ),
        ("integrador.t0_ns".to_string(), t0.to_string()),
    ]
}

/// What a task writes for a container alive at its end: the gather puts
/// the whole run's end there.
pub const ALIVE_AT_END: i64 = i64::MAX;

/// The cause's word, by [`SpanEnd`]'s order.
fn cause(c: SpanEnd) -> usize {
    match c {
        SpanEnd::Pop => 0,
        SpanEnd::Set => 1,
        SpanEnd::ContainerEnd => 2,
        SpanEnd::TraceEnd => 3,
    }
}

/// A type's or a value's key and name, by id: borrowed, since a shared
/// name's clone and drop are an atomic count each (they were an eighth
/// of a kernel trace's tables).
fn named<'a>(v: &'a [Named], unknown: &'a Named, i: u32) -> &'a Named {
    v.get(i as usize).unwrap_or(unknown)
}

/// A type's or a value's name as a Parquet string that a row takes
/// without an atomic count: kept for the process's life. What is kept is
/// one copy of each distinct name a run declares (as the registry keeps
/// them), where a counted name cost an eighth of the tables' work in its
/// clones and drops, two a row and column.
fn forever(name: &str) -> ByteArray {
    let kept: &'static str = Box::leak(name.to_string().into_boxed_str());
    ByteArray::from(bytes::Bytes::from_static(kept.as_bytes()))
}

fn key(k: u64) -> i64 {
    // Parquet has no unsigned type Spark reads as a number: the same 64
    // bits, signed.
    k as i64
}

impl Tables {
    /// Starts the entity tables in `dir`; `shift` is added to every time.
    pub fn create(dir: &Path, shift: i64) -> io::Result<Tables> {
        // The entity tables' row groups are encoded on threads of their
        // own when the run may use threads: the encoding and compression
        // are about half of the tables' work.
        let threaded = crate::prefetch::threaded();
        let names = Names::default();
        // Number 0: the name of an id never declared (a bug of the replay).
        names.add(ByteArray::from(""));
        let t = |name, cols, sorted| Table::create(dir, name, cols, sorted, &names, threaded);
        Ok(Tables {
            states: t("states", STATES, Some(6))?,
            variables: t("variables", VARIABLES, Some(4))?,
            events: t("events", EVENTS, Some(5))?,
            links: t("links", LINKS, None)?,
            containers: t("containers", CONTAINERS, Some(13))?,
            types: t("types", TYPES, None)?,
            values: t("values", VALUES, None)?,
            checkpoints: t("checkpoints", points::CHECKPOINTS, Some(0))?.with_group_rows(8192),
            dir: dir.to_path_buf(),
            shift,
            tnames: Vec::new(),
            vnames: Vec::new(),
            alive: Vec::new(),
            next_order: 0,
            causes: [
                SpanEnd::Pop,
                SpanEnd::Set,
                SpanEnd::ContainerEnd,
                SpanEnd::TraceEnd,
            ]
            .map(|c| {
                names.add(ByteArray::from(bytes::Bytes::from_static(
                    c.word().as_bytes(),
                )))
            }),
            names,
            unknown: Named::default(),
            part: None,
            open_at_end: None,
            ending: false,
            series: Default::default(),
            last_series: (0, 0),
        })
    }

    /// Makes these the tables of a plan's task converting source `part`
    /// (nothing changes without one).
    pub fn in_task(mut self, part: Option<u32>) -> io::Result<Tables> {
        if part.is_some() {
            let t = |name, cols, sorted| {
                Table::create(&self.dir, name, cols, sorted, &self.names, false)
            };
            self.open_at_end = Some((
                t("states_at_end", STATES, None)?,
                t("variables_at_end", VARIABLES, None)?,
            ));
        }
        self.part = part;
        Ok(self)
    }

    fn source(&self, s: u32) -> i32 {
        s.saturating_add(self.part.unwrap_or(0)) as i32
    }

    fn ty(&self, t: TypeId) -> &Named {
        named(&self.tnames, &self.unknown, t.0)
    }

    fn container(&self, c: ContainerId) -> i64 {
        match c {
            ContainerId::ROOT => 0,
            c => self.alive.get(c.0 as usize).map_or(0, |a| a.key),
        }
    }
}

impl Encoder for Tables {
    const INTERVALS: bool = true;
    /// The rows written.
    type Out = u64;

    fn declare_type<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        _: &Book,
        ty: TypeId,
    ) -> io::Result<()> {
        let def = cat.type_def(ty);
        let k = key(type_key(cat, ty));
        put(
            &mut self.tnames,
            ty.0,
            Named {
                key: k,
                name: self.names.add(forever(&def.name)),
            },
        );
        let t = &mut self.types;
        t.i64(k);
        match def.parent {
            Some(p) => t.i64(key(type_key(cat, p))),
            None => t.null(),
        }
        t.text(match def.kind {
            TypeKind::Container => "container",
            TypeKind::State => "state",
            TypeKind::Variable => "variable",
            TypeKind::Event => "event",
            TypeKind::Link { .. } => "link",
        });
        t.text(&def.name);
        match &def.color {
            Some(c) => t.text(c),
            None => t.null(),
        }
        match &def.unit {
            Some(u) => t.text(u),
            None => t.null(),
        }
        match def.kind {
            TypeKind::Link { start, end } => {
                t.i64(key(type_key(cat, start)));
                t.i64(key(type_key(cat, end)));
            }
            _ => {
                t.null();
                t.null();
            }
        }
        t.end()
    }

    fn declare_value<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        _: &Book,
        v: ValueId,
        color: Option<&str>,
    ) -> io::Result<()> {
        let def = cat.value(v);
        let k = key(value_key(cat, v));
        put(
            &mut self.vnames,
            v.0,
            Named {
                key: k,
                name: self.names.add(forever(&def.name)),
            },
        );
        let ty = self.ty(def.ty).key;
        let t = &mut self.values;
        t.i64(k);
        t.i64(ty);
        t.text(&def.name);
        match color {
            Some(c) => t.text(c),
            None => t.null(),
        }
        t.end()
    }

    fn create<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        _: &Book,
        c: ContainerId,
        time: i64,
    ) -> io::Result<()> {
        let alive = Alive {
            key: key(container_key(cat, c)),
            created: time + self.shift,
            order: self.next_order,
        };
        self.next_order += 1;
        put(&mut self.alive, c.0, alive);
        Ok(())
    }

    fn event<C: Catalogue + ?Sized>(
        &mut self,
        _: &C,
        book: &Book,
        ev: &Event,
        _: bool,
    ) -> io::Result<()> {
        let source = self.source(book.source);
        let Op::NewEvent {
            container,
            ty,
            value,
        } = ev.op
        else {
            return Ok(());
        };
        let c = self.container(container);
        let ty = named(&self.tnames, &self.unknown, ty.0);
        let v = named(&self.vnames, &self.unknown, value.0);
        let t = &mut self.events;
        t.i64(c);
        t.i64(ty.key);
        t.name(ty.name);
        t.i64(v.key);
        t.name(v.name);
        t.i64(ev.time + self.shift);
        t.i32(source);
        t.end()
    }

    fn span<C: Catalogue + ?Sized>(&mut self, cat: &C, _: &Book, s: &Span) -> io::Result<()> {
        let shift = self.shift;
        match *s {
            Span::State {
                container,
                ty,
                value,
                start,
                end,
                depth,
                cause,
                source,
            } => {
                let c = self.container(container);
                let ty = named(&self.tnames, &self.unknown, ty.0);
                let v = named(&self.vnames, &self.unknown, value.0);
                let source = self.source(source);
                let at_end = matches!(cause, SpanEnd::TraceEnd);
                let cause = self.causes[self::cause(cause)];
                let t = match self.open_at_end.as_mut() {
                    Some((t, _)) if at_end => t,
                    _ => &mut self.states,
                };
                t.i64(c);
                t.i64(ty.key);
                t.name(ty.name);
                t.i64(v.key);
                t.name(v.name);
                t.i64(start + shift);
                t.i64(end + shift);
                t.i32(depth as i32);
                t.name(cause);
                t.i32(source);
                t.end()
            }
            Span::Variable {
                container,
                ty,
                value,
                start,
                end,
                cause,
                source,
            } => {
                let c = self.container(container);
                let ty = named(&self.tnames, &self.unknown, ty.0);
                let source = self.source(source);
                if self.part.is_some() && self.last_series != (c, ty.key) {
                    self.last_series = (c, ty.key);
                    self.series.insert((c, ty.key));
                }
                let at_end = matches!(cause, SpanEnd::TraceEnd);
                let cause = self.causes[self::cause(cause)];
                let t = match self.open_at_end.as_mut() {
                    Some((_, t)) if at_end => t,
                    _ => &mut self.variables,
                };
                t.i64(c);
                t.i64(ty.key);
                t.name(ty.name);
                t.i64(start + shift);
                t.i64(end + shift);
                t.f64(value);
                t.name(cause);
                t.i32(source);
                t.end()
            }
            Span::Link {
                container,
                ty,
                value,
                from,
                to,
                start,
                end,
                key: k,
                size,
                tag,
                source,
            } => {
                let c = self.container(container);
                let ty = named(&self.tnames, &self.unknown, ty.0);
                let v = named(&self.vnames, &self.unknown, value.0);
                let (from, to) = (self.container(from), self.container(to));
                let id = key(crate::sink::ids::link_key(cat, ty.key as u64, k));
                let source = self.source(source);
                let t = &mut self.links;
                t.i64(id);
                t.i64(ty.key);
                t.name(ty.name);
                t.i64(v.key);
                t.name(v.name);
                t.i64(c);
                t.i64(from);
                t.i64(to);
                t.i64(start + shift);
                t.i64(end + shift);
                t.i64(size);
                t.i64(tag);
                match cat.key_name(k) {
                    Some(name) => t.text(name),
                    None => t.key(k.channel, k.seq),
                }
                t.i32(source);
                t.end()
            }
        }
    }

    fn checkpoint<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        _: &Book,
        at: i64,
        held: &crate::sink::Held,
    ) -> io::Result<()> {
        self.hold(cat, at, held)
    }

    fn ending(&mut self) {
        self.ending = true;
    }

    fn destroy<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        _: &Book,
        c: ContainerId,
        time: i64,
    ) -> io::Result<()> {
        let def = cat.container(c);
        let a = self.alive.get(c.0 as usize).copied().unwrap_or_default();
        let ty = named(&self.tnames, &self.unknown, def.ty.0);
        use crate::hierarchy::Role;
        let mut names = Vec::new();
        let (mut host, mut cluster) = (None, None);
        let mut at = Some(c);
        while let Some(x) = at.filter(|_| names.len() < 256) {
            let d = cat.container(x);
            match cat.type_def(d.ty).role {
                Some(Role::Machine) => host = Some(d.name.clone()),
                Some(Role::Cluster) => cluster = Some(d.name.clone()),
                _ => {}
            }
            names.push(d.name.to_string());
            at = d.parent;
        }
        names.reverse();
        let role = cat.type_def(def.ty).role;
        let t = &mut self.containers;
        t.i64(a.key);
        match def.parent {
            Some(p) => t.i64(key(container_key(cat, p))),
            None => t.null(),
        }
        t.i64(ty.key);
        t.name(ty.name);
        match role {
            Some(r) => t.text(r.as_str()),
            None => t.null(),
        }
        t.text(&def.name);
        t.text(&names.join("/"));
        for v in [host, cluster] {
            match v {
                Some(v) => t.text(&v),
                None => t.null(),
            }
        }
        for v in [def.ids.pid, def.ids.tid, def.ids.rank] {
            match v {
                Some(v) => t.i64(v),
                None => t.null(),
            }
        }
        t.i64(a.created);
        t.i64(match self.part {
            Some(_) if self.ending => ALIVE_AT_END,
            _ => time + self.shift,
        });
        t.i64(a.order);
        t.end()
    }

    fn finish(self, end: &RunEnd, stats: &mut SinkStats) -> io::Result<u64> {
        let meta = file_meta(end.report.origin);
        self.provenance(end, stats, &meta)?;
        let mut rows = 0;
        if let Some((a, b)) = self.open_at_end {
            rows += a.close(&meta)? + b.close(&meta)?;
            let mut t = Table::create(&self.dir, "series", SERIES, None, &self.names, false)?;
            let mut series: Vec<_> = self.series.into_iter().collect();
            series.sort_unstable();
            for (c, ty) in series {
                t.i64(c);
                t.i64(ty);
                t.end()?;
            }
            rows += t.close(&meta)?;
        }
        for t in [
            self.states,
            self.variables,
            self.events,
            self.links,
            self.containers,
            self.types,
            self.values,
            self.checkpoints,
        ] {
            rows += t.close(&meta)?;
        }
        // Each sink counts its own; a run's summary shows the first's.
        stats.records = rows;
        Ok(rows)
    }
}
