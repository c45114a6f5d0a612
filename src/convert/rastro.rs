//! libRastro traces (`-deck`) → per-thread state rows, point events and
//! links, as an event map says ([`crate::eventmap`]; DECK by default,
//! thesis appendix C.1).
//!
//! All the files of a run are one source, merged record by record on
//! corrected time (ties: file order, then record order), each file placed
//! by its own host's clock map: libRastro's reader shares one "first line"
//! flag between files and truncates offsets to whole seconds; here every
//! file gets its own host's line pair, in exact integer nanoseconds.
//!
//! Two streaming passes over the files, like the MPI source:
//! 1. identity and matching: each file's OS pid and tid (from the map's
//!    `process` and `thread` events), and every link key's balance. A key
//!    leaves the table when both ends have been seen, so the table holds
//!    the links in flight; the keys left at the end are the unmatched
//!    ones. The end of a link whose start cannot name it (a join starts at
//!    the joined thread's "done") is remembered per key.
//! 2. the conversion. Each link starts at a record that knows its key, so
//!    links are written as they stream; only matched keys are drawn, so
//!    every link written has both ends.

use crate::clock::ClockMap;
use crate::error::{Error, Result};
use crate::eventmap::{EventDef, EventMap, Level, LinkEnd};
use crate::hierarchy::{Display, Role};
use crate::model::{ContainerId, LinkKey, Op, TypeId, ValueId};
use crate::registry::Registry;
use crate::source::{Converted, Converter, MessageStats, SourceStats, Timeline};
use integrador_rastro::{End, Record, RstReader};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A link instance: the link, its key values, and the FIFO counter last
/// when the map asks for one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    link: u16,
    len: u8,
    v: [u64; 4],
}

impl Key {
    /// The channel part (all but the last value) and the sequence number.
    fn split(&self) -> (Key, u64) {
        let n = usize::from(self.len);
        let mut c = *self;
        let seq = n
            .checked_sub(1)
            .and_then(|i| self.v.get(i).copied())
            .unwrap_or(0);
        c.len = self.len.saturating_sub(1);
        if let Some(x) = n.checked_sub(1).and_then(|i| c.v.get_mut(i)) {
            *x = 0;
        }
        (c, seq)
    }
}

/// One input file and its reader for the current pass.
struct Input {
    path: PathBuf,
    reader: RstReader<crate::input::Reader>,
    rec: Record,
    /// Corrected time of `rec`.
    time: i64,
    /// Raw time of the previous record, to catch a clock going back.
    last_raw: i64,
    host: String,
    id1: u64,
    id2: u64,
    clock: ClockMap,
}

impl Input {
    fn open(path: &Path) -> Result<(RstReader<crate::input::Reader>, integrador_rastro::Init)> {
        let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
        let reader = RstReader::new(file).map_err(|e| Error::in_file(path, e))?;
        let init = reader.init().clone();
        Ok((reader, init))
    }
}

/// The files merged on corrected time.
struct Walk {
    files: Vec<Input>,
    heap: BinaryHeap<Reverse<(i64, usize)>>,
    window: i64,
}

impl Walk {
    fn new(
        paths: &[PathBuf],
        window: i64,
        clock_of: &mut dyn FnMut(&str) -> ClockMap,
    ) -> Result<Walk> {
        let mut files = Vec::with_capacity(paths.len());
        for path in paths {
            let (reader, init) = Input::open(path)?;
            let clock = clock_of(&init.host);
            files.push(Input {
                path: path.clone(),
                reader,
                rec: Record::default(),
                time: 0,
                last_raw: i64::MIN,
                host: init.host,
                id1: init.id1,
                id2: init.id2,
                clock,
            });
        }
        let mut w = Walk {
            files,
            heap: BinaryHeap::new(),
            window,
        };
        for i in 0..w.files.len() {
            w.advance(i)?;
        }
        Ok(w)
    }

