//! Color names of the inputs (MPE and libRastro name X11 colors: `green`,
//! `forest green`, `OrangeRed`) as Pajé colors (`"r g b"` in 0..1).

/// Default colors of variable types without one, picked by [`pick`] from
/// what the type is, so the same type has the same color in every run,
/// window and task (an order of registration differs between a run and
/// its tasks). (The palettes
/// live here, beside the color names, and nowhere else.)
pub const VARIABLES: [&str; 8] = [
    "0.12 0.47 0.71",
    "1 0.5 0.05",
    "0.17 0.63 0.17",
    "0.84 0.15 0.16",
    "0.58 0.4 0.74",
    "0.55 0.34 0.29",
    "0.89 0.47 0.76",
    "0.5 0.5 0.5",
];

/// Colors of state values that the hierarchy does not color.
pub const VALUES: [&str; 6] = [
    "0.65 0.81 0.89",
    "0.7 0.87 0.54",
    "0.98 0.6 0.6",
    "0.99 0.75 0.44",
    "0.79 0.7 0.84",
    "1 1 0.6",
];

/// The color of `palette` for a thing known by `what` (its name, its
/// key): a fixed hash, so it depends on nothing but the thing. Two things
/// may share a color; the hierarchy file colors what must differ.
pub fn pick<'a>(palette: &[&'a str], what: &[u8]) -> &'a str {
    let h = twox_hash::XxHash64::oneshot(0, what);
    palette[(h % palette.len() as u64) as usize]
}

/// X11's `rgb.txt` and CSS disagree on these four; MPE means X11
/// (Jumpshot reads `rgb.txt`), so they are X11 here.
const X11_NOT_CSS: [(&str, [u8; 3]); 4] = [
    ("gray", [190, 190, 190]),
    ("green", [0, 255, 0]),
    ("maroon", [176, 48, 96]),
    ("purple", [160, 32, 240]),
];

/// The Pajé color of an X11/CSS color name or `#rrggbb`; `None` when the
/// name is unknown (the caller picks a palette color).
pub fn paje_color(name: &str) -> Option<String> {
    let key: String = name
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    if key.is_empty() {
        return None;
    }
    let grey = key.replace("grey", "gray");
    let rgb = match X11_NOT_CSS.iter().find(|(n, _)| *n == grey) {
        Some((_, rgb)) => *rgb,
        None => {
            let c = csscolorparser::parse(&key).ok()?;
            let [r, g, b, _] = c.to_rgba8();
            [r, g, b]
        }
    };
    let f = |v: u8| {
        let x = f64::from(v) / 255.0;
        // Three decimals are finer than any display.
        let s = format!("{x:.3}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s.is_empty() {
            "0".to_string()
        } else {
            s.to_string()
        }
    };
    Some(format!("{} {} {}", f(rgb[0]), f(rgb[1]), f(rgb[2])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x11_names() {
        assert_eq!(paje_color("blue").as_deref(), Some("0 0 1"));
        assert_eq!(paje_color("green").as_deref(), Some("0 1 0"));
        assert_eq!(paje_color("white").as_deref(), Some("1 1 1"));
        assert_eq!(
            paje_color("forest green").as_deref(),
            Some("0.133 0.545 0.133")
        );
        assert_eq!(paje_color("OrangeRed").as_deref(), Some("1 0.271 0"));
        assert_eq!(paje_color("maroon").as_deref(), Some("0.69 0.188 0.376"));
        assert_eq!(paje_color("no such color"), None);
        assert_eq!(paje_color(""), None);
    }
}
