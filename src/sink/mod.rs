//! The sinks floor: where merged events go, one way.
//!
//! ```text
//! Merge ─► filters (drive.rs) ─► TraceSink ─► Replay (replay.rs) ─► Encoder (a format)
//!           &mut Registry         &Registry    ids, lifetimes,        lines, rows...
//!                                              stacks, values,
//!                                              links, colours
//! ```
//!
//! A [`TraceSink`] is what the run writes to: it reads the registry (never
//! changes it) and is handed the run's report when it finishes. The sinks
//! here are generic machinery ([`Staged`], and [`thread::OnThread`] for a
//! core of its own); what a format says is an [`Encoder`], fed by the one
//! [`Replay`] that keeps the books every format needs. Which encoders a
//! run has comes from the table in [`outputs`], as sources come from
//! `convert::kinds()`. Nothing here names a format: an encoder depends on
//! this module, never the other way (`tests/architecture.rs`).

pub mod actors;
pub mod catalogue;
pub mod drive;
pub mod encoder;
pub mod ids;
pub mod replay;
pub mod thread;

pub use catalogue::Catalogue;
pub use drive::{io_error, write_all, WriteError};
pub use replay::{Book, Cut, Encoder, Held, Points, Replay, Span, SpanEnd};

use crate::model::{ContainerId, Event};
use crate::registry::Registry;
use std::io;

/// What the replay counted of the model events it handed to the
/// encoders: the same for every format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinkStats {
    /// Model events written (not counting declarations), each state
    /// change of a nesting counted as the stack rule says it.
    pub events: u64,
    /// Containers created.
    pub containers: u64,
    /// Variable changes.
    pub variables: u64,
    /// State changes (set, push, pop).
    pub states: u64,
    /// Point events.
    pub events_point: u64,
    /// Arrows (counted at their start).
    pub links: u64,
    /// Time of the last event (ns, reference clock).
    pub last_time: Option<i64>,
    /// State ends that found no open state in time order (a damaged or
    /// reordered input), left out.
    pub skipped_pops: u64,
    /// What the format counts as its records (a Pajé trace's event lines,
    /// as `integrador check` counts them): the summary's first figure.
    pub records: u64,
    /// Events replayed before the window's start (`--from`), not written.
    pub before_window: u64,
    /// How long the replay ran before the window opened (ns of wall
    /// time; 0 without a window).
    pub opened_after_ns: u64,
    /// Checkpoints taken (reference points and the window's end).
    pub checkpoints: u64,
}

/// What a sink is told when the run ends: the run's report as far as it
/// is known before the outputs are complete (everything but the sinks'
/// own counts). A format that stores provenance (tables, an archive's
/// properties) takes it from here.
#[derive(Clone)]
pub struct RunEnd {
    /// The report, its `written` counts not yet filled in.
    pub report: crate::report::RunReport,
    /// Every host name an input used, with the machine it became (the
    /// report keeps only the first few).
    pub hosts: Vec<(String, ContainerId)>,
}

impl RunEnd {
    /// The end of a run of nothing (a test, a replayed trace).
    pub fn empty() -> RunEnd {
        RunEnd {
            report: crate::report::RunReport::empty(),
            hosts: Vec::new(),
        }
    }
}

/// Makes a finished output the output (a temporary file renamed into
/// place); run only once every sink has finished, so that a run that
/// fails in one output leaves none half-made.
pub type Commit = Box<dyn FnOnce() -> crate::error::Result<()> + Send>;

/// A finished sink: its counts, and the step that makes it the output.
pub struct Done {
    /// The counts.
    pub stats: SinkStats,
    /// Makes it the output.
    pub commit: Commit,
}

/// Where merged events go. Sources never see it; it sees only model
/// events and reads the registry's catalogue.
pub trait TraceSink {
    /// Creates containers at `time` in the given order, before any event.
    fn create_in_order(
        &mut self,
        reg: &Registry,
        order: &[ContainerId],
        time: i64,
    ) -> io::Result<()>;
    /// The events that follow come from input `source` (its index in the
    /// merge's order, the `source` of the tables' rows).
    fn source(&mut self, source: u32);
    /// Writes a run of events in merge order.
    fn write_run(&mut self, reg: &Registry, events: &[Event]) -> io::Result<()>;
    /// Ends the output: everything open is closed and flushed; the
    /// output is made whole by the [`Done`]'s commit.
    fn finish(self: Box<Self>, reg: &Registry, end: &RunEnd) -> io::Result<Done>;
}

