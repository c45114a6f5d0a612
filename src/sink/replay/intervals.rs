//! What the replay keeps only for an encoder that takes intervals: the
//! starts of open states, variables' current values, links' first halves,
//! and the intervals they make when they end.

use super::{give, slot, Current, Half, Open, Replay};
use crate::model::{ContainerId, Event, Op, TypeId};
use crate::sink::{Catalogue, Encoder, Span, SpanEnd};
use std::io;

impl<E: Encoder> Replay<E> {
    /// Hands an interval to the encoder, if it takes intervals and the
    /// window is open.
    #[inline]
    pub(super) fn put_span<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        span: &Span,
    ) -> io::Result<()> {
        give(&mut self.enc, cat, &self.book, &mut self.gate, span)
    }

    /// A state's interval, ended.
    pub(super) fn state_span<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        container: ContainerId,
        ty: TypeId,
        open: Open,
        end: i64,
        cause: SpanEnd,
    ) -> io::Result<()> {
        let span = Span::State {
            container,
            ty,
            value: open.value,
            start: open.start,
            end,
            depth: open.depth,
            cause,
            source: open.source,
        };
        self.put_span(cat, &span)
    }

    /// Every state open in a row ends, innermost first.
    pub(super) fn close_row<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        container: ContainerId,
        ty: TypeId,
        t: i64,
        cause: SpanEnd,
    ) -> io::Result<()> {
        let stack = std::mem::take(self.stack(container, ty));
        for open in stack.iter().rev() {
            self.state_span(cat, container, ty, *open, t, cause)?;
        }
        let mut stack = stack;
        stack.clear();
        *self.stack(container, ty) = stack;
        Ok(())
    }

    /// A variable's new value ends its last one, but at the same instant,
    /// where it replaces it (as PajeNG does).
    pub(super) fn set_variable<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        container: ContainerId,
        ty: TypeId,
        value: f64,
        t: i64,
    ) -> io::Result<()> {
        let c = slot(container);
        if self.vars.len() <= c {
            self.vars.resize_with(c + 1, Vec::new);
        }
        // Found through a hash of (container, type): a host has hundreds
        // of metrics (a PCP archive's instances), and a search of its list
        // per sample, a cache miss a step, was an eighth of the tables'
        // run. The list stays in order of arrival, for the end.
        let vars = &mut self.vars[c];
        let key = (container.0, ty.0);
        let cur = match self.var_at.get(&key) {
            Some(&i) => &mut vars[i as usize],
            None => {
                self.var_at.insert(key, vars.len() as u32);
                vars.push(Current {
                    ty: ty.0,
                    value,
                    start: t,
                    source: self.book.source,
                });
                return Ok(());
            }
        };
        let last = *cur;
        *cur = Current {
            ty: ty.0,
            value,
            start: t,
            source: self.book.source,
        };
        if last.start == t {
            return Ok(());
        }
        let span = Span::Variable {
            container,
            ty,
            value: last.value,
            start: last.start,
            end: t,
            cause: SpanEnd::Set,
            source: last.source,
        };
        self.put_span(cat, &span)
    }

    /// A link's half: kept until the other comes, then the link.
    pub(super) fn link_half<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        ev: &Event,
    ) -> io::Result<()> {
        let (half, key) = match ev.op {
            Op::StartLink {
                container,
                ty,
                value,
                from,
                key,
                size,
                tag,
            } => (
                Half {
                    container,
                    ty,
                    value,
                    at: from,
                    time: ev.time,
                    start: true,
                    size,
                    tag,
                    source: self.book.source,
                },
                key,
            ),
            Op::EndLink {
                container,
                ty,
                value,
                to,
                key,
            } => (
                Half {
                    container,
                    ty,
                    value,
                    at: to,
                    time: ev.time,
                    start: false,
                    size: 0,
                    tag: 0,
                    source: self.book.source,
                },
                key,
            ),
            _ => return Ok(()),
        };
        let Some(other) = self.halves.remove(&(key.channel, key.seq)) else {
            self.halves.insert((key.channel, key.seq), half);
            return Ok(());
        };
        let (s, e) = if other.start {
            (other, half)
        } else {
            (half, other)
        };
        let span = Span::Link {
            container: s.container,
            ty: s.ty,
            value: s.value,
            from: s.at,
            to: e.at,
            start: s.time,
            end: e.time,
            key,
            size: s.size,
            tag: s.tag,
            source: s.source,
        };
        self.put_span(cat, &span)
    }

    /// Closes what is open in `c` at `t` (intervals only).
    pub(super) fn close_container<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        c: ContainerId,
        t: i64,
        cause: SpanEnd,
    ) -> io::Result<()> {
        let i = slot(c);
        let tys: Vec<u32> = self
            .rows
            .get(i)
            .map(|r| r.iter().map(|r| r.ty).collect())
            .unwrap_or_default();
        for ty in tys {
            self.close_row(cat, c, TypeId(ty), t, cause)?;
        }
        let vars = self.vars.get_mut(i).map(std::mem::take).unwrap_or_default();
        for v in &vars {
            self.var_at.remove(&(c.0, v.ty));
        }
        for v in vars {
            let span = Span::Variable {
                container: c,
                ty: TypeId(v.ty),
                value: v.value,
                start: v.start,
                end: t,
                cause,
                source: v.source,
            };
            self.put_span(cat, &span)?;
        }
        Ok(())
    }
}
