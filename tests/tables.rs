//! The entity tables (`--tables`, `integrador tables`): what a run writes
//! equals what its Pajé trace replays into, the counts equal pj_dump's,
//! the files follow the contract (no unsigned type, times INT64, the
//! provenance in the footer), the same inputs give the same bytes, and
//! every refusal of a directory that is not ours.

mod common;
use common::*;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use std::path::Path;

/// Every row of a table, each as the text of the columns it keeps.
fn rows(dir: &Path, table: &str, skip: &[&str]) -> Vec<String> {
    let file = std::fs::File::open(dir.join(format!("{table}.parquet"))).unwrap();
    let reader = SerializedFileReader::new(file).unwrap();
    let mut out = Vec::new();
    for row in reader.get_row_iter(None).unwrap() {
        let row = row.unwrap();
        let cells: Vec<String> = row
            .get_column_iter()
            .filter(|(name, _)| !skip.contains(&name.as_str()))
            .map(|(name, v)| match v {
                // A run ends what is open with the trace, its trace by
                // destroying every container: the same end.
                Field::Str(s) if name == "end_cause" && s == "trace_end" => {
                    "\"container_end\"".to_string()
                }
                v => v.to_string(),
            })
            .collect();
        out.push(cells.join("|"));
    }
    out.sort();
    out
}

fn run_tables(name: &str, args: &[String], dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let trace = dir.join(format!("{name}.paje"));
    let tables = dir.join(format!("{name}.tables"));
    let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
    let (t, d) = (trace.to_str().unwrap(), tables.to_str().unwrap());
    all.extend(["-q", "-o", t, "--tables", d]);
    let o = integrador(&all);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    (trace, tables)
}

