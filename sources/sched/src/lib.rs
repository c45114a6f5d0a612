//! Decoders for kernel scheduler traces (fact sheets: `specs/conventions.md`
//! §3 for the thesis' patched-kernel `.os` recording, `specs/sched.md` for
//! ftrace, trace-cmd and perf text).
//!
//! Decoders only: typed records with line numbers. Which Machine, Process or
//! Thread container a task becomes, and which clock applies, is decided by
//! the integrator.
#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::indexing_slicing)]

pub mod os;

pub use os::{OsHeader, OsKind, OsReader, OsRecord};
