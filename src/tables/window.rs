//! `integrador paje TABLES [--from T1] [--to T2] -o w.paje`: the Pajé
//! trace of a window, written from the tables (`docs/windows.md`).
//!
//! The tables keep a row where it completes, so a window `[T1, T2)` needs
//! the rows that complete from T1 on and, for what is still open at T2,
//! the first checkpoint at or after T2 (`C`): whatever is alive in the
//! window either completes in `[T1, C)` or is open at `C`. Only the row
//! groups whose statistics overlap `[T1, C)` are read: the time to open a
//! window depends on the window and the checkpoints' spacing, not on the
//! length of the run. Between checkpoints inside the window the rows are
//! read a segment at a time, so memory stays that of a segment.
//!
//! The rows become model events again (a state's start and end, a
//! variable's value at its start, a link's halves, containers' creations
//! and destructions) in time order, and the sinks' replay, given the
//! window, writes them as the integration's `--from/--to` does: what
//! starts before T1 is replayed without being written, and the trace is
//! cut at T1 and T2.

use super::held::{points, Held};
use super::read::{Catalogue, Cells, Dataset};
use crate::error::{Error, Result};
use crate::model::{ContainerId, Event, LinkKey, Op, TypeId, ValueId};
use crate::paje::writer::PajeWriter;
use crate::sink::{Replay, RunEnd};
use std::collections::HashMap;
use std::path::PathBuf;

/// What `integrador paje` did.
#[derive(Debug, Default, Clone)]
pub struct Written {
    /// Where it went, for messages.
    pub shown: String,
    /// Model events written.
    pub events: u64,
    /// Row groups read, and in the tables read from.
    pub groups_read: usize,
    /// Row groups in those tables.
    pub groups: usize,
}

/// A model event rebuilt from a row, before it is ordered.
#[derive(Debug, Clone)]
enum Item {
    Create(ContainerId),
    Start {
        row: (ContainerId, TypeId),
        value: ValueId,
        depth: u32,
        zero: bool,
    },
    End {
        row: (ContainerId, TypeId),
        value: ValueId,
        start: i64,
        depth: u32,
    },
    Set(ContainerId, TypeId, f64),
    Point(ContainerId, TypeId, ValueId),
    Half {
        container: ContainerId,
        ty: TypeId,
        value: ValueId,
        at: ContainerId,
        key: String,
        start: bool,
        size: i64,
        tag: i64,
    },
    Destroy(ContainerId),
}

impl Item {
    /// The order of items at one time: creations, states, the rest,
    /// destructions.
    fn class(&self) -> u8 {
        match self {
            Item::Create(_) => 0,
            Item::Start { .. } | Item::End { .. } => 1,
            Item::Destroy(_) => 3,
            _ => 2,
        }
    }
}

/// The open states of a row: value, start, depth.
type Stack = Vec<(ValueId, i64, u32)>;

/// The replay's input, rebuilt.
struct Rebuild {
    /// The definitions (the replay reads `cat.defs`, which also keeps the
    /// link keys met).
    cat: Catalogue,
    replay: Replay<PajeWriter<crate::output::Sink>>,
    stacks: HashMap<(u32, u32), Stack>,
    /// Link keys met once: their replayed key, and the half's time.
    halves: HashMap<String, (u64, i64)>,
    dir: PathBuf,
}

/// Whether `t` is in the segment `[a, b)`; the first takes all before.
fn within(t: i64, a: i64, b: i64, first: bool) -> bool {
    (first || t >= a) && t < b
}

impl Rebuild {
    fn container(&self, c: &Cells, col: &str) -> Result<ContainerId> {
        self.cat.container(c.i64(col).unwrap_or(0), &self.dir)
    }
    fn ty(&self, c: &Cells) -> TypeId {
        let k = c.i64("type_id").unwrap_or(0);
        self.cat.types.get(&k).copied().unwrap_or(TypeId(0))
    }
    fn value(&self, c: &Cells) -> ValueId {
        let k = c.i64("value_id").unwrap_or(0);
        self.cat.values.get(&k).copied().unwrap_or(ValueId(0))
    }

