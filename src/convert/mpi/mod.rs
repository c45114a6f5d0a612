//! MPE logs (CLOG2 and MPE-1 CLOG) → MPI states, point events and message
//! arrows (thesis section 4.1.2 and table C.2), on each rank's Process.
//!
//! Two streaming passes over the file, so memory does not grow with it:
//! 1. a scan collects what the file only says late or in aggregate: state
//!    and event definitions (rank 0 writes them at finalize), the
//!    `(icomm, rank) → world rank` map, processor names, the
//!    `integrador_anchor` events, per-rank event counts and per-channel
//!    message counts;
//! 2. the conversion. Each rank is placed on its host's wall clock by its
//!    own anchor (offset = anchor epoch − anchor MPE time), then on the
//!    reference clock by its host's correction. Messages pair first-in
//!    first-out per (sender, receiver, tag) in world ranks, as Jumpshot
//!    does; the k-th send of a channel is matched iff k < min(sends,
//!    receives) of that channel, which pass 1 counted, so every arrow
//!    written has both ends and its key is computable from either.
//!
//! A rank's row starts in the thesis' "executing" state at its first event;
//! MPI calls and user states push on top of it, and its last event pops
//! everything, so the row ends where the rank's log ends.
//!
//! `scan` is pass 1, `open` places the ranks and counts the channels,
//! `nodes` reads the nodes file; this file is pass 2.

mod config;
mod lookup;
mod nodes;
mod open;
mod scan;

pub use config::MpiConfig;

use lookup::{Chan, Chans, Ends};
pub use nodes::{host_of_rank, read_nodes};
use scan::{Ev, EvKind, Scan};

use crate::clock::{parse_epoch_ns, seconds_to_ns};
use crate::error::{Error, Result};
use crate::hierarchy::{Display, Role};
use crate::model::{ContainerId, LinkKey, Op, TypeId, ValueId};
use crate::registry::Registry;
use crate::source::{Clock, Converted, Converter, Lane, MessageStats, SourceStats, Timeline};
use integrador_clog::clog2::cargo_string;
use integrador_clog::Msg;
// foldhash: rank, row and channel lookups are per record (SipHash was 9%
// of an MPI run); the seed is random per run, like std's.
use foldhash::{HashMap, HashMapExt};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// The anchor's event name (docs/formats.md §5).
pub const ANCHOR_NAME: &str = "integrador_anchor";
/// MSGEVT etypes.
const SEND: i32 = -101;
const RECV: i32 = -102;
/// CommSelfCreate: its gcomm carries the rank's processor name.
const COMM_SELF_CREATE: i32 = 1;

/// Where an MPI log's ranks ran and when, besides the file itself.
pub struct MpiSetup<'a> {
    /// The MPI nodes file (`-mpinodes`).
    pub nodes: Option<&'a Path>,
    /// Wall-clock start (ns) for ranks without an anchor.
    pub start: Option<i64>,
    /// The reorder window (ns).
    pub window: i64,
    /// The `[mpi]` section.
    pub config: &'a std::sync::Arc<MpiConfig>,
}

/// One rank, placed: its clock domain (its anchor's offset on its host's
/// clock) is a lane of the timeline.
struct Rank {
    lane: Lane,
    host: String,
    /// The host's index in the messages' clock constraints.
    hix: u32,
    container: ContainerId,
}

/// Where an event goes: its rank's lane, the record's offset, its MPE time.
#[derive(Clone, Copy)]
struct At {
    lane: Lane,
    pos: u64,
    time: i64,
}

/// `n` pops of a state row.
fn pops(out: &mut Timeline, at: At, container: ContainerId, ty: TypeId, n: usize) -> Result<()> {
    for _ in 0..n {
        out.push_on(at.lane, at.pos, at.time, Op::PopState { container, ty })?;
    }
    Ok(())
}

/// One state row: a rank's (or an MPE thread's) MPI states.
struct Row {
    container: ContainerId,
    /// Index in `MpiSource::kinds`: the types of the row's container type.
    kind: usize,
    stack: Vec<usize>,
    left: u64,
    started: bool,
}

