//! The command line of the README: the thesis' single-dash options
//! (appendix B) and their GNU `--long` forms are the same options.
//! [`Cli`] holds the core options; each kind of source brings its own
//! ([`crate::convert::SourceKind::args`]) and takes their values.
//! [`CommandLine::rewrite`] turns single-dash words into `--long` ones
//! before clap sees them.

use crate::convert::SourceKind;
use crate::error::{Error, Result};
use clap::{Args, FromArgMatches, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;

/// The thesis' option names besides the sources' (appendix B), written
/// with one dash.
const THESIS_CORE: [&str; 3] = ["sync", "hierarchy", "output"];

/// The examples of `--help`: each runs as written from the top of a
/// checkout, on the shipped data (`tests/cli.rs` runs every one).
pub const EXAMPLES: &str = "\
Examples (from the top of a checkout; they use the shipped examples/):
  # Ganglia alone (thesis appendix B, example 3)
  integrador -hierarchy hierarchies/ganglia.toml \\
    -ganglia examples/grid/domain-a.traced -output ganglia.paje

  # Two administrative domains, the second collector's clock corrected
  integrador -hierarchy hierarchies/grid.toml -sync examples/grid/timesync \\
    -ganglia examples/grid/domain-a.traced examples/grid/domain-b.traced \\
    -o grid.paje

  # An MPI program (MPE log, ranks anchored), its kernel view and monitors
  integrador -hierarchy hierarchies/mpi+os+ganglia+pcp.toml \\
    -mpi examples/pingpong-localhost/mpi_pingpong.clog2 \\
    -mpinodes examples/pingpong-localhost/mpi.nodes \\
    -os examples/pingpong-localhost/vm.os \\
    -ganglia examples/pingpong-localhost/ganglia.traced \\
    -pcp 'examples/pingpong-localhost/pcp/*' -o pingpong.paje

  # A DECK program, one libRastro file per thread
  integrador -hierarchy hierarchies/deck+os+ganglia+pcp.toml \\
    -deck 'examples/deck/threads/*.rst' -o deck.paje

  # Another libRastro instrumentation (akypuera's MPI tracer)
  integrador -deck 'examples/deck/akypuera/*.rst' --deck-map akypuera \\
    -o aky.paje

  # No sync file: clocks corrected from the messages, kept as a sync file
  integrador -deck 'examples/deck/akypuera/*.rst' --deck-map akypuera \\
    --sync-from-messages --write-sync aky.sync -o aky.paje

  # Ganglia and the PCP archive pmlogger wrote on the same machine
  integrador -hierarchy hierarchies/ganglia+pcp.toml \\
    -ganglia examples/pingpong-localhost/ganglia.traced \\
    -pcp examples/pingpong-localhost/pcp/vm -o cluster.paje

  # An ftrace capture (its integrador_epoch= marker places it)
  integrador -os examples/pingpong-localhost/vm.trace \\
    -ganglia examples/pingpong-localhost/ganglia.traced -o ftrace.paje

  # perf script text has no marker: say when the trace clock's zero was
  integrador -os examples/pipe/vm.perf --boot-epoch 1795262171.322076 \\
    -o perf.paje

  # The same run also as Parquet tables, for DuckDB and Spark
  integrador -hierarchy hierarchies/grid.toml -sync examples/grid/timesync \\
    -ganglia examples/grid/domain-a.traced examples/grid/domain-b.traced \\
    -o grid.paje --tables grid.tables

  # The same run for Paraver (pingpong.prv, .pcf, .row) and for OTF2
  # tools (pingpong.otf2/traces.otf2; needs libotf2)
  integrador -mpi examples/pingpong-localhost/mpi_pingpong.clog2 \\
    -mpinodes examples/pingpong-localhost/mpi.nodes -o pingpong.prv
  integrador -mpi examples/pingpong-localhost/mpi_pingpong.clog2 \\
    -mpinodes examples/pingpong-localhost/mpi.nodes --format otf2 -o pingpong.otf2

  # A page that draws every host's clock correction (opens from disk)
  integrador -hierarchy hierarchies/grid.toml -sync examples/grid/timesync \\
    -ganglia examples/grid/domain-a.traced examples/grid/domain-b.traced \\
    --report clocks.html

  # One minute of the run only (a window; docs/windows.md)
  integrador -hierarchy hierarchies/grid.toml -sync examples/grid/timesync \\
    -ganglia examples/grid/domain-a.traced examples/grid/domain-b.traced \\
    --from +60s --to +120s -o minute.paje

  # The same minute from the tables, reading only what it needs
  integrador paje grid.tables --from +60s --to +120s -o minute.paje

  # Validate any Pajé trace with pj_dump's rules
  integrador check grid.paje

  # Any Pajé trace pj_dump reads, as the same tables (docs/tables.md)
  integrador tables grid.paje --tables grid-replayed.tables

  # The run spread over tasks any scheduler runs, then gathered (docs/scale.md)
  integrador plan -ganglia 'examples/grid/*.traced' --task-mb 0 -o plan.json
  seq 0 1 | xargs -P 2 -I K integrador task plan.json K --tables run.d
  integrador gather plan.json run.d

Exit status: 0 complete output, 1 input or output problem (no output file
is left), 2 usage problem (unknown or missing option, bad option value).
Formats: docs/formats.md; the trace (Pajé, Paraver, OTF2): docs/output.md; the tables:
docs/tables.md; windows: docs/windows.md; many machines: docs/scale.md; the clocks page: docs/clocks-report.md; hierarchy files:
hierarchies/README.md.";

/// What a bare `integrador` prints: a short usage, not clap's complaint
/// about a missing `--output`.
pub const SHORT_USAGE: &str = "\
integrador: one Pajé trace from many monitoring tools

usage: integrador [SOURCES...] [-sync FILE] [-hierarchy FILE] -o OUTPUT [--tables DIR]
       integrador check TRACE
       integrador tables TRACE --tables DIR
       integrador paje TABLES [--from T1] [--to T2] -o OUTPUT
       integrador plan [SOURCES...] -o plan.json; task plan.json K --tables DIR; gather plan.json DIR

sources: -ganglia FILES  -pcp ARCHIVES  -mpi FILES -mpinodes FILE
         -deck FILES  -os FILES

example: integrador -ganglia examples/grid/domain-a.traced -o ganglia.paje
`integrador --help` lists every option with more examples.";

/// One Pajé trace from many monitoring tools.
///
/// Reads cluster monitors (Ganglia), kernel scheduler traces, MPI traces
/// (MPE CLOG2 and CLOG), libRastro traces (DECK, akypuera, any
/// instrumentation with an event map) and PCP archives (v2, v3, xz, zstd);
/// corrects every time
/// to one reference clock (Maillet–Tron, from a rastro_timesync file);
/// unifies the hosts and processes of all inputs as a hierarchy file says;
/// writes one time-ordered Pajé trace for PajeNG and ViTE.
#[derive(Debug, Parser)]
#[command(
    name = "integrador",
    version,
    after_help = EXAMPLES,
    override_usage = "integrador [-ganglia FILES] [-pcp ARCHIVES] [-mpi FILES -mpinodes FILE] [-deck FILES] [-os FILES]\n                  [-sync FILE] [-hierarchy FILE] [OPTIONS] -o OUTPUT\n       integrador check TRACE\n       integrador tables TRACE --tables DIR\n       integrador paje TABLES... [--from T1] [--to T2] -o OUTPUT\n       integrador plan [SOURCES...] [OPTIONS] -o plan.json | integrador task plan.json K --tables DIR | integrador gather plan.json DIR\n       integrador completions SHELL | integrador man"
)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Cli {
    /// Subcommand.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Clock-sync file written by rastro_timesync; also -sync
    #[arg(long, value_name = "FILE", help_heading = "Clocks and hierarchy")]
    pub sync: Option<PathBuf>,
    /// Fit all sync lines per host (least squares) instead of first and last
    #[arg(long, help_heading = "Clocks and hierarchy")]
    pub sync_fit: bool,
    /// Correct the clocks no sync file corrects from the messages between
    /// hosts (MPI, DECK): a receive comes after its send
    #[arg(long, help_heading = "Clocks and hierarchy")]
    pub sync_from_messages: bool,
    /// Write the clock corrections the messages give as a sync file
    /// (-sync reads it back)
    #[arg(long, value_name = "FILE", help_heading = "Clocks and hierarchy")]
    pub write_sync: Option<PathBuf>,
    /// Hierarchy file (TOML, hierarchies/); default: Grid > Cluster > Machine > Process > Thread; also -hierarchy
    #[arg(long, value_name = "FILE", help_heading = "Clocks and hierarchy")]
    pub hierarchy: Option<PathBuf>,
    /// The Pajé trace to write; `-` writes to standard output; also -output
    #[arg(
        short = 'o',
        long,
        value_name = "FILE",
        required_unless_present_any = ["tables", "report"],
        help_heading = "Output"
    )]
    pub output: Option<String>,
    /// The format of -o: paje, paraver (FILE.prv with its .pcf and .row),
    /// otf2 (an archive directory); default: paraver for a name ending
    /// in .prv, else paje (docs/output.md)
    #[arg(long, value_name = "FORMAT", value_enum, help_heading = "Output")]
    pub format: Option<crate::outputs::Format>,
    /// Also (or only) write the run as Parquet entity tables in DIR, for
    /// DuckDB and Spark (docs/tables.md); an existing DIR is replaced
    /// only if integrador wrote it
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub tables: Option<PathBuf>,
    /// Also (or only) write a page of the clocks (FILE.html, one file that
    /// opens from disk): each host's correction drawn with its sync
    /// measurements and the messages that bound it, causality per host
    /// pair before and after, which input covers which host when, and the
    /// summary (docs/clocks-report.md)
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub report: Option<PathBuf>,
    /// Write epoch seconds instead of times relative to T0 (for programs: a viewer's axis then starts in 1970)
    #[arg(long, help_heading = "Output")]
    pub absolute_time: bool,
    /// How far back in time a source may step and still be sorted
    #[arg(long, value_name = "DURATION", default_value = "10ms", value_parser = crate::time::parse_duration, allow_hyphen_values = true, help_heading = "Output")]
    pub reorder_window: i64,
    /// Write only the window from T1 on (epoch seconds, as 1795264448.5,
    /// or a duration after T0, as +90s): Pajé cut at its edges, tables by
    /// the rows that end in it (docs/windows.md)
    #[arg(long, value_name = "T1", value_parser = crate::time::parse_instant, allow_hyphen_values = true, help_heading = "Window")]
    pub from: Option<crate::time::Instant>,
    /// Write only the window before T2 (as --from)
    #[arg(long, value_name = "T2", value_parser = crate::time::parse_instant, allow_hyphen_values = true, help_heading = "Window")]
    pub to: Option<crate::time::Instant>,
    /// Reference points in the tables (checkpoints of what is open) every
    /// DURATION of the run's time, so that any window opens from the
    /// nearest; default: every hour and every 256 Ki rows; 0: none
    #[arg(long, value_name = "DURATION", value_parser = crate::time::parse_duration, help_heading = "Window")]
    pub checkpoint_every: Option<i64>,
    /// `integrador plan`: join consecutive sources into tasks of at least
    /// MB megabytes of input (0: a task a source; docs/scale.md)
    #[arg(long, value_name = "MB", default_value_t = 64, help_heading = "Output")]
    pub task_mb: u64,
    /// No progress, no summary (warnings are still printed)
    #[arg(short = 'q', long, help_heading = "Output")]
    pub quiet: bool,
    /// Cores to use: decoders of large inputs get their own, the writer
    /// formats on a thread of its own where that pays (default 0: all;
    /// 1: everything on one thread); the trace is the same
    #[arg(long, value_name = "N", default_value_t = 0, help_heading = "Output")]
    pub threads: usize,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate a Pajé trace with pj_dump's rules; every finding with its line
    Check {
        /// The trace to check
        file: PathBuf,
    },
    /// Replay any Pajé trace that pj_dump reads into entity tables (Parquet
    /// for DuckDB and Spark, docs/tables.md), as --tables writes a run's
    Tables {
        /// The trace to replay
        file: PathBuf,
        /// The tables' directory (replaced only if integrador wrote it)
        #[arg(long, value_name = "DIR")]
        tables: PathBuf,
    },
    /// Write the Pajé trace of a window of a run from its tables (or from
    /// the tables of its windows together), reading only the row groups
    /// the window needs; without --from/--to, the whole run
    ///
    /// Example: integrador paje run.tables --from +3600s --to +3660s -o minute.paje
    Paje {
        /// The tables' directories (one run's, or its windows')
        #[arg(required = true)]
        tables: Vec<PathBuf>,
        /// The window's start: epoch seconds or a duration after T0 (+90s)
        #[arg(long, value_name = "T1", value_parser = crate::time::parse_instant, allow_hyphen_values = true)]
        from: Option<crate::time::Instant>,
        /// The window's end (excluded), as --from
        #[arg(long, value_name = "T2", value_parser = crate::time::parse_instant, allow_hyphen_values = true)]
        to: Option<crate::time::Instant>,
        /// The Pajé trace to write; `-` writes to standard output
        #[arg(short = 'o', long, value_name = "FILE")]
        output: String,
    },
    /// Print a shell completion script (e.g. `integrador completions bash > /etc/bash_completion.d/integrador`)
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
    /// Print the manual page, in roff (e.g. `integrador man > integrador.1`)
    Man,
    /// Record a monitor's data as it is collected (the thesis' recorder)
    #[command(subcommand)]
    Record(Record),
}

