//! The ftrace, trace-cmd and perf text readers on arbitrary bytes; the
//! first byte picks the format, as a user's --os-format would. Each event
//! read in the trace must be the one its line gives read alone: the
//! reader takes a line's context from an earlier line that starts alike,
//! and stores each event into the last one's strings. Read without the
//! task names, the events are the same but for those names.
#![no_main]

use integrador_sched::text::TextReader;
use integrador_sched::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let format = match pick % 4 {
        0 => Format::Ftrace,
        1 => Format::TraceCmd,
        2 => Format::Perf,
        _ => integrador_sched::detect(rest),
    };
    if format == Format::Os {
        return;
    }
    let lines: Vec<&[u8]> = rest.split(|&b| b == b'\n').collect();
    let mut r = TextReader::new(rest, format);
    // One event filled again and again, as the converter reads; and the
    // same lines read as integrador's converter reads them, without the
    // task names.
    let mut ev = integrador_sched::text::Event::default();
    let mut lean = TextReader::new(rest, format).without_task_names();
    let mut lean_ev = integrador_sched::text::Event::default();
    // And as its decoding thread reads them, sharing the kinds it keeps:
    // through a ring of events, as in the thread's batches, each kind
    // found through the slots' copy.
    let mut shared = TextReader::new(rest, format)
        .without_task_names()
        .shared_kinds();
    let mut kinds = integrador_sched::text::Kinds::default();
    let mut ring: Vec<integrador_sched::text::Event> = (0..3).map(|_| Default::default()).collect();
    let mut turn = 0;
    while let Ok(true) = r.read_into(&mut ev) {
        assert!(matches!(lean.read_into(&mut lean_ev), Ok(true)));
        let slot = &mut ring[turn % 3];
        turn += 1;
        assert!(matches!(shared.read_into(slot), Ok(true)));
        assert_eq!(kinds.of(slot), &lean_ev.kind);
        let mut want = ev.clone();
        want.comm.clear();
        if let integrador_sched::text::Kind::Wakeup { comm, .. } = &mut want.kind {
            comm.clear();
        }
        assert_eq!(lean_ev, want);
        let i = usize::try_from(ev.line).unwrap() - 1;
        let mut one = lines[i].to_vec();
        one.push(b'\n');
        let mut alone = TextReader::new(&one[..], format)
            .next_event()
            .expect("a line read in the trace reads alone")
            .expect("and gives an event");
        alone.line = ev.line;
        assert_eq!(alone, ev);
    }
});
