//! Event maps: what the events of one libRastro instrumentation mean, as
//! data (`sources/maps/*.toml`, schema in `sources/maps/README.md`). The
//! thesis' DECK mapping table (appendix C.1) and akypuera's MPI events are
//! two such maps; a user with other libRastro instrumentation writes a
//! third and passes it with `--deck-map`, without Rust code.
//!
//! Per event id a map gives its name, its fields in call order with their
//! types (the decoder returns values grouped by type, and a field is
//! found by its type and its rank within that type), and its effects on
//! the file's state row, on point events, on links and on the file's
//! identity (OS pid and tid).

use crate::error::{Error, Result};
use crate::hierarchy::{valid_color, Display};
use integrador_rastro::{FieldType, Record};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The DECK map (docs/formats.md §4), built in.
pub const DECK_TOML: &str = include_str!("../sources/maps/deck.toml");
/// akypuera's MPI events, built in.
pub const AKYPUERA_TOML: &str = include_str!("../sources/maps/akypuera.toml");

/// Whether `name` is a built-in map's name rather than a path.
pub fn is_builtin(name: &str) -> bool {
    matches!(name, "deck" | "akypuera")
}

/// The map `--deck-map` or `[deck] map` names: a file, or a built-in map
/// when no such file exists; the DECK map without either.
pub fn select(choice: Option<&Path>) -> Result<EventMap> {
    let Some(p) = choice else {
        return Ok(EventMap::deck());
    };
    let name = p.to_string_lossy();
    if is_builtin(&name) && !p.exists() {
        let text = if name == "deck" {
            DECK_TOML
        } else {
            AKYPUERA_TOML
        };
        return EventMap::parse(text, &format!("built-in {name} map"));
    }
    EventMap::load(p)
}

/// A record's integer values, which are all a map reads of it.
pub trait Ints {
    /// The `k`-th value of integer type `t`.
    fn int(&self, t: FieldType, k: usize) -> Option<u64>;
}

impl Ints for Record {
    fn int(&self, t: FieldType, k: usize) -> Option<u64> {
        Record::int(self, t, k)
    }
}

/// A number taken from a record or from its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expr {
    /// The file's first id (a rank).
    Id1,
    /// The file's second id (a thread index).
    Id2,
    /// The rank an `each` expansion is at.
    Peer,
    /// The `k`-th value of an integer type.
    Field(FieldType, usize),
}

impl Expr {
    /// The value for `rec` of file `(id1, id2)`; `None` when the record
    /// lacks the field.
    pub fn eval(self, rec: &impl Ints, id1: u64, id2: u64, peer: u64) -> Option<u64> {
        match self {
            Expr::Id1 => Some(id1),
            Expr::Id2 => Some(id2),
            Expr::Peer => Some(peer),
            Expr::Field(t, k) => rec.int(t, k),
        }
    }
}

/// Whether a link joins ranks (their Processes) or threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// From a rank's Process to a rank's Process.
    Rank,
    /// From a thread's container to a thread's container.
    Thread,
}

/// A link type of the map.
#[derive(Debug, Clone)]
pub struct LinkDef {
    /// Its key in the map.
    pub key: String,
    /// Pajé type name.
    pub name: String,
    /// What its ends are.
    pub level: Level,
}

/// One end of a link, as written at a record.
#[derive(Debug, Clone)]
pub struct LinkEnd {
    /// Index in [`EventMap::links`].
    pub link: usize,
    /// The key, without the FIFO counter.
    pub key: Vec<Expr>,
    /// Append a per-(link, key, side) counter: matches first-in first-out.
    pub fifo: bool,
    /// The other end (a rank for rank links, a thread index of the same
    /// rank for thread links); `None` = learned from the matching record.
    pub partner: Option<Expr>,
    /// Repeat for every rank `0..each` but the file's own (`peer`).
    pub each: Option<Expr>,
    /// Message size, written in the link's `Size` field.
    pub size: Option<Expr>,
    /// Link value (default: the link's type name).
    pub value: String,
}

