//! PCP archives (`-pcp`) → one Pajé variable per (metric, instance) under
//! the Machine of the archive's host (thesis sections 4.1.4 and 5.2.1,
//! table C.5), beside that Machine's Ganglia metrics.
//!
//! Counters become rates per second over each sampling interval, as pmval
//! computes them (fact sheet §8): a metric with a time dimension is divided
//! by the elapsed time in its own time unit, so a millisecond CPU counter
//! becomes a utilisation (0..ncpu); `--pcp-raw` keeps raw values. A
//! counter that goes back (wrap or reset) gives no rate for that interval,
//! and a mark record (a gap in logging) restarts every counter: no value
//! is ever invented across a gap. Instant and discrete values are written
//! at their sample time.
//!
//! The `.meta` file is read whole when the source opens (descriptors and
//! instance domains, small next to the data); the volumes stream in order.

use crate::error::{Error, Result};
use crate::hierarchy::{Display, Role};
use std::sync::Arc;

mod config;
mod volume;
use crate::model::{ContainerId, Op, TypeId};
use crate::recurring::Recurring;
use crate::registry::Registry;
use crate::source::{Converted, Converter, SourceStats, Timeline};
use crate::timeline::Clock;
pub use config::PcpConfig;
use integrador_pcp::meta::{units_fields, Desc, Metadata};
use integrador_pcp::{archive, Archive, ResultRecord, Value};
use integrador_pcp::{InDom, PmType, Pmid, Semantics};
use volume::Volume;
// foldhash: every value of every record looks up its series (SipHash was
// 10% of a PCP run); the seed is random per run, like std's.
use foldhash::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

/// A sample as stored: integers kept exact for counter deltas.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn of(v: &Value, desc: &Desc) -> Option<Num> {
        Some(match *v {
            Value::Insitu(x) if desc.ty == PmType::I32 => Num::Int(i128::from(x as i32)),
            Value::Insitu(x) => Num::Int(i128::from(x)),
            Value::I64(x) => Num::Int(i128::from(x)),
            Value::U64(x) => Num::Int(i128::from(x)),
            Value::F32(x) => Num::Float(f64::from(x)),
            Value::F64(x) => Num::Float(x),
            Value::Str(_) | Value::Skipped(_) => return None,
        })
    }

    fn f64(self) -> f64 {
        match self {
            Num::Int(i) => int_f64(i),
            Num::Float(f) => f,
        }
    }

    /// `self − earlier`, exact for integers.
    fn minus(self, earlier: Num) -> f64 {
        match (self, earlier) {
            (Num::Int(a), Num::Int(b)) => int_f64(a - b),
            (a, b) => a.f64() - b.f64(),
        }
    }
}

/// `i as f64`, by one instruction when `i` fits 64 bits (always but for
/// the largest unsigned counters): the same value, rounded the same way,
/// where i128's conversion is a library call (3% of a PCP run).
fn int_f64(i: i128) -> f64 {
    match i64::try_from(i) {
        Ok(n) => n as f64,
        Err(_) => i as f64,
    }
}

/// One (metric, instance) variable.
struct Var {
    ty: TypeId,
    counter: bool,
    /// Nanoseconds per unit of the metric's time dimension (0 = none).
    time_unit_ns: i64,
    last: Option<(i64, Num)>,
}

