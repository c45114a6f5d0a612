//! The files of a libRastro run read as one stream: each file's records
//! in order, the files merged on their corrected times.

use super::*;

/// One input file and its reader for the current pass.
pub(super) struct Input {
    pub(super) path: PathBuf,
    pub(super) reader: RstReader<crate::input::Reader>,
    pub(super) rec: Record,
    /// Corrected time of `rec`.
    pub(super) time: i64,
    /// Raw time of the previous record, to catch a clock going back.
    pub(super) last_raw: i64,
    pub(super) host: String,
    pub(super) id1: u64,
    pub(super) id2: u64,
    pub(super) clock: ClockMap,
}

impl Input {
    pub(super) fn open(
        path: &Path,
    ) -> Result<(RstReader<crate::input::Reader>, integrador_rastro::Init)> {
        let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
        let reader = RstReader::new(file).map_err(|e| Error::in_file(path, e))?;
        let init = reader.init().clone();
        Ok((reader, init))
    }
}

/// The files merged on corrected time.
pub(super) struct Walk {
    pub(super) files: Vec<Input>,
    pub(super) heap: crate::order::MinQueue<(i64, usize), ()>,
    pub(super) window: i64,
}

impl Walk {
    pub(super) fn new(
        paths: &[PathBuf],
        window: i64,
        clock_of: &mut dyn FnMut(&str) -> ClockMap,
    ) -> Result<Walk> {
        let mut files = Vec::with_capacity(paths.len());
        for path in paths {
            let (reader, init) = Input::open(path)?;
            let clock = clock_of(&init.host);
            files.push(Input {
                path: path.clone(),
                reader,
                rec: Record::default(),
                time: 0,
                last_raw: i64::MIN,
                host: init.host,
                id1: init.id1,
                id2: init.id2,
                clock,
            });
        }
        let mut w = Walk {
            files,
            heap: crate::order::MinQueue::default(),
            window,
        };
        for i in 0..w.files.len() {
            w.advance(i)?;
        }
        Ok(w)
    }

    /// Reads file `i`'s next record and queues it.
    pub(super) fn advance(&mut self, i: usize) -> Result<()> {
        let window = self.window;
        let Some(f) = self.files.get_mut(i) else {
            return Ok(());
        };
        if !f
            .reader
            .next_into(&mut f.rec)
            .map_err(|e| Error::in_file(&f.path, e))?
        {
            return Ok(());
        }
        let raw = f.rec.time_ns;
        if f.last_raw != i64::MIN && raw < f.last_raw.saturating_sub(window) {
            return Err(Error::in_file(
                &f.path,
                format!(
                    "byte {}: time goes back by {} ns, more than the reorder window ({} ns)",
                    f.rec.offset,
                    f.last_raw - raw,
                    window
                ),
            ));
        }
        f.last_raw = f.last_raw.max(raw);
        f.time = f.clock.map(raw);
        self.heap.push((f.time, i), ());
        Ok(())
    }

    /// The file holding the next record in time order.
    pub(super) fn next(&mut self) -> Option<usize> {
        self.heap.pop().map(|((_, i), ())| i)
    }
}

/// How a file ended, when it is worth a line in the summary.
pub(super) fn end_note(f: &Input) -> Option<String> {
    let name = f.path.display();
    match f.reader.end() {
        End::Stop { trailing, .. } if *trailing > 0 => Some(format!(
            "{name}: {trailing} byte(s) after the STOP record ignored"
        )),
        End::NoStop { offset } => Some(format!(
            "{name}: no STOP record at byte {offset} (the writer did not finish); read up to there"
        )),
        End::Truncated { offset, what } => {
            Some(format!("{name}: byte {offset}: {what}; read up to there"))
        }
        _ => None,
    }
}
