//! The Pajé writer behind the sinks' machinery: inline on the run's
//! thread ([`Staged`]) and on a thread of its own ([`OnThread`]) it
//! writes the same bytes and counts the same, and a failed write comes
//! back as its error.

use crate::hierarchy::{Display, Hierarchy};
use crate::model::LinkKey;
use crate::model::{ContainerId, Event, Op};
use crate::paje::writer::PajeWriter;
use crate::registry::Registry;
use crate::sink::thread::OnThread;
use crate::sink::Staged;
use crate::sink::{RunEnd, SinkStats, TraceSink};
use std::io;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// Random events on machines and processes made as they come (so
/// definitions reach the writer's thread between events): variables,
/// states pushed and popped past their depth, point events, links
/// whose other end is a container not created yet; some containers
/// created up front.
fn events(ops: &[(u8, u8, u8, u16)]) -> (Registry, Vec<ContainerId>, Vec<Event>) {
    let mut reg = Registry::new(Hierarchy::builtin());
    let plain = Display::default();
    let up_front: Vec<ContainerId> = (0..2)
        .map(|h| reg.machine(&format!("node{h}"), None))
        .collect();
    let mut time = 1_000_000_000_000i64;
    let mut out = Vec::new();
    for (i, &(host, pid, what, dt)) in ops.iter().enumerate() {
        time += i64::from(dt) * 100;
        let m = reg.machine(&format!("node{}", host % 5), None);
        let p = reg.process(m, u32::from(pid % 4)).unwrap_or(m);
        let mty = reg.container(m).ty;
        let pty = reg.container(p).ty;
        let op = match what % 8 {
            0 => Op::SetVariable {
                container: m,
                ty: reg.variable_type(mty, &format!("metric {}", what % 3), None),
                value: f64::from(what) / 7.0,
            },
            1 | 2 => {
                let ty = reg.state_type(pty, "state");
                let value = reg.value_of(ty, &format!("s{}", what % 4), &plain);
                if what % 7 == 1 {
                    Op::PushState {
                        container: p,
                        ty,
                        value,
                    }
                } else {
                    Op::SetState {
                        container: p,
                        ty,
                        value,
                    }
                }
            }
            3 => Op::PopState {
                container: p,
                ty: reg.state_type(pty, "state"),
            },
            4 => {
                let ty = reg.event_type(pty, "event");
                let value = reg.value_of(ty, &format!("e {}", what % 2), &plain);
                Op::NewEvent {
                    container: p,
                    ty,
                    value,
                }
            }
            7 => {
                // A state that ends wherever it is in the stack.
                let ty = reg.state_type(pty, "state");
                let value = reg.value_of(ty, &format!("s{}", what % 4), &plain);
                Op::EndState {
                    container: p,
                    ty,
                    value,
                }
            }
            k => {
                let other = reg.machine(&format!("node{}", (host / 8) % 7), None);
                let other = reg.process(other, u32::from(what % 3)).unwrap_or(other);
                let (container, ty, value) = reg.link(p, other, "message", "m", &plain);
                let key = LinkKey {
                    channel: 1,
                    seq: i as u64,
                };
                if k == 5 {
                    Op::StartLink {
                        container,
                        ty,
                        value,
                        from: p,
                        key,
                        size: i64::from(dt),
                        tag: 0,
                    }
                } else {
                    Op::EndLink {
                        container,
                        ty,
                        value,
                        to: other,
                        key,
                    }
                }
            }
        };
        out.push(Event { time, op });
    }
    (reg, up_front, out)
}

/// A sink's bytes, kept where the test can read them after the
/// commit moved the output away.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| io::Error::other("poisoned"))?
            .extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn end() -> RunEnd {
    RunEnd::empty()
}

