//! Parsing and validating a hierarchy file: every error cites its line.

use super::raw::*;
use super::section::Text;
use super::*;
use toml::Spanned;

/// Parses and validates a hierarchy; `origin` names it in messages.
pub fn parse(text: &str, origin: &str) -> Result<Hierarchy> {
    let src = &Text {
        text,
        origin,
        levels: &[],
    };
    let raw: RawFile = src.view()?;

    let levels = levels(src, &raw)?;
    let identity = identity(src, &raw)?;
    let (clusters, cluster_keys) = clusters(src, &raw, &levels, &identity)?;
    let sync_fit = sync_fit(src, &raw)?;
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
        warnings,
        text: text.to_string(),
    })
}

/// Container types: unique names, defined parents, one type per role,
/// roles nested in their natural order, one chain from the root.
fn levels(src: &Text<'_>, raw: &RawFile) -> Result<Vec<Level>> {
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
    Ok(levels)
}

/// Host identity: a name in two alias lists is ambiguous.
fn identity(src: &Text<'_>, raw: &RawFile) -> Result<HostIdentity> {
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
    src: &Text<'_>,
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

fn sync_fit(src: &Text<'_>, raw: &RawFile) -> Result<SyncFit> {
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
