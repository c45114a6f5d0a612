//! What every input source looks like to the merge: a stream of model
//! events in non-decreasing reference time, plus the counts the summary
//! reports. A source is a decoder crate + a converter (`src/convert/`),
//! registered in [`crate::run`].

use crate::clock::ClockMap;
use crate::error::{Error, Result};
use crate::model::{Event, Op};
use crate::registry::Registry;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::path::{Path, PathBuf};

/// Counts and facts of one source, for the summary.
#[derive(Debug, Clone, Default)]
pub struct SourceStats {
    /// Source kind (`ganglia`, `os`...).
    pub kind: &'static str,
    /// The input file (the first, for a source of several files).
    pub path: PathBuf,
    /// Further files of the same source.
    pub more_files: usize,
    /// Records decoded.
    pub records: u64,
    /// Model events produced.
    pub events: u64,
    /// Records that came earlier than one before them, sorted by the
    /// reorder window.
    pub reordered: u64,
    /// Non-fatal problems.
    pub warnings: u64,
    /// The host whose clock stamped the records, if any.
    pub clock_host: Option<String>,
    /// Whether that host's clock was corrected by the sync file.
    pub clock: Option<ClockMap>,
    /// Point-to-point messages, for sources that have them.
    pub messages: Option<MessageStats>,
    /// Source-specific facts for the summary (anchors, pairing problems).
    pub notes: Vec<String>,
    /// Damage found in the input and what was kept (a document cut in the
    /// middle, a last line without its newline, an empty file): printed
    /// as warnings even with `-q`.
    pub damage: Vec<String>,
    /// First and last event time, on the reference clock (ns).
    pub span: Option<(i64, i64)>,
}

impl SourceStats {
    /// Notes, at the end of a line-oriented input, a last line left out
    /// for want of its newline, and an input that gave nothing at all.
    pub fn end_of_text(&mut self, path: &std::path::Path, cut: Option<u64>, nothing: &str) {
        if let Some(line) = cut {
            self.damage.push(format!(
                "{}: line {line} has no newline (the file was cut while written?): left out",
                path.display()
            ));
        }
        if self.records == 0 {
            self.damage.push(format!("{}: {nothing}", path.display()));
        }
    }
}

pub use crate::messages::MessageStats;

/// A converted input.
pub trait EventSource {
    /// The next event, in non-decreasing time; `Ok(None)` at the end.
    fn next_event(&mut self, reg: &mut Registry) -> Result<Option<Event>>;
    /// Counts so far.
    fn stats(&self) -> &SourceStats;
}

/// What a converter does: read one record, turn it into zero or more
/// events on the source's own clock, and hand them to the [`Timeline`].
pub trait Converter {
    /// Reads the next record; `Ok(false)` at the end of the input.
    fn pull(&mut self, reg: &mut Registry, out: &mut Timeline) -> Result<bool>;
}

/// The part every source shares: the reorder window on source time, the
/// clock map to the reference clock, and the counts.
pub struct Timeline {
    reorder: Reorder<Op>,
    clock: ClockMap,
    /// Counts and facts for the summary.
    pub stats: SourceStats,
}

impl Timeline {
    /// A timeline for records of `stats.path` stamped by `stats.clock`.
    pub fn new(window: i64, stats: SourceStats) -> Timeline {
        Timeline {
            reorder: Reorder::new(window),
            clock: stats.clock.unwrap_or(ClockMap::Identity),
            stats,
        }
    }

    /// A timeline whose positions are byte offsets (binary inputs).
    pub fn binary(window: i64, stats: SourceStats) -> Timeline {
        Timeline::counting(window, stats, "byte")
    }

    /// A timeline whose positions count `unit`s (`row` of an RRD archive).
    pub fn counting(window: i64, stats: SourceStats, unit: &'static str) -> Timeline {
        let mut t = Timeline::new(window, stats);
        t.reorder.unit = unit;
        t
    }

    /// Adds an event read at `line`, at `time` on the source's clock.
    pub fn push(&mut self, line: u64, time: i64, op: Op) -> Result<()> {
        self.reorder.push(&self.stats.path, line, time, op)
    }
}

/// A [`Converter`] driven as an [`EventSource`].
pub struct Converted<C> {
    converter: C,
    timeline: Timeline,
    done: bool,
}

impl<C: Converter> Converted<C> {
    /// Wraps a converter and its timeline.
    pub fn new(converter: C, timeline: Timeline) -> Self {
        Converted {
            converter,
            timeline,
            done: false,
        }
    }
}

impl<C: Converter> EventSource for Converted<C> {
    fn next_event(&mut self, reg: &mut Registry) -> Result<Option<Event>> {
        let t = &mut self.timeline;
        loop {
            let ready = if self.done {
                t.reorder.pop_any()
            } else {
                t.reorder.pop_ready()
            };
            if let Some((time, op)) = ready {
                t.stats.events += 1;
                let time = t.clock.map(time);
                t.stats.span = Some(match t.stats.span {
                    None => (time, time),
                    Some((a, b)) => (a.min(time), b.max(time)),
                });
                return Ok(Some(Event { time, op }));
            }
            if self.done {
                t.stats.reordered = t.reorder.reordered;
                return Ok(None);
            }
            if self.converter.pull(reg, t)? {
                t.stats.records += 1;
            } else {
                self.done = true;
            }
        }
    }

