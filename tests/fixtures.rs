//! Every `.traced` and `.os` fixture integrates into a trace that pj_dump
//! accepts, with as many variable samples and state changes as the
//! fixtures' ground truth says.

mod common;
use common::*;
use std::path::Path;

fn run_ok(args: &[&str]) {
    let o = integrador(args);
    assert!(
        o.status.success(),
        "integrador {args:?} failed: {}",
        stderr(&o)
    );
}

/// pj_dump lines of one kind (`Variable`, `State`, `Container`).
fn dump_count(lines: &[String], kind: &str) -> usize {
    lines
        .iter()
        .filter(|l| l.split(',').next() == Some(kind))
        .count()
}

/// Samples of the constant inventory metrics the shipped Ganglia
/// hierarchies leave out (`exclude` in their `[ganglia]` section).
fn inventory_samples(traced: &Path) -> usize {
    inventory_samples_of(traced, None)
}

/// [`inventory_samples`] of one host.
fn inventory_samples_of(traced: &Path, host: Option<&str>) -> usize {
    const INVENTORY: [&str; 6] = [
        "boottime",
        "cpu_num",
        "cpu_speed",
        "mem_total",
        "swap_total",
        "disk_total",
    ];
    std::fs::read_to_string(traced)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.get(1).is_some_and(|m| INVENTORY.contains(m)))
        .filter(|w| host.is_none_or(|h| w.get(2) == Some(&h)))
        .count()
}

fn check_counts(trace: &Path, variables: usize, states: usize) {
    assert_valid(trace);
    assert_eq!(
        count_events(trace, "PajeSetVariable"),
        variables,
        "SetVariable lines of {}",
        trace.display()
    );
    assert_eq!(
        count_events(trace, "PajeSetState"),
        states,
        "SetState lines of {}",
        trace.display()
    );
    if let Some(lines) = pj_dump_lines(trace) {
        assert_eq!(
            dump_count(&lines, "Variable"),
            variables,
            "pj_dump Variable lines of {}",
            trace.display()
        );
        assert_eq!(
            dump_count(&lines, "State"),
            states,
            "pj_dump State lines of {}",
            trace.display()
        );
    }
}

