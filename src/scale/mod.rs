//! A run spread over many machines (`docs/scale.md`): a plan does the
//! cheap global work once (lists the inputs as tasks, fixes T0, the
//! clocks and what the sources' opens registered: hosts, ranks, names);
//! each task converts one source alone with those facts into tables of
//! its own; the gather (here, or Spark SQL in `scale/spark/integrate.py`)
//! finishes what joins tasks: the catalogue merged, the rows still open
//! at a task's end ended at the run's. Ids are keys from what a thing is
//! ([`crate::sink::ids`]), the same in every task: nothing is renumbered.

pub mod cli;
pub mod gather;

use crate::cli::{CommandLine, Config, Output};
use crate::convert::SourceKind;
use crate::error::{Error, Result};
use crate::registry::Snapshot;
use crate::sink::ids::container_key;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What a plan file says it is.
pub const FORMAT: &str = "integrador-plan";
/// The plan file's version.
pub const VERSION: u32 = 1;

/// A plan: every fact a task needs, and the tasks (`docs/scale.md`
/// documents each field).
#[derive(Debug, Serialize, Deserialize)]
pub struct Plan {
    /// [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The integrador that made it: a task of another is refused.
    pub tool_version: String,
    /// The directory the command line's paths are relative to.
    pub base: PathBuf,
    /// The command line of the run, as given after `plan`.
    pub args: Vec<String>,
    /// The run's T0, ns since 1970 on the reference clock.
    pub t0_ns: i64,
    /// The link channels every source's open handed out.
    pub channels: u32,
    /// The tasks: consecutive sources, in the merge's order.
    pub tasks: Vec<Task>,
    /// The containers the run creates before its first event, in their
    /// order: a container's `row_order` is its place here.
    pub up_front: Vec<i64>,
    /// What the sources' opens registered.
    pub registry: Snapshot,
    /// With `--sync-from-messages`: the clocks the plan estimated from
    /// every message of the run, which every task applies.
    pub clocks_from_messages: Option<crate::clockfit::Estimates>,
}

/// One task: consecutive sources of the run, converted together.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Task {
    /// Its number.
    pub task: usize,
    /// The index of its first source in the whole run (`inputs.source`).
    pub first_source: usize,
    /// The size of its inputs, bytes.
    pub bytes: u64,
    /// Its sources, in the merge's order.
    pub sources: Vec<TaskSource>,
}

/// A source of a task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskSource {
    /// Its index in the whole run.
    pub source: usize,
    /// The option that reads it (`-pcp`).
    pub option: String,
    /// The input it converts (a file, an archive, a libRastro run's
    /// first file).
    pub input: PathBuf,
    /// Its kind's place in the table of kinds, and its place among that
    /// kind's sources.
    pub kind: usize,
    /// See `kind`.
    pub nth: usize,
    /// The link channels handed out before it opened.
    pub channels_before: u32,
    /// The files it reads.
    pub files: Vec<PathBuf>,
}

/// A task's files by option, where `crate::convert::expand` takes them.
static FILES: std::sync::Mutex<Option<std::collections::HashMap<String, Vec<PathBuf>>>> =
    std::sync::Mutex::new(None);

/// The files a plan's task gives `option` in place of the command
/// line's words: its own source's, and none for another option. A task
/// lists, checks and reads only those.
pub fn files_of(option: &str) -> Option<Vec<PathBuf>> {
    FILES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map(|m| m.get(option).cloned().unwrap_or_default())
}

/// Whether a plan's task is reading its command line: a kind's options
/// may then come without its files (they are another task's).
pub fn in_task() -> bool {
    FILES.lock().unwrap_or_else(|e| e.into_inner()).is_some()
}

impl Plan {
    /// Reads and checks a plan file.
    pub fn read(path: &Path) -> Result<Plan> {
        let text = std::fs::read(path).map_err(|e| Error::in_file(path, e))?;
        let plan: Plan = serde_json::from_slice(&text)
            .map_err(|e| Error::in_file(path, format!("not a plan: {e}")))?;
        if plan.format != FORMAT || plan.version != VERSION {
            return Err(Error::in_file(
                path,
                format!(
                    "a plan of format {} {}, not {FORMAT} {VERSION}",
                    plan.format, plan.version
                ),
            ));
        }
        if plan.tool_version != env!("CARGO_PKG_VERSION") {
            return Err(Error::in_file(
                path,
                format!(
                    "made by integrador {}, this is {}: make the plan again with this one",
                    plan.tool_version,
                    env!("CARGO_PKG_VERSION")
                ),
            ));
        }
        Ok(plan)
    }
}

