//! `rrdtool dump` XML of gmetad's RRD files (`specs/ganglia.md` §4–5).
//! Row times are not stored: they are recomputed from lastupdate, step and
//! pdp_per_row, a row's time being the end of its interval. An RRD has a
//! fixed size, so a dump is read whole.

use quick_xml::events::Event;
use std::io::BufRead;

/// One round-robin archive.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rra {
    /// Consolidation function (`AVERAGE`, `MIN`, `MAX`, `LAST`).
    pub cf: String,
    /// Primary data points per row.
    pub pdp_per_row: i64,
    /// Rows, oldest first, one value per data source (`NaN` = unknown).
    pub rows: Vec<Vec<f64>>,
}

/// A whole dump.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RrdDump {
    /// Seconds per primary data point.
    pub step: i64,
    /// Time of the last update (epoch seconds, the writer's clock).
    pub lastupdate: i64,
    /// Data source names, in `<v>` order.
    pub ds: Vec<String>,
    /// The archives, in file order.
    pub rras: Vec<Rra>,
}

/// A malformed dump, at a byte offset.
#[derive(Debug, thiserror::Error)]
#[error("byte {offset}: {what}")]
pub struct RrdError {
    /// Offset in the file.
    pub offset: u64,
    /// What is wrong.
    pub what: String,
}

impl RrdDump {
    /// Reads a dump.
    pub fn read<R: BufRead>(r: R) -> Result<RrdDump, RrdError> {
        let mut reader = quick_xml::Reader::from_reader(r);
        reader.config_mut().trim_text(true);
        let mut buf = Vec::new();
        let mut path: Vec<Vec<u8>> = Vec::new();
        let mut d = RrdDump::default();
        let mut row: Vec<f64> = Vec::new();
        loop {
            let offset = reader.buffer_position();
            buf.clear();
            let bad = |what: String| RrdError { offset, what };
            match reader.read_event_into(&mut buf).map_err(|e| RrdError {
                offset: reader.error_position(),
                what: e.to_string(),
            })? {
                Event::Eof => {
                    // Row times count back from the end of each archive, so
                    // the rows of a cut dump cannot be placed in time.
                    if !path.is_empty() {
                        return Err(bad(format!(
                            "the dump is cut (no </{}>): rrdtool dump did not finish, and the rows of a cut archive cannot be placed in time",
                            String::from_utf8_lossy(path.first().map_or(&b"rrd"[..], Vec::as_slice))
                        )));
                    }
                    break;
                }
                Event::Start(e) => {
                    let name = e.name().as_ref().to_vec();
                    match name.as_slice() {
                        b"rra" => d.rras.push(Rra::default()),
                        b"row" => row.clear(),
                        _ => {}
                    }
                    path.push(name);
                }
                Event::End(e) => {
                    if e.name().as_ref() == b"row" {
                        let Some(rra) = d.rras.last_mut() else {
                            return Err(bad("<row> outside an <rra>".into()));
                        };
                        if row.len() != d.ds.len() {
                            return Err(bad(format!(
                                "a row has {} values for {} data sources",
                                row.len(),
                                d.ds.len()
                            )));
                        }
                        rra.rows.push(std::mem::take(&mut row));
                    }
                    path.pop();
                }
                Event::Text(t) => {
                    let t = t.decode().map_err(|e| bad(e.to_string()))?;
                    let t = t.trim();
                    let here: Vec<&[u8]> = path.iter().map(Vec::as_slice).collect();
                    let num = |what: &str| -> Result<i64, RrdError> {
                        t.parse()
                            .map_err(|_| bad(format!("<{what}> `{t}` is not an integer")))
                    };
                    match here.as_slice() {
                        [b"rrd", b"step"] => d.step = num("step")?,
                        [b"rrd", b"lastupdate"] => d.lastupdate = num("lastupdate")?,
                        [b"rrd", b"ds", b"name"] => d.ds.push(t.to_string()),
                        [b"rrd", b"rra", b"cf"] => {
                            if let Some(r) = d.rras.last_mut() {
                                r.cf = t.to_string();
                            }
                        }
                        [b"rrd", b"rra", b"pdp_per_row"] => {
                            let n = num("pdp_per_row")?;
                            if let Some(r) = d.rras.last_mut() {
                                r.pdp_per_row = n;
                            }
                        }
                        [b"rrd", b"rra", b"database", b"row", b"v"] => {
                            // `NaN` is unknown; rrdtool prints %0.10e.
                            let v = if t.eq_ignore_ascii_case("nan") {
                                f64::NAN
                            } else {
                                t.parse()
                                    .map_err(|_| bad(format!("<v> `{t}` is not a number")))?
                            };
                            row.push(v);
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        if d.step <= 0 {
            return Err(RrdError {
                offset: 0,
                what: "no positive <step>: not an rrdtool dump".into(),
            });
        }
        if d.ds.is_empty() || d.rras.is_empty() {
            return Err(RrdError {
                offset: 0,
                what: "no <ds> or no <rra>: not an rrdtool dump".into(),
            });
        }
        Ok(d)
    }

    /// The finest (smallest pdp_per_row) archive of consolidation `cf`.
    pub fn finest(&self, cf: &str) -> Option<usize> {
        self.rras
            .iter()
            .enumerate()
            .filter(|(_, r)| r.cf == cf && r.pdp_per_row > 0)
            .min_by_key(|(_, r)| r.pdp_per_row)
            .map(|(i, _)| i)
    }

    /// Archive `i`'s rows with their times (ends of their intervals),
    /// oldest first, NaN rows included.
    pub fn timed_rows(&self, i: usize) -> Vec<(i64, &[f64])> {
        let Some(rra) = self.rras.get(i) else {
            return Vec::new();
        };
        let p = rra.pdp_per_row.max(1) * self.step;
        let end = self.lastupdate - self.lastupdate.rem_euclid(p);
        let n = rra.rows.len() as i64;
        rra.rows
            .iter()
            .enumerate()
            .map(|(k, r)| (end - (n - 1 - k as i64) * p, r.as_slice()))
            .collect()
    }
}

/// Host and metric from a dump's file name: `<host>.<metric>.xml` (flat:
/// the metric is the last dot-separated part) or `<host>/<metric>.xml`
/// (gmetad's tree, when the name has no dot).
pub fn host_metric(path: &std::path::Path) -> Option<(String, String)> {
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    match stem.rsplit_once('.') {
        Some((h, m)) if !h.is_empty() && !m.is_empty() => Some((h.to_string(), m.to_string())),
        _ => {
            let host = path.parent()?.file_name()?.to_string_lossy().into_owned();
            Some((host, stem))
        }
    }
}
