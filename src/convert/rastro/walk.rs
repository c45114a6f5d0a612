//! The files of a libRastro run read as one stream: each file's records
//! in order, the files merged on their corrected times (each file is one
//! lane of the [`Timeline`], whose [`LaneMap`]s place them).
//!
//! Both passes read the run through [`Records`]: merged here, or on a
//! spare core when every file can be read there (crate::prefetch). The
//! converter sees the same items in the same order either way.

use super::*;
use crate::eventmap::Ints;
use crate::prefetch::{Next, Prefetch};
use crate::timeline::LaneMap;
use integrador_rastro::{FieldType, IntRecord, Record};
use std::io::Read;

/// What the converter keeps of each file.
pub(super) struct FileInfo {
    pub(super) path: PathBuf,
    pub(super) host: String,
    pub(super) id1: u64,
    pub(super) id2: u64,
    /// Its clock domain in the timeline.
    pub(super) lane: Lane,
}

/// What follows an item in its file.
#[derive(Debug, Clone)]
pub(super) enum After {
    /// The file's next record, at this raw time.
    Next(i64),
    /// The file's end, and the latest raw time read (where a file without
    /// a STOP ends): boxed, as it comes once per file and an item is
    /// copied from core to core.
    Ended(Box<(End, i64)>),
}

/// The part of a record the conversion reads (a map reads integers
/// only), in one block: a record handed to the converter on the other
/// core touched a few buffers of its own each, cold there (decoding on
/// the spare core cost four times as much as in place). The decoder
/// fills it from its buffer ([`RstReader::next_ints`]).
pub(super) type Slim = IntRecord;

impl Ints for Slim {
    #[inline]
    fn int(&self, t: FieldType, k: usize) -> Option<u64> {
        IntRecord::int(self, t, k)
    }
}

/// One step of the merged run.
#[derive(Debug, Clone)]
pub(super) struct Item {
    pub(super) file: usize,
    /// `false` for the file's start, which comes first for every file, in
    /// file order, with no record.
    pub(super) has_rec: bool,
    pub(super) rec: Slim,
    /// The record's time on the reference clock: the merge's key, which
    /// the converter takes rather than map the time again.
    pub(super) mapped: i64,
    pub(super) after: After,
}

impl Default for Item {
    fn default() -> Item {
        Item {
            file: 0,
            has_rec: false,
            rec: Slim::default(),
            mapped: i64::MIN,
            after: After::Next(i64::MIN),
        }
    }
}

/// Opens `path` and reads its INIT record.
pub(super) fn open_file(
    path: &Path,
) -> Result<(RstReader<crate::input::Reader>, integrador_rastro::Init)> {
    let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
    let reader = reader(path, file)?;
    let init = reader.init().clone();
    Ok((reader, init))
}

/// `file`'s records past its INIT record. Event maps read integers only:
/// strings are read past.
fn reader<R: Read>(path: &Path, file: R) -> Result<RstReader<R>> {
    Ok(RstReader::new(file)
        .map_err(|e| Error::in_file(path, e))?
        .skip_strings())
}

/// One file being read.
struct Reading<R: Read> {
    path: PathBuf,
    reader: RstReader<R>,
    /// Its next record, queued in the heap.
    rec: Slim,
    /// What the decoder reads a record into when it is not simple.
    spare: Record,
    last_raw: i64,
    /// The latest corrected time read (the heads-only walk checks that
    /// it never steps back).
    last_mapped: i64,
    map: LaneMap,
}

/// The files merged on corrected time (ties: file order).
pub(super) struct Walk<R: Read> {
    files: Vec<Reading<R>>,
    /// The event types whose records are handed on (by type id); `None`:
    /// all. The others are read past where they are decoded.
    keep: Option<Vec<bool>>,
    /// Only kept records go through the heap: the others are read past
    /// in their file (pass 1: two records in three). The kept ones come
    /// in the same order as through the full merge as long as every
    /// file's corrected times never step back; the first step back ends
    /// the walk, `disordered`, and the caller walks again in full.
    heads_only: bool,
    disordered: bool,
    heap: crate::order::MinQueue<(i64, usize), ()>,
    /// Files whose start was given.
    started: usize,
}

impl<R: Read> Walk<R> {
    fn new(
        readers: Vec<(PathBuf, RstReader<R>)>,
        maps: &[LaneMap],
        keep: Option<Vec<bool>>,
        heads_only: bool,
    ) -> Walk<R> {
        let files = readers
            .into_iter()
            .zip(maps)
            .map(|((path, reader), &map)| Reading {
                path,
                reader,
                rec: Slim::default(),
                spare: Record::default(),
                last_raw: i64::MIN,
                last_mapped: i64::MIN,
                map,
            })
            .collect();
        Walk {
            heads_only: heads_only && keep.is_some(),
            files,
            keep,
            disordered: false,
            heap: crate::order::MinQueue::default(),
            started: 0,
        }
    }

