//! The table of output formats: one [`OutputKind`] a format, as
//! [`crate::convert::kinds`] is the table of sources. `run.rs` names none
//! of them.

use crate::cli::{Config, Output};
use crate::sink::{Commit1, Fanout, OutputKind, Staged, TraceSink};
use std::io;
use std::path::PathBuf;

/// Every output format.
pub fn outputs() -> Vec<Box<dyn OutputKind>> {
    vec![Box::new(PajeText)]
}

/// The Pajé trace of `-o`.
pub struct PajeText;

impl OutputKind for PajeText {
    fn name(&self) -> &'static str {
        "Pajé trace"
    }

    fn target(&self, cfg: &Config) -> Option<Output> {
        Some(cfg.output.clone())
    }

    fn start(
        &self,
        cfg: &Config,
        out: crate::output::Sink,
        commit: Commit1<crate::output::Sink>,
        origin: i64,
    ) -> io::Result<Box<dyn TraceSink>> {
        use crate::paje::writer::PajeWriter;
        let absolute = cfg.absolute_time;
        // On a thread of its own when the run may use threads and no text
        // decoder keeps the spare core busy (crate::prefetch::writer_thread):
        // a binary decoder keeps its core busy a part of the time, and the
        // writer takes the rest. The bytes are the same either way, and
        // they reach the output in 256 KiB chunks.
        Ok(if crate::prefetch::writer_thread() {
            Box::new(crate::sink::thread::OnThread::new(
                move || PajeWriter::new(out, origin, absolute),
                commit,
            ))
        } else {
            Box::new(Staged::new(PajeWriter::new(out, origin, absolute)?, commit))
        })
    }
}

/// The outputs a run asked for, settled before any input is read (a
/// wrong `-o` fails at once, and an input named as an output is never
/// touched), then created, then started once T0 is known.
pub struct Outputs {
    kinds: Vec<(Box<dyn OutputKind>, crate::output::Target)>,
    created: Vec<crate::output::Sink>,
}

impl Outputs {
    /// Where each output the run asks for goes, checked.
    pub fn settle(cfg: &Config) -> crate::error::Result<Outputs> {
        let kinds = outputs()
            .into_iter()
            .filter_map(|k| k.target(cfg).map(|o| (k, o)))
            .map(|(k, o)| crate::output::Target::resolve(&o).map(|t| (k, t)))
            .collect::<crate::error::Result<_>>()?;
        Ok(Outputs {
            kinds,
            created: Vec::new(),
        })
    }

    /// Refuses an output that is one of `inputs`.
    pub fn refuse_inputs(&self, inputs: &[(&str, PathBuf)]) -> crate::error::Result<()> {
        for (_, target) in &self.kinds {
            target.refuse_inputs(inputs.iter().map(|(o, p)| (*o, p.as_path())))?;
        }
        Ok(())
    }

    /// Creates every output (a temporary file, removed on any error or
    /// ending signal), so that an unwritable place fails before the work.
    pub fn create(&mut self) -> crate::error::Result<()> {
        for (_, target) in &self.kinds[self.created.len()..] {
            self.created.push(target.create()?);
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
        self.created.iter().any(|s| s.partial_on_failure())
    }

    /// The sinks of every output, T0 at `origin`, as one.
    pub fn start(self, cfg: &Config, origin: i64) -> io::Result<Box<Fanout>> {
        let mut sinks = Vec::new();
        for ((kind, target), out) in self.kinds.into_iter().zip(self.created) {
            let shown = target.shown();
            let commit = Box::new(move |out: crate::output::Sink| out.commit(&shown));
            sinks.push(kind.start(cfg, out, commit, origin)?);
        }
        Ok(Box::new(Fanout(sinks)))
    }
}