/// What `integrador record` records.
#[derive(Debug, Subcommand)]
pub enum Record {
    /// Poll gmond (or gmetad's XML port) and append every new sample to a
    /// .traced recording, which -ganglia reads
    ///
    /// Example: integrador record ganglia localhost:8649 -o cluster.traced --every 5s --for 1h
    Ganglia(Box<crate::record::GangliaArgs>),
}

/// The words that start a subcommand: what follows is the subcommand's.
pub const SUBCOMMANDS: [&str; 6] = ["check", "completions", "man", "paje", "record", "tables"];

/// Where the trace goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Standard output.
    Stdout,
    /// A file, written under a temporary name and renamed at the end.
    File(PathBuf),
}

impl Output {
    /// `-o`'s word: `-` is standard output.
    pub fn from_arg(word: &str) -> Output {
        match word {
            "-" => Output::Stdout,
            p => Output::File(PathBuf::from(p)),
        }
    }
}

/// The resolved configuration of an integration run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Sync file.
    pub sync: Option<PathBuf>,
    /// Fit all sync lines.
    pub sync_fit: bool,
    /// Correct clocks from the messages.
    pub sync_from_messages: bool,
    /// Where to write the corrections as a sync file.
    pub write_sync: Option<PathBuf>,
    /// Hierarchy file (None = built-in).
    pub hierarchy: Option<PathBuf>,
    /// The Pajé trace (none with `--tables` alone).
    pub output: Option<Output>,
    /// The format of `output`.
    pub format: crate::outputs::Format,
    /// The entity tables' directory.
    pub tables: Option<PathBuf>,
    /// The clocks report page.
    pub report: Option<PathBuf>,
    /// Epoch seconds in the output.
    pub absolute_time: bool,
    /// Reorder window, ns.
    pub reorder_window: i64,
    /// The window's start.
    pub from: Option<crate::time::Instant>,
    /// The window's end.
    pub to: Option<crate::time::Instant>,
    /// Checkpoints every so many ns (0: none; `None`: the default).
    pub checkpoint_every: Option<i64>,
    /// No progress, no summary.
    pub quiet: bool,
    /// Cores to use (0: all; 1: one thread).
    pub threads: usize,
    /// A plan's task: the index of its first source (`docs/scale.md`).
    pub task: Option<u32>,
    /// A plan's tasks' least size, MB.
    pub task_mb: u64,
}

