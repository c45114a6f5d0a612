//! Kernel scheduler traces as today's tools print them (ftrace text,
//! `trace-cmd report`, `perf script`) → one "OS state" row per task, like
//! the thesis' `.os` row but richer: `running` on a CPU, `runnable` (woken
//! or preempted, waiting for a CPU), `sleeping` (interruptible) or
//! `blocked` (any other state left in, and switches the kernel did not
//! record). Missing switches are reconstructed (`sched.md`).
//!
//! The trace clock counts from boot; an `integrador_epoch=` marker line
//! (docs/formats.md §6), `--boot-epoch` or the hierarchy's `[os]
//! boot_epoch` puts it on the wall clock.

use super::os::OsConfig;
use crate::clock::markers::Markers;
use crate::error::{Error, Result};
use crate::hierarchy::Role;
use crate::model::{ContainerId, Op, TypeId, ValueId};
use crate::order::Sorted;
use crate::registry::Registry;
use crate::source::{Converted, Converter, SourceStats, Timeline};
use crate::timeline::Clock;
use integrador_sched::pids::Pids;
use integrador_sched::switches::{Change, Cpus, Switch};
use integrador_sched::text::{kernel_state, Event, Kind, Name, TextReader};
use integrador_sched::Format;
// foldhash: pass 1's tasks, the exiting set. (Rows and names, looked up
// per event, are found by index: Pids.)
use foldhash::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How far behind the newest event the quietest CPU may hold the output:
/// a CPU with no event for longer (offline, or one task running without a
/// scheduler event) would otherwise keep the whole trace in memory.
const MAX_LAG_NS: i64 = 5_000_000_000;

mod dat;
mod kind;
mod scan;

pub use kind::KernelKind;
use scan::{header_host, Scan, Task, MARKER};

/// How a trace's clock is placed on the wall clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// From a marker line: offset (ns) = epoch − trace time.
    Marker(i64),
    /// From two markers or more (docs/formats.md §6): the line through
    /// them, its drift applied only when it moves the clock across the
    /// markers by more than their uncertainty.
    Markers(Markers),
    /// From `--boot-epoch` or the hierarchy: the epoch of trace time 0.
    BootEpoch(i64),
    /// None: times stay boot-relative.
    None,
}

impl Anchor {
    /// The anchor of a trace with `markers`, else `boot_epoch`.
    pub(super) fn of(markers: &[(i64, i64)], boot_epoch: Option<i64>) -> Anchor {
        if let Some(m) = Markers::fit(markers) {
            return Anchor::Markers(m);
        }
        match markers.first() {
            Some(&(t, e)) => Anchor::Marker(e - t),
            _ => match boot_epoch {
                Some(b) => Anchor::BootEpoch(b),
                None => Anchor::None,
            },
        }
    }

    /// Declares the trace's lane: its clock placed by the anchor, then
    /// corrected as its host's.
    fn lane(self, timeline: &mut Timeline, clock: Clock) {
        let offset = match self {
            Anchor::Markers(m) if m.drift => match timeline.drifting_lane(m.first, m.last, clock) {
                Some(_) => return,
                None => m.offset,
            },
            Anchor::Markers(m) => m.offset,
            Anchor::Marker(o) | Anchor::BootEpoch(o) => o,
            Anchor::None => 0,
        };
        timeline.lane(offset, clock);
    }

