//! Writing the merged events: the Pajé writer fed in merge order, the
//! series kept apart, the progress shown, and write failures turned into
//! the errors a user reads.

use crate::error::Error;
use crate::merge::Merge;
use crate::model::{ContainerId, Event};
use crate::paje::writer::{PajeWriter, WriteStats};
use crate::progress::Progress;
use crate::registry::Registry;
use crate::series::{source_label, Series};
use std::io::{self, Write};

/// A failure while writing: I/O errors on the output, or an input error
/// surfacing from a source mid-stream.
pub enum WriteError {
    /// The output failed.
    Io(io::Error),
    /// An input failed.
    Input(Error),
}

/// The error a user reads for a failed write to `what`.
pub fn io_error(e: WriteError, what: &str, partial: bool) -> Error {
    match e {
        WriteError::Io(e) if partial => Error::input(format!(
            "{what}: write error: {e}; the output is incomplete (a FIFO or device cannot be taken back)"
        )),
        WriteError::Io(e) => Error::input(format!("{what}: write error: {e}")),
        WriteError::Input(e) if partial => Error::input(format!(
            "{e} (the trace written to {what} so far is incomplete)"
        )),
        WriteError::Input(e) => e,
    }
}

/// Where merged events go: the Pajé writer, or a later output format
/// beside it. Sources never see it; it sees only model events and the
/// registry's catalogue.
pub trait TraceSink {
    /// What is left when the trace is complete (the output stream).
    type Out;
    /// Creates containers at `time` in the given order, before any event.
    fn create_in_order(
        &mut self,
        reg: &mut Registry,
        order: &[ContainerId],
        time: i64,
    ) -> io::Result<()>;
    /// Writes one event, declaring first whatever it refers to.
    fn write_event(&mut self, reg: &mut Registry, ev: &Event) -> io::Result<()>;
    /// Writes a run of events in order, as [`TraceSink::write_event`]
    /// on each.
    fn write_run(&mut self, reg: &mut Registry, events: &[Event]) -> io::Result<()> {
        for ev in events {
            self.write_event(reg, ev)?;
        }
        Ok(())
    }
    /// Ends the trace; returns the output and the counts.
    fn finish(self, reg: &Registry) -> io::Result<(Self::Out, WriteStats)>;
}

impl<W: Write> TraceSink for PajeWriter<W> {
    type Out = W;

    fn create_in_order(
        &mut self,
        reg: &mut Registry,
        order: &[ContainerId],
        time: i64,
    ) -> io::Result<()> {
        PajeWriter::create_in_order(self, reg, order, time)
    }

    fn write_event(&mut self, reg: &mut Registry, ev: &Event) -> io::Result<()> {
        PajeWriter::write_event(self, reg, ev)
    }

    fn finish(self, reg: &Registry) -> io::Result<(W, WriteStats)> {
        PajeWriter::finish(self, reg)
    }
}

/// Writes every event of `merge` to `sink`; returns the output, the
/// counts and the notes on series kept apart.
pub fn write_all<S: TraceSink>(
    merge: &mut Merge,
    reg: &mut Registry,
    mut sink: S,
    origin: i64,
    progress: Option<&Progress>,
) -> std::result::Result<(S::Out, WriteStats, Vec<String>), WriteError> {
    // What the sources told up front gets its rows in natural order.
    let order = reg.up_front_order();
    sink.create_in_order(reg, &order, origin)
        .map_err(WriteError::Io)?;
    let mut n: u64 = 0;
    let mut series = Series::default();
    // One source cannot clash with itself: the check is skipped, and its
    // events come in runs. Several go through the heap one at a time.
    if merge.is_lone() {
        while let Some(run) = merge.next_run(reg).map_err(WriteError::Input)? {
            sink.write_run(reg, run).map_err(WriteError::Io)?;
            let before = n;
            n += run.len() as u64;
            if let Some(p) = progress.filter(|_| n >> 14 != before >> 14) {
                p.show(n);
            }
        }
    } else {
        while let Some((source, mut ev)) = merge.next(reg).map_err(WriteError::Input)? {
            let label = |i: usize| source_label(merge, i);
            series.keep_apart(reg, source, &mut ev, &label);
            sink.write_event(reg, &ev).map_err(WriteError::Io)?;
            n += 1;
            if n % (1 << 14) == 0 {
                if let Some(p) = progress {
                    p.show(n);
                }
            }
        }
    }
    let (out, stats) = sink.finish(reg).map_err(WriteError::Io)?;
    let notes = series.notes(&|i| source_label(merge, i));
    Ok((out, stats, notes))
}
