//! The hierarchy file (`-hierarchy`): the modern form of the thesis' plist
//! files (section 4.2.3). It declares the container types and their nesting,
//! which source feeds which level, host identity rules, the host → cluster
//! assignment of multi-domain grids, and display names and colors.
//! The schema is documented in `hierarchies/README.md`.
//!
//! Every semantic error (undefined type, duplicate definition, bad color)
//! cites the TOML line; syntax and unknown-key errors come from the `toml`
//! crate with their span and are given the same one-line form.

use crate::clock::SyncFit;
use crate::error::{Error, Result};
use crate::identity::HostIdentity;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

mod parse;
mod raw;

pub use parse::parse;

/// The built-in default hierarchy (also shipped as `hierarchies/default.toml`).
pub const DEFAULT_TOML: &str = include_str!("../../hierarchies/default.toml");

/// What a container type stands for; the unifier creates containers by role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A grid of administrative domains.
    Grid,
    /// A cluster (one Ganglia cluster, one domain).
    Cluster,
    /// A machine (host).
    Machine,
    /// An OS process (or an MPI rank, once unified with it).
    Process,
    /// A thread of a process.
    Thread,
}

impl Role {
    /// The role's name as written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Grid => "grid",
            Role::Cluster => "cluster",
            Role::Machine => "machine",
            Role::Process => "process",
            Role::Thread => "thread",
        }
    }
}

/// One level of the container hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Level {
    /// Type name as shown in Pajé.
    pub name: String,
    /// What it stands for.
    pub role: Role,
}

/// Display name and color of a state value or variable type.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Display {
    /// Name shown instead of the source's own.
    pub name: Option<String>,
    /// Pajé color, `"r g b"` with components in 0..1.
    pub color: Option<String>,
}

/// Per-file settings of a Ganglia recording.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GangliaFile {
    /// Collector host whose clock stamped the file.
    pub collector: Option<String>,
    /// Cluster of the file's hosts.
    pub cluster: Option<String>,
}

/// The `[ganglia]` section.
#[derive(Debug, Clone, Default)]
pub struct GangliaConfig {
    /// Defaults for every file.
    pub defaults: GangliaFile,
    /// Per file, keyed by file name (the last path component).
    pub files: HashMap<String, GangliaFile>,
    /// Display of metrics, keyed by Ganglia metric name.
    pub metrics: HashMap<String, Display>,
    /// Metric name patterns to keep (empty = all).
    pub include: Vec<glob::Pattern>,
    /// Metric name patterns to leave out (after `include`).
    pub exclude: Vec<glob::Pattern>,
}

impl GangliaConfig {
    /// Whether metric `name` is selected.
    pub fn selects(&self, name: &str) -> bool {
        selects(&self.include, &self.exclude, name)
    }
}

/// The include-then-exclude rule of `[ganglia]` and `[pcp]`.
fn selects(include: &[glob::Pattern], exclude: &[glob::Pattern], name: &str) -> bool {
    (include.is_empty() || include.iter().any(|p| p.matches(name)))
        && !exclude.iter().any(|p| p.matches(name))
}

/// The `[os]` section.
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

/// The `[mpi]` section.
#[derive(Debug, Clone)]
pub struct MpiConfig {
    /// Name of the MPI state type (one row per rank's Process).
    pub state_name: String,
    /// Name of the MPI event type (solo events such as the anchor).
    pub event_name: String,
    /// Name of the message link type.
    pub link_name: String,
    /// The state between MPI calls (the thesis' "executing").
    pub executing: Display,
    /// Display of MPE states and events, keyed by their MPE name.
    pub states: HashMap<String, Display>,
    /// `start`: wall-clock start of runs without an anchor, in ns.
    pub start: Option<i64>,
}

/// The `[deck]` section (libRastro traces).
#[derive(Debug, Clone, Default)]
pub struct DeckConfig {
    /// Event map: a file (relative to the hierarchy file) or a built-in
    /// map name; `--deck-map` overrides it.
    pub map: Option<std::path::PathBuf>,
    /// Display of state, event and link values, over the map's own.
    pub values: HashMap<String, Display>,
}

/// The `[pcp]` section (PCP archives).
#[derive(Debug, Clone, Default)]
pub struct PcpConfig {
    /// Keep pmlogger's and pmcd's own metrics (`pmcd.*`, domain 2).
    pub pmcd: bool,
    /// Metric name patterns to keep (empty = all).
    pub include: Vec<glob::Pattern>,
    /// Metric name patterns to leave out (after `include`).
    pub exclude: Vec<glob::Pattern>,
    /// Display name and color per metric name.
    pub metrics: HashMap<String, Display>,
}

impl PcpConfig {
    /// Whether metric `name` is selected.
    pub fn selects(&self, name: &str) -> bool {
        selects(&self.include, &self.exclude, name)
    }
}

