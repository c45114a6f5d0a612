//! One pair of hosts as their messages bound their clocks.
//!
//! A pair (A, B), A before B by name. Each matched message between them is
//! a point (x, y): x its end on B's clock, y = (its end on A) − (its end
//! on B), both on the clocks the run applied. The correction that moves
//! B's clock onto A's is a line y = c + k·(x − x0): B's time x becomes
//! x + y(x). A message A→B (sent on A at a, received on B at b) says the
//! receive comes after the send once corrected, b + y(b) ≥ a: the line
//! passes on or above the point (b, a − b). A message B→A (sent at b,
//! received at a) says the line passes on or below (b, a − b).
//!
//! So the lines that respect every message are those between the upper
//! convex hull of the first points and the lower convex hull of the
//! second: Duda, Harrus, Haddad and Bernard, "Estimating global time in
//! distributed systems" (ICDCS 1987), the convex-hull method Trace
//! Compass implements. Only hull points can bound a line, so only they
//! are kept, folded as messages arrive (Jabbarifar, Sendi, Dagenais,
//! Lamoureux, Tetreault, "Streaming mode incremental clock
//! synchronization", 2012): memory is a handful of points per pair,
//! whatever the number of messages.
//!
//! The line chosen: a constant offset when one respects every message
//! (the band is then [highest lower bound, lowest upper bound], never
//! wider than the pair's tightest round trip); a drift only when no
//! constant offset can (the data demands it), as the mean of the feasible
//! lines of least and greatest slope, which is feasible as they are.
//! Everything is exact integer arithmetic on nanoseconds.

use super::hull::{cross, Side};
use crate::messages::TOLERANCE_NS;

/// (x, y) in ns: x on B's clock, y = A − B.
pub type Point = (i64, i64);

/// The slope's fixed denominator: k / 2^40 is the drift (1e-12
/// resolution: 4 ns over an hour).
pub const K_ONE: i128 = 1 << 40;

/// How far from the pair's first point a point may be kept: differences
/// stay under 2^62, so the cross products (two factors each) stay under
/// 2^125 in i128. 2^61 ns is 73 years: only a damaged input gets there.
const REACH: i128 = 1 << 61;

/// A map of one clock onto another: x ↦ x + c + ⌊(x − x0)·k / 2^40⌋.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Line {
    /// Where the offset is `c` (ns, on the mapped clock).
    pub x0: i64,
    /// Offset at `x0` (ns).
    pub c: i64,
    /// Drift, in units of 2^-40.
    pub k: i128,
}

impl Line {
    /// No correction.
    pub const IDENTITY: Line = Line { x0: 0, c: 0, k: 0 };

    /// A constant offset.
    pub fn offset(c: i64) -> Line {
        Line { x0: 0, c, k: 0 }
    }

    /// The correction at `x` (ns to add to `x`).
    pub fn at(&self, x: i64) -> i64 {
        let d = (i128::from(x) - i128::from(self.x0)) * self.k;
        sat(i128::from(self.c) + d.div_euclid(K_ONE))
    }

    /// `x` mapped.
    pub fn map(&self, x: i64) -> i64 {
        x.saturating_add(self.at(x))
    }

    /// The map back: from the mapped clock to this one.
    pub fn inverse(&self) -> Line {
        // u = x + c + k(x − x0) ⇔ x = u − c − k(u − u0)/(1 + k), u0 = x0 + c.
        let k = if self.k == 0 {
            0
        } else {
            div_round(-self.k * K_ONE, K_ONE + self.k)
        };
        Line {
            x0: self.x0.saturating_add(self.c),
            c: self.c.saturating_neg(),
            k,
        }
    }

    /// `outer` after `self`: x ↦ outer(self(x)).
    pub fn then(&self, outer: &Line) -> Line {
        let u0 = self.map(self.x0);
        let c = sat(i128::from(outer.map(u0)) - i128::from(self.x0));
        let k = self.k + outer.k + div_round(self.k * outer.k, K_ONE);
        Line { x0: self.x0, c, k }
    }

    /// Drift in parts per million (display).
    pub fn ppm(&self) -> f64 {
        self.k as f64 / K_ONE as f64 * 1e6
    }

