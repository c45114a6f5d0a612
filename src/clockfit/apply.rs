//! The run's side of the estimation: the first pass of
//! `--sync-from-messages`, and what the summary says at the end (the
//! estimates, the check of a sync file, the advice, `--write-sync`).

use super::{sync_lines, Estimates, Estimator};
use crate::cli::{Config, Output};
use crate::clock::SyncTable;
use crate::clocks::Lookup;
use crate::convert::{OpenCx, SourceKind};
use crate::error::{Error, Result};
use crate::hierarchy::Hierarchy;
use crate::identity::HostIdentity;
use crate::output::Target;
use crate::registry::Registry;
use crate::source::SourceStats;
use std::io::Write;
use std::path::Path;

/// The hosts taken as right: the sync file's reference, then its hosts.
fn fixed(sync: Option<&SyncTable>) -> Vec<String> {
    let Some(t) = sync else { return Vec::new() };
    std::iter::once(t.reference.clone())
        .chain(t.hosts.iter().map(|h| h.host.to_string()))
        .collect()
}

/// The first pass: every kind that pairs messages is opened and read to
/// its end on a scratch registry, with the sync file's clocks; the
/// messages give the estimates for every host the file does not correct.
pub fn first_pass(
    cfg: &Config,
    kinds: &mut [Box<dyn SourceKind>],
    hierarchy: &Hierarchy,
    sync: Option<&SyncTable>,
) -> Result<Estimates> {
    let ids = hierarchy.identity.clone();
    let mut reg = Registry::new(hierarchy.clone());
    let mut clocks = Lookup::new(sync, None, ids.clone());
    let mut clock_of = |h: &str| clocks.of(h).map(crate::timeline::Clock::new);
    let mut cx = OpenCx::new(cfg, &mut reg, &mut clock_of);
    for kind in kinds.iter_mut().filter(|k| k.carries_messages()) {
        kind.open(&mut cx)?;
    }
    let sources = std::mem::take(&mut cx.sources);
    drop(cx);
    let mut est = Estimator::default();
    for mut s in sources {
        while s.next_event(&mut reg)?.is_some() {}
        if let Some(m) = &s.stats().messages {
            est.add(&m.clocks);
        }
    }
    Ok(est.estimate(&fixed(sync), &|a, b| ids.same(a, b)))
}

/// What the summary says of clocks and messages, found at the end of a
/// run from the messages it paired.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Per host: estimate, band, bound.
    pub lines: Vec<String>,
    /// The reference of the estimates.
    pub reference: Option<String>,
    /// A sync file outside the band, a sync file not written.
    pub warnings: Vec<String>,
}

/// What the run needs to report and write the estimates.
pub struct End<'a> {
    /// The command line.
    pub cfg: &'a Config,
    /// The sources, finished.
    pub sources: &'a [SourceStats],
    /// The sync file and its path.
    pub sync: Option<(&'a SyncTable, &'a Path)>,
    /// The first pass's estimates, when applied.
    pub applied: Option<&'a Estimates>,
    /// Host identity rules.
    pub ids: &'a HostIdentity,
    /// T0.
    pub origin: i64,
}

