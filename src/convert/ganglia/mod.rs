//! Ganglia data → variables (thesis table C.6: each sample is a
//! `PajeSetVariable` on the variable of its metric under its Machine), from
//! the thesis' `.traced` recording, a series of gmond/gmetad XML snapshots,
//! or `rrdtool dump` files of gmetad's RRDs.
//!
//! The samples' clock is the collector's (docs/formats.md §2; for XML the
//! daemon that answered, for RRDs gmetad's): the whole input is corrected
//! with the collector host's line of the sync file.

use crate::error::{Error, Result};
use crate::hierarchy::Role;
use crate::model::{ContainerId, Op, TypeId};
use crate::prefetch::{self, Next, Prefetch};
use crate::recurring::Recurring;
use crate::registry::{Name, Registry, TypeKind};
use crate::source::{Converted, Converter, SourceStats, Timeline};
use crate::timeline::Clock;
use integrador_ganglia::rrd::{host_metric, RrdDump};
use integrador_ganglia::xml::{Entry, XmlReader};
use integrador_ganglia::{Sample, TracedReader};
use std::collections::HashMap;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod config;
mod kind;
pub use config::{GangliaConfig, GangliaFile};
pub use kind::GangliaKind;

/// Turns (host, metric, value) into a variable setting, remembering the
/// Machines and variable types it made.
struct Metrics {
    config: Arc<GangliaConfig>,
    machine_type: TypeId,
    last_host: Option<(String, ContainerId)>,
    /// Samples of metrics the hierarchy's include/exclude leaves out.
    left_out: u64,
    /// Each metric's variable type, or `None` when left out (a pattern
    /// is matched once per name, not once per sample): the registry's two
    /// SipHash lookups a sample were 8% of a recording's run.
    types: Recurring<Box<str>, Option<TypeId>>,
}

impl Metrics {
    fn new(reg: &Registry, config: &Arc<GangliaConfig>) -> Result<Metrics> {
        let machine_type = reg.level_type(Role::Machine).ok_or_else(|| {
            Error::usage("the hierarchy has no machine level for Ganglia metrics")
        })?;
        Ok(Metrics {
            config: Arc::clone(config),
            machine_type,
            last_host: None,
            left_out: 0,
            types: Recurring::default(),
        })
    }

    fn op(
        &mut self,
        reg: &mut Registry,
        host: &str,
        cluster: Option<&str>,
        metric: &str,
        unit: Option<&str>,
        value: f64,
    ) -> Option<Op> {
        let ty = match self.types.find(metric).and_then(|i| self.types.get(i)) {
            Some(&t) => t,
            None => {
                // A metric with a type was selected when the type was made
                // (by this source or another).
                let t = match reg.find_sub_type(self.machine_type, TypeKind::Variable, metric) {
                    Some(t) => Some(t),
                    None if !self.config.selects(metric) => None,
                    None => {
                        let display = self.config.metrics.get(metric).cloned();
                        let t = reg.variable_type(self.machine_type, metric, display.as_ref());
                        // The unit gmond said (a custom metric's is known no
                        // other way), else a standard metric's.
                        if let Some(unit) =
                            unit.or_else(|| integrador_ganglia::standard_unit(metric))
                        {
                            reg.set_unit(t, unit);
                        }
                        Some(t)
                    }
                };
                self.types.push(metric.into(), t);
                t
            }
        };
        let Some(ty) = ty else {
            self.left_out += 1;
            return None;
        };
        let machine = match &mut self.last_host {
            Some((h, m)) if h == host => *m,
            last => {
                let m = reg.machine(host, cluster);
                // The name's buffer is reused: hosts alternate on every
                // line of a recording.
                let (h, at) = last.get_or_insert_with(|| (String::new(), m));
                h.clear();
                h.push_str(host);
                *at = m;
                m
            }
        };
        Some(Op::SetVariable {
            container: machine,
            ty,
            value,
        })
    }

    /// The summary's note of what include/exclude left out.
    fn note(&self, stats: &mut SourceStats) {
        if self.left_out > 0 {
            stats.notes.push(format!(
                "{} sample(s) of metrics left out by the hierarchy's [ganglia] include/exclude",
                self.left_out
            ));
        }
    }
}

/// Converts a `.traced` file.
pub struct TracedSource {
    path: PathBuf,
    decode: Decode,
    sample: Sample,
    cluster: Option<String>,
    metrics: Metrics,
}