    /// As the time path's clock map.
    pub fn clock_map(&self) -> crate::clock::ClockMap {
        if self.c == 0 && self.k == 0 {
            return crate::clock::ClockMap::Identity;
        }
        crate::clock::ClockMap::linear(
            self.x0,
            self.x0.saturating_add(self.c),
            K_ONE + self.k,
            K_ONE,
        )
    }
}

fn sat(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// n / d rounded to nearest (d > 0).
fn div_round(n: i128, d: i128) -> i128 {
    (2 * n + d).div_euclid(2 * d)
}

/// What a pair's messages say of the correction of B onto A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Bound {
    /// Messages both ways: the correction lies within `half` of the line
    /// over the messages' span, and within `wide` whatever drift the
    /// messages allow (the truth is one of those lines; `wide` = `half`
    /// when the line has a drift, or when the messages cannot bound
    /// one). `drift`: the line has a slope (a constant could not respect
    /// every message); `relaxed`: only with the 1 µs tolerance of the
    /// causality check.
    #[allow(missing_docs)]
    Both {
        half: i64,
        wide: i64,
        drift: bool,
        relaxed: bool,
    },
    /// Messages A→B only: the correction is at least this (ns).
    AtLeast(i64),
    /// Messages B→A only: the correction is at most this (ns).
    AtMost(i64),
    /// Messages both ways that no line respects, even 1 µs apart: the
    /// least violation (ns). The clocks are not linear, or the times too
    /// coarse.
    Inconsistent(i64),
}

impl Bound {
    /// A host taken as right.
    pub const EXACT: Bound = Bound::Both {
        half: 0,
        wide: 0,
        drift: false,
        relaxed: false,
    };

    /// The same bound seen from the other host (the correction negated).
    pub fn flipped(self) -> Bound {
        match self {
            Bound::AtLeast(v) => Bound::AtMost(v.saturating_neg()),
            Bound::AtMost(v) => Bound::AtLeast(v.saturating_neg()),
            b => b,
        }
    }

    /// Rank for choosing the edges of the spanning tree: bounded both
    /// ways first.
    pub fn class(&self) -> u8 {
        match self {
            Bound::Both { relaxed: false, .. } => 0,
            Bound::Both { relaxed: true, .. } => 1,
            Bound::AtLeast(_) | Bound::AtMost(_) => 2,
            Bound::Inconsistent(_) => 3,
        }
    }

    /// The half-width when bounded both ways.
    pub fn half(&self) -> Option<i64> {
        match self {
            Bound::Both { half, .. } => Some(*half),
            _ => None,
        }
    }

    /// The half-width whatever the drift, when bounded both ways.
    pub fn wide(&self) -> Option<i64> {
        match self {
            Bound::Both { wide, .. } => Some(*wide),
            _ => None,
        }
    }
}

/// The fit of one pair: the line that moves B onto A and its bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    /// B's clock onto A's.
    pub line: Line,
    /// How well the messages bound it.
    pub bound: Bound,
}

/// The messages of one pair, as hull points.
#[derive(Debug, Clone, Default)]
pub struct PairHull {
    /// A→B: the line passes on or above (upper hull kept).
    below: Side,
    /// B→A: the line passes on or below (lower hull kept).
    above: Side,
    origin: Option<i64>,
    /// Messages A→B and B→A.
    pub counts: (u64, u64),
    /// Messages too far from the others to compute with (damage).
    pub ignored: u64,
    /// The messages' span on B's clock.
    pub span: Option<(i64, i64)>,
}

impl PairHull {
    /// Adds a message: `forward` is A→B; `a`, `b` its ends on A and B.
    pub fn add(&mut self, forward: bool, a: i64, b: i64) {
        let y = i128::from(a) - i128::from(b);
        let origin = *self.origin.get_or_insert(b);
        if y.abs() > REACH || (i128::from(b) - i128::from(origin)).abs() > REACH {
            self.ignored += 1;
            return;
        }
        self.span = Some(match self.span {
            None => (b, b),
            Some((lo, hi)) => (lo.min(b), hi.max(b)),
        });
        let p = (b, y as i64);
        if forward {
            self.counts.0 += 1;
            self.below.push(p, true);
        } else {
            self.counts.1 += 1;
            self.above.push(p, false);
        }
    }

