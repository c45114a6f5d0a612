//! gmond and gmetad XML snapshots (`specs/ganglia.md` §2–3): every
//! numeric METRIC of every HOST, at the time it was last heard: the reply
//! time (CLUSTER LOCALTIME for gmond, the top GRID LOCALTIME for gmetad)
//! minus the metric's TN. Several `<GANGLIA_XML>` documents may follow
//! each other in one file.
//!
//! gmond writes attribute values with plain `%s`, unescaped, in
//! ISO-8859-1: values are taken raw when they do not unescape, and bytes
//! that are not UTF-8 are read as Latin-1.

use quick_xml::events::{BytesStart, Event};
use std::io::BufRead;

/// One metric value of one snapshot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Entry {
    /// Byte offset of the METRIC element in the file.
    pub offset: u64,
    /// Sample time, epoch seconds of the answering daemon's clock.
    pub time: i64,
    /// Host name.
    pub host: String,
    /// Cluster name, when a CLUSTER element holds the host.
    pub cluster: Option<String>,
    /// Metric name.
    pub metric: String,
    /// The value.
    pub value: f64,
    /// The reply time the sample time was computed from.
    pub reply: i64,
    /// The metric's TMAX (the most seconds between its reports), if given.
    pub tmax: Option<i64>,
    /// Its DMAX (seconds after which gmond forgets it; 0 = never), if given.
    pub dmax: Option<i64>,
    /// Its UNITS, trimmed; `None` when absent, empty or a space (a
    /// count, a load average).
    pub units: Option<String>,
}

/// A malformed snapshot, at a byte offset.
#[derive(Debug, thiserror::Error)]
#[error("byte {offset}: {what}")]
pub struct XmlError {
    /// Offset in the file.
    pub offset: u64,
    /// What is wrong.
    pub what: String,
}

/// What the reader saw that was not a numeric sample.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct XmlCounts {
    /// Documents (`<GANGLIA_XML>`).
    pub documents: u64,
    /// String metrics, skipped.
    pub strings: u64,
    /// METRICs whose VAL does not parse as its TYPE, skipped.
    pub bad_values: u64,
}

/// Streams the numeric metric entries of one file of snapshots.
pub struct XmlReader<R: BufRead> {
    reader: quick_xml::Reader<R>,
    buf: Vec<u8>,
    /// Reply time of the current document (gmetad GRID or gmond CLUSTER).
    grid_time: Option<i64>,
    cluster_time: Option<i64>,
    cluster: Option<String>,
    gmetad: bool,
    grid_depth: u32,
    host: String,
    host_now: Option<i64>,
    /// What was not a sample.
    pub counts: XmlCounts,
    /// Inside a `<GANGLIA_XML>` document not yet closed.
    open: bool,
    /// Byte offsets where a document was cut: the file ended, or another
    /// document began, before its `</GANGLIA_XML>`.
    pub cuts: Vec<u64>,
}

/// Decodes an attribute value: unescaped when it can be, raw otherwise;
/// UTF-8 when it is, Latin-1 otherwise.
fn text(raw: &[u8]) -> String {
    let s = match std::str::from_utf8(raw) {
        Ok(s) => s.to_string(),
        Err(_) => raw.iter().map(|&b| char::from(b)).collect(),
    };
    match quick_xml::escape::unescape(&s) {
        Ok(u) => u.into_owned(),
        Err(_) => s,
    }
}

fn attrs(e: &BytesStart) -> Vec<(Vec<u8>, String)> {
    e.attributes()
        .with_checks(false)
        .filter_map(|a| a.ok())
        .map(|a| (a.key.as_ref().to_vec(), text(&a.value)))
        .collect()
}

fn get<'a>(a: &'a [(Vec<u8>, String)], key: &str) -> Option<&'a str> {
    a.iter()
        .find(|(k, _)| k.as_slice() == key.as_bytes())
        .map(|(_, v)| v.trim())
}

fn int(a: &[(Vec<u8>, String)], key: &str) -> Option<i64> {
    get(a, key).and_then(|v| v.parse().ok())
}

impl<R: BufRead> XmlReader<R> {
    /// Reads snapshots from `r`.
    pub fn new(r: R) -> XmlReader<R> {
        let mut reader = quick_xml::Reader::from_reader(r);
        let c = reader.config_mut();
        c.trim_text(true);
        c.check_end_names = false;
        c.allow_unmatched_ends = true;
        XmlReader {
            reader,
            buf: Vec::new(),
            grid_time: None,
            cluster_time: None,
            cluster: None,
            gmetad: false,
            grid_depth: 0,
            host: String::new(),
            host_now: None,
            counts: XmlCounts::default(),
            open: false,
            cuts: Vec::new(),
        }
    }

