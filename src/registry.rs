//! The unifier: owns the unified hierarchy of the run (the thesis'
//! "integration controller", section 4.2.1). Converters ask it for the
//! container of a host, a process or a thread, and for types and values; it
//! applies the hierarchy's identity rules and cluster assignment and hands
//! out ids. The writer declares what it registered lazily, at first use.

use crate::hierarchy::{Display, Hierarchy, Role};
use crate::model::{ContainerId, TypeId, ValueId};
use std::collections::HashMap;

/// Nature of a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeKind {
    /// A container type.
    Container,
    /// A state type.
    State,
    /// A variable type.
    Variable,
    /// An event type.
    Event,
    /// A link type between two container types.
    Link {
        /// Type of the start containers.
        start: TypeId,
        /// Type of the end containers.
        end: TypeId,
    },
}

/// A registered type.
#[derive(Debug, Clone)]
pub struct TypeDef {
    /// Nature.
    pub kind: TypeKind,
    /// Parent container type; `None` = the root type `0`.
    pub parent: Option<TypeId>,
    /// Name shown by Pajé.
    pub name: String,
    /// Color, for variable types.
    pub color: Option<String>,
    /// Whether the writer has declared it.
    pub declared: bool,
}

/// A registered container.
#[derive(Debug, Clone)]
pub struct ContainerDef {
    /// Its type.
    pub ty: TypeId,
    /// Parent container; `None` = the root container `0`.
    pub parent: Option<ContainerId>,
    /// Name shown by Pajé.
    pub name: String,
    /// Whether the writer has created it.
    pub created: bool,
}

/// A registered value of a state type.
#[derive(Debug, Clone)]
pub struct ValueDef {
    /// Its type.
    pub ty: TypeId,
    /// Name shown by Pajé.
    pub name: String,
    /// Color.
    pub color: Option<String>,
    /// Whether the writer has declared it.
    pub declared: bool,
}

/// A host name seen in an input and the Machine it was unified to.
#[derive(Debug, Clone)]
pub struct HostSeen {
    /// The name as the input spelled it.
    pub name: String,
    /// The Machine container.
    pub machine: ContainerId,
}

/// The unified hierarchy of a run.
pub struct Registry {
    /// The hierarchy in force.
    pub hierarchy: Hierarchy,
    types: Vec<TypeDef>,
    containers: Vec<ContainerDef>,
    values: Vec<ValueDef>,
    level_types: Vec<TypeId>,
    grid: Option<ContainerId>,
    clusters: HashMap<String, ContainerId>,
    machines: Vec<(ContainerId, Vec<String>)>,
    /// `machines` positions by [`HostIdentity::keys`] of their names.
    machine_keys: HashMap<String, Vec<usize>>,
    /// Variable types made so far (for the palette).
    variable_types: usize,
    machine_cache: HashMap<String, ContainerId>,
    numbered: HashMap<(ContainerId, TypeId, u64), ContainerId>,
    named: HashMap<(ContainerId, TypeId, String), ContainerId>,
    link_channels: u32,
    sub_types: HashMap<(TypeId, TypeKind, String), TypeId>,
    link_types: HashMap<(Option<TypeId>, TypeId, TypeId, String), TypeId>,
    value_ids: HashMap<(TypeId, String), ValueId>,
    hosts_seen: Vec<HostSeen>,
    /// Non-fatal remarks for the summary.
    pub warnings: Vec<String>,
}

/// Default colors of variable types without one, cycled in order of
/// registration so the same inputs give the same colors.
const PALETTE: [&str; 8] = [
    "0.12 0.47 0.71",
    "1 0.5 0.05",
    "0.17 0.63 0.17",
    "0.84 0.15 0.16",
    "0.58 0.4 0.74",
    "0.55 0.34 0.29",
    "0.89 0.47 0.76",
    "0.5 0.5 0.5",
];

