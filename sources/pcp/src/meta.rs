//! The `.meta` file: metric descriptors and names, instance domains,
//! labels and help text.

use crate::bytes::Cursor;
use crate::codes::{InDom, MetaType, PmType, Pmid, Semantics};
use crate::frame::{Framed, Next};
use crate::{parse_label, Error, ErrorKind, Label, Result, Stamp};
use std::io::Read;

/// A metric descriptor with its names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desc {
    /// The metric.
    pub pmid: Pmid,
    /// Its data type.
    pub ty: PmType,
    /// Its instance domain, [`InDom::NULL`] for a singular metric.
    pub indom: InDom,
    /// Counter, instant or discrete.
    pub sem: Semantics,
    /// pmUnits bit fields.
    pub units: u32,
    /// Names (usually one).
    pub names: Vec<String>,
}

/// The pmUnits fields: (dimSpace, dimTime, dimCount, scaleSpace,
/// scaleTime, scaleCount), dimensions and scaleCount signed.
pub fn units_fields(u: u32) -> [i32; 6] {
    let signed = |v: u32| -> i32 {
        let v = (v & 0xf) as i32;
        if v >= 8 {
            v - 16
        } else {
            v
        }
    };
    [
        signed(u >> 28),
        signed(u >> 24),
        signed(u >> 20),
        ((u >> 16) & 0xf) as i32,
        ((u >> 12) & 0xf) as i32,
        signed(u >> 8),
    ]
}

/// An instance-domain record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indom {
    /// From when it holds.
    pub time: Stamp,
    /// The instance domain.
    pub indom: InDom,
    /// A v3 delta: instances not listed carry over.
    pub delta: bool,
    /// (instance, name); `None` = removed (deltas only).
    pub instances: Vec<(i32, Option<String>)>,
}

/// A label record (JSON per set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelSet {
    /// From when it holds.
    pub time: Stamp,
    /// 1 context, 2 domain, 4 indom, 8 cluster, 16 item, 32 instances.
    pub ty: u32,
    /// What it labels (`0xffffffff` for the context).
    pub ident: u32,
    /// (instance, JSON text) per set.
    pub sets: Vec<(u32, String)>,
}

/// One `.meta` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetaRecord {
    /// TYPE_DESC.
    Desc(Desc),
    /// TYPE_INDOM_V2, TYPE_INDOM or TYPE_INDOM_DELTA.
    Indom(Indom),
    /// TYPE_LABEL_V2 or TYPE_LABEL.
    Label(LabelSet),
    /// TYPE_TEXT: kind, ident, text.
    Text(u32, u32, String),
    /// A type this reader does not know (kept going: newer PCP).
    Unknown(MetaType),
}

/// Reads a `.meta` file.
pub struct MetaReader<R> {
    framed: Framed<R>,
    label: Label,
    buf: Vec<u8>,
    truncated: Option<u64>,
}

/// Frames `r` and reads its label, whose volume number must pass `vol_ok`
/// (`want` says what it should be).
pub(crate) fn open<R: Read>(
    r: R,
    vol_ok: impl Fn(i32) -> bool,
    want: &str,
) -> Result<(Framed<R>, Label, Vec<u8>)> {
    let mut framed = Framed::new(r);
    let mut buf = Vec::new();
    let label = read_label(&mut framed, &mut buf)?;
    if !vol_ok(label.vol) {
        return Err(Error {
            offset: 0,
            kind: ErrorKind::NotArchive(format!("label volume {}: {want}", label.vol)),
        });
    }
    Ok((framed, label, buf))
}

/// Reads a file's label record.
pub(crate) fn read_label<R: Read>(framed: &mut Framed<R>, buf: &mut Vec<u8>) -> Result<Label> {
    let not = |m: String| Error {
        offset: 0,
        kind: ErrorKind::NotArchive(m),
    };
    // A label is at most 808 bytes: check the length word before trusting it.
    match framed.next(buf) {
        Ok(Next::Record(_)) => parse_label(buf).map_err(not),
        Ok(Next::End | Next::Truncated(_)) => Err(not("the file ends inside its label".into())),
        Err(e) => match e.kind {
            ErrorKind::Framing(m) => Err(not(format!("label: {m}"))),
            k => Err(Error { offset: 0, kind: k }),
        },
    }
}

