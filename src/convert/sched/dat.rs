//! `trace.dat` (trace-cmd record's binary file) as a kernel trace: its
//! events become the same typed events the text readers give, so one
//! converter serves both.

use crate::error::{Error, Result};
use integrador_sched::text::{Event, Kind};
use integrador_tracedat::{Kind as DatKind, TraceDat};
use std::path::Path;

/// A kernel trace's events, from text or from trace.dat.
pub(super) enum Events {
    Text(integrador_sched::text::TextReader<std::io::BufReader<crate::input::Reader>>),
    Dat(Box<TraceDat<crate::input::Reader>>),
}

impl Events {
    pub(super) fn next_event(&mut self, path: &Path) -> Result<Option<Event>> {
        match self {
            Events::Text(r) => r.next_event().map_err(|e| Error::in_file(path, e)),
            Events::Dat(d) => Ok(d
                .next_event()
                .map_err(|e| Error::in_file(path, e))?
                .map(event)),
        }
    }

    /// The line left out for want of its newline (text only).
    pub(super) fn cut(&self) -> Option<u64> {
        match self {
            Events::Text(r) => r.cut,
            Events::Dat(_) => None,
        }
    }

    /// Events the trace says were lost.
    pub(super) fn lost(&self) -> u64 {
        match self {
            Events::Text(r) => r.lost.iter().map(|l| l.1).sum(),
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
            prev_comm,
            prev_pid,
            prev_state: state_letters(prev_state),
            next_comm,
            next_pid,
        },
        DatKind::Wakeup { event, comm, pid } => Kind::Wakeup { event, comm, pid },
        DatKind::Fork {
            pid,
            child_comm,
            child_pid,
        } => Kind::Fork {
            pid,
            child_comm,
            child_pid,
        },
        DatKind::Exit { pid } => Kind::Exit { pid },
        DatKind::Print(t) => Kind::Marker(t),
        DatKind::Other(n) => Kind::Other(n),
    };
    Event {
        line: e.index,
        comm: e.comm,
        pid: e.pid,
        tgid: None,
        cpu: e.cpu,
        ts_ns: e.ts_ns,
        kind,
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
