//! The run as an OTF2 archive (Score-P's format: Vampir, Scalasca, Trace
//! Compass, ViTE), written by libotf2 (`docs/output.md`, "OTF2").
//!
//! Locations follow the process model of [`crate::sink::actors`]: a task
//! is a location group, under the system tree node of its machine
//! (grid > cluster > machine). OTF2 nests every region a location enters,
//! and one container may have several state rows that do not nest in
//! one another: each row of a container is a location of its own (its
//! first row's location also holds the container's metrics, point events
//! and messages). A state is a region, entered at its push and left at
//! its pop; a variable a metric whose value holds until the next
//! (`ABSOLUTE_NEXT`); a point event a string parameter; a message an
//! MPI send and receive in one communicator of every location that
//! sends or receives. Timestamps are ns since the epoch; the clock's
//! global offset is T0.
//!
//! A location's events are written in time order, and a send names its
//! receiver: the events of a location whose message is not met yet wait
//! behind it (as many as arrive while that message is in flight).

mod defs;
pub mod ffi;
mod pool;

use crate::model::{ContainerId, Event, LinkKey, Op, TypeId, ValueId};
use crate::registry::TypeKind;
use crate::sink::actors::Actors;
use crate::sink::replay::Ordinals;
use crate::sink::{Book, Catalogue, Encoder, RunEnd, SinkStats, Span};
use defs::Defs;
use ffi::{Handle, Lib};
use std::collections::VecDeque;
// foldhash: looked up for every event.
use foldhash::HashMap;
use std::ffi::CString;
use std::io;
use std::path::Path;

/// The archive's name in its directory: `DIR/traces.otf2` is the anchor
/// file a reader opens.
pub const ANCHOR: &str = "traces";

/// One record waiting behind an unmet message.
#[derive(Clone, Copy)]
enum Rec {
    Enter(u64, u32),
    Leave(u64, u32),
    Metric(u64, u32, f64),
    Param(u64, u32, u32),
    Send(u64, u32, u32, u64),
    Recv(u64, u32, u32, u64),
    /// A message half whose other half is not met yet (true: the send).
    Await(LinkKey, bool),
}

/// A location: its writer, what waits, and for a state row's location
/// its stack of regions.
struct Loc {
    writer: Handle,
    waiting: VecDeque<Rec>,
    stack: Vec<u32>,
}

/// The encoder.
pub struct Otf2 {
    lib: &'static Lib,
    archive: Handle,
    origin: i64,
    last: i64,
    actors: Actors,
    defs: Defs,
    locs: Vec<Loc>,
    /// A container's state rows, each the location it is written to (and
    /// under no type, the container's first location).
    lanes: HashMap<(ContainerId, TypeId), u64>,
    /// A container's first location, and whether a state row has it.
    first: HashMap<ContainerId, (u64, bool)>,
    /// A container's state rows' locations, in the order they were made.
    rows: HashMap<ContainerId, Vec<u64>>,
    /// Metrics and parameters, numbered as the replay declares their
    /// types; an event value's string, by the book's number.
    metrics: Ordinals,
    parameters: Ordinals,
    value_strings: Vec<u32>,
    /// A message's half met first: the location it waits in.
    records: u64,
    dropped: u64,
}