    /// Adds another source's messages of the same pair.
    pub fn absorb(&mut self, other: &PairHull) {
        // Its points pass through `add` (this pair's origin and reach);
        // the counts are its messages, not its hull points.
        let counts = self.counts;
        for &(x, y) in &other.below.pts {
            self.add(true, x.saturating_add(y), x);
        }
        for &(x, y) in &other.above.pts {
            self.add(false, x.saturating_add(y), x);
        }
        self.counts = (counts.0 + other.counts.0, counts.1 + other.counts.1);
        self.ignored += other.ignored;
    }

    /// The points that bound the pair (x: the time on B's clock, y: A's
    /// time less B's): those of messages A→B, then B→A, folded to their
    /// hulls. Any extreme of a linear function of a message's two times
    /// (its earliness on other clocks) is at one of them.
    pub fn points(&mut self) -> (&[Point], &[Point]) {
        self.below.fold(true);
        self.above.fold(false);
        (&self.below.pts, &self.above.pts)
    }

    /// Messages in all.
    pub fn messages(&self) -> u64 {
        self.counts.0 + self.counts.1
    }

    /// Points kept (memory).
    pub fn kept(&self) -> usize {
        self.below.pts.len() + self.above.pts.len()
    }

    /// The correction of B onto A the messages allow.
    pub fn fit(&mut self) -> Option<Fit> {
        self.below.fold(true);
        self.above.fold(false);
        let (lower, upper) = (&self.below.pts, &self.above.pts);
        let hi_lower = lower.iter().map(|p| p.1).max();
        let lo_upper = upper.iter().map(|p| p.1).min();
        let (l, u) = match (hi_lower, lo_upper) {
            (None, None) => return None,
            (Some(l), None) => {
                return Some(Fit {
                    line: Line::offset(l.max(0)),
                    bound: Bound::AtLeast(l),
                })
            }
            (None, Some(u)) => {
                return Some(Fit {
                    line: Line::offset(u.min(0)),
                    bound: Bound::AtMost(u),
                })
            }
            (Some(l), Some(u)) => (l, u),
        };
        // A constant offset first, strictly then within the tolerance; a
        // drift only when no constant fits.
        for tol in [0, TOLERANCE_NS] {
            let (l, u) = (l - tol, u + tol);
            if l <= u {
                let c = (i128::from(l) + i128::from(u)).div_euclid(2) as i64;
                // The band of the constant, and where the lines that also
                // allow a drift pass at the span's ends: a drift too small
                // to show in the messages may still move the clock more
                // than the constant's band.
                let line = Line::offset(c);
                let half = (u - c).max(c - l);
                let wide = spread(lower, upper, tol, &line).map_or(half, |w| w.max(half));
                return Some(Fit {
                    line,
                    bound: Bound::Both {
                        half,
                        wide,
                        drift: false,
                        relaxed: tol > 0,
                    },
                });
            }
        }
        for tol in [0, TOLERANCE_NS] {
            if let Some(f) = drift_fit(lower, upper, tol) {
                return Some(f);
            }
        }
        let c = (i128::from(l) + i128::from(u)).div_euclid(2) as i64;
        Some(Fit {
            line: Line::offset(c),
            bound: Bound::Inconsistent(l - u - 2 * TOLERANCE_NS),
        })
    }
}

/// A line through two points of distinct x, evaluated exactly (floored).
#[derive(Debug, Clone, Copy)]
struct Through(Point, Point);

impl Through {
    fn at(&self, x: i64) -> i64 {
        let ((x1, y1), (x2, y2)) = (self.0, self.1);
        let d = (i128::from(y2) - i128::from(y1)) * (i128::from(x) - i128::from(x1));
        sat(i128::from(y1) + d.div_euclid(i128::from(x2) - i128::from(x1)))
    }

    /// The sign of r against the line: > 0 above, < 0 below.
    fn side(&self, r: Point) -> i128 {
        cross(self.0, self.1, r)
    }

