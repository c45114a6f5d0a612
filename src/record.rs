//! `integrador record ganglia`: the thesis' recorder (§4.1.3). It polls
//! one gmond (or gmetad's XML port), which holds the data of every host of
//! its cluster, keeps the hosts and metrics asked for, and appends each new
//! sample to a `.traced` recording (docs/formats.md §2), which `-ganglia`
//! reads. Sample time = the answer's LOCALTIME − the metric's TN, as the
//! XML reader computes it; a sample reported again by a later poll is
//! written once.
//!
//! It never loses what it wrote: lines are written whole and flushed every
//! poll, the file is synced every `--sync-every`, an existing file is only
//! appended to with `--append` (a torn last line is dropped first), a poll
//! that fails is retried and reported, never fatal, and SIGINT/SIGTERM end
//! it after the current write.

use crate::convert::ganglia::Recent;
use crate::error::{Error, Result};
use integrador_ganglia::xml::{Entry, XmlReader};
use integrador_ganglia::{TracedHeader, TracedReader};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The largest answer read: a gmetad of a large grid sends megabytes, a
/// broken server must not send gigabytes into memory.
const MAX_ANSWER: u64 = 256 << 20;

/// `integrador record ganglia` options.
#[derive(Debug, Clone, clap::Args)]
pub struct GangliaArgs {
    // The text is `--help`'s, where brackets are brackets.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// gmond (port 8649 by default) or gmetad's XML port (8651) to poll,
    /// HOST[:PORT]; more are fallbacks for the same cluster, tried in turn
    #[arg(required = true, value_name = "HOST[:PORT]")]
    pub servers: Vec<String>,
    /// The .traced recording to write; with gmetad and several clusters,
    /// a name with `{cluster}` gives one file per cluster
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
    /// Time between polls (default: the smallest TMAX of the recorded
    /// metrics, at most 15 s)
    #[arg(long, value_name = "DURATION", value_parser = crate::time::parse_duration)]
    pub every: Option<i64>,
    /// A TOML file whose `[record]` section gives hosts, exclude_hosts,
    /// metrics and exclude_metrics (globs), added to the options'
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Stop after this long (default: until SIGINT or SIGTERM)
    #[arg(long = "for", value_name = "DURATION", value_parser = crate::time::parse_duration)]
    pub duration: Option<i64>,
    /// Poll once, write, exit (for scripts and cron)
    #[arg(long)]
    pub once: bool,
    /// Add to an existing recording (a torn last line is dropped first)
    #[arg(long)]
    pub append: bool,
    /// Hosts to keep (glob, repeatable; all by default)
    #[arg(long = "host", value_name = "GLOB")]
    pub hosts: Vec<String>,
    /// Hosts to leave out (glob, repeatable)
    #[arg(long = "exclude-host", value_name = "GLOB")]
    pub exclude_hosts: Vec<String>,
    /// Metrics to keep (glob, repeatable; all numeric ones by default)
    #[arg(long = "metric", value_name = "GLOB")]
    pub metrics: Vec<String>,
    /// Metrics to leave out (glob, repeatable)
    #[arg(long = "exclude-metric", value_name = "GLOB")]
    pub exclude_metrics: Vec<String>,
    /// Sync the recording to disk at least this often
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = crate::time::parse_duration)]
    pub sync_every: i64,
    /// Also keep each raw XML answer in DIR (a series `-ganglia` reads too)
    #[arg(long, value_name = "DIR")]
    pub xml_dir: Option<PathBuf>,
}

/// What a recording did, for its closing summary.
#[derive(Debug, Default)]
pub struct Summary {
    /// Polls answered and polls that failed.
    pub polls: u64,
    /// Polls no server answered, or whose answer did not parse.
    pub failed: u64,
    /// Samples written, per host.
    pub per_host: std::collections::BTreeMap<String, u64>,
    /// Samples already written by an earlier poll.
    pub repeated: u64,
    /// Outages: (start, seconds), in wall-clock epoch seconds.
    pub outages: Vec<(i64, i64)>,
}

