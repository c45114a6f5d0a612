//! `integrador record ganglia` against a stand-in gmond: a TCP server on a
//! free localhost port that answers each connection with the next of the
//! real gmond snapshots of `tests/data/ganglia/snapshots` (what a real
//! gmond serves: one XML document, then it closes). The recording is
//! checked against the samples of the same snapshots.

mod common;

use common::*;
use std::io::Write;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

fn snapshots() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixture("ganglia/snapshots"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    v.sort();
    v
}

/// Every snapshot's bytes, in order: what a stand-in serves in turn.
fn snapshot_answers() -> Vec<Vec<u8>> {
    snapshots()
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect()
}

/// Serves `answers` in turn, one per connection, then the last again.
fn serve(listener: TcpListener, answers: Vec<Vec<u8>>) {
    std::thread::spawn(move || {
        let mut i = 0;
        for conn in listener.incoming() {
            let Ok(mut c) = conn else { continue };
            let a = &answers[i.min(answers.len() - 1)];
            let _ = c.write_all(a);
            i += 1;
        }
    });
}

/// `integrador record ganglia ARGS`, not started yet.
fn record_command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_integrador"));
    c.args(["record", "ganglia"]).args(args);
    c
}

fn record(args: &[&str]) -> std::process::Output {
    record_command(args).output().unwrap()
}

/// [`record`] in the background, its stderr kept.
fn spawn_record(args: &[&str]) -> std::process::Child {
    record_command(args).stderr(Stdio::piped()).spawn().unwrap()
}

