//! The map's events by type id, for both passes.

use crate::eventmap::{EventDef, EventMap};

/// The map's events by type id, found by index: a hash lookup per
/// record, and its probe into entries of 480 bytes, were 5% of the
/// converter's time.
pub(super) struct Defs {
    /// Per type id, its place in `defs`; `u16::MAX`: none.
    slot: Vec<u16>,
    defs: Vec<EventDef>,
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
        Defs { slot, defs }
    }

    #[inline]
    pub(super) fn get(&self, ty: u16) -> Option<&EventDef> {
        self.find(ty).map(|(_, d)| d)
    }

    /// The event of `ty` and its place in [`Defs::all`].
    #[inline]
    pub(super) fn find(&self, ty: u16) -> Option<(usize, &EventDef)> {
        let i = usize::from(*self.slot.get(usize::from(ty))?);
        Some((i, self.defs.get(i)?))
    }

    pub(super) fn all(&self) -> &[EventDef] {
        &self.defs
    }
}
