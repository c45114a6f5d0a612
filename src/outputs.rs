//! The table of output formats: one [`OutputKind`] a format, as
//! [`crate::convert::kinds`] is the table of sources. `run.rs` names none
//! of them.

use crate::cli::{Config, Output};
use crate::outdir::{DirTarget, Place};
use crate::output::Target;
use crate::sink::{CommitWith, Cut, Fanout, OutputKind, Staged, TraceSink};
use std::io;
use std::path::PathBuf;

/// Every output format.
pub fn outputs() -> Vec<Box<dyn OutputKind>> {
    vec![
        Box::new(PajeText),
        Box::new(ParaverTrace),
        Box::new(Otf2Archive),
        Box::new(EntityTables),
        Box::new(ClocksPage),
    ]
}

/// The replay of the window `cut` into the encoder `make` makes: on a
/// thread of its own when the run may use threads and no text decoder
/// keeps the spare core busy (`crate::prefetch::writer_thread`: a binary
/// decoder keeps its core busy a part of the time, and the writer takes
/// the rest), else on the run's thread. The bytes are the same either way.
fn replayed<E>(
    make: impl FnOnce() -> io::Result<E> + Send + 'static,
    commit: CommitWith<E::Out>,
    cut: Cut,
) -> io::Result<Box<dyn TraceSink>>
where
    E: crate::sink::Encoder + 'static,
    E::Out: Send + 'static,
{
    Ok(if crate::prefetch::writer_thread() {
        Box::new(crate::sink::thread::OnThread::within(make, commit, cut))
    } else {
        Box::new(Staged::new(make()?, commit).within(cut))
    })
}

/// The run of a format that takes intervals (for its messages) but has no
/// reference points: the replay then never lists what is open (every 256
/// Ki rows by default).
fn whole(cut: Cut) -> Cut {
    Cut {
        points: crate::sink::Points::NONE,
        ..cut
    }
}

/// A file output's place and commit, as the file's encoder takes them.
fn file_of(
    place: Place,
    commit: CommitWith<Place>,
    what: &str,
) -> io::Result<(crate::output::Sink, CommitWith<crate::output::Sink>)> {
    let Place::File(out) = place else {
        return Err(io::Error::other(format!("{what} is a file")));
    };
    Ok((out, Box::new(move |s| commit(Place::File(s)))))
}

/// The Pajé trace of `-o`.
pub struct PajeText;

impl OutputKind for PajeText {
    fn name(&self) -> &'static str {
        "Pajé trace"
    }

    fn target(&self, cfg: &Config) -> Option<Output> {
        cfg.output.clone().filter(|_| cfg.format == Format::Paje)
    }

    fn start(
        &self,
        cfg: &Config,
        place: Place,
        commit: CommitWith<Place>,
        origin: i64,
        cut: Cut,
    ) -> io::Result<Box<dyn TraceSink>> {
        use crate::paje::writer::PajeWriter;
        let (out, commit) = file_of(place, commit, "a Pajé trace")?;
        let absolute = cfg.absolute_time;
        // They reach the output in 256 KiB chunks.
        replayed(move || PajeWriter::new(out, origin, absolute), commit, cut)
    }
}

/// What `-o` writes (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A Pajé trace (PajeNG, ViTE).
    Paje,
    /// A Paraver trace: FILE.prv, FILE.pcf, FILE.row (BSC's Paraver).
    Paraver,
    /// An OTF2 archive directory (Vampir, Score-P's tools, ViTE).
    Otf2,
}

impl Format {
    /// The format asked for, or the one `-o`'s name says; the formats
    /// other than Pajé write files beside one another, never to standard
    /// output, and a whole run (windows are Pajé's and the tables').
    pub fn of(
        asked: Option<Format>,
        out: Option<&Output>,
        windowed: bool,
    ) -> crate::error::Result<Format> {
        let named = |ext: &str| matches!(out, Some(Output::File(p)) if p.extension().is_some_and(|e| e == ext));
        let format = asked.unwrap_or(if named("prv") {
            Format::Paraver
        } else {
            Format::Paje
        });
        if format == Format::Paje {
            return Ok(format);
        }
        let word = format!("{format:?}").to_lowercase();
        if out == Some(&Output::Stdout) {
            return Err(crate::error::Error::usage(format!(
                "--format {word} writes files: give -o a name, not `-`"
            )));
        }
        if windowed {
            return Err(crate::error::Error::usage(format!(
                "--from/--to write Pajé or tables; --format {word} writes a whole run"
            )));
        }
        if format == Format::Otf2 {
            // Before any input is read: a machine without libotf2 fails now.
            crate::otf2::ffi::lib().map_err(crate::error::Error::input)?;
        }
        if format == Format::Paraver && matches!(out, Some(Output::File(_))) && !named("prv") {
            return Err(crate::error::Error::usage(
                "--format paraver: -o names the .prv (FILE.prv; FILE.pcf and FILE.row go beside it)",
            ));
        }
        // The header, known at the end, goes before the records: a FIFO or
        // a device cannot take it.
        if let (Format::Paraver, Some(Output::File(p))) = (format, out) {
            if std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
                return Err(crate::error::Error::usage(format!(
                    "{}: a Paraver trace is written to a regular file (its header comes last), not a FIFO or device",
                    p.display()
                )));
            }
        }
        Ok(format)
    }
}

