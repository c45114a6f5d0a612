//! One integration run: load the hierarchy and the sync table, open every
//! source (registration of the source kinds is here), merge, write, and
//! collect what the summary reports.
//!
//! Sources are registered in a fixed order (mpi, os, then ganglia; deck
//! and pcp will take their place in the README's order), and within a kind in
//! file order: that order is the tie rule of the merge.

use crate::cli::{Config, Output};
use crate::clock::{ClockMap, SyncFit, SyncTable};
use crate::convert::{
    ganglia::RrdSource, ganglia::Setup, ganglia::TracedSetup, ganglia::TracedSource,
    ganglia::XmlSource, mpi::MpiSetup, mpi::MpiSource, os::OsSource, pcp::PcpSource,
    rastro::RastroSource, sched::Anchor, sched::SchedSource,
};
use crate::error::{Error, Result};
use crate::hierarchy::Hierarchy;
use crate::input;
use crate::merge::Merge;
use crate::model::{ContainerId, Event, Op, TypeId};
use crate::output::Target;
use crate::paje::writer::{PajeWriter, WriteStats};
use crate::registry::Registry;
use crate::source::{EventSource, SourceStats};
use std::collections::HashMap;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

/// A host whose clock a source asked for, and what the sync file said.
#[derive(Debug, Clone)]
pub struct ClockUse {
    /// Host name as the source gave it.
    pub host: String,
    /// Its line in the sync file and map, if it has one.
    pub map: Option<(String, ClockMap, usize)>,
}

/// Everything the summary reports.
#[derive(Debug)]
pub struct RunReport {
    /// Per source.
    pub sources: Vec<SourceStats>,
    /// What was written.
    pub written: WriteStats,
    /// T0 in ns.
    pub origin: i64,
    /// Host names seen and the Machine each became.
    /// The first few of them (the summary shows no more).
    pub hosts: Vec<(String, String, Option<String>)>,
    /// How many host names were seen in all.
    pub hosts_total: usize,
    /// Clocks used.
    pub clocks: Vec<ClockUse>,
    /// Sync reference host, if a sync file was given.
    pub reference: Option<String>,
    /// Warnings of the hierarchy and the unifier.
    pub warnings: Vec<String>,
    /// Where the trace went.
    pub output: Output,
}

fn open_sync(cfg: &Config, hierarchy: &Hierarchy) -> Result<Option<SyncTable>> {
    let Some(path) = &cfg.sync else {
        return Ok(None);
    };
    let file = input::open(path).map_err(|e| Error::in_file(path, e))?;
    let fit = if cfg.sync_fit {
        SyncFit::LeastSquares
    } else {
        hierarchy.sync_fit
    };
    SyncTable::from_reader(path, io::BufReader::new(file), fit).map(Some)
}

/// The start of `path` for content detection (kept for its reader when
/// the input is a pipe).
fn head(path: &Path) -> Result<Vec<u8>> {
    input::head(path, 4096).map_err(|e| Error::in_file(path, e))
}