    /// The summary's words for it.
    fn note(self) -> String {
        match self {
            Anchor::Marker(o) => format!(
                "trace clock placed by its {MARKER} marker: boot at {}",
                crate::time::seconds(o)
            ),
            Anchor::Markers(m) => {
                let (ppm, moved) = m.drift_ppm();
                let span = m.last.0 - m.first.0;
                let each = match m.count {
                    2 => format!(
                        "± {} each (two markers say nothing of their own scatter)",
                        crate::time::format_duration(m.band)
                    ),
                    _ => format!(
                        "± {} (the farthest from their line)",
                        crate::time::format_duration(m.band)
                    ),
                };
                let uncertain = 2.0 * m.band as f64 / span as f64 * 1e6;
                if m.drift {
                    format!(
                        "trace clock placed by its {} {MARKER} markers over {}: boot at {} {each}, drift {ppm:+.3} ppm corrected (± {uncertain:.3} ppm)",
                        m.count,
                        crate::time::format_duration(span),
                        crate::time::seconds(m.first.1 - m.first.0),
                    )
                } else {
                    format!(
                        "trace clock placed by its {} {MARKER} markers over {}: boot at {} {each}; drift {ppm:+.3} ppm not applied: it moves the clock {} across them, less than the markers' uncertainty (± {uncertain:.3} ppm)",
                        m.count,
                        crate::time::format_duration(span),
                        crate::time::seconds(m.offset),
                        crate::time::format_duration(moved.saturating_abs()),
                    )
                }
            }
            Anchor::BootEpoch(o) => format!(
                "trace clock placed by the boot epoch {}",
                crate::time::seconds(o)
            ),
            Anchor::None => "times are since boot (no marker, no --boot-epoch)".into(),
        }
    }
}

/// What a kernel trace file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Text of one of the tools.
    Text(Format),
    /// trace-cmd's binary trace.dat.
    Dat,
}

/// Where a trace goes: its machine and clock, and what decided them.
pub struct Placement {
    /// The machine's host name.
    pub host: String,
    /// How the host was found, for the summary.
    pub how: String,
    /// How the clock is placed.
    pub anchor: Anchor,
}

/// One task's row.
#[derive(Clone, Copy)]
struct Row {
    container: ContainerId,
    ty: TypeId,
    running: ValueId,
    runnable: ValueId,
    sleeping: ValueId,
    blocked: ValueId,
    on_cpu: bool,
}

/// An op as staged: 16 bytes, where an [`Op`] takes 56 (for an arrow's
/// fields), so a staged entry is half the size. The staged ops are the
/// seconds of trace a quiet CPU holds back (12,000 on average over
/// 100 MB of ftrace, more than the core's cache), and each is written
/// and read again once.
#[derive(Debug, Clone, Copy)]
enum Staged {
    Set(ContainerId, TypeId, ValueId),
    Pop(ContainerId, TypeId),
    Event(ContainerId, TypeId, ValueId),
}

impl Staged {
    fn op(self) -> Op {
        match self {
            Staged::Set(container, ty, value) => Op::SetState {
                container,
                ty,
                value,
            },
            Staged::Pop(container, ty) => Op::PopState { container, ty },
            Staged::Event(container, ty, value) => Op::NewEvent {
                container,
                ty,
                value,
            },
        }
    }
}

/// Converts one kernel text trace.
pub struct SchedSource {
    reader: dat::Events,
    /// Where a reader on this thread puts the event it reads (a decoding
    /// thread's events are read where they lie in their batch).
    scratch: Event,
    conv: Conv,
}

/// What converting a kernel trace keeps, apart from its reader: the event
/// read is borrowed from the reader while these change.
struct Conv {
    path: PathBuf,
    format: Format,
    cpus: Cpus,
    switches: Vec<Switch>,
    /// Ops waiting until no inferred switch can come before them:
    /// (time, sequence, line, op).
    staged: Sorted<(i64, u64), (u64, Staged)>,
    seq: u64,
    machine: ContainerId,
    rows: Pids<Row>,
    /// Each task's thread group and name (pass 1).
    tasks: HashMap<i32, Task>,
    /// Tasks that exited, to end their rows at their last switch.
    exiting: HashSet<i32>,
    /// Each task's name as its events last gave it: a change (exec,
    /// pthread_setname_np) is shown as a point event on its row.
    names: Pids<Name>,
    inferred: (u64, u64),
    /// Everything up to here (trace clock) was handed on.
    released: i64,
    /// Inferred switches older than `released`, placed at it.
    late: u64,
    newest: i64,
    done: bool,
    /// The hierarchy's `[os]` section.
    os: Arc<OsConfig>,
}

/// What opening a trace found about its clock.
pub struct Opened {
    /// The source.
    pub source: Converted<SchedSource>,
    /// How its clock was placed.
    pub anchor: Anchor,
}