impl<R: Read> MetaReader<R> {
    /// Reads the label; fails unless it is an archive's `.meta` label.
    pub fn new(r: R) -> Result<MetaReader<R>> {
        let (framed, label, buf) = open(r, |v| v == -1, "a .meta file has -1")?;
        Ok(MetaReader {
            framed,
            label,
            buf,
            truncated: None,
        })
    }

    /// The file's label.
    pub fn label(&self) -> &Label {
        &self.label
    }

    /// Where the file ended inside a record, if it did.
    pub fn truncated(&self) -> Option<u64> {
        self.truncated
    }

    /// The next record and its offset; `Ok(None)` at the end.
    pub fn next_record(&mut self) -> Result<Option<(u64, MetaRecord)>> {
        let at = match self.framed.next(&mut self.buf)? {
            Next::Record(at) => at,
            Next::End => return Ok(None),
            Next::Truncated(at) => {
                self.truncated = Some(at);
                return Ok(None);
            }
        };
        let rec = parse(&self.buf, self.label.version).map_err(|m| Error::layout(at, m))?;
        Ok(Some((at, rec)))
    }
}

fn parse(b: &[u8], version: u8) -> std::result::Result<MetaRecord, String> {
    let mut c = Cursor::new(b, 4, b.len().saturating_sub(4));
    let ty = MetaType(c.u32("the record type")?);
    match ty {
        MetaType::DESC => {
            let pmid = Pmid(c.u32("the PMID")?);
            let dty = PmType(c.i32("the data type")?);
            let indom = InDom(c.u32("the instance domain")?);
            let sem = Semantics(c.i32("the semantics")?);
            let units = c.u32("the units")?;
            let mut names = Vec::new();
            // The number of names is absent when there are none.
            if c.left() > 0 {
                let n = c.count(4, "number of names")?;
                for _ in 0..n {
                    let len = c.u32("a name length")? as usize;
                    let name = c.bytes(len, "a metric name")?;
                    names.push(String::from_utf8_lossy(name).into_owned());
                }
            }
            Ok(MetaRecord::Desc(Desc {
                pmid,
                ty: dty,
                indom,
                sem,
                units,
                names,
            }))
        }
        MetaType::INDOM_V2 | MetaType::INDOM | MetaType::INDOM_DELTA => {
            let delta = ty == MetaType::INDOM_DELTA;
            let time = c.stamp(version)?;
            let indom = InDom(c.u32("the instance domain")?);
            let n = c.count(8, "number of instances")?;
            let mut insts = Vec::with_capacity(n);
            for _ in 0..n {
                insts.push(c.i32("an instance")?);
            }
            let mut idx = Vec::with_capacity(n);
            for _ in 0..n {
                idx.push(c.i32("a string index")?);
            }
            let table = c.bytes(c.left(), "the name table")?;
            let mut instances = Vec::with_capacity(n);
            for (inst, off) in insts.into_iter().zip(idx) {
                if off == -1 && delta {
                    instances.push((inst, None));
                    continue;
                }
                let rest = usize::try_from(off)
                    .ok()
                    .and_then(|o| table.get(o..))
                    .ok_or_else(|| {
                        format!("instance {inst}: name offset {off} is outside the name table")
                    })?;
                let nul = rest
                    .iter()
                    .position(|&x| x == 0)
                    .ok_or_else(|| format!("instance {inst}: name without terminator"))?;
                let name = String::from_utf8_lossy(rest.get(..nul).unwrap_or_default());
                instances.push((inst, Some(name.into_owned())));
            }
            Ok(MetaRecord::Indom(Indom {
                time,
                indom,
                delta,
                instances,
            }))
        }
        MetaType::LABEL_V2 | MetaType::LABEL => {
            let time = c.stamp(version)?;
            let lty = c.u32("the label type")?;
            let ident = c.u32("the label ident")?;
            let n = c.count(12, "number of label sets")?;
            let mut sets = Vec::with_capacity(n);
            for _ in 0..n {
                let inst = c.u32("a label instance")?;
                let jlen = c.u32("a JSON length")? as usize;
                let json = String::from_utf8_lossy(c.bytes(jlen, "label JSON")?).into_owned();
                let nl = c.i32("a label count")?;
                if nl > 0 {
                    c.bytes(nl as usize * 8, "label entries")?;
                }
                sets.push((inst, json));
            }
            Ok(MetaRecord::Label(LabelSet {
                time,
                ty: lty,
                ident,
                sets,
            }))
        }
        MetaType::TEXT => {
            let kind = c.u32("the text kind")?;
            let ident = c.u32("the text ident")?;
            let text = c.text("the text")?;
            Ok(MetaRecord::Text(kind, ident, text))
        }
        other => Ok(MetaRecord::Unknown(other)),
    }
}