/// A recording's samples, decoded here or on a thread of their own.
enum Decode {
    Here(TracedReader<BufReader<crate::input::Reader>>),
    /// The samples, and at the end the line a torn last line was on.
    Thread(Prefetch<Sample, Option<u64>>),
}

/// Where a file's clock and cluster come from, resolved by the caller.
pub struct TracedSetup<'a> {
    /// Collector given by the hierarchy for this file or by the command line.
    pub collector: Option<&'a str>,
    /// Cluster given by the hierarchy for this file.
    pub cluster: Option<&'a str>,
    /// Reorder window, ns.
    pub window: i64,
    /// The `[ganglia]` section.
    pub config: &'a Arc<GangliaConfig>,
}

impl TracedSource {
    /// Opens `path` and reads its header. `clock_of` maps the collector host
    /// (if any) to its clock; `None` leaves the file uncorrected.
    pub fn open(
        path: &Path,
        setup: TracedSetup<'_>,
        reg: &Registry,
        clock_of: &mut dyn FnMut(&str) -> Option<Clock>,
    ) -> Result<Converted<TracedSource>> {
        let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
        let reader = TracedReader::new(BufReader::with_capacity(
            crate::input::buffer_size(path),
            file,
        ))
        .map_err(|e| Error::in_file(path, e))?;
        let header = reader.header().clone();
        // docs/formats.md §2: a header line wins over the hierarchy file.
        let collector = header
            .collector
            .clone()
            .or(setup.collector.map(str::to_string));
        let cluster = header.cluster.clone().or(setup.cluster.map(str::to_string));
        let clock = collector.as_deref().and_then(&mut *clock_of);
        let metrics = Metrics::new(reg, setup.config)?;
        let stats = SourceStats {
            kind: "ganglia",
            path: path.to_path_buf(),
            clock_host: collector,
            ..SourceStats::default()
        };
        let decode = if crate::input::threadable(path) && prefetch::claim_busy() {
            let (p, q) = (path.to_path_buf(), path.to_path_buf());
            let size = crate::input::buffer_size(path);
            Decode::Thread(Prefetch::spawn(
                move || {
                    let f = crate::input::open_on_thread(&p).map_err(|e| Error::in_file(&p, e))?;
                    TracedReader::new(BufReader::with_capacity(size, f))
                        .map_err(|e| Error::in_file(&p, e))
                },
                move |r, s| r.read_sample(s).map_err(|e| Error::in_file(&q, e)),
                |r| Ok(r.cut_line()),
            ))
        } else {
            Decode::Here(reader)
        };
        let converter = TracedSource {
            path: path.to_path_buf(),
            decode,
            sample: Sample::default(),
            cluster,
            metrics,
        };
        // A recorder that cannot write in order declares how far back its
        // lines step (docs/formats.md §2); the larger window wins.
        let window = match &header.reorder_window {
            None => setup.window,
            Some(w) => crate::time::parse_duration(w)
                .map_err(|e| Error::in_file(path, format!("`# reorder-window {w}`: {e}")))?
                .max(setup.window),
        };
        Ok(Converted::new(
            converter,
            Timeline::new(window, stats, clock),
        ))
    }
}

impl Converter for TracedSource {
    fn pull(&mut self, reg: &mut Registry, out: &mut Timeline) -> Result<bool> {
        let (s, cut) = match &mut self.decode {
            Decode::Here(r) => {
                let more = r
                    .read_sample(&mut self.sample)
                    .map_err(|e| Error::in_file(&self.path, e))?;
                (&self.sample, (!more).then(|| r.cut_line()))
            }
            Decode::Thread(p) => match p.next_record()? {
                Next::Record(s) => (&*s, None),
                Next::End(cut) => (&self.sample, Some(cut)),
            },
        };
        if let Some(cut) = cut {
            out.stats
                .end_of_text(&self.path, cut, "no sample in this recording");
            self.metrics.note(&mut out.stats);
            return Ok(false);
        }
        if let Some(op) = self.metrics.op(
            reg,
            &s.host,
            self.cluster.as_deref(),
            &s.metric,
            None,
            s.value,
        ) {
            out.push(s.line, s.time_ns, op)?;
        }
        Ok(true)
    }
}

