//! Clocks from the traces' own messages. A receive cannot come before its
//! send, so every matched message of an MPI or DECK source bounds the
//! offset between its two hosts' clocks from one side; messages both ways
//! bound it from both ([`pair`]). Per host, relative to a reference host,
//! the correction is the pair's line composed along a spanning tree of
//! the best-bounded pairs.
//!
//! The run uses it three ways: `--sync-from-messages` applies the
//! estimates to the hosts no sync file corrects (a first pass over the
//! message sources); with a sync file, each host the file corrects is
//! checked against the band its messages allow; `--write-sync` writes the
//! corrections as a sync file.

pub mod apply;
pub(crate) mod hull;
pub mod pair;

use crate::clock::{ClockMap, HostClock, SyncTable};
use crate::registry::natural_cmp;
use pair::{Bound, Line, PairHull};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The messages of one source, per host pair, folded as they are paired.
#[derive(Debug, Clone, Default)]
pub struct Constraints {
    hosts: Vec<Arc<str>>,
    index: HashMap<Arc<str>, u32>,
    /// By sender, then receiver: (pair, sender is the pair's A); looked
    /// up for every message paired, by index (hashed, it was a sixth of
    /// pairing a message).
    by_ends: Vec<Vec<Option<(u32, bool)>>>,
    /// (A, B) → pair.
    by_pair: HashMap<(u32, u32), u32>,
    pairs: Vec<(u32, u32, PairHull)>,
}

impl Constraints {
    /// The index of `host`, to pass to [`Constraints::observe`].
    pub fn host(&mut self, host: &str) -> u32 {
        if let Some(&i) = self.index.get(host) {
            return i;
        }
        let i = self.hosts.len() as u32;
        let name: Arc<str> = host.into();
        self.hosts.push(name.clone());
        self.index.insert(name, i);
        i
    }

    /// A message sent on `from` at `send` and received on `to` at `recv`
    /// (both on the clocks the run applied). Messages within a host say
    /// nothing of clocks.
    #[inline]
    pub fn observe(&mut self, from: u32, send: i64, to: u32, recv: i64) {
        if from == to {
            return;
        }
        let known = self
            .by_ends
            .get(from as usize)
            .and_then(|row| row.get(to as usize))
            .copied()
            .flatten();
        let (pair, from_is_a) = match known {
            Some(p) => p,
            None => self.new_pair(from, to),
        };
        if let Some((_, _, h)) = self.pairs.get_mut(pair as usize) {
            if from_is_a {
                h.add(true, send, recv);
            } else {
                h.add(false, recv, send);
            }
        }
    }

    fn new_pair(&mut self, from: u32, to: u32) -> (u32, bool) {
        let name = |i: u32| self.hosts.get(i as usize).map_or("", |h| &**h);
        let from_is_a = natural_cmp(name(from), name(to)).is_le();
        let (a, b) = if from_is_a { (from, to) } else { (to, from) };
        let pairs = &mut self.pairs;
        let pair = *self.by_pair.entry((a, b)).or_insert_with(|| {
            pairs.push((a, b, PairHull::default()));
            (pairs.len() - 1) as u32
        });
        let (f, t) = (from as usize, to as usize);
        if self.by_ends.len() <= f {
            self.by_ends.resize_with(f + 1, Vec::new);
        }
        if let Some(row) = self.by_ends.get_mut(f) {
            if row.len() <= t {
                row.resize(t + 1, None);
            }
            if let Some(slot) = row.get_mut(t) {
                *slot = Some((pair, from_is_a));
            }
        }
        (pair, from_is_a)
    }

    /// Host pairs seen (names, A before B).
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str, &PairHull)> {
        let name = |i: u32| self.hosts.get(i as usize).map_or("", |h| &**h);
        self.pairs
            .iter()
            .map(move |(a, b, h)| (name(*a), name(*b), h))
    }
}

/// Every pair of the run, from all its message sources.
#[derive(Debug, Default)]
pub struct Estimator {
    pairs: BTreeMap<(String, String), PairHull>,
}