#[test]
fn ganglia_cluster_example() {
    let truth = read_json(&fixture("ganglia/cluster-example.expected.json"));
    let d = tempdir();
    let out = d.path().join("g.paje");
    run_ok(&[
        "-q",
        "-ganglia",
        fixture("ganglia/cluster-example.traced").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    check_counts(&out, truth["data_lines"].as_u64().unwrap() as usize, 0);
    // Per host and metric, as many samples as the recording has.
    if let Some(lines) = pj_dump_lines(&out) {
        for (host, metrics) in truth["per_host_metric"].as_object().unwrap() {
            for (metric, facts) in metrics.as_object().unwrap() {
                let n = lines
                    .iter()
                    .filter(|l| l.starts_with(&format!("Variable, {host}, {metric}, ")))
                    .count();
                assert_eq!(
                    n as u64,
                    facts["count"].as_u64().unwrap(),
                    "{host} {metric}"
                );
            }
        }
    }
}

#[test]
fn grid_domains_alone() {
    // 351 + 195 and 135 + 195 samples (grid/README.md).
    for (file, n) in [("grid/domain-a.traced", 546), ("grid/domain-b.traced", 330)] {
        let d = tempdir();
        let out = d.path().join("g.paje");
        run_ok(&[
            "-q",
            "-ganglia",
            fixture(file).to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        check_counts(&out, n, 0);
    }
}

fn os_state_changes(per_pid: &serde_json::Value) -> usize {
    per_pid
        .as_object()
        .unwrap()
        .values()
        .map(|v| (v["unblock"].as_u64().unwrap() + v["block"].as_u64().unwrap()) as usize)
        .sum()
}

#[test]
fn sched_vm_os() {
    let truth = read_json(&fixture("sched/pingpong-pipe/expected.json"));
    let d = tempdir();
    let out = d.path().join("os.paje");
    run_ok(&[
        "-q",
        "-os",
        fixture("sched/pingpong-pipe/vm.os").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    check_counts(&out, 0, os_state_changes(&truth["vm.os"]["per_pid"]));
    if let Some(lines) = pj_dump_lines(&out) {
        // Six processes, each alternating running and blocked.
        for (pid, facts) in truth["vm.os"]["per_pid"].as_object().unwrap() {
            let running = lines
                .iter()
                .filter(|l| {
                    l.starts_with(&format!("State, {pid}, OS state,")) && l.ends_with(", running")
                })
                .count();
            assert_eq!(
                running as u64,
                facts["unblock"].as_u64().unwrap(),
                "pid {pid}"
            );
        }
    }
}

#[test]
fn unify_node01_os() {
    let d = tempdir();
    let out = d.path().join("os.paje");
    run_ok(&[
        "-q",
        "-os",
        fixture("unify/node01.os").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    check_counts(&out, 0, 2514);
}

#[test]
fn scenario_pingpong_localhost() {
    let truth = read_json(&fixture("scenarios/pingpong-localhost/expected.json"));
    let d = tempdir();
    let out = d.path().join("scenario.paje");
    let ganglia = fixture("scenarios/pingpong-localhost/ganglia/ganglia.traced");
    let os = fixture("scenarios/pingpong-localhost/sched/vm.os");
    let hierarchy = root().join("hierarchies/ganglia+os.toml");
    run_ok(&[
        "-q",
        "-hierarchy",
        hierarchy.to_str().unwrap(),
        "-ganglia",
        ganglia.to_str().unwrap(),
        "-os",
        os.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let samples = truth["ganglia"]["traced_lines"].as_u64().unwrap() as usize;
    check_counts(
        &out,
        samples - inventory_samples(&ganglia),
        os_state_changes(&truth["os_file"]["per_pid"]),
    );
    if let Some(lines) = pj_dump_lines(&out) {
        // One Machine `vm` with the two ranks, each with its helper thread.
        let machines: Vec<&String> = lines
            .iter()
            .filter(|l| l.starts_with("Container, ") && l.contains(", Machine, "))
            .collect();
        assert_eq!(machines.len(), 1, "{machines:?}");
        assert!(machines[0].ends_with(", vm"));
        for rank in &truth["mpi"]["ranks"].as_array().unwrap()[..] {
            let pid = rank["pid"].as_u64().unwrap();
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with("Container, vm, Process, ")
                        && l.ends_with(&format!(", {pid}"))),
                "process {pid}"
            );
            let tid = rank["tids"][1].as_u64().unwrap();
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with(&format!("Container, {pid}, Thread, "))
                        && l.ends_with(&format!(", {tid}"))),
                "thread {tid}"
            );
        }
    }
}

#[test]
fn short_and_qualified_names_give_one_machine() {
    // unify/README.md: node01.os (host node01) and the Ganglia recording
    // (node01.cluster.example) describe one machine.
    let d = tempdir();
    let out = d.path().join("u.paje");
    run_ok(&[
        "-q",
        "-os",
        fixture("unify/node01.os").to_str().unwrap(),
        "-ganglia",
        fixture("ganglia/cluster-example.traced").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    check_counts(&out, 681, 2514);
    if let Some(lines) = pj_dump_lines(&out) {
        let machines: Vec<&String> = lines.iter().filter(|l| l.contains(", Machine, ")).collect();
        assert_eq!(machines.len(), 3, "node01, node02, node03: {machines:?}");
        let node01: Vec<&&String> = machines.iter().filter(|l| l.contains("node01")).collect();
        assert_eq!(node01.len(), 1, "{node01:?}");
        let name = node01[0].rsplit(", ").next().unwrap();
        // Its processes and its metrics are under the same container.
        assert!(lines
            .iter()
            .any(|l| l.starts_with(&format!("Container, {name}, Process, "))));
        assert!(lines
            .iter()
            .any(|l| l.starts_with(&format!("Variable, {name}, cpu_user, "))));
    }
}

#[test]
fn grid_gives_two_clusters_under_one_grid() {
    let d = tempdir();
    let out = d.path().join("grid.paje");
    run_ok(&[
        "-q",
        "-hierarchy",
        root().join("hierarchies/grid.toml").to_str().unwrap(),
        "-ganglia",
        fixture("grid/domain-a.traced").to_str().unwrap(),
        fixture("grid/domain-b.traced").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let left_out = inventory_samples(&fixture("grid/domain-a.traced"))
        + inventory_samples(&fixture("grid/domain-b.traced"));
    check_counts(&out, 546 + 330 - left_out, 0);
    let Some(lines) = pj_dump_lines(&out) else {
        return;
    };
    let grids: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("Container, 0, Grid, "))
        .collect();
    assert_eq!(grids.len(), 1);
    let clusters: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("Container, grid, Cluster, "))
        .collect();
    assert_eq!(clusters.len(), 2, "{clusters:?}");
    for (cluster, hosts) in [
        (
            "cluster.example",
            [
                ("node01.cluster.example", 351),
                ("node02.cluster.example", 195),
            ],
        ),
        (
            "lsc.example",
            [("athlon01.lsc.example", 135), ("athlon02.lsc.example", 195)],
        ),
    ] {
        for (host, samples) in hosts {
            assert!(
                lines.iter().any(
                    |l| l.starts_with(&format!("Container, {cluster}, Machine, "))
                        && l.ends_with(&format!(", {host}"))
                ),
                "{host} under {cluster}"
            );
            let n = lines
                .iter()
                .filter(|l| l.starts_with(&format!("Variable, {host}, ")))
                .count();
            let left_out: usize = ["grid/domain-a.traced", "grid/domain-b.traced"]
                .iter()
                .map(|f| inventory_samples_of(&fixture(f), Some(host)))
                .sum();
            assert_eq!(n, samples - left_out, "{host}");
        }
    }
}

#[test]
fn same_inputs_give_the_same_bytes() {
    let d = tempdir();
    let (a, b) = (d.path().join("a.paje"), d.path().join("b.paje"));
    for out in [&a, &b] {
        run_ok(&[
            "-q",
            "-os",
            fixture("unify/node01.os").to_str().unwrap(),
            fixture("scenarios/pingpong-localhost/sched/vm.os")
                .to_str()
                .unwrap(),
            "-ganglia",
            fixture("ganglia/cluster-example.traced").to_str().unwrap(),
            fixture("grid/domain-b.traced").to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
    }
    let (x, y) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert!(x.len() > 10_000);
    assert!(x == y, "two runs differ");
    assert_valid(&a);
}

#[test]
fn every_shipped_hierarchy_loads_and_ganglia_toml_renames_metrics() {
    for entry in std::fs::read_dir(root().join("hierarchies")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "toml") {
            let h = integrador::hierarchy::Hierarchy::load(&p).unwrap_or_else(|e| panic!("{e}"));
            // The sources' sections too, each read by its kind.
            integrador::convert::configure(&mut integrador::convert::kinds(), &h)
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let d = tempdir();
    let out = d.path().join("g.paje");
    run_ok(&[
        "-q",
        "-hierarchy",
        root().join("hierarchies/ganglia.toml").to_str().unwrap(),
        "-ganglia",
        fixture("ganglia/cluster-example.traced").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let left_out = inventory_samples(&fixture("ganglia/cluster-example.traced"));
    check_counts(&out, 681 - left_out, 0);
    if let Some(lines) = pj_dump_lines(&out) {
        // A quoted name with spaces and parentheses survives PajeNG's reader.
        let n = lines
            .iter()
            .filter(|l| l.starts_with("Variable, node02.cluster.example, CPU user (%), "))
            .count();
        assert_eq!(n, 13);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("Container, 0, Cluster, ")),
            "Cluster is the top level"
        );
    }
}
