//! Clock correction: maps a host's local time to the reference clock with
//! the Maillet–Tron line of docs/formats.md §1, exactly.
//!
//! `t_ref = t_o_ref + (t - t_o) * (t_n_ref - t_o_ref) / (t_n - t_o)`, with
//! the product in i128 and the quotient floored (toward −∞, so times before
//! `t_o` round the same way as times after it). Everything is nanoseconds;
//! a microsecond sync file is scaled by 1000 first, which keeps the floor
//! consistent: flooring nanoseconds and then microseconds equals flooring
//! microseconds directly.

use crate::error::{Error, Result};
use crate::identity::{HostIdentity, KeyIndex};
/// Exact `digits[.digits]` epoch seconds to ns (shared with the `.traced`
/// reader, whose format it is).
pub use integrador_ganglia::traced::parse_epoch_ns;
use integrador_timesync::{SyncReader, SyncRecord};
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

mod fit;
pub mod markers;
pub use fit::fit_points;
use fit::Measured;

const NS: i128 = 1_000_000_000;

/// Seconds as a double (MPE's clock) to the nearest nanosecond, exactly:
/// the double is a dyadic rational `m·2^e`, scaled by 10^9 in i128 and
/// rounded half away from zero, with no float arithmetic on the way.
/// `None` for NaN, infinities and times beyond ±292 years.
pub fn seconds_to_ns(s: f64) -> Option<i64> {
    if !s.is_finite() {
        return None;
    }
    let bits = s.to_bits();
    let negative = bits >> 63 == 1;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = (bits & ((1 << 52) - 1)) as i128;
    let (m, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1 << 52), exp - 1075)
    };
    let scaled = m * NS;
    let ns = if e >= 0 {
        if e > 40 {
            return None;
        }
        scaled.checked_shl(e as u32)?
    } else if e < -126 {
        0
    } else {
        let sh = (-e) as u32;
        (scaled + (1 << (sh - 1))) >> sh
    };
    let ns = i64::try_from(ns).ok()?;
    Some(if negative { -ns } else { ns })
}

/// How one host's clock maps to the reference clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockMap {
    /// Already on the reference clock.
    Identity,
    /// `t_ref = lo_ref + floor((t - lo) * num / den)`; an offset-only map
    /// has `num == den`.
    Linear {
        /// Local time of the anchor point (ns).
        lo: i64,
        /// Reference time of the anchor point (ns).
        lo_ref: i64,
        /// Reference span (numerator of the slope).
        num: i128,
        /// Local span (denominator of the slope), always > 0.
        den: i128,
        /// The slope ready for a floor without a division, when it fits
        /// (always, for real clocks).
        fast: Option<Slope>,
    },
}

/// `num / den` as `q + r / den` with `m = floor(2^64 * r / den)`: the
/// floor of `d * num / den` from three multiplications and one
/// correction, where the division was an `i128` one per event (4 to 5%
/// of a kernel trace's converting thread). Made when `den < 2^64` and
/// `0 <= num < 2^63`, so that `d * num` stays in i128 for any `d` two
/// `i64` times apart, as the division needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slope {
    q: u64,
    r: u64,
    den: u64,
    m: u64,
}

impl Slope {
    fn new(num: i128, den: i128) -> Option<Slope> {
        let num = u64::try_from(num).ok().filter(|&n| n < 1 << 63)?;
        let den = u64::try_from(den).ok().filter(|&d| d > 0)?;
        let r = num % den;
        Some(Slope {
            q: num / den,
            r,
            den,
            m: ((u128::from(r) << 64) / u128::from(den)) as u64,
        })
    }

    /// `floor(d * num / den)` for `|d| < 2^64`.
    #[inline]
    fn floor(&self, d: i128) -> i128 {
        // Every product is of two u64s, one multiplication each: with
        // `|d|` as a u128 they were 128-bit products, three each.
        let a = u64::try_from(d.unsigned_abs()).unwrap_or(u64::MAX);
        let mul = |x: u64, y: u64| u128::from(x) * u128::from(y);
        // m / 2^64 is r / den less under 2^-64, so the guess is the floor
        // of a * r / den or one less: one step up at most. (Below a, so
        // a u64.)
        let mut g = (mul(a, self.m) >> 64) as u64;
        let mut rem = mul(a, self.r) - mul(g, self.den);
        if rem >= u128::from(self.den) {
            g += 1;
            rem -= u128::from(self.den);
        }
        let f = (mul(a, self.q) + u128::from(g)) as i128;
        if d < 0 {
            -f - i128::from(rem != 0)
        } else {
            f
        }
    }
}

