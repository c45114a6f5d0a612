//! Ordering, written once: a min-queue whose items are ordered by a key
//! given apart from them (the k-way merge of sources, an MPI log's rank
//! lanes, the files of a libRastro run, a kernel trace's staged changes),
//! and the reorder buffer of a source that steps back in time a little.
//! Every key ends with a sequence number or an index, so ties keep a
//! documented order and the output is deterministic.

use crate::error::{Error, Result};
use std::cmp::Ordering;
use std::collections::binary_heap::{BinaryHeap, PeekMut};
use std::collections::VecDeque;
use std::path::Path;

/// Items taken out smallest key first. The items need no order of their
/// own.
pub struct MinQueue<K, T> {
    heap: BinaryHeap<Entry<K, T>>,
}

struct Entry<K, T> {
    key: K,
    item: T,
}

impl<K: Ord, T> PartialEq for Entry<K, T> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<K: Ord, T> Eq for Entry<K, T> {}
impl<K: Ord, T> PartialOrd for Entry<K, T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<K: Ord, T> Ord for Entry<K, T> {
    // Reversed: BinaryHeap is a max-heap and the smallest key comes first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

impl<K: Ord, T> Default for MinQueue<K, T> {
    fn default() -> Self {
        MinQueue::with_capacity(0)
    }
}

impl<K: Ord, T> MinQueue<K, T> {
    /// An empty queue with room for `n` items.
    pub fn with_capacity(n: usize) -> Self {
        MinQueue {
            heap: BinaryHeap::with_capacity(n),
        }
    }

    /// Adds `item` under `key`.
    pub fn push(&mut self, key: K, item: T) {
        self.heap.push(Entry { key, item });
    }

    /// The smallest key and its item.
    pub fn peek(&self) -> Option<(&K, &T)> {
        self.heap.peek().map(|e| (&e.key, &e.item))
    }

    /// Takes out the smallest key and its item.
    pub fn pop(&mut self) -> Option<(K, T)> {
        self.heap.pop().map(|e| (e.key, e.item))
    }

    /// Takes out the smallest and puts `next` in its place in one sift
    /// (a merge replaces each head by its source's next event).
    pub fn replace_top(&mut self, next: Option<(K, T)>) -> Option<(K, T)> {
        let mut top = self.heap.peek_mut()?;
        match next {
            Some((key, item)) => {
                let old = std::mem::replace(&mut *top, Entry { key, item });
                drop(top);
                Some((old.key, old.item))
            }
            None => {
                let old = PeekMut::pop(top);
                Some((old.key, old.item))
            }
        }
    }

    /// How many items are queued.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// Sorts a source that steps back in time by at most `window` (README,
/// `--reorder-window`), holding only the records inside the window.
/// Ties keep input order. Records that arrive in order (the common case)
/// go to a deque, already sorted; only those that step back go through a
/// [`MinQueue`].
pub struct Reorder<T> {
    window: i64,
    in_order: VecDeque<((i64, u64), T)>,
    heap: MinQueue<(i64, u64), T>,
    max_seen: Option<(i64, u64)>,
    seq: u64,
    /// What positions are: `line` (text) or `byte` (binary).
    pub unit: &'static str,
    /// Records that arrived earlier than one before them.
    pub reordered: u64,
}

impl<T> Reorder<T> {
    /// A buffer for a window of `window` ns of source time.
    pub fn new(window: i64) -> Self {
        Reorder {
            window,
            in_order: VecDeque::new(),
            heap: MinQueue::default(),
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
                self.heap.push((time, self.seq), item);
            }
            _ => {
                self.max_seen = Some((time, line));
                self.in_order.push_back(((time, self.seq), item));
            }
        }
        self.seq += 1;
        Ok(())
    }

    /// The first key of the deque and of the queue, and whether the deque's
    /// comes first.
    fn front_first(&self) -> Option<bool> {
        match (self.in_order.front(), self.heap.peek()) {
            (None, None) => None,
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (Some((a, _)), Some((b, _))) => Some(a < b),
        }
    }

    fn pop_first(&mut self) -> Option<(i64, T)> {
        let ((time, _), item) = if self.front_first()? {
            self.in_order.pop_front()?
        } else {
            self.heap.pop()?
        };
        Some((time, item))
    }

    /// The earliest record that no future record can precede.
    pub fn pop_ready(&mut self) -> Option<(i64, T)> {
        let (max, _) = self.max_seen?;
        let first = if self.front_first()? {
            self.in_order.front().map(|(k, _)| k.0)
        } else {
            self.heap.peek().map(|(k, _)| k.0)
        };
        if first? <= max.saturating_sub(self.window) {
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
