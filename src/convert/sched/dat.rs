//! `trace.dat` (trace-cmd record's binary file) as a kernel trace: its
//! events become the same typed events the text readers give, so one
//! converter serves both.

use crate::error::{Error, Result};
use crate::prefetch::{Next, Prefetch};
use integrador_sched::text::{Event, Kind, Kinds, Slot, TextReader};
use integrador_tracedat::{Kind as DatKind, TraceDat};
use std::path::Path;

/// A kernel trace's events, from text or from trace.dat.
pub(super) enum Events {
    Text(Box<integrador_sched::text::TextReader<crate::input::Reader>>),
    /// Text decoded on a thread of its own (crate::prefetch); at the end,
    /// the cut line and the lost-event count it reported. Events lie in
    /// their batch, their names inline: an event is a few cache lines in
    /// a row, which the converter's core asks for ahead. (Boxed, with a
    /// heap string per name, each event was seven or eight lines apart
    /// that went from core to core and back: 400 MB of ftrace took
    /// 1.02 s, against 0.71 s now, medians of 15 alternating rounds.)
    /// Its repeated events' kinds are the reader's slots, kept here
    /// (integrador_sched::text::Slot).
    Thread(Prefetch<Event, TextEnd>, TextEnd, Box<Kinds>),
    Dat(Box<TraceDat<crate::input::Reader>>),
}

/// What a text reader reports at its end: the line left out for want of
/// its newline, the events the trace says were lost.
pub(super) type TextEnd = (Option<u64>, u64);

/// Starts decoding text trace `path` on a thread of its own. The caller
/// has claimed a core (crate::prefetch::claim).
pub(super) fn spawn_text(path: &Path, format: integrador_sched::Format) -> Events {
    let (p, q) = (path.to_path_buf(), path.to_path_buf());
    Events::Thread(
        // 256 events a batch, not 2048: the smaller batches stay in the
        // caches between the cores (1 GB of ftrace: 4.0-5.6 s, median
        // 4.8 s, against 4.6-5.7 s, median 5.2 s, six alternating pairs;
        // 6.4-6.7 MiB RSS against 8.8-9.5 MiB). With names inline, 64
        // were slower and 1024 no faster.
        Prefetch::spawn_batched(
            256,
            move || {
                let f = crate::input::open_on_thread(&p).map_err(|e| Error::in_file(&p, e))?;
                // Names come from pass 1 (scan.rs): the converter reads
                // a switch's own names, never the context's comm nor a
                // wakeup's.
                Ok(TextReader::new(f, format)
                    .without_task_names()
                    .shared_kinds())
            },
            move |r, slot: &mut Event| r.read_into(slot).map_err(|e| Error::in_file(&q, e)),
            |r| Ok((r.cut, lost(&r.lost))),
        ),
        (None, 0),
        Box::default(),
    )
}

fn lost(l: &integrador_sched::text::Lost) -> u64 {
    l.iter().map(|l| l.1).sum()
}

impl Events {
    /// The next event: where it lies in its batch when read on a thread
    /// of its own, else read into `scratch` (the text readers reuse its
    /// strings); `None` at the end. (Swapped out of its batch instead, an
    /// event went from core to core twice: 1 GB of ftrace took 0.958 of
    /// the time read in place, the median of 9 alternating rounds.)
    pub(super) fn next_ref<'a>(
        &'a mut self,
        path: &Path,
        scratch: &'a mut Event,
    ) -> Result<Option<(&'a Event, &'a Kind)>> {
        match self {
            Events::Text(r) => Ok(r
                .read_into(scratch)
                .map_err(|e| Error::in_file(path, e))?
                .then_some((&*scratch, &scratch.kind))),
            Events::Thread(p, end, kinds) => match p.next_record()? {
                Next::Record(ev) => Ok(Some((&*ev, kinds.of(ev)))),
                Next::End(e) => {
                    *end = e;
                    Ok(None)
                }
            },
            Events::Dat(d) => match d.next_event().map_err(|e| Error::in_file(path, e))? {
                Some(e) => {
                    *scratch = event(e);
                    Ok(Some((&*scratch, &scratch.kind)))
                }
                None => Ok(None),
            },
        }
    }

    /// The line left out for want of its newline (text only).
    pub(super) fn cut(&self) -> Option<u64> {
        match self {
            Events::Text(r) => r.cut,
            Events::Thread(_, end, _) => end.0,
            Events::Dat(_) => None,
        }
    }

    /// Events the trace says were lost.
    pub(super) fn lost(&self) -> u64 {
        match self {
            Events::Text(r) => lost(&r.lost),
            Events::Thread(_, end, _) => end.1,
            Events::Dat(d) => d.lost.iter().map(|l| l.1).sum(),
        }
    }
}

/// Opens a trace.dat, one reader per CPU.
pub(super) fn open(path: &Path) -> Result<TraceDat<crate::input::Reader>> {
    TraceDat::open(|| crate::input::open(path)).map_err(|e| Error::in_file(path, e))
}

/// The kernel's `prev_state` bits as sched_switch prints them.
pub(super) fn state_letters(s: i64) -> String {
    const LETTERS: [(i64, &str); 8] = [
        (0x01, "S"),
        (0x02, "D"),
        (0x04, "T"),
        (0x08, "t"),
        (0x10, "X"),
        (0x20, "Z"),
        (0x40, "P"),
        (0x80, "I"),
    ];
    let set: Vec<&str> = LETTERS
        .iter()
        .filter(|(bit, _)| s & bit != 0)
        .map(|(_, l)| *l)
        .collect();
    match (set.is_empty(), s & 0x100 != 0) {
        (true, true) => "R+".into(),
        (true, false) => "R".into(),
        (false, _) => set.join("|"),
    }
}

/// A trace.dat event as the text readers give one.
pub(super) fn event(e: integrador_tracedat::Event) -> Event {
    let kind = match e.kind {
        DatKind::Switch {
            prev_comm,
            prev_pid,
            prev_state,
            next_comm,
            next_pid,
        } => Kind::Switch {
            prev_comm: prev_comm.into(),
            prev_pid,
            prev_state: state_letters(prev_state).into(),
            next_comm: next_comm.into(),
            next_pid,
        },
        DatKind::Wakeup { event, comm, pid } => Kind::Wakeup {
            event: event.into(),
            comm: comm.into(),
            pid,
        },
        DatKind::Fork {
            pid,
            child_comm,
            child_pid,
        } => Kind::Fork {
            pid,
            child_comm: child_comm.into(),
            child_pid,
        },
        DatKind::Exit { pid } => Kind::Exit { pid },
        DatKind::Print(t) => Kind::Marker(t.into()),
        DatKind::Other(n) => Kind::Other(n.into()),
    };
    Event {
        line: e.index,
        comm: e.comm.into(),
        pid: e.pid,
        tgid: None,
        cpu: e.cpu,
        ts_ns: e.ts_ns,
        kind,
        slot: Slot::Here,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn states_read_as_the_kernel_prints_them() {
        assert_eq!(super::state_letters(0), "R");
        assert_eq!(super::state_letters(0x100), "R+");
        assert_eq!(super::state_letters(1), "S");
        assert_eq!(super::state_letters(0x20), "Z");
        assert_eq!(super::state_letters(0x80), "I");
        assert_eq!(super::state_letters(0x3), "S|D");
    }
}