/// One host's correction onto the reference clock.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct HostFit {
    /// The host, as its messages' source names it.
    pub host: String,
    /// The host its correction was found through (the tree's parent).
    pub via: String,
    /// The correction (this host's clock → the reference's).
    pub line: Line,
    /// The weakest bound on the way to the reference; for `Both`, the
    /// half-widths added along the way.
    pub bound: Bound,
    /// Messages of its pair with `via`.
    pub messages: u64,
    /// The messages' span on this host's clock.
    pub span: (i64, i64),
}

/// The estimates of a run.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Estimates {
    /// The host every other is corrected onto.
    pub reference: String,
    /// Hosts taken as already right (the reference, the sync file's).
    pub fixed: Vec<String>,
    /// In the order the tree reached them.
    pub hosts: Vec<HostFit>,
    /// Hosts with messages but none to the tree.
    pub unreached: Vec<String>,
}

impl Estimator {
    /// Adds one source's pairs.
    pub fn add(&mut self, c: &Constraints) {
        for (a, b, h) in c.pairs() {
            self.pairs
                .entry((a.to_string(), b.to_string()))
                .or_default()
                .absorb(h);
        }
    }

    /// Every pair of hosts its messages join, with what they say of the
    /// correction of B onto A (on the clocks the run applied), in the
    /// pairs' order (A before B by name).
    pub fn pair_fits(&mut self) -> Vec<PairFit> {
        self.pairs
            .iter_mut()
            .filter_map(|((a, b), hull)| {
                let fit = hull.fit()?;
                Some(PairFit {
                    a: a.clone(),
                    b: b.clone(),
                    fit,
                    messages: hull.messages(),
                    span: hull.span.unwrap_or_default(),
                })
            })
            .collect()
    }

    /// Every pair's hull: A, B, its messages, and the points of the
    /// messages A→B and B→A as [`PairHull::points`] gives them.
    pub fn pair_points(&mut self) -> Vec<PairPoints> {
        self.pairs
            .iter_mut()
            .map(|((a, b), hull)| {
                let messages = hull.messages();
                let (f, r) = hull.points();
                PairPoints {
                    a: a.clone(),
                    b: b.clone(),
                    messages,
                    forward: f.to_vec(),
                    back: r.to_vec(),
                }
            })
            .collect()
    }

    /// Whether any message links two hosts.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Hosts with messages to another host.
    fn hosts(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self
            .pairs
            .keys()
            .flat_map(|(a, b)| [a.as_str(), b.as_str()])
            .collect();
        v.sort_by(|a, b| natural_cmp(a, b));
        v.dedup();
        v
    }

    /// Estimates every host reached from `fixed` (taken as right; the
    /// first is the reference). With no fixed host, the reference is the
    /// host with the most messages (ties: the first by name).
    /// `same(a, b)` tells whether two names are one host.
    pub fn estimate(&mut self, fixed: &[String], same: &dyn Fn(&str, &str) -> bool) -> Estimates {
        let hosts: Vec<String> = self.hosts().into_iter().map(str::to_string).collect();
        let at: HashMap<&str, usize> = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (h.as_str(), i))
            .collect();
        let mut edges: Vec<Edge> = Vec::new();
        for ((a, b), hull) in self.pairs.iter_mut() {
            let (Some(&a), Some(&b), Some(fit)) =
                (at.get(a.as_str()), at.get(b.as_str()), hull.fit())
            else {
                continue;
            };
            let (messages, span) = (hull.messages(), hull.span.unwrap_or_default());
            edges.push(Edge {
                a,
                b,
                fit,
                messages,
                span,
            });
        }
        let mut fixed_hosts: Vec<String> = fixed.to_vec();
        if fixed_hosts.is_empty() {
            let mut count = vec![0u64; hosts.len()];
            for e in &edges {
                count[e.a] += e.messages;
                count[e.b] += e.messages;
            }
            let best = (0..hosts.len()).max_by(|&x, &y| count[x].cmp(&count[y]).then(y.cmp(&x)));
            fixed_hosts.extend(best.map(|i| hosts[i].clone()));
        }
        let is_fixed: Vec<bool> = hosts
            .iter()
            .map(|h| fixed_hosts.iter().any(|f| same(f, h)))
            .collect();
        let tree = spanning_tree(hosts.len(), &edges, &is_fixed);
        let mut done: Vec<Option<(Line, Bound)>> = is_fixed
            .iter()
            .map(|&f| f.then_some((Line::IDENTITY, Bound::EXACT)))
            .collect();
        let mut out = Estimates {
            reference: fixed_hosts.first().cloned().unwrap_or_default(),
            fixed: fixed_hosts,
            ..Estimates::default()
        };
        // From the fixed hosts outwards, each host by its tree edge.
        let mut queue: std::collections::VecDeque<usize> =
            (0..hosts.len()).filter(|&i| is_fixed[i]).collect();
        while let Some(parent) = queue.pop_front() {
            let Some((up, up_bound)) = done[parent] else {
                continue;
            };
            for &i in &tree[parent] {
                let e = &edges[i];
                // The pair's line moves B onto A.
                let (child, edge, bound, span) = if e.a == parent {
                    (e.b, e.fit.line, e.fit.bound, e.span)
                } else {
                    let inv = e.fit.line.inverse();
                    (
                        e.a,
                        inv,
                        e.fit.bound.flipped(),
                        (inv.map(e.span.0), inv.map(e.span.1)),
                    )
                };
                if done[child].is_some() {
                    continue;
                }
                let line = edge.then(&up);
                let bound = weaker(bound, up_bound);
                done[child] = Some((line, bound));
                queue.push_back(child);
                out.hosts.push(HostFit {
                    host: hosts[child].clone(),
                    via: hosts[parent].clone(),
                    line,
                    bound,
                    messages: e.messages,
                    span,
                });
            }
        }
        out.unreached = hosts
            .iter()
            .zip(&done)
            .filter(|(_, d)| d.is_none())
            .map(|(h, _)| h.clone())
            .collect();
        out
    }
}

