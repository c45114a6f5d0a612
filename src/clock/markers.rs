//! A kernel trace's `integrador_epoch=` markers (docs/formats.md §6):
//! the line that places its boot-relative clock on the wall clock, how
//! far each marker may be off, and whether the line's drift is told from
//! that.

use super::ClockMap;

/// How far one marker's epoch may be from the trace time it was written
/// at, when only two markers say nothing of it: the recipe's `date` and
/// its write to `trace_marker` are a process start apart (measured: 0.33
/// ms standard deviation around the best line, up to 1.7 ms).
pub const MARKER_NOISE_NS: i64 = 1_000_000;

/// A trace clock placed by its markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Markers {
    /// The fitted line at the first and last markers' trace times:
    /// (trace time, epoch) each.
    pub first: (i64, i64),
    /// See `first`.
    pub last: (i64, i64),
    /// How many markers.
    pub count: usize,
    /// One marker's uncertainty: the farthest from the line of three or
    /// more, [`MARKER_NOISE_NS`] for two.
    pub band: i64,
    /// The drift is applied: across the markers it moves the clock by
    /// more than two markers' uncertainty.
    pub drift: bool,
    /// The offset (epoch − trace time) when the drift is not applied:
    /// the markers' mean.
    pub offset: i64,
}

impl Markers {
    /// The line through `markers` (in trace-time order), or `None` when
    /// they make none (one marker, or times that do not advance).
    pub fn fit(markers: &[(i64, i64)]) -> Option<Markers> {
        let (&a, &b) = (markers.first()?, markers.last()?);
        if b.0 <= a.0 || b.1 <= a.1 {
            return None;
        }
        let (map, band) = if markers.len() > 2 {
            let map = super::fit_points(markers)?;
            let worst = markers
                .iter()
                .map(|&(x, y)| (i128::from(map.map(x)) - i128::from(y)).unsigned_abs())
                .max()
                .unwrap_or(0);
            (map, i64::try_from(worst).unwrap_or(i64::MAX))
        } else {
            let map = ClockMap::linear(
                a.0,
                a.1,
                i128::from(b.1) - i128::from(a.1),
                i128::from(b.0) - i128::from(a.0),
            );
            (map, MARKER_NOISE_NS)
        };
        let (first, last) = ((a.0, map.map(a.0)), (b.0, map.map(b.0)));
        let moved =
            (i128::from(last.1) - i128::from(first.1)) - (i128::from(last.0) - i128::from(first.0));
        let sum: i128 = markers
            .iter()
            .map(|&(x, y)| i128::from(y) - i128::from(x))
            .sum();
        let offset = i64::try_from(sum.div_euclid(markers.len() as i128)).ok()?;
        Some(Markers {
            first,
            last,
            count: markers.len(),
            band,
            drift: moved.unsigned_abs() > 2 * band.unsigned_abs() as u128,
            offset,
        })
    }

    /// The drift of the line (ppm) and how far it moves the clock across
    /// the markers (ns).
    pub fn drift_ppm(&self) -> (f64, i64) {
        let (dx, dy) = (self.last.0 - self.first.0, self.last.1 - self.first.1);
        ((dy - dx) as f64 / dx as f64 * 1e6, dy - dx)
    }
}