    /// Reads file `i`'s next record and queues it.
    fn advance(&mut self, i: usize) -> Result<()> {
        let window = self.window;
        let Some(f) = self.files.get_mut(i) else {
            return Ok(());
        };
        if !f
            .reader
            .next_into(&mut f.rec)
            .map_err(|e| Error::in_file(&f.path, e))?
        {
            return Ok(());
        }
        let raw = f.rec.time_ns;
        if f.last_raw != i64::MIN && raw < f.last_raw.saturating_sub(window) {
            return Err(Error::in_file(
                &f.path,
                format!(
                    "byte {}: time goes back by {} ns, more than the reorder window ({} ns)",
                    f.rec.offset,
                    f.last_raw - raw,
                    window
                ),
            ));
        }
        f.last_raw = f.last_raw.max(raw);
        f.time = f.clock.map(raw);
        self.heap.push(Reverse((f.time, i)));
        Ok(())
    }

    /// The file holding the next record in time order.
    fn next(&mut self) -> Option<usize> {
        self.heap.pop().map(|Reverse((_, i))| i)
    }
}

/// The keys one link end stands for (one per peer with `each`).
struct Keys {
    fifo: HashMap<(Key, bool), u64>,
}

impl Keys {
    /// Calls `f(key, peer)` for every instance of `end` at `rec`; `None`
    /// for the instances whose fields are missing.
    fn each(
        &mut self,
        end: &LinkEnd,
        start: bool,
        rec: &Record,
        id1: u64,
        id2: u64,
        mut f: impl FnMut(Option<Key>, u64),
    ) {
        // Peers 0..n but the file's own rank with `each`; one pass without.
        let (n, skip) = match end.each {
            None => (1, None),
            Some(e) => match e.eval(rec, id1, id2, 0) {
                // A communicator larger than this bound is corruption.
                Some(n) if n <= 1 << 20 => (n, Some(id1)),
                _ => {
                    f(None, 0);
                    return;
                }
            },
        };
        for peer in (0..n).filter(|&p| Some(p) != skip) {
            let mut k = Key {
                link: end.link as u16,
                len: 0,
                v: [0; 4],
            };
            let mut ok = true;
            for (slot, e) in k.v.iter_mut().zip(&end.key) {
                match e.eval(rec, id1, id2, peer) {
                    Some(x) => *slot = x,
                    None => ok = false,
                }
            }
            k.len = end.key.len() as u8;
            if !ok {
                f(None, peer);
                continue;
            }
            if end.fifo {
                let c = self.fifo.entry((k, start)).or_default();
                if let Some(slot) = k.v.get_mut(usize::from(k.len)) {
                    *slot = *c;
                }
                *c += 1;
                k.len += 1;
            }
            f(Some(k), peer);
        }
    }
}

/// How a file ended, when it is worth a line in the summary.
fn end_note(f: &Input) -> Option<String> {
    let name = f.path.display();
    match f.reader.end() {
        End::Stop { trailing, .. } if *trailing > 0 => Some(format!(
            "{name}: {trailing} byte(s) after the STOP record ignored"
        )),
        End::NoStop { offset } => Some(format!(
            "{name}: no STOP record at byte {offset} (the writer did not finish); read up to there"
        )),
        End::Truncated { offset, what } => {
            Some(format!("{name}: byte {offset}: {what}; read up to there"))
        }
        _ => None,
    }
}

/// What pass 1 learns.
#[derive(Default)]
struct Scan {
    /// OS pid per rank.
    pid: BTreeMap<u64, u32>,
    /// OS tid per file.
    tid: HashMap<usize, u32>,
    /// Links in flight: balance (+ starts − ends) and the first end's file.
    /// Also the value id of the first end (see `value_ids` in `run`).
    open: HashMap<Key, (i64, usize, u32)>,
    /// The end's file of links whose start does not name it.
    partner: HashMap<Key, usize>,
}