/// A fitted pair: hosts A and B by index.
struct Edge {
    a: usize,
    b: usize,
    fit: pair::Fit,
    messages: u64,
    span: (i64, i64),
}

/// The tree edges of each host: Kruskal on the pairs from the best bound
/// (both ways, then the narrowest band, then the most messages), the fixed
/// hosts taken as one, so every other host hangs from them by the path
/// whose weakest pair is the best there is. O(pairs · log pairs).
fn spanning_tree(n: usize, edges: &[Edge], is_fixed: &[bool]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..edges.len()).collect();
    let key = |e: &Edge| {
        (
            e.fit.bound.class(),
            e.fit.bound.half().unwrap_or(i64::MAX),
            u64::MAX - e.messages,
        )
    };
    order.sort_by_key(|&i| (key(&edges[i]), i));
    let mut up: Vec<usize> = (0..n).collect();
    fn root(up: &mut [usize], mut i: usize) -> usize {
        while up[i] != i {
            up[i] = up[up[i]];
            i = up[i];
        }
        i
    }
    if let Some(first) = is_fixed.iter().position(|&f| f) {
        for i in (0..n).filter(|&i| is_fixed[i]) {
            up[i] = first;
        }
    }
    let mut tree: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in order {
        let (a, b) = (root(&mut up, edges[i].a), root(&mut up, edges[i].b));
        if a != b {
            up[a] = b;
            tree[edges[i].a].push(i);
            tree[edges[i].b].push(i);
        }
    }
    tree
}

/// The bound of a path: the weaker of its edges, half-widths added.
fn weaker(edge: Bound, up: Bound) -> Bound {
    match (edge, up) {
        (
            Bound::Both {
                half: a,
                wide: wa,
                drift: d1,
                relaxed: r1,
            },
            Bound::Both {
                half: b,
                wide: wb,
                drift: d2,
                relaxed: r2,
            },
        ) => Bound::Both {
            half: a.saturating_add(b),
            wide: wa.saturating_add(wb),
            drift: d1 || d2,
            relaxed: r1 || r2,
        },
        (e, u) if e.class() >= u.class() => e,
        (_, u) => u,
    }
}

impl Estimates {
    /// The estimates as a clock table the run looks hosts up in.
    pub fn table(&self) -> SyncTable {
        let hosts = self
            .hosts
            .iter()
            .map(|h| HostClock {
                host: h.host.as_str().into(),
                map: h.line.clock_map(),
                lines_used: h.messages as usize,
                lines: h.messages as usize,
                band: h.bound.wide(),
                dropped: None,
                points: Vec::new(),
            })
            .collect();
        SyncTable::from_maps(self.reference.clone(), hosts)
    }

