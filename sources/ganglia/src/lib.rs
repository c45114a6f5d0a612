//! Decoders for Ganglia recordings (fact sheets: docs/formats.md §2
//! for the `.traced` recording, `specs/ganglia.md` for gmond XML and
//! `rrdtool dump` files).
//!
//! Decoders only: bytes in, typed samples with line numbers out. Which clock
//! stamped a sample, which Machine a host name is, and how a sample becomes a
//! Pajé variable are the integrator's business.
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

pub mod rrd;
pub mod traced;
pub mod xml;

pub use traced::{Sample, TracedHeader, TracedReader};

/// Ganglia input formats, as told apart by content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The thesis' `.traced` text recording.
    Traced,
    /// gmond or gmetad XML.
    Xml,
    /// `rrdtool dump` XML.
    RrdDump,
}

/// Tells the format from the first bytes of a file (`specs/ganglia.md`).
/// Anything that is not XML is taken as a `.traced` recording, whose reader
/// then says precisely what is wrong with it.
pub fn detect(head: &[u8]) -> Format {
    let text = String::from_utf8_lossy(head);
    if text.contains("<!-- Round Robin Database Dump") || text.contains("<rrd>") {
        Format::RrdDump
    } else if text.trim_start().starts_with("<?xml") || text.contains("<GANGLIA_XML") {
        Format::Xml
    } else {
        Format::Traced
    }
}