impl Scan {
    fn run(walk: &mut Walk, map: &EventMap) -> Result<(Scan, HashSet<Key>)> {
        let mut s = Scan::default();
        // Links some of whose starts do not name their end.
        let mut needs_partner = vec![false; map.links.len()];
        for def in map.events.values() {
            if let Some(e) = def.link_start.as_ref().filter(|e| e.partner.is_none()) {
                if let Some(x) = needs_partner.get_mut(e.link) {
                    *x = true;
                }
            }
        }
        let mut keys = Keys {
            fifo: HashMap::new(),
        };
        // Which ends pass 2 can place: a link is drawn only if both can,
        // and only if both halves carry the same value (pj_dump rejects a
        // link whose halves differ). A damaged record may name a rank or
        // thread that no file is, or be read as another event of the map.
        let ranks: HashSet<u64> = walk.files.iter().map(|f| f.id1).collect();
        let threads: HashSet<(u64, u64)> = walk.files.iter().map(|f| (f.id1, f.id2)).collect();
        let mut unplaceable: HashSet<Key> = HashSet::new();
        // Link values by a small id, kept in the `open` entry of a key.
        let mut value_ids: HashMap<&str, u32> = HashMap::new();
        for def in map.events.values() {
            for end in [&def.link_start, &def.link_end].into_iter().flatten() {
                let n = value_ids.len() as u32;
                value_ids.entry(end.value.as_str()).or_insert(n);
            }
        }
        while let Some(i) = walk.next() {
            let Some(f) = walk.files.get(i) else { break };
            if let Some(def) = map.events.get(&f.rec.ty) {
                let (rec, id1, id2) = (&f.rec, f.id1, f.id2);
                if let Some(p) = def.process.and_then(|e| e.eval(rec, id1, id2, 0)) {
                    s.pid.entry(id1).or_insert(p as u32);
                }
                if let Some(t) = def.thread.and_then(|e| e.eval(rec, id1, id2, 0)) {
                    s.tid.entry(i).or_insert(t as u32);
                }
                for (end, start) in [(&def.link_start, true), (&def.link_end, false)] {
                    let Some(end) = end else { continue };
                    let (open, partner) = (&mut s.open, &mut s.partner);
                    let level = map.links.get(end.link).map_or(Level::Rank, |l| l.level);
                    let unplaceable = &mut unplaceable;
                    let value = value_ids
                        .get(end.value.as_str())
                        .copied()
                        .unwrap_or(u32::MAX);
                    keys.each(end, start, rec, id1, id2, |k, peer| {
                        let Some(k) = k else { return };
                        if let Some(e) = end.partner {
                            let placed = e.eval(rec, id1, id2, peer).is_some_and(|p| match level {
                                Level::Rank => ranks.contains(&p),
                                Level::Thread => threads.contains(&(id1, p)),
                            });
                            if !placed {
                                unplaceable.insert(k);
                            }
                        }
                        let e = open.entry(k).or_insert((0, i, value));
                        if e.2 != value {
                            unplaceable.insert(k);
                        }
                        e.0 += if start { 1 } else { -1 };
                        if e.0 == 0 {
                            // Both ends seen; the end's file is this one
                            // or the one that came first.
                            let end_file = if start { e.1 } else { i };
                            open.remove(&k);
                            if needs_partner.get(usize::from(k.link)) == Some(&true) {
                                partner.insert(k, end_file);
                            }
                        }
                    });
                }
            }
            walk.advance(i)?;
        }
        // What is still open never found its other end.
        let mut bad: HashSet<Key> = s.open.keys().copied().collect();
        bad.extend(unplaceable);
        s.open.clear();
        Ok((s, bad))
    }
}

/// A link being written: both its ends are known.
struct Drawn {
    container: ContainerId,
    ty: TypeId,
    value: ValueId,
    from: ContainerId,
    to: ContainerId,
    key: LinkKey,
    size: i64,
}

impl Drawn {
    fn op(&self, start: bool) -> Op {
        let (container, ty, value, key) = (self.container, self.ty, self.value, self.key);
        if start {
            Op::StartLink {
                container,
                ty,
                value,
                from: self.from,
                key,
                size: self.size,
                tag: 0,
            }
        } else {
            Op::EndLink {
                container,
                ty,
                value,
                to: self.to,
                key,
            }
        }
    }
}

/// Link types per (map link, holding container, start and end container
/// types), then per value.
type LinkTypeKey = (usize, Option<ContainerId>, TypeId, TypeId);

