//! What a run reports: the figures and warnings the summary prints, and
//! the record of which clocks the sources asked for.

use crate::cli::Output;
use crate::clock::{ClockMap, SyncTable};
pub use crate::clocks::ClockUse;
use crate::registry::Registry;
use crate::sink::SinkStats;
use crate::source::SourceStats;
use std::path::Path;

/// Everything the summary reports.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// Per source.
    pub sources: Vec<SourceStats>,
    /// What was written (filled in once the sinks are done).
    pub written: SinkStats,
    /// Where in `warnings` the sinks' own warning goes.
    sinks_warning_at: usize,
    /// T0 in ns.
    pub origin: i64,
    /// Host names seen and the Machine each became.
    /// The first few of them (the summary shows no more).
    pub hosts: Vec<(String, String, Option<String>)>,
    /// How many host names were seen in all.
    pub hosts_total: usize,
    /// Clocks used.
    pub clocks: Vec<ClockUse>,
    /// Sync reference host, if a sync file was given (or clocks were
    /// corrected from the messages).
    pub reference: Option<String>,
    /// Clocks from the messages: per host, the estimate, its band and
    /// what bounds it; empty when not asked for and not needed.
    pub from_messages: Vec<String>,
    /// Whether the clocks were corrected from the messages.
    pub corrected_from_messages: bool,
    /// Warnings of the hierarchy and the unifier.
    pub warnings: Vec<String>,
    /// Where the trace went.
    pub output: Option<Output>,
    /// Where the entity tables went.
    pub tables: Option<std::path::PathBuf>,
    /// Where the clocks page went.
    pub page: Option<std::path::PathBuf>,
    /// The window written (`--from`, `--to`) and the checkpoints asked for.
    pub cut: crate::sink::Cut,
}

/// The report of a finished run.
pub struct Finished<'a> {
    /// The unifier, with its hosts and warnings.
    pub reg: &'a Registry,
    /// Each source's counts.
    pub sources: Vec<SourceStats>,
    /// Notes of the writing (series kept apart).
    pub notes: Vec<String>,
    /// T0.
    pub origin: i64,
    /// The clocks asked for.
    pub clocks: Vec<ClockUse>,
    /// The sync table and its file, if any.
    pub sync: Option<(&'a SyncTable, &'a Path)>,
    /// What the messages say of the clocks.
    pub from_messages: crate::clockfit::apply::Outcome,
    /// Whether the clocks were corrected from the messages.
    pub corrected_from_messages: bool,
    /// The output.
    pub output: Option<Output>,
    /// The entity tables.
    pub tables: Option<std::path::PathBuf>,
    /// The clocks page.
    pub page: Option<std::path::PathBuf>,
    /// The window.
    pub cut: crate::sink::Cut,
}

impl Finished<'_> {
    /// The report, with every warning a user should read.
    pub fn report(self) -> RunReport {
        let reg = self.reg;
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
        warnings.extend(self.notes);
        let sinks_warning_at = warnings.len();
        warnings.extend(span_warnings(&self.sources));
        if let Some((table, path)) = self.sync {
            warnings.extend(corrects_nothing(table, path, &self.clocks));
        }
        warnings.extend(self.from_messages.warnings);
        let reference = match (self.sync, self.corrected_from_messages) {
            (Some((t, _)), _) => Some(t.reference.clone()),
            (None, true) => self.from_messages.reference.clone(),
            (None, false) => None,
        };
        RunReport {
            sources: self.sources,
            written: SinkStats::default(),
            sinks_warning_at,
            origin: self.origin,
            hosts,
            hosts_total: reg.hosts_seen().len(),
            clocks: self.clocks,
            reference,
            from_messages: self.from_messages.lines,
            corrected_from_messages: self.corrected_from_messages,
            warnings,
            output: self.output,
            tables: self.tables,
            page: self.page,
            cut: self.cut,
        }
    }
}

impl RunReport {
    /// The report of a run of nothing: what a sink driven outside a run
    /// (a test, a trace replayed) is told at its end.
    pub fn empty() -> RunReport {
        RunReport {
            sources: Vec::new(),
            written: SinkStats::default(),
            sinks_warning_at: 0,
            origin: 0,
            hosts: Vec::new(),
            hosts_total: 0,
            clocks: Vec::new(),
            reference: None,
            from_messages: Vec::new(),
            corrected_from_messages: false,
            warnings: Vec::new(),
            output: None,
            tables: None,
            page: None,
            cut: crate::sink::Cut::default(),
        }
    }

    /// Takes the sinks' counts, and their warning.
    pub fn wrote(&mut self, stats: SinkStats) {
        self.written = stats;
        if stats.skipped_pops > 0 {
            let at = self.sinks_warning_at.min(self.warnings.len());
            self.warnings.insert(
                at,
                format!(
                    "{} state end(s) had no open state in time order (a damaged or reordered input) and were left out",
                    stats.skipped_pops
                ),
            );
        }
    }
}

/// A warning when the sync file corrects no clock of the run.
fn corrects_nothing(table: &SyncTable, path: &Path, clocks: &[ClockUse]) -> Option<String> {
    let corrects = |c: &ClockUse| {
        c.map
            .as_ref()
            .is_some_and(|(_, m, _)| !matches!(m, ClockMap::Identity))
    };
    if clocks.iter().any(corrects) {
        return None;
    }
    let theirs: Vec<&str> = table.hosts.iter().take(4).map(|h| &*h.host).collect();
    let ours: Vec<&str> = clocks.iter().take(4).map(|c| c.host.as_str()).collect();
    let list = |v: Vec<&str>, none: &str| {
        if v.is_empty() {
            none.to_string()
        } else {
            v.join(", ")
        }
    };
    Some(format!(
        "{} corrects no clock of this run: it measures {} against {}, the inputs were stamped by {}",
        path.display(),
        list(theirs, "no host"),
        table.reference,
        list(ours, "no named host")
    ))
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
    // The hull of every other source's span, from the hulls of the
    // sources before and after each one: linear in the number of sources.
    let join = |h: Option<(i64, i64)>, s: Option<(i64, i64)>| match (h, s) {
        (Some((p, q)), Some((x, y))) => Some((p.min(x), q.max(y))),
        (h, s) => h.or(s),
    };
    let mut before = vec![None; sources.len() + 1];
    for (i, s) in sources.iter().enumerate() {
        before[i + 1] = join(before[i], s.span);
    }
    let mut after = vec![None; sources.len() + 1];
    for (i, s) in sources.iter().enumerate().rev() {
        after[i] = join(after[i + 1], s.span);
    }
    let mut out = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let Some((a, b)) = s.span else { continue };
        if a < PLAUSIBLE_START_NS {
            out.push(format!(
                "{}: its times start at {} UTC, before 1990: a wrong clock or a stray record (T0 follows the earliest time)",
                name(s),
                crate::time::utc(a)
            ));
            continue;
        }
        let others = join(before[i], after[i + 1]);
        if let Some((x, y)) = others {
            let gap = (x.saturating_sub(b)).max(a.saturating_sub(y));
            if gap > FAR_APART_NS {
                out.push(format!(
                    "{}: its times ({} to {} UTC) are {} h away from the other inputs' ({} to {} UTC): recorded at another time?",
                    name(s),
                    crate::time::utc(a),
                    crate::time::utc(b),
                    gap / FAR_APART_NS,
                    crate::time::utc(x),
                    crate::time::utc(y)
                ));
            }
        }
    }
    out
}
