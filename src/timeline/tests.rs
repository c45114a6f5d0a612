use super::*;
use crate::model::{ContainerId, TypeId};

fn op(i: usize) -> Op {
    Op::PopState {
        container: ContainerId(i as u32),
        ty: TypeId(0),
    }
}

fn index(op: &Op) -> usize {
    op.container().0 as usize
}

/// Pushes `(lane, time)` in order, draining what is ready after each.
fn run(t: &mut Timeline, pushes: &[(u32, i64)]) -> Result<Vec<(i64, usize)>> {
    let mut out = Vec::new();
    for (i, &(lane, time)) in pushes.iter().enumerate() {
        t.push_on(Lane(lane), i as u64 + 1, time, op(i))?;
        while let Some((time, op)) = t.pop_ready() {
            out.push((time, index(&op)));
        }
    }
    while let Some((time, op)) = t.pop_any() {
        out.push((time, index(&op)));
    }
    Ok(out)
}

fn one(window: i64, times: &[i64]) -> Result<Vec<(i64, usize)>> {
    let mut t = Timeline::new(window, SourceStats::default(), None);
    let pushes: Vec<(u32, i64)> = times.iter().map(|&t| (0, t)).collect();
    run(&mut t, &pushes)
}

/// A timeline of two independent lanes on the reference clock.
fn two_lanes(window: i64) -> (Timeline, Lane, Lane) {
    let mut t = Timeline::lanes(window, SourceStats::default()).independent();
    let a = t.lane(0, Clock::IDENTITY);
    let b = t.lane(0, Clock::IDENTITY);
    (t, a, b)
}

#[test]
fn lanes_read_in_order_release_at_once_and_refuse_a_step_back() {
    let (mut t, a, b) = two_lanes(1_000);
    t.expect(a, 10);
    t.expect(b, 20);
    t.push_on(a, 1, 10, op(0)).unwrap();
    // The window holds it back...
    assert!(t.pop_ready().is_none());
    // ...unless a first pass found every lane in order.
    t.in_order();
    t.recheck = 0;
    assert_eq!(
        t.pop_ready().map(|(time, op)| (time, index(&op))),
        Some((10, 0))
    );
    let e = t.push_on(a, 2, 9, op(1)).unwrap_err();
    assert!(
        e.message.contains("line 2: time goes back 1ns before line 1, though the first pass read this file in order"),
        "{e}"
    );
}

#[test]
fn a_ready_event_waits_behind_an_earlier_one_queued() {
    let (mut t, a, b) = two_lanes(1_000);
    t.in_order();
    t.expect(a, 10);
    t.expect(b, 14);
    t.reached(a, 10);
    // Later than anything reached: queued.
    t.push_on(a, 1, 11, op(0)).unwrap();
    t.expect(a, 20);
    t.reached(b, 14);
    // Ready at once, but the queued one comes first.
    t.push_on(b, 2, 14, op(1)).unwrap();
    let mut out = Vec::new();
    while let Some((time, op)) = t.pop_ready() {
        out.push((time, index(&op)));
    }
    assert_eq!(out, vec![(11, 0), (14, 1)]);
}

#[test]
fn sorts_within_the_window_and_keeps_ties_in_order() {
    let out = one(10, &[5, 3, 5, 20, 12, 30]).unwrap();
    assert_eq!(out, vec![(3, 1), (5, 0), (5, 2), (12, 4), (20, 3), (30, 5)]);
}

#[test]
fn refuses_to_go_back_further() {
    let e = one(10, &[5, 100, 89]).unwrap_err();
    assert!(
        e.message
            .contains("line 3: time goes back 11ns before line 2"),
        "{e}"
    );
}

#[test]
fn shared_lanes_are_placed_by_their_offsets() {
    let mut t = Timeline::lanes(0, SourceStats::default());
    t.lane(100, Clock::IDENTITY);
    t.lane(0, Clock::IDENTITY);
    // Source times in order; lane 0 runs 100 ns ahead on the wall clock.
    let out = run(&mut t, &[(0, 0), (1, 50), (1, 100), (0, 120), (1, 150)]).unwrap();
    assert_eq!(out, vec![(50, 1), (100, 0), (100, 2), (150, 4), (220, 3)]);
}