/// A resolved state row, event row and container of one file.
#[derive(Clone, Copy)]
struct Row {
    container: ContainerId,
    state_ty: TypeId,
    event_ty: TypeId,
    depth: usize,
}

/// Converts the libRastro files of a run.
pub struct RastroSource {
    map: Arc<EventMap>,
    walk: Walk,
    rows: Vec<Row>,
    /// Rank → its Process container.
    rank_container: BTreeMap<u64, ContainerId>,
    /// (rank, thread index) → file index.
    file_of: HashMap<(u64, u64), usize>,
    bad: HashSet<Key>,
    partner: HashMap<Key, usize>,
    keys: Keys,
    channels: HashMap<Key, u32>,
    link_types: HashMap<LinkTypeKey, HashMap<String, (ContainerId, TypeId, ValueId)>>,
    state_values: HashMap<TypeId, HashMap<String, ValueId>>,
    in_flight: HashMap<Key, (i64, usize)>,
    /// The link ends of the record being converted (kept for its capacity).
    found: Vec<(Option<Key>, u64)>,
    here_seq: u64,
    messages: MessageStats,
    unknown_ids: BTreeMap<u16, u64>,
    missing_fields: u64,
    empty_pops: u64,
    ends: Vec<String>,
}

impl RastroSource {
    /// Scans `paths`, places every file on its host's clock and resolves
    /// its containers.
    pub fn open(
        paths: &[PathBuf],
        map: EventMap,
        window: i64,
        reg: &mut Registry,
        clock_of: &mut dyn FnMut(&str) -> Option<ClockMap>,
    ) -> Result<Converted<RastroSource>> {
        let process_ty = reg.required_level(Role::Process, "libRastro traces")?;
        let thread_ty = reg.level_type(Role::Thread);
        let mut clocks: HashMap<String, ClockMap> = HashMap::new();
        let mut placed = |host: &str| -> ClockMap {
            *clocks
                .entry(host.to_string())
                .or_insert_with(|| clock_of(host).unwrap_or(ClockMap::Identity))
        };
        let mut walk = Walk::new(paths, window, &mut placed)?;
        let mut seen: HashMap<(u64, u64), usize> = HashMap::new();
        for (i, f) in walk.files.iter().enumerate() {
            if let Some(&j) = seen.get(&(f.id1, f.id2)) {
                let other = walk.files.get(j).map(|g| g.path.display().to_string());
                return Err(Error::in_file(
                    &f.path,
                    format!(
                        "ids ({}, {}) are also those of {}: each thread writes its own file",
                        f.id1,
                        f.id2,
                        other.unwrap_or_default()
                    ),
                ));
            }
            seen.insert((f.id1, f.id2), i);
        }
        let (scan, bad) = Scan::run(&mut walk, &map)?;
        // Pass 2 reads the files again from their start.
        let walk = Walk::new(paths, window, &mut placed)?;

        // Containers: each rank's Process (by pid when the map gives one),
        // each thread's container under it (by tid, so that the kernel's
        // view of the same thread lands in the same container).
        let mut rank_container = BTreeMap::new();
        let mut host_of_rank: BTreeMap<u64, String> = BTreeMap::new();
        for f in &walk.files {
            let h = host_of_rank.entry(f.id1).or_insert_with(|| f.host.clone());
            if f.id2 == 0 {
                *h = f.host.clone();
            }
        }
        for (&rank, host) in &host_of_rank {
            let machine = reg.machine(host, None);
            let c = match scan.pid.get(&rank) {
                Some(&pid) => {
                    let c = reg.process(machine, pid).unwrap_or(machine);
                    reg.rename(c, &format!("{pid} rank {rank}"));
                    c
                }
                None => reg.named_child(machine, process_ty, &format!("rank {rank}")),
            };
            rank_container.insert(rank, c);
        }
        let mut rows = Vec::with_capacity(walk.files.len());
        let mut state_tys: HashMap<TypeId, (TypeId, TypeId)> = HashMap::new();
        for (i, f) in walk.files.iter().enumerate() {
            let process = rank_container
                .get(&f.id1)
                .copied()
                .unwrap_or(ContainerId::ROOT);
            let pid = scan.pid.get(&f.id1).copied();
            let tid = scan.tid.get(&i).copied();
            let machine = reg.container(process).parent.unwrap_or(process);
            let container = match (pid, tid) {
                _ if f.id2 == 0 && tid.is_none_or(|t| Some(t) == pid) => process,
                (Some(p), Some(t)) if p == t => process,
                (Some(p), Some(t)) => {
                    let c = reg.thread(machine, p, t).unwrap_or(process);
                    reg.rename(c, &format!("{t} thread {}", f.id2));
                    c
                }
                _ => match thread_ty {
                    Some(ty) => reg.named_child(process, ty, &format!("thread {}", f.id2)),
                    None => reg.named_child(
                        machine,
                        process_ty,
                        &format!("rank {} thread {}", f.id1, f.id2),
                    ),
                },
            };
            let cty = reg.container(container).ty;
            let (state_ty, event_ty) = *state_tys.entry(cty).or_insert_with(|| {
                (
                    reg.state_type(cty, &map.state_name),
                    reg.event_type(cty, &map.event_name),
                )
            });
            rows.push(Row {
                container,
                state_ty,
                event_ty,
                depth: 0,
            });
        }
        let file_of = seen;
        let hosts: std::collections::BTreeSet<&str> =
            walk.files.iter().map(|f| f.host.as_str()).collect();
        let mut notes = vec![format!(
            "{} files, {} ranks on {} host(s), map {} ({})",
            walk.files.len(),
            rank_container.len(),
            hosts.len(),
            map.name,
            map.origin
        )];
        if scan.pid.len() < rank_container.len() {
            notes.push(format!(
                "{} rank(s) without an OS pid: their Process is named by rank",
                rank_container.len() - scan.pid.len()
            ));
        }
        let first = paths.first().cloned().unwrap_or_default();
        let stats = SourceStats {
            kind: "deck",
            path: first,
            more_files: paths.len().saturating_sub(1),
            // Each file is placed by its own host's clock.
            clock_host: Some(hosts.iter().copied().collect::<Vec<_>>().join(",")),
            notes,
            ..SourceStats::default()
        };
        // Files without a single event ended while being opened.
        let ends: Vec<String> = walk
            .files
            .iter()
            .filter(|f| *f.reader.end() != End::Open)
            .filter_map(end_note)
            .collect();
        let source = RastroSource {
            map: Arc::new(map),
            walk,
            rows,
            rank_container,
            file_of,
            bad,
            partner: scan.partner,
            keys: Keys {
                fifo: HashMap::new(),
            },
            channels: HashMap::new(),
            link_types: HashMap::new(),
            state_values: HashMap::new(),
            in_flight: HashMap::new(),
            found: Vec::new(),
            here_seq: 0,
            messages: MessageStats::default(),
            unknown_ids: BTreeMap::new(),
            missing_fields: 0,
            empty_pops: 0,
            ends,
        };
        Ok(Converted::new(source, Timeline::binary(window, stats)))
    }

