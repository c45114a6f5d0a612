//! One integration run, in the order data flows: settle the output, list
//! every input, load the hierarchy and the clocks, open each kind of source
//! ([`crate::convert::kinds`], which is also the merge's tie order), merge,
//! write, report.

use crate::cli::{Config, Output};
use crate::clocks::RunClocks;
use crate::convert::{OpenCx, SourceKind};
use crate::error::{Error, Result};
use crate::hierarchy::Hierarchy;
use crate::input;
use crate::merge::Merge;
use crate::outputs::Outputs;
use crate::progress::Progress;
use crate::registry::Registry;
use crate::report::Finished;
use crate::sink::drive::Filters;
use crate::sink::{io_error, write_all, RunEnd, TraceSink, WriteError};
use std::io::{self, IsTerminal};
use std::path::PathBuf;

pub use crate::report::{ClockUse, RunReport};

/// Every input file of the run with the option that names it: the
/// hierarchy and sync files, and what each kind lists (a directory's
/// files, an archive's volumes). Listed before any is read: the output
/// must be none of them.
fn list_inputs(
    cfg: &Config,
    kinds: &mut [Box<dyn SourceKind>],
) -> Result<Vec<(&'static str, PathBuf)>> {
    let mut out = Vec::new();
    for (option, p) in [("-hierarchy", &cfg.hierarchy), ("-sync", &cfg.sync)] {
        out.extend(p.iter().map(|p| (option, p.clone())));
    }
    for kind in kinds.iter_mut() {
        let option = kind.option();
        out.extend(kind.list()?.into_iter().map(|p| (option, p)));
    }
    Ok(out)
}

/// Runs an integration. Progress goes to stderr when it is a terminal.
/// `kinds` have taken their options ([`crate::cli::take_sources`]).
pub fn integrate(cfg: &Config, mut kinds: Vec<Box<dyn SourceKind>>) -> Result<RunReport> {
    // The output is settled before any input is read: a wrong -o fails at
    // once, and an input named as the output is never touched.
    let mut outputs = Outputs::settle(cfg)?;
    cfg.refuse_missing_files(&kinds)?;
    let inputs = list_inputs(cfg, &mut kinds)?;
    outputs.refuse_inputs(&inputs)?;
    if let Some(p) = &cfg.write_sync {
        crate::clockfit::apply::refuse_inputs(
            p,
            cfg.output.as_ref(),
            inputs.iter().map(|(o, p)| (*o, p.as_path())),
        )?;
    }
    let _streams = input::Scope::enter(inputs.iter().map(|(_, p)| p.as_path()));
    crate::prefetch::set_threads(cfg.threads);
    let options: Vec<&str> = kinds.iter().map(|k| k.option()).collect();
    crate::sniff::check_all(&inputs, &options)?;
    // Created now so that an unwritable place fails before the work; the
    // temporary file is removed on any error or ending signal.
    outputs.create()?;
    let (partial, target_name) = (outputs.partial(), outputs.shown());
    let hierarchy = match &cfg.hierarchy {
        Some(p) => Hierarchy::load(p)?,
        None => Hierarchy::builtin(),
    };
    let named = crate::convert::configure(&mut kinds, &hierarchy)?;
    outputs.refuse_inputs(&named)?;
    let run_clocks = RunClocks::load(cfg, &mut kinds, &hierarchy)?;
    let mut reg = Registry::new(hierarchy);
    let mut clocks = run_clocks.lookup(reg.hierarchy.identity.clone());
    let mut clock_of = |host: &str| clocks.of(host).map(crate::timeline::Clock::new);
    let mut cx = OpenCx::new(cfg, &mut reg, &mut clock_of);
    crate::convert::open_all(&mut kinds, &mut cx)?;
    let OpenCx {
        sources,
        mut boot_relative,
        ..
    } = cx;
    // Boot-relative times beside wall-clock ones would be years apart.
    if !boot_relative.is_empty() && sources.len() > boot_relative.len() {
        return Err(boot_relative.swap_remove(0));
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
    // docs/output.md: T0 is the earliest time floored to the millisecond,
    // so the data fills a viewer's axis (a whole second squashed short runs).
    let origin = first.div_euclid(1_000_000) * 1_000_000;
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
        clocks: clocks.used,
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
