//! The hierarchy file as TOML gives it, spans kept for messages.

use super::Role;
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
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
    #[serde(default)]
    pub(super) ganglia: RawGanglia,
    #[serde(default)]
    pub(super) os: RawOs,
    #[serde(default)]
    pub(super) deck: RawDeck,
    #[serde(default)]
    pub(super) mpi: RawMpi,
    #[serde(default)]
    pub(super) pcp: RawPcp,
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

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGanglia {
    pub(super) level: Option<Spanned<String>>,
    pub(super) collector: Option<String>,
    pub(super) cluster: Option<String>,
    #[serde(default)]
    pub(super) files: BTreeMap<String, RawGangliaFile>,
    #[serde(default)]
    pub(super) metrics: BTreeMap<String, RawDisplay>,
    #[serde(default)]
    pub(super) include: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) exclude: Vec<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGangliaFile {
    pub(super) collector: Option<String>,
    pub(super) cluster: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDisplay {
    pub(super) name: Option<String>,
    pub(super) color: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOs {
    pub(super) level: Option<Spanned<String>>,
    pub(super) state_name: Option<String>,
    pub(super) host: Option<String>,
    pub(super) boot_epoch: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) values: RawOsValues,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMpi {
    pub(super) level: Option<Spanned<String>>,
    pub(super) state_name: Option<String>,
    pub(super) event_name: Option<String>,
    pub(super) link_name: Option<String>,
    pub(super) executing: Option<RawDisplay>,
    pub(super) start: Option<Spanned<toml::Value>>,
    #[serde(default)]
    pub(super) states: BTreeMap<String, RawDisplay>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPcp {
    pub(super) level: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) pmcd: bool,
    #[serde(default)]
    pub(super) include: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) exclude: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) metrics: BTreeMap<String, RawDisplay>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDeck {
    pub(super) level: Option<Spanned<String>>,
    pub(super) map: Option<String>,
    #[serde(default)]
    pub(super) values: BTreeMap<String, RawDisplay>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOsValues {
    pub(super) running: Option<RawDisplay>,
    pub(super) blocked: Option<RawDisplay>,
    pub(super) runnable: Option<RawDisplay>,
    pub(super) sleeping: Option<RawDisplay>,
}