impl SchedSource {
    /// Opens a text trace of `format`, placed as `placement` says; `scan`
    /// is its pass 1.
    fn open(
        path: &Path,
        (input, placement, scan): (Input, &Placement, Scan),
        (window, os): (i64, &Arc<OsConfig>),
        reg: &mut Registry,
        clock: Clock,
    ) -> Result<Converted<SchedSource>> {
        reg.required_level(Role::Process, &format!("{}: kernel traces", path.display()))?;
        let host = &placement.host;
        let machine = reg.machine(host, None);
        let (reader, format, what) = match input {
            Input::Text(format)
                if crate::input::threadable(path) && crate::prefetch::claim_busy() =>
            {
                (
                    dat::spawn_text(path, format),
                    format,
                    format!("{format:?} text"),
                )
            }
            Input::Text(format) => {
                let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
                let r = TextReader::new(file, format).without_task_names();
                (
                    dat::Events::Text(Box::new(r)),
                    format,
                    format!("{format:?} text"),
                )
            }
            Input::Dat => {
                let d = dat::open(path)?;
                let what = format!("trace.dat v{}", d.info().version);
                // Its states are the kernel's letters, as ftrace prints.
                (dat::Events::Dat(Box::new(d)), Format::Ftrace, what)
            }
        };
        let mut notes = vec![format!(
            "{what} of host {host} ({}); {}",
            placement.how,
            placement.anchor.note()
        )];
        if !scan.has_tgid {
            notes.push("no thread-group ids: each thread is its own Process (capture with the TGID column: `echo 1 > /sys/kernel/tracing/options/record-tgid`, or `perf script -F +pid`)".into());
        }
        if format == Format::Perf {
            notes.push("perf records fewer events than ftrace (no wakeups unless recorded, tasks that exit shown as -1)".into());
        }
        let stats = SourceStats {
            kind: "os",
            path: path.to_path_buf(),
            clock_host: Some(host.clone()),
            notes,
            ..SourceStats::default()
        };
        let conv = Conv {
            path: path.to_path_buf(),
            format,
            cpus: Cpus::new(),
            switches: Vec::new(),
            staged: Sorted::default(),
            seq: 0,
            machine,
            rows: Pids::default(),
            tasks: scan.tasks,
            exiting: HashSet::default(),
            names: Pids::default(),
            inferred: (0, 0),
            released: i64::MIN,
            late: 0,
            newest: i64::MIN,
            done: false,
            os: Arc::clone(os),
        };
        let source = SchedSource {
            reader,
            scratch: Event::default(),
            conv,
        };
        let mut timeline = Timeline::lanes(window, stats);
        placement.anchor.lane(&mut timeline, clock);
        // `release` hands on in time order: what would step back behind
        // it is placed at it (`stage`).
        timeline.ordered();
        Ok(Converted::new(source, timeline))
    }
}

impl Conv {
    /// The container of task `pid`: a Thread of its process's Process
    /// when the trace gives its thread group, else its own Process; named
    /// `<pid> <comm>` unless another source named it (an MPI rank).
    fn container(&self, reg: &mut Registry, pid: i32) -> ContainerId {
        let task = self.tasks.get(&pid);
        let tgid = task.and_then(|t| t.tgid).filter(|&g| g > 0 && g != pid);
        let c = match tgid {
            Some(g) => {
                let c = reg.thread(self.machine, g as u32, pid as u32);
                if let (Some(p), Some(t)) =
                    (reg.process(self.machine, g as u32), self.tasks.get(&g))
                {
                    name_task(reg, p, g, &t.comm);
                }
                c
            }
            None => reg.process(self.machine, pid as u32),
        };
        let Some(c) = c else {
            return self.machine;
        };
        if let Some(t) = task {
            name_task(reg, c, pid, &t.comm);
        }
        c
    }

    fn row(&mut self, reg: &mut Registry, pid: i32) -> Row {
        self.row_on(reg, pid, None)
    }

    /// Task `pid`'s row, first marked on or off a CPU when `on_cpu` says
    /// (one lookup for both).
    #[inline]
    fn row_on(&mut self, reg: &mut Registry, pid: i32, on_cpu: Option<bool>) -> Row {
        if let Some(r) = self.rows.get_mut(pid) {
            if let Some(on) = on_cpu {
                r.on_cpu = on;
            }
            return *r;
        }
        self.new_row(reg, pid, on_cpu)
    }

