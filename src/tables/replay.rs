//! `integrador tables TRACE.paje --tables DIR`: any Pajé trace that
//! pj_dump reads, replayed into the same tables a run writes (Aiyra's
//! plugin replay). The checker reads the trace with pj_dump's rules and
//! hands every line it accepts to the sinks' replay, whose intervals the
//! tables' encoder writes; what a trace does not say (hosts, inputs,
//! clocks) is absent. A trace pj_dump rejects writes no directory.

use super::{Tables, MARKER};
use crate::error::{Error, Result};
use crate::outdir::DirTarget;
use std::io::{self, BufRead};
use std::path::Path;

/// T0 of one of our traces (its origin line, after the header), or 0:
/// the trace's times are from it.
fn origin(trace: &Path) -> Result<i64> {
    let file = std::fs::File::open(trace).map_err(|e| Error::in_file(trace, e))?;
    let mut lines = io::BufReader::new(file).lines();
    // The header is about a hundred lines; the origin line follows it.
    for line in lines.by_ref().take(400) {
        let Ok(line) = line else { break };
        if line.starts_with('%') || line.trim().is_empty() {
            continue;
        }
        return Ok(crate::paje::writer::origin_of(&line).unwrap_or(0));
    }
    Ok(0)
}

/// Writes the tables of `trace` in `dir`; returns the rows written.
pub fn from_trace(trace: &Path, dir: &Path) -> Result<u64> {
    let target = DirTarget::resolve(dir, MARKER)?;
    target.refuse_inputs([("the trace", trace)])?;
    let shift = origin(trace)?;
    let out = target.create()?;
    let file = std::fs::File::open(trace).map_err(|e| Error::in_file(trace, e))?;
    let tables = Tables::create(out.dir(), shift).map_err(|e| Error::in_file(dir, e))?;
    let (report, rows) = crate::paje::check::check_into(io::BufReader::new(file), tables)
        .map_err(|e| Error::in_file(trace, e))?;
    if !report.accepted() {
        // The checker's first error, as `integrador check` says it; the
        // temporary directory goes with `out`.
        let first = report
            .findings
            .iter()
            .find(|f| f.severity == crate::paje::check::Severity::Error);
        let what = first.map_or_else(
            || "pj_dump would reject it".to_string(),
            |f| format!("line {}: {}", f.line, f.message),
        );
        return Err(Error::input(format!(
            "{}: {what} (no tables written)",
            trace.display()
        )));
    }
    out.commit()?;
    Ok(rows)
}