/// The pmUnits of `d` as text, and as rate text when it is a counter.
pub fn units_text(units: u32, rate: bool) -> String {
    let [ds, dt, dc, ss, st, sc] = units_fields(units);
    let space = ["byte", "Kbyte", "Mbyte", "Gbyte", "Tbyte", "Pbyte", "Ebyte"];
    let time = ["nanosec", "microsec", "millisec", "sec", "min", "hour"];
    let mut num = Vec::new();
    let mut den = Vec::new();
    let mut part = |dim: i32, name: String| {
        let p = if dim.abs() > 1 {
            format!("{name}^{}", dim.abs())
        } else {
            name
        };
        if dim > 0 {
            num.push(p);
        } else if dim < 0 {
            den.push(p);
        }
    };
    let dt = if rate { dt - 1 } else { dt };
    part(
        ds,
        space
            .get(ss as usize)
            .map_or("byte?".into(), |s| s.to_string()),
    );
    // A rate of a time counter is dimensionless: the time was divided out
    // in the metric's own unit.
    let tname = if rate && dt < 0 {
        "sec".to_string()
    } else {
        time.get(st as usize)
            .map_or("sec?".into(), |s| s.to_string())
    };
    part(dt, tname);
    let count = if sc == 0 {
        "count".to_string()
    } else {
        format!("count x 10^{sc}")
    };
    part(dc, count);
    match (num.is_empty(), den.is_empty()) {
        (true, true) => String::new(),
        (false, true) => num.join(" "),
        (true, false) => format!("1 / {}", den.join(" ")),
        (false, false) => format!("{} / {}", num.join(" "), den.join(" ")),
    }
}

/// Converts one archive.
pub struct PcpSource {
    archive: Archive,
    md: Metadata,
    /// The descriptors, shared so that a record's loop holds one without
    /// copying its names.
    descs: HashMap<Pmid, Rc<Desc>>,
    volume: usize,
    reader: Option<Volume>,
    rec: ResultRecord,
    machine: ContainerId,
    machine_ty: TypeId,
    config: Arc<PcpConfig>,
    raw: bool,
    /// Each (metric, instance) value's variable, `None` when left out.
    vars: Recurring<(Pmid, i32), Option<Var>>,
    /// Offset of the record in the whole archive, for the reorder window.
    pos_base: u64,
    marks: u64,
    wraps: u64,
    strings: u64,
    skipped: u64,
    unknown_pmid: u64,
    no_values: u64,
    left_out: u64,
}

impl PcpSource {
    /// Opens the archive `base`; `clock_of` gives its host's clock.
    pub fn open(
        archive: Archive,
        (raw, config): (bool, &Arc<PcpConfig>),
        window: i64,
        reg: &mut Registry,
        clock_of: &mut dyn FnMut(&str) -> Option<Clock>,
    ) -> Result<Converted<PcpSource>> {
        let machine_ty = reg.required_level(
            Role::Machine,
            &format!("{}: PCP archives", archive.base.display()),
        )?;
        let meta = archive::open(&archive.meta).map_err(|e| Error::in_file(&archive.meta, e))?;
        let md = Metadata::read(meta).map_err(|e| Error::in_file(&archive.meta, e))?;
        let label = md.label.clone().unwrap_or_else(|| integrador_pcp::Label {
            version: 0,
            pid: 0,
            start: integrador_pcp::Stamp::default(),
            vol: -1,
            host: String::new(),
            timezone: String::new(),
            zoneinfo: None,
        });
        if label.host.is_empty() {
            return Err(Error::in_file(
                &archive.meta,
                "the archive label names no host",
            ));
        }
        let machine = reg.machine(&label.host, None);
        let clock = clock_of(&label.host);
        let notes = vec![format!(
            "archive v{} of host {}, {} volume(s), {} metric descriptor(s), timezone {}",
            label.version,
            label.host,
            archive.volumes.len(),
            md.descs.len(),
            label.timezone
        )];
        // Damage: named in the warnings that `-q` prints too.
        let damage = md.truncated.map(|at| {
            format!(
                "{}: byte {at}: the file ends inside a record; read up to there",
                archive.meta.display()
            )
        });
        let stats = SourceStats {
            kind: "pcp",
            path: archive.base.clone(),
            clock_host: Some(label.host.clone()),
            notes,
            damage: damage.into_iter().collect(),
            ..SourceStats::default()
        };
        let config = Arc::clone(config);
        let descs = md
            .descs
            .iter()
            .map(|(&k, d)| (k, Rc::new(d.clone())))
            .collect();
        let source = PcpSource {
            archive,
            md,
            descs,
            volume: 0,
            reader: None,
            rec: ResultRecord::default(),
            machine,
            machine_ty,
            config,
            raw,
            vars: Recurring::default(),
            pos_base: 0,
            marks: 0,
            wraps: 0,
            strings: 0,
            skipped: 0,
            unknown_pmid: 0,
            no_values: 0,
            left_out: 0,
        };
        Ok(Converted::new(
            source,
            Timeline::binary(window, stats, clock),
        ))
    }

