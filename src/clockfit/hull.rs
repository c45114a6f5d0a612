//! One side of a pair's messages, kept as its convex hull (see
//! [`super::pair`]): only hull points can bound a clock line.

use super::pair::Point;

/// Points kept before a side is folded back to its hull.
pub(super) const FOLD_AT: usize = 64;

/// Hull points kept per side at most. Linear clocks leave a handful; a
/// clock that bends (a parabola samples onto its own hull) would keep
/// every point, so a longer hull is thinned: dropping a point of a bound
/// only loosens it, so the band widens and still holds the truth.
pub(super) const MAX_HULL: usize = 128;

/// One side's points, folded to its hull (upper or lower).
///
/// Messages come nearly in time order, so each point is added to the
/// hull as Andrew's monotone chain would (a point pops those it leaves
/// inside, then goes last): the hull is kept as points arrive, where
/// gathering points and sorting them in batches of 64 was three fifths
/// of observing a message (issue 17). A point that comes before the hull's last (on x) breaks
/// the chain: points are then only gathered, and the next fold sorts
/// them. Folds (the thinning of a long hull) come after as many points
/// as they did when every point was gathered, so the hull at each fold,
/// and all that follows, is the same either way
/// (`the_chain_folds_as_a_batch`).
#[derive(Debug, Clone)]
pub(crate) struct Side {
    /// In x order and a hull while `chain`; else a hull and points
    /// gathered after it.
    pub(crate) pts: Vec<Point>,
    /// Points after the last fold.
    kept: usize,
    /// Points a batch would hold: `kept`, plus every point pushed since.
    held: usize,
    /// `pts` is the hull of the points pushed so far.
    chain: bool,
}

pub(super) fn cross(o: Point, a: Point, b: Point) -> i128 {
    let (ox, oy) = (i128::from(o.0), i128::from(o.1));
    (i128::from(a.0) - ox) * (i128::from(b.1) - oy)
        - (i128::from(a.1) - oy) * (i128::from(b.0) - ox)
}

/// Adds `p` at the end of the `upper` (or lower) hull `h`, whose last
/// point is not after `p` on x.
fn chain_push(h: &mut Vec<Point>, p: Point, upper: bool) {
    // Per x, only the extreme y can be on the hull.
    if let Some(&l) = h.last() {
        if l.0 == p.0 {
            if (upper && p.1 <= l.1) || (!upper && p.1 >= l.1) {
                return;
            }
            h.pop();
        }
    }
    while let [.., o, a] = h[..] {
        let c = cross(o, a, p);
        if (upper && c >= 0) || (!upper && c <= 0) {
            h.pop();
        } else {
            break;
        }
    }
    h.push(p);
}

impl Default for Side {
    fn default() -> Side {
        Side {
            pts: Vec::new(),
            kept: 0,
            held: 0,
            chain: true,
        }
    }
}

impl Side {
    pub(crate) fn push(&mut self, p: Point, upper: bool) {
        if self.chain && self.pts.last().is_none_or(|l| l.0 <= p.0) {
            chain_push(&mut self.pts, p, upper);
        } else {
            self.chain = false;
            self.pts.push(p);
        }
        self.held += 1;
        if self.held >= (2 * self.kept).max(FOLD_AT) {
            self.fold(upper);
        }
    }

    /// Keeps the upper (or lower) hull only (Andrew's monotone chain),
    /// thinned when long.
    pub(crate) fn fold(&mut self, upper: bool) {
        if !self.chain {
            let mut pts = std::mem::take(&mut self.pts);
            pts.sort_unstable();
            let mut h: Vec<Point> = Vec::with_capacity(pts.len());
            for p in pts {
                chain_push(&mut h, p, upper);
            }
            self.pts = h;
            self.chain = true;
        }
        while self.pts.len() > MAX_HULL {
            let last = self.pts.len() - 1;
            self.pts = self
                .pts
                .iter()
                .enumerate()
                .filter(|&(i, _)| i % 2 == 0 || i == last)
                .map(|(_, &p)| p)
                .collect();
        }
        self.kept = self.pts.len();
        self.held = self.kept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A side as it was before the chain: every point gathered, then
    /// sorted and folded in a batch.
    #[derive(Default)]
    struct Batch {
        pts: Vec<Point>,
        kept: usize,
    }

    impl Batch {
        fn push(&mut self, p: Point, upper: bool) {
            self.pts.push(p);
            if self.pts.len() >= (2 * self.kept).max(FOLD_AT) {
                self.fold(upper);
            }
        }

        fn fold(&mut self, upper: bool) {
            self.pts.sort_unstable();
            let mut xs: Vec<Point> = Vec::new();
            for &p in &self.pts {
                match xs.last_mut() {
                    Some(l) if l.0 == p.0 => {
                        if upper {
                            *l = p;
                        }
                    }
                    _ => xs.push(p),
                }
            }
            let mut h: Vec<Point> = Vec::new();
            for p in xs {
                while let [.., o, a] = h[..] {
                    let c = cross(o, a, p);
                    if (upper && c >= 0) || (!upper && c <= 0) {
                        h.pop();
                    } else {
                        break;
                    }
                }
                h.push(p);
            }
            while h.len() > MAX_HULL {
                let last = h.len() - 1;
                h = h
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i % 2 == 0 || i == last)
                    .map(|(_, &p)| p)
                    .collect();
            }
            self.pts = h;
            self.kept = self.pts.len();
        }
    }

    proptest::proptest! {
        /// Points added to the chain as they come give, at every fold
        /// and whenever folded, the hull a batch of them gives: in order
        /// or not, equal x and collinear points, hulls long enough to
        /// be thinned.
        #[test]
        fn the_chain_folds_as_a_batch(
            steps in proptest::collection::vec((-3i64..40, -6i64..6, 0u8..10), 0..700),
            bend in 0i64..3,
            upper in proptest::bool::ANY,
        ) {
            let (mut chain, mut batch) = (Side::default(), Batch::default());
            let mut x = 0i64;
            for (i, (dx, dy, back)) in steps.into_iter().enumerate() {
                // Now and then a point before the last; a bend puts
                // every point on the hull.
                x += if back == 0 { -dx.abs() * 3 } else { dx };
                let p = (x, dy + bend * (x / 8) * (x / 8) * if upper { -1 } else { 1 });
                chain.push(p, upper);
                batch.push(p, upper);
                if batch.pts.len() == batch.kept {
                    proptest::prop_assert_eq!(&chain.pts, &batch.pts, "at the fold after {}", i);
                }
                if i % 97 == 0 {
                    let (mut c, mut b) = (chain.clone(), Batch { pts: batch.pts.clone(), kept: batch.kept });
                    c.fold(upper);
                    b.fold(upper);
                    proptest::prop_assert_eq!(c.pts, b.pts, "folded after {}", i);
                }
            }
            chain.fold(upper);
            batch.fold(upper);
            proptest::prop_assert_eq!(chain.pts, batch.pts);
        }
    }
}
