//! A run spread over tasks (`docs/scale.md`): `integrador plan`, each
//! `integrador task` on its own (in any order, two at a time, one of them
//! twice), `integrador gather`, and the dataset equals the tables of the
//! same inputs integrated on one machine, table by table, in DuckDB
//! (`tests/scale_sql.py`, EXCEPT ALL both ways; the ids are not mapped).

mod common;
use common::*;
use std::path::Path;

/// Plans, runs every task (last first) and gathers `args` under `dir`.
fn spread(args: &[String], dir: &Path) -> usize {
    let plan = dir.join("plan.json");
    let mut all: Vec<&str> = vec!["plan"];
    all.extend(args.iter().map(String::as_str));
    all.extend(["-q", "-o", plan.to_str().unwrap()]);
    let o = integrador(&all);
    assert!(o.status.success(), "plan: {}", stderr(&o));
    let text = std::fs::read_to_string(&plan).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let tasks = v["tasks"]
        .as_array()
        .expect("a top-level tasks array")
        .len();
    let run = dir.join("run");
    let (p, r) = (plan.to_str().unwrap(), run.to_str().unwrap());
    // The last task first, and the first twice: a task run again
    // replaces its part.
    let mut order: Vec<usize> = (0..tasks).rev().collect();
    order.push(0);
    for k in order {
        let k = k.to_string();
        let o = integrador(&["task", p, &k, "--tables", r, "-q"]);
        assert!(o.status.success(), "task {k}: {}", stderr(&o));
    }
    let o = integrador(&["gather", p, r, "-q"]);
    assert!(o.status.success(), "gather: {}", stderr(&o));
    tasks
}

/// The one-machine tables of `args` in `dir`, with reference points
/// every hour only (a task's: the default adds one every 256 Ki rows of
/// the run, which a task cannot know).
fn one_machine(args: &[String], dir: &Path) {
    let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
    all.extend([
        "-q",
        "--tables",
        dir.to_str().unwrap(),
        "--checkpoint-every",
        "3600s",
    ]);
    let o = integrador(&all);
    assert!(o.status.success(), "one machine: {}", stderr(&o));
}

fn same(single: &Path, dataset: &Path, name: &str) {
    let o = std::process::Command::new(python())
        .arg(root().join("tests/scale_sql.py"))
        .arg(single)
        .arg(dataset)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{name}: the dataset differs from the one-machine tables:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_gathered_run_equals_the_run_on_one_machine() {
    if !have_module("duckdb", "INTEGRADOR_REQUIRE_DUCKDB") {
        return;
    }
    let tmp = tempdir();
    let mut runs = example_runs();
    runs.extend(fixture_runs().into_iter().filter(|(n, _)| *n != "readme"));
    for (name, args) in runs {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let tasks = spread(&args, &dir);
        one_machine(&args, &dir.join("single"));
        same(&dir.join("single"), &dir.join("run/dataset"), name);
        eprintln!("{name}: {tasks} tasks, equal");
    }
}