impl Summary {
    /// Samples written.
    pub fn samples(&self) -> u64 {
        self.per_host.values().sum()
    }
}

/// The `[record]` section of `--config`.
#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RecordSection {
    #[serde(default)]
    hosts: Vec<String>,
    #[serde(default)]
    exclude_hosts: Vec<String>,
    #[serde(default)]
    metrics: Vec<String>,
    #[serde(default)]
    exclude_metrics: Vec<String>,
}

#[derive(serde::Deserialize)]
struct ConfigFile {
    #[serde(default)]
    record: RecordSection,
}

/// The filters of the options and of `--config`'s `[record]` section.
fn filters(args: &GangliaArgs) -> Result<(Filter, Filter)> {
    let mut c = RecordSection::default();
    if let Some(path) = &args.config {
        let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
        let text = integrador_lines::read_to_string_bounded(file, 1 << 20)
            .map_err(|e| Error::in_file(path, e))?;
        let origin = path.display().to_string();
        c = crate::hierarchy::Text::of_file(&text, &origin)
            .view::<ConfigFile>()?
            .record;
    }
    let join =
        |a: &[String], b: Vec<String>| -> Vec<String> { a.iter().cloned().chain(b).collect() };
    Ok((
        Filter::new(
            &join(&args.hosts, c.hosts),
            &join(&args.exclude_hosts, c.exclude_hosts),
            "host",
        )?,
        Filter::new(
            &join(&args.metrics, c.metrics),
            &join(&args.exclude_metrics, c.exclude_metrics),
            "metric",
        )?,
    ))
}

/// Include-then-exclude globs.
struct Filter {
    include: Vec<glob::Pattern>,
    exclude: Vec<glob::Pattern>,
}

impl Filter {
    fn new(include: &[String], exclude: &[String], what: &str) -> Result<Filter> {
        let parse = |v: &[String]| -> Result<Vec<glob::Pattern>> {
            v.iter()
                .map(|p| {
                    glob::Pattern::new(p).map_err(|e| Error::usage(format!("--{what} `{p}`: {e}")))
                })
                .collect()
        };
        Ok(Filter {
            include: parse(include)?,
            exclude: parse(exclude)?,
        })
    }

    fn keeps(&self, name: &str) -> bool {
        crate::hierarchy::selects(&self.include, &self.exclude, name)
    }
}

/// The recording file: whole lines, flushed every poll, synced.
struct Recording {
    path: PathBuf,
    // No BufWriter: each poll is one buffer already, and a buffer left
    // behind by a failed write would be flushed on drop, past the cut.
    out: File,
    /// Length of the file up to its last complete, flushed line.
    good: u64,
    header: bool,
    /// Its `# collector` and `# cluster` headers, when appended to.
    collector: Option<String>,
    cluster: Option<String>,
    last_sync: Instant,
}

impl Recording {
    fn open(path: &Path, append: bool) -> Result<Recording> {
        let exists = std::fs::symlink_metadata(path).is_ok();
        if exists && !append {
            return Err(Error::usage(format!(
                "{}: the file exists: give --append to add to it (it is never overwritten)",
                path.display()
            )));
        }
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .write(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::in_file(path, e))?;
        let (good, head) = if exists {
            resume(&mut file, path)?
        } else {
            (0, TracedHeader::default())
        };
        file.seek(SeekFrom::Start(good))
            .map_err(|e| Error::in_file(path, e))?;
        Ok(Recording {
            path: path.to_path_buf(),
            out: file,
            good,
            header: good > 0,
            collector: head.collector,
            cluster: head.cluster,
            last_sync: Instant::now(),
        })
    }

