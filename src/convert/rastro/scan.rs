//! Pass 1 over a libRastro run: pids, thread ids and the link keys that
//! pass 2 will be able to place, so every drawn link has both ends.

use super::chans::Chans;
use super::walk::{FileInfo, Records};
use super::*;
use std::collections::hash_map::Entry;

/// A link instance: the link, its key values, and the FIFO counter last
/// when the map asks for one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Key {
    pub(super) link: u16,
    pub(super) len: u8,
    pub(super) v: [u64; 4],
}

impl std::hash::Hash for Key {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        // Word by word: derived, the values went to the hasher as one
        // byte string, its slow path (4% of an akypuera run when a
        // message end looked its key up four times).
        h.write_u64((u64::from(self.link) << 8) | u64::from(self.len));
        for v in self.v {
            h.write_u64(v);
        }
    }
}

impl Key {
    /// The channel part (all but the last value) and the sequence number.
    pub(super) fn split(&self) -> (Key, u64) {
        let n = usize::from(self.len);
        let mut c = *self;
        let seq = n
            .checked_sub(1)
            .and_then(|i| self.v.get(i).copied())
            .unwrap_or(0);
        c.len = self.len.saturating_sub(1);
        if let Some(x) = n.checked_sub(1).and_then(|i| c.v.get_mut(i)) {
            *x = 0;
        }
        (c, seq)
    }
}

/// Calls `f(key, peer)` for every instance of `end` at `rec` (one per
/// peer with `each`), its key without a FIFO counter; `None` for the
/// instances whose fields are missing.
pub(super) fn instances(
    end: &LinkEnd,
    rec: &Slim,
    id1: u64,
    id2: u64,
    mut f: impl FnMut(Option<Key>, u64),
) {
    // Peers 0..n but the file's own rank with `each`; one pass without.
    let (n, skip) = match end.each {
        None => (1, None),
        Some(e) => match e.eval(rec, id1, id2, 0) {
            // A communicator larger than this bound is corruption.
            Some(n) if n <= 1 << 20 => (n, Some(id1)),
            _ => {
                f(None, 0);
                return;
            }
        },
    };
    for peer in (0..n).filter(|&p| Some(p) != skip) {
        let mut k = Key {
            link: end.link as u16,
            len: 0,
            v: [0; 4],
        };
        let mut ok = true;
        for (slot, e) in k.v.iter_mut().zip(&end.key) {
            match e.eval(rec, id1, id2, peer) {
                Some(x) => *slot = x,
                None => ok = false,
            }
        }
        k.len = end.key.len() as u8;
        f(ok.then_some(k), peer);
    }
}

/// What pass 1 learns.
#[derive(Default)]
pub(super) struct Scan {
    /// OS pid per rank.
    pub(super) pid: BTreeMap<u64, u32>,
    /// OS tid per file.
    pub(super) tid: HashMap<usize, u32>,
    /// The link channels, pass 2's from the start: the keys that never
    /// found their other end, or cannot be placed, are marked there.
    pub(super) chans: Chans,
    /// The end's file of links whose start does not name it.
    pub(super) partner: HashMap<(u32, u64), usize>,
}

/// Pass 1's links in flight and the links it cannot place, by a key of
/// type `K`: a whole key for links without a FIFO counter (one lookup:
/// a link's channel is looked up only if it stays unmatched), (channel,
/// sequence) for the others, whose counter is found with their channel.
struct Balance<K> {
    /// Balance (+ starts − ends), the first end's file and the value id
    /// of the first end ([`Defs::values`]).
    open: HashMap<K, (i64, usize, u32)>,
    unplaceable: HashSet<K>,
}

impl<K: std::hash::Hash + Eq + Copy> Balance<K> {
    fn new() -> Balance<K> {
        Balance {
            open: HashMap::new(),
            unplaceable: HashSet::new(),
        }
    }

    /// An end of `k` (`start` or not) in `file`, its value `value`; the
    /// end's file when this end is the one that closes the link.
    fn meet(&mut self, k: K, start: bool, file: usize, value: u32) -> Option<usize> {
        let step = if start { 1 } else { -1 };
        // One lookup: the entry is removed through itself.
        let mut o = match self.open.entry(k) {
            Entry::Vacant(v) => {
                v.insert((step, file, value));
                return None;
            }
            Entry::Occupied(o) => o,
        };
        let e = o.get_mut();
        if e.2 != value {
            self.unplaceable.insert(k);
        }
        e.0 += step;
        if e.0 != 0 {
            return None;
        }
        // Both ends seen; the end's file is this one or the one that
        // came first.
        let end_file = if start { e.1 } else { file };
        o.remove();
        Some(end_file)
    }