    /// The estimate of `host`, if it has one.
    pub fn get(&self, host: &str) -> Option<&HostFit> {
        self.hosts.iter().find(|h| h.host == host)
    }

    /// One line per host for the summary: the correction at `origin`
    /// (a reference time), its band and what bounds it.
    pub fn describe(&self, origin: i64) -> Vec<String> {
        let mut out: Vec<String> = self.hosts.iter().map(|h| describe(h, origin)).collect();
        if !self.unreached.is_empty() {
            out.push(format!(
                "no message links {} to {}: left as they are",
                self.unreached.join(", "),
                self.reference
            ));
        }
        out
    }
}

/// A duration with its sign, for offsets.
fn signed(ns: i64) -> String {
    let d = crate::time::format_duration(ns.saturating_abs());
    if ns < 0 {
        format!("-{d}")
    } else {
        format!("+{d}")
    }
}

/// Exact signed seconds (`-0.250000075 s`): an offset is read to the ns.
fn signed_seconds(ns: i64) -> String {
    let a = ns.unsigned_abs();
    let sign = if ns < 0 { '-' } else { '+' };
    format!("{sign}{}.{:09} s", a / 1_000_000_000, a % 1_000_000_000)
}

fn describe(h: &HostFit, origin: i64) -> String {
    let inv = h.line.inverse();
    let offset = h.line.at(inv.map(origin));
    let via = format!("{} message(s) with {}", h.messages, h.via);
    match h.bound {
        Bound::Both {
            half,
            wide,
            drift,
            relaxed,
        } => format!(
            "{}: offset {} ± {} at T0, drift {}; {via}{}",
            h.host,
            signed_seconds(offset),
            crate::time::format_duration(half),
            if drift {
                format!("{:+.3} ppm", h.line.ppm())
            } else if wide > half {
                format!(
                    "none measurable (a constant offset respects every message; ± {} with the drift they allow)",
                    crate::time::format_duration(wide)
                )
            } else {
                "none measurable (a constant offset respects every message)".to_string()
            },
            if relaxed {
                " (only within the 1 µs tolerance)"
            } else {
                ""
            }
        ),
        Bound::AtLeast(v) => format!(
            "{}: only a lower bound (messages go from {} to it, none back): its correction is at least {}; applied {}, the least that puts every receive after its send; {via}",
            h.host,
            h.via,
            signed(v),
            signed(offset)
        ),
        Bound::AtMost(v) => format!(
            "{}: only an upper bound (messages go from it to {}, none back): its correction is at most {}; applied {}, the least that puts every receive after its send; {via}",
            h.host,
            h.via,
            signed(v),
            signed(offset)
        ),
        Bound::Inconsistent(by) => format!(
            "{}: no linear clock respects every message (off by {} at least: clocks that jump, or times too coarse); applied {}, the middle; {via}",
            h.host,
            crate::time::format_duration(by),
            signed(offset)
        ),
    }
}

/// The messages that bound one pair of hosts (A before B by name).
#[derive(Debug, Clone)]
pub struct PairPoints {
    /// A.
    pub a: String,
    /// B.
    pub b: String,
    /// Messages both ways, from every source.
    pub messages: u64,
    /// Hull points of the messages A→B: (time on B, A's less B's).
    pub forward: Vec<pair::Point>,
    /// Those of the messages B→A.
    pub back: Vec<pair::Point>,
}

/// What the messages of one pair of hosts say.
#[derive(Debug, Clone)]
pub struct PairFit {
    /// The pair, A before B by name.
    pub a: String,
    /// B.
    pub b: String,
    /// The correction of B onto A still asked for, and its band.
    pub fit: pair::Fit,
    /// Messages both ways.
    pub messages: u64,
    /// Their span on B's clock.
    pub span: (i64, i64),
}

impl PairFit {
    /// How far the applied clocks of the pair are outside the band their
    /// messages allow (ns); `None`: inside, or not bounded both ways.
    pub fn outside(&self) -> Option<i64> {
        outside_band(&self.fit.line, self.fit.bound, self.span)
    }
}

