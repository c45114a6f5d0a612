//! One integration run, in the order data flows: settle the output, list
//! every input, load the hierarchy and the clocks, open each kind of source
//! ([`crate::convert::kinds`], which is also the merge's tie order), merge,
//! write, report.

use crate::cli::{Config, Output};
use crate::convert::SourceKind;
use crate::error::{Error, Result};
use crate::outputs::Outputs;
use crate::progress::Progress;
use crate::report::Finished;
use crate::sink::drive::Filters;
use crate::sink::{io_error, write_all, RunEnd, TraceSink, WriteError};
use std::io::{self, IsTerminal};

pub use crate::report::{ClockUse, RunReport};

mod open;
pub use open::{open, Opened, Seed};

/// Runs an integration. Progress goes to stderr when it is a terminal.
/// `kinds` have taken their options ([`crate::cli::take_sources`]); a
/// plan's task brings its `seed`.
pub fn integrate(
    cfg: &Config,
    mut kinds: Vec<Box<dyn SourceKind>>,
    seed: Option<Seed>,
) -> Result<RunReport> {
    // The output is settled before any input is read: a wrong -o fails at
    // once, and an input named as the output is never touched.
    let mut outputs = Outputs::settle(cfg)?;
    let Opened {
        mut reg,
        mut merge,
        clocks: run_clocks,
        origin,
        inputs,
        used,
        streams: _streams,
        ..
    } = open(cfg, &mut kinds, Some(&mut outputs), seed)?;
    let (partial, target_name) = (outputs.partial(), outputs.shown());
    let first = merge.peek_time().unwrap_or(origin);
    let options: Vec<&str> = kinds.iter().map(|k| k.option()).collect();
    let progress = (!cfg.quiet && io::stderr().is_terminal())
        .then(|| Progress::new(Progress::total(&inputs, &options)));
    let cut = cfg.cut(origin)?;
    if let Some(to) = cut.to.filter(|&to| to <= first) {
        // The message names the run's span: read to its end.
        while merge.next(&mut reg)?.is_some() {}
        let (first, last) = merge.span();
        return Err(crate::time::outside(
            cut.from,
            Some(to),
            first.unwrap_or(origin),
            last,
            origin,
            "",
        ));
    }
    let sink = outputs.start(cfg, origin, cut);
    let mut sink = sink.map_err(|e| io_error(WriteError::Io(e), &target_name, partial))?;
    let mut filters = Filters::for_merge(&merge);
    let written = write_all(
        &mut merge,
        &mut reg,
        &mut *sink,
        &mut filters,
        origin,
        progress.as_ref(),
    );
    // A reader that stops early (`integrador ... -o - | head`) is not an
    // error of ours.
    let failed = |e: WriteError| match e {
        WriteError::Io(e)
            if e.kind() == io::ErrorKind::BrokenPipe && cfg.output == Some(Output::Stdout) =>
        {
            Error::broken_pipe()
        }
        e => io_error(e, &target_name, partial),
    };
    written.map_err(failed)?;
    let sources: Vec<_> = merge.sources().iter().map(|s| s.stats().clone()).collect();
    let ids = &reg.hierarchy.identity;
    let from_messages = run_clocks.end(cfg, &sources, ids, origin)?;
    let finished = Finished {
        reg: &reg,
        sources,
        from_messages,
        corrected_from_messages: run_clocks.from_messages(),
        notes: filters.notes(&merge),
        origin,
        clocks: used,
        sync: run_clocks.sync(),
        output: cfg.output.clone(),
        tables: cfg.tables.clone(),
        page: cfg.report.clone(),
        cut,
    };
    let (first, last) = merge.span();
    if cut.from.is_some_and(|t| last.is_some_and(|l| t > l)) {
        let first = first.unwrap_or(origin);
        return Err(crate::time::outside(
            cut.from, cut.to, first, last, origin, "",
        ));
    }
    // The sinks hear the run's report before they end (a format that keeps
    // its provenance stores it), and every output is made whole only
    // once all are complete.
    let mut report = finished.report();
    let hosts = reg.hosts_seen().iter();
    let hosts = hosts.map(|h| (h.name.to_string(), h.machine)).collect();
    let end = RunEnd {
        report: report.clone(),
        hosts,
    };
    let done = sink
        .finish(&reg, &end)
        .map_err(|e| failed(WriteError::Io(e)))?;
    (done.commit)()?;
    if let Some(p) = &progress {
        p.bar.finish_and_clear();
    }
    report.wrote(done.stats);
    Ok(report)
}
