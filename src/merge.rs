//! The k-way merge on corrected time (the thesis' "ordenador de dados",
//! figure 4.16): one pending event per source in a heap keyed by
//! (time, source index, sequence), so equal times leave in a documented,
//! deterministic order: by source index (the order of the command line's
//! source kinds, then file order), then in each source's own order.
//! Memory is one event per source, or one batch when there is one.

use crate::error::{Error, Result};
use crate::model::Event;
use crate::order::MinQueue;
use crate::registry::Registry;
use crate::source::EventSource;

/// A source's pending event, keyed by (time, source index, sequence).
type Key = (i64, usize, u64);

/// Merges sources into one time-ordered stream.
pub struct Merge {
    sources: Vec<Box<dyn EventSource>>,
    heap: MinQueue<Key, Event>,
    seq: Vec<u64>,
    /// With one source, its next events, and no heap: the heap's moves
    /// of its entries were a tenth of what a PCP run does per event.
    only: Option<Ahead>,
}

/// Events per call to a lone source. The converter then runs a batch
/// at a time, and the writer the same events after it, each with its
/// own code and tables in the caches, instead of taking turns per event:
/// 1 GB of akypuera 13.9-16.1 s -> 12.6-13.5 s, of DECK 18.9-20.8 s ->
/// 17.7-18.9 s (alternating runs), though callgrind counts a few more
/// instructions; PCP the same within noise.
const BATCH: usize = 256;

/// A lone source's events taken ahead.
struct Ahead {
    buf: Vec<Event>,
    pos: usize,
    /// The error the source stopped on, given after the events before it.
    failed: Option<Error>,
}

impl Ahead {
    /// Once every event taken: the source's error, or its next batch
    /// (an error after some events is kept for the call after them).
    fn refill(&mut self, sources: &mut [Box<dyn EventSource>], reg: &mut Registry) -> Result<()> {
        if self.pos < self.buf.len() {
            return Ok(());
        }
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.buf.clear();
        self.pos = 0;
        if let Some(s) = sources.first_mut() {
            if let Err(e) = s.next_batch(reg, &mut self.buf, BATCH) {
                if self.buf.is_empty() {
                    return Err(e);
                }
                self.failed = Some(e);
            }
        }
        Ok(())
    }
}

