//! Reading tables back (`integrador paje`): one directory or a dataset
//! of several (the windows of a run), their schema checked, the
//! catalogue of types, values and containers rebuilt as a [`Replica`]
//! the replay reads, and the fact tables scanned by row group, only the
//! groups whose statistics may hold rows that complete in a time range.

use super::{MARKER, SCHEMA_VERSION};
use crate::error::{Error, Result};
use crate::model::{ContainerId, TypeId, ValueId};
use crate::registry::{ContainerDef, TypeDef, TypeKind, ValueDef};
use crate::sink::catalogue::Replica;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::statistics::Statistics;
use parquet::record::{Row, RowAccessor};
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// One table's files, one per directory that has it.
pub struct TableFiles {
    name: &'static str,
    files: Vec<(PathBuf, SerializedFileReader<File>)>,
}

/// A row of a table, read by column name.
pub struct Cells<'a> {
    row: &'a Row,
    at: &'a HashMap<String, usize>,
}

impl Cells<'_> {
    fn col(&self, name: &str) -> usize {
        self.at.get(name).copied().unwrap_or(usize::MAX)
    }
    /// An `INT64` cell; `None` when null or absent.
    pub fn i64(&self, name: &str) -> Option<i64> {
        self.row.get_long(self.col(name)).ok()
    }
    /// An `INT32` cell.
    pub fn i32(&self, name: &str) -> Option<i32> {
        self.row.get_int(self.col(name)).ok()
    }
    /// A `DOUBLE` cell.
    pub fn f64(&self, name: &str) -> Option<f64> {
        self.row.get_double(self.col(name)).ok()
    }
    /// A string cell.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.row.get_string(self.col(name)).ok().map(String::as_str)
    }
}

fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::input(format!("{}: {what}", path.display()))
}

