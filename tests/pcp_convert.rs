//! PCP archives end to end: counters as rates (and raw with --pcp-raw),
//! gaps at mark records, the argument forms of -pcp, the same trace from
//! v2, v3, xz and zstd, and Ganglia + PCP of one host under one Machine.

mod common;

use common::*;
use integrador::clock::parse_epoch_ns;
use std::collections::BTreeMap;
use std::path::Path;

/// (variable name, machine) → [(ns, value)] from one of our traces.
fn variables(trace: &Path) -> BTreeMap<(String, String), Vec<(i64, f64)>> {
    let o = read_ours(trace);
    let mut out: BTreeMap<(String, String), Vec<(i64, f64)>> = BTreeMap::new();
    for (t, f) in o.of("6") {
        out.entry((o.name(&f[3]).to_string(), o.name(&f[2]).to_string()))
            .or_default()
            .push((t, f[4].parse().unwrap()));
    }
    out
}

/// (ns, raw value) of one metric instance in a fixture's values.csv.
fn raw_series(csv_path: &Path, metric: &str, instance: &str) -> Vec<(i64, f64)> {
    let mut r = csv::Reader::from_path(csv_path).unwrap();
    r.records()
        .map(|x| x.unwrap())
        .filter(|x| &x[2] == metric && &x[4] == instance)
        .map(|x| {
            (
                parse_epoch_ns(x[0].as_bytes()).unwrap(),
                x[5].parse().unwrap(),
            )
        })
        .collect()
}

const V2: &str = "pcp/pmlogger_v2/20261121.12.34";

#[test]
fn counters_become_rates_as_pmval_computes_them() {
    let d = tempdir();
    let out = d.path().join("o.paje");
    run_ok(
        &["-pcp", fixture(&format!("{V2}.0")).to_str().unwrap()],
        &out,
    );
    let vars = variables(&out);
    let csv = fixture(&format!("{V2}.values.csv"));
    let host = "node01.cluster.example".to_string();
    for (metric, inst, name, per_unit) in [
        (
            "network.interface.in.bytes",
            "lo",
            "network.interface.in.bytes[lo] (byte / sec)",
            1e9,
        ),
        (
            "kernel.all.pswitch",
            "",
            "kernel.all.pswitch (count / sec)",
            1e9,
        ),
        // Milliseconds per millisecond: a utilisation.
        (
            "kernel.all.cpu.user",
            "",
            "kernel.all.cpu.user (utilisation)",
            1e6,
        ),
    ] {
        let raw = raw_series(&csv, metric, inst);
        let want: Vec<(i64, f64)> = raw
            .windows(2)
            .map(|w| {
                (
                    w[1].0,
                    (w[1].1 - w[0].1) * per_unit / (w[1].0 - w[0].0) as f64,
                )
            })
            .collect();
        let mine = &vars[&(name.to_string(), host.clone())];
        assert_eq!(mine.len(), want.len(), "{name}");
        for (m, w) in mine.iter().zip(&want) {
            assert_eq!(m.0, w.0, "{name}");
            assert!(
                (m.1 - w.1).abs() <= 1e-9 * w.1.abs().max(1.0),
                "{name}: {m:?} vs {w:?}"
            );
        }
    }
    // Two CPUs: user + sys + idle is at most 2 (nice, irq... are not
    // recorded) and, on this busy VM, more than 1.5.
    let u = &vars[&(
        "kernel.all.cpu.user (utilisation)".to_string(),
        host.clone(),
    )];
    let s = &vars[&("kernel.all.cpu.sys (utilisation)".to_string(), host.clone())];
    let i = &vars[&(
        "kernel.all.cpu.idle (utilisation)".to_string(),
        host.clone(),
    )];
    for ((a, b), c) in u.iter().zip(s).zip(i) {
        let total = a.1 + b.1 + c.1;
        assert!((1.5..=2.05).contains(&total), "{total} at {}", a.0);
    }
    // Instants as sampled; FLOAT load averages.
    let load = &vars[&("kernel.all.load[1 minute]".to_string(), host.clone())];
    let raw = raw_series(&csv, "kernel.all.load", "1 minute");
    assert_eq!(load.len(), raw.len());
    for (m, r) in load.iter().zip(&raw) {
        assert_eq!(m.0, r.0);
        assert!((m.1 - r.1).abs() < 1e-6 * r.1.abs().max(1.0));
    }
    // pmcd.* left out by default.
    assert!(!vars.keys().any(|(n, _)| n.starts_with("pmcd.")));
}

#[test]
fn raw_mode_keeps_counter_values() {
    let d = tempdir();
    let out = d.path().join("o.paje");
    // A base name: no file has that name.
    run_ok(
        &["-pcp", fixtures().join(V2).to_str().unwrap(), "--pcp-raw"],
        &out,
    );
    let vars = variables(&out);
    let raw = raw_series(
        &fixture(&format!("{V2}.values.csv")),
        "network.interface.out.bytes",
        "eth0",
    );
    let mine = &vars[&(
        "network.interface.out.bytes[eth0] (byte)".to_string(),
        "node01.cluster.example".to_string(),
    )];
    assert_eq!(mine, &raw);
}

