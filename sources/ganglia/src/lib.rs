//! Decoders for Ganglia recordings (fact sheets: `specs/conventions.md` §2
//! for the `.traced` recording, `specs/ganglia.md` for gmond XML and
//! `rrdtool dump` files).
//!
//! Decoders only: bytes in, typed samples with line numbers out. Which clock
//! stamped a sample, which Machine a host name is, and how a sample becomes a
//! Pajé variable are the integrator's business.
#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::indexing_slicing)]

pub mod traced;

pub use traced::{Sample, TracedHeader, TracedReader};
