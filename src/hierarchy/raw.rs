//! The hierarchy file as TOML gives it, spans kept for messages.

use super::Role;
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// The core of the file; the sources' sections are read by their kinds,
/// and [`super::Hierarchy::check_sections`] refuses any other key.
#[derive(Deserialize)]
pub(super) struct RawFile {
    #[serde(default)]
    pub(super) container: Vec<RawContainer>,
    #[serde(default)]
    pub(super) grid: RawGrid,
    #[serde(default)]
    pub(super) hosts: RawHosts,
    #[serde(default)]
    pub(super) clusters: BTreeMap<String, Vec<Spanned<String>>>,
    #[serde(default)]
    pub(super) sync: RawSync,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawContainer {
    pub(super) name: Spanned<String>,
    pub(super) parent: Option<Spanned<String>>,
    pub(super) role: Spanned<Role>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGrid {
    pub(super) name: Option<String>,
    pub(super) default_cluster: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHosts {
    #[serde(default = "yes")]
    pub(super) short_names: bool,
    #[serde(default)]
    pub(super) aliases: Vec<Vec<Spanned<String>>>,
}

impl Default for RawHosts {
    fn default() -> Self {
        RawHosts {
            short_names: true,
            aliases: Vec::new(),
        }
    }
}

pub(super) fn yes() -> bool {
    true
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSync {
    pub(super) fit: Option<Spanned<String>>,
}
