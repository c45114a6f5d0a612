//! What a sink reads of the registry: the definitions of what it declares
//! and creates. The run's registry is one; a sink on a thread of its own
//! reads a copy of the definitions it was sent ([`Replica`]).

use crate::model::{ContainerId, LinkKey, TypeId, ValueId};
use crate::registry::{ContainerDef, Registry, TypeDef, TypeKind, ValueDef};

/// Read-only definitions by id.
pub trait Catalogue {
    /// A type by id.
    fn type_def(&self, id: TypeId) -> &TypeDef;
    /// A container by id.
    fn container(&self, id: ContainerId) -> &ContainerDef;
    /// A value by id.
    fn value(&self, id: ValueId) -> &ValueDef;
    /// A link's key as a replayed trace wrote it (channel
    /// [`REPLAYED_KEYS`]); `None` for the keys a run numbers itself.
    fn key_name(&self, _key: LinkKey) -> Option<&str> {
        None
    }
}

/// The channel of the links of a replayed trace: their sequence number
/// stands for the key the trace wrote ([`Replica::put_key_name`]).
pub const REPLAYED_KEYS: u32 = u32::MAX;

impl Catalogue for Registry {
    fn type_def(&self, id: TypeId) -> &TypeDef {
        Registry::type_def(self, id)
    }
    fn container(&self, id: ContainerId) -> &ContainerDef {
        Registry::container(self, id)
    }
    fn value(&self, id: ValueId) -> &ValueDef {
        Registry::value(self, id)
    }
}

/// The definitions sent so far, by id: what a sink's thread reads
/// instead of the registry.
#[derive(Clone)]
pub struct Replica {
    types: Vec<Option<TypeDef>>,
    containers: Vec<Option<ContainerDef>>,
    values: Vec<Option<ValueDef>>,
    /// A replayed trace's link keys, by sequence number.
    keys: Vec<Box<str>>,
    /// Read for an id never sent (a bug of the sender): a wrong name in
    /// the output rather than a panic.
    unknown: (TypeDef, ContainerDef, ValueDef),
}

fn put<T>(v: &mut Vec<Option<T>>, i: u32, def: T) {
    let i = i as usize;
    if v.len() <= i {
        v.resize_with(i + 1, || None);
    }
    if let Some(slot) = v.get_mut(i) {
        *slot = Some(def);
    }
}

impl Default for Replica {
    fn default() -> Replica {
        let name: crate::registry::Name = "unknown".into();
        Replica {
            types: Vec::new(),
            containers: Vec::new(),
            values: Vec::new(),
            keys: Vec::new(),
            unknown: (
                TypeDef {
                    kind: TypeKind::Container,
                    parent: None,
                    name: name.clone(),
                    color: None,
                    unit: None,
                    role: None,
                },
                ContainerDef {
                    ty: TypeId(0),
                    parent: None,
                    name,
                    ids: Default::default(),
                },
                ValueDef {
                    ty: TypeId(0),
                    name: "unknown".into(),
                    color: None,
                },
            ),
        }
    }
}

impl Replica {
    /// Keeps a type's definition.
    pub fn put_type(&mut self, id: TypeId, def: TypeDef) {
        put(&mut self.types, id.0, def);
    }
    /// Keeps a container's definition.
    pub fn put_container(&mut self, id: ContainerId, def: ContainerDef) {
        put(&mut self.containers, id.0, def);
    }
    /// Keeps a value's definition.
    pub fn put_value(&mut self, id: ValueId, def: ValueDef) {
        put(&mut self.values, id.0, def);
    }
    /// Keeps a replayed trace's link key: the next sequence number of
    /// channel [`REPLAYED_KEYS`] stands for it. Returns that number.
    pub fn put_key_name(&mut self, key: &str) -> u64 {
        self.keys.push(key.into());
        (self.keys.len() - 1) as u64
    }
}

impl Catalogue for Replica {
    fn type_def(&self, id: TypeId) -> &TypeDef {
        let found = self.types.get(id.0 as usize).and_then(Option::as_ref);
        found.unwrap_or(&self.unknown.0)
    }
    fn container(&self, id: ContainerId) -> &ContainerDef {
        let found = self.containers.get(id.0 as usize).and_then(Option::as_ref);
        found.unwrap_or(&self.unknown.1)
    }
    fn value(&self, id: ValueId) -> &ValueDef {
        let found = self.values.get(id.0 as usize).and_then(Option::as_ref);
        found.unwrap_or(&self.unknown.2)
    }
    fn key_name(&self, key: LinkKey) -> Option<&str> {
        if key.channel != REPLAYED_KEYS {
            return None;
        }
        self.keys.get(key.seq as usize).map(|k| &**k)
    }
}