    /// Plays the items of one segment in time order; a time's state
    /// changes row by row.
    fn play(&mut self, mut items: Vec<(i64, Item)>) -> Result<()> {
        // Stable: a row's items keep the order they were read in.
        items.sort_by_key(|(t, i)| (*t, i.class(), row_of(i)));
        let mut i = 0;
        while i < items.len() {
            let (t, ref item) = items[i];
            if item.class() != 1 {
                self.one(t, item)?;
                i += 1;
                continue;
            }
            let key = row_of(item);
            let n = items[i..]
                .iter()
                .take_while(|(u, x)| *u == t && x.class() == 1 && row_of(x) == key)
                .count();
            let row = (ContainerId(key.0), TypeId(key.1));
            self.states(t, row, items[i..i + n].iter().map(|(_, x)| x))?;
            i += n;
        }
        Ok(())
    }

    fn event(&mut self, time: i64, op: Op) -> Result<()> {
        let ev = Event { time, op };
        self.replay
            .event(&self.cat.defs, &ev)
            .map_err(|e| Error::input(format!("write error: {e}")))
    }

    fn one(&mut self, t: i64, item: &Item) -> Result<()> {
        let io = |e: std::io::Error| Error::input(format!("write error: {e}"));
        match *item {
            Item::Create(c) => self
                .replay
                .create_in_order(&self.cat.defs, &[c], t)
                .map_err(io),
            Item::Destroy(c) => self.replay.destroy(&self.cat.defs, c, t).map_err(io),
            Item::Set(container, ty, value) => self.event(
                t,
                Op::SetVariable {
                    container,
                    ty,
                    value,
                },
            ),
            Item::Point(container, ty, value) => self.event(
                t,
                Op::NewEvent {
                    container,
                    ty,
                    value,
                },
            ),
            Item::Half {
                container,
                ty,
                value,
                at,
                ref key,
                start,
                size,
                tag,
            } => {
                let seq = match self.halves.remove(key.as_str()) {
                    Some((seq, _)) => seq,
                    None => {
                        let seq = self.cat.defs.put_key_name(key);
                        self.halves.insert(key.clone(), (seq, t));
                        seq
                    }
                };
                let key = LinkKey {
                    channel: crate::sink::catalogue::REPLAYED_KEYS,
                    seq,
                };
                let op = match start {
                    true => Op::StartLink {
                        container,
                        ty,
                        value,
                        from: at,
                        key,
                        size,
                        tag,
                    },
                    false => Op::EndLink {
                        container,
                        ty,
                        value,
                        to: at,
                        key,
                    },
                };
                self.event(t, op)
            }
            Item::Start { .. } | Item::End { .. } => Ok(()),
        }
    }

    /// The starts and ends of one row's states at `t`, in the order that
    /// gives each state its depth: a start whose depth is the stack's
    /// height goes first (a state of no length before the others), else
    /// the top ends if it ends now, else one ends under others.
    fn states<'i>(
        &mut self,
        t: i64,
        row: (ContainerId, TypeId),
        items: impl Iterator<Item = &'i Item>,
    ) -> Result<()> {
        let mut starts: Vec<(ValueId, u32, bool)> = Vec::new();
        let mut ends: Vec<(ValueId, i64, u32)> = Vec::new();
        for x in items {
            match *x {
                Item::Start {
                    value, depth, zero, ..
                } => starts.push((value, depth, zero)),
                Item::End {
                    value,
                    start,
                    depth,
                    ..
                } => ends.push((value, start, depth)),
                _ => {}
            }
        }
        starts.sort_by_key(|&(v, d, zero)| (d, !zero, v.0));
        let (container, ty) = row;
        let key = (container.0, ty.0);
        loop {
            let stack = self.stacks.entry(key).or_default();
            let n = stack.len() as u32;
            if let Some(i) = starts
                .iter()
                .position(|s| s.1 == n)
                .or((!starts.is_empty()).then_some(0))
                .filter(|&i| {
                    starts[i].1 == n || !stack.last().is_some_and(|top| ends.contains(top))
                })
            {
                let (value, depth, zero) = starts.remove(i);
                stack.push((value, t, depth));
                if zero {
                    ends.push((value, t, depth));
                }
                self.event(
                    t,
                    Op::PushState {
                        container,
                        ty,
                        value,
                    },
                )?;
                continue;
            }
            if let Some(top) = stack.last().copied().filter(|top| ends.contains(top)) {
                stack.pop();
                ends.retain(|e| *e != top);
                self.event(t, Op::PopState { container, ty })?;
                continue;
            }
            let Some(e) = ends.pop() else { break };
            if let Some(at) = stack.iter().rposition(|o| *o == e) {
                stack.remove(at);
                self.event(
                    t,
                    Op::EndState {
                        container,
                        ty,
                        value: e.0,
                    },
                )?;
            }
        }
        Ok(())
    }
}

