//! The k-way merge on corrected time (the thesis' "ordenador de dados",
//! figure 4.16): one pending event per source in a heap keyed by
//! (time, source index, sequence), so equal times leave in a documented,
//! deterministic order: by source index (the order of the command line's
//! source kinds, then file order), then in each source's own order.
//! Memory is one event per source.

use crate::error::Result;
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
    /// With one source, its next event, and no heap: the heap's moves
    /// of its entries were a tenth of what a PCP run does per event.
    only: Option<Event>,
}

impl Merge {
    /// Pulls the first event of every source.
    pub fn new(mut sources: Vec<Box<dyn EventSource>>, reg: &mut Registry) -> Result<Merge> {
        let mut heap = MinQueue::with_capacity(sources.len());
        let mut only = None;
        if let [s] = sources.as_mut_slice() {
            only = s.next_event(reg)?;
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
            Some(e) => Some(e.time),
            None => self.heap.peek().map(|(k, _)| k.0),
        }
    }

    /// The next event in (time, source, sequence) order.
    pub fn next_event(&mut self, reg: &mut Registry) -> Result<Option<Event>> {
        Ok(self.next(reg)?.map(|(_, e)| e))
    }

    /// The next event and the index of the source it came from.
    pub fn next(&mut self, reg: &mut Registry) -> Result<Option<(usize, Event)>> {
        if let Some(event) = self.only.take() {
            if let Some(s) = self.sources.first_mut() {
                self.only = s.next_event(reg)?;
            }
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
