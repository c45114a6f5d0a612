//! Kernel text traces end to end: the same capture from ftrace and from
//! trace-cmd gives the same trace; its run intervals equal expected.json
//! and the `.os` re-encoding; perf matches its own section; clocks are
//! anchored by the marker or refused when they cannot be; the scenario
//! merges the raw ftrace capture with MPI and Ganglia.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;

const CAP: &str = "sched/pingpong-pipe";

/// Per task (the pid that starts its container's name, `<pid> <comm>`):
/// running intervals (start ns, end ns) from the SetState lines of one of
/// our traces.
fn running(trace: &Path) -> BTreeMap<String, Vec<(i64, i64)>> {
    let o = read_ours(trace);
    let mut open: BTreeMap<&str, Option<i64>> = BTreeMap::new();
    let mut out: BTreeMap<String, Vec<(i64, i64)>> = BTreeMap::new();
    // SetState (7) changes a row; PopState (12) ends it (a task's exit).
    let changes = o.events.iter().filter(|e| e.0 == "7" || e.0 == "12");
    for (id, t, f) in changes.map(|e| (e.0.as_str(), e.1, e.2.as_slice())) {
        let c = o.name(&f[2]);
        let c = c.split(' ').next().unwrap_or(c);
        let slot = open.entry(c).or_default();
        if let Some(s) = slot.take() {
            out.entry(c.to_string()).or_default().push((s, t));
        }
        if id == "7" && o.name(&f[4]) == "running" {
            *slot = Some(t);
        }
    }
    out
}

/// The README scenario's MPI log, its nodes, the raw ftrace capture and
/// the Ganglia recording, as options.
fn scenario(dir: &Path) -> Vec<String> {
    let p = |r: &str| dir.join(r).display().to_string();
    vec![
        "-mpi".into(),
        p("mpi/mpi_pingpong.clog2"),
        "-mpinodes".into(),
        p("mpi.nodes"),
        "-os".into(),
        p("sched/ftrace.txt"),
        "-ganglia".into(),
        p("ganglia/ganglia.traced"),
    ]
}

#[test]
fn ftrace_and_trace_cmd_give_the_same_run_intervals_as_expected() {
    let d = tempdir();
    let h = d.path().join("h.toml");
    std::fs::write(&h, "[[container]]\nname = \"Machine\"\nrole = \"machine\"\n[[container]]\nname = \"Process\"\nparent = \"Machine\"\nrole = \"process\"\n[os]\nhost = \"vm\"\n").unwrap();
    let h = h.to_str().unwrap();
    let mut traces = Vec::new();
    for f in ["ftrace.txt", "trace-cmd-report.txt"] {
        let out = d.path().join(format!("{f}.paje"));
        let err = run_ok(
            &[
                "-hierarchy",
                h,
                "-os",
                fixture(&format!("{CAP}/{f}")).to_str().unwrap(),
            ],
            &out,
        );
        // The two markers' mean offset: their drift (0.16 ppm, 1 µs over
        // 6.4 s) is far below what two markers can tell.
        assert!(err.contains("boot at 1795262171.292100500"), "{err}");
        assert!(err.contains("drift -0.157 ppm not applied"), "{err}");
        traces.push(out);
    }
    // The same bytes: the plugin's state letters decode to the kernel's.
    assert_eq!(
        std::fs::read(&traces[0]).unwrap(),
        std::fs::read(&traces[1]).unwrap()
    );
    if let (Some(a), Some(b)) = (pj_dump_lines(&traces[0]), pj_dump_lines(&traces[1])) {
        let (mut a, mut b) = (a, b);
        a.sort();
        b.sort();
        assert_eq!(a, b);
    }
    let mine = running(&traces[0]);
    let exp = read_json(&fixture(&format!("{CAP}/expected.json")));
    for (pid, w) in exp["ftrace.txt"]["pids"].as_object().unwrap() {
        let iv = &mine[pid];
        assert_eq!(
            iv.len() as u64,
            w["run_intervals"].as_u64().unwrap(),
            "pid {pid}"
        );
        let total: i64 = iv.iter().map(|(s, e)| e / 1000 - s / 1000).sum();
        assert_eq!(total, w["run_time_us"].as_i64().unwrap(), "pid {pid}");
    }
    // The thesis' `.os` re-encoding of the same events: the same running
    // intervals, to the microsecond but for the drift the capture's two
    // markers correct (1 µs over its 6.4 s; the re-encoding used the first
    // marker's offset alone).
    let os_out = d.path().join("os.paje");
    run_ok(
        &[
            "-hierarchy",
            h,
            "-os",
            fixture(&format!("{CAP}/vm.os")).to_str().unwrap(),
        ],
        &os_out,
    );
    let from_os = running(&os_out);
    for pid in exp["ftrace.txt"]["pids"].as_object().unwrap().keys() {
        let us = |v: &Vec<(i64, i64)>| {
            v.iter()
                .map(|(s, e)| (s / 1000, e / 1000))
                .collect::<Vec<_>>()
        };
        let (a, b) = (us(&mine[pid]), us(&from_os[pid]));
        assert_eq!(a.len(), b.len(), "pid {pid}");
        for (x, y) in a.iter().zip(&b) {
            assert!(
                (x.0 - y.0).abs() <= 1 && (x.1 - y.1).abs() <= 1,
                "pid {pid}: {x:?} vs {y:?}"
            );
        }
    }
}

