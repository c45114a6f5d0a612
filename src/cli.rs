//! The command line of the README: the thesis' single-dash options
//! (appendix B) and their GNU `--long` forms are the same options.
//! [`rewrite_thesis_options`] turns the former into the latter before clap
//! sees them; [`Cli::resolve`] expands globs and checks values and
//! combinations.

use crate::error::{Error, Result};
use clap::{Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

/// The thesis' option names, written with one dash (appendix B).
pub const THESIS_OPTIONS: [&str; 9] = [
    "deck",
    "mpi",
    "mpinodes",
    "os",
    "ganglia",
    "pcp",
    "sync",
    "hierarchy",
    "output",
];

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

  # Validate any Pajé trace with pj_dump's rules
  integrador check grid.paje

Exit status: 0 complete output, 1 input or output problem (no output file
is left), 2 usage problem (unknown or missing option, bad option value).
Formats: docs/formats.md; the trace: docs/output.md; hierarchy files:
hierarchies/README.md.";

/// What a bare `integrador` prints: a short usage, not clap's complaint
/// about a missing `--output`.
pub const SHORT_USAGE: &str = "\
integrador: one Pajé trace from many monitoring tools

usage: integrador [SOURCES...] [-sync FILE] [-hierarchy FILE] -o OUTPUT
       integrador check TRACE

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
    override_usage = "integrador [-ganglia FILES] [-pcp ARCHIVES] [-mpi FILES -mpinodes FILE] [-deck FILES] [-os FILES]\n                  [-sync FILE] [-hierarchy FILE] [OPTIONS] -o OUTPUT\n       integrador check TRACE\n       integrador completions SHELL | integrador man"
)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Cli {
    /// Subcommand.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// libRastro traces of DECK programs (rastro-<node>-<thread>.rst); also -deck
    #[arg(long, value_name = "FILES", num_args = 1.., action = clap::ArgAction::Append, help_heading = "libRastro (DECK, akypuera)")]
    pub deck: Vec<String>,
    /// libRastro event map: a TOML file (schema: sources/maps/README.md) or
    /// a built-in map name, `deck` (the default) or `akypuera`
    #[arg(long, value_name = "FILE", help_heading = "libRastro (DECK, akypuera)")]
    pub deck_map: Option<PathBuf>,
    /// MPE logs (CLOG2 or legacy CLOG); also -mpi
    #[arg(long, value_name = "FILES", num_args = 1.., action = clap::ArgAction::Append, help_heading = "MPI (MPE logs)")]
    pub mpi: Vec<String>,
    /// MPI nodes file (MPICH machine-file syntax: `host` or `host:N` per line); also -mpinodes
    #[arg(long, value_name = "FILE", help_heading = "MPI (MPE logs)")]
    pub mpinodes: Option<PathBuf>,
    /// Wall-clock start (epoch seconds) of an MPI run without an anchor
    #[arg(
        long,
        value_name = "SECONDS",
        allow_negative_numbers = true,
        help_heading = "MPI (MPE logs)"
    )]
    pub mpi_start: Option<String>,
    /// Kernel scheduler traces: .os, ftrace text, trace-cmd report, perf script; also -os
    #[arg(long, value_name = "FILES", num_args = 1.., action = clap::ArgAction::Append, help_heading = "Kernel traces")]
    pub os: Vec<String>,
    /// Override content detection of -os files
    #[arg(long, value_name = "FORMAT", help_heading = "Kernel traces")]
    pub os_format: Option<OsFormat>,
    /// Boot time (epoch seconds) of boot-relative traces without a marker
    #[arg(
        long,
        value_name = "SECONDS",
        allow_negative_numbers = true,
        help_heading = "Kernel traces"
    )]
    pub boot_epoch: Option<String>,
    /// Ganglia data: .traced recordings, gmond/gmetad XML snapshots, rrdtool dumps; also -ganglia
    #[arg(long, value_name = "FILES", num_args = 1.., action = clap::ArgAction::Append, help_heading = "Ganglia")]
    pub ganglia: Vec<String>,
    /// Override content detection of -ganglia files
    #[arg(long, value_name = "FORMAT", help_heading = "Ganglia")]
    pub ganglia_format: Option<GangliaFormat>,
    /// Collector host of Ganglia files that do not name one
    #[arg(long, value_name = "HOST", help_heading = "Ganglia")]
    pub ganglia_collector: Option<String>,
    /// PCP archives: base names, any file of an archive, or globs; also -pcp
    #[arg(long, value_name = "ARCHIVES", num_args = 1.., action = clap::ArgAction::Append, help_heading = "Performance Co-Pilot")]
    pub pcp: Vec<String>,
    /// Keep PCP counters as raw values instead of rates
    #[arg(long, help_heading = "Performance Co-Pilot")]
    pub pcp_raw: bool,
    /// Clock-sync file written by rastro_timesync; also -sync
    #[arg(long, value_name = "FILE", help_heading = "Clocks and hierarchy")]
    pub sync: Option<PathBuf>,
    /// Fit all sync lines per host (least squares) instead of first and last
    #[arg(long, help_heading = "Clocks and hierarchy")]
    pub sync_fit: bool,
    /// Hierarchy file (TOML, hierarchies/); default: Grid > Cluster > Machine > Process > Thread; also -hierarchy
    #[arg(long, value_name = "FILE", help_heading = "Clocks and hierarchy")]
    pub hierarchy: Option<PathBuf>,
    /// The Pajé trace to write; `-` writes to standard output; also -output
    #[arg(
        short = 'o',
        long,
        value_name = "FILE",
        required = true,
        help_heading = "Output"
    )]
    pub output: Option<String>,
    /// Write epoch seconds instead of times relative to T0 (for programs: a viewer's axis then starts in 1970)
    #[arg(long, help_heading = "Output")]
    pub absolute_time: bool,
    /// How far back in time a source may step and still be sorted
    #[arg(long, value_name = "DURATION", default_value = "10ms", value_parser = crate::time::parse_duration, allow_hyphen_values = true, help_heading = "Output")]
    pub reorder_window: i64,
    /// No progress, no summary (warnings are still printed)
    #[arg(short = 'q', long, help_heading = "Output")]
    pub quiet: bool,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate a Pajé trace with pj_dump's rules; every finding with its line
    Check {
        /// The trace to check
        file: PathBuf,
    },
    /// Print a shell completion script (e.g. `integrador completions bash > /etc/bash_completion.d/integrador`)
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
    /// Print the manual page, in roff (e.g. `integrador man > integrador.1`)
    Man,
}

