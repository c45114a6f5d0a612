//! The entity tables read by the real readers: pyarrow (schemas,
//! metadata, counts), DuckDB (the six questions of docs/tables.md and the
//! pj_dump-shaped view, each answer checked against the same answer
//! computed from pj_dump's dump of the run's trace) and Spark (the same
//! answers as DuckDB). `tests/tables_sql.py` does the work; a Python with
//! the modules is `$INTEGRADOR_PYTHON` or `python3`. Under
//! INTEGRADOR_REQUIRE_DUCKDB=1 (and INTEGRADOR_REQUIRE_SPARK=1) a missing
//! reader fails the test; elsewhere it is skipped loudly.

mod common;
use common::*;
use std::process::Command;

fn have(module: &str, require: &str) -> bool {
    have_module(module, require)
}

#[test]
fn duckdb_and_spark_answer_as_pj_dump() {
    let duck =
        have("duckdb", "INTEGRADOR_REQUIRE_DUCKDB") && have("pyarrow", "INTEGRADOR_REQUIRE_DUCKDB");
    if !duck || !have_pj_dump() {
        return;
    }
    let spark = have("pyspark", "INTEGRADOR_REQUIRE_SPARK");
    let tmp = tempdir();
    let ex = |p: &str| {
        root()
            .join("examples/pingpong-localhost")
            .join(p)
            .display()
            .to_string()
    };
    let (trace, tables) = (tmp.path().join("t.paje"), tmp.path().join("tables"));
    let hierarchy = root().join("hierarchies/mpi+os+ganglia+pcp.toml");
    let args = [
        "-q".to_string(),
        "-hierarchy".into(),
        hierarchy.display().to_string(),
        "-mpi".into(),
        ex("mpi_pingpong.clog2"),
        "-mpinodes".into(),
        ex("mpi.nodes"),
        "-ganglia".into(),
        ex("ganglia.traced"),
        "-os".into(),
        ex("vm.os"),
        "-pcp".into(),
        ex("pcp/vm"),
        "-o".into(),
        trace.display().to_string(),
        "--tables".into(),
        tables.display().to_string(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = integrador(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let dump = tmp.path().join("t.dump");
    let lines = pj_dump_lines(&trace).expect("pj_dump");
    std::fs::write(&dump, lines.join("\n") + "\n").unwrap();
    let mut cmd = Command::new(python());
    cmd.arg(root().join("tests/tables_sql.py"))
        .arg(&tables)
        .arg(&dump)
        .arg(root().join("docs/sql"));
    if spark {
        cmd.arg("--spark");
        cmd.arg("--spark-dataset")
            .arg(spread_by_spark(&args, tmp.path(), &tables));
    }
    let o = cmd.output().expect("python runs");
    let out = String::from_utf8_lossy(&o.stdout);
    eprintln!("{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}");
    assert!(out.contains("duckdb: the six questions"), "{out}");
    assert!(!spark || out.contains("spark: the six questions"), "{out}");
    assert!(
        !spark || out.contains("spark on the gathered dataset"),
        "{out}"
    );
}

/// The run of `args` planned, its tasks run on Spark executors and
/// gathered in Spark SQL (`scale/spark/integrate.py`, `local[2]`); the
/// dataset must equal the one-machine `tables` (`tests/scale_sql.py`).
fn spread_by_spark(
    args: &[&str],
    tmp: &std::path::Path,
    tables: &std::path::Path,
) -> std::path::PathBuf {
    let plan = tmp.join("plan.json");
    let run = tmp.join("run");
    let mut all = vec!["plan"];
    let mut it = args.iter();
    while let Some(&a) = it.next() {
        match a {
            "-o" | "--tables" => {
                it.next();
            }
            a => all.push(a),
        }
    }
    all.extend(["-o", plan.to_str().unwrap()]);
    let o = integrador(&all);
    assert!(o.status.success(), "plan: {}", stderr(&o));
    spark_gathers_as_one_machine(&plan, &run, tables, "the shipped example")
}
