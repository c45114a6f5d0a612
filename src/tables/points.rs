//! The `checkpoints` table (`docs/windows.md`): what is open at each
//! reference point and at a window's end, so that a window of the tables
//! opens from the first point at or after its end without reading what
//! came before it.

use super::columns::{col, opt, time, Col, Kind};
use super::{named, Tables};
use crate::sink::{Catalogue, Held};
use std::io;

pub(super) const CHECKPOINTS: &[Col] = &[
    time("at_ns"),
    col("kind", Kind::Str),
    col("container_id", Kind::I64),
    opt("type_id", Kind::I64),
    opt("type", Kind::Str),
    opt("depth", Kind::I32),
    opt("value_id", Kind::I64),
    opt("value", Kind::Str),
    opt("number", Kind::F64),
    time("since_ns"),
    opt("from_container_id", Kind::I64),
    opt("to_container_id", Kind::I64),
    opt("key", Kind::Str),
    opt("size_bytes", Kind::I64),
    opt("tag", Kind::I64),
    opt("source", Kind::I32),
];

impl Tables {
    /// A row of `checkpoints`: `held` is open at `at`.
    pub(super) fn hold<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        at: i64,
        held: &Held,
    ) -> io::Result<()> {
        let shift = self.shift;
        let (container, kind) = match *held {
            Held::Container { container, .. } => (container, "container"),
            Held::State { container, .. } => (container, "state"),
            Held::Variable { container, .. } => (container, "variable"),
            Held::Link { container, .. } => (container, "link"),
        };
        let ty = match *held {
            Held::Container { .. } => None,
            Held::State { ty, .. } | Held::Variable { ty, .. } | Held::Link { ty, .. } => Some(ty),
        };
        let value = match *held {
            Held::State { value, .. } | Held::Link { value, .. } => Some(value),
            _ => None,
        };
        // Keys cached at creation (kept once a container is destroyed).
        let id = self.container(container);
        let ends = match *held {
            Held::Link { from, to, .. } => [from, to].map(|c| c.map(|c| self.container(c))),
            _ => [None, None],
        };
        let base = self.part.unwrap_or(0);
        let t = &mut self.checkpoints;
        t.i64(at + shift);
        t.text(kind);
        t.i64(id);
        match ty {
            Some(ty) => {
                t.i64(named(&self.tnames, &self.unknown, ty.0).key);
                t.text(&cat.type_def(ty).name);
            }
            None => {
                t.null();
                t.null();
            }
        }
        match *held {
            Held::State { depth, .. } => t.i32(depth as i32),
            _ => t.null(),
        }
        match value {
            Some(v) => {
                t.i64(named(&self.vnames, &self.unknown, v.0).key);
                t.text(&cat.value(v).name);
            }
            None => {
                t.null();
                t.null();
            }
        }
        match *held {
            Held::Variable { value, .. } => t.f64(value),
            _ => t.null(),
        }
        let since = match *held {
            Held::Container { since, .. }
            | Held::State { since, .. }
            | Held::Variable { since, .. }
            | Held::Link { since, .. } => since,
        };
        t.i64(since + shift);
        match *held {
            Held::Link {
                from,
                key: k,
                size,
                tag,
                ..
            } => {
                for end in ends {
                    match end {
                        Some(c) => t.i64(c),
                        None => t.null(),
                    }
                }
                match cat.key_name(k) {
                    Some(name) => t.text(name),
                    None => t.text(&format!("k{}_{}", k.channel, k.seq)),
                }
                match from {
                    // A start's size and tag; an end says neither.
                    Some(_) => {
                        t.i64(size);
                        t.i64(tag);
                    }
                    None => {
                        t.null();
                        t.null();
                    }
                }
            }
            _ => (0..5).for_each(|_| t.null()),
        }
        match *held {
            Held::Container { .. } => t.null(),
            Held::State { source, .. }
            | Held::Variable { source, .. }
            | Held::Link { source, .. } => t.i32(source.saturating_add(base) as i32),
        }
        t.end()
    }
}
