//! The run's provenance tables (`run`, `inputs`, `clocks`,
//! `host_aliases`): what Spark SQL cannot read in a file's key-value
//! metadata, written at the end from the run's report.

use super::columns::{col, opt, Col, Kind, Table};
use super::{Tables, SCHEMA_VERSION};
use crate::sink::{RunEnd, SinkStats};
use std::io;

pub(crate) const RUN: &[Col] = &[
    col("schema_version", Kind::I32),
    col("tool_version", Kind::Str),
    col("t0_ns", Kind::I64),
    opt("from_ns", Kind::I64),
    opt("to_ns", Kind::I64),
    col("events", Kind::I64),
    col("warnings", Kind::I64),
];
pub(crate) const INPUTS: &[Col] = &[
    col("source", Kind::I32),
    col("kind", Kind::Str),
    col("path", Kind::Str),
    col("records", Kind::I64),
    col("events", Kind::I64),
    opt("first_ns", Kind::I64),
    opt("last_ns", Kind::I64),
    col("warnings", Kind::I64),
];
pub(crate) const HOST_ALIASES: &[Col] = &[col("name", Kind::Str), opt("container_id", Kind::I64)];
pub(crate) const CLOCKS: &[Col] = &[
    col("host", Kind::Str),
    col("method", Kind::Str),
    opt("reference", Kind::Str),
    opt("offset_ns", Kind::I64),
    opt("drift_ppm", Kind::F64),
    opt("band_ns", Kind::I64),
    col("points", Kind::I64),
];

impl Tables {
    /// The run's provenance tables.
    pub(super) fn provenance(
        &self,
        end: &RunEnd,
        stats: &SinkStats,
        meta: &[(String, String)],
    ) -> io::Result<()> {
        let r = &end.report;
        let mut run = Table::create(&self.dir, "run", RUN, None, &self.names, false)?;
        run.i32(SCHEMA_VERSION);
        run.text(env!("CARGO_PKG_VERSION"));
        run.i64(r.origin + self.shift);
        for edge in [r.cut.from, r.cut.to] {
            match edge {
                Some(t) => run.i64(t + self.shift),
                None => run.null(),
            }
        }
        run.i64(stats.events as i64);
        run.i64(r.warnings.len() as i64);
        run.end()?;
        run.close(meta)?;
        let mut inputs = Table::create(&self.dir, "inputs", INPUTS, None, &self.names, false)?;
        for (i, s) in r.sources.iter().enumerate() {
            inputs.i32(self.source(i as u32));
            inputs.text(s.kind);
            inputs.text(&s.path.to_string_lossy());
            inputs.i64(s.records as i64);
            inputs.i64(s.events as i64);
            match s.span {
                Some((a, b)) => {
                    inputs.i64(a);
                    inputs.i64(b);
                }
                None => {
                    inputs.null();
                    inputs.null();
                }
            }
            inputs.i64(s.warnings as i64);
            inputs.end()?;
        }
        inputs.close(meta)?;
        let mut clocks = Table::create(&self.dir, "clocks", CLOCKS, None, &self.names, false)?;
        for c in &r.clocks {
            clocks.text(&c.host);
            match &c.map {
                Some((_, map, points)) => {
                    clocks.text(if c.from_messages { "messages" } else { "sync" });
                    match &r.reference {
                        Some(x) => clocks.text(x),
                        None => clocks.null(),
                    }
                    clocks.i64(map.offset_at(r.origin));
                    clocks.f64(map.drift_ppm());
                    match c.band {
                        Some(b) => clocks.i64(b),
                        None => clocks.null(),
                    }
                    clocks.i64(*points as i64);
                }
                None => {
                    clocks.text("none");
                    for _ in 0..4 {
                        clocks.null();
                    }
                    clocks.i64(0);
                }
            }
            clocks.end()?;
        }
        clocks.close(meta)?;
        let mut aliases = Table::create(
            &self.dir,
            "host_aliases",
            HOST_ALIASES,
            None,
            &self.names,
            false,
        )?;
        for (name, machine) in &end.hosts {
            aliases.text(name);
            // A machine that no event made a row of has no id.
            match self.alive.get(machine.0 as usize).filter(|a| a.key != 0) {
                Some(a) => aliases.i64(a.key),
                None => aliases.null(),
            }
            aliases.end()?;
        }
        aliases.close(meta)?;
        Ok(())
    }
}
