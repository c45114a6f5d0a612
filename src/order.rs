//! Ordering, written once: a min-queue whose items are ordered by a key
//! given apart from them (the k-way merge of sources, the files of a
//! libRastro run, a kernel trace's staged changes, a timeline's lanes),
//! and the nearly sorted buffer behind a source's reorder window.
//! Every key ends with a sequence number or an index, so ties keep a
//! documented order and the output is deterministic.

use std::cmp::Ordering;
use std::collections::binary_heap::{BinaryHeap, PeekMut};
use std::collections::VecDeque;

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
    #[inline]
    pub fn push(&mut self, key: K, item: T) {
        self.heap.push(Entry { key, item });
    }

    /// The smallest key and its item.
    #[inline]
    pub fn peek(&self) -> Option<(&K, &T)> {
        self.heap.peek().map(|e| (&e.key, &e.item))
    }

    /// Takes out the smallest key and its item.
    #[inline]
    pub fn pop(&mut self) -> Option<(K, T)> {
        self.heap.pop().map(|e| (e.key, e.item))
    }

    /// Takes out the smallest and puts `next` in its place in one sift
    /// (a merge replaces each head by its source's next event).
    #[inline]
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

/// Items pushed nearly in key order, taken out in key order: those that
/// arrive in order (the common case) go to a deque, already sorted; only
/// those that step back go through a [`MinQueue`]. The [`Timeline`]'s
/// reorder window bounds how far back they step.
///
/// [`Timeline`]: crate::timeline::Timeline
pub struct Sorted<K, T> {
    in_order: VecDeque<(K, T)>,
    heap: MinQueue<K, T>,
}

impl<K: Ord + Copy, T> Default for Sorted<K, T> {
    fn default() -> Self {
        Sorted {
            in_order: VecDeque::new(),
            heap: MinQueue::default(),
        }
    }
}

impl<K: Ord + Copy, T> Sorted<K, T> {
    /// Adds `item` under `key`; keys must be distinct (end them with a
    /// sequence number).
    pub fn push(&mut self, key: K, item: T) {
        match self.in_order.back() {
            Some((last, _)) if key < *last => self.heap.push(key, item),
            _ => {
                self.in_order.push_back((key, item));
                // The slots ahead were last written a whole ring ago (the
                // reorder window: megabytes): asked for now, they are in
                // the cache when written, instead of a store that misses
                // and holds up the stores behind it.
                if let Some(back) = self.in_order.back() {
                    crate::prefetch::warm_ahead(back, 4);
                }
            }
        }
    }

    /// Whether nothing is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.in_order.is_empty() && self.heap.is_empty()
    }

    /// The smallest key.
    // Inlined where it is called per event (a timeline's take and run).
    #[inline(always)]
    pub fn first(&self) -> Option<K> {
        match (self.in_order.front(), self.heap.peek()) {
            (None, None) => None,
            (Some((a, _)), None) => Some(*a),
            (None, Some((b, _))) => Some(*b),
            (Some((a, _)), Some((b, _))) => Some(if a < b { *a } else { *b }),
        }
    }

    /// Takes out the smallest key and its item.
    // Inlined where it is called per event (a timeline's take and run).
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(K, T)> {
        let deque_first = match (self.in_order.front(), self.heap.peek()) {
            (None, None) => return None,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((a, _)), Some((b, _))) => a < b,
        };
        if deque_first {
            let first = self.in_order.pop_front();
            // A timeline's queues hold the reorder window (megabytes,
            // beyond the caches) and are taken out in turn: the entry after
            // the next is asked for now, so it is in the cache when its
            // turn comes instead of a miss on every entry.
            if let Some(ahead) = self.in_order.get(1) {
                crate::prefetch::warm(ahead);
            }
            first
        } else {
            self.heap.pop()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn sorted_gives_the_sort(keys in proptest::collection::vec(0i64..50, 0..80)) {
            let mut s = Sorted::default();
            for (i, &k) in keys.iter().enumerate() {
                s.push((k, i), ());
            }
            let mut out = Vec::new();
            while let Some((k, ())) = s.pop() {
                out.push(k);
            }
            let mut expected: Vec<(i64, usize)> = keys.iter().copied().zip(0..).collect();
            expected.sort();
            proptest::prop_assert_eq!(out, expected);
        }
    }
}
