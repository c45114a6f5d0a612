//! The whole pipeline: the bytes become one input of a source picked by
//! the first byte, are integrated, and the trace is checked with our
//! checker. Exit 0 with a trace the checker rejects is a finding (a
//! panic), as is any panic on the way.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(dir) = tempfile::tempdir() else { return };
    let (name, option) = match pick % 5 {
        0 => ("in.traced", "ganglia"),
        1 => ("in.os", "os"),
        2 => ("in.clog2", "mpi"),
        3 => ("rastro-0-0.rst", "deck"),
        _ => ("in.txt", "os"),
    };
    let input = dir.path().join(name);
    let Ok(mut f) = std::fs::File::create(&input) else { return };
    if f.write_all(rest).is_err() {
        return;
    }
    drop(f);
    let out = dir.path().join("out.paje");
    let mut args = vec![
        "integrador".to_string(),
        format!("--{option}"),
        input.to_string_lossy().into_owned(),
        "-q".into(),
        "-o".into(),
        out.to_string_lossy().into_owned(),
    ];
    if option == "mpi" {
        let nodes = dir.path().join("nodes");
        if std::fs::write(&nodes, "n1\nn2\nn3\nn4\n").is_err() {
            return;
        }
        args.extend(["--mpinodes".into(), nodes.to_string_lossy().into_owned()]);
        args.extend(["--mpi-start".into(), "1795264448".into()]);
    }
    if option == "os" {
        args.extend(["--boot-epoch".into(), "1795264448".into()]);
    }
    let mut kinds = integrador::convert::kinds();
    let line = integrador::cli::CommandLine::new(&kinds);
    let Ok((cli, m)) = line.parse(args.into_iter().map(Into::into).collect()) else {
        return;
    };
    let Ok(cfg) = cli.resolve() else { return };
    if integrador::cli::take_sources(&mut kinds, &m).is_err() {
        return;
    }
    if integrador::run::integrate(&cfg, kinds).is_ok() {
        let Ok(trace) = std::fs::read(&out) else {
            panic!("exit 0 without an output");
        };
        let report = integrador::paje::check::check(&trace[..]).expect("in memory");
        assert!(
            report.accepted(),
            "exit 0 with a trace the checker rejects: {:?}",
            report.findings.first()
        );
    }
});