impl ClockMap {
    /// The map through (lo, lo_ref) of slope `num / den` (`den > 0`).
    pub fn linear(lo: i64, lo_ref: i64, num: i128, den: i128) -> ClockMap {
        ClockMap::Linear {
            lo,
            lo_ref,
            num,
            den,
            fast: Slope::new(num, den),
        }
    }

    /// Maps a local time (ns) to the reference clock (ns), flooring.
    #[inline]
    pub fn map(&self, t: i64) -> i64 {
        match *self {
            ClockMap::Identity => t,
            ClockMap::Linear {
                lo,
                lo_ref,
                num,
                den,
                fast,
            } => {
                let d = i128::from(t) - i128::from(lo);
                let q = match fast {
                    Some(s) => s.floor(d),
                    None => (d * num).div_euclid(den),
                };
                let mapped = i128::from(lo_ref) + q;
                // Saturate rather than wrap: a time 290 years away from the
                // sync window is a broken input, reported elsewhere.
                i64::try_from(mapped).unwrap_or(if mapped < 0 { i64::MIN } else { i64::MAX })
            }
        }
    }

    /// Offset (reference − local) at local time `t`, in ns.
    pub fn offset_at(&self, t: i64) -> i64 {
        self.map(t).saturating_sub(t)
    }

    /// The local time that maps to reference time `r` (the inverse line,
    /// floored; for display).
    pub fn local_of(&self, r: i64) -> i64 {
        match *self {
            ClockMap::Identity => r,
            ClockMap::Linear {
                lo,
                lo_ref,
                num,
                den,
                ..
            } => {
                let delta = (i128::from(r) - i128::from(lo_ref)).saturating_mul(den);
                let local = i128::from(lo) + delta.div_euclid(num.max(1));
                i64::try_from(local).unwrap_or(if local < 0 { i64::MIN } else { i64::MAX })
            }
        }
    }

    /// Offset (reference − local) at reference time `r`, in ns: what the
    /// summary shows at T0, which is a reference time.
    pub fn offset_at_reference(&self, r: i64) -> i64 {
        r.saturating_sub(self.local_of(r))
    }

    /// Drift in parts per million: (local span − reference span) /
    /// reference span; positive = the host's clock runs fast. For display.
    pub fn drift_ppm(&self) -> f64 {
        match *self {
            ClockMap::Identity => 0.0,
            ClockMap::Linear { num, den, .. } => (den - num) as f64 / num as f64 * 1e6,
        }
    }
}

/// The measurements of one host in a sync file, and its map.
#[derive(Debug, Clone)]
pub struct HostClock {
    /// Host name as the sync file spells it.
    pub host: Arc<str>,
    /// The map to the reference clock.
    pub map: ClockMap,
    /// Number of sync lines the map was computed from.
    pub lines_used: usize,
    /// Number of sync lines the file has for this host.
    pub lines: usize,
    /// How far the map may be off: the farthest of three sync lines or
    /// more from it (the messages' band for an estimate); `None` when
    /// nothing says (one or two lines).
    pub band: Option<i64>,
    /// A drift the lines gave but that was not applied (ppm, and how far
    /// it moves the clock across the lines): within their scatter.
    pub dropped: Option<(f64, i64)>,
    /// The measurements that bound the line, (local, reference): the
    /// first and last, and those on the hulls of three or more (the
    /// report page draws them).
    pub points: Vec<(i64, i64)>,
}

/// All hosts of a sync file.
#[derive(Debug, Clone)]
pub struct SyncTable {
    /// The reference host.
    pub reference: String,
    /// Per monitored host.
    pub hosts: Vec<HostClock>,
    /// `hosts` positions by [`HostIdentity::keys`] of their names, made
    /// at the first lookup (the keys depend on the hierarchy's aliases).
    by_key: std::cell::OnceCell<KeyIndex>,
}

