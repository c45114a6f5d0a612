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
    same_as_one_machine(single, dataset, name);
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
    // A plan needs a file, writes no sync file, and is not a window.
    let o = with(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--output"), "{}", stderr(&o));
    let ws = tmp.path().join("w.sync");
    one_line(
        &with(&["--write-sync", ws.to_str().unwrap(), "-o", p]),
        2,
        "not a plan's",
    );
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

/// A grid of `hosts` hosts made from the shipped examples: each host a
/// PCP archive (the example's, its host renamed in its three labels) and
/// a Ganglia recording of 16 metrics a second for a minute; beside them
/// the example's MPE log and libRastro run. Returns the run's arguments.
fn generated_grid(dir: &Path, hosts: usize) -> Vec<String> {
    let ex = root().join("examples");
    let (pcp, ganglia) = (dir.join("pcp"), dir.join("ganglia"));
    std::fs::create_dir_all(&pcp).unwrap();
    std::fs::create_dir_all(&ganglia).unwrap();
    let metrics = [
        "cpu_user",
        "cpu_system",
        "cpu_idle",
        "cpu_wio",
        "load_one",
        "load_five",
        "load_fifteen",
        "mem_free",
        "mem_cached",
        "bytes_in",
        "bytes_out",
        "pkts_in",
        "pkts_out",
        "proc_run",
        "proc_total",
        "disk_free",
    ];
    for h in 0..hosts {
        let host = format!("host{h:03}");
        for ext in ["meta", "0", "index"] {
            let mut b = std::fs::read(ex.join(format!("pingpong-localhost/pcp/vm.{ext}"))).unwrap();
            // A v2 label's host name: 64 bytes at offset 24.
            b[24..88].fill(0);
            b[24..24 + host.len()].copy_from_slice(host.as_bytes());
            std::fs::write(pcp.join(format!("{host}.{ext}")), b).unwrap();
        }
        let mut text = format!("# collector {host}\n# cluster grid\n");
        let mut v: u64 = h as u64 + 1;
        for t in 0..60 {
            for m in metrics {
                v = (v * 1_103_515_245 + 12_345) % 2_147_483_648;
                let x = v as f64 / 21_474_836.48;
                text.push_str(&format!(
                    "{}.{:03} {m} {host} {x:.2}\n",
                    1_795_265_500 + t,
                    h % 1000
                ));
            }
        }
        std::fs::write(ganglia.join(format!("{host}.traced")), text).unwrap();
    }
    let s = |p: &Path| p.display().to_string();
    let mut args = vec![
        "-hierarchy".to_string(),
        s(&root().join("hierarchies/mpi+os+ganglia+pcp.toml")),
        "-mpi".into(),
        s(&ex.join("pingpong-localhost/mpi_pingpong.clog2")),
        "-mpinodes".into(),
        s(&ex.join("pingpong-localhost/mpi.nodes")),
        "-deck".into(),
        s(&ex.join("deck/threads")) + "/*.rst",
        "-ganglia".into(),
        s(&ganglia) + "/*.traced",
        "-pcp".into(),
        s(&pcp) + "/*",
    ];
    args.shrink_to_fit();
    args
}

#[test]
fn a_generated_grid_of_hundreds_of_hosts_gathers_as_one_machine() {
    if !have_module("duckdb", "INTEGRADOR_REQUIRE_DUCKDB") {
        return;
    }
    let tmp = tempdir();
    let args = generated_grid(&tmp.path().join("in"), 200);
    one_machine(&args, &tmp.path().join("single"));
    // A task a source (402 tasks), two at a time as xargs -P 2 runs them.
    let plan = tmp.path().join("plan.json");
    let mut all: Vec<&str> = vec!["plan"];
    all.extend(args.iter().map(String::as_str));
    all.extend(["-q", "--task-mb", "0", "-o", plan.to_str().unwrap()]);
    let o = integrador(&all);
    assert!(o.status.success(), "plan: {}", stderr(&o));
    let run = tmp.path().join("run");
    // `@K@`, not `K`: xargs replaces it inside the paths too, and a
    // temporary directory's random name may hold a K.
    let line = format!(
        "seq 0 401 | xargs -P 2 -I @K@ '{}' task '{}' @K@ --tables '{}' -q",
        env!("CARGO_BIN_EXE_integrador"),
        plan.display(),
        run.display()
    );
    let o = std::process::Command::new("sh")
        .args(["-c", &line])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "xargs: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = integrador(&[
        "gather",
        plan.to_str().unwrap(),
        run.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "gather: {}", stderr(&o));
    same(
        &tmp.path().join("single"),
        &run.join("dataset"),
        "grid, 402 tasks",
    );
    // Its windows are not read yet: said, not a missing file.
    let w = tmp.path().join("w.paje");
    let dataset = run.join("dataset");
    let o = integrador(&["paje", dataset.to_str().unwrap(), "-o", w.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("gathered from tasks"), "{}", stderr(&o));
    // Sources joined into tasks of 1 MB, through the Spark driver.
    if !have_module("pyspark", "INTEGRADOR_REQUIRE_SPARK") {
        return;
    }
    let dir = tmp.path().join("packed");
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("plan.json");
    let mut all: Vec<&str> = vec!["plan"];
    all.extend(args.iter().map(String::as_str));
    all.extend(["-q", "--task-mb", "1", "-o", plan.to_str().unwrap()]);
    assert!(integrador(&all).status.success());
    spark_gathers_as_one_machine(&plan, &dir.join("run"), &tmp.path().join("single"), "grid");
}

#[test]
fn clocks_from_the_messages_are_the_plans_in_every_task() {
    if !have_module("duckdb", "INTEGRADOR_REQUIRE_DUCKDB") {
        return;
    }
    let tmp = tempdir();
    // A DECK ping-pong between node01 and node02 (node02's clock is
    // estimated from its messages) and a Ganglia recording of both hosts:
    // the Ganglia task has no message, and must apply the plan's estimate.
    // Stamped by node02: every sample is corrected by its estimate.
    let mut text = String::from("# collector node02\n");
    for ms in (0..20).map(|i| i * 1_000) {
        for host in ["node01", "node02"] {
            let t = 1_795_264_893_493i64 + ms;
            text.push_str(&format!(
                "{}.{:03} load_one {host} {}\n",
                t / 1000,
                t % 1000,
                ms / 1000
            ));
        }
    }
    let traced = tmp.path().join("g.traced");
    std::fs::write(&traced, text).unwrap();
    let glob = root().join("tests/data/rastro/deck-pingpong/rastro-*.rst");
    let args: Vec<String> = vec![
        "-deck".into(),
        glob.display().to_string(),
        "-ganglia".into(),
        traced.display().to_string(),
        "--sync-from-messages".into(),
    ];
    let dir = tmp.path().join("run");
    std::fs::create_dir_all(&dir).unwrap();
    one_machine(&args, &tmp.path().join("single"));
    let tasks = spread(&args, &dir, "0");
    assert_eq!(tasks, 2);
    let plan = std::fs::read_to_string(dir.join("plan.json")).unwrap();
    assert!(
        plan.contains("\"node02\""),
        "the plan holds node02's estimate"
    );
    same(
        &tmp.path().join("single"),
        &dir.join("run/dataset"),
        "sync from messages",
    );
}

#[test]
fn a_task_whose_inputs_hold_no_event_is_a_task_like_any_other() {
    if !have_module("duckdb", "INTEGRADOR_REQUIRE_DUCKDB") {
        return;
    }
    let tmp = tempdir();
    // One input of a run may hold no event; as a task of its own, too.
    let empty = tmp.path().join("empty.traced");
    std::fs::write(&empty, "# collector nodeX\n").unwrap();
    let args: Vec<String> = vec![
        "-ganglia".into(),
        root()
            .join("examples/grid/domain-a.traced")
            .display()
            .to_string(),
        empty.display().to_string(),
    ];
    let dir = tmp.path().join("run");
    std::fs::create_dir_all(&dir).unwrap();
    one_machine(&args, &tmp.path().join("single"));
    assert_eq!(spread(&args, &dir, "0"), 2);
    same(
        &tmp.path().join("single"),
        &dir.join("run/dataset"),
        "an empty input",
    );
}

#[test]
fn a_plan_refuses_a_pipe_before_reading_it() {
    let tmp = tempdir();
    let plan = tmp.path().join("plan.json");
    let data = std::fs::read(root().join("examples/grid/domain-a.traced")).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_integrador"))
        .args([
            "plan",
            "-ganglia",
            "/dev/stdin",
            "-o",
            plan.to_str().unwrap(),
        ])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Tasks read their inputs again: a pipe would be gone.
    let mut stdin = child.stdin.take().unwrap();
    let _ = std::io::Write::write_all(&mut stdin, &data);
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("not a pipe") && e.trim().lines().count() == 1,
        "{e}"
    );
    assert!(!plan.exists());
}

