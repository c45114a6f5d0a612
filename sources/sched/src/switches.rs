//! Who runs on each CPU, with the switches the kernel did not record
//! reconstructed (`specs/sched.md`, "Missing switches").
//!
//! Every event names the task running on its CPU (its context task; for a
//! switch, `prev_pid`). When that is not the task the last switch on the
//! CPU put there, a switch is inferred: the previous task left at the last
//! moment it was seen there, and the new one came on at the latest of that
//! moment, the moment it last left a CPU and the moment it was last woken
//! (never after the event). A task put on a CPU while believed to run on
//! another leaves that one the same way. The idle task (pid 0) is not
//! reported. Inferred switches can be earlier than switches already
//! reported, but never earlier than [`Cpus::watermark`].

use crate::pids::Pids;
use crate::text::{Event, Kind};
// foldhash: CPUs past the table's are looked up per event (SipHash was a
// tenth of the converter's time).
use foldhash::HashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// On or off a CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The task starts running.
    In,
    /// The task stops running.
    Out,
}

/// A task put on or taken off a CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switch {
    /// When (trace clock, ns).
    pub ts: i64,
    /// Which CPU.
    pub cpu: u32,
    /// On or off.
    pub change: Change,
    /// The task.
    pub pid: i32,
    /// Reconstructed, not recorded.
    pub inferred: bool,
    /// A recorded switch out: the task left in the state its event's
    /// `prev_state` gives.
    pub recorded_out: bool,
}

/// One CPU: the task the last switch put on it, the last moment it was
/// seen.
#[derive(Debug, Clone, Copy)]
struct Cpu {
    cur: i32,
    seen: i64,
}

/// One task: when it last left a CPU, when it was last woken, where it
/// runs. One lookup finds all three (they were three maps).
#[derive(Debug, Clone, Copy, Default)]
struct Task {
    last_out: Option<i64>,
    last_wake: Option<i64>,
    running_on: Option<u32>,
}

/// The CPUs by number: a machine's (below [`CpuTable::DENSE`]) by
/// index, any other (a hostile trace's) in a map. Every event looks up
/// its CPU two or three times: an index, not a hash.
#[derive(Debug, Default)]
struct CpuTable {
    dense: Vec<Option<Cpu>>,
    sparse: HashMap<u32, Cpu>,
    /// The CPUs known, in the order met: what is looked at when all are
    /// (a trace of CPUs 4000 and 4001 has two, not 4002 slots).
    known: Vec<u32>,
}

impl CpuTable {
    const DENSE: u32 = 4096;

    #[inline]
    fn get(&self, cpu: u32) -> Option<&Cpu> {
        match self.dense.get(cpu as usize) {
            Some(c) => c.as_ref(),
            None if cpu < Self::DENSE => None,
            None => self.sparse.get(&cpu),
        }
    }

    #[inline]
    fn get_mut(&mut self, cpu: u32) -> Option<&mut Cpu> {
        match self.dense.get_mut(cpu as usize) {
            Some(c) => c.as_mut(),
            None if cpu < Self::DENSE => None,
            None => self.sparse.get_mut(&cpu),
        }
    }

    /// Sets `cpu`'s state; its `seen` before, if it was known.
    #[inline]
    fn insert(&mut self, cpu: u32, c: Cpu) -> Option<i64> {
        // A CPU met before, by index (nearly every call), inline.
        if let Some(Some(slot)) = self.dense.get_mut(cpu as usize) {
            return Some(std::mem::replace(slot, c).seen);
        }
        self.insert_new(cpu, c)
    }

    /// [`CpuTable::insert`] of a CPU not in the dense table.
    #[cold]
    #[inline(never)]
    fn insert_new(&mut self, cpu: u32, c: Cpu) -> Option<i64> {
        let old = if cpu >= Self::DENSE {
            self.sparse.insert(cpu, c)
        } else {
            if self.dense.len() <= cpu as usize {
                self.dense.resize(cpu as usize + 1, None);
            }
            self.dense
                .get_mut(cpu as usize)
                .and_then(|slot| slot.replace(c))
        };
        if old.is_none() {
            self.known.push(cpu);
        }
        old.map(|o| o.seen)
    }

    /// How many CPUs are known.
    fn len(&self) -> usize {
        self.known.len()
    }

    /// Every known CPU with its state.
    fn iter(&self) -> impl Iterator<Item = (u32, &Cpu)> {
        self.known.iter().filter_map(|&c| Some((c, self.get(c)?)))
    }
}

