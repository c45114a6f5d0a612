//! The lookups every record of an MPE log makes, by index where the keys
//! are small: a hash lookup per record was a tenth of converting.

use foldhash::HashMap;

/// Ranks and event types below this are looked up by index.
const DENSE: usize = 1 << 12;

/// An (icomm, rank, MPE thread).
pub(super) type Key = (i32, i32, i32);

/// Values by (icomm, rank, MPE thread): one key of each rank by index
/// (its only one, nearly always: one communicator, no MPE threads), the
/// others hashed.
pub(super) struct ByRank<V> {
    map: HashMap<Key, V>,
    by_rank: Vec<Option<(Key, V)>>,
}

impl<V: Copy> ByRank<V> {
    pub(super) fn new(map: HashMap<Key, V>) -> ByRank<V> {
        let mut by_rank: Vec<Option<(Key, V)>> = vec![None; DENSE];
        for (&k, &v) in &map {
            let Some(slot) = usize::try_from(k.1).ok().and_then(|r| by_rank.get_mut(r)) else {
                continue;
            };
            // The smallest key of a rank, whatever the map's order.
            if slot.is_none_or(|(old, _)| k < old) {
                *slot = Some((k, v));
            }
        }
        ByRank { map, by_rank }
    }

    #[inline]
    pub(super) fn get(&self, k: Key) -> Option<V> {
        if let Some(Some((key, v))) = usize::try_from(k.1).ok().and_then(|r| self.by_rank.get(r)) {
            if *key == k {
                return Some(*v);
            }
        }
        self.map.get(&k).copied()
    }
}

/// Pass 1's (state, is start) of each event type: by index below
/// [`DENSE`], hashed otherwise.
pub(super) struct Etypes {
    map: HashMap<i32, (usize, bool)>,
    dense: Vec<Option<(usize, bool)>>,
}

impl Etypes {
    pub(super) fn new(map: HashMap<i32, (usize, bool)>) -> Etypes {
        let mut dense = vec![None; DENSE];
        for (&e, &v) in &map {
            if let Some(slot) = usize::try_from(e).ok().and_then(|i| dense.get_mut(i)) {
                *slot = Some(v);
            }
        }
        Etypes { map, dense }
    }

    #[inline]
    pub(super) fn get(&self, e: i32) -> Option<(usize, bool)> {
        match usize::try_from(e).ok().and_then(|i| self.dense.get(i)) {
            Some(v) => *v,
            None => self.map.get(&e).copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// By index or hashed, the lookups give what the maps say, for any
        /// keys: ranks with several communicators or MPE threads,
        /// negative and large ranks and event types, keys not in the map.
        #[test]
        fn dense_lookups_are_the_maps(
            keys in proptest::collection::vec((-2i32..3, -3i32..5000, -1i32..3), 0..40),
            etypes in proptest::collection::vec((-3i32..5000, 0usize..9, proptest::bool::ANY), 0..40),
            asked in proptest::collection::vec((-2i32..3, -3i32..5000, -1i32..3), 0..40),
        ) {
            let map: HashMap<(i32, i32, i32), usize> =
                keys.iter().enumerate().map(|(i, &k)| (k, i)).collect();
            let who = ByRank::new(map.clone());
            let states: HashMap<i32, (usize, bool)> =
                etypes.iter().map(|&(e, s, start)| (e, (s, start))).collect();
            let dense = Etypes::new(states.clone());
            for k in keys.iter().chain(&asked) {
                proptest::prop_assert_eq!(who.get(*k), map.get(k).copied());
                proptest::prop_assert_eq!(dense.get(k.1), states.get(&k.1).copied());
            }
            for &(e, _, _) in &etypes {
                proptest::prop_assert_eq!(dense.get(e), states.get(&e).copied());
            }
        }
    }
}
