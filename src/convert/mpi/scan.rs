//! Pass 1 over an MPE log: what the file says late or in aggregate.

use super::{COMM_SELF_CREATE, RECV, SEND};
use crate::error::{Error, Result};
use foldhash::{HashMap, HashSet};
use integrador_clog::clog2::PREAMBLE_SIZE;
use integrador_clog::{Body, Clog2Reader, CommEntry, Event, MpeReader, Msg, Preamble, Record};
use std::collections::BTreeMap;
use std::io::{BufReader, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// An MPE log of either format, read from an input.
pub(super) type Reader = MpeReader<BufReader<crate::input::Reader>>;

/// The MPE log format its first bytes say `path` is.
pub(super) fn format(path: &Path) -> Result<integrador_clog::Format> {
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
    mpe_reader(path, format, file)
}

/// `file` (the log at `path`, from its start) read as an MPE log of
/// `format`.
fn mpe_reader<R: std::io::Read>(
    path: &Path,
    format: integrador_clog::Format,
    file: R,
) -> Result<MpeReader<BufReader<R>>> {
    let buf = BufReader::with_capacity(crate::input::buffer_size(path), file);
    MpeReader::new(format, buf).map_err(|e| Error::in_file(path, e))
}

/// What the end of `r` says, once its records are read: the
/// communicator table CLOG2 writes last.
fn table_of<R: std::io::Read>(r: &mut MpeReader<R>, path: &Path) -> Result<Vec<CommEntry>> {
    r.comm_table().map_err(|e| Error::in_file(path, e))
}

/// A log's records as the second pass reads them, from a file the run's
/// thread opened (`crate::input::Reader`) or one opened on the thread
/// that converts it (`crate::input::ThreadFile`).
pub(super) struct Records<R: std::io::Read> {
    reader: MpeReader<BufReader<R>>,
}

impl Records<crate::input::Reader> {
    /// Opens `path`.
    pub(super) fn open(path: &Path) -> Result<Self> {
        Ok(Records {
            reader: open_as(path, format(path)?)?,
        })
    }
}

impl Records<crate::input::ThreadFile> {
    /// Opens `path`, a log of `format` ([`format`]), on the thread that
    /// reads it.
    pub(super) fn open_on_thread(path: &Path, format: integrador_clog::Format) -> Result<Self> {
        let file = crate::input::open_on_thread(path).map_err(|e| Error::in_file(path, e))?;
        Ok(Records {
            reader: mpe_reader(path, format, file)?,
        })
    }
}

/// Where pass 2 takes its records from.
pub(super) trait Feed {
    /// The next record; `Ok(None)` at the end.
    fn next_event(&mut self, path: &Path) -> Result<Option<Ev>>;
}

impl<R: std::io::Read> Feed for Records<R> {
    /// The next record ([`Ev`]): a CLOG2 log's read in place, without
    /// copying its body or allocating a definition's strings (the first
    /// pass has them).
    fn next_event(&mut self, path: &Path) -> Result<Option<Ev>> {
        match &mut self.reader {
            MpeReader::Clog2(r) => {
                let raw = r.next_raw().map_err(|e| Error::in_file(path, e))?;
                Ok(raw.map(|raw| Ev::new(Head::of_raw(&raw), raw.event())))
            }
            r => {
                let rec = r.next_record().map_err(|e| Error::in_file(path, e))?;
                Ok(rec.map(|rec| Ev::new(Head::of_record(&rec), rec.body.event())))
            }
        }
    }
}

/// Pass 2's records decoded on a thread of their own, beside a converter
/// that has a core of its own (crate::source::Threaded): converting is
/// twice the work of everything else in a run of one log, so its thread
/// keeps a core and the decoding shares the run's.
pub(super) struct Fed {
    feed: crate::prefetch::Prefetch<Ev, ()>,
    ended: bool,
}

impl Fed {
    /// Starts the thread, which opens `path`, a log of `format`.
    pub(super) fn spawn(path: &Path, format: integrador_clog::Format) -> Fed {
        let (p, q) = (path.to_path_buf(), path.to_path_buf());
        let feed = crate::prefetch::Prefetch::spawn_beside(
            move || Records::open_on_thread(&p, format),
            move |r, slot: &mut Ev| Ok(r.next_event(&q)?.map(|ev| *slot = ev).is_some()),
            |_| Ok(()),
        );
        Fed { feed, ended: false }
    }
}

impl Feed for Fed {
    fn next_event(&mut self, _path: &Path) -> Result<Option<Ev>> {
        if self.ended {
            return Ok(None);
        }
        match self.feed.next_record()? {
            crate::prefetch::Next::Record(ev) => Ok(Some(*ev)),
            crate::prefetch::Next::End(()) => {
                self.ended = true;
                Ok(None)
            }
        }
    }
}

/// Blocks a CLOG2 log needs before its first pass is split between two
/// cores (64 KiB blocks: 4 MiB); below, a thread costs more than it saves.
const SPLIT_BLOCKS: u64 = 64;

/// Where pass 1 splits `reader`'s log between two cores (the first block
/// of the second half), with the core claimed; `None` when the log is
/// small, not CLOG2, not a regular file, or no core is spare.
fn split_point(path: &Path, reader: &Reader) -> Option<u64> {
    let MpeReader::Clog2(r) = reader else {
        return None;
    };
    let p = r.preamble();
    let end = match p.commtable_fptr {
        0 => std::fs::metadata(path).ok()?.len(),
        fptr => fptr,
    };
    let blocks = end.saturating_sub(PREAMBLE_SIZE as u64) / u64::from(p.block_size).max(1);
    let ok = blocks >= SPLIT_BLOCKS && crate::input::threadable(path) && crate::prefetch::claim();
    ok.then_some(blocks / 2)
}

/// A record as the conversion reads it: where, when, whose, and the
/// fields of an event; small and `Copy`.
#[derive(Clone, Copy)]
pub(super) struct Ev {
    pub(super) offset: u64,
    pub(super) time: f64,
    /// `time` in exact nanoseconds (`None`: not a finite time; not
    /// computed for records that are not events), computed where the
    /// record is decoded: on the decoding thread when there is one, a
    /// twentieth of the converting thread's work taken off it.
    pub(super) ns: Option<i64>,
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
    Msg(Msg),
    /// A collective: a row event with nothing to draw.
    Coll,
    /// Not an event (definitions, communicators, block ends...).
    Other,
}

impl Default for Ev {
    fn default() -> Ev {
        Ev {
            offset: 0,
            time: 0.0,
            ns: None,
            icomm: 0,
            rank: 0,
            thread: 0,
            kind: EvKind::Other,
        }
    }
}

impl Ev {
    fn new(h: Head, event: Option<Event<'_>>) -> Ev {
        let kind = match event {
            Some(Event::Bare { etype } | Event::Cargo { etype, .. }) => EvKind::Plain { etype },
            Some(Event::Msg(m)) => EvKind::Msg(m),
            Some(Event::Coll { .. }) => EvKind::Coll,
            None => EvKind::Other,
        };
        let ns = match kind {
            EvKind::Other => None,
            _ => crate::clock::seconds_to_ns(h.time),
        };
        Ev {
            offset: h.offset,
            time: h.time,
            ns,
            icomm: h.icomm,
            rank: h.rank,
            thread: h.thread,
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

/// What pass 1 learns of one (icomm, rank).
pub(super) struct Seen {
    /// Offset of its first event record.
    pub(super) first_at: u64,
    /// Event records of its MPE thread 0.
    pub(super) thread0: u64,
}

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
    /// Per (icomm, rank): where its first event is and how many its MPE
    /// thread 0 logged (one lookup per record).
    pub(super) seen: HashMap<(i32, i32), Seen>,
    /// Events of the other MPE threads, per (icomm, rank, thread).
    pub(super) thread_events: HashMap<(i32, i32, i32), u64>,
    pub(super) msgs: HashMap<(i32, i32, i32, i32, i32, bool), u64>,
    /// The etypes of bare and cargo events: pass 2 finds each one's
    /// value here, made before it starts.
    pub(super) etypes: Etypes,
    /// Whether the event records' times ever step back.
    pub(super) order: Order,
}

/// A set of etypes: those below [`Etypes::SMALL`] (MPE hands out small
/// ones: a hash insert per record was a seventieth of a run) as bits.
#[derive(Default)]
pub(super) struct Etypes {
    small: Vec<u64>,
    other: HashSet<i32>,
}

impl Etypes {
    const SMALL: i32 = 1 << 14;

    #[inline]
    fn insert(&mut self, etype: i32) {
        match usize::try_from(etype) {
            Ok(e) if etype < Self::SMALL => {
                if self.small.is_empty() {
                    self.small = vec![0; Self::SMALL as usize / 64];
                }
                if let Some(w) = self.small.get_mut(e / 64) {
                    *w |= 1 << (e % 64);
                }
            }
            _ => {
                self.other.insert(etype);
            }
        }
    }

    fn join(&mut self, next: Etypes) {
        if self.small.is_empty() {
            self.small = next.small;
        } else {
            for (a, b) in self.small.iter_mut().zip(next.small) {
                *a |= b;
            }
        }
        self.other.extend(next.other);
    }

    /// Every etype, in increasing order.
    pub(super) fn sorted(&self) -> Vec<i32> {
        let mut v: Vec<i32> = self.other.iter().copied().collect();
        for (i, &w) in self.small.iter().enumerate() {
            for b in 0..64 {
                if w & (1 << b) != 0 {
                    v.push((i * 64 + b) as i32);
                }
            }
        }
        v.sort_unstable();
        v
    }
}

/// The times of a log's event records, in file order: whether they ever
/// step back (MPE merges a run's logs in time order, so they seldom do).
/// Pass 2 pushes each event at its record's time: a log found in order
/// has its events handed on as converted, not a reorder window later
/// ([`crate::timeline::Timeline::in_order`]).
#[derive(Default, Clone, Copy)]
pub(super) struct Order {
    first: Option<f64>,
    last: f64,
    back: bool,
}

impl Order {
    fn see(&mut self, t: f64) {
        // A time that is not a number is refused by pass 2; here it only
        // keeps the log from counting as in order.
        if !t.is_finite() || (self.first.is_some() && t < self.last) {
            self.back = true;
        }
        self.first.get_or_insert(t);
        self.last = t;
    }

    /// This part's order, then `next`'s, as one reading of both.
    fn then(self, next: Order) -> Order {
        match (self.first, next.first) {
            (None, _) => next,
            (_, None) => self,
            (Some(_), Some(f)) => Order {
                first: self.first,
                last: next.last,
                back: self.back || next.back || f < self.last,
            },
        }
    }

    /// No time steps back.
    pub(super) fn in_order(&self) -> bool {
        !self.back
    }
}

impl Scan {
    /// Event records per (icomm, rank, MPE thread).
    pub(super) fn row_events(&self) -> impl Iterator<Item = ((i32, i32, i32), u64)> + '_ {
        let zeros = self
            .seen
            .iter()
            .filter(|(_, s)| s.thread0 > 0)
            .map(|(&(c, r), s)| ((c, r, 0), s.thread0));
        zeros.chain(self.thread_events.iter().map(|(&k, &n)| (k, n)))
    }

    pub(super) fn wrank(&self, icomm: i32, rank: i32) -> i32 {
        // The map has every (icomm, rank) a CLOG2 file uses; MPE-1 CLOG
        // has world ranks only.
        self.comm.get(&(icomm, rank)).copied().unwrap_or(rank)
    }

    /// Reads the whole log; the preamble comes back apart.
    pub(super) fn run(path: &Path) -> Result<(Scan, Option<Preamble>)> {
        let mut reader = open_as(path, format(path)?)?;
        if let Some(half) = split_point(path, &reader) {
            return Scan::halves(path, reader, half);
        }
        let mut s = Scan::default();
        s.read(&mut reader, path, None)?;
        s.table = table_of(&mut reader, path)?;
        Ok((s, reader.preamble().cloned()))
    }

    /// Reads `r`'s records (until `stop` is set, when given).
    fn read<R: std::io::Read>(
        &mut self,
        r: &mut MpeReader<R>,
        path: &Path,
        stop: Option<&AtomicBool>,
    ) -> Result<()> {
        let stopped = || stop.is_some_and(|s| s.load(Ordering::Relaxed));
        match r {
            MpeReader::Clog2(r) => {
                // In place: only definitions are decoded whole.
                while let Some(raw) = r.next_raw().map_err(|e| Error::in_file(path, e))? {
                    match raw.event() {
                        Some(ev) => self.event(Head::of_raw(&raw), ev),
                        None => {
                            if let Some(body) = raw.body() {
                                self.definition(&body);
                            }
                        }
                    }
                    if stopped() {
                        break;
                    }
                }
            }
            r => {
                while let Some(rec) = r.next_record().map_err(|e| Error::in_file(path, e))? {
                    match rec.body.event() {
                        Some(ev) => self.event(Head::of_record(&rec), ev),
                        None => self.definition(&rec.body),
                    }
                }
            }
        }
        Ok(())
    }

    /// Pass 1 of a large CLOG2 log on two cores: `reader` reads the
    /// blocks before `half` here while a thread reads the others, and the
    /// halves' findings are joined as one reading in order would have
    /// found them ([`Scan::join`]). The first half's error, or its ENDLOG,
    /// decides before anything the second half found.
    fn halves(path: &Path, mut reader: Reader, half: u64) -> Result<(Scan, Option<Preamble>)> {
        let Some(preamble) = reader.preamble().cloned() else {
            return Err(Error::input("internal: a CLOG2 log without its preamble"));
        };
        let bs = u64::from(preamble.block_size);
        let stop = Arc::new(AtomicBool::new(false));
        let second = {
            let (path, preamble, stop) = (path.to_path_buf(), preamble.clone(), Arc::clone(&stop));
            crate::prefetch::spawn(move || {
                let _core = crate::prefetch::Core;
                let mut f =
                    crate::input::open_on_thread(&path).map_err(|e| Error::in_file(&path, e))?;
                f.seek(SeekFrom::Start(PREAMBLE_SIZE as u64 + half * bs))
                    .map_err(|e| Error::in_file(&path, e))?;
                let buf = BufReader::with_capacity(crate::input::buffer_size(&path), f);
                let r = Clog2Reader::resume(buf, preamble, half)
                    .map_err(|e| Error::in_file(&path, e))?;
                let mut r = MpeReader::Clog2(r);
                let mut s = Scan::default();
                s.read(&mut r, &path, Some(&stop))?;
                if !stop.load(Ordering::Relaxed) {
                    s.table = table_of(&mut r, &path)?;
                }
                Ok::<Scan, Error>(s)
            })
        };
        if let MpeReader::Clog2(r) = &mut reader {
            r.stop_at_block(half);
        }
        let mut s = Scan::default();
        let mine = s.read(&mut reader, path, None);
        let ended = matches!(&reader, MpeReader::Clog2(r) if r.ended());
        if mine.is_err() || ended {
            stop.store(true, Ordering::Relaxed);
        }
        let theirs = second
            .join()
            .map_err(|_| Error::input("internal: the second half's reader ended without a word"))?;
        mine?;
        if ended {
            s.table = table_of(&mut reader, path)?;
        } else {
            s.join(theirs?);
        }
        Ok((s, Some(preamble)))
    }

    /// Adds what the log's next blocks say, as reading on would have.
    fn join(&mut self, next: Scan) {
        // Later definitions win, as they would have overwritten.
        self.comm.extend(next.comm);
        self.processor.extend(next.processor);
        let base = self.states.len();
        self.states.extend(next.states);
        self.state_of_etype.extend(
            next.state_of_etype
                .into_iter()
                .map(|(e, (i, start))| (e, (i + base, start))),
        );
        self.events.extend(next.events);
        // Firsts stay the earlier half's; counts add up.
        for (k, v) in next.cargo_first {
            self.cargo_first.entry(k).or_insert(v);
        }
        for (k, v) in next.seen {
            self.seen
                .entry(k)
                .and_modify(|s| s.thread0 += v.thread0)
                .or_insert(v);
        }
        for (k, n) in next.thread_events {
            *self.thread_events.entry(k).or_default() += n;
        }
        for (k, n) in next.msgs {
            *self.msgs.entry(k).or_default() += n;
        }
        self.etypes.join(next.etypes);
        self.table = next.table;
        self.order = self.order.then(next.order);
    }

    /// What a definition or communicator record says.
    fn definition(&mut self, body: &Body) {
        match body {
            Body::Comm {
                etype,
                icomm,
                rank,
                wrank,
                gcomm,
            } => {
                self.comm.insert((*icomm, *rank), *wrank);
                if *etype == COMM_SELF_CREATE && !gcomm.processor.is_empty() {
                    self.processor
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
                let idx = self.states.len();
                self.states.push(StateDef {
                    name: name.clone(),
                    color: color.clone(),
                });
                self.state_of_etype.insert(*start, (idx, true));
                self.state_of_etype.insert(*end, (idx, false));
            }
            Body::EventDef {
                etype, color, name, ..
            } => {
                self.events.insert(*etype, (name.clone(), color.clone()));
            }
            _ => {}
        }
    }

    /// Counts an event record.
    fn event(&mut self, h: Head, ev: Event<'_>) {
        self.order.see(h.time);
        let seen = self.seen.entry((h.icomm, h.rank)).or_insert(Seen {
            first_at: h.offset,
            thread0: 0,
        });
        if h.thread == 0 {
            seen.thread0 += 1;
        } else {
            *self
                .thread_events
                .entry((h.icomm, h.rank, h.thread))
                .or_default() += 1;
        }
        match ev {
            Event::Bare { etype } => {
                self.etypes.insert(etype);
            }
            Event::Cargo { etype, bytes } => {
                self.etypes.insert(etype);
                self.cargo_first
                    .entry((etype, h.icomm, h.rank))
                    .or_insert((h.time, *bytes, h.offset));
            }
            Event::Msg(Msg {
                etype,
                icomm,
                rank,
                tag,
                ..
            }) if etype == SEND || etype == RECV => {
                *self
                    .msgs
                    .entry((h.icomm, h.rank, icomm, rank, tag, etype == SEND))
                    .or_default() += 1;
            }
            _ => {}
        }
    }
}

/// A record's header.
#[derive(Clone, Copy)]
struct Head {
    offset: u64,
    time: f64,
    icomm: i32,
    rank: i32,
    thread: i32,
}

impl Head {
    fn of_raw(raw: &integrador_clog::RawRecord<'_>) -> Head {
        Head {
            offset: raw.offset,
            time: raw.time,
            icomm: raw.icomm,
            rank: raw.rank,
            thread: raw.thread,
        }
    }

    fn of_record(rec: &Record) -> Head {
        Head {
            offset: rec.offset,
            time: rec.time,
            icomm: rec.icomm,
            rank: rec.rank,
            thread: rec.thread,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Etypes, Order};

    /// Small and other etypes, inserted in halves and joined, come out
    /// once each, in order.
    #[test]
    fn etypes_join_into_one_sorted_set() {
        let (mut a, mut b) = (Etypes::default(), Etypes::default());
        for e in [600, -101, 0, 63, 64, 600] {
            a.insert(e);
        }
        for e in [1 << 14, 601, i32::MAX, i32::MIN, 63] {
            b.insert(e);
        }
        a.join(b);
        assert_eq!(
            a.sorted(),
            [i32::MIN, -101, 0, 63, 64, 600, 601, 1 << 14, i32::MAX]
        );
        let mut c = Etypes::default();
        c.join(Etypes::default());
        assert!(c.sorted().is_empty());
    }

    fn order(times: &[f64]) -> Order {
        let mut o = Order::default();
        for &t in times {
            o.see(t);
        }
        o
    }

    /// Read in two parts and joined, the order is the whole reading's,
    /// wherever the cut falls.
    #[test]
    fn halves_join_into_the_whole_order() {
        let cases: [&[f64]; 7] = [
            &[],
            &[1.0],
            &[1.0, 2.0, 2.0, 3.0],
            &[1.0, 3.0, 2.0, 4.0],
            &[2.0, 1.0],
            &[1.0, 2.0, f64::NAN, 3.0],
            &[5.0, 5.0, 4.999, 6.0],
        ];
        for times in cases {
            let whole = order(times);
            let sorted =
                times.windows(2).all(|w| w[0] <= w[1]) && times.iter().all(|t| t.is_finite());
            assert_eq!(whole.in_order(), sorted, "{times:?}");
            for cut in 0..=times.len() {
                let (a, b) = times.split_at(cut);
                assert_eq!(
                    order(a).then(order(b)).in_order(),
                    sorted,
                    "{times:?} cut at {cut}"
                );
            }
        }
    }
}