/// The Paraver trace of `-o FILE.prv`, with its `.pcf` and `.row`
/// (src/paraver).
pub struct ParaverTrace;

impl OutputKind for ParaverTrace {
    fn name(&self) -> &'static str {
        "Paraver trace"
    }

    fn target(&self, cfg: &Config) -> Option<Output> {
        cfg.output.clone().filter(|_| cfg.format == Format::Paraver)
    }

    fn beside(&self, cfg: &Config) -> Vec<PathBuf> {
        match self.target(cfg) {
            Some(Output::File(p)) => vec![p.with_extension("pcf"), p.with_extension("row")],
            _ => Vec::new(),
        }
    }

    fn start(
        &self,
        cfg: &Config,
        place: Place,
        commit: CommitWith<Place>,
        origin: i64,
        cut: Cut,
    ) -> io::Result<Box<dyn TraceSink>> {
        use crate::paraver::{Files, Paraver};
        let (prv, commit) = file_of(place, commit, "a Paraver trace")?;
        let Some(Output::File(path)) = cfg.output.clone() else {
            return Err(io::Error::other("a Paraver trace is a file"));
        };
        // The .pcf and .row are written and put in place as the .prv is,
        // before it: a .prv in place always has its names beside it.
        let sibling = |ext: &str| -> io::Result<(crate::output::Sink, String)> {
            let p = path.with_extension(ext);
            let t =
                Target::resolve(&Output::File(p)).map_err(|e| io::Error::other(e.to_string()))?;
            let shown = t.shown();
            Ok((
                t.create().map_err(|e| io::Error::other(e.to_string()))?,
                shown,
            ))
        };
        let ((pcf, pcf_shown), (row, row_shown)) = (sibling("pcf")?, sibling("row")?);
        let commit: CommitWith<Files<crate::output::Sink>> = Box::new(move |f: Files<_>| {
            f.pcf.commit(&pcf_shown)?;
            f.row.commit(&row_shown)?;
            commit(f.prv)
        });
        let files = Files { prv, pcf, row };
        replayed(move || Paraver::new(files, origin), commit, whole(cut))
    }
}

/// The OTF2 archive of `--format otf2 -o DIR` (src/otf2): `DIR/traces.otf2`.
pub struct Otf2Archive;

/// The file that marks an OTF2 archive directory as ours.
pub const OTF2_MARKER: &str = "integrador-otf2.txt";

impl OutputKind for Otf2Archive {
    fn name(&self) -> &'static str {
        "OTF2 archive"
    }

    fn target(&self, cfg: &Config) -> Option<Output> {
        cfg.output.clone().filter(|_| cfg.format == Format::Otf2)
    }

    fn directory(&self) -> Option<&'static str> {
        Some(OTF2_MARKER)
    }

    fn start(
        &self,
        _cfg: &Config,
        place: Place,
        commit: CommitWith<Place>,
        origin: i64,
        cut: Cut,
    ) -> io::Result<Box<dyn TraceSink>> {
        let Place::Dir(out) = place else {
            return Err(io::Error::other("an OTF2 archive is a directory"));
        };
        let dir = out.dir().to_path_buf();
        let commit: CommitWith<()> = Box::new(move |()| commit(Place::Dir(out)));
        replayed(
            move || crate::otf2::Otf2::create(&dir, origin),
            commit,
            whole(cut),
        )
    }
}

/// The entity tables of `--tables DIR` (`docs/tables.md`).
pub struct EntityTables;

impl OutputKind for EntityTables {
    fn name(&self) -> &'static str {
        "entity tables"
    }

    fn target(&self, cfg: &Config) -> Option<Output> {
        cfg.tables.clone().map(Output::File)
    }

    fn directory(&self) -> Option<&'static str> {
        Some(crate::tables::MARKER)
    }

    fn start(
        &self,
        cfg: &Config,
        place: Place,
        commit: CommitWith<Place>,
        _origin: i64,
        cut: Cut,
    ) -> io::Result<Box<dyn TraceSink>> {
        use crate::tables::Tables;
        let task = cfg.task;
        let Place::Dir(out) = place else {
            return Err(io::Error::other("the entity tables are a directory"));
        };
        let dir = out.dir().to_path_buf();
        let commit: CommitWith<u64> = Box::new(move |_| commit(Place::Dir(out)));
        replayed(move || Tables::create(&dir, 0)?.in_task(task), commit, cut)
    }
}

/// The clocks report page of `--report FILE.html` (src/page).
pub struct ClocksPage;