/// A loaded, validated hierarchy.
#[derive(Debug, Clone)]
pub struct Hierarchy {
    /// Where it came from (a path, or "built-in default").
    pub origin: String,
    /// Container levels from the root down.
    pub levels: Vec<Level>,
    /// Name of the Grid container.
    pub grid_name: String,
    /// Cluster of hosts that nothing else assigns.
    pub default_cluster: String,
    /// Host identity rules.
    pub identity: HostIdentity,
    /// Host → cluster assignment, in file order.
    pub clusters: Vec<(String, Vec<String>)>,
    /// (cluster, host) positions in `clusters` by identity key.
    cluster_keys: HashMap<String, Vec<(usize, usize)>>,
    /// How sync lines are used.
    pub sync_fit: SyncFit,
    /// Ganglia settings.
    pub ganglia: GangliaConfig,
    /// Kernel trace settings.
    pub os: OsConfig,
    /// MPI settings.
    pub mpi: MpiConfig,
    /// libRastro settings.
    pub deck: DeckConfig,
    /// PCP settings.
    pub pcp: PcpConfig,
    /// Non-fatal remarks about the file.
    pub warnings: Vec<String>,
}

impl Hierarchy {
    /// Files the hierarchy names that a run reads (an event map), with
    /// what names them: inputs the output must not be.
    pub fn files(&self) -> Vec<(&'static str, &std::path::Path)> {
        let map = self.deck.map.as_deref().filter(|m| m.is_file());
        map.map(|m| ("the hierarchy's [deck] map", m))
            .into_iter()
            .collect()
    }

    /// The level index of a role, if the hierarchy has it.
    pub fn level_of(&self, role: Role) -> Option<usize> {
        self.levels.iter().position(|l| l.role == role)
    }

    /// The cluster the hierarchy assigns `host` to.
    pub fn cluster_of(&self, host: &str) -> Option<&str> {
        // The first cluster in file order with a host that is `host`,
        // looked up through identity keys rather than a scan.
        let mut found: Option<usize> = None;
        for k in self.identity.keys(host) {
            for &(c, h) in self.cluster_keys.get(k).into_iter().flatten() {
                if found.is_none_or(|f| c < f) && self.identity.same(&self.clusters[c].1[h], host) {
                    found = Some(c);
                }
            }
        }
        found.map(|c| self.clusters[c].0.as_str())
    }

    /// Loads the built-in default.
    pub fn builtin() -> Hierarchy {
        // The default is compiled in and covered by a test; failing here is
        // a build defect, not an input problem.
        #[allow(clippy::expect_used)]
        parse(DEFAULT_TOML, "built-in default").expect("the built-in hierarchy is valid")
    }

    /// Loads a hierarchy file.
    pub fn load(path: &Path) -> Result<Hierarchy> {
        let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
        let text = integrador_lines::read_to_string_bounded(file, 4 << 20)
            .map_err(|e| Error::in_file(path, format!("hierarchy: {e}")))?;
        parse(&text, &path.display().to_string())
    }
}

