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

use crate::clock::{parse_epoch_ns, seconds_to_ns, ClockMap};
use crate::error::{Error, Result};
use crate::hierarchy::{Display, Role};
use crate::model::{ContainerId, LinkKey, Op, TypeId, ValueId};
use crate::registry::Registry;
use crate::source::{Converted, Converter, MessageStats, SourceStats, Timeline};
use integrador_clog::clog2::cargo_string;
use integrador_clog::{Body, Clog2Reader, CommEntry, Format, LegacyReader, Record};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, VecDeque};
use std::io::BufReader;
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
}

enum Reader {
    Clog2(Clog2Reader<BufReader<crate::input::Reader>>),
    Legacy(LegacyReader<BufReader<crate::input::Reader>>),
}

impl Reader {
    fn open(path: &Path) -> Result<Reader> {
        let head = crate::input::head(path, 64).map_err(|e| Error::in_file(path, e))?;
        let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
        let buf = BufReader::with_capacity(crate::input::buffer_size(path), file);
        match integrador_clog::detect(&head) {
            Some(Format::Clog2) => Ok(Reader::Clog2(
                Clog2Reader::new(buf).map_err(|e| Error::in_file(path, e))?,
            )),
            Some(Format::Legacy) => Ok(Reader::Legacy(LegacyReader::new(buf))),
            None => Err(Error::in_file(
                path,
                "not an MPE log: expected `CLOG-02.44` (CLOG2) or an MPE-1 CLOG record at byte 0",
            )),
        }
    }

    fn next(&mut self) -> std::result::Result<Option<Record>, integrador_clog::Error> {
        match self {
            Reader::Clog2(r) => r.next_record(),
            Reader::Legacy(r) => loop {
                match r.next_record()? {
                    None => return Ok(None),
                    Some(rec) => {
                        if let Some(r2) = rec.to_clog2() {
                            return Ok(Some(r2));
                        }
                    }
                }
            },
        }
    }

    fn comm_table(&mut self) -> std::result::Result<Vec<CommEntry>, integrador_clog::Error> {
        match self {
            Reader::Clog2(r) => r.comm_table(),
            Reader::Legacy(_) => Ok(Vec::new()),
        }
    }
}

/// A state definition.
#[derive(Debug, Clone)]
struct StateDef {
    name: String,
    color: String,
}

type FirstCargo = (f64, [u8; 32], u64);

/// What pass 1 learns.
#[derive(Default)]
struct Scan {
    comm: HashMap<(i32, i32), i32>,
    processor: BTreeMap<i32, (i32, String)>,
    table: Vec<CommEntry>,
    states: Vec<StateDef>,
    state_of_etype: HashMap<i32, (usize, bool)>,
    events: HashMap<i32, (String, String)>,
    /// First cargo event per (etype, icomm, rank): time, cargo, offset.
    cargo_first: HashMap<(i32, i32, i32), FirstCargo>,
    row_events: HashMap<(i32, i32, i32), u64>,
    /// The first record of each (icomm, rank), for messages.
    first_at: HashMap<(i32, i32), u64>,
    rank_span: HashMap<(i32, i32), (f64, f64)>,
    msgs: HashMap<(i32, i32, i32, i32, i32, bool), u64>,
}

impl Scan {
    fn wrank(&self, icomm: i32, rank: i32) -> i32 {
        // The map has every (icomm, rank) a CLOG2 file uses; MPE-1 CLOG
        // has world ranks only.
        self.comm.get(&(icomm, rank)).copied().unwrap_or(rank)
    }

