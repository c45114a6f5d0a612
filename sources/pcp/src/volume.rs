//! Data volumes: one pmResult per record.

use crate::frame::{Framed, Next};
use crate::{be32, be64, stamp, stamp_len, Error, Label, Result, Stamp};
use std::io::Read;

/// One value as stored.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// In situ: a 32-bit integer (i32 or u32 as the descriptor says).
    Insitu(u32),
    /// PM_TYPE_64.
    I64(i64),
    /// PM_TYPE_U64.
    U64(u64),
    /// PM_TYPE_FLOAT.
    F32(f32),
    /// PM_TYPE_DOUBLE.
    F64(f64),
    /// PM_TYPE_STRING.
    Str(String),
    /// A value block of another type (aggregate, event…), skipped.
    Skipped(u8),
}

/// The values of one metric in one record.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ValueSet {
    /// The metric.
    pub pmid: u32,
    /// Number of values, or a PCP error code when negative.
    pub numval: i32,
    /// (instance, value); instance `-1` for singular metrics.
    pub values: Vec<(i32, Value)>,
}

/// A pmResult.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResultRecord {
    /// Offset of the record in its volume.
    pub offset: u64,
    /// Sample time.
    pub time: Stamp,
    /// A mark record (no metrics): a gap or a restart of the logger.
    pub mark: bool,
    /// Per metric.
    pub sets: Vec<ValueSet>,
}

/// Reads one data volume.
pub struct VolumeReader<R> {
    framed: Framed<R>,
    label: Label,
    buf: Vec<u8>,
    truncated: Option<u64>,
}

impl<R: Read> VolumeReader<R> {
    /// Reads the label; fails unless it is a data volume's.
    pub fn new(r: R) -> Result<VolumeReader<R>> {
        let (framed, label, buf) =
            crate::meta::open(r, |v| v >= 0, "a data volume has its number, 0 or more")?;
        Ok(VolumeReader {
            framed,
            label,
            buf,
            truncated: None,
        })
    }

    /// The volume's label.
    pub fn label(&self) -> &Label {
        &self.label
    }

    /// Where the file ended inside a record, if it did.
    pub fn truncated(&self) -> Option<u64> {
        self.truncated
    }

    /// Reads the next pmResult into `rec`; `Ok(false)` at the end.
    pub fn next_into(&mut self, rec: &mut ResultRecord) -> Result<bool> {
        let at = match self.framed.next(&mut self.buf)? {
            Next::Record(at) => at,
            Next::End => return Ok(false),
            Next::Truncated(at) => {
                self.truncated = Some(at);
                return Ok(false);
            }
        };
        rec.offset = at;
        parse(&self.buf, self.label.version, rec).map_err(|m| Error::layout(at, m))?;
        Ok(true)
    }
}

fn parse(b: &[u8], version: u8, rec: &mut ResultRecord) -> std::result::Result<(), String> {
    let end = b.len().saturating_sub(4);
    let n = stamp_len(version);
    if 4 + n + 4 > end {
        return Err("record too short for a timestamp and a metric count".into());
    }
    rec.time = stamp(b, 4, version).ok_or("timestamp out of range")?;
    let mut at = 4 + n;
    let word = |at: usize| -> std::result::Result<u32, String> {
        if at + 4 > end {
            return Err(format!("record ends inside a value set (offset {at})"));
        }
        be32(b, at).ok_or_else(|| "record ends inside a value set".to_string())
    };
    let numpmid = word(at)? as i32;
    at += 4;
    if numpmid < 0 || numpmid as usize > (end - at) / 8 {
        return Err(format!(
            "number of metrics {numpmid} does not fit in the record"
        ));
    }
    rec.mark = numpmid == 0;
    // Reuse the value sets' vectors across records.
    let numpmid = numpmid as usize;
    rec.sets.truncate(numpmid);
    while rec.sets.len() < numpmid {
        rec.sets.push(ValueSet::default());
    }
    for set in rec.sets.iter_mut() {
        set.values.clear();
        set.pmid = word(at)?;
        set.numval = word(at + 4)? as i32;
        at += 8;
        if set.numval <= 0 {
            continue;
        }
        let valfmt = word(at)?;
        at += 4;
        let nv = set.numval as usize;
        if nv > (end - at) / 8 {
            return Err(format!(
                "metric {}: {nv} values do not fit in the record",
                crate::meta::pmid_str(set.pmid)
            ));
        }
        for _ in 0..nv {
            let inst = word(at)? as i32;
            let v = word(at + 4)?;
            at += 8;
            let value = match valfmt {
                0 => Value::Insitu(v),
                1 | 2 => block(b, end, v)?,
                f => {
                    return Err(format!(
                        "value format {f}, expected 0 (in situ), 1 or 2 (block)"
                    ))
                }
            };
            set.values.push((inst, value));
        }
    }
    Ok(())
}

/// The value block that `ptr` designates (fact sheet §5: byte offset
/// `4·ptr − 8` from the record's first length word).
fn block(b: &[u8], end: usize, ptr: u32) -> std::result::Result<Value, String> {
    let off = (u64::from(ptr) * 4)
        .checked_sub(8)
        .filter(|&o| o >= 8 && o + 4 <= end as u64)
        .ok_or_else(|| format!("value block pointer {ptr} points outside the record"))?
        as usize;
    let h = be32(b, off).unwrap_or(0);
    let (vtype, vlen) = ((h >> 24) as u8, (h & 0xff_ffff) as usize);
    if vlen < 4 || off + vlen > end {
        return Err(format!(
            "value block at offset {off}: length {vlen} does not fit in the record"
        ));
    }
    let p = b.get(off + 4..off + vlen).unwrap_or_default();
    let need = |n: usize| -> std::result::Result<(), String> {
        if p.len() < n {
            Err(format!(
                "value block at offset {off}: type {vtype} needs {n} bytes, it has {}",
                p.len()
            ))
        } else {
            Ok(())
        }
    };
    Ok(match vtype {
        2 => {
            need(8)?;
            Value::I64(be64(p, 0).unwrap_or(0) as i64)
        }
        3 => {
            need(8)?;
            Value::U64(be64(p, 0).unwrap_or(0))
        }
        4 => {
            need(4)?;
            Value::F32(f32::from_bits(be32(p, 0).unwrap_or(0)))
        }
        5 => {
            need(8)?;
            Value::F64(f64::from_bits(be64(p, 0).unwrap_or(0)))
        }
        6 => {
            let s = p.iter().position(|&c| c == 0).unwrap_or(p.len());
            Value::Str(String::from_utf8_lossy(p.get(..s).unwrap_or_default()).into_owned())
        }
        t => Value::Skipped(t),
    })
}
