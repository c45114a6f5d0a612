//! The archive's global definitions, numbered as the events use them and
//! written at the end (the locations' event counts are known then).

use super::ffi::{self, Handle, Lib};
use crate::model::{ContainerId, TypeId, ValueId};
use crate::sink::actors::{Actor, Actors};
use crate::sink::Catalogue;
use foldhash::HashMap;
use std::ffi::CString;
use std::io;

/// The one communicator of every location that sends or receives.
pub const COMM: u32 = 0;

/// Definitions by the numbers the events use.
#[derive(Default)]
pub struct Defs {
    strings: Vec<String>,
    string_of: HashMap<String, u32>,
    /// System tree nodes: name, class, parent.
    tree: Vec<(u32, u32, u32)>,
    tree_of: HashMap<ContainerId, u32>,
    /// Location groups: name, system tree node.
    groups: Vec<(u32, u32)>,
    group_of: HashMap<(u32, u32), u32>,
    /// Locations: name, group.
    locations: Vec<(u32, u32)>,
    regions: Vec<(u32, u32)>,
    metrics: Vec<(u32, u32)>,
    parameters: Vec<u32>,
    /// Locations that send or receive, in rank order.
    ranks: Vec<u64>,
    rank_of: HashMap<u64, u32>,
}

impl Defs {
    fn string(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.string_of.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_string());
        self.string_of.insert(s.to_string(), i);
        i
    }

    /// The system tree down to the node of the actor `a`, new parts made.
    pub fn learn<C: Catalogue + ?Sized>(&mut self, cat: &C, actors: &Actors, a: Actor) {
        if self.tree.is_empty() {
            let (name, class) = (self.string("run"), self.string("grid"));
            self.tree.push((name, class, ffi::UNDEFINED_U32));
        }
        let node = actors.nodes[a.node as usize - 1];
        if self.tree_of.contains_key(&node) {
            return;
        }
        let mut chain = Vec::new();
        let mut at = Some(node);
        while let Some(c) = at.filter(|c| *c != ContainerId::ROOT && !self.tree_of.contains_key(c))
        {
            chain.push(c);
            at = cat.container(c).parent;
        }
        for c in chain.into_iter().rev() {
            let def = cat.container(c);
            let parent = def
                .parent
                .and_then(|p| self.tree_of.get(&p).copied())
                .unwrap_or(0);
            let class = cat.type_def(def.ty).role.map_or_else(
                || cat.type_def(def.ty).name.to_string(),
                |r| r.as_str().to_string(),
            );
            let (name, class) = (self.string(&def.name), self.string(&class));
            self.tree_of.insert(c, self.tree.len() as u32);
            self.tree.push((name, class, parent));
        }
    }

    /// A location of the container `c` (of its row `ty`, when not its
    /// first), in its task's location group.
    pub fn location<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        actors: &Actors,
        c: ContainerId,
        id: u64,
        ty: Option<TypeId>,
    ) {
        let Some(a) = actors.get(c) else { return };
        let group = match self.group_of.get(&(a.app, a.task)) {
            Some(&g) => g,
            None => {
                let task = &actors.apps[a.app as usize - 1].tasks[a.task as usize - 1];
                let node = actors.nodes[task.node as usize - 1];
                let stn = self.tree_of.get(&node).copied().unwrap_or(0);
                let name = self.string(&Actors::path(cat, task.container));
                let g = self.groups.len() as u32;
                self.groups.push((name, stn));
                self.group_of.insert((a.app, a.task), g);
                g
            }
        };
        let mut name = cat.container(c).name.to_string();
        if let Some(ty) = ty {
            name = format!("{name} ({})", cat.type_def(ty).name);
        }
        let name = self.string(&name);
        debug_assert_eq!(id as usize, self.locations.len());
        self.locations.push((name, group));
    }

    /// The next region: a state value (the replay declares each once).
    pub fn region<C: Catalogue + ?Sized>(&mut self, cat: &C, v: ValueId) -> u32 {
        let def = cat.value(v);
        let (name, row) = (
            self.string(&def.name),
            self.string(&cat.type_def(def.ty).name),
        );
        self.regions.push((name, row));
        self.regions.len() as u32 - 1
    }

    /// The next metric (a class of one member): a variable type.
    pub fn metric<C: Catalogue + ?Sized>(&mut self, cat: &C, ty: TypeId) -> u32 {
        let def = cat.type_def(ty);
        let (name, unit) = (
            self.string(&def.name),
            self.string(def.unit.as_deref().unwrap_or("")),
        );
        self.metrics.push((name, unit));
        self.metrics.len() as u32 - 1
    }

    /// The next parameter: an event type.
    pub fn parameter<C: Catalogue + ?Sized>(&mut self, cat: &C, ty: TypeId) -> u32 {
        let name = self.string(&cat.type_def(ty).name);
        self.parameters.push(name);
        self.parameters.len() as u32 - 1
    }

    /// The string of a value's name.
    pub fn value_string<C: Catalogue + ?Sized>(&mut self, cat: &C, v: ValueId) -> u32 {
        self.string(&cat.value(v).name)
    }

    /// A location's rank in the communicator.
    pub fn rank(&mut self, loc: u64) -> u32 {
        if let Some(&r) = self.rank_of.get(&loc) {
            return r;
        }
        let r = self.ranks.len() as u32;
        self.ranks.push(loc);
        self.rank_of.insert(loc, r);
        r
    }

    /// Every global definition, referenced ones first.
    pub fn write(
        &mut self,
        lib: &Lib,
        archive: Handle,
        offset: u64,
        length: u64,
        events: &[u64],
    ) -> io::Result<()> {
        let comm_name = self.string("messages");
        // SAFETY: the archive is open; every string and array lives
        // through its call.
        unsafe {
            let w = (lib.global_def_writer)(archive);
            if w.is_null() {
                return Err(io::Error::other("OTF2: no global definition writer"));
            }
            lib.check(
                (lib.clock_properties)(w, 1_000_000_000, offset, length, offset),
                "clock",
            )?;
            for (i, s) in self.strings.iter().enumerate() {
                let c = CString::new(s.replace('\0', " ")).map_err(io::Error::other)?;
                lib.check((lib.string)(w, i as u32, c.as_ptr()), "string")?;
            }
            for (i, &(name, class, parent)) in self.tree.iter().enumerate() {
                lib.check(
                    (lib.system_tree_node)(w, i as u32, name, class, parent),
                    "system tree",
                )?;
            }
            for (i, &(name, stn)) in self.groups.iter().enumerate() {
                let g = ffi::LOCATION_GROUP_PROCESS;
                lib.check(
                    (lib.location_group)(w, i as u32, name, g, stn, ffi::UNDEFINED_U32),
                    "location group",
                )?;
            }
            for (i, &(name, group)) in self.locations.iter().enumerate() {
                let n = events.get(i).copied().unwrap_or(0);
                lib.check(
                    (lib.location)(w, i as u64, name, ffi::LOCATION_CPU_THREAD, n, group),
                    "location",
                )?;
            }
            for (i, &(name, row)) in self.regions.iter().enumerate() {
                let (role, paradigm, flags, none) = (
                    ffi::REGION_ROLE_FUNCTION,
                    ffi::PARADIGM_USER,
                    ffi::REGION_FLAG_NONE,
                    ffi::UNDEFINED_U32,
                );
                lib.check(
                    (lib.region)(
                        w, i as u32, name, name, row, role, paradigm, flags, none, 0, 0,
                    ),
                    "region",
                )?;
            }
            if !self.ranks.is_empty() {
                let n = self.ranks.len() as u32;
                let none = ffi::UNDEFINED_U32;
                let (p, f) = (ffi::PARADIGM_MPI, ffi::GROUP_FLAG_NONE);
                lib.check(
                    (lib.group)(
                        w,
                        0,
                        comm_name,
                        ffi::GROUP_COMM_LOCATIONS,
                        p,
                        f,
                        n,
                        self.ranks.as_ptr(),
                    ),
                    "group",
                )?;
                let members: Vec<u64> = (0..n as u64).collect();
                lib.check(
                    (lib.group)(
                        w,
                        1,
                        comm_name,
                        ffi::GROUP_COMM_GROUP,
                        p,
                        f,
                        n,
                        members.as_ptr(),
                    ),
                    "group",
                )?;
                lib.check(
                    (lib.comm)(w, COMM, comm_name, 1, none, ffi::COMM_FLAG_NONE),
                    "communicator",
                )?;
            }
            for (i, &(name, unit)) in self.metrics.iter().enumerate() {
                let (t, m, v, b) = (
                    ffi::METRIC_TYPE_OTHER,
                    ffi::METRIC_ABSOLUTE_NEXT,
                    ffi::TYPE_DOUBLE,
                    ffi::BASE_DECIMAL,
                );
                lib.check(
                    (lib.metric_member)(w, i as u32, name, name, t, m, v, b, 0, unit),
                    "metric member",
                )?;
                let members = [i as u32];
                let (o, k) = (ffi::METRIC_ASYNCHRONOUS, ffi::RECORDER_KIND_ABSTRACT);
                lib.check(
                    (lib.metric_class)(w, i as u32, 1, members.as_ptr(), o, k),
                    "metric class",
                )?;
            }
            for (i, &name) in self.parameters.iter().enumerate() {
                lib.check(
                    (lib.parameter)(w, i as u32, name, ffi::PARAMETER_STRING),
                    "parameter",
                )?;
            }
        }
        Ok(())
    }
}
