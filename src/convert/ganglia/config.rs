//! The hierarchy's `[ganglia]` section.

use crate::error::Result;
use crate::hierarchy::{Display, RawDisplay, Role, Text};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use toml::Spanned;

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
        crate::hierarchy::selects(&self.include, &self.exclude, name)
    }

    /// Reads and checks the section.
    pub fn read(text: &Text<'_>) -> Result<GangliaConfig> {
        let raw = text.view::<View>()?.ganglia;
        text.level(&raw.level, Role::Machine, "ganglia")?;
        let mut metrics = HashMap::new();
        for (m, d) in &raw.metrics {
            metrics.insert(m.clone(), text.display(d)?);
        }
        let file = |f: &RawFile| GangliaFile {
            collector: f.collector.clone(),
            cluster: f.cluster.clone(),
        };
        Ok(GangliaConfig {
            defaults: GangliaFile {
                collector: raw.collector.clone(),
                cluster: raw.cluster.clone(),
            },
            files: raw
                .files
                .iter()
                .map(|(k, v)| (k.clone(), file(v)))
                .collect(),
            metrics,
            include: text.patterns(&raw.include)?,
            exclude: text.patterns(&raw.exclude)?,
        })
    }
}

/// The file as this section sees it.
#[derive(Deserialize)]
struct View {
    #[serde(default)]
    ganglia: Raw,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Raw {
    level: Option<Spanned<String>>,
    collector: Option<String>,
    cluster: Option<String>,
    #[serde(default)]
    files: BTreeMap<String, RawFile>,
    #[serde(default)]
    metrics: BTreeMap<String, RawDisplay>,
    #[serde(default)]
    include: Vec<Spanned<String>>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawFile {
    collector: Option<String>,
    cluster: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchy::parse;

    const BASE: &str = "[[container]]\nname = \"Cluster\"\nrole = \"cluster\"\n\n[[container]]\nname = \"Machine\"\nparent = \"Cluster\"\nrole = \"machine\"\n";

    fn read(section: &str) -> Result<GangliaConfig> {
        let h = parse(&format!("{BASE}{section}"), "h.toml")?;
        GangliaConfig::read(&h.text())
    }

    #[test]
    fn the_section_is_read_and_checked() {
        let g = read("[ganglia]\nlevel = \"Machine\"\ncollector = \"gw\"\nexclude = [\"boot*\"]\n[ganglia.files.\"a.traced\"]\ncluster = \"A\"\n[ganglia.metrics.cpu_user]\ncolor = \"1 0 0\"\n").unwrap();
        assert_eq!(g.defaults.collector.as_deref(), Some("gw"));
        assert_eq!(g.files["a.traced"].cluster.as_deref(), Some("A"));
        assert!(g.selects("cpu_user") && !g.selects("boottime"));
        assert_eq!(g.metrics["cpu_user"].color.as_deref(), Some("1 0 0"));
        let e = read("[ganglia]\nlevel = \"Host\"\n").unwrap_err();
        assert!(
            e.message
                .starts_with("h.toml: line 10: [ganglia] level `Host` is not a defined"),
            "{e}"
        );
        let e = read("[ganglia]\nlevel = \"Cluster\"\n").unwrap_err();
        assert!(e.message.contains("has role `cluster`"), "{e}");
        let e = read("[ganglia]\ncolector = \"gw\"\n").unwrap_err();
        assert!(
            e.message.contains("line 10: unknown field `colector`"),
            "{e}"
        );
        let e = read("[ganglia.metrics.x]\ncolor = \"2 0 0\"\n").unwrap_err();
        assert!(
            e.message.starts_with("h.toml: line 10: color `2 0 0`"),
            "{e}"
        );
    }
}
