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
    /// (sender, receiver) → (pair, sender is the pair's A).
    by_ends: HashMap<(u32, u32), (u32, bool)>,
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
        let (pair, from_is_a) = match self.by_ends.get(&(from, to)) {
            Some(&p) => p,
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
        let found = self
            .pairs
            .iter()
            .position(|(x, y, _)| (*x, *y) == (a, b))
            .map(|p| p as u32);
        let pair = found.unwrap_or_else(|| {
            self.pairs.push((a, b, PairHull::default()));
            (self.pairs.len() - 1) as u32
        });
        self.by_ends.insert((from, to), (pair, from_is_a));
        (pair, from_is_a)
    }

    /// Host pairs seen (names, A before B).
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str, &PairHull)> {
        let name = |i: u32| self.hosts.get(i as usize).map_or("", |h| &**h);
        self.pairs.iter().map(move |(a, b, h)| (name(*a), name(*b), h))
    }
}

/// Every pair of the run, from all its message sources.
#[derive(Debug, Default)]
pub struct Estimator {
    pairs: BTreeMap<(String, String), PairHull>,
}

/// One host's correction onto the reference clock.
#[derive(Debug, Clone)]
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
#[derive(Debug, Clone, Default)]
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
        let mut fits: Vec<(usize, usize, pair::Fit, u64, (i64, i64))> = Vec::new();
        let at = |h: &str| hosts.iter().position(|x| x == h);
        for ((a, b), hull) in self.pairs.iter_mut() {
            let (Some(ia), Some(ib), Some(f)) = (at(a), at(b), hull.fit()) else {
                continue;
            };
            fits.push((ia, ib, f, hull.messages(), hull.span.unwrap_or_default()));
        }
        let mut fixed_hosts: Vec<String> = fixed.to_vec();
        if fixed_hosts.is_empty() {
            let mut count = vec![0u64; hosts.len()];
            for (a, b, _, n, _) in &fits {
                count[*a] += n;
                count[*b] += n;
            }
            let best = (0..hosts.len()).max_by(|&x, &y| count[x].cmp(&count[y]).then(y.cmp(&x)));
            fixed_hosts.extend(best.map(|i| hosts[i].clone()));
        }
        let mut done: Vec<Option<(Line, Bound)>> = hosts
            .iter()
            .map(|h| {
                fixed_hosts.iter().any(|f| same(f, h)).then_some((
                    Line::IDENTITY,
                    Bound::Both {
                        half: 0,
                        wide: 0,
                        drift: false,
                        relaxed: false,
                    },
                ))
            })
            .collect();
        let mut out = Estimates {
            reference: fixed_hosts.first().cloned().unwrap_or_default(),
            fixed: fixed_hosts,
            ..Estimates::default()
        };
        // Prim: the best edge from the tree to a host outside it, until
        // none is left.
        loop {
            let mut best: Option<(usize, bool)> = None;
            for (i, (a, b, f, n, _)) in fits.iter().enumerate() {
                let inward = match (done[*a].is_some(), done[*b].is_some()) {
                    (true, false) => true,
                    (false, true) => false,
                    _ => continue,
                };
                let better = best.is_none_or(|(j, _)| {
                    let g = &fits[j];
                    let key = |f: &pair::Fit, n: u64| {
                        (f.bound.class(), f.bound.half().unwrap_or(i64::MAX), u64::MAX - n)
                    };
                    key(f, *n) < key(&g.2, g.3)
                });
                if better {
                    best = Some((i, inward));
                }
            }
            let Some((i, a_in_tree)) = best else { break };
            let (a, b, f, n, span) = fits[i];
            // The pair's line moves B onto A.
            let (child, parent, edge, bound, span) = if a_in_tree {
                (b, a, f.line, f.bound, span)
            } else {
                let inv = f.line.inverse();
                (a, b, inv, f.bound.flipped(), (inv.map(span.0), inv.map(span.1)))
            };
            let Some((up, up_bound)) = done[parent] else { break };
            let line = edge.then(&up);
            let bound = weaker(bound, up_bound);
            done[child] = Some((line, bound));
            out.hosts.push(HostFit {
                host: hosts[child].clone(),
                via: hosts[parent].clone(),
                line,
                bound,
                messages: n,
                span,
            });
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

/// How far a host's applied clock is outside the band its messages allow
/// (ns), judged on the residual correction the messages still ask for
/// (`fit`, relative to clocks already applied). `None`: inside, or not
/// bounded both ways.
pub fn outside(fit: &HostFit) -> Option<i64> {
    let ends = [fit.span.0, fit.span.1];
    let worst = |f: &dyn Fn(i64) -> i64| ends.iter().map(|&x| f(x)).max().unwrap_or(0);
    let by = match fit.bound {
        Bound::Both { wide, .. } => worst(&|x| fit.line.at(x).saturating_abs() - wide),
        Bound::AtLeast(v) => v,
        Bound::AtMost(v) => v.saturating_neg(),
        Bound::Inconsistent(_) => 0,
    };
    (by > crate::messages::TOLERANCE_NS).then_some(by)
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
