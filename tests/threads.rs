//! Decoding on other threads changes nothing: every fixture and example
//! run gives byte-for-byte the trace of `--threads 1` with `--threads 2`
//! and `--threads 4` (more decoder threads than the machine has cores
//! still gives the same trace).

mod common;

use common::*;

#[test]
fn more_threads_give_the_same_bytes() {
    let dir = tempdir();
    let ex = root().join("examples");
    let d = fixtures();
    for (name, args) in RUNS {
        let args = args
            .replace("$ex", ex.to_str().unwrap())
            .replace("$d", d.to_str().unwrap());
        let words: Vec<&str> = args.split(' ').collect();
        let mut traces = Vec::new();
        for threads in ["1", "2", "4"] {
            let out = dir.path().join(format!("{name}-{threads}.paje"));
            let mut a = vec!["-q", "--threads", threads];
            a.extend(&words);
            a.extend(["-o", out.to_str().unwrap()]);
            let o = integrador(&a);
            assert!(
                o.status.success(),
                "{name} --threads {threads}: {}",
                stderr(&o)
            );
            traces.push(std::fs::read(&out).unwrap());
        }
        assert!(traces[0] == traces[1], "{name}: --threads 2 differs");
        assert!(traces[0] == traces[2], "{name}: --threads 4 differs");
    }
}

/// A damaged input fails or warns the same way whether its decoder runs
/// on its own thread or not: same exit status, same stderr, same trace.
#[test]
fn damage_reads_the_same_on_any_thread() {
    let dir = tempdir();
    let d = fixtures();
    let good = std::fs::read_to_string(d.join("ganglia/cluster-example.traced")).unwrap();
    let mut cases: Vec<(String, Vec<String>)> = Vec::new();
    // A bad line in the middle, and a last line cut short.
    let lines: Vec<&str> = good.lines().collect();
    let mid = lines.len() / 2;
    let mut bad = lines.clone();
    bad[mid] = "1795264450 cpu_user node01 not-a-number";
    let torn = &good[..good.len() - 3];
    for (name, text) in [
        ("bad.traced", bad.join("\n") + "\n"),
        ("torn.traced", torn.to_string()),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        cases.push((
            name.into(),
            vec!["-ganglia".into(), p.to_str().unwrap().into()],
        ));
    }
    // A kernel trace with a line whose payload does not parse (found
    // while converting), one whose context does not (found by pass 1),
    // one that is not UTF-8, and a last line cut short.
    let ftrace = std::fs::read(d.join("sched/pingpong-pipe/ftrace.txt")).unwrap();
    let text = String::from_utf8(ftrace.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mid = lines.len() / 2;
    let damaged = |i: usize, with: &[u8]| {
        let mut v = Vec::new();
        for (k, l) in lines.iter().enumerate() {
            v.extend_from_slice(if k == i { with } else { l.as_bytes() });
            v.push(b'\n');
        }
        v
    };
    for (name, bytes) in [
        (
            "payload.txt",
            damaged(
                mid,
                b"   sh-11650   [000] d..2.  2740.145707: sched_switch: prev_comm=sh next_pid=x",
            ),
        ),
        (
            "context.txt",
            damaged(
                mid,
                b"   sh-11650   [0x0] d..2.  2740.145707: sched_switch: garbage",
            ),
        ),
        (
            "latin1.txt",
            damaged(
                mid,
                b"   caf\xe9-11650   [000] d..2.  2740.145707: sched_process_exit: pid=1",
            ),
        ),
        ("torn.txt", ftrace[..ftrace.len() - 20].to_vec()),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        cases.push((
            name.into(),
            vec![
                "-os".into(),
                p.to_str().unwrap().into(),
                "--os-host".into(),
                "vm".into(),
            ],
        ));
    }
    // Every damaged MPE log of the bad-input corpus.
    let nodes = d.join("clog2/pingpong/pingpong.nodes");
    let mut corpus: Vec<_> = std::fs::read_dir(root().join("tests/corpus/clog"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    corpus.sort();
    for p in corpus {
        cases.push((
            p.file_name().unwrap().to_string_lossy().into(),
            vec![
                "-mpi".into(),
                p.to_str().unwrap().into(),
                "-mpinodes".into(),
                nodes.to_str().unwrap().into(),
            ],
        ));
    }
    let mut failed = 0;
    for (name, args) in &cases {
        let mut seen = Vec::new();
        for threads in ["1", "2"] {
            let out = dir.path().join(format!("{name}-{threads}.paje"));
            let mut a: Vec<&str> = vec!["--threads", threads];
            a.extend(args.iter().map(String::as_str));
            a.extend(["-o", out.to_str().unwrap()]);
            let o = integrador(&a);
            // The summary names the output file, which differs.
            let err = stderr(&o).replace(out.to_str().unwrap(), "OUT");
            seen.push((o.status.code(), err, std::fs::read(&out).ok()));
        }
        assert!(
            seen[0] == seen[1],
            "{name}: {:?}\nvs\n{:?}",
            seen[0].1,
            seen[1].1
        );
        failed += usize::from(seen[0].0 != Some(0));
    }
    assert!(failed >= 13, "only {failed} of the damaged inputs failed");
}

/// A window (`--from/--to`) and its tables, with reference points, are
/// the same bytes on one thread and on all.
#[test]
fn a_window_is_the_same_on_any_thread() {
    let dir = tempdir();
    let ex = root().join("examples");
    let d = fixtures();
    for (name, args) in RUNS.iter().take(4) {
        let args = args
            .replace("$ex", ex.to_str().unwrap())
            .replace("$d", d.to_str().unwrap());
        let words: Vec<&str> = args.split(' ').collect();
        let mut outs = Vec::new();
        for threads in ["1", "2"] {
            let out = dir.path().join(format!("{name}-{threads}.paje"));
            let tables = dir.path().join(format!("{name}-{threads}.tables"));
            let mut a = vec!["-q", "--threads", threads];
            a.extend(&words);
            a.extend([
                "-o",
                out.to_str().unwrap(),
                "--tables",
                tables.to_str().unwrap(),
            ]);
            a.extend([
                "--from",
                "+3ms",
                "--to",
                "+13s",
                "--checkpoint-every",
                "1ms",
            ]);
            let o = integrador(&a);
            assert!(
                o.status.success(),
                "{name} --threads {threads}: {}",
                stderr(&o)
            );
            let mut bytes = std::fs::read(&out).unwrap();
            for t in [
                "states",
                "variables",
                "links",
                "containers",
                "checkpoints",
                "run",
            ] {
                bytes.extend(std::fs::read(tables.join(format!("{t}.parquet"))).unwrap());
            }
            outs.push(bytes);
        }
        assert!(
            outs[0] == outs[1],
            "{name}: the window differs on two threads"
        );
    }
}
