//! Link channels: a link key is a channel (the link and all its key
//! values but the last) and a sequence number (the last value, or the
//! FIFO counter). What pass 2 asks of each link end (its FIFO counter,
//! whether pass 1 found it unmatched, the registry's channel) is kept per
//! channel and found with one lookup (pass 1 finds a FIFO end's counter
//! the same way); the links in flight are keyed by
//! (channel index, sequence), a few bytes to hash instead of a whole key
//! (a message end hashed its 40-byte key five times).

use super::scan::Key;
use foldhash::{HashMap, HashSet};

/// One channel.
#[derive(Default)]
struct Chan {
    /// Its key, with 0 where the sequence number goes.
    key: Key,
    /// FIFO counters of its starts and its ends.
    fifo: [u64; 2],
    /// The registry's channel, once a link of it is drawn.
    reg: Option<u32>,
    /// The sequence numbers pass 1 found unmatched or unplaceable.
    bad: HashSet<u64>,
}

/// The channels of a run, by index.
#[derive(Default)]
pub(super) struct Chans {
    index: HashMap<Key, u32>,
    chans: Vec<Chan>,
    /// The channel last found for each slot (a file's starts or ends,
    /// [`Chans::resolve_at`]): a rank's messages of one side mostly go
    /// to the peer of the message before, and a 40-byte key compared is
    /// a fraction of one hashed and looked up.
    memo: Vec<Option<(Key, u32)>>,
}

impl Chans {
    /// Marks a link pass 1 found unmatched or unplaceable.
    pub(super) fn mark_bad(&mut self, chan: u32, seq: u64) {
        if let Some(c) = self.chans.get_mut(chan as usize) {
            c.bad.insert(seq);
        }
    }

    /// Counts FIFO ends from 0 again, for pass 2.
    pub(super) fn restart(&mut self) {
        for c in &mut self.chans {
            c.fifo = [0; 2];
        }
    }

    /// The channel key and sequence of a whole key. The channel keeps the
    /// whole key's length, so that two keys are equal exactly when their
    /// channels and sequences are.
    fn split(k: &Key) -> (Key, u64) {
        let (mut ch, seq) = k.split();
        ch.len = k.len;
        (ch, seq)
    }

    #[inline]
    fn of(&mut self, ch: Key) -> u32 {
        // Found, nearly always: a lookup, not an entry (twice the cost).
        if let Some(&i) = self.index.get(&ch) {
            return i;
        }
        self.chans.push(Chan {
            key: ch,
            ..Chan::default()
        });
        let i = (self.chans.len() - 1) as u32;
        self.index.insert(ch, i);
        i
    }

    /// [`Chans::of`] through the memo of `slot` (`None`: none).
    #[inline]
    fn of_at(&mut self, ch: Key, slot: Option<usize>) -> u32 {
        let Some(slot) = slot else {
            return self.of(ch);
        };
        if let Some(Some((k, i))) = self.memo.get(slot) {
            if *k == ch {
                return *i;
            }
        }
        let i = self.of(ch);
        if self.memo.len() <= slot {
            self.memo.resize(slot + 1, None);
        }
        if let Some(m) = self.memo.get_mut(slot) {
            *m = Some((ch, i));
        }
        i
    }

    /// The channel and sequence of the end (`start` or not) of an
    /// instance of a link end whose key is `k`: with `fifo`, `k` is
    /// without its FIFO counter, which is counted here; without, `k` is
    /// a whole key (a FIFO one too: its counter is its last value).
    pub(super) fn resolve(&mut self, k: Key, fifo: bool, start: bool) -> (u32, u64) {
        self.resolve_at(k, fifo, start, None)
    }

    /// [`Chans::resolve`], the channel looked for first where `slot`
    /// found the last one (slots are the caller's: one per file and
    /// side).
    pub(super) fn resolve_at(
        &mut self,
        k: Key,
        fifo: bool,
        start: bool,
        slot: Option<usize>,
    ) -> (u32, u64) {
        if !fifo {
            let (ch, seq) = Chans::split(&k);
            return (self.of_at(ch, slot), seq);
        }
        // The counter goes in the value after the key's (at most 3: the
        // map says so), where the key holds a 0.
        let mut ch = k;
        ch.len += 1;
        let i = self.of_at(ch, slot);
        let seq = match self.chans.get_mut(i as usize) {
            Some(c) => {
                let n = &mut c.fifo[usize::from(!start)];
                *n += 1;
                *n - 1
            }
            None => 0,
        };
        (i, seq)
    }

