//! The hierarchy's `[mpi]` section.

use crate::error::Result;
use crate::hierarchy::{Display, RawDisplay, Role, Text};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use toml::Spanned;

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

impl Default for MpiConfig {
    fn default() -> Self {
        MpiConfig {
            state_name: "MPI state".into(),
            event_name: "MPI event".into(),
            link_name: "MPI message".into(),
            executing: Display::default(),
            states: HashMap::new(),
            start: None,
        }
    }
}

impl MpiConfig {
    /// Reads and checks the section.
    pub fn read(text: &Text<'_>) -> Result<MpiConfig> {
        let raw = text.view::<View>()?.mpi;
        text.level(&raw.level, Role::Process, "mpi")?;
        let start = match &raw.start {
            None => None,
            Some(v) => {
                let ns = match v.get_ref() {
                    toml::Value::String(s) => crate::clock::parse_epoch_ns(s.as_bytes()),
                    toml::Value::Integer(i) => i.checked_mul(1_000_000_000),
                    _ => None,
                };
                Some(ns.ok_or_else(|| {
                    text.at(
                        v.span().start,
                        "`start`: expected epoch seconds as a string (\"1795265512.474392\") or an integer".into(),
                    )
                })?)
            }
        };
        let mut states = HashMap::new();
        for (m, d) in &raw.states {
            states.insert(m.clone(), text.display(d)?);
        }
        let base = MpiConfig::default();
        Ok(MpiConfig {
            state_name: raw.state_name.unwrap_or(base.state_name),
            event_name: raw.event_name.unwrap_or(base.event_name),
            link_name: raw.link_name.unwrap_or(base.link_name),
            executing: raw
                .executing
                .as_ref()
                .map(|d| text.display(d))
                .transpose()?
                .unwrap_or_default(),
            states,
            start,
        })
    }
}

/// The file as the `[mpi]` section sees it.
#[derive(Deserialize)]
struct View {
    #[serde(default)]
    mpi: Raw,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Raw {
    level: Option<Spanned<String>>,
    state_name: Option<String>,
    event_name: Option<String>,
    link_name: Option<String>,
    executing: Option<RawDisplay>,
    start: Option<Spanned<toml::Value>>,
    #[serde(default)]
    states: BTreeMap<String, RawDisplay>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchy::parse;

    const BASE: &str = "[[container]]\nname = \"M\"\nrole = \"machine\"\n[[container]]\nname = \"P\"\nparent = \"M\"\nrole = \"process\"\n";

    fn read(section: &str) -> Result<MpiConfig> {
        MpiConfig::read(&parse(&format!("{BASE}{section}"), "h.toml")?.text())
    }

    #[test]
    fn the_section_is_read_and_checked() {
        let m = read("[mpi]\nstart = 1795265512\nlink_name = \"msg\"\n[mpi.states.MPI_Send]\ncolor = \"0 0 1\"\n").unwrap();
        assert_eq!(m.start, Some(1_795_265_512_000_000_000));
        assert_eq!(
            (m.link_name.as_str(), m.state_name.as_str()),
            ("msg", "MPI state")
        );
        assert_eq!(m.states["MPI_Send"].color.as_deref(), Some("0 0 1"));
        assert_eq!(
            read("[mpi]\nstart = \"1.5\"\n").unwrap().start,
            Some(1_500_000_000)
        );
        let e = read("[mpi]\nstart = true\n").unwrap_err();
        assert!(e.message.starts_with("h.toml: line 9: `start`"), "{e}");
    }
}
