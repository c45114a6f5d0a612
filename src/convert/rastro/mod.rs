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

use crate::error::{Error, Result};
use crate::eventmap::{EventDef, EventMap, Level, LinkEnd};
use crate::hierarchy::{Display, Role};
use crate::model::{ContainerId, LinkKey, Op, TypeId, ValueId};
use crate::registry::Registry;
use crate::source::{Clock, Converted, Converter, Lane, MessageStats, SourceStats, Timeline};
use crate::timeline::Stamp;
use integrador_rastro::{End, RstReader};
// foldhash: link keys are looked up per record (SipHash was 9% of a
// libRastro run); the seed is random per run, like std's.
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod config;
mod defs;
mod open;
mod scan;
mod walk;

pub use config::DeckConfig;

use defs::Defs;
use scan::{Key, Keys};
use walk::{end_note, After, FileInfo, Item, Records, Slim};

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
    fn new(
        (container, ty, value): Drawn3,
        (from, to): (ContainerId, ContainerId),
        key: LinkKey,
        size: i64,
    ) -> Drawn {
        Drawn {
            container,
            ty,
            value,
            from,
            to,
            key,
            size,
        }
    }

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

/// A resolved state row, event row and container of one file.
#[derive(Clone, Copy)]
struct Row {
    container: ContainerId,
    state_ty: TypeId,
    event_ty: TypeId,
    depth: usize,
}

/// A link's holder, type and value.
type Drawn3 = (ContainerId, TypeId, ValueId);

/// Converts the libRastro files of a run.
pub struct RastroSource {
    records: Records,
    conv: Conv,
    /// The map's events, lent to the conversion per record apart from
    /// its own fields (an `Arc` cloned per record was two locked
    /// instructions, each waiting for every store before it).
    defs: Defs,
}

/// What the conversion knows, apart from the records it reads (which it
/// reads in place).
struct Conv {
    map: Arc<EventMap>,
    files: Vec<FileInfo>,
    rows: Vec<Row>,
    /// Rank → its Process container.
    rank_container: BTreeMap<u64, ContainerId>,
    /// (rank, thread index) → file index.
    file_of: HashMap<(u64, u64), usize>,
    bad: HashSet<Key>,
    partner: HashMap<Key, usize>,
    keys: Keys,
    channels: HashMap<Key, u32>,
    /// What the registry said of each (link, value id ([`Defs::values`]),
    /// from, to): asked for every message end.
    link_types: HashMap<(usize, u32, ContainerId, ContainerId), Drawn3>,
    /// The state value of an event type on a row type: its map names
    /// one per event type (`set` or `push`), looked up without hashing
    /// the name per record.
    state_values: HashMap<(TypeId, u16), ValueId>,
    in_flight: HashMap<Key, (i64, usize)>,
    /// The link ends of the record being converted (kept for its capacity).
    found: Vec<(Option<Key>, u64)>,
    here_seq: u64,
    messages: MessageStats,
    /// Each file's host index in the messages' clock constraints.
    hix: Vec<u32>,
    unknown_ids: BTreeMap<u16, u64>,
    missing_fields: u64,
    empty_pops: u64,
    ends: Vec<String>,
}

