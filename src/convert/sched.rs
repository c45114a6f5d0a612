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
use crate::error::{Error, Result};
use crate::hierarchy::Role;
use crate::model::{ContainerId, Op, TypeId, ValueId};
use crate::order::MinQueue;
use crate::registry::Registry;
use crate::source::{Converted, Converter, SourceStats, Timeline};
use crate::timeline::Clock;
use integrador_sched::switches::{Change, Cpus, Switch};
use integrador_sched::text::{kernel_state, Event, Kind, TextReader};
use integrador_sched::Format;
use std::collections::HashMap;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How far behind the newest event the quietest CPU may hold the output:
/// a CPU with no event for longer (offline, or one task running without a
/// scheduler event) would otherwise keep the whole trace in memory.
const MAX_LAG_NS: i64 = 5_000_000_000;

/// The marker text (docs/formats.md §6).
const MARKER: &str = "integrador_epoch=";

/// How a trace's clock is placed on the wall clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// From a marker line: offset (ns) = epoch − trace time.
    Marker(i64),
    /// From `--boot-epoch` or the hierarchy: the epoch of trace time 0.
    BootEpoch(i64),
    /// None: times stay boot-relative.
    None,
}

impl Anchor {
    fn offset(self) -> i64 {
        match self {
            Anchor::Marker(o) | Anchor::BootEpoch(o) => o,
            Anchor::None => 0,
        }
    }
}

/// The offset of the first `integrador_epoch=` marker of a trace, if any
/// (markers are written at the start of a capture, so the scan is short).
fn find_marker(path: &Path, format: Format) -> Result<Option<i64>> {
    // Most traces have no marker (perf never does): look for its text
    // before parsing the whole trace a second time.
    if !contains_marker(path)? {
        return Ok(None);
    }
    let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
    let mut r = TextReader::new(
        BufReader::with_capacity(crate::input::buffer_size(path), file),
        format,
    );
    while let Some(ev) = r.next_event().map_err(|e| Error::in_file(path, e))? {
        if let Kind::Marker(text) = &ev.kind {
            if let Some(rest) = text.split(MARKER).nth(1) {
                let num = rest.split_whitespace().next().unwrap_or("");
                let Some(epoch) = crate::clock::parse_epoch_ns(num.as_bytes()) else {
                    return Err(Error::in_file(
                        path,
                        format!(
                            "line {}: marker `{MARKER}{num}`: expected epoch seconds",
                            ev.line
                        ),
                    ));
                };
                return Ok(Some(epoch - ev.ts_ns));
            }
        }
    }
    Ok(None)
}

/// Whether the marker text may appear in the file: a byte scan of a
/// regular file, a block at a time, keeping the marker's length of
/// overlap; `true` for anything else.
fn contains_marker(path: &Path) -> Result<bool> {
    use std::io::Read;
    // Only a regular file has an end to scan to; anything else (a device,
    // a pipe) goes to the parser, whose line cap bounds it.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(true);
    }
    let mut file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
    let needle = MARKER.as_bytes();
    let finder = memchr::memmem::Finder::new(needle);
    let mut buf = vec![0u8; 1 << 16];
    let mut kept = 0;
    loop {
        let n = file
            .read(&mut buf[kept..])
            .map_err(|e| Error::in_file(path, e))?;
        if n == 0 {
            return Ok(false);
        }
        let end = kept + n;
        if finder.find(&buf[..end]).is_some() {
            return Ok(true);
        }
        kept = (needle.len() - 1).min(end);
        buf.copy_within(end - kept..end, 0);
    }
}