impl OutputKind for ClocksPage {
    fn name(&self) -> &'static str {
        "clocks report page"
    }

    fn target(&self, cfg: &Config) -> Option<Output> {
        cfg.report.clone().map(Output::File)
    }

    fn start(
        &self,
        _cfg: &Config,
        place: Place,
        commit: CommitWith<Place>,
        _origin: i64,
        cut: Cut,
    ) -> io::Result<Box<dyn TraceSink>> {
        let (out, commit) = file_of(place, commit, "a report page")?;
        // It only watches the events: on the run's thread.
        Ok(Box::new(
            Staged::new(crate::page::Coverage::new(out), commit).within(cut),
        ))
    }
}

/// Where one output goes, resolved.
enum Planned {
    File(Target),
    Dir(DirTarget),
}

impl Planned {
    fn shown(&self) -> String {
        match self {
            Planned::File(t) => t.shown(),
            Planned::Dir(t) => t.shown(),
        }
    }
}

/// The outputs a run asked for, settled before any input is read (a
/// wrong `-o` fails at once, and an input named as an output is never
/// touched), then created, then started once T0 is known.
pub struct Outputs {
    kinds: Vec<(Box<dyn OutputKind>, Planned)>,
    created: Vec<Place>,
    /// The files written beside an output, checked as outputs are.
    beside: Vec<Target>,
}

impl Outputs {
    /// Where each output the run asks for goes, checked.
    pub fn settle(cfg: &Config) -> crate::error::Result<Outputs> {
        let (mut kinds, mut beside) = (Vec::new(), Vec::new());
        for kind in outputs() {
            let Some(out) = kind.target(cfg) else {
                continue;
            };
            let planned = match (kind.directory(), &out) {
                (Some(marker), Output::File(p)) => Planned::Dir(DirTarget::resolve(p, marker)?),
                (Some(_), Output::Stdout) => {
                    return Err(crate::error::Error::usage(format!(
                        "the {} is a directory: it cannot go to standard output",
                        kind.name()
                    )))
                }
                (None, out) => Planned::File(Target::resolve(out)?),
            };
            for f in kind.beside(cfg) {
                beside.push(Target::resolve(&Output::File(f))?);
            }
            kinds.push((kind, planned));
        }
        // A file written inside a directory output would go with the
        // directory it lies in when that one is put in place.
        let trace = match &cfg.output {
            // The archive is -o's directory itself.
            Some(Output::File(_)) if cfg.format == Format::Otf2 => None,
            Some(Output::File(f)) => Some(("-o", f)),
            _ => None,
        };
        let sync = cfg.write_sync.as_ref().map(|f| ("--write-sync", f));
        for (option, file) in trace.into_iter().chain(sync) {
            for (kind, planned) in &kinds {
                let Planned::Dir(d) = planned else { continue };
                d.refuse_inputs([(option, file.as_path())]).map_err(|_| {
                    crate::error::Error::usage(format!(
                        "{option} {} lies in the directory of the {} ({}): give a file outside it",
                        file.display(),
                        kind.name(),
                        d.shown()
                    ))
                })?;
            }
        }
        Ok(Outputs {
            kinds,
            created: Vec::new(),
            beside,
        })
    }

    /// Refuses an output that is one of `inputs` (or, for a directory,
    /// holds or lies in one).
    pub fn refuse_inputs(&self, inputs: &[(&str, PathBuf)]) -> crate::error::Result<()> {
        let list = || inputs.iter().map(|(o, p)| (*o, p.as_path()));
        for (_, planned) in &self.kinds {
            match planned {
                Planned::File(t) => t.refuse_inputs(list())?,
                Planned::Dir(t) => t.refuse_inputs(list())?,
            }
        }
        for t in &self.beside {
            t.refuse_inputs(list())?;
        }
        Ok(())
    }

    /// Creates every output (a temporary file or directory, removed on
    /// any error), so that an unwritable place fails before the work.
    pub fn create(&mut self) -> crate::error::Result<()> {
        for (_, planned) in &self.kinds[self.created.len()..] {
            self.created.push(match planned {
                Planned::File(t) => Place::File(t.create()?),
                Planned::Dir(t) => Place::Dir(t.create()?),
            });
        }
        Ok(())
    }

    /// The outputs' names, for messages.
    pub fn shown(&self) -> String {
        let names: Vec<String> = self.kinds.iter().map(|(_, t)| t.shown()).collect();
        names.join(", ")
    }

    /// Whether a failed write leaves a partial output behind (a FIFO or
    /// device cannot be taken back).
    pub fn partial(&self) -> bool {
        self.created.iter().any(Place::partial_on_failure)
    }

    /// The sinks of every output, T0 at `origin`, of the window `cut`, as
    /// one.
    pub fn start(self, cfg: &Config, origin: i64, cut: Cut) -> io::Result<Box<Fanout>> {
        let mut sinks = Vec::new();
        for ((kind, planned), place) in self.kinds.into_iter().zip(self.created) {
            let shown = planned.shown();
            let commit = Box::new(move |place: Place| place.commit(&shown));
            sinks.push(kind.start(cfg, place, commit, origin, cut)?);
        }
        Ok(Box::new(Fanout(sinks)))
    }
}
