//! `integrador gather plan.json DIR`: the finishing step on one machine,
//! what `scale/spark/integrate.py` does in Spark SQL. The tasks' parts
//! (`DIR/tasks/K`) become one dataset (`DIR/dataset`), a directory a
//! table, partitioned by task where a task's rows are its own:
//!
//! * `states`, `variables`, `events`, `links`, `checkpoints`: each task's
//!   file as it is (a hard link), and for states and variables the rows
//!   a task had still open at its end, ended at the run's end;
//! * `containers`: one row a key: created at its first creation in any
//!   task, destroyed at its last destruction or the run's end, its
//!   `row_order` from the plan (what the run creates before its first
//!   event) or the order of first creations after that;
//! * `types`, `values`: one row a key (a key whose rows differ is a
//!   collision of the hash, refused); `host_aliases` one row a name;
//!   `inputs` one row a task; `clocks` one row a host; `run` one row.

use super::{part_dir, Plan};
use crate::error::{Error, Result};
use crate::tables::columns::{Col, Kind, Names, Table};
use crate::tables::{ALIVE_AT_END, MARKER};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

/// The tables whose rows belong to one task.
const PER_TASK: [&str; 5] = ["states", "variables", "events", "links", "checkpoints"];

/// What the gather made, for its one line.
pub struct Gathered {
    /// The dataset's directory.
    pub dir: PathBuf,
    /// Tasks gathered.
    pub tasks: usize,
    /// Containers after the merge.
    pub containers: usize,
    /// Rows ended at the run's end.
    pub ended: u64,
}

/// A table's rows, each aligned to `cols`.
fn rows(path: &Path, cols: &[Col]) -> Result<Vec<Vec<Field>>> {
    let bad = |e: &dyn std::fmt::Display| Error::in_file(path, format!("{e}"));
    let file = fs::File::open(path).map_err(|e| Error::in_file(path, e))?;
    let reader = SerializedFileReader::new(file).map_err(|e| bad(&e))?;
    let schema = reader.metadata().file_metadata().schema_descr();
    let at: Vec<usize> = cols
        .iter()
        .map(|c| {
            (0..schema.num_columns())
                .find(|&i| schema.column(i).name() == c.name)
                .ok_or_else(|| bad(&format!("no column {}", c.name)))
        })
        .collect::<Result<_>>()?;
    // What a damaged page header claims is checked before it is trusted.
    for g in 0..reader.num_row_groups() {
        let group = reader.get_row_group(g).map_err(|e| bad(&e))?;
        crate::tables::read::sane_pages(group.as_ref(), path)?;
    }
    let mut out = Vec::new();
    for row in reader.get_row_iter(None).map_err(|e| bad(&e))? {
        let row = row.map_err(|e| bad(&e))?;
        let fields: Vec<&Field> = row.get_column_iter().map(|(_, f)| f).collect();
        out.push(
            at.iter()
                .map(|&i| fields.get(i).map_or(Field::Null, |f| (*f).clone()))
                .collect(),
        );
    }
    Ok(out)
}

fn long(f: &Field) -> Option<i64> {
    match f {
        Field::Long(v) => Some(*v),
        _ => None,
    }
}

