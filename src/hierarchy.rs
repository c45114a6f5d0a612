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
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use toml::Spanned;

/// The built-in default hierarchy (also shipped as `hierarchies/default.toml`).
pub const DEFAULT_TOML: &str = include_str!("../hierarchies/default.toml");

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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    container: Vec<RawContainer>,
    #[serde(default)]
    grid: RawGrid,
    #[serde(default)]
    hosts: RawHosts,
    #[serde(default)]
    clusters: BTreeMap<String, Vec<Spanned<String>>>,
    #[serde(default)]
    sync: RawSync,
    #[serde(default)]
    ganglia: RawGanglia,
    #[serde(default)]
    os: RawOs,
    #[serde(default)]
    deck: RawDeck,
    #[serde(default)]
    mpi: RawMpi,
    #[serde(default)]
    pcp: RawPcp,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawContainer {
    name: Spanned<String>,
    parent: Option<Spanned<String>>,
    role: Spanned<Role>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawGrid {
    name: Option<String>,
    default_cluster: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHosts {
    #[serde(default = "yes")]
    short_names: bool,
    #[serde(default)]
    aliases: Vec<Vec<Spanned<String>>>,
}

impl Default for RawHosts {
    fn default() -> Self {
        RawHosts {
            short_names: true,
            aliases: Vec::new(),
        }
    }
}

fn yes() -> bool {
    true
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSync {
    fit: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawGanglia {
    level: Option<Spanned<String>>,
    collector: Option<String>,
    cluster: Option<String>,
    #[serde(default)]
    files: BTreeMap<String, RawGangliaFile>,
    #[serde(default)]
    metrics: BTreeMap<String, RawDisplay>,
    #[serde(default)]
    include: Vec<Spanned<String>>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawGangliaFile {
    collector: Option<String>,
    cluster: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawDisplay {
    name: Option<String>,
    color: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawOs {
    level: Option<Spanned<String>>,
    state_name: Option<String>,
    host: Option<String>,
    boot_epoch: Option<Spanned<String>>,
    #[serde(default)]
    values: RawOsValues,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawMpi {
    level: Option<Spanned<String>>,
    state_name: Option<String>,
    event_name: Option<String>,
    link_name: Option<String>,
    executing: Option<RawDisplay>,
    start: Option<Spanned<toml::Value>>,
    #[serde(default)]
    states: BTreeMap<String, RawDisplay>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPcp {
    level: Option<Spanned<String>>,
    #[serde(default)]
    pmcd: bool,
    #[serde(default)]
    include: Vec<Spanned<String>>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    #[serde(default)]
    metrics: BTreeMap<String, RawDisplay>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawDeck {
    level: Option<Spanned<String>>,
    map: Option<String>,
    #[serde(default)]
    values: BTreeMap<String, RawDisplay>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawOsValues {
    running: Option<RawDisplay>,
    blocked: Option<RawDisplay>,
    runnable: Option<RawDisplay>,
    sleeping: Option<RawDisplay>,
}

/// Parses and validates a hierarchy; `origin` names it in messages.
pub fn parse(text: &str, origin: &str) -> Result<Hierarchy> {
    let line_of = |offset: usize| text.get(..offset).map_or(0, |s| s.matches('\n').count()) + 1;
    let at = |offset: usize, what: String| {
        Error::input(format!("{origin}: line {}: {what}", line_of(offset)))
    };
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let msg = match e.message().trim() {
            "" => "not valid TOML here".to_string(),
            m => m.replace('\n', " "),
        };
        match e.span() {
            Some(span) => at(span.start, msg),
            None => Error::input(format!("{origin}: {msg}")),
        }
    })?;

    // Container types: unique names, defined parents, one type per role,
    // roles nested in their natural order, one chain from the root.
    let mut by_name: HashMap<&str, &RawContainer> = HashMap::new();
    for c in &raw.container {
        if let Some(first) = by_name.insert(c.name.get_ref().as_str(), c) {
            return Err(at(
                c.name.span().start,
                format!(
                    "container type `{}` is defined twice (first at line {})",
                    c.name.get_ref(),
                    line_of(first.name.span().start)
                ),
            ));
        }
        if c.name.get_ref().is_empty() || c.name.get_ref() == "0" {
            return Err(at(
                c.name.span().start,
                "a container type needs a name other than `\"\"` and `0`".into(),
            ));
        }
    }
    let mut by_role: HashMap<Role, &RawContainer> = HashMap::new();
    for c in &raw.container {
        if let Some(first) = by_role.insert(*c.role.get_ref(), c) {
            return Err(at(
                c.role.span().start,
                format!(
                    "role `{}` is given to `{}` and to `{}` (line {}); each role belongs to one type",
                    c.role.get_ref().as_str(),
                    c.name.get_ref(),
                    first.name.get_ref(),
                    line_of(first.name.span().start)
                ),
            ));
        }
        if let Some(p) = &c.parent {
            let Some(parent) = by_name.get(p.get_ref().as_str()) else {
                return Err(at(
                    p.span().start,
                    format!(
                        "parent `{}` of `{}` is not a defined container type",
                        p.get_ref(),
                        c.name.get_ref()
                    ),
                ));
            };
            if parent.role.get_ref() >= c.role.get_ref() {
                return Err(at(
                    p.span().start,
                    format!(
                        "`{}` ({}) cannot be inside `{}` ({}): the order is grid > cluster > machine > process > thread",
                        c.name.get_ref(),
                        c.role.get_ref().as_str(),
                        parent.name.get_ref(),
                        parent.role.get_ref().as_str()
                    ),
                ));
            }
        }
    }
    let mut sorted: Vec<&RawContainer> = raw.container.iter().collect();
    sorted.sort_by_key(|c| *c.role.get_ref());
    for (i, c) in sorted.iter().enumerate() {
        let expected = if i == 0 {
            None
        } else {
            sorted.get(i - 1).map(|p| p.name.get_ref().as_str())
        };
        let actual = c.parent.as_ref().map(|p| p.get_ref().as_str());
        if actual != expected {
            let span = c
                .parent
                .as_ref()
                .map_or(c.name.span().start, |p| p.span().start);
            return Err(at(
                span,
                match expected {
                    Some(e) => format!(
                        "`{}` must have parent `{e}`, the next level up in this hierarchy",
                        c.name.get_ref()
                    ),
                    None => format!(
                        "`{}` is the top level and takes no parent",
                        c.name.get_ref()
                    ),
                },
            ));
        }
    }
    let levels: Vec<Level> = sorted
        .iter()
        .map(|c| Level {
            name: c.name.get_ref().clone(),
            role: *c.role.get_ref(),
        })
        .collect();
    if !levels.iter().any(|l| l.role == Role::Machine) {
        return Err(Error::input(format!("{origin}: no container type has role `machine`; every source places its data under machines")));
    }
    let has = |role: Role| levels.iter().any(|l| l.role == role);

    let check_level = |lvl: &Option<Spanned<String>>, role: Role, section: &str| -> Result<()> {
        if let Some(l) = lvl {
            match by_name.get(l.get_ref().as_str()) {
                None => {
                    return Err(at(
                        l.span().start,
                        format!(
                            "[{section}] level `{}` is not a defined container type",
                            l.get_ref()
                        ),
                    ))
                }
                Some(c) if *c.role.get_ref() != role => {
                    return Err(at(
                        l.span().start,
                        format!(
                        "[{section}] level `{}` has role `{}`; {section} data goes on a `{}` type",
                        l.get_ref(),
                        c.role.get_ref().as_str(),
                        role.as_str()
                    ),
                    ))
                }
                Some(_) => {}
            }
        }
        Ok(())
    };
    check_level(&raw.ganglia.level, Role::Machine, "ganglia")?;
    check_level(&raw.os.level, Role::Process, "os")?;
    check_level(&raw.mpi.level, Role::Process, "mpi")?;
    check_level(&raw.deck.level, Role::Thread, "deck")?;
    check_level(&raw.pcp.level, Role::Machine, "pcp")?;

    // Host identity: a name in two alias lists is ambiguous.
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for group in &raw.hosts.aliases {
        for name in group {
            if let Some(first) = seen.insert(name.get_ref().as_str(), name.span().start) {
                return Err(at(
                    name.span().start,
                    format!(
                        "host `{}` is in two alias lists (first at line {})",
                        name.get_ref(),
                        line_of(first)
                    ),
                ));
            }
        }
    }
    let identity = HostIdentity::new(
        raw.hosts
            .aliases
            .iter()
            .map(|g| g.iter().map(|n| n.get_ref().clone()).collect())
            .collect(),
        raw.hosts.short_names,
    );

    // Clusters: a host in two clusters is ambiguous; clusters need a level.
    let mut clusters = Vec::new();
    let mut assigned: Vec<(&Spanned<String>, &str)> = Vec::new();
    let mut assigned_keys: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut cluster_keys: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
    for (cluster, hosts) in &raw.clusters {
        if let Some(first) = hosts.first() {
            if !has(Role::Cluster) {
                return Err(at(first.span().start, format!("[clusters] assigns hosts to `{cluster}` but no container type has role `cluster`")));
            }
        }
        for (hi, h) in hosts.iter().enumerate() {
            let earlier = identity
                .keys(h.get_ref())
                .filter_map(|k| assigned_keys.get(k))
                .flatten()
                .copied()
                .filter(|&i| identity.same(assigned[i].0.get_ref(), h.get_ref()))
                .min();
            if let Some((other, c)) = earlier.map(|i| assigned[i]) {
                return Err(at(
                    h.span().start,
                    format!(
                        "host `{}` is assigned to `{cluster}` and, as `{}` (line {}), to `{c}`",
                        h.get_ref(),
                        other.get_ref(),
                        line_of(other.span().start)
                    ),
                ));
            }
            for k in identity.keys(h.get_ref()) {
                assigned_keys.entry(k).or_default().push(assigned.len());
                cluster_keys
                    .entry(k.to_string())
                    .or_default()
                    .push((clusters.len(), hi));
            }
            assigned.push((h, cluster.as_str()));
        }
        clusters.push((
            cluster.clone(),
            hosts.iter().map(|h| h.get_ref().clone()).collect(),
        ));
    }

    let sync_fit = match &raw.sync.fit {
        None => SyncFit::Endpoints,
        Some(f) => match f.get_ref().as_str() {
            "endpoints" => SyncFit::Endpoints,
            "least-squares" => SyncFit::LeastSquares,
            other => {
                return Err(at(
                    f.span().start,
                    format!("[sync] fit `{other}`: expected `endpoints` or `least-squares`"),
                ))
            }
        },
    };

    let display = |d: &RawDisplay| -> Result<Display> {
        if let Some(c) = &d.color {
            if !valid_color(c.get_ref()) {
                return Err(at(
                    c.span().start,
                    format!(
                        "color `{}`: expected three or four numbers in 0..1, as \"1 0.5 0\"",
                        c.get_ref()
                    ),
                ));
            }
        }
        Ok(Display {
            name: d.name.clone(),
            color: d.color.as_ref().map(|c| c.get_ref().clone()),
        })
    };
    let mut metrics = HashMap::new();
    for (m, d) in &raw.ganglia.metrics {
        metrics.insert(m.clone(), display(d)?);
    }
    let patterns = |list: &[Spanned<String>]| -> Result<Vec<glob::Pattern>> {
        list.iter()
            .map(|p| {
                glob::Pattern::new(p.get_ref())
                    .map_err(|e| at(p.span().start, format!("pattern `{}`: {e}", p.get_ref())))
            })
            .collect()
    };
    let ganglia = GangliaConfig {
        defaults: GangliaFile {
            collector: raw.ganglia.collector.clone(),
            cluster: raw.ganglia.cluster.clone(),
        },
        files: raw
            .ganglia
            .files
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    GangliaFile {
                        collector: v.collector.clone(),
                        cluster: v.cluster.clone(),
                    },
                )
            })
            .collect(),
        metrics,
        include: patterns(&raw.ganglia.include)?,
        exclude: patterns(&raw.ganglia.exclude)?,
    };
    let os = OsConfig {
        state_name: raw
            .os
            .state_name
            .clone()
            .unwrap_or_else(|| "OS state".to_string()),
        running: raw
            .os
            .values
            .running
            .as_ref()
            .map(display)
            .transpose()?
            .unwrap_or_default(),
        blocked: raw
            .os
            .values
            .blocked
            .as_ref()
            .map(display)
            .transpose()?
            .unwrap_or_default(),
        runnable: raw
            .os
            .values
            .runnable
            .as_ref()
            .map(display)
            .transpose()?
            .unwrap_or_else(|| Display {
                name: None,
                color: Some("0.95 0.8 0.2".into()),
            }),
        sleeping: raw
            .os
            .values
            .sleeping
            .as_ref()
            .map(display)
            .transpose()?
            .unwrap_or_else(|| Display {
                name: None,
                color: Some("0.55 0.55 0.8".into()),
            }),
        host: raw.os.host.clone(),
        boot_epoch: match &raw.os.boot_epoch {
            None => None,
            Some(v) => Some(
                crate::clock::parse_epoch_ns(v.get_ref().as_bytes()).ok_or_else(|| {
                    at(
                        v.span().start,
                        format!(
                            "`boot_epoch` `{}`: expected epoch seconds, as \"1795262171.292101\"",
                            v.get_ref()
                        ),
                    )
                })?,
            ),
        },
    };

    let start = match &raw.mpi.start {
        None => None,
        Some(v) => {
            let ns = match v.get_ref() {
                toml::Value::String(s) => crate::clock::parse_epoch_ns(s.as_bytes()),
                toml::Value::Integer(i) => i.checked_mul(1_000_000_000),
                _ => None,
            };
            Some(ns.ok_or_else(|| {
                at(
                    v.span().start,
                    "`start`: expected epoch seconds as a string (\"1795265512.474392\") or an integer".into(),
                )
            })?)
        }
    };
    let mut mpi_states = HashMap::new();
    for (m, d) in &raw.mpi.states {
        mpi_states.insert(m.clone(), display(d)?);
    }
    let mpi = MpiConfig {
        state_name: raw
            .mpi
            .state_name
            .clone()
            .unwrap_or_else(|| "MPI state".into()),
        event_name: raw
            .mpi
            .event_name
            .clone()
            .unwrap_or_else(|| "MPI event".into()),
        link_name: raw
            .mpi
            .link_name
            .clone()
            .unwrap_or_else(|| "MPI message".into()),
        executing: raw
            .mpi
            .executing
            .as_ref()
            .map(display)
            .transpose()?
            .unwrap_or_default(),
        states: mpi_states,
        start,
    };

    let mut deck_values = HashMap::new();
    for (m, d) in &raw.deck.values {
        deck_values.insert(m.clone(), display(d)?);
    }
    let deck = DeckConfig {
        map: raw.deck.map.as_ref().map(|m| {
            let p = std::path::PathBuf::from(m);
            match (p.is_relative(), Path::new(origin).parent()) {
                (true, Some(dir)) if !crate::eventmap::is_builtin(m) => dir.join(p),
                _ => p,
            }
        }),
        values: deck_values,
    };

    let mut pcp_metrics = HashMap::new();
    for (m, d) in &raw.pcp.metrics {
        pcp_metrics.insert(m.clone(), display(d)?);
    }
    let pcp = PcpConfig {
        pmcd: raw.pcp.pmcd,
        include: patterns(&raw.pcp.include)?,
        exclude: patterns(&raw.pcp.exclude)?,
        metrics: pcp_metrics,
    };
    // No remark is made at present; the list stays for future keys.
    let warnings = Vec::<String>::new();

    Ok(Hierarchy {
        origin: origin.to_string(),
        levels,
        grid_name: raw.grid.name.unwrap_or_else(|| "grid".to_string()),
        default_cluster: raw
            .grid
            .default_cluster
            .unwrap_or_else(|| "cluster".to_string()),
        identity,
        clusters,
        cluster_keys,
        sync_fit,
        ganglia,
        os,
        mpi,
        deck,
        pcp,
        warnings,
    })
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