/// Where the records of one (icomm, rank, MPE thread) go: the world
/// rank, its lane and its row (one lookup per record).
#[derive(Clone, Copy)]
struct Who {
    me: i32,
    lane: Lane,
    row: usize,
}

/// Each (icomm, rank, MPE thread)'s [`Who`].
type WhoMap = lookup::ByRank<Who>;

/// The state and event types of one container type, and their values.
struct Kinds {
    state_ty: TypeId,
    event_ty: TypeId,
    executing: ValueId,
    state_values: Vec<ValueId>,
    event_values: HashMap<i32, ValueId>,
}

impl Kinds {
    fn new(reg: &mut Registry, ty: TypeId, mpi: &MpiConfig, scan: &Scan) -> Kinds {
        let state_ty = reg.state_type(ty, &mpi.state_name);
        let event_ty = reg.event_type(ty, &mpi.event_name);
        let executing = reg.value_of(
            state_ty,
            "executing",
            &Display {
                name: mpi.executing.name.clone(),
                color: mpi
                    .executing
                    .color
                    .clone()
                    .or_else(|| Some("0.85 0.85 0.85".into())),
            },
        );
        let state_values = scan
            .states
            .iter()
            .map(|s| {
                reg.value_of(
                    state_ty,
                    &s.name,
                    &display_of(&mpi.states, &s.name, &s.color),
                )
            })
            .collect();
        Kinds {
            state_ty,
            event_ty,
            executing,
            state_values,
            event_values: HashMap::new(),
        }
    }
}

/// Converts an MPE log. Everything it needs of the registry is made when
/// it opens (the values of every event type pass 1 saw, the link of
/// every channel), so it converts on a thread of its own when a core is
/// spare ([`crate::source::Threaded`]).
pub struct MpiSource {
    path: PathBuf,
    config: std::sync::Arc<MpiConfig>,
    scan: Scan,
    /// Looked up by world rank per record: hashed, not a tree.
    ranks: HashMap<i32, Rank>,
    rows: Vec<Row>,
    who: WhoMap,
    etypes: lookup::Etypes,
    chans: Chans,
    /// (communicator, rank, 0) → world rank ([`Scan::wrank`]), looked up
    /// per message end.
    wranks: lookup::ByRank<i32>,
    kinds: Vec<Kinds>,
    /// The hierarchy's name of message arrows.
    link_name: String,
    messages: MessageStats,
    unmatched_ends: u64,
    leftover_starts: u64,
    crossed: u64,
    unknown_partner: u64,
}

impl MpiSource {
    /// The value of a point event of `etype` on a row of `kind` (made
    /// when the log was opened, for every etype pass 1 saw).
    fn event_value(&self, kind: usize, etype: i32) -> Result<ValueId> {
        self.kinds
            .get(kind)
            .and_then(|k| k.event_values.get(&etype))
            .copied()
            .ok_or_else(|| {
                Error::in_file(
                    &self.path,
                    format!("event type {etype} was not in the log when first read (did it change while read?)"),
                )
            })
    }

    /// Makes the value of every point event type pass 1 saw, for every
    /// kind of row, and the link of every channel between placed ranks,
    /// so that the conversion needs nothing more of the registry.
    fn make_values(&mut self, reg: &mut Registry) {
        let mut etypes = self.scan.etypes.sorted();
        etypes.retain(|&e| self.etypes.get(e).is_none());
        for k in &mut self.kinds {
            for &etype in &etypes {
                let (name, color) = self
                    .scan
                    .events
                    .get(&etype)
                    .cloned()
                    .unwrap_or_else(|| (format!("event {etype}"), String::new()));
                let d = display_of(&self.config.states, &name, &color);
                let v = reg.value_of(k.event_ty, &name, &d);
                k.event_values.insert(etype, v);
            }
        }
        let mut keys: Vec<(i32, i32, i32)> = self.chans.all.keys().copied().collect();
        keys.sort_unstable();
        for key in keys {
            let (src, dst, _) = key;
            let (Some(s), Some(d)) = (self.ranks.get(&src), self.ranks.get(&dst)) else {
                continue;
            };
            let link = reg.link(
                s.container,
                d.container,
                &self.link_name,
                "message",
                &Display::default(),
            );
            let ends = Ends {
                link,
                from: s.container,
                to: d.container,
                hosts: (s.hix, d.hix),
                lanes: (s.lane, d.lane),
            };
            let i = self.chans.all.find(&key);
            if let Some(c) = i.and_then(|i| self.chans.all.get_mut(i)) {
                c.ends = Some(ends);
            }
        }
    }

