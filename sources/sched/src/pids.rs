//! Values by task id, found by index instead of by hash: reading a
//! kernel trace looks up a task or two per line, and its converter a
//! task's row and name two to four times per event.
//!
//! The kernel hands out ids below 2^22 (`pid_max`'s ceiling), from the
//! bottom and in a row. Ids are grouped in pages of 256, each page a
//! table of indexes into the values, made when an id of it is first
//! stored. A page is 1 KiB; after 1024 pages (a trace whose tasks are
//! spread over the whole range), ids of further pages go to a hash map,
//! as do ids out of the range (a tool's -1, a damaged line's). Values are
//! kept in the order their ids were first stored.

use foldhash::HashMap;

const PAGE_BITS: u32 = 8;
const PAGE: usize = 1 << PAGE_BITS;
/// Ids from here on go to the hash map.
const LIMIT: i32 = 1 << 22;
/// Pages made at most: 1 MiB of them.
const MAX_PAGES: usize = 1024;

/// Values of type `V` by task id.
#[derive(Debug, Clone)]
pub struct Pids<V> {
    /// Per page: one more than each id's index in `values`, 0 for none.
    pages: Vec<Option<Box<[u32; PAGE]>>>,
    values: Vec<(i32, V)>,
    /// Pages made so far, and at most.
    made: (usize, usize),
    /// The index of each id without a page.
    other: HashMap<i32, usize>,
}

impl<V> Default for Pids<V> {
    fn default() -> Self {
        Pids {
            pages: Vec::new(),
            values: Vec::new(),
            made: (0, MAX_PAGES),
            other: HashMap::default(),
        }
    }
}

impl<V> Pids<V> {
    /// An empty table.
    pub fn new() -> Self {
        Pids::default()
    }

    /// The table's page of `pid`, if it has one.
    #[inline]
    fn page(&self, pid: i32) -> Option<&[u32; PAGE]> {
        if !(0..LIMIT).contains(&pid) {
            return None;
        }
        self.pages.get(pid as usize >> PAGE_BITS)?.as_deref()
    }

    /// The index of `pid`'s value.
    #[inline]
    fn index(&self, pid: i32) -> Option<usize> {
        match self.page(pid) {
            Some(page) => {
                let slot = *page.get(pid as usize & (PAGE - 1))?;
                (slot as usize).checked_sub(1)
            }
            // (An id whose page was made later never went here: once
            // pages are refused, no more are made.)
            None if self.other.is_empty() => None,
            None => self.other.get(&pid).copied(),
        }
    }

    /// `pid`'s value.
    #[inline]
    pub fn get(&self, pid: i32) -> Option<&V> {
        self.values.get(self.index(pid)?).map(|(_, v)| v)
    }

    /// `pid`'s value, to change.
    #[inline]
    pub fn get_mut(&mut self, pid: i32) -> Option<&mut V> {
        let i = self.index(pid)?;
        self.values.get_mut(i).map(|(_, v)| v)
    }

    /// `pid`'s value, made with `make` if it has none.
    #[inline]
    // The index was just found in the table, or `add` just pushed it.
    #[allow(clippy::indexing_slicing)]
    pub fn get_or_insert_with(&mut self, pid: i32, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.index(pid) {
            Some(i) => i,
            None => self.add(pid, make()),
        };
        &mut self.values[i].1
    }

    /// Stores `value` as `pid`'s, in place of the one it had.
    pub fn insert(&mut self, pid: i32, value: V) {
        match self.get_mut(pid) {
            Some(v) => *v = value,
            None => {
                self.add(pid, value);
            }
        }
    }

