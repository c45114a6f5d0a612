//! Keys from what a thing is, not from when it was met: a container's key
//! is a hash of its type's key and the names on its path, a type's of its
//! parent's key, its nature and its name, a value's of its type's key and
//! its name. Registry ids and ordinals follow the order things were met,
//! which depends on how far each source read ahead and where a window or
//! a task starts; these keys are the same in every run, window and task of
//! the same inputs (Perfetto's surrogate ids, made without talking).
//!
//! The hash is XXH64 with seed 0 over length-prefixed fields, a fixed
//! function written down by its authors, so a key is stable across
//! versions, machines and runs.

use super::Catalogue;
use crate::model::{ContainerId, TypeId, ValueId};
use crate::registry::TypeKind;
use std::hash::Hasher;
use twox_hash::XxHash64;

/// A 64-bit key.
pub type Key = u64;

fn field(h: &mut XxHash64, bytes: &[u8]) {
    h.write_u64(bytes.len() as u64);
    h.write(bytes);
}

fn nature(kind: TypeKind) -> &'static [u8] {
    match kind {
        TypeKind::Container => b"container",
        TypeKind::State => b"state",
        TypeKind::Variable => b"variable",
        TypeKind::Event => b"event",
        TypeKind::Link { .. } => b"link",
    }
}

/// A type's key.
pub fn type_key<C: Catalogue + ?Sized>(cat: &C, ty: TypeId) -> Key {
    // Types nest a few levels; the walk is bounded by the registry's
    // tree, which has no cycle (a parent is registered before its child).
    let mut chain = Vec::new();
    let mut at = Some(ty);
    while let Some(t) = at.filter(|_| chain.len() < 64) {
        chain.push(t);
        at = cat.type_def(t).parent;
    }
    let mut key = 0;
    for t in chain.into_iter().rev() {
        let def = cat.type_def(t);
        let mut h = XxHash64::with_seed(0);
        h.write_u64(key);
        field(&mut h, nature(def.kind));
        field(&mut h, def.name.as_bytes());
        key = h.finish();
    }
    key
}

/// A container's key: its path of names under the root, each with its
/// type's key.
pub fn container_key<C: Catalogue + ?Sized>(cat: &C, c: ContainerId) -> Key {
    if c == ContainerId::ROOT {
        return 0;
    }
    let mut chain = Vec::new();
    let mut at = Some(c);
    while let Some(x) = at.filter(|_| chain.len() < 256) {
        chain.push(x);
        at = cat.container(x).parent;
    }
    let mut key = 0;
    for x in chain.into_iter().rev() {
        let def = cat.container(x);
        let mut h = XxHash64::with_seed(0);
        h.write_u64(key);
        h.write_u64(type_key(cat, def.ty));
        field(&mut h, def.name.as_bytes());
        key = h.finish();
    }
    key
}

/// A value's key.
pub fn value_key<C: Catalogue + ?Sized>(cat: &C, v: ValueId) -> Key {
    let def = cat.value(v);
    let mut h = XxHash64::with_seed(0);
    h.write_u64(type_key(cat, def.ty));
    field(&mut h, def.name.as_bytes());
    h.finish()
}

/// A link's key from its type's key and its own key as the Pajé trace
/// writes it (`k{channel}_{seq}`, or a replayed trace's own): the same in
/// every window of the run, and for a run and its trace replayed (a
/// counter of links met would be neither).
pub fn link_key<C: Catalogue + ?Sized>(cat: &C, ty_key: Key, key: crate::model::LinkKey) -> Key {
    let mut h = XxHash64::with_seed(0);
    h.write_u64(ty_key);
    match cat.key_name(key) {
        Some(name) => field(&mut h, name.as_bytes()),
        None => {
            let (mut a, mut b) = (itoa::Buffer::new(), itoa::Buffer::new());
            let (ch, seq) = (
                a.format(key.channel).as_bytes(),
                b.format(key.seq).as_bytes(),
            );
            h.write_u64((ch.len() + seq.len() + 2) as u64);
            h.write(b"k");
            h.write(ch);
            h.write(b"_");
            h.write(seq);
        }
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchy::{Display, Hierarchy};
    use crate::registry::Registry;

    /// The key of the builtin hierarchy's machine `node01`.
    const KNOWN_NODE01: Key = 1_418_937_032_011_323_806;

    /// The same things met in other orders have other registry ids and
    /// the same keys; different things have different keys.
    #[test]
    fn keys_follow_what_not_when() {
        let plain = Display::default();
        let mut a = Registry::new(Hierarchy::builtin());
        let a1 = a.machine("node01", None);
        let a2 = a.machine("node02", None);
        let ap = a.process(a2, 42).unwrap();
        let ast = a.state_type(a.container(ap).ty, "state");
        let av = a.value_of(ast, "running", &plain);

        let mut b = Registry::new(Hierarchy::builtin());
        let b2 = b.machine("node02", None);
        let bp = b.process(b2, 42).unwrap();
        let bst = b.state_type(b.container(bp).ty, "state");
        let _other = b.value_of(bst, "waiting", &plain);
        let bv = b.value_of(bst, "running", &plain);
        let b1 = b.machine("node01", None);

        assert_ne!(a1, b1, "the test needs other ids");
        assert_eq!(container_key(&a, a1), container_key(&b, b1));
        assert_eq!(container_key(&a, a2), container_key(&b, b2));
        assert_eq!(container_key(&a, ap), container_key(&b, bp));
        assert_eq!(type_key(&a, ast), type_key(&b, bst));
        assert_eq!(value_key(&a, av), value_key(&b, bv));
        assert_ne!(container_key(&a, a1), container_key(&a, a2));
        assert_ne!(value_key(&b, bv), value_key(&b, _other));
        // A fixed number: a key written by one version is the key of the
        // next (a change of hash or of fields is a change of schema).
        assert_eq!(container_key(&a, a1), KNOWN_NODE01);
    }
}
