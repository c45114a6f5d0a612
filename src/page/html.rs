//! The page's HTML: one file, its charts inline SVG, its style inline,
//! no script and nothing fetched, so it opens from disk and prints.

use super::charts::{self, CoverRow, HostSeries};
use super::Cover;
use crate::clock::ClockMap;
use crate::clockfit::Estimator;
use crate::registry::natural_cmp;
use crate::report::RunReport;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// Hosts a group of the page holds: a thousand hosts are twenty groups,
/// each folded but the first.
const GROUP: usize = 50;

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            c => o.push(c),
        }
    }
    o
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;max-width:70em;color:#111}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #999}\
h3{font-size:1em;margin:.8em 0 .2em}section.host{display:inline-block;vertical-align:top;margin:0 1em 1em 0}\
p.what{font-size:.85em;max-width:560px;margin:.1em 0}table{border-collapse:collapse;font-size:.9em}\
td,th{border:1px solid #aaa;padding:.2em .5em;text-align:right}th{background:#eee}td.name{text-align:left}\
pre{font-size:.8em;background:#f6f6f6;padding:.8em;overflow-x:auto}.warn{color:#8a2000}\
.key span{display:inline-block;margin-right:1.2em}.sw{display:inline-block;width:.9em;height:.9em;vertical-align:middle;margin-right:.3em}\
@media print{details{display:block}section.host{break-inside:avoid}}";

/// A host's clock as the run applied it.
struct Applied<'a> {
    map: ClockMap,
    band: Option<i64>,
    points: &'a [(i64, i64)],
    what: String,
}

/// The correction at reference time `t` (ns).
fn correction(map: &ClockMap, t: i64) -> i64 {
    t.saturating_sub(map.local_of(t))
}

/// What one pair of hosts says: messages, and the worst receive before
/// its send without the corrections and with them (ns; 0: none).
struct PairRow {
    a: String,
    b: String,
    messages: u64,
    before: i64,
    after: i64,
    after_count: u64,
}

/// The page.
pub fn page(r: &RunReport, cover: &[(u32, String, Cover)]) -> String {
    let origin = r.origin;
    let spans = r.sources.iter().filter_map(|s| s.span);
    let lo = spans.clone().map(|s| s.0).min().unwrap_or(origin);
    let hi = spans.map(|s| s.1).max().unwrap_or(origin);
    let secs = |t: i64| (t - origin) as f64 / 1e9;
    let span = (secs(lo), secs(hi));

    let mut applied: HashMap<&str, Applied> = HashMap::new();
    for c in &r.clocks {
        if let Some((_, map, n)) = &c.map {
            let what = match (c.from_messages, c.dropped) {
                (false, _) if *n == 0 => "the reference clock".to_string(),
                (true, _) => format!("from {n} message(s) (--sync-from-messages)"),
                (false, Some((ppm, _))) => {
                    format!("from {n} sync line(s); a drift of {ppm:+.3} ppm within their scatter not applied")
                }
                (false, None) => {
                    format!("from {n} sync line(s), drift {:+.3} ppm", map.drift_ppm())
                }
            };
            applied.insert(
                &c.host,
                Applied {
                    map: *map,
                    band: c.band,
                    points: &c.points,
                    what,
                },
            );
        }
    }
    let identity = ClockMap::Identity;
    let map_of = |h: &str| applied.get(h).map_or(identity, |a| a.map);

    let mut est = Estimator::default();
    let mut after: BTreeMap<(String, String), (u64, i64)> = BTreeMap::new();
    for m in r.sources.iter().filter_map(|s| s.messages.as_ref()) {
        est.add(&m.clocks);
        for ((from, to), (n, worst, _)) in &m.violations {
            let e = after.entry(ordered(from, to)).or_default();
            e.0 += n;
            e.1 = e.1.max(*worst);
        }
    }
    let mut series: BTreeMap<String, HostSeries> = BTreeMap::new();
    let mut pairs = Vec::new();
    for p in est.pair_points() {
        let (a, b, fwd, back) = (p.a, p.b, p.forward, p.back);
        let (ma, mb) = (map_of(&a), map_of(&b));
        let mut before = 0i64;
        for &(x, y) in &fwd {
            // A→B sent at a' = x + y on A, received at x on B.
            let early = ma.local_of(x + y).saturating_sub(mb.local_of(x));
            before = before.max(early);
            let sb = series.entry(b.clone()).or_default();
            sb.lower
                .push((secs(x), (correction(&mb, x) + y) as f64 / 1e6));
            let sa = series.entry(a.clone()).or_default();
            sa.upper
                .push((secs(x + y), (correction(&ma, x + y) - y) as f64 / 1e6));
        }
        for &(x, y) in &back {
            let early = mb.local_of(x).saturating_sub(ma.local_of(x + y));
            before = before.max(early);
            let sb = series.entry(b.clone()).or_default();
            sb.upper
                .push((secs(x), (correction(&mb, x) + y) as f64 / 1e6));
            let sa = series.entry(a.clone()).or_default();
            sa.lower
                .push((secs(x + y), (correction(&ma, x + y) - y) as f64 / 1e6));
        }
        let (after_count, worst) = after.get(&ordered(&a, &b)).copied().unwrap_or_default();
        let messages = p.messages;
        pairs.push(PairRow {
            a,
            b,
            messages,
            before: if before > crate::messages::TOLERANCE_NS {
                before
            } else {
                0
            },
            after: worst,
            after_count,
        });
    }
    for (h, a) in &applied {
        let s = series.entry(h.to_string()).or_default();
        s.band = a.band.map(|b| b as f64 / 1e6);
        s.sync = a
            .points
            .iter()
            .map(|&(l, rf)| (secs(rf), (rf - l) as f64 / 1e6))
            .collect();
    }
    // Every machine an input covers has its chart, corrected or not.
    for (_, machine, _) in cover {
        if !series.contains_key(machine) {
            series.insert(machine.clone(), HostSeries::default());
        }
    }
    for (h, s) in series.iter_mut() {
        let m = map_of(h);
        s.line = [lo, hi]
            .iter()
            .map(|&t| (secs(t), correction(&m, t) as f64 / 1e6))
            .collect();
    }

    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>integrador: clocks of the run</title><style>{STYLE}</style></head><body>\n<h1>Clocks of the run</h1>\n<p>T0 = {} ({} UTC); reference clock: {}; {} input(s), {} host(s).</p>\n",
        crate::time::millis(origin),
        crate::time::utc(origin),
        esc(r.reference.as_deref().unwrap_or("none (no sync file)")),
        r.sources.len(),
        series.len(),
    );
    let clock_warnings: Vec<&String> = r
        .warnings
        .iter()
        .filter(|w| w.contains("correction") || w.contains("clock") || w.contains("sync"))
        .collect();
    if !clock_warnings.is_empty() {
        o.push_str("<h2>Warnings</h2><ul>");
        for w in clock_warnings {
            let _ = write!(o, "<li class=\"warn\">{}</li>", esc(w));
        }
        o.push_str("</ul>\n");
    }
    hosts_section(&mut o, &series, &applied, span);
    pairs_section(&mut o, &pairs);
    coverage_section(&mut o, r, cover, origin, span);
    let mut text = Vec::new();
    let _ = crate::summary::write_body(&mut text, r);
    let _ = write!(
        o,
        "<h2>The summary</h2><pre>{}</pre>\n</body></html>\n",
        esc(&String::from_utf8_lossy(&text))
    );
    o
}

