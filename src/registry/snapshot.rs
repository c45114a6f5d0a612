//! The registry as a plan hands it to its tasks (`docs/scale.md`): what a
//! run had registered once every source was open, so that a task that
//! opens one source starts from the same names, hosts and ranks as the
//! whole run, and its containers get the same keys.
//!
//! Maps are written as sorted lists: the plan's bytes depend on nothing
//! but the inputs (a map's order depends on its per-run seed).

use super::{ContainerDef, HostSeen, MachineEntry, Name, Registry, TypeDef, TypeKind, ValueDef};
use crate::hierarchy::{Hierarchy, Role};
use crate::model::{ContainerId, ProcIds, TypeId, ValueId};
use serde::{Deserialize, Serialize};

/// A registry written out.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Snapshot {
    types: Vec<SType>,
    containers: Vec<SContainer>,
    values: Vec<(TypeId, String, Option<String>)>,
    grid: Option<ContainerId>,
    clusters: Vec<(String, ContainerId)>,
    machines: Vec<(ContainerId, u32)>,
    numbered: Vec<(ContainerId, TypeId, u64, ContainerId)>,
    named: Vec<(ContainerId, TypeId, String, ContainerId)>,
    /// The last link channel handed out.
    pub link_channels: u32,
    sub_types: Vec<(TypeId, TypeKind, String, TypeId)>,
    link_types: Vec<(Option<TypeId>, TypeId, TypeId, String, TypeId)>,
    links: Vec<SLinks>,
    value_ids: Vec<(TypeId, String, ValueId)>,
    hosts_seen: Vec<(String, ContainerId, u32)>,
}

