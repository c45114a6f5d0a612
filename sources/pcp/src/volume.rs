//! Data volumes: one pmResult per record.

use crate::bytes::{Cursor, Res};
use crate::codes::{PmType, Pmid, ValueFormat};
use crate::frame::{Framed, Next};
use crate::{Error, Label, Result, Stamp};
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
    Skipped(PmType),
}

/// The values of one metric in one record.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ValueSet {
    /// The metric.
    pub pmid: Pmid,
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

fn parse(b: &[u8], version: u8, rec: &mut ResultRecord) -> Res<()> {
    let end = b.len().saturating_sub(4);
    let mut c = Cursor::new(b, 4, end);
    rec.time = c.stamp(version)?;
    let numpmid = c.i32("the number of metrics")?;
    if numpmid < 0 || numpmid as usize > c.left() / 8 {
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
        set.pmid = Pmid(c.u32("a value set")?);
        set.numval = c.i32("a value set")?;
        if set.numval <= 0 {
            continue;
        }
        let valfmt = ValueFormat(c.u32("a value set")?);
        let nv = set.numval as usize;
        if nv > c.left() / 8 {
            return Err(format!(
                "metric {}: {nv} values do not fit in the record",
                set.pmid
            ));
        }
        for _ in 0..nv {
            // (instance, value word): one read of both.
            let pair = c.u64("a value set")?;
            let (inst, v) = ((pair >> 32) as i32, pair as u32);
            let value = match valfmt {
                ValueFormat::INSITU => Value::Insitu(v),
                ValueFormat::DPTR | ValueFormat::SPTR => block(b, end, v)?,
                f => {
                    return Err(format!(
                        "value format {}, expected 0 (in situ), 1 or 2 (block)",
                        f.0
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
fn block(b: &[u8], end: usize, ptr: u32) -> Res<Value> {
    let off = (u64::from(ptr) * 4)
        .checked_sub(8)
        .filter(|&o| o >= 8 && o + 4 <= end as u64)
        .ok_or_else(|| format!("value block pointer {ptr} points outside the record"))?
        as usize;
    let mut c = Cursor::new(b, off, end);
    let h = c.u32("a value block header")?;
    let (vtype, vlen) = (PmType((h >> 24) as i32), (h & 0xff_ffff) as usize);
    if vlen < 4 || off + vlen > end {
        return Err(format!(
            "value block at offset {off}: length {vlen} does not fit in the record"
        ));
    }
    // The payload: the rest of the block.
    c.shorten(off + vlen);
    let what = "a value block";
    Ok(match vtype {
        PmType::I64 => Value::I64(c.u64(what)? as i64),
        PmType::U64 => Value::U64(c.u64(what)?),
        PmType::FLOAT => Value::F32(f32::from_bits(c.u32(what)?)),
        PmType::DOUBLE => Value::F64(f64::from_bits(c.u64(what)?)),
        PmType::STRING => Value::Str(c.text(what)?),
        t => Value::Skipped(t),
    })
}