/// Instance → name.
type InstanceSet = std::collections::BTreeMap<i32, String>;

/// Instance names over time: per instance domain, the instance set from
/// each record's time on (deltas applied to the set before them).
#[derive(Debug, Clone, Default)]
pub struct IndomHistory {
    sets: std::collections::HashMap<InDom, Vec<(Stamp, InstanceSet)>>,
}

impl IndomHistory {
    /// Adds a record; records of one domain come in time order in a
    /// `.meta` file, and an out-of-order one is placed by its time.
    pub fn add(&mut self, r: &Indom) {
        let list = self.sets.entry(r.indom).or_default();
        let pos = list.partition_point(|(t, _)| *t <= r.time);
        let mut set = if r.delta {
            pos.checked_sub(1)
                .and_then(|i| list.get(i))
                .map(|(_, s)| s.clone())
                .unwrap_or_default()
        } else {
            std::collections::BTreeMap::new()
        };
        for (inst, name) in &r.instances {
            match name {
                Some(n) => {
                    set.insert(*inst, n.clone());
                }
                None => {
                    set.remove(inst);
                }
            }
        }
        list.insert(pos, (r.time, set));
    }

    /// Whether the domain has any record.
    pub fn knows(&self, indom: InDom) -> bool {
        self.sets.contains_key(&indom)
    }

    /// The name of `inst` of `indom` at `time`: from the latest record at
    /// or before it (the first record when `time` is earlier than all).
    pub fn name_at(&self, indom: InDom, inst: i32, time: Stamp) -> Option<&str> {
        let list = self.sets.get(&indom)?;
        let pos = list.partition_point(|(t, _)| *t <= time);
        let (_, set) = list.get(pos.saturating_sub(1))?;
        set.get(&inst).map(String::as_str)
    }
}

/// Everything of a `.meta` file the values need, read in one go (metadata
/// is small next to the volumes).
#[derive(Debug, Clone, Default)]
pub struct Metadata {
    /// The `.meta` label.
    pub label: Option<Label>,
    /// Descriptors by PMID.
    pub descs: std::collections::HashMap<Pmid, Desc>,
    /// Instance names over time.
    pub indoms: IndomHistory,
    /// Label records (context labels carry `hostname`).
    pub labels: Vec<LabelSet>,
    /// Help text records.
    pub texts: u64,
    /// Offset where the file ended inside a record, if it did.
    pub truncated: Option<u64>,
}

impl Metadata {
    /// Reads a whole `.meta` file; a descriptor whose instance domain has
    /// no record is an error at that descriptor.
    pub fn read<R: Read>(r: R) -> Result<Metadata> {
        let mut m = MetaReader::new(r)?;
        let mut md = Metadata {
            label: Some(m.label().clone()),
            ..Metadata::default()
        };
        let mut desc_at = Vec::new();
        while let Some((at, rec)) = m.next_record()? {
            match rec {
                MetaRecord::Desc(d) => {
                    desc_at.push((at, d.pmid, d.indom));
                    md.descs.insert(d.pmid, d);
                }
                MetaRecord::Indom(i) => md.indoms.add(&i),
                MetaRecord::Label(l) => md.labels.push(l),
                MetaRecord::Text(..) => md.texts += 1,
                MetaRecord::Unknown(_) => {}
            }
        }
        md.truncated = m.truncated();
        for (at, pmid, indom) in desc_at {
            if indom != InDom::NULL && !md.indoms.knows(indom) {
                return Err(Error::layout(
                    at,
                    format!(
                        "metric {} names instance domain {} that no record of this file defines",
                        pmid, indom
                    ),
                ));
            }
        }
        Ok(md)
    }
}
