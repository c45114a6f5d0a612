//! Pass 1 over a kernel text trace: what only the whole trace says. Each
//! task's thread group and its latest name (a thread is created with its
//! parent's comm and names itself later), the `integrador_epoch=` markers
//! and a `host=` word in one of them, and the host line of the header.

use crate::error::{Error, Result};
use foldhash::HashMap;
use integrador_sched::text::{TextError, TextReader};
use integrador_sched::Format;
use std::io::{BufReader, Read, Seek, SeekFrom};
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

/// A text trace at least this large is scanned in two halves at once
/// when a core is free: pass 1 stands alone before the second pass can
/// start, so its time is the run's.
const SPLIT_AT: u64 = 8 << 20;

impl Scan {
    pub(super) fn run(path: &Path, format: Format) -> Result<Scan> {
        match Scan::run_split(path, format, SPLIT_AT)? {
            Some(s) => Ok(s),
            None => Scan::whole(path, format),
        }
    }

    /// Pass 1 over the whole file on this thread.
    fn whole(path: &Path, format: Format) -> Result<Scan> {
        let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
        Scan::part(file, format)
            .map(|(s, _)| s)
            .map_err(|e| Error::in_file(path, e))
    }

    /// Pass 1 in two halves, the second on a thread of its own, when
    /// `path` is a regular file of at least `min` bytes and a core is
    /// free; `None` otherwise. The halves meet at a line's start, and
    /// joined (the second's tasks over the first's, its markers after)
    /// they are the scan of the whole, line numbers and first error
    /// included.
    fn run_split(path: &Path, format: Format, min: u64) -> Result<Option<Scan>> {
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        if size < min.max(2) || !crate::input::threadable(path) {
            return Ok(None);
        }
        let Some(mid) = line_start_after(path, size / 2)? else {
            return Ok(None);
        };
        if !crate::prefetch::claim() {
            return Ok(None);
        }
        Scan::split_at(path, format, mid, Some(crate::prefetch::Core)).map(Some)
    }

    /// Pass 1 with the lines from byte `mid` (a line's start) on read on
    /// a thread of its own, which holds `core` (the claimed core) till
    /// its end.
    fn split_at(
        path: &Path,
        format: Format,
        mid: u64,
        core: Option<crate::prefetch::Core>,
    ) -> Result<Scan> {
        let p = path.to_path_buf();
        let spawned = crate::prefetch::try_spawn(move || {
            let _core = core;
            let mut f = crate::input::open_on_thread(&p)?;
            f.seek(SeekFrom::Start(mid))?;
            Ok::<_, std::io::Error>(Scan::part(f, format))
        });
        let Ok(second) = spawned else {
            // No thread to be had (a tight memory limit): the whole file
            // here, as without a spare core.
            return Scan::whole(path, format);
        };
        let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
        let first = Scan::part(file.take(mid), format);
        let second = second
            .join()
            .map_err(|_| Error::in_file(path, "pass 1's second half failed"))?
            .map_err(|e| Error::in_file(path, e))?;
        let (mut a, lines) = first.map_err(|e| Error::in_file(path, e))?;
        let (b, _) = second.map_err(|mut e| {
            e.line += lines;
            Error::in_file(path, e)
        })?;
        a.join(b);
        Ok(a)
    }

    /// Pass 1 over what `input` reads: the scan and the lines read, or
    /// the first line in error (numbered from `input`'s start).
    fn part<R: Read>(input: R, format: Format) -> std::result::Result<(Scan, u64), TextError> {
        let mut s = Scan::default();
        // Only the context column is parsed, and the rest of the lines
        // that hold the marker text; a name is copied only when it
        // changes. (A line whose event does not parse is reported by
        // pass 2, as it would be here.)
        let spot = Spot::new(input);
        let hits = std::rc::Rc::clone(&spot.hits);
        let mut r = TextReader::new(spot, format);
        while let Some(l) = r.next_context()? {
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
            // The marker is in this line when it starts in its text (it
            // holds neither a newline nor a space).
            let (at, end) = (l.at, l.at + l.text.len() as u64);
            let mut h = hits.borrow_mut();
            while h.front().is_some_and(|&x| x < at) {
                h.pop_front();
            }
            if h.front().is_none_or(|&x| x >= end) {
                continue;
            }
            drop(h);
            let (line, h) = (l.number, l.head()?);
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
            s.marker(line, ts, &text)?;
        }
        Ok((s, r.lines_read()))
    }