/// A Pajé color as we write it: 3 or 4 numbers in 0..1.
pub fn valid_color(c: &str) -> bool {
    let parts: Vec<&str> = c.split_whitespace().collect();
    (parts.len() == 3 || parts.len() == 4)
        && parts
            .iter()
            .all(|p| p.parse::<f64>().is_ok_and(|v| (0.0..=1.0).contains(&v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text, "h.toml").unwrap_err().message
    }

    const BASE: &str = "[[container]]\nname = \"Cluster\"\nrole = \"cluster\"\n\n[[container]]\nname = \"Machine\"\nparent = \"Cluster\"\nrole = \"machine\"\n";

    #[test]
    fn builtin_default_loads() {
        let h = Hierarchy::builtin();
        let roles: Vec<Role> = h.levels.iter().map(|l| l.role).collect();
        assert_eq!(
            roles,
            vec![
                Role::Grid,
                Role::Cluster,
                Role::Machine,
                Role::Process,
                Role::Thread
            ]
        );
        assert!(h.warnings.is_empty());
    }

    #[test]
    fn minimal_file() {
        let h = parse(BASE, "h.toml").unwrap();
        assert_eq!(h.level_of(Role::Machine), Some(1));
        assert_eq!(h.level_of(Role::Grid), None);
    }

    #[test]
    fn errors_cite_lines() {
        assert_eq!(
            err(&format!("{BASE}nme = 1\n")),
            "h.toml: line 9: unknown field `nme`, expected one of `name`, `parent`, `role`"
        );
        assert_eq!(err(&format!("bogus = 1\n{BASE}")), "h.toml: line 1: unknown field `bogus`, expected one of `container`, `grid`, `hosts`, `clusters`, `sync`, `ganglia`, `os`, `deck`, `mpi`, `pcp`");
        assert!(err(&format!(
            "{BASE}[[container]]\nname = \"Machine\"\nrole = \"process\"\n"
        ))
        .starts_with(
            "h.toml: line 10: container type `Machine` is defined twice (first at line 6)"
        ));
        assert!(
            err("[[container]]\nname = \"M\"\nrole = \"machine\"\nparent = \"Nope\"\n")
                .starts_with("h.toml: line 4: parent `Nope`")
        );
        assert!(err(&format!("{BASE}[ganglia]\nlevel = \"Host\"\n"))
            .starts_with("h.toml: line 10: [ganglia] level `Host` is not a defined"));
        assert!(
            err(&format!("{BASE}[os.values.running]\ncolor = \"2 0 0\"\n"))
                .starts_with("h.toml: line 10: color `2 0 0`")
        );
        assert!(err(&format!(
            "{BASE}[hosts]\naliases = [[\"a\", \"b\"], [\"b\", \"c\"]]\n"
        ))
        .starts_with("h.toml: line 10: host `b` is in two alias lists"));
        assert!(err("[[container]]\nname = \"M\"\nrole = \"machin\"\n")
            .starts_with("h.toml: line 3: unknown variant `machin`"));
        assert!(err("[[container]\n").starts_with("h.toml: line 1:"));
        assert!(err("[[container]]\nname = \"P\"\nrole = \"process\"\n")
            .contains("no container type has role `machine`"));
        assert!(err(&format!(
            "{BASE}[clusters]\nx = [\"n1\"]\ny = [\"n1.example\"]\n"
        ))
        .starts_with("h.toml: line 11: host `n1.example` is assigned to `y`"));
    }

    #[test]
    fn nesting_order_is_enforced() {
        let text = "[[container]]\nname = \"M\"\nrole = \"machine\"\n[[container]]\nname = \"C\"\nrole = \"cluster\"\nparent = \"M\"\n";
        assert!(
            err(text).starts_with("h.toml: line 7: `C` (cluster) cannot be inside `M` (machine)")
        );
        let skip = "[[container]]\nname = \"G\"\nrole = \"grid\"\n[[container]]\nname = \"C\"\nrole = \"cluster\"\nparent = \"G\"\n[[container]]\nname = \"M\"\nrole = \"machine\"\nparent = \"G\"\n";
        assert!(err(skip).starts_with("h.toml: line 11: `M` must have parent `C`"));
    }

    #[test]
    fn pcp_section_selects_and_renames_metrics() {
        let h = parse(
            &format!(
                "{BASE}[pcp]\nlevel = \"Machine\"\ninclude = [\"kernel.*\", \"mem.util.*\"]\nexclude = [\"kernel.all.pswitch\"]\n[pcp.metrics.\"kernel.all.load\"]\nname = \"load\"\n"
            ),
            "h.toml",
        )
        .unwrap();
        assert!(h.warnings.is_empty());
        assert!(h.pcp.selects("kernel.all.load") && h.pcp.selects("mem.util.free"));
        assert!(
            !h.pcp.selects("kernel.all.pswitch") && !h.pcp.selects("network.interface.in.bytes")
        );
        assert_eq!(
            h.pcp.metrics["kernel.all.load"].name.as_deref(),
            Some("load")
        );
        assert!(!h.pcp.pmcd);
        let e = parse(&format!("{BASE}[pcp]\nanything = 1\n"), "h.toml").unwrap_err();
        assert!(
            e.to_string().contains("line 10: unknown field `anything`"),
            "{e}"
        );
        let e = parse(&format!("{BASE}[pcp]\ninclude = [\"[\"]\n"), "h.toml").unwrap_err();
        assert!(e.to_string().contains("line 10: pattern `[`"), "{e}");
    }

    #[test]
    fn deck_section_resolves_its_map_beside_the_file() {
        let h = parse(
            &format!(
                "{BASE}[deck]\nmap = \"maps/mine.toml\"\n[deck.values.exec]\ncolor = \"0 0 1\"\n"
            ),
            "conf/h.toml",
        )
        .unwrap();
        assert!(h.warnings.is_empty(), "{:?}", h.warnings);
        assert_eq!(
            h.deck.map.as_deref(),
            Some(Path::new("conf/maps/mine.toml"))
        );
        assert_eq!(h.deck.values["exec"].color.as_deref(), Some("0 0 1"));
        let h = parse(
            &format!("{BASE}[deck]\nmap = \"akypuera\"\n"),
            "conf/h.toml",
        )
        .unwrap();
        assert_eq!(h.deck.map.as_deref(), Some(Path::new("akypuera")));
        let e = parse(&format!("{BASE}[deck]\nlevel = \"Machine\"\n"), "h.toml").unwrap_err();
        assert!(e.to_string().contains("role"), "{e}");
    }
}
