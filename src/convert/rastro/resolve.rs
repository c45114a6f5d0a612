//! Pass 2's link ends resolved where the run is walked: a record's keys,
//! their channels and FIFO counters, and pass 1's verdict depend on the
//! records alone, in the merge's order, which is the converter's. On a
//! decoding thread of its own the walk has time to spare, and the
//! converting thread, the bound, receives each record with its ends
//! resolved (on it they were a fifth of a message end).

use super::chans::Chans;
use super::defs::Defs;
use super::scan::{self, Key};
use super::walk::{FileInfo, Item};
use crate::eventmap::{EventMap, LinkEnd};

/// A link end of a record as the record and the channels' counters say,
/// before the registry is asked anything. 24 bytes: it travels inside
/// the record's item.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Resolved {
    /// The peer of an `each` end (0 without).
    pub(super) peer: u64,
    seq: u64,
    chan: u32,
    pub(super) start: bool,
    /// Pass 1 found the link unmatched or unplaceable.
    pub(super) bad: bool,
    /// A field of its key is missing.
    missing: bool,
}

impl Resolved {
    /// Its (channel, sequence) ([`Chans`]); `None` when a field of its
    /// key is missing.
    pub(super) fn at(&self) -> Option<(u32, u64)> {
        (!self.missing).then_some((self.chan, self.seq))
    }
}

/// A record's resolved link ends, starts first. The first is held in
/// place: the item is read on the other core, where a buffer of its own
/// would be one more cache line to fetch from this one for every message
/// end (that cost more than the lookups it spared the converter). What
/// is rarer (more ends, for a map's `each`; channels pass 1 never made)
/// goes to a box that is kept for the next records.
#[derive(Debug, Clone, Default)]
pub(super) struct Ends {
    first: Resolved,
    n: usize,
    more: Option<Box<More>>,
    /// Whether `more` holds anything.
    spilled: bool,
}

#[derive(Debug, Clone, Default)]
struct More {
    /// The ends after the first.
    ends: Vec<Resolved>,
    /// Channels the walk made that pass 1 had not (their index and key),
    /// given with the first end that names them.
    new_chans: Vec<(u32, Key)>,
}

impl Ends {
    pub(super) fn clear(&mut self) {
        self.n = 0;
        if self.spilled {
            if let Some(m) = &mut self.more {
                m.ends.clear();
                m.new_chans.clear();
            }
            self.spilled = false;
        }
    }

    fn push(&mut self, r: Resolved) {
        if self.n == 0 {
            self.first = r;
        } else {
            self.spill().ends.push(r);
        }
        self.n += 1;
    }

    fn spill(&mut self) -> &mut More {
        self.spilled = true;
        self.more.get_or_insert_with(Box::default)
    }

    /// The ends, starts first.
    pub(super) fn iter(&self) -> impl Iterator<Item = &Resolved> {
        let more = match (&self.more, self.spilled) {
            (Some(m), true) => m.ends.as_slice(),
            _ => &[],
        };
        std::iter::once(&self.first).take(self.n.min(1)).chain(more)
    }

    /// Channels made in pass 2, to be learnt before the ends are read.
    pub(super) fn new_chans(&self) -> &[(u32, Key)] {
        match (&self.more, self.spilled) {
            (Some(m), true) => &m.new_chans,
            _ => &[],
        }
    }
}

/// Resolves the link ends of pass 2's records ([`Item::ends`]).
pub(super) struct Resolver {
    defs: Defs,
    chans: Chans,
    /// (rank, thread) of each file.
    ids: Vec<(u64, u64)>,
    /// Channels below this index are known to the converter.
    known: usize,
}

impl Resolver {
    /// `chans` as pass 1 left them (the converter knows their keys).
    pub(super) fn new(map: &EventMap, chans: Chans, files: &[FileInfo]) -> Resolver {
        Resolver {
            defs: Defs::new(map),
            known: chans.len(),
            chans,
            ids: files.iter().map(|f| (f.id1, f.id2)).collect(),
        }
    }

    /// Fills `item`'s ends (cleared) from its record, read from file `i`.
    #[inline]
    pub(super) fn resolve(&mut self, i: usize, item: &mut Item) {
        let Some((_, def)) = self.defs.find(item.rec.ty) else {
            return;
        };
        // Most records have no link end.
        if def.link_start.is_none() && def.link_end.is_none() {
            return;
        }
        let Some(&ids) = self.ids.get(i) else {
            return;
        };
        let mut side = Side {
            chans: &mut self.chans,
            known: &mut self.known,
            file: (i, ids.0, ids.1),
            item,
        };
        if let Some(end) = &def.link_start {
            side.ends(end, true);
        }
        if let Some(end) = &def.link_end {
            side.ends(end, false);
        }
    }
}

/// What resolving a record's ends changes.
struct Side<'a> {
    chans: &'a mut Chans,
    known: &'a mut usize,
    /// (index, rank, thread).
    file: (usize, u64, u64),
    item: &'a mut Item,
}

impl Side<'_> {
    /// The instances of one end of the record.
    fn ends(&mut self, end: &LinkEnd, start: bool) {
        let (i, id1, id2) = self.file;
        let slot = 2 * i + usize::from(start);
        let Item { rec, ends, .. } = &mut *self.item;
        let (chans, known) = (&mut *self.chans, &mut *self.known);
        scan::instances(end, rec, id1, id2, |k, peer| {
            let Some(k) = k else {
                ends.push(Resolved {
                    peer,
                    start,
                    missing: true,
                    ..Resolved::default()
                });
                return;
            };
            let (chan, seq) = chans.resolve_at(k, end.fifo, start, Some(slot));
            if chan as usize >= *known {
                ends.spill().new_chans.push((chan, chans.channel(chan)));
                *known = chan as usize + 1;
            }
            ends.push(Resolved {
                peer,
                seq,
                chan,
                start,
                bad: chans.is_bad(chan, seq),
                missing: false,
            });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(i: u64, start: bool) -> Resolved {
        Resolved {
            peer: i,
            seq: i,
            chan: i as u32,
            start,
            bad: i % 3 == 0,
            missing: i % 5 == 0,
        }
    }

    /// Filled and cleared again and again (the item is reused), the ends
    /// read back as pushed, in place or spilled, and so do new channels.
    #[test]
    fn ends_read_back_as_pushed() {
        let mut e = Ends::default();
        for round in 0..40u64 {
            e.clear();
            let n = round % 5;
            let want: Vec<Resolved> = (0..n).map(|i| end(round * 10 + i, i < n / 2)).collect();
            for &r in &want {
                e.push(r);
            }
            let chans: Vec<(u32, Key)> =
                (0..round % 3).map(|c| (c as u32, Key::default())).collect();
            for &c in &chans {
                e.spill().new_chans.push(c);
            }
            let got: Vec<Resolved> = e.iter().copied().collect();
            assert_eq!(got, want, "round {round}");
            assert_eq!(e.new_chans(), chans.as_slice(), "round {round}");
            for r in &got {
                assert_eq!(r.at().is_none(), r.missing);
            }
        }
    }
}
