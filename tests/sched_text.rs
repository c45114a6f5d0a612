//! The scheduler text readers against the real capture of the
//! pingpong-pipe workload: the same capture rendered by ftrace, trace-cmd
//! and perf, each line decoded to the counts of `expected.json`.

mod common;

use common::{fixture, read_json};
use integrador_sched::text::{Kind, TextReader};
use integrador_sched::Format;
use std::collections::BTreeMap;

fn us(ns: i64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
}

#[test]
fn every_rendering_decodes_to_the_expected_counts() {
    let exp = read_json(&fixture("sched/pingpong-pipe/expected.json"));
    for (file, format) in [
        ("ftrace.txt", Format::Ftrace),
        ("trace-cmd-report.txt", Format::TraceCmd),
        ("perf-script.txt", Format::Perf),
    ] {
        let path = fixture(&format!("sched/pingpong-pipe/{file}"));
        let head = std::fs::read(&path).unwrap();
        assert_eq!(integrador_sched::detect(&head[..4096]), format, "{file}");
        let mut r = TextReader::new(
            std::io::BufReader::new(std::fs::File::open(&path).unwrap()),
            format,
        );
        let e = &exp[file];
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        let (mut first, mut last) = (None, 0i64);
        let mut markers = Vec::new();
        let mut from_idle: BTreeMap<String, u64> = BTreeMap::new();
        let mut to_idle: BTreeMap<String, u64> = BTreeMap::new();
        #[derive(Default)]
        struct P {
            switch: u64,
            sin: u64,
            sout: u64,
            states: BTreeMap<String, u64>,
            wakeup: u64,
            waking: u64,
            new: u64,
        }
        let mut pids: BTreeMap<i32, P> = BTreeMap::new();
        let mut n = 0u64;
        let mut prev_ts = i64::MIN;
        let mut ordered = true;
        while let Some(ev) = r.next_event().unwrap() {
            n += 1;
            first.get_or_insert(ev.ts_ns);
            last = ev.ts_ns;
            ordered &= ev.ts_ns >= prev_ts;
            prev_ts = ev.ts_ns;
            let name = match &ev.kind {
                Kind::Switch {
                    prev_pid,
                    prev_state,
                    next_pid,
                    ..
                } => {
                    let p = pids.entry(*prev_pid).or_default();
                    p.switch += 1;
                    p.sout += 1;
                    *p.states.entry(prev_state.to_string()).or_default() += 1;
                    let q = pids.entry(*next_pid).or_default();
                    q.switch += 1;
                    q.sin += 1;
                    if *prev_pid == 0 {
                        *from_idle.entry(ev.cpu.to_string()).or_default() += 1;
                    }
                    if *next_pid == 0 {
                        *to_idle.entry(ev.cpu.to_string()).or_default() += 1;
                    }
                    "sched_switch".to_string()
                }
                Kind::Wakeup { event, pid, .. } => {
                    let p = pids.entry(*pid).or_default();
                    match event.as_str() {
                        "sched_wakeup" => p.wakeup += 1,
                        "sched_waking" => p.waking += 1,
                        _ => p.new += 1,
                    }
                    event.to_string()
                }
                Kind::Fork { .. } => "sched_process_fork".into(),
                Kind::Exit { .. } => "sched_process_exit".into(),
                Kind::Marker(t) => {
                    markers.push((us(ev.ts_ns), t.to_string()));
                    if format == Format::TraceCmd {
                        "print".into()
                    } else {
                        "tracing_mark_write".into()
                    }
                }
                Kind::Other(o) => o.to_string(),
            };
            *counts.entry(name).or_default() += 1;
        }
        assert_eq!(n, e["events"].as_u64().unwrap(), "{file}");
        let want: BTreeMap<String, u64> = e["event_counts"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
            .collect();
        assert_eq!(counts, want, "{file}");
        assert_eq!(us(first.unwrap()), e["first_event_ts"].as_str().unwrap());
        assert_eq!(us(last), e["last_event_ts"].as_str().unwrap());
        assert_eq!(ordered, e["time_ordered"].as_bool().unwrap());
        if let Some(ms) = e["markers"].as_array() {
            assert_eq!(markers.len(), ms.len());
            for ((t, text), m) in markers.iter().zip(ms) {
                assert_eq!(t, m["trace_ts"].as_str().unwrap());
                assert!(
                    text.starts_with(&format!(
                        "integrador_epoch={}",
                        m["epoch"].as_str().unwrap()
                    )),
                    "{text}"
                );
            }
        }
        let nonzero = |m: &serde_json::Value| -> BTreeMap<String, u64> {
            m.as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
                .filter(|(_, v)| *v > 0)
                .collect()
        };
        assert_eq!(
            from_idle,
            nonzero(&e["switches_from_idle_per_cpu"]),
            "{file}"
        );
        assert_eq!(to_idle, nonzero(&e["switches_to_idle_per_cpu"]), "{file}");
        for (pid, w) in e["pids"].as_object().unwrap() {
            let p = &pids[&pid.parse::<i32>().unwrap()];
            let ctx = format!("{file} pid {pid}");
            assert_eq!(p.switch, w["sched_switch"].as_u64().unwrap(), "{ctx}");
            assert_eq!(p.sin, w["switch_in"].as_u64().unwrap(), "{ctx}");
            assert_eq!(p.sout, w["switch_out"].as_u64().unwrap(), "{ctx}");
            let states: BTreeMap<String, u64> = w["switch_out_states"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
                .collect();
            assert_eq!(p.states, states, "{ctx}");
            assert_eq!(p.wakeup, w["wakeup"].as_u64().unwrap(), "{ctx}");
            assert_eq!(p.waking, w["waking"].as_u64().unwrap(), "{ctx}");
            assert_eq!(p.new, w["wakeup_new"].as_u64().unwrap(), "{ctx}");
        }
    }
}

#[test]
fn plugin_state_letters_map_to_the_kernels() {
    use integrador_sched::text::kernel_state;
    assert_eq!(kernel_state("X"), "Z");
    assert_eq!(kernel_state("Z"), "X");
    assert_eq!(kernel_state("S|W"), "S|I");
    assert_eq!(kernel_state("R"), "R");
}

/// The column variants of sched.md: no flags, 4 flags, a TGID column, ns
/// times, comms with spaces and dashes, perf pid/tid and callchains, lost
/// events.
#[test]
fn line_variants() {
    let ftrace = "# tracer: nop\n\
        \x20Web Content-2711  (  2700) [001] d..2  574.071560: sched_switch: prev_comm=Web Content prev_pid=2711 prev_prio=120 prev_state=R+ ==> next_comm=memfd:sealed-91 next_pid=2328 next_prio=120\n\
        CPU:1 [LOST 12 EVENTS]\n\
        \x20         <idle>-0     [000]   574.073384123: sched_wakeup: comm=a b pid=7 prio=120 success=1 target_cpu=000\n";
    let mut r = TextReader::new(ftrace.as_bytes(), Format::Ftrace);
    let a = r.next_event().unwrap().unwrap();
    assert_eq!(
        (a.comm.as_str(), a.pid, a.cpu, a.ts_ns),
        ("Web Content", 2711, 1, 574_071_560_000)
    );
    assert!(
        matches!(&a.kind, Kind::Switch { prev_comm, prev_state, next_comm, next_pid: 2328, .. }
        if prev_comm == "Web Content" && prev_state == "R+" && next_comm == "memfd:sealed-91")
    );
    let b = r.next_event().unwrap().unwrap();
    assert_eq!(
        (b.comm.as_str(), b.pid, b.ts_ns),
        ("<idle>", 0, 574_073_384_123)
    );
    assert!(matches!(&b.kind, Kind::Wakeup { comm, pid: 7, .. } if comm == "a b"));
    assert_eq!(r.lost, vec![(1, 12)]);
    assert!(r.next_event().unwrap().is_none());

    let perf = "\x20   perf 9557/9558 [000]   783.550145:       sched:sched_switch: prev_comm=perf prev_pid=9558 prev_prio=120 prev_state=D ==> next_comm=migration/0 next_pid=18 next_prio=0\n\
        \t    ffffffff8149ab1a __schedule+0x1a ([kernel.kallsyms])\n\n";
    let mut r = TextReader::new(perf.as_bytes(), Format::Perf);
    let a = r.next_event().unwrap().unwrap();
    assert_eq!((a.pid, a.cpu), (9558, 0));
    assert!(r.next_event().unwrap().is_none());

    // A broken line names its number.
    let e = TextReader::new(
        "# tracer: nop\nbash-1 [000] .... 1.5: sched_switch: garbage\n".as_bytes(),
        Format::Ftrace,
    )
    .next_event()
    .unwrap_err();
    assert_eq!(e.line, 2);
    assert!(
        e.to_string()
            .contains("sched_switch payload does not parse"),
        "{e}"
    );
}

proptest::proptest! {
    #[test]
    fn text_readers_never_panic(lines in proptest::collection::vec(
        proptest::prop_oneof![
            proptest::strategy::Just(" bash-1 [000] d..2. 1.000001: sched_switch: prev_comm=a prev_pid=1 prev_prio=1 prev_state=S ==> next_comm=b next_pid=2 next_prio=1".to_string()),
            proptest::strategy::Just("CPU:0 [LOST 3 EVENTS]".to_string()),
            "[ -~]{0,80}",
            "[a-z]{1,8}-[0-9]{1,5} \\[[0-9]{3}\\] [.dNh0-9]{0,5} [0-9]{1,25}\\.[0-9]{0,12}: [a-z_:]{1,20}: [ -~]{0,60}",
        ], 0..20)) {
        let text = lines.join("\n");
        for f in [Format::Ftrace, Format::TraceCmd, Format::Perf] {
            let mut r = TextReader::new(text.as_bytes(), f);
            while let Ok(Some(_)) = r.next_event() {}
        }
    }
}

/// The CPU timelines with the missing switches reconstructed: per task,
/// the run intervals and run time, and per CPU the inferred switches, as
/// expected.json counts them, for all three renderings.
#[test]
fn reconstructed_run_intervals_equal_expected_json() {
    use integrador_sched::switches::{Change, Cpus, Switch};
    let exp = read_json(&fixture("sched/pingpong-pipe/expected.json"));
    for (file, format) in [
        ("ftrace.txt", Format::Ftrace),
        ("trace-cmd-report.txt", Format::TraceCmd),
        ("perf-script.txt", Format::Perf),
    ] {
        let path = fixture(&format!("sched/pingpong-pipe/{file}"));
        let mut r = TextReader::new(
            std::io::BufReader::new(std::fs::File::open(&path).unwrap()),
            format,
        );
        let mut cpus = Cpus::new();
        let mut all: Vec<Switch> = Vec::new();
        while let Some(ev) = r.next_event().unwrap() {
            cpus.feed(&ev, &mut all);
        }
        let e = &exp[file];
        for (key, change) in [
            ("inferred_switch_in_per_cpu", Change::In),
            ("inferred_switch_out_per_cpu", Change::Out),
        ] {
            for (cpu, n) in e[key].as_object().unwrap() {
                let mine = all
                    .iter()
                    .filter(|s| s.inferred && s.change == change && s.cpu.to_string() == *cpu)
                    .count();
                assert_eq!(mine as u64, n.as_u64().unwrap(), "{file} {key} cpu {cpu}");
            }
        }
        for (pid, w) in e["pids"].as_object().unwrap() {
            let pid: i32 = pid.parse().unwrap();
            let mut stream: Vec<&Switch> = all.iter().filter(|s| s.pid == pid).collect();
            stream.sort_by_key(|s| s.ts);
            let (mut intervals, mut open, mut total, mut leading) = (0u64, None, 0i64, 0u64);
            for s in &stream {
                match (s.change, open) {
                    (Change::In, _) => open = Some(s.ts),
                    (Change::Out, None) => leading += 1,
                    (Change::Out, Some(o)) => {
                        intervals += 1;
                        total += s.ts / 1000 - o / 1000;
                        open = None;
                    }
                }
            }
            let ctx = format!("{file} pid {pid}");
            let inf_in = stream
                .iter()
                .filter(|s| s.inferred && s.change == Change::In)
                .count() as u64;
            let inf_out = stream
                .iter()
                .filter(|s| s.inferred && s.change == Change::Out)
                .count() as u64;
            assert_eq!(inf_in, w["inferred_switch_in"].as_u64().unwrap(), "{ctx}");
            assert_eq!(inf_out, w["inferred_switch_out"].as_u64().unwrap(), "{ctx}");
            assert_eq!(intervals, w["run_intervals"].as_u64().unwrap(), "{ctx}");
            assert_eq!(total, w["run_time_us"].as_i64().unwrap(), "{ctx}");
            assert_eq!(
                leading,
                w["switch_out_without_switch_in"].as_u64().unwrap(),
                "{ctx}"
            );
            assert_eq!(open.is_some(), w["open_at_end"].as_bool().unwrap(), "{ctx}");
        }
    }
}