impl Registry {
    /// A registry for `hierarchy`, with its container types registered.
    pub fn new(hierarchy: Hierarchy) -> Registry {
        let mut me = Registry {
            hierarchy,
            types: Vec::new(),
            containers: Vec::new(),
            values: Vec::new(),
            level_types: Vec::new(),
            grid: None,
            clusters: HashMap::new(),
            machines: Vec::new(),
            machine_keys: HashMap::new(),
            variable_types: 0,
            machine_cache: HashMap::new(),
            numbered: HashMap::new(),
            named: HashMap::new(),
            link_channels: 0,
            sub_types: HashMap::new(),
            link_types: HashMap::new(),
            value_ids: HashMap::new(),
            hosts_seen: Vec::new(),
            warnings: Vec::new(),
        };
        let mut parent = None;
        for level in me.hierarchy.levels.clone() {
            let id = me.push_type(TypeDef {
                kind: TypeKind::Container,
                parent,
                name: level.name,
                color: None,
                declared: false,
            });
            me.level_types.push(id);
            parent = Some(id);
        }
        me
    }

    /// Every type, indexed by `TypeId`.
    pub fn types(&self) -> &[TypeDef] {
        &self.types
    }

    /// Every container, indexed by `ContainerId`, parents before children.
    pub fn containers(&self) -> &[ContainerDef] {
        &self.containers
    }

    /// Every value, indexed by `ValueId`.
    pub fn values(&self) -> &[ValueDef] {
        &self.values
    }

    /// The host names seen, in order of first appearance.
    pub fn hosts_seen(&self) -> &[HostSeen] {
        &self.hosts_seen
    }

    /// A type by id. Ids are only made by this registry, so the index holds.
    pub fn type_def(&self, id: TypeId) -> &TypeDef {
        &self.types[id.0 as usize]
    }

    /// Mutable access for the writer's bookkeeping.
    pub fn type_def_mut(&mut self, id: TypeId) -> &mut TypeDef {
        &mut self.types[id.0 as usize]
    }

    /// A container by id.
    pub fn container(&self, id: ContainerId) -> &ContainerDef {
        &self.containers[id.0 as usize]
    }

    /// Mutable access for the writer's bookkeeping.
    pub fn container_mut(&mut self, id: ContainerId) -> &mut ContainerDef {
        &mut self.containers[id.0 as usize]
    }

    /// A value by id.
    pub fn value(&self, id: ValueId) -> &ValueDef {
        &self.values[id.0 as usize]
    }

    /// Mutable access for the writer's bookkeeping.
    pub fn value_mut(&mut self, id: ValueId) -> &mut ValueDef {
        &mut self.values[id.0 as usize]
    }

    /// The container type of a role, if the hierarchy has that level.
    pub fn level_type(&self, role: Role) -> Option<TypeId> {
        self.hierarchy
            .level_of(role)
            .and_then(|i| self.level_types.get(i).copied())
    }

    /// The container type of a role a source cannot do without; `what`
    /// names the source in the usage error.
    pub fn required_level(&self, role: Role, what: &str) -> crate::error::Result<TypeId> {
        self.level_type(role).ok_or_else(|| {
            crate::error::Error::usage(format!(
                "{what} need a container type with role `{}` in the hierarchy ({})",
                role.as_str(),
                self.hierarchy.origin
            ))
        })
    }

    fn push_type(&mut self, def: TypeDef) -> TypeId {
        let id = TypeId(self.types.len() as u32);
        self.types.push(def);
        id
    }

    fn push_container(
        &mut self,
        ty: TypeId,
        parent: Option<ContainerId>,
        name: String,
    ) -> ContainerId {
        let id = ContainerId(self.containers.len() as u32);
        self.containers.push(ContainerDef {
            ty,
            parent,
            name,
            created: false,
        });
        id
    }

    /// The container of the level above `role`'s level, for a new container
    /// of that role (the root when `role` is the top level).
    fn parent_for_machine(&mut self, cluster: &str) -> Option<ContainerId> {
        if let Some(ty) = self.level_type(Role::Cluster) {
            if let Some(&c) = self.clusters.get(cluster) {
                return Some(c);
            }
            let parent = self.grid_container();
            let c = self.push_container(ty, parent, cluster.to_string());
            self.clusters.insert(cluster.to_string(), c);
            return Some(c);
        }
        self.grid_container()
    }

    fn grid_container(&mut self) -> Option<ContainerId> {
        let ty = self.level_type(Role::Grid)?;
        if self.grid.is_none() {
            let name = self.hierarchy.grid_name.clone();
            self.grid = Some(self.push_container(ty, None, name));
        }
        self.grid
    }

