//! Ganglia `.traced` recording → variables (thesis table C.6: each sample is
//! a `PajeSetVariable` on the variable of its metric under its Machine).
//!
//! The samples' clock is the collector's (conventions.md §2): the whole file
//! is corrected with the collector host's line of the sync file.

use crate::clock::ClockMap;
use crate::error::{Error, Result};
use crate::hierarchy::Role;
use crate::model::{ContainerId, Event, Op, TypeId};
use crate::registry::Registry;
use crate::source::{EventSource, Reorder, SourceStats};
use integrador_ganglia::{Sample, TracedReader};
use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// A `.traced` file as an event source.
pub struct TracedSource {
    path: PathBuf,
    reader: TracedReader<BufReader<File>>,
    sample: Sample,
    cluster: Option<String>,
    clock: ClockMap,
    machine_type: TypeId,
    last_host: Option<(String, ContainerId)>,
    metrics: HashMap<String, TypeId>,
    reorder: Reorder<Op>,
    done: bool,
    stats: SourceStats,
}

/// Where a file's clock and cluster come from, resolved by the caller.
pub struct TracedSetup<'a> {
    /// Collector given by the hierarchy for this file or by the command line.
    pub collector: Option<&'a str>,
    /// Cluster given by the hierarchy for this file.
    pub cluster: Option<&'a str>,
    /// Reorder window, ns.
    pub window: i64,
}

impl TracedSource {
    /// Opens `path` and reads its header. `clock_of` maps the collector host
    /// (if any) to its clock; `None` leaves the file uncorrected.
    pub fn open(
        path: &Path,
        setup: TracedSetup<'_>,
        reg: &Registry,
        clock_of: &mut dyn FnMut(&str) -> Option<ClockMap>,
    ) -> Result<TracedSource> {
        let file = File::open(path).map_err(|e| Error::in_file(path, e))?;
        let reader = TracedReader::new(BufReader::with_capacity(1 << 16, file))
            .map_err(|e| Error::in_file(path, e))?;
        let header = reader.header().clone();
        // conventions.md §2: a header line wins over the hierarchy file.
        let collector = header
            .collector
            .clone()
            .or(setup.collector.map(str::to_string));
        let cluster = header.cluster.clone().or(setup.cluster.map(str::to_string));
        let clock = collector.as_deref().and_then(&mut *clock_of);
        let machine_type = reg.level_type(Role::Machine).ok_or_else(|| {
            Error::usage("the hierarchy has no machine level for Ganglia metrics")
        })?;
        Ok(TracedSource {
            path: path.to_path_buf(),
            reader,
            sample: Sample::default(),
            cluster,
            clock: clock.unwrap_or(ClockMap::Identity),
            machine_type,
            last_host: None,
            metrics: HashMap::new(),
            reorder: Reorder::new(setup.window),
            done: false,
            stats: SourceStats {
                kind: "ganglia",
                path: path.to_path_buf(),
                clock_host: collector,
                clock,
                ..SourceStats::default()
            },
        })
    }

    fn convert(&mut self, reg: &mut Registry) -> Op {
        let s = &self.sample;
        let machine = match &self.last_host {
            Some((h, m)) if *h == s.host => *m,
            _ => {
                let m = reg.machine(&s.host, self.cluster.as_deref());
                self.last_host = Some((s.host.clone(), m));
                m
            }
        };
        let ty = match self.metrics.get(&s.metric) {
            Some(&t) => t,
            None => {
                let display = reg.hierarchy.ganglia.metrics.get(&s.metric).cloned();
                let t = reg.variable_type(self.machine_type, &s.metric, display.as_ref());
                self.metrics.insert(s.metric.clone(), t);
                t
            }
        };
        Op::SetVariable {
            container: machine,
            ty,
            value: s.value,
        }
    }
}

impl EventSource for TracedSource {
    fn next_event(&mut self, reg: &mut Registry) -> Result<Option<Event>> {
        loop {
            let ready = if self.done {
                self.reorder.pop_any()
            } else {
                self.reorder.pop_ready()
            };
            if let Some((t, op)) = ready {
                self.stats.events += 1;
                return Ok(Some(Event {
                    time: self.clock.map(t),
                    op,
                }));
            }
            if self.done {
                self.stats.reordered = self.reorder.reordered;
                return Ok(None);
            }
            let more = self
                .reader
                .read_sample(&mut self.sample)
                .map_err(|e| Error::in_file(&self.path, e))?;
            if !more {
                self.done = true;
                continue;
            }
            self.stats.records += 1;
            let op = self.convert(reg);
            self.reorder
                .push(&self.path, self.sample.line, self.sample.time_ns, op)?;
        }
    }

    fn stats(&self) -> &SourceStats {
        &self.stats
    }
}
