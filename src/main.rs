//! The `integrador` command: parse, run, map the outcome to the exit codes
//! of the README (0 complete, 1 input/output problem, 2 usage problem).

use integrador::cli::{take_sources, Command, CommandLine};
use integrador::error::{Error, ErrorClass};
use std::io::{self, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) if e.class == ErrorClass::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("integrador: error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn run() -> Result<ExitCode, Error> {
    integrador::output::raise_file_limit();
    integrador::output::fit_address_limit();
    let mut kinds = integrador::convert::kinds();
    let line = CommandLine::new(&kinds);
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `plan` takes a run's command line (docs/scale.md); `task` and
    // `gather` have their own.
    let planning = argv.get(1).is_some_and(|a| a == "plan");
    let plan_args = if planning {
        argv.remove(1);
        Some(integrador::scale::cli::plan_args(&argv[1..])?)
    } else {
        None
    };
    if argv.get(1).is_some_and(|a| a == "task" || a == "gather") && !planning {
        let code = integrador::scale::cli::main(&argv[1..])?;
        return Ok(ExitCode::from(code.unwrap_or(0)));
    }
    let args = line.rewrite(argv)?;
    if args.len() <= 1 {
        eprintln!("{}", integrador::cli::SHORT_USAGE);
        return Ok(ExitCode::from(2));
    }
    let (cli, matches) = match line.parse(args) {
        Ok(parsed) => parsed,
        Err(e) => {
            // A file named without its option: say which option reads it.
            use clap::error::{ContextKind, ContextValue};
            let word = [ContextKind::InvalidSubcommand, ContextKind::InvalidArg]
                .into_iter()
                .find_map(|k| match e.get(k) {
                    Some(ContextValue::String(s)) => Some(s.clone()),
                    _ => None,
                });
            if let Some(advice) = word
                .map(std::path::PathBuf::from)
                .filter(|p| p.is_file())
                .and_then(|p| integrador::sniff::without_option(&p))
            {
                return Err(Error::usage(advice));
            }
            // clap prints help and version itself (exit 0) and usage
            // errors with their own hint (exit 2).
            let _ = e.print();
            return Ok(ExitCode::from(if e.use_stderr() { 2 } else { 0 }));
        }
    };
    match &cli.command {
        Some(Command::Check { file }) => return check(file),
        Some(Command::Tables { file, tables }) => {
            let done = integrador::tables::replay::from_trace(file, tables)?;
            if !cli.quiet {
                eprintln!(
                    "integrador: wrote the tables in {} from {}: {} rows",
                    tables.display(),
                    file.display(),
                    done
                );
            }
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::Paje {
            tables,
            from,
            to,
            output,
        }) => {
            let out = integrador::cli::Output::from_arg(output);
            let w = integrador::tables::window::to_paje(tables, *from, *to, &out)?;
            if !cli.quiet {
                eprintln!(
                    "integrador: wrote {}: {} events; {} row groups read (a group that holds a checkpoint is read for both its segments) of the tables' {}",
                    w.shown,
                    w.events,
                    w.groups_read,
                    w.groups
                );
            }
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::Completions { shell }) => {
            let mut text = Vec::new();
            clap_complete::generate(*shell, &mut line.command(), "integrador", &mut text);
            return print(&text);
        }
        Some(Command::Man) => {
            let mut text = Vec::new();
            clap_mangen::Man::new(line.command())
                .render(&mut text)
                .map_err(|e| Error::input(format!("rendering the manual page: {e}")))?;
            return print(&text);
        }
        Some(Command::Record(integrador::cli::Record::Ganglia(args))) => {
            // SIGINT and SIGTERM end a recording after its current write.
            let summary = integrador::record::ganglia(args)?;
            let _ =
                integrador::record::write_summary(&mut io::stderr().lock(), &args.output, &summary);
            return Ok(ExitCode::SUCCESS);
        }
        None => {}
    }
    // An integration's temporary output is removed on an ending signal.
    integrador::output::install_signal_cleanup();
    let cfg = cli.resolve()?;
    take_sources(&mut kinds, &matches)?;
    if let Some(args) = plan_args {
        let done = integrador::scale::plan(&cfg, kinds, args)?;
        if !cfg.quiet {
            eprintln!(
                "integrador: planned {} tasks over {} input files",
                done.tasks, done.inputs
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let report = integrador::run::integrate(&cfg, kinds, None)?;
    if cfg.quiet {
        let _ = integrador::summary::write_warnings(&mut io::stderr().lock(), &report);
    } else {
        let _ = integrador::summary::write(&mut io::stderr().lock(), &report);
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes a generated text to standard output; a reader that stops early
/// (`| head`) is no error.
fn print(text: &[u8]) -> Result<ExitCode, Error> {
    match io::stdout().lock().write_all(text) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Error::input(format!("standard output: {e}")))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

fn check(path: &std::path::Path) -> Result<ExitCode, Error> {
    let file = std::fs::File::open(path).map_err(|e| Error::in_file(path, e))?;
    let report = integrador::paje::check::check(io::BufReader::new(file))
        .map_err(|e| Error::in_file(path, e))?;
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let shown = path.display();
    for f in &report.findings {
        let sev = match f.severity {
            integrador::paje::check::Severity::Error => "error",
            integrador::paje::check::Severity::Warning => "warning",
        };
        let _ = if f.line > 0 {
            writeln!(out, "{shown}:{}: {sev}: {}", f.line, f.message)
        } else {
            writeln!(out, "{shown}: {sev}: {}", f.message)
        };
    }
    let more = (report.errors + report.warnings).saturating_sub(report.findings.len() as u64);
    if more > 0 {
        let _ = writeln!(out, "{shown}: ... {more} more findings not shown");
    }
    let _ = writeln!(
        out,
        "{shown}: {} lines, {} events: {} errors, {} warnings; pj_dump would {} it",
        report.lines,
        report.events,
        report.errors,
        report.warnings,
        if report.accepted() {
            "accept"
        } else {
            "reject"
        }
    );
    Ok(if report.accepted() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