#[test]
fn a_runs_tables_equal_its_traces_replayed() {
    let tmp = tempdir();
    for (name, args) in example_runs() {
        let (trace, tables) = run_tables(name, &args, tmp.path());
        let again = tmp.path().join(format!("{name}.replayed"));
        let o = integrador(&[
            "tables",
            trace.to_str().unwrap(),
            "--tables",
            again.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        // What a Pajé trace cannot say: a message's size and tag, a
        // variable type's colour left to the default, an event's or a
        // link's value's colour (only state values are declared, ViTE
        // complaining of the others).
        // A trace does not say which input an entity came from either.
        for (table, skip) in [
            ("states", &["source"][..]),
            ("variables", &["source"]),
            ("events", &["source"]),
            ("links", &["size_bytes", "tag", "source"]),
            // Which level a type stands for: the hierarchy's, not the trace's.
            (
                "containers",
                &["role", "host", "cluster", "pid", "tid", "rank"],
            ),
            ("types", &["color", "unit"]),
            ("values", &["color"]),
        ] {
            let (a, b) = (rows(&tables, table, skip), rows(&again, table, skip));
            assert!(
                !a.is_empty() || !matches!(table, "containers" | "types"),
                "{name}: no {table}"
            );
            assert_eq!(a.len(), b.len(), "{name}: {table}: rows");
            let differ: Vec<_> = a.iter().zip(&b).filter(|(x, y)| x != y).take(3).collect();
            assert!(differ.is_empty(), "{name}: {table}: {differ:?}");
        }
    }
}

/// pj_dump's rows of each kind, counted as the tables count theirs.
#[test]
fn the_tables_count_what_pj_dump_counts() {
    let tmp = tempdir();
    for (name, args) in example_runs() {
        let (trace, tables) = run_tables(name, &args, tmp.path());
        let Some(lines) = pj_dump_lines(&trace) else {
            return;
        };
        let count = |kind: &str| {
            lines
                .iter()
                .filter(|l| l.starts_with(&format!("{kind},")))
                .count()
        };
        let n = |table: &str| rows(&tables, table, &[]).len();
        assert_eq!(n("states"), count("State"), "{name}: states");
        assert_eq!(n("variables"), count("Variable"), "{name}: variables");
        assert_eq!(n("events"), count("Event"), "{name}: events");
        assert_eq!(n("links"), count("Link"), "{name}: links");
        // pj_dump counts the root container too.
        assert_eq!(
            n("containers") + 1,
            count("Container"),
            "{name}: containers"
        );
    }
}

#[test]
fn the_files_keep_the_contract() {
    let tmp = tempdir();
    let (name, args) = example_runs().swap_remove(0);
    let (_, tables) = run_tables(name, &args, tmp.path());
    for table in [
        "states",
        "variables",
        "events",
        "links",
        "containers",
        "types",
        "values",
        "run",
        "inputs",
        "clocks",
        "host_aliases",
    ] {
        let file = std::fs::File::open(tables.join(format!("{table}.parquet"))).unwrap();
        let reader = SerializedFileReader::new(file).unwrap();
        let meta = reader.metadata().file_metadata();
        let schema = meta.schema_descr();
        for c in schema.columns() {
            let logical = format!("{:?}", c.logical_type_ref());
            assert!(
                !logical.contains("is_signed: false"),
                "{table}.{}: unsigned",
                c.name()
            );
            assert!(
                !logical.contains("Timestamp"),
                "{table}.{}: a timestamp type",
                c.name()
            );
            if c.name().ends_with("_ns") {
                assert_eq!(
                    c.physical_type(),
                    parquet::basic::Type::INT64,
                    "{table}.{}",
                    c.name()
                );
            }
        }
        let kv = meta.key_value_metadata().expect("key-value metadata");
        let version = kv.iter().find(|k| k.key == "integrador.schema_version");
        assert_eq!(
            version.and_then(|k| k.value.as_deref()),
            Some(integrador::tables::SCHEMA_VERSION.to_string().as_str()),
            "{table}"
        );
    }
    let run = rows(&tables, "run", &["tool_version"]);
    assert_eq!(run.len(), 1);
    // Every host name the inputs used, each with its machine's id.
    use parquet::record::RowAccessor;
    let machines: Vec<i64> = table(&tables, "containers")
        .iter()
        .filter(|c| c.get_string(4).is_ok_and(|r| r == "machine"))
        .map(|c| c.get_long(0).unwrap())
        .collect();
    let aliases = table(&tables, "host_aliases");
    assert!(!aliases.is_empty());
    for a in &aliases {
        assert!(machines.contains(&a.get_long(1).unwrap()), "{a}");
    }
    assert_eq!(rows(&tables, "inputs", &[]).len(), 4, "one row an input");
}

#[test]
fn same_inputs_same_bytes_and_threads_change_nothing() {
    let tmp = tempdir();
    let (name, args) = example_runs().swap_remove(0);
    let (_, a) = run_tables(name, &args, tmp.path());
    let b = tmp.path().join("one-thread");
    let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
    all.extend(["-q", "--threads", "1", "--tables", b.to_str().unwrap()]);
    let o = integrador(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut names: Vec<_> = std::fs::read_dir(&a)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert!(names.len() >= 11);
    for n in names {
        let x = std::fs::read(a.join(&n)).unwrap();
        let y = std::fs::read(b.join(&n)).unwrap();
        assert!(x == y, "{} differs", n.to_string_lossy());
    }
}

#[test]
fn a_directory_not_ours_is_refused_and_kept() {
    let tmp = tempdir();
    let (_, args) = example_runs().swap_remove(4);
    let mine = tmp.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "keep").unwrap();
    let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
    all.extend(["--tables", mine.to_str().unwrap()]);
    let o = integrador(&all);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("did not write"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(mine.join("notes.txt")).unwrap(),
        "keep"
    );
    // An input inside the directory.
    let inside = tmp.path().join("in");
    std::fs::create_dir(&inside).unwrap();
    std::fs::write(inside.join(crate_marker()), "").unwrap();
    let copy = inside.join("ftrace.txt");
    std::fs::copy(fixture("sched/pingpong-pipe/ftrace.txt"), &copy).unwrap();
    let o = integrador(&[
        "-os",
        copy.to_str().unwrap(),
        "--tables",
        inside.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(copy.exists());
    // One of ours is replaced whole; nothing is left beside it.
    let ours = tmp.path().join("ours");
    for _ in 0..2 {
        let o = integrador(&[
            "-q",
            "-os",
            copy.to_str().unwrap(),
            "--tables",
            ours.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".integrador"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// The trace inside the tables' directory would go with it when the new
/// tables are put in place: refused before anything is written.
#[test]
fn the_trace_inside_the_tables_directory_is_refused() {
    let tmp = tempdir();
    let dir = tmp.path().join("run.tables");
    let trace = fixture("sched/pingpong-pipe/ftrace.txt");
    let (t, d) = (trace.to_str().unwrap(), dir.to_str().unwrap());
    let o = integrador(&["-q", "-os", t, "--tables", d]);
    assert!(o.status.success(), "{}", stderr(&o));
    let inside = dir.join("run.paje");
    let o = integrador(&["-os", t, "-o", inside.to_str().unwrap(), "--tables", d]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("lies in the directory"),
        "{}",
        stderr(&o)
    );
    assert!(!inside.exists());
}

fn crate_marker() -> &'static str {
    integrador::tables::MARKER
}

#[test]
fn a_damaged_trace_writes_no_tables() {
    let tmp = tempdir();
    let (name, args) = example_runs().swap_remove(4);
    let (trace, _) = run_tables(name, &args, tmp.path());
    let text = std::fs::read_to_string(&trace).unwrap();
    // A pop on a state row that was never pushed, after the header.
    let mut lines: Vec<&str> = text.lines().collect();
    let at = lines.len() / 2;
    lines.insert(at, "12 1.0 c999 t1");
    let bad = tmp.path().join("bad.paje");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let out = tmp.path().join("bad.tables");
    let o = integrador(&[
        "tables",
        bad.to_str().unwrap(),
        "--tables",
        out.to_str().unwrap(),
    ]);
    assert_ne!(o.status.code(), Some(0));
    let e = stderr(&o);
    assert!(e.contains(&format!("line {}", at + 1)), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(!out.exists());
}

/// docs/tables.md shows each question's SQL as its file under docs/sql
/// holds it (the file is what the readers' test runs).
#[test]
fn the_documented_sql_is_the_tested_sql() {
    let doc = std::fs::read_to_string(root().join("docs/tables.md")).unwrap();
    let mut n = 0;
    for e in std::fs::read_dir(root().join("docs/sql")).unwrap() {
        let p = e.unwrap().path();
        let sql = std::fs::read_to_string(&p).unwrap();
        assert!(
            doc.contains(sql.trim()),
            "docs/tables.md lacks {}",
            p.display()
        );
        n += 1;
    }
    assert!(n >= 7);
}

/// Every row of a table as parquet's rows.
fn table(dir: &Path, name: &str) -> Vec<parquet::record::Row> {
    let file = std::fs::File::open(dir.join(format!("{name}.parquet"))).unwrap();
    let reader = SerializedFileReader::new(file).unwrap();
    reader
        .get_row_iter(None)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// A line of pj_dump, or of the tables said as pj_dump says it: its
/// words, and its times and numbers apart (pj_dump prints them with 6
/// decimals, so they are compared to within a microsecond).
type Line = (Vec<String>, Vec<f64>);

fn pj_line(l: &str) -> Option<Line> {
    let w: Vec<&str> = l.split(", ").collect();
    let n = |i: usize| {
        w.get(i)
            .and_then(|x| x.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    let s = |i: &[usize]| {
        i.iter()
            .map(|&i| w.get(i).unwrap_or(&"").to_string())
            .collect::<Vec<_>>()
    };
    Some(match *w.first()? {
        // kind, container, type, start, end, duration, imbrication, value
        "State" => (s(&[0, 1, 2, 7]), vec![n(3), n(4), n(6)]),
        "Variable" => (s(&[0, 1, 2]), vec![n(3), n(4), n(6)]),
        "Event" => (s(&[0, 1, 2, 4]), vec![n(3)]),
        // kind, container, type, start, end, duration, value, from, to, key
        "Link" => (s(&[0, 1, 2, 6, 7, 8, 9]), vec![n(3), n(4)]),
        // kind, parent, type, start, end, duration, name
        "Container" => (s(&[0, 1, 2, 6]), vec![n(3), n(4)]),
        _ => return None,
    })
}

/// The tables said as pj_dump says a trace: names, seconds since T0.
fn tables_as_pj_dump(dir: &Path) -> Vec<Line> {
    use parquet::record::RowAccessor;
    let t0 = table(dir, "run")[0].get_long(2).unwrap();
    let secs = |ns: i64| (ns - t0) as f64 / 1e9;
    let mut names = std::collections::HashMap::new();
    let containers = table(dir, "containers");
    for c in &containers {
        names.insert(c.get_long(0).unwrap(), c.get_string(5).unwrap().clone());
    }
    let name = |id: i64| names.get(&id).cloned().unwrap_or_else(|| "0".into());
    let mut out: Vec<Line> = Vec::new();
    for r in table(dir, "states") {
        let w = vec![
            "State".into(),
            name(r.get_long(0).unwrap()),
            r.get_string(2).unwrap().clone(),
            r.get_string(4).unwrap().clone(),
        ];
        out.push((
            w,
            vec![
                secs(r.get_long(5).unwrap()),
                secs(r.get_long(6).unwrap()),
                f64::from(r.get_int(7).unwrap()),
            ],
        ));
    }
    for r in table(dir, "variables") {
        let w = vec![
            "Variable".into(),
            name(r.get_long(0).unwrap()),
            r.get_string(2).unwrap().clone(),
        ];
        out.push((
            w,
            vec![
                secs(r.get_long(3).unwrap()),
                secs(r.get_long(4).unwrap()),
                r.get_double(5).unwrap(),
            ],
        ));
    }
    for r in table(dir, "events") {
        let w = vec![
            "Event".into(),
            name(r.get_long(0).unwrap()),
            r.get_string(2).unwrap().clone(),
            r.get_string(4).unwrap().clone(),
        ];
        out.push((w, vec![secs(r.get_long(5).unwrap())]));
    }
    for r in table(dir, "links") {
        let w = vec![
            "Link".into(),
            name(r.get_long(5).unwrap()),
            r.get_string(2).unwrap().clone(),
            r.get_string(4).unwrap().clone(),
            name(r.get_long(6).unwrap()),
            name(r.get_long(7).unwrap()),
            r.get_string(12).unwrap().clone(),
        ];
        out.push((
            w,
            vec![secs(r.get_long(8).unwrap()), secs(r.get_long(9).unwrap())],
        ));
    }
    for c in &containers {
        let parent = c.get_long(1).map(name).unwrap_or_else(|_| "0".into());
        let w = vec![
            "Container".into(),
            parent,
            c.get_string(3).unwrap().clone(),
            c.get_string(5).unwrap().clone(),
        ];
        out.push((
            w,
            vec![secs(c.get_long(12).unwrap()), secs(c.get_long(13).unwrap())],
        ));
    }
    out
}

fn sorted(mut v: Vec<Line>) -> Vec<Line> {
    v.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal))
    });
    v
}

/// The tables, said as pj_dump says a trace, are pj_dump's dump of the
/// run's trace row for row: every state, variable, event, link (with its
/// key) and container, with the same names and, to pj_dump's microsecond,
/// the same times and values.
#[test]
fn the_tables_are_pj_dumps_rows() {
    let tmp = tempdir();
    for (name, args) in example_runs() {
        let (trace, tables) = run_tables(name, &args, tmp.path());
        let Some(lines) = pj_dump_lines(&trace) else {
            return;
        };
        // pj_dump's root container has no row of ours.
        let root = |l: &Line| l.0[0] == "Container" && l.0.get(3).map(String::as_str) == Some("0");
        let want = sorted(
            lines
                .iter()
                .filter_map(|l| pj_line(l))
                .filter(|l| !root(l))
                .collect(),
        );
        let got = sorted(tables_as_pj_dump(&tables));
        assert_eq!(got.len(), want.len(), "{name}: rows");
        for (g, w) in got.iter().zip(&want) {
            // A container's times pj_dump prints to 6 significant digits,
            // a variable's value it keeps as a float (99.7 is 99.699997).
            let rel = match w.0[0].as_str() {
                "Container" => 1e-5,
                "Variable" => 1e-6,
                _ => 1e-9,
            };
            let near =
                g.1.iter()
                    .zip(&w.1)
                    .all(|(a, b)| (a - b).abs() <= 1.5e-6 + rel * b.abs());
            assert!(g.0 == w.0 && near, "{name}: {g:?} against pj_dump's {w:?}");
        }
    }
}

/// Each row names the input it came from: the README run's MPI states and
/// messages its MPE log, its kernel states its `.os` file, its metrics
/// the Ganglia recording or the PCP archive that set them.
#[test]
fn every_row_names_its_input() {
    use parquet::record::RowAccessor;
    let tmp = tempdir();
    let (name, args) = example_runs().swap_remove(0);
    let (_, tables) = run_tables(name, &args, tmp.path());
    let kind: std::collections::HashMap<i32, String> = table(&tables, "inputs")
        .iter()
        .map(|r| (r.get_int(0).unwrap(), r.get_string(1).unwrap().clone()))
        .collect();
    let of = |r: &parquet::record::Row, col: usize| kind[&r.get_int(col).unwrap()].clone();
    let mut seen = std::collections::BTreeSet::new();
    for r in table(&tables, "states") {
        let want = match r.get_string(2).unwrap().as_str() {
            "MPI state" => "mpi",
            "OS state" => "os",
            t => panic!("a state type of no input: {t}"),
        };
        assert_eq!(of(&r, 9), want, "{r}");
        seen.insert(want);
    }
    for r in table(&tables, "variables") {
        let ty = r.get_string(2).unwrap().clone();
        // PCP names its metrics with dots, gmond with underscores.
        let want = if ty.contains('.') { "pcp" } else { "ganglia" };
        assert_eq!(of(&r, 7), want, "{ty}");
        seen.insert(want);
    }
    for r in table(&tables, "links") {
        assert_eq!(of(&r, 13), "mpi");
    }
    assert_eq!(seen.len(), 4, "{seen:?}");
}

/// A process's pid and rank and a thread's tid are columns, the same
/// numbers the viewer's names show (`12628 rank 0`, `32155 sleep`, a
/// thread `12630`), and a thread's pid is its process's.
#[test]
fn containers_say_their_pid_tid_and_rank() {
    use parquet::record::RowAccessor;
    let tmp = tempdir();
    let mut seen = std::collections::BTreeSet::new();
    for (name, args) in example_runs() {
        let (_, tables) = run_tables(name, &args, tmp.path());
        let rows = table(&tables, "containers");
        let id = |r: &parquet::record::Row| r.get_long(0).unwrap();
        let parent: std::collections::HashMap<i64, Option<i64>> =
            rows.iter().map(|r| (id(r), r.get_long(1).ok())).collect();
        let pid_of: std::collections::HashMap<i64, Option<i64>> =
            rows.iter().map(|r| (id(r), r.get_long(9).ok())).collect();
        for r in &rows {
            let role = r.get_string(4).ok().cloned().unwrap_or_default();
            let cname = r.get_string(5).unwrap().clone();
            let (pid, tid, rank) = (r.get_long(9).ok(), r.get_long(10).ok(), r.get_long(11).ok());
            let words: Vec<&str> = cname.split(' ').collect();
            let lead = words[0].parse::<i64>().ok();
            match role.as_str() {
                "process" => {
                    assert_eq!(pid, lead, "{name}: {cname}");
                    assert_eq!(tid, None, "{name}: {cname}");
                    let named_rank = match words[..] {
                        [_, "rank", r] => r.parse::<i64>().ok(),
                        _ => None,
                    };
                    assert_eq!(rank, named_rank, "{name}: {cname}");
                    seen.insert(if rank.is_some() { "rank" } else { "pid" });
                }
                "thread" => {
                    assert_eq!(tid, lead, "{name}: {cname}");
                    let up = parent[&id(r)].expect("a thread has a process");
                    assert_eq!(pid, pid_of[&up], "{name}: {cname}");
                    assert!(pid.is_some(), "{name}: {cname}");
                    seen.insert("tid");
                }
                _ => assert_eq!((pid, tid, rank), (None, None, None), "{name}: {cname}"),
            }
        }
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
}

/// A variable type's unit is the one gmond's XML gives (a custom metric's
/// is known no other way); a unit of one space (a load average) is none.
#[test]
fn gmond_units_reach_the_types_table() {
    use parquet::record::RowAccessor;
    let tmp = tempdir();
    let snap = std::fs::read_to_string(fixture("ganglia/snapshots/snap_001.xml")).unwrap();
    let custom = r#"<METRIC NAME="gpu_temp" VAL="61.5" TYPE="float" UNITS=" Celsius " TN="2" TMAX="60" DMAX="0" SLOPE="both">
</METRIC>
"#;
    let at = snap.find("<METRIC ").expect("a METRIC in the fixture");
    let xml = tmp.path().join("custom.xml");
    std::fs::write(&xml, format!("{}{custom}{}", &snap[..at], &snap[at..])).unwrap();
    let dir = tmp.path().join("t");
    let o = integrador(&[
        "-q",
        "-ganglia",
        xml.to_str().unwrap(),
        "--tables",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let unit: std::collections::HashMap<String, Option<String>> = table(&dir, "types")
        .iter()
        .filter(|r| r.get_string(2).unwrap() == "variable")
        .map(|r| {
            (
                r.get_string(3).unwrap().clone(),
                r.get_string(5).ok().cloned(),
            )
        })
        .collect();
    assert_eq!(unit["gpu_temp"].as_deref(), Some("Celsius"), "{unit:?}");
    assert_eq!(unit["cpu_idle"].as_deref(), Some("%"), "{unit:?}");
    assert_eq!(unit["load_one"], None, "{unit:?}");
}