/// What one event id does.
#[derive(Debug, Clone, Default)]
pub struct EventDef {
    /// Its name.
    pub name: String,
    /// The file's process is this OS pid.
    pub process: Option<Expr>,
    /// The file's thread is this OS tid.
    pub thread: Option<Expr>,
    /// Replace the row's states by this one.
    pub set: Option<String>,
    /// Push this state.
    pub push: Option<String>,
    /// Pop one state.
    pub pop: bool,
    /// Pop every state (the row ends).
    pub end: bool,
    /// A point event with this value.
    pub event: Option<String>,
    /// A link starts here.
    pub link_start: Option<LinkEnd>,
    /// A link ends here.
    pub link_end: Option<LinkEnd>,
    /// A zero-length link from the partner to this file ends here.
    pub link_here: Option<LinkEnd>,
}

/// A loaded map.
#[derive(Debug, Clone)]
pub struct EventMap {
    /// Where it came from.
    pub origin: String,
    /// Instrumentation name (`DECK`).
    pub name: String,
    /// State type name.
    pub state_name: String,
    /// Event type name.
    pub event_name: String,
    /// Link types.
    pub links: Vec<LinkDef>,
    /// Per event id.
    /// (foldhash: looked up per record, where SipHash showed.)
    pub events: foldhash::HashMap<u16, EventDef>,
    /// Display of state and event values.
    pub values: HashMap<String, Display>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMap {
    map: RawHead,
    #[serde(default)]
    links: BTreeMap<String, RawLinkDef>,
    #[serde(default)]
    values: BTreeMap<String, RawDisplay>,
    #[serde(default)]
    pairs: BTreeMap<String, [u16; 2]>,
    #[serde(default)]
    event: Vec<RawEvent>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHead {
    name: String,
    state: Option<String>,
    event: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLinkDef {
    name: Option<String>,
    level: Level,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDisplay {
    name: Option<String>,
    color: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEvent {
    id: u16,
    name: String,
    #[serde(default)]
    fields: Vec<String>,
    process: Option<String>,
    thread: Option<String>,
    set: Option<String>,
    push: Option<String>,
    #[serde(default)]
    pop: bool,
    #[serde(default)]
    end: bool,
    event: Option<String>,
    link_start: Option<RawLinkEnd>,
    link_end: Option<RawLinkEnd>,
    link_here: Option<RawLinkEnd>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLinkEnd {
    link: String,
    #[serde(default)]
    key: Vec<String>,
    #[serde(default)]
    fifo: bool,
    to: Option<String>,
    from: Option<String>,
    each: Option<String>,
    size: Option<String>,
    value: Option<String>,
}

fn field_type(letter: &str) -> Option<FieldType> {
    Some(match letter {
        "s" => FieldType::String,
        "d" => FieldType::Double,
        "f" => FieldType::Float,
        "l" => FieldType::U64,
        "w" => FieldType::U16,
        "c" => FieldType::U8,
        "i" => FieldType::U32,
        _ => return None,
    })
}

impl EventMap {
    /// The built-in DECK map.
    pub fn deck() -> EventMap {
        // Compiled in and covered by a test: failing is a build defect.
        #[allow(clippy::expect_used)]
        EventMap::parse(DECK_TOML, "built-in DECK map").expect("the DECK map is valid")
    }

    /// Loads a map file.
    pub fn load(path: &Path) -> Result<EventMap> {
        let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
        let text = integrador_lines::read_to_string_bounded(file, 4 << 20)
            .map_err(|e| Error::in_file(path, format!("event map: {e}")))?;
        EventMap::parse(&text, &path.display().to_string())
    }

    /// Parses and checks a map; `origin` names it in messages.
    pub fn parse(text: &str, origin: &str) -> Result<EventMap> {
        let raw: RawMap = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text.get(..s.start).map_or(0, |t| t.matches('\n').count()) + 1);
            let msg = match e.message().trim() {
                "" => "not valid TOML here".to_string(),
                m => m.replace('\n', " "),
            };
            match line {
                Some(l) => Error::input(format!("{origin}: line {l}: {msg}")),
                None => Error::input(format!("{origin}: {msg}")),
            }
        })?;
        let bad = |what: String| Error::input(format!("{origin}: {what}"));
        let mut links = Vec::new();
        for (key, l) in &raw.links {
            links.push(LinkDef {
                key: key.clone(),
                name: l.name.clone().unwrap_or_else(|| key.clone()),
                level: l.level,
            });
        }
        let values = values(&raw, &bad)?;
        let mut events = foldhash::HashMap::<u16, EventDef>::default();
        for (state, [push, pop]) in &raw.pairs {
            for (id, def) in [
                (
                    *push,
                    EventDef {
                        name: format!("{state} in"),
                        push: Some(state.clone()),
                        ..EventDef::default()
                    },
                ),
                (
                    *pop,
                    EventDef {
                        name: format!("{state} out"),
                        pop: true,
                        ..EventDef::default()
                    },
                ),
            ] {
                if events.insert(id, def).is_some() {
                    return Err(bad(format!("event id {id} is defined twice")));
                }
            }
        }
        for e in &raw.event {
            let ctx = |what: String| bad(format!("event {} ({}): {what}", e.id, e.name));
            let def = event_def(e, &links, &ctx)?;
            if [def.set.is_some(), def.push.is_some(), def.pop, def.end]
                .iter()
                .filter(|&&x| x)
                .count()
                > 1
            {
                return Err(ctx("at most one of set, push, pop, end".into()));
            }
            if events.insert(e.id, def).is_some() {
                return Err(bad(format!("event id {} is defined twice", e.id)));
            }
        }
        Ok(EventMap {
            origin: origin.to_string(),
            name: raw.map.name.clone(),
            state_name: raw
                .map
                .state
                .clone()
                .unwrap_or_else(|| format!("{} state", raw.map.name)),
            event_name: raw
                .map
                .event
                .clone()
                .unwrap_or_else(|| format!("{} event", raw.map.name)),
            links,
            events,
            values,
        })
    }
}

/// The display of each value the map names, colors checked.
fn values(raw: &RawMap, bad: &dyn Fn(String) -> Error) -> Result<HashMap<String, Display>> {
    let mut values = HashMap::new();
    for (v, d) in &raw.values {
        let color = match &d.color {
            None => None,
            Some(c) if valid_color(c) => Some(c.clone()),
            Some(c) => Some(crate::color::paje_color(c).ok_or_else(|| {
                bad(format!(
                    "value `{v}`: color `{c}`: expected \"r g b\" in 0..1 or a color name"
                ))
            })?),
        };
        values.insert(
            v.clone(),
            Display {
                name: d.name.clone(),
                color,
            },
        );
    }
    Ok(values)
}

/// One `[[event]]` of a map: its fields, the expressions that read them,
/// and its state and link roles.
fn event_def(e: &RawEvent, links: &[LinkDef], ctx: &dyn Fn(String) -> Error) -> Result<EventDef> {
    let mut fields: HashMap<&str, (FieldType, usize)> = HashMap::new();
    let mut per_type: HashMap<char, usize> = HashMap::new();
    for f in &e.fields {
        let (letter, name) = f.split_once(' ').unwrap_or(("", f));
        let Some(t) = field_type(letter.trim()) else {
            return Err(ctx(format!(
                "field `{f}`: expected a type letter (i l w c s d f) then a name, as \"i dest_rank\""
            )));
        };
        let k = per_type.entry(t.letter()).or_default();
        if fields.insert(name.trim(), (t, *k)).is_some() {
            return Err(ctx(format!("field `{}` is declared twice", name.trim())));
        }
        *k += 1;
    }
    let expr = |s: &str| -> Result<Expr> {
        match s {
            "id1" => Ok(Expr::Id1),
            "id2" => Ok(Expr::Id2),
            "peer" => Ok(Expr::Peer),
            _ => match fields.get(s) {
                Some(&(t, k))
                    if matches!(
                        t,
                        FieldType::U32 | FieldType::U64 | FieldType::U16 | FieldType::U8
                    ) =>
                {
                    Ok(Expr::Field(t, k))
                }
                Some(_) => Err(ctx(format!("`{s}` is not an integer field"))),
                None => Err(ctx(format!(
                    "`{s}` is not a field of this event (nor id1, id2, peer)"
                ))),
            },
        }
    };
    let end = |r: &Option<RawLinkEnd>, side: &str| -> Result<Option<LinkEnd>> {
        let Some(r) = r else { return Ok(None) };
        let Some(link) = links.iter().position(|l| l.key == r.link) else {
            return Err(ctx(format!(
                "{side}: link `{}` is not declared under [links]",
                r.link
            )));
        };
        let partner = match (side, &r.to, &r.from) {
            ("link_start", Some(p), None) => Some(expr(p)?),
            ("link_start", None, None) => None,
            ("link_end" | "link_here", None, Some(p)) => Some(expr(p)?),
            ("link_end", None, None) => None,
            _ => {
                return Err(ctx(format!(
                    "{side}: the other end is `to` for link_start and `from` for link_end and link_here"
                )))
            }
        };
        let level = links.get(link).map(|l| l.level);
        if partner.is_none() && (level == Some(Level::Rank) || side == "link_here") {
            return Err(ctx(format!(
                "{side}: a rank link (and any link_here) must name its other end"
            )));
        }
        if r.key.is_empty() && !r.fifo && side != "link_here" {
            return Err(ctx(format!("{side}: needs a `key` or `fifo = true`")));
        }
        if r.key.len() > 3 {
            return Err(ctx(format!("{side}: a key has at most 3 parts")));
        }
        let mut key = Vec::new();
        for k in &r.key {
            key.push(expr(k)?);
        }
        let each = r.each.as_deref().map(expr).transpose()?;
        let uses_peer = key.contains(&Expr::Peer) || partner == Some(Expr::Peer);
        if uses_peer != each.is_some() {
            return Err(ctx(format!(
                "{side}: `peer` is used with `each` and only then"
            )));
        }
        Ok(Some(LinkEnd {
            link,
            key,
            fifo: r.fifo,
            partner,
            each,
            size: r.size.as_deref().map(expr).transpose()?,
            value: r
                .value
                .clone()
                .unwrap_or_else(|| links.get(link).map(|l| l.name.clone()).unwrap_or_default()),
        }))
    };
    let def = EventDef {
        name: e.name.clone(),
        process: e.process.as_deref().map(expr).transpose()?,
        thread: e.thread.as_deref().map(expr).transpose()?,
        set: e.set.clone(),
        push: e.push.clone(),
        pop: e.pop,
        end: e.end,
        event: e.event.clone(),
        link_start: end(&e.link_start, "link_start")?,
        link_end: end(&e.link_end, "link_end")?,
        link_here: end(&e.link_here, "link_here")?,
    };
    Ok(def)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_maps_load() {
        let d = EventMap::deck();
        assert_eq!(d.name, "DECK");
        assert!(d.events.contains_key(&405) && d.events.contains_key(&213));
        let a = EventMap::parse(AKYPUERA_TOML, "akypuera").unwrap();
        assert_eq!(
            a.events.get(&161).and_then(|e| e.push.clone()).as_deref(),
            Some("MPI_Send")
        );
        assert!(a.events.get(&5000).unwrap().link_start.is_some());
    }

    #[test]
    fn errors_name_the_event_and_the_problem() {
        let head = "[map]\nname = \"X\"\n[links.m]\nlevel = \"rank\"\n";
        let e = |body: &str| {
            EventMap::parse(&format!("{head}{body}"), "m.toml")
                .unwrap_err()
                .to_string()
        };
        assert!(e("[[event]]\nid = 1\nname = \"a\"\nfields = [\"q x\"]\n")
            .contains("event 1 (a): field `q x`"));
        assert!(e("[[event]]\nid = 1\nname = \"a\"\nlink_start = { link = \"m\", key = [\"dst\"], to = \"dst\" }\n")
            .contains("`dst` is not a field"));
        assert!(e("[[event]]\nid = 1\nname = \"a\"\nfields = [\"i d\"]\nlink_start = { link = \"m\", key = [\"d\"] }\n")
            .contains("must name its other end"));
        assert!(e(
            "[[event]]\nid = 1\nname = \"a\"\nlink_start = { link = \"zz\", fifo = true }\n"
        )
        .contains("link `zz` is not declared"));
        assert!(e("[pairs]\nA = [1, 2]\n[[event]]\nid = 2\nname = \"b\"\n")
            .contains("event id 2 is defined twice"));
        assert!(e("bogus = 1\n").contains("line 5"));
    }
}