    fn run(reader: &mut Reader, path: &Path) -> Result<Scan> {
        let mut s = Scan::default();
        while let Some(rec) = reader.next().map_err(|e| Error::in_file(path, e))? {
            let key = (rec.icomm, rec.rank);
            match &rec.body {
                Body::Comm {
                    etype,
                    icomm,
                    rank,
                    wrank,
                    gcomm,
                } => {
                    s.comm.insert((*icomm, *rank), *wrank);
                    if *etype == COMM_SELF_CREATE && !gcomm.processor.is_empty() {
                        s.processor
                            .insert(*wrank, (*icomm, gcomm.processor.clone()));
                    }
                }
                Body::StateDef {
                    start,
                    end,
                    color,
                    name,
                    ..
                } => {
                    let idx = s.states.len();
                    s.states.push(StateDef {
                        name: name.clone(),
                        color: color.clone(),
                    });
                    s.state_of_etype.insert(*start, (idx, true));
                    s.state_of_etype.insert(*end, (idx, false));
                }
                Body::EventDef {
                    etype, color, name, ..
                } => {
                    s.events.insert(*etype, (name.clone(), color.clone()));
                }
                _ => {}
            }
            let is_event = matches!(
                rec.body,
                Body::Bare { .. } | Body::Cargo { .. } | Body::Msg { .. } | Body::Coll { .. }
            );
            if !is_event {
                continue;
            }
            *s.row_events
                .entry((rec.icomm, rec.rank, rec.thread))
                .or_default() += 1;
            s.first_at
                .entry((rec.icomm, rec.rank))
                .or_insert(rec.offset);
            let span = s.rank_span.entry(key).or_insert((rec.time, rec.time));
            span.0 = span.0.min(rec.time);
            span.1 = span.1.max(rec.time);
            match rec.body {
                Body::Cargo { etype, bytes } => {
                    s.cargo_first
                        .entry((etype, rec.icomm, rec.rank))
                        .or_insert((rec.time, bytes, rec.offset));
                }
                Body::Msg {
                    etype,
                    icomm,
                    rank,
                    tag,
                    ..
                } if etype == SEND || etype == RECV => {
                    *s.msgs
                        .entry((rec.icomm, rec.rank, icomm, rank, tag, etype == SEND))
                        .or_default() += 1;
                }
                _ => {}
            }
        }
        s.table = reader.comm_table().map_err(|e| Error::in_file(path, e))?;
        Ok(s)
    }
}

/// An MPI nodes file (docs/formats.md §5): hosts with slot counts.
pub fn read_nodes(path: &Path) -> Result<Vec<(String, u32)>> {
    let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
    let text = integrador_lines::read_to_string_bounded(file, 16 << 20)
        .map_err(|e| Error::in_file(path, format!("MPI nodes file: {e}")))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (host, n) = match line.split_once(':') {
            Some((h, n)) => (h.trim(), n.trim().parse::<u32>().ok().filter(|&n| n > 0)),
            None => (line, Some(1)),
        };
        let Some(n) = n.filter(|_| !host.is_empty() && !host.contains(char::is_whitespace)) else {
            return Err(Error::in_file(
                path,
                format!(
                    "line {}: expected `host` or `host:N` (N ≥ 1 ranks), found `{line}`",
                    i + 1
                ),
            ));
        };
        out.push((host.to_string(), n));
    }
    if out.is_empty() {
        return Err(Error::in_file(path, "no host in the MPI nodes file"));
    }
    Ok(out)
}

/// The host of world rank `rank` under the nodes-file rule: slots in line
/// order, wrapping around.
pub fn host_of_rank(nodes: &[(String, u32)], rank: u32) -> Option<&str> {
    let total: u64 = nodes.iter().map(|(_, n)| u64::from(*n)).sum();
    if total == 0 {
        return None;
    }
    let mut r = u64::from(rank) % total;
    for (h, n) in nodes {
        if r < u64::from(*n) {
            return Some(h);
        }
        r -= u64::from(*n);
    }
    None
}

/// One rank, placed.
struct Rank {
    lane: usize,
    host: String,
    container: ContainerId,
    /// Wall clock = MPE time + offset (ns).
    offset: i64,
    clock: ClockMap,
}

impl Rank {
    fn time(&self, mpe_ns: i64) -> i64 {
        self.clock.map(mpe_ns.saturating_add(self.offset))
    }
}

/// Where an event goes: its rank's lane, the record's offset, its time.
#[derive(Clone, Copy)]
struct At {
    lane: usize,
    pos: u64,
    time: i64,
}