fn write(
    mut sink: Box<dyn TraceSink>,
    reg: &mut Registry,
    up_front: &[ContainerId],
    events: &[Event],
) -> io::Result<SinkStats> {
    sink.create_in_order(reg, up_front, 1_000_000_000_000)?;
    // Event by event, then in runs of several lengths (a lone
    // source's way).
    let (one, runs) = events.split_at(events.len() / 3);
    for e in one {
        sink.write_run(reg, std::slice::from_ref(e))?;
    }
    for (i, run) in runs.chunks(97).enumerate() {
        let (a, b) = run.split_at((i * 31) % run.len().max(1));
        sink.write_run(reg, a)?;
        sink.write_run(reg, b)?;
    }
    let done = sink.finish(reg, &end())?;
    (done.commit)().map_err(|e| io::Error::other(e.to_string()))?;
    Ok(done.stats)
}

fn inline<W: Write + Send + 'static>(out: W) -> Box<dyn TraceSink> {
    let paje = PajeWriter::new(out, 1_000_000_000_000, false).unwrap();
    Box::new(Staged::new(paje, Box::new(|_| Ok(()))))
}

fn threaded<W: Write + Send + 'static>(out: W) -> Box<dyn TraceSink> {
    let make = move || PajeWriter::new(out, 1_000_000_000_000, false);
    Box::new(OnThread::new(make, Box::new(|_| Ok(()))))
}

fn same_bytes(ops: &[(u8, u8, u8, u16)]) -> Result<(), String> {
    let (mut reg, up_front, evs) = events(ops);
    let (a, b) = (Shared::default(), Shared::default());
    let sa = write(inline(a.clone()), &mut reg, &up_front, &evs).map_err(|e| e.to_string())?;
    let sb = write(threaded(b.clone()), &mut reg, &up_front, &evs).map_err(|e| e.to_string())?;
    if *a.0.lock().unwrap() != *b.0.lock().unwrap() {
        return Err("the sink's thread wrote other bytes".into());
    }
    if sa != sb {
        return Err(format!("other counts: {sa:?} / {sb:?}"));
    }
    Ok(())
}

proptest::proptest! {
    /// The sink on its own thread writes what it writes inline,
    /// and counts the same.
    #[test]
    fn the_thread_writes_what_inline_writes(
        ops in proptest::collection::vec(
            (0u8..40, 0u8..8, proptest::num::u8::ANY, 0u16..20), 0..300),
    ) {
        proptest::prop_assert_eq!(same_bytes(&ops), Ok(()));
    }
}

#[test]
fn many_batches_write_what_inline_writes() {
    let ops: Vec<(u8, u8, u8, u16)> = (0..20_000u32)
        .map(|i| {
            (
                (i * 7 % 40) as u8,
                (i % 8) as u8,
                (i * 13) as u8,
                (i % 9) as u16,
            )
        })
        .collect();
    assert_eq!(same_bytes(&ops), Ok(()));
}

/// Fails every write after `left` bytes.
struct Full {
    left: usize,
}

impl Write for Full {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
        }
        let n = b.len().min(self.left);
        self.left -= n;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failed_write_comes_back_as_its_error() {
    let ops: Vec<(u8, u8, u8, u16)> = (0..50_000u32)
        .map(|i| ((i % 40) as u8, (i % 8) as u8, (i * 13) as u8, 1))
        .collect();
    let (mut reg, up_front, evs) = events(&ops);
    let all = Shared::default();
    write(inline(all.clone()), &mut reg, &up_front, &evs).unwrap();
    let whole = all.0.lock().unwrap().len();
    assert!(whole > 1_000_000);
    // In the header, in the first chunk of lines, in the last one.
    for left in [10, 300_000, whole - 1] {
        match write(threaded(Full { left }), &mut reg, &up_front, &evs) {
            Err(e) => assert_eq!(e.kind(), io::ErrorKind::StorageFull, "{e}"),
            Ok(_) => panic!("a full disk after {left} bytes went unnoticed"),
        }
    }
}

/// Every interval and point event an encoder hears, as text that names
/// things by path and name (ids differ between a run and a replayed
/// trace), times from `origin`.
struct Recorder {
    origin: i64,
    rows: Vec<String>,
}

