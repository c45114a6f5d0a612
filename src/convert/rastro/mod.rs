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

mod chans;
mod config;
mod defs;
mod links;
mod open;
mod scan;
mod walk;

pub use config::DeckConfig;

use chans::Chans;
use defs::Defs;
use links::Drawn3;
use scan::Key;
use walk::{end_note, After, FileInfo, Item, Records, Slim};

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
    /// Rank → its Process container (looked up at every link end).
    rank_container: Ranks,
    /// (rank, thread index) → file index.
    file_of: HashMap<(u64, u64), usize>,
    /// Link channels: FIFO counters, pass 1's unmatched keys.
    chans: Chans,
    partner: HashMap<(u32, u64), usize>,
    /// The registry's channel of each key but its last value.
    channels: HashMap<Key, u32>,
    /// What the registry said of each (link, value id ([`Defs::values`]),
    /// from, to): asked for every message end.
    link_types: HashMap<(usize, u32, ContainerId, ContainerId), Drawn3>,
    /// The state value of an event type on a row type: its map names
    /// one per event type (`set` or `push`), looked up without hashing
    /// the name per record. By event type id, then the few row types
    /// (a hash of the pair was 60 instructions a state record).
    state_values: Vec<Vec<(TypeId, ValueId)>>,
    /// By (channel, sequence) ([`Chans`]).
    in_flight: HashMap<(u32, u64), (i64, usize)>,
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

/// Rank → container: by index for ranks below a bound (MPI ranks count
/// from 0; two hash lookups were a tenth of a message end), hashed past
/// it (a damaged or odd numbering).
#[derive(Default)]
struct Ranks {
    dense: Vec<Option<ContainerId>>,
    sparse: HashMap<u64, ContainerId>,
}

impl Ranks {
    /// Ranks below this many times the files', or 1024, are by index.
    fn new(all: impl IntoIterator<Item = (u64, ContainerId)>, files: usize) -> Ranks {
        let bound = (4 * files).max(1024) as u64;
        let mut r = Ranks::default();
        for (rank, c) in all {
            if rank < bound {
                let i = rank as usize;
                if r.dense.len() <= i {
                    r.dense.resize(i + 1, None);
                }
                if let Some(slot) = r.dense.get_mut(i) {
                    *slot = Some(c);
                }
            } else {
                r.sparse.insert(rank, c);
            }
        }
        r
    }

    #[inline]
    fn get(&self, rank: u64) -> Option<ContainerId> {
        match usize::try_from(rank).ok().and_then(|i| self.dense.get(i)) {
            Some(c) => *c,
            None => self.sparse.get(&rank).copied(),
        }
    }
}

impl Conv {
    #[inline]
    fn state_value(&mut self, reg: &mut Registry, ty: TypeId, event: u16, name: &str) -> ValueId {
        let found = self
            .state_values
            .get(usize::from(event))
            .and_then(|tys| tys.iter().find_map(|&(t, v)| (t == ty).then_some(v)));
        match found {
            Some(v) => v,
            None => self.new_state_value(reg, ty, event, name),
        }
    }

    /// [`Conv::state_value`] the first time: the registry asked.
    #[inline(never)]
    fn new_state_value(
        &mut self,
        reg: &mut Registry,
        ty: TypeId,
        event: u16,
        name: &str,
    ) -> ValueId {
        let d = self.map.values.get(name).cloned().unwrap_or_default();
        let v = reg.value_of(ty, name, &d);
        let e = usize::from(event);
        if self.state_values.len() <= e {
            self.state_values.resize_with(e + 1, Vec::new);
        }
        if let Some(tys) = self.state_values.get_mut(e) {
            tys.push((ty, v));
        }
        v
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
            // Its time is mapped once for all it gives, by the merge.
            let at = Stamp {
                lane,
                pos: rec.offset,
                local: rec.time_ns,
                mapped: item.mapped,
            };
            // The merge's lane maps are the timeline's (taken at open).
            debug_assert_eq!(at.mapped, out.map(lane, rec.time_ns));
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
            After::Ended(e) => {
                let (end, last_raw) = &**e;
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
        self.files = crate::convert::expand("-deck", &super::words(m, "deck"))?;
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
        if self.files.is_empty() || !cx.wants(&self.files) {
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