#[test]
fn perf_matches_its_own_section() {
    let d = tempdir();
    let out = d.path().join("perf.paje");
    let exp = read_json(&fixture(&format!("{CAP}/expected.json")));
    // perf carries no marker: its offset comes from the option.
    let off = exp["perf_clock"]["perf_to_epoch_offset_us"]
        .as_i64()
        .unwrap();
    let epoch = format!("{}.{:06}", off / 1_000_000, off % 1_000_000);
    let err = run_ok(
        &[
            "-os",
            fixture(&format!("{CAP}/perf-script.txt")).to_str().unwrap(),
            "--boot-epoch",
            &epoch,
        ],
        &out,
    );
    assert!(err.contains("placed by the boot epoch"), "{err}");
    let mine = running(&out);
    for (pid, w) in exp["perf-script.txt"]["pids"].as_object().unwrap() {
        let iv = &mine[pid];
        assert_eq!(
            iv.len() as u64,
            w["run_intervals"].as_u64().unwrap(),
            "pid {pid}"
        );
        let total: i64 = iv.iter().map(|(s, e)| e / 1000 - s / 1000).sum();
        assert_eq!(total, w["run_time_us"].as_i64().unwrap(), "pid {pid}");
    }
}

#[test]
fn a_boot_relative_trace_is_not_merged_with_wall_clock_data_without_an_anchor() {
    let d = tempdir();
    let out = d.path().join("x.paje");
    let g = d.path().join("g.traced");
    std::fs::write(&g, "1795264911 cpu_user vm 1.5\n").unwrap();
    let perf = fixture(&format!("{CAP}/perf-script.txt"));
    let o = integrador(&[
        "-os",
        perf.to_str().unwrap(),
        "-ganglia",
        g.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("counts from boot") && err.contains("--boot-epoch"),
        "{err}"
    );
    assert!(!out.exists());
    // Alone, it is written with times since boot.
    run_ok(&["-os", perf.to_str().unwrap()], &out);
}

/// The scenario from its raw ftrace capture (not the `.os` file): each
/// MPI rank's Process holds its MPI state row and its kernel row.
#[test]
fn the_scenario_merges_the_raw_ftrace_capture_with_mpi_and_ganglia() {
    let dir = fixture("scenarios/pingpong-localhost");
    let d = tempdir();
    let h = d.path().join("h.toml");
    let base = std::fs::read_to_string(root().join("hierarchies/mpi+os+ganglia+pcp.toml")).unwrap();
    std::fs::write(&h, base.replace("[os]\n", "[os]\nhost = \"vm\"\n")).unwrap();
    let out = d.path().join("s.paje");
    let mut args = vec!["-hierarchy".to_string(), h.to_str().unwrap().to_string()];
    args.extend(scenario(&dir));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = run_ok(&args, &out);
    assert!(err.contains("marker"), "{err}");
    let Some(lines) = pj_dump_lines(&out) else {
        return;
    };
    for rank in ["12628 rank 0", "12629 rank 1"] {
        let rows: std::collections::BTreeSet<&str> = lines
            .iter()
            .filter(|l| l.starts_with("State, ") && l.split(", ").nth(1) == Some(rank))
            .filter_map(|l| l.split(", ").nth(2))
            .collect();
        assert!(
            rows.contains("MPI state") && rows.contains("OS state"),
            "{rank}: {rows:?}"
        );
    }
}

/// With the TGID column, threads are Threads of their process's Process,
/// named by their latest comm; each worker runs only around its own life
/// as the workload printed it, and its row ends at its exit.
#[test]
fn threads_are_grouped_under_their_process_and_end_at_exit() {
    let d = tempdir();
    let out = d.path().join("t.paje");
    let dir = fixture("sched/tgid-contend3");
    let err = run_ok(
        &[
            "-os",
            dir.join("ftrace.txt").to_str().unwrap(),
            "--os-host",
            "vm",
        ],
        &out,
    );
    assert!(err.contains("host vm (--os-host)"), "{err}");
    assert!(err.contains("2 integrador_epoch= markers over"), "{err}");
    assert!(!err.contains("no thread-group ids"), "{err}");
    let exp = read_json(&dir.join("expected.json"));
    let o = read_ours(&out);
    let pid = exp["process"]["pid"].as_i64().unwrap();
    let process = format!("{pid} contend3");
    // Containers: name → parent name.
    let parent: BTreeMap<&str, &str> = o
        .of("4")
        .map(|(_, f)| (f[4].as_str(), o.name(&f[3])))
        .collect();
    assert_eq!(parent.get(process.as_str()), Some(&"vm"));
    let mine = running(&out);
    // The workload read its clock after its thread started and before it
    // exited: the kernel sees it run a little around those readings.
    let slack = 200_000;
    for (tid, w) in exp["process"]["threads"].as_object().unwrap() {
        let name = format!("{tid} {}", w["name"].as_str().unwrap());
        assert_eq!(parent.get(name.as_str()), Some(&process.as_str()), "{name}");
        let start = (w["start"].as_f64().unwrap() * 1e6) as i64 * 1000;
        let end = (w["end"].as_f64().unwrap() * 1e6) as i64 * 1000;
        let iv = &mine[tid.as_str()];
        assert!(!iv.is_empty(), "{name}");
        for &(s, e) in iv {
            assert!(
                s >= start - slack && e <= end + slack,
                "{name}: ran {s}..{e}, lived {start}..{end}"
            );
        }
        // Nothing after its last switch: the row ended there.
        let last = o
            .events
            .iter()
            .rfind(|e| (e.0 == "7" || e.0 == "12") && o.name(&e.2[2]) == name)
            .unwrap();
        assert_eq!(last.0, "12", "{name}: its row ends with its exit");
        // It named itself after it started: the rename is an event on it.
        let renamed = format!("comm {}", w["name"].as_str().unwrap());
        assert!(
            o.of("8")
                .any(|(_, f)| o.name(&f[2]) == name && f[3] == renamed),
            "{name}: no `{renamed}` event"
        );
    }
    assert_valid(&out);
}

/// The README's scenario from its raw ftrace, with MPI, Ganglia and PCP
/// and no hierarchy naming the machine: one Machine `vm`, taken from the
/// other sources.
#[test]
fn a_trace_that_names_no_machine_takes_the_one_the_others_name() {
    let dir = fixture("scenarios/pingpong-localhost");
    let d = tempdir();
    let out = d.path().join("s.paje");
    let mut args = scenario(&dir);
    args.extend(["-pcp".to_string(), dir.join("pcp/vm").display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = run_ok(&args, &out);
    assert!(
        err.contains("host vm (the one machine the other sources name)"),
        "{err}"
    );
    let o = read_ours(&out);
    let machines: Vec<&str> = o
        .of("4")
        .filter(|(_, f)| o.name(&f[2]) == "Machine")
        .map(|(_, f)| f[4].as_str())
        .collect();
    assert_eq!(machines, ["vm"]);
    // No task is left in a state after its exit: every task with an exit
    // event ends its row with a pop.
    let exits: Vec<&str> = o
        .of("8")
        // PajeNewEvent: container, value (by name), type.
        .filter(|(_, f)| f[3] == "exit")
        .map(|(_, f)| o.name(&f[2]))
        .collect();
    assert!(exits.len() > 10, "{} exits", exits.len());
    for task in exits {
        let last = o
            .events
            .iter()
            .rfind(|e| (e.0 == "7" || e.0 == "12") && o.name(&e.2[2]) == task);
        if let Some(last) = last {
            assert_eq!(last.0, "12", "{task} has a state after its exit");
        }
    }
    assert_valid(&out);
}

/// trace.dat, read natively (v7 with zstd sections and v6), gives the run
/// intervals of `trace-cmd report` on the same capture: the report prints
/// microseconds (rounded), the file holds nanoseconds.
#[test]
fn trace_dat_gives_what_trace_cmd_report_gives() {
    let d = tempdir();
    let mut per = Vec::new();
    for f in ["trace.dat", "trace-v6.dat", "trace-cmd-report.txt"] {
        let out = d.path().join(format!("{f}.paje"));
        let err = run_ok(
            &[
                "-os",
                fixture(&format!("{CAP}/{f}")).to_str().unwrap(),
                "--os-host",
                "vm",
            ],
            &out,
        );
        assert!(err.contains("boot at 1795262171.29"), "{f}: {err}");
        if f.ends_with(".dat") {
            assert!(err.contains("trace.dat v"), "{f}: {err}");
        }
        assert_valid(&out);
        per.push(running(&out));
    }
    let us = |m: &BTreeMap<String, Vec<(i64, i64)>>| -> BTreeMap<String, Vec<(i64, i64)>> {
        m.iter()
            .map(|(k, v)| {
                let r = |t: i64| (t + 500).div_euclid(1000);
                (k.clone(), v.iter().map(|&(s, e)| (r(s), r(e))).collect())
            })
            .collect()
    };
    assert_eq!(per[0], per[1], "v7 and v6 of one capture");
    // The same intervals, to the microsecond the report kept (the drift
    // correction of its rounded times may land 1 µs apart).
    let (dat, text) = (us(&per[0]), us(&per[2]));
    assert_eq!(
        dat.keys().collect::<Vec<_>>(),
        text.keys().collect::<Vec<_>>()
    );
    for (task, a) in &dat {
        let b = &text[task];
        assert_eq!(a.len(), b.len(), "{task}");
        for (x, y) in a.iter().zip(b) {
            assert!(
                (x.0 - y.0).abs() <= 1 && (x.1 - y.1).abs() <= 1,
                "{task}: {x:?} vs {y:?}"
            );
        }
    }
    assert!(per[0].len() > 20);
}

/// The pingpong capture with its two markers replaced by `markers`
/// (trace seconds, epoch µs), each put where its time falls.
fn with_markers(markers: &[(f64, i64)], out: &Path) {
    let text = std::fs::read_to_string(fixture(&format!("{CAP}/ftrace.txt"))).unwrap();
    let time = |l: &str| {
        l.split_whitespace()
            .find_map(|w| w.strip_suffix(':').and_then(|t| t.parse::<f64>().ok()))
    };
    let mut lines: Vec<(f64, String)> = Vec::new();
    let mut head = String::new();
    for l in text.lines().filter(|l| !l.contains("integrador_epoch=")) {
        match time(l) {
            Some(t) if !l.starts_with('#') => lines.push((t, l.to_string())),
            _ => head.push_str(&format!("{l}\n")),
        }
    }
    for &(t, epoch) in markers {
        lines.push((
            t,
            format!(
                "    epoch_marker-32147   [001] ...1.  {t:.6}: tracing_mark_write: integrador_epoch={}.{:06}",
                epoch.div_euclid(1_000_000),
                epoch.rem_euclid(1_000_000)
            ),
        ));
    }
    lines.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (_, l) in lines {
        head.push_str(&l);
        head.push('\n');
    }
    std::fs::write(out, head).unwrap();
}

/// Markers as the issue found them and as a long capture gives them: a
/// drift from markers is applied only when it moves the clock across them
/// by more than their uncertainty, and the summary says which and why.
#[test]
fn a_drift_smaller_than_the_markers_uncertainty_is_not_applied() {
    let d = tempdir();
    let e0 = 1_795_264_911_000_000i64;
    // (name, markers, applied?)
    type Case = (&'static str, Vec<(f64, i64)>, bool);
    let mut cases: Vec<Case> = vec![
        // Two markers 3.6 s apart, +27.241 ppm: 98 µs, under their 1 ms.
        ("3.6 s", vec![(2740.1, e0), (2743.7, e0 + 3_600_098)], false),
        // Two markers 100 s apart, +50 ppm: 5 ms, above.
        (
            "100 s",
            vec![(2740.1, e0), (2840.1, e0 + 100_005_000)],
            true,
        ),
    ];
    // Forty markers every 0.5 s, scattered by up to 300 µs (as `date`
    // and the marker's write are apart): 200 ppm over 20 s moves the
    // clock 4 ms and is corrected; 20 ppm (0.4 ms) is not.
    for (ppm, applied) in [(200i64, true), (20, false)] {
        let pts = (0..40)
            .map(|i| {
                let t = 2740.0 + 0.5 * f64::from(i);
                let scatter = [0, 300, -250, 120, -300, 60, 200, -150][i as usize % 8];
                let x = i64::from(i) * 500_000;
                (t, e0 + x + x * ppm / 1_000_000 + scatter)
            })
            .collect();
        cases.push((
            if applied {
                "40 markers, 200 ppm"
            } else {
                "40 markers, 20 ppm"
            },
            pts,
            applied,
        ));
    }
    for (name, markers, applied) in cases {
        let trace = d.path().join("m.txt");
        with_markers(&markers, &trace);
        let out = d.path().join("m.paje");
        let s = run_ok(&["-os", trace.to_str().unwrap(), "--os-host", "vm"], &out);
        let line = s
            .lines()
            .find(|l| l.contains("integrador_epoch= markers over"))
            .unwrap_or_else(|| panic!("{name}: {s}"));
        eprintln!("{name}: {line}");
        assert!(
            line.contains(&format!("its {} integrador_epoch= markers", markers.len())),
            "{line}"
        );
        if applied {
            assert!(line.contains("ppm corrected"), "{name}: {line}");
        } else {
            assert!(
                line.contains("ppm not applied: it moves the clock"),
                "{name}: {line}"
            );
            assert!(
                line.contains("less than the markers' uncertainty"),
                "{name}: {line}"
            );
        }
    }
}