/// The CPUs' state while a trace is read.
#[derive(Debug, Default)]
pub struct Cpus {
    cpus: CpuTable,
    tasks: Pids<Task>,
    /// The least of the CPUs' `seen` and its CPU, when known: asked after
    /// every event, it is found again only when that CPU moves on (a
    /// machine with many CPUs would look at each of them every event).
    low: Option<(i64, u32)>,
    /// Where `low` is found again: every CPU with an entry at or before
    /// its `seen` (a CPU that moves on is not pushed again: its entry is
    /// brought up to date when it comes to the top). Looking at every
    /// CPU instead made a trace whose events go round many CPUs take
    /// time by the square of its length.
    floors: BinaryHeap<Reverse<(i64, u32)>>,
}

impl Cpus {
    /// A reader with no CPU known yet.
    pub fn new() -> Cpus {
        Cpus::default()
    }

    /// No switch reported after now can be earlier than this.
    pub fn watermark(&mut self) -> Option<i64> {
        if self.low.is_none() {
            self.low = self.least();
        }
        self.low.map(|(t, _)| t)
    }

    /// The least (`seen`, CPU) of all CPUs: a machine's few looked at
    /// one by one (cheaper than the heap's upkeep), more from `floors`.
    fn least(&mut self) -> Option<(i64, u32)> {
        if self.cpus.len() <= 64 {
            return self.cpus.iter().map(|(c, u)| (u.seen, c)).min();
        }
        while let Some(mut top) = self.floors.peek_mut() {
            let Reverse((t, c)) = *top;
            match self.cpus.get(c).map(|u| u.seen) {
                Some(seen) if seen == t => return Some((t, c)),
                // Moved on since: brought up to date.
                Some(seen) if seen > t => *top = Reverse((seen, c)),
                // Moved back since (pushed again then), or unknown.
                _ => {
                    std::collections::binary_heap::PeekMut::pop(top);
                }
            }
        }
        None
    }

    /// `cpu`, seen at `old` before (if known), is seen at `t` now.
    #[inline]
    fn seen(&mut self, cpu: u32, old: Option<i64>, t: i64) {
        if old.is_none_or(|o| t < o) {
            self.floor(cpu, t);
        }
        self.moved(cpu, t);
    }

    /// A CPU new or seen earlier than before: an entry of its own.
    #[cold]
    fn floor(&mut self, cpu: u32, t: i64) {
        self.floors.push(Reverse((t, cpu)));
        // Pushed back and back again (a trace whose times step back):
        // made again from the CPUs, so that it stays their size.
        if self.floors.len() > 2 * self.cpus.len() + 64 {
            self.floors = self
                .cpus
                .iter()
                .map(|(c, u)| Reverse((u.seen, c)))
                .collect();
        }
    }

    /// The least moved when `cpu` is seen at `t`.
    #[inline]
    fn moved(&mut self, cpu: u32, t: i64) {
        match self.low {
            // The least moved: found again when asked.
            Some((_, c)) if c == cpu => self.low = None,
            Some((least, _)) if t < least => self.low = Some((t, cpu)),
            _ => {}
        }
    }

    /// `pid` left `cpu` (not the idle task): an `Out` switch.
    #[inline]
    fn leave(
        &mut self,
        cpu: u32,
        pid: i32,
        t: i64,
        (inferred, recorded_out): (bool, bool),
        out: &mut Vec<Switch>,
    ) {
        if pid == 0 {
            return;
        }
        let task = self.tasks.get_or_insert_with(pid, Task::default);
        task.last_out = Some(t);
        if task.running_on == Some(cpu) {
            task.running_on = None;
        }
        out.push(Switch {
            ts: t,
            cpu,
            change: Change::Out,
            pid,
            inferred,
            recorded_out,
        });
    }

    #[inline]
    fn enter(&mut self, cpu: u32, pid: i32, t: i64, inferred: bool, out: &mut Vec<Switch>) {
        if pid != 0 {
            let task = self.tasks.get_or_insert_with(pid, Task::default);
            let other = task.running_on.replace(cpu).filter(|&o| o != cpu);
            if let Some(other) = other {
                if let Some(o) = self.cpus.get_mut(other) {
                    let (at, was) = (o.seen, o.cur);
                    o.cur = 0;
                    // (`was` is `pid`: a task runs where the last switch
                    // put it.) It now runs on `cpu`, which leave() keeps.
                    self.leave(other, was, at, (true, false), out);
                }
            }
            out.push(Switch {
                ts: t,
                cpu,
                change: Change::In,
                pid,
                inferred,
                recorded_out: false,
            });
        }
        let old = self.cpus.insert(cpu, Cpu { cur: pid, seen: t });
        self.seen(cpu, old, t);
    }

    /// Feeds one event (in file order); appends the switches it implies.
    pub fn feed(&mut self, ev: &Event, out: &mut Vec<Switch>) {
        self.feed_kind(ev, &ev.kind, out);
    }

