//! The lookups every record of an MPE log makes, by index where the keys
//! are small (a hash lookup per record was a tenth of converting), and
//! the channels a message end finds through its rank's last one.

use crate::model::{ContainerId, TypeId, ValueId};
use crate::recurring::Recurring;
use crate::source::Lane;
use foldhash::HashMap;
use std::collections::VecDeque;

/// Ranks and event types below this are looked up by index.
pub(super) const DENSE: usize = 1 << 12;

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

/// A (sender, receiver, tag) channel.
pub(super) struct Chan {
    pub(super) id: u32,
    pub(super) matched: u64,
    pub(super) sends: u64,
    pub(super) recvs: u64,
    pub(super) send_times: VecDeque<i64>,
    pub(super) recv_times: VecDeque<i64>,
    /// Its link and its two ranks' places, when both ranks are placed
    /// (made before the conversion: a message end looks up nothing else).
    pub(super) ends: Option<Ends>,
}

/// What a message end draws: its channel's link and both ranks' places.
#[derive(Clone, Copy)]
pub(super) struct Ends {
    pub(super) link: (ContainerId, TypeId, ValueId),
    pub(super) from: ContainerId,
    pub(super) to: ContainerId,
    /// The sender's and the receiver's host indices.
    pub(super) hosts: (u32, u32),
    /// The sender's and the receiver's lanes.
    pub(super) lanes: (Lane, Lane),
}

/// A channel: (sender, receiver, tag) in world ranks.
pub(super) type ChanKey = (i32, i32, i32);

/// The channels by (sender, receiver, tag), each rank's last one of each
/// side tried first: a rank's messages mostly go where its message
/// before went, and three integers compared are a fraction of a hash
/// lookup.
pub(super) struct Chans {
    pub(super) all: Recurring<ChanKey, Chan>,
    /// The last channel's entry by 2 x world rank + 1 for a send, for
    /// ranks below [`DENSE`].
    memo: Vec<u32>,
}

impl Chans {
    pub(super) fn new(chans: Vec<(ChanKey, Chan)>) -> Chans {
        let mut all = Recurring::default();
        for (k, chan) in chans {
            all.push(k, chan);
        }
        Chans {
            all,
            memo: Vec::new(),
        }
    }

    /// The channel `key`, a message end of rank `me` (`send`: its start).
    #[inline]
    pub(super) fn find(&mut self, key: ChanKey, me: i32, send: bool) -> Option<&mut Chan> {
        let slot = usize::try_from(me)
            .ok()
            .filter(|&m| m < DENSE)
            .map(|m| 2 * m + usize::from(send));
        let guess = slot
            .and_then(|s| self.memo.get(s).copied())
            .unwrap_or(u32::MAX);
        let i = self.all.find_from(&key, guess as usize)?;
        if let Some(slot) = slot {
            if self.memo.len() <= slot {
                self.memo.resize(slot + 1, u32::MAX);
            }
            if let Some(m) = self.memo.get_mut(slot) {
                *m = i as u32;
            }
        }
        self.all.get_mut(i)
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

    fn chan(id: u32) -> Chan {
        Chan {
            id,
            matched: 0,
            sends: 0,
            recvs: 0,
            send_times: VecDeque::new(),
            recv_times: VecDeque::new(),
            ends: None,
        }
    }

    proptest::proptest! {
        /// Through a rank's last channel or not, a message end finds the
        /// channel of its key, or none, whatever ranks and sides ask.
        #[test]
        fn channels_found_through_the_memo_are_the_keys(
            keys in proptest::collection::btree_set((-1i32..3, 0i32..3, 0i32..2), 0..12),
            asked in proptest::collection::vec(((-1i32..3, 0i32..3, 0i32..2), -2i32..5000, proptest::bool::ANY), 0..60),
        ) {
            let keys: Vec<_> = keys.into_iter().collect();
            let mut chans = Chans::new(keys.iter().enumerate().map(|(i, &k)| (k, chan(i as u32))).collect());
            for (key, me, send) in asked {
                let expected = keys.iter().position(|&k| k == key).map(|i| i as u32);
                proptest::prop_assert_eq!(chans.find(key, me, send).map(|c| c.id), expected);
            }
        }
    }
}