#[test]
fn independent_lanes_wait_for_each_other() {
    let mut t = Timeline::lanes(5, SourceStats::default()).independent();
    let a = t.lane(0, Clock::IDENTITY);
    let b = t.lane(1000, Clock::IDENTITY);
    t.expect(a, 10);
    t.expect(b, -990);
    t.push_on(b, 1, -990, op(0)).unwrap();
    // Lane a may still push at 10 - 5: nothing at 10 is ready.
    assert!(t.pop_ready().is_none());
    t.push_on(a, 1, 10, op(1)).unwrap();
    t.push_on(a, 2, 40, op(2)).unwrap();
    // Lane b may still step back to 5 - 5 = 0 on the wall clock.
    assert!(t.pop_ready().is_none());
    t.close(b);
    assert_eq!(t.pop_ready().map(|(t, o)| (t, index(&o))), Some((10, 0)));
    assert_eq!(t.pop_ready().map(|(t, o)| (t, index(&o))), Some((10, 1)));
    assert!(t.pop_ready().is_none());
}

#[test]
fn two_points_correct_the_drift_between_them() {
    let mut t = Timeline::lanes(0, SourceStats::default());
    // 1000 ns of trace time are 1001 ns of wall time.
    let lane = t
        .drifting_lane((0, 5_000), (1_000_000, 1_001_000 + 5_000), Clock::IDENTITY)
        .unwrap();
    assert_eq!(t.map(lane, 0), 5_000);
    assert_eq!(t.map(lane, 500_000), 505_500);
    assert_eq!(t.map(lane, 1_000_000), 1_006_000);
    assert!(t.drifting_lane((10, 0), (10, 5), Clock::IDENTITY).is_none());
}

