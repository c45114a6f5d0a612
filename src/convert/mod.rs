//! Converters: records of one decoder crate → model events, following the
//! thesis' event-mapping tables (appendix C). Each converter is one
//! [`crate::source::EventSource`]; each kind of source (`-ganglia`,
//! `-pcp`...) is one [`SourceKind`], and [`kinds`] is the one list of
//! them.

pub mod ganglia;
pub mod mpi;
pub mod os;
pub mod pcp;
pub mod rastro;
pub mod sched;

use crate::cli::Config;
use crate::error::Result;
use crate::registry::Registry;
use crate::source::EventSource;
use crate::timeline::Clock;
use std::path::PathBuf;

/// One kind of source: its options, its section of the hierarchy file, the
/// files it reads, and how they open.
///
/// The command line is built from every kind's options and each kind
/// takes its values. A run then asks every kind for the files it will
/// read (before any is read: the output must be none of them, and
/// read-once inputs are spooled from the start), lets each read its
/// section of the hierarchy, and opens the kinds in table order.
pub trait SourceKind {
    /// The option that names its inputs, as the thesis spells it.
    fn option(&self) -> &'static str;
    /// Its command-line options, the one naming its inputs first, under
    /// its own heading of `--help`.
    fn args(&self) -> Vec<clap::Arg>;
    /// Its options the thesis spells with one dash, without the dash.
    fn thesis_options(&self) -> &'static [&'static str];
    /// Takes its options' values: globs expanded, values and combinations
    /// checked (a problem is a usage error).
    fn take(&mut self, m: &clap::ArgMatches) -> Result<()>;
    /// Whether it was given inputs.
    fn has_inputs(&self) -> bool;
    /// The files its options name, which must exist, with their option
    /// (archive base names, which are no files, are checked by `list`).
    fn named_files(&self) -> Vec<Named>;
    /// Whether it opens after the other kinds (to take a host they name);
    /// its sources keep its place in the table's order.
    fn opens_last(&self) -> bool {
        false
    }
    /// Whether its sources pair messages between hosts (their
    /// `MessageStats::clocks`), which `--sync-from-messages` reads in a
    /// first pass.
    fn carries_messages(&self) -> bool {
        false
    }
    /// Lists the files it will read (a directory's files, an archive's
    /// volumes), keeping what it needs to open them.
    fn list(&mut self) -> Result<Vec<PathBuf>>;
    /// Its section of the hierarchy file, if it has settings there.
    fn section(&self) -> Option<&'static str> {
        None
    }
    /// Reads and checks its section (every error citing its line); returns
    /// the files the section names, inputs the output must not be.
    fn configure(&mut self, text: &crate::hierarchy::Text<'_>) -> Result<Vec<Named>>;
    /// Opens its sources.
    fn open(&mut self, cx: &mut OpenCx<'_>) -> Result<()>;
}

/// A file and what names it (`-mpinodes`, `the hierarchy's [deck] map`),
/// for messages.
pub type Named = (&'static str, PathBuf);

/// An option that names a list of input files (globs are expanded by
/// [`crate::cli::expand`]); `thesis` says it is also spelled with one dash.
pub fn files_arg(
    id: &'static str,
    value: &'static str,
    help: &'static str,
    heading: &'static str,
) -> clap::Arg {
    value_arg(id, value, help, heading)
        .num_args(1..)
        .action(clap::ArgAction::Append)
}

/// An option with one value.
pub fn value_arg(
    id: &'static str,
    value: &'static str,
    help: &'static str,
    heading: &'static str,
) -> clap::Arg {
    clap::Arg::new(id)
        .long(id)
        .value_name(value)
        .help(help)
        .help_heading(heading)
}

/// The words given to a list option, in order.
pub fn words(m: &clap::ArgMatches, id: &str) -> Vec<String> {
    m.get_many::<String>(id)
        .map(|v| v.cloned().collect())
        .unwrap_or_default()
}

/// Epoch seconds given to `--option`, a usage error when they are not.
pub fn epoch_arg(m: &clap::ArgMatches, id: &str, example: &str) -> Result<Option<i64>> {
    let Some(s) = m.get_one::<String>(id) else {
        return Ok(None);
    };
    crate::clock::parse_epoch_ns(s.as_bytes())
        .map(Some)
        .ok_or_else(|| {
            crate::error::Error::usage(format!(
                "--{id} `{s}`: expected epoch seconds, as {example}"
            ))
        })
}

/// A usage error when options describing a kind's inputs come without them.
pub fn needs_inputs(has: bool, given: bool, message: &str) -> Result<()> {
    // A plan's task keeps the run's options and reads one kind's files.
    if given && !has && !crate::scale::in_task() {
        return Err(crate::error::Error::usage(message));
    }
    Ok(())
}

/// What a kind opens its sources with, and where they go.
pub struct OpenCx<'a> {
    /// The command line.
    pub cfg: &'a Config,
    /// The unifier.
    pub reg: &'a mut Registry,
    /// The clock map of a host (the sync file's line for it), if any.
    pub clock_of: &'a mut dyn FnMut(&str) -> Option<Clock>,
    /// The opened sources, in the merge's tie order.
    pub sources: Vec<Box<dyn EventSource>>,
    /// Inputs whose clock counts from boot with nothing to place it on
    /// the wall clock, each with the error that refuses it when other
    /// inputs are on the wall clock.
    pub boot_relative: Vec<crate::error::Error>,
    /// A plan's task: its sources, as (kind's place in [`kinds`], place
    /// among that kind's sources in the task, the link channels the whole
    /// run had handed out before it opened).
    pub only: Option<Vec<(usize, usize, u32)>>,
    /// Every source a kind would open, in its order: what a plan hands
    /// its tasks.
    pub marks: Vec<Mark>,
    kind: usize,
    nth: usize,
}

impl<'a> OpenCx<'a> {
    /// A context with no source opened yet.
    pub fn new(
        cfg: &'a Config,
        reg: &'a mut Registry,
        clock_of: &'a mut dyn FnMut(&str) -> Option<Clock>,
    ) -> OpenCx<'a> {
        OpenCx {
            cfg,
            reg,
            clock_of,
            sources: Vec::new(),
            boot_relative: Vec::new(),
            only: None,
            marks: Vec::new(),
            kind: 0,
            nth: 0,
        }
    }

    /// Whether a kind opens its next source, which reads `files`: always,
    /// but in a plan's task only its own (`docs/scale.md`). A kind asks
    /// before each source it would open, in the order it pushes them.
    pub fn wants(&mut self, files: &[PathBuf]) -> bool {
        let here = (self.kind, self.nth);
        self.nth += 1;
        self.marks.push(Mark {
            kind: here.0,
            nth: here.1,
            channels: self.reg.link_channels(),
            files: files.to_vec(),
        });
        let Some(only) = &self.only else {
            return true;
        };
        match only.iter().find(|&&(k, n, _)| (k, n) == here) {
            Some(&(_, _, channels)) => {
                // Its channels are numbered as in the whole run.
                self.reg.set_link_channels(channels);
                true
            }
            None => false,
        }
    }
}

