//! A run spread over tasks (`docs/scale.md`): `integrador plan`, each
//! `integrador task` on its own (in any order, two at a time, one of them
//! twice), `integrador gather`, and the dataset equals the tables of the
//! same inputs integrated on one machine, table by table, in DuckDB
//! (`tests/scale_sql.py`, EXCEPT ALL both ways; the ids are not mapped).

mod common;
use common::*;
use std::path::Path;

/// Plans (`--task-mb mb`), runs every task (last first) and gathers
/// `args` under `dir`.
fn spread(args: &[String], dir: &Path, mb: &str) -> usize {
    let plan = dir.join("plan.json");
    let mut all: Vec<&str> = vec!["plan"];
    all.extend(args.iter().map(String::as_str));
    all.extend(["-q", "--task-mb", mb, "-o", plan.to_str().unwrap()]);
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
        one_machine(&args, &dir.join("single"));
        // A task a source, and sources joined into tasks of 1 MB.
        for mb in ["0", "1"] {
            let d = dir.join(mb);
            std::fs::create_dir_all(&d).unwrap();
            let tasks = spread(&args, &d, mb);
            same(&dir.join("single"), &d.join("run/dataset"), name);
            eprintln!("{name}: {tasks} tasks of at least {mb} MB, equal");
        }
    }
}

#[test]
fn plan_task_and_gather_mistakes_are_one_line_errors() {
    let tmp = tempdir();
    let (_, args) = example_runs().swap_remove(0);
    let plan = tmp.path().join("plan.json");
    let (p, run) = (plan.to_str().unwrap(), tmp.path().join("run"));
    let r = run.to_str().unwrap();
    let with = |extra: &[&str]| {
        let mut all: Vec<&str> = vec!["plan"];
        all.extend(args.iter().map(String::as_str));
        all.extend(extra);
        integrador(&all)
    };
    let one_line = |o: &std::process::Output, code: i32, what: &str| {
        let e = stderr(o);
        assert_eq!(o.status.code(), Some(code), "{what}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{what}: {e}");
        assert!(e.contains(what), "{what}: {e}");
    };
    // A plan needs a file, takes its clocks from a sync file, and is not
    // a window.
    let o = with(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--output"), "{}", stderr(&o));
    one_line(&with(&["--sync-from-messages", "-o", p]), 2, "sync file");
    one_line(&with(&["--from", "+1s", "-o", p]), 2, "not a plan's");
    // An input missing fails the plan before any task.
    let o = integrador(&["plan", "-pcp", "/nonexistent/archive", "-o", p]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!plan.exists(), "a failed plan leaves no plan");
    let o = with(&["-q", "-o", p]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A task that is not in the plan, a gather before the tasks.
    one_line(&integrador(&["task", p, "99", "--tables", r]), 2, "not 99");
    one_line(&integrador(&["gather", p, r]), 2, "task 0 has not run");
    // A plan that is not one, or of another version.
    let bad = tmp.path().join("bad.json");
    std::fs::write(&bad, "{\"format\": \"integrador-plan\", \"tasks\": [").unwrap();
    let b = bad.to_str().unwrap();
    one_line(
        &integrador(&["task", b, "0", "--tables", r]),
        1,
        "not a plan",
    );
    let text = std::fs::read_to_string(&plan).unwrap();
    let other = text.replacen("\"tool_version\": \"", "\"tool_version\": \"0.0.0-", 1);
    std::fs::write(&bad, other).unwrap();
    one_line(
        &integrador(&["task", b, "0", "--tables", r]),
        1,
        "make the plan again",
    );
    // An input replaced since the plan: the task names it.
    let moved = text.replace("mpi_pingpong.clog2\"", "mpi_pingpong.clog2x\"");
    std::fs::write(&bad, moved).unwrap();
    let o = integrador(&["task", b, "0", "--tables", r]);
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        !run.join("tasks/0").exists(),
        "a failed task leaves no part"
    );
}

#[test]
fn two_tasks_that_set_one_series_are_refused_by_the_gather() {
    let tmp = tempdir();
    let vm = root().join("examples/pingpong-localhost/pcp");
    // Two archives of one host: a run on one machine keeps the second's
    // series apart, which needs the whole run.
    for d in ["a", "b"] {
        let dir = tmp.path().join(d);
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["vm.0", "vm.meta", "vm.index"] {
            std::fs::copy(vm.join(f), dir.join(f)).unwrap();
        }
    }
    let args: Vec<String> = vec![
        "-pcp".into(),
        tmp.path().join("a/vm").display().to_string(),
        tmp.path().join("b/vm").display().to_string(),
    ];
    let plan = tmp.path().join("plan.json");
    let mut all: Vec<&str> = vec!["plan"];
    all.extend(args.iter().map(String::as_str));
    all.extend(["-q", "--task-mb", "0", "-o", plan.to_str().unwrap()]);
    assert!(integrador(&all).status.success());
    let (p, r) = (plan.to_str().unwrap(), tmp.path().join("run"));
    for k in ["0", "1"] {
        let o = integrador(&["task", p, k, "--tables", r.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = integrador(&["gather", p, r.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("a/vm") && e.contains("b/vm") && e.contains("same series"),
        "{e}"
    );
    assert!(
        !r.join("dataset").exists(),
        "a refused gather leaves no dataset"
    );
}