fn path<C: crate::sink::Catalogue + ?Sized>(cat: &C, c: ContainerId) -> String {
    let mut names = Vec::new();
    let mut at = (c != ContainerId::ROOT).then_some(c);
    while let Some(x) = at {
        names.push(cat.container(x).name.to_string());
        at = cat.container(x).parent;
    }
    names.reverse();
    names.join("/")
}

impl crate::sink::Encoder for Recorder {
    const INTERVALS: bool = true;
    type Out = Vec<String>;

    fn declare_type<C: crate::sink::Catalogue + ?Sized>(
        &mut self,
        _: &C,
        _: &crate::sink::Book,
        _: crate::model::TypeId,
    ) -> io::Result<()> {
        Ok(())
    }
    fn declare_value<C: crate::sink::Catalogue + ?Sized>(
        &mut self,
        _: &C,
        _: &crate::sink::Book,
        _: crate::model::ValueId,
        _: Option<&str>,
    ) -> io::Result<()> {
        Ok(())
    }
    fn create<C: crate::sink::Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        _: &crate::sink::Book,
        c: ContainerId,
        _: i64,
    ) -> io::Result<()> {
        self.rows.push(format!("container {}", path(cat, c)));
        Ok(())
    }
    fn event<C: crate::sink::Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        _: &crate::sink::Book,
        ev: &Event,
        _: bool,
    ) -> io::Result<()> {
        if let Op::NewEvent {
            container,
            ty,
            value,
        } = ev.op
        {
            self.rows.push(format!(
                "event {} {} {} {}",
                path(cat, container),
                cat.type_def(ty).name,
                cat.value(value).name,
                ev.time - self.origin
            ));
        }
        Ok(())
    }
    fn span<C: crate::sink::Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        _: &crate::sink::Book,
        s: &crate::sink::Span,
    ) -> io::Result<()> {
        use crate::sink::{Span, SpanEnd};
        // A run ends what is open with the trace; its Pajé trace says so
        // by destroying every container.
        let cause = |c: SpanEnd| match c {
            SpanEnd::ContainerEnd | SpanEnd::TraceEnd => "end",
            c => c.word(),
        };
        let o = self.origin;
        self.rows.push(match *s {
            Span::State {
                container,
                ty,
                value,
                start,
                end,
                depth,
                cause: c,
                ..
            } => format!(
                "state {} {} {} {} {} {depth} {}",
                path(cat, container),
                cat.type_def(ty).name,
                cat.value(value).name,
                start - o,
                end - o,
                cause(c)
            ),
            Span::Variable {
                container,
                ty,
                value,
                start,
                end,
                cause: c,
                ..
            } => format!(
                "variable {} {} {value} {} {} {}",
                path(cat, container),
                cat.type_def(ty).name,
                start - o,
                end - o,
                cause(c)
            ),
            Span::Link {
                container,
                ty,
                value,
                from,
                to,
                start,
                end,
                ..
            } => format!(
                "link {} {} {} {} {} {} {}",
                path(cat, container),
                cat.type_def(ty).name,
                cat.value(value).name,
                path(cat, from),
                path(cat, to),
                start - o,
                end - o
            ),
        });
        Ok(())
    }
    fn destroy<C: crate::sink::Catalogue + ?Sized>(
        &mut self,
        _: &C,
        _: &crate::sink::Book,
        _: ContainerId,
        _: i64,
    ) -> io::Result<()> {
        Ok(())
    }
    fn finish(mut self, _: &RunEnd, _: &mut SinkStats) -> io::Result<Vec<String>> {
        self.rows.sort();
        Ok(self.rows)
    }
}