#[test]
fn no_rate_is_drawn_across_a_mark() {
    let d = tempdir();
    let out = d.path().join("o.paje");
    let err = run_ok(
        &[
            "-pcp",
            fixture("pcp/multihost/node01.meta").to_str().unwrap(),
        ],
        &out,
    );
    assert!(err.contains("1 mark record(s)"), "{err}");
    let vars = variables(&out);
    let csv = fixture("pcp/multihost/node01.values.csv");
    let mark = {
        let mut r = csv::Reader::from_path(&csv).unwrap();
        r.records()
            .map(|x| x.unwrap())
            .find(|x| &x[2] == "<mark>")
            .map(|x| parse_epoch_ns(x[0].as_bytes()).unwrap())
            .unwrap()
    };
    let raw = raw_series(&csv, "kernel.all.pswitch", "");
    let rates = &vars[&(
        "kernel.all.pswitch (count / sec)".to_string(),
        "node01".to_string(),
    )];
    // One rate per interval, minus the one that spans the mark.
    assert_eq!(rates.len(), raw.len() - 2);
    let after = raw.iter().find(|(t, _)| *t > mark).unwrap().0;
    assert!(
        !rates.iter().any(|(t, _)| *t == after),
        "a rate across the gap"
    );
    // Instances that appear later (eth1 at +25 s) get their own variable.
    let eth1 = &vars[&(
        "network.interface.in.bytes[eth1] (byte / sec)".to_string(),
        "node01".to_string(),
    )];
    assert!(eth1.first().unwrap().0 > parse_epoch_ns(b"1795264473.438482").unwrap());
}

#[test]
fn every_encoding_and_argument_form_gives_the_same_trace() {
    let d = tempdir();
    let mut traces = Vec::new();
    for (i, arg) in [
        V2.to_string(),
        format!("{V2}.0"),
        format!("{V2}.index"),
        "pcp/pmlogger_v2_as_v3/20261121.12.34.meta".to_string(),
        "pcp/pmlogger_v2_xz/20261121.12.34.0.xz".to_string(),
        "pcp/pmlogger_v2_zst/20261121.12.34.meta.zst".to_string(),
    ]
    .iter()
    .enumerate()
    {
        let out = d.path().join(format!("{i}.paje"));
        let p = fixtures().join(arg);
        run_ok(&["-pcp", p.to_str().unwrap(), "-q"], &out);
        traces.push(std::fs::read(&out).unwrap());
    }
    // A glob over a folder with the archive and its ground truth: the
    // archive once, the other files left out.
    let out = d.path().join("glob.paje");
    let g = fixtures().join("pcp/pmlogger_v2/*");
    let err = run_ok(&["-pcp", g.to_str().unwrap()], &out);
    assert!(
        err.contains("file(s) that belong to no archive left out"),
        "{err}"
    );
    assert_eq!(err.matches("pcp     ").count(), 1, "{err}");
    traces.push(std::fs::read(&out).unwrap());
    for t in &traces[1..] {
        assert!(t == &traces[0], "traces differ");
    }
}

/// The thesis' cluster-monitoring combination: Ganglia's recording and
/// pmlogger's archives of the same hosts, one Machine per host holding
/// both tools' metrics.
#[test]
fn ganglia_and_pcp_of_one_host_share_its_machine() {
    let d = tempdir();
    let out = d.path().join("o.paje");
    let g = fixture("ganglia/cluster-example.traced");
    let h = root().join("hierarchies/ganglia+pcp.toml");
    let err = run_ok(
        &[
            "-hierarchy",
            h.to_str().unwrap(),
            "-ganglia",
            g.to_str().unwrap(),
            "-pcp",
            fixture(&format!("{V2}.meta")).to_str().unwrap(),
            fixture("pcp/multihost/node02.0").to_str().unwrap(),
        ],
        &out,
    );
    assert!(
        err.contains("node02.cluster.example: unified with Machine node02"),
        "{err}"
    );
    let vars = variables(&out);
    for host in ["node01.cluster.example", "node02"] {
        let names: Vec<&str> = vars
            .keys()
            .filter(|(_, m)| m == host)
            .map(|(n, _)| n.as_str())
            .collect();
        assert!(
            names
                .iter()
                .any(|n| n.starts_with("kernel.all.load[1 minute]")),
            "{host}: {names:?}"
        );
        assert!(names.contains(&"Load (1 min)"), "{host}: {names:?}");
    }
    // The hierarchy renames and excludes.
    assert!(vars.keys().any(|(n, _)| n == "cpu.user (utilisation)"));
    assert!(!vars.keys().any(|(n, _)| n.starts_with("proc.")));
    if let Some(lines) = pj_dump_lines(&out) {
        let machines = lines
            .iter()
            .filter(|l| l.starts_with("Container, cluster, Machine"))
            .count();
        assert_eq!(machines, 3, "node01, node02, node03: one Machine each");
    }
}

/// `[pcp] pmcd = true` keeps pmlogger's own metrics; `include` narrows.
#[test]
fn the_hierarchy_keeps_pmcd_metrics_and_selects() {
    let d = tempdir();
    let h = d.path().join("h.toml");
    std::fs::write(
        &h,
        "[[container]]\nname = \"Machine\"\nrole = \"machine\"\n[pcp]\npmcd = true\ninclude = [\"pmcd.*\", \"mem.*\"]\n",
    )
    .unwrap();
    let out = d.path().join("o.paje");
    run_ok(
        &[
            "-hierarchy",
            h.to_str().unwrap(),
            "-pcp",
            fixture(&format!("{V2}.0")).to_str().unwrap(),
        ],
        &out,
    );
    let names: Vec<String> = variables(&out).into_keys().map(|(n, _)| n).collect();
    assert!(names.contains(&"pmcd.pid".to_string()), "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("pmcd.") || n.starts_with("mem.")),
        "{names:?}"
    );
}