/// Checks what the decoders would trust in a row group's page headers: a
/// dictionary page that claims more values than its bytes can hold (the
/// `parquet` crate sizes its dictionary by the claim: a damaged file asked
/// for 64 GB), a page that claims more values than the group has rows.
pub(crate) fn sane_pages(
    group: &dyn parquet::file::reader::RowGroupReader,
    path: &Path,
) -> Result<()> {
    use parquet::basic::Type;
    use parquet::column::page::Page;
    let rows = group.metadata().num_rows().max(0) as u64;
    for i in 0..group.num_columns() {
        let width: u64 = match group.metadata().column(i).column_type() {
            Type::INT64 | Type::DOUBLE => 8,
            Type::INT32 | Type::FLOAT | Type::BYTE_ARRAY => 4,
            _ => 1,
        };
        let mut pages = group.get_column_page_reader(i).map_err(|e| bad(path, e))?;
        while let Some(page) = pages.get_next_page().map_err(|e| bad(path, e))? {
            let n = u64::from(page.num_values());
            let over = match &page {
                Page::DictionaryPage { buf, .. } => n.saturating_mul(width) > buf.len() as u64,
                _ => n > rows,
            };
            if over {
                return Err(bad(
                    path,
                    format!(
                        "row group damaged: a page of column {} claims {n} values",
                        group.metadata().column(i).column_path()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A row group's smallest and largest value of an `INT64` column.
fn range(stats: Option<&Statistics>) -> Option<(i64, i64)> {
    match stats? {
        Statistics::Int64(s) => Some((*s.min_opt()?, *s.max_opt()?)),
        _ => None,
    }
}

impl TableFiles {
    /// Every row of the groups that may hold a row whose completion (the
    /// largest of `times`) is in `[lo, hi)`, to `f`. Returns the groups
    /// read.
    pub fn scan(
        &self,
        times: &[&str],
        lo: i64,
        hi: i64,
        f: impl FnMut(&Cells) -> Result<()>,
    ) -> Result<usize> {
        self.scan_only(&[], times, lo, hi, f)
    }

    /// [`TableFiles::scan`] reading only the columns `only` (all when
    /// empty): a row's strings are made one by one, a column left out
    /// costs nothing.
    pub fn scan_only(
        &self,
        only: &[&str],
        times: &[&str],
        lo: i64,
        hi: i64,
        mut f: impl FnMut(&Cells) -> Result<()>,
    ) -> Result<usize> {
        let mut read = 0;
        for (path, r) in &self.files {
            let schema = r.metadata().file_metadata().schema_descr();
            let at: HashMap<String, usize> = (0..schema.num_columns())
                .map(|i| (schema.column(i).name().to_string(), i))
                .collect();
            let projection = (!only.is_empty()).then(|| {
                let fields = schema.root_schema().get_fields();
                let kept = fields
                    .iter()
                    .filter(|t| only.contains(&t.name()))
                    .cloned()
                    .collect();
                parquet::schema::types::Type::group_type_builder(schema.root_schema().name())
                    .with_fields(kept)
                    .build()
            });
            let projection = projection.transpose().map_err(|e| bad(path, e))?;
            let row_at: HashMap<String, usize> = match &projection {
                Some(p) => p
                    .get_fields()
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (t.name().to_string(), i))
                    .collect(),
                None => at.clone(),
            };
            for g in 0..r.num_row_groups() {
                let meta = r.metadata().row_group(g);
                // The completion of a row is at least each time's
                // smallest, and at most the largest of their largest.
                let (mut min, mut max) = (i64::MIN, i64::MIN);
                let mut known = !times.is_empty();
                for t in times {
                    match at.get(*t).and_then(|&i| range(meta.column(i).statistics())) {
                        Some((a, b)) => {
                            min = min.max(a);
                            max = max.max(b);
                        }
                        None => known = false,
                    }
                }
                if known && (max < lo || min >= hi) {
                    continue;
                }
                read += 1;
                let group = r.get_row_group(g).map_err(|e| bad(path, e))?;
                sane_pages(&*group, path)?;
                let rows = group
                    .get_row_iter(projection.clone())
                    .map_err(|e| bad(path, e))?;
                for row in rows {
                    let row = row.map_err(|e| bad(path, e))?;
                    f(&Cells {
                        row: &row,
                        at: &row_at,
                    })?;
                }
            }
        }
        Ok(read)
    }

    /// Every row.
    pub fn all(&self, f: impl FnMut(&Cells) -> Result<()>) -> Result<()> {
        self.scan(&[], i64::MIN, i64::MAX, f).map(drop)
    }

    /// The smallest and largest of an `INT64` column by the statistics.
    pub fn span(&self, col: &str) -> Option<(i64, i64)> {
        let mut out: Option<(i64, i64)> = None;
        for (_, r) in &self.files {
            let schema = r.metadata().file_metadata().schema_descr();
            let i = (0..schema.num_columns()).find(|&i| schema.column(i).name() == col)?;
            for g in 0..r.num_row_groups() {
                if let Some((a, b)) = range(r.metadata().row_group(g).column(i).statistics()) {
                    out = Some(out.map_or((a, b), |(x, y)| (x.min(a), y.max(b))));
                }
            }
        }
        out
    }

    /// The smallest value at least `t` of an `INT64` column by which the
    /// rows are sorted: in each file, the first group whose largest
    /// reaches `t` holds it, and only that group is read.
    pub fn first_at_least(&self, col: &str, t: i64) -> Result<Option<i64>> {
        let mut best: Option<i64> = None;
        for (path, r) in &self.files {
            let schema = r.metadata().file_metadata().schema_descr();
            let Some(i) = (0..schema.num_columns()).find(|&i| schema.column(i).name() == col)
            else {
                continue;
            };
            let groups = r.metadata().row_groups();
            let Some(g) = groups
                .iter()
                .position(|m| range(m.column(i).statistics()).is_some_and(|(_, b)| b >= t))
            else {
                continue;
            };
            let group = r.get_row_group(g).map_err(|e| bad(path, e))?;
            sane_pages(&*group, path)?;
            for row in group.get_row_iter(None).map_err(|e| bad(path, e))? {
                let row = row.map_err(|e| bad(path, e))?;
                if let Some(v) = row.get_long(i).ok().filter(|&v| v >= t) {
                    best = Some(best.map_or(v, |b: i64| b.min(v)));
                    break;
                }
            }
        }
        Ok(best)
    }

    /// How many row groups its files have.
    pub fn groups(&self) -> usize {
        self.files.iter().map(|(_, r)| r.num_row_groups()).sum()
    }

    /// The table's name.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

/// A tables directory, or the directories of a run's windows together.
pub struct Dataset {
    dirs: Vec<PathBuf>,
    /// T0 of the run.
    pub t0: i64,
}

impl Dataset {
    /// Opens the directories: each must be ours, of this schema version,
    /// and of the same run's T0.
    pub fn open(dirs: &[PathBuf]) -> Result<Dataset> {
        let mut t0 = None;
        for dir in dirs {
            if !dir.join(MARKER).is_file() {
                return Err(Error::usage(format!(
                    "{}: not a tables directory of integrador (no {MARKER})",
                    dir.display()
                )));
            }
            let run = dir.join("run.parquet");
            if !run.exists() && dir.join("run").is_dir() {
                return Err(Error::usage(format!(
                    "{}: a run gathered from tasks (docs/scale.md), a directory a table: its windows are not read yet; query it with DuckDB or Spark, or write the run's tables on one machine",
                    dir.display()
                )));
            }
            let file = File::open(&run).map_err(|e| bad(&run, e))?;
            let r = SerializedFileReader::new(file).map_err(|e| bad(&run, e))?;
            let meta = r.metadata().file_metadata().key_value_metadata();
            let version = meta
                .and_then(|m| m.iter().find(|k| k.key == "integrador.schema_version"))
                .and_then(|k| k.value.as_deref())
                .and_then(|v| v.parse::<i32>().ok());
            if version != Some(SCHEMA_VERSION) {
                let found = version.map_or("none".to_string(), |v| v.to_string());
                return Err(Error::usage(format!(
                    "{}: tables of schema version {found}; this integrador reads version {SCHEMA_VERSION} (write them again with this version)",
                    dir.display()
                )));
            }
            let mut this = None;
            let files = TableFiles {
                name: "run",
                files: vec![(run.clone(), r)],
            };
            files.all(|c| {
                this = c.i64("t0_ns");
                Ok(())
            })?;
            match (t0, this) {
                (Some(a), Some(b)) if a != b => {
                    return Err(Error::usage(format!(
                        "{}: T0 {} is not the other directories' {}: not windows of one run",
                        dir.display(),
                        crate::time::seconds(b),
                        crate::time::seconds(a)
                    )))
                }
                (None, b) => t0 = b,
                _ => {}
            }
        }
        Ok(Dataset {
            dirs: dirs.to_vec(),
            t0: t0.unwrap_or(0),
        })
    }

    /// One table's files (a directory without it adds none).
    pub fn table(&self, name: &'static str) -> Result<TableFiles> {
        let mut files = Vec::new();
        for dir in &self.dirs {
            let path = dir.join(format!("{name}.parquet"));
            let Ok(file) = File::open(&path) else {
                continue;
            };
            let r = SerializedFileReader::new(file).map_err(|e| bad(&path, e))?;
            files.push((path, r));
        }
        Ok(TableFiles { name, files })
    }
}

/// What the dataset declares, as the replay's catalogue, with the
/// tables' 64-bit keys mapped to dense ids.
#[derive(Default)]
pub struct Catalogue {
    /// The definitions.
    pub defs: Replica,
    /// Type keys to ids.
    pub types: HashMap<i64, TypeId>,
    /// Value keys to ids.
    pub values: HashMap<i64, ValueId>,
    /// Container keys to ids.
    pub containers: HashMap<i64, ContainerId>,
    /// Every container that has a row: (create, destroy, row order, id).
    pub lives: Vec<(i64, i64, i64, ContainerId)>,
}

fn nature(word: &str, from: Option<TypeId>, to: Option<TypeId>) -> TypeKind {
    match word {
        "state" => TypeKind::State,
        "variable" => TypeKind::Variable,
        "event" => TypeKind::Event,
        "link" => TypeKind::Link {
            start: from.unwrap_or(TypeId(0)),
            end: to.unwrap_or(TypeId(0)),
        },
        _ => TypeKind::Container,
    }
}

impl Catalogue {
    /// Reads the types, values and containers of `data`.
    pub fn read(data: &Dataset) -> Result<Catalogue> {
        let mut cat = Catalogue::default();
        let mut rows = Vec::new();
        data.table("types")?.all(|c| {
            let key = c.i64("type_id").unwrap_or(0);
            if !cat.types.contains_key(&key) {
                let id = TypeId(cat.types.len() as u32);
                cat.types.insert(key, id);
                rows.push((
                    id,
                    c.i64("parent_type_id"),
                    c.str("nature").unwrap_or("").to_string(),
                    c.str("name").unwrap_or("").to_string(),
                    c.str("color").map(str::to_string),
                    c.str("unit").map(str::to_string),
                    c.i64("from_type_id"),
                    c.i64("to_type_id"),
                ));
            }
            Ok(())
        })?;
        let ty = |cat: &Catalogue, k: Option<i64>| k.and_then(|k| cat.types.get(&k).copied());
        for (id, parent, nat, name, color, unit, from, to) in rows {
            let def = TypeDef {
                kind: nature(&nat, ty(&cat, from), ty(&cat, to)),
                parent: ty(&cat, parent),
                name: name.into(),
                color: color.map(Into::into),
                unit: unit.map(Into::into),
                role: None,
            };
            cat.defs.put_type(id, def);
        }
        data.table("values")?.all(|c| {
            let key = c.i64("value_id").unwrap_or(0);
            if !cat.values.contains_key(&key) {
                let id = ValueId(cat.values.len() as u32);
                cat.values.insert(key, id);
                let def = ValueDef {
                    ty: ty(&cat, c.i64("type_id")).unwrap_or(TypeId(0)),
                    name: c.str("name").unwrap_or("").to_string(),
                    color: c.str("color").map(str::to_string),
                };
                cat.defs.put_value(id, def);
            }
            Ok(())
        })?;
        let mut rows = Vec::new();
        data.table("containers")?.all(|c| {
            let key = c.i64("container_id").unwrap_or(0);
            if !cat.containers.contains_key(&key) {
                let id = ContainerId(cat.containers.len() as u32);
                cat.containers.insert(key, id);
                let ids = crate::model::ProcIds {
                    pid: c.i64("pid"),
                    tid: c.i64("tid"),
                    rank: c.i64("rank"),
                };
                let name = c.str("name").unwrap_or("").to_string();
                rows.push((id, c.i64("parent_id"), c.i64("type_id"), name, ids));
                let life = (
                    c.i64("create_ns").unwrap_or(0),
                    c.i64("destroy_ns").unwrap_or(0),
                    c.i64("row_order").unwrap_or(0),
                    id,
                );
                cat.lives.push(life);
            }
            Ok(())
        })?;
        // Parents are named by key: mapped once every container has its id.
        for (id, parent, t, name, ids) in rows {
            let def = ContainerDef {
                ty: ty(&cat, t).unwrap_or(TypeId(0)),
                parent: parent.and_then(|p| cat.containers.get(&p).copied()),
                name: name.into(),
                ids,
            };
            cat.defs.put_container(id, def);
        }
        cat.lives.sort_unstable();
        Ok(cat)
    }

    /// A container by key; the root for 0.
    pub fn container(&self, key: i64, data: &Path) -> Result<ContainerId> {
        if key == 0 {
            return Ok(ContainerId::ROOT);
        }
        self.containers.get(&key).copied().ok_or_else(|| {
            Error::input(format!(
                "{}: container {key} has no row in the containers table (a window's tables name the containers that ended in it; give the whole run's, or every window's together)",
                data.display()
            ))
        })
    }
}