/// Where an XML series or an RRD dump's clock and cluster come from.
pub struct Setup {
    /// The daemon whose clock stamped the data (collector).
    pub collector: Option<String>,
    /// Cluster of hosts the data does not place.
    pub cluster: Option<String>,
    /// Reorder window, ns.
    pub window: i64,
    /// The `[ganglia]` section.
    pub config: Arc<GangliaConfig>,
}

/// The counts of a source of `paths` and its collector's clock.
fn stats(
    kind: &'static str,
    paths: &[PathBuf],
    setup: &Setup,
    clock_of: &mut dyn FnMut(&str) -> Option<Clock>,
) -> (SourceStats, Option<Clock>) {
    let stats = SourceStats {
        kind,
        path: paths.first().cloned().unwrap_or_default(),
        more_files: paths.len().saturating_sub(1),
        clock_host: setup.collector.clone(),
        ..SourceStats::default()
    };
    (stats, setup.collector.as_deref().and_then(clock_of))
}

/// The sample times of one (host, metric) already written, as the latest
/// and a bit per second before it, and the latest value. A value reported
/// again by a later snapshot is the same sample, but its computed time
/// (LOCALTIME − TN, whole seconds read at slightly different moments) can
/// wobble by a second between snapshots (440, 441, 440): a minute of
/// history catches a return to 440, and the latest value catches the first
/// 441. gmond holds one sample per metric, so only the latest can come
/// back. A minute of history costs 24 bytes a series, where a list of
/// recent times cost a heap block each for a million metrics.
#[derive(Default)]
pub(crate) struct Recent {
    latest: Option<i64>,
    /// Bit `k`: time `latest - k` was written.
    mask: u64,
    value: f64,
}

impl Recent {
    /// Whether sample (`t`, `value`) was written already: the same time,
    /// or the latest sample's value a second off. (A new sample a second
    /// after the latest with the very same value is taken for it: it says
    /// nothing the latest did not.)
    pub(crate) fn repeats(&self, t: i64, value: f64) -> bool {
        self.contains(t)
            || self
                .latest
                .is_some_and(|l| t.abs_diff(l) == 1 && value.to_bits() == self.value.to_bits())
    }

    fn contains(&self, t: i64) -> bool {
        self.latest
            .and_then(|l| l.checked_sub(t))
            .is_some_and(|k| (0..64).contains(&k) && self.mask & (1 << k) != 0)
    }

    pub(crate) fn insert(&mut self, t: i64, value: f64) {
        match self.latest.map(|l| t.checked_sub(l)) {
            Some(Some(ahead)) if ahead <= 0 => {
                if ahead > -64 {
                    self.mask |= 1 << -ahead;
                }
                return;
            }
            Some(Some(ahead)) if ahead < 64 => {
                self.mask = (self.mask << ahead) | 1;
            }
            _ => self.mask = 1,
        }
        self.latest = Some(t);
        self.value = value;
    }
}

/// A sample of the current snapshot, its names as indexes in [`Names`].
struct Pending {
    offset: u64,
    time: i64,
    host: u32,
    cluster: Option<u32>,
    metric: u32,
    value: f64,
}

/// Host, metric and cluster names of a snapshot series, each kept once:
/// a snapshot of a million metrics repeats each name in every later one.
#[derive(Default)]
struct Names {
    index: HashMap<Name, u32>,
    names: Vec<Name>,
    /// A metric's UNITS, by its name's number, as first given.
    units: HashMap<u32, Box<str>>,
}

impl Names {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.names.len() as u32;
        let n: Name = s.into();
        self.names.push(n.clone());
        self.index.insert(n, i);
        i
    }

    fn name(&self, i: u32) -> &str {
        &self.names[i as usize]
    }
}

/// Adds a sample to the batch unless its (host, metric) already had one
/// at the same time.
fn keep(
    seen: &mut HashMap<(u32, u32), Recent>,
    names: &mut Names,
    batch: &mut Vec<Pending>,
    repeated: &mut u64,
    e: &Entry,
) {
    let host = names.id(&e.host);
    let metric = names.id(&e.metric);
    if let Some(u) = &e.units {
        names
            .units
            .entry(metric)
            .or_insert_with(|| u.as_str().into());
    }
    let recent = seen.entry((host, metric)).or_default();
    if recent.repeats(e.time, e.value) {
        *repeated += 1;
        return;
    }
    recent.insert(e.time, e.value);
    batch.push(Pending {
        offset: e.offset,
        time: e.time,
        host,
        cluster: e.cluster.as_deref().map(|c| names.id(c)),
        metric,
        value: e.value,
    });
}

