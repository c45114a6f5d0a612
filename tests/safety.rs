//! Never lose a byte (issue 11): inputs are never written, outputs go to
//! what the user named, signals and full disks leave nothing behind, typos
//! never succeed, read-once inputs are read once, many inputs fit the
//! descriptor limit. Every test runs the real binary on data shipped in
//! the repository.

mod clog_build;
mod common;

use common::*;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_integrador");

fn example(rel: &str) -> PathBuf {
    root().join("examples").join(rel)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn run(args: &[&str]) -> std::process::Output {
    integrador(args)
}

/// Runs a bash script with the binary as $0 and `args` as $1...
fn bash(script: &str, args: &[&str]) -> std::process::Output {
    Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg(BIN)
        .args(args)
        .output()
        .expect("bash runs")
}

fn code(o: &std::process::Output) -> Option<i32> {
    o.status.code()
}

/// The trace `args` give when written to a plain file.
fn reference(args: &[&str], dir: &Path, name: &str) -> Vec<u8> {
    let out = dir.join(name);
    let mut a: Vec<&str> = args.to_vec();
    a.extend(["-q", "-o", s(&out)]);
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    fs::read(out).unwrap()
}

fn temp_files(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".integrador-"))
        .collect()
}

#[test]
fn an_input_is_never_the_output() {
    let d = tempdir();
    let g = d.path().join("g.traced");
    fs::copy(example("grid/domain-a.traced"), &g).unwrap();
    let before = fs::read(&g).unwrap();
    let link = d.path().join("link.traced");
    std::os::unix::fs::symlink("g.traced", &link).unwrap();
    let hard = d.path().join("hard.traced");
    fs::hard_link(&g, &hard).unwrap();
    let h = d.path().join("h.toml");
    fs::copy(root().join("hierarchies/ganglia.toml"), &h).unwrap();
    let h_before = fs::read(&h).unwrap();

    let cases: [(&[&str], &Path); 5] = [
        (&["-ganglia", s(&g), "-o", s(&g)], &g),
        (&["-ganglia", s(&g), "-o", s(&link)], &g),
        (&["-ganglia", s(&link), "-o", s(&g)], &g),
        (&["-ganglia", s(&g), "-o", s(&hard)], &g),
        (&["-ganglia", s(&g), "-hierarchy", s(&h), "-o", s(&h)], &h),
    ];
    for (args, named) in cases {
        let o = run(args);
        assert_eq!(code(&o), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("refusing to overwrite an input"), "{e}");
        assert_eq!(e.lines().count(), 1, "one line: {e}");
        assert!(
            e.contains(named.file_name().unwrap().to_str().unwrap()),
            "{e}"
        );
    }
    assert_eq!(fs::read(&g).unwrap(), before, "the input is untouched");
    assert_eq!(
        fs::read(&h).unwrap(),
        h_before,
        "the hierarchy is untouched"
    );
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(temp_files(d.path()).is_empty());

    // An MPE log, its nodes file and a sync file are inputs too.
    let clog = d.path().join("r.clog2");
    fs::copy(example("pingpong-localhost/mpi_pingpong.clog2"), &clog).unwrap();
    let nodes = example("pingpong-localhost/mpi.nodes");
    let clog_before = fs::read(&clog).unwrap();
    let o = run(&["-mpi", s(&clog), "-mpinodes", s(&nodes), "-o", s(&clog)]);
    assert_eq!(code(&o), Some(2), "{}", stderr(&o));
    assert_eq!(fs::read(&clog).unwrap(), clog_before);
    let sync = d.path().join("timesync");
    fs::write(&sync, "node01.cluster.example 1795264448.0 1795264448.0\n").unwrap();
    let o = run(&["-ganglia", s(&g), "-sync", s(&sync), "-o", s(&sync)]);
    assert_eq!(code(&o), Some(2), "{}", stderr(&o));

    // Standard output appended to the input (`>> g.traced`) would read
    // its own output forever.
    let out = fs::OpenOptions::new().append(true).open(&g).unwrap();
    let o = Command::new(BIN)
        .args(["-ganglia", s(&g), "-o", "-"])
        .stdout(Stdio::from(out))
        .output()
        .unwrap();
    assert_eq!(code(&o), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("standard output is the input"));
    assert_eq!(fs::read(&g).unwrap(), before);
}

