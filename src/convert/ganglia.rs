//! Ganglia `.traced` recording → variables (thesis table C.6: each sample is
//! a `PajeSetVariable` on the variable of its metric under its Machine).
//!
//! The samples' clock is the collector's (conventions.md §2): the whole file
//! is corrected with the collector host's line of the sync file.

use crate::clock::ClockMap;
use crate::error::{Error, Result};
use crate::hierarchy::Role;
use crate::model::{ContainerId, Op, TypeId};
use crate::registry::Registry;
use crate::source::{Converted, Converter, SourceStats, Timeline};
use integrador_ganglia::{Sample, TracedReader};
use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// Converts a `.traced` file.
pub struct TracedSource {
    path: PathBuf,
    reader: TracedReader<BufReader<File>>,
    sample: Sample,
    cluster: Option<String>,
    machine_type: TypeId,
    last_host: Option<(String, ContainerId)>,
    metrics: HashMap<String, TypeId>,
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
    ) -> Result<Converted<TracedSource>> {
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
        let stats = SourceStats {
            kind: "ganglia",
            path: path.to_path_buf(),
            clock_host: collector,
            clock,
            ..SourceStats::default()
        };
        let converter = TracedSource {
            path: path.to_path_buf(),
            reader,
            sample: Sample::default(),
            cluster,
            machine_type,
            last_host: None,
            metrics: HashMap::new(),
        };
        Ok(Converted::new(
            converter,
            Timeline::new(setup.window, stats),
        ))
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

impl Converter for TracedSource {
    fn pull(&mut self, reg: &mut Registry, out: &mut Timeline) -> Result<bool> {
        if !self
            .reader
            .read_sample(&mut self.sample)
            .map_err(|e| Error::in_file(&self.path, e))?
        {
            return Ok(false);
        }
        let op = self.convert(reg);
        out.push(self.sample.line, self.sample.time_ns, op)?;
        Ok(true)
    }
}