    /// Adds the scan of the lines after this scan's.
    fn join(&mut self, later: Scan) {
        for (pid, t) in later.tasks {
            let e = self.tasks.entry(pid).or_default();
            if t.tgid.is_some() {
                e.tgid = t.tgid;
            }
            e.comm = t.comm;
        }
        self.has_tgid |= later.has_tgid;
        self.markers.extend(later.markers);
        if self.marker_host.is_none() {
            self.marker_host = later.marker_host;
        }
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
                s.marker(ev.index, ev.ts_ns, text)
                    .map_err(|e| Error::in_file(path, e))?;
            }
        }
        Ok(s)
    }

    fn marker(&mut self, line: u64, ts: i64, text: &str) -> std::result::Result<(), TextError> {
        let Some(rest) = text.split(MARKER).nth(1) else {
            return Ok(());
        };
        let mut words = rest.split_whitespace();
        let num = words.next().unwrap_or("");
        let Some(epoch) = crate::clock::parse_epoch_ns(num.as_bytes()) else {
            return Err(TextError {
                line,
                what: format!("marker `{MARKER}{num}`: expected epoch seconds"),
            });
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

/// A reader that finds [`MARKER`] in the bytes as they are read, a
/// buffer at a time: pass 1 asks of each line only whether a marker
/// starts in it. (Looked for line by line, it was a quarter of pass 1.)
struct Spot<R> {
    inner: R,
    finder: memchr::memmem::Finder<'static>,
    /// Bytes read so far.
    read: u64,
    /// The last bytes read, one fewer than the marker's: a marker cut by
    /// the end of a read is found with the next one.
    tail: Vec<u8>,
    /// Where markers start (offsets in what is read), in order; the
    /// scan drops those behind its line.
    hits: std::rc::Rc<std::cell::RefCell<std::collections::VecDeque<u64>>>,
}

impl<R: Read> Spot<R> {
    fn new(inner: R) -> Spot<R> {
        Spot {
            inner,
            finder: memchr::memmem::Finder::new(MARKER),
            read: 0,
            tail: Vec::new(),
            hits: Default::default(),
        }
    }
}

impl<R: Read> Read for Spot<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let got = buf.get(..n).unwrap_or_default();
        let keep = MARKER.len() - 1;
        let mut hits = self.hits.borrow_mut();
        // Markers that start in the last read's tail and end in this one.
        let before = self.tail.len();
        self.tail
            .extend_from_slice(got.get(..keep.min(n)).unwrap_or(got));
        let base = self.read - before as u64;
        hits.extend(
            self.finder
                .find_iter(&self.tail)
                .take_while(|&i| i < before)
                .map(|i| base + i as u64),
        );
        hits.extend(self.finder.find_iter(got).map(|i| self.read + i as u64));
        // The new tail: the last `keep` bytes read, this read's or with
        // the old tail's before them.
        if n >= keep {
            self.tail.clear();
            self.tail
                .extend_from_slice(got.get(n - keep..).unwrap_or_default());
        } else {
            let extra = self.tail.len().saturating_sub(keep);
            self.tail.drain(..extra);
        }
        self.read += n as u64;
        Ok(n)
    }
}

