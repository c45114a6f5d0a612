//! Windows of the run and reference points (`docs/windows.md`, seed 002).
//!
//! A window `[from, to)` is replayed from the start of the run: before
//! `from` the replay keeps its books (what is alive and open) and hands
//! nothing on; at `from` it opens; at `to` it closes. A format that shows
//! the window cut ([`Encoder::CUT`], Pajé) is handed at `from` what is
//! alive and open there, as if it began then, and at `to` everything is
//! closed. One that keeps intervals by the completion rule (the tables)
//! is handed the intervals that end in the window, with their true
//! starts, and at `to` a checkpoint of what is still open.
//!
//! Reference points ([`Points`]) are checkpoints at instants inside the
//! window: what is open after every event before the instant. A reader
//! of the tables opens any window from the first point at or after its
//! end (`src/tables/window.rs`).

use super::{slot, Open, Replay};
use crate::model::{ContainerId, Event, LinkKey, Op, TypeId};
use crate::sink::{Book, Catalogue, Encoder, Held, Span};
use std::io;

/// When checkpoints are taken, besides the window's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Points {
    /// Regular instants `origin + k * step` (k ≥ 1); `None`: none.
    pub every: Option<(i64, i64)>,
    /// One more each time this many intervals were handed on since the
    /// last (at the next event's time), so that a dense run has a point
    /// every few row groups; `None`: never.
    pub rows: Option<u64>,
}

impl Points {
    /// No checkpoint but the window's end.
    pub const NONE: Points = Points {
        every: None,
        rows: None,
    };

    /// The default of a run (`docs/windows.md`): a point every hour of the
    /// run's time from T0 at `origin`, and one more after every 256 Ki
    /// intervals (four row groups of one table's worth), so that a window
    /// reads a few row groups past its end whatever the run's density.
    pub fn default_at(origin: i64) -> Points {
        Points {
            every: Some((origin, 3_600_000_000_000)),
            rows: Some(1 << 18),
        }
    }
}

/// The window of a run and its reference points. Times are the model's
/// (ns on the reference clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// The window's start; `None`: the run's.
    pub from: Option<i64>,
    /// The window's end (excluded); `None`: the run's.
    pub to: Option<i64>,
    /// Checkpoints inside it.
    pub points: Points,
}

impl Default for Cut {
    fn default() -> Cut {
        Cut {
            from: None,
            to: None,
            points: Points::NONE,
        }
    }
}

impl Cut {
    /// Whether it is a window of the run (not the whole).
    pub fn is_window(&self) -> bool {
        self.from.is_some() || self.to.is_some()
    }
}

/// Where the replay is in its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Phase {
    /// Before `from`: books kept, nothing handed on.
    Before,
    /// In the window.
    #[default]
    In,
    /// At or after `to`: only what closes what was handed on.
    After,
}

/// What decides what the encoder is handed: the phase, the window's
/// start (a cut format's intervals start there at the earliest), the
/// intervals handed since the last checkpoint, and the next event time
/// at which the replay must look at its window (`Replay::cross`).
pub(crate) struct Gate {
    pub(super) phase: Phase,
    from: i64,
    given: u64,
    rows: u64,
    pub(super) edge: i64,
}

impl Default for Gate {
    fn default() -> Gate {
        Gate {
            phase: Phase::In,
            from: i64::MIN,
            given: 0,
            rows: u64::MAX,
            edge: i64::MAX,
        }
    }
}

/// Hands `span` to `enc` if it takes intervals and the window is open.
#[inline]
pub(super) fn give<E: Encoder, C: Catalogue + ?Sized>(
    enc: &mut E,
    cat: &C,
    book: &Book,
    gate: &mut Gate,
    span: &Span,
) -> io::Result<()> {
    if !E::INTERVALS || gate.phase != Phase::In {
        return Ok(());
    }
    gate.given += 1;
    if gate.given >= gate.rows {
        // A point is due: at the next event after this one's time (every
        // span ends at the event being replayed).
        let end = match *span {
            Span::State { end, .. } | Span::Variable { end, .. } | Span::Link { end, .. } => end,
        };
        gate.edge = gate.edge.min(end.saturating_add(1));
    }
    if E::CUT {
        return enc.span(cat, book, &clamp(*span, gate.from));
    }
    enc.span(cat, book, span)
}

/// A span of a cut format starts at the window's start at the earliest.
fn clamp(mut span: Span, from: i64) -> Span {
    match &mut span {
        Span::State { start, .. } | Span::Variable { start, .. } | Span::Link { start, .. } => {
            *start = (*start).max(from);
        }
    }
    span
}

/// The last regular instant at or before `t` (`origin + k * step`), and
/// the step; `None` without regular instants.
fn point_at_or_before(every: Option<(i64, i64)>, t: i64) -> Option<(i128, i128)> {
    let (origin, step) = every.filter(|&(_, step)| step > 0)?;
    let (origin, step) = (origin as i128, step as i128);
    Some((origin + (t as i128 - origin).div_euclid(step) * step, step))
}

