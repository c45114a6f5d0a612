//! A timeline whose converter orders its events itself (a kernel trace
//! stages its changes and hands them on in time order): past its first
//! event, the window and the queue are work for nothing, and pushes pass
//! straight through.

use super::{Lane, Timeline};
use crate::error::{Error, Result};
use crate::model::{Event, Op};

impl Timeline {
    /// Tells that the converter pushes its events on one lane in
    /// non-decreasing time, having put them in order itself. The window
    /// still holds the first ones: what is registered before the first
    /// event is written decides the rows created up front. Once an event
    /// is handed on, the window closes and, the queue drained, each push
    /// is ready as pushed. A push that steps back then is refused.
    pub fn ordered(&mut self) {
        self.ordered = true;
    }

    /// An ordered timeline whose first event is out: no window any more
    /// (a push cannot step back), and once nothing is queued, pushes pass
    /// straight through.
    #[cold]
    pub(super) fn open_passage(&mut self) {
        if self.window != 0 {
            self.window = 0;
            self.bounded_at = None;
        }
        let queued = self.queues.iter().any(|q| !q.is_empty());
        self.passing =
            !self.independent && self.lanes.len() == 1 && !queued && self.express.is_none();
    }

    /// A push once [`Timeline::open_passage`] opened the way.
    #[inline(always)]
    pub(super) fn pass(
        &mut self,
        (lane, pos): (Lane, u64),
        at: (i64, Option<i64>),
        op: Op,
    ) -> Result<()> {
        let (local, mapped) = at;
        let Some(l) = self.lanes.get(lane.0 as usize) else {
            return Err(self.undeclared());
        };
        if local < self.max {
            return Err(self.stepped_back(pos, local));
        }
        self.max = local;
        self.max_pos = pos;
        let time = mapped.unwrap_or_else(|| l.map(local));
        self.through.push_back((time, op));
        Ok(())
    }

    /// The error of a push that steps back on an ordered timeline.
    #[cold]
    #[inline(never)]
    fn stepped_back(&self, pos: u64, local: i64) -> Error {
        let unit = self.unit;
        Error::in_file(
            &self.stats.path,
            format!(
                "{unit} {pos}: internal: time goes back {} before {unit} {}, in a source that orders its events",
                crate::time::format_duration(self.max - local),
                self.max_pos,
            ),
        )
    }

    /// [`Timeline::drain_run`] once the way is open: what passed, counted.
    pub(super) fn drain_through(&mut self, out: &mut Vec<Event>, max: usize) {
        // Taken out for the loop, which counts on `self`.
        let mut through = std::mem::take(&mut self.through);
        let n = max.min(through.len());
        for (time, op) in through.drain(..n) {
            self.count_out(time);
            out.push(Event { time, op });
        }
        self.through = through;
    }
}