    fn kept(keep: &Option<Vec<bool>>, ty: u16) -> bool {
        keep.as_ref()
            .is_none_or(|k| k.get(usize::from(ty)).copied().unwrap_or(false))
    }

    /// Reads file `i`'s next record (heads only: its next kept one) and
    /// queues it on its corrected time.
    fn advance(&mut self, i: usize) -> Result<After> {
        if self.heads_only {
            return self.advance_heads(i);
        }
        let Some(f) = self.files.get_mut(i) else {
            return Ok(After::Ended(Box::new((End::Open, i64::MIN))));
        };
        if !f
            .reader
            .next_ints(&mut f.rec, &mut f.spare)
            .map_err(|e| Error::in_file(&f.path, e))?
        {
            return Ok(After::Ended(Box::new((f.reader.end().clone(), f.last_raw))));
        }
        let raw = f.rec.time_ns;
        f.last_raw = f.last_raw.max(raw);
        self.heap.push((f.map.map(raw), i), ());
        Ok(After::Next(raw))
    }

    /// [`Walk::advance`], heads only: the records not kept are read for
    /// their time only, and not queued.
    fn advance_heads(&mut self, i: usize) -> Result<After> {
        let Some(f) = self.files.get_mut(i) else {
            return Ok(After::Ended(Box::new((End::Open, i64::MIN))));
        };
        let keep = &self.keep;
        loop {
            if !f
                .reader
                .next_ints_of(&mut f.rec, &mut f.spare, |t| Walk::<R>::kept(keep, t))
                .map_err(|e| Error::in_file(&f.path, e))?
            {
                return Ok(After::Ended(Box::new((f.reader.end().clone(), f.last_raw))));
            }
            let raw = f.rec.time_ns;
            f.last_raw = f.last_raw.max(raw);
            let mapped = f.map.map(raw);
            if mapped < f.last_mapped {
                self.disordered = true;
                return Ok(After::Next(raw));
            }
            f.last_mapped = mapped;
            if Walk::<R>::kept(keep, f.rec.ty) {
                self.heap.push((mapped, i), ());
                return Ok(After::Next(raw));
            }
        }
    }

    /// Fills `item` with the next step; `false` when every file has ended.
    fn next_into(&mut self, item: &mut Item) -> Result<bool> {
        if self.disordered {
            return Ok(false);
        }
        if self.started < self.files.len() {
            let i = self.started;
            self.started += 1;
            item.file = i;
            item.has_rec = false;
            item.after = self.advance(i)?;
            return Ok(true);
        }
        let (i, f, mapped) = loop {
            let Some(((mapped, i), ())) = self.heap.pop() else {
                return Ok(false);
            };
            let Some(f) = self.files.get(i) else {
                return Ok(false);
            };
            if Walk::<R>::kept(&self.keep, f.rec.ty) {
                break (i, f, mapped);
            }
            self.advance(i)?;
        };
        item.rec.clone_from(&f.rec);
        item.mapped = mapped;
        item.file = i;
        item.has_rec = true;
        item.after = self.advance(i)?;
        Ok(true)
    }
}

/// Files beyond this many are merged here, through the run's pool of
/// descriptors, rather than each held open by a decoder thread.
const THREAD_FILES: usize = 256;

/// One pass over the run.
pub(super) enum Records {
    /// The walk and the step it gave last.
    Here(Walk<crate::input::Reader>, Box<Item>),
    /// The walk on a thread; whether it ended in order (see
    /// [`Records::in_order`]).
    Thread(Prefetch<Item, bool>, bool),
}

