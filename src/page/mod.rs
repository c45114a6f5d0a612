//! The clocks report page (`--report FILE.html`, docs/clocks-report.md):
//! one self-contained page that draws what the summary says in lines.
//! Per host, the correction applied over the run with the sync
//! measurements and the messages that bound it; per host pair, the
//! receives before their send without and with the corrections; which
//! input covers which machine when; and the summary itself.
//!
//! An output like the others: an [`Encoder`] of the sinks' replay that
//! only watches which input has events on which machine when
//! ([`Coverage`]), and writes the page at the end from the run's report.

mod charts;
mod html;

use crate::hierarchy::Role;
use crate::model::{ContainerId, Event};
use crate::sink::{Book, Catalogue, Encoder, RunEnd, SinkStats};
use std::collections::HashMap;
use std::io::{self, Write};

/// Spans kept per input and machine at most: when more, the shortest
/// gaps are closed (the gap that counts as one doubles), so memory stays
/// flat and the longest gaps stay visible.
const MAX_SPANS: usize = 64;

/// When one input has events on one machine: spans, apart by silences
/// longer than its own rhythm (three times its usual interval between
/// events: a monitor sampling every second covers the machine, and ten
/// seconds without a sample are a gap).
#[derive(Debug, Clone)]
pub struct Cover {
    /// Spans, in time order.
    pub spans: Vec<(i64, i64)>,
    /// The usual interval (a moving average, ns): only for drawing.
    usual: f64,
    /// The shortest silence that is a gap; doubled when the spans are
    /// too many.
    floor: i64,
    /// Events.
    pub events: u64,
}

impl Cover {
    fn new(t: i64) -> Cover {
        Cover {
            spans: vec![(t, t)],
            usual: 0.0,
            // A millisecond: finer than any monitor samples.
            floor: 1_000_000,
            events: 1,
        }
    }

    fn add(&mut self, t: i64) {
        self.events += 1;
        let Some(last) = self.spans.last_mut() else {
            self.spans.push((t, t));
            return;
        };
        let step = t.saturating_sub(last.1).max(0);
        let gap = ((3.0 * self.usual) as i64).max(self.floor);
        // Events at one instant (a monitor's metrics of one sample) say
        // nothing of its rhythm.
        if step > 0 {
            self.usual = if self.usual == 0.0 {
                step as f64
            } else {
                0.9 * self.usual + 0.1 * step as f64
            };
        }
        if step <= gap {
            last.1 = last.1.max(t);
        } else {
            self.spans.push((t, t));
        }
        while self.spans.len() > MAX_SPANS {
            self.floor = self.floor.saturating_mul(2);
            let floor = self.floor;
            let mut merged: Vec<(i64, i64)> = Vec::with_capacity(self.spans.len());
            for &s in &self.spans {
                match merged.last_mut() {
                    Some(m) if s.0.saturating_sub(m.1) <= floor => m.1 = m.1.max(s.1),
                    _ => merged.push(s),
                }
            }
            self.spans = merged;
        }
    }
}

/// Not yet looked up.
const UNKNOWN: u32 = u32::MAX;
/// Under no machine (a cluster's own variable, the root).
const NO_MACHINE: u32 = u32::MAX - 1;

/// Watches the run for the page, then writes it to `out`.
pub struct Coverage<W: Write> {
    out: W,
    machine_of: Vec<u32>,
    /// Machine names, by index.
    machines: Vec<String>,
    /// (input, machine) → when.
    cover: HashMap<(u32, u32), Cover>,
}

impl<W: Write> Coverage<W> {
    /// A page to be written to `out`.
    pub fn new(out: W) -> Coverage<W> {
        Coverage {
            out,
            machine_of: Vec::new(),
            machines: Vec::new(),
            cover: HashMap::new(),
        }
    }

    /// The machine `c` is on (itself for a machine), looked up once.
    fn machine<C: Catalogue + ?Sized>(&mut self, cat: &C, c: ContainerId) -> u32 {
        let i = c.0 as usize;
        if let Some(&m) = self.machine_of.get(i).filter(|&&m| m != UNKNOWN) {
            return m;
        }
        let mut at = (c != ContainerId::ROOT).then_some(c);
        let mut found = NO_MACHINE;
        // A hierarchy is a few levels deep; a bound all the same.
        for _ in 0..64 {
            let Some(x) = at else { break };
            let d = cat.container(x);
            if cat.type_def(d.ty).role == Some(Role::Machine) {
                found = self.machines.len() as u32;
                self.machines.push(d.name.to_string());
                break;
            }
            at = d.parent;
        }
        if self.machine_of.len() <= i {
            self.machine_of.resize(i + 1, UNKNOWN);
        }
        self.machine_of[i] = found;
        found
    }
}

impl<W: Write> Encoder for Coverage<W> {
    const INTERVALS: bool = false;
    type Out = W;

    fn event<C: Catalogue + ?Sized>(
        &mut self,
        cat: &C,
        book: &Book,
        ev: &Event,
        _: bool,
    ) -> io::Result<()> {
        let m = self.machine(cat, ev.op.container());
        if m != NO_MACHINE {
            match self.cover.get_mut(&(book.source, m)) {
                Some(c) => c.add(ev.time),
                None => {
                    self.cover.insert((book.source, m), Cover::new(ev.time));
                }
            }
        }
        Ok(())
    }

    fn finish(mut self, end: &RunEnd, stats: &mut SinkStats) -> io::Result<W> {
        let mut cover: Vec<(u32, String, Cover)> = self
            .cover
            .into_iter()
            .map(|((s, m), c)| (s, self.machines[m as usize].clone(), c))
            .collect();
        cover.sort_by(|a, b| crate::registry::natural_cmp(&a.1, &b.1).then(a.0.cmp(&b.0)));
        let page = html::page(&end.report, &cover);
        self.out.write_all(page.as_bytes())?;
        stats.records = 1;
        Ok(self.out)
    }
}