/// The host a text trace describes: a `# host <name>` line, else the
/// hierarchy's `[os] host`, else the file stem.
fn host_of(path: &Path, configured: Option<&str>) -> Result<String> {
    let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
    let mut r = BufReader::new(file);
    let mut raw = Vec::new();
    for _ in 0..64 {
        let end = integrador_lines::read_line(&mut r, &mut raw, integrador_lines::MAX_LINE)
            .map_err(|e| Error::in_file(path, e))?;
        if end.is_none() {
            break;
        }
        let line = String::from_utf8_lossy(&raw);
        if let Some(h) = line.trim().strip_prefix("# host ") {
            return Ok(h.trim().to_string());
        }
    }
    Ok(configured
        .map(str::to_string)
        .unwrap_or_else(|| crate::convert::os::host_of(path, None)))
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

/// Converts one kernel text trace.
pub struct SchedSource {
    path: PathBuf,
    format: Format,
    reader: TextReader<BufReader<crate::input::Reader>>,
    cpus: Cpus,
    switches: Vec<Switch>,
    /// Ops waiting until no inferred switch can come before them:
    /// (time, sequence, line, op).
    staged: MinQueue<(i64, u64), (u64, Op)>,
    seq: u64,
    machine: ContainerId,
    rows: HashMap<i32, Row>,
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
    /// Opens a text trace of `format`.
    pub fn open(
        path: &Path,
        format: Format,
        boot_epoch: Option<i64>,
        (window, os): (i64, &Arc<OsConfig>),
        reg: &mut Registry,
        clock_of: &mut dyn FnMut(&str) -> Option<Clock>,
    ) -> Result<Opened> {
        reg.required_level(Role::Process, &format!("{}: kernel traces", path.display()))?;
        let anchor = match find_marker(path, format)? {
            Some(o) => Anchor::Marker(o),
            None => match boot_epoch.or(os.boot_epoch) {
                Some(b) => Anchor::BootEpoch(b),
                None => Anchor::None,
            },
        };
        let host = host_of(path, os.host.as_deref())?;
        let machine = reg.machine(&host, None);
        let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
        let reader = TextReader::new(
            BufReader::with_capacity(crate::input::buffer_size(path), file),
            format,
        );
        let mut notes = vec![match anchor {
            Anchor::Marker(o) => format!(
                "{format:?} text of host {host}; trace clock placed by its {MARKER} marker: boot at {}",
                crate::time::seconds(o)
            ),
            Anchor::BootEpoch(o) => format!(
                "{format:?} text of host {host}; trace clock placed by the boot epoch {}",
                crate::time::seconds(o)
            ),
            Anchor::None => format!("{format:?} text of host {host}; times are since boot (no marker, no --boot-epoch)"),
        }];
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
        let source = SchedSource {
            path: path.to_path_buf(),
            format,
            reader,
            cpus: Cpus::new(),
            switches: Vec::new(),
            staged: MinQueue::default(),
            seq: 0,
            machine,
            rows: HashMap::new(),
            inferred: (0, 0),
            released: i64::MIN,
            late: 0,
            newest: i64::MIN,
            done: false,
            os: Arc::clone(os),
        };
        // The trace clock is placed on the wall clock by the anchor, then
        // corrected as the host's.
        let mut timeline = Timeline::lanes(window, stats);
        timeline.lane(anchor.offset(), clock_of(&host).unwrap_or(Clock::IDENTITY));
        Ok(Opened {
            source: Converted::new(source, timeline),
            anchor,
        })
    }

    fn row(&mut self, reg: &mut Registry, pid: i32) -> Row {
        if let Some(&r) = self.rows.get(&pid) {
            return r;
        }
        let container = reg
            .process(self.machine, pid as u32)
            .unwrap_or(self.machine);
        let os = &self.os;
        let ty = reg.state_type(reg.container(container).ty, &os.state_name);
        let r = Row {
            container,
            ty,
            running: reg.value_of(ty, "running", &os.running),
            runnable: reg.value_of(ty, "runnable", &os.runnable),
            sleeping: reg.value_of(ty, "sleeping", &os.sleeping),
            blocked: reg.value_of(ty, "blocked", &os.blocked),
            on_cpu: false,
        };
        self.rows.insert(pid, r);
        r
    }

    fn stage(&mut self, line: u64, ts: i64, op: Op) {
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
        let mut r = self.row(reg, pid);
        r.on_cpu = on_cpu;
        self.rows.insert(pid, r);
        let op = Op::SetState {
            container: r.container,
            ty: r.ty,
            value: pick(&r),
        };
        self.stage(line, ts, op);
    }

    fn event(&mut self, reg: &mut Registry, ev: &Event) {
        self.switches.clear();
        self.cpus.feed(ev, &mut self.switches);
        let switches = std::mem::take(&mut self.switches);
        for s in &switches {
            match s.change {
                Change::In => {
                    self.inferred.0 += u64::from(s.inferred);
                    self.set(reg, ev.line, s.ts, s.pid, |r| r.running, true);
                }
                Change::Out => {
                    self.inferred.1 += u64::from(s.inferred);
                    let state = match (&s.state, self.format) {
                        (Some(st), Format::TraceCmd) => kernel_state(st),
                        (Some(st), _) => st.clone(),
                        (None, _) => String::new(),
                    };
                    let pick: fn(&Row) -> ValueId = match state.as_str() {
                        "R" | "R+" => |r| r.runnable,
                        "S" => |r| r.sleeping,
                        _ => |r| r.blocked,
                    };
                    self.set(reg, ev.line, s.ts, s.pid, pick, false);
                }
            }
        }
        self.switches = switches;
        if let Kind::Wakeup { event, pid, .. } = &ev.kind {
            let off_cpu = self.rows.get(pid).is_none_or(|r| !r.on_cpu);
            if event != "sched_waking" && off_cpu {
                self.set(reg, ev.line, ev.ts_ns, *pid, |r| r.runnable, false);
            }
        }
    }

    /// Hands the timeline every staged op up to `upto` (all with `None`).
    fn release(&mut self, out: &mut Timeline, upto: Option<i64>) -> Result<()> {
        if let Some(u) = upto {
            self.released = self.released.max(u);
        }
        while let Some((&(t, _), _)) = self.staged.peek() {
            if upto.is_some_and(|u| t > u) {
                break;
            }
            let Some(((t, _), (line, op))) = self.staged.pop() else {
                break;
            };
            out.push(line, t, op)?;
        }
        Ok(())
    }
}

impl Converter for SchedSource {
    fn pull(&mut self, reg: &mut Registry, out: &mut Timeline) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        let Some(ev) = self
            .reader
            .next_event()
            .map_err(|e| Error::in_file(&self.path, e))?
        else {
            self.release(out, None)?;
            self.done = true;
            out.stats.end_of_text(
                &self.path,
                self.reader.cut,
                "no scheduler event in this trace",
            );
            let (i, o) = self.inferred;
            out.stats.notes.push(format!(
                "{i} switch(es) onto and {o} off a CPU inferred (not recorded by the kernel)"
            ));
            if self.late > 0 {
                out.stats.notes.push(format!(
                    "{} inferred change(s) placed up to {} s late (a CPU without events for longer)",
                    self.late,
                    MAX_LAG_NS / 1_000_000_000
                ));
            }
            if !self.reader.lost.is_empty() {
                let n: u64 = self.reader.lost.iter().map(|l| l.1).sum();
                out.stats
                    .notes
                    .push(format!("the trace reports {n} lost event(s)"));
                out.stats.warnings += 1;
            }
            return Ok(false);
        };
        self.newest = self.newest.max(ev.ts_ns);
        self.event(reg, &ev);
        let upto = self
            .cpus
            .watermark()
            .map(|w| w.max(self.newest.saturating_sub(MAX_LAG_NS)));
        self.release(out, upto)?;
        Ok(true)
    }
}