    /// What never found its other end, and what cannot be placed.
    fn bad(self) -> impl Iterator<Item = K> {
        self.open.into_keys().chain(self.unplaceable)
    }
}

impl Scan {
    pub(super) fn run(
        files: &[FileInfo],
        mut records: Records,
        map: &EventMap,
    ) -> Result<(Scan, bool)> {
        let mut s = Scan::default();
        // Links some of whose starts do not name their end.
        let mut needs_partner = vec![false; map.links.len()];
        for def in map.events.values() {
            if let Some(e) = def.link_start.as_ref().filter(|e| e.partner.is_none()) {
                if let Some(x) = needs_partner.get_mut(e.link) {
                    *x = true;
                }
            }
        }
        // Which ends pass 2 can place: a link is drawn only if both can,
        // and only if both halves carry the same value (pj_dump rejects a
        // link whose halves differ). A damaged record may name a rank or
        // thread that no file is, or be read as another event of the map.
        let ranks: HashSet<u64> = files.iter().map(|f| f.id1).collect();
        let threads: HashSet<(u64, u64)> = files.iter().map(|f| (f.id1, f.id2)).collect();
        let mut by_key = Balance::<Key>::new();
        let mut by_chan = Balance::<(u32, u64)>::new();
        // The map's events by type id, and the values of each one's link
        // ends by a small id, kept in the `open` entry of a key (found by
        // index: hashing the type and the value's text were two of the
        // five hash lookups of each link end).
        let defs = Defs::new(map);
        while let Some(item) = records.next()? {
            let i = item.file;
            let Some(f) = files.get(i).filter(|_| item.has_rec) else {
                continue;
            };
            if let Some((d, def)) = defs.find(item.rec.ty) {
                let (rec, id1, id2) = (&item.rec, f.id1, f.id2);
                if let Some(p) = def.process.and_then(|e| e.eval(rec, id1, id2, 0)) {
                    s.pid.entry(id1).or_insert(p as u32);
                }
                if let Some(t) = def.thread.and_then(|e| e.eval(rec, id1, id2, 0)) {
                    s.tid.entry(i).or_insert(t as u32);
                }
                let ends = [(&def.link_start, true), (&def.link_end, false)];
                let [start_value, end_value, _] = defs.values(d);
                let ids = [start_value, end_value];
                for ((end, start), value) in ends.into_iter().zip(ids) {
                    let Some(end) = end else { continue };
                    let (partner, chans) = (&mut s.partner, &mut s.chans);
                    let level = map.links.get(end.link).map_or(Level::Rank, |l| l.level);
                    let (by_key, by_chan) = (&mut by_key, &mut by_chan);
                    instances(end, rec, id1, id2, |k, peer| {
                        let Some(k) = k else { return };
                        let placed = end.partner.is_none_or(|e| {
                            e.eval(rec, id1, id2, peer).is_some_and(|p| match level {
                                Level::Rank => ranks.contains(&p),
                                Level::Thread => threads.contains(&(id1, p)),
                            })
                        });
                        let (chan, end_file) = if end.fifo {
                            let c = chans.resolve(k, true, start);
                            if !placed {
                                by_chan.unplaceable.insert(c);
                            }
                            (Some(c), by_chan.meet(c, start, i, value))
                        } else {
                            if !placed {
                                by_key.unplaceable.insert(k);
                            }
                            (None, by_key.meet(k, start, i, value))
                        };
                        if let Some(f) =
                            end_file.filter(|_| needs_partner.get(end.link) == Some(&true))
                        {
                            let c = chan.unwrap_or_else(|| chans.resolve(k, false, start));
                            partner.insert(c, f);
                        }
                    });
                }
            }
        }
        for k in by_key.bad() {
            let (chan, seq) = s.chans.resolve(k, false, true);
            s.chans.mark_bad(chan, seq);
        }
        for (chan, seq) in by_chan.bad() {
            s.chans.mark_bad(chan, seq);
        }
        s.chans.restart();
        Ok((s, records.in_order()))
    }
}