/// A source a kind opens, as a plan's task names it.
#[derive(Debug, Clone)]
pub struct Mark {
    /// Its kind's place in [`kinds`].
    pub kind: usize,
    /// Its place among its kind's sources.
    pub nth: usize,
    /// The link channels handed out before it opened.
    pub channels: u32,
    /// The files it reads.
    pub files: Vec<PathBuf>,
}

/// Every kind of source, in the order the merge breaks ties of equal
/// times (the README's "Order and determinism"). A new source is a decoder
/// crate, a module here, and one line in this table.
pub fn kinds() -> Vec<Box<dyn SourceKind>> {
    vec![
        Box::new(rastro::RastroKind::default()),
        Box::new(mpi::MpiKind::default()),
        Box::new(sched::KernelKind::default()),
        Box::new(ganglia::GangliaKind::default()),
        Box::new(pcp::PcpKind::default()),
    ]
}

/// Reads the sources' sections of `hierarchy`: a key that is neither the
/// file's core nor a kind's section is refused, then each kind reads its
/// own. Returns the files the sections name.
pub fn configure(
    kinds: &mut [Box<dyn SourceKind>],
    hierarchy: &crate::hierarchy::Hierarchy,
) -> Result<Vec<Named>> {
    let sections: Vec<&str> = kinds.iter().filter_map(|k| k.section()).collect();
    hierarchy.check_sections(&sections)?;
    let mut named = Vec::new();
    for kind in kinds {
        named.extend(kind.configure(&hierarchy.text())?);
    }
    Ok(named)
}

