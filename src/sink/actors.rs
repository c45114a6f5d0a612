//! The process model of the viewers that draw programs rather than
//! containers (Paraver, OTF2 tools): which container is a thread of which
//! task of which application, on which node. Read from the hierarchy's
//! roles, numbered in the order things first carry data, so a format
//! that writes as it goes never renumbers.
//!
//! - A container of role `process` is a task of the application of
//!   processes; what it carries itself is one of its threads, and so is
//!   every container under it (role `thread`, or any level below).
//! - Any other container that carries data (a machine's metrics, a
//!   cluster's) is a task of its own, of one thread, in the application
//!   of monitors.
//! - A node is the machine (role `machine`) a task is on; a task above
//!   every machine is a node of its own.

use super::Catalogue;
use crate::hierarchy::Role;
use crate::model::ContainerId;
// foldhash: looked up for every record a viewer format writes.
use foldhash::HashMap;

/// Where one container's data goes: numbers from 1, as Paraver counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Actor {
    /// Application.
    pub app: u32,
    /// Task within the application.
    pub task: u32,
    /// Thread within the task.
    pub thread: u32,
    /// Node (machine).
    pub node: u32,
    /// Its number among all threads, from 0, in first-use order.
    pub global: u32,
}

/// The two classes of tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppClass {
    /// Processes and their threads.
    Processes,
    /// Containers that are no process: machines, clusters.
    Monitors,
}

impl AppClass {
    /// Its name in a viewer.
    pub fn name(self) -> &'static str {
        match self {
            AppClass::Processes => "processes",
            AppClass::Monitors => "monitors",
        }
    }
}

/// A task: the container it stands for, its node, its threads.
#[derive(Debug, Clone)]
pub struct TaskDef {
    /// The process (or monitored container).
    pub container: ContainerId,
    /// Its node, from 1.
    pub node: u32,
    /// Its threads' containers, in thread order.
    pub threads: Vec<ContainerId>,
}

/// An application: its class and tasks.
#[derive(Debug, Clone)]
pub struct AppDef {
    /// What its tasks are.
    pub class: AppClass,
    /// Its tasks, in task order.
    pub tasks: Vec<TaskDef>,
}

/// The process model built so far.
#[derive(Default)]
pub struct Actors {
    /// By container number: looked up for every event.
    of: Vec<Option<Actor>>,
    task_of: HashMap<ContainerId, (u32, u32)>,
    node_of: HashMap<ContainerId, u32>,
    /// Applications, in application order.
    pub apps: Vec<AppDef>,
    /// Nodes' containers, in node order.
    pub nodes: Vec<ContainerId>,
    /// Threads' containers, in global order.
    pub threads: Vec<ContainerId>,
}

fn role<C: Catalogue + ?Sized>(cat: &C, c: ContainerId) -> Option<Role> {
    cat.type_def(cat.container(c).ty).role
}

/// `c` or its nearest ancestor of role `r`.
fn nearest<C: Catalogue + ?Sized>(cat: &C, c: ContainerId, r: Role) -> Option<ContainerId> {
    let mut at = Some(c);
    while let Some(x) = at.filter(|&x| x != ContainerId::ROOT) {
        if role(cat, x) == Some(r) {
            return Some(x);
        }
        at = cat.container(x).parent;
    }
    None
}

impl Actors {
    /// The actor `c` is, numbered now if it carries data for the first
    /// time. `None` for the root, which is no one's thread.
    pub fn of<C: Catalogue + ?Sized>(&mut self, cat: &C, c: ContainerId) -> Option<Actor> {
        if c == ContainerId::ROOT {
            return None;
        }
        if let Some(a) = self.get(c) {
            return Some(a);
        }
        let (owner, class) = match nearest(cat, c, Role::Process) {
            Some(p) => (p, AppClass::Processes),
            None => (c, AppClass::Monitors),
        };
        let node_container = nearest(cat, c, Role::Machine).unwrap_or(owner);
        let node = self.node(node_container);
        let (app, task) = match self.task_of.get(&owner) {
            Some(&at) => at,
            None => {
                let app = match self.apps.iter().position(|a| a.class == class) {
                    Some(i) => i,
                    None => {
                        self.apps.push(AppDef {
                            class,
                            tasks: Vec::new(),
                        });
                        self.apps.len() - 1
                    }
                };
                let tasks = &mut self.apps[app].tasks;
                tasks.push(TaskDef {
                    container: owner,
                    node,
                    threads: Vec::new(),
                });
                let at = (app as u32 + 1, tasks.len() as u32);
                self.task_of.insert(owner, at);
                at
            }
        };
        let threads = &mut self.apps[app as usize - 1].tasks[task as usize - 1].threads;
        threads.push(c);
        let actor = Actor {
            app,
            task,
            thread: threads.len() as u32,
            // A thread runs where its task does (Paraver lists one node a
            // task).
            node: self.apps[app as usize - 1].tasks[task as usize - 1].node,
            global: self.threads.len() as u32,
        };
        self.threads.push(c);
        let i = c.0 as usize;
        if self.of.len() <= i {
            self.of.resize(i + 1, None);
        }
        self.of[i] = Some(actor);
        Some(actor)
    }

    /// The actor `c` already is.
    pub fn get(&self, c: ContainerId) -> Option<Actor> {
        self.of.get(c.0 as usize).copied().flatten()
    }

    fn node(&mut self, c: ContainerId) -> u32 {
        if let Some(&n) = self.node_of.get(&c) {
            return n;
        }
        self.nodes.push(c);
        let n = self.nodes.len() as u32;
        self.node_of.insert(c, n);
        n
    }

    /// A container's name with its ancestors' up to (not including) the
    /// root, joined by `/`: unique where a name alone is not.
    pub fn path<C: Catalogue + ?Sized>(cat: &C, c: ContainerId) -> String {
        let mut names = Vec::new();
        let mut at = Some(c);
        while let Some(x) = at.filter(|&x| x != ContainerId::ROOT) {
            let def = cat.container(x);
            names.push(def.name.clone());
            at = def.parent;
        }
        names.reverse();
        names.join("/")
    }
}