/// `-os`: kernel scheduler traces, one source per file: the thesis' `.os`
/// recordings and ftrace, trace-cmd report and perf script text, told
/// apart by content unless `--os-format` says.
#[derive(Default)]
pub struct KernelKind {
    files: Vec<PathBuf>,
    format: Option<Format>,
    boot_epoch: Option<i64>,
    os: Arc<OsConfig>,
}

/// `--os-format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FormatArg {
    /// The thesis' .os recording
    Os,
    /// tracefs `trace` text
    Ftrace,
    /// `trace-cmd report` text
    TraceCmd,
    /// `perf script` text
    Perf,
}

impl super::SourceKind for KernelKind {
    fn option(&self) -> &'static str {
        "-os"
    }

    fn section(&self) -> Option<&'static str> {
        Some("os")
    }

    fn configure(&mut self, text: &crate::hierarchy::Text<'_>) -> Result<Vec<super::Named>> {
        self.os = Arc::new(OsConfig::read(text)?);
        Ok(Vec::new())
    }

    fn args(&self) -> Vec<clap::Arg> {
        const H: &str = "Kernel traces";
        vec![
            super::files_arg(
                "os",
                "FILES",
                "Kernel scheduler traces: .os, ftrace text, trace-cmd report, perf script; also -os",
                H,
            ),
            super::value_arg("os-format", "FORMAT", "Override content detection of -os files", H)
                .value_parser(clap::builder::EnumValueParser::<FormatArg>::new()),
            super::value_arg(
                "boot-epoch",
                "SECONDS",
                "Boot time (epoch seconds) of boot-relative traces without a marker",
                H,
            )
            .allow_negative_numbers(true),
        ]
    }

    fn thesis_options(&self) -> &'static [&'static str] {
        &["os"]
    }

    fn take(&mut self, m: &clap::ArgMatches) -> Result<()> {
        self.files = crate::cli::expand("-os", &super::words(m, "os"))?;
        self.format = m.get_one::<FormatArg>("os-format").map(|f| match f {
            FormatArg::Os => Format::Os,
            FormatArg::Ftrace => Format::Ftrace,
            FormatArg::TraceCmd => Format::TraceCmd,
            FormatArg::Perf => Format::Perf,
        });
        self.boot_epoch = super::epoch_arg(m, "boot-epoch", "1795262171.292101")?;
        Ok(())
    }

    fn has_inputs(&self) -> bool {
        !self.files.is_empty()
    }

    fn named_files(&self) -> Vec<super::Named> {
        self.files.iter().map(|p| ("-os", p.clone())).collect()
    }

    fn list(&mut self) -> Result<Vec<PathBuf>> {
        super::refuse_directories("-os", &self.files, "*")?;
        Ok(self.files.clone())
    }

    fn open(&mut self, cx: &mut super::OpenCx<'_>) -> Result<()> {
        let window = cx.cfg.reorder_window;
        for path in &self.files {
            let format = match self.format {
                Some(f) => f,
                None => integrador_sched::detect(&super::head(path)?),
            };
            if format == Format::Os {
                let source =
                    super::os::OsSource::open(path, (window, &self.os), cx.reg, cx.clock_of)?;
                cx.sources.push(Box::new(source));
                continue;
            }
            let opened = SchedSource::open(
                path,
                format,
                self.boot_epoch,
                (window, &self.os),
                cx.reg,
                cx.clock_of,
            )?;
            if opened.anchor == Anchor::None {
                cx.boot_relative.push(Error::usage(format!(
                    "{}: the trace clock counts from boot and the other inputs are on the wall clock: give --boot-epoch EPOCH, set `boot_epoch` in the hierarchy's [os] section, or write an integrador_epoch= marker into the trace (docs/formats.md §6)",
                    path.display()
                )));
            }
            cx.sources.push(Box::new(opened.source));
        }
        Ok(())
    }
}