/// A task's part damaged (a file cut short, or its bytes overwritten):
/// the gather names the file in one line and leaves no dataset, never a
/// panic; run under 1 GiB of address space (a damaged size is not
/// believed).
#[test]
fn a_damaged_part_is_an_input_error_of_the_gather() {
    let tmp = tempdir();
    let (_, args) = example_runs().swap_remove(0);
    spread(&args, tmp.path(), "64");
    let part = tmp.path().join("run/tasks/0");
    let plan = tmp.path().join("plan.json");
    let run = tmp.path().join("run");
    let dataset = run.join("dataset");
    std::fs::remove_dir_all(&dataset).unwrap();
    for table in ["containers", "types", "inputs", "series", "states_at_end"] {
        let path = part.join(format!("{table}.parquet"));
        let good = std::fs::read(&path).unwrap();
        let cut = good[..good.len() / 2].to_vec();
        let mut flipped = good.clone();
        for i in (8..flipped.len().saturating_sub(8)).step_by(7) {
            flipped[i] ^= 0x5a;
        }
        for (how, bytes) in [("cut short", cut), ("overwritten", flipped)] {
            std::fs::write(&path, &bytes).unwrap();
            let o = std::process::Command::new("bash")
                .arg("-c")
                .arg(r#"ulimit -v 1048576; exec "$@""#)
                .arg("bash")
                .arg(env!("CARGO_BIN_EXE_integrador"))
                .args(["gather", plan.to_str().unwrap(), run.to_str().unwrap()])
                .output()
                .unwrap();
            let e = stderr(&o);
            assert!(!e.contains("panicked"), "{table} {how}: {e}");
            assert_eq!(o.status.code(), Some(1), "{table} {how}: {e}");
            assert!(
                e.contains(&format!("{table}.parquet")),
                "{table} {how}: {e}"
            );
            assert_eq!(e.trim().lines().count(), 1, "{table} {how}: {e}");
            assert!(!dataset.exists(), "{table} {how}: a dataset was left");
        }
        std::fs::write(&path, &good).unwrap();
    }
}
