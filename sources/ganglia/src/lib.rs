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

/// The unit gmond gives a standard metric (`specs/ganglia.md` §6: the
/// UNITS of its metric definitions), for a recording that keeps none; a
/// unit of one space (the load averages, the process counts) is none.
pub fn standard_unit(metric: &str) -> Option<&'static str> {
    Some(match metric {
        "cpu_user" | "cpu_system" | "cpu_idle" | "cpu_nice" | "cpu_wio" | "cpu_intr"
        | "cpu_sintr" | "cpu_steal" | "cpu_guest" | "cpu_gnice" | "cpu_aidle" | "part_max_used" => {
            "%"
        }
        "cpu_num" => "CPUs",
        "cpu_speed" => "MHz",
        "mem_free" | "mem_shared" | "mem_buffers" | "mem_cached" | "swap_free" | "mem_total"
        | "swap_total" => "KB",
        "bytes_in" | "bytes_out" => "bytes/sec",
        "pkts_in" | "pkts_out" => "packets/sec",
        "disk_total" | "disk_free" => "GB",
        "boottime" | "sys_clock" => "s",
        _ => return None,
    })
}

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
