//! The unifier: owns the unified hierarchy of the run (the thesis'
//! "integration controller", section 4.2.1). Converters ask it for the
//! container of a host, a process or a thread, and for types and values; it
//! applies the hierarchy's identity rules and cluster assignment and hands
//! out ids. The writer declares what it registered lazily, at first use.

use crate::hierarchy::{Display, Hierarchy, Role};
use crate::identity::KeyIndex;
pub use crate::model::ProcIds;
use crate::model::{ContainerId, TypeId, ValueId};
// foldhash: a fast hash with a random seed per run, so crafted names
// cannot make lookups quadratic (SipHash was 13% of a Ganglia run).
use foldhash::{HashMap, HashMapExt};
use std::sync::Arc;

mod snapshot;
pub use snapshot::Snapshot;

/// A link resolved by [`Registry::link`]: its name, value key, type and value.
type ResolvedLink = (Name, Name, TypeId, ValueId);

/// A name stored once and shared by every table that refers to it: a run
/// with a million hosts keeps each host name a single time.
pub type Name = Arc<str>;

/// Nature of a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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
    pub name: Name,
    /// Color, for variable types.
    pub color: Option<Name>,
    /// Unit, for variable types whose source says it (`%`, `KB`,
    /// `bytes/sec`, a PCP descriptor's units); none where it says none.
    pub unit: Option<Name>,
    /// The hierarchy level a container type stands for.
    pub role: Option<crate::hierarchy::Role>,
}

/// A registered container.
#[derive(Debug, Clone)]
pub struct ContainerDef {
    /// Its type.
    pub ty: TypeId,
    /// Parent container; `None` = the root container `0`.
    pub parent: Option<ContainerId>,
    /// Name shown by Pajé.
    pub name: Name,
    /// What a process or thread container is to the OS and to MPI.
    pub ids: ProcIds,
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
}

/// A host name seen in an input and the Machine it was unified to.
#[derive(Debug, Clone)]
pub struct HostSeen {
    /// The name as the input spelled it.
    pub name: Name,
    /// The Machine container.
    pub machine: ContainerId,
    /// The next name of the same Machine in `hosts_seen` (`NONE` ends the
    /// chain): most machines have one name, and a chain costs 4 bytes
    /// where a list per machine costs a heap block.
    next_name: u32,
}

const NONE: u32 = u32::MAX;

/// A Machine and the first of its names in `hosts_seen`.
#[derive(Clone, Copy)]
struct MachineEntry {
    id: ContainerId,
    first_name: u32,
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
    machines: Vec<MachineEntry>,
    /// `machines` positions by [`HostIdentity::keys`] of their names.
    machine_keys: KeyIndex,
    numbered: HashMap<(ContainerId, TypeId, u64), ContainerId>,
    named: HashMap<(ContainerId, TypeId, String), ContainerId>,
    link_channels: u32,
    /// Types under a parent by kind, then by key: the two-level map finds
    /// a key without building one.
    sub_types: HashMap<(TypeId, TypeKind), HashMap<Name, TypeId>>,
    link_types: HashMap<(Option<TypeId>, TypeId, TypeId, String), TypeId>,
    /// Resolved links per (holding container, start and end container
    /// types): (link name, value key, type, value), a short list.
    links: HashMap<(Option<ContainerId>, TypeId, TypeId), Vec<ResolvedLink>>,
    value_ids: HashMap<(TypeId, String), ValueId>,
    hosts_seen: Vec<HostSeen>,
    /// Non-fatal remarks for the summary.
    pub warnings: Vec<String>,
}