/// The single-dash words clap knows besides the thesis options.
const SHORT_FLAGS: [&str; 4] = ["-o", "-q", "-h", "-V"];

/// The command line of a run: the core options of [`Cli`] and every kind
/// of source's own ([`SourceKind::args`]).
pub struct CommandLine {
    cmd: clap::Command,
    /// Options the thesis spells with one dash.
    thesis: Vec<&'static str>,
    /// Options that take exactly one value word (their value is never
    /// read as an option, so `--mpi-start -5` and `-o -` reach clap intact).
    value_options: Vec<String>,
}

impl CommandLine {
    /// The command line of `kinds` (their options first in `--help`).
    pub fn new(kinds: &[Box<dyn SourceKind>]) -> CommandLine {
        let mut cmd = clap::Command::new("integrador");
        let mut thesis = Vec::new();
        for k in kinds {
            cmd = cmd.args(k.args());
            thesis.extend_from_slice(k.thesis_options());
        }
        thesis.extend(THESIS_CORE);
        let mut cmd = Cli::augment_args(cmd);
        cmd.build();
        let value_options = cmd
            .get_arguments()
            .filter(|a| {
                a.get_action().takes_values()
                    && a.get_num_args()
                        .is_none_or(|r| r.min_values() == 1 && r.max_values() == 1)
            })
            .flat_map(|a| {
                let long = a.get_long().map(|l| format!("--{l}"));
                let short = a.get_short().map(|c| format!("-{c}"));
                long.into_iter().chain(short)
            })
            .collect();
        CommandLine {
            cmd,
            thesis,
            value_options,
        }
    }