/// Per-rank queues that hand the [`Timeline`] events in time order. A
/// merged log is sorted on MPE time, so each rank's events come in order
/// on its own placed clock, but ranks placed by different anchors
/// interleave out of order: merging the ranks here keeps the timeline's
/// reorder heap for what is really out of order (an unmerged log), which
/// it still sorts or refuses.
#[derive(Default)]
struct Lanes {
    lanes: Vec<VecDeque<(i64, u64, u64, Op)>>,
    heads: BinaryHeap<Reverse<(i64, u64, usize)>>,
    seq: u64,
}

impl Lanes {
    fn stage(&mut self, out: &mut Timeline, at: At, op: Op) -> Result<()> {
        let At { lane, pos, time } = at;
        if self.lanes.len() <= lane {
            self.lanes.resize_with(lane + 1, VecDeque::new);
        }
        let Some(q) = self.lanes.get_mut(lane) else {
            return out.push(pos, time, op);
        };
        if q.back().is_some_and(|b| time < b.0) {
            return out.push(pos, time, op);
        }
        if q.is_empty() {
            self.heads.push(Reverse((time, self.seq, lane)));
        }
        q.push_back((time, self.seq, pos, op));
        self.seq += 1;
        Ok(())
    }

    /// `n` pops of a state row.
    fn pops(
        &mut self,
        out: &mut Timeline,
        at: At,
        container: ContainerId,
        ty: TypeId,
        n: usize,
    ) -> Result<()> {
        for _ in 0..n {
            self.stage(out, at, Op::PopState { container, ty })?;
        }
        Ok(())
    }