/// What `plan` did, for its one line.
pub struct Planned {
    /// Tasks.
    pub tasks: usize,
    /// Inputs.
    pub inputs: usize,
}

/// `integrador plan ARGS -o plan.json`: opens the run as a run does,
/// then writes the plan instead of converting.
pub fn plan(
    cfg: &Config,
    mut kinds: Vec<Box<dyn SourceKind>>,
    args: Vec<String>,
) -> Result<Planned> {
    let Some(Output::File(out)) = cfg.output.clone() else {
        return Err(Error::usage(
            "a plan is written to a file: give -o plan.json",
        ));
    };
    if cfg.write_sync.is_some() {
        return Err(Error::usage(
            "--write-sync writes what a whole run's messages say: not a plan's (run once with --sync-from-messages --write-sync FILE)",
        ));
    }
    if cfg.from.is_some() || cfg.to.is_some() || cfg.tables.is_some() || cfg.report.is_some() {
        return Err(Error::usage(
            "a plan converts the whole run into tables: --from, --to, --tables and --report are not a plan's (read a window of the gathered tables with `integrador paje`)",
        ));
    }
    let target = crate::output::Target::resolve(&Output::File(out.clone()))?;
    let crate::run::Opened {
        reg,
        merge,
        clocks,
        mut marks,
        at_open,
        origin,
        inputs,
        ..
    } = crate::run::open(cfg, &mut kinds, None, None)?;
    target.refuse_inputs(inputs.iter().map(|(o, p)| (*o, p.as_path())))?;
    let options: Vec<&str> = kinds.iter().map(|k| k.option()).collect();
    marks.sort_unstable_by_key(|m| (m.kind, m.nth));
    let sources = merge.sources();
    if marks.len() != sources.len() {
        return Err(Error::input(format!(
            "the kinds opened {} sources and asked for {}: a bug",
            sources.len(),
            marks.len()
        )));
    }
    let mut listed = Vec::with_capacity(sources.len());
    for (i, (s, m)) in sources.iter().zip(marks).enumerate() {
        listed.push(TaskSource {
            source: i,
            option: options.get(m.kind).copied().unwrap_or("").to_string(),
            input: s.stats().path.clone(),
            kind: m.kind,
            nth: m.nth,
            channels_before: m.channels,
            files: m.files,
        });
    }
    let tasks = pack(listed, cfg.task_mb.saturating_mul(1_000_000))?;
    let plan = Plan {
        format: FORMAT.into(),
        version: VERSION,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        base: std::env::current_dir()
            .map_err(|e| Error::input(format!("the current directory: {e}")))?,
        args,
        t0_ns: origin,
        channels: at_open.as_ref().map_or(0, |s| s.link_channels),
        up_front: creation_order(&reg),
        registry: at_open.unwrap_or_default(),
        clocks_from_messages: clocks.estimates().cloned(),
        tasks,
    };
    let text = serde_json::to_vec_pretty(&plan).map_err(|e| Error::input(e.to_string()))?;
    let mut file = target.create()?;
    std::io::Write::write_all(&mut file, &text).map_err(|e| Error::in_file(&out, e))?;
    file.commit(&target.shown())?;
    Ok(Planned {
        tasks: plan.tasks.len(),
        inputs: inputs.len(),
    })
}

/// Consecutive sources joined into tasks of at least `least` bytes of
/// input (0: a task a source). Each task's sources are a run of the
/// merge's order, so a task's `source` is its first's plus the place in
/// it.
fn pack(sources: Vec<TaskSource>, least: u64) -> Result<Vec<Task>> {
    let mut tasks: Vec<Task> = Vec::new();
    for s in sources {
        let mut bytes = 0u64;
        for f in &s.files {
            bytes += std::fs::metadata(f)
                .map_err(|e| Error::in_file(f, e))?
                .len();
        }
        match tasks.last_mut() {
            Some(t) if t.bytes < least => {
                t.bytes += bytes;
                t.sources.push(s);
            }
            _ => tasks.push(Task {
                task: tasks.len(),
                first_source: s.source,
                bytes,
                sources: vec![s],
            }),
        }
    }
    Ok(tasks)
}