    /// The variable of (metric, instance) at its first sight; `None` for
    /// metrics the configuration leaves out.
    fn new_var(
        &mut self,
        reg: &mut Registry,
        desc: &Desc,
        inst: i32,
        time: integrador_pcp::Stamp,
    ) -> Option<Var> {
        // The instance's name at its first sample names the variable.
        let instance = (desc.indom != InDom::NULL).then(|| {
            self.md
                .indoms
                .name_at(desc.indom, inst, time)
                .map_or_else(|| inst.to_string(), str::to_string)
        });
        let instance = instance.as_deref();
        let name = desc
            .names
            .first()
            .cloned()
            .unwrap_or_else(|| desc.pmid.to_string());
        let wanted = (self.config.pmcd || desc.pmid.domain() != 2) && self.config.selects(&name);
        let v = wanted.then(|| {
            let counter = desc.sem == Semantics::COUNTER && !self.raw;
            let [_, dt, _, _, st, _] = units_fields(desc.units);
            let time_unit_ns = if dt == 1 {
                [
                    1,
                    1_000,
                    1_000_000,
                    1_000_000_000,
                    60_000_000_000,
                    3_600_000_000_000,
                ]
                .get(st as usize)
                .copied()
                .unwrap_or(1_000_000_000)
            } else {
                0
            };
            let over = self.config.metrics.get(&name);
            let shown = over.and_then(|d| d.name.clone()).unwrap_or(name.clone());
            let mut text = match instance {
                Some(i) => format!("{shown}[{i}]"),
                None => shown,
            };
            let units = units_text(desc.units, counter);
            let units = match (counter, units.is_empty()) {
                (true, true) if time_unit_ns > 0 => "utilisation".to_string(),
                (true, true) => "/ sec".to_string(),
                _ => units,
            };
            if !units.is_empty() {
                text = format!("{text} ({units})");
            }
            let display = Display {
                name: None,
                color: over.and_then(|d| d.color.clone()),
            };
            let ty = reg.variable_type(self.machine_ty, &text, Some(&display));
            reg.set_unit(ty, &units);
            Var {
                ty,
                counter,
                time_unit_ns,
                last: None,
            }
        });
        if v.is_none() {
            self.left_out += 1;
        }
        v
    }

    /// The next volume's reader, or `false` when there is none.
    fn next_volume(&mut self, out: &mut Timeline) -> Result<bool> {
        if let Some(r) = self.reader.take() {
            if let (Some(at), Some(vol)) =
                (r.truncated(), self.archive.volumes.get(self.volume - 1))
            {
                if self.volume < self.archive.volumes.len() {
                    return Err(Error::in_file(
                        &vol.path,
                        format!("byte {at}: the volume ends inside a record, and a later volume follows"),
                    ));
                }
                out.stats.damage.push(format!(
                    "{}: byte {at}: the volume ends inside a record (pmlogger may still be writing); read up to there",
                    vol.path.display()
                ));
                out.stats.warnings += 1;
            }
        }
        let Some(vol) = self.archive.volumes.get(self.volume) else {
            return Ok(false);
        };
        let host = self.md.label.as_ref().map_or("", |l| l.host.as_str());
        let reader = Volume::open(&vol.path, host)?;
        self.pos_base = (self.volume as u64) << 40;
        self.volume += 1;
        self.reader = Some(reader);
        Ok(true)
    }

