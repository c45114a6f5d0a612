//! The hierarchy's `[pcp]` section.

use crate::error::Result;
use crate::hierarchy::{Display, RawDisplay, Role, Text};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use toml::Spanned;

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
        crate::hierarchy::selects(&self.include, &self.exclude, name)
    }

    /// Reads and checks the section.
    pub fn read(text: &Text<'_>) -> Result<PcpConfig> {
        let raw = text.view::<View>()?.pcp;
        text.level(&raw.level, Role::Machine, "pcp")?;
        let mut metrics = HashMap::new();
        for (m, d) in &raw.metrics {
            metrics.insert(m.clone(), text.display(d)?);
        }
        Ok(PcpConfig {
            pmcd: raw.pmcd,
            include: text.patterns(&raw.include)?,
            exclude: text.patterns(&raw.exclude)?,
            metrics,
        })
    }
}

/// The file as the `[pcp]` section sees it.
#[derive(Deserialize)]
struct View {
    #[serde(default)]
    pcp: Raw,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Raw {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchy::parse;

    const BASE: &str = "[[container]]\nname = \"Cluster\"\nrole = \"cluster\"\n\n[[container]]\nname = \"Machine\"\nparent = \"Cluster\"\nrole = \"machine\"\n";

    fn read(section: &str) -> Result<PcpConfig> {
        PcpConfig::read(&parse(&format!("{BASE}{section}"), "h.toml")?.text())
    }

    #[test]
    fn the_section_selects_and_renames_metrics() {
        let p = read("[pcp]\nlevel = \"Machine\"\ninclude = [\"kernel.*\", \"mem.util.*\"]\nexclude = [\"kernel.all.pswitch\"]\n[pcp.metrics.\"kernel.all.load\"]\nname = \"load\"\n").unwrap();
        assert!(p.selects("kernel.all.load") && p.selects("mem.util.free"));
        assert!(!p.selects("kernel.all.pswitch") && !p.selects("network.interface.in.bytes"));
        assert_eq!(p.metrics["kernel.all.load"].name.as_deref(), Some("load"));
        assert!(!p.pmcd);
        let e = read("[pcp]\nanything = 1\n").unwrap_err();
        assert!(
            e.message.contains("line 10: unknown field `anything`"),
            "{e}"
        );
        let e = read("[pcp]\ninclude = [\"[\"]\n").unwrap_err();
        assert!(e.message.contains("line 10: pattern `[`"), "{e}");
    }
}