    /// Whether pass 1 found this link unmatched.
    #[inline]
    pub(super) fn is_bad(&self, chan: u32, seq: u64) -> bool {
        self.chans
            .get(chan as usize)
            .is_some_and(|c| !c.bad.is_empty() && c.bad.contains(&seq))
    }

    /// The whole key.
    pub(super) fn key(&self, chan: u32, seq: u64) -> Key {
        let mut k = self
            .chans
            .get(chan as usize)
            .map(|c| c.key)
            .unwrap_or_default();
        let last = usize::from(k.len).checked_sub(1);
        if let Some(x) = last.and_then(|i| k.v.get_mut(i)) {
            *x = seq;
        }
        k
    }

    /// The registry's channel, once known.
    pub(super) fn reg(&self, chan: u32) -> Option<u32> {
        self.chans.get(chan as usize).and_then(|c| c.reg)
    }

    pub(super) fn set_reg(&mut self, chan: u32, reg: u32) {
        if let Some(c) = self.chans.get_mut(chan as usize) {
            c.reg = Some(reg);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(link: u16, v: &[u64]) -> Key {
        let mut k = Key {
            link,
            len: v.len() as u8,
            v: [0; 4],
        };
        k.v[..v.len()].copy_from_slice(v);
        k
    }

    proptest::proptest! {
        /// Two whole keys are equal exactly when their (channel, sequence)
        /// are, and the whole key comes back from them.
        #[test]
        fn a_key_is_its_channel_and_sequence(
            a in (0u16..2, proptest::collection::vec(0u64..3, 1..5)),
            b in (0u16..2, proptest::collection::vec(0u64..3, 1..5)),
        ) {
            let (ka, kb) = (key(a.0, &a.1), key(b.0, &b.1));
            let mut c = Chans::default();
            let ra = c.resolve(ka, false, true);
            let rb = c.resolve(kb, false, false);
            proptest::prop_assert_eq!(ka == kb, ra == rb);
            proptest::prop_assert_eq!(c.key(ra.0, ra.1), ka);
            proptest::prop_assert_eq!(c.key(rb.0, rb.1), kb);
        }

        /// A FIFO end's whole key is its key and its count of the ends of
        /// its side with that key before it, from 0 again after `restart`.
        #[test]
        fn fifo_counts_per_key_and_side(
            ends in proptest::collection::vec((0u64..3, proptest::bool::ANY), 0..40),
            restart_at in 0usize..40,
        ) {
            let mut c = Chans::default();
            let mut seen: HashMap<(u64, bool), u64> = HashMap::default();
            for (i, (v, start)) in ends.into_iter().enumerate() {
                if i == restart_at {
                    c.restart();
                    seen.clear();
                }
                let (ch, seq) = c.resolve(key(0, &[v]), true, start);
                let n = seen.entry((v, start)).or_default();
                proptest::prop_assert_eq!(c.key(ch, seq), key(0, &[v, *n]));
                *n += 1;
            }
        }
    }

    proptest::proptest! {
        /// Through the memo, whatever the slots, every end resolves as
        /// without it.
        #[test]
        fn the_memo_changes_nothing(
            ends in proptest::collection::vec(
                (0u16..2, proptest::collection::vec(0u64..3, 1..4), proptest::bool::ANY,
                 proptest::bool::ANY, 0usize..4),
                0..60),
        ) {
            let (mut plain, mut memo) = (Chans::default(), Chans::default());
            for (link, v, fifo, start, slot) in ends {
                let k = key(link, &v);
                proptest::prop_assert_eq!(
                    plain.resolve(k, fifo, start),
                    memo.resolve_at(k, fifo, start, Some(slot))
                );
            }
        }
    }

    #[test]
    fn marked_links_are_bad_and_no_other() {
        let mut c = Chans::default();
        let (ch, seq) = c.resolve(key(1, &[4, 5]), false, true);
        c.mark_bad(ch, seq);
        assert!(c.is_bad(ch, seq));
        let (ch, seq) = c.resolve(key(1, &[4, 6]), false, true);
        assert!(!c.is_bad(ch, seq));
        // A FIFO key: its counter is the sequence.
        let first = c.resolve(key(2, &[7]), true, true);
        let second = c.resolve(key(2, &[7]), true, true);
        c.mark_bad(second.0, second.1);
        c.restart();
        assert_eq!(c.resolve(key(2, &[7]), true, true), first);
        assert!(!c.is_bad(first.0, first.1));
        assert!(c.is_bad(second.0, second.1));
    }
}