/// The words that start a subcommand: what follows is the subcommand's.
pub const SUBCOMMANDS: [&str; 3] = ["check", "completions", "man"];

/// `--os-format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OsFormat {
    /// The thesis' .os recording
    Os,
    /// tracefs `trace` text
    Ftrace,
    /// `trace-cmd report` text
    TraceCmd,
    /// `perf script` text
    Perf,
}

/// `--ganglia-format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GangliaFormat {
    /// The thesis' .traced recording
    Traced,
    /// gmond / gmetad XML
    Xml,
    /// rrdtool dump XML
    Rrd,
}

/// Where the trace goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Standard output.
    Stdout,
    /// A file, written under a temporary name and renamed at the end.
    File(PathBuf),
}

/// The resolved configuration of an integration run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Kernel traces, globs expanded.
    pub os: Vec<PathBuf>,
    /// Ganglia files, globs expanded.
    pub ganglia: Vec<PathBuf>,
    /// Collector for Ganglia files that name none.
    pub ganglia_collector: Option<String>,
    /// MPE logs, globs expanded.
    pub mpi: Vec<PathBuf>,
    /// libRastro traces, globs expanded.
    pub deck: Vec<PathBuf>,
    /// Event map file, or the name of a built-in map.
    pub deck_map: Option<PathBuf>,
    /// PCP archive arguments, globs expanded.
    pub pcp: Vec<PathBuf>,
    /// Keep counters raw.
    pub pcp_raw: bool,
    /// Kernel trace format forced by `--os-format` (else detected).
    pub os_format: Option<integrador_sched::Format>,
    /// Epoch of boot-relative kernel traces, ns (`--boot-epoch`).
    pub boot_epoch: Option<i64>,
    /// Ganglia format forced by `--ganglia-format` (else detected).
    pub ganglia_format: Option<integrador_ganglia::Format>,
    /// MPI nodes file.
    pub mpinodes: Option<PathBuf>,
    /// Wall-clock start (ns) of MPI runs without an anchor.
    pub mpi_start: Option<i64>,
    /// Sync file.
    pub sync: Option<PathBuf>,
    /// Fit all sync lines.
    pub sync_fit: bool,
    /// Hierarchy file (None = built-in).
    pub hierarchy: Option<PathBuf>,
    /// Output.
    pub output: Output,
    /// Epoch seconds in the output.
    pub absolute_time: bool,
    /// Reorder window, ns.
    pub reorder_window: i64,
    /// No progress, no summary.
    pub quiet: bool,
}