fn row_of(x: &Item) -> (u32, u32) {
    match x {
        Item::Start { row, .. } | Item::End { row, .. } => (row.0 .0, row.1 .0),
        _ => (u32::MAX, u32::MAX),
    }
}

// The columns each table is read for: a row's names are the catalogue's.
const STATE_COLS: &[&str] = &[
    "container_id",
    "type_id",
    "value_id",
    "start_ns",
    "end_ns",
    "depth",
];
const VARIABLE_COLS: &[&str] = &["container_id", "type_id", "start_ns", "end_ns", "value"];
const EVENT_COLS: &[&str] = &["container_id", "type_id", "value_id", "time_ns"];
const LINK_COLS: &[&str] = &[
    "type_id",
    "value_id",
    "container_id",
    "from_container_id",
    "to_container_id",
    "start_ns",
    "end_ns",
    "size_bytes",
    "tag",
    "key",
];

impl Rebuild {
    /// The items of the segment `[a, b)` (the first takes what started
    /// before it): the rows that complete in it and the checkpoint at its
    /// end.
    fn segment(
        &mut self,
        data: &Dataset,
        (a, b, first): (i64, i64, bool),
        held: &[Held],
        lo: i64,
        w: &mut Written,
    ) -> Result<Vec<(i64, Item)>> {
        let mut items = Vec::new();
        let inside = |t: i64| within(t, a, b, first);
        let completes = |t: i64| t >= a && t < b;
        for &(create, destroy, _, c) in &self.cat.lives {
            if destroy < lo {
                continue;
            }
            if inside(create) {
                items.push((create, Item::Create(c)));
            }
        }
        for &(_, destroy, _, c) in self.cat.lives.iter().rev() {
            if destroy >= lo && completes(destroy) {
                items.push((destroy, Item::Destroy(c)));
            }
        }
        w.groups_read += data
            .table("states")?
            .scan_only(STATE_COLS, &["end_ns"], a, b, |c| {
                let (s, e) = (c.i64("start_ns").unwrap_or(0), c.i64("end_ns").unwrap_or(0));
                if !completes(e) {
                    return Ok(());
                }
                let row = (self.container(c, "container_id")?, self.ty(c));
                let (value, depth) = (self.value(c), c.i32("depth").unwrap_or(0) as u32);
                if inside(s) {
                    let zero = s == e;
                    items.push((
                        s,
                        Item::Start {
                            row,
                            value,
                            depth,
                            zero,
                        },
                    ));
                }
                if s != e {
                    items.push((
                        e,
                        Item::End {
                            row,
                            value,
                            start: s,
                            depth,
                        },
                    ));
                }
                Ok(())
            })?;
        w.groups_read +=
            data.table("variables")?
                .scan_only(VARIABLE_COLS, &["end_ns"], a, b, |c| {
                    let (s, e) = (c.i64("start_ns").unwrap_or(0), c.i64("end_ns").unwrap_or(0));
                    if completes(e) && inside(s) {
                        let v = c.f64("value").unwrap_or(0.0);
                        items.push((
                            s,
                            Item::Set(self.container(c, "container_id")?, self.ty(c), v),
                        ));
                    }
                    Ok(())
                })?;
        w.groups_read += data
            .table("events")?
            .scan_only(EVENT_COLS, &["time_ns"], a, b, |c| {
                let t = c.i64("time_ns").unwrap_or(0);
                if completes(t) {
                    let item = Item::Point(
                        self.container(c, "container_id")?,
                        self.ty(c),
                        self.value(c),
                    );
                    items.push((t, item));
                }
                Ok(())
            })?;
        w.groups_read +=
            data.table("links")?
                .scan_only(LINK_COLS, &["start_ns", "end_ns"], a, b, |c| {
                    let (s, e) = (c.i64("start_ns").unwrap_or(0), c.i64("end_ns").unwrap_or(0));
                    if !completes(s.max(e)) {
                        return Ok(());
                    }
                    self.link_halves(c, s, e, &inside, &mut items)
                })?;
        for h in held {
            let since = h.since;
            if !inside(since) {
                continue;
            }
            let c = self.cat.container(h.container, &self.dir)?;
            let ty = self.cat.types.get(&h.ty).copied().unwrap_or(TypeId(0));
            let value = self.cat.values.get(&h.value).copied().unwrap_or(ValueId(0));
            match h.kind {
                b's' => items.push((
                    since,
                    Item::Start {
                        row: (c, ty),
                        value,
                        depth: h.depth,
                        zero: false,
                    },
                )),
                b'v' => items.push((since, Item::Set(c, ty, h.number))),
                b'l' => {
                    let (at, start) = match (h.from, h.to) {
                        (Some(f), _) => (f, true),
                        (None, Some(t)) => (t, false),
                        (None, None) => continue,
                    };
                    let at = self.cat.container(at, &self.dir)?;
                    let item = Item::Half {
                        container: c,
                        ty,
                        value,
                        at,
                        key: h.key.clone(),
                        start,
                        size: h.size,
                        tag: h.tag,
                    };
                    items.push((since, item));
                }
                _ => {}
            }
        }
        Ok(items)
    }