    fn finish(&mut self, out: &mut Timeline) {
        let mut notes = Vec::new();
        if self.marks > 0 {
            notes.push(format!(
                "{} mark record(s): logging gaps; counters restart after each, nothing is drawn across",
                self.marks
            ));
        }
        if self.wraps > 0 {
            notes.push(format!(
                "{} counter interval(s) went back (wrap or reset): no rate for them",
                self.wraps
            ));
            out.stats.warnings += self.wraps;
        }
        let left: usize = self.vars.values().filter(|v| v.is_none()).count();
        if left > 0 {
            notes.push(format!(
                "{left} metric instance(s) left out (pmcd.* and the hierarchy's include/exclude)"
            ));
        }
        if self.strings + self.skipped > 0 {
            notes.push(format!(
                "{} string value(s) and {} aggregate/event value(s) skipped (not numbers)",
                self.strings, self.skipped
            ));
        }
        if self.unknown_pmid > 0 {
            notes.push(format!(
                "{} value set(s) of metrics without a descriptor skipped",
                self.unknown_pmid
            ));
            out.stats.warnings += self.unknown_pmid;
        }
        if self.no_values > 0 {
            notes.push(format!(
                "{} value set(s) without values (PCP error codes): the variables keep their value",
                self.no_values
            ));
        }
        let _ = self.left_out;
        out.stats.notes.extend(notes);
    }
}

impl Converter for PcpSource {
    fn pull(&mut self, reg: &mut Registry, out: &mut Timeline) -> Result<bool> {
        loop {
            if let Some(r) = self.reader.as_mut() {
                if r.next_into(&mut self.rec)? {
                    break;
                }
            }
            if !self.next_volume(out)? {
                self.finish(out);
                return Ok(false);
            }
        }
        let rec = std::mem::take(&mut self.rec);
        let t = rec.time.ns();
        let pos = self.pos_base + rec.offset;
        if rec.mark {
            self.marks += 1;
            for v in self.vars.values_mut().flatten() {
                v.last = None;
            }
        }
        for set in &rec.sets {
            let Some(desc) = self.descs.get(&set.pmid).cloned() else {
                self.unknown_pmid += 1;
                continue;
            };
            if set.numval <= 0 {
                self.no_values += 1;
                continue;
            }
            if desc.ty == PmType::STRING {
                self.strings += set.values.len() as u64;
                continue;
            }
            for (inst, value) in &set.values {
                let Some(num) = Num::of(value, &desc) else {
                    self.skipped += 1;
                    continue;
                };
                let machine = self.machine;
                // One lookup per value once the variable is known.
                let key = (desc.pmid, *inst);
                let i = match self.vars.find(&key) {
                    Some(i) => i,
                    None => {
                        let v = self.new_var(reg, &desc, *inst, rec.time);
                        self.vars.push(key, v)
                    }
                };
                let Some(Some(var)) = self.vars.get_mut(i) else {
                    continue;
                };
                let shown = if var.counter {
                    let prev = var.last.replace((t, num));
                    let Some((t0, n0)) = prev else { continue };
                    let delta = num.minus(n0);
                    let dt = t - t0;
                    if delta < 0.0 || dt <= 0 {
                        self.wraps += u64::from(delta < 0.0);
                        continue;
                    }
                    let unit = if var.time_unit_ns > 0 {
                        var.time_unit_ns
                    } else {
                        1_000_000_000
                    };
                    delta * unit as f64 / dt as f64
                } else {
                    num.f64()
                };
                let ty = var.ty;
                out.push(
                    pos,
                    t,
                    Op::SetVariable {
                        container: machine,
                        ty,
                        value: shown,
                    },
                )?;
            }
        }
        self.rec = rec;
        Ok(true)
    }
}

/// The archives named by `-pcp` arguments (base names, any file of an
/// archive, glob results), each once, in first-seen order; and the
/// existing files that are no archive's part (a glob such as `pcp/*` also
/// matches notes and dumps lying beside the archives), left out.
pub fn archives(args: &[PathBuf]) -> Result<(Vec<Archive>, Vec<PathBuf>)> {
    let mut seen = std::collections::HashSet::new();
    let (mut out, mut ignored) = (Vec::new(), Vec::new());
    for a in args {
        let base = Archive::base_of(a);
        if base == *a && a.is_file() {
            ignored.push(a.clone());
            continue;
        }
        if !seen.insert(base.clone()) {
            continue;
        }
        out.push(Archive::find(&base).map_err(Error::input)?);
    }
    if out.is_empty() {
        if let Some(f) = ignored.first() {
            // Pipes are refused before this: reading the start is safe.
            if let Ok(head) = crate::input::head(f, 4096) {
                crate::sniff::check("-pcp", f, &head)?;
            }
            return Err(Error::in_file(
                f,
                "not a PCP archive file (NAME.meta, NAME.index, NAME.<n>, possibly .xz or .zst) nor an archive base name",
            ));
        }
    }
    Ok((out, ignored))
}

