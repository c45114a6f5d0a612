//! One data volume's records, decoded where the run has room: on a core
//! of their own when one is spare (crate::prefetch), so that decoding
//! overlaps converting and writing, else inline. The converter sees the
//! same records in the same order either way.

use crate::error::{Error, Result};
use crate::prefetch::Prefetch;
use integrador_pcp::{archive, ResultRecord, VolumeReader};
use std::io::Read;
use std::path::{Path, PathBuf};

/// A record holds a whole sample (tens of value sets, each its own
/// vector): a batch of them must fit the caches (crate::prefetch).
const RECORDS_PER_BATCH: usize = 64;

/// A volume being read.
pub(super) enum Volume {
    Inline(VolumeReader<Box<dyn Read>>, PathBuf),
    /// Decoded on a thread; at its end, where the file ended inside a
    /// record, if it did.
    Thread(Prefetch<ResultRecord, Option<u64>>, Option<u64>),
}

impl Volume {
    /// Opens volume `path`, whose label must name `host`. On a thread,
    /// a failure to open is the first read's error: the same error at the
    /// same point of the run.
    pub(super) fn open(path: &Path, host: &str) -> Result<Volume> {
        if crate::input::threadable(path) && crate::prefetch::claim() {
            let (p, q, host) = (path.to_path_buf(), path.to_path_buf(), host.to_string());
            let thread = Prefetch::spawn_batched(
                RECORDS_PER_BATCH,
                move || reader(&p, &host),
                move |r, rec: &mut ResultRecord| {
                    r.next_into(rec).map_err(|e| Error::in_file(&q, e))
                },
                |r| Ok(r.truncated()),
            );
            return Ok(Volume::Thread(thread, None));
        }
        Ok(Volume::Inline(reader(path, host)?, path.to_path_buf()))
    }

    /// Overwrites `rec` with the next record (the record read before goes
    /// back to be filled again); `Ok(false)` at the end.
    pub(super) fn next_into(&mut self, rec: &mut ResultRecord) -> Result<bool> {
        match self {
            Volume::Inline(r, path) => r.next_into(rec).map_err(|e| Error::in_file(path, e)),
            Volume::Thread(p, end) => p.swap_next(rec, end),
        }
    }

    /// Where the file ended inside a record, once read to its end.
    pub(super) fn truncated(&self) -> Option<u64> {
        match self {
            Volume::Inline(r, _) => r.truncated(),
            Volume::Thread(_, end) => *end,
        }
    }
}

fn reader(path: &Path, host: &str) -> Result<VolumeReader<Box<dyn Read>>> {
    let r = archive::open(path).map_err(|e| Error::in_file(path, e))?;
    let reader = VolumeReader::new(r).map_err(|e| Error::in_file(path, e))?;
    if reader.label().host != host {
        return Err(Error::in_file(
            path,
            format!(
                "volume label names host {}, the archive's .meta another",
                reader.label().host
            ),
        ));
    }
    Ok(reader)
}
