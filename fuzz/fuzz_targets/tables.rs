//! `integrador paje` on damaged tables: one table of a small run's tables
//! replaced by arbitrary bytes, and a window from the input; an error or
//! a trace, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

const TRACE: &str = "%EventDef PajeDefineContainerType 0\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n\
%EventDef PajeDefineStateType 1\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n\
%EventDef PajeDefineVariableType 2\n% Alias string\n% Type string\n% Name string\n% Color color\n%EndEventDef\n\
%EventDef PajeCreateContainer 3\n% Time date\n% Alias string\n% Type string\n% Container string\n% Name string\n%EndEventDef\n\
%EventDef PajePushState 4\n% Time date\n% Type string\n% Container string\n% Value string\n%EndEventDef\n\
%EventDef PajePopState 5\n% Time date\n% Type string\n% Container string\n%EndEventDef\n\
%EventDef PajeSetVariable 6\n% Time date\n% Type string\n% Container string\n% Value double\n%EndEventDef\n\
0 M 0 Machine\n1 S M State\n2 V M Load \"1 0 0\"\n3 0 m1 M 0 node1\n4 1 S m1 run\n6 1.5 V m1 2\n4 2 S m1 wait\n5 3 S m1\n6 3.5 V m1 1\n5 4 S m1\n";

const TABLES: [&str; 6] = ["states", "variables", "containers", "types", "values", "checkpoints"];

/// The tables of a small trace, made once.
fn base() -> &'static PathBuf {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    BASE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("integrador-fuzz-tables-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let trace = dir.join("t.paje");
        std::fs::write(&trace, TRACE).unwrap();
        let tables = dir.join("tables");
        integrador::tables::replay::from_trace(&trace, &tables).unwrap();
        tables
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let Some((&edge, bytes)) = rest.split_first() else { return };
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("tables");
    std::fs::create_dir(&dir).unwrap();
    for e in std::fs::read_dir(base()).unwrap().flatten() {
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    let table = TABLES[pick as usize % TABLES.len()];
    std::fs::write(dir.join(format!("{table}.parquet")), bytes).unwrap();
    let from = integrador::time::Instant::AfterT0(i64::from(edge) * 20_000_000);
    let to = integrador::time::Instant::AfterT0(i64::from(edge) * 20_000_000 + 1_000_000_000);
    let out = integrador::cli::Output::File(work.path().join("w.paje"));
    let _ = integrador::tables::window::to_paje(&[dir.clone()], Some(from), Some(to), &out);
    let _ = integrador::tables::window::to_paje(&[dir], None, None, &out);
});