    /// Hands over every event up to `upto` (all with `None`), earliest
    /// first, ties in file order.
    fn release(&mut self, out: &mut Timeline, upto: Option<i64>) -> Result<()> {
        while let Some(&Reverse((t, _, lane))) = self.heads.peek() {
            if upto.is_some_and(|u| t > u) {
                break;
            }
            self.heads.pop();
            let Some(q) = self.lanes.get_mut(lane) else {
                continue;
            };
            let Some((time, _, pos, op)) = q.pop_front() else {
                continue;
            };
            if let Some(next) = q.front() {
                self.heads.push(Reverse((next.0, next.1, lane)));
            }
            out.push(pos, time, op)?;
        }
        Ok(())
    }
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

/// A (sender, receiver, tag) channel.
struct Chan {
    id: u32,
    matched: u64,
    sends: u64,
    recvs: u64,
    send_times: VecDeque<i64>,
    recv_times: VecDeque<i64>,
    link: Option<(ContainerId, TypeId, ValueId)>,
}

/// The state and event types of one container type, and their values.
struct Kinds {
    state_ty: TypeId,
    event_ty: TypeId,
    executing: ValueId,
    state_values: Vec<ValueId>,
    event_values: HashMap<i32, ValueId>,
}

impl Kinds {
    fn new(
        reg: &mut Registry,
        ty: TypeId,
        mpi: &crate::hierarchy::MpiConfig,
        scan: &Scan,
    ) -> Kinds {
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

/// Converts an MPE log.
pub struct MpiSource {
    path: PathBuf,
    reader: Reader,
    scan: Scan,
    ranks: BTreeMap<i32, Rank>,
    rows: HashMap<(i32, i32), Row>,
    chans: HashMap<(i32, i32, i32), Chan>,
    kinds: Vec<Kinds>,
    /// Each rank's latest MPE time so far (ns), and how far back the next
    /// may step.
    last_mpe: HashMap<i32, i64>,
    window: i64,
    link_types: HashMap<(Option<ContainerId>, TypeId, TypeId), (TypeId, ValueId)>,
    messages: MessageStats,
    lanes: Lanes,
    /// No event placed later can be earlier than its MPE time plus this.
    low_shift: i64,
    unmatched_ends: u64,
    leftover_starts: u64,
    crossed: u64,
    unknown_partner: u64,
}

impl MpiSource {
    /// Scans `path` and places its ranks; `clock_of` gives a host's clock.
    pub fn open(
        path: &Path,
        setup: MpiSetup,
        reg: &mut Registry,
        clock_of: &mut dyn FnMut(&str) -> Option<ClockMap>,
    ) -> Result<Converted<MpiSource>> {
        let process_ty =
            reg.required_level(Role::Process, &format!("{}: MPI traces", path.display()))?;
        let mut reader = Reader::open(path)?;
        let scan = Scan::run(&mut reader, path)?;
        let nodes = setup.nodes.map(read_nodes).transpose()?;

        // Every world rank that logged an event; the preamble says how many
        // there are, so a rank beyond that is a damaged record, not a rank
        // to place (with --mpi-start it would become a phantom row).
        let size = match &reader {
            Reader::Clog2(r) => r.preamble().int("max_comm_world_size"),
            Reader::Legacy(_) => None,
        };
        let mut world: BTreeSet<i32> = BTreeSet::new();
        let mut firsts: Vec<_> = scan.first_at.iter().collect();
        firsts.sort_by_key(|(_, &at)| at);
        for (&(icomm, rank), &at) in firsts {
            let w = scan.wrank(icomm, rank);
            if let Some(size) = size.filter(|&n| n > 0 && (w < 0 || i64::from(w) >= n)) {
                return Err(Error::in_file(
                    path,
                    format!("byte {at}: rank {w} is outside the log's {size} ranks (max_comm_world_size): the record is damaged"),
                ));
            }
            world.insert(w);
        }

        // The anchors, found by name.
        let anchor_id = scan
            .events
            .iter()
            .filter(|(_, (name, _))| name == ANCHOR_NAME)
            .map(|(&id, _)| id)
            .min();
        let mut anchors: BTreeMap<i32, (i64, i64, u32)> = BTreeMap::new();
        if let Some(id) = anchor_id {
            let mut found: Vec<_> = scan
                .cargo_first
                .iter()
                .filter(|((etype, _, _), _)| *etype == id)
                .collect();
            found.sort_by_key(|(_, (_, _, offset))| *offset);
            for ((_, icomm, rank), (time, bytes, offset)) in found {
                let wrank = scan.wrank(*icomm, *rank);
                let bad = |what: &str| {
                    Error::in_file(
                        path,
                        format!("byte {offset}: {ANCHOR_NAME} event of rank {wrank}: {what}"),
                    )
                };
                let text = cargo_string(bytes)
                    .and_then(|t| std::str::from_utf8(t).ok())
                    .ok_or_else(|| bad("cargo is not MPE `s`-packed text"))?;
                let mut words = text.split_ascii_whitespace();
                let (Some(epoch), Some(pid), None) = (words.next(), words.next(), words.next())
                else {
                    return Err(bad(&format!(
                        "cargo `{text}` is not `<epoch_seconds>.<microseconds> <pid>`"
                    )));
                };
                let epoch = parse_epoch_ns(epoch.as_bytes())
                    .ok_or_else(|| bad(&format!("`{epoch}` is not epoch seconds")))?;
                let pid: u32 = pid
                    .parse()
                    .map_err(|_| bad(&format!("`{pid}` is not a pid")))?;
                let mpe = seconds_to_ns(*time)
                    .ok_or_else(|| bad("its time is not a finite number of seconds"))?;
                anchors.entry(wrank).or_insert((epoch, mpe, pid));
            }
        }

        let mpi = reg.hierarchy.mpi.clone();
        let mut ranks = BTreeMap::new();
        let mut notes = Vec::new();
        let mut by_host: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for &w in &world {
            let host = match (&nodes, u32::try_from(w)) {
                (Some(nodes), Ok(r)) => host_of_rank(nodes, r).map(str::to_string),
                _ => None,
            }
            .or_else(|| scan.processor.get(&w).map(|(_, p)| p.clone()))
            .or_else(|| {
                let (icomm, _) = scan.processor.get(&w)?;
                scan.table
                    .iter()
                    .find(|e| e.local_id == *icomm)
                    .map(|e| e.gcomm.processor.clone())
            })
            .filter(|h| !h.is_empty())
            .ok_or_else(|| {
                // A missing option is a usage problem (README, "Exit status"); a nodes
                // file given but too short is a problem of that input.
                let what = format!(
                    "{}: rank {w}: no host: the log records no processor name for it",
                    path.display()
                );
                match setup.nodes {
                    None => Error::usage(format!("{what}; give the MPI nodes file (-mpinodes)")),
                    Some(n) => Error::input(format!(
                        "{what}, and the MPI nodes file {} places no rank {w}",
                        n.display()
                    )),
                }
            })?;
            let machine = reg.machine(&host, None);
            let (offset, container) = match anchors.get(&w) {
                Some(&(epoch, mpe, pid)) => {
                    let c = reg.process(machine, pid).unwrap_or(machine);
                    reg.rename(c, &format!("{pid} rank {w}"));
                    by_host.entry(host.clone()).or_default().push(epoch - mpe);
                    (epoch - mpe, c)
                }
                None => {
                    let Some(start) = setup.start else {
                        return Err(Error::usage(format!(
                            "{}: rank {w} has no {ANCHOR_NAME} event (docs/formats.md §5), so its wall-clock start is unknown: give --mpi-start <epoch seconds> or `start` in the hierarchy's [mpi] section",
                            path.display()
                        )));
                    };
                    notes.push(format!(
                        "rank {w} on {host}: no anchor; placed by the given start {}",
                        crate::time::seconds(start)
                    ));
                    (
                        start,
                        reg.named_child(machine, process_ty, &format!("rank {w}")),
                    )
                }
            };
            let clock = clock_of(&host).unwrap_or(ClockMap::Identity);
            ranks.insert(
                w,
                Rank {
                    lane: ranks.len(),
                    host,
                    container,
                    offset,
                    clock,
                },
            );
        }
        let mut rank_notes = Vec::new();
        for (w, (epoch, mpe, pid)) in &anchors {
            if let Some(r) = ranks.get(w) {
                rank_notes.push(format!(
                    "rank {w} on {}: pid {pid}, anchor {} at MPE time {} s, offset {}",
                    r.host,
                    crate::time::seconds(*epoch),
                    crate::time::seconds(*mpe),
                    crate::time::seconds(epoch - mpe)
                ));
            }
        }
        let all: Vec<i64> = by_host.values().flatten().copied().collect();
        if let (Some(lo), Some(hi)) = (all.iter().min(), all.iter().max()) {
            notes.insert(
                0,
                format!(
                    "anchors: {} rank(s) on {} host(s), offsets {} to {} (spread {})",
                    all.len(),
                    by_host.len(),
                    crate::time::seconds(*lo),
                    crate::time::seconds(*hi),
                    crate::time::format_duration(hi - lo)
                ),
            );
        }
        for (host, offsets) in by_host.iter().filter(|(_, o)| o.len() > 1) {
            let lo = offsets.iter().min().copied().unwrap_or(0);
            let hi = offsets.iter().max().copied().unwrap_or(0);
            notes.push(format!(
                "anchors on {host}: {} ranks, offsets spread {}",
                offsets.len(),
                crate::time::format_duration(hi - lo)
            ));
        }
        notes.extend(rank_notes);

        // Rows, and how many events each will see.
        let thread_ty = reg.level_type(Role::Thread);
        let mut rows: HashMap<(i32, i32), Row> = HashMap::new();
        let mut row_keys: Vec<_> = scan.row_events.iter().collect();
        row_keys.sort();
        for (&(icomm, rank, thread), &n) in row_keys {
            let w = scan.wrank(icomm, rank);
            let Some(r) = ranks.get(&w) else { continue };
            let (container, kind) = match (thread, thread_ty) {
                (0, _) | (_, None) => (r.container, 0),
                (t, Some(ty)) => (
                    reg.named_child(r.container, ty, &format!("mpe thread {t}")),
                    1,
                ),
            };
            let row = rows.entry((w, thread)).or_insert(Row {
                container,
                kind,
                stack: Vec::new(),
                left: 0,
                started: false,
            });
            row.left += n;
        }

        // How far apart the ranks' placements are: the merged file is
        // sorted on MPE time, so the reorder window must cover that spread.
        let mut shift = (i64::MAX, i64::MIN);
        for (&(icomm, rank), &(first, last)) in &scan.rank_span {
            let Some(r) = ranks.get(&scan.wrank(icomm, rank)) else {
                continue;
            };
            for t in [first, last] {
                if let Some(ns) = seconds_to_ns(t) {
                    let d = r.time(ns) - ns;
                    shift = (shift.0.min(d), shift.1.max(d));
                }
            }
        }
        let spread = if shift.0 <= shift.1 {
            shift.1 - shift.0
        } else {
            0
        };

        // Channels, in a fixed order so link keys are deterministic.
        let mut counts: BTreeMap<(i32, i32, i32), (u64, u64)> = BTreeMap::new();
        for (&(hicomm, hrank, micomm, mrank, tag, send), &n) in &scan.msgs {
            let me = scan.wrank(hicomm, hrank);
            let partner = scan.wrank(micomm, mrank);
            let key = if send {
                (me, partner, tag)
            } else {
                (partner, me, tag)
            };
            let c = counts.entry(key).or_default();
            if send {
                c.0 += n;
            } else {
                c.1 += n;
            }
        }
        let mut messages = MessageStats::default();
        let mut chans = HashMap::new();
        for (&(src, dst, tag), &(sends, recvs)) in &counts {
            let matched = sends.min(recvs);
            messages.matched += matched;
            if sends > matched {
                messages.unmatched_sends += sends - matched;
                messages.unmatched.push(format!(
                    "{src}->{dst} tag {tag}: {} send(s) without a receive",
                    sends - matched
                ));
            }
            if recvs > matched {
                messages.unmatched_recvs += recvs - matched;
                messages.unmatched.push(format!(
                    "{src}->{dst} tag {tag}: {} receive(s) without a send",
                    recvs - matched
                ));
            }
            chans.insert(
                (src, dst, tag),
                Chan {
                    id: reg.link_channel(),
                    matched,
                    sends: 0,
                    recvs: 0,
                    send_times: VecDeque::new(),
                    recv_times: VecDeque::new(),
                    link: None,
                },
            );
        }

        // A state or event type belongs to one container type: MPE threads
        // on Thread containers get the Thread type's own.
        let mut kinds = vec![Kinds::new(reg, process_ty, &mpi, &scan)];
        if let Some(ty) = thread_ty.filter(|_| rows.values().any(|r| r.kind == 1)) {
            kinds.push(Kinds::new(reg, ty, &mpi, &scan));
        }

        let hosts: BTreeSet<&str> = ranks.values().map(|r| r.host.as_str()).collect();
        let stats = SourceStats {
            kind: "mpi",
            path: path.to_path_buf(),
            clock_host: Some(hosts.into_iter().collect::<Vec<_>>().join(",")),
            clock: None,
            notes,
            ..SourceStats::default()
        };
        let reader = Reader::open(path)?;
        let converter = MpiSource {
            path: path.to_path_buf(),
            reader,
            scan,
            ranks,
            rows,
            chans,
            kinds,
            last_mpe: HashMap::new(),
            window: setup.window,
            link_types: HashMap::new(),
            messages,
            lanes: Lanes::default(),
            low_shift: if shift.0 <= shift.1 { shift.0 } else { 0 },
            unmatched_ends: 0,
            leftover_starts: 0,
            crossed: 0,
            unknown_partner: 0,
        };
        Ok(Converted::new(
            converter,
            Timeline::binary(setup.window.saturating_add(spread), stats),
        ))
    }

    fn event_value(&mut self, reg: &mut Registry, kind: usize, etype: i32) -> ValueId {
        let Some(k) = self.kinds.get_mut(kind) else {
            return ValueId(0);
        };
        if let Some(&v) = k.event_values.get(&etype) {
            return v;
        }
        let (name, color) = self
            .scan
            .events
            .get(&etype)
            .cloned()
            .unwrap_or_else(|| (format!("event {etype}"), String::new()));
        let d = display_of(&reg.hierarchy.mpi.states, &name, &color);
        let v = reg.value_of(k.event_ty, &name, &d);
        k.event_values.insert(etype, v);
        v
    }

    fn link(
        &mut self,
        reg: &mut Registry,
        from: ContainerId,
        to: ContainerId,
    ) -> (ContainerId, TypeId, ValueId) {
        let anc = reg.common_ancestor(from, to);
        let (fty, tty) = (reg.container(from).ty, reg.container(to).ty);
        let (ty, value) = match self.link_types.get(&(anc, fty, tty)) {
            Some(&x) => x,
            None => {
                let name = reg.hierarchy.mpi.link_name.clone();
                let ty = reg.link_type(anc.map(|c| reg.container(c).ty), fty, tty, &name);
                let value = reg.value_of(ty, "message", &Display::default());
                self.link_types.insert((anc, fty, tty), (ty, value));
                (ty, value)
            }
        };
        (anc.unwrap_or(ContainerId::ROOT), ty, value)
    }

    fn message(
        &mut self,
        reg: &mut Registry,
        out: &mut Timeline,
        rec: &Record,
        me: i32,
        time: i64,
    ) -> Result<()> {
        let Body::Msg {
            etype,
            icomm,
            rank,
            tag,
            size,
        } = rec.body
        else {
            return Ok(());
        };
        let partner = self.scan.wrank(icomm, rank);
        let send = etype == SEND;
        let (src, dst) = if send { (me, partner) } else { (partner, me) };
        let (Some(s), Some(d)) = (self.ranks.get(&src), self.ranks.get(&dst)) else {
            self.unknown_partner += 1;
            return Ok(());
        };
        let (from, to) = (s.container, d.container);
        let Some(cached) = self.chans.get(&(src, dst, tag)).map(|c| c.link) else {
            return Ok(());
        };
        let link = match cached {
            Some(l) => l,
            None => self.link(reg, from, to),
        };
        let Some(chan) = self.chans.get_mut(&(src, dst, tag)) else {
            return Ok(());
        };
        chan.link = Some(link);
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
        let at = At {
            lane: self.ranks.get(&me).map_or(0, |r| r.lane),
            pos: rec.offset,
            time,
        };
        self.lanes.stage(out, at, op)
    }

    fn finish(&mut self, out: &mut Timeline) {
        for row in self.rows.values() {
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

fn display_of(over: &HashMap<String, Display>, name: &str, color: &str) -> Display {
    let mut d = over.get(name).cloned().unwrap_or_default();
    if d.color.is_none() {
        d.color = crate::color::paje_color(color);
    }
    d
}

impl Converter for MpiSource {
    fn pull(&mut self, reg: &mut Registry, out: &mut Timeline) -> Result<bool> {
        let Some(rec) = self
            .reader
            .next()
            .map_err(|e| Error::in_file(&self.path, e))?
        else {
            self.lanes.release(out, None)?;
            self.finish(out);
            return Ok(false);
        };
        let etype = match rec.body {
            Body::Bare { etype } | Body::Cargo { etype, .. } => Some(etype),
            Body::Msg { .. } | Body::Coll { .. } => None,
            _ => return Ok(true),
        };
        let me = self.scan.wrank(rec.icomm, rec.rank);
        let Some(rank) = self.ranks.get(&me) else {
            return Ok(true);
        };
        let Some(mpe) = seconds_to_ns(rec.time) else {
            return Err(Error::in_file(
                &self.path,
                format!(
                    "byte {}: time {} is not a finite number of seconds",
                    rec.offset, rec.time
                ),
            ));
        };
        let time = rank.time(mpe);
        let at = At {
            lane: rank.lane,
            pos: rec.offset,
            time,
        };
        // A rank's records are in time order in an MPE log: one far ahead
        // of the next is damage, not something to sort (it would be drawn
        // after the rank's end).
        let last = self.last_mpe.entry(me).or_insert(i64::MIN);
        if mpe < last.saturating_sub(self.window) {
            return Err(Error::in_file(
                &self.path,
                format!(
                    "byte {}: rank {me}'s time goes back from {} s to {} s, more than the reorder window ({}): the log is damaged",
                    rec.offset,
                    *last as f64 / 1e9,
                    rec.time,
                    crate::time::format_duration(self.window)
                ),
            ));
        }
        *last = (*last).max(mpe);
        let Some(row) = self.rows.get_mut(&(me, rec.thread)) else {
            return Ok(true);
        };
        let Some(kinds) = self.kinds.get(row.kind) else {
            return Ok(true);
        };
        let (state_ty, executing, event_ty, kind) =
            (kinds.state_ty, kinds.executing, kinds.event_ty, row.kind);
        let container = row.container;
        row.left = row.left.saturating_sub(1);
        let last = row.left == 0;
        if !row.started {
            row.started = true;
            self.lanes.stage(
                out,
                at,
                Op::SetState {
                    container,
                    ty: state_ty,
                    value: executing,
                },
            )?;
        }
        match etype.map(|e| (e, self.scan.state_of_etype.get(&e).copied())) {
            Some((_, Some((state, true)))) => {
                row.stack.push(state);
                self.lanes.stage(
                    out,
                    at,
                    Op::PushState {
                        container,
                        ty: state_ty,
                        value: kinds.state_values.get(state).copied().unwrap_or(executing),
                    },
                )?;
            }
            Some((_, Some((state, false)))) => match row.stack.iter().rposition(|&s| s == state) {
                None => self.unmatched_ends += 1,
                Some(depth) => {
                    // Pajé only pops the innermost state: a state that ends
                    // under others is closed by popping down to it and
                    // pushing the others back.
                    let above: Vec<usize> = row.stack.drain(depth..).skip(1).collect();
                    if !above.is_empty() {
                        self.crossed += 1;
                    }
                    self.lanes
                        .pops(out, at, container, state_ty, above.len() + 1)?;
                    for s in above {
                        row.stack.push(s);
                        self.lanes.stage(
                            out,
                            at,
                            Op::PushState {
                                container,
                                ty: state_ty,
                                value: kinds.state_values.get(s).copied().unwrap_or(executing),
                            },
                        )?;
                    }
                }
            },
            Some((e, None)) => {
                let ty = event_ty;
                let value = self.event_value(reg, kind, e);
                self.lanes.stage(
                    out,
                    at,
                    Op::NewEvent {
                        container,
                        ty,
                        value,
                    },
                )?;
            }
            None => self.message(reg, out, &rec, me, time)?,
        }
        // The row's last event: the rank is done, pop everything, the
        // base "executing" too.
        if last {
            if let Some(row) = self.rows.get_mut(&(me, rec.thread)) {
                let open = row.stack.len();
                self.leftover_starts += open as u64;
                row.stack.clear();
                row.started = false;
                let container = row.container;
                self.lanes.pops(out, at, container, state_ty, open + 1)?;
            }
        }
        self.lanes
            .release(out, Some(mpe.saturating_add(self.low_shift)))?;
        Ok(true)
    }
}

/// `-mpi`: MPE logs, one source per log, hosts from `-mpinodes`.
pub struct MpiKind;

impl super::SourceKind for MpiKind {
    fn option(&self) -> &'static str {
        "-mpi"
    }

    fn list(&mut self, cfg: &crate::cli::Config) -> Result<Vec<PathBuf>> {
        super::refuse_directories("-mpi", &cfg.mpi, "*.clog2")?;
        let mut files = cfg.mpi.clone();
        files.extend(cfg.mpinodes.iter().cloned());
        Ok(files)
    }

    fn open(&mut self, cx: &mut super::OpenCx<'_>) -> Result<()> {
        for path in &cx.cfg.mpi {
            let setup = MpiSetup {
                nodes: cx.cfg.mpinodes.as_deref(),
                start: cx.cfg.mpi_start.or(cx.reg.hierarchy.mpi.start),
                window: cx.cfg.reorder_window,
            };
            let source = MpiSource::open(path, setup, cx.reg, cx.clock_of)?;
            cx.sources.push(Box::new(source));
        }
        Ok(())
    }
}