/// Converts a series of gmond/gmetad XML snapshots, in file order. A
/// sample shown again by a later snapshot (same host, metric and time) is
/// written once. A snapshot's new samples are written in time order.
pub struct XmlSource {
    files: Vec<PathBuf>,
    next_file: usize,
    reader: Option<XmlReader<BufReader<crate::input::Reader>>>,
    entry: Entry,
    /// Recent sample times per (host, metric).
    seen: HashMap<(u32, u32), Recent>,
    names: Names,
    /// The current snapshot's new samples, sorted, and the next to hand.
    batch: Vec<Pending>,
    batch_pos: usize,
    /// The first entry of the next document, read ahead.
    carry: Option<Entry>,
    cluster: Option<String>,
    metrics: Metrics,
    strings: u64,
    bad_values: u64,
    repeated: u64,
    /// Cut documents, for the warnings.
    damage: Vec<String>,
}

impl XmlSource {
    /// Opens a series of snapshot files.
    pub fn open(
        files: Vec<PathBuf>,
        setup: Setup,
        reg: &Registry,
        clock_of: &mut dyn FnMut(&str) -> Option<Clock>,
    ) -> Result<Converted<XmlSource>> {
        let (stats, clock) = stats("ganglia", &files, &setup, clock_of);
        let source = XmlSource {
            files,
            next_file: 0,
            reader: None,
            entry: Entry::default(),
            seen: HashMap::new(),
            names: Names::default(),
            batch: Vec::new(),
            batch_pos: 0,
            carry: None,
            cluster: setup.cluster,
            metrics: Metrics::new(reg, &setup.config)?,
            strings: 0,
            bad_values: 0,
            repeated: 0,
            damage: Vec::new(),
        };
        Ok(Converted::new(
            source,
            Timeline::binary(setup.window, stats, clock),
        ))
    }

    /// Reads the next snapshot (one document, or the rest of a file) into
    /// the batch; `false` when every file is read.
    fn fill(&mut self) -> Result<bool> {
        self.batch.clear();
        self.batch_pos = 0;
        loop {
            if self.reader.is_none() {
                let Some(path) = self.files.get(self.next_file) else {
                    return Ok(false);
                };
                let f = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
                self.reader = Some(XmlReader::new(BufReader::with_capacity(1 << 16, f)));
                self.next_file += 1;
            }
            let path = self
                .files
                .get(self.next_file - 1)
                .cloned()
                .unwrap_or_default();
            let Some(r) = self.reader.as_mut() else {
                continue;
            };
            let mut ended = true;
            let mut doc = None;
            while r
                .next_entry(&mut self.entry)
                .map_err(|e| Error::in_file(&path, e))?
            {
                // A new document is a new snapshot: keep its first entry
                // for the next batch.
                let here = r.counts.documents;
                if doc.is_some_and(|d| d != here) {
                    self.carry = Some(self.entry.clone());
                    ended = false;
                    break;
                }
                doc = Some(here);
                if let Some(c) = self.carry.take() {
                    keep(
                        &mut self.seen,
                        &mut self.names,
                        &mut self.batch,
                        &mut self.repeated,
                        &c,
                    );
                }
                keep(
                    &mut self.seen,
                    &mut self.names,
                    &mut self.batch,
                    &mut self.repeated,
                    &self.entry,
                );
            }
            if ended {
                if r.counts.documents == 0 {
                    return Err(Error::in_file(
                        &path,
                        "no <GANGLIA_XML> document: not a gmond or gmetad XML snapshot",
                    ));
                }
                self.strings += r.counts.strings;
                self.bad_values += r.counts.bad_values;
                for at in &r.cuts {
                    self.damage.push(format!(
                        "{}: a snapshot is cut at byte {at} (no </GANGLIA_XML>): its samples before the cut are kept",
                        path.display()
                    ));
                }
                self.reader = None;
            }
            if !self.batch.is_empty() {
                self.batch.sort_by_key(|e| e.time);
                return Ok(true);
            }
        }
    }
}

