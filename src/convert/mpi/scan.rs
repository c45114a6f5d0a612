//! Pass 1 over an MPE log: what the file says late or in aggregate.

use super::{COMM_SELF_CREATE, RECV, SEND};
use crate::error::{Error, Result};
use crate::prefetch::{Next, Prefetch};
use foldhash::HashMap;
use integrador_clog::{Body, CommEntry, Event, MpeReader, Preamble, Record};
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

fn open_as(path: &Path, format: integrador_clog::Format) -> Result<Reader> {
    let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
    let buf = BufReader::with_capacity(crate::input::buffer_size(path), file);
    MpeReader::new(format, buf).map_err(|e| Error::in_file(path, e))
}

/// What a log says after its records: the preamble (read first, kept
/// for the ranks' count) and the communicator table CLOG2 writes last.
#[derive(Default)]
pub(super) struct Tail {
    pub(super) preamble: Option<Preamble>,
    pub(super) table: Vec<CommEntry>,
}

/// What the end of `r` says, once its records are read.
fn tail_of<R: std::io::Read>(r: &mut MpeReader<R>, path: &Path) -> Result<Tail> {
    let table = r.comm_table().map_err(|e| Error::in_file(path, e))?;
    Ok(Tail {
        preamble: r.preamble().cloned(),
        table,
    })
}

enum Src {
    Here(Reader),
    Thread(Prefetch<Option<Record>, Option<Tail>>),
}

/// A log's records, for either pass: read here, or decoded on a thread of
/// their own when a core is spare (crate::prefetch). Only the first pass
/// takes the spare core (nothing is written yet). The second reads here
/// and leaves that core to the writer: a record is large and quick to
/// decode, and handing each across cores cost more than decoding it
/// (100 MB: 1.03 s decoded on a thread, 0.80 s here).
pub(super) struct Records {
    src: Src,
    /// Whether the end is read (the first pass).
    tail: bool,
    end: Option<Tail>,
}

impl Records {
    /// Opens `path`; with `tail`, its end is read too ([`Records::tail`]).
    pub(super) fn open(path: &Path, tail: bool) -> Result<Records> {
        let format = format(path)?;
        let src = if tail && crate::input::threadable(path) && crate::prefetch::claim() {
            let (p, q, e) = (path.to_path_buf(), path.to_path_buf(), path.to_path_buf());
            let size = crate::input::buffer_size(path);
            Src::Thread(Prefetch::spawn(
                move || {
                    let f = crate::input::open_on_thread(&p).map_err(|e| Error::in_file(&p, e))?;
                    MpeReader::new(format, BufReader::with_capacity(size, f))
                        .map_err(|e| Error::in_file(&p, e))
                },
                move |r, slot| {
                    *slot = r.next_record().map_err(|e| Error::in_file(&q, e))?;
                    Ok(slot.is_some())
                },
                move |r| tail.then(|| tail_of(r, &e)).transpose(),
            ))
        } else {
            Src::Here(open_as(path, format)?)
        };
        Ok(Records {
            src,
            tail,
            end: None,
        })
    }

    /// The next record; `None` at the end.
    pub(super) fn next(&mut self, path: &Path) -> Result<Option<Record>> {
        match &mut self.src {
            Src::Here(r) => {
                let rec = r.next_record().map_err(|e| Error::in_file(path, e))?;
                if rec.is_none() && self.tail && self.end.is_none() {
                    self.end = Some(tail_of(r, path)?);
                }
                Ok(rec)
            }
            Src::Thread(p) => match p.next_record()? {
                Next::Record(slot) => Ok(slot.take()),
                Next::End(tail) => {
                    self.end = self.end.take().or(tail);
                    Ok(None)
                }
            },
        }
    }

    /// The next record as the second pass reads it ([`Ev`]): a CLOG2
    /// log's read in place, without copying its body or allocating a
    /// definition's strings (the first pass has them).
    pub(super) fn next_event(&mut self, path: &Path) -> Result<Option<Ev>> {
        if let Src::Here(MpeReader::Clog2(r)) = &mut self.src {
            if !self.tail {
                let raw = r.next_raw().map_err(|e| Error::in_file(path, e))?;
                return Ok(raw.map(|raw| Ev::of(&raw, raw.event())));
            }
        }
        Ok(self.next(path)?.map(|rec| Ev::of_record(&rec)))
    }

    /// What came after the records, once [`next`](Self::next) said `None`
    /// (opened with `tail`).
    pub(super) fn tail(&mut self) -> Tail {
        self.end.take().unwrap_or_default()
    }
}

/// A record as the conversion reads it: where, when, whose, and the
/// fields of an event; small and `Copy`.
#[derive(Clone, Copy)]
pub(super) struct Ev {
    pub(super) offset: u64,
    pub(super) time: f64,
    pub(super) icomm: i32,
    pub(super) rank: i32,
    pub(super) thread: i32,
    pub(super) kind: EvKind,
}

/// What an [`Ev`] is.
#[derive(Clone, Copy)]
pub(super) enum EvKind {
    /// A bare or cargo event: a state's start or end, or a solo event.
    Plain { etype: i32 },
    /// A message end.
    Msg {
        etype: i32,
        icomm: i32,
        rank: i32,
        tag: i32,
        size: i32,
    },
    /// A collective: a row event with nothing to draw.
    Coll,
    /// Not an event (definitions, communicators, block ends...).
    Other,
}

impl Ev {
    fn of(raw: &integrador_clog::RawRecord<'_>, event: Option<Event<'_>>) -> Ev {
        let kind = match event {
            Some(Event::Bare { etype } | Event::Cargo { etype, .. }) => EvKind::Plain { etype },
            Some(Event::Msg {
                etype,
                icomm,
                rank,
                tag,
                size,
            }) => EvKind::Msg {
                etype,
                icomm,
                rank,
                tag,
                size,
            },
            Some(Event::Coll { .. }) => EvKind::Coll,
            None => EvKind::Other,
        };
        Ev {
            offset: raw.offset,
            time: raw.time,
            icomm: raw.icomm,
            rank: raw.rank,
            thread: raw.thread,
            kind,
        }
    }

    fn of_record(rec: &Record) -> Ev {
        let kind = match rec.body {
            Body::Bare { etype } | Body::Cargo { etype, .. } => EvKind::Plain { etype },
            Body::Msg {
                etype,
                icomm,
                rank,
                tag,
                size,
            } => EvKind::Msg {
                etype,
                icomm,
                rank,
                tag,
                size,
            },
            Body::Coll { .. } => EvKind::Coll,
            _ => EvKind::Other,
        };
        Ev {
            offset: rec.offset,
            time: rec.time,
            icomm: rec.icomm,
            rank: rec.rank,
            thread: rec.thread,
            kind,
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

    /// Reads the whole log; the preamble comes back apart.
    pub(super) fn run(path: &Path) -> Result<(Scan, Option<Preamble>)> {
        let mut reader = Records::open(path, true)?;
        let mut s = Scan::default();
        while let Some(rec) = reader.next(path)? {
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
        let tail = reader.tail();
        s.table = tail.table;
        Ok((s, tail.preamble))
    }
}
