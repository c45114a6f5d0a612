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
mod section;

pub use parse::parse;
pub use section::{selects, RawDisplay, Text};

/// The built-in default hierarchy (also shipped as `hierarchies/default.toml`).
pub const DEFAULT_TOML: &str = include_str!("../../hierarchies/default.toml");

/// What a container type stands for; the unifier creates containers by role.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A grid of administrative domains.
    Grid,
    /// A cluster (one monitored cluster, one domain).
    Cluster,
    /// A machine (host).
    Machine,
    /// An OS process (or a parallel program's rank, once unified with it).
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
    /// Non-fatal remarks about the file.
    pub warnings: Vec<String>,
    /// The file's text: each kind of source reads its own section.
    text: String,
}

/// The top-level keys of the file besides the sources' sections.
const CORE: [&str; 5] = ["container", "grid", "hosts", "clusters", "sync"];

impl Hierarchy {
    /// The file's text, for a kind of source to read its section.
    pub fn text(&self) -> Text<'_> {
        Text {
            text: &self.text,
            origin: &self.origin,
            levels: &self.levels,
        }
    }

    /// Refuses a top-level key that is neither the file's core nor one of
    /// the `sections` of the kinds of source, naming its line.
    pub fn check_sections(&self, sections: &[&str]) -> Result<()> {
        let text = self.text();
        let keys: std::collections::BTreeMap<toml::Spanned<String>, serde::de::IgnoredAny> =
            text.view()?;
        let known: Vec<&str> = CORE.iter().chain(sections).copied().collect();
        match keys.keys().find(|k| !known.contains(&k.get_ref().as_str())) {
            None => Ok(()),
            Some(k) => Err(text.at(
                k.span().start,
                format!(
                    "unknown section `{}`, expected one of {}",
                    k.get_ref(),
                    known
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
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
        let h = parse(&format!("bogus = 1\n{BASE}"), "h.toml").unwrap();
        assert_eq!(
            h.check_sections(&["mine"]).unwrap_err().message,
            "h.toml: line 1: unknown section `bogus`, expected one of `container`, `grid`, `hosts`, `clusters`, `sync`, `mine`"
        );
        let h = parse(&format!("{BASE}[mine]\nx = 1\n"), "h.toml").unwrap();
        assert!(h.check_sections(&["mine"]).is_ok());
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
}