impl Conv {
    fn state_value(&mut self, reg: &mut Registry, ty: TypeId, event: u16, name: &str) -> ValueId {
        if let Some(&v) = self.state_values.get(&(ty, event)) {
            return v;
        }
        let d = self.map.values.get(name).cloned().unwrap_or_default();
        let v = reg.value_of(ty, name, &d);
        self.state_values.insert((ty, event), v);
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

    /// The link type of `end` (whose value has the id `value`) from
    /// `from` to `to`.
    fn link_type(
        &mut self,
        reg: &mut Registry,
        end: &LinkEnd,
        value: u32,
        (from, to): (ContainerId, ContainerId),
    ) -> Drawn3 {
        // Per link end: the display is only read when the link is new.
        const PLAIN: Display = Display {
            name: None,
            color: None,
        };
        let map = &self.map;
        *self
            .link_types
            .entry((end.link, value, from, to))
            .or_insert_with(|| {
                let name = map.links.get(end.link).map_or("", |l| l.name.as_str());
                let display = map.values.get(&end.value).unwrap_or(&PLAIN);
                reg.link(from, to, name, &end.value, display)
            })
    }

    fn link_key(&mut self, reg: &mut Registry, k: Key) -> LinkKey {
        let (chan, seq) = k.split();
        let channel = *self
            .channels
            .entry(chan)
            .or_insert_with(|| reg.link_channel());
        LinkKey { channel, seq }
    }

    /// The link ends of a record: `values` are its event's value ids
    /// ([`Defs::values`]).
    #[allow(clippy::too_many_arguments)]
    fn links(
        &mut self,
        reg: &mut Registry,
        out: &mut Timeline,
        i: usize,
        (def, values): (&EventDef, [u32; 3]),
        rec: &Slim,
        at: Stamp,
    ) -> Result<()> {
        // Two records in three have no link end: tested before anything.
        let [start_value, end_value, here_value] = values;
        if def.link_start.is_none() && def.link_end.is_none() && def.link_here.is_none() {
            return Ok(());
        }
        let Some(f) = self.files.get(i) else {
            return Ok(());
        };
        let file = (i, f.id1, f.id2);
        if let Some(end) = &def.link_start {
            self.link_ends(reg, out, file, (end, true, start_value), rec, at)?;
        }
        if let Some(end) = &def.link_end {
            self.link_ends(reg, out, file, (end, false, end_value), rec, at)?;
        }
        if let Some(end) = &def.link_here {
            self.link_here(reg, out, file, (end, here_value), rec, at)?;
        }
        Ok(())
    }

    /// The start (`start`) or end of a link: one per key the record
    /// stands for.
    #[allow(clippy::too_many_arguments)]
    fn link_ends(
        &mut self,
        reg: &mut Registry,
        out: &mut Timeline,
        (i, id1, id2): (usize, u64, u64),
        (end, start, value_id): (&LinkEnd, bool, u32),
        rec: &Slim,
        at: Stamp,
    ) -> Result<()> {
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
            let ty = self.link_type(reg, end, value_id, (from, to));
            let key = self.link_key(reg, k);
            self.causality(k, start, at.mapped, i);
            let size = end
                .size
                .and_then(|e| e.eval(rec, id1, id2, peer))
                .map_or(0, |s| s as i64);
            let link = Drawn::new(ty, (from, to), key, size);
            out.push_stamped(at, link.op(start))?;
        }
        self.found = found;
        Ok(())
    }

