//! Value series of different sources kept apart (see [`Series`]).

use crate::merge::Merge;
use crate::model::{ContainerId, Event, Op, TypeId};
use crate::registry::Registry;
use std::collections::HashMap;

/// Keeps the value series of different sources apart. Two sources that
/// set the same variable of the same container (two PCP archives of one
/// host, a Ganglia recording and its XML snapshots) would interleave
/// their values in one row; the second source gets its own variable type,
/// named after its file, and a note says so.
#[derive(Default)]
pub struct Series {
    /// The source that first set each (container, variable type).
    owner: HashMap<(ContainerId, TypeId), usize>,
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
        let owner = *self.owner.entry((*container, *ty)).or_insert(source);
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
        if self.owner.insert((*container, *ty), source).is_none() {
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