    /// Writes `text` (whole lines) and flushes; on failure the file is cut
    /// back to its last complete line.
    fn write(&mut self, text: &[u8], sync_every: Duration) -> Result<()> {
        if let Err(e) = self.out.write_all(text) {
            let _ = self.out.set_len(self.good);
            let _ = self.out.seek(SeekFrom::Start(self.good));
            return Err(Error::in_file(
                &self.path,
                format!("{e}; the recording ends at its last complete line"),
            ));
        }
        self.good += text.len() as u64;
        if self.last_sync.elapsed() >= sync_every {
            self.sync()?;
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        self.last_sync = Instant::now();
        self.out
            .sync_data()
            .map_err(|e| Error::in_file(&self.path, e))
    }
}

/// Where an existing recording resumes: after its last complete line (a
/// torn last line is dropped); its header.
fn resume(file: &mut File, path: &Path) -> Result<(u64, TracedHeader)> {
    let io = |e: std::io::Error| Error::in_file(path, e);
    let len = file.metadata().map_err(io)?.len();
    let mut head = Vec::new();
    file.take(4096).read_to_end(&mut head).map_err(io)?;
    if !head.is_empty() && !head.starts_with(b"#") {
        return Err(Error::in_file(
            path,
            "--append: this is not a .traced recording (no `#` header)",
        ));
    }
    // Its header as `-ganglia` reads it, from the whole lines read; one
    // it cannot read names no collector or cluster to check against.
    let whole = memchr::memrchr(b'\n', &head).map_or(&[][..], |i| &head[..=i]);
    let header = TracedReader::new(whole)
        .map(|r| r.header().clone())
        .unwrap_or_default();
    // The last newline, read backwards a block at a time.
    let mut end = len;
    let mut buf = vec![0u8; 1 << 16];
    let good = loop {
        if end == 0 {
            break 0;
        }
        let start = end.saturating_sub(buf.len() as u64);
        let n = (end - start) as usize;
        file.seek(SeekFrom::Start(start)).map_err(io)?;
        let block = buf.get_mut(..n).unwrap_or_default();
        file.read_exact(block).map_err(io)?;
        if let Some(i) = memchr::memrchr(b'\n', block) {
            break start + i as u64 + 1;
        }
        end = start;
    };
    if good < len {
        file.set_len(good).map_err(io)?;
        eprintln!(
            "integrador: {}: a torn last line ({} bytes) dropped before appending",
            path.display(),
            len - good
        );
    }
    Ok((good, header))
}

/// The host of HOST[:PORT] (or [V6]:PORT): whose clock its answers carry.
fn host_of(server: &str) -> &str {
    match server.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => server.split(':').next().unwrap_or(server),
    }
}