    fn state_value(&mut self, reg: &mut Registry, ty: TypeId, name: &str) -> ValueId {
        if let Some(&v) = self.state_values.get(&ty).and_then(|m| m.get(name)) {
            return v;
        }
        let d = self.map.values.get(name).cloned().unwrap_or_default();
        let v = reg.value_of(ty, name, &d);
        self.state_values
            .entry(ty)
            .or_default()
            .insert(name.to_string(), v);
        v
    }

    /// The container of one end of a link: a rank's Process, or a thread
    /// of rank `rank`.
    fn endpoint(
        &self,
        level: Level,
        rank: u64,
        thread: Option<u64>,
        file: usize,
    ) -> Option<ContainerId> {
        match level {
            Level::Rank => self.rank_container.get(&rank).copied(),
            Level::Thread => {
                let f = match thread {
                    Some(t) => *self.file_of.get(&(rank, t))?,
                    None => file,
                };
                self.rows.get(f).map(|r| r.container)
            }
        }
    }

    fn level(&self, link: usize) -> Level {
        self.map.links.get(link).map_or(Level::Rank, |l| l.level)
    }

    /// The other end named by a map's `to`/`from` value: a rank, or a
    /// thread index of this file's rank.
    fn partner_endpoint(&self, level: Level, p: u64, id1: u64, file: usize) -> Option<ContainerId> {
        match level {
            Level::Rank => self.endpoint(level, p, None, file),
            Level::Thread => self.endpoint(level, id1, Some(p), file),
        }
    }

