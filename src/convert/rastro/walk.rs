//! The files of a libRastro run read as one stream: each file's records
//! in order, the files merged on their corrected times, which the
//! [`Timeline`] gives (each file is one of its lanes).

use super::*;

/// One input file and its reader for the current pass.
pub(super) struct Input {
    pub(super) path: PathBuf,
    pub(super) reader: RstReader<crate::input::Reader>,
    pub(super) rec: Record,
    /// The latest raw time read, where a file without a STOP ends.
    pub(super) last_raw: i64,
    pub(super) host: String,
    pub(super) id1: u64,
    pub(super) id2: u64,
    /// Its clock domain in the timeline.
    pub(super) lane: Lane,
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
}

impl Walk {
    /// Opens the files; their lanes are set by the caller, then
    /// [`start`](Self::start) reads their first records.
    pub(super) fn open(paths: &[PathBuf]) -> Result<Walk> {
        let mut files = Vec::with_capacity(paths.len());
        for path in paths {
            let (reader, init) = Input::open(path)?;
            files.push(Input {
                path: path.clone(),
                reader,
                rec: Record::default(),
                last_raw: i64::MIN,
                host: init.host,
                id1: init.id1,
                id2: init.id2,
                lane: Lane::default(),
            });
        }
        Ok(Walk {
            files,
            heap: crate::order::MinQueue::default(),
        })
    }

    /// Reads every file's first record.
    pub(super) fn start(&mut self, timeline: &Timeline) -> Result<()> {
        for i in 0..self.files.len() {
            self.advance(i, timeline)?;
        }
        Ok(())
    }

    /// Reads file `i`'s next record and queues it on its corrected time;
    /// `false` at the file's end.
    pub(super) fn advance(&mut self, i: usize, timeline: &Timeline) -> Result<bool> {
        let Some(f) = self.files.get_mut(i) else {
            return Ok(false);
        };
        if !f
            .reader
            .next_into(&mut f.rec)
            .map_err(|e| Error::in_file(&f.path, e))?
        {
            return Ok(false);
        }
        let raw = f.rec.time_ns;
        f.last_raw = f.last_raw.max(raw);
        self.heap.push((timeline.map(f.lane, raw), i), ());
        Ok(true)
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
