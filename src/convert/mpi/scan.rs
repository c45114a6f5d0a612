//! Pass 1 over an MPE log: what the file says late or in aggregate.

use super::{COMM_SELF_CREATE, RECV, SEND};
use crate::error::{Error, Result};
use crate::prefetch::{Next, Prefetch};
use foldhash::HashMap;
use integrador_clog::{Body, CommEntry, MpeReader, Record};
use std::collections::BTreeMap;
use std::io::BufReader;
use std::path::Path;

/// An MPE log of either format, read from an input.
pub(super) type Reader = MpeReader<BufReader<crate::input::Reader>>;

/// The MPE log format its first bytes say `path` is.
fn format(path: &Path) -> Result<integrador_clog::Format> {
    let head = crate::input::head(path, 64).map_err(|e| Error::in_file(path, e))?;
    integrador_clog::detect(&head).ok_or_else(|| {
        Error::in_file(
            path,
            "not an MPE log: expected `CLOG-02.44` (CLOG2) or an MPE-1 CLOG record at byte 0",
        )
    })
}

/// Opens `path` as the MPE log its first bytes say it is.
pub(super) fn open(path: &Path) -> Result<Reader> {
    open_as(path, format(path)?)
}

fn open_as(path: &Path, format: integrador_clog::Format) -> Result<Reader> {
    let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
    let buf = BufReader::with_capacity(crate::input::buffer_size(path), file);
    MpeReader::new(format, buf).map_err(|e| Error::in_file(path, e))
}

/// A log's records for the second pass: read here, or decoded on a thread
/// of their own when a core is spare (crate::prefetch).
pub(super) enum Records {
    Here(Reader),
    Thread(Prefetch<Option<Record>, ()>),
}

impl Records {
    pub(super) fn open(path: &Path) -> Result<Records> {
        let format = format(path)?;
        if !(crate::input::threadable(path) && crate::prefetch::claim()) {
            return open_as(path, format).map(Records::Here);
        }
        let (p, q) = (path.to_path_buf(), path.to_path_buf());
        let size = crate::input::buffer_size(path);
        Ok(Records::Thread(Prefetch::spawn(
            move || {
                let f = crate::input::open_on_thread(&p).map_err(|e| Error::in_file(&p, e))?;
                MpeReader::new(format, BufReader::with_capacity(size, f))
                    .map_err(|e| Error::in_file(&p, e))
            },
            move |r, slot| {
                *slot = r.next_record().map_err(|e| Error::in_file(&q, e))?;
                Ok(slot.is_some())
            },
            |_| (),
        )))
    }

    pub(super) fn next(&mut self, path: &Path) -> Result<Option<Record>> {
        match self {
            Records::Here(r) => r.next_record().map_err(|e| Error::in_file(path, e)),
            Records::Thread(p) => match p.next_record()? {
                Next::Record(slot) => Ok(slot.take()),
                Next::End(()) => Ok(None),
            },
        }
    }
}

/// A state definition.
#[derive(Debug, Clone)]
pub(super) struct StateDef {
    pub(super) name: String,
    pub(super) color: String,
}

pub(super) type FirstCargo = (f64, [u8; 32], u64);

/// What pass 1 learns.
#[derive(Default)]
pub(super) struct Scan {
    pub(super) comm: HashMap<(i32, i32), i32>,
    pub(super) processor: BTreeMap<i32, (i32, String)>,
    pub(super) table: Vec<CommEntry>,
    pub(super) states: Vec<StateDef>,
    pub(super) state_of_etype: HashMap<i32, (usize, bool)>,
    pub(super) events: HashMap<i32, (String, String)>,
    /// First cargo event per (etype, icomm, rank): time, cargo, offset.
    pub(super) cargo_first: HashMap<(i32, i32, i32), FirstCargo>,
    pub(super) row_events: HashMap<(i32, i32, i32), u64>,
    /// The first record of each (icomm, rank), for messages.
    pub(super) first_at: HashMap<(i32, i32), u64>,
    pub(super) rank_span: HashMap<(i32, i32), (f64, f64)>,
    pub(super) msgs: HashMap<(i32, i32, i32, i32, i32, bool), u64>,
}

impl Scan {
    pub(super) fn wrank(&self, icomm: i32, rank: i32) -> i32 {
        // The map has every (icomm, rank) a CLOG2 file uses; MPE-1 CLOG
        // has world ranks only.
        self.comm.get(&(icomm, rank)).copied().unwrap_or(rank)
    }

    pub(super) fn run(reader: &mut Reader, path: &Path) -> Result<Scan> {
        let mut s = Scan::default();
        while let Some(rec) = reader.next_record().map_err(|e| Error::in_file(path, e))? {
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
