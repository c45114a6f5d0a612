//! The fits of a sync file's lines (and of a kernel trace's markers):
//! what each host's measurements need, gathered as the file is read, and
//! the line through them with how far it may be off.

use super::{ClockMap, SyncFit};
use std::sync::Arc;

/// What the fits need of one host's measurements, gathered as the file
/// is read: the first and last (local, reference) points and, for least
/// squares, sums relative to the first point.
pub(super) struct Measured {
    pub(super) host: Arc<str>,
    first: (i64, i64),
    last: (i64, i64),
    first_line: u64,
    last_line: u64,
    pub(super) lines: usize,
    /// Boxed: the default fit needs none, and most hosts have two lines.
    sums: Option<Box<Sums>>,
    /// The points' upper and lower hulls, relative to the first: the
    /// farthest from any line is on them.
    upper: crate::clockfit::hull::Side,
    lower: crate::clockfit::hull::Side,
}

/// Σx, Σy, Σx², Σxy of points relative to the first one, in i128.
#[derive(Default)]
struct Sums {
    sx: i128,
    sy: i128,
    sxx: i128,
    sxy: i128,
}

impl Measured {
    pub(super) fn new(host: Arc<str>, point: (i64, i64), line: u64, fit: SyncFit) -> Measured {
        let (mut upper, mut lower) = (
            crate::clockfit::hull::Side::default(),
            crate::clockfit::hull::Side::default(),
        );
        upper.push((0, 0), true);
        lower.push((0, 0), false);
        Measured {
            host,
            first: point,
            last: point,
            first_line: line,
            last_line: line,
            lines: 1,
            sums: (fit == SyncFit::LeastSquares).then(Box::default),
            upper,
            lower,
        }
    }