    fn stats(&self) -> &SourceStats {
        &self.timeline.stats
    }
}

struct Pending<T> {
    time: i64,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Pending<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl<T> Eq for Pending<T> {}
impl<T> PartialOrd for Pending<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Pending<T> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// Sorts a source that steps back in time by at most `window` (README,
/// `--reorder-window`), holding only the records inside the window.
/// Ties keep input order. Records that arrive in order (the common case)
/// go to a deque, already sorted; only those that step back go through a
/// heap.
pub struct Reorder<T> {
    window: i64,
    in_order: VecDeque<Pending<T>>,
    heap: BinaryHeap<Pending<T>>,
    max_seen: Option<(i64, u64)>,
    seq: u64,
    /// What positions are: `line` (text) or `byte` (binary).
    unit: &'static str,
    /// Records that arrived earlier than one before them.
    pub reordered: u64,
}

impl<T> Reorder<T> {
    /// A buffer for a window of `window` ns of source time.
    pub fn new(window: i64) -> Self {
        Reorder {
            window,
            in_order: VecDeque::new(),
            heap: BinaryHeap::new(),
            max_seen: None,
            seq: 0,
            unit: "line",
            reordered: 0,
        }
    }

    /// Adds a record read at `line` with source time `time`. Fails when it
    /// goes further back than the window, naming both lines.
    pub fn push(&mut self, path: &Path, line: u64, time: i64, item: T) -> Result<()> {
        match self.max_seen {
            Some((max, max_line)) if time < max => {
                if max - time > self.window {
                    let unit = self.unit;
                    return Err(Error::in_file(
                        path,
                        format!(
                            "{unit} {line}: time goes back {} before {unit} {max_line}, more than the reorder window of {} (--reorder-window)",
                            crate::time::format_duration(max - time),
                            crate::time::format_duration(self.window)
                        ),
                    ));
                }
                self.reordered += 1;
                self.heap.push(Pending {
                    time,
                    seq: self.seq,
                    item,
                });
            }
            _ => {
                self.max_seen = Some((time, line));
                self.in_order.push_back(Pending {
                    time,
                    seq: self.seq,
                    item,
                });
            }
        }
        self.seq += 1;
        Ok(())
    }

    /// Whether the deque's front comes before the heap's top.
    fn front_first(&self) -> Option<bool> {
        match (self.in_order.front(), self.heap.peek()) {
            (None, None) => None,
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            // `Pending`'s order is reversed for the max-heap.
            (Some(a), Some(b)) => Some(a > b),
        }
    }

    fn pop_first(&mut self) -> Option<(i64, T)> {
        let p = if self.front_first()? {
            self.in_order.pop_front()
        } else {
            self.heap.pop()
        };
        p.map(|p| (p.time, p.item))
    }

    /// The earliest record that no future record can precede.
    pub fn pop_ready(&mut self) -> Option<(i64, T)> {
        let (max, _) = self.max_seen?;
        let first = if self.front_first()? {
            self.in_order.front()
        } else {
            self.heap.peek()
        };
        if first?.time <= max.saturating_sub(self.window) {
            return self.pop_first();
        }
        None
    }

    /// At the end of input: the earliest remaining record.
    pub fn pop_any(&mut self) -> Option<(i64, T)> {
        self.pop_first()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(window: i64, times: &[i64]) -> Result<Vec<(i64, usize)>> {
        let mut r = Reorder::new(window);
        let mut out = Vec::new();
        for (i, &t) in times.iter().enumerate() {
            r.push(Path::new("f"), i as u64 + 1, t, i)?;
            while let Some(x) = r.pop_ready() {
                out.push(x);
            }
        }
        while let Some(x) = r.pop_any() {
            out.push(x);
        }
        Ok(out)
    }

    #[test]
    fn sorts_within_the_window_and_keeps_ties_in_order() {
        let out = run(10, &[5, 3, 5, 20, 12, 30]).unwrap();
        assert_eq!(out, vec![(3, 1), (5, 0), (5, 2), (12, 4), (20, 3), (30, 5)]);
    }

    #[test]
    fn refuses_to_go_back_further() {
        let e = run(10, &[5, 100, 89]).unwrap_err();
        assert!(
            e.message
                .starts_with("f: line 3: time goes back 11ns before line 2"),
            "{e}"
        );
    }

    proptest::proptest! {
        #[test]
        fn output_is_the_stable_sort(times in proptest::collection::vec(0i64..50, 0..60)) {
            // A window wider than the spread accepts everything.
            let out = run(100, &times).unwrap();
            // A narrow window either refuses or sorts exactly the same way.
            if let Ok(narrow) = run(3, &times) {
                proptest::prop_assert_eq!(&narrow, &out);
            }
            let narrow = run(3, &times);
            if let Ok(narrow) = narrow {
                let mut e: Vec<(i64, usize)> = times.iter().copied().zip(0..).collect();
                e.sort_by_key(|&(t, i)| (t, i));
                proptest::prop_assert_eq!(narrow, e);
            }
            let mut expected: Vec<(i64, usize)> = times.iter().copied().zip(0..).collect();
            expected.sort_by_key(|&(t, i)| (t, i));
            proptest::prop_assert_eq!(out, expected);
        }
    }
}