/// Options that take exactly one value word (their value is never read
/// as an option, so `--mpi-start -5` and `-o -` reach clap intact).
const VALUE_OPTIONS: [&str; 12] = [
    "-o",
    "--output",
    "--deck-map",
    "--mpinodes",
    "--mpi-start",
    "--os-format",
    "--boot-epoch",
    "--ganglia-format",
    "--ganglia-collector",
    "--sync",
    "--hierarchy",
    "--reorder-window",
];

/// The single-dash words clap knows besides the thesis options.
const SHORT_FLAGS: [&str; 4] = ["-o", "-q", "-h", "-V"];

/// Rewrites the thesis' single-dash options to their `--` form. Any other
/// single-dash word that is not exactly a short flag is refused with the
/// closest option as a suggestion: clap would read `-hierachy` as `-h`
/// (help, exit 0) and `-gangila` as `-g`, so a typo could succeed
/// silently (README, "Options": a single-dash word that is not exactly an option is
/// a usage problem).
pub fn rewrite_thesis_options<I: IntoIterator<Item = OsString>>(args: I) -> Result<Vec<OsString>> {
    let mut out = Vec::new();
    let mut rest = false;
    let mut value_next = false;
    for (i, arg) in args.into_iter().enumerate() {
        let takes_value = std::mem::take(&mut value_next);
        if i == 0 || rest || takes_value {
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
        } else if let Some(name) = s.strip_prefix('-').filter(|n| THESIS_OPTIONS.contains(n)) {
            value_next = VALUE_OPTIONS.contains(&format!("--{name}").as_str());
            out.push(OsString::from(format!("--{name}")));
            continue;
        } else if s.starts_with("--") {
            value_next = VALUE_OPTIONS.contains(&s);
        } else if s.starts_with('-') && s.len() > 1 && s.parse::<f64>().is_err() {
            if SHORT_FLAGS.contains(&s) {
                value_next = s == "-o";
            } else {
                return Err(unknown_single_dash(s));
            }
        }
        out.push(arg);
    }
    Ok(out)
}

