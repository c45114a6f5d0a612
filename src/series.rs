//! Value series of different sources kept apart (see [`Series`]).

use crate::merge::Merge;
use crate::model::{ContainerId, Event, Op, TypeId};
use crate::registry::Registry;
use std::collections::HashMap;

/// The variable types of one container and the source that first set
/// each: most containers have one (a host with one metric of a million),
/// kept without a heap block.
enum Owners {
    None,
    One((TypeId, u32)),
    /// Sorted by type.
    Many(Vec<(TypeId, u32)>),
}

/// Keeps the value series of different sources apart. Two sources that
/// set the same variable of the same container (two PCP archives of one
/// host, a Ganglia recording and its XML snapshots) would interleave
/// their values in one row; the second source gets its own variable type,
/// named after its file, and a note says so.
#[derive(Default)]
pub struct Series {
    /// Per container (by id): its variable types, sorted, each with the
    /// source that first set it. A binary search in a short list per event
    /// costs less than a hash.
    owner: Vec<Owners>,
    /// Per variable type: the (source, container) that first set it. An
    /// event of that pair needs no lookup: the common case, one archive
    /// setting its own host's metrics.
    first: Vec<(u32, u32)>,
    /// The type given to another source's series of a type.
    variant: HashMap<(TypeId, usize), TypeId>,
    /// Per (first source, second source): how many series were split, and
    /// the first of them as an example, in order of discovery.
    clashes: Vec<((usize, usize), u64, String)>,
}

impl Series {
    /// Gives `ev` another variable type when its series belongs to
    /// another source than the one that first set it.
    pub fn keep_apart(
        &mut self,
        reg: &mut Registry,
        source: usize,
        ev: &mut Event,
        label: &dyn Fn(usize) -> String,
    ) {
        let Op::SetVariable { container, ty, .. } = &mut ev.op else {
            return;
        };
        let t = ty.0 as usize;
        if self.first.len() <= t {
            self.first.resize(t + 1, (u32::MAX, u32::MAX));
        }
        let pair = (source as u32, container.0);
        if self.first[t] == pair {
            return;
        }
        if self.first[t].0 == u32::MAX {
            self.first[t] = pair;
        }
        let (owner, _) = self.owner_of(*container, *ty, source);
        if owner == source {
            return;
        }
        let original = *ty;
        *ty = match self.variant.get(&(original, source)) {
            Some(&t) => t,
            None => {
                let t = reg.variable_variant(original, &label(source));
                self.variant.insert((original, source), t);
                t
            }
        };
        // The variant is this source's own from now on.
        if self.owner_of(*container, *ty, source).1 {
            let pair = (owner, source);
            match self.clashes.iter_mut().find(|c| c.0 == pair) {
                Some(c) => c.1 += 1,
                None => {
                    let example = format!(
                        "`{}` of {} is also `{}`",
                        reg.type_def(original).name,
                        reg.container(*container).name,
                        reg.type_def(*ty).name
                    );
                    self.clashes.push((pair, 1, example));
                }
            }
        }
    }

    /// The source that owns (`container`, `ty`), made `source` if none
    /// does yet; and whether it was made so now.
    fn owner_of(&mut self, container: ContainerId, ty: TypeId, source: usize) -> (usize, bool) {
        let c = container.0 as usize;
        if self.owner.len() <= c {
            self.owner.resize_with(c + 1, || Owners::None);
        }
        let slot = &mut self.owner[c];
        let mine = (ty, source as u32);
        match slot {
            Owners::None => {
                *slot = Owners::One(mine);
                (source, true)
            }
            Owners::One((t, o)) if *t == ty => (*o as usize, false),
            Owners::One(first) => {
                let mut rows = vec![*first, mine];
                rows.sort_by_key(|(t, _)| t.0);
                *slot = Owners::Many(rows);
                (source, true)
            }
            Owners::Many(rows) => match rows.binary_search_by_key(&ty.0, |(t, _)| t.0) {
                Ok(i) => (rows[i].1 as usize, false),
                Err(i) => {
                    rows.insert(i, mine);
                    (source, true)
                }
            },
        }
    }

    /// One note per pair of sources whose series were split.
    pub fn notes(&self, label: &dyn Fn(usize) -> String) -> Vec<String> {
        self.clashes
            .iter()
            .map(|((a, b), n, example)| {
                format!(
                    "{} and {} set the same {n} variable(s) of the same containers: kept apart, named after {} ({example})",
                    label(*a),
                    label(*b),
                    label(*b)
                )
            })
            .collect()
    }
}

/// A source's file name, for notes.
pub fn source_label(merge: &Merge, i: usize) -> String {
    merge.sources().get(i).map_or_else(String::new, |s| {
        let p = &s.stats().path;
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    })
}
