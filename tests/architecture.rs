//! The shape of the house (issue 14): the table of source kinds is the one
//! list of sources, `run.rs` names none of them and stays short, and no
//! file under `src/` grows past what a reader can hold.

mod common;
use common::root;

/// Words that name a source; `run.rs` must not know any of them.
const SOURCE_WORDS: [&str; 10] = [
    "ganglia", "pcp", "mpi", "deck", "rastro", "sched", "clog", "kernel", "traced", "snapshot",
];

#[test]
fn the_kind_table_is_the_only_list_of_sources() {
    let options: Vec<&str> = integrador::convert::kinds()
        .iter()
        .map(|k| k.option())
        .collect();
    // Every source option of the command line has a kind, and no other.
    let mut cli: Vec<&str> = ["-deck", "-mpi", "-os", "-ganglia", "-pcp"].to_vec();
    cli.sort();
    let mut table = options.clone();
    table.sort();
    assert_eq!(table, cli);
    let run = std::fs::read_to_string(root().join("src/run.rs")).unwrap();
    for line in run.lines() {
        let lower = line.to_lowercase();
        for w in SOURCE_WORDS {
            assert!(
                !lower.split(|c: char| !c.is_alphanumeric()).any(|t| t == w),
                "src/run.rs names the source `{w}`: {line}"
            );
        }
    }
    assert!(
        run.lines().count() < 200,
        "src/run.rs is {} lines",
        run.lines().count()
    );
}
