//! Kernel `.os` recording → OS states (thesis table C.7: TASK_RUNNING and
//! TASK_INTERRUPTIBLE become `PajeSetState` on the task's OS row).
//!
//! A task is a Process container under its Machine, or a Thread under its
//! Process when a `# thread <tid> <pid>` header line says so
//! (docs/formats.md §3). Times are on the described host's clock.

use crate::error::{Error, Result};
use crate::hierarchy::Role;
use crate::model::{ContainerId, Op, TypeId, ValueId};
use crate::registry::Registry;
use crate::source::{Converted, Converter, SourceStats, Timeline};
use crate::timeline::Clock;
use integrador_sched::{OsKind, OsReader};
use std::collections::HashMap;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// Converts an `.os` file.
pub struct OsSource {
    path: PathBuf,
    reader: OsReader<BufReader<crate::input::Reader>>,
    machine: ContainerId,
    thread_of: HashMap<u32, u32>,
    rows: HashMap<u32, (ContainerId, ValueId, ValueId, TypeId)>,
    /// The hierarchy's `[os]` section, taken once per file.
    os: crate::hierarchy::OsConfig,
}

/// The host an `.os` file describes: its `# host` line, else the file stem.
pub fn host_of(path: &Path, header_host: Option<&str>) -> String {
    header_host.map(str::to_string).unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    })
}

impl OsSource {
    /// Opens `path`; `clock_of` gives the host's clock, `None` = uncorrected.
    pub fn open(
        path: &Path,
        window: i64,
        reg: &mut Registry,
        clock_of: &mut dyn FnMut(&str) -> Option<Clock>,
    ) -> Result<Converted<OsSource>> {
        let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
        let reader = OsReader::new(BufReader::with_capacity(
            crate::input::buffer_size(path),
            file,
        ))
        .map_err(|e| Error::in_file(path, e))?;
        reg.required_level(Role::Process, &format!("{}: kernel traces", path.display()))?;
        let host = host_of(path, reader.header().host.as_deref());
        if host.is_empty() {
            return Err(Error::in_file(
                path,
                "no host name: add a `# host <name>` line",
            ));
        }
        let machine = reg.machine(&host, None);
        let thread_of = reader
            .header()
            .threads
            .iter()
            .map(|&(t, p)| (t, p))
            .collect();
        let clock = clock_of(&host);
        let stats = SourceStats {
            kind: "os",
            path: path.to_path_buf(),
            clock_host: Some(host),
            ..SourceStats::default()
        };
        let converter = OsSource {
            path: path.to_path_buf(),
            reader,
            machine,
            thread_of,
            rows: HashMap::new(),
            os: reg.hierarchy.os.clone(),
        };
        Ok(Converted::new(
            converter,
            Timeline::new(window, stats, clock),
        ))
    }

    fn row(&mut self, reg: &mut Registry, task: u32) -> (ContainerId, ValueId, ValueId, TypeId) {
        if let Some(&r) = self.rows.get(&task) {
            return r;
        }
        // The loader checked that a process level exists, so these resolve.
        let container = match self.thread_of.get(&task) {
            Some(&pid) if pid != task => reg.thread(self.machine, pid, task),
            _ => reg.process(self.machine, task),
        }
        .unwrap_or(self.machine);
        let parent_type = reg.container(container).ty;
        let os = &self.os;
        let ty = reg.state_type(parent_type, &os.state_name);
        let running = reg.value_of(ty, "running", &os.running);
        let blocked = reg.value_of(ty, "blocked", &os.blocked);
        let r = (container, running, blocked, ty);
        self.rows.insert(task, r);
        r
    }
}

impl Converter for OsSource {
    fn pull(&mut self, reg: &mut Registry, out: &mut Timeline) -> Result<bool> {
        let Some(rec) = self
            .reader
            .next_record()
            .map_err(|e| Error::in_file(&self.path, e))?
        else {
            out.stats
                .end_of_text(&self.path, self.reader.cut_line(), "no record in this file");
            return Ok(false);
        };
        if let (Some(pid), true) = (rec.pid, rec.kind != OsKind::Time) {
            let (container, running, blocked, ty) = self.row(reg, pid);
            let value = if rec.kind == OsKind::Unblock {
                running
            } else {
                blocked
            };
            out.push(
                rec.line,
                rec.time_ns,
                Op::SetState {
                    container,
                    ty,
                    value,
                },
            )?;
        }
        Ok(true)
    }
}
