//! What ViTE shows: the README example, the DECK example and the grid
//! example open in ViTE 1.2 (headless, exporting an SVG) with no error and
//! no warning, and their time axis starts at the data (T0 is the first
//! event floored to the millisecond). Skipped loudly without ViTE;
//! required under INTEGRADOR_REQUIRE_VITE=1 (`.ci/run` sets it).

mod common;
use common::*;
use std::path::Path;

/// The earliest time written, in seconds after T0.
fn first_time(trace: &Path) -> f64 {
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('%') && integrador::paje::writer::origin_of(l).is_none())
        .filter_map(|l| {
            let f = paje_fields(l);
            // Timed events: container creation and every event after it.
            let timed = matches!(
                f[0].as_str(),
                "4" | "5" | "6" | "7" | "8" | "11" | "12" | "13" | "14"
            );
            timed.then(|| f[1].parse::<f64>().unwrap())
        })
        .fold(f64::INFINITY, f64::min)
}

fn opens_cleanly(args: &[&str], name: &str) {
    let d = tempdir();
    let out = d.path().join(name);
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-q", "-o", out.to_str().unwrap()]);
    let o = integrador(&all);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let first = first_time(&out);
    assert!(
        (0.0..0.001).contains(&first),
        "{name}: first event at {first} s after T0"
    );
    assert_vite_clean(&out, name);
}

#[test]
fn readme_example_opens_in_vite_without_a_warning() {
    let ex = root().join("examples/pingpong-localhost");
    let p = |f: &str| ex.join(f).to_str().unwrap().to_string();
    let h = root().join("hierarchies/mpi+os+ganglia+pcp.toml");
    let args = [
        "-hierarchy".to_string(),
        h.to_str().unwrap().to_string(),
        "-mpi".into(),
        p("mpi_pingpong.clog2"),
        "-mpinodes".into(),
        p("mpi.nodes"),
        "-ganglia".into(),
        p("ganglia.traced"),
        "-os".into(),
        p("vm.os"),
        "-pcp".into(),
        p("pcp/vm"),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    opens_cleanly(&args, "pingpong.paje");
}

#[test]
fn deck_example_opens_in_vite_without_a_warning() {
    let glob = root().join("examples/deck/threads/*.rst");
    let h = root().join("hierarchies/deck+os+ganglia+pcp.toml");
    opens_cleanly(
        &[
            "-deck",
            glob.to_str().unwrap(),
            "-hierarchy",
            h.to_str().unwrap(),
        ],
        "deck.paje",
    );
}

#[test]
fn grid_example_opens_in_vite_without_a_warning() {
    let ex = root().join("examples/grid");
    let h = root().join("hierarchies/grid.toml");
    opens_cleanly(
        &[
            "-hierarchy",
            h.to_str().unwrap(),
            "-ganglia",
            ex.join("domain-a.traced").to_str().unwrap(),
            ex.join("domain-b.traced").to_str().unwrap(),
        ],
        "grid.paje",
    );
}
