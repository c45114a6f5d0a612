//! The one time path. A converter declares its source's clock domains as
//! lanes (an MPI rank with its anchor offset, a libRastro file, a kernel
//! trace with its boot anchor, a collector, an archive) and pushes every
//! event at its lane's local time; the timeline alone maps local time to
//! the reference clock (offset, then the host's correction), applies the
//! reorder window on source time, and hands the events on in reference
//! time order, ties in push order.
//!
//! Two ways lanes relate:
//! - **shared** (the default): every lane counts the same source time, the
//!   input's own order (MPE time for all ranks of a log). The window is on
//!   that time, whatever the lane.
//! - **independent**: each lane counts its own time (the files of a
//!   libRastro run, each on its host's clock), and the converter reads them
//!   merged on reference time ([`Timeline::map`]), telling each lane's next
//!   time ([`Timeline::expect`]) and its end ([`Timeline::close`]). The
//!   window is per lane.
//!
//! An event is released once no lane can still push one that maps earlier:
//! each lane's lowest possible next time is its latest source time minus
//! the window, mapped. A converter whose first pass found every lane in
//! order says so ([`Timeline::in_order`]) and tells how far its merge has
//! come ([`Timeline::reached`]): its events are handed on as pushed.

use crate::clock::ClockMap;
use crate::error::{Error, Result};
use crate::model::{Event, Op};
use crate::order::{MinQueue, Sorted};
use crate::source::SourceStats;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// A host's clock correction as the time path takes it: sources pass it
/// on when they declare a lane, only the timeline maps times with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock(ClockMap);

impl Clock {
    /// Wraps a correction (the run's sync table gives them).
    pub fn new(map: ClockMap) -> Clock {
        Clock(map)
    }

    /// An uncorrected clock.
    pub const IDENTITY: Clock = Clock(ClockMap::Identity);
}

/// One clock domain of a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Lane(u32);

/// A record's lane, position and time, local and on the reference clock
/// ([`Timeline::stamp`]).
#[derive(Debug, Clone, Copy)]
pub struct Stamp {
    /// Its lane.
    pub lane: Lane,
    /// Where it was read.
    pub pos: u64,
    /// Its time on the lane's clock.
    pub local: i64,
    /// The same on the reference clock.
    pub mapped: i64,
}

struct LaneState {
    /// Its local time to the reference clock.
    place: LaneMap,
    /// Latest local time pushed (independent lanes), and where.
    max: i64,
    max_pos: u64,
    /// The local time of the lane's next record, when told.
    next: i64,
    closed: bool,
    /// The file named in messages, when not the source's.
    path: Option<PathBuf>,
    /// Its queue in `Timeline::queues`.
    queue: u32,
}

impl LaneState {
    /// Through its [`LaneMap`] in place (a hundred bytes to copy, on every
    /// event).
    #[inline]
    fn map(&self, local: i64) -> i64 {
        self.place.map(local)
    }
}

/// One lane's local time to the reference clock, apart from its
/// timeline: a decoder thread that merges independent lanes takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneMap {
    /// Wall clock = local.map(local time) + offset (ns): `local` is the
    /// identity but for a trace placed by two markers (its drift).
    local: ClockMap,
    offset: i64,
    clock: ClockMap,
}

impl LaneMap {
    /// As [`Timeline::map`] on its lane.
    #[inline]
    pub fn map(&self, local: i64) -> i64 {
        self.clock
            .map(self.local.map(local).saturating_add(self.offset))
    }
}

/// Pushes between two computations of the bound.
const RECHECK: u64 = 32;

/// (reference time, push order). Pushes come in source order, so ties
/// keep the input's order.
type Key = (i64, u64);

/// A [`Key`] as one 128-bit integer that sorts as the pair: the merge of
/// several queues compares their heads as these, where pairs compared
/// field by field were twice the instructions and branches (a queue's
/// own keys stay pairs: made and read per event, the conversion costs
/// more than it saves there).
#[inline(always)]
fn packed((time, seq): Key) -> u128 {
    // The sign bit flipped: i64 order as unsigned.
    (u128::from((time as u64) ^ (1 << 63)) << 64) | u128::from(seq)
}

/// The [`Key`] of a [`packed`] one.
#[inline(always)]
fn unpacked(k: u128) -> Key {
    ((((k >> 64) as u64) ^ (1 << 63)) as i64, k as u64)
}

