//! Host identity rules: when two host names are the same machine.
//!
//! Monitors disagree on names: Ganglia reports `node01.cluster.example`, a
//! PCP archive label says `node01`, a sync file may use an address. Two names
//! are one host when an alias list of the hierarchy puts them together, or
//! (unless the hierarchy turns it off) when one is the short form of the
//! other (`node01` = `node01.cluster.example`). Two different fully
//! qualified names are never one host by that rule, so `node01.a.example`
//! and `node01.b.example` of two domains stay apart.

// foldhash: a fast hash with a random seed per run, so crafted names
// cannot make lookups quadratic (SipHash was 13% of a Ganglia run).
use foldhash::{HashMap, HashMapExt};
use std::net::IpAddr;
use std::sync::Arc;

/// Positions (in a caller's list of hosts) filed under the identity keys
/// of their names ([`HostIdentity::keys`]): the candidates for
/// [`HostIdentity::same`] without a scan. A key nearly always holds one
/// position, stored inline.
#[derive(Debug, Clone, Default)]
pub struct KeyIndex {
    map: HashMap<Arc<str>, Positions>,
}

#[derive(Debug, Clone)]
enum Positions {
    One(u32),
    Many(Vec<u32>),
}

impl KeyIndex {
    /// Files `position` under `key`; a repeat of the key's last position
    /// is kept once.
    pub fn insert(&mut self, key: Arc<str>, position: u32) {
        match self.map.get_mut(&key) {
            None => {
                self.map.insert(key, Positions::One(position));
            }
            Some(p) => {
                if p.as_slice().last() == Some(&position) {
                    return;
                }
                match p {
                    Positions::One(first) => *p = Positions::Many(vec![*first, position]),
                    Positions::Many(v) => v.push(position),
                }
            }
        }
    }

    /// The positions filed under `key`, in the order they were filed.
    pub fn get(&self, key: &str) -> &[u32] {
        self.map.get(key).map_or(&[], Positions::as_slice)
    }
}

impl Positions {
    fn as_slice(&self) -> &[u32] {
        match self {
            Positions::One(i) => std::slice::from_ref(i),
            Positions::Many(v) => v,
        }
    }
}

/// The identity rules of a run.
#[derive(Debug, Clone)]
pub struct HostIdentity {
    groups: Vec<Vec<String>>,
    group_of: HashMap<String, usize>,
    short_names: bool,
}

impl Default for HostIdentity {
    fn default() -> Self {
        HostIdentity {
            groups: Vec::new(),
            group_of: HashMap::new(),
            short_names: true,
        }
    }
}

impl HostIdentity {
    /// Rules from alias lists (each list names one host) and the
    /// short-name switch. A name in two lists is an error for the caller to
    /// report; here the first list wins.
    pub fn new(groups: Vec<Vec<String>>, short_names: bool) -> Self {
        let mut group_of = HashMap::new();
        for (i, g) in groups.iter().enumerate() {
            for name in g {
                group_of.entry(name.clone()).or_insert(i);
            }
        }
        HostIdentity {
            groups,
            group_of,
            short_names,
        }
    }

    /// The alias list `name` belongs to, if any.
    pub fn aliases(&self, name: &str) -> Option<&[String]> {
        self.group_of
            .get(name)
            .and_then(|&i| self.groups.get(i))
            .map(Vec::as_slice)
    }

    /// The preferred display name: the first entry of its alias list, else
    /// the name itself.
    pub fn preferred<'a>(&'a self, name: &'a str) -> &'a str {
        self.aliases(name)
            .and_then(|g| g.first())
            .map_or(name, String::as_str)
    }

    /// Whether `a` and `b` name the same host.
    pub fn same(&self, a: &str, b: &str) -> bool {
        if a == b {
            return true;
        }
        self.forms(a).any(|x| {
            self.forms(b)
                .any(|y| x == y || (self.short_names && (is_short_of(x, y) || is_short_of(y, x))))
        })
    }

    /// Index keys under which a name is filed so that every name it may be
    /// [`same`](Self::same) as shares at least one key with it: each of
    /// its forms, and for the short-name rule the first label of a
    /// qualified form. Looking a host up then costs its keys, not a scan
    /// of every host seen.
    pub fn keys<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> {
        self.forms(name).flat_map(move |x| {
            let label = (self.short_names && x.parse::<IpAddr>().is_err())
                .then(|| x.split_once('.').map(|(first, _)| first))
                .flatten()
                .filter(|l| !l.is_empty());
            std::iter::once(x).chain(label)
        })
    }

    /// Every name of the host `name`: its alias list, or itself.
    fn forms<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> {
        let list = self.aliases(name);
        let alone = list.is_none().then_some(name);
        list.into_iter().flatten().map(String::as_str).chain(alone)
    }
}

/// `short` is the first label of the fully qualified name `fqdn`.
fn is_short_of(short: &str, fqdn: &str) -> bool {
    !short.contains('.')
        && fqdn.len() > short.len() + 1
        && fqdn.starts_with(short)
        && fqdn.as_bytes().get(short.len()) == Some(&b'.')
        && fqdn.parse::<IpAddr>().is_err()
}

/// Compares names as people sort them: runs of digits by their value, so
/// `node2` < `node10`; equal by that rule, by their bytes.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) if p.is_ascii_digit() && q.is_ascii_digit() => {
                let run = |s: &[u8]| s.iter().take_while(|c| c.is_ascii_digit()).count();
                let (m, n) = (run(x), run(y));
                let trim = |s: &[u8]| {
                    let z = s.iter().take_while(|&&c| c == b'0').count();
                    s[z..].to_vec()
                };
                let (u, v) = (trim(&x[..m]), trim(&y[..n]));
                let by_value = u.len().cmp(&v.len()).then_with(|| u.cmp(&v));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                x = &x[m..];
                y = &y[n..];
            }
            (Some(p), Some(q)) => {
                if p != q {
                    return p.cmp(q);
                }
                x = &x[1..];
                y = &y[1..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_qualified_forms() {
        let ids = HostIdentity::default();
        assert!(ids.same("node01", "node01.cluster.example"));
        assert!(ids.same("node01.cluster.example", "node01"));
        assert!(!ids.same("node01.a.example", "node01.b.example"));
        assert!(!ids.same("node01", "node011.cluster.example"));
        assert!(!ids.same("10", "10.0.0.1"));
        let off = HostIdentity::new(vec![], false);
        assert!(!off.same("node01", "node01.cluster.example"));
    }

    #[test]
    fn alias_lists() {
        let ids = HostIdentity::new(
            vec![vec![
                "athlon01.lsc.ufsm.br".into(),
                "athlon01".into(),
                "10.0.0.1".into(),
            ]],
            false,
        );
        assert!(ids.same("10.0.0.1", "athlon01"));
        assert!(ids.same("athlon01.lsc.ufsm.br", "10.0.0.1"));
        assert!(!ids.same("10.0.0.2", "athlon01"));
        assert_eq!(ids.preferred("10.0.0.1"), "athlon01.lsc.ufsm.br");
        assert_eq!(ids.preferred("other"), "other");
    }
}
