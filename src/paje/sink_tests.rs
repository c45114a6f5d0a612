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
    RunEnd {
        report: crate::report::RunReport::empty(),
    }
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
