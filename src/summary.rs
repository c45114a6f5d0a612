//! The end-of-run summary of the README, on stderr, one screen at most: per
//! source the counts, the hosts and the Machine each became, the clock
//! corrections applied and the hosts left uncorrected, and T0.

use crate::cli::Output;
use crate::run::RunReport;
use std::io::{self, Write};

/// Lists longer than this are cut, with a count of the rest.
pub const MAX_ROWS: usize = 8;

fn rows<T>(
    out: &mut dyn Write,
    items: &[T],
    row: impl FnMut(&mut dyn Write, &T) -> io::Result<()>,
) -> io::Result<()> {
    first_rows(out, items, items.len(), row)
}

/// [`rows`] of a list of which only the first few were kept, out of `total`.
fn first_rows<T>(
    out: &mut dyn Write,
    items: &[T],
    total: usize,
    mut row: impl FnMut(&mut dyn Write, &T) -> io::Result<()>,
) -> io::Result<()> {
    for item in items.iter().take(MAX_ROWS) {
        row(out, item)?;
    }
    let shown = items.len().min(MAX_ROWS);
    if total > shown {
        writeln!(out, "    ... and {} more", total - shown)?;
    }
    Ok(())
}

/// Writes the summary.
pub fn write(out: &mut dyn Write, r: &RunReport) -> io::Result<()> {
    let trace = r.output.as_ref().map(|o| match o {
        Output::Stdout => "standard output".to_string(),
        Output::File(p) => p.display().to_string(),
    });
    let tables = r
        .tables
        .as_ref()
        .map(|d| format!("the tables in {}", d.display()));
    let page = r
        .page
        .as_ref()
        .map(|p| format!("the clocks page {}", p.display()));
    let written: Vec<String> = [trace, tables, page].into_iter().flatten().collect();
    let target = match written.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    writeln!(
        out,
        "integrador: wrote {target}: {} events ({} from the inputs, the rest definitions and containers), {} containers; T0 = {} ({} UTC)",
        r.written.records,
        r.written.events,
        r.written.containers,
        crate::time::millis(r.origin),
        crate::time::utc(r.origin)
    )?;
    write_window(out, r)?;
    write_body(out, r)
}

/// The window written, and what reading up to it cost.
fn write_window(out: &mut dyn Write, r: &RunReport) -> io::Result<()> {
    let (cut, w) = (&r.cut, &r.written);
    if !cut.is_window() {
        return Ok(());
    }
    let edge = |t: Option<i64>, none: &str| match t {
        Some(t) => format!(
            "{} (+{}s)",
            crate::time::seconds(t),
            crate::time::millis(t - r.origin)
        ),
        None => none.to_string(),
    };
    writeln!(
        out,
        "  window: from {} to {}",
        edge(cut.from, "the start"),
        edge(cut.to, "the end")
    )?;
    if cut.from.is_some() {
        writeln!(
            out,
            "    {} events before it were decoded and replayed, not written, in {:.3} s",
            w.before_window,
            w.opened_after_ns as f64 / 1e9
        )?;
    }
    if w.checkpoints > 0 {
        writeln!(out, "    {} checkpoints in the tables", w.checkpoints)?;
    }
    Ok(())
}

/// The summary but for its first line (what was written, which a page
/// written before the other outputs end cannot say).
pub fn write_body(out: &mut dyn Write, r: &RunReport) -> io::Result<()> {
    write_sources(out, r)?;
    write_hosts(out, r)?;
    write_clocks(out, r)?;
    if let Some((head, rest)) = r.from_messages.split_first() {
        writeln!(out, "  clocks from the messages, {head}:")?;
        rows(out, rest, |out, l| writeln!(out, "    {l}"))?;
    }
    write_messages(out, r)?;
    let notes = warnings_of(r);
    if !notes.is_empty() {
        writeln!(out, "  warnings:")?;
        rows(out, &notes, |out, w| writeln!(out, "    {w}"))?;
    }
    Ok(())
}