    fn message(&mut self, out: &mut Timeline, rec: &Ev, me: i32, mpe: i64) -> Result<()> {
        let EvKind::Msg(Msg {
            etype,
            icomm,
            rank,
            tag,
            size,
        }) = rec.kind
        else {
            return Ok(());
        };
        let partner = self.wranks.get((icomm, rank, 0)).unwrap_or(rank);
        let send = etype == SEND;
        let (src, dst) = if send { (me, partner) } else { (partner, me) };
        let Some(chan) = self.chans.find((src, dst, tag), me, send) else {
            if !(self.ranks.contains_key(&src) && self.ranks.contains_key(&dst)) {
                self.unknown_partner += 1;
            }
            return Ok(());
        };
        // A channel's ends are made for every channel between placed
        // ranks: none, and one of its ranks logged nothing.
        let Some(Ends {
            link,
            from,
            to,
            hosts,
            lanes,
        }) = chan.ends
        else {
            self.unknown_partner += 1;
            return Ok(());
        };
        let lane = if send { lanes.0 } else { lanes.1 };
        let at = At {
            lane,
            pos: rec.offset,
            time: mpe,
        };
        // Message ends pair on the reference clock.
        let time = out.map(lane, mpe);
        let (count, mine, theirs) = if send {
            (&mut chan.sends, &mut chan.send_times, &mut chan.recv_times)
        } else {
            (&mut chan.recvs, &mut chan.recv_times, &mut chan.send_times)
        };
        let seq = *count;
        *count += 1;
        if seq >= chan.matched {
            return Ok(());
        }
        // The other half's time, when it came first in the file.
        let other = theirs.pop_front();
        if other.is_none() {
            mine.push_back(time);
        }
        let key = LinkKey {
            channel: chan.id,
            seq,
        };
        if let Some(other) = other {
            let (ts, tr) = if send { (time, other) } else { (other, time) };
            self.messages.clocks.observe(hosts.0, ts, hosts.1, tr);
            let ranks = &self.ranks;
            self.messages.check_order(
                ts,
                tr,
                || match (ranks.get(&src), ranks.get(&dst)) {
                    (Some(s), Some(d)) => (s.host.clone(), d.host.clone()),
                    _ => Default::default(),
                },
                || format!("{src}->{dst} tag {tag} #{seq}"),
            );
        }
        let (container, ty, value) = link;
        let op = if send {
            Op::StartLink {
                container,
                ty,
                value,
                from,
                key,
                size: i64::from(size),
                tag: i64::from(tag),
            }
        } else {
            Op::EndLink {
                container,
                ty,
                value,
                to,
                key,
            }
        };
        out.push_on(at.lane, at.pos, at.time, op)
    }

    fn finish(&mut self, out: &mut Timeline) {
        for row in &self.rows {
            // Rows whose last event never came: cannot happen with a
            // complete scan, but count rather than assume.
            self.leftover_starts += row.stack.len() as u64;
        }
        let mut notes = Vec::new();
        if self.unmatched_ends + self.leftover_starts + self.crossed > 0 {
            notes.push(format!(
                "state pairing: {} end(s) without a start, {} start(s) never ended, {} crossed (not nested)",
                self.unmatched_ends, self.leftover_starts, self.crossed
            ));
        }
        if self.unknown_partner > 0 {
            notes.push(format!(
                "{} message record(s) name a partner rank that logged nothing",
                self.unknown_partner
            ));
        }
        out.stats.warnings +=
            self.unmatched_ends + self.leftover_starts + self.crossed + self.unknown_partner;
        out.stats.notes.extend(notes);
        out.stats.messages = Some(std::mem::take(&mut self.messages));
    }
}

fn display_of(
    over: &std::collections::HashMap<String, Display>,
    name: &str,
    color: &str,
) -> Display {
    let mut d = over.get(name).cloned().unwrap_or_default();
    if d.color.is_none() {
        d.color = crate::color::paje_color(color);
    }
    d
}