    /// The clap command (for parsing, completions, the manual page).
    pub fn command(&self) -> clap::Command {
        self.cmd.clone()
    }

    /// Parses rewritten words into the core options and the matches the
    /// kinds take theirs from.
    pub fn parse(
        &self,
        args: Vec<OsString>,
    ) -> std::result::Result<(Cli, clap::ArgMatches), clap::Error> {
        let m = self.command().try_get_matches_from(args)?;
        let cli = Cli::from_arg_matches(&m)?;
        Ok((cli, m))
    }

    /// Rewrites the thesis' single-dash options to their `--` form. Any
    /// other single-dash word that is not exactly a short flag is refused
    /// with the closest option as a suggestion: clap would read
    /// `-hierachy` as `-h` (help, exit 0) and `-gangila` as `-g`, so a
    /// typo could succeed silently (README, "Options": a single-dash word
    /// that is not exactly an option is a usage problem).
    pub fn rewrite<I: IntoIterator<Item = OsString>>(&self, args: I) -> Result<Vec<OsString>> {
        let mut out = Vec::new();
        let mut rest = false;
        let mut value_next = false;
        let takes_value = |w: &str| self.value_options.iter().any(|v| v == w);
        for (i, arg) in args.into_iter().enumerate() {
            let value = std::mem::take(&mut value_next);
            if i == 0 || rest || value {
                out.push(arg);
                continue;
            }
            let Some(s) = arg.to_str() else {
                out.push(arg);
                continue;
            };
            if i == 1 && SUBCOMMANDS.contains(&s) {
                // The subcommand's words are its own.
                rest = true;
            } else if s == "--" {
                rest = true;
            } else if let Some(name) = s.strip_prefix('-').filter(|n| self.thesis.contains(n)) {
                let long = format!("--{name}");
                value_next = takes_value(&long);
                out.push(OsString::from(long));
                continue;
            } else if s.starts_with("--") {
                value_next = takes_value(s);
            } else if s.starts_with('-') && s.len() > 1 && s.parse::<f64>().is_err() {
                if SHORT_FLAGS.contains(&s) {
                    value_next = s == "-o";
                } else {
                    return Err(self.unknown_single_dash(s));
                }
            }
            out.push(arg);
        }
        Ok(out)
    }