/// Writes `rows` as table `name` in `tmp`, then puts the file at `to`.
fn write(
    tmp: &Path,
    (name, cols): (&str, &'static [Col]),
    rows: &[Vec<Field>],
    t0: i64,
    to: &Path,
) -> Result<()> {
    let from = tmp.join(format!("{name}.parquet"));
    let fail = |e: std::io::Error| Error::in_file(&from, e);
    let names = Names::default();
    let mut t = Table::create(tmp, name, cols, None, &names, false).map_err(fail)?;
    for row in rows {
        for (c, f) in cols.iter().zip(row) {
            match (c.kind, f) {
                (_, Field::Null) if c.nullable => t.null(),
                (Kind::I64, Field::Long(v)) => t.i64(*v),
                (Kind::I32, Field::Int(v)) => t.i32(*v),
                (Kind::F64, Field::Double(v)) => t.f64(*v),
                (Kind::Str, Field::Str(s)) => t.text(s),
                _ => {
                    return Err(Error::input(format!(
                        "{name}: column {} holds {f}, not a {:?}",
                        c.name, c.kind
                    )))
                }
            }
        }
        t.end().map_err(fail)?;
    }
    t.close(&crate::tables::file_meta(t0)).map_err(fail)?;
    if let Some(d) = to.parent() {
        fs::create_dir_all(d).map_err(|e| Error::in_file(d, e))?;
    }
    fs::rename(&from, to).map_err(fail)
}

/// Puts table `name`'s file of `part` at `to`: a hard link (no copy of
/// the task's rows), a copy where the file system has none.
fn link(part: &Path, name: &str, to: &Path) -> Result<()> {
    let from = part.join(format!("{name}.parquet"));
    if let Some(d) = to.parent() {
        fs::create_dir_all(d).map_err(|e| Error::in_file(d, e))?;
    }
    fs::hard_link(&from, to)
        .or_else(|_| fs::copy(&from, to).map(|_| ()))
        .map_err(|e| Error::in_file(&from, e))
}

/// The rows of every part's table `name`, each with its task.
fn all_rows(parts: &[PathBuf], name: &str, cols: &[Col]) -> Result<Vec<(usize, Vec<Field>)>> {
    let mut out = Vec::new();
    for (k, p) in parts.iter().enumerate() {
        out.extend(
            rows(&p.join(format!("{name}.parquet")), cols)?
                .into_iter()
                .map(|r| (k, r)),
        );
    }
    Ok(out)
}

/// One row a key (the first column); two rows of a key must be equal.
fn distinct(name: &str, rows: Vec<(usize, Vec<Field>)>) -> Result<Vec<Vec<Field>>> {
    let mut by: BTreeMap<String, Vec<Field>> = BTreeMap::new();
    for (_, r) in rows {
        let key = r.first().map(|f| f.to_string()).unwrap_or_default();
        match by.get(&key) {
            Some(seen) if *seen != r => {
                return Err(Error::input(format!(
                    "{name}: two tasks give key {key} different rows: a collision of the 64-bit keys, or an input read differently by two tasks"
                )))
            }
            Some(_) => {}
            None => {
                by.insert(key, r);
            }
        }
    }
    Ok(by.into_values().collect())
}

/// Gathers the parts of `plan`'s tasks under `dir` into `dir/dataset`.
pub fn gather(plan_path: &Path, dir: &Path) -> Result<Gathered> {
    use crate::tables::{CONTAINERS, STATES, TYPES, VALUES, VARIABLES};
    let plan = Plan::read(plan_path)?;
    let parts: Vec<PathBuf> = (0..plan.tasks.len()).map(|k| part_dir(dir, k)).collect();
    for (k, p) in parts.iter().enumerate() {
        if !p.join(MARKER).is_file() {
            return Err(Error::usage(format!(
                "task {k} has not run ({} is missing): run `integrador task {} {k} --tables {}`",
                p.display(),
                plan_path.display(),
                dir.display()
            )));
        }
    }
    refuse_shared_series(&plan, &parts)?;
    let inputs = all_rows(&parts, "inputs", crate::tables::provenance::INPUTS)?;
    // The run's end: the last event of any input, where each task ended
    // what was still open.
    let end = inputs
        .iter()
        .filter_map(|(_, r)| r.get(6).and_then(long))
        .max();
    let target = crate::outdir::DirTarget::resolve(&dir.join("dataset"), MARKER)?;
    let out = target.create()?;
    let o = out.dir().to_path_buf();
    let tmp = o.join(".gather");
    fs::create_dir_all(&tmp).map_err(|e| Error::in_file(&tmp, e))?;
    let mut ended = 0;
    for (k, p) in parts.iter().enumerate() {
        for name in PER_TASK {
            link(
                p,
                name,
                &o.join(name)
                    .join(format!("task={k}"))
                    .join("part-0.parquet"),
            )?;
        }
        for (name, cols, end_col) in [("states", STATES, 6), ("variables", VARIABLES, 4)] {
            let mut open = rows(&p.join(format!("{name}_at_end.parquet")), cols)?;
            if open.is_empty() {
                continue;
            }
            for r in &mut open {
                if let (Some(e), Some(f)) = (end, r.get_mut(end_col)) {
                    *f = Field::Long(e);
                }
            }
            ended += open.len() as u64;
            write(
                &tmp,
                (name, cols),
                &open,
                plan.t0_ns,
                &o.join(name)
                    .join(format!("task={k}"))
                    .join("part-1.parquet"),
            )?;
        }
    }
    let containers = merge_containers(&plan, all_rows(&parts, "containers", CONTAINERS)?, end)?;
    let n = containers.len();
    write(
        &tmp,
        ("containers", CONTAINERS),
        &containers,
        plan.t0_ns,
        &o.join("containers").join("part-0.parquet"),
    )?;
    for (name, cols) in [("types", TYPES), ("values", VALUES)] {
        let rows = distinct(name, all_rows(&parts, name, cols)?)?;
        write(
            &tmp,
            (name, cols),
            &rows,
            plan.t0_ns,
            &o.join(name).join("part-0.parquet"),
        )?;
    }
    provenance(&plan, &parts, &tmp, &o, inputs)?;
    fs::remove_dir(&tmp).map_err(|e| Error::in_file(&tmp, e))?;
    out.commit()?;
    Ok(Gathered {
        dir: dir.join("dataset"),
        tasks: parts.len(),
        containers: n,
        ended,
    })
}

/// `run`, `inputs`, `clocks` and `host_aliases` of the whole run.
fn provenance(
    plan: &Plan,
    parts: &[PathBuf],
    tmp: &Path,
    o: &Path,
    inputs: Vec<(usize, Vec<Field>)>,
) -> Result<()> {
    use crate::tables::provenance::{CLOCKS, HOST_ALIASES, INPUTS, RUN};
    let runs = all_rows(parts, "run", RUN)?;
    let sum = |i: usize| -> i64 {
        runs.iter()
            .filter_map(|(_, r)| r.get(i).and_then(long))
            .sum()
    };
    let run = vec![
        Field::Int(crate::tables::SCHEMA_VERSION),
        Field::Str(env!("CARGO_PKG_VERSION").to_string()),
        Field::Long(plan.t0_ns),
        Field::Null,
        Field::Null,
        Field::Long(sum(5)),
        Field::Long(sum(6)),
    ];
    write(
        tmp,
        ("run", RUN),
        &[run],
        plan.t0_ns,
        &o.join("run").join("part-0.parquet"),
    )?;
    let inputs: Vec<Vec<Field>> = inputs.into_iter().map(|(_, r)| r).collect();
    write(
        tmp,
        ("inputs", INPUTS),
        &inputs,
        plan.t0_ns,
        &o.join("inputs").join("part-0.parquet"),
    )?;
    let clocks = distinct("clocks", all_rows(parts, "clocks", CLOCKS)?)?;
    write(
        tmp,
        ("clocks", CLOCKS),
        &clocks,
        plan.t0_ns,
        &o.join("clocks").join("part-0.parquet"),
    )?;
    // A name's machine has a key wherever a task made its row.
    let mut aliases: BTreeMap<String, Field> = BTreeMap::new();
    for (_, r) in all_rows(parts, "host_aliases", HOST_ALIASES)? {
        let Some(Field::Str(name)) = r.first().cloned() else {
            return Err(Error::input("host_aliases: a row without its name"));
        };
        let id = r.get(1).cloned().unwrap_or(Field::Null);
        let e = aliases.entry(name).or_insert(Field::Null);
        if *e == Field::Null {
            *e = id;
        }
    }
    let aliases: Vec<Vec<Field>> = aliases
        .into_iter()
        .map(|(name, id)| vec![Field::Str(name), id])
        .collect();
    let to = o.join("host_aliases").join("part-0.parquet");
    write(
        tmp,
        ("host_aliases", HOST_ALIASES),
        &aliases,
        plan.t0_ns,
        &to,
    )
}

/// One row a container key: see the module's comment.
fn merge_containers(
    plan: &Plan,
    rows: Vec<(usize, Vec<Field>)>,
    end: Option<i64>,
) -> Result<Vec<Vec<Field>>> {
    // Columns: 0 container_id, 9..=11 pid tid rank, 12 create_ns,
    // 13 destroy_ns, 14 row_order.
    let up_front: HashMap<i64, usize> = plan
        .up_front
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, i))
        .collect();
    // A key's row and its first creation: (time, task, order in the task).
    type First = (i64, usize, i64);
    let mut by: HashMap<i64, (Vec<Field>, First)> = HashMap::new();
    for (task, r) in rows {
        let (Some(id), Some(create), Some(destroy), Some(order)) = (
            r.first().and_then(long),
            r.get(12).and_then(long),
            r.get(13).and_then(long),
            r.get(14).and_then(long),
        ) else {
            return Err(Error::input(
                "containers: a row without its id, times or order",
            ));
        };
        let first = (create, task, order);
        match by.get_mut(&id) {
            None => {
                by.insert(id, (r, first));
            }
            Some((m, f)) => {
                if first < *f {
                    *f = first;
                    m[12] = Field::Long(create);
                }
                let d = long(&m[13]).unwrap_or(destroy);
                m[13] = Field::Long(d.max(destroy));
                for i in 9..=11 {
                    if m[i] == Field::Null {
                        m[i] = r[i].clone();
                    }
                }
            }
        }
    }
    let mut later: Vec<(i64, usize, i64, i64)> = by
        .iter()
        .filter(|(id, _)| !up_front.contains_key(id))
        .map(|(&id, (_, (c, t, o)))| (*c, *t, *o, id))
        .collect();
    later.sort_unstable();
    let rank: HashMap<i64, usize> = later
        .iter()
        .enumerate()
        .map(|(i, x)| (x.3, up_front.len() + i))
        .collect();
    let mut out: Vec<Vec<Field>> = by
        .into_iter()
        .map(|(id, (mut r, _))| {
            let order = up_front.get(&id).or(rank.get(&id)).copied().unwrap_or(0);
            r[14] = Field::Long(order as i64);
            if long(&r[13]) == Some(ALIVE_AT_END) {
                r[13] = end.map_or(Field::Null, Field::Long);
            }
            r
        })
        .collect();
    out.sort_by_key(|r| long(&r[14]));
    Ok(out)
}