    /// [`Conv::row_on`] for a task met for the first time.
    #[cold]
    #[inline(never)]
    fn new_row(&mut self, reg: &mut Registry, pid: i32, on_cpu: Option<bool>) -> Row {
        let container = self.container(reg, pid);
        let os = &self.os;
        let ty = reg.state_type(reg.container(container).ty, &os.state_name);
        let r = Row {
            container,
            ty,
            running: reg.value_of(ty, "running", &os.running),
            runnable: reg.value_of(ty, "runnable", &os.runnable),
            sleeping: reg.value_of(ty, "sleeping", &os.sleeping),
            blocked: reg.value_of(ty, "blocked", &os.blocked),
            on_cpu: on_cpu.unwrap_or(false),
        };
        self.rows.insert(pid, r);
        r
    }

    fn stage(&mut self, line: u64, ts: i64, op: Staged) {
        let ts = if ts < self.released {
            self.late += 1;
            self.released
        } else {
            ts
        };
        self.seq += 1;
        self.staged.push((ts, self.seq), (line, op));
    }

    fn set(
        &mut self,
        reg: &mut Registry,
        line: u64,
        ts: i64,
        pid: i32,
        pick: fn(&Row) -> ValueId,
        on_cpu: bool,
    ) {
        if pid <= 0 {
            return;
        }
        let r = self.row_on(reg, pid, Some(on_cpu));
        let op = Staged::Set(r.container, r.ty, pick(&r));
        self.stage(line, ts, op);
    }

    fn event(&mut self, reg: &mut Registry, ev: &Event, kind: &Kind) {
        self.switches.clear();
        self.cpus.feed_kind(ev, kind, &mut self.switches);
        let switches = std::mem::take(&mut self.switches);
        for s in &switches {
            match s.change {
                Change::In => {
                    self.inferred.0 += u64::from(s.inferred);
                    self.set(reg, ev.line, s.ts, s.pid, |r| r.running, true);
                }
                Change::Out => {
                    self.inferred.1 += u64::from(s.inferred);
                    let state = match (kind, s.recorded_out) {
                        (Kind::Switch { prev_state, .. }, true) => prev_state.as_str(),
                        _ => "",
                    };
                    let state = match self.format {
                        Format::TraceCmd => std::borrow::Cow::Owned(kernel_state(state)),
                        _ => std::borrow::Cow::Borrowed(state),
                    };
                    // (Nearly always empty: no hash then.)
                    if !self.exiting.is_empty() && self.exiting.contains(&s.pid) {
                        // Its switch after sched_process_exit, whatever
                        // state the tool printed.
                        self.end(reg, ev.line, s.ts, s.pid);
                        continue;
                    }
                    let pick: fn(&Row) -> ValueId = match state.as_ref() {
                        "R" | "R+" => |r| r.runnable,
                        "S" => |r| r.sleeping,
                        // Dead (zombie or gone): the task's last switch.
                        "Z" | "X" => {
                            self.end(reg, ev.line, s.ts, s.pid);
                            continue;
                        }
                        _ => |r| r.blocked,
                    };
                    self.set(reg, ev.line, s.ts, s.pid, pick, false);
                }
            }
        }
        self.switches = switches;
        match kind {
            Kind::Wakeup { event, pid, .. } => {
                let off_cpu = self.rows.get(*pid).is_none_or(|r| !r.on_cpu);
                if event != "sched_waking" && off_cpu {
                    self.set(reg, ev.line, ev.ts_ns, *pid, |r| r.runnable, false);
                }
            }
            Kind::Fork { pid, .. } => self.point(reg, ev, *pid, "fork"),
            Kind::Exit { pid } => {
                self.exiting.insert(*pid);
                self.point(reg, ev, *pid, "exit");
            }
            _ => {}
        }
    }