/// What makes an encoder's finished output the output.
pub type CommitWith<O> = Box<dyn FnOnce(O) -> crate::error::Result<()> + Send>;

/// An encoder behind the replay, on the run's thread.
pub struct Staged<E: Encoder> {
    replay: Replay<E>,
    commit: CommitWith<E::Out>,
}

impl<E: Encoder> Staged<E> {
    /// The replay feeding `encoder`; `commit` makes its output the output.
    pub fn new(encoder: E, commit: CommitWith<E::Out>) -> Staged<E> {
        Staged {
            replay: Replay::new(encoder),
            commit,
        }
    }

    /// The same, for the window `cut` of the run.
    pub fn within(self, cut: Cut) -> Staged<E> {
        Staged {
            replay: self.replay.within(cut),
            commit: self.commit,
        }
    }
}

impl<E: Encoder> TraceSink for Staged<E>
where
    E::Out: Send + 'static,
{
    fn create_in_order(
        &mut self,
        reg: &Registry,
        order: &[ContainerId],
        time: i64,
    ) -> io::Result<()> {
        self.replay.create_in_order(reg, order, time)
    }

    fn source(&mut self, source: u32) {
        self.replay.set_source(source);
    }

    fn write_run(&mut self, reg: &Registry, events: &[Event]) -> io::Result<()> {
        for ev in events {
            self.replay.event(reg, ev)?;
        }
        Ok(())
    }

    fn finish(self: Box<Self>, reg: &Registry, end: &RunEnd) -> io::Result<Done> {
        let Staged { replay, commit } = *self;
        let (out, stats) = replay.finish(reg, end)?;
        Ok(Done {
            stats,
            commit: Box::new(move || commit(out)),
        })
    }
}

/// One output format of the table in `crate::outputs`: where it writes,
/// and the sink that writes it. A format is one module and one line there.
pub trait OutputKind {
    /// Its name in messages (`Pajé trace`).
    fn name(&self) -> &'static str;
    /// Where the run asked for it, if it did.
    fn target(&self, cfg: &crate::cli::Config) -> Option<crate::cli::Output>;
    /// For an output that is a directory, the name of the file that marks
    /// it as ours (an existing directory without it is never replaced).
    fn directory(&self) -> Option<&'static str> {
        None
    }
    /// Files written beside the output (a Paraver trace's `.pcf` and
    /// `.row`): never an input either.
    fn beside(&self, _cfg: &crate::cli::Config) -> Vec<std::path::PathBuf> {
        Vec::new()
    }
    /// The sink writing to `place`, already created (a temporary file or
    /// directory), with T0 at `origin`, of the window `cut` of the run;
    /// `commit` makes it the output.
    fn start(
        &self,
        cfg: &crate::cli::Config,
        place: crate::outdir::Place,
        commit: CommitWith<crate::outdir::Place>,
        origin: i64,
        cut: Cut,
    ) -> io::Result<Box<dyn TraceSink>>;
}

/// Several sinks fed the same events, finished together.
pub struct Fanout(pub Vec<Box<dyn TraceSink>>);

impl TraceSink for Fanout {
    fn create_in_order(
        &mut self,
        reg: &Registry,
        order: &[ContainerId],
        time: i64,
    ) -> io::Result<()> {
        self.0
            .iter_mut()
            .try_for_each(|s| s.create_in_order(reg, order, time))
    }

    fn source(&mut self, source: u32) {
        self.0.iter_mut().for_each(|s| s.source(source));
    }

    fn write_run(&mut self, reg: &Registry, events: &[Event]) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|s| s.write_run(reg, events))
    }

    /// Every sink's counts added up (`records` and all); each one's
    /// commit in order.
    fn finish(self: Box<Self>, reg: &Registry, end: &RunEnd) -> io::Result<Done> {
        let mut stats: Option<SinkStats> = None;
        let mut commits = Vec::new();
        for s in self.0 {
            let done = s.finish(reg, end)?;
            // The first sink's model counts stand for all: every sink
            // replays the same events.
            stats.get_or_insert(done.stats);
            commits.push(done.commit);
        }
        Ok(Done {
            stats: stats.unwrap_or_default(),
            commit: Box::new(move || commits.into_iter().try_for_each(|c| c())),
        })
    }
}
