//! What every input source looks like to the merge: a stream of model
//! events in non-decreasing reference time, plus the counts the summary
//! reports. A source is a decoder crate + a converter (`src/convert/`),
//! listed in [`crate::convert::kinds`]; its times go through its
//! [`Timeline`].

use crate::error::Result;
use crate::model::Event;
use crate::registry::Registry;
pub use crate::timeline::{Clock, Lane, Timeline};

use std::path::PathBuf;

/// Counts and facts of one source, for the summary.
#[derive(Debug, Clone, Default)]
pub struct SourceStats {
    /// Source kind (`ganglia`, `os`...).
    pub kind: &'static str,
    /// The input file (the first, for a source of several files).
    pub path: PathBuf,
    /// Further files of the same source.
    pub more_files: usize,
    /// Records decoded.
    pub records: u64,
    /// Model events produced.
    pub events: u64,
    /// Records that came earlier than one before them, sorted by the
    /// reorder window.
    pub reordered: u64,
    /// Non-fatal problems.
    pub warnings: u64,
    /// The host whose clock stamped the records, if any.
    pub clock_host: Option<String>,
    /// Point-to-point messages, for sources that have them.
    pub messages: Option<MessageStats>,
    /// Source-specific facts for the summary (anchors, pairing problems).
    pub notes: Vec<String>,
    /// Damage found in the input and what was kept (a document cut in the
    /// middle, a last line without its newline, an empty file): printed
    /// as warnings even with `-q`.
    pub damage: Vec<String>,
    /// First and last event time, on the reference clock (ns).
    pub span: Option<(i64, i64)>,
}

impl SourceStats {
    /// Notes, at the end of a line-oriented input, a last line left out
    /// for want of its newline, and an input that gave nothing at all.
    pub fn end_of_text(&mut self, path: &std::path::Path, cut: Option<u64>, nothing: &str) {
        if let Some(line) = cut {
            self.damage.push(format!(
                "{}: line {line} has no newline (the file was cut while written?): left out",
                path.display()
            ));
        }
        if self.records == 0 {
            self.damage.push(format!("{}: {nothing}", path.display()));
        }
    }
}

pub use crate::messages::MessageStats;

/// A converted input.
pub trait EventSource {
    /// The next event, in non-decreasing time; `Ok(None)` at the end.
    fn next_event(&mut self, reg: &mut Registry) -> Result<Option<Event>>;
    /// Appends the next events to `out`, up to `max`; fewer only at the
    /// end. On an error, the events before it are appended first.
    fn next_batch(&mut self, reg: &mut Registry, out: &mut Vec<Event>, max: usize) -> Result<()> {
        for _ in 0..max {
            match self.next_event(reg)? {
                Some(e) => out.push(e),
                None => break,
            }
        }
        Ok(())
    }
    /// Counts so far.
    fn stats(&self) -> &SourceStats;
}

/// What a converter does: read one record, turn it into zero or more
/// events on the source's own clock, and hand them to the [`Timeline`].
pub trait Converter {
    /// Reads the next record; `Ok(false)` at the end of the input.
    fn pull(&mut self, reg: &mut Registry, out: &mut Timeline) -> Result<bool>;
}

/// A [`Converter`] driven as an [`EventSource`].
pub struct Converted<C> {
    converter: C,
    timeline: Timeline,
    done: bool,
}

impl<C> Converted<C> {
    /// Wraps a converter and its timeline.
    pub fn new(converter: C, timeline: Timeline) -> Self {
        Converted {
            converter,
            timeline,
            done: false,
        }
    }
}

impl<C> Converted<C> {
    /// The next event ready, pulling records with `pull` until one is;
    /// `None` at the end.
    #[inline(always)]
    fn next_ready_by(
        &mut self,
        mut pull: impl FnMut(&mut C, &mut Timeline) -> Result<bool>,
    ) -> Result<Option<Event>> {
        let t = &mut self.timeline;
        loop {
            let ready = if self.done {
                t.pop_any()
            } else {
                t.pop_ready()
            };
            if let Some((time, op)) = ready {
                t.count_out(time);
                return Ok(Some(Event { time, op }));
            }
            if self.done {
                return Ok(None);
            }
            if pull(&mut self.converter, t)? {
                t.stats.records += 1;
            } else {
                self.done = true;
            }
        }
    }
}