proptest::proptest! {
    /// A run of ready events taken at once is what `pop_ready` gives one
    /// by one, after every push, whatever the run's length.
    #[test]
    fn a_ready_run_is_what_pop_ready_gives(
        times in proptest::collection::vec(0i64..50, 0..60),
        window in 0i64..20,
        runs in proptest::collection::vec(0usize..4, 1..8),
    ) {
        let mut one_by_one = Timeline::new(window, SourceStats::default(), None);
        let mut by_runs = Timeline::new(window, SourceStats::default(), None);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for (i, &time) in times.iter().enumerate() {
            let pushed = one_by_one.push_on(Lane(0), i as u64 + 1, time, op(i));
            proptest::prop_assert_eq!(
                pushed.is_ok(),
                by_runs.push_on(Lane(0), i as u64 + 1, time, op(i)).is_ok()
            );
            if pushed.is_err() {
                return Ok(());
            }
            while let Some((t, op)) = one_by_one.pop_ready() {
                a.push((t, index(&op)));
            }
            let mut run = Vec::new();
            loop {
                by_runs.drain_ready(&mut run, runs[i % runs.len()]);
                match by_runs.pop_ready() {
                    Some((time, op)) => run.push(Event { time, op }),
                    None => break,
                }
            }
            b.extend(run.iter().map(|e| (e.time, index(&e.op))));
            proptest::prop_assert_eq!(&a, &b);
        }
    }

    #[test]
    fn output_is_the_stable_sort(times in proptest::collection::vec(0i64..50, 0..60)) {
        let out = one(100, &times).unwrap();
        let mut expected: Vec<(i64, usize)> = times.iter().copied().zip(0..).collect();
        expected.sort_by_key(|&(t, i)| (t, i));
        proptest::prop_assert_eq!(&out, &expected);
        // A narrow window either refuses or sorts exactly the same way.
        if let Ok(narrow) = one(3, &times) {
            proptest::prop_assert_eq!(narrow, expected);
        }
    }

    /// Lanes found in order and merged on reference time, as a
    /// libRastro run's converter merges its files: every event comes
    /// out as soon as its record is converted, in the sort's order.
    #[test]
    fn lanes_in_order_are_handed_on_at_once_in_the_sort(
        runs in proptest::collection::vec(
            proptest::collection::vec((0i64..4, 1usize..4), 0..15), 1..4),
        offsets in proptest::collection::vec(-20i64..20, 4),
    ) {
        let mut t = Timeline::lanes(100, SourceStats::default()).independent();
        let lanes: Vec<Lane> = (0..runs.len()).map(|k| t.lane(offsets[k], Clock::IDENTITY)).collect();
        t.in_order();
        // Each lane's local times, and the walk's merge of them on
        // the reference clock (ties: lane order).
        let locals: Vec<Vec<(i64, usize)>> = runs
            .iter()
            .map(|r| r.iter().scan(0i64, |at, &(dt, n)| { *at += dt; Some((*at, n)) }).collect())
            .collect();
        let mut walk: Vec<(i64, usize, usize)> = Vec::new();
        for (k, l) in locals.iter().enumerate() {
            for (j, &(local, _)) in l.iter().enumerate() {
                walk.push((local + offsets[k], k, j));
            }
            match l.first() {
                Some(&(first, _)) => t.expect(lanes[k], first),
                None => t.close(lanes[k]),
            }
        }
        walk.sort();
        let (mut out, mut expected) = (Vec::new(), Vec::new());
        let mut pushed = 0usize;
        for &(mapped, k, j) in &walk {
            let (local, n) = locals[k][j];
            t.reached(lanes[k], local);
            for _ in 0..n {
                t.push_on(lanes[k], pushed as u64, local, op(pushed)).unwrap();
                expected.push((mapped, pushed));
                pushed += 1;
            }
            match locals[k].get(j + 1) {
                Some(&(next, _)) => t.expect(lanes[k], next),
                None => t.close(lanes[k]),
            }
            while let Some((time, op)) = t.pop_ready() {
                out.push((time, index(&op)));
            }
            // Nothing is held back.
            proptest::prop_assert_eq!(out.len(), pushed);
        }
        proptest::prop_assert!(t.pop_any().is_none());
        proptest::prop_assert_eq!(out, expected);
    }

    #[test]
    fn lanes_give_the_sort_on_the_reference_clock(
        pushes in proptest::collection::vec((0u32..3, 0i64..50), 0..60),
        offsets in proptest::collection::vec(-20i64..20, 3),
    ) {
        let mut t = Timeline::lanes(100, SourceStats::default());
        for &o in &offsets {
            t.lane(o, Clock::IDENTITY);
        }
        let out = run(&mut t, &pushes).unwrap();
        let mut expected: Vec<(i64, usize)> = pushes
            .iter()
            .enumerate()
            .map(|(i, &(l, s))| (s + offsets[l as usize], i))
            .collect();
        expected.sort();
        proptest::prop_assert_eq!(out, expected);
    }
}

proptest::proptest! {
    /// A packed key sorts as its (time, sequence) pair, whatever the
    /// times (negative, the extremes), and unpacks to it.
    #[test]
    fn keys_sort_as_their_pairs(
        a in (proptest::prop_oneof![proptest::num::i64::ANY, proptest::sample::select(vec![i64::MIN, -1, 0, 1, i64::MAX])], proptest::num::u64::ANY),
        b in (proptest::prop_oneof![proptest::num::i64::ANY, proptest::sample::select(vec![i64::MIN, -1, 0, 1, i64::MAX])], proptest::num::u64::ANY),
    ) {
        let (ka, kb) = (packed(a), packed(b));
        proptest::prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
        proptest::prop_assert_eq!(unpacked(ka), a);
    }
}

/// Pushes `times` in order on one lane, taking what is ready after each
/// push (by `pop_ready` or by runs, as `runs` says in turn); the events
/// and, for each, how many pushes came before it was handed on.
fn out_with_moments(mut t: Timeline, times: &[i64], runs: &[bool]) -> Vec<(i64, usize, usize)> {
    let mut out = Vec::new();
    let mut batch = Vec::new();
    for (i, &time) in times.iter().enumerate() {
        t.push(i as u64 + 1, time, op(i)).unwrap();
        if runs[i % runs.len()] {
            t.drain_ready(&mut batch, usize::MAX);
            out.extend(batch.drain(..).map(|e| (e.time, index(&e.op), i + 1)));
        }
        while let Some((time, op)) = t.pop_ready() {
            t.count_out(time);
            out.push((time, index(&op), i + 1));
        }
    }
    while let Some((time, op)) = t.pop_any() {
        t.count_out(time);
        out.push((time, index(&op), times.len()));
    }
    assert_eq!(t.stats.events, out.len() as u64);
    out
}