/// An MPE log being read: the converter and its records.
struct Reading<F> {
    source: MpiSource,
    records: F,
}

impl<F: scan::Feed> Reading<F> {
    fn next(&mut self, out: &mut Timeline) -> Result<bool> {
        let s = &mut self.source;
        match self.records.next_event(&s.path)? {
            Some(rec) => {
                s.record(out, &rec)?;
                Ok(true)
            }
            None => {
                s.finish(out);
                Ok(false)
            }
        }
    }
}

impl<F: scan::Feed> Converter for Reading<F> {
    fn pull(&mut self, _reg: &mut Registry, out: &mut Timeline) -> Result<bool> {
        self.next(out)
    }
}

impl crate::source::Alone for Reading<scan::Fed> {
    fn pull_alone(&mut self, out: &mut Timeline) -> Result<bool> {
        self.next(out)
    }
}

impl MpiSource {
    /// A record of no row pass 1 counted: nothing to draw, but a placed
    /// rank's time must still be a time.
    fn unplaced(&self, rec: &Ev) -> Result<()> {
        let me = self.scan.wrank(rec.icomm, rec.rank);
        if self.ranks.contains_key(&me) && rec.ns.is_none() {
            return Err(self.bad_time(rec));
        }
        Ok(())
    }

    fn bad_time(&self, rec: &Ev) -> Error {
        Error::in_file(
            &self.path,
            format!(
                "byte {}: time {} is not a finite number of seconds",
                rec.offset, rec.time
            ),
        )
    }

    /// Converts one record.
    fn record(&mut self, out: &mut Timeline, rec: &Ev) -> Result<()> {
        let etype = match rec.kind {
            EvKind::Plain { etype } => Some(etype),
            EvKind::Msg(_) | EvKind::Coll => None,
            EvKind::Other => return Ok(()),
        };
        let Some(Who { me, lane, row: ri }) = self.who.get((rec.icomm, rec.rank, rec.thread))
        else {
            return self.unplaced(rec);
        };
        let Some(mpe) = rec.ns else {
            return Err(self.bad_time(rec));
        };
        let at = At {
            lane,
            pos: rec.offset,
            time: mpe,
        };
        let Some(row) = self.rows.get_mut(ri) else {
            return Ok(());
        };
        let Some(kinds) = self.kinds.get(row.kind) else {
            return Ok(());
        };
        let (state_ty, executing, event_ty, kind) =
            (kinds.state_ty, kinds.executing, kinds.event_ty, row.kind);
        let container = row.container;
        row.left = row.left.saturating_sub(1);
        let last = row.left == 0;
        if !row.started {
            row.started = true;
            out.push_on(
                at.lane,
                at.pos,
                at.time,
                Op::SetState {
                    container,
                    ty: state_ty,
                    value: executing,
                },
            )?;
        }
        match etype.map(|e| (e, self.etypes.get(e))) {
            Some((_, Some((state, true)))) => {
                row.stack.push(state);
                out.push_on(
                    at.lane,
                    at.pos,
                    at.time,
                    Op::PushState {
                        container,
                        ty: state_ty,
                        value: kinds.state_values.get(state).copied().unwrap_or(executing),
                    },
                )?;
            }
            // The state ends: nearly always the innermost, sometimes one
            // under others (MPE states need not nest). Each output nests
            // as its format says (the sinks' replay, src/sink/replay/).
            Some((_, Some((state, false)))) => match row.stack.iter().rposition(|&s| s == state) {
                None => self.unmatched_ends += 1,
                Some(depth) => {
                    if depth + 1 < row.stack.len() {
                        self.crossed += 1;
                    }
                    row.stack.remove(depth);
                    let value = kinds.state_values.get(state).copied().unwrap_or(executing);
                    out.push_on(
                        at.lane,
                        at.pos,
                        at.time,
                        Op::EndState {
                            container,
                            ty: state_ty,
                            value,
                        },
                    )?;
                }
            },
            Some((e, None)) => {
                let ty = event_ty;
                let value = self.event_value(kind, e)?;
                out.push_on(
                    at.lane,
                    at.pos,
                    at.time,
                    Op::NewEvent {
                        container,
                        ty,
                        value,
                    },
                )?;
            }
            None => self.message(out, rec, me, mpe)?,
        }
        // The row's last event: the rank is done, pop everything, the
        // base "executing" too.
        if last {
            if let Some(row) = self.rows.get_mut(ri) {
                let open = row.stack.len();
                self.leftover_starts += open as u64;
                row.stack.clear();
                row.started = false;
                let container = row.container;
                pops(out, at, container, state_ty, open + 1)?;
            }
        }
        Ok(())
    }
}