    fn slope_cmp(&self, o: &Through) -> std::cmp::Ordering {
        let dy = |t: &Through| i128::from(t.1 .1) - i128::from(t.0 .1);
        let dx = |t: &Through| i128::from(t.1 .0) - i128::from(t.0 .0);
        (dy(self) * dx(o)).cmp(&(dy(o) * dx(self)))
    }
}

/// The lines through two hull points that respect every message (with
/// `tol`): the vertices of the feasible region. `None` when that region
/// is unbounded (the messages one way all come before those the other
/// way: any drift fits) or empty.
fn vertices(lower: &[Point], upper: &[Point], tol: i64) -> Option<(Vec<Through>, i64, i64)> {
    let span = |s: &[Point]| Some((s.iter().map(|p| p.0).min()?, s.iter().map(|p| p.0).max()?));
    let ((l0, l1), (u0, u1)) = (span(lower)?, span(upper)?);
    if l1 <= u0 || u1 <= l0 {
        return None;
    }
    let lower: Vec<Point> = lower.iter().map(|&(x, y)| (x, y - tol)).collect();
    let upper: Vec<Point> = upper.iter().map(|&(x, y)| (x, y + tol)).collect();
    let all: Vec<Point> = lower.iter().chain(&upper).copied().collect();
    let feasible = |t: &Through| {
        lower.iter().all(|&p| t.side(p) <= 0) && upper.iter().all(|&p| t.side(p) >= 0)
    };
    let mut v: Vec<Through> = Vec::new();
    for (i, &p) in all.iter().enumerate() {
        for &q in &all[i + 1..] {
            let t = match p.0.cmp(&q.0) {
                std::cmp::Ordering::Less => Through(p, q),
                std::cmp::Ordering::Greater => Through(q, p),
                std::cmp::Ordering::Equal => continue,
            };
            if feasible(&t) {
                v.push(t);
            }
        }
    }
    (!v.is_empty()).then_some((v, l0.min(u0), l1.max(u1)))
}

/// How far the feasible lines pass from `line` at the span's ends: the
/// band's half-width (the region is convex, so its extremes at a time are
/// at vertices, and between the ends the band is narrower).
fn spread(lower: &[Point], upper: &[Point], tol: i64, line: &Line) -> Option<i64> {
    let (v, xa, xb) = vertices(lower, upper, tol)?;
    Some(spread_of(&v, xa, xb, line))
}

fn spread_of(v: &[Through], xa: i64, xb: i64, line: &Line) -> i64 {
    let mut half = 0i64;
    for x in [xa, xb] {
        let e = line.at(x);
        for t in v {
            half = half.max((t.at(x) - e).abs());
        }
    }
    half
}