    /// [`Cpus::feed`] with the event's kind found elsewhere
    /// ([`crate::text::Kinds`]).
    pub fn feed_kind(&mut self, ev: &Event, kind: &Kind, out: &mut Vec<Switch>) {
        let (cpu, ts) = (ev.cpu, ev.ts_ns);
        let ctx = match kind {
            Kind::Switch { prev_pid, .. } => *prev_pid,
            _ => ev.pid,
        };
        let known = self.cpus.get(cpu).copied();
        if let Some(c) = known.filter(|c| c.cur != ctx) {
            let t_out = c.seen;
            self.leave(cpu, c.cur, t_out, (true, false), out);
            let t_in = if ctx != 0 {
                let task = self.tasks.get(ctx).copied().unwrap_or_default();
                t_out
                    .max(task.last_out.unwrap_or(t_out))
                    .max(task.last_wake.unwrap_or(t_out))
                    .min(ts)
            } else {
                t_out
            };
            self.enter(cpu, ctx, t_in, true, out);
        }
        match kind {
            Kind::Switch { next_pid, .. } => {
                if let Some(c) = self.cpus.get(cpu).copied() {
                    self.leave(cpu, c.cur, ts, (false, true), out);
                }
                self.enter(cpu, *next_pid, ts, false, out);
            }
            other => {
                if let Kind::Wakeup { event, pid, .. } = other {
                    if event != "sched_waking" {
                        self.tasks.get_or_insert_with(*pid, Task::default).last_wake = Some(ts);
                    }
                }
                if let Some(c) = self.cpus.get_mut(cpu) {
                    let old = std::mem::replace(&mut c.seen, ts);
                    self.seen(cpu, Some(old), ts);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Change, Cpus, Switch};
    use crate::text::{Event, Kind, Name};
    use foldhash::HashMap;

    /// The map-per-field bookkeeping `Cpus` had before, kept as the
    /// reference its one-map-per-key form must agree with.
    #[derive(Debug, Default)]
    struct Reference {
        cur: HashMap<u32, i32>,
        seen: HashMap<u32, i64>,
        last_out: HashMap<i32, i64>,
        last_wake: HashMap<i32, i64>,
        running_on: HashMap<i32, u32>,
        /// The least of `seen` and its CPU, when known: asked after every
        /// event, it is found again only when that CPU moves on (a machine
        /// with many CPUs would look at each of them every event).
        low: Option<(i64, u32)>,
    }

    impl Reference {
        /// No switch reported after now can be earlier than this.
        fn watermark(&mut self) -> Option<i64> {
            if self.low.is_none() {
                self.low = self.seen.iter().map(|(&c, &t)| (t, c)).min();
            }
            self.low.map(|(t, _)| t)
        }

        /// CPU `cpu` was seen at `t`.
        fn see(&mut self, cpu: u32, t: i64) {
            self.seen.insert(cpu, t);
            match self.low {
                // The least moved: found again when asked.
                Some((_, c)) if c == cpu => self.low = None,
                Some((least, _)) if t < least => self.low = Some((t, cpu)),
                _ => {}
            }
        }

        fn leave(
            &mut self,
            cpu: u32,
            t: i64,
            inferred: bool,
            recorded_out: bool,
            out: &mut Vec<Switch>,
        ) {
            let Some(&pid) = self.cur.get(&cpu) else {
                return;
            };
            if pid == 0 {
                return;
            }
            self.last_out.insert(pid, t);
            if self.running_on.get(&pid) == Some(&cpu) {
                self.running_on.remove(&pid);
            }
            out.push(Switch {
                ts: t,
                cpu,
                change: Change::Out,
                pid,
                inferred,
                recorded_out,
            });
        }

        fn enter(&mut self, cpu: u32, pid: i32, t: i64, inferred: bool, out: &mut Vec<Switch>) {
            if pid != 0 {
                if let Some(&other) = self.running_on.get(&pid) {
                    if other != cpu {
                        let at = self.seen.get(&other).copied().unwrap_or(t);
                        self.leave(other, at, true, false, out);
                        self.cur.insert(other, 0);
                    }
                }
                self.running_on.insert(pid, cpu);
                out.push(Switch {
                    ts: t,
                    cpu,
                    change: Change::In,
                    pid,
                    inferred,
                    recorded_out: false,
                });
            }
            self.cur.insert(cpu, pid);
            self.see(cpu, t);
        }

        /// Feeds one event (in file order); appends the switches it implies.
        fn feed(&mut self, ev: &Event, out: &mut Vec<Switch>) {
            let (cpu, ts) = (ev.cpu, ev.ts_ns);
            let ctx = match &ev.kind {
                Kind::Switch { prev_pid, .. } => *prev_pid,
                _ => ev.pid,
            };
            if let Some(&cur) = self.cur.get(&cpu) {
                if cur != ctx {
                    let t_out = self.seen.get(&cpu).copied().unwrap_or(ts);
                    self.leave(cpu, t_out, true, false, out);
                    let t_in = if ctx != 0 {
                        t_out
                            .max(self.last_out.get(&ctx).copied().unwrap_or(t_out))
                            .max(self.last_wake.get(&ctx).copied().unwrap_or(t_out))
                            .min(ts)
                    } else {
                        t_out
                    };
                    self.enter(cpu, ctx, t_in, true, out);
                }
            }
            match &ev.kind {
                Kind::Switch { next_pid, .. } => {
                    self.leave(cpu, ts, false, true, out);
                    self.enter(cpu, *next_pid, ts, false, out);
                }
                other => {
                    if let Kind::Wakeup { event, pid, .. } = other {
                        if event != "sched_waking" {
                            self.last_wake.insert(*pid, ts);
                        }
                    }
                    if self.cur.contains_key(&cpu) {
                        self.see(cpu, ts);
                    }
                }
            }
        }
    }

    /// Random events on a few CPUs and tasks (switches, wakeups of the
    /// three kinds, others; times mostly rising, some stepping back)
    /// give the same switches, inferred ones included, and the same
    /// watermark as the reference, event after event.
    #[test]
    fn switches_are_the_references() {
        for seed in 0..40u64 {
            let (mut c, mut r) = (Cpus::new(), Reference::default());
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let mut t = 1_000i64;
            for line in 0..5_000u64 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let pick = |shift: u32, n: u64| ((x >> shift) % n) as i32;
                t += i64::from(pick(8, 50)) - 5;
                let (pid, other) = (pick(20, 7), pick(28, 7));
                let kind = match pick(36, 6) {
                    0 | 1 => Kind::Switch {
                        prev_comm: Name::default(),
                        prev_pid: if pick(44, 4) == 0 { other } else { pid },
                        prev_state: "S".into(),
                        next_comm: Name::default(),
                        next_pid: pick(48, 7),
                    },
                    2 => Kind::Wakeup {
                        event: ["sched_wakeup", "sched_waking", "sched_wakeup_new"]
                            [pick(52, 3) as usize]
                            .into(),
                        comm: Name::default(),
                        pid: other,
                    },
                    _ => Kind::Other("irq".into()),
                };
                let ev = Event {
                    line,
                    pid,
                    // Three CPUs by index, one beyond them (in the map).
                    cpu: match pick(56, 4) {
                        3 => super::CpuTable::DENSE + 904,
                        n => n as u32,
                    },
                    ts_ns: t,
                    kind,
                    ..Event::default()
                };
                a.clear();
                b.clear();
                c.feed(&ev, &mut a);
                r.feed(&ev, &mut b);
                assert_eq!(a, b, "seed {seed}, event {line}");
                assert_eq!(c.watermark(), r.watermark(), "seed {seed}, event {line}");
            }
        }
    }

    /// The kept least is always the least of the CPUs' times, whatever
    /// order they move in (times up, times back, ties, new CPUs): on a
    /// few CPUs (looked at one by one) and on many (kept in a heap), by
    /// index and in the map, at random and in turn.
    #[test]
    fn the_watermark_is_the_least_cpu_time() {
        for (n, in_turn) in [(9u64, false), (300, false), (300, true)] {
            let mut c = Cpus::new();
            assert_eq!(c.watermark(), None);
            let mut x: u64 = 12345;
            for i in 0..20_000u64 {
                // A small linear congruential sequence: deterministic.
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Two thirds by index, the rest beyond, in the map.
                let k = if in_turn { i % n } else { (x >> 33) % n };
                let cpu = match k {
                    k if k < n * 2 / 3 => k as u32,
                    k => super::CpuTable::DENSE - 7 + k as u32 * 3,
                };
                // In turn, times go up (each CPU seen again is the least,
                // the case a scan of every CPU made quadratic), now and
                // then stepping back up to twice round the CPUs.
                let t = if in_turn {
                    let back = if (x >> 40).is_multiple_of(8) {
                        (x >> 44) % 600
                    } else {
                        0
                    };
                    i as i64 - back as i64
                } else {
                    ((x >> 20) % 50) as i64 - 5
                };
                let old = c.cpus.insert(cpu, super::Cpu { cur: 0, seen: t });
                c.seen(cpu, old, t);
                if (x >> 60).is_multiple_of(2) {
                    let want = c.cpus.iter().map(|(_, u)| u.seen).min();
                    assert_eq!(c.watermark(), want, "{n} CPUs, event {i}");
                }
            }
            assert!(c.floors.len() <= 2 * c.cpus.len() + 64);
        }
    }
}
