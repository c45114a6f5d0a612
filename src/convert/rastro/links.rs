//! A record's link ends: each one's key, its two containers and its
//! link type; only the links pass 1 found with both ends are drawn.

use super::*;
use std::collections::hash_map::Entry;

/// A link being written: both its ends are known.
struct Drawn {
    container: ContainerId,
    ty: TypeId,
    value: ValueId,
    from: ContainerId,
    to: ContainerId,
    key: LinkKey,
    size: i64,
}

impl Drawn {
    fn new(
        (container, ty, value): Drawn3,
        (from, to): (ContainerId, ContainerId),
        key: LinkKey,
        size: i64,
    ) -> Drawn {
        Drawn {
            container,
            ty,
            value,
            from,
            to,
            key,
            size,
        }
    }

    fn op(&self, start: bool) -> Op {
        let (container, ty, value, key) = (self.container, self.ty, self.value, self.key);
        if start {
            Op::StartLink {
                container,
                ty,
                value,
                from: self.from,
                key,
                size: self.size,
                tag: 0,
            }
        } else {
            Op::EndLink {
                container,
                ty,
                value,
                to: self.to,
                key,
            }
        }
    }
}

/// A link's holder, type and value.
pub(super) type Drawn3 = (ContainerId, TypeId, ValueId);

impl Conv {
    /// The container of one end of a link: a rank's Process, or a thread
    /// of rank `rank`.
    fn endpoint(
        &self,
        level: Level,
        rank: u64,
        thread: Option<u64>,
        file: usize,
    ) -> Option<ContainerId> {
        match level {
            Level::Rank => self.rank_container.get(rank),
            Level::Thread => {
                let f = match thread {
                    Some(t) => *self.file_of.get(&(rank, t))?,
                    None => file,
                };
                self.rows.get(f).map(|r| r.container)
            }
        }
    }

    fn level(&self, link: usize) -> Level {
        self.map.links.get(link).map_or(Level::Rank, |l| l.level)
    }

    /// The other end named by a map's `to`/`from` value: a rank, or a
    /// thread index of this file's rank.
    fn partner_endpoint(&self, level: Level, p: u64, id1: u64, file: usize) -> Option<ContainerId> {
        match level {
            Level::Rank => self.endpoint(level, p, None, file),
            Level::Thread => self.endpoint(level, id1, Some(p), file),
        }
    }

    /// The link type of `end` (whose value has the id `value`) from
    /// `from` to `to`.
    #[inline]
    fn link_type(
        &mut self,
        reg: &mut Registry,
        end: &LinkEnd,
        value: u32,
        (from, to): (ContainerId, ContainerId),
    ) -> Drawn3 {
        // Known, nearly always: a lookup in place, the registry asked
        // out of line.
        let key = (end.link, value, from, to);
        match self.link_types.get(&key) {
            Some(&d) => d,
            None => self.new_link_type(reg, end, key),
        }
    }

    /// [`Conv::link_type`] the first time: `key` is (link, value id,
    /// from, to).
    #[inline(never)]
    fn new_link_type(
        &mut self,
        reg: &mut Registry,
        end: &LinkEnd,
        key: (usize, u32, ContainerId, ContainerId),
    ) -> Drawn3 {
        // The display is only read when the link is new.
        const PLAIN: Display = Display {
            name: None,
            color: None,
        };
        let map = &self.map;
        let name = map.links.get(end.link).map_or("", |l| l.name.as_str());
        let display = map.values.get(&end.value).unwrap_or(&PLAIN);
        let d = reg.link(key.2, key.3, name, &end.value, display);
        self.link_types.insert(key, d);
        d
    }

    fn link_key(&mut self, reg: &mut Registry, k: Key) -> LinkKey {
        let (chan, seq) = k.split();
        let channel = *self
            .channels
            .entry(chan)
            .or_insert_with(|| reg.link_channel());
        LinkKey { channel, seq }
    }

    /// [`Conv::link_key`] of a channel's key: looked up once per channel.
    fn chan_key(&mut self, reg: &mut Registry, chan: u32, seq: u64) -> LinkKey {
        if let Some(channel) = self.chans.reg(chan) {
            return LinkKey { channel, seq };
        }
        let key = self.link_key(reg, self.chans.key(chan, seq));
        self.chans.set_reg(chan, key.channel);
        key
    }