/// The drifting line: the mean of the feasible lines of least and
/// greatest slope (feasible, the region being convex).
fn drift_fit(lower: &[Point], upper: &[Point], tol: i64) -> Option<Fit> {
    let (v, xa, xb) = vertices(lower, upper, tol)?;
    let least = *v.iter().min_by(|a, b| a.slope_cmp(b))?;
    let most = *v.iter().max_by(|a, b| a.slope_cmp(b))?;
    let mid = |x: i64| sat((i128::from(least.at(x)) + i128::from(most.at(x))).div_euclid(2));
    let (ya, yb) = (mid(xa), mid(xb));
    let k = if xb > xa {
        div_round(
            (i128::from(yb) - i128::from(ya)) * K_ONE,
            i128::from(xb) - i128::from(xa),
        )
    } else {
        0
    };
    let line = Line { x0: xa, c: ya, k };
    let half = spread_of(&v, xa, xb, &line);
    Some(Fit {
        line,
        bound: Bound::Both {
            half,
            wide: half,
            drift: true,
            relaxed: tol > 0,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clockfit::hull::{FOLD_AT, MAX_HULL};

    /// Messages between a host A at true time and a host B whose clock
    /// reads `b(t)`; latency `lat` each way, one round trip per `every`.
    fn pingpong(b: impl Fn(i64) -> i64, n: i64, every: i64, lat: i64) -> PairHull {
        let mut h = PairHull::default();
        for i in 0..n {
            let t = 1_000_000_000 + i * every;
            // A→B: sent at t on A, received at t + lat, read on B.
            h.add(true, t, b(t + lat));
            // B→A: sent at t + 2 lat on B, received at t + 3 lat on A.
            h.add(false, t + 3 * lat, b(t + 2 * lat));
        }
        h
    }

    #[test]
    fn constant_offset_within_the_round_trip() {
        // B reads 250 ms ahead: its correction is −250 ms.
        let mut h = pingpong(|t| t + 250_000_000, 100, 1_000_000, 5_000);
        let f = h.fit().unwrap();
        let Bound::Both { half, drift, .. } = f.bound else {
            panic!("{f:?}")
        };
        eprintln!("{f:?}");
        assert!(!drift);
        assert!((f.line.c + 250_000_000).abs() <= half, "{f:?}");
        // The band is the gap left by a round trip of 4 latencies less
        // the time B held the message (one latency): 2 latencies.
        assert!(2 * half <= 3 * 5_000 + 1, "{f:?}");
        assert!(h.kept() <= 8, "kept {}", h.kept());
    }

    #[test]
    fn drift_when_a_constant_cannot_fit() {
        // B runs 40 ppm fast over 10 s: 400 µs, far more than the 20 µs
        // round trip.
        let b = |t: i64| t + 1_500_000_000 + (t - 1_000_000_000) * 40 / 1_000_000;
        let mut h = pingpong(b, 1000, 10_000_000, 5_000);
        let f = h.fit().unwrap();
        let Bound::Both { half, drift, .. } = f.bound else {
            panic!("{f:?}")
        };
        eprintln!("{f:?} ppm {}", f.line.ppm());
        assert!(drift, "{f:?}");
        assert!((f.line.ppm() + 40.0).abs() < 0.5, "{}", f.line.ppm());
        for i in 0..1000 {
            let t = 1_000_000_000 + i * 10_000_000;
            let err = f.line.map(b(t)) - t;
            assert!(err.abs() <= half, "at {t}: {err} beyond {half}");
        }
        assert!(h.kept() < 64, "kept {}", h.kept());
    }

    #[test]
    fn one_way_gives_a_bound() {
        let mut h = PairHull::default();
        h.add(true, 100, 50);
        h.add(true, 300, 260);
        let f = h.fit().unwrap();
        assert_eq!(f.bound, Bound::AtLeast(50));
        assert_eq!(f.line.c, 50);
        // Already after their sends: nothing to apply.
        let mut h = PairHull::default();
        h.add(true, 100, 150);
        assert_eq!(h.fit().unwrap().line, Line::offset(0));
    }

    #[test]
    fn lines_compose_and_invert() {
        let a = Line {
            x0: 1_000,
            c: 500,
            k: K_ONE / 1_000,
        };
        let inv = a.inverse();
        for x in [0, 1_000, 1_000_000, 7_777_777] {
            assert!((inv.map(a.map(x)) - x).abs() <= 1, "{x}");
        }
        let b = Line::offset(-200);
        let ab = a.then(&b);
        for x in [0, 1_000, 1_000_000] {
            assert!((ab.map(x) - b.map(a.map(x))).abs() <= 1, "{x}");
        }
    }

    #[test]
    fn absorb_keeps_counts() {
        let mut a = pingpong(|t| t, 200, 1_000_000, 1_000);
        let b = pingpong(|t| t, 200, 1_000_000, 1_000);
        a.absorb(&b);
        assert_eq!(a.counts, (400, 400));
        assert!(a.fit().is_some());
    }

    #[test]
    fn a_bending_clock_keeps_a_bounded_hull() {
        // B's offset grows quadratically: every point is on the hull.
        let b = |t: i64| {
            let s = (t - 1_000_000_000) / 1_000_000;
            t + s * s * 10
        };
        let mut h = pingpong(b, 20_000, 1_000_000, 1_000);
        assert!(h.kept() <= 2 * MAX_HULL + 2 * FOLD_AT, "kept {}", h.kept());
        let f = h.fit().unwrap();
        assert!(
            matches!(
                f.bound,
                Bound::Both { drift: true, .. } | Bound::Inconsistent(_)
            ),
            "{f:?}"
        );
    }
}