    /// A zero-length link from the partner to this file's thread.
    fn link_here(
        &mut self,
        reg: &mut Registry,
        out: &mut Timeline,
        (i, id1, id2): (usize, u64, u64),
        (end, value_id): (&LinkEnd, u32),
        rec: &Slim,
        at: Stamp,
    ) -> Result<()> {
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
        let ty = self.link_type(reg, end, value_id, (from, to));
        let k = Key {
            link: end.link as u16,
            len: 1,
            v: [self.here_seq, 0, 0, 0],
        };
        self.here_seq += 1;
        let key = self.link_key(reg, k);
        let link = Drawn::new(ty, (from, to), key, 0);
        out.push_stamped(at, link.op(true))?;
        out.push_stamped(at, link.op(false))?;
        self.messages.matched += 1;
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
                if let (Some(&hs), Some(&hr)) = (self.hix.get(fs), self.hix.get(fr)) {
                    self.messages.clocks.observe(hs, ts, hr, tr);
                }
                let (files, map) = (&self.files, &self.map);
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
        (i, at): (usize, Stamp),
        event: u16,
        def: &EventDef,
    ) -> Result<()> {
        let Some(&row) = self.rows.get(i) else {
            return Ok(());
        };
        let (container, ty) = (row.container, row.state_ty);
        let mut depth = row.depth;
        if let Some(v) = &def.set {
            let value = self.state_value(reg, ty, event, v);
            out.push_stamped(
                at,
                Op::SetState {
                    container,
                    ty,
                    value,
                },
            )?;
            depth = 1;
        } else if let Some(v) = &def.push {
            let value = self.state_value(reg, ty, event, v);
            out.push_stamped(
                at,
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
                out.push_stamped(at, Op::PopState { container, ty })?;
                depth -= 1;
            }
        } else if def.end {
            for _ in 0..depth {
                out.push_stamped(at, Op::PopState { container, ty })?;
            }
            depth = 0;
        }
        if let Some(r) = self.rows.get_mut(i) {
            r.depth = depth;
        }
        if let Some(v) = &def.event {
            let value = self.state_value(reg, row.event_ty, event, v);
            out.push_stamped(
                at,
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
    fn file_end(&mut self, out: &mut Timeline, i: usize, end: &End, last_raw: i64) -> Result<()> {
        let Some(f) = self.files.get(i) else {
            return Ok(());
        };
        if let Some(note) = end_note(&f.path, end) {
            self.ends.push(note);
        }
        let (pos, raw) = match end {
            End::Stop {
                offset, time_ns, ..
            } => (*offset, (*time_ns).max(last_raw)),
            End::NoStop { offset } | End::Truncated { offset, .. } => (*offset, last_raw),
            End::Open => return Ok(()),
        };
        let lane = f.lane;
        let Some(row) = self.rows.get_mut(i) else {
            return Ok(());
        };
        let (container, ty, depth) = (row.container, row.state_ty, row.depth);
        row.depth = 0;
        if depth > 0 {
            for _ in 0..depth {
                out.push_on(lane, pos, raw, Op::PopState { container, ty })?;
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
        // A file cut short is damage: named in the warnings that `-q`
        // prints too.
        warnings += self.ends.len() as u64;
        out.stats.damage.append(&mut self.ends);
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
        match self.records.next()? {
            None => {
                self.conv.finish(out);
                Ok(false)
            }
            Some(item) => {
                self.conv.step(reg, out, item, &self.defs)?;
                Ok(true)
            }
        }
    }
}

impl Conv {
    /// Converts one step of the run: a record, then what follows it in
    /// its file.
    fn step(
        &mut self,
        reg: &mut Registry,
        out: &mut Timeline,
        item: &Item,
        defs: &Defs,
    ) -> Result<()> {
        let i = item.file;
        let Some(lane) = self.files.get(i).map(|f| f.lane) else {
            return Ok(());
        };
        // Every file's start was taken when the run was opened.
        if item.has_rec {
            let rec = &item.rec;
            // The run is merged on corrected time: when its files are in
            // order, nothing after this record comes earlier.
            // Its time is mapped once for all it gives.
            let at = out.stamp(lane, rec.offset, rec.time_ns);
            out.reached_stamp(at);
            match defs.find(rec.ty) {
                None => *self.unknown_ids.entry(rec.ty).or_default() += 1,
                Some((d, def)) => {
                    self.state(reg, out, (i, at), rec.ty, def)?;
                    let values = defs.values(d);
                    self.links(reg, out, i, (def, values), rec, at)?;
                }
            }
        }
        match &item.after {
            After::Next(raw) => out.expect(lane, *raw),
            After::Ended(end, last_raw) => {
                self.file_end(out, i, end, *last_raw)?;
                out.close(lane);
            }
        }
        Ok(())
    }
}

/// `-deck`: libRastro traces, one source for all files (merged on
/// corrected time), decoded by the event map of `--deck-map` or the
/// hierarchy's `[deck] map`.
#[derive(Default)]
pub struct RastroKind {
    files: Vec<PathBuf>,
    map: Option<PathBuf>,
    config: DeckConfig,
}

impl super::SourceKind for RastroKind {
    fn option(&self) -> &'static str {
        "-deck"
    }

    fn section(&self) -> Option<&'static str> {
        Some("deck")
    }

    fn configure(&mut self, text: &crate::hierarchy::Text<'_>) -> Result<Vec<super::Named>> {
        self.config = DeckConfig::read(text)?;
        let map = self.config.map.as_ref().filter(|m| m.is_file());
        Ok(map
            .map(|m| ("the hierarchy's [deck] map", m.clone()))
            .into_iter()
            .collect())
    }

    fn args(&self) -> Vec<clap::Arg> {
        const H: &str = "libRastro (DECK, akypuera)";
        vec![
            super::files_arg(
                "deck",
                "FILES",
                "libRastro traces of DECK programs (rastro-<node>-<thread>.rst); also -deck",
                H,
            ),
            super::value_arg(
                "deck-map",
                "FILE",
                "libRastro event map: a TOML file (schema: sources/maps/README.md) or a built-in map name, `deck` (the default) or `akypuera`",
                H,
            )
            .value_parser(clap::value_parser!(PathBuf)),
        ]
    }

    fn thesis_options(&self) -> &'static [&'static str] {
        &["deck"]
    }

    fn take(&mut self, m: &clap::ArgMatches) -> Result<()> {
        self.files = crate::cli::expand("-deck", &super::words(m, "deck"))?;
        self.map = m.get_one::<PathBuf>("deck-map").cloned();
        super::needs_inputs(
            !self.files.is_empty(),
            self.map.is_some(),
            "--deck-map describes libRastro traces: give them with -deck",
        )
    }

    fn carries_messages(&self) -> bool {
        true
    }

    fn has_inputs(&self) -> bool {
        !self.files.is_empty()
    }

    fn named_files(&self) -> Vec<super::Named> {
        self.files.iter().map(|p| ("-deck", p.clone())).collect()
    }

    fn list(&mut self) -> Result<Vec<PathBuf>> {
        super::refuse_directories("-deck", &self.files, "*.rst")?;
        let mut files = self.files.clone();
        // A map given as a file is an input too.
        files.extend(self.map.iter().filter(|m| m.is_file()).cloned());
        Ok(files)
    }

    fn open(&mut self, cx: &mut super::OpenCx<'_>) -> Result<()> {
        if self.files.is_empty() {
            return Ok(());
        }
        let choice = self.map.as_deref().or(self.config.map.as_deref());
        let mut map = crate::eventmap::select(choice)?;
        for (k, d) in &self.config.values {
            map.values.insert(k.clone(), d.clone());
        }
        let source =
            RastroSource::open(&self.files, map, cx.cfg.reorder_window, cx.reg, cx.clock_of)?;
        cx.sources.push(Box::new(source));
        Ok(())
    }
}
