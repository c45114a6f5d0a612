//! Streaming decoder of Performance Co-Pilot archives (fact sheet:
//! `specs/pcp.md`), without libpcp: archive versions 2 and 3, the label of
//! every file, the `.meta` records (descriptors and names, instance
//! domains with v3 deltas, labels, help text) and the data volumes
//! `.0 .1 …` in order, each plain, `.xz` or `.zst`.
//!
//! A decoder only: bytes in, typed records with their byte offsets out;
//! which Machine an archive describes and how counters become rates is the
//! integrator's business. Everything is big-endian; every record is framed
//! by its length before and after, and a mismatch is an error naming the
//! offset. No input makes a reader panic.
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

pub mod archive;
mod bytes;
pub mod codes;
mod frame;
pub mod meta;
pub mod volume;

pub use archive::{Archive, Volume};
pub use codes::{InDom, MetaType, PmType, Pmid, Semantics, ValueFormat};
pub use frame::Framed;
pub use meta::{Desc, Indom, MetaReader, MetaRecord};
pub use volume::{ResultRecord, Value, ValueSet, VolumeReader};

/// Magic of an archive file, without the version byte.
pub const MAGIC: u32 = 0x5005_2600;

/// What went wrong, without the position.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading the underlying stream failed.
    #[error("read error: {0}")]
    Io(#[from] std::io::Error),
    /// The file does not start with an archive label.
    #[error("not a PCP archive file: {0}")]
    NotArchive(String),
    /// A record's length words disagree or do not fit.
    #[error("{0}")]
    Framing(String),
    /// A record's content does not fit its length or type.
    #[error("{0}")]
    Layout(String),
}

/// A decoding error at a byte offset.
#[derive(Debug, thiserror::Error)]
#[error("byte {offset}: {kind}")]
pub struct Error {
    /// Offset from the start of the (decompressed) file.
    pub offset: u64,
    /// What went wrong.
    pub kind: ErrorKind,
}

impl Error {
    pub(crate) fn layout(offset: u64, what: impl Into<String>) -> Error {
        Error {
            offset,
            kind: ErrorKind::Layout(what.into()),
        }
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// A timestamp: seconds since the epoch and nanoseconds (v2 stores µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Stamp {
    /// Seconds.
    pub sec: i64,
    /// Nanoseconds, 0..1e9.
    pub nsec: u32,
}

impl Stamp {
    /// Nanoseconds since the epoch, saturating.
    pub fn ns(self) -> i64 {
        self.sec
            .saturating_mul(1_000_000_000)
            .saturating_add(i64::from(self.nsec))
    }
}

/// An archive label (the first record of every file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// Archive version: 2 or 3.
    pub version: u8,
    /// pmlogger's pid.
    pub pid: i32,
    /// When logging started.
    pub start: Stamp,
    /// -1 in `.meta`, -2 in `.index`, the volume number in volumes.
    pub vol: i32,
    /// The measured host.
    pub host: String,
    /// Its timezone (POSIX TZ).
    pub timezone: String,
    /// v3 only: the zoneinfo name (`:Australia/Melbourne`), may be empty.
    pub zoneinfo: Option<String>,
}

/// Decodes a label from a whole framed record (length words included).
pub fn parse_label(rec: &[u8]) -> std::result::Result<Label, String> {
    let mut c = bytes::Cursor::new(rec, 4, rec.len());
    let magic = c
        .u32("the magic")
        .map_err(|_| "the file ends inside its label")?;
    if magic & 0xffff_ff00 != MAGIC {
        return Err(format!(
            "magic {magic:#010x} at byte 4, expected 0x50052602 (v2) or 0x50052603 (v3)"
        ));
    }
    let version = (magic & 0xff) as u8;
    let want = match version {
        2 => 132,
        3 => 808,
        v => return Err(format!("archive version {v}, expected 2 or 3")),
    };
    if rec.len() != want {
        return Err(format!(
            "a version {version} label is {want} bytes long, this one {}",
            rec.len()
        ));
    }
    let pid = c.i32("the pid")?;
    let start = c
        .stamp(version)
        .map_err(|_| "the label's start time is not a time")?;
    if version == 2 {
        let vol = c.i32("the volume number")?;
        Ok(Label {
            version,
            pid,
            start,
            vol,
            host: c.name(64, "the host name")?,
            timezone: c.name(40, "the timezone")?,
            zoneinfo: None,
        })
    } else {
        // v3: the volume number follows the stamp's 12 bytes, then
        // 8 reserved bytes before the names.
        let vol = c.i32("the volume number")?;
        c.bytes(8, "reserved bytes")?;
        Ok(Label {
            version,
            pid,
            start,
            vol,
            host: c.name(256, "the host name")?,
            timezone: c.name(256, "the timezone")?,
            zoneinfo: Some(c.name(256, "the zoneinfo name")?),
        })
    }
}

#[cfg(test)]
mod tests;
