//! `integrador record ganglia` against a real gmond (Debian
//! `ganglia-monitor`), started by the test on free localhost ports with
//! the daemon's own default configuration made unicast: extra hosts are
//! injected with gmetric while the recorder runs and the test fetches the
//! same gmond's XML itself. The recording must hold the samples the test
//! saw, each once, in whole lines, and read back through `-ganglia`.
//! Without gmond this is a loud skip, a failure under
//! `INTEGRADOR_REQUIRE_GMOND=1` (`.ci/run` sets it).

mod common;

use common::*;
use integrador_ganglia::xml::{Entry, XmlReader};
use std::collections::BTreeSet;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn have(tool: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("INTEGRADOR_REQUIRE_GMOND").is_none(),
            "{tool} is required (INTEGRADOR_REQUIRE_GMOND): apt-get install ganglia-monitor"
        );
        eprintln!("SKIPPED: {tool} not installed (apt-get install ganglia-monitor); the recorder was not tested against a real gmond");
    }
    found
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// gmond's default configuration, in the foreground, unicast on
/// localhost: `udp` for its channel, `tcp` for its XML.
fn config(udp: u16, tcp: u16) -> String {
    let out = Command::new("gmond").arg("-t").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut s = String::new();
    let mut skip = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("udp_send_channel")
            || t.starts_with("udp_recv_channel")
            || t.starts_with("tcp_accept_channel")
        {
            skip = true;
        }
        if skip {
            if t.starts_with('}') {
                skip = false;
            }
            continue;
        }
        let line = line
            .replace("daemonize = yes", "daemonize = no")
            .replace("setuid = yes", "setuid = no")
            .replace("user = nobody", "user = root")
            .replace("user = ganglia", "user = root");
        s.push_str(&line);
        s.push('\n');
    }
    s.push_str(&format!(
        "udp_send_channel {{\n  host = 127.0.0.1\n  port = {udp}\n  ttl = 1\n}}\nudp_recv_channel {{\n  port = {udp}\n  bind = 127.0.0.1\n}}\ntcp_accept_channel {{\n  port = {tcp}\n  bind = 127.0.0.1\n}}\n"
    ));
    s
}

struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_gmond(conf: &std::path::Path) -> Daemon {
    Daemon(
        Command::new("gmond")
            .arg("-c")
            .arg(conf)
            .arg("-f")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// Value `i.h` of `test_load` for hosts node01..node03, through gmetric.
fn inject(conf: &std::path::Path, i: u32) {
    for h in 1..=3 {
        // To a dead gmond this fails: some tests mean it to.
        let _ = Command::new("gmetric")
            .arg("-c")
            .arg(conf)
            .args(["-n", "test_load", "-t", "float", "-d", "600"])
            .args(["-v", &format!("{i}.{h}")])
            .args(["-S", &format!("10.0.0.{h}:node0{h}")])
            .status();
    }
}

/// Waits until gmond serves at least one sample.
fn wait_for_samples(conf: &std::path::Path, tcp: u16) {
    let t0 = Instant::now();
    while fetch(tcp).is_none_or(|x| samples(&x).is_empty()) {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "gmond gave no sample"
        );
        inject(conf, 0);
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// The sample lines of a recording, checked whole and written once.
fn recorded_lines(text: &str) -> Vec<&str> {
    assert!(text.ends_with('\n'), "a line cut:\n{text}");
    let samples: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let distinct: BTreeSet<&str> = samples.iter().copied().collect();
    assert_eq!(distinct.len(), samples.len(), "a sample written twice");
    no_wobble(&samples);
    samples
}

/// Each line is 4 fields, and no sample is written again a second off
/// with the same value (ganglia.md §7's wobble).
fn no_wobble(samples: &[&str]) {
    let mut times: std::collections::HashMap<(&str, &str, &str), Vec<i64>> = Default::default();
    for l in samples {
        let w: Vec<&str> = l.split(' ').collect();
        assert_eq!(w.len(), 4, "{l}");
        times
            .entry((w[1], w[2], w[3]))
            .or_default()
            .push(w[0].parse().unwrap());
    }
    for (k, mut t) in times {
        t.sort();
        assert!(
            t.windows(2).all(|w| w[1] - w[0] != 1),
            "{k:?} written a second apart: {t:?}"
        );
    }
}

fn test_load_values(samples: &[&str]) -> Vec<f64> {
    samples
        .iter()
        .filter(|l| l.contains(" test_load "))
        .filter_map(|l| l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()))
        .collect()
}

/// A free pair of ports and gmond's configuration for them, in `dir`:
/// (configuration file, XML port).
fn gmond_setup(dir: &std::path::Path) -> (std::path::PathBuf, u16) {
    let (udp, tcp) = (free_port(), free_port());
    let conf = dir.join("gmond.conf");
    std::fs::write(&conf, config(udp, tcp)).unwrap();
    (conf, tcp)
}

/// `integrador record ganglia` of the gmond on `tcp` into `out`, with
/// `args`, its stderr kept.
fn recorder(tcp: u16, out: &std::path::Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_integrador"))
        .args(["record", "ganglia", &format!("127.0.0.1:{tcp}"), "-o"])
        .arg(out)
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn fetch(tcp: u16) -> Option<Vec<u8>> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", tcp)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut v = Vec::new();
    s.read_to_end(&mut v).ok()?;
    (!v.is_empty()).then_some(v)
}

/// (time, metric, host) of the numeric samples of an answer.
fn samples(xml: &[u8]) -> BTreeSet<(i64, String, String)> {
    let mut r = XmlReader::new(xml);
    let mut e = Entry::default();
    let mut out = BTreeSet::new();
    while let Ok(true) = r.next_entry(&mut e) {
        out.insert((e.time, e.metric.clone(), e.host.clone()));
    }
    out
}

#[test]
fn a_real_gmond_is_recorded_sample_for_sample() {
    if !have("gmond") || !have("gmetric") {
        return;
    }
    let d = tempdir();
    let (conf, tcp) = gmond_setup(d.path());
    let _gmond = start_gmond(&conf);
    let start = Instant::now();
    while fetch(tcp).is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "gmond did not answer"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = d.path().join("g.traced");
    let recorder = recorder(tcp, &out, &["--every", "1s", "--for", "30s"]);
    // Extra hosts and values while it records, and the test's own view.
    let mut seen = BTreeSet::new();
    // About 30 s of recording (issue 16): injections until it ends.
    let until = Instant::now() + Duration::from_secs(28);
    for i in 0.. {
        if Instant::now() >= until {
            break;
        }
        for h in 1..=3 {
            let st = Command::new("gmetric")
                .arg("-c")
                .arg(&conf)
                .args(["-n", "test_load", "-t", "float", "-d", "600"])
                .args(["-v", &format!("{}.5", i + h)])
                .args(["-S", &format!("10.0.0.{h}:node0{h}")])
                .status()
                .unwrap();
            assert!(st.success());
        }
        std::thread::sleep(Duration::from_millis(900));
        if let Some(x) = fetch(tcp) {
            seen.extend(samples(&x));
        }
    }
    let o = recorder.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.ends_with('\n'), "a line cut");
    let recorded: Vec<(i64, String, String)> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            assert_eq!(w.len(), 4, "{l}");
            (w[0].parse().unwrap(), w[1].to_string(), w[2].to_string())
        })
        .collect();
    let distinct: BTreeSet<_> = recorded.iter().cloned().collect();
    assert_eq!(distinct.len(), recorded.len(), "a sample written twice");
    no_wobble(
        &text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>(),
    );
    // Every sample the test saw while the recorder ran was recorded (a
    // reading of LOCALTIME − TN may differ by a second between answers).
    let near = |s: &(i64, String, String)| {
        (-1..=1).any(|dt| distinct.contains(&(s.0 + dt, s.1.clone(), s.2.clone())))
    };
    assert!(seen.len() > 20, "the test saw {} samples", seen.len());
    let missed: Vec<_> = seen.iter().filter(|s| !near(s)).collect();
    assert!(
        missed.is_empty(),
        "{} missed, e.g. {:?}",
        missed.len(),
        missed.first()
    );
    let injected = recorded.iter().filter(|s| s.1 == "test_load").count();
    assert!(injected >= 3, "{injected} gmetric samples");
    let trace = d.path().join("g.paje");
    run_ok(&["-ganglia", out.to_str().unwrap()], &trace);
    assert_valid(&trace);
}