/// The reorder window, the clock maps and the counts of one source.
pub struct Timeline {
    window: i64,
    /// A first pass read every lane in order ([`Timeline::in_order`]).
    checked: bool,
    unit: &'static str,
    independent: bool,
    lanes: Vec<LaneState>,
    /// Shared lanes: per distinct (local map, clock), the smallest offset
    /// of its lanes.
    groups: Vec<((ClockMap, ClockMap), i64)>,
    /// Shared lanes: the latest source time pushed, and where.
    max: i64,
    max_pos: u64,
    /// Independent lanes: each open lane by the lowest reference time it
    /// may still push (stale entries are refreshed when they come up).
    floors: MinQueue<i64, u32>,
    /// Nothing can come earlier than this any more.
    bound: i64,
    /// Shared lanes: the latest source time the bound was computed at
    /// (the same time gives the same bound: a pull that pushed nothing
    /// later, or a pop of several events, does not map it again).
    bounded_at: Option<i64>,
    /// An event ready as it was pushed, with nothing queued before it
    /// (see [`Timeline::reached`]): it skips the queue.
    express: Option<(Key, Op)>,
    /// The push count at which the bound may be computed again.
    recheck: u64,
    /// The converter orders its one lane's events itself (passage.rs).
    ordered: bool,
    /// Ordered, and the first event handed on with nothing left queued:
    /// each push is ready as pushed, in `through`.
    passing: bool,
    through: VecDeque<(i64, Op)>,
    /// Events not yet handed on. Shared lanes come in source order, which
    /// their offsets and clocks shift apart on the reference clock: lanes
    /// that map time alike share a queue, in order by itself, and the
    /// queues are merged. Independent lanes come merged on reference time
    /// by the converter already: one queue.
    queues: Vec<Sorted<Key, Op>>,
    /// Each queue with events by its first key, for the merge of the
    /// queues (an entry whose key is no longer its queue's first is stale
    /// and skipped), when there are several.
    heads: MinQueue<u128, u32>,
    seq: u64,
    /// Counts and facts for the summary.
    pub stats: SourceStats,
}

impl Timeline {
    /// A timeline of one lane, on `clock` (`None`: the reference clock).
    pub fn new(window: i64, stats: SourceStats, clock: Option<Clock>) -> Timeline {
        let mut t = Timeline::lanes(window, stats);
        t.lane(0, clock.unwrap_or(Clock::IDENTITY));
        t
    }

    /// A timeline whose positions are byte offsets (binary inputs).
    pub fn binary(window: i64, stats: SourceStats, clock: Option<Clock>) -> Timeline {
        Timeline::new(window, stats, clock).counting("byte")
    }

    /// A timeline with no lane yet: the converter declares them.
    pub fn lanes(window: i64, stats: SourceStats) -> Timeline {
        Timeline {
            window,
            checked: false,
            unit: "line",
            independent: false,
            lanes: Vec::new(),
            groups: Vec::new(),
            max: i64::MIN,
            max_pos: 0,
            floors: MinQueue::default(),
            bound: i64::MIN,
            bounded_at: None,
            express: None,
            recheck: 0,
            ordered: false,
            passing: false,
            through: VecDeque::new(),
            queues: Vec::new(),
            heads: MinQueue::default(),
            seq: 0,
            stats,
        }
    }

    /// Positions count `unit`s (`byte`, `row` of an RRD archive).
    pub fn counting(mut self, unit: &'static str) -> Timeline {
        self.unit = unit;
        self
    }

    /// Lanes count their own times (see the module's doc).
    pub fn independent(mut self) -> Timeline {
        self.independent = true;
        self
    }

    /// Tells that no lane steps back: a first pass read each in order.
    /// Events are then handed on as soon as every lane has passed them,
    /// not a window later, and a step back is refused. Same order, less
    /// held: the window of a fast run is tens of thousands of events,
    /// out of the cache by the time they are handed on.
    pub fn in_order(&mut self) {
        self.window = 0;
        self.checked = true;
        self.bounded_at = None;
    }

    /// Declares a lane: wall clock = local + `offset`, corrected by `clock`.
    pub fn lane(&mut self, offset: i64, clock: Clock) -> Lane {
        self.lane_of(ClockMap::Identity, offset, clock)
    }

    /// Declares a lane placed on the wall clock by two points (local,
    /// wall) (`first` before `last` on both clocks: a trace's two
    /// markers), the drift between them corrected as docs/formats.md §1
    /// does for sync lines; `None` when the points cannot make a line.
    pub fn drifting_lane(
        &mut self,
        first: (i64, i64),
        last: (i64, i64),
        clock: Clock,
    ) -> Option<Lane> {
        let den = i128::from(last.0) - i128::from(first.0);
        let num = i128::from(last.1) - i128::from(first.1);
        if den <= 0 || num <= 0 {
            return None;
        }
        let local = ClockMap::linear(first.0, first.1, num, den);
        Some(self.lane_of(local, 0, clock))
    }