    /// The usage error for a single-dash word that is no option, with the
    /// closest option spelled as it can be given.
    fn unknown_single_dash(&self, word: &str) -> Error {
        let name = word.trim_start_matches('-');
        let mut best: Option<(f64, String)> = None;
        for long in self.cmd.get_arguments().filter_map(|a| a.get_long()) {
            if long == "help" || long == "version" {
                continue;
            }
            let score = strsim::jaro_winkler(name, long);
            if best.as_ref().is_none_or(|(b, _)| score > *b) {
                let spelled = if self.thesis.contains(&long) {
                    format!("-{long}")
                } else {
                    format!("--{long}")
                };
                best = Some((score, spelled));
            }
        }
        let hint = match best {
            Some((score, spelled)) if score >= 0.7 => format!("; did you mean `{spelled}`?"),
            _ => "; see --help for the options".to_string(),
        };
        let output = if word.starts_with("-o") {
            " (the output file is given as `-o FILE`)"
        } else {
            ""
        };
        Error::usage(format!("unknown option `{word}`{output}{hint}"))
    }
}

impl Cli {
    /// Checks the core options; each kind takes its own
    /// ([`take_sources`]).
    pub fn resolve(&self) -> Result<Config> {
        let output = match self.output.as_deref() {
            Some(word) => Some(Output::from_arg(word)),
            None if self.tables.is_some() || self.report.is_some() => None,
            None => {
                return Err(Error::usage(
                    "-o FILE (or --tables DIR, or --report FILE) is required",
                ))
            }
        };
        Ok(Config {
            sync: self.sync.clone(),
            sync_fit: self.sync_fit,
            sync_from_messages: self.sync_from_messages,
            write_sync: self.write_sync.clone(),
            hierarchy: self.hierarchy.clone(),
            format: crate::outputs::Format::of(
                self.format,
                output.as_ref(),
                self.from.is_some() || self.to.is_some(),
            )?,
            output,
            tables: self.tables.clone(),
            report: self.report.clone(),
            absolute_time: self.absolute_time,
            reorder_window: self.reorder_window,
            from: self.from,
            to: self.to,
            checkpoint_every: self.checkpoint_every,
            quiet: self.quiet,
            threads: self.threads,
            task: None,
            task_mb: self.task_mb,
        })
    }
}