fn outside_band(line: &Line, bound: Bound, span: (i64, i64)) -> Option<i64> {
    let ends = [span.0, span.1];
    let worst = |f: &dyn Fn(i64) -> i64| ends.iter().map(|&x| f(x)).max().unwrap_or(0);
    let by = match bound {
        Bound::Both { wide, .. } => worst(&|x| line.at(x).saturating_abs() - wide),
        Bound::AtLeast(v) => v,
        Bound::AtMost(v) => v.saturating_neg(),
        Bound::Inconsistent(_) => 0,
    };
    (by > crate::messages::TOLERANCE_NS).then_some(by)
}

/// How far a host's applied clock is outside the band its messages allow
/// (ns), judged on the residual correction the messages still ask for
/// (`fit`, relative to clocks already applied). `None`: inside, or not
/// bounded both ways.
pub fn outside(fit: &HostFit) -> Option<i64> {
    outside_band(&fit.line, fit.bound, fit.span)
}

/// A clock map as two sync-file lines at `span`'s ends (one if they
/// meet), in ns: `<reference> <reftime> <host> <hosttime>`.
pub fn sync_lines(reference: &str, host: &str, map: &ClockMap, span: (i64, i64)) -> String {
    let mut s = String::new();
    let mut ends = vec![span.0];
    if span.1 != span.0 {
        ends.push(span.1);
    }
    for t in ends {
        s.push_str(&format!("{reference} {} {host} {t}\n", map.map(t)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round trips between hosts whose clocks read true time + offset.
    fn exchange(c: &mut Constraints, a: &str, b: &str, off: &[i64], n: i64) {
        let (ia, ib) = (c.host(a), c.host(b));
        let (oa, ob) = (off[ia as usize], off[ib as usize]);
        for i in 0..n {
            let t = 1_000_000_000 + i * 1_000_000;
            c.observe(ia, t + oa, ib, t + 3_000 + ob);
            c.observe(ib, t + 5_000 + ob, ia, t + 8_000 + oa);
        }
    }

    #[test]
    fn hosts_reached_through_others() {
        let off = [0, 100_000, -50_000, 2_000_000];
        let mut c = Constraints::default();
        for h in ["h0", "h1", "h2", "h3"] {
            c.host(h);
        }
        exchange(&mut c, "h0", "h1", &off, 50);
        exchange(&mut c, "h2", "h1", &off, 50);
        exchange(&mut c, "h3", "h2", &off, 50);
        let mut est = Estimator::default();
        est.add(&c);
        let e = est.estimate(&["h0".to_string()], &|a, b| a == b);
        assert_eq!(e.reference, "h0");
        assert_eq!(e.hosts.len(), 3);
        for (i, h) in ["h1", "h2", "h3"].iter().enumerate() {
            let f = e.get(h).unwrap();
            let half = f.bound.half().unwrap();
            let err = f.line.at(1_000_000_000) + off[i + 1];
            assert!(err.abs() <= half, "{h}: {f:?}");
        }
        assert_eq!(e.get("h3").unwrap().via, "h2");
        // The bands add along the way.
        assert!(e.get("h3").unwrap().bound.half() > e.get("h1").unwrap().bound.half());
    }

    #[test]
    fn many_hosts_all_to_all() {
        let n = 200;
        let off: Vec<i64> = (0..n).map(|i| i * 7_000 - 300_000).collect();
        let mut c = Constraints::default();
        let names: Vec<String> = (0..n).map(|i| format!("n{i:03}")).collect();
        for h in &names {
            c.host(h);
        }
        for i in 0..n as usize {
            for j in i + 1..n as usize {
                exchange(&mut c, &names[i], &names[j], &off, 2);
            }
        }
        let mut est = Estimator::default();
        est.add(&c);
        let e = est.estimate(&[], &|a, b| a == b);
        assert_eq!(e.hosts.len(), n as usize - 1);
        let r = names.iter().position(|h| *h == e.reference).unwrap();
        for f in &e.hosts {
            let i = names.iter().position(|h| *h == f.host).unwrap();
            let err = f.line.at(1_000_000_000) + off[i] - off[r];
            assert!(err.abs() <= f.bound.half().unwrap(), "{f:?}");
        }
    }
}