    /// The measurements on the hulls (all of few), absolute, in order.
    pub(super) fn points(&mut self) -> Vec<(i64, i64)> {
        self.upper.fold(true);
        self.lower.fold(false);
        let mut v: Vec<(i64, i64)> = self
            .upper
            .pts
            .iter()
            .chain(&self.lower.pts)
            .chain([&(0, 0)])
            .map(|&(x, y)| {
                (
                    self.first.0.saturating_add(x),
                    self.first.1.saturating_add(y),
                )
            })
            .collect();
        v.push(self.last);
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The map's band and whether its drift stands: with three lines or
    /// more, the farthest from the map is how far a line may be off, and
    /// a drift that moves the clock across the lines by no more than twice
    /// that is not told from their scatter: the line's offset halfway
    /// across them is applied instead. One or two lines say nothing of their scatter.
    pub(super) fn judge(&mut self, map: ClockMap) -> (ClockMap, Option<i64>, Option<(f64, i64)>) {
        if self.lines < 3 {
            return (map, None, None);
        }
        self.upper.fold(true);
        self.lower.fold(false);
        let (x0, y0) = (i128::from(self.first.0), i128::from(self.first.1));
        let off = |&(x, y): &(i64, i64)| {
            let (x, y) = (x0 + i128::from(x), y0 + i128::from(y));
            y - i128::from(map.map(i64::try_from(x).unwrap_or(i64::MAX)))
        };
        let above = self.upper.pts.iter().map(off).max().unwrap_or(0).max(0);
        let below = self.lower.pts.iter().map(off).min().unwrap_or(0).min(0);
        let band = i64::try_from(above.max(-below)).unwrap_or(i64::MAX);
        let (a, b) = (self.first.0, self.last.0);
        let moved =
            (i128::from(map.map(b)) - i128::from(map.map(a))) - (i128::from(b) - i128::from(a));
        if moved.unsigned_abs() > 2 * u128::from(band.unsigned_abs()) {
            return (map, Some(band), None);
        }
        // The line's offset halfway across the lines: the constant
        // nearest to it over their span (for least squares, about their
        // mean offset).
        let mid = a + (b - a) / 2;
        let offset = map.map(mid) - mid;
        let moved = i64::try_from(moved).unwrap_or(0);
        let flat = ClockMap::linear(0, offset, 1, 1);
        (flat, Some(band), Some((map.drift_ppm(), moved)))
    }

    pub(super) fn add(&mut self, point: (i64, i64), line: u64) -> std::result::Result<(), String> {
        self.last = point;
        self.last_line = line;
        self.lines += 1;
        let rel = (
            i128::from(point.0) - i128::from(self.first.0),
            i128::from(point.1) - i128::from(self.first.1),
        );
        let too_far = || "measurements too far apart".to_string();
        let rel = (
            i64::try_from(rel.0).map_err(|_| too_far())?,
            i64::try_from(rel.1).map_err(|_| too_far())?,
        );
        self.upper.push(rel, true);
        self.lower.push(rel, false);
        if let Some(s) = &mut self.sums {
            let x = i128::from(point.0) - i128::from(self.first.0);
            let y = i128::from(point.1) - i128::from(self.first.1);
            let too_far = || "measurements too far apart for a least-squares fit".to_string();
            s.sx = s.sx.checked_add(x).ok_or_else(too_far)?;
            s.sy = s.sy.checked_add(y).ok_or_else(too_far)?;
            let xx = x.checked_mul(x).ok_or_else(too_far)?;
            let xy = x.checked_mul(y).ok_or_else(too_far)?;
            s.sxx = s.sxx.checked_add(xx).ok_or_else(too_far)?;
            s.sxy = s.sxy.checked_add(xy).ok_or_else(too_far)?;
        }
        Ok(())
    }

    /// The error naming the host and where its lines are.
    pub(super) fn failure(&self, why: String) -> String {
        let lines = match self.lines {
            1 => format!("line {}", self.first_line),
            2 => format!("lines {}, {}", self.first_line, self.last_line),
            n => format!("{n} lines, {} to {}", self.first_line, self.last_line),
        };
        format!("host `{}` ({lines}): {why}", self.host)
    }

    /// The map and the number of lines it was computed from.
    pub(super) fn fit(&self) -> std::result::Result<(ClockMap, usize), String> {
        let ((t_o, r_o), (t_n, r_n)) = (self.first, self.last);
        if self.lines == 1 {
            return Ok((ClockMap::linear(t_o, r_o, 1, 1), 1));
        }
        if let Some(s) = self.sums.as_ref().filter(|_| self.lines > 2) {
            return least_squares(self.first, self.lines, s).map(|m| (m, self.lines));
        }
        let den = i128::from(t_n) - i128::from(t_o);
        let num = i128::from(r_n) - i128::from(r_o);
        if den <= 0 {
            return Err("the last measurement's host time is not later than the first's".into());
        }
        if num <= 0 {
            return Err(
                "the last measurement's reference time is not later than the first's".into(),
            );
        }
        Ok((ClockMap::linear(t_o, r_o, num, den), 2))
    }
}

/// The least-squares line through `points` (local, reference) as an
/// exact map; `None` when they cannot make one (fewer than two distinct
/// local times, a reference clock that does not advance, sums beyond
/// i128).
pub fn fit_points(points: &[(i64, i64)]) -> Option<ClockMap> {
    let (&first, rest) = points.split_first()?;
    let mut m = Measured::new("".into(), first, 0, SyncFit::LeastSquares);
    for &p in rest {
        m.add(p, 0).ok()?;
    }
    least_squares(first, m.lines, m.sums.as_deref()?).ok()
}

/// Least-squares line through all points, as an exact map through a point
/// near the centroid, from sums relative to the first point `(x0, y0)`;
/// the slope fraction is reduced to < 2^50 so the map stays in i128 for
/// any time, which bounds its relative error by 1e-15 (under 1 ns over 11
/// days).
fn least_squares(
    (x0, y0): (i64, i64),
    n: usize,
    s: &Sums,
) -> std::result::Result<ClockMap, String> {
    let n = n as i128;
    let too_far = || "measurements too far apart for a least-squares fit".to_string();
    let mut num = n
        .checked_mul(s.sxy)
        .and_then(|a| a.checked_sub(s.sx.checked_mul(s.sy)?))
        .ok_or_else(too_far)?;
    let mut den = n
        .checked_mul(s.sxx)
        .and_then(|a| a.checked_sub(s.sx.checked_mul(s.sx)?))
        .ok_or_else(too_far)?;
    if den <= 0 {
        return Err("all measurements have the same host time".into());
    }
    if num <= 0 {
        return Err("the reference clock does not advance with the host clock".into());
    }
    while den >= 1 << 50 {
        num >>= 1;
        den >>= 1;
    }
    // Anchor at x_c = floor(mean x); y_c = mean y + slope * (x_c - mean x).
    let xc = s.sx.div_euclid(n);
    let yc =
        s.sy.checked_mul(den)
            .and_then(|a| a.checked_add(num.checked_mul(n.checked_mul(xc)?.checked_sub(s.sx)?)?))
            .ok_or_else(too_far)?
            .div_euclid(n * den);
    let lo = i64::try_from(i128::from(x0) + xc).map_err(|_| "time out of range")?;
    let lo_ref = i64::try_from(i128::from(y0) + yc).map_err(|_| "time out of range")?;
    Ok(ClockMap::linear(lo, lo_ref, num, den))
}
