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
        // byte string, its slow path (4% of an akypuera run, four lookups
        // per message end).
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
    /// Links in flight by (channel, sequence) ([`Chans`]): balance
    /// (+ starts − ends) and the first end's file. Also the value id of
    /// the first end (see `value_ids` in `run`).
    pub(super) open: HashMap<(u32, u64), (i64, usize, u32)>,
    /// The end's file of links whose start does not name it.
    pub(super) partner: HashMap<(u32, u64), usize>,
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
        let mut unplaceable: HashSet<(u32, u64)> = HashSet::new();
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
                    let (open, partner, chans) = (&mut s.open, &mut s.partner, &mut s.chans);
                    let level = map.links.get(end.link).map_or(Level::Rank, |l| l.level);
                    let unplaceable = &mut unplaceable;
                    instances(end, rec, id1, id2, |k, peer| {
                        let Some(k) = k else { return };
                        let k = chans.resolve(k, end.fifo, start);
                        if let Some(e) = end.partner {
                            let placed = e.eval(rec, id1, id2, peer).is_some_and(|p| match level {
                                Level::Rank => ranks.contains(&p),
                                Level::Thread => threads.contains(&(id1, p)),
                            });
                            if !placed {
                                unplaceable.insert(k);
                            }
                        }
                        let step = if start { 1 } else { -1 };
                        // One lookup: the entry is removed through itself.
                        let mut o = match open.entry(k) {
                            Entry::Vacant(v) => {
                                v.insert((step, i, value));
                                return;
                            }
                            Entry::Occupied(o) => o,
                        };
                        let e = o.get_mut();
                        if e.2 != value {
                            unplaceable.insert(k);
                        }
                        e.0 += step;
                        if e.0 == 0 {
                            // Both ends seen; the end's file is this one
                            // or the one that came first.
                            let end_file = if start { e.1 } else { i };
                            o.remove();
                            if needs_partner.get(end.link) == Some(&true) {
                                partner.insert(k, end_file);
                            }
                        }
                    });
                }
            }
        }
        // What is still open never found its other end.
        for (chan, seq) in s.open.drain().map(|(k, _)| k).chain(unplaceable) {
            s.chans.mark_bad(chan, seq);
        }
        s.chans.restart();
        Ok((s, records.in_order()))
    }
}