/// One server's answer, whole.
fn poll(server: &str) -> std::io::Result<Vec<u8>> {
    use std::net::{TcpStream, ToSocketAddrs};
    let addr = if server.contains(':') {
        server.to_string()
    } else {
        format!("{server}:8649")
    };
    let mut last = std::io::Error::other(format!("{addr}: no address"));
    for a in addr.to_socket_addrs()? {
        match TcpStream::connect_timeout(&a, Duration::from_secs(5)) {
            Ok(mut s) => {
                s.set_read_timeout(Some(Duration::from_secs(30)))?;
                let mut v = Vec::new();
                (&mut s).take(MAX_ANSWER).read_to_end(&mut v)?;
                return Ok(v);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The recorder's state between polls.
struct Recorder<'a> {
    args: &'a GangliaArgs,
    hosts: Filter,
    metrics: Filter,
    /// Per (cluster, host, metric): the sample times written.
    seen: HashMap<Series, Recent>,
    summary: Summary,
    line: Vec<u8>,
    /// The smallest TMAX and DMAX (> 0) of the recorded metrics.
    tmax: Option<i64>,
    dmax: Option<i64>,
    /// The recordings, by cluster (`""` without a `{cluster}` pattern).
    files: std::collections::BTreeMap<String, Recording>,
    sync_every: Duration,
    /// The host whose clock stamps the recordings (`# collector`).
    collector: Option<String>,
    /// Per server host: its clock minus ours, in seconds, as last read
    /// (LOCALTIME of its answer against our clock when it came).
    clock: HashMap<String, i64>,
    /// The host that answered the last poll.
    answered_by: Option<String>,
}

/// (cluster, host, metric).
type Series = (Box<str>, Box<str>, Box<str>);

/// One poll's new lines of one cluster, in time order.
type Lines = std::collections::BTreeMap<String, Vec<(i64, Vec<u8>)>>;

impl Recorder<'_> {
    /// The new samples of an answer, as lines by cluster; an error when it
    /// did not parse (nothing of it is kept then).
    fn lines(&mut self, xml: &[u8], server: &str) -> std::result::Result<Lines, String> {
        let mut r = XmlReader::new(xml);
        let mut e = Entry::default();
        let mut all = Vec::new();
        loop {
            match r.next_entry(&mut e) {
                Ok(true) => {}
                Ok(false) => break,
                Err(err) => return Err(format!("{server}: {err}")),
            }
            if self.hosts.keeps(&e.host) && self.metrics.keeps(&e.metric) {
                all.push(e.clone());
            }
        }
        let shift = self.shift(server, all.first().map(|e| e.reply));
        let mut out = Lines::new();
        for mut e in all {
            e.time += shift;
            if let Some(t) = e.tmax.filter(|&t| t > 0) {
                self.tmax = Some(self.tmax.map_or(t, |m| m.min(t)));
            }
            if let Some(d) = e.dmax.filter(|&d| d > 0) {
                self.dmax = Some(self.dmax.map_or(d, |m| m.min(d)));
            }
            let cluster = e.cluster.as_deref().unwrap_or_default();
            let key = (
                cluster.into(),
                e.host.as_str().into(),
                e.metric.as_str().into(),
            );
            let recent = self.seen.entry(key).or_default();
            if recent.repeats(e.time, e.value) {
                self.summary.repeated += 1;
                continue;
            }
            recent.insert(e.time, e.value);
            self.line.clear();
            let mut b = itoa::Buffer::new();
            self.line.extend_from_slice(b.format(e.time).as_bytes());
            self.line.push(b' ');
            self.line.extend_from_slice(e.metric.as_bytes());
            self.line.push(b' ');
            self.line.extend_from_slice(e.host.as_bytes());
            self.line.push(b' ');
            let mut f = ryu::Buffer::new();
            let v = f.format(e.value);
            self.line
                .extend_from_slice(v.strip_suffix(".0").unwrap_or(v).as_bytes());
            self.line.push(b'\n');
            let cluster = e.cluster.clone().unwrap_or_default();
            out.entry(cluster)
                .or_default()
                .push((e.time, self.line.clone()));
            *self.summary.per_host.entry(e.host.clone()).or_default() += 1;
        }
        // In time order within the poll (stable: document order at ties).
        for v in out.values_mut() {
            v.sort_by_key(|&(t, _)| t);
        }
        Ok(out)
    }

    /// What moves the times of an answer of `server` onto the collector's
    /// clock. The first server to answer is the collector, unless an
    /// appended recording names one; a fallback's clock is read against
    /// ours at each of its answers, as the collector's was (seconds, like
    /// the samples).
    fn shift(&mut self, server: &str, reply: Option<i64>) -> i64 {
        let host = host_of(server).to_string();
        let Some(reply) = reply else { return 0 };
        let off = reply - now_epoch();
        self.clock.insert(host.clone(), off);
        let collector = self.collector.get_or_insert_with(|| host.clone()).clone();
        let switched = self.answered_by.as_ref() != Some(&host);
        self.answered_by = Some(host.clone());
        if host == collector {
            if switched && self.clock.len() > 1 {
                eprintln!("integrador: record: {server}, the collector, answers again");
            }
            return 0;
        }
        match self.clock.get(&collector) {
            Some(&c) => {
                if switched {
                    eprintln!("integrador: record: {server} answers instead of {collector}: its clock reads {:+} s from {collector}'s, its samples are moved onto {collector}'s clock", off - c);
                }
                c - off
            }
            None => {
                if switched {
                    eprintln!("integrador: record: {server} answers instead of {collector}, whose clock has not been read in this run: its samples are written on {server}'s clock");
                }
                0
            }
        }
    }

    /// The recording of `cluster`, opened at its first sample.
    fn file(&mut self, cluster: &str) -> Result<&mut Recording> {
        let pattern = self.args.output.to_string_lossy();
        let key = if pattern.contains("{cluster}") {
            cluster.to_string()
        } else {
            String::new()
        };
        if !self.files.contains_key(&key) {
            let name = pattern.replace("{cluster}", &key.replace(['/', '\0'], "_"));
            let rec = Recording::open(Path::new(&name), self.args.append)?;
            if let Some(c) = &rec.collector {
                let ours = self.args.servers.iter().any(|s| host_of(s) == c);
                if !ours || self.collector.as_ref().is_some_and(|x| x != c) {
                    return Err(Error::usage(format!(
                        "{name}: --append: its samples are on the clock of collector {c}, {}; record to a new file",
                        if ours { "not the other recordings'" } else { "which is not among the servers given" }
                    )));
                }
                self.collector = Some(c.clone());
            }
            self.files.insert(key.clone(), rec);
        }
        self.files
            .get_mut(&key)
            .ok_or_else(|| Error::input("internal: a recording vanished"))
    }

    /// The time between polls: `--every`, else the smallest TMAX seen, at
    /// most 15 s, at least 1 s.
    fn every(&self) -> Duration {
        let ns = match (self.args.every, self.tmax) {
            (Some(e), _) => e.max(1_000_000),
            (None, Some(t)) => t.clamp(1, 15) * 1_000_000_000,
            (None, None) => 15_000_000_000,
        };
        Duration::from_nanos(ns as u64)
    }
}

fn now_epoch() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Records until `--for`, `--once` or a signal; returns the summary.
pub fn ganglia(args: &GangliaArgs) -> Result<Summary> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .map_err(|e| Error::input(format!("signals: {e}")))?;
    }
    if let Some(d) = &args.xml_dir {
        std::fs::create_dir_all(d).map_err(|e| Error::in_file(d, e))?;
    }
    let (hosts, metrics) = filters(args)?;
    let mut r = Recorder {
        args,
        hosts,
        metrics,
        seen: HashMap::new(),
        summary: Summary::default(),
        line: Vec::new(),
        tmax: None,
        dmax: None,
        files: std::collections::BTreeMap::new(),
        sync_every: Duration::from_nanos(args.sync_every.max(0) as u64),
        collector: None,
        clock: HashMap::new(),
        answered_by: None,
    };
    // One recording is opened now: an existing file is refused at once.
    if !args.output.to_string_lossy().contains("{cluster}") {
        r.file("")?;
    }
    let end = args
        .duration
        .map(|d| Instant::now() + Duration::from_nanos(d.max(0) as u64));
    let over = |stop: &AtomicBool| {
        stop.load(Ordering::Relaxed) || end.is_some_and(|e| Instant::now() >= e)
    };
    let mut outage: Option<i64> = None;
    let mut backoff = r.every();
    loop {
        let started = Instant::now();
        let answered = poll_once(&mut r, outage.is_some())?;
        match (answered, outage) {
            (true, Some(since)) => {
                let secs = now_epoch() - since;
                let lost = match r.dmax {
                    Some(d) if secs > d => format!("longer than the smallest DMAX ({d} s): samples of that time may be lost"),
                    Some(d) => format!("within the smallest DMAX ({d} s): gmond still held what it reported meanwhile, but only each metric's latest value"),
                    None => "its metrics never expire (DMAX 0), but only each metric's latest value was held".into(),
                };
                eprintln!("integrador: record: the server answers again after {secs} s, {lost}");
                r.summary.outages.push((since, secs));
                outage = None;
                backoff = r.every();
            }
            (false, None) => {
                eprintln!("integrador: record: no server answers; retrying");
                outage = Some(now_epoch());
            }
            (false, Some(_)) => {
                backoff = (backoff * 2).min(Duration::from_secs(60)).max(r.every());
            }
            (true, None) => {}
        }
        if args.once || over(&stop) {
            break;
        }
        let wait = if outage.is_some() { backoff } else { r.every() };
        let next = started + wait;
        while Instant::now() < next && !over(&stop) {
            std::thread::sleep(
                Duration::from_millis(50).min(next.saturating_duration_since(Instant::now())),
            );
        }
        if over(&stop) {
            break;
        }
    }
    if let Some(since) = outage {
        r.summary.outages.push((since, now_epoch() - since));
    }
    for rec in r.files.values_mut() {
        rec.sync()?;
    }
    Ok(r.summary)
}

