//! The run's clocks, one owner: the sync file, the clocks estimated from
//! the messages (`--sync-from-messages`, a first pass over the message
//! sources), the lookup of a host's map that each source's lanes ask for
//! ([`Lookup`], with the record of every host asked), and what the
//! messages say of the clocks at the end. `run.rs`, the report and the
//! first pass reach clocks through here; only the timeline applies a map.

use crate::cli::Config;
use crate::clock::{ClockMap, SyncFit, SyncTable};
use crate::clockfit::apply::{first_pass, End, Outcome};
use crate::clockfit::Estimates;
use crate::convert::SourceKind;
use crate::error::{Error, Result};
use crate::hierarchy::Hierarchy;
use crate::identity::{HostIdentity, KeyIndex};
use crate::source::SourceStats;
use std::io;
use std::path::{Path, PathBuf};

/// A host whose clock a source asked for, and what the sync file said.
#[derive(Debug, Clone)]
pub struct ClockUse {
    /// Host name as the source gave it.
    pub host: String,
    /// Its name in the sync file, its map and the lines (or messages)
    /// it was computed from, if it has one.
    pub map: Option<(String, ClockMap, usize)>,
    /// The map was estimated from the messages (`--sync-from-messages`).
    pub from_messages: bool,
    /// How far the map may be off, where something says (three sync
    /// lines or more, the messages' band).
    pub band: Option<i64>,
    /// A drift the sync lines gave but within their scatter, not applied:
    /// (ppm, how far it moves the clock across the lines).
    pub dropped: Option<(f64, i64)>,
    /// The sync measurements that bound its line, (local, reference).
    pub points: Vec<(i64, i64)>,
}

/// The clocks the sources ask for: each host's map from the sync file,
/// and a record of every host asked, each machine once whatever names it
/// was asked by (node01, node01.cluster.example).
pub struct Lookup<'a> {
    sync: Option<&'a SyncTable>,
    /// The estimates from the messages, for the hosts `sync` lacks.
    estimated: Option<&'a SyncTable>,
    identity: HostIdentity,
    asked: KeyIndex,
    /// Every host asked, in order.
    pub used: Vec<ClockUse>,
}

impl<'a> Lookup<'a> {
    /// Clocks from `sync`, then from `estimated`, hosts matched by
    /// `identity`.
    pub fn new(
        sync: Option<&'a SyncTable>,
        estimated: Option<&'a SyncTable>,
        identity: HostIdentity,
    ) -> Lookup<'a> {
        Lookup {
            sync,
            estimated,
            identity,
            asked: KeyIndex::default(),
            used: Vec::new(),
        }
    }

    /// The map of `host`'s clock, if the sync file (or, failing it, the
    /// estimates) has it.
    pub fn of(&mut self, host: &str) -> Option<ClockMap> {
        if self.sync.is_none() && self.estimated.is_none() {
            return None;
        }
        let ids = &self.identity;
        let from_sync = self.sync.and_then(|s| s.lookup(host, ids));
        let from_messages = from_sync.is_none();
        let found = from_sync.or_else(|| self.estimated.and_then(|e| e.lookup(host, ids)));
        let known = ids
            .keys(host)
            .flat_map(|k| self.asked.get(k))
            .any(|&i| ids.same(host, &self.used[i as usize].host));
        if !known {
            let at = self.used.len() as u32;
            for k in ids.keys(host) {
                self.asked.insert(k.into(), at);
            }
            let table = if from_messages {
                self.estimated
            } else {
                self.sync
            };
            let clock = found.and_then(|(_, name, _)| table?.host_clock(name));
            let map = found.map(|(m, name, lines)| (name.to_string(), m, lines));
            self.used.push(ClockUse {
                host: host.to_string(),
                from_messages: from_messages && map.is_some(),
                map,
                band: clock.and_then(|c| c.band),
                dropped: clock.and_then(|c| c.dropped),
                points: clock.map(|c| c.points.clone()).unwrap_or_default(),
            });
        }
        found.map(|(m, _, _)| m)
    }
}

/// The clocks of one run.
pub struct RunClocks {
    /// The sync file, read, and its path.
    sync: Option<(SyncTable, PathBuf)>,
    /// The first pass's estimates, when the clocks are corrected from the
    /// messages, and their table.
    applied: Option<(Estimates, SyncTable)>,
}

fn open_sync(cfg: &Config, hierarchy: &Hierarchy) -> Result<Option<(SyncTable, PathBuf)>> {
    let Some(path) = &cfg.sync else {
        return Ok(None);
    };
    let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
    let fit = if cfg.sync_fit {
        SyncFit::LeastSquares
    } else {
        hierarchy.sync_fit
    };
    let table = SyncTable::from_reader(path, io::BufReader::new(file), fit)?;
    Ok(Some((table, path.clone())))
}

impl RunClocks {
    /// Reads the sync file and, with `--sync-from-messages`, runs the
    /// first pass over the message sources for the hosts it leaves out.
    pub fn load(
        cfg: &Config,
        kinds: &mut [Box<dyn SourceKind>],
        hierarchy: &Hierarchy,
    ) -> Result<RunClocks> {
        let sync = open_sync(cfg, hierarchy)?;
        let applied = match cfg.sync_from_messages {
            true => {
                let est = first_pass(cfg, kinds, hierarchy, sync.as_ref().map(|(t, _)| t))?;
                let table = est.table();
                Some((est, table))
            }
            false => None,
        };
        Ok(RunClocks { sync, applied })
    }

    /// A plan's clocks in one of its tasks: the sync file, and the
    /// estimates the plan's first pass made from every message of the
    /// run (a task's messages alone would give others).
    pub fn seeded(
        cfg: &Config,
        hierarchy: &Hierarchy,
        estimates: Option<Estimates>,
    ) -> Result<RunClocks> {
        let sync = open_sync(cfg, hierarchy)?;
        let applied = estimates.map(|e| {
            let table = e.table();
            (e, table)
        });
        Ok(RunClocks { sync, applied })
    }

    /// The clocks estimated from the messages, if they were.
    pub fn estimates(&self) -> Option<&Estimates> {
        self.applied.as_ref().map(|(e, _)| e)
    }

    /// The lookup the sources' lanes ask, hosts matched by `identity`.
    pub fn lookup(&self, identity: HostIdentity) -> Lookup<'_> {
        Lookup::new(
            self.sync.as_ref().map(|(t, _)| t),
            self.applied.as_ref().map(|(_, t)| t),
            identity,
        )
    }

    /// The sync file and its path.
    pub fn sync(&self) -> Option<(&SyncTable, &Path)> {
        self.sync.as_ref().map(|(t, p)| (t, p.as_path()))
    }

    /// Whether the clocks were corrected from the messages.
    pub fn from_messages(&self) -> bool {
        self.applied.is_some()
    }

    /// What the messages of the finished sources say of the clocks: the
    /// estimates and their bands, a sync file outside them, the sync file
    /// written (`--write-sync`).
    pub fn end(
        &self,
        cfg: &Config,
        sources: &[SourceStats],
        ids: &HostIdentity,
        origin: i64,
    ) -> Result<Outcome> {
        End {
            cfg,
            sources,
            sync: self.sync(),
            applied: self.applied.as_ref().map(|(e, _)| e),
            ids,
            origin,
        }
        .finish()
    }
}