    fn link_type(
        &mut self,
        reg: &mut Registry,
        link: usize,
        from: ContainerId,
        to: ContainerId,
        value: &str,
    ) -> (ContainerId, TypeId, ValueId) {
        let anc = reg.common_ancestor(from, to);
        let (fty, tty) = (reg.container(from).ty, reg.container(to).ty);
        let k = (link, anc, fty, tty);
        if let Some(&x) = self.link_types.get(&k).and_then(|m| m.get(value)) {
            return x;
        }
        let name = self
            .map
            .links
            .get(link)
            .map(|l| l.name.clone())
            .unwrap_or_default();
        let ty = reg.link_type(anc.map(|c| reg.container(c).ty), fty, tty, &name);
        let d = self
            .map
            .values
            .get(value)
            .cloned()
            .unwrap_or_else(Display::default);
        let v = reg.value_of(ty, value, &d);
        let x = (anc.unwrap_or(ContainerId::ROOT), ty, v);
        self.link_types
            .entry(k)
            .or_default()
            .insert(value.to_string(), x);
        x
    }

    fn link_key(&mut self, reg: &mut Registry, k: Key) -> LinkKey {
        let (chan, seq) = k.split();
        let channel = *self
            .channels
            .entry(chan)
            .or_insert_with(|| reg.link_channel());
        LinkKey { channel, seq }
    }

    #[allow(clippy::too_many_arguments)]
    fn links(
        &mut self,
        reg: &mut Registry,
        out: &mut Timeline,
        i: usize,
        def: &EventDef,
        rec: &Record,
        time: i64,
    ) -> Result<()> {
        let Some(f) = self.walk.files.get(i) else {
            return Ok(());
        };
        let (id1, id2) = (f.id1, f.id2);
        let pos = rec.offset;
        for (end, start) in [(&def.link_start, true), (&def.link_end, false)] {
            let Some(end) = end else { continue };
            let level = self.level(end.link);
            let mut found = std::mem::take(&mut self.found);
            found.clear();
            self.keys
                .each(end, start, rec, id1, id2, |k, p| found.push((k, p)));
            for &(k, peer) in &found {
                let Some(k) = k else {
                    self.missing_fields += 1;
                    continue;
                };
                if self.bad.contains(&k) {
                    if start {
                        self.messages.unmatched_sends += 1;
                    } else {
                        self.messages.unmatched_recvs += 1;
                    }
                    continue;
                }
                let me = self.endpoint(level, id1, None, i);
                let other = match end.partner {
                    Some(e) => e
                        .eval(rec, id1, id2, peer)
                        .and_then(|p| self.partner_endpoint(level, p, id1, i)),
                    None => self
                        .partner
                        .get(&k)
                        .and_then(|&f| self.rows.get(f))
                        .map(|r| r.container),
                };
                let (Some(me), Some(other)) = (me, other) else {
                    self.missing_fields += 1;
                    continue;
                };
                let (from, to) = if start { (me, other) } else { (other, me) };
                let (container, ty, value) = self.link_type(reg, end.link, from, to, &end.value);
                let key = self.link_key(reg, k);
                self.causality(k, start, time, i);
                let size = end
                    .size
                    .and_then(|e| e.eval(rec, id1, id2, peer))
                    .map_or(0, |s| s as i64);
                let link = Drawn {
                    container,
                    ty,
                    value,
                    from,
                    to,
                    key,
                    size,
                };
                out.push(pos, time, link.op(start))?;
            }
            self.found = found;
        }
        if let Some(end) = &def.link_here {
            let level = self.level(end.link);
            // Both ends are known here, so the link ends at this very
            // thread, whatever the link's level says of the other end.
            let me = self.rows.get(i).map(|r| r.container);
            let other = end
                .partner
                .and_then(|e| e.eval(rec, id1, id2, 0))
                .and_then(|p| self.partner_endpoint(level, p, id1, i));
            let (Some(to), Some(from)) = (me, other) else {
                self.missing_fields += 1;
                return Ok(());
            };
            let (container, ty, value) = self.link_type(reg, end.link, from, to, &end.value);
            let k = Key {
                link: end.link as u16,
                len: 1,
                v: [self.here_seq, 0, 0, 0],
            };
            self.here_seq += 1;
            let key = self.link_key(reg, k);
            let link = Drawn {
                container,
                ty,
                value,
                from,
                to,
                key,
                size: 0,
            };
            out.push(pos, time, link.op(true))?;
            out.push(pos, time, link.op(false))?;
            self.messages.matched += 1;
        }
        Ok(())
    }