    /// The Machine container of `host`, unified by the identity rules.
    /// `cluster_hint` is the cluster the input says the host is in; the
    /// hierarchy's `[clusters]` assignment wins over it.
    pub fn machine(&mut self, host: &str, cluster_hint: Option<&str>) -> ContainerId {
        if let Some(&m) = self.machine_cache.get(host) {
            return m;
        }
        let ids = &self.hierarchy.identity;
        let mut matches: Vec<usize> = ids
            .keys(host)
            .filter_map(|k| self.machine_keys.get(k))
            .flatten()
            .copied()
            .filter(|&i| self.machines[i].1.iter().any(|n| ids.same(n, host)))
            .collect();
        matches.sort_unstable();
        matches.dedup();
        let index = matches.first().copied().unwrap_or(self.machines.len());
        for k in ids.keys(host) {
            let at = self.machine_keys.entry(k.to_string()).or_default();
            if at.last() != Some(&index) {
                at.push(index);
            }
        }
        let id = if let Some(&first) = matches.first() {
            let (m, names) = &mut self.machines[first];
            let m = *m;
            names.push(host.to_string());
            if matches.len() > 1 {
                self.warnings.push(format!(
                    "host `{host}` could be any of {} machines; unified with `{}`",
                    matches.len(),
                    self.containers[m.0 as usize].name
                ));
            }
            m
        } else {
            let cluster = self
                .hierarchy
                .cluster_of(host)
                .or(cluster_hint)
                .unwrap_or(&self.hierarchy.default_cluster)
                .to_string();
            let parent = self.parent_for_machine(&cluster);
            let name = self.hierarchy.identity.preferred(host).to_string();
            // The machine level always exists: the hierarchy loader refuses
            // a file without it.
            let ty = self.level_type(Role::Machine).unwrap_or(TypeId(0));
            let m = self.push_container(ty, parent, name);
            self.machines.push((m, vec![host.to_string()]));
            m
        };
        self.machine_cache.insert(host.to_string(), id);
        self.hosts_seen.push(HostSeen {
            name: host.to_string(),
            machine: id,
        });
        id
    }

    /// The Cluster container a machine sits in, if the hierarchy has one.
    pub fn cluster_of_machine(&self, machine: ContainerId) -> Option<&str> {
        let parent = self.container(machine).parent?;
        let p = self.container(parent);
        (Some(p.ty) == self.level_type(Role::Cluster)).then_some(p.name.as_str())
    }

    fn numbered_child(&mut self, parent: ContainerId, ty: TypeId, number: u64) -> ContainerId {
        if let Some(&c) = self.numbered.get(&(parent, ty, number)) {
            return c;
        }
        let c = self.push_container(ty, Some(parent), number.to_string());
        self.numbered.insert((parent, ty, number), c);
        c
    }

    /// The Process container of OS process `pid` on `machine`, or `None`
    /// when the hierarchy has no process level.
    pub fn process(&mut self, machine: ContainerId, pid: u32) -> Option<ContainerId> {
        let ty = self.level_type(Role::Process)?;
        Some(self.numbered_child(machine, ty, u64::from(pid)))
    }

    /// The container of thread `tid` of process `pid`: a Thread under the
    /// Process when the hierarchy has threads, else the task's own Process.
    pub fn thread(&mut self, machine: ContainerId, pid: u32, tid: u32) -> Option<ContainerId> {
        match self.level_type(Role::Thread) {
            Some(ty) => {
                let p = self.process(machine, pid)?;
                Some(self.numbered_child(p, ty, u64::from(tid)))
            }
            None => self.process(machine, tid),
        }
    }

    /// A child of `parent` of type `ty` known by name (an MPE thread, a
    /// rank without a pid), kept apart from pid-numbered children.
    pub fn named_child(&mut self, parent: ContainerId, ty: TypeId, name: &str) -> ContainerId {
        let key = (parent, ty, name.to_string());
        if let Some(&c) = self.named.get(&key) {
            return c;
        }
        let c = self.push_container(ty, Some(parent), name.to_string());
        self.named.insert(key, c);
        c
    }

    /// Renames a container before the writer creates it (an MPI rank's
    /// Process shows its rank beside its pid). Returns whether it could.
    pub fn rename(&mut self, c: ContainerId, name: &str) -> bool {
        let def = &mut self.containers[c.0 as usize];
        if def.created {
            return false;
        }
        def.name = name.to_string();
        true
    }

