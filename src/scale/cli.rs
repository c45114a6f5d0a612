//! The command lines of `integrador task` and `integrador gather` (a
//! plan's is the run's own, after the word `plan`).

use crate::error::{Error, Result};
use clap::Parser;
use std::ffi::OsString;
use std::path::PathBuf;

/// Converts one task of a plan into its tables: DIR/tasks/K
///
/// Example: integrador task plan.json 3 --tables run.d
#[derive(Parser)]
#[command(name = "integrador task")]
struct TaskArgs {
    /// The plan (`integrador plan ... -o plan.json`)
    plan: PathBuf,
    /// The task's number (0 to the plan's tasks less one)
    task: usize,
    /// The run's directory: the task's tables go to DIR/tasks/K
    #[arg(long, value_name = "DIR")]
    tables: PathBuf,
    /// Cores the task uses (default 1: a task is one executor core's
    /// work, and a scheduler runs as many tasks as it has cores; 0: all)
    #[arg(long, value_name = "N", default_value_t = 1)]
    threads: usize,
    /// No line when done
    #[arg(short, long)]
    quiet: bool,
}

/// Finishes a plan's run once every task is done: DIR/dataset
///
/// Example: integrador gather plan.json run.d
#[derive(Parser)]
#[command(name = "integrador gather")]
struct GatherArgs {
    /// The plan
    plan: PathBuf,
    /// The run's directory, where the tasks wrote DIR/tasks/K
    dir: PathBuf,
    /// No line when done
    #[arg(short, long)]
    quiet: bool,
}

/// Runs `task` or `gather`; `args` start with the subcommand's word.
/// `Ok(false)`: clap printed help or an error (exit 0 or 2 as it says).
pub fn main(args: &[OsString]) -> Result<Option<u8>> {
    let word = args.first().and_then(|a| a.to_str()).unwrap_or("");
    let parsed = match word {
        "task" => TaskArgs::try_parse_from(args).map(Ok),
        _ => GatherArgs::try_parse_from(args).map(Err),
    };
    let parsed = match parsed {
        Ok(p) => p,
        Err(e) => {
            let _ = e.print();
            return Ok(Some(if e.use_stderr() { 2 } else { 0 }));
        }
    };
    match parsed {
        Ok(t) => {
            let report = super::task(&t.plan, t.task, &t.tables, t.threads)?;
            if !t.quiet {
                let events: u64 = report.sources.iter().map(|s| s.events).sum();
                eprintln!(
                    "integrador: task {} done: {} events of {} input(s) in {}",
                    t.task,
                    events,
                    report.sources.len(),
                    super::part_dir(&t.tables, t.task).display()
                );
            }
        }
        Err(g) => {
            let done = super::gather::gather(&g.plan, &g.dir)?;
            if !g.quiet {
                eprintln!(
                    "integrador: gathered {} tasks into {}: {} containers, {} rows ended at the run's end",
                    done.tasks,
                    done.dir.display(),
                    done.containers,
                    done.ended
                );
            }
        }
    }
    Ok(None)
}

/// The run's command line after `plan`, as text (a plan is JSON).
pub fn plan_args(args: &[OsString]) -> Result<Vec<String>> {
    args.iter()
        .map(|a| {
            a.to_str().map(str::to_string).ok_or_else(|| {
                Error::usage(format!(
                    "{}: a plan's arguments must be UTF-8",
                    a.to_string_lossy()
                ))
            })
        })
        .collect()
}