/// The first regular instant after `t` (never `origin` itself).
fn point_after(every: Option<(i64, i64)>, t: i64) -> i64 {
    match (point_at_or_before(every, t), every) {
        (Some((at, step)), Some((origin, _))) => {
            i64::try_from((at + step).max(origin as i128 + step)).unwrap_or(i64::MAX)
        }
        _ => i64::MAX,
    }
}

impl<E: Encoder> Replay<E> {
    /// The replay of the window `cut` of the run, with its checkpoints.
    pub fn within(mut self, cut: Cut) -> Replay<E> {
        self.cut = cut;
        self.keep = E::INTERVALS || cut.is_window();
        // Only a format that keeps intervals stores checkpoints.
        if !E::INTERVALS {
            self.cut.points = Points::NONE;
        }
        self.gate.rows = self.cut.points.rows.unwrap_or(u64::MAX).max(1);
        self.gate.from = cut.from.unwrap_or(i64::MIN);
        self.gate.phase = match cut.from {
            Some(_) => Phase::Before,
            None => Phase::In,
        };
        self.next_point = point_after(self.cut.points.every, self.gate.from);
        self.reedge();
        self
    }

    /// Time has reached `t` without an event (a trace rebuilt from
    /// tables, whose run goes on past what was read): the window's edges
    /// before it are crossed.
    pub fn reach<C: Catalogue + ?Sized>(&mut self, cat: &C, t: i64) -> io::Result<()> {
        if t >= self.gate.edge {
            self.cross(cat, t)?;
        }
        Ok(())
    }

    /// The next event time at which the window asks for something.
    fn reedge(&mut self) {
        self.gate.edge = match self.gate.phase {
            Phase::Before => self.gate.from,
            Phase::In => self.cut.to.unwrap_or(i64::MAX).min(self.next_point).min(
                if self.gate.given >= self.gate.rows {
                    self.stats.last_time.unwrap_or(i64::MIN).saturating_add(1)
                } else {
                    i64::MAX
                },
            ),
            Phase::After => i64::MAX,
        };
    }

    /// An event at `t` reached the window's edge: opens it, takes the
    /// checkpoints due before `t`, closes it.
    #[inline(never)]
    pub(super) fn cross<C: Catalogue + ?Sized>(&mut self, cat: &C, t: i64) -> io::Result<()> {
        if self.gate.phase == Phase::Before && t >= self.gate.from {
            self.open(cat, self.gate.from)?;
        }
        if self.gate.phase == Phase::In {
            let to = self.cut.to.unwrap_or(i64::MAX);
            let mut taken = None;
            if self.next_point <= t && self.next_point < to {
                // The last instant at or before `t` (and before the
                // window's end): a time without events holds one point,
                // at its end.
                let lim = t.min(to - 1);
                let at = point_at_or_before(self.cut.points.every, lim)
                    .and_then(|(at, _)| i64::try_from(at).ok())
                    .unwrap_or(lim)
                    .max(self.next_point);
                self.checkpoint_all(cat, at)?;
                taken = Some(at);
                self.next_point = point_after(self.cut.points.every, t);
            }
            if self.gate.given >= self.gate.rows && t < to && taken != Some(t) {
                self.checkpoint_all(cat, t)?;
            }
            if t >= to {
                self.close(cat, to)?;
            }
        }
        self.reedge();
        Ok(())
    }

    /// Opens the window at `from`: a cut format is handed what is alive
    /// and open there, as at the start of a trace.
    fn open<C: Catalogue + ?Sized>(&mut self, cat: &C, from: i64) -> io::Result<()> {
        self.gate.phase = Phase::In;
        self.base = self.stats;
        self.stats.opened_after_ns = self.started.elapsed().as_nanos() as u64;
        self.gate.given = 0;
        if !E::CUT {
            return Ok(());
        }
        let alive: Vec<ContainerId> = self
            .created
            .iter()
            .copied()
            .filter(|c| self.alive.get(c.0 as usize).copied().unwrap_or(false))
            .collect();
        for &c in &alive {
            self.enc.create(cat, &self.book, c, from)?;
        }
        let mut evs = Vec::new();
        for c in std::iter::once(ContainerId::ROOT).chain(alive) {
            if let Some(rows) = self.rows.get(slot(c)) {
                for row in rows {
                    evs.extend(row.stack.iter().map(|o: &Open| Op::PushState {
                        container: c,
                        ty: TypeId(row.ty),
                        value: o.value,
                    }));
                }
            }
            if let Some(vars) = self.vars.get(slot(c)) {
                evs.extend(vars.iter().map(|v| Op::SetVariable {
                    container: c,
                    ty: TypeId(v.ty),
                    value: v.value,
                }));
            }
        }
        let mut halves: Vec<_> = self.halves.iter().map(|(k, h)| (*k, *h)).collect();
        halves.sort_unstable_by_key(|(k, _)| *k);
        for ((channel, seq), h) in halves {
            let key = LinkKey { channel, seq };
            evs.push(match h.start {
                true => Op::StartLink {
                    container: h.container,
                    ty: h.ty,
                    value: h.value,
                    from: h.at,
                    key,
                    size: h.size,
                    tag: h.tag,
                },
                false => Op::EndLink {
                    container: h.container,
                    ty: h.ty,
                    value: h.value,
                    to: h.at,
                    key,
                },
            });
        }
        for op in evs {
            let state = matches!(op, Op::PushState { .. });
            self.stats.events += 1;
            self.enc
                .event(cat, &self.book, &Event { time: from, op }, state)?;
        }
        Ok(())
    }

