//! The page's charts, as SVG text drawn by `plotters`. Colours are the
//! Okabe–Ito palette, told apart by readers with any colour vision, and
//! every series also has a shape of its own, so a grey print reads too.

use plotters::prelude::*;

/// Blue: the correction applied.
const LINE: RGBColor = RGBColor(0, 114, 178);
/// Orange: sync measurements.
const SYNC: RGBColor = RGBColor(230, 159, 0);
/// Bluish green: a message's lower bound.
const LOWER: RGBColor = RGBColor(0, 158, 115);
/// Vermillion: a message's upper bound.
const UPPER: RGBColor = RGBColor(213, 94, 0);
/// Sky blue: the band.
const BAND: RGBColor = RGBColor(86, 180, 233);

/// One host's chart: x in seconds since T0, y in milliseconds.
#[derive(Debug, Default, Clone)]
pub struct HostSeries {
    /// The correction applied, at the run's two ends (a line).
    pub line: Vec<(f64, f64)>,
    /// Its band (± ms), when known.
    pub band: Option<f64>,
    /// Sync measurements.
    pub sync: Vec<(f64, f64)>,
    /// The least correction each bounding message allows.
    pub lower: Vec<(f64, f64)>,
    /// The greatest.
    pub upper: Vec<(f64, f64)>,
}

fn to_io<E: std::fmt::Display>(e: E) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// The y range of everything drawn, with a margin; never empty.
fn y_range(s: &HostSeries) -> (f64, f64) {
    let band = s.band.unwrap_or(0.0);
    let ys = s
        .line
        .iter()
        .flat_map(|p| [p.1 - band, p.1 + band])
        .chain(s.sync.iter().map(|p| p.1))
        .chain(s.lower.iter().map(|p| p.1))
        .chain(s.upper.iter().map(|p| p.1));
    let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
        (a.min(y), b.max(y))
    });
    if !lo.is_finite() || !hi.is_finite() {
        return (-1.0, 1.0);
    }
    let pad = ((hi - lo) * 0.08).max(0.001);
    (lo - pad, hi + pad)
}

/// The x range: the run's span, never empty.
fn x_range(span: (f64, f64)) -> (f64, f64) {
    if span.1 > span.0 {
        span
    } else {
        (span.0, span.0 + 1.0)
    }
}

/// A host's correction over the run, as SVG.
pub fn host(s: &HostSeries, span: (f64, f64)) -> std::io::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (560, 220)).into_drawing_area();
        root.fill(&WHITE).map_err(to_io)?;
        let (x0, x1) = x_range(span);
        let (y0, y1) = y_range(s);
        let mut chart = ChartBuilder::on(&root)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(to_io)?;
        chart
            .configure_mesh()
            .x_desc("seconds since T0 (reference clock)")
            .y_desc("correction (ms)")
            .label_style(("sans-serif", 12))
            .axis_desc_style(("sans-serif", 13))
            .max_light_lines(0)
            .draw()
            .map_err(to_io)?;
        if let Some(b) = s.band.filter(|b| *b > 0.0) {
            let upper: Vec<(f64, f64)> = s.line.iter().map(|p| (p.0, p.1 + b)).collect();
            let lower: Vec<(f64, f64)> = s.line.iter().rev().map(|p| (p.0, p.1 - b)).collect();
            let poly: Vec<(f64, f64)> = upper.into_iter().chain(lower).collect();
            chart
                .draw_series(std::iter::once(Polygon::new(poly, BAND.mix(0.25).filled())))
                .map_err(to_io)?;
        }
        chart
            .draw_series(LineSeries::new(
                s.line.iter().copied(),
                LINE.stroke_width(2),
            ))
            .map_err(to_io)?;
        chart
            .draw_series(
                s.sync
                    .iter()
                    .map(|&p| Rectangle::new(square(p, x1 - x0, y1 - y0), SYNC.filled())),
            )
            .map_err(to_io)?;
        chart
            .draw_series(
                s.lower
                    .iter()
                    .map(|&p| TriangleMarker::new(p, 5, LOWER.filled())),
            )
            .map_err(to_io)?;
        chart
            .draw_series(
                s.upper
                    .iter()
                    .map(|&p| Cross::new(p, 4, UPPER.stroke_width(2))),
            )
            .map_err(to_io)?;
        root.present().map_err(to_io)?;
    }
    Ok(svg)
}

/// A small square around `p`, sized to the chart's ranges.
fn square(p: (f64, f64), w: f64, h: f64) -> [(f64, f64); 2] {
    let (dx, dy) = (w / 160.0, h / 60.0);
    [(p.0 - dx, p.1 - dy), (p.0 + dx, p.1 + dy)]
}

/// A row of the coverage chart: a machine, and each input's spans on it
/// (input index, spans in seconds since T0).
pub struct CoverRow {
    /// The machine.
    pub machine: String,
    /// (input, spans).
    pub inputs: Vec<(usize, Vec<(f64, f64)>)>,
}

/// The palette's colours by input, cycling.
fn input_colour(i: usize) -> RGBColor {
    [
        LINE,
        SYNC,
        LOWER,
        UPPER,
        BAND,
        RGBColor(204, 121, 167),
        RGBColor(0, 0, 0),
    ][i % 7]
}

/// Which input covers which machine when: a row a machine, a lane an
/// input in it, gaps left blank.
pub fn coverage(rows: &[CoverRow], inputs: usize, span: (f64, f64)) -> std::io::Result<String> {
    let lanes = inputs.max(1);
    let row_h = (8 * lanes + 10).max(22) as u32;
    let height = 70 + row_h * rows.len().max(1) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (820, height)).into_drawing_area();
        root.fill(&WHITE).map_err(to_io)?;
        let (x0, x1) = x_range(span);
        let n = rows.len().max(1) as f64;
        let mut chart = ChartBuilder::on(&root)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(180)
            .build_cartesian_2d(x0..x1, 0.0..n)
            .map_err(to_io)?;
        chart
            .configure_mesh()
            .x_desc("seconds since T0")
            .x_label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 13))
            .y_labels(0)
            .max_light_lines(0)
            .draw()
            .map_err(to_io)?;
        let lane_h = 0.8 / lanes as f64;
        let mut bars = Vec::new();
        for (r, row) in rows.iter().enumerate() {
            let top = n - r as f64 - 0.1;
            for (input, spans) in &row.inputs {
                let y1 = top - lane_h * *input as f64;
                let y0 = y1 - lane_h * 0.85;
                for &(a, b) in spans {
                    // A span of one instant still shows.
                    let b = b.max(a + (x1 - x0) / 400.0);
                    bars.push(Rectangle::new(
                        [(a, y0), (b, y1)],
                        input_colour(*input).filled(),
                    ));
                }
            }
        }
        chart.draw_series(bars).map_err(to_io)?;
        // The machines' names beside their rows, in the label area.
        let style = TextStyle::from(("sans-serif", 13).into_font()).pos(
            plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Right,
                plotters::style::text_anchor::VPos::Center,
            ),
        );
        for (r, row) in rows.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(x0, n - r as f64 - 0.5));
            root.draw(&Text::new(row.machine.clone(), (px - 8, py), style.clone()))
                .map_err(to_io)?;
        }
        root.present().map_err(to_io)?;
    }
    Ok(svg)
}

/// The colour of input `i` as CSS, for the legend.
pub fn input_css(i: usize) -> String {
    let c = input_colour(i);
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}