/// `-mpi`: MPE logs, one source per log, hosts from `-mpinodes`.
#[derive(Default)]
pub struct MpiKind {
    logs: Vec<PathBuf>,
    nodes: Option<PathBuf>,
    start: Option<i64>,
    config: std::sync::Arc<MpiConfig>,
}

impl super::SourceKind for MpiKind {
    fn option(&self) -> &'static str {
        "-mpi"
    }

    fn section(&self) -> Option<&'static str> {
        Some("mpi")
    }

    fn configure(&mut self, text: &crate::hierarchy::Text<'_>) -> Result<Vec<super::Named>> {
        self.config = std::sync::Arc::new(MpiConfig::read(text)?);
        Ok(Vec::new())
    }

    fn args(&self) -> Vec<clap::Arg> {
        const H: &str = "MPI (MPE logs)";
        vec![
            super::files_arg("mpi", "FILES", "MPE logs (CLOG2 or legacy CLOG); also -mpi", H),
            super::value_arg(
                "mpinodes",
                "FILE",
                "MPI nodes file (MPICH machine-file syntax: `host` or `host:N` per line); also -mpinodes",
                H,
            )
            .value_parser(clap::value_parser!(PathBuf)),
            super::value_arg(
                "mpi-start",
                "SECONDS",
                "Wall-clock start (epoch seconds) of an MPI run without an anchor",
                H,
            )
            .allow_negative_numbers(true),
        ]
    }

    fn thesis_options(&self) -> &'static [&'static str] {
        &["mpi", "mpinodes"]
    }

    fn take(&mut self, m: &clap::ArgMatches) -> Result<()> {
        self.logs = crate::convert::expand("-mpi", &super::words(m, "mpi"))?;
        self.nodes = m.get_one::<PathBuf>("mpinodes").cloned();
        super::needs_inputs(
            !self.logs.is_empty(),
            self.nodes.is_some() || m.contains_id("mpi-start"),
            "-mpinodes and --mpi-start describe MPI logs: give them with -mpi",
        )?;
        self.start = super::epoch_arg(m, "mpi-start", "1795265512.474392")?;
        Ok(())
    }

    fn carries_messages(&self) -> bool {
        true
    }

    fn has_inputs(&self) -> bool {
        !self.logs.is_empty()
    }

    fn named_files(&self) -> Vec<super::Named> {
        let logs = self.logs.iter().map(|p| ("-mpi", p.clone()));
        logs.chain(self.nodes.iter().map(|p| ("-mpinodes", p.clone())))
            .collect()
    }

    fn list(&mut self) -> Result<Vec<PathBuf>> {
        super::refuse_directories("-mpi", &self.logs, "*.clog2")?;
        let mut files = self.logs.clone();
        files.extend(self.nodes.iter().cloned());
        Ok(files)
    }

    fn open(&mut self, cx: &mut super::OpenCx<'_>) -> Result<()> {
        for path in &self.logs {
            if !cx.wants(std::slice::from_ref(path)) {
                continue;
            }
            let setup = MpiSetup {
                nodes: self.nodes.as_deref(),
                start: self.start.or(self.config.start),
                window: cx.cfg.reorder_window,
                config: &self.config,
            };
            let (source, timeline) = MpiSource::open(path, setup, cx.reg, cx.clock_of)?;
            // Its own thread when a core is spare: converting is most of
            // a run of one log, and the run's thread then only merges and
            // writes.
            if crate::input::threadable(path) && crate::prefetch::claim_busy() {
                cx.sources.push(Box::new(source.threaded(timeline)?));
            } else {
                cx.sources
                    .push(Box::new(Converted::new(source.reading()?, timeline)));
            }
        }
        Ok(())
    }
}