impl Otf2 {
    /// An archive `DIR/traces.otf2` in the (new, empty but for our
    /// marker) directory `dir`, T0 at `origin`.
    pub fn create(dir: &Path, origin: i64) -> io::Result<Otf2> {
        let lib = ffi::lib().map_err(io::Error::other)?;
        let path = CString::new(dir.as_os_str().as_encoded_bytes())
            .map_err(|_| io::Error::other("an OTF2 directory name holds a NUL byte"))?;
        let name = CString::new(ANCHOR).map_err(io::Error::other)?;
        // SAFETY: the strings live through the call; the archive handle is
        // used only through this encoder and closed once.
        let archive = unsafe {
            (lib.archive_open)(
                path.as_ptr(),
                name.as_ptr(),
                ffi::FILEMODE_WRITE,
                ffi::CHUNK_SIZE_MIN,
                4 * ffi::CHUNK_SIZE_MIN,
                ffi::SUBSTRATE_POSIX,
                ffi::COMPRESSION_NONE,
            )
        };
        if archive.is_null() {
            return Err(io::Error::other(format!(
                "{}: libotf2 could not create the archive",
                dir.display()
            )));
        }
        let enc = Otf2 {
            lib,
            archive,
            origin,
            last: origin,
            actors: Actors::default(),
            defs: Defs::default(),
            locs: Vec::new(),
            lanes: HashMap::default(),
            first: HashMap::default(),
            rows: HashMap::default(),
            metrics: Ordinals::default(),
            parameters: Ordinals::default(),
            value_strings: Vec::new(),
            records: 0,
            dropped: 0,
        };
        static CALLBACKS: ffi::FlushCallbacks = ffi::FlushCallbacks {
            pre: Some(ffi::pre_flush),
            post: None,
        };
        let creator = CString::new(format!("integrador {}", env!("CARGO_PKG_VERSION")))
            .map_err(io::Error::other)?;
        // SAFETY: the archive is open; the callbacks are static.
        unsafe {
            lib.check(
                (lib.set_memory)(archive, &pool::CALLBACKS, std::ptr::null_mut()),
                "memory callbacks",
            )?;
            lib.check(
                (lib.set_flush)(archive, &CALLBACKS, std::ptr::null_mut()),
                "flush callbacks",
            )?;
            lib.check((lib.set_serial)(archive), "collective callbacks")?;
            lib.check((lib.set_creator)(archive, creator.as_ptr()), "creator")?;
            lib.check((lib.open_evt_files)(archive), "event files")?;
        }
        Ok(enc)
    }

    fn time(&self, t: i64) -> u64 {
        t.max(0) as u64
    }

    /// The location of a container's row `ty` (its first location for
    /// `None`), made on first use.
    fn loc<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        c: ContainerId,
        ty: Option<TypeId>,
    ) -> Option<u64> {
        // One lookup for every event but a container's first few: its
        // first location is also kept as the row of no type.
        let key = (c, ty.unwrap_or(TypeId(u32::MAX)));
        if let Some(&l) = self.lanes.get(&key) {
            return Some(l);
        }
        let l = self.new_lane(cat, c, ty)?;
        self.lanes.insert(key, l);
        Some(l)
    }

    fn new_lane<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        c: ContainerId,
        ty: Option<TypeId>,
    ) -> Option<u64> {
        let actor = self.actors.of(cat, c)?;
        self.defs.learn(cat, &self.actors, actor);
        let (first, taken) = match self.first.get(&c) {
            Some(&f) => f,
            None => {
                let l = self.new_loc(cat, c, None)?;
                self.first.insert(c, (l, false));
                (l, false)
            }
        };
        let Some(ty) = ty else { return Some(first) };
        // The first row a container uses is its first location's.
        let l = if taken {
            self.new_loc(cat, c, Some(ty))?
        } else {
            self.first.insert(c, (first, true));
            first
        };
        self.rows.entry(c).or_default().push(l);
        Some(l)
    }

    fn new_loc<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        c: ContainerId,
        ty: Option<TypeId>,
    ) -> Option<u64> {
        let id = self.locs.len() as u64;
        // SAFETY: the archive's event files are open.
        let writer = unsafe { (self.lib.evt_writer)(self.archive, id) };
        if writer.is_null() {
            return None;
        }
        self.locs.push(Loc {
            writer,
            waiting: VecDeque::new(),
            stack: Vec::new(),
        });
        self.defs.location(cat, &self.actors, c, id, ty);
        Some(id)
    }

    /// Writes `r` at `loc`, or queues it behind a message not met yet.
    fn put(&mut self, loc: u64, r: Rec) -> io::Result<()> {
        let l = &mut self.locs[loc as usize];
        if !l.waiting.is_empty() || matches!(r, Rec::Await(..)) {
            l.waiting.push_back(r);

            return Ok(());
        }
        self.write(loc, r)
    }

    fn write(&mut self, loc: u64, r: Rec) -> io::Result<()> {
        let (lib, w, null) = (
            self.lib,
            self.locs[loc as usize].writer,
            std::ptr::null_mut(),
        );
        self.records += 1;
        // SAFETY: the writer belongs to the open archive; the value
        // arrays live through the call.
        let code = unsafe {
            match r {
                Rec::Enter(t, region) => (lib.enter)(w, null, t, region),
                Rec::Leave(t, region) => (lib.leave)(w, null, t, region),
                Rec::Metric(t, metric, v) => {
                    let ty = [ffi::TYPE_DOUBLE];
                    let value = [v.to_bits()];
                    (lib.metric)(w, null, t, metric, 1, ty.as_ptr(), value.as_ptr())
                }
                Rec::Param(t, p, s) => (lib.parameter_string)(w, null, t, p, s),
                Rec::Send(t, peer, tag, len) => {
                    (lib.mpi_send)(w, null, t, peer, defs::COMM, tag, len)
                }
                Rec::Recv(t, peer, tag, len) => {
                    (lib.mpi_recv)(w, null, t, peer, defs::COMM, tag, len)
                }
                Rec::Await(..) => {
                    self.records -= 1;
                    return Ok(());
                }
            }
        };
        lib.check(code, "event")
    }

    /// Writes what waits at `loc` up to the next message not met.
    fn drain(&mut self, loc: u64) -> io::Result<()> {
        while let Some(&r) = self.locs[loc as usize].waiting.front() {
            if matches!(r, Rec::Await(..)) {
                break;
            }
            self.locs[loc as usize].waiting.pop_front();
            self.write(loc, r)?;
        }
        Ok(())
    }

    /// The message `key`'s half waiting at `loc` becomes `r`.
    fn meet(&mut self, loc: u64, key: LinkKey, send: bool, r: Rec) -> io::Result<()> {
        let q = &mut self.locs[loc as usize].waiting;
        if let Some(slot) = q
            .iter_mut()
            .find(|x| matches!(x, Rec::Await(k, s) if *k == key && *s == send))
        {
            *slot = r;
        }
        self.drain(loc)
    }

    /// A state row changes: leaves for `pops` levels (all for `None`),
    /// then the enter of `push` (a region is the book's state value).
    fn state<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        (c, ty): (ContainerId, TypeId),
        pops: Option<usize>,
        push: Option<ValueId>,
        t: i64,
    ) -> io::Result<()> {
        let Some(loc) = self.loc(cat, c, Some(ty)) else {
            return Ok(());
        };
        self.change(loc, pops, push.map(|v| book.value(v)), t)
    }

    /// The state row at `loc` leaves `pops` levels (all for `None`), then
    /// enters `region`.
    fn change(
        &mut self,
        loc: u64,
        pops: Option<usize>,
        region: Option<u32>,
        t: i64,
    ) -> io::Result<()> {
        let t = self.time(t);
        let depth = self.locs[loc as usize].stack.len();
        for _ in 0..pops.unwrap_or(depth).min(depth) {
            let Some(r) = self.locs[loc as usize].stack.pop() else {
                break;
            };
            self.put(loc, Rec::Leave(t, r))?;
        }
        if let Some(r) = region {
            self.locs[loc as usize].stack.push(r);
            self.put(loc, Rec::Enter(t, r))?;
        }
        Ok(())
    }
}