/// A pair's names, A before B by name (the estimator's order).
fn ordered(a: &str, b: &str) -> (String, String) {
    if natural_cmp(a, b).is_le() {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

fn hosts_section(
    o: &mut String,
    series: &BTreeMap<String, HostSeries>,
    applied: &HashMap<&str, Applied>,
    span: (f64, f64),
) {
    o.push_str("<h2>Each host's correction</h2>\n<p class=\"key\">\
<span><i class=\"sw\" style=\"background:#0072b2\"></i>the correction applied (reference − local)</span>\
<span><i class=\"sw\" style=\"background:#56b4e9;opacity:.4\"></i>its band</span>\
<span><i class=\"sw\" style=\"background:#e69f00\"></i>sync measurements (squares)</span>\
<span><i class=\"sw\" style=\"background:#009e73\"></i>least correction a message allows (triangles)</span>\
<span><i class=\"sw\" style=\"background:#d55e00\"></i>greatest (crosses)</span></p>\n\
<p>A message sent from another host bounds this host's correction from below, one sent to it from above, taking the other host's correction as right: the line belongs between the triangles and the crosses.</p>\n");
    let mut hosts: Vec<&String> = series.keys().collect();
    hosts.sort_by(|a, b| natural_cmp(a, b));
    for (g, group) in hosts.chunks(GROUP).enumerate() {
        let open = if g == 0 { " open" } else { "" };
        let _ = writeln!(
            o,
            "<details{open}><summary>hosts {} to {} of {}</summary>",
            g * GROUP + 1,
            g * GROUP + group.len(),
            hosts.len()
        );
        for h in group {
            let s = &series[*h];
            let what = applied.get(h.as_str()).map_or_else(
                || "no correction: none applied".to_string(),
                |a| {
                    let band = a.band.map_or(String::new(), |b| {
                        format!(", ± {}", crate::time::format_duration(b))
                    });
                    format!("{}{band}", a.what)
                },
            );
            let outside = s
                .sync
                .iter()
                .filter(|p| p.0 < span.0 || p.0 > span.1)
                .count();
            let what = match outside {
                0 => what,
                n => format!("{what}; {n} sync measurement(s) outside the run's span, not drawn"),
            };
            let svg = charts::host(s, span).unwrap_or_else(|e| {
                format!("<p class=\"warn\">chart: {}</p>", esc(&e.to_string()))
            });
            let _ = writeln!(
                o,
                "<section class=\"host\" data-host=\"{0}\"><h3>{0}</h3><p class=\"what\">{1}</p><div class=\"host-chart\">{svg}</div></section>",
                esc(h),
                esc(&what)
            );
        }
        o.push_str("</details>\n");
    }
}

fn pairs_section(o: &mut String, pairs: &[PairRow]) {
    if pairs.is_empty() {
        o.push_str("<h2>Causality per host pair</h2><p>No message joins two hosts.</p>\n");
        return;
    }
    o.push_str("<h2>Causality per host pair</h2>\n<p>The worst receive before its send, on each host's own clock and with the corrections applied (beyond the 1 µs tolerance; from the messages that bound the pair, so the worst is exact).</p>\n<table><tr><th>hosts</th><th>messages</th><th>worst early receive, uncorrected</th><th>receives early, corrected</th><th>worst, corrected</th></tr>\n");
    let d = |ns: i64| {
        if ns > 0 {
            crate::time::format_duration(ns)
        } else {
            "none".to_string()
        }
    };
    for p in pairs {
        let _ = writeln!(
            o,
            "<tr><td class=\"name\">{} ↔ {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&p.a),
            esc(&p.b),
            p.messages,
            d(p.before),
            p.after_count,
            d(p.after)
        );
    }
    o.push_str("</table>\n");
}

fn coverage_section(
    o: &mut String,
    r: &RunReport,
    cover: &[(u32, String, Cover)],
    origin: i64,
    span: (f64, f64),
) {
    o.push_str("<h2>Which input covers which machine when</h2>\n<p class=\"key\">");
    for (i, s) in r.sources.iter().enumerate() {
        let _ = write!(
            o,
            "<span><i class=\"sw\" style=\"background:{}\"></i>{} {}</span>",
            charts::input_css(i),
            esc(s.kind),
            esc(&s.path.display().to_string())
        );
    }
    o.push_str("</p>\n<p>A blank between two bars of one input is a time it said nothing of that machine.</p>\n");
    let mut rows: Vec<CoverRow> = Vec::new();
    for (input, machine, c) in cover {
        let spans = c
            .spans
            .iter()
            .map(|&(a, b)| ((a - origin) as f64 / 1e9, (b - origin) as f64 / 1e9))
            .collect();
        match rows.last_mut().filter(|row| &row.machine == machine) {
            Some(row) => row.inputs.push((*input as usize, spans)),
            None => rows.push(CoverRow {
                machine: machine.clone(),
                inputs: vec![(*input as usize, spans)],
            }),
        }
    }
    match charts::coverage(&rows, r.sources.len(), span) {
        Ok(svg) => {
            let _ = writeln!(o, "<div class=\"coverage\">{svg}</div>");
        }
        Err(e) => {
            let _ = write!(
                o,
                "<p class=\"warn\">coverage chart: {}</p>",
                esc(&e.to_string())
            );
        }
    }
}