    /// A task whose switches carry a new name: `comm <name>` on its row
    /// (the container keeps the latest name, the event says when it
    /// changed).
    fn renamed(&mut self, reg: &mut Registry, ev: &Event, kind: &Kind) {
        // The switch's own fields hold the name at that moment (the
        // context column is the name at the end: ftrace prints its cache).
        let Kind::Switch {
            prev_comm,
            prev_pid,
            next_comm,
            next_pid,
            ..
        } = kind
        else {
            return;
        };
        for (pid, comm) in [(*prev_pid, prev_comm), (*next_pid, next_comm)] {
            if pid <= 0 {
                continue;
            }
            match self.names.get(pid) {
                Some(old) if old == comm => {}
                Some(_) => {
                    self.names.insert(pid, comm.clone());
                    let what = format!("comm {comm}");
                    self.point(reg, ev, pid, &what);
                }
                None => {
                    self.names.insert(pid, comm.clone());
                }
            }
        }
    }

    /// A point event (`fork`, `exit`) on task `pid`'s row.
    fn point(&mut self, reg: &mut Registry, ev: &Event, pid: i32, what: &str) {
        if pid <= 0 {
            return;
        }
        let r = self.row(reg, pid);
        let ty = reg.event_type(reg.container(r.container).ty, "OS event");
        let value = reg.value_of(ty, what, &crate::hierarchy::Display::default());
        let op = Staged::Event(r.container, ty, value);
        self.stage(ev.line, ev.ts_ns, op);
    }

    /// A task's last switch: its row ends (no state after it).
    fn end(&mut self, reg: &mut Registry, line: u64, ts: i64, pid: i32) {
        if pid <= 0 {
            return;
        }
        let r = self.row_on(reg, pid, Some(false));
        self.exiting.remove(&pid);
        let op = Staged::Pop(r.container, r.ty);
        self.stage(line, ts, op);
    }

    /// Hands the timeline every staged op up to `upto` (all with `None`).
    fn release(&mut self, out: &mut Timeline, upto: Option<i64>) -> Result<()> {
        if let Some(u) = upto {
            self.released = self.released.max(u);
        }
        while let Some((t, _)) = self.staged.first() {
            if upto.is_some_and(|u| t > u) {
                break;
            }
            let Some(((t, _), (line, op))) = self.staged.pop() else {
                break;
            };
            out.push(line, t, op.op())?;
        }
        Ok(())
    }
}

/// Names a task's container `<pid> <comm>` while it has its bare number
/// (another source's name, such as an MPI rank's, is kept).
fn name_task(reg: &mut Registry, c: ContainerId, pid: i32, comm: &str) {
    if comm.is_empty() || reg.container(c).name.as_ref() != pid.to_string() {
        return;
    }
    reg.rename(c, &format!("{pid} {comm}"));
}

impl Converter for SchedSource {
    fn pull(&mut self, reg: &mut Registry, out: &mut Timeline) -> Result<bool> {
        let c = &mut self.conv;
        if c.done {
            return Ok(false);
        }
        let Some((ev, kind)) = self.reader.next_ref(&c.path, &mut self.scratch)? else {
            c.release(out, None)?;
            c.done = true;
            out.stats.end_of_text(
                &c.path,
                self.reader.cut(),
                "no scheduler event in this trace",
            );
            let (i, o) = c.inferred;
            out.stats.notes.push(format!(
                "{i} switch(es) onto and {o} off a CPU inferred (not recorded by the kernel)"
            ));
            if c.late > 0 {
                out.stats.notes.push(format!(
                    "{} inferred change(s) placed up to {} s late (a CPU without events for longer)",
                    c.late,
                    MAX_LAG_NS / 1_000_000_000
                ));
            }
            let n = self.reader.lost();
            if n > 0 {
                out.stats
                    .notes
                    .push(format!("the trace reports {n} lost event(s)"));
                out.stats.warnings += 1;
            }
            return Ok(false);
        };
        c.newest = c.newest.max(ev.ts_ns);
        c.renamed(reg, ev, kind);
        c.event(reg, ev, kind);
        let upto = c
            .cpus
            .watermark()
            .map(|w| w.max(c.newest.saturating_sub(MAX_LAG_NS)));
        c.release(out, upto)?;
        Ok(true)
    }
}
