//! The ftrace, trace-cmd and perf text readers on arbitrary bytes; the
//! first byte picks the format, as a user's --os-format would.
#![no_main]

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
    let mut r = integrador_sched::text::TextReader::new(rest, format);
    while let Ok(Some(_)) = r.next_event() {}
});
