//! Writing the merged events: the Pajé writer fed in merge order, the
//! series kept apart, the progress shown, and write failures turned into
//! the errors a user reads.

use crate::error::Error;
use crate::merge::Merge;
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

/// Writes every event of `merge`; returns the output, the counts and
/// the notes on series kept apart.
pub fn write_all<W: Write>(
    merge: &mut Merge,
    reg: &mut Registry,
    out: W,
    origin: i64,
    absolute: bool,
    progress: Option<&Progress>,
) -> std::result::Result<(W, WriteStats, Vec<String>), WriteError> {
    let mut writer = PajeWriter::new(out, origin, absolute).map_err(WriteError::Io)?;
    // What the sources told up front gets its rows in natural order.
    let order = reg.up_front_order();
    writer
        .create_in_order(reg, &order, origin)
        .map_err(WriteError::Io)?;
    let mut n: u64 = 0;
    let mut series = Series::default();
    while let Some((source, mut ev)) = merge.next(reg).map_err(WriteError::Input)? {
        let label = |i: usize| source_label(merge, i);
        series.keep_apart(reg, source, &mut ev, &label);
        writer.write_event(reg, &ev).map_err(WriteError::Io)?;
        n += 1;
        if n % (1 << 14) == 0 {
            if let Some(p) = progress {
                p.show(n);
            }
        }
    }
    let (out, stats) = writer.finish(reg).map_err(WriteError::Io)?;
    let notes = series.notes(&|i| source_label(merge, i));
    Ok((out, stats, notes))
}