impl Encoder for Otf2 {
    // A message is written from both halves.
    const INTERVALS: bool = true;

    fn declare_type<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        _: &Book,
        ty: TypeId,
    ) -> io::Result<()> {
        match cat.type_def(ty).kind {
            TypeKind::Variable if self.metrics.mark(ty.0) => {
                self.defs.metric(cat, ty);
            }
            TypeKind::Event if self.parameters.mark(ty.0) => {
                self.defs.parameter(cat, ty);
            }
            _ => {}
        }
        Ok(())
    }

    // A state value is a region, numbered as the book numbers it; an
    // event's value is a string.
    fn declare_value<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        v: ValueId,
        _: Option<&str>,
    ) -> io::Result<()> {
        if cat.type_def(cat.value(v).ty).kind == TypeKind::State {
            let r = self.defs.region(cat, v);
            debug_assert_eq!(r, book.value(v));
        } else {
            let n = book.named.get(v.0) as usize;
            if self.value_strings.len() <= n {
                self.value_strings.resize(n + 1, 0);
            }
            self.value_strings[n] = self.defs.value_string(cat, v);
        }
        Ok(())
    }

    fn event<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        ev: &Event,
        _: bool,
    ) -> io::Result<()> {
        let t = ev.time;
        self.last = self.last.max(t);
        match ev.op {
            Op::SetState {
                container,
                ty,
                value,
            } => self.state(cat, book, (container, ty), None, Some(value), t),
            Op::PushState {
                container,
                ty,
                value,
            } => self.state(cat, book, (container, ty), Some(0), Some(value), t),
            Op::PopState { container, ty } => {
                self.state(cat, book, (container, ty), Some(1), None, t)
            }
            Op::EndState { .. } => Ok(()),
            Op::NewEvent {
                container,
                ty,
                value,
            } => {
                let Some(loc) = self.loc(cat, container, None) else {
                    return Ok(());
                };
                let p = self.parameters.get(ty.0);
                let s = self.value_strings[book.named.get(value.0) as usize];
                self.put(loc, Rec::Param(self.time(t), p, s))
            }
            Op::SetVariable {
                container,
                ty,
                value,
            } => {
                let Some(loc) = self.loc(cat, container, None) else {
                    return Ok(());
                };
                let m = self.metrics.get(ty.0);
                self.put(loc, Rec::Metric(self.time(t), m, value))
            }
            Op::StartLink { from, key, .. } => {
                let Some(loc) = self.loc(cat, from, None) else {
                    return Ok(());
                };
                self.put(loc, Rec::Await(key, true))
            }
            Op::EndLink { to, key, .. } => {
                let Some(loc) = self.loc(cat, to, None) else {
                    return Ok(());
                };
                self.put(loc, Rec::Await(key, false))
            }
        }
    }

    fn span<C: Catalogue + ?Sized>(&mut self, cat: &C, _: &Book, s: &Span) -> io::Result<()> {
        let Span::Link {
            from,
            to,
            start,
            end,
            key,
            size,
            tag,
            ..
        } = *s
        else {
            return Ok(());
        };
        let (Some(a), Some(b)) = (self.loc(cat, from, None), self.loc(cat, to, None)) else {
            return Ok(());
        };
        let (ra, rb) = (self.defs.rank(a), self.defs.rank(b));
        let (tag, len) = (tag.clamp(0, u32::MAX as i64) as u32, size.max(0) as u64);
        self.meet(a, key, true, Rec::Send(self.time(start), rb, tag, len))?;
        self.meet(b, key, false, Rec::Recv(self.time(end), ra, tag, len))
    }

    fn destroy<C: Catalogue + ?Sized>(
        &mut self,
        _: &C,
        _: &Book,
        c: ContainerId,
        time: i64,
    ) -> io::Result<()> {
        self.last = self.last.max(time);
        for loc in self.rows.remove(&c).unwrap_or_default() {
            self.change(loc, None, None, time)?;
        }
        Ok(())
    }

    type Out = ();

    fn finish(mut self, _: &RunEnd, stats: &mut SinkStats) -> io::Result<()> {
        // A half never met has no OTF2 form: what waits behind it is
        // written, the half dropped.
        for loc in 0..self.locs.len() as u64 {
            let waiting: Vec<Rec> = self.locs[loc as usize].waiting.drain(..).collect();
            for r in waiting {
                if matches!(r, Rec::Await(..)) {
                    self.dropped += 1;
                }
                self.write(loc, r)?;
            }
        }
        let (lib, archive) = (self.lib, self.archive);
        let mut counts = Vec::with_capacity(self.locs.len());
        for l in &self.locs {
            let mut n = 0u64;
            // SAFETY: each writer is closed once, after its last event.
            unsafe {
                lib.check((lib.events_of)(l.writer, &mut n), "event count")?;
                lib.check(
                    (lib.close_evt_writer)(archive, l.writer),
                    "closing a location",
                )?;
            }
            counts.push(n);
        }
        // SAFETY: the archive is open; every writer above is closed.
        unsafe {
            lib.check((lib.close_evt_files)(archive), "closing the event files")?;
            lib.check((lib.open_def_files)(archive), "definition files")?;
            for loc in 0..self.locs.len() as u64 {
                let w = (lib.def_writer)(archive, loc);
                if !w.is_null() {
                    lib.check((lib.close_def_writer)(archive, w), "local definitions")?;
                }
            }
            lib.check(
                (lib.close_def_files)(archive),
                "closing the definition files",
            )?;
        }
        let end = self.time(self.last - self.origin);
        self.defs
            .write(lib, archive, self.time(self.origin), end, &counts)?;
        self.archive = std::ptr::null_mut();
        // SAFETY: closed once; the handle is not used again.
        unsafe { lib.check((lib.archive_close)(archive), "closing the archive")? };
        stats.records = self.records;
        Ok(())
    }
}

impl Drop for Otf2 {
    fn drop(&mut self) {
        if !self.archive.is_null() {
            // SAFETY: an archive left open by an error is closed once; its
            // directory is a temporary one, removed by its owner.
            unsafe { (self.lib.archive_close)(self.archive) };
        }
    }
}