proptest::proptest! {
    /// A converter that orders its events itself gets them handed on in
    /// the same order and at the same times (on a drifting clock too),
    /// the first one at the same moment (it decides the rows created up
    /// front); the later ones no later than the window would.
    #[test]
    fn ordered_events_pass_as_the_window_would_give_them(
        steps in proptest::collection::vec(0i64..30, 0..80),
        runs in proptest::collection::vec(proptest::bool::ANY, 1..5),
        drift in proptest::bool::ANY,
    ) {
        let times: Vec<i64> = steps
            .iter()
            .scan(1_000i64, |t, s| {
                *t += s;
                Some(*t)
            })
            .collect();
        let timeline = |ordered: bool| {
            let mut t = Timeline::lanes(25, SourceStats::default());
            if drift {
                t.drifting_lane((1_000, 5_000), (2_000, 7_003), Clock::IDENTITY).unwrap();
            } else {
                t.lane(-7, Clock::IDENTITY);
            }
            if ordered {
                t.ordered();
            }
            t
        };
        let plain = out_with_moments(timeline(false), &times, &runs);
        let ordered = out_with_moments(timeline(true), &times, &runs);
        let events = |v: &[(i64, usize, usize)]| v.iter().map(|&(t, i, _)| (t, i)).collect::<Vec<_>>();
        proptest::prop_assert_eq!(events(&plain), events(&ordered));
        proptest::prop_assert_eq!(plain.first().map(|e| e.2), ordered.first().map(|e| e.2));
        for (p, o) in plain.iter().zip(&ordered) {
            proptest::prop_assert!(o.2 <= p.2);
        }
    }
}

#[test]
fn an_ordered_timeline_passes_pushes_through_and_refuses_a_step_back() {
    let mut t = Timeline::new(1_000, SourceStats::default(), None);
    t.ordered();
    t.push(1, 10, op(0)).unwrap();
    // The window holds the first event back...
    assert!(t.pop_ready().is_none());
    t.push(2, 2_000, op(1)).unwrap();
    // Counted as the run counts what it takes.
    let pop = |t: &mut Timeline| {
        let (time, op) = t.pop_ready()?;
        t.count_out(time);
        Some((time, index(&op)))
    };
    assert_eq!(pop(&mut t), Some((10, 0)));
    assert!(pop(&mut t).is_none());
    // ...and closes once it is out: what was held is ready at the next
    // push, and once it is out, pushes pass as they come.
    t.push(3, 2_000, op(2)).unwrap();
    assert!(!t.passing);
    assert_eq!(pop(&mut t), Some((2_000, 1)));
    assert_eq!(pop(&mut t), Some((2_000, 2)));
    t.push(4, 2_500, op(3)).unwrap();
    assert!(t.passing);
    let mut out = Vec::new();
    t.drain_ready(&mut out, usize::MAX);
    assert_eq!(
        out.iter().map(|e| index(&e.op)).collect::<Vec<_>>(),
        vec![3]
    );
    assert_eq!(t.stats.events, 4);
    let e = t.push(5, 2_499, op(4)).unwrap_err();
    assert!(
        e.message
            .contains("line 5: internal: time goes back 1ns before line 4"),
        "{e}"
    );
}

#[test]
fn a_push_behind_a_lanes_expected_record_is_refused() {
    // Lane a's next record is far ahead (a record that gives no event),
    // so b's events up to there are handed on; a's next push, back
    // before them, would come out after them.
    let (mut t, a, b) = two_lanes(10);
    t.expect(a, 1_000);
    t.push_on(b, 1, 500, op(0)).unwrap();
    t.expect(b, 2_000);
    assert_eq!(t.pop_ready().map(|(time, _)| time), Some(500));
    let e = t.push_on(a, 2, 600, op(1)).unwrap_err();
    assert!(
        e.message
            .contains("line 2: time goes back 400ns before a record read earlier in this file"),
        "{e}"
    );
    // Within the window of it: taken.
    t.push_on(a, 3, 995, op(2)).unwrap();
}