impl Config {
    /// The window and checkpoints of a run with T0 at `origin`; T1 ≥ T2
    /// is a usage error.
    pub fn cut(&self, origin: i64) -> Result<crate::sink::Cut> {
        let points = match self.checkpoint_every {
            // A task's points are the instants every task shares: what
            // is open there is the union of the tasks' checkpoints.
            None if self.task.is_some() => crate::sink::Points {
                rows: None,
                ..crate::sink::Points::default_at(origin)
            },
            None => crate::sink::Points::default_at(origin),
            Some(0) => crate::sink::Points::NONE,
            Some(step) => crate::sink::Points {
                every: Some((origin, step)),
                rows: None,
            },
        };
        crate::time::window(self.from, self.to, origin, points)
    }
}

/// Every kind takes its options' values; a run needs at least one input.
pub fn take_sources(kinds: &mut [Box<dyn SourceKind>], m: &clap::ArgMatches) -> Result<()> {
    for k in kinds.iter_mut() {
        k.take(m)?;
    }
    if !kinds.iter().any(|k| k.has_inputs()) {
        let options: Vec<&str> = kinds.iter().map(|k| k.option()).collect();
        return Err(Error::usage(format!(
            "no input: give at least one of {} (see --help)",
            options.join(", ")
        )));
    }
    Ok(())
}