/// gmond killed and restarted while it is recorded: the outage is
/// reported, nothing is written twice, the file ends at a whole line.
#[test]
fn a_gmond_restart_is_an_outage_not_a_duplicate() {
    if !have("gmond") {
        return;
    }
    let d = tempdir();
    let (conf, tcp) = gmond_setup(d.path());
    let first = start_gmond(&conf);
    wait_for_samples(&conf, tcp);
    let out = d.path().join("g.traced");
    let recorder = recorder(tcp, &out, &["--every", "500ms", "--for", "9s"]);
    for i in 1..=3 {
        inject(&conf, i);
        std::thread::sleep(Duration::from_secs(1));
    }
    drop(first);
    std::thread::sleep(Duration::from_secs(2));
    let _second = start_gmond(&conf);
    for i in 4..=6 {
        std::thread::sleep(Duration::from_millis(700));
        inject(&conf, i);
    }
    let o = recorder.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("no server answers"), "{err}");
    assert!(err.contains("answers again after"), "{err}");
    assert!(err.contains("outage: from"), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    let injected = test_load_values(&recorded_lines(&text));
    // Values injected before the kill and after the restart are there.
    assert!(injected.iter().any(|&v| v < 4.0), "{text}");
    assert!(injected.iter().any(|&v| v >= 4.0), "{text}");
}

/// gmond not running when the recorder starts: it retries, says so, and
/// records from when gmond comes up.
#[test]
fn a_gmond_down_at_start_is_waited_for() {
    if !have("gmond") {
        return;
    }
    let d = tempdir();
    let (conf, tcp) = gmond_setup(d.path());
    let out = d.path().join("g.traced");
    let recorder = recorder(tcp, &out, &["--every", "500ms", "--for", "10s"]);
    std::thread::sleep(Duration::from_secs(2));
    let _gmond = start_gmond(&conf);
    wait_for_samples(&conf, tcp);
    for i in 1..=3 {
        inject(&conf, i);
        std::thread::sleep(Duration::from_millis(800));
    }
    let o = recorder.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("no server answers; retrying"), "{err}");
    assert!(err.contains("answers again after"), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    let injected = test_load_values(&recorded_lines(&text));
    assert!(injected.iter().any(|&v| v >= 1.0), "{err}\n{text}");
}

/// SIGTERM while recording a real gmond: exit 0 with the summary, the file
/// ends at a whole line and `-ganglia` makes a valid trace of it.
#[test]
fn sigterm_mid_recording_of_a_real_gmond() {
    if !have("gmond") {
        return;
    }
    let d = tempdir();
    let (conf, tcp) = gmond_setup(d.path());
    let _gmond = start_gmond(&conf);
    wait_for_samples(&conf, tcp);
    let out = d.path().join("g.traced");
    let recorder = recorder(tcp, &out, &["--every", "200ms"]);
    for i in 1..=3 {
        inject(&conf, i);
        std::thread::sleep(Duration::from_millis(700));
    }
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(recorder.id() as i32, libc::SIGTERM) };
    let o = recorder.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("recorded"), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!recorded_lines(&text).is_empty(), "{err}");
    let trace = d.path().join("g.paje");
    run_ok(&["-ganglia", out.to_str().unwrap()], &trace);
    assert_valid(&trace);
}