    /// Closes the window at `to`: what is open there is a checkpoint.
    fn close<C: Catalogue + ?Sized>(&mut self, cat: &C, to: i64) -> io::Result<()> {
        if !E::CUT {
            self.checkpoint_all(cat, to)?;
        }
        self.gate.phase = Phase::After;
        self.stats.last_time = Some(to);
        Ok(())
    }

    /// After the window: a cut format is handed the other half of a link
    /// it was handed the first of, at the window's end, so that every
    /// arrow it shows has both ends.
    pub(super) fn after<C: Catalogue + ?Sized>(&mut self, cat: &C, ev: &Event) -> io::Result<()> {
        if !E::CUT {
            return Ok(());
        }
        let (key, end, start) = match ev.op {
            Op::StartLink { key, from, .. } => (key, from, true),
            Op::EndLink { key, to, .. } => (key, to, false),
            _ => return Ok(()),
        };
        let k = (key.channel, key.seq);
        if self.halves.get(&k).is_none_or(|h| h.start == start) {
            return Ok(());
        }
        self.halves.remove(&k);
        let to = self.cut.to.unwrap_or(ev.time);
        self.create(cat, end, to)?;
        let ev = Event {
            time: to,
            op: ev.op,
        };
        self.enc.event(cat, &self.book, &ev, false)
    }

    /// Every entity open after every event before `at`, to the encoder.
    fn checkpoint_all<C: Catalogue + ?Sized>(&mut self, cat: &C, at: i64) -> io::Result<()> {
        self.gate.given = 0;
        if !E::INTERVALS {
            return Ok(());
        }
        self.stats.checkpoints += 1;
        let alive = |c: &ContainerId| self.alive.get(c.0 as usize).copied().unwrap_or(false);
        let alive: Vec<ContainerId> = self.created.iter().copied().filter(alive).collect();
        for &c in &alive {
            let since = self.made.get(c.0 as usize).copied().unwrap_or(0);
            let held = Held::Container {
                container: c,
                since,
            };
            self.enc.checkpoint(cat, &self.book, at, &held)?;
        }
        for c in std::iter::once(ContainerId::ROOT).chain(alive) {
            for row in self.rows.get(slot(c)).map_or(&[][..], |r| &r[..]) {
                for o in &row.stack {
                    let held = Held::State {
                        container: c,
                        ty: TypeId(row.ty),
                        value: o.value,
                        depth: o.depth,
                        since: o.start,
                        source: o.source,
                    };
                    self.enc.checkpoint(cat, &self.book, at, &held)?;
                }
            }
            for v in self.vars.get(slot(c)).map_or(&[][..], |v| &v[..]) {
                let held = Held::Variable {
                    container: c,
                    ty: TypeId(v.ty),
                    value: v.value,
                    since: v.start,
                    source: v.source,
                };
                self.enc.checkpoint(cat, &self.book, at, &held)?;
            }
        }
        let mut halves: Vec<_> = self.halves.iter().map(|(k, h)| (*k, *h)).collect();
        halves.sort_unstable_by_key(|(k, _)| *k);
        for ((channel, seq), h) in halves {
            let held = Held::Link {
                container: h.container,
                ty: h.ty,
                value: h.value,
                from: h.start.then_some(h.at),
                to: (!h.start).then_some(h.at),
                since: h.time,
                key: LinkKey { channel, seq },
                size: h.size,
                tag: h.tag,
                source: h.source,
            };
            self.enc.checkpoint(cat, &self.book, at, &held)?;
        }
        Ok(())
    }

    /// The counts of the window: what was replayed before it is not
    /// written (it is counted apart).
    pub(super) fn window_stats(&self) -> crate::sink::SinkStats {
        let (s, b) = (self.stats, self.base);
        crate::sink::SinkStats {
            events: s.events - b.events,
            containers: s.containers,
            variables: s.variables - b.variables,
            states: s.states - b.states,
            events_point: s.events_point - b.events_point,
            links: s.links - b.links,
            skipped_pops: s.skipped_pops - b.skipped_pops,
            before_window: b.events,
            ..s
        }
    }
}