    /// A link row's halves that fall in the segment.
    fn link_halves(
        &self,
        c: &Cells,
        s: i64,
        e: i64,
        inside: &dyn Fn(i64) -> bool,
        items: &mut Vec<(i64, Item)>,
    ) -> Result<()> {
        let container = self.container(c, "container_id")?;
        let (ty, value) = (self.ty(c), self.value(c));
        let key = c.str("key").unwrap_or("").to_string();
        for (t, start, col) in [
            (s, true, "from_container_id"),
            (e, false, "to_container_id"),
        ] {
            if inside(t) {
                let item = Item::Half {
                    container,
                    ty,
                    value,
                    at: self.container(c, col)?,
                    key: key.clone(),
                    start,
                    size: c.i64("size_bytes").unwrap_or(0),
                    tag: c.i64("tag").unwrap_or(0),
                };
                items.push((t, item));
            }
        }
        Ok(())
    }
}

/// The span of the run the dataset holds: its first creation and its
/// last destruction (or checkpoint).
fn run_span(cat: &Catalogue, data: &Dataset) -> Result<(i64, i64)> {
    let first = cat.lives.iter().map(|l| l.0).min();
    let mut last = cat.lives.iter().map(|l| l.1).max();
    if let Some((_, b)) = data.table("checkpoints")?.span("at_ns") {
        last = Some(last.map_or(b, |l| l.max(b)));
    }
    Ok((first.unwrap_or(data.t0), last.unwrap_or(data.t0)))
}

/// Refuses an output inside one of the tables' directories: a table it
/// reads would be replaced, or the directory would hold a file not ours.
fn refuse_inside(out: &crate::cli::Output, dirs: &[PathBuf]) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let crate::cli::Output::File(p) = out else {
        return Ok(());
    };
    let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
    let Ok(pm) = std::fs::metadata(parent.unwrap_or(std::path::Path::new("."))) else {
        return Ok(());
    };
    for d in dirs {
        let same = std::fs::metadata(d).is_ok_and(|m| (m.dev(), m.ino()) == (pm.dev(), pm.ino()));
        if same {
            return Err(Error::usage(format!(
                "-o {} is inside the tables directory {}, which it reads: write the trace elsewhere",
                p.display(),
                d.display()
            )));
        }
    }
    Ok(())
}