impl<C: Converter> Converted<C> {
    /// The next event ready, converting records until one is; `None` at
    /// the end.
    #[inline(always)]
    fn next_ready(&mut self, reg: &mut Registry) -> Result<Option<Event>> {
        self.next_ready_by(|c, t| c.pull(reg, t))
    }
}

impl<C: Converter> EventSource for Converted<C> {
    fn next_event(&mut self, reg: &mut Registry) -> Result<Option<Event>> {
        self.next_ready(reg)
    }

    // The trait's loop again, over `next_ready` inlined: with the
    // default's call to `next_event` instead, 1 GB of akypuera took
    // 11.6-17.1 s against 12.6-12.9 s (alternating runs).
    fn next_batch(&mut self, reg: &mut Registry, out: &mut Vec<Event>, max: usize) -> Result<()> {
        let end = out.len().saturating_add(max);
        while out.len() < end {
            // The ready run first, then one step that may convert more.
            self.timeline.drain_ready(out, end - out.len());
            if out.len() >= end {
                break;
            }
            match self.next_ready(reg)? {
                Some(e) => out.push(e),
                None => break,
            }
        }
        Ok(())
    }

    fn stats(&self) -> &SourceStats {
        &self.timeline.stats
    }
}

/// A converter that needs nothing of the run once open (its types and
/// values are in the registry already): it runs on a thread of its own
/// with its timeline ([`Threaded`]), and the run's thread only merges
/// and writes what it hands on.
pub trait Alone: Send + 'static {
    /// Reads the next record; `Ok(false)` at the end of the input.
    fn pull_alone(&mut self, out: &mut Timeline) -> Result<bool>;
}

/// A source converted on a thread of its own (crate::prefetch): its
/// events come in batches, in the order and with the counts the same
/// converter gives inline, so the trace is the same bytes.
pub struct Threaded {
    events: crate::prefetch::Prefetch<Option<Event>, SourceStats>,
    /// The timeline's counts as opened, then as the thread ends them.
    stats: SourceStats,
    ended: bool,
}

impl Threaded {
    /// Starts the thread: `open` builds the converter there (it opens its
    /// input there: files opened by the run's thread stay on it), and
    /// `timeline` goes with it. The caller has claimed a core
    /// (crate::prefetch::claim).
    pub fn spawn<C: Alone>(
        timeline: Timeline,
        open: impl FnOnce() -> Result<C> + Send + 'static,
    ) -> Threaded {
        let stats = timeline.stats.clone();
        let events = crate::prefetch::Prefetch::spawn(
            move || Ok(Converted::new(open()?, timeline)),
            |c: &mut Converted<C>, slot: &mut Option<Event>| {
                *slot = c.next_ready_by(|c, t| c.pull_alone(t))?;
                Ok(slot.is_some())
            },
            |c| Ok(std::mem::take(&mut c.timeline.stats)),
        );
        Threaded {
            events,
            stats,
            ended: false,
        }
    }
}

impl EventSource for Threaded {
    fn next_event(&mut self, _reg: &mut Registry) -> Result<Option<Event>> {
        if self.ended {
            return Ok(None);
        }
        match self.events.next_record()? {
            crate::prefetch::Next::Record(e) => Ok(e.take()),
            crate::prefetch::Next::End(stats) => {
                self.stats = stats;
                self.ended = true;
                Ok(None)
            }
        }
    }

    // Whole runs of a batch at a time: one event at a time through
    // `next_event` was 4% of an MPE run's instructions, on the thread that
    // merges and writes.
    fn next_batch(&mut self, _reg: &mut Registry, out: &mut Vec<Event>, max: usize) -> Result<()> {
        let mut left = max;
        while left > 0 && !self.ended {
            match self.events.next_run(left)? {
                crate::prefetch::Next::Record(run) => {
                    left -= run.len();
                    out.extend(run.iter_mut().filter_map(Option::take));
                }
                crate::prefetch::Next::End(stats) => {
                    self.stats = stats;
                    self.ended = true;
                }
            }
        }
        Ok(())
    }

    fn stats(&self) -> &SourceStats {
        &self.stats
    }
}
