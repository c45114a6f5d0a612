//! Kernel `.os` recording → OS states (thesis table C.7: TASK_RUNNING and
//! TASK_INTERRUPTIBLE become `PajeSetState` on the task's OS row).
//!
//! A task is a Process container under its Machine, or a Thread under its
//! Process when a `# thread <tid> <pid>` header line says so
//! (docs/formats.md §3). Times are on the described host's clock.

use crate::error::{Error, Result};
use crate::hierarchy::Role;
use crate::hierarchy::{Display, RawDisplay, Text};
use crate::model::{ContainerId, Op, TypeId, ValueId};
use crate::registry::Registry;
use crate::source::{Converted, Converter, SourceStats, Timeline};
use crate::timeline::Clock;
use integrador_sched::{OsKind, OsReader};
use serde::Deserialize;
use std::collections::HashMap;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toml::Spanned;

/// The hierarchy's `[os]` section: kernel traces of every kind (`.os`
/// recordings, ftrace, trace-cmd, perf).
#[derive(Debug, Clone)]
pub struct OsConfig {
    /// Name of the OS state type.
    pub state_name: String,
    /// Display of the `running` value.
    pub running: Display,
    /// Display of the `blocked` value.
    pub blocked: Display,
    /// Display of the `runnable` value (kernel traces: woken or preempted,
    /// waiting for a CPU).
    pub runnable: Display,
    /// Display of the `sleeping` value (kernel traces: interruptible sleep).
    pub sleeping: Display,
    /// Host of kernel text traces that name none (default: the file stem).
    pub host: Option<String>,
    /// Epoch of the boot-relative trace clock, ns (`boot_epoch`);
    /// `--boot-epoch` wins.
    pub boot_epoch: Option<i64>,
}

impl Default for OsConfig {
    fn default() -> Self {
        let color = |c: &str| Display {
            name: None,
            color: Some(c.into()),
        };
        OsConfig {
            state_name: "OS state".into(),
            running: Display::default(),
            blocked: Display::default(),
            runnable: color("0.95 0.8 0.2"),
            sleeping: color("0.55 0.55 0.8"),
            host: None,
            boot_epoch: None,
        }
    }
}

impl OsConfig {
    /// Reads and checks the section.
    pub fn read(text: &Text<'_>) -> Result<OsConfig> {
        let raw = text.view::<View>()?.os;
        text.level(&raw.level, Role::Process, "os")?;
        let base = OsConfig::default();
        let display = |d: &Option<RawDisplay>, default: Display| -> Result<Display> {
            Ok(match d {
                Some(d) => text.display(d)?,
                None => default,
            })
        };
        let v = &raw.values;
        Ok(OsConfig {
            state_name: raw.state_name.clone().unwrap_or(base.state_name),
            running: display(&v.running, base.running)?,
            blocked: display(&v.blocked, base.blocked)?,
            runnable: display(&v.runnable, base.runnable)?,
            sleeping: display(&v.sleeping, base.sleeping)?,
            host: raw.host.clone(),
            boot_epoch: raw
                .boot_epoch
                .as_ref()
                .map(|b| text.epoch(b, "boot_epoch"))
                .transpose()?,
        })
    }
}

/// The file as the `[os]` section sees it.
#[derive(Deserialize)]
struct View {
    #[serde(default)]
    os: Raw,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Raw {
    level: Option<Spanned<String>>,
    state_name: Option<String>,
    host: Option<String>,
    boot_epoch: Option<Spanned<String>>,
    #[serde(default)]
    values: RawValues,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawValues {
    running: Option<RawDisplay>,
    blocked: Option<RawDisplay>,
    runnable: Option<RawDisplay>,
    sleeping: Option<RawDisplay>,
}

/// Converts an `.os` file.
pub struct OsSource {
    path: PathBuf,
    reader: OsReader<BufReader<crate::input::Reader>>,
    machine: ContainerId,
    thread_of: HashMap<u32, u32>,
    rows: HashMap<u32, (ContainerId, ValueId, ValueId, TypeId)>,
    /// The hierarchy's `[os]` section.
    os: Arc<OsConfig>,
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
        (window, os): (i64, &Arc<OsConfig>),
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
            os: Arc::clone(os),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchy::parse;

    const BASE: &str = "[[container]]\nname = \"M\"\nrole = \"machine\"\n[[container]]\nname = \"P\"\nparent = \"M\"\nrole = \"process\"\n";

    fn read(section: &str) -> Result<OsConfig> {
        OsConfig::read(&parse(&format!("{BASE}{section}"), "h.toml")?.text())
    }

    #[test]
    fn the_section_is_read_and_checked() {
        let os = read("[os]\nlevel = \"P\"\nboot_epoch = \"1795262171.5\"\n[os.values.running]\nname = \"on CPU\"\n").unwrap();
        assert_eq!(os.boot_epoch, Some(1_795_262_171_500_000_000));
        assert_eq!(os.running.name.as_deref(), Some("on CPU"));
        assert_eq!(os.sleeping.color.as_deref(), Some("0.55 0.55 0.8"));
        let e = read("[os.values.running]\ncolor = \"2 0 0\"\n").unwrap_err();
        assert!(
            e.message.starts_with("h.toml: line 9: color `2 0 0`"),
            "{e}"
        );
        let e = read("[os]\nboot_epoch = \"yesterday\"\n").unwrap_err();
        assert!(
            e.message
                .starts_with("h.toml: line 9: `boot_epoch` `yesterday`"),
            "{e}"
        );
        let e = read("[os]\nlevel = \"M\"\n").unwrap_err();
        assert!(
            e.message.contains("os data goes on a `process` type"),
            "{e}"
        );
    }
}