    /// Adds `pid`, which has no value yet; its index. (Once a task: out
    /// of line, so that a lookup inlines.)
    #[cold]
    #[inline(never)]
    fn add(&mut self, pid: i32, value: V) -> usize {
        let i = self.values.len();
        self.values.push((pid, value));
        // One more than the index, so that 0 can mean none (a trace holds
        // far fewer than 2^32 tasks: each is a line at least).
        let slot = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let p = pid as usize >> PAGE_BITS;
        let has_page = self.page(pid).is_some();
        if (0..LIMIT).contains(&pid) && (has_page || self.made.0 < self.made.1) {
            if self.pages.len() <= p {
                self.pages.resize_with(p + 1, || None);
            }
            if let Some(page) = self.pages.get_mut(p) {
                let page = page.get_or_insert_with(|| Box::new([0; PAGE]));
                if let Some(s) = page.get_mut(pid as usize & (PAGE - 1)) {
                    *s = slot;
                }
            }
            if !has_page {
                self.made.0 += 1;
            }
        } else {
            self.other.insert(pid, i);
        }
        i
    }

    /// Whether no id has a value.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// How many ids have a value.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Every id and its value, in the order the ids were first stored.
    pub fn iter(&self) -> impl Iterator<Item = (i32, &V)> {
        self.values.iter().map(|(p, v)| (*p, v))
    }
}

impl<V> IntoIterator for Pids<V> {
    type Item = (i32, V);
    type IntoIter = std::vec::IntoIter<(i32, V)>;

    /// Every id and its value, in the order the ids were first stored.
    fn into_iter(self) -> Self::IntoIter {
        self.values.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::{Pids, LIMIT};
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn agree(p: &Pids<u32>, h: &HashMap<i32, u32>, ids: &[i32]) {
        for &id in ids {
            assert_eq!(p.get(id), h.get(&id), "id {id}");
        }
        assert_eq!(p.len(), h.len());
        let mut all: Vec<_> = p.iter().map(|(k, v)| (k, *v)).collect();
        all.sort();
        let mut want: Vec<_> = h.iter().map(|(k, v)| (*k, *v)).collect();
        want.sort();
        assert_eq!(all, want);
    }

    #[test]
    fn pages_past_the_limit_go_to_the_map() {
        let (mut p, mut h) = (Pids::new(), HashMap::new());
        p.made.1 = 2;
        let ids = [5, 300, 1000, 6, 301, 1001, 2000, -3];
        for (n, &id) in ids.iter().enumerate() {
            p.insert(id, n as u32);
            h.insert(id, n as u32);
            agree(&p, &h, &ids);
        }
        assert_eq!(p.made.0, 2);
        assert_eq!(p.other.len(), 4, "{:?}", p.other);
    }

    #[test]
    fn ids_at_the_edges() {
        let ids = [
            0,
            1,
            255,
            256,
            32768,
            LIMIT - 1,
            LIMIT,
            -1,
            i32::MIN,
            i32::MAX,
        ];
        let (mut p, mut h) = (Pids::new(), HashMap::new());
        for (n, &id) in ids.iter().enumerate() {
            p.insert(id, n as u32);
            h.insert(id, n as u32);
            agree(&p, &h, &ids);
        }
        *p.get_or_insert_with(255, || 7) += 100;
        *h.entry(255).or_insert(7) += 100;
        *p.get_or_insert_with(254, || 7) += 100;
        *h.entry(254).or_insert(7) += 100;
        agree(&p, &h, &[253, 254, 255, 256]);
        let order: Vec<i32> = p.into_iter().map(|(k, _)| k).collect();
        assert_eq!(&order[..ids.len()], &ids[..], "first-stored order");
    }

    proptest! {
        #[test]
        fn agrees_with_a_hash_map(ops in proptest::collection::vec(
            (prop_oneof![0..2000i32, (LIMIT - 300)..(LIMIT + 300), any::<i32>()], any::<u32>(), any::<bool>()),
            0..200,
        ), max_pages in 0..6usize) {
            let (mut p, mut h) = (Pids::new(), HashMap::new());
            p.made.1 = max_pages;
            let ids: Vec<i32> = ops.iter().map(|o| o.0).collect();
            for (id, v, overwrite) in ops {
                if overwrite {
                    p.insert(id, v);
                    h.insert(id, v);
                } else {
                    *p.get_or_insert_with(id, || v) ^= 1;
                    *h.entry(id).or_insert(v) ^= 1;
                }
            }
            agree(&p, &h, &ids);
        }
    }
}