    /// The link ends of a record: `values` are its event's value ids
    /// ([`Defs::values`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn links(
        &mut self,
        reg: &mut Registry,
        out: &mut Timeline,
        i: usize,
        (def, values): (&EventDef, [u32; 3]),
        rec: &Slim,
        at: Stamp,
    ) -> Result<()> {
        // Two records in three have no link end: tested before anything.
        let [start_value, end_value, here_value] = values;
        if def.link_start.is_none() && def.link_end.is_none() && def.link_here.is_none() {
            return Ok(());
        }
        let Some(f) = self.files.get(i) else {
            return Ok(());
        };
        let file = (i, f.id1, f.id2);
        if let Some(end) = &def.link_start {
            self.link_ends(reg, out, file, (end, true, start_value), rec, at)?;
        }
        if let Some(end) = &def.link_end {
            self.link_ends(reg, out, file, (end, false, end_value), rec, at)?;
        }
        if let Some(end) = &def.link_here {
            self.link_here(reg, out, file, (end, here_value), rec, at)?;
        }
        Ok(())
    }

    /// The start (`start`) or end of a link: one per key the record
    /// stands for.
    #[allow(clippy::too_many_arguments)]
    fn link_ends(
        &mut self,
        reg: &mut Registry,
        out: &mut Timeline,
        (i, id1, id2): (usize, u64, u64),
        (end, start, value_id): (&LinkEnd, bool, u32),
        rec: &Slim,
        at: Stamp,
    ) -> Result<()> {
        let level = self.level(end.link);
        let mut found = std::mem::take(&mut self.found);
        found.clear();
        scan::instances(end, rec, id1, id2, |k, p| found.push((k, p)));
        for &(k, peer) in &found {
            let Some(k) = k else {
                self.missing_fields += 1;
                continue;
            };
            let slot = 2 * i + usize::from(start);
            let (chan, seq) = self.chans.resolve_at(k, end.fifo, start, Some(slot));
            if self.chans.is_bad(chan, seq) {
                if start {
                    self.messages.unmatched_sends += 1;
                } else {
                    self.messages.unmatched_recvs += 1;
                }
                continue;
            }
            let me = self.endpoint(level, id1, None, i);
            let other = match end.partner {
                Some(e) => e
                    .eval(rec, id1, id2, peer)
                    .and_then(|p| self.partner_endpoint(level, p, id1, i)),
                None => self
                    .partner
                    .get(&(chan, seq))
                    .and_then(|&f| self.rows.get(f))
                    .map(|r| r.container),
            };
            let (Some(me), Some(other)) = (me, other) else {
                self.missing_fields += 1;
                continue;
            };
            let (from, to) = if start { (me, other) } else { (other, me) };
            let ty = self.link_type(reg, end, value_id, (from, to));
            let key = self.chan_key(reg, chan, seq);
            self.causality((chan, seq), start, at.mapped, i);
            let size = end
                .size
                .and_then(|e| e.eval(rec, id1, id2, peer))
                .map_or(0, |s| s as i64);
            let link = Drawn::new(ty, (from, to), key, size);
            out.push_stamped(at, link.op(start))?;
        }
        self.found = found;
        Ok(())
    }

    /// A zero-length link from the partner to this file's thread.
    fn link_here(
        &mut self,
        reg: &mut Registry,
        out: &mut Timeline,
        (i, id1, id2): (usize, u64, u64),
        (end, value_id): (&LinkEnd, u32),
        rec: &Slim,
        at: Stamp,
    ) -> Result<()> {
        let level = self.level(end.link);
        // Both ends are known here, so the link ends at this very
        // thread, whatever the link's level says of the other end.
        let me = self.rows.get(i).map(|r| r.container);
        let other = end
            .partner
            .and_then(|e| e.eval(rec, id1, id2, 0))
            .and_then(|p| self.partner_endpoint(level, p, id1, i));
        let (Some(to), Some(from)) = (me, other) else {
            self.missing_fields += 1;
            return Ok(());
        };
        let ty = self.link_type(reg, end, value_id, (from, to));
        let k = Key {
            link: end.link as u16,
            len: 1,
            v: [self.here_seq, 0, 0, 0],
        };
        self.here_seq += 1;
        let key = self.link_key(reg, k);
        let link = Drawn::new(ty, (from, to), key, 0);
        out.push_stamped(at, link.op(true))?;
        out.push_stamped(at, link.op(false))?;
        self.messages.matched += 1;
        Ok(())
    }

    /// Pairs the two ends of a drawn link to check that the receive is not
    /// before the send; the table holds links in flight only.
    fn causality(&mut self, k: (u32, u64), start: bool, time: i64, file: usize) {
        // One lookup: the first end goes in, the second takes it out.
        let first = match self.in_flight.entry(k) {
            Entry::Vacant(v) => {
                v.insert((time, file));
                None
            }
            Entry::Occupied(o) => Some(o.remove()),
        };
        if let Some((t, other)) = first {
            self.messages.matched += 1;
            let (ts, tr, fs, fr) = if start {
                (time, t, file, other)
            } else {
                (t, time, other, file)
            };
            if let (Some(&hs), Some(&hr)) = (self.hix.get(fs), self.hix.get(fr)) {
                self.messages.clocks.observe(hs, ts, hr, tr);
            }
            let (files, map, chans) = (&self.files, &self.map, &self.chans);
            let host = |f: usize| files.get(f).map(|x| x.host.clone()).unwrap_or_default();
            self.messages.check_order(
                ts,
                tr,
                || (host(fs), host(fr)),
                || match (files.get(fs), files.get(fr)) {
                    (Some(a), Some(b)) => format!(
                        "{} {}.{} -> {}.{} (rank.thread)",
                        map.links
                            .get(usize::from(chans.key(k.0, k.1).link))
                            .map_or("", |l| l.name.as_str()),
                        a.id1,
                        a.id2,
                        b.id1,
                        b.id2
                    ),
                    _ => String::new(),
                },
            );
        }
    }
}