/// The usage error for a single-dash word that is no option, with the
/// closest option spelled as it can be given.
fn unknown_single_dash(word: &str) -> Error {
    use clap::CommandFactory;
    let name = word.trim_start_matches('-');
    let mut best: Option<(f64, String)> = None;
    let cmd = Cli::command();
    for long in cmd.get_arguments().filter_map(|a| a.get_long()) {
        if long == "help" || long == "version" {
            continue;
        }
        let score = strsim::jaro_winkler(name, long);
        if best.as_ref().is_none_or(|(b, _)| score > *b) {
            let spelled = if THESIS_OPTIONS.contains(&long) {
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

impl Cli {
    /// Expands globs and checks option values and combinations.
    pub fn resolve(&self) -> Result<Config> {
        let output = match self.output.as_deref() {
            Some("-") => Output::Stdout,
            Some(p) => Output::File(PathBuf::from(p)),
            None => return Err(Error::usage("-o FILE is required")),
        };
        let os = expand("-os", &self.os)?;
        let ganglia = expand("-ganglia", &self.ganglia)?;
        let mpi = expand("-mpi", &self.mpi)?;
        let deck = expand("-deck", &self.deck)?;
        let pcp = expand("-pcp", &self.pcp)?;
        if os.is_empty()
            && ganglia.is_empty()
            && mpi.is_empty()
            && deck.is_empty()
            && pcp.is_empty()
        {
            return Err(Error::usage(
                "no input: give at least one of -ganglia, -pcp, -os, -mpi or -deck (see --help)",
            ));
        }
        if pcp.is_empty() && self.pcp_raw {
            return Err(Error::usage(
                "--pcp-raw describes PCP archives: give them with -pcp",
            ));
        }
        if deck.is_empty() && self.deck_map.is_some() {
            return Err(Error::usage(
                "--deck-map describes libRastro traces: give them with -deck",
            ));
        }
        if mpi.is_empty() && (self.mpinodes.is_some() || self.mpi_start.is_some()) {
            return Err(Error::usage(
                "-mpinodes and --mpi-start describe MPI logs: give them with -mpi",
            ));
        }
        let mpi_start = match &self.mpi_start {
            None => None,
            Some(s) => Some(crate::clock::parse_epoch_ns(s.as_bytes()).ok_or_else(|| {
                Error::usage(format!(
                    "--mpi-start `{s}`: expected epoch seconds, as 1795265512.474392"
                ))
            })?),
        };
        let cfg = Config {
            os,
            ganglia,
            mpi,
            deck,
            deck_map: self.deck_map.clone(),
            pcp,
            pcp_raw: self.pcp_raw,
            os_format: self.os_format.map(|f| match f {
                OsFormat::Os => integrador_sched::Format::Os,
                OsFormat::Ftrace => integrador_sched::Format::Ftrace,
                OsFormat::TraceCmd => integrador_sched::Format::TraceCmd,
                OsFormat::Perf => integrador_sched::Format::Perf,
            }),
            boot_epoch: match &self.boot_epoch {
                None => None,
                Some(s) => Some(crate::clock::parse_epoch_ns(s.as_bytes()).ok_or_else(|| {
                    Error::usage(format!(
                        "--boot-epoch `{s}`: expected epoch seconds, as 1795262171.292101"
                    ))
                })?),
            },
            ganglia_format: self.ganglia_format.map(|f| match f {
                GangliaFormat::Traced => integrador_ganglia::Format::Traced,
                GangliaFormat::Xml => integrador_ganglia::Format::Xml,
                GangliaFormat::Rrd => integrador_ganglia::Format::RrdDump,
            }),
            mpinodes: self.mpinodes.clone(),
            mpi_start,
            ganglia_collector: self.ganglia_collector.clone(),
            sync: self.sync.clone(),
            sync_fit: self.sync_fit,
            hierarchy: self.hierarchy.clone(),
            output,
            absolute_time: self.absolute_time,
            reorder_window: self.reorder_window,
            quiet: self.quiet,
        };
        Ok(cfg)
    }
}

impl Config {
    /// A missing file is named with its option (checked after the usage
    /// checks and the output: those are the first things to fix). PCP
    /// words may be archive base names, which are no files; their
    /// resolver names them.
    pub fn refuse_missing_files(&self) -> Result<()> {
        let lists = [
            ("-os", &self.os),
            ("-ganglia", &self.ganglia),
            ("-mpi", &self.mpi),
            ("-deck", &self.deck),
        ];
        let singles = [
            ("-sync", &self.sync),
            ("-hierarchy", &self.hierarchy),
            ("-mpinodes", &self.mpinodes),
        ];
        let named = lists
            .into_iter()
            .flat_map(|(o, list)| list.iter().map(move |p| (o, p)))
            .chain(
                singles
                    .into_iter()
                    .filter_map(|(o, p)| Some((o, p.as_ref()?))),
            );
        for (option, p) in named {
            if std::fs::symlink_metadata(p).is_err() {
                return Err(Error::input(format!(
                    "{option} {}: no such file or directory",
                    p.display()
                )));
            }
        }
        Ok(())
    }
}

/// Expands the words of a file list: words with `*`, `?` or `[` are globs
/// (integrador expands quoted globs itself, as the thesis' `-pcp pcp_*`),
/// sorted, and must match something; other words are paths. A file named
/// twice is read once.
pub fn expand(option: &str, words: &[String]) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for w in words {
        if w.contains(['*', '?', '[']) && !std::path::Path::new(w).exists() {
            let paths = glob::glob(w)
                .map_err(|e| Error::usage(format!("{option}: bad glob `{w}`: {e}")))?;
            let mut matched: Vec<PathBuf> = Vec::new();
            for p in paths {
                matched.push(
                    p.map_err(|e| Error::input(format!("{}: {}", e.path().display(), e.error())))?,
                );
            }
            if matched.is_empty() {
                return Err(Error::input(format!("{option} `{w}` matches no file")));
            }
            matched.sort();
            for p in matched {
                if seen.insert(p.clone()) {
                    out.push(p);
                }
            }
        } else {
            let p = PathBuf::from(w);
            if seen.insert(p.clone()) {
                out.push(p);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Result<Vec<String>> {
        let v = rewrite_thesis_options(
            std::iter::once("integrador")
                .chain(words.iter().copied())
                .map(OsString::from),
        )?;
        Ok(v.into_iter()
            .skip(1)
            .map(|s| s.into_string().unwrap())
            .collect())
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
    }

    #[test]
    fn file_lists_add_up() {
        let a = args(&[
            "-os", "a.os", "b.os", "-ganglia", "g", "-os", "c.os", "-o", "x",
        ])
        .unwrap();
        let cli = Cli::try_parse_from(std::iter::once("integrador".to_string()).chain(a)).unwrap();
        assert_eq!(cli.os, vec!["a.os", "b.os", "c.os"]);
        assert_eq!(cli.ganglia, vec!["g"]);
        assert_eq!(cli.reorder_window, 10_000_000);
    }

    #[test]
    fn bad_option_values_are_usage_errors() {
        let cli =
            Cli::try_parse_from(["integrador", "--boot-epoch", "soon", "--os", "a", "-o", "x"])
                .unwrap();
        let e = cli.resolve().unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.message.contains("--boot-epoch `soon`"), "{e}");
    }

    #[test]
    fn mpi_options_need_mpi_logs() {
        let cli =
            Cli::try_parse_from(["integrador", "--os", "x.os", "--mpi-start", "5", "-o", "x"])
                .unwrap();
        assert_eq!(cli.resolve().unwrap_err().exit_code(), 2);
        let cli = Cli::try_parse_from([
            "integrador",
            "--mpi",
            "Cargo.toml",
            "--mpi-start",
            "yesterday",
            "-o",
            "x",
        ])
        .unwrap();
        let e = cli.resolve().unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.message.contains("--mpi-start `yesterday`"), "{e}");
        let cli = Cli::try_parse_from([
            "integrador",
            "--mpi",
            "Cargo.toml",
            "--mpi-start",
            "1795265512.474392",
            "-o",
            "x",
        ])
        .unwrap();
        assert_eq!(
            cli.resolve().unwrap().mpi_start,
            Some(1_795_265_512_474_392_000)
        );
    }

    #[test]
    fn globs_must_match() {
        let e = expand("-os", &["/nonexistent-dir-xyz/*.os".to_string()]).unwrap_err();
        assert_eq!(e.exit_code(), 1);
    }
}