impl Records {
    /// Starts a pass over `files`, placed by `maps`; `opened` are their
    /// readers when the caller opened them already (past their INIT).
    /// `keep`, when given, names by type id the records the pass needs;
    /// the others are decoded (to read past them) but not handed on.
    /// `heads_only` (with `keep`): the others are not merged either, and
    /// the pass ends early if a file's times step back
    /// ([`Records::in_order`] then says so).
    pub(super) fn open(
        files: &[FileInfo],
        maps: Vec<LaneMap>,
        opened: Option<Vec<RstReader<crate::input::Reader>>>,
        keep: Option<Vec<bool>>,
        heads_only: bool,
    ) -> Result<Records> {
        let paths: Vec<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
        let threadable = paths.len() <= THREAD_FILES
            && paths.iter().all(|p| crate::input::threadable(p))
            && crate::prefetch::claim();
        if !threadable {
            let readers = match opened {
                Some(r) => r,
                None => paths
                    .iter()
                    .map(|p| open_file(p).map(|(r, _)| r))
                    .collect::<Result<_>>()?,
            };
            let walk = Walk::new(
                paths.into_iter().zip(readers).collect(),
                &maps,
                keep,
                heads_only,
            );
            return Ok(Records::Here(walk, Box::default()));
        }
        drop(opened);
        let thread = Prefetch::spawn(
            move || {
                let mut readers = Vec::with_capacity(paths.len());
                for p in paths {
                    let f = crate::input::open_on_thread(&p).map_err(|e| Error::in_file(&p, e))?;
                    let r = reader(&p, f)?;
                    readers.push((p, r));
                }
                Ok(Walk::new(readers, &maps, keep, heads_only))
            },
            |w, item| w.next_into(item),
            |w| Ok(!w.disordered),
        );
        Ok(Records::Thread(thread, true))
    }

    /// The next step of the pass, read in place; `None` at the end.
    pub(super) fn next(&mut self) -> Result<Option<&Item>> {
        match self {
            Records::Here(w, item) => Ok(w.next_into(item)?.then_some(&**item)),
            Records::Thread(p, in_order) => match p.next_record()? {
                Next::Record(slot) => Ok(Some(slot)),
                Next::End(o) => {
                    *in_order = o;
                    Ok(None)
                }
            },
        }
    }

    /// After the end: `false` when a heads-only pass stopped at a file
    /// whose times step back (its items are not the whole pass).
    pub(super) fn in_order(&self) -> bool {
        match self {
            Records::Here(w, _) => !w.disordered,
            Records::Thread(_, in_order) => *in_order,
        }
    }
}

/// How a file ended, when it is worth a line in the summary.
pub(super) fn end_note(path: &Path, end: &End) -> Option<String> {
    let name = path.display();
    match end {
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

#[cfg(test)]
mod tests {
    use super::*;
    use integrador_rastro::encode::Writer;
    use integrador_rastro::Layout;

    /// The kept records of a pass: (file, type, time, offset); and whether
    /// it ended in order.
    fn pass(
        files: &[FileInfo],
        maps: &[LaneMap],
        heads_only: bool,
    ) -> (Vec<(usize, u16, i64, u64)>, bool) {
        let mut keep = vec![false; usize::from(u16::MAX) + 1];
        keep[1] = true;
        let mut r = Records::open(files, maps.to_vec(), None, Some(keep), heads_only).unwrap();
        let mut out = Vec::new();
        while let Some(item) = r.next().unwrap() {
            if item.has_rec {
                out.push((item.file, item.rec.ty, item.rec.time_ns, item.rec.offset));
            }
        }
        (out, r.in_order())
    }

    proptest::proptest! {
        /// The heads-only pass gives the full merge's kept records, in its
        /// order, whenever it says it ended in order; and it does so
        /// whenever no file's times step back.
        #[test]
        fn heads_only_is_the_full_merge(
            runs in proptest::collection::vec(
                proptest::collection::vec((1u16..3, -3i64..6), 0..25), 1..4),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut timeline = Timeline::lanes(1_000, SourceStats::default()).independent();
            let mut files = Vec::new();
            let mut monotone = true;
            for (id, run) in runs.iter().enumerate() {
                let mut w = Writer::new(Layout::Current, 1_000_000_000, id as u64, 0, "h", 1_000);
                let mut t = 1_000i64;
                for (k, &(ty, step)) in run.iter().enumerate() {
                    // Between records (INIT's time is not merged).
                    monotone &= k == 0 || step >= 0;
                    t += step;
                    w.event(ty, t, &[]);
                }
                w.stop(t.max(1_000));
                let path = dir.path().join(format!("r{id}.rst"));
                std::fs::write(&path, w.into_bytes()).unwrap();
                let lane = timeline.file_lane(&path, 0, Clock::IDENTITY);
                files.push(FileInfo { path, host: "h".into(), id1: id as u64, id2: 0, lane });
            }
            let maps: Vec<LaneMap> = files.iter().map(|f| timeline.lane_map(f.lane)).collect();
            let (full, full_in_order) = pass(&files, &maps, false);
            proptest::prop_assert!(full_in_order);
            let (heads, in_order) = pass(&files, &maps, true);
            // Every record is read: a step back anywhere is seen.
            proptest::prop_assert_eq!(in_order, monotone);
            if in_order {
                proptest::prop_assert_eq!(heads, full);
            }
        }
    }
}