/// Valid random events: states set, pushed and popped (some on an empty
/// stack), variables, point events, and links whose two halves both come.
fn valid_events(ops: &[(u8, u8, u8, u16)]) -> (Registry, Vec<Event>) {
    let mut reg = Registry::new(Hierarchy::builtin());
    let plain = Display::default();
    let mut time = ORIGIN + 1_000;
    let mut out = Vec::new();
    for (i, &(host, pid, what, dt)) in ops.iter().enumerate() {
        time += i64::from(dt) * 977;
        let m = reg.machine(&format!("node{}", host % 4), None);
        let p = reg.process(m, u32::from(pid % 3)).unwrap_or(m);
        let (mty, pty) = (reg.container(m).ty, reg.container(p).ty);
        let state = reg.state_type(pty, "state");
        let value = reg.value_of(state, &format!("s{}", what % 4), &plain);
        let op = match what % 6 {
            0 => Op::SetVariable {
                container: m,
                ty: reg.variable_type(mty, &format!("metric {}", what % 3), None),
                value: f64::from(what) / 7.0,
            },
            1 => Op::SetState {
                container: p,
                ty: state,
                value,
            },
            2 => Op::PushState {
                container: p,
                ty: state,
                value,
            },
            3 => Op::PopState {
                container: p,
                ty: state,
            },
            4 => {
                let ty = reg.event_type(pty, "event");
                let value = reg.value_of(ty, &format!("e {}", what % 2), &plain);
                Op::NewEvent {
                    container: p,
                    ty,
                    value,
                }
            }
            _ => {
                let other = reg.machine(&format!("node{}", (host / 4) % 4), None);
                let other = reg.process(other, u32::from(what % 3)).unwrap_or(other);
                let (container, ty, value) = reg.link(p, other, "message", "m", &plain);
                let key = LinkKey {
                    channel: 1,
                    seq: i as u64,
                };
                let end = Op::EndLink {
                    container,
                    ty,
                    value,
                    to: other,
                    key,
                };
                out.push(Event {
                    time: time + i64::from(dt) * 3_001,
                    op: end,
                });
                Op::StartLink {
                    container,
                    ty,
                    value,
                    from: p,
                    key,
                    size: 8,
                    tag: 0,
                }
            }
        };
        out.push(Event { time, op });
    }
    out.sort_by_key(|e| e.time);
    (reg, out)
}

const ORIGIN: i64 = 1_000_000_000_000;

/// What the replay makes of a run, and what it makes of that run's Pajé
/// trace read back by the checker, are the same intervals (issue 64: one
/// replay for the writers and the checker).
fn replayed_trace_gives_the_same_intervals(ops: &[(u8, u8, u8, u16)]) -> Result<(), String> {
    use crate::sink::Replay;
    let (reg, evs) = valid_events(ops);
    let mut run = Replay::new(Recorder {
        origin: ORIGIN,
        rows: Vec::new(),
    });
    let mut paje =
        Replay::new(PajeWriter::new(Vec::new(), ORIGIN, false).map_err(|e| e.to_string())?);
    for e in &evs {
        run.event(&reg, e).map_err(|e| e.to_string())?;
        paje.event(&reg, e).map_err(|e| e.to_string())?;
    }
    let want = run.finish(&reg, &end()).map_err(|e| e.to_string())?.0;
    let bytes = paje.finish(&reg, &end()).map_err(|e| e.to_string())?.0;
    let rec = Recorder {
        origin: 0,
        rows: Vec::new(),
    };
    let (report, got) =
        crate::paje::check::check_into(&bytes[..], rec).map_err(|e| e.to_string())?;
    if !report.accepted() {
        return Err(format!("{:?}", report.findings));
    }
    if got != want {
        let only_run: Vec<_> = want.iter().filter(|r| !got.contains(r)).take(5).collect();
        let only_trace: Vec<_> = got.iter().filter(|r| !want.contains(r)).take(5).collect();
        return Err(format!(
            "run only: {only_run:?}; trace only: {only_trace:?}"
        ));
    }
    Ok(())
}