pub use crate::identity::natural_cmp;

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
            machine_keys: KeyIndex::default(),
            numbered: HashMap::new(),
            named: HashMap::new(),
            link_channels: 0,
            sub_types: HashMap::new(),
            link_types: HashMap::new(),
            links: HashMap::new(),
            value_ids: HashMap::new(),
            hosts_seen: Vec::new(),
            warnings: Vec::new(),
        };
        let mut parent = None;
        for level in me.hierarchy.levels.clone() {
            let id = me.push_type(TypeDef {
                kind: TypeKind::Container,
                parent,
                name: level.name.into(),
                color: None,
                unit: None,
                role: Some(level.role),
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

    /// A container by id.
    pub fn container(&self, id: ContainerId) -> &ContainerDef {
        &self.containers[id.0 as usize]
    }

    /// A value by id.
    pub fn value(&self, id: ValueId) -> &ValueDef {
        &self.values[id.0 as usize]
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
        name: impl Into<Name>,
    ) -> ContainerId {
        let id = ContainerId(self.containers.len() as u32);
        let name = name.into();
        self.containers.push(ContainerDef {
            ty,
            parent,
            name,
            ids: ProcIds::default(),
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
        // Every name is filed under itself among its keys, so a name seen
        // before is found on its own key's chains.
        for &i in self.machine_keys.get(host) {
            let mut n = self.machines[i as usize].first_name;
            while n != NONE {
                let seen = &self.hosts_seen[n as usize];
                if &*seen.name == host {
                    return seen.machine;
                }
                n = seen.next_name;
            }
        }
        let ids = &self.hierarchy.identity;
        let mut matches: Vec<u32> = ids
            .keys(host)
            .flat_map(|k| self.machine_keys.get(k))
            .copied()
            .filter(|&i| {
                let mut n = self.machines[i as usize].first_name;
                while n != NONE {
                    let seen = &self.hosts_seen[n as usize];
                    if ids.same(&seen.name, host) {
                        return true;
                    }
                    n = seen.next_name;
                }
                false
            })
            .collect();
        matches.sort_unstable();
        matches.dedup();
        let name: Name = Arc::from(host);
        let index = matches
            .first()
            .copied()
            .unwrap_or(self.machines.len() as u32);
        for k in ids.keys(host) {
            let key = if k == host {
                name.clone()
            } else {
                Arc::from(k)
            };
            self.machine_keys.insert(key, index);
        }
        let seen_at = self.hosts_seen.len() as u32;
        let (id, next_name) = if let Some(&first) = matches.first() {
            let entry = &mut self.machines[first as usize];
            let next = std::mem::replace(&mut entry.first_name, seen_at);
            let m = entry.id;
            if matches.len() > 1 {
                self.warnings.push(format!(
                    "host `{host}` could be any of {} machines; unified with `{}`",
                    matches.len(),
                    self.containers[m.0 as usize].name
                ));
            }
            (m, next)
        } else {
            let cluster = self
                .hierarchy
                .cluster_of(host)
                .or(cluster_hint)
                .unwrap_or(&self.hierarchy.default_cluster)
                .to_string();
            let parent = self.parent_for_machine(&cluster);
            let preferred = self.hierarchy.identity.preferred(host);
            let display = if preferred == host {
                name.clone()
            } else {
                Arc::from(preferred)
            };
            // The machine level always exists: the hierarchy loader refuses
            // a file without it.
            let ty = self.level_type(Role::Machine).unwrap_or(TypeId(0));
            let m = self.push_container(ty, parent, display);
            self.machines.push(MachineEntry {
                id: m,
                first_name: seen_at,
            });
            (m, NONE)
        };
        self.hosts_seen.push(HostSeen {
            name,
            machine: id,
            next_name,
        });
        id
    }

    /// The containers registered so far in the order their rows should
    /// show: Machines in natural order of their names (node2 before
    /// node10), then every other container in registration order (the
    /// ranks of an MPI log are registered 0..n). Called when the sources
    /// are open, it covers the members they tell up front.
    pub fn up_front_order(&self) -> Vec<ContainerId> {
        let machine = self.level_type(Role::Machine);
        let ids = (0..self.containers.len() as u32).map(ContainerId);
        let (mut machines, rest): (Vec<ContainerId>, Vec<ContainerId>) =
            ids.partition(|&c| Some(self.container(c).ty) == machine);
        machines.sort_by(|&a, &b| natural_cmp(&self.container(a).name, &self.container(b).name));
        machines.extend(rest);
        machines
    }

    /// The Cluster container a machine sits in, if the hierarchy has one.
    pub fn cluster_of_machine(&self, machine: ContainerId) -> Option<&str> {
        let parent = self.container(machine).parent?;
        let p = self.container(parent);
        (Some(p.ty) == self.level_type(Role::Cluster)).then_some(&*p.name)
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
        let c = self.numbered_child(machine, ty, u64::from(pid));
        self.containers[c.0 as usize].ids.pid = Some(i64::from(pid));
        Some(c)
    }

    /// The container of thread `tid` of process `pid`: a Thread under the
    /// Process when the hierarchy has threads, else the task's own Process.
    pub fn thread(&mut self, machine: ContainerId, pid: u32, tid: u32) -> Option<ContainerId> {
        let c = match self.level_type(Role::Thread) {
            Some(ty) => {
                let p = self.process(machine, pid)?;
                self.numbered_child(p, ty, u64::from(tid))
            }
            // The task's own container: its pid is its process's.
            None => self.process(machine, tid)?,
        };
        let ids = &mut self.containers[c.0 as usize].ids;
        ids.pid = Some(i64::from(pid));
        ids.tid = Some(i64::from(tid));
        Some(c)
    }

    /// Process container `c` runs MPI rank (or DECK node) `rank`; another
    /// level's (a machine where the hierarchy has no processes) is left.
    pub fn set_rank(&mut self, c: ContainerId, rank: i64) {
        let ty = self.container(c).ty;
        if self.type_def(ty).role == Some(Role::Process) {
            self.containers[c.0 as usize].ids.rank = Some(rank);
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

    /// Renames a container while the sources open, before anything is
    /// written (an MPI rank's Process shows its rank beside its pid).
    pub fn rename(&mut self, c: ContainerId, name: &str) {
        self.containers[c.0 as usize].name = name.into();
    }

    /// The innermost container holding both `a` and `b` (`None` = root).
    pub fn common_ancestor(&self, a: ContainerId, b: ContainerId) -> Option<ContainerId> {
        // Climbed level with level, without a list: a link end asks for
        // every message.
        let depth = |mut c: ContainerId| {
            let mut d = 0usize;
            while let Some(p) = self.container(c).parent {
                c = p;
                d += 1;
            }
            d
        };
        let (mut x, mut y) = (a, b);
        let (mut dx, mut dy) = (depth(x), depth(y));
        while dx > dy {
            x = self.container(x).parent?;
            dx -= 1;
        }
        while dy > dx {
            y = self.container(y).parent?;
            dy -= 1;
        }
        while x != y {
            x = self.container(x).parent?;
            y = self.container(y).parent?;
        }
        Some(x)
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
            name: name.into(),
            color: None,
            unit: None,
            role: None,
        });
        self.link_types.insert(key, t);
        t
    }

    /// The one link resolver of the sources: the container that holds an
    /// arrow from `from` to `to` (their nearest common ancestor, or the
    /// root), its link type `name` and its value `value` (shown as
    /// `display` says).
    pub fn link(
        &mut self,
        from: ContainerId,
        to: ContainerId,
        name: &str,
        value: &str,
        display: &Display,
    ) -> (ContainerId, TypeId, ValueId) {
        let anc = self.common_ancestor(from, to);
        let (fty, tty) = (self.container(from).ty, self.container(to).ty);
        let holder = anc.unwrap_or(ContainerId::ROOT);
        let found = self.links.get(&(anc, fty, tty)).and_then(|l| {
            l.iter()
                .find(|(n, v, _, _)| &**n == name && &**v == value)
                .map(|&(_, _, t, v)| (t, v))
        });
        if let Some((t, v)) = found {
            return (holder, t, v);
        }
        let parent = anc.map(|c| self.container(c).ty);
        let ty = self.link_type(parent, fty, tty, name);
        let v = self.value_of(ty, value, display);
        self.links
            .entry((anc, fty, tty))
            .or_default()
            .push((name.into(), value.into(), ty, v));
        (holder, ty, v)
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

    /// Records the unit of variable type `ty`, if it has none yet (the
    /// first source to say it wins; a variant keeps its original's).
    pub fn set_unit(&mut self, ty: TypeId, unit: &str) {
        let unit = unit.trim();
        if let Some(def) = self.types.get_mut(ty.0 as usize) {
            if def.unit.is_none() && !unit.is_empty() {
                def.unit = Some(unit.into());
            }
        }
    }

    /// A variable type beside `ty` for the series of another source,
    /// named `NAME (label)`: two sources setting one variable of one
    /// container would interleave their values in one row.
    pub fn variable_variant(&mut self, ty: TypeId, label: &str) -> TypeId {
        let def = self.type_def(ty).clone();
        let parent = def.parent.unwrap_or(TypeId(0));
        // A key no metric name has (a control character), so a variant
        // never meets a real metric.
        let key = format!("{}\u{1f}{label}", def.name);
        let display = Display {
            name: Some(format!("{} ({label})", def.name)),
            color: def.color.as_deref().map(str::to_string),
        };
        self.sub_type(parent, TypeKind::Variable, &key, Some(&display))
    }

    /// The type `key` of `kind` under `parent`, if it was made.
    pub fn find_sub_type(&self, parent: TypeId, kind: TypeKind, key: &str) -> Option<TypeId> {
        self.sub_types.get(&(parent, kind))?.get(key).copied()
    }

    fn sub_type(
        &mut self,
        parent: TypeId,
        kind: TypeKind,
        key: &str,
        display: Option<&Display>,
    ) -> TypeId {
        if let Some(t) = self.find_sub_type(parent, kind, key) {
            return t;
        }
        let key: Name = key.into();
        let name = match display.and_then(|d| d.name.as_deref()) {
            Some(n) if n != &*key => n.into(),
            _ => key.clone(),
        };
        let color = match kind {
            TypeKind::Variable => {
                // The palette color by the type's key, not its place in
                // the order types are made: a task of a plan makes them
                // in another order than the whole run.
                Some(match display.and_then(|d| d.color.as_deref()) {
                    Some(c) => c.into(),
                    None => crate::color::pick(&crate::color::VARIABLES, key.as_bytes()).into(),
                })
            }
            _ => None,
        };
        let t = self.push_type(TypeDef {
            kind,
            parent: Some(parent),
            name,
            color,
            unit: None,
            role: None,
        });
        self.sub_types
            .entry((parent, kind))
            .or_default()
            .insert(key, t);
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
        });
        self.value_ids.insert((ty, key.to_string()), id);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_reads_numbers_as_numbers() {
        let mut v = vec!["node10", "node2", "node01", "athlon02", "node1"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["athlon02", "node01", "node1", "node2", "node10"]);
    }

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