/// One poll: the first server that answers, its new samples written.
/// `Ok(false)` when none answered or the answer did not parse. During an
/// outage (`quiet`) the servers' errors are not repeated every poll.
fn poll_once(r: &mut Recorder<'_>, quiet: bool) -> Result<bool> {
    let mut answer = None;
    for s in &r.args.servers {
        match poll(s) {
            Ok(xml) => {
                answer = Some((s.clone(), xml));
                break;
            }
            Err(e) if !quiet => eprintln!("integrador: record: {s}: {e}"),
            Err(_) => {}
        }
    }
    let Some((server, xml)) = answer else {
        r.summary.failed += 1;
        return Ok(false);
    };
    if let Some(d) = &r.args.xml_dir {
        let p = d.join(format!("{}-{:06}.xml", now_epoch(), r.summary.polls));
        std::fs::write(&p, &xml).map_err(|e| Error::in_file(&p, e))?;
    }
    let lines = match r.lines(&xml, &server) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("integrador: record: poll skipped: {e}");
            r.summary.failed += 1;
            return Ok(false);
        }
    };
    r.summary.polls += 1;
    let sync_every = r.sync_every;
    // A `# cluster` header names the one cluster of a file.
    let one = lines.len() == 1 || r.args.output.to_string_lossy().contains("{cluster}");
    let collector = r
        .collector
        .clone()
        .unwrap_or_else(|| host_of(&server).into());
    for (cluster, new) in lines {
        let rec = r.file(&cluster)?;
        if let Some(c) = rec.cluster.as_ref().filter(|c| one && **c != cluster) {
            return Err(Error::usage(format!(
                "{}: --append: it records cluster {c}, the server answers for cluster {cluster}; record to a new file",
                rec.path.display()
            )));
        }
        let mut text = Vec::new();
        if !rec.header {
            text.extend_from_slice(format!("# collector {collector}\n").as_bytes());
            if one && !cluster.is_empty() {
                text.extend_from_slice(format!("# cluster {cluster}\n").as_bytes());
            }
            // Each poll is written at once, so a new sample may be older
            // than ones written before, by up to gmond's largest TMAX.
            text.extend_from_slice(b"# reorder-window 20m\n");
            rec.header = true;
        }
        for (_, line) in new {
            text.extend_from_slice(&line);
        }
        rec.write(&text, sync_every)?;
    }
    Ok(true)
}

/// The closing summary, one screen.
pub fn write_summary(w: &mut dyn Write, path: &Path, s: &Summary) -> std::io::Result<()> {
    writeln!(
        w,
        "integrador: recorded {} sample(s) of {} host(s) to {} in {} poll(s) ({} failed, {} sample(s) already written skipped)",
        s.samples(),
        s.per_host.len(),
        path.display(),
        s.polls,
        s.failed,
        s.repeated
    )?;
    for (host, n) in s.per_host.iter().take(20) {
        writeln!(w, "  {host}: {n}")?;
    }
    if s.per_host.len() > 20 {
        writeln!(w, "  ... {} more host(s)", s.per_host.len() - 20)?;
    }
    for (start, secs) in &s.outages {
        writeln!(w, "  outage: from {start} for {secs} s")?;
    }
    Ok(())
}
