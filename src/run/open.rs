//! The first half of a run, shared by a plan: list, check and open every
//! input, pull the first events, fix T0.

use crate::cli::Config;
use crate::clocks::RunClocks;
use crate::convert::{OpenCx, SourceKind};
use crate::error::{Error, Result};
use crate::hierarchy::Hierarchy;
use crate::input;
use crate::merge::Merge;
use crate::outputs::Outputs;
use crate::registry::Registry;
use crate::report::ClockUse;
use std::path::PathBuf;

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

/// A plan's task, as the run starts it (`docs/scale.md`): the registry
/// the whole run had once its sources were open, the sources to open
/// (`OpenCx::only`), the channels handed out by every source's open, the
/// whole run's T0 and clocks from the messages.
pub struct Seed {
    /// The registry once the whole run's sources were open.
    pub registry: crate::registry::Snapshot,
    /// The sources to open: kind, place, channels before it.
    pub only: Vec<(usize, usize, u32)>,
    /// The channels handed out once every source was open.
    pub channels: u32,
    /// The whole run's T0.
    pub origin: i64,
    /// The clocks the plan estimated from the run's messages.
    pub estimates: Option<crate::clockfit::Estimates>,
    /// The inputs its sources read, as the plan saw them.
    pub inputs: Vec<PathBuf>,
}

/// A run with its sources open and their first events pulled.
pub struct Opened {
    /// The unifier, as the opens left it.
    pub reg: Registry,
    /// The sources, their first events pulled.
    pub merge: Merge,
    /// The sync file and the clocks from the messages.
    pub clocks: RunClocks,
    /// Every source a kind opened, with its files.
    pub marks: Vec<crate::convert::Mark>,
    /// The registry once every source was open, before any event.
    pub at_open: Option<crate::registry::Snapshot>,
    /// T0: the earliest time floored to the millisecond.
    pub origin: i64,
    /// Every input file with the option that named it.
    pub inputs: Vec<(&'static str, PathBuf)>,
    /// The hosts whose clocks the sources asked for.
    pub used: Vec<ClockUse>,
    /// Read-once inputs stay spooled while this lives.
    pub streams: input::Scope,
}

/// Lists, checks and opens every input; `outputs` are refused as inputs
/// and created before the work. A plan has none and keeps the registry
/// as the sources' opens left it (`Opened::at_open`).
pub fn open(
    cfg: &Config,
    kinds: &mut [Box<dyn SourceKind>],
    mut outputs: Option<&mut Outputs>,
    mut seed: Option<Seed>,
) -> Result<Opened> {
    let planning = outputs.is_none();
    cfg.refuse_missing_files(kinds)?;
    let inputs = list_inputs(cfg, kinds)?;
    if let Some(o) = outputs.as_deref_mut() {
        o.refuse_inputs(&inputs)?;
    }
    if let Some(p) = &cfg.write_sync {
        crate::clockfit::apply::refuse_inputs(
            p,
            cfg.output.as_ref(),
            inputs.iter().map(|(o, p)| (*o, p.as_path())),
        )?;
    }
    if planning {
        // A plan's tasks read every input again: a pipe is refused
        // before it is read (once read, it would be gone).
        if let Some((_, p)) = inputs.iter().find(|(_, p)| input::is_read_once(p)) {
            return Err(Error::usage(format!(
                "{}: a plan's tasks read their inputs again: give files, not a pipe",
                p.display()
            )));
        }
    }
    let streams = input::Scope::enter(inputs.iter().map(|(_, p)| p.as_path()));
    crate::prefetch::set_threads(cfg.threads);
    let options: Vec<&str> = kinds.iter().map(|k| k.option()).collect();
    crate::sniff::check_all(&inputs, &options)?;
    // Created now so that an unwritable place fails before the work; the
    // temporary file is removed on any error or ending signal.
    if let Some(o) = outputs.as_deref_mut() {
        o.create()?;
    }
    let hierarchy = match &cfg.hierarchy {
        Some(p) => Hierarchy::load(p)?,
        None => Hierarchy::builtin(),
    };
    let named = crate::convert::configure(kinds, &hierarchy)?;
    if let Some(o) = outputs {
        o.refuse_inputs(&named)?;
    }
    let clocks = match &mut seed {
        Some(s) => RunClocks::seeded(cfg, &hierarchy, s.estimates.take())?,
        None => RunClocks::load(cfg, kinds, &hierarchy)?,
    };
    let mut reg = match &seed {
        Some(s) => Registry::from_snapshot(hierarchy, &s.registry)
            .map_err(|e| Error::usage(format!("the plan: {e}")))?,
        None => Registry::new(hierarchy),
    };
    let mut lookup = clocks.lookup(reg.hierarchy.identity.clone());
    let mut clock_of = |host: &str| lookup.of(host).map(crate::timeline::Clock::new);
    let mut cx = OpenCx::new(cfg, &mut reg, &mut clock_of);
    cx.only = seed.as_mut().map(|s| std::mem::take(&mut s.only));
    crate::convert::open_all(kinds, &mut cx)?;
    let OpenCx {
        sources,
        mut boot_relative,
        marks,
        ..
    } = cx;
    let used = std::mem::take(&mut lookup.used);
    // Boot-relative times beside wall-clock ones would be years apart.
    if !boot_relative.is_empty() && sources.len() > boot_relative.len() {
        return Err(boot_relative.swap_remove(0));
    }
    if let Some(s) = &seed {
        let found: Vec<PathBuf> = sources.iter().map(|x| x.stats().path.clone()).collect();
        if found != s.inputs {
            let list = |v: &[PathBuf]| {
                let v: Vec<String> = v.iter().map(|p| p.display().to_string()).collect();
                if v.is_empty() {
                    "nothing".to_string()
                } else {
                    v.join(", ")
                }
            };
            return Err(Error::input(format!(
                "the task should read {} and found {}: the inputs are not the plan's any more; make the plan again",
                list(&s.inputs),
                list(&found)
            )));
        }
        // Later sources' channels come after every open's, as in the run.
        reg.set_link_channels(reg.link_channels().max(s.channels));
    }
    let at_open = planning.then(|| reg.snapshot());
    let merge = Merge::new(sources, &mut reg)?;
    // A task's T0 is the whole run's: its inputs may hold no event, as
    // one input of a run may.
    if let Some(s) = &seed {
        return Ok(Opened {
            reg,
            merge,
            clocks,
            marks,
            at_open,
            origin: s.origin,
            inputs,
            used,
            streams,
        });
    }
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
    Ok(Opened {
        reg,
        merge,
        clocks,
        marks,
        at_open,
        origin,
        inputs,
        used,
        streams,
    })
}
