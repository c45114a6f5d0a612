//! Helpers shared by the integration tests: where the fixtures are, how to
//! run the binary, and pj_dump (required under INTEGRADOR_REQUIRE_PJDUMP=1).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The real-tool fixtures the tests read: `tests/data` in the repository
/// (a fresh clone has everything it needs), or `$INTEGRADOR_FIXTURES`.
pub fn fixtures() -> PathBuf {
    if let Some(p) = std::env::var_os("INTEGRADOR_FIXTURES") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

pub fn fixture(rel: &str) -> PathBuf {
    let p = fixtures().join(rel);
    assert!(
        p.exists(),
        "fixture {} is missing (set INTEGRADOR_FIXTURES)",
        p.display()
    );
    p
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn integrador(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_integrador"))
        .args(args)
        .output()
        .expect("integrador runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh temporary directory for outputs.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// Whether pj_dump is usable; under INTEGRADOR_REQUIRE_PJDUMP=1 its absence
/// fails the test, elsewhere it is reported loudly and the check skipped.
pub fn have_pj_dump() -> bool {
    let ok = Command::new("pj_dump").arg("--version").output().is_ok();
    if !ok {
        if std::env::var("INTEGRADOR_REQUIRE_PJDUMP").as_deref() == Ok("1") {
            panic!("pj_dump is required (INTEGRADOR_REQUIRE_PJDUMP=1) but not installed: apt-get install pajeng");
        }
        eprintln!("\n*** SKIPPED: pj_dump not installed; the trace was NOT validated by PajeNG (apt-get install pajeng) ***\n");
    }
    ok
}

/// pj_dump -q: Some(accepted) or None when pj_dump is absent.
pub fn pj_dump_accepts(trace: &Path) -> Option<bool> {
    if !have_pj_dump() {
        return None;
    }
    // pj_dump 1.3.6 never ends on some damaged traces (a NUL byte): a
    // trace it cannot finish reading in 10 s counts as rejected.
    let o = Command::new("timeout")
        .args(["10", "pj_dump", "-q"])
        .arg(trace)
        .output()
        .expect("timeout and pj_dump run");
    Some(o.status.success())
}

/// The full pj_dump output lines, or None when pj_dump is absent.
pub fn pj_dump_lines(trace: &Path) -> Option<Vec<String>> {
    if !have_pj_dump() {
        return None;
    }
    let o = Command::new("pj_dump")
        .arg(trace)
        .output()
        .expect("pj_dump runs");
    assert!(
        o.status.success(),
        "pj_dump rejected {}: {}",
        trace.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    Some(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

/// Asserts that pj_dump and `integrador check` both accept the trace.
pub fn assert_valid(trace: &Path) {
    if let Some(ok) = pj_dump_accepts(trace) {
        assert!(ok, "pj_dump -q rejects {}", trace.display());
    }
    let c = integrador(&["check", trace.to_str().unwrap()]);
    assert!(
        c.status.success(),
        "integrador check rejects {}:\n{}",
        trace.display(),
        String::from_utf8_lossy(&c.stdout)
    );
}

/// Counts lines of our own output by Pajé event name (from its header).
pub fn count_events(trace: &Path, name: &str) -> usize {
    let text = std::fs::read_to_string(trace).unwrap();
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("%EventDef {name} ")))
        .unwrap_or_else(|| panic!("no {name} in header"))
        .trim()
        .to_string();
    text.lines()
        .filter(|l| l.split_whitespace().next() == Some(id.as_str()))
        .count()
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The fields of a Pajé line, double quotes grouping words.
pub fn paje_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Runs `integrador ARGS -o OUT`, expects success and a trace both pj_dump
/// and our checker accept; returns stderr (the summary).
pub fn run_ok(args: &[&str], out: &Path) -> String {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-o", out.to_str().unwrap()]);
    let o = integrador(&all);
    let err = stderr(&o);
    assert!(o.status.success(), "{args:?}: {err}");
    assert_valid(out);
    err
}

/// One of our traces read back: every alias with its name, and every
/// timed line as (event id, ns since the epoch, fields).
pub struct Ours {
    /// Alias → name, for containers, types and values.
    pub names: std::collections::HashMap<String, String>,
    /// Timed lines in file order.
    pub events: Vec<(String, i64, Vec<String>)>,
}

impl Ours {
    /// The name an alias stands for; a word that is no alias is itself a
    /// name (the values of events and links are written by name).
    pub fn name<'a>(&'a self, alias: &'a str) -> &'a str {
        self.names.get(alias).map_or(alias, String::as_str)
    }

    /// The timed lines of event `id`.
    pub fn of<'a>(&'a self, id: &'a str) -> impl Iterator<Item = (i64, &'a [String])> + 'a {
        self.events
            .iter()
            .filter(move |e| e.0 == id)
            .map(|e| (e.1, e.2.as_slice()))
    }
}

/// Reads a trace written by integrador (the ids of `src/paje/writer.rs`;
/// times relative to the origin line after the header).
pub fn read_ours(trace: &Path) -> Ours {
    let text = std::fs::read_to_string(trace).unwrap();
    let mut origin = 0i64;
    let mut ours = Ours {
        names: std::collections::HashMap::new(),
        events: Vec::new(),
    };
    for line in text.lines() {
        if let Some(o) = integrador::paje::writer::origin_of(line) {
            origin = o;
            continue;
        }
        if line.starts_with('%') || line.starts_with('#') {
            continue;
        }
        let f = paje_fields(line);
        // Definitions end with their alias; the name is the 3rd field, or
        // the 5th for containers and link types.
        match f[0].as_str() {
            "0" | "1" | "2" | "3" | "9" => {
                ours.names.insert(f.last().unwrap().clone(), f[2].clone());
                continue;
            }
            "10" => {
                ours.names.insert(f[5].clone(), f[4].clone());
                continue;
            }
            "4" => {
                ours.names.insert(f[5].clone(), f[4].clone());
            }
            _ => {}
        }
        let (a, b) = f[1].split_once('.').unwrap();
        let ns = origin + a.parse::<i64>().unwrap() * 1_000_000_000 + b.parse::<i64>().unwrap();
        ours.events.push((f[0].clone(), ns, f));
    }
    ours
}

/// Per "host metric": how many of the exact (time, value) samples of the
/// snapshot series in `dir` are the same sample seen again a second off
/// (ganglia.md §7's wobble: LOCALTIME and TN are read at slightly
/// different moments). `samples.expected.json` counts exact triples; a
/// reader that de-duplicates the wobble finds that many fewer.
pub fn snapshot_wobbles(dir: &Path) -> std::collections::BTreeMap<String, u64> {
    use integrador_ganglia::xml::{Entry, XmlReader};
    use std::collections::{BTreeMap, BTreeSet};
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    files.sort();
    // Exact distinct samples per series, in the order first seen.
    let mut series: BTreeMap<String, Vec<(i64, u64)>> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        let mut r = XmlReader::new(&bytes[..]);
        let mut e = Entry::default();
        while r.next_entry(&mut e).unwrap() {
            let k = format!("{} {}", e.host, e.metric);
            if seen.insert((k.clone(), e.time)) {
                series
                    .entry(k)
                    .or_default()
                    .push((e.time, e.value.to_bits()));
            }
        }
    }
    series
        .into_iter()
        .map(|(k, v)| {
            let n = v
                .windows(2)
                .filter(|w| w[0].0.abs_diff(w[1].0) == 1 && w[0].1 == w[1].1)
                .count() as u64;
            (k, n)
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// Rewrites every file of `scenario` whose host is `host` with its times
/// moved by `offset + drift·(t − t0)`, as a clock that is off would have
/// stamped them; the other files are copied.
pub fn skew_rastro(
    scenario: &str,
    host: &str,
    t0: i64,
    offset_ns: i64,
    drift_ppm: i64,
    dir: &Path,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let src = fixtures().join(format!("rastro/{scenario}"));
    let mut names: Vec<_> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rst"))
        .collect();
    names.sort();
    for p in names {
        let mut r = integrador_rastro::RstReader::new(std::fs::File::open(&p).unwrap()).unwrap();
        let init = r.init().clone();
        let moved = |t: i64| {
            if init.host == host {
                t + offset_ns + (t - t0) * drift_ppm / 1_000_000
            } else {
                t
            }
        };
        let mut w = integrador_rastro::encode::Writer::new(
            integrador_rastro::Layout::Current,
            init.resolution,
            init.id1,
            init.id2,
            &init.host,
            moved(init.time_ns),
        );
        let mut rec = integrador_rastro::Record::default();
        while r.next_into(&mut rec).unwrap() {
            let mut vals: Vec<integrador_rastro::encode::Value> = Vec::new();
            vals.extend(
                rec.u64s
                    .iter()
                    .map(|&v| integrador_rastro::encode::Value::U64(v)),
            );
            vals.extend(
                rec.u32s
                    .iter()
                    .map(|&v| integrador_rastro::encode::Value::U32(v)),
            );
            vals.extend(
                rec.strings
                    .iter()
                    .map(|s| integrador_rastro::encode::Value::Str(s)),
            );
            w.event(rec.ty, moved(rec.time_ns), &vals);
        }
        let integrador_rastro::End::Stop { time_ns, .. } = r.end().clone() else {
            panic!()
        };
        w.stop(moved(time_ns));
        let dst = dir.join(p.file_name().unwrap());
        std::fs::write(&dst, w.into_bytes()).unwrap();
        out.push(dst);
    }
    out
}

pub fn have_vite() -> bool {
    let ok = Command::new("sh")
        .args(["-c", "command -v vite"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var("INTEGRADOR_REQUIRE_VITE").as_deref() == Ok("1") {
            panic!("ViTE is required (INTEGRADOR_REQUIRE_VITE=1) but not installed: apt-get install vite");
        }
        eprintln!("\n*** SKIPPED: ViTE not installed; the traces were NOT opened in ViTE (apt-get install vite) ***\n");
    }
    ok
}

/// Opens `trace` in ViTE offscreen; returns what it printed, its log
/// and the picture it exported (SVG).
pub fn vite(trace: &Path) -> (String, String, String) {
    let dir = tempdir();
    let svg = dir.path().join("out.svg");
    let o = Command::new("timeout")
        .arg("120")
        .arg("vite")
        .arg(trace)
        .arg("-e")
        .arg(&svg)
        .env("QT_QPA_PLATFORM", "offscreen")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let log = std::fs::read_to_string(dir.path().join("log.txt")).unwrap_or_default();
    assert!(
        svg.exists(),
        "ViTE exported nothing for {}:\n{printed}",
        trace.display()
    );
    let picture = std::fs::read_to_string(&svg).unwrap_or_default();
    (printed, log, picture)
}

/// Asserts that ViTE opens `trace` with no error and no warning (when
/// ViTE is there; see [`have_vite`]).
pub fn assert_vite_clean(trace: &Path, name: &str) {
    if !have_vite() {
        return;
    }
    let (printed, log, _) = vite(trace);
    assert!(
        printed.contains("0 errors and 0 warnings"),
        "{name}: ViTE said\n{printed}\nlog.txt:\n{log}"
    );
    // ViTE prints some complaints on stdout only (a declared value of an
    // event or link type: "EntityType class is 1 instead of 0").
    assert!(
        !printed.contains("instead of") && !printed.to_lowercase().contains("warning:"),
        "{name}: ViTE said\n{printed}"
    );
}

/// A small deterministic generator (SplitMix64): the seeded cases of the
/// differential and grammar tests are the same on every machine, so a
/// failure is reproducible.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Runs of every kind of source, from the shipped examples and fixtures.
pub fn example_runs() -> Vec<(&'static str, Vec<String>)> {
    let ex = root().join("examples");
    let ex = |p: &str| ex.join(p).display().to_string();
    let fx = |p: &str| fixture(p).display().to_string();
    let h = |p: &str| root().join("hierarchies").join(p).display().to_string();
    let arch = |p: &str| {
        fixtures()
            .join("pcp/multihost")
            .join(p)
            .display()
            .to_string()
    };
    vec![
        (
            "readme",
            vec![
                "-hierarchy".into(),
                h("mpi+os+ganglia+pcp.toml"),
                "-mpi".into(),
                ex("pingpong-localhost/mpi_pingpong.clog2"),
                "-mpinodes".into(),
                ex("pingpong-localhost/mpi.nodes"),
                "-ganglia".into(),
                ex("pingpong-localhost/ganglia.traced"),
                "-os".into(),
                ex("pingpong-localhost/vm.os"),
                "-pcp".into(),
                ex("pingpong-localhost/pcp/vm"),
            ],
        ),
        (
            "grid",
            vec![
                "-hierarchy".into(),
                h("grid.toml"),
                "-sync".into(),
                ex("grid/timesync"),
                "-ganglia".into(),
                ex("grid/domain-a.traced"),
                ex("grid/domain-b.traced"),
            ],
        ),
        (
            "deck",
            vec![
                "-deck".into(),
                fx("rastro/deck-pingpong/rastro-0-0.rst"),
                fx("rastro/deck-pingpong/rastro-1-0.rst"),
            ],
        ),
        (
            "ring",
            vec![
                "-mpi".into(),
                fx("clog2/ring/ring.clog2"),
                "-mpinodes".into(),
                fx("clog2/ring/ring.nodes"),
            ],
        ),
        (
            "ftrace",
            vec!["-os".into(), fx("sched/pingpong-pipe/ftrace.txt")],
        ),
        // An archive is named by its volumes' common base.
        ("pcp", vec!["-pcp".into(), arch("node01"), arch("node02")]),
    ]
}

/// (name, arguments), `$ex` for examples/ and `$d` for the fixtures.
pub const RUNS: &[(&str, &str)] = &[
    ("readme", "-hierarchy hierarchies/mpi+os+ganglia+pcp.toml -mpi $ex/pingpong-localhost/mpi_pingpong.clog2 -mpinodes $ex/pingpong-localhost/mpi.nodes -ganglia $ex/pingpong-localhost/ganglia.traced -os $ex/pingpong-localhost/vm.os -pcp $ex/pingpong-localhost/pcp/vm"),
    ("grid-sync", "-hierarchy hierarchies/grid.toml -sync $ex/grid/timesync -ganglia $ex/grid/domain-a.traced $ex/grid/domain-b.traced"),
    ("deck", "-hierarchy hierarchies/deck+os+ganglia+pcp.toml -deck $ex/deck/threads/rastro-0-0.rst $ex/deck/threads/rastro-0-1.rst $ex/deck/threads/rastro-0-2.rst $ex/deck/threads/rastro-1-0.rst $ex/deck/threads/rastro-2-0.rst"),
    ("aky", "-deck $d/rastro/akypuera-pingpong/rastro-0-0.rst $d/rastro/akypuera-pingpong/rastro-1-0.rst --deck-map akypuera"),
    ("ftrace", "-os $ex/pingpong-localhost/vm.trace -ganglia $ex/pingpong-localhost/ganglia.traced"),
    ("perf", "-os $ex/pipe/vm.perf --boot-epoch 1795262171.322076"),
    ("trace-cmd", "-os $d/sched/pingpong-pipe/trace-cmd-report.txt"),
    ("trace-dat", "-os $d/sched/pingpong-pipe/trace.dat --os-host vm"),
    ("tgid", "-os $d/sched/tgid-contend3/ftrace.txt --os-host vm"),
    ("unify", "-hierarchy hierarchies/ganglia+os.toml -os $d/unify/node01.os -ganglia $d/ganglia/cluster-example.traced"),
    ("clog-median", "-mpi $d/clog2/median/median.clog2 -mpinodes $d/clog2/median/median.nodes"),
    ("pcp-zst", "-pcp $d/pcp/pmlogger_v2_zst/20261121.12.34"),
    ("pcp-multihost", "-pcp $d/pcp/multihost/node01 $d/pcp/multihost/node02"),
    ("snapshots", "-ganglia $d/ganglia/snapshots"),
    ("rrd", "-ganglia $d/ganglia/rrd/node02.cluster.example.bytes_in.xml $d/ganglia/rrd/node03.cluster.example.cpu_user.xml"),
];

/// [`RUNS`] with their paths filled in, as argument lists.
pub fn fixture_runs() -> Vec<(&'static str, Vec<String>)> {
    let (ex, d) = (root().join("examples"), fixtures());
    RUNS.iter()
        .map(|(name, args)| {
            let args = args
                .replace("$ex", ex.to_str().unwrap())
                .replace("$d", d.to_str().unwrap());
            (*name, args.split(' ').map(str::to_string).collect())
        })
        .collect()
}

/// The Python that runs the readers' scripts: `$INTEGRADOR_PYTHON` or
/// `python3`.
pub fn python() -> String {
    std::env::var("INTEGRADOR_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Whether [`python`] imports `module`; under `require`=1 its absence
/// fails the test, elsewhere it is skipped loudly.
pub fn have_module(module: &str, require: &str) -> bool {
    let ok = std::process::Command::new(python())
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var(require).as_deref() == Ok("1") {
            panic!(
                "{module} is required ({require}=1) but {} cannot import it",
                python()
            );
        }
        eprintln!(
            "\n*** SKIPPED: {} cannot import {module}; NOT read by it ***\n",
            python()
        );
    }
    ok
}

/// Runs a plan through the Spark driver (`scale/spark/integrate.py`,
/// `local[2]`) into `run/spark`, and checks that the dataset equals the
/// one-machine `tables` (`tests/scale_sql.py`). Returns the dataset.
pub fn spark_gathers_as_one_machine(plan: &Path, run: &Path, tables: &Path, name: &str) -> PathBuf {
    let o = std::process::Command::new(python())
        .env("PYSPARK_PYTHON", python())
        .arg(root().join("scale/spark/integrate.py"))
        .arg(plan)
        .arg(run)
        .args([
            "--master",
            "local[2]",
            "--integrador",
            env!("CARGO_BIN_EXE_integrador"),
        ])
        .output()
        .expect("python runs");
    assert!(
        o.status.success(),
        "{name}: the Spark driver: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let dataset = run.join("spark");
    same_as_one_machine(tables, &dataset, name);
    dataset
}

/// The gathered `dataset` equals the one-machine `tables`, table by
/// table, in DuckDB (`tests/scale_sql.py`).
pub fn same_as_one_machine(tables: &Path, dataset: &Path, name: &str) {
    let o = std::process::Command::new(python())
        .arg(root().join("tests/scale_sql.py"))
        .arg(tables)
        .arg(dataset)
        .output()
        .expect("python runs");
    assert!(
        o.status.success(),
        "{name}: the dataset differs from the one-machine tables:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