/// Writes the Pajé trace of the window `[from, to)` of the tables in
/// `dirs` to `out`.
pub fn to_paje(
    dirs: &[PathBuf],
    from: Option<crate::time::Instant>,
    to: Option<crate::time::Instant>,
    out: &crate::cli::Output,
) -> Result<Written> {
    let target = crate::output::Target::resolve(out)?;
    refuse_inside(out, dirs)?;
    let files: Vec<PathBuf> = dirs
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|r| r.flatten().map(|e| e.path()))
        .collect();
    target.refuse_inputs(files.iter().map(|f| ("the tables", f.as_path())))?;
    let data = Dataset::open(dirs)?;
    let cut = crate::time::window(from, to, data.t0, crate::sink::Points::NONE)?;
    let cat = Catalogue::read(&data)?;
    let (first, last) = run_span(&cat, &data)?;
    let (lo, hi) = (cut.from.unwrap_or(i64::MIN), cut.to.unwrap_or(i64::MAX));
    if hi <= first || lo > last {
        let what = format!(" in {}", dirs[0].display());
        return Err(crate::time::outside(
            cut.from,
            cut.to,
            first,
            Some(last),
            data.t0,
            &what,
        ));
    }
    let sink = target.create()?;
    let shown = target.shown();
    let writer =
        PajeWriter::new(sink, data.t0, false).map_err(|e| Error::input(format!("{shown}: {e}")))?;
    let mut w = Written::default();
    for t in ["states", "variables", "events", "links", "checkpoints"] {
        w.groups += data.table(t)?.groups();
    }
    let held = points(&data, lo, hi, &mut w)?;
    let mut rb = Rebuild {
        cat,
        replay: Replay::new(writer).within(cut),
        stacks: HashMap::new(),
        halves: HashMap::new(),
        dir: dirs[0].clone(),
    };
    // Segments from checkpoint to checkpoint; the last ends at the first
    // at or after T2, or goes on to the run's end.
    let mut a = lo;
    let mut first_seg = true;
    let mut bounds: Vec<i64> = held.keys().copied().collect();
    let ends_at_point = bounds.last().is_some_and(|&c| c >= hi);
    if !ends_at_point {
        bounds.push(i64::MAX);
    }
    let mut held = held;
    for b in bounds {
        let here = held.remove(&b).unwrap_or_default();
        let items = rb.segment(&data, (a, b, first_seg), &here, lo, &mut w)?;
        rb.play(items)?;
        a = b;
        first_seg = false;
    }
    // The links that cross T2 and end after the last checkpoint read.
    if ends_at_point && cut.is_window() {
        rb.finish_links(&data, a, hi, last, &mut w)?;
    }
    let io = |e: std::io::Error| Error::input(format!("{shown}: write error: {e}"));
    if last >= hi {
        rb.replay.reach(&rb.cat.defs, hi).map_err(io)?;
    }
    let (sink, stats) = rb
        .replay
        .finish(&rb.cat.defs, &RunEnd::empty())
        .map_err(io)?;
    sink.commit(&shown)?;
    w.events = stats.events;
    w.shown = shown;
    Ok(w)
}

impl Rebuild {
    /// Reads on past `a` for the other halves of the links in flight
    /// before `hi`, in widening steps, until none is left.
    fn finish_links(
        &mut self,
        data: &Dataset,
        a: i64,
        hi: i64,
        last: i64,
        w: &mut Written,
    ) -> Result<()> {
        self.halves.retain(|_, h| h.1 < hi);
        let links = data.table("links")?;
        let mut lo = a;
        let mut step: i64 = 1_000_000_000;
        while !self.halves.is_empty() && lo <= last {
            let top = lo.saturating_add(step);
            let mut items = Vec::new();
            let r = links.scan_only(LINK_COLS, &["start_ns", "end_ns"], lo, top, |c| {
                let (s, e) = (c.i64("start_ns").unwrap_or(0), c.i64("end_ns").unwrap_or(0));
                let done = s.max(e);
                let key = c.str("key").unwrap_or("");
                if done < lo || done >= top || !self.halves.contains_key(key) {
                    return Ok(());
                }
                let other = |t: i64| t >= a;
                self.link_halves(c, s, e, &other, &mut items)
            })?;
            w.groups_read += r;
            self.play(items)?;
            lo = top;
            step = step.saturating_mul(2);
        }
        Ok(())
    }
}