    /// Pairs the two ends of a drawn link to check that the receive is not
    /// before the send; the table holds links in flight only.
    fn causality(&mut self, k: Key, start: bool, time: i64, file: usize) {
        match self.in_flight.remove(&k) {
            None => {
                self.in_flight.insert(k, (time, file));
            }
            Some((t, other)) => {
                self.messages.matched += 1;
                let (ts, tr, fs, fr) = if start {
                    (time, t, file, other)
                } else {
                    (t, time, other, file)
                };
                let (files, map) = (&self.walk.files, &self.map);
                let host = |f: usize| files.get(f).map(|x| x.host.clone()).unwrap_or_default();
                self.messages.check_order(
                    ts,
                    tr,
                    || (host(fs), host(fr)),
                    || match (files.get(fs), files.get(fr)) {
                        (Some(a), Some(b)) => format!(
                            "{} {}.{} -> {}.{} (rank.thread)",
                            map.links
                                .get(usize::from(k.link))
                                .map_or("", |l| l.name.as_str()),
                            a.id1,
                            a.id2,
                            b.id1,
                            b.id2
                        ),
                        _ => String::new(),
                    },
                );
            }
        }
    }

    fn state(
        &mut self,
        reg: &mut Registry,
        out: &mut Timeline,
        i: usize,
        def: &EventDef,
        pos: u64,
        time: i64,
    ) -> Result<()> {
        let Some(&row) = self.rows.get(i) else {
            return Ok(());
        };
        let (container, ty) = (row.container, row.state_ty);
        let mut depth = row.depth;
        if let Some(v) = &def.set {
            let value = self.state_value(reg, ty, v);
            out.push(
                pos,
                time,
                Op::SetState {
                    container,
                    ty,
                    value,
                },
            )?;
            depth = 1;
        } else if let Some(v) = &def.push {
            let value = self.state_value(reg, ty, v);
            out.push(
                pos,
                time,
                Op::PushState {
                    container,
                    ty,
                    value,
                },
            )?;
            depth += 1;
        } else if def.pop {
            if depth == 0 {
                self.empty_pops += 1;
            } else {
                out.push(pos, time, Op::PopState { container, ty })?;
                depth -= 1;
            }
        } else if def.end {
            for _ in 0..depth {
                out.push(pos, time, Op::PopState { container, ty })?;
            }
            depth = 0;
        }
        if let Some(r) = self.rows.get_mut(i) {
            r.depth = depth;
        }
        if let Some(v) = &def.event {
            let value = self.state_value(reg, row.event_ty, v);
            out.push(
                pos,
                time,
                Op::NewEvent {
                    container,
                    ty: row.event_ty,
                    value,
                },
            )?;
        }
        Ok(())
    }