/// `-pcp`: PCP archives, one source per archive; the words may be base
/// names, any file of an archive, or globs of a directory's files.
#[derive(Default)]
pub struct PcpKind {
    words: Vec<PathBuf>,
    raw: bool,
    archives: Vec<Archive>,
    ignored: Vec<PathBuf>,
    config: Arc<PcpConfig>,
}

impl super::SourceKind for PcpKind {
    fn option(&self) -> &'static str {
        "-pcp"
    }

    fn section(&self) -> Option<&'static str> {
        Some("pcp")
    }

    fn configure(&mut self, text: &crate::hierarchy::Text<'_>) -> Result<Vec<super::Named>> {
        self.config = Arc::new(PcpConfig::read(text)?);
        Ok(Vec::new())
    }

    fn args(&self) -> Vec<clap::Arg> {
        const H: &str = "Performance Co-Pilot";
        vec![
            super::files_arg(
                "pcp",
                "ARCHIVES",
                "PCP archives: base names, any file of an archive, or globs; also -pcp",
                H,
            ),
            clap::Arg::new("pcp-raw")
                .long("pcp-raw")
                .action(clap::ArgAction::SetTrue)
                .help("Keep PCP counters as raw values instead of rates")
                .help_heading(H),
        ]
    }

    fn thesis_options(&self) -> &'static [&'static str] {
        &["pcp"]
    }

    fn take(&mut self, m: &clap::ArgMatches) -> Result<()> {
        self.words = crate::convert::expand("-pcp", &super::words(m, "pcp"))?;
        self.raw = m.get_flag("pcp-raw");
        super::needs_inputs(
            !self.words.is_empty(),
            self.raw,
            "--pcp-raw describes PCP archives: give them with -pcp",
        )
    }

    fn has_inputs(&self) -> bool {
        !self.words.is_empty()
    }

    fn named_files(&self) -> Vec<super::Named> {
        // Words may be archive base names, which are no files: the
        // archive resolver names them.
        Vec::new()
    }

    fn list(&mut self) -> Result<Vec<PathBuf>> {
        super::refuse_directories("-pcp", &self.words, "*")?;
        if let Some(p) = self.words.iter().find(|p| crate::input::is_read_once(p)) {
            return Err(Error::in_file(
                p,
                "a PCP archive is several files (NAME.meta, NAME.0, ...) read by name: give the archive's files or base name, not a pipe",
            ));
        }
        (self.archives, self.ignored) = archives(&self.words)?;
        let mut files = self.words.clone();
        for a in &self.archives {
            files.push(a.meta.clone());
            files.extend(a.index.iter().cloned());
            files.extend(a.volumes.iter().map(|v| v.path.clone()));
        }
        Ok(files)
    }

    fn open(&mut self, cx: &mut super::OpenCx<'_>) -> Result<()> {
        for a in std::mem::take(&mut self.archives) {
            let mut files = vec![a.meta.clone()];
            files.extend(a.index.iter().cloned());
            files.extend(a.volumes.iter().map(|v| v.path.clone()));
            if !cx.wants(&files) {
                continue;
            }
            let source = PcpSource::open(
                a,
                (self.raw, &self.config),
                cx.cfg.reorder_window,
                cx.reg,
                cx.clock_of,
            )?;
            cx.sources.push(Box::new(source));
        }
        if let Some(first) = self.ignored.first() {
            cx.reg.warnings.push(format!(
                "-pcp: {} file(s) that belong to no archive left out (e.g. {})",
                self.ignored.len(),
                first.display()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn whole_numbers_convert_as_i128_does(n in proptest::num::i128::ANY, shift in 0u32..128) {
            let i = n >> shift;
            proptest::prop_assert_eq!(int_f64(i).to_bits(), (i as f64).to_bits());
        }
    }
}