/// How to use more than two lines per host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncFit {
    /// The first and the last line (the thesis' rule).
    #[default]
    Endpoints,
    /// A least-squares line through all of them.
    LeastSquares,
}

impl SyncTable {
    /// Builds the table from a sync file, streamed: each host keeps its
    /// first and last measurement (and, for least squares, the running
    /// sums), so a file of millions of lines needs memory for its hosts,
    /// not its lines.
    pub fn from_reader<R: BufRead>(path: &Path, reader: R, fit: SyncFit) -> Result<SyncTable> {
        let mut r = SyncReader::new(reader);
        let mut rec = SyncRecord::default();
        let mut reference: Option<(String, u64)> = None;
        let mut hosts: Vec<Measured> = Vec::new();
        let mut index: HashMap<Arc<str>, usize> = HashMap::new();
        while r
            .read_record(&mut rec)
            .map_err(|e| Error::in_file(path, e))?
        {
            match &reference {
                None => reference = Some((rec.ref_host.clone(), rec.line)),
                Some((name, line)) if *name != rec.ref_host => {
                    return Err(Error::in_file(
                        path,
                        format!(
                            "line {}: reference host `{}` differs from `{name}` of line {line}; one file has one reference clock",
                            rec.line, rec.ref_host
                        ),
                    ));
                }
                Some(_) => {}
            }
            // Every record's resolution is known as it is read (the crate
            // refuses a `# resolution` after a measurement).
            let tps = i128::from(r.ticks_per_second());
            let scale = |ticks: i64| -> i64 {
                i64::try_from(i128::from(ticks) * NS / tps).unwrap_or(i64::MAX)
            };
            let point = (scale(rec.host_time), scale(rec.ref_time));
            match index.get(rec.host.as_str()) {
                Some(&i) => {
                    let m = &mut hosts[i];
                    m.add(point, rec.line)
                        .map_err(|why| Error::in_file(path, m.failure(why)))?;
                }
                None => {
                    let name: Arc<str> = rec.host.as_str().into();
                    index.insert(name.clone(), hosts.len());
                    hosts.push(Measured::new(name, point, rec.line, fit));
                }
            }
        }
        let Some((reference, _)) = reference else {
            return Err(Error::in_file(path, "no measurement line found"));
        };
        drop(index);
        let hosts = hosts
            .into_iter()
            .map(|mut m| {
                let (map, used) = m
                    .fit()
                    .map_err(|why| Error::in_file(path, m.failure(why)))?;
                let (map, band, dropped) = m.judge(map);
                let points = m.points();
                Ok(HostClock {
                    host: m.host.clone(),
                    map,
                    lines_used: used,
                    lines: m.lines,
                    band,
                    dropped,
                    points,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(SyncTable {
            reference,
            hosts,
            by_key: std::cell::OnceCell::new(),
        })
    }

    /// A host's clock by its name in the table.
    pub fn host_clock(&self, name: &str) -> Option<&HostClock> {
        self.hosts.iter().find(|h| &*h.host == name)
    }

    /// A table of maps found otherwise (from the messages).
    pub fn from_maps(reference: String, hosts: Vec<HostClock>) -> SyncTable {
        SyncTable {
            reference,
            hosts,
            by_key: std::cell::OnceCell::new(),
        }
    }

    /// The clock of `host`, matched with the identity rules. The reference
    /// host maps by identity; `None` = the host is not in the file.
    pub fn lookup(&self, host: &str, ids: &HostIdentity) -> Option<(ClockMap, &str, usize)> {
        if ids.same(host, &self.reference) {
            return Some((ClockMap::Identity, &self.reference, 0));
        }
        // Candidates share an identity key with `host`; the first in file
        // order that is the same host wins, as a scan would find it.
        let by_key = self.by_key.get_or_init(|| {
            let mut index = KeyIndex::default();
            for (i, h) in self.hosts.iter().enumerate() {
                for k in ids.keys(&h.host) {
                    let key = if k == &*h.host {
                        h.host.clone()
                    } else {
                        k.into()
                    };
                    index.insert(key, i as u32);
                }
            }
            index
        });
        let mut found: Option<u32> = None;
        for k in ids.keys(host) {
            for &i in by_key.get(k) {
                if found.is_none_or(|f| i < f) && ids.same(host, &self.hosts[i as usize].host) {
                    found = Some(i);
                }
            }
        }
        found.map(|i| {
            let h = &self.hosts[i as usize];
            (h.map, &*h.host, h.lines_used)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str, fit: SyncFit) -> SyncTable {
        SyncTable::from_reader(Path::new("t.sync"), text.as_bytes(), fit).unwrap()
    }

    const THESIS: &str = "1 paple 1094221332965040 paple01 1094222792354177
2 paple 1094221333154618 paple02 1094222263029626
3 paple 1094221333343677 paple03 1094222084364163
4 paple 1094221333497292 paple04 1094221463236745
5 paple 1094221337489491 paple01 1094222796878767
6 paple 1094221337621866 paple02 1094222267496840
7 paple 1094221337752345 paple03 1094222088772874
8 paple 1094221337966650 paple04 1094221467706105
";

    /// Maps a microsecond time through the nanosecond map and floors back.
    fn map_us(t: &SyncTable, host: &str, us: i64) -> i64 {
        let (m, _, _) = t.lookup(host, &HostIdentity::default()).unwrap();
        m.map(us * 1000).div_euclid(1000)
    }

    #[test]
    fn doubles_become_exact_nanoseconds() {
        assert_eq!(seconds_to_ns(0.0), Some(0));
        assert_eq!(seconds_to_ns(1.5), Some(1_500_000_000));
        assert_eq!(seconds_to_ns(-0.000152), Some(-152_000));
        // 3.6454000110097695e-05 s (an anchor of the pingpong fixture).
        assert_eq!(seconds_to_ns(3.6454000110097695e-05), Some(36_454));
        assert_eq!(seconds_to_ns(4.5150993900001595), Some(4_515_099_390));
        assert_eq!(seconds_to_ns(100000000.0), Some(100_000_000_000_000_000));
        assert_eq!(seconds_to_ns(1e-300), Some(0));
        assert_eq!(seconds_to_ns(f64::NAN), None);
        assert_eq!(seconds_to_ns(1e12), None);
        // Halves round away from zero: 2^-31 s = 0.4656612873077392578125 ns.
        assert_eq!(seconds_to_ns(2f64.powi(-30)), Some(1));
    }

    #[test]
    fn thesis_worked_example() {
        let t = table(THESIS, SyncFit::Endpoints);
        assert_eq!(t.reference, "paple");
        assert_eq!(map_us(&t, "paple03", 1094222084364200), 1094221333343713);
    }

    #[test]
    fn floor_goes_toward_minus_infinity_before_t_o() {
        let t = table(THESIS, SyncFit::Endpoints);
        assert_eq!(map_us(&t, "paple03", 1094222083364163), 1094221332343686);
        assert_eq!(map_us(&t, "paple01", 1094222791354177), 1094221331965070);
    }

    #[test]
    fn reference_host_maps_by_identity_and_unknown_is_none() {
        let t = table(THESIS, SyncFit::Endpoints);
        assert_eq!(
            t.lookup("paple", &HostIdentity::default()).unwrap().0,
            ClockMap::Identity
        );
        assert!(t.lookup("athlon01", &HostIdentity::default()).is_none());
        // The short-name rule finds paple03 under its qualified name.
        assert!(t
            .lookup("paple03.lsc.ufsm.br", &HostIdentity::default())
            .is_some());
    }

    #[test]
    fn drift_sign_and_size() {
        let t = table(THESIS, SyncFit::Endpoints);
        let (m, _, _) = t.lookup("paple03", &HostIdentity::default()).unwrap();
        assert!((m.drift_ppm() - 9.754).abs() < 0.001, "{}", m.drift_ppm());
    }

    /// The offset shown at T0 is taken at the reference T0, not at the
    /// local time equal to it: 7.3 ms apart on the thesis' paple03, whose
    /// clock is 751 s behind and drifts 9.75 ppm.
    #[test]
    fn offset_at_reference_time_inverts_the_map() {
        let t = table(THESIS, SyncFit::Endpoints);
        let (m, _, _) = t.lookup("paple03", &HostIdentity::default()).unwrap();
        let t0 = 1_094_221_332_000_000_000;
        let local = m.local_of(t0);
        assert!((m.map(local) - t0).abs() <= 1, "{} vs {t0}", m.map(local));
        let at_ref = m.offset_at_reference(t0);
        let at_local = m.offset_at(t0);
        assert!((at_ref - at_local).abs() > 7_000_000, "{at_ref} {at_local}");
        assert_eq!(at_ref, t0 - local);
    }

    #[test]
    fn single_line_is_offset_only() {
        let t = table("r 1000 a 5000\n", SyncFit::Endpoints);
        let (m, _, _) = t.lookup("a", &HostIdentity::default()).unwrap();
        assert_eq!(m.map(6_000_000), 2_000_000);
    }

    #[test]
    fn least_squares_agrees_with_endpoints_on_a_true_line() {
        // Host runs 100 ppm fast with offset 7 s; every point on the line.
        let mut text = String::new();
        for i in 0..5i64 {
            let local = 1_000_000_000 + i * 1_000_000;
            let reference = local - 7_000_000 - i * 100;
            text.push_str(&format!("r {reference} h {local}\n"));
        }
        let a = table(&text, SyncFit::Endpoints);
        let b = table(&text, SyncFit::LeastSquares);
        for t in [
            1_000_000_000i64,
            1_002_500_000,
            1_004_000_000,
            1_010_000_000,
        ] {
            let ma = a
                .lookup("h", &HostIdentity::default())
                .unwrap()
                .0
                .map(t * 1000);
            let mb = b
                .lookup("h", &HostIdentity::default())
                .unwrap()
                .0
                .map(t * 1000);
            assert!((ma - mb).abs() <= 1, "{t}: {ma} vs {mb}");
        }
    }

    #[test]
    fn backwards_measurements_are_refused() {
        let text = "r 10 a 50\nr 20 a 40\n";
        let e = SyncTable::from_reader(Path::new("s"), text.as_bytes(), SyncFit::Endpoints)
            .unwrap_err();
        assert!(e.message.contains("lines 1, 2"), "{e}");
    }

    /// The floor without a division is the division's, wherever a map
    /// may be used: any slope it is made for, any two times, the ends of
    /// `i64` and slopes near 0, 1 and their limits included.
    fn by_division(lo: i64, lo_ref: i64, num: i128, den: i128, t: i64) -> i64 {
        let m = i128::from(lo_ref) + ((i128::from(t) - i128::from(lo)) * num).div_euclid(den);
        i64::try_from(m).unwrap_or(if m < 0 { i64::MIN } else { i64::MAX })
    }

    fn edge_i64() -> impl proptest::strategy::Strategy<Value = i64> {
        use proptest::prelude::*;
        prop_oneof![
            any::<i64>(),
            -2_000_000_000_000i64..2_000_000_000_000,
            Just(i64::MIN),
            Just(i64::MAX),
            Just(0),
        ]
    }

    fn edge_span(max: i128) -> impl proptest::strategy::Strategy<Value = i128> {
        use proptest::prelude::*;
        prop_oneof![
            1..=max,
            (1i128..1_000_000).prop_map(move |d| max + 1 - d),
            999_999_000_000i128..1_000_001_000_000,
            Just(1),
            Just(max),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]
        #[test]
        fn slopes_floor_as_the_division_does(
            lo in edge_i64(),
            lo_ref in edge_i64(),
            num in edge_span((1 << 63) - 1),
            den in edge_span(u64::MAX.into()),
            t in edge_i64(),
        ) {
            let m = ClockMap::linear(lo, lo_ref, num, den);
            let fast = matches!(m, ClockMap::Linear { fast: Some(_), .. });
            proptest::prop_assert!(fast);
            proptest::prop_assert_eq!(m.map(t), by_division(lo, lo_ref, num, den, t));
        }
    }

    #[test]
    fn slopes_beyond_the_fast_floor_divide() {
        let m = ClockMap::linear(5, 7, 1 << 63, 3);
        assert!(matches!(m, ClockMap::Linear { fast: None, .. }));
        assert_eq!(m.map(-11), by_division(5, 7, 1 << 63, 3, -11));
        let m = ClockMap::linear(5, 7, 3, i128::from(u64::MAX) + 1);
        assert!(matches!(m, ClockMap::Linear { fast: None, .. }));
        assert_eq!(
            m.map(i64::MAX),
            by_division(5, 7, 3, i128::from(u64::MAX) + 1, i64::MAX)
        );
    }
}