/// Per source: counts, time span, notes.
fn write_sources(out: &mut dyn Write, r: &RunReport) -> io::Result<()> {
    writeln!(out, "  sources:")?;
    rows(out, &r.sources, |out, s| {
        let name = s.path.file_name().map_or_else(
            || s.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let more = match s.more_files {
            0 => String::new(),
            1 => " (+1 file)".to_string(),
            n => format!(" (+{n} files)"),
        };
        write!(
            out,
            "    {:<8}{name}{more}: {} records, {} events",
            s.kind, s.records, s.events
        )?;
        if s.reordered > 0 {
            write!(out, ", {} reordered", s.reordered)?;
        }
        if s.warnings > 0 {
            write!(out, ", {} warnings", s.warnings)?;
        }
        if let Some((a, b)) = s.span {
            write!(
                out,
                ", {} to {} s after T0",
                crate::time::millis(a - r.origin),
                crate::time::millis(b - r.origin)
            )?;
        }
        writeln!(out)?;
        rows(out, &s.notes, |out, n| writeln!(out, "      {n}"))
    })?;
    Ok(())
}

/// Every host name seen and the Machine it became.
fn write_hosts(out: &mut dyn Write, r: &RunReport) -> io::Result<()> {
    writeln!(out, "  hosts:")?;
    first_rows(
        out,
        &r.hosts,
        r.hosts_total,
        |out, (name, machine, cluster)| {
            let place = cluster
                .as_ref()
                .map_or_else(String::new, |c| format!(" in cluster {c}"));
            if name == machine {
                writeln!(out, "    {name}: Machine {machine}{place}")
            } else {
                writeln!(out, "    {name}: unified with Machine {machine}{place}")
            }
        },
    )?;
    Ok(())
}

/// The clock corrections, and the sources no clock stamped.
fn write_clocks(out: &mut dyn Write, r: &RunReport) -> io::Result<()> {
    match &r.reference {
        None => writeln!(
            out,
            "  clocks: no sync file; every time is taken as on the reference clock"
        )?,
        Some(reference) => {
            writeln!(out, "  clocks (reference {reference}):")?;
            let corrected: Vec<_> = r.clocks.iter().filter(|c| c.map.is_some()).collect();
            rows(out, &corrected, |out, c| {
                let Some((name, map, lines)) = &c.map else {
                    return Ok(());
                };
                let offset = map.offset_at_reference(r.origin) as f64 / 1e9;
                let what = if c.from_messages && *lines == 0 {
                    "the reference of the corrections from the messages".to_string()
                } else if c.from_messages {
                    format!("from {lines} message(s)")
                } else {
                    format!("{lines} sync line(s)")
                };
                // An estimate's band is in the messages' own lines.
                let band = match c.band.filter(|_| !c.from_messages) {
                    Some(b) => format!(" ± {}", crate::time::format_duration(b)),
                    None if !c.from_messages && *lines == 2 => {
                        " (± unknown: two lines say nothing of their scatter)".to_string()
                    }
                    None => String::new(),
                };
                let drift = match c.dropped {
                    Some((ppm, moved)) => format!(
                        "drift {ppm:+.3} ppm not applied (it moves the clock {} across the lines, within their scatter)",
                        crate::time::format_duration(moved.saturating_abs())
                    ),
                    None => format!("drift {:+.3} ppm", map.drift_ppm()),
                };
                writeln!(
                    out,
                    "    {}{}: offset {offset:+.6} s{band} at T0, {drift}, {what}",
                    c.host,
                    if name != &c.host && !c.from_messages {
                        format!(" (sync name {name})")
                    } else {
                        String::new()
                    },
                )
            })?;
            let missing: Vec<&str> = r
                .clocks
                .iter()
                .filter(|c| c.map.is_none())
                .map(|c| c.host.as_str())
                .collect();
            if !missing.is_empty() {
                writeln!(
                    out,
                    "    uncorrected ({}): {}",
                    if r.corrected_from_messages {
                        "no sync line, no message to the reference"
                    } else {
                        "not in the sync file"
                    },
                    missing.join(", ")
                )?;
            }
        }
    }
    let unstamped: Vec<String> = r
        .sources
        .iter()
        .filter(|s| s.clock_host.is_none())
        .map(|s| {
            s.path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        })
        .collect();
    if !unstamped.is_empty() {
        writeln!(
            out,
            "    no collector named, taken as reference time: {}",
            unstamped.join(", ")
        )?;
    }
    Ok(())
}

/// Message pairing and causality per message-passing source.
fn write_messages(out: &mut dyn Write, r: &RunReport) -> io::Result<()> {
    let with_messages: Vec<_> = r
        .sources
        .iter()
        .filter_map(|s| s.messages.as_ref().map(|m| (s, m)))
        .collect();
    if with_messages.is_empty() {
        writeln!(
            out,
            "  messages: none (no message-passing source in this run)"
        )?;
    }
    for (s, m) in with_messages {
        let name = s
            .path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let violations: u64 = m.violations.values().map(|v| v.0).sum();
        writeln!(
            out,
            "  messages ({name}): {} matched, {} send(s) and {} receive(s) unmatched; {violations} causality violation(s) beyond 1 µs, {} receive(s) up to 1 µs early",
            m.matched, m.unmatched_sends, m.unmatched_recvs, m.early_within_tolerance
        )?;
        rows(out, &m.unmatched, |out, u| {
            writeln!(out, "    unmatched {u}")
        })?;
        let pairs: Vec<_> = m.violations.iter().collect();
        rows(out, &pairs, |out, ((from, to), (n, worst, which))| {
            writeln!(
                out,
                "    {from} -> {to}: {n} receive(s) before their send; worst {} early ({which})",
                crate::time::format_duration(*worst)
            )
        })?;
    }
    Ok(())
}

/// Writes only the warnings, for `-q` runs: damage in an input is
/// reported even when the summary is not wanted.
pub fn write_warnings(out: &mut dyn Write, r: &RunReport) -> io::Result<()> {
    let notes = warnings_of(r);
    if notes.is_empty() {
        return Ok(());
    }
    writeln!(out, "integrador: warnings:")?;
    rows(out, &notes, |out, w| writeln!(out, "    {w}"))
}

/// Damage found in the inputs, then the run's own warnings.
fn warnings_of(r: &RunReport) -> Vec<&String> {
    r.sources
        .iter()
        .flat_map(|s| s.damage.iter())
        .chain(r.warnings.iter())
        .collect()
}
