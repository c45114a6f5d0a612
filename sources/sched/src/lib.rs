//! Decoders for kernel scheduler traces (fact sheets: `docs/formats.md`
//! §3 for the thesis' patched-kernel `.os` recording, `specs/sched.md` for
//! ftrace, trace-cmd and perf text).
//!
//! Decoders only: typed records with line numbers. Which Machine, Process or
//! Thread container a task becomes, and which clock applies, is decided by
//! the integrator.
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

pub mod os;
pub mod pids;
pub mod switches;
pub mod text;

pub use os::{OsHeader, OsKind, OsReader, OsRecord};

/// Scheduler trace formats, as told apart by content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The thesis' `.os` recording.
    Os,
    /// tracefs `trace` text.
    Ftrace,
    /// `trace-cmd report` text.
    TraceCmd,
    /// `perf script` text.
    Perf,
}

/// Tells the format from the first bytes of a file (`specs/sched.md`).
/// Anything not recognised as ftrace, trace-cmd or perf text is taken as an
/// `.os` recording, whose reader then says precisely what is wrong with it.
pub fn detect(head: &[u8]) -> Format {
    let text = String::from_utf8_lossy(head);
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if text.contains("# tracer:") || text.contains("entries-in-buffer/entries-written") {
        Format::Ftrace
    } else if first.starts_with("cpus=") || first.starts_with("version =") {
        Format::TraceCmd
    } else if text.lines().any(|l| {
        let l = l.trim_start();
        !l.starts_with('#') && l.contains(" [") && l.contains("]") && l.contains(": sched:")
    }) {
        Format::Perf
    } else {
        Format::Os
    }
}