impl Converter for XmlSource {
    fn pull(&mut self, reg: &mut Registry, out: &mut Timeline) -> Result<bool> {
        if self.batch_pos >= self.batch.len() && !self.fill()? {
            let mut notes = vec![format!(
                "{} snapshot file(s); {} repeated sample(s) written once",
                self.files.len(),
                self.repeated
            )];
            if self.strings + self.bad_values > 0 {
                notes.push(format!(
                    "{} string metric value(s) and {} unparsable value(s) skipped",
                    self.strings, self.bad_values
                ));
            }
            out.stats.notes.extend(notes);
            out.stats.damage.append(&mut self.damage);
            self.metrics.note(&mut out.stats);
            return Ok(false);
        }
        let Some(e) = self.batch.get(self.batch_pos) else {
            return Ok(false);
        };
        self.batch_pos += 1;
        let cluster = e
            .cluster
            .map(|c| self.names.name(c))
            .or(self.cluster.as_deref());
        let (host, metric) = (self.names.name(e.host), self.names.name(e.metric));
        let unit = self.names.units.get(&e.metric).map(|u| &**u);
        if let Some(op) = self.metrics.op(reg, host, cluster, metric, unit, e.value) {
            out.push(e.offset, e.time.saturating_mul(1_000_000_000), op)?;
        }
        Ok(true)
    }
}

/// Converts one `rrdtool dump` of a gmetad RRD: the known rows of one
/// archive (the finest AVERAGE), each at the end of its interval.
pub struct RrdSource {
    host: String,
    metric: String,
    rows: std::vec::IntoIter<(i64, f64)>,
    /// The row being converted (1-based), for messages.
    row: u64,
    cluster: Option<String>,
    metrics: Metrics,
}

impl RrdSource {
    /// Reads `path`; host and metric come from its name unless given.
    pub fn open(
        path: &Path,
        setup: Setup,
        reg: &Registry,
        clock_of: &mut dyn FnMut(&str) -> Option<Clock>,
    ) -> Result<Converted<RrdSource>> {
        let f = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
        let d = RrdDump::read(BufReader::new(f)).map_err(|e| Error::in_file(path, e))?;
        let Some((host, metric)) = host_metric(path) else {
            return Err(Error::in_file(path, "cannot tell host and metric from the file name (<host>.<metric>.xml or <host>/<metric>.xml)"));
        };
        let Some(i) = d.finest("AVERAGE") else {
            return Err(Error::in_file(path, "no AVERAGE archive"));
        };
        let rows: Vec<(i64, f64)> = d
            .timed_rows(i)
            .into_iter()
            .filter_map(|(t, v)| v.first().copied().filter(|x| !x.is_nan()).map(|x| (t, x)))
            .collect();
        let rra = d.rras.get(i).map_or(0, |r| r.pdp_per_row) * d.step;
        let (mut st, clock) = stats("ganglia", &[path.to_path_buf()], &setup, clock_of);
        st.notes.push(format!(
            "RRD dump of {metric} on {host}: AVERAGE archive of {rra} s rows, {} known row(s)",
            rows.len()
        ));
        let source = RrdSource {
            host,
            metric,
            rows: rows.into_iter(),
            row: 0,
            cluster: setup.cluster,
            metrics: Metrics::new(reg, &setup.config)?,
        };
        Ok(Converted::new(
            source,
            Timeline::new(setup.window, st, clock).counting("row"),
        ))
    }
}

impl Converter for RrdSource {
    fn pull(&mut self, reg: &mut Registry, out: &mut Timeline) -> Result<bool> {
        let Some((t, v)) = self.rows.next() else {
            self.metrics.note(&mut out.stats);
            return Ok(false);
        };
        self.row += 1;
        let cluster = self.cluster.as_deref();
        if let Some(op) = self
            .metrics
            .op(reg, &self.host, cluster, &self.metric, None, v)
        {
            out.push(self.row, t.saturating_mul(1_000_000_000), op)?;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::Recent;

    #[test]
    fn the_wobble_is_one_sample_and_new_values_are_not() {
        let mut r = Recent::default();
        assert!(!r.repeats(440, 1.0));
        r.insert(440, 1.0);
        // 441 with the same value: the same sample read a second off.
        assert!(r.repeats(441, 1.0));
        assert!(r.repeats(439, 1.0));
        assert!(r.repeats(440, 1.0));
        // A new value a second later is a new sample.
        assert!(!r.repeats(441, 2.0));
        r.insert(441, 2.0);
        assert!(r.repeats(440, 1.0));
        assert!(!r.repeats(442, 1.0));
        // Beyond a minute, history is forgotten, not confused.
        r.insert(441 + 64, 3.0);
        assert!(!r.repeats(441, 2.0));
        assert!(r.repeats(441 + 64, 3.0));
    }
}