/// The offset of the first line that starts after byte `at` of `path`,
/// looked for in the next 64 KiB; `None` past them or at the end.
fn line_start_after(path: &Path, at: u64) -> Result<Option<u64>> {
    let mut f = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
    f.seek(SeekFrom::Start(at))
        .map_err(|e| Error::in_file(path, e))?;
    let mut buf = Vec::with_capacity(1 << 16);
    f.take(1 << 16)
        .read_to_end(&mut buf)
        .map_err(|e| Error::in_file(path, e))?;
    Ok(memchr::memchr(b'\n', &buf)
        .map(|i| at + i as u64 + 1)
        .filter(|&m| (m as usize) < at as usize + buf.len()))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(s: &Scan) -> String {
        let mut tasks: Vec<_> = s.tasks.iter().map(|(p, t)| (p, &t.tgid, &t.comm)).collect();
        tasks.sort();
        format!(
            "{tasks:?} {} {:?} {:?} {:?}",
            s.has_tgid, s.markers, s.marker_host, s.uname_host
        )
    }

    /// Split at every line start, pass 1 is the whole file's: the same
    /// tasks (latest names, thread groups), markers, host, and the same
    /// first error with the same line number.
    #[test]
    fn halves_join_into_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sched/");
        for name in [
            "pingpong-pipe/ftrace.txt",
            "pingpong-pipe/trace-cmd-report.txt",
            "pingpong-pipe/perf-script.txt",
            "tgid-contend3/ftrace.txt",
        ] {
            let full = std::fs::read(format!("{data}{name}")).unwrap();
            // Only the first 120 lines, so that every split is tried, then
            // the same lines with a bad marker and a bad context line
            // after them.
            let head: Vec<u8> = full
                .split_inclusive(|&b| b == b'\n')
                .take(120)
                .flatten()
                .copied()
                .collect();
            let format = integrador_sched::detect(&head);
            let mut bad = head.clone();
            bad.extend_from_slice(b"x-1 [000] 5.000000: tracing_mark_write: integrador_epoch=zz\n");
            bad.extend_from_slice(b"no context column here\n");
            for (i, bytes) in [head, bad].iter().enumerate() {
                let path = dir.path().join(format!("t{i}"));
                std::fs::write(&path, bytes).unwrap();
                let whole = Scan::run(&path, format).map(|s| summary(&s));
                assert_eq!(whole.is_err(), i == 1, "{name}: {whole:?}");
                let starts = std::iter::once(0)
                    .chain(memchr::memchr_iter(b'\n', bytes).map(|i| i as u64 + 1));
                for mid in starts {
                    let split = Scan::split_at(&path, format, mid, None).map(|s| summary(&s));
                    match (&whole, &split) {
                        (Ok(a), Ok(b)) => assert_eq!(a, b, "{name} split at {mid}"),
                        (Err(a), Err(b)) => {
                            assert_eq!(a.to_string(), b.to_string(), "{name} split at {mid}")
                        }
                        _ => panic!("{name} split at {mid}: {whole:?} vs {split:?}"),
                    }
                }
            }
        }
    }

    /// Read in pieces of any size, markers cut anywhere by a piece's end
    /// and markers back to back included, the spotter finds each marker
    /// where a search of the whole finds it.
    #[test]
    fn markers_are_spotted_across_reads() {
        let mut x: u64 = 7;
        for round in 0..300 {
            let mut data = Vec::new();
            for _ in 0..(round % 9) {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let gap = (x >> 40) as usize % 30;
                data.extend((0..gap).map(|i| b"integrador_epoc=\n "[(i + round) % 18]));
                data.extend_from_slice(MARKER.as_bytes());
            }
            let want: Vec<u64> = memchr::memmem::find_iter(&data, MARKER)
                .map(|i| i as u64)
                .collect();
            for piece in 1..=40 {
                let mut spot = Spot::new(&data[..]);
                let mut buf = vec![0; piece];
                while spot.read(&mut buf).unwrap() > 0 {}
                let got: Vec<u64> = spot.hits.borrow().iter().copied().collect();
                assert_eq!(got, want, "round {round}, pieces of {piece}");
            }
        }
    }
}