    fn lane_of(&mut self, local: ClockMap, offset: i64, clock: Clock) -> Lane {
        let id = self.lanes.len() as u32;
        self.bounded_at = None;
        let place = LaneMap {
            local,
            offset,
            clock: clock.0,
        };
        let same = |l: &LaneState| self.independent || l.place == place;
        let queue = match self.lanes.iter().find(|l| same(l)) {
            Some(l) => l.queue,
            None => {
                self.queues.push(Sorted::default());
                self.queues.len() as u32 - 1
            }
        };
        self.lanes.push(LaneState {
            place,
            max: i64::MIN,
            max_pos: 0,
            next: i64::MIN,
            closed: false,
            path: None,
            queue,
        });
        if self.independent {
            self.floors.push(i64::MIN, id);
        } else {
            let key = (local, clock.0);
            match self.groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, min)) => *min = (*min).min(offset),
                None => self.groups.push((key, offset)),
            }
        }
        Lane(id)
    }

    /// [`lane`](Self::lane) for one file of a source of several, named in
    /// the message if it steps back too far.
    pub fn file_lane(&mut self, path: &Path, offset: i64, clock: Clock) -> Lane {
        let lane = self.lane(offset, clock);
        if let Some(l) = self.lanes.last_mut() {
            l.path = Some(path.to_path_buf());
        }
        lane
    }

    /// A local time of `lane` on the reference clock (a converter that
    /// merges independent lanes, or pairs the ends of a message, asks).
    #[inline]
    pub fn map(&self, lane: Lane, local: i64) -> i64 {
        self.lanes
            .get(lane.0 as usize)
            .map_or(local, |l| l.map(local))
    }

    /// How `lane` maps its times ([`LaneMap`]); the identity for a lane
    /// never declared.
    pub fn lane_map(&self, lane: Lane) -> LaneMap {
        self.lanes.get(lane.0 as usize).map_or(
            LaneMap {
                local: ClockMap::Identity,
                offset: 0,
                clock: ClockMap::Identity,
            },
            |l| l.place,
        )
    }

    /// Tells that `lane`'s next record is at `local` (independent lanes):
    /// the lane holds nothing back before it.
    pub fn expect(&mut self, lane: Lane, local: i64) {
        if let Some(l) = self.lanes.get_mut(lane.0 as usize) {
            l.next = l.next.max(local);
        }
    }

    /// Tells that the converter, merging lanes found in order
    /// ([`Timeline::in_order`]) on reference time, has reached `local` on
    /// `lane`: nothing it pushes from now on maps earlier. Events up to
    /// there are ready, and one pushed ready while nothing waits skips
    /// the queue. Ignored unless the lanes were found in order.
    #[inline]
    pub fn reached(&mut self, lane: Lane, local: i64) {
        if self.checked {
            self.reached_stamp(self.stamp(lane, 0, local));
        }
    }

    /// Tells that `lane` pushes nothing more.
    pub fn close(&mut self, lane: Lane) {
        if let Some(l) = self.lanes.get_mut(lane.0 as usize) {
            l.closed = true;
        }
        // A lane that ends may free the others at once.
        self.recheck = 0;
    }

    /// Adds an event read at `pos`, at `local` time on the first lane.
    #[inline]
    pub fn push(&mut self, pos: u64, local: i64, op: Op) -> Result<()> {
        self.push_on(Lane(0), pos, local, op)
    }

    /// Adds an event of `lane` read at `pos`, at `local` time. Fails when
    /// it goes further back than the window, naming both positions.
    #[inline]
    pub fn push_on(&mut self, lane: Lane, pos: u64, local: i64, op: Op) -> Result<()> {
        // Past the first events of an ordered source, every push passes:
        // that test inline, the rest of a push (the window, the queues)
        // a call.
        if self.passing {
            return self.pass((lane, pos), (local, None), op);
        }
        self.push_inner(lane, pos, (local, None), op)
    }

    /// Where and when a record of `lane` was read, its time mapped once
    /// for all the events it gives ([`Timeline::push_stamped`]).
    #[inline]
    pub fn stamp(&self, lane: Lane, pos: u64, local: i64) -> Stamp {
        Stamp {
            lane,
            pos,
            local,
            mapped: self.map(lane, local),
        }
    }

    /// [`Timeline::push_on`] at a stamp's place and time.
    #[inline]
    pub fn push_stamped(&mut self, s: Stamp, op: Op) -> Result<()> {
        self.push_inner(s.lane, s.pos, (s.local, Some(s.mapped)), op)
    }

    /// [`Timeline::reached`] at a stamp's time.
    #[inline]
    pub fn reached_stamp(&mut self, s: Stamp) {
        if self.checked {
            self.bound = self.bound.max(s.mapped);
        }
    }

    /// `mapped`: `local` on the reference clock, when known.
    #[inline]
    fn push_inner(
        &mut self,
        lane: Lane,
        pos: u64,
        (local, mapped): (i64, Option<i64>),
        op: Op,
    ) -> Result<()> {
        if self.passing {
            return self.pass((lane, pos), (local, mapped), op);
        }
        if self.ordered && self.stats.events > 0 {
            self.open_passage();
            if self.passing {
                return self.pass((lane, pos), (local, mapped), op);
            }
        }
        let merged = self.merged();
        let Some(l) = self.lanes.get_mut(lane.0 as usize) else {
            return Err(self.undeclared());
        };
        let (max, max_pos) = if self.independent {
            (&mut l.max, &mut l.max_pos)
        } else {
            (&mut self.max, &mut self.max_pos)
        };
        if local < *max {
            if (*max).saturating_sub(local) > self.window {
                let unit = self.unit;
                let path = l.path.as_deref().unwrap_or(&self.stats.path);
                let why = if self.checked {
                    "though the first pass read this file in order (did it change while read?)"
                        .to_string()
                } else {
                    format!(
                        "more than the reorder window of {} (--reorder-window)",
                        crate::time::format_duration(self.window)
                    )
                };
                return Err(Error::in_file(
                    path,
                    format!(
                        "{unit} {pos}: time goes back {} before {unit} {}, {why}",
                        crate::time::format_duration(*max - local),
                        *max_pos,
                    ),
                ));
            }
            self.stats.reordered += 1;
        } else {
            *max = local;
            *max_pos = pos;
        }
        // A lane told its next record's time (`expect`) has had what
        // maps up to it, less the window, handed on: a push further back
        // would come out after later events. (A record that gives no
        // event, then the file stepping back past it.)
        let back = l.next.saturating_sub(local);
        if self.independent && back > self.window {
            let unit = self.unit;
            let path = l.path.as_deref().unwrap_or(&self.stats.path);
            return Err(Error::in_file(
                path,
                format!(
                    "{unit} {pos}: time goes back {} before a record read earlier in this file, more than the reorder window of {} (--reorder-window)",
                    crate::time::format_duration(back),
                    crate::time::format_duration(self.window),
                ),
            ));
        }
        let key = (mapped.unwrap_or_else(|| l.map(local)), self.seq);
        self.seq += 1;
        let Some(q) = self.queues.get_mut(l.queue as usize) else {
            return Ok(());
        };
        if !merged {
            // Ready, and nothing before it: a later push maps to the
            // bound or after and has a later sequence number.
            if key.0 <= self.bound && self.express.is_none() && q.is_empty() {
                self.express = Some((key, op));
            } else {
                q.push(key, op);
            }
            return Ok(());
        }
        let before = q.first();
        q.push(key, op);
        if before.is_none_or(|b| key < b) {
            self.heads.push(packed(key), l.queue);
        }
        Ok(())
    }

    /// A push on a lane never declared: a converter's bug.
    #[cold]
    fn undeclared(&self) -> Error {
        Error::input(format!(
            "{}: internal: event on an undeclared lane",
            self.stats.path.display()
        ))
    }

    /// Whether the queues are merged (there are several).
    #[inline]
    fn merged(&self) -> bool {
        self.queues.len() > 1
    }

    /// The lowest reference time any lane may still push.
    fn lowest_next(&mut self) -> i64 {
        if !self.independent {
            if self.max == i64::MIN {
                return i64::MIN;
            }
            let floor = self.max.saturating_sub(self.window);
            return self
                .groups
                .iter()
                .map(|((local, c), off)| c.map(local.map(floor).saturating_add(*off)))
                .min()
                .unwrap_or(i64::MAX);
        }
        while let Some((&low, &i)) = self.floors.peek() {
            let Some(l) = self.lanes.get(i as usize) else {
                self.floors.pop();
                continue;
            };
            if l.closed {
                self.floors.pop();
                continue;
            }
            let latest = l.max.max(l.next);
            let now = if latest == i64::MIN {
                i64::MIN
            } else {
                l.map(latest.saturating_sub(self.window))
            };
            if now <= low {
                return low;
            }
            self.floors.replace_top(Some((now, i)));
        }
        i64::MAX
    }

    /// The queue holding the earliest event, and that event's key.
    #[inline]
    fn first(&mut self) -> Option<(usize, Key)> {
        if !self.merged() {
            return self.queues.first()?.first().map(|k| (0, k));
        }
        while let Some((&key, &i)) = self.heads.peek() {
            let (i, key) = (i as usize, unpacked(key));
            if self.queues.get(i).and_then(|q| q.first()) == Some(key) {
                return Some((i, key));
            }
            self.heads.pop();
        }
        None
    }

    /// Takes out the earliest event, of queue `i`.
    #[inline]
    fn take(&mut self, i: usize) -> Option<(i64, Op)> {
        let merged = self.merged();
        let q = self.queues.get_mut(i)?;
        let ((t, _), op) = q.pop()?;
        if !merged {
            return Some((t, op));
        }
        let next = q.first().map(|k| (packed(k), i as u32));
        self.heads.replace_top(next);
        Some((t, op))
    }

    /// The event in the express slot, if any: looked at before it is
    /// taken (a take moves the whole empty slot, on every pop).
    #[inline]
    fn take_express(&mut self) -> Option<(i64, Op)> {
        self.express.as_ref()?;
        self.express.take().map(|((t, _), op)| (t, op))
    }

    /// The earliest event nothing can precede any more.
    #[inline]
    pub fn pop_ready(&mut self) -> Option<(i64, Op)> {
        if self.passing {
            return self.through.pop_front();
        }
        if let Some(e) = self.take_express() {
            return Some(e);
        }
        // A later push maps to the bound or after, and sorts after what
        // was pushed before it: the bound itself is ready.
        let (i, (first, _)) = self.first()?;
        if first > self.bound {
            // With several lanes, computing the bound looks at each: once
            // per few pushes is enough, holding back at most that many more
            // events. One lane keeps the eager release, which decides what
            // the registry knows when the first event is written (the rows
            // created up front, `Registry::up_front_order`).
            if self.seq < self.recheck {
                return None;
            }
            if self.independent || self.bounded_at != Some(self.max) {
                self.bound = self.bound.max(self.lowest_next());
                self.bounded_at = Some(self.max);
            }
            if self.lanes.len() > 1 {
                self.recheck = self.seq + RECHECK;
            }
            if first > self.bound {
                return None;
            }
        }
        self.take(i)
    }

    /// Counts an event handed on at `time`.
    #[inline]
    pub fn count_out(&mut self, time: i64) {
        self.stats.events += 1;
        self.stats.span = Some(match self.stats.span {
            None => (time, time),
            Some((a, b)) => (a.min(time), b.max(time)),
        });
    }

    /// Appends to `out`, up to `max`, the events [`Timeline::pop_ready`]
    /// would give now without computing the bound again, in its order,
    /// counted. A source of one queue hands on a run of ready events in
    /// one loop (event by event, the checks and copies around each pop
    /// were a fifth of a PCP run's thread); the merge of several queues
    /// is left to `pop_ready`, and so are the events of lanes found in
    /// order, which come one at a time through the one-event slot.
    #[inline]
    pub fn drain_ready(&mut self, out: &mut Vec<Event>, max: usize) {
        // Tested where it is called, once per event for the sources that
        // take the other way.
        if !self.merged() && !self.checked {
            self.drain_run(out, max);
        }
    }

    fn drain_run(&mut self, out: &mut Vec<Event>, max: usize) {
        if self.passing {
            return self.drain_through(out, max);
        }
        for _ in 0..max {
            let (time, op) = match self.take_express() {
                Some(e) => e,
                None => {
                    let Some(q) = self.queues.first_mut() else {
                        return;
                    };
                    if q.first().is_none_or(|(t, _)| t > self.bound) {
                        return;
                    }
                    let Some(((t, _), op)) = q.pop() else {
                        return;
                    };
                    (t, op)
                }
            };
            self.count_out(time);
            out.push(Event { time, op });
        }
    }

    /// At the end of the input: the earliest event left.
    pub fn pop_any(&mut self) -> Option<(i64, Op)> {
        if self.passing {
            return self.through.pop_front();
        }
        if let Some(e) = self.take_express() {
            return Some(e);
        }
        let (i, _) = self.first()?;
        self.take(i)
    }
}

mod passage;
#[cfg(test)]
mod tests;
