//! Writing the merged events: one loop from the merge through the chain
//! of filters to the sink, the progress shown, and write failures turned
//! into the errors a user reads.

use super::TraceSink;
use crate::error::Error;
use crate::merge::Merge;
use crate::model::Event;
use crate::progress::Progress;
use crate::registry::Registry;
use crate::series::{source_label, Series};
use std::io;

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

/// What stands between the merge and the sinks, in the order an event
/// meets them. Each link may change an event (a series moved to a type
/// of its own) or, later, drop it (a window); the sinks see only what
/// passes. A lone source skips a chain that has nothing for it.
#[derive(Default)]
pub struct Filters {
    /// Series of two sources kept apart (several sources only).
    series: Option<Series>,
}

impl Filters {
    /// The chain a run of `merge` needs.
    pub fn for_merge(merge: &Merge) -> Filters {
        Filters {
            // One source cannot clash with itself.
            series: (!merge.is_lone()).then(Series::default),
        }
    }

    /// Whether every event passes unchanged.
    fn idle(&self) -> bool {
        self.series.is_none()
    }

    /// Passes `ev` of `source` through the chain; `false` drops it.
    #[inline]
    fn pass(&mut self, merge: &Merge, reg: &mut Registry, source: usize, ev: &mut Event) -> bool {
        if let Some(series) = &mut self.series {
            series.keep_apart(reg, source, ev, &|i| source_label(merge, i));
        }
        true
    }

    /// What the chain has to say at the end (series kept apart).
    pub fn notes(&self, merge: &Merge) -> Vec<String> {
        match &self.series {
            Some(s) => s.notes(&|i| source_label(merge, i)),
            None => Vec::new(),
        }
    }
}

/// Events handed to the sink at once from the merge's heap.
const RUN: usize = 256;

/// Writes every event of `merge` to `sink`, creating first what the
/// sources told up front at `origin`. The sink is not finished: its
/// run's report comes after.
pub fn write_all(
    merge: &mut Merge,
    reg: &mut Registry,
    sink: &mut dyn TraceSink,
    filters: &mut Filters,
    origin: i64,
    progress: Option<&Progress>,
) -> Result<(), WriteError> {
    // What the sources told up front gets its rows in natural order.
    let order = reg.up_front_order();
    sink.create_in_order(reg, &order, origin)
        .map_err(WriteError::Io)?;
    let mut n: u64 = 0;
    let mut buf: Vec<Event> = Vec::with_capacity(RUN);
    // The input the events handed now come from; a lone source's all do.
    let mut from: u32 = 0;
    sink.source(from);
    loop {
        let before = n;
        if merge.is_lone() && filters.idle() {
            // A lone source's runs pass as they are, without the heap.
            let Some(run) = merge.next_run(reg).map_err(WriteError::Input)? else {
                break;
            };
            sink.write_run(reg, run).map_err(WriteError::Io)?;
            n += run.len() as u64;
        } else {
            // A run of events of one input, to be told apart.
            buf.clear();
            let mut ended = false;
            let mut next = None;
            while buf.len() < RUN {
                let Some((source, mut ev)) = merge.next(reg).map_err(WriteError::Input)? else {
                    ended = true;
                    break;
                };
                if !filters.pass(merge, reg, source, &mut ev) {
                    continue;
                }
                let source = u32::try_from(source).unwrap_or(u32::MAX);
                if source != from && !buf.is_empty() {
                    next = Some((source, ev));
                    break;
                }
                if source != from {
                    from = source;
                    sink.source(from);
                }
                buf.push(ev);
            }
            if !buf.is_empty() {
                sink.write_run(reg, &buf).map_err(WriteError::Io)?;
                n += buf.len() as u64;
            }
            if let Some((source, ev)) = next {
                from = source;
                sink.source(from);
                sink.write_run(reg, std::slice::from_ref(&ev))
                    .map_err(WriteError::Io)?;
                n += 1;
            }
            if ended {
                break;
            }
        }
        if let Some(p) = progress.filter(|_| n >> 14 != before >> 14) {
            p.show(n);
        }
    }
    Ok(())
}