/// The links resolved between two container types under a holder.
type SLinks = (
    Option<ContainerId>,
    TypeId,
    TypeId,
    Vec<(String, String, TypeId, ValueId)>,
);

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SType {
    kind: TypeKind,
    parent: Option<TypeId>,
    name: String,
    color: Option<String>,
    unit: Option<String>,
    role: Option<Role>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SContainer {
    ty: TypeId,
    parent: Option<ContainerId>,
    name: String,
    ids: ProcIds,
}

fn kind_order(k: TypeKind) -> (u8, u32, u32) {
    match k {
        TypeKind::Container => (0, 0, 0),
        TypeKind::State => (1, 0, 0),
        TypeKind::Variable => (2, 0, 0),
        TypeKind::Event => (3, 0, 0),
        TypeKind::Link { start, end } => (4, start.0, end.0),
    }
}

fn text(n: &Option<Name>) -> Option<String> {
    n.as_deref().map(str::to_string)
}

impl Snapshot {
    /// Every id refers to something held, and every parent comes before
    /// its child (no cycle): a plan file is an input like any other.
    fn well_formed(&self) -> bool {
        let (nt, nc, nv, nh) = (
            self.types.len(),
            self.containers.len(),
            self.values.len(),
            self.hosts_seen.len(),
        );
        let t_ok = |t: TypeId| (t.0 as usize) < nt;
        let c_ok = |c: ContainerId| (c.0 as usize) < nc;
        let v_ok = |v: ValueId| (v.0 as usize) < nv;
        let name_ok = |n: u32| n == super::NONE || (n as usize) < nh;
        let kind_ok = |k: TypeKind| match k {
            TypeKind::Link { start, end } => t_ok(start) && t_ok(end),
            _ => true,
        };
        self.types
            .iter()
            .enumerate()
            .all(|(i, t)| t.parent.is_none_or(|p| (p.0 as usize) < i) && kind_ok(t.kind))
            && self
                .containers
                .iter()
                .enumerate()
                .all(|(i, c)| t_ok(c.ty) && c.parent.is_none_or(|p| (p.0 as usize) < i))
            && self.values.iter().all(|v| t_ok(v.0))
            && self.grid.is_none_or(c_ok)
            && self.clusters.iter().all(|c| c_ok(c.1))
            && self.machines.iter().all(|m| c_ok(m.0) && name_ok(m.1))
            && self.hosts_seen.iter().all(|h| c_ok(h.1) && name_ok(h.2))
            && self
                .numbered
                .iter()
                .all(|n| c_ok(n.0) && t_ok(n.1) && c_ok(n.3))
            && self
                .named
                .iter()
                .all(|n| c_ok(n.0) && t_ok(n.1) && c_ok(n.3))
            && self
                .sub_types
                .iter()
                .all(|s| t_ok(s.0) && kind_ok(s.1) && t_ok(s.3))
            && self
                .link_types
                .iter()
                .all(|l| l.0.is_none_or(t_ok) && t_ok(l.1) && t_ok(l.2) && t_ok(l.4))
            && self.links.iter().all(|l| {
                l.0.is_none_or(c_ok)
                    && t_ok(l.1)
                    && t_ok(l.2)
                    && l.3.iter().all(|x| t_ok(x.2) && v_ok(x.3))
            })
            && self.value_ids.iter().all(|v| t_ok(v.0) && v_ok(v.2))
    }
}

impl Registry {
    /// The last link channel handed out.
    pub fn link_channels(&self) -> u32 {
        self.link_channels
    }

    /// Hands out channels after `n` next (a plan's task numbers its
    /// source's channels as the whole run did).
    pub fn set_link_channels(&mut self, n: u32) {
        self.link_channels = n;
    }

    /// What the registry holds, to start another from.
    pub fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot {
            types: self
                .types
                .iter()
                .map(|t| SType {
                    kind: t.kind,
                    parent: t.parent,
                    name: t.name.to_string(),
                    color: text(&t.color),
                    unit: text(&t.unit),
                    role: t.role,
                })
                .collect(),
            containers: self
                .containers
                .iter()
                .map(|c| SContainer {
                    ty: c.ty,
                    parent: c.parent,
                    name: c.name.to_string(),
                    ids: c.ids,
                })
                .collect(),
            values: self
                .values
                .iter()
                .map(|v| (v.ty, v.name.clone(), v.color.clone()))
                .collect(),
            grid: self.grid,
            clusters: self.clusters.iter().map(|(k, &v)| (k.clone(), v)).collect(),
            machines: self.machines.iter().map(|m| (m.id, m.first_name)).collect(),
            numbered: self
                .numbered
                .iter()
                .map(|(&(p, t, n), &c)| (p, t, n, c))
                .collect(),
            named: self
                .named
                .iter()
                .map(|((p, t, n), &c)| (*p, *t, n.clone(), c))
                .collect(),
            link_channels: self.link_channels,
            sub_types: self
                .sub_types
                .iter()
                .flat_map(|(&(p, k), m)| m.iter().map(move |(n, &t)| (p, k, n.to_string(), t)))
                .collect(),
            link_types: self
                .link_types
                .iter()
                .map(|((p, a, b, n), &t)| (*p, *a, *b, n.clone(), t))
                .collect(),
            links: self
                .links
                .iter()
                .map(|(&(c, a, b), l)| {
                    let l = l
                        .iter()
                        .map(|(n, v, t, x)| (n.to_string(), v.to_string(), *t, *x));
                    (c, a, b, l.collect())
                })
                .collect(),
            value_ids: self
                .value_ids
                .iter()
                .map(|((t, n), &v)| (*t, n.clone(), v))
                .collect(),
            hosts_seen: self
                .hosts_seen
                .iter()
                .map(|h| (h.name.to_string(), h.machine, h.next_name))
                .collect(),
        };
        s.clusters.sort();
        s.numbered.sort();
        s.named.sort();
        s.sub_types
            .sort_by(|a, b| (a.0, kind_order(a.1), &a.2).cmp(&(b.0, kind_order(b.1), &b.2)));
        s.link_types.sort();
        s.links.sort_by_key(|a| (a.0, a.1, a.2));
        s.value_ids.sort();
        s
    }

    /// A registry for `hierarchy` holding what `snap` holds. Refused when
    /// the snapshot was taken under another hierarchy (its level types
    /// differ) or refers to an id it does not hold.
    pub fn from_snapshot(hierarchy: Hierarchy, snap: &Snapshot) -> Result<Registry, String> {
        let mut r = Registry::new(hierarchy);
        let levels = r.types.len();
        let same_levels = snap.types.len() >= levels
            && r.types.iter().zip(&snap.types).all(|(a, b)| {
                a.kind == b.kind && a.parent == b.parent && *a.name == b.name && a.role == b.role
            });
        if !same_levels {
            return Err("the plan was made with another hierarchy".into());
        }
        if !snap.well_formed() {
            return Err("the plan's registry refers to an id it does not hold".into());
        }
        r.types = snap
            .types
            .iter()
            .map(|t| TypeDef {
                kind: t.kind,
                parent: t.parent,
                name: t.name.as_str().into(),
                color: t.color.as_deref().map(Name::from),
                unit: t.unit.as_deref().map(Name::from),
                role: t.role,
            })
            .collect();
        r.containers = snap
            .containers
            .iter()
            .map(|c| ContainerDef {
                ty: c.ty,
                parent: c.parent,
                name: c.name.as_str().into(),
                ids: c.ids,
            })
            .collect();
        r.values = snap
            .values
            .iter()
            .map(|(ty, name, color)| ValueDef {
                ty: *ty,
                name: name.clone(),
                color: color.clone(),
            })
            .collect();
        r.grid = snap.grid;
        r.clusters = snap.clusters.iter().cloned().collect();
        r.machines = snap
            .machines
            .iter()
            .map(|&(id, first_name)| MachineEntry { id, first_name })
            .collect();
        r.numbered = snap
            .numbered
            .iter()
            .map(|&(p, t, n, c)| ((p, t, n), c))
            .collect();
        r.named = snap
            .named
            .iter()
            .map(|(p, t, n, c)| ((*p, *t, n.clone()), *c))
            .collect();
        r.link_channels = snap.link_channels;
        for (p, k, n, t) in &snap.sub_types {
            let m = r.sub_types.entry((*p, *k)).or_default();
            m.insert(Name::from(n.as_str()), *t);
        }
        r.link_types = snap
            .link_types
            .iter()
            .map(|(p, a, b, n, t)| ((*p, *a, *b, n.clone()), *t))
            .collect();
        for (c, a, b, l) in &snap.links {
            let l = l
                .iter()
                .map(|(n, v, t, x)| (Name::from(n.as_str()), Name::from(v.as_str()), *t, *x));
            r.links.insert((*c, *a, *b), l.collect());
        }
        r.value_ids = snap
            .value_ids
            .iter()
            .map(|(t, n, v)| ((*t, n.clone()), *v))
            .collect();
        // Each name filed under its keys in the order it was first seen,
        // as `machine` filed it.
        let index: std::collections::HashMap<ContainerId, u32> = r
            .machines
            .iter()
            .enumerate()
            .map(|(i, m)| (m.id, i as u32))
            .collect();
        for (name, machine, next_name) in &snap.hosts_seen {
            let name: Name = name.as_str().into();
            if let Some(&i) = index.get(machine) {
                for k in r.hierarchy.identity.keys(&name) {
                    let key = if k == &*name {
                        name.clone()
                    } else {
                        Name::from(k)
                    };
                    r.machine_keys.insert(key, i);
                }
            }
            r.hosts_seen.push(HostSeen {
                name,
                machine: *machine,
                next_name: *next_name,
            });
        }
        Ok(r)
    }
}