/// Every input file of the run with the option that names it: the
/// command line's paths, the files found in Ganglia directories and the
/// files of PCP archives. The output must be none of them.
fn named_inputs<'a>(
    cfg: &'a Config,
    ganglia_files: &'a [PathBuf],
    archives: &'a [integrador_pcp::Archive],
) -> Vec<(&'static str, &'a Path)> {
    let mut out: Vec<(&'static str, &Path)> = Vec::new();
    let one = [
        ("-hierarchy", &cfg.hierarchy),
        ("-sync", &cfg.sync),
        ("-mpinodes", &cfg.mpinodes),
        ("--deck-map", &cfg.deck_map),
    ];
    for (option, p) in one {
        if let Some(p) = p {
            out.push((option, p));
        }
    }
    let lists = [
        ("-deck", &cfg.deck),
        ("-mpi", &cfg.mpi),
        ("-os", &cfg.os),
        ("-pcp", &cfg.pcp),
        ("-ganglia", &cfg.ganglia),
    ];
    for (option, paths) in lists {
        out.extend(paths.iter().map(|p| (option, p.as_path())));
    }
    out.extend(ganglia_files.iter().map(|p| ("-ganglia", p.as_path())));
    for a in archives {
        out.push(("-pcp", &a.meta));
        out.extend(a.index.iter().map(|i| ("-pcp", i.as_path())));
        out.extend(a.volumes.iter().map(|v| ("-pcp", v.path.as_path())));
    }
    out
}

/// A directory where an option reads files is advice, not a read error.
/// Only metadata is looked at: a pipe is not touched.
fn refuse_directories(cfg: &Config) -> Result<()> {
    let lists = [
        ("-deck", &cfg.deck, "*.rst"),
        ("-mpi", &cfg.mpi, "*.clog2"),
        ("-os", &cfg.os, "*"),
        ("-pcp", &cfg.pcp, "*"),
    ];
    for (option, paths, pattern) in lists {
        if let Some(dir) = paths.iter().find(|p| p.is_dir()) {
            return Err(Error::usage(format!(
                "{} (under {option}) is a directory: give the files in it, e.g. {option} '{}/{pattern}'",
                dir.display(),
                dir.display().to_string().trim_end_matches('/')
            )));
        }
    }
    Ok(())
}

/// Looks at the start of every input file before any is decoded: one that
/// is plainly another option's format gets advice (`sniff`) instead of the
/// parse error its option's reader would give.
fn sniff_inputs(inputs: &[(&'static str, &Path)]) -> Result<()> {
    for &(option, path) in inputs {
        let looked_at = ["-deck", "-mpi", "-os", "-ganglia", "-pcp", "-sync"];
        // Archive base names and Ganglia directories are no files; a
        // missing file is reported by its reader.
        if !looked_at.contains(&option) || path.is_dir() || !path.exists() {
            continue;
        }
        crate::sniff::check(option, path, &head(path)?)?;
    }
    Ok(())
}

/// The files of the `-ganglia` arguments: directories hold snapshot
/// series or gmetad's tree of RRD dumps.
fn ganglia_files(cfg: &Config) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in &cfg.ganglia {
        if path.is_dir() {
            files_below(path, &mut files)?;
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// The reorder window of a series of Ganglia XML snapshots: gmond's
/// largest standard TMAX (boottime, cpu_num: 1200 s).
const XML_WINDOW_NS: i64 = 1_200_000_000_000;

/// The files under `dir`, recursively, in name order.
fn files_below(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| Error::in_file(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_below(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "xml" || x == "traced") {
            out.push(p);
        }
    }
    Ok(())
}

/// Runs an integration. Progress goes to stderr when it is a terminal.
pub fn integrate(cfg: &Config) -> Result<RunReport> {
    // The output is settled before any input is read: a wrong -o fails at
    // once, and an input named as the output is never touched.
    let target = Target::resolve(&cfg.output)?;
    // Directories and archives are listed once, here: their files are
    // inputs the output must not be, and the sources read them below.
    cfg.refuse_missing_files()?;
    refuse_directories(cfg)?;
    let ganglia_files = ganglia_files(cfg)?;
    if let Some(p) = cfg.pcp.iter().find(|p| input::is_read_once(p)) {
        return Err(Error::in_file(
            p,
            "a PCP archive is several files (NAME.meta, NAME.0, ...) read by name: give the archive's files or base name, not a pipe",
        ));
    }
    let (archives, ignored) = crate::convert::pcp::archives(&cfg.pcp)?;
    let inputs = named_inputs(cfg, &ganglia_files, &archives);
    target.refuse_inputs(inputs.iter().copied())?;
    let _streams = input::Scope::enter(inputs.iter().map(|(_, p)| *p));
    sniff_inputs(&inputs)?;
    let input_bytes = Progress::total(&inputs);
    // Created now so that an unwritable place fails before the work; the
    // temporary file is removed on any error or ending signal.
    let sink = target.create()?;
    let partial = sink.partial_on_failure();
    let target_name = target.shown();
    let hierarchy = match &cfg.hierarchy {
        Some(p) => Hierarchy::load(p)?,
        None => Hierarchy::builtin(),
    };
    if let Some(map) = hierarchy.deck.map.as_deref() {
        target.refuse_inputs([("the hierarchy's [deck] map", map)])?;
    }
    let sync = open_sync(cfg, &hierarchy)?;
    let mut reg = Registry::new(hierarchy);
    let mut clocks: Vec<ClockUse> = Vec::new();
    // Hosts whose clock was asked for, by identity key: two names of one
    // host (node01, node01.cluster.example) are reported once.
    let mut asked = crate::identity::KeyIndex::default();
    let identity = reg.hierarchy.identity.clone();
    let mut clock_of = |host: &str| -> Option<ClockMap> {
        let sync = sync.as_ref()?;
        let found = sync.lookup(host, &identity);
        let known = identity
            .keys(host)
            .flat_map(|k| asked.get(k))
            .any(|&i| identity.same(host, &clocks[i as usize].host));
        if !known {
            let at = clocks.len() as u32;
            for k in identity.keys(host) {
                asked.insert(k.into(), at);
            }
            let map = found.map(|(m, name, lines)| (name.to_string(), m, lines));
            clocks.push(ClockUse {
                host: host.to_string(),
                map,
            });
        }
        found.map(|(m, _, _)| m)
    };

    let mut sources: Vec<Box<dyn EventSource>> = Vec::new();
    if !cfg.deck.is_empty() {
        let choice = cfg
            .deck_map
            .as_deref()
            .or(reg.hierarchy.deck.map.as_deref());
        let mut map = crate::eventmap::select(choice)?;
        for (k, d) in &reg.hierarchy.deck.values {
            map.values.insert(k.clone(), d.clone());
        }
        sources.push(Box::new(RastroSource::open(
            &cfg.deck,
            map,
            cfg.reorder_window,
            &mut reg,
            &mut clock_of,
        )?));
    }
    for path in &cfg.mpi {
        let setup = MpiSetup {
            nodes: cfg.mpinodes.as_deref(),
            start: cfg.mpi_start.or(reg.hierarchy.mpi.start),
            window: cfg.reorder_window,
        };
        sources.push(Box::new(MpiSource::open(
            path,
            setup,
            &mut reg,
            &mut clock_of,
        )?));
    }
    let mut unanchored = Vec::new();
    for path in &cfg.os {
        let format = match cfg.os_format {
            Some(f) => f,
            None => integrador_sched::detect(&head(path)?),
        };
        if format == integrador_sched::Format::Os {
            sources.push(Box::new(OsSource::open(
                path,
                cfg.reorder_window,
                &mut reg,
                &mut clock_of,
            )?));
            continue;
        }
        let opened = SchedSource::open(
            path,
            format,
            cfg.boot_epoch,
            cfg.reorder_window,
            &mut reg,
            &mut clock_of,
        )?;
        if opened.anchor == Anchor::None {
            unanchored.push(path.clone());
        }
        sources.push(Box::new(opened.source));
    }
    let mut snapshots = Vec::new();
    for path in &ganglia_files {
        let format = match cfg.ganglia_format {
            Some(f) => f,
            None => integrador_ganglia::detect(&head(path)?),
        };
        let g = &reg.hierarchy.ganglia;
        let collector = cfg
            .ganglia_collector
            .clone()
            .or(g.defaults.collector.clone());
        let setup = Setup {
            collector,
            cluster: g.defaults.cluster.clone(),
            window: cfg.reorder_window,
        };
        match format {
            integrador_ganglia::Format::Xml => snapshots.push(path.clone()),
            integrador_ganglia::Format::RrdDump => {
                sources.push(Box::new(RrdSource::open(path, setup, &reg, &mut clock_of)?));
            }
            integrador_ganglia::Format::Traced => {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let per_file = g.files.get(&name);
                let collector = per_file
                    .and_then(|f| f.collector.clone())
                    .or(setup.collector);
                let cluster = per_file.and_then(|f| f.cluster.clone()).or(setup.cluster);
                let setup = TracedSetup {
                    collector: collector.as_deref(),
                    cluster: cluster.as_deref(),
                    window: cfg.reorder_window,
                };
                sources.push(Box::new(TracedSource::open(
                    path,
                    setup,
                    &reg,
                    &mut clock_of,
                )?));
            }
        }
    }
    if !snapshots.is_empty() {
        let g = &reg.hierarchy.ganglia;
        let setup = Setup {
            collector: cfg
                .ganglia_collector
                .clone()
                .or(g.defaults.collector.clone()),
            cluster: g.defaults.cluster.clone(),
            // A snapshot reports each metric as of its TN seconds ago, up
            // to its TMAX: a new host's samples may be minutes older than
            // the last snapshot's.
            window: cfg.reorder_window.max(XML_WINDOW_NS),
        };
        sources.push(Box::new(XmlSource::open(
            snapshots,
            setup,
            &reg,
            &mut clock_of,
        )?));
    }

    for a in archives {
        sources.push(Box::new(PcpSource::open(
            a,
            cfg.pcp_raw,
            cfg.reorder_window,
            &mut reg,
            &mut clock_of,
        )?));
    }
    if !ignored.is_empty() {
        reg.warnings.push(format!(
            "-pcp: {} file(s) that belong to no archive left out (e.g. {})",
            ignored.len(),
            ignored
                .first()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        ));
    }

    if let Some(p) = unanchored.first() {
        if sources.len() > unanchored.len() {
            return Err(Error::usage(format!(
                "{}: the trace clock counts from boot and the other inputs are on the wall clock: give --boot-epoch EPOCH, set `boot_epoch` in the hierarchy's [os] section, or write an integrador_epoch= marker into the trace (docs/formats.md §6)",
                p.display()
            )));
        }
    }
    let mut merge = Merge::new(sources, &mut reg)?;
    // An empty run is an error, not a trace with a T0 in 1970.
    let Some(first) = merge.peek_time() else {
        let names: Vec<String> = merge
            .sources()
            .iter()
            .map(|s| s.stats().path.display().to_string())
            .collect();
        return Err(Error::input(format!(
            "no event in any input ({}): nothing to write",
            names.join(", ")
        )));
    };
    // the README: T0 is the earliest time floored to the millisecond, so the
    // data fills a viewer's axis (a whole second squashed short runs).
    let origin = first.div_euclid(1_000_000) * 1_000_000;

    let progress = (!cfg.quiet && io::stderr().is_terminal()).then(|| Progress::new(input_bytes));

    let out = BufWriter::with_capacity(1 << 18, sink);
    let (out, written, series_notes) = match write_all(
        &mut merge,
        &mut reg,
        out,
        origin,
        cfg.absolute_time,
        progress.as_ref(),
    ) {
        Ok(done) => done,
        // A reader that stops early (`integrador ... -o - | head`) is not
        // an error of ours.
        Err(WriteError::Io(e))
            if e.kind() == io::ErrorKind::BrokenPipe && matches!(target, Target::Stdout) =>
        {
            return Err(Error::broken_pipe());
        }
        Err(e) => return Err(io_error(e, &target_name, partial)),
    };
    let sink = out.into_inner().map_err(|e| {
        io_error(
            WriteError::Io(io::Error::new(e.error().kind(), e.error().to_string())),
            &target_name,
            partial,
        )
    })?;
    sink.commit(&target_name)?;
    if let Some(p) = progress {
        p.bar.finish_and_clear();
    }

    // The summary shows a few hosts; a run with a million keeps no copy.
    let hosts = reg
        .hosts_seen()
        .iter()
        .take(crate::summary::MAX_ROWS)
        .map(|h| {
            (
                h.name.to_string(),
                reg.container(h.machine).name.to_string(),
                reg.cluster_of_machine(h.machine).map(str::to_string),
            )
        })
        .collect();
    let mut warnings = reg.hierarchy.warnings.clone();
    warnings.extend(reg.warnings.iter().cloned());
    warnings.extend(series_notes);
    if written.skipped_pops > 0 {
        warnings.push(format!(
            "{} state end(s) had no open state in time order (a damaged or reordered input) and were left out",
            written.skipped_pops
        ));
    }
    let sources: Vec<SourceStats> = merge.sources().iter().map(|s| s.stats().clone()).collect();
    warnings.extend(span_warnings(&sources));
    if let (Some(table), Some(path)) = (&sync, &cfg.sync) {
        let corrects = |c: &ClockUse| {
            c.map
                .as_ref()
                .is_some_and(|(_, m, _)| !matches!(m, ClockMap::Identity))
        };
        if !clocks.iter().any(corrects) {
            let theirs: Vec<&str> = table.hosts.iter().take(4).map(|h| &*h.host).collect();
            let ours: Vec<&str> = clocks.iter().take(4).map(|c| c.host.as_str()).collect();
            warnings.push(format!(
                "{} corrects no clock of this run: it measures {} against {}, the inputs were stamped by {}",
                path.display(),
                if theirs.is_empty() { "no host".to_string() } else { theirs.join(", ") },
                table.reference,
                if ours.is_empty() { "no named host".to_string() } else { ours.join(", ") }
            ));
        }
    }
    Ok(RunReport {
        sources,
        written,
        origin,
        hosts,
        hosts_total: reg.hosts_seen().len(),
        clocks,
        reference: sync.as_ref().map(|s| s.reference.clone()),
        warnings,
        output: cfg.output.clone(),
    })
}

/// A failure while writing: I/O errors on the output, or an input error
/// surfacing from a source mid-stream.
enum WriteError {
    Io(io::Error),
    Input(Error),
}

fn io_error(e: WriteError, what: &str, partial: bool) -> Error {
    match e {
        WriteError::Io(e) if partial => Error::input(format!(
            "{what}: write error: {e}; the output is incomplete (a FIFO or device cannot be taken back)"
        )),
        WriteError::Io(e) => Error::input(format!("{what}: write error: {e}")),
        WriteError::Input(e) if partial => Error::input(format!(
            "{e} (the trace written to {what} so far is incomplete)"
        )),
        WriteError::Input(e) => e,
    }
}

/// Keeps the value series of different sources apart. Two sources that
/// set the same variable of the same container (two PCP archives of one
/// host, a Ganglia recording and its XML snapshots) would interleave
/// their values in one row; the second source gets its own variable type,
/// named after its file, and a note says so.
#[derive(Default)]
struct Series {
    /// The source that first set each (container, variable type).
    owner: HashMap<(ContainerId, TypeId), usize>,
    /// The type given to another source's series of a type.
    variant: HashMap<(TypeId, usize), TypeId>,
    /// Per (first source, second source): how many series were split, and
    /// the first of them as an example, in order of discovery.
    clashes: Vec<((usize, usize), u64, String)>,
}

impl Series {
    fn keep_apart(
        &mut self,
        reg: &mut Registry,
        source: usize,
        ev: &mut Event,
        label: &dyn Fn(usize) -> String,
    ) {
        let Op::SetVariable { container, ty, .. } = &mut ev.op else {
            return;
        };
        let owner = *self.owner.entry((*container, *ty)).or_insert(source);
        if owner == source {
            return;
        }
        let original = *ty;
        *ty = match self.variant.get(&(original, source)) {
            Some(&t) => t,
            None => {
                let t = reg.variable_variant(original, &label(source));
                self.variant.insert((original, source), t);
                t
            }
        };
        // The variant is this source's own from now on.
        if self.owner.insert((*container, *ty), source).is_none() {
            let pair = (owner, source);
            match self.clashes.iter_mut().find(|c| c.0 == pair) {
                Some(c) => c.1 += 1,
                None => {
                    let example = format!(
                        "`{}` of {} is also `{}`",
                        reg.type_def(original).name,
                        reg.container(*container).name,
                        reg.type_def(*ty).name
                    );
                    self.clashes.push((pair, 1, example));
                }
            }
        }
    }

    fn notes(&self, label: &dyn Fn(usize) -> String) -> Vec<String> {
        self.clashes
            .iter()
            .map(|((a, b), n, example)| {
                format!(
                    "{} and {} set the same {n} variable(s) of the same containers: kept apart, named after {} ({example})",
                    label(*a),
                    label(*b),
                    label(*b)
                )
            })
            .collect()
    }
}

/// The progress line on a terminal: bytes of the inputs read of their
/// total, percent and time left; a spinner with the event count when a
/// total is unknown (a pipe).
struct Progress {
    bar: indicatif::ProgressBar,
    /// Bytes read before the merge (first passes, headers).
    start: u64,
    known: bool,
}

impl Progress {
    /// Total size of the sources' files; `None` when one is a pipe.
    fn total(inputs: &[(&'static str, &Path)]) -> Option<u64> {
        let sources = ["-deck", "-mpi", "-os", "-ganglia", "-pcp"];
        let mut total = Some(0u64);
        let mut seen = std::collections::HashSet::new();
        for (option, p) in inputs {
            // A Ganglia file is listed as given and among its directory's.
            if !sources.contains(option) || p.is_dir() || !p.exists() || !seen.insert(*p) {
                continue;
            }
            let size = (!input::is_read_once(p))
                .then(|| std::fs::metadata(p).ok().map(|m| m.len()))
                .flatten();
            total = total.zip(size).map(|(t, s)| t + s);
        }
        total
    }

    fn new(total: Option<u64>) -> Progress {
        let (bar, known) = match total {
            Some(t) if t > 0 => {
                let bar = indicatif::ProgressBar::new(t);
                bar.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{bar:30} {bytes}/{total_bytes} {percent}%, {eta} left, {msg}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                (bar, true)
            }
            _ => (indicatif::ProgressBar::new_spinner(), false),
        };
        Progress {
            bar,
            start: input::bytes_read(),
            known,
        }
    }

    fn show(&self, events: u64) {
        if self.known {
            let done = input::bytes_read().saturating_sub(self.start);
            self.bar
                .set_position(done.min(self.bar.length().unwrap_or(done)));
        } else {
            self.bar.tick();
        }
        self.bar.set_message(format!("{events} events"));
    }
}

/// Times before this are no monitoring data of ours (1990-01-01).
const PLAUSIBLE_START_NS: i64 = 631_152_000 * 1_000_000_000;
/// A source this far from all the others was probably not recorded with them.
const FAR_APART_NS: i64 = 3_600 * 1_000_000_000;

/// Sources whose times are implausible (before 1990: a stray sample at
/// epoch 5 would set T0 in 1970) or more than an hour away from every
/// other source's (inputs of different days merged by mistake).
fn span_warnings(sources: &[SourceStats]) -> Vec<String> {
    let name = |s: &SourceStats| {
        s.path.file_name().map_or_else(
            || s.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    let when = |ns: i64| {
        chrono::DateTime::from_timestamp(ns.div_euclid(1_000_000_000), 0).map_or_else(
            || format!("{ns} ns"),
            |d| d.format("%Y-%m-%d %H:%M:%S").to_string(),
        )
    };
    let mut out = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let Some((a, b)) = s.span else { continue };
        if a < PLAUSIBLE_START_NS {
            out.push(format!(
                "{}: its times start at {} UTC, before 1990: a wrong clock or a stray record (T0 follows the earliest time)",
                name(s),
                when(a)
            ));
            continue;
        }
        let others = sources
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .filter_map(|(_, o)| o.span)
            .fold(None, |h: Option<(i64, i64)>, (x, y)| {
                Some(h.map_or((x, y), |(p, q)| (p.min(x), q.max(y))))
            });
        if let Some((x, y)) = others {
            let gap = (x.saturating_sub(b)).max(a.saturating_sub(y));
            if gap > FAR_APART_NS {
                out.push(format!(
                    "{}: its times ({} to {} UTC) are {} h away from the other inputs' ({} to {} UTC): recorded at another time?",
                    name(s),
                    when(a),
                    when(b),
                    gap / FAR_APART_NS,
                    when(x),
                    when(y)
                ));
            }
        }
    }
    out
}

/// A source's file name, for notes.
fn source_label(merge: &Merge, i: usize) -> String {
    merge.sources().get(i).map_or_else(String::new, |s| {
        let p = &s.stats().path;
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    })
}

fn write_all<W: Write>(
    merge: &mut Merge,
    reg: &mut Registry,
    out: W,
    origin: i64,
    absolute: bool,
    progress: Option<&Progress>,
) -> std::result::Result<(W, WriteStats, Vec<String>), WriteError> {
    let mut writer = PajeWriter::new(out, origin, absolute).map_err(WriteError::Io)?;
    // What the sources told up front gets its rows in natural order.
    let order = reg.up_front_order();
    writer
        .create_in_order(reg, &order, origin)
        .map_err(WriteError::Io)?;
    let mut n: u64 = 0;
    let mut series = Series::default();
    while let Some((source, mut ev)) = merge.next(reg).map_err(WriteError::Input)? {
        let label = |i: usize| source_label(merge, i);
        series.keep_apart(reg, source, &mut ev, &label);
        writer.write_event(reg, &ev).map_err(WriteError::Io)?;
        n += 1;
        if n % (1 << 14) == 0 {
            if let Some(p) = progress {
                p.show(n);
            }
        }
    }
    let (out, stats) = writer.finish(reg).map_err(WriteError::Io)?;
    let notes = series.notes(&|i| source_label(merge, i));
    Ok((out, stats, notes))
}
