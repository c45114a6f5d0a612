//! The hierarchy's `[deck]` section (libRastro traces).

use crate::error::Result;
use crate::hierarchy::{Display, RawDisplay, Role, Text};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use toml::Spanned;

/// The `[deck]` section.
#[derive(Debug, Clone, Default)]
pub struct DeckConfig {
    /// Event map: a file (relative to the hierarchy file) or a built-in
    /// map name; `--deck-map` overrides it.
    pub map: Option<PathBuf>,
    /// Display of state, event and link values, over the map's own.
    pub values: HashMap<String, Display>,
}

impl DeckConfig {
    /// Reads and checks the section.
    pub fn read(text: &Text<'_>) -> Result<DeckConfig> {
        let raw = text.view::<View>()?.deck;
        text.level(&raw.level, Role::Thread, "deck")?;
        let mut values = HashMap::new();
        for (m, d) in &raw.values {
            values.insert(m.clone(), text.display(d)?);
        }
        let map = raw.map.as_deref().map(|m| {
            if crate::eventmap::is_builtin(m) {
                PathBuf::from(m)
            } else {
                text.path(m)
            }
        });
        Ok(DeckConfig { map, values })
    }
}

/// The file as the `[deck]` section sees it.
#[derive(Deserialize)]
struct View {
    #[serde(default)]
    deck: Raw,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Raw {
    level: Option<Spanned<String>>,
    map: Option<String>,
    #[serde(default)]
    values: BTreeMap<String, RawDisplay>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchy::parse;
    use std::path::Path;

    const BASE: &str = "[[container]]\nname = \"Cluster\"\nrole = \"cluster\"\n\n[[container]]\nname = \"Machine\"\nparent = \"Cluster\"\nrole = \"machine\"\n";

    fn read(section: &str, origin: &str) -> Result<DeckConfig> {
        DeckConfig::read(&parse(&format!("{BASE}{section}"), origin)?.text())
    }

    #[test]
    fn the_map_is_found_beside_the_file() {
        let d = read(
            "[deck]\nmap = \"maps/mine.toml\"\n[deck.values.exec]\ncolor = \"0 0 1\"\n",
            "conf/h.toml",
        )
        .unwrap();
        assert_eq!(d.map.as_deref(), Some(Path::new("conf/maps/mine.toml")));
        assert_eq!(d.values["exec"].color.as_deref(), Some("0 0 1"));
        let d = read("[deck]\nmap = \"akypuera\"\n", "conf/h.toml").unwrap();
        assert_eq!(d.map.as_deref(), Some(Path::new("akypuera")));
        let e = read("[deck]\nlevel = \"Machine\"\n", "h.toml").unwrap_err();
        assert!(e.to_string().contains("role"), "{e}");
    }
}
