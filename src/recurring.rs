//! A map for keys that come back in the same order again and again: a
//! Ganglia recording's metrics, host after host; a PCP archive's values,
//! record after record. The key after the last one found is compared
//! first (or the caller's guess: an MPE log's channels, each rank's
//! last one) and the hash map is used only on a miss, so a lookup is one
//! comparison where it was a hash (a tenth of those runs' converting).

use std::borrow::Borrow;
use std::hash::Hash;

/// Entries in the order first seen, each found by its key.
pub struct Recurring<K, V> {
    entries: Vec<(K, V)>,
    index: foldhash::HashMap<K, usize>,
    /// Where the next key probably is.
    next: usize,
}

impl<K, V> Default for Recurring<K, V> {
    fn default() -> Self {
        Recurring {
            entries: Vec::new(),
            index: Default::default(),
            next: 0,
        }
    }
}

impl<K: Hash + Eq + Clone, V> Recurring<K, V> {
    /// Where `key`'s entry is, if it has one.
    #[inline]
    pub fn find<Q>(&mut self, key: &Q) -> Option<usize>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        // After the last entry the round starts again from the first.
        let guess = if self.next < self.entries.len() {
            self.next
        } else {
            0
        };
        self.find_from(key, guess)
    }

    /// [`find`](Self::find) with the caller's guess of where `key` is
    /// (an MPE rank's last channel of a side), any index.
    #[inline]
    pub fn find_from<Q>(&mut self, key: &Q, guess: usize) -> Option<usize>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let i = match self.entries.get(guess) {
            Some((k, _)) if k.borrow() == key => guess,
            _ => *self.index.get(key)?,
        };
        self.next = i + 1;
        Some(i)
    }

    /// Adds an entry for a key [`find`](Self::find) did not find: where
    /// it is.
    pub fn push(&mut self, key: K, value: V) -> usize {
        let i = self.entries.len();
        self.index.insert(key.clone(), i);
        self.entries.push((key, value));
        self.next = i + 1;
        i
    }

    /// The value of entry `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&V> {
        self.entries.get(i).map(|(_, v)| v)
    }

    /// The value of entry `i`, to change.
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut V> {
        self.entries.get_mut(i).map(|(_, v)| v)
    }

    /// Every key, in the order first seen.
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.entries.iter().map(|(k, _)| k)
    }

    /// Every value, in the order first seen.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().map(|(_, v)| v)
    }

    /// Every value, to change.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.entries.iter_mut().map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by guess or by hash, in order, out of order and round again,
    /// an entry is its own.
    #[test]
    fn found_in_any_order() {
        let mut v = Recurring::default();
        let key = |i: i32| (7u32, i);
        for i in 0..3 {
            assert_eq!(v.find(&key(i)), None);
            v.push(key(i), i);
        }
        for i in [0, 1, 2, 0, 2, 1, 1, 0] {
            assert_eq!(v.find(&key(i)), Some(i as usize));
            assert_eq!(v.get(i as usize), Some(&i));
        }
        assert_eq!(v.find(&key(3)), None);
        // A guess anywhere, right, wrong or past the end.
        for guess in [0, 2, 1, 99] {
            for i in 0..3 {
                assert_eq!(v.find_from(&key(i), guess), Some(i as usize));
            }
            assert_eq!(v.find_from(&key(3), guess), None);
        }
        assert_eq!(
            v.keys().copied().collect::<Vec<_>>(),
            [key(0), key(1), key(2)]
        );
        // Owned keys are looked up by what they borrow.
        let mut names: Recurring<Box<str>, u8> = Recurring::default();
        names.push("cpu_user".into(), 1);
        names.push("cpu_idle".into(), 2);
        assert_eq!(names.find("cpu_user"), Some(0));
        assert_eq!(names.find("mem_free"), None);
    }
}