fn lines(p: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn a_recording_holds_every_distinct_sample_once() {
    let d = tempdir();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let answers = snapshot_answers();
    let n = answers.len();
    serve(l, answers);
    let out = d.path().join("g.traced");
    let server = format!("127.0.0.1:{port}");
    let o = record(&[
        &server,
        "-o",
        out.to_str().unwrap(),
        "--every",
        "50ms",
        "--for",
        &format!("{}ms", 50 * n + 400),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.ends_with('\n'));
    let l = lines(&out);
    assert_eq!(l[0], "# collector 127.0.0.1");
    assert!(l[1].starts_with("# cluster "), "{}", l[1]);
    assert_eq!(l[2], "# reorder-window 20m");
    let samples: Vec<&String> = l.iter().filter(|x| !x.starts_with('#')).collect();
    let distinct: std::collections::BTreeSet<(String, String, String)> = samples
        .iter()
        .map(|x| {
            let w: Vec<&str> = x.split(' ').collect();
            (w[0].into(), w[1].into(), w[2].into())
        })
        .collect();
    assert_eq!(distinct.len(), samples.len(), "a sample written twice");
    let exp = read_json(&fixture("ganglia/snapshots/samples.expected.json"));
    let wobbles: u64 = snapshot_wobbles(&fixture("ganglia/snapshots"))
        .values()
        .sum();
    assert!(wobbles > 0, "the fixture shows the wobble");
    assert_eq!(
        samples.len() as u64,
        exp["distinct_samples"].as_u64().unwrap() - wobbles
    );
    assert!(
        err.contains(&format!("recorded {} sample(s)", samples.len())),
        "{err}"
    );
    // -ganglia reads it, and pj_dump takes the trace.
    let trace = d.path().join("g.paje");
    run_ok(&["-ganglia", out.to_str().unwrap()], &trace);
    assert_valid(&trace);
}

#[test]
fn a_server_that_is_down_at_start_is_waited_for() {
    let d = tempdir();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = d.path().join("g.traced");
    let server = format!("127.0.0.1:{port}");
    let child = spawn_record(&[
        &server,
        "-o",
        out.to_str().unwrap(),
        "--every",
        "100ms",
        "--for",
        "2s",
    ]);
    std::thread::sleep(Duration::from_millis(500));
    let l = TcpListener::bind(("127.0.0.1", port)).unwrap();
    serve(l, vec![std::fs::read(&snapshots()[0]).unwrap()]);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("no server answers; retrying"), "{err}");
    assert!(err.contains("answers again after"), "{err}");
    assert!(lines(&out).len() > 10);
}

#[test]
fn an_existing_file_is_appended_to_only_when_asked_and_a_torn_line_goes() {
    let d = tempdir();
    let out = d.path().join("g.traced");
    let before = "# collector 127.0.0.1\n1795264440 cpu_user node09 1.5\n1795264441 cpu_us";
    std::fs::write(&out, before).unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let server = format!("127.0.0.1:{}", l.local_addr().unwrap().port());
    serve(l, vec![std::fs::read(&snapshots()[0]).unwrap()]);
    let o = record(&[&server, "-o", out.to_str().unwrap(), "--once"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), before);
    let o = record(&[&server, "-o", out.to_str().unwrap(), "--once", "--append"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("torn last line"), "{err}");
    let l = lines(&out);
    assert_eq!(l[1], "1795264440 cpu_user node09 1.5");
    assert!(l[2].split(' ').count() == 4, "{}", l[2]);
    assert_eq!(l.iter().filter(|x| x.starts_with("# collector")).count(), 1);
}

#[test]
fn garbage_answers_are_skipped_not_fatal() {
    let d = tempdir();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let server = format!("127.0.0.1:{}", l.local_addr().unwrap().port());
    let good = std::fs::read(&snapshots()[0]).unwrap();
    let cut = good[..good.len() / 2].to_vec();
    serve(l, vec![b"<html>nope</html".to_vec(), cut, good]);
    let out = d.path().join("g.traced");
    let o = record(&[
        &server,
        "-o",
        out.to_str().unwrap(),
        "--every",
        "50ms",
        "--for",
        "600ms",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("poll skipped"), "{err}");
    assert!(std::fs::read_to_string(&out).unwrap().ends_with('\n'));
    assert!(lines(&out).len() > 10, "{err}");
}

#[test]
fn sigterm_ends_a_recording_at_a_whole_line() {
    let d = tempdir();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let server = format!("127.0.0.1:{}", l.local_addr().unwrap().port());
    serve(l, snapshot_answers());
    let out = d.path().join("g.traced");
    let child = spawn_record(&[&server, "-o", out.to_str().unwrap(), "--every", "50ms"]);
    std::thread::sleep(Duration::from_millis(400));
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("recorded"), "{err}");
    assert!(std::fs::read_to_string(&out).unwrap().ends_with('\n'));
    run_ok(
        &["-ganglia", out.to_str().unwrap()],
        &d.path().join("g.paje"),
    );
}

/// gmetad answers for several clusters: `{cluster}` in the name gives one
/// recording per cluster, each with its own `# cluster` header; a
/// `--config` file's `[record]` section filters like the options.
#[test]
fn gmetad_clusters_go_to_their_own_files_and_config_filters() {
    let d = tempdir();
    let snap = std::fs::read_to_string(&snapshots()[0]).unwrap();
    let start = snap.find("<CLUSTER ").unwrap();
    let end = snap.find("</CLUSTER>").unwrap() + "</CLUSTER>".len();
    let a = &snap[start..end];
    let b = a.replace("NAME=\"cluster.example\"", "NAME=\"other.example\"");
    let doc = format!(
        "{}<GANGLIA_XML VERSION=\"3.7.2\" SOURCE=\"gmetad\">\n<GRID NAME=\"grid\" AUTHORITY=\"x\" LOCALTIME=\"1795264448\">\n{a}\n{b}\n</GRID>\n</GANGLIA_XML>\n",
        &snap[..snap.find("<GANGLIA_XML").unwrap()]
    );
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let server = format!("127.0.0.1:{}", l.local_addr().unwrap().port());
    serve(l, vec![doc.into_bytes()]);
    let conf = d.path().join("rec.toml");
    std::fs::write(&conf, "[record]\nexclude_metrics = [\"boot*\"]\n").unwrap();
    let pattern = d.path().join("{cluster}.traced");
    let o = record(&[
        &server,
        "-o",
        pattern.to_str().unwrap(),
        "--once",
        "--config",
        conf.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    for c in ["cluster.example", "other.example"] {
        let l = lines(&d.path().join(format!("{c}.traced")));
        assert_eq!(l[1], format!("# cluster {c}"));
        assert!(l.len() > 10);
        assert!(!l.iter().any(|x| x.contains(" boottime ")), "config filter");
    }
    let bad = d.path().join("bad.toml");
    std::fs::write(&bad, "[record]\nmetricz = [\"x\"]\n").unwrap();
    let o = record(&[
        &server,
        "-o",
        d.path().join("x.traced").to_str().unwrap(),
        "--once",
        "--config",
        bad.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("bad.toml: line 2: unknown field `metricz`"),
        "{err}"
    );
}

/// A write that fails mid-recording (here the file-size limit, which fails
/// a write like a full disk does, without needing a small filesystem):
/// exit 1, and the file is what was recorded before, up to a whole line.
#[test]
fn a_failed_write_exits_1_and_the_file_ends_at_a_whole_line() {
    use std::os::unix::process::CommandExt;
    let d = tempdir();
    let answers = snapshot_answers();
    let run = |out: &std::path::Path, limit: Option<u64>| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let server = format!("127.0.0.1:{}", l.local_addr().unwrap().port());
        serve(l, answers.clone());
        let mut c = record_command(&[
            &server,
            "-o",
            out.to_str().unwrap(),
            "--every",
            "50ms",
            "--for",
            "1500ms",
        ]);
        if let Some(limit) = limit {
            // SAFETY: only async-signal-safe calls between fork and exec.
            unsafe {
                c.pre_exec(move || {
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    let r = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    if libc::setrlimit(libc::RLIMIT_FSIZE, &r) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        c.output().unwrap()
    };
    let full = d.path().join("full.traced");
    let o = run(&full, None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let whole = std::fs::read(&full).unwrap();
    let cut = d.path().join("cut.traced");
    let o = run(&cut, Some(whole.len() as u64 * 3 / 4));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("ends at its last complete line"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let part = std::fs::read(&cut).unwrap();
    assert!(!part.is_empty() && part.len() < whole.len() * 3 / 4);
    assert!(part.ends_with(b"\n"));
    assert!(whole.starts_with(&part), "not what was recorded before");
    run_ok(
        &["-ganglia", cut.to_str().unwrap()],
        &d.path().join("g.paje"),
    );
}

/// Answers `template` with its LOCALTIME set to our clock + `skew` s (a
/// server whose clock is `skew` ahead), `n` times, then stops listening.
fn serve_live(listener: TcpListener, template: String, skew: i64, n: usize) {
    std::thread::spawn(move || {
        let at = template.find("LOCALTIME=\"").unwrap() + "LOCALTIME=\"".len();
        let end = at + template[at..].find('"').unwrap();
        for conn in listener.incoming().take(n) {
            let Ok(mut c) = conn else { continue };
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs() as i64;
            let a = format!("{}{}{}", &template[..at], now + skew, &template[end..]);
            let _ = c.write_all(a.as_bytes());
        }
    });
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A fallback whose clock is 100 s ahead of the collector's: its samples
/// are moved onto the collector's clock, not written 100 s late, and not
/// written again.
#[test]
fn a_fallback_server_s_samples_go_onto_the_collector_s_clock() {
    let d = tempdir();
    let template = std::fs::read_to_string(&snapshots()[0]).unwrap();
    let a = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = a.local_addr().unwrap().port();
    // 127.0.0.2 is another host to the recorder (loopback is 127/8).
    let b = TcpListener::bind(("127.0.0.2", port)).unwrap();
    serve_live(a, template.clone(), 0, 3);
    serve_live(b, template, 100, usize::MAX);
    let out = d.path().join("g.traced");
    let t0 = now_secs();
    let o = record(&[
        &format!("127.0.0.1:{port}"),
        &format!("127.0.0.2:{port}"),
        "-o",
        out.to_str().unwrap(),
        "--every",
        "300ms",
        "--for",
        "3s",
    ]);
    let t1 = now_secs();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let said = err
        .split("127.0.0.2:")
        .nth(1)
        .and_then(|x| x.split("its clock reads ").nth(1))
        .and_then(|x| x.split(' ').next())
        .and_then(|x| x.parse::<i64>().ok());
    assert!(said.is_some_and(|s| (99..=101).contains(&s)), "{err}");
    let l = lines(&out);
    assert_eq!(l[0], "# collector 127.0.0.1");
    let times: Vec<i64> = l
        .iter()
        .filter(|x| !x.starts_with('#'))
        .map(|x| x.split(' ').next().unwrap().parse().unwrap())
        .collect();
    let max_tn = 1200; // the snapshot's oldest sample
    assert!(times.len() > 10);
    assert!(
        times.iter().all(|&t| t <= t1 + 1 && t >= t0 - max_tn),
        "a time off the collector's clock: {err}"
    );
}

/// `--append` refuses a recording of another collector or cluster: its
/// times are on another clock.
#[test]
fn append_refuses_another_collector_or_cluster() {
    let d = tempdir();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let server = format!("127.0.0.1:{}", l.local_addr().unwrap().port());
    serve(l, vec![std::fs::read(&snapshots()[0]).unwrap()]);
    let out = d.path().join("g.traced");
    for (head, what) in [
        ("# collector athlon01\n", "collector athlon01"),
        (
            "# collector 127.0.0.1\n# cluster elsewhere\n",
            "cluster elsewhere",
        ),
    ] {
        let before = format!("{head}1795264440 cpu_user node09 1.5\n");
        std::fs::write(&out, &before).unwrap();
        let o = record(&[&server, "-o", out.to_str().unwrap(), "--once", "--append"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(what), "{err}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), before);
    }
}