impl End<'_> {
    /// The estimates, the sync file's check, the advice; `--write-sync`
    /// written.
    pub fn finish(self) -> Result<Outcome> {
        let mut est = Estimator::default();
        let mut violations = 0u64;
        for m in self.sources.iter().filter_map(|s| s.messages.as_ref()) {
            est.add(&m.clocks);
            violations += m.violations.values().map(|v| v.0).sum::<u64>();
        }
        let mut out = Outcome::default();
        let table = self.sync.map(|(t, _)| t);
        let same = |a: &str, b: &str| self.ids.same(a, b);
        if let Some((t, path)) = self.sync.filter(|_| !est.is_empty()) {
            // Every pair of hosts the file corrects (one of them or both),
            // against the band their messages leave around the difference
            // of the two corrections: the reference itself may send
            // nothing (rastro_timesync run on the front-end).
            let covered = |h: &str| same(h, &t.reference) || t.lookup(h, self.ids).is_some();
            for p in est.pair_fits() {
                let (ca, cb) = (covered(&p.a), covered(&p.b));
                let Some(by) = p.outside().filter(|_| ca || cb) else {
                    continue;
                };
                // The fit moves B onto A; said of the host the file moves.
                let ask = p.fit.line.at(p.span.0);
                let (moved, other, ask) = if cb {
                    (&p.b, &p.a, ask)
                } else {
                    (&p.a, &p.b, -ask)
                };
                out.warnings.push(format!(
                    "{}: the correction of {moved} against {other} is {} outside what their {} messages allow (they ask {moved} {} more, ± {}): the sync file is wrong or stale; without it, --sync-from-messages would correct the clocks from the messages (--write-sync FILE keeps them as a sync file)",
                    path.display(),
                    crate::time::format_duration(by),
                    p.messages,
                    super::signed(ask),
                    crate::time::format_duration(p.fit.bound.wide().unwrap_or(0)),
                ));
            }
        }
        let wanted = self.cfg.write_sync.is_some() || violations > 0;
        let found;
        let estimates = match self.applied {
            Some(e) => Some(e),
            None if wanted && !est.is_empty() => {
                found = est.estimate(&fixed(table), &same);
                Some(&found)
            }
            None => None,
        };
        if let Some(e) = estimates.filter(|e| !e.hosts.is_empty() || !e.unreached.is_empty()) {
            out.lines = vec![format!(
                "onto {}'s clock, {}",
                e.reference,
                if self.applied.is_some() {
                    "applied (--sync-from-messages)"
                } else {
                    "not applied"
                }
            )];
            out.lines.extend(e.describe(self.origin));
            out.reference = Some(e.reference.clone());
            if self.applied.is_none() && violations > 0 && !e.hosts.is_empty() {
                out.lines.push(format!(
                    "{violations} receive(s) before their send: --sync-from-messages would apply these corrections (--write-sync FILE keeps them as a sync file)"
                ));
            }
        } else if self.applied.is_none() && self.cfg.write_sync.is_some() {
            out.lines = vec!["none: no message links two hosts".to_string()];
        }
        if let Some(path) = &self.cfg.write_sync {
            match estimates.filter(|e| !e.hosts.is_empty()) {
                Some(e) => write_sync(path, e, table, self.ids, self.span())?,
                None => out.warnings.push(format!(
                    "--write-sync {}: not written: no message links two hosts, so no clock was estimated",
                    path.display()
                )),
            }
        }
        Ok(out)
    }

    /// The run's span on the reference clock.
    fn span(&self) -> (i64, i64) {
        let spans = self.sources.iter().filter_map(|s| s.span);
        let lo = spans.clone().map(|s| s.0).min().unwrap_or(self.origin);
        let hi = spans.map(|s| s.1).max().unwrap_or(self.origin);
        (lo, hi)
    }
}

/// Refuses a `--write-sync` file that is an input or the trace (exit 2).
pub fn refuse_inputs<'a>(
    path: &Path,
    trace: Option<&Output>,
    inputs: impl IntoIterator<Item = (&'a str, &'a Path)>,
) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let same_as_trace = match trace {
        Some(Output::File(t)) => t == path || id(t).is_some_and(|t| Some(t) == id(path)),
        Some(Output::Stdout) | None => false,
    };
    if same_as_trace {
        return Err(Error::usage(format!(
            "--write-sync {} is also the trace (-o): give another file",
            path.display()
        )));
    }
    let Some(me) = id(path) else { return Ok(()) };
    for (option, p) in inputs {
        if id(p) == Some(me) {
            return Err(Error::usage(format!(
                "--write-sync {} is the input {} ({option}): refusing to overwrite an input",
                path.display(),
                p.display()
            )));
        }
    }
    Ok(())
}

/// Writes the corrections as a sync file (conventions §1, nanoseconds):
/// the estimated hosts by two points at their messages' ends, the hosts
/// the sync file corrects by theirs over the run, under a temporary name
/// renamed at the end.
fn write_sync(
    path: &Path,
    e: &Estimates,
    sync: Option<&SyncTable>,
    ids: &HostIdentity,
    span: (i64, i64),
) -> Result<()> {
    let mut text = format!(
        "# clock corrections written by integrador {} (--write-sync): from the messages between hosts, onto {}'s clock\n# resolution 1000000000\n",
        env!("CARGO_PKG_VERSION"),
        e.reference
    );
    if let Some(t) = sync {
        for h in &t.hosts {
            if e.get(&h.host).is_none() && !ids.same(&h.host, &t.reference) {
                let local = (h.map.local_of(span.0), h.map.local_of(span.1));
                text.push_str(&sync_lines(&t.reference, &h.host, &h.map, local));
            }
        }
    }
    for h in &e.hosts {
        text.push_str(&sync_lines(
            &e.reference,
            &h.host,
            &h.line.clock_map(),
            h.span,
        ));
    }
    let target = Target::resolve(&Output::File(path.to_path_buf()))?;
    let shown = target.shown();
    let mut sink = target.create()?;
    sink.write_all(text.as_bytes())
        .map_err(|err| Error::in_file(path, format!("write error: {err}")))?;
    sink.commit(&shown)
}
