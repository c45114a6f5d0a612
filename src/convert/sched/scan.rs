//! Pass 1 over a kernel text trace: what only the whole trace says. Each
//! task's thread group and its latest name (a thread is created with its
//! parent's comm and names itself later), the `integrador_epoch=` markers
//! and a `host=` word in one of them, and the host line of the header.

use crate::error::{Error, Result};
use integrador_sched::text::TextReader;
use integrador_sched::Format;
use std::collections::HashMap;
use std::io::BufReader;
use std::path::Path;

/// The marker text (docs/formats.md §6).
pub(super) const MARKER: &str = "integrador_epoch=";

/// A task as the whole trace knows it.
#[derive(Debug, Clone, Default)]
pub(super) struct Task {
    /// Its thread group (process), when the trace records it.
    pub tgid: Option<i32>,
    /// Its latest name.
    pub comm: String,
}

/// What pass 1 found.
#[derive(Debug, Default)]
pub(super) struct Scan {
    pub tasks: HashMap<i32, Task>,
    /// Whether any line carried a thread-group id.
    pub has_tgid: bool,
    /// (trace time, epoch) of every marker, in file order.
    pub markers: Vec<(i64, i64)>,
    /// The machine a marker's `host=NAME` word names.
    pub marker_host: Option<String>,
    /// The machine trace.dat's uname names.
    pub uname_host: Option<String>,
}

impl Scan {
    pub(super) fn run(path: &Path, format: Format) -> Result<Scan> {
        let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
        let mut r = TextReader::new(
            BufReader::with_capacity(crate::input::buffer_size(path), file),
            format,
        );
        let mut s = Scan::default();
        // Only the context column is parsed, and the rest of the lines
        // that hold the marker text; a name is copied only when it
        // changes. (A line whose event does not parse is reported by
        // pass 2, as it would be here.)
        let marker = memchr::memmem::Finder::new(MARKER);
        while let Some(l) = r.next_context().map_err(|e| Error::in_file(path, e))? {
            if l.pid > 0 {
                let t = s.tasks.entry(l.pid).or_default();
                if l.tgid.is_some() {
                    t.tgid = l.tgid;
                    s.has_tgid = true;
                }
                if t.comm != l.comm {
                    t.comm = l.comm.to_string();
                }
            }
            if marker.find(l.text.as_bytes()).is_none() {
                continue;
            }
            let (line, h) = (l.number, l.head().map_err(|e| Error::in_file(path, e))?);
            let text = match h.event {
                "tracing_mark_write" => h.payload.trim(),
                // trace-cmd: `0xffffffff8149ab1a: text`.
                "print" => match h.payload.trim().split_once(": ") {
                    Some((a, b)) if a.starts_with("0x") => b,
                    _ => h.payload.trim(),
                },
                _ => continue,
            };
            let (ts, text) = (h.ts_ns, text.to_string());
            s.marker(path, line, ts, &text)?;
        }
        Ok(s)
    }

    /// Pass 1 over a trace.dat: names (its saved command lines), markers,
    /// its uname; no thread-group ids (trace-cmd keeps none).
    pub(super) fn run_dat(path: &Path) -> Result<Scan> {
        let mut d = super::dat::open(path)?;
        let mut s = Scan {
            uname_host: d.info().hostname().map(str::to_string),
            ..Scan::default()
        };
        while let Some(ev) = d.next_event().map_err(|e| Error::in_file(path, e))? {
            if ev.pid > 0 {
                let t = s.tasks.entry(ev.pid).or_default();
                if t.comm != ev.comm {
                    t.comm.clone_from(&ev.comm);
                }
            }
            if let integrador_tracedat::Kind::Print(text) = &ev.kind {
                s.marker(path, ev.index, ev.ts_ns, text)?;
            }
        }
        Ok(s)
    }

    fn marker(&mut self, path: &Path, line: u64, ts: i64, text: &str) -> Result<()> {
        let Some(rest) = text.split(MARKER).nth(1) else {
            return Ok(());
        };
        let mut words = rest.split_whitespace();
        let num = words.next().unwrap_or("");
        let Some(epoch) = crate::clock::parse_epoch_ns(num.as_bytes()) else {
            return Err(Error::in_file(
                path,
                format!("line {line}: marker `{MARKER}{num}`: expected epoch seconds"),
            ));
        };
        self.markers.push((ts, epoch));
        if let Some(h) = words.find_map(|w| w.strip_prefix("host=")) {
            if !h.is_empty() && self.marker_host.is_none() {
                self.marker_host = Some(h.to_string());
            }
        }
        Ok(())
    }
}

/// The host a text trace names in its header: a `# host <name>` line, or
/// perf script's `--header` line `# hostname : <name>`.
pub(super) fn header_host(path: &Path) -> Result<Option<String>> {
    let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
    let mut r = BufReader::new(file);
    let mut raw = Vec::new();
    for _ in 0..64 {
        let end = integrador_lines::read_line(&mut r, &mut raw, integrador_lines::MAX_LINE)
            .map_err(|e| Error::in_file(path, e))?;
        if end.is_none() {
            break;
        }
        let line = String::from_utf8_lossy(&raw);
        let line = line.trim();
        if let Some(h) = line.strip_prefix("# host ") {
            return Ok(Some(h.trim().to_string()));
        }
        if let Some(h) = line
            .strip_prefix("# hostname")
            .and_then(|r| r.trim_start().strip_prefix(':'))
        {
            return Ok(Some(h.trim().to_string()).filter(|h| !h.is_empty()));
        }
    }
    Ok(None)
}
