//! The shape of the house (issue 14): the table of source kinds is the one
//! list of sources, `run.rs` and the hierarchy name none of them, `run.rs`
//! stays short, no file under `src/` grows past what a reader can hold,
//! only the timeline maps times, and threads start in one place.

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
    // The core command line has no source option: each kind brings its
    // own, the first one naming its inputs.
    use clap::CommandFactory;
    let core = integrador::cli::Cli::command();
    for a in core.get_arguments().filter_map(|a| a.get_long()) {
        assert!(
            !SOURCE_WORDS.iter().any(|w| a.contains(w)),
            "the core option --{a} belongs to a kind"
        );
    }
    for k in integrador::convert::kinds() {
        let first = k
            .args()
            .first()
            .and_then(|a| a.get_long().map(String::from));
        assert_eq!(first.as_deref(), k.option().strip_prefix('-'));
    }
    // run.rs and the hierarchy (whose sources' sections the kinds read)
    // name no source.
    let mut files = vec![root().join("src/run.rs")];
    rust_files(&root().join("src/hierarchy"), &mut files);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for line in text.lines() {
            let lower = line.to_lowercase();
            for w in SOURCE_WORDS {
                assert!(
                    !lower.split(|c: char| !c.is_alphanumeric()).any(|t| t == w),
                    "{} names the source `{w}`: {line}",
                    f.display()
                );
            }
        }
    }
    let run = std::fs::read_to_string(root().join("src/run.rs")).unwrap();
    assert!(
        run.lines().count() < 200,
        "src/run.rs is {} lines",
        run.lines().count()
    );
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// No file under `src/` over 700 lines, no function over 150: a reader can
/// hold one in their head. A function runs from its `fn` line to the
/// closing brace at its own indentation.
#[test]
fn files_and_functions_stay_short() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() <= 700, "{}: {} lines", f.display(), lines.len());
        let mut i = 0;
        while i < lines.len() {
            let l = lines[i];
            let indent = l.len() - l.trim_start().len();
            let t = l.trim_start();
            let is_fn = t.starts_with("fn ")
                || t.starts_with("pub fn ")
                || t.starts_with("pub(super) fn ")
                || t.starts_with("pub(crate) fn ");
            if is_fn && !l.trim_end().ends_with(';') {
                let close = format!("{}}}", " ".repeat(indent));
                let end = (i + 1..lines.len())
                    .find(|&k| lines[k] == close)
                    .unwrap_or(lines.len());
                assert!(
                    end - i < 150,
                    "{}:{}: a function of {} lines",
                    f.display(),
                    i + 1,
                    end - i + 1
                );
                i = end;
            }
            i += 1;
        }
    }
}

/// Ordering is written once: `src/order.rs` holds the only heap.
#[test]
fn one_heap_implementation() {
    assert_only_in("src/order.rs", &["BinaryHeap"], "has its own heap");
}

/// Asserts that no `.rs` file under `src/` but `owner` holds any of
/// `words`; `what` says what such a file does.
fn assert_only_in(owner: &str, words: &[&str], what: &str) {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    for f in files.iter().filter(|f| !f.ends_with(owner)) {
        let text = std::fs::read_to_string(f).unwrap();
        for w in words {
            assert!(!text.contains(w), "{} {what}: `{w}`", f.display());
        }
    }
}

/// Time has one path: local time becomes reference time in
/// `src/timeline.rs` only. Converters declare lanes with an opaque
/// `Clock`; none of them holds or applies a `ClockMap`.
#[test]
fn only_the_timeline_maps_times() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.strip_prefix(root()).unwrap().display().to_string();
        // `Clock` has no method that maps a time: holding no `ClockMap`,
        // a converter cannot map one.
        if name.starts_with("src/convert") {
            assert!(!text.contains("ClockMap"), "{name} holds a clock map");
        }
    }
}

/// Threads start in one place, `prefetch::spawn` or `try_spawn`, which
/// moves a new thread off its creator's core (a thread started
/// elsewhere could wait for a balancing tick, 1.5 to 3 ms, with the other
/// core idle).
#[test]
fn threads_start_through_prefetch() {
    assert_only_in(
        "src/prefetch.rs",
        &["thread::spawn", "thread::Builder", "thread::scope"],
        "starts a thread of its own (use prefetch::spawn)",
    );
}

/// The sinks floor is one way (issue 64): the seam under `src/sink/`
/// names no output format (an encoder depends on it, never the other
/// way), `run.rs` reaches formats through the table in `src/outputs.rs`
/// only, and nothing on the sources' side sees a sink or a format.
#[test]
fn the_sink_seam_is_one_way() {
    let mut seam = Vec::new();
    rust_files(&root().join("src/sink"), &mut seam);
    assert!(seam.len() >= 5, "src/sink/ has {} files", seam.len());
    for f in &seam {
        let text = std::fs::read_to_string(f).unwrap();
        for w in ["paje::", "paraver::", "otf2::", "outputs::", "PajeWriter"] {
            assert!(!text.contains(w), "{} names a format: `{w}`", f.display());
        }
    }
    let run = std::fs::read_to_string(root().join("src/run.rs")).unwrap();
    for w in ["paje", "PajeWriter", "Staged", "OnThread"] {
        assert!(!run.contains(w), "src/run.rs picks an output itself: `{w}`");
    }
    // The sources' side: decoders' converters, the time path, the merge
    // and the registry know neither sinks nor formats.
    let mut sources = Vec::new();
    rust_files(&root().join("src/convert"), &mut sources);
    rust_files(&root().join("src/timeline"), &mut sources);
    for f in [
        "merge.rs",
        "timeline.rs",
        "registry.rs",
        "source.rs",
        "series.rs",
    ] {
        sources.push(root().join("src").join(f));
    }
    for f in &sources {
        let text = std::fs::read_to_string(f).unwrap();
        for w in [
            "crate::sink",
            "crate::paje",
            "crate::paraver",
            "crate::otf2",
            "crate::outputs",
        ] {
            assert!(
                !text.contains(w),
                "{} reaches the sinks: `{w}`",
                f.display()
            );
        }
    }
}
