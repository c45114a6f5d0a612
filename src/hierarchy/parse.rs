//! Parsing and validating a hierarchy file: every error cites its line.

use super::raw::*;
use super::*;
use toml::Spanned;

/// The text being parsed, for messages that cite its lines.
struct Src<'a> {
    text: &'a str,
    origin: &'a str,
}

impl Src<'_> {
    fn line_of(&self, offset: usize) -> usize {
        self.text
            .get(..offset)
            .map_or(0, |s| s.matches('\n').count())
            + 1
    }

    fn at(&self, offset: usize, what: String) -> Error {
        Error::input(format!(
            "{}: line {}: {what}",
            self.origin,
            self.line_of(offset)
        ))
    }

    fn display(&self, d: &RawDisplay) -> Result<Display> {
        if let Some(c) = &d.color {
            if !valid_color(c.get_ref()) {
                return Err(self.at(
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
    }

    fn patterns(&self, list: &[Spanned<String>]) -> Result<Vec<glob::Pattern>> {
        list.iter()
            .map(|p| {
                glob::Pattern::new(p.get_ref())
                    .map_err(|e| self.at(p.span().start, format!("pattern `{}`: {e}", p.get_ref())))
            })
            .collect()
    }
}

/// Parses and validates a hierarchy; `origin` names it in messages.
pub fn parse(text: &str, origin: &str) -> Result<Hierarchy> {
    let src = &Src { text, origin };
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let msg = match e.message().trim() {
            "" => "not valid TOML here".to_string(),
            m => m.replace('\n', " "),
        };
        match e.span() {
            Some(span) => src.at(span.start, msg),
            None => Error::input(format!("{origin}: {msg}")),
        }
    })?;

    let levels = levels(src, &raw)?;
    let identity = identity(src, &raw)?;
    let (clusters, cluster_keys) = clusters(src, &raw, &levels, &identity)?;
    let sync_fit = sync_fit(src, &raw)?;
    let ganglia = ganglia(src, &raw)?;
    let os = os(src, &raw)?;
    let mpi = mpi(src, &raw)?;
    let deck = deck(src, &raw)?;
    let pcp = pcp(src, &raw)?;
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

/// Container types: unique names, defined parents, one type per role,
/// roles nested in their natural order, one chain from the root; the
/// sources' `level` keys name types of their role.
fn levels(src: &Src<'_>, raw: &RawFile) -> Result<Vec<Level>> {
    let mut by_name: HashMap<&str, &RawContainer> = HashMap::new();
    for c in &raw.container {
        if let Some(first) = by_name.insert(c.name.get_ref().as_str(), c) {
            return Err(src.at(
                c.name.span().start,
                format!(
                    "container type `{}` is defined twice (first at line {})",
                    c.name.get_ref(),
                    src.line_of(first.name.span().start)
                ),
            ));
        }
        if c.name.get_ref().is_empty() || c.name.get_ref() == "0" {
            return Err(src.at(
                c.name.span().start,
                "a container type needs a name other than `\"\"` and `0`".into(),
            ));
        }
    }
    let mut by_role: HashMap<Role, &RawContainer> = HashMap::new();
    for c in &raw.container {
        if let Some(first) = by_role.insert(*c.role.get_ref(), c) {
            return Err(src.at(
                c.role.span().start,
                format!(
                    "role `{}` is given to `{}` and to `{}` (line {}); each role belongs to one type",
                    c.role.get_ref().as_str(),
                    c.name.get_ref(),
                    first.name.get_ref(),
                    src.line_of(first.name.span().start)
                ),
            ));
        }
        if let Some(p) = &c.parent {
            let Some(parent) = by_name.get(p.get_ref().as_str()) else {
                return Err(src.at(
                    p.span().start,
                    format!(
                        "parent `{}` of `{}` is not a defined container type",
                        p.get_ref(),
                        c.name.get_ref()
                    ),
                ));
            };
            if parent.role.get_ref() >= c.role.get_ref() {
                return Err(src.at(
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
            return Err(src.at(
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
        return Err(Error::input(format!(
            "{}: no container type has role `machine`; every source places its data under machines",
            src.origin
        )));
    }
    let check_level = |lvl: &Option<Spanned<String>>, role: Role, section: &str| -> Result<()> {
        if let Some(l) = lvl {
            match by_name.get(l.get_ref().as_str()) {
                None => {
                    return Err(src.at(
                        l.span().start,
                        format!(
                            "[{section}] level `{}` is not a defined container type",
                            l.get_ref()
                        ),
                    ))
                }
                Some(c) if *c.role.get_ref() != role => {
                    return Err(src.at(
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
    Ok(levels)
}

/// Host identity: a name in two alias lists is ambiguous.
fn identity(src: &Src<'_>, raw: &RawFile) -> Result<HostIdentity> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for group in &raw.hosts.aliases {
        for name in group {
            if let Some(first) = seen.insert(name.get_ref().as_str(), name.span().start) {
                return Err(src.at(
                    name.span().start,
                    format!(
                        "host `{}` is in two alias lists (first at line {})",
                        name.get_ref(),
                        src.line_of(first)
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
    Ok(identity)
}

/// Clusters: a host in two clusters is ambiguous; clusters need a level.
#[allow(clippy::type_complexity)]
fn clusters(
    src: &Src<'_>,
    raw: &RawFile,
    levels: &[Level],
    identity: &HostIdentity,
) -> Result<(
    Vec<(String, Vec<String>)>,
    HashMap<String, Vec<(usize, usize)>>,
)> {
    let has = |role: Role| levels.iter().any(|l| l.role == role);
    let mut clusters = Vec::new();
    let mut assigned: Vec<(&Spanned<String>, &str)> = Vec::new();
    let mut assigned_keys: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut cluster_keys: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
    for (cluster, hosts) in &raw.clusters {
        if let Some(first) = hosts.first() {
            if !has(Role::Cluster) {
                return Err(src.at(first.span().start, format!("[clusters] assigns hosts to `{cluster}` but no container type has role `cluster`")));
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
                return Err(src.at(
                    h.span().start,
                    format!(
                        "host `{}` is assigned to `{cluster}` and, as `{}` (line {}), to `{c}`",
                        h.get_ref(),
                        other.get_ref(),
                        src.line_of(other.span().start)
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
    Ok((clusters, cluster_keys))
}

fn sync_fit(src: &Src<'_>, raw: &RawFile) -> Result<SyncFit> {
    let sync_fit = match &raw.sync.fit {
        None => SyncFit::Endpoints,
        Some(f) => match f.get_ref().as_str() {
            "endpoints" => SyncFit::Endpoints,
            "least-squares" => SyncFit::LeastSquares,
            other => {
                return Err(src.at(
                    f.span().start,
                    format!("[sync] fit `{other}`: expected `endpoints` or `least-squares`"),
                ))
            }
        },
    };
    Ok(sync_fit)
}

fn ganglia(src: &Src<'_>, raw: &RawFile) -> Result<GangliaConfig> {
    let mut metrics = HashMap::new();
    for (m, d) in &raw.ganglia.metrics {
        metrics.insert(m.clone(), src.display(d)?);
    }
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
        include: src.patterns(&raw.ganglia.include)?,
        exclude: src.patterns(&raw.ganglia.exclude)?,
    };
    Ok(ganglia)
}

fn os(src: &Src<'_>, raw: &RawFile) -> Result<OsConfig> {
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
            .map(|d| src.display(d))
            .transpose()?
            .unwrap_or_default(),
        blocked: raw
            .os
            .values
            .blocked
            .as_ref()
            .map(|d| src.display(d))
            .transpose()?
            .unwrap_or_default(),
        runnable: raw
            .os
            .values
            .runnable
            .as_ref()
            .map(|d| src.display(d))
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
            .map(|d| src.display(d))
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
                    src.at(
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
    Ok(os)
}

fn mpi(src: &Src<'_>, raw: &RawFile) -> Result<MpiConfig> {
    let start = match &raw.mpi.start {
        None => None,
        Some(v) => {
            let ns = match v.get_ref() {
                toml::Value::String(s) => crate::clock::parse_epoch_ns(s.as_bytes()),
                toml::Value::Integer(i) => i.checked_mul(1_000_000_000),
                _ => None,
            };
            Some(ns.ok_or_else(|| {
                src.at(
                    v.span().start,
                    "`start`: expected epoch seconds as a string (\"1795265512.474392\") or an integer".into(),
                )
            })?)
        }
    };
    let mut mpi_states = HashMap::new();
    for (m, d) in &raw.mpi.states {
        mpi_states.insert(m.clone(), src.display(d)?);
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
            .map(|d| src.display(d))
            .transpose()?
            .unwrap_or_default(),
        states: mpi_states,
        start,
    };
    Ok(mpi)
}

fn deck(src: &Src<'_>, raw: &RawFile) -> Result<DeckConfig> {
    let mut deck_values = HashMap::new();
    for (m, d) in &raw.deck.values {
        deck_values.insert(m.clone(), src.display(d)?);
    }
    let deck = DeckConfig {
        map: raw.deck.map.as_ref().map(|m| {
            let p = std::path::PathBuf::from(m);
            match (p.is_relative(), Path::new(src.origin).parent()) {
                (true, Some(dir)) if !crate::eventmap::is_builtin(m) => dir.join(p),
                _ => p,
            }
        }),
        values: deck_values,
    };
    Ok(deck)
}

fn pcp(src: &Src<'_>, raw: &RawFile) -> Result<PcpConfig> {
    let mut pcp_metrics = HashMap::new();
    for (m, d) in &raw.pcp.metrics {
        pcp_metrics.insert(m.clone(), src.display(d)?);
    }
    let pcp = PcpConfig {
        pmcd: raw.pcp.pmcd,
        include: src.patterns(&raw.pcp.include)?,
        exclude: src.patterns(&raw.pcp.exclude)?,
        metrics: pcp_metrics,
    };
    Ok(pcp)
}