/// The keys of the containers a run creates before its first event, in
/// the order it creates them: each after its parents.
fn creation_order(reg: &crate::registry::Registry) -> Vec<i64> {
    let mut made = std::collections::HashSet::new();
    let mut out = Vec::new();
    for c in reg.up_front_order() {
        let mut chain = Vec::new();
        let mut at = Some(c);
        while let Some(x) = at.filter(|x| !made.contains(x)) {
            chain.push(x);
            at = reg.container(x).parent;
        }
        for x in chain.into_iter().rev() {
            made.insert(x);
            out.push(container_key(reg, x) as i64);
        }
    }
    out
}

/// The command line of a plan's run, parsed as `integrador ARGS` is.
fn parse_run(args: &[String]) -> Result<(Config, Vec<Box<dyn SourceKind>>)> {
    let mut kinds = crate::convert::kinds();
    let line = CommandLine::new(&kinds);
    let argv = std::iter::once("integrador".to_string())
        .chain(args.iter().cloned())
        .map(OsString::from);
    let argv = line.rewrite(argv)?;
    let (cli, matches) = line
        .parse(argv)
        .map_err(|e| Error::usage(format!("the plan's command line: {}", e.kind())))?;
    let cfg = cli.resolve()?;
    crate::cli::take_sources(&mut kinds, &matches)?;
    Ok((cfg, kinds))
}

/// Where task `k`'s tables go under `dir`.
pub fn part_dir(dir: &Path, k: usize) -> PathBuf {
    dir.join("tasks").join(k.to_string())
}

/// `integrador task plan.json K --tables DIR`: converts source K alone,
/// as the whole run would, into `DIR/tasks/K` (written whole or not at
/// all: a task run again replaces its own part).
pub fn task(
    plan_path: &Path,
    k: usize,
    dir: &Path,
    threads: usize,
) -> Result<crate::run::RunReport> {
    let plan = Plan::read(plan_path)?;
    let Some(t) = plan.tasks.get(k).cloned() else {
        return Err(Error::usage(format!(
            "{}: has tasks 0 to {}, not {k}",
            plan_path.display(),
            plan.tasks.len().saturating_sub(1)
        )));
    };
    let dir = std::path::absolute(dir).map_err(|e| Error::in_file(dir, e))?;
    let tasks = dir.join("tasks");
    std::fs::create_dir_all(&tasks).map_err(|e| Error::in_file(&tasks, e))?;
    std::env::set_current_dir(&plan.base).map_err(|e| Error::in_file(&plan.base, e))?;
    let mut files: std::collections::HashMap<String, Vec<PathBuf>> = crate::convert::kinds()
        .iter()
        .map(|k| (k.option().to_string(), Vec::new()))
        .collect();
    let mut only = Vec::new();
    for s in &t.sources {
        // Its kind sees the task's files alone: its place among them.
        let nth = only.iter().filter(|&&(k, _, _)| k == s.kind).count();
        only.push((s.kind, nth, s.channels_before));
        files
            .entry(s.option.clone())
            .or_default()
            .extend(s.files.iter().cloned());
    }
    *FILES.lock().unwrap_or_else(|e| e.into_inner()) = Some(files);
    let parsed = parse_run(&plan.args);
    *FILES.lock().unwrap_or_else(|e| e.into_inner()) = None;
    let (mut cfg, kinds) = parsed?;
    cfg.output = None;
    cfg.report = None;
    cfg.tables = Some(part_dir(&dir, k));
    cfg.task = Some(t.first_source as u32);
    cfg.threads = threads;
    cfg.quiet = true;
    let seed = crate::run::Seed {
        registry: plan.registry,
        only,
        channels: plan.channels,
        origin: plan.t0_ns,
        inputs: t.sources.iter().map(|s| s.input.clone()).collect(),
        estimates: plan.clocks_from_messages,
    };
    crate::run::integrate(&cfg, kinds, Some(seed))
}