#[test]
fn a_symlinked_output_is_written_through() {
    let d = tempdir();
    let g = example("grid/domain-a.traced");
    let want = reference(&["-ganglia", s(&g)], d.path(), "want.paje");
    fs::create_dir(d.path().join("real")).unwrap();
    let target = d.path().join("real/trace.paje");
    fs::write(&target, "old\n").unwrap();
    let link = d.path().join("link.paje");
    std::os::unix::fs::symlink("real/trace.paje", &link).unwrap();
    let o = run(&["-q", "-ganglia", s(&g), "-o", s(&link)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read(&target).unwrap(), want);
    // A dangling link: its target is created.
    fs::remove_file(&target).unwrap();
    let o = run(&["-q", "-ganglia", s(&g), "-o", s(&link)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read(&target).unwrap(), want);
    assert!(temp_files(&d.path().join("real")).is_empty());
}

#[test]
fn fifo_and_device_outputs_are_written_in_place() {
    let d = tempdir();
    let g = example("grid/domain-a.traced");
    let want = reference(&["-ganglia", s(&g)], d.path(), "want.paje");

    let fifo = d.path().join("out.fifo");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: mkfifo on a path in our own temp dir.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read(fifo).unwrap())
    };
    let o = run(&["-q", "-ganglia", s(&g), "-o", s(&fifo)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        reader.join().unwrap(),
        want,
        "the reader got the whole trace"
    );
    assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(temp_files(d.path()).is_empty());

    // Device nodes made here, never the system's own /dev.
    let null = d.path().join("null");
    let full = d.path().join("full");
    let made = [(&null, 3), (&full, 7)].iter().all(|(p, minor)| {
        let c = std::ffi::CString::new(s(p)).unwrap();
        // SAFETY: mknod on a path in our own temp dir.
        unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, *minor)) == 0 }
    });
    if !made {
        eprintln!(
            "\n*** SKIPPED: cannot mknod here (needs CAP_MKNOD); device outputs not tested ***\n"
        );
        return;
    }
    let o = run(&["-q", "-ganglia", s(&g), "-o", s(&null)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m = fs::metadata(&null).unwrap();
    assert!(m.file_type().is_char_device(), "still a device");
    assert_eq!(m.rdev(), libc::makedev(1, 3));
    // A device that refuses the bytes: exit 1, one line, and the message
    // says the output is incomplete.
    let o = run(&["-q", "-ganglia", s(&g), "-o", s(&full)]);
    assert_eq!(code(&o), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("No space left on device") && e.contains("incomplete"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(fs::metadata(&full).unwrap().file_type().is_char_device());
    assert!(temp_files(d.path()).is_empty());
}

#[test]
fn process_substitution_output_works() {
    let d = tempdir();
    let g = example("grid/domain-a.traced");
    let want = reference(&["-ganglia", s(&g)], d.path(), "want.paje");
    let copy = d.path().join("copy.paje");
    let o = bash(
        r#""$0" -q -ganglia "$1" -o >(cat > "$2"); s=$?; wait; exit $s"#,
        &[s(&g), s(&copy)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The substituted process may still be flushing when bash returns.
    let t = Instant::now();
    while fs::read(&copy).map(|b| b.len()).unwrap_or(0) < want.len()
        && t.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(fs::read(&copy).unwrap(), want);
}

fn umask_run(mask: libc::mode_t, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    // SAFETY: umask is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(move || {
            libc::umask(mask);
            Ok(())
        });
    }
    cmd.output().unwrap()
}

#[test]
fn new_files_follow_the_umask_and_old_ones_keep_their_mode() {
    let d = tempdir();
    let g = example("grid/domain-a.traced");
    let new = d.path().join("new.paje");
    let o = umask_run(0o022, &["-q", "-ganglia", s(&g), "-o", s(&new)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::metadata(&new).unwrap().mode() & 0o777, 0o644);
    let private = d.path().join("private.paje");
    let o = umask_run(0o077, &["-q", "-ganglia", s(&g), "-o", s(&private)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::metadata(&private).unwrap().mode() & 0o777, 0o600);
    let old = d.path().join("old.paje");
    fs::write(&old, "old\n").unwrap();
    fs::set_permissions(&old, fs::Permissions::from_mode(0o640)).unwrap();
    let o = umask_run(0o022, &["-q", "-ganglia", s(&g), "-o", s(&old)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::metadata(&old).unwrap().mode() & 0o777, 0o640);
    assert_ne!(fs::read(&old).unwrap(), b"old\n");
}

fn make_fifo(path: &Path) {
    let c = std::ffi::CString::new(s(path)).unwrap();
    // SAFETY: mkfifo on a path in our own temp dir.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

fn wait_for_temp(dir: &Path, child: &mut std::process::Child) {
    let t = Instant::now();
    while temp_files(dir).is_empty() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before the signal"
        );
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "no temporary file appeared"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A run blocked on an input that is still being written (a FIFO whose
/// writer keeps it open) is ended by each signal: the temporary file is
/// removed, the old output is intact, and the process ends by that signal
/// (the shell reports 128+n).
#[test]
fn signals_remove_the_temporary_file_and_keep_the_old_output() {
    let d = tempdir();
    let data = fs::read(example("grid/domain-a.traced")).unwrap();
    for (sig, shell_code) in [
        (libc::SIGINT, 130),
        (libc::SIGTERM, 143),
        (libc::SIGHUP, 129),
    ] {
        let fifo = d.path().join(format!("in{sig}.fifo"));
        make_fifo(&fifo);
        // Read-write keeps a writer on the FIFO without blocking here.
        let mut w = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&fifo)
            .unwrap();
        w.write_all(&data[..data.len() / 2]).unwrap();
        let out = d.path().join("out.paje");
        fs::write(&out, "previous trace\n").unwrap();
        let mut child = Command::new(BIN)
            .args(["-q", "-ganglia", s(&fifo), "-o", s(&out)])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_temp(d.path(), &mut child);
        std::thread::sleep(Duration::from_millis(100));
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(child.id() as i32, sig) };
        let st = child.wait().unwrap();
        drop(w);
        assert_eq!(st.signal(), Some(sig), "ended by the signal: {st:?}");
        assert_eq!(128 + sig, shell_code);
        assert!(
            temp_files(d.path()).is_empty(),
            "{:?}",
            temp_files(d.path())
        );
        assert_eq!(fs::read_to_string(&out).unwrap(), "previous trace\n");
    }
    // Through a shell, as a user sees it.
    let fifo = d.path().join("sh.fifo");
    make_fifo(&fifo);
    let out = d.path().join("out.paje");
    let o = bash(
        r#"exec 3<>"$1"; "$0" -q -ganglia "$1" -o "$2" & p=$!; sleep 0.5; kill -TERM $p; wait $p; echo "status $?""#,
        &[s(&fifo), s(&out)],
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("status 143"));
}

/// The same on a large input while the trace is being written.
#[test]
fn signals_mid_write_on_a_large_input() {
    let d = tempdir();
    let big = d.path().join("big.traced");
    let mut f = std::io::BufWriter::new(fs::File::create(&big).unwrap());
    writeln!(f, "# collector n0").unwrap();
    for i in 0..1_500_000u64 {
        writeln!(
            f,
            "{}.{:03} m{} n{} {}",
            1795264448 + i / 100,
            i % 1000,
            i % 16,
            i % 64,
            i
        )
        .unwrap();
    }
    drop(f);
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let out = d.path().join("out.paje");
        fs::write(&out, "previous trace\n").unwrap();
        let mut child = Command::new(BIN)
            .args(["-q", "-ganglia", s(&big), "-o", s(&out)])
            .spawn()
            .unwrap();
        // Wait until the trace is being written.
        let t = Instant::now();
        loop {
            let written: u64 = temp_files(d.path())
                .iter()
                .filter_map(|n| fs::metadata(d.path().join(n)).ok())
                .map(|m| m.len())
                .sum();
            if written > 1 << 20 {
                break;
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "the run ended before the signal"
            );
            assert!(t.elapsed() < Duration::from_secs(60));
            std::thread::sleep(Duration::from_millis(5));
        }
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(child.id() as i32, sig) };
        let st = child.wait().unwrap();
        assert_eq!(st.signal(), Some(sig));
        assert!(temp_files(d.path()).is_empty());
        assert_eq!(fs::read_to_string(&out).unwrap(), "previous trace\n");
    }
}

/// Unmounts a tmpfs when the test ends, however it ends.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_exits_1_and_leaves_the_old_file() {
    let d = tempdir();
    let small = d.path().join("small");
    fs::create_dir(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16k", "tmpfs", s(&small)])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("\n*** SKIPPED: cannot mount a small tmpfs here (needs root); full disk not tested ***\n");
        return;
    }
    let _guard = Mounted(small.clone());
    let out = small.join("out.paje");
    fs::write(&out, "previous trace\n").unwrap();
    let g = example("grid/domain-a.traced");
    let o = run(&["-q", "-ganglia", s(&g), "-o", s(&out)]);
    assert_eq!(code(&o), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("No space left on device") && e.contains("out.paje"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1);
    assert!(temp_files(&small).is_empty());
    assert_eq!(fs::read_to_string(&out).unwrap(), "previous trace\n");
}

#[test]
fn two_runs_on_one_output_leave_one_whole_trace() {
    let d = tempdir();
    let a = example("grid/domain-a.traced");
    let b = example("grid/domain-b.traced");
    let want_a = reference(&["-ganglia", s(&a)], d.path(), "a.paje");
    let want_b = reference(&["-ganglia", s(&b)], d.path(), "b.paje");
    let out = d.path().join("out.paje");
    for _ in 0..5 {
        let mut ca = Command::new(BIN)
            .args(["-q", "-ganglia", s(&a), "-o", s(&out)])
            .spawn()
            .unwrap();
        let mut cb = Command::new(BIN)
            .args(["-q", "-ganglia", s(&b), "-o", s(&out)])
            .spawn()
            .unwrap();
        assert!(ca.wait().unwrap().success());
        assert!(cb.wait().unwrap().success());
        let got = fs::read(&out).unwrap();
        assert!(got == want_a || got == want_b, "a mix of two runs");
        assert!(temp_files(d.path()).is_empty());
    }
}

#[test]
fn typos_never_succeed() {
    let d = tempdir();
    let g = example("grid/domain-a.traced");
    let out = d.path().join("x.paje");
    for (typo, hint) in [
        ("-hierachy", "-hierarchy"),
        ("-gangila", "-ganglia"),
        ("-mpinode", "-mpinodes"),
        ("-sycn", "-sync"),
        ("-quiet", "--quiet"),
        ("-outptu", "-output"),
    ] {
        let o = run(&[typo, "x", "-ganglia", s(&g), "-o", s(&out)]);
        assert_eq!(code(&o), Some(2), "{typo}");
        let e = stderr(&o);
        assert!(
            e.contains(&format!("`{typo}`")),
            "names the whole word: {e}"
        );
        assert!(e.contains(&format!("did you mean `{hint}`")), "{e}");
        assert!(o.stdout.is_empty(), "no help on stdout");
        assert!(!out.exists());
    }
    let o = run(&["--hierachy", "x", "-ganglia", s(&g), "-o", s(&out)]);
    assert_eq!(code(&o), Some(2));
    assert!(stderr(&o).contains("--hierarchy"));
    // Help only as a real flag.
    for flag in ["-h", "--help"] {
        let o = run(&[flag]);
        assert_eq!(code(&o), Some(0));
        assert!(String::from_utf8_lossy(&o.stdout).contains("Usage"));
    }
    // Option values that look like options stay values.
    let o = run(&["-ganglia", s(&g), "--reorder-window", "-5ms", "-o", s(&out)]);
    assert_eq!(code(&o), Some(2));
    assert!(stderr(&o).contains("-5ms"), "{}", stderr(&o));
}

#[test]
fn read_once_inputs_give_the_same_trace_as_files() {
    let d = tempdir();
    let g = example("grid/domain-a.traced");
    let want = reference(&["-ganglia", s(&g)], d.path(), "want.paje");
    let out = d.path().join("piped.paje");
    let o = bash(r#""$0" -q -ganglia <(cat "$1") -o "$2""#, &[s(&g), s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read(&out).unwrap(), want, "-ganglia <(cat g.traced)");

    // A two-pass source: the MPE log and its nodes file, both piped.
    let clog = example("pingpong-localhost/mpi_pingpong.clog2");
    let nodes = example("pingpong-localhost/mpi.nodes");
    let want = reference(
        &["-mpi", s(&clog), "-mpinodes", s(&nodes)],
        d.path(),
        "mpi.paje",
    );
    let o = bash(
        r#""$0" -q -mpi <(cat "$1") -mpinodes <(cat "$2") -o "$3""#,
        &[s(&clog), s(&nodes), s(&out)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read(&out).unwrap(), want, "-mpi <(cat r.clog2)");

    // A FIFO fed by a thread, slowly.
    let fifo = d.path().join("g.fifo");
    make_fifo(&fifo);
    let data = fs::read(&g).unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut w = fs::OpenOptions::new().write(true).open(fifo).unwrap();
            for chunk in data.chunks(1000) {
                w.write_all(chunk).unwrap();
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    let want = reference(&["-ganglia", s(&g)], d.path(), "want.paje");
    let o = run(&["-q", "-ganglia", s(&fifo), "-o", s(&out)]);
    writer.join().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read(&out).unwrap(), want, "FIFO input");
}

#[test]
fn ten_thousand_inputs_fit_the_descriptor_limit() {
    let d = tempdir();
    let many = d.path().join("many");
    fs::create_dir(&many).unwrap();
    for i in 0..10_000 {
        fs::write(
            many.join(format!("f{i:05}.traced")),
            format!(
                "# collector n0\n1795264448.{:03} load_one host{i:05} {i}\n1795264449 load_one host{i:05} 2\n",
                i % 1000
            ),
        )
        .unwrap();
    }
    let glob = format!("{}/*.traced", s(&many));
    let a = d.path().join("a.paje");
    let o = bash(
        r#"ulimit -Sn 1024 && "$0" -q -ganglia "$1" -o "$2""#,
        &[&glob, s(&a)],
    );
    assert!(o.status.success(), "soft limit 1024: {}", stderr(&o));
    // With the hard limit low too, files are closed and reopened.
    let b = d.path().join("b.paje");
    let o = bash(
        r#"ulimit -n 256 && "$0" -q -ganglia "$1" -o "$2""#,
        &[&glob, s(&b)],
    );
    assert!(o.status.success(), "limit 256: {}", stderr(&o));
    assert_eq!(fs::read(&a).unwrap(), fs::read(&b).unwrap());
    assert_eq!(
        count_events(&a, "PajeSetVariable"),
        20_000,
        "every sample of every file"
    );
    assert!(fs::read_to_string(&a).unwrap().contains("host09999"));
    assert_valid(&a);
}

#[test]
fn the_output_is_checked_before_any_input_is_read() {
    let d = tempdir();
    let missing = d.path().join("missing.traced");
    // The input does not exist; the output's problem is the one reported.
    let o = run(&[
        "-ganglia",
        s(&missing),
        "-o",
        s(&d.path().join("no/such/dir/x.paje")),
    ]);
    assert_eq!(code(&o), Some(1));
    assert!(
        stderr(&o).contains("cannot create the output"),
        "{}",
        stderr(&o)
    );
    let o = run(&["-ganglia", s(&missing), "-o", s(d.path())]);
    assert_eq!(code(&o), Some(1));
    assert!(stderr(&o).contains("is a directory"), "{}", stderr(&o));
    let o = run(&["-ganglia", s(&missing), "-o", ""]);
    assert_eq!(code(&o), Some(2));
    assert!(stderr(&o).contains("empty"), "{}", stderr(&o));
    // A closed standard output is an output problem, not a success.
    let g = example("grid/domain-a.traced");
    let o = bash(r#""$0" -q -ganglia "$1" -o - >&-"#, &[s(&g)]);
    assert_eq!(code(&o), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("standard output is closed"));
    // A reader that stops early is still fine.
    let o = bash(
        r#""$0" -q -ganglia "$1" -o - | head -c 10 > /dev/null; exit ${PIPESTATUS[0]}"#,
        &[s(&g)],
    );
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
}

#[test]
fn a_missing_nodes_file_is_a_usage_problem() {
    // A log whose rank names no processor: only -mpinodes can place it.
    let mut c = clog_build::Clog2::new(false, 1024);
    c.bare(0.001, 0, 600);
    let d = tempdir();
    let log = d.path().join("bare.clog2");
    fs::write(&log, c.finish()).unwrap();
    let out = d.path().join("x.paje");
    let o = run(&["-mpi", s(&log), "--mpi-start", "1795264448", "-o", s(&out)]);
    assert_eq!(code(&o), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("-mpinodes"), "{}", stderr(&o));
    let nodes = d.path().join("nodes");
    fs::write(&nodes, "hostA\n").unwrap();
    let o = run(&[
        "-q",
        "-mpi",
        s(&log),
        "-mpinodes",
        s(&nodes),
        "--mpi-start",
        "1795264448",
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}