proptest::proptest! {
    #[test]
    fn a_trace_replayed_gives_the_runs_intervals(
        ops in proptest::collection::vec(
            (0u8..16, 0u8..6, proptest::num::u8::ANY, 0u16..6), 0..200),
    ) {
        proptest::prop_assert_eq!(replayed_trace_gives_the_same_intervals(&ops), Ok(()));
    }
}

/// A state that ends under others ends alone as an interval, the others
/// keeping their starts; Pajé is told the pops and pushes of its stack rule.
#[test]
fn a_state_ending_under_others() {
    use crate::sink::Replay;
    let mut reg = Registry::new(Hierarchy::builtin());
    let plain = Display::default();
    let m = reg.machine("node0", None);
    let p = reg.process(m, 1).unwrap();
    let ty = reg.state_type(reg.container(p).ty, "state");
    let [a, b, c] = ["a", "b", "c"].map(|n| reg.value_of(ty, n, &plain));
    let at = |k: i64, op| Event {
        time: ORIGIN + k * 1_000_000,
        op,
    };
    let evs = [
        at(
            0,
            Op::PushState {
                container: p,
                ty,
                value: a,
            },
        ),
        at(
            1,
            Op::PushState {
                container: p,
                ty,
                value: b,
            },
        ),
        at(
            2,
            Op::PushState {
                container: p,
                ty,
                value: c,
            },
        ),
        at(
            3,
            Op::EndState {
                container: p,
                ty,
                value: a,
            },
        ),
        at(
            4,
            Op::EndState {
                container: p,
                ty,
                value: c,
            },
        ),
        at(
            5,
            Op::EndState {
                container: p,
                ty,
                value: b,
            },
        ),
    ];
    let mut rec = Replay::new(Recorder {
        origin: ORIGIN,
        rows: Vec::new(),
    });
    let mut paje = Replay::new(PajeWriter::new(Vec::new(), ORIGIN, false).unwrap());
    for e in &evs {
        rec.event(&reg, e).unwrap();
        paje.event(&reg, e).unwrap();
    }
    let spans = rec.finish(&reg, &end()).unwrap().0;
    let states: Vec<&String> = spans.iter().filter(|s| s.starts_with("state")).collect();
    assert_eq!(
        states,
        [
            "state grid/cluster/node0/1 state a 0 3000000 0 pop",
            "state grid/cluster/node0/1 state b 1000000 5000000 1 pop",
            "state grid/cluster/node0/1 state c 2000000 4000000 2 pop",
        ]
    );
    let (bytes, stats) = paje.finish(&reg, &end()).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    // At 3 ms: three pops, then b and c pushed back.
    let at3: Vec<&str> = text
        .lines()
        .filter(|l| l.split(' ').nth(1) == Some("0.003000000"))
        .map(|l| l.split(' ').next().unwrap_or(""))
        .collect();
    let (push, pop) = (
        crate::paje::header::id_of(crate::paje::EventKind::PushState).to_string(),
        crate::paje::header::id_of(crate::paje::EventKind::PopState).to_string(),
    );
    assert_eq!(at3, [&pop, &pop, &pop, &push, &push]);
    assert_eq!(stats.skipped_pops, 0);
    assert!(crate::paje::check::check(text.as_bytes())
        .unwrap()
        .accepted());
}

/// Every trace of the checker's labelled corpus (pj_dump accepts some,
/// rejects the others), whole and cut at every 97th byte, replayed into
/// an encoder that takes every interval, as `integrador tables` does: a
/// report and rows, never a panic (the fuzz target `check` does the same
/// on any bytes).
#[test]
fn the_checker_corpus_replays_into_intervals() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/paje");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        for cut in (0..=bytes.len()).step_by(97).chain([bytes.len()]) {
            let rec = Recorder {
                origin: 0,
                rows: Vec::new(),
            };
            let (_, rows) = crate::paje::check::check_into(&bytes[..cut], rec).unwrap();
            n += rows.len();
        }
    }
    assert!(n > 100, "{n} rows from the corpus");
}