/// Two tasks that set the same variable of the same container: a run on
/// one machine keeps the second source's values apart (a type of its own,
/// `crate::series`), which needs to know which source set it first, over
/// the whole run. Refused, naming both inputs.
fn refuse_shared_series(plan: &Plan, parts: &[PathBuf]) -> Result<()> {
    let mut owner: HashMap<(i64, i64), usize> = HashMap::new();
    for (k, r) in all_rows(parts, "series", crate::tables::SERIES)? {
        let pair = (r.first().and_then(long), r.get(1).and_then(long));
        let (Some(c), Some(t)) = pair else { continue };
        match owner.insert((c, t), k) {
            Some(j) if j != k => {
                let input = |i: usize| {
                    let t = plan.tasks.get(i).map(|t| &t.sources[..]).unwrap_or(&[]);
                    let v: Vec<String> = t.iter().map(|s| s.input.display().to_string()).collect();
                    v.join(", ")
                };
                return Err(Error::usage(format!(
                    "tasks {j} ({}) and {k} ({}) set the same series (variable type {t} of container {c}): one run keeps the second apart as a type of its own, which a plan's tasks cannot decide alone; integrate these inputs on one machine",
                    input(j),
                    input(k)
                )));
            }
            _ => {}
        }
    }
    Ok(())
}