    /// A file has ended: close its row and note how it ended.
    fn file_end(&mut self, out: &mut Timeline, i: usize) -> Result<()> {
        let Some(f) = self.walk.files.get(i) else {
            return Ok(());
        };
        if let Some(note) = end_note(f) {
            self.ends.push(note);
        }
        let (pos, raw) = match f.reader.end() {
            End::Stop {
                offset, time_ns, ..
            } => (*offset, (*time_ns).max(f.last_raw)),
            End::NoStop { offset } | End::Truncated { offset, .. } => (*offset, f.last_raw),
            End::Open => return Ok(()),
        };
        let clock = f.clock;
        let Some(row) = self.rows.get_mut(i) else {
            return Ok(());
        };
        let (container, ty, depth) = (row.container, row.state_ty, row.depth);
        row.depth = 0;
        if depth > 0 {
            let time = clock.map(raw);
            for _ in 0..depth {
                out.push(pos, time, Op::PopState { container, ty })?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Timeline) {
        let mut notes = Vec::new();
        let mut warnings = 0;
        if !self.unknown_ids.is_empty() {
            let total: u64 = self.unknown_ids.values().sum();
            let list: Vec<String> = self
                .unknown_ids
                .iter()
                .take(8)
                .map(|(id, n)| format!("{id} ({n})"))
                .collect();
            notes.push(format!(
                "{total} record(s) with event ids the map does not define, ignored: {}",
                list.join(", ")
            ));
        }
        if self.missing_fields > 0 {
            notes.push(format!(
                "{} link end(s) skipped: a field the map names is missing or names no file's rank/thread",
                self.missing_fields
            ));
            warnings += self.missing_fields;
        }
        if self.empty_pops > 0 {
            notes.push(format!("{} state end(s) without a start", self.empty_pops));
            warnings += self.empty_pops;
        }
        warnings += self.ends.len() as u64;
        notes.append(&mut self.ends);
        let m = &self.messages;
        if m.unmatched_sends + m.unmatched_recvs > 0 {
            warnings += m.unmatched_sends + m.unmatched_recvs;
        }
        out.stats.warnings += warnings;
        out.stats.notes.extend(notes);
        out.stats.messages = Some(std::mem::take(&mut self.messages));
    }
}

impl Converter for RastroSource {
    fn pull(&mut self, reg: &mut Registry, out: &mut Timeline) -> Result<bool> {
        let Some(i) = self.walk.next() else {
            self.finish(out);
            return Ok(false);
        };
        let Some(f) = self.walk.files.get_mut(i) else {
            return Ok(false);
        };
        let rec = std::mem::take(&mut f.rec);
        let time = f.time;
        let map = Arc::clone(&self.map);
        match map.events.get(&rec.ty) {
            None => *self.unknown_ids.entry(rec.ty).or_default() += 1,
            Some(def) => {
                self.state(reg, out, i, def, rec.offset, time)?;
                self.links(reg, out, i, def, &rec, time)?;
            }
        }
        if let Some(f) = self.walk.files.get_mut(i) {
            f.rec = rec;
        }
        let before = self.walk.heap.len();
        self.walk.advance(i)?;
        if self.walk.heap.len() == before {
            self.file_end(out, i)?;
        }
        Ok(true)
    }
}

/// `-deck`: libRastro traces, one source for all files (merged on
/// corrected time), decoded by the event map of `--deck-map` or the
/// hierarchy's `[deck] map`.
pub struct RastroKind;

impl super::SourceKind for RastroKind {
    fn option(&self) -> &'static str {
        "-deck"
    }

    fn list(&mut self, cfg: &crate::cli::Config) -> Result<Vec<PathBuf>> {
        super::refuse_directories("-deck", &cfg.deck, "*.rst")?;
        let mut files = cfg.deck.clone();
        // A map given as a file is an input too.
        files.extend(cfg.deck_map.iter().filter(|m| m.is_file()).cloned());
        Ok(files)
    }

    fn open(&mut self, cx: &mut super::OpenCx<'_>) -> Result<()> {
        if cx.cfg.deck.is_empty() {
            return Ok(());
        }
        let choice = cx
            .cfg
            .deck_map
            .as_deref()
            .or(cx.reg.hierarchy.deck.map.as_deref());
        let mut map = crate::eventmap::select(choice)?;
        for (k, d) in &cx.reg.hierarchy.deck.values {
            map.values.insert(k.clone(), d.clone());
        }
        let source = RastroSource::open(
            &cx.cfg.deck,
            map,
            cx.cfg.reorder_window,
            cx.reg,
            cx.clock_of,
        )?;
        cx.sources.push(Box::new(source));
        Ok(())
    }
}