impl Merge {
    /// Pulls the first event of every source.
    pub fn new(mut sources: Vec<Box<dyn EventSource>>, reg: &mut Registry) -> Result<Merge> {
        let mut heap = MinQueue::with_capacity(sources.len());
        let mut only = None;
        if let [s] = sources.as_mut_slice() {
            // The first event alone: what the registry knows before the
            // first line is written stays what one event's conversion
            // registers (Registry::up_front_order).
            let mut buf = Vec::with_capacity(BATCH);
            s.next_batch(reg, &mut buf, 1)?;
            only = Some(Ahead {
                buf,
                pos: 0,
                failed: None,
            });
        } else {
            for (i, s) in sources.iter_mut().enumerate() {
                if let Some(event) = s.next_event(reg)? {
                    heap.push((event.time, i, 0), event);
                }
            }
        }
        let seq = vec![1; sources.len()];
        Ok(Merge {
            sources,
            heap,
            seq,
            only,
        })
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<i64> {
        match &self.only {
            Some(a) => a.buf.get(a.pos).map(|e| e.time),
            None => self.heap.peek().map(|(k, _)| k.0),
        }
    }

    /// The next event in (time, source, sequence) order.
    pub fn next_event(&mut self, reg: &mut Registry) -> Result<Option<Event>> {
        Ok(self.next(reg)?.map(|(_, e)| e))
    }

    /// The next event and the index of the source it came from.
    pub fn next(&mut self, reg: &mut Registry) -> Result<Option<(usize, Event)>> {
        if let Some(a) = &mut self.only {
            a.refill(&mut self.sources, reg)?;
            let Some(&event) = a.buf.get(a.pos) else {
                return Ok(None);
            };
            a.pos += 1;
            return Ok(Some((0, event)));
        }
        let Some((&(_, i, _), _)) = self.heap.peek() else {
            return Ok(None);
        };
        // The head is replaced by its source's next event in one sift,
        // rather than a pop and a push.
        let next = self.sources[i].next_event(reg)?.map(|next| {
            let seq = &mut self.seq[i];
            *seq += 1;
            ((next.time, i, *seq - 1), next)
        });
        let Some((_, event)) = self.heap.replace_top(next) else {
            return Ok(None);
        };
        Ok(Some((i, event)))
    }

    /// With one source, the events it has ready in a run (at least one
    /// while any is left), handed out at once: the writing loop then
    /// walks a slice, where one event at a time through [`Merge::next`]
    /// cost a tenth of a libRastro run's thread. `None` with several
    /// sources (their order is the heap's: take [`Merge::next`]) or at
    /// the end.
    pub fn next_run(&mut self, reg: &mut Registry) -> Result<Option<&[Event]>> {
        let Some(a) = &mut self.only else {
            return Ok(None);
        };
        a.refill(&mut self.sources, reg)?;
        let run = a.buf.get(a.pos..).unwrap_or_default();
        a.pos = a.buf.len();
        Ok((!run.is_empty()).then_some(run))
    }

    /// Whether there is one source ([`Merge::next_run`] gives its runs).
    pub fn is_lone(&self) -> bool {
        self.only.is_some()
    }

    /// The first and last event times of the inputs so far (all of them
    /// once the merge has ended).
    pub fn span(&self) -> (Option<i64>, Option<i64>) {
        let spans = self.sources().iter().filter_map(|s| s.stats().span);
        (
            spans.clone().map(|(a, _)| a).min(),
            spans.map(|(_, b)| b).max(),
        )
    }

    /// The sources, for their counts.
    pub fn sources(&self) -> &[Box<dyn EventSource>] {
        &self.sources
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchy::Hierarchy;
    use crate::model::{ContainerId, Op, TypeId};
    use crate::source::SourceStats;

    struct VecSource(std::vec::IntoIter<i64>, SourceStats, u32);

    impl EventSource for VecSource {
        fn next_event(&mut self, _: &mut Registry) -> Result<Option<Event>> {
            Ok(self.0.next().map(|time| Event {
                time,
                op: Op::SetVariable {
                    container: ContainerId(self.2),
                    ty: TypeId(0),
                    value: 0.0,
                },
            }))
        }
        fn stats(&self) -> &SourceStats {
            &self.1
        }
    }

    fn merged(inputs: &[Vec<i64>]) -> Vec<(i64, u32)> {
        let mut reg = Registry::new(Hierarchy::builtin());
        let sources: Vec<Box<dyn EventSource>> = inputs
            .iter()
            .enumerate()
            .map(|(i, v)| {
                Box::new(VecSource(
                    v.clone().into_iter(),
                    SourceStats::default(),
                    i as u32,
                )) as Box<dyn EventSource>
            })
            .collect();
        let mut m = Merge::new(sources, &mut reg).unwrap();
        let mut out = Vec::new();
        while let Some(e) = m.next_event(&mut reg).unwrap() {
            out.push((e.time, e.op.container().0));
        }
        out
    }

    /// Gives `n` events, then fails.
    struct Failing(i64, SourceStats);

    impl EventSource for Failing {
        fn next_event(&mut self, _: &mut Registry) -> Result<Option<Event>> {
            if self.0 == 0 {
                return Err(Error::input("boom"));
            }
            self.0 -= 1;
            Ok(Some(Event {
                time: 1000 - self.0,
                op: Op::SetVariable {
                    container: ContainerId(0),
                    ty: TypeId(0),
                    value: 0.0,
                },
            }))
        }
        fn stats(&self) -> &SourceStats {
            &self.1
        }
    }

    /// A lone source is read in batches: the events before its error
    /// still come out, in order, then the error.
    #[test]
    fn a_lone_source_gives_its_events_before_its_error() {
        for n in [
            0,
            1,
            2,
            BATCH as i64 - 1,
            BATCH as i64,
            3 * BATCH as i64 + 5,
        ] {
            let mut reg = Registry::new(Hierarchy::builtin());
            let source: Box<dyn EventSource> = Box::new(Failing(n, SourceStats::default()));
            let err = match Merge::new(vec![source], &mut reg) {
                Err(e) => {
                    assert_eq!(n, 0);
                    e
                }
                Ok(mut m) => {
                    let mut times = Vec::new();
                    let err = loop {
                        match m.next_event(&mut reg) {
                            Ok(Some(e)) => times.push(e.time),
                            Ok(None) => panic!("ended without its error"),
                            Err(e) => break e,
                        }
                    };
                    assert_eq!(times, (1001 - n..=1000).collect::<Vec<_>>());
                    err
                }
            };
            assert!(err.to_string().contains("boom"), "{err}");
        }
    }

    /// In runs, a lone source gives the same events, then the same error;
    /// several sources give no runs.
    #[test]
    fn runs_of_a_lone_source_are_its_events() {
        for n in [1, 2, BATCH as i64, 3 * BATCH as i64 + 5] {
            let mut reg = Registry::new(Hierarchy::builtin());
            let source: Box<dyn EventSource> = Box::new(Failing(n, SourceStats::default()));
            let mut m = Merge::new(vec![source], &mut reg).unwrap();
            assert!(m.is_lone());
            let mut times = Vec::new();
            let err = loop {
                match m.next_run(&mut reg) {
                    Ok(Some(run)) => times.extend(run.iter().map(|e| e.time)),
                    Ok(None) => panic!("ended without its error"),
                    Err(e) => break e,
                }
            };
            assert_eq!(times, (1001 - n..=1000).collect::<Vec<_>>());
            assert!(err.to_string().contains("boom"), "{err}");
        }
        let mut reg = Registry::new(Hierarchy::builtin());
        let two: Vec<Box<dyn EventSource>> = (0..2)
            .map(|i| {
                Box::new(VecSource(vec![1, 2].into_iter(), SourceStats::default(), i))
                    as Box<dyn EventSource>
            })
            .collect();
        let mut m = Merge::new(two, &mut reg).unwrap();
        assert!(!m.is_lone());
        assert!(m.next_run(&mut reg).unwrap().is_none());
        assert_eq!(m.next_event(&mut reg).unwrap().map(|e| e.time), Some(1));
    }

    proptest::proptest! {
        /// The merge equals all sources concatenated and stably sorted by
        /// (time, source index), sources themselves being sorted.
        #[test]
        fn equals_the_stable_sort(mut inputs in proptest::collection::vec(proptest::collection::vec(0i64..20, 0..15), 0..6)) {
            for v in &mut inputs { v.sort(); }
            let mut expected: Vec<(i64, u32)> = inputs.iter().enumerate()
                .flat_map(|(i, v)| v.iter().map(move |&t| (t, i as u32))).collect();
            expected.sort_by_key(|&(t, i)| (t, i));
            proptest::prop_assert_eq!(merged(&inputs), expected);
        }
    }
}