impl Config {
    /// A missing file is named with its option (checked after the usage
    /// checks and the output: those are the first things to fix).
    pub fn refuse_missing_files(&self, kinds: &[Box<dyn SourceKind>]) -> Result<()> {
        let singles = [("-sync", &self.sync), ("-hierarchy", &self.hierarchy)];
        let named = kinds.iter().flat_map(|k| k.named_files()).chain(
            singles
                .into_iter()
                .filter_map(|(o, p)| Some((o, p.clone()?))),
        );
        for (option, p) in named {
            if std::fs::symlink_metadata(&p).is_err() {
                return Err(Error::input(format!(
                    "{option} {}: no such file or directory",
                    p.display()
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line() -> CommandLine {
        CommandLine::new(&crate::convert::kinds())
    }

    fn args(words: &[&str]) -> Result<Vec<String>> {
        let v = line().rewrite(
            std::iter::once("integrador")
                .chain(words.iter().copied())
                .map(OsString::from),
        )?;
        Ok(v.into_iter()
            .skip(1)
            .map(|s| s.into_string().unwrap())
            .collect())
    }

    /// Parses `words` (already in `--long` form) and lets the kinds take
    /// their options.
    fn take(words: &[&str]) -> Result<Vec<Box<dyn SourceKind>>> {
        let argv = std::iter::once("integrador")
            .chain(words.iter().copied())
            .chain(["-o", "x"])
            .map(OsString::from)
            .collect();
        let (_, m) = line().parse(argv).unwrap();
        let mut kinds = crate::convert::kinds();
        take_sources(&mut kinds, &m)?;
        Ok(kinds)
    }

    #[test]
    fn thesis_options_become_gnu_ones() {
        assert_eq!(
            args(&["-ganglia", "g.traced", "-os", "a.os", "-output", "o.paje", "-o", "x"]).unwrap(),
            vec![
                "--ganglia",
                "g.traced",
                "--os",
                "a.os",
                "--output",
                "o.paje",
                "-o",
                "x"
            ]
        );
        assert_eq!(args(&["--", "-os"]).unwrap(), vec!["--", "-os"]);
        assert!(args(&["-ofile.paje"]).is_err());
        // The value of a one-value option is never read as an option.
        assert_eq!(
            args(&["-mpinodes", "-n", "--boot-epoch", "-5"]).unwrap(),
            vec!["--mpinodes", "-n", "--boot-epoch", "-5"]
        );
        let e = args(&["-gangila", "g"]).unwrap_err();
        assert!(e.message.contains("did you mean `-ganglia`"), "{e}");
    }

    #[test]
    fn file_lists_add_up() {
        let a = args(&[
            "-os", "a.os", "b.os", "-ganglia", "g", "-os", "c.os", "-o", "x",
        ])
        .unwrap();
        let argv = std::iter::once("integrador".to_string())
            .chain(a)
            .map(OsString::from)
            .collect();
        let (cli, m) = line().parse(argv).unwrap();
        let os: Vec<&String> = m.get_many::<String>("os").unwrap().collect();
        assert_eq!(os, ["a.os", "b.os", "c.os"]);
        assert_eq!(cli.reorder_window, 10_000_000);
        let kinds = take(&["--os", "a.os", "b.os", "--ganglia", "g"]).unwrap();
        let named: Vec<_> = kinds.iter().flat_map(|k| k.named_files()).collect();
        assert_eq!(named.len(), 3);
    }

    #[test]
    fn bad_option_values_are_usage_errors() {
        let e = take(&["--boot-epoch", "soon", "--os", "a"]).err().unwrap();
        assert_eq!(e.exit_code(), 2);
        assert!(e.message.contains("--boot-epoch `soon`"), "{e}");
        let e = take(&["--sync", "s"]).err().unwrap();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.message
                .starts_with("no input: give at least one of -deck, -mpi"),
            "{e}"
        );
    }

    #[test]
    fn mpi_options_need_mpi_logs() {
        let e = take(&["--os", "x.os", "--mpi-start", "5"]).err().unwrap();
        assert_eq!(e.exit_code(), 2);
        assert!(e.message.contains("describe MPI logs"), "{e}");
        let e = take(&["--mpi", "Cargo.toml", "--mpi-start", "yesterday"])
            .err()
            .unwrap();
        assert_eq!(e.exit_code(), 2);
        assert!(e.message.contains("--mpi-start `yesterday`"), "{e}");
        assert!(take(&["--mpi", "Cargo.toml", "--mpi-start", "1795265512.474392"]).is_ok());
        let e = take(&["--os", "x.os", "--pcp-raw"]).err().unwrap();
        assert!(
            e.message.contains("--pcp-raw describes PCP archives"),
            "{e}"
        );
    }

    #[test]
    fn globs_must_match() {
        let e =
            crate::convert::expand("-os", &["/nonexistent-dir-xyz/*.os".to_string()]).unwrap_err();
        assert_eq!(e.exit_code(), 1);
    }
}