    /// The innermost container holding both `a` and `b` (`None` = root).
    pub fn common_ancestor(&self, a: ContainerId, b: ContainerId) -> Option<ContainerId> {
        let mut chain = Vec::new();
        let mut x = Some(a);
        while let Some(c) = x {
            chain.push(c);
            x = self.container(c).parent;
        }
        let mut y = Some(b);
        while let Some(c) = y {
            if chain.contains(&c) {
                return Some(c);
            }
            y = self.container(c).parent;
        }
        None
    }

    /// A new link channel, unique in the run (see [`crate::model::LinkKey`]).
    pub fn link_channel(&mut self) -> u32 {
        self.link_channels += 1;
        self.link_channels
    }

    /// The event type `name` under container type `parent`.
    pub fn event_type(&mut self, parent: TypeId, name: &str) -> TypeId {
        self.sub_type(parent, TypeKind::Event, name, None)
    }

    /// The link type `name` under container type `parent` (`None` = the
    /// root type), from containers of type `start` to type `end`.
    pub fn link_type(
        &mut self,
        parent: Option<TypeId>,
        start: TypeId,
        end: TypeId,
        name: &str,
    ) -> TypeId {
        let key = (parent, start, end, name.to_string());
        if let Some(&t) = self.link_types.get(&key) {
            return t;
        }
        let t = self.push_type(TypeDef {
            kind: TypeKind::Link { start, end },
            parent,
            name: name.to_string(),
            color: None,
            declared: false,
        });
        self.link_types.insert(key, t);
        t
    }

    /// The state type `name` under container type `parent`.
    pub fn state_type(&mut self, parent: TypeId, name: &str) -> TypeId {
        self.sub_type(parent, TypeKind::State, name, None)
    }

    /// The variable type of metric `key` under container type `parent`,
    /// named and colored by `display` (else by the key and the palette).
    pub fn variable_type(
        &mut self,
        parent: TypeId,
        key: &str,
        display: Option<&Display>,
    ) -> TypeId {
        self.sub_type(parent, TypeKind::Variable, key, display)
    }

    fn sub_type(
        &mut self,
        parent: TypeId,
        kind: TypeKind,
        key: &str,
        display: Option<&Display>,
    ) -> TypeId {
        if let Some(&t) = self.sub_types.get(&(parent, kind, key.to_string())) {
            return t;
        }
        let name = display
            .and_then(|d| d.name.clone())
            .unwrap_or_else(|| key.to_string());
        let color = match kind {
            TypeKind::Variable => {
                // The palette index is the number of variable types made so
                // far, kept as a count: counting them anew for each type made
                // a million metrics quadratic.
                let n = self.variable_types;
                self.variable_types += 1;
                Some(
                    display
                        .and_then(|d| d.color.clone())
                        .unwrap_or_else(|| PALETTE[n % PALETTE.len()].to_string()),
                )
            }
            _ => None,
        };
        let t = self.push_type(TypeDef {
            kind,
            parent: Some(parent),
            name,
            color,
            declared: false,
        });
        self.sub_types.insert((parent, kind, key.to_string()), t);
        t
    }

    /// The value `key` of state type `ty`, named and colored by `display`.
    pub fn value_of(&mut self, ty: TypeId, key: &str, display: &Display) -> ValueId {
        if let Some(&v) = self.value_ids.get(&(ty, key.to_string())) {
            return v;
        }
        let id = ValueId(self.values.len() as u32);
        self.values.push(ValueDef {
            ty,
            name: display.name.clone().unwrap_or_else(|| key.to_string()),
            color: display.color.clone(),
            declared: false,
        });
        self.value_ids.insert((ty, key.to_string()), id);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_names_are_one_machine() {
        let mut r = Registry::new(Hierarchy::builtin());
        let a = r.machine("node01.cluster.example", Some("cluster.example"));
        let b = r.machine("node01", None);
        let c = r.machine("node02.cluster.example", Some("cluster.example"));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(r.cluster_of_machine(a), Some("cluster.example"));
        assert_eq!(r.hosts_seen().len(), 3);
    }

    #[test]
    fn processes_and_threads_nest() {
        let mut r = Registry::new(Hierarchy::builtin());
        let m = r.machine("vm", None);
        let p = r.process(m, 10).unwrap();
        let t = r.thread(m, 10, 11).unwrap();
        assert_eq!(r.container(t).parent, Some(p));
        assert_eq!(r.container(p).parent, Some(m));
        assert_eq!(r.process(m, 10), Some(p));
    }
}