    /// The next numeric metric entry, in document order; `Ok(false)` at the
    /// end of the file.
    pub fn next_entry(&mut self, out: &mut Entry) -> Result<bool, XmlError> {
        loop {
            let offset = self.reader.buffer_position();
            self.buf.clear();
            let ev = self
                .reader
                .read_event_into(&mut self.buf)
                .map_err(|e| XmlError {
                    offset: self.reader.error_position(),
                    what: e.to_string(),
                })?;
            let (e, start) = match ev {
                Event::Eof => {
                    if std::mem::take(&mut self.open) {
                        self.cuts.push(self.reader.buffer_position());
                    }
                    return Ok(false);
                }
                Event::Start(e) => (e.into_owned(), true),
                Event::Empty(e) => (e.into_owned(), false),
                Event::End(e) => {
                    match e.name().as_ref() {
                        b"GANGLIA_XML" => self.open = false,
                        b"GRID" => self.grid_depth = self.grid_depth.saturating_sub(1),
                        b"CLUSTER" => {
                            self.cluster_time = None;
                            self.cluster = None;
                        }
                        _ => {}
                    }
                    continue;
                }
                _ => continue,
            };
            let a = attrs(&e);
            match e.name().as_ref() {
                b"GANGLIA_XML" => {
                    if self.open {
                        self.cuts.push(offset);
                    }
                    self.open = start;
                    self.counts.documents += 1;
                    self.gmetad = get(&a, "SOURCE") == Some("gmetad");
                    self.grid_time = None;
                    self.cluster_time = None;
                    self.cluster = None;
                    self.grid_depth = 0;
                }
                b"GRID" => {
                    if self.grid_depth == 0 {
                        self.grid_time = int(&a, "LOCALTIME");
                    }
                    if start {
                        self.grid_depth += 1;
                    }
                }
                b"CLUSTER" => {
                    self.cluster_time = int(&a, "LOCALTIME");
                    self.cluster = get(&a, "NAME").map(str::to_string);
                }
                b"HOST" => {
                    self.host = get(&a, "NAME").unwrap_or_default().to_string();
                    self.host_now = match (int(&a, "REPORTED"), int(&a, "TN")) {
                        (Some(r), Some(tn)) => Some(r + tn),
                        (Some(r), None) => Some(r),
                        _ => None,
                    };
                }
                b"METRIC" => {
                    let ty = get(&a, "TYPE").unwrap_or("");
                    if ty == "string" {
                        self.counts.strings += 1;
                        continue;
                    }
                    let (Some(name), Some(val)) = (get(&a, "NAME"), get(&a, "VAL")) else {
                        return Err(XmlError {
                            offset,
                            what: "METRIC without NAME or VAL".into(),
                        });
                    };
                    let Some(value) = val.parse::<f64>().ok().filter(|v| v.is_finite()) else {
                        self.counts.bad_values += 1;
                        continue;
                    };
                    // gmetad recomputes TN against its own clock, which its
                    // GRID reports; gmond's reply time is the CLUSTER's.
                    let reply = if self.gmetad {
                        self.grid_time.or(self.cluster_time)
                    } else {
                        self.cluster_time.or(self.host_now)
                    };
                    let Some(reply) = reply else {
                        return Err(XmlError {
                            offset,
                            what: format!(
                                "metric {name} of host {}: no LOCALTIME (GRID, CLUSTER) or REPORTED (HOST) to time it by",
                                self.host
                            ),
                        });
                    };
                    let tn = int(&a, "TN").unwrap_or(0).max(0);
                    out.offset = offset;
                    out.time = reply - tn;
                    out.reply = reply;
                    out.host.clone_from(&self.host);
                    out.cluster.clone_from(&self.cluster);
                    out.metric = name.to_string();
                    out.value = value;
                    out.tmax = int(&a, "TMAX");
                    out.dmax = int(&a, "DMAX");
                    match get(&a, "UNITS").map(str::trim).filter(|u| !u.is_empty()) {
                        Some(u) => match &mut out.units {
                            Some(have) if have == u => {}
                            have => *have = Some(u.to_string()),
                        },
                        None => out.units = None,
                    }
                    return Ok(true);
                }
                _ => {}
            }
        }
    }
}
