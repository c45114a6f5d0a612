//! The map's events by type id, for both passes.

use crate::eventmap::{EventDef, EventMap};

/// The map's events by type id, found by index: a hash lookup per
/// record, and its probe into entries of 480 bytes, were 5% of the
/// converter's time.
pub(super) struct Defs {
    /// Per type id, its place in `defs`; `u16::MAX`: none.
    slot: Vec<u16>,
    defs: Vec<EventDef>,
    /// Per event, a small id for the value of each of its link ends
    /// (start, end, here; equal texts, equal ids): what the registry said
    /// of a link is then found without hashing or comparing its text.
    values: Vec<[u32; 3]>,
}

impl Defs {
    pub(super) fn new(map: &EventMap) -> Defs {
        let mut slot = vec![u16::MAX; usize::from(u16::MAX) + 1];
        let mut defs = Vec::with_capacity(map.events.len());
        for (&ty, def) in &map.events {
            let i = u16::try_from(defs.len()).ok().filter(|&i| i != u16::MAX);
            if let (Some(s), Some(i)) = (slot.get_mut(usize::from(ty)), i) {
                *s = i;
                defs.push(def.clone());
            }
        }
        let mut ids: foldhash::HashMap<&str, u32> = foldhash::HashMap::default();
        let values = defs
            .iter()
            .map(|def| {
                [&def.link_start, &def.link_end, &def.link_here].map(|end| {
                    end.as_ref().map_or(u32::MAX, |end| {
                        let n = ids.len() as u32;
                        *ids.entry(end.value.as_str()).or_insert(n)
                    })
                })
            })
            .collect();
        Defs { slot, defs, values }
    }

    /// The value ids of the link ends of the event at place `i` ([`Defs::find`])
    /// (start, end, here); `u32::MAX` where it has none.
    #[inline]
    pub(super) fn values(&self, i: usize) -> [u32; 3] {
        self.values.get(i).copied().unwrap_or([u32::MAX; 3])
    }

    /// The event of `ty` and its place among the map's events.
    #[inline]
    pub(super) fn find(&self, ty: u16) -> Option<(usize, &EventDef)> {
        let i = usize::from(*self.slot.get(usize::from(ty))?);
        Some((i, self.defs.get(i)?))
    }
}