/// Opens every kind, those that open last after the others; the sources
/// stay in the table's order (the merge's tie order).
pub fn open_all(kinds: &mut [Box<dyn SourceKind>], cx: &mut OpenCx<'_>) -> Result<()> {
    let mut opened: Vec<Vec<Box<dyn EventSource>>> = kinds.iter().map(|_| Vec::new()).collect();
    let first = (0..kinds.len()).filter(|&i| !kinds[i].opens_last());
    let last = (0..kinds.len()).filter(|&i| kinds[i].opens_last());
    let order: Vec<usize> = first.chain(last).collect();
    for i in order {
        if let (Some(kind), Some(slot)) = (kinds.get_mut(i), opened.get_mut(i)) {
            (cx.kind, cx.nth) = (i, 0);
            if cx
                .only
                .as_ref()
                .is_some_and(|o| o.iter().all(|&(k, _, _)| k != i))
            {
                continue;
            }
            kind.open(cx)?;
            *slot = std::mem::take(&mut cx.sources);
        }
    }
    cx.sources = opened.into_iter().flatten().collect();
    Ok(())
}

/// The start of a file, for content detection (kept for its reader when
/// the input is a pipe).
pub fn head(path: &std::path::Path) -> Result<Vec<u8>> {
    crate::input::head(path, 4096).map_err(|e| crate::error::Error::in_file(path, e))
}

/// A directory where an option reads files is advice, not a read error.
/// Only metadata is looked at: a pipe is not touched.
pub fn refuse_directories(option: &str, paths: &[PathBuf], pattern: &str) -> Result<()> {
    match paths.iter().find(|p| p.is_dir()) {
        None => Ok(()),
        Some(dir) => Err(crate::error::Error::usage(format!(
            "{} (under {option}) is a directory: give the files in it, e.g. {option} '{}/{pattern}'",
            dir.display(),
            dir.display().to_string().trim_end_matches('/')
        ))),
    }
}

/// Expands the words of a file list: words with `*`, `?` or `[` are globs
/// (integrador expands quoted globs itself, as the thesis' `-pcp pcp_*`),
/// sorted, and must match something; other words are paths. A file named
/// twice is read once.
pub fn expand(option: &str, words: &[String]) -> Result<Vec<PathBuf>> {
    // A plan's task reads its own source's files only (docs/scale.md).
    if let Some(files) = crate::scale::files_of(option) {
        return Ok(files);
    }
    let mut out: Vec<PathBuf> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for w in words {
        if w.contains(['*', '?', '[']) && !std::path::Path::new(w).exists() {
            let paths = glob::glob(w).map_err(|e| {
                crate::error::Error::usage(format!("{option}: bad glob `{w}`: {e}"))
            })?;
            let mut matched: Vec<PathBuf> = Vec::new();
            for p in paths {
                matched.push(p.map_err(|e| {
                    crate::error::Error::input(format!("{}: {}", e.path().display(), e.error()))
                })?);
            }
            if matched.is_empty() {
                return Err(crate::error::Error::input(format!(
                    "{option} `{w}` matches no file"
                )));
            }
            matched.sort();
            for p in matched {
                if seen.insert(p.clone()) {
                    out.push(p);
                }
            }
        } else {
            let p = PathBuf::from(w);
            if seen.insert(p.clone()) {
                out.push(p);
            }
        }
    }
    Ok(out)
}
