//! A plan file as `integrador task` reads it: arbitrary bytes parsed as
//! a plan, its registry rebuilt and used as a run would (names, keys,
//! the order of rows, a machine looked up); an error or a registry,
//! never a panic. Seeds: a real plan (`integrador plan ... -o`).
#![no_main]

use integrador::hierarchy::Hierarchy;
use integrador::registry::Registry;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(plan) = serde_json::from_slice::<integrador::scale::Plan>(data) else {
        return;
    };
    let Ok(mut reg) = Registry::from_snapshot(Hierarchy::builtin(), &plan.registry) else {
        return;
    };
    for c in reg.up_front_order() {
        let _ = integrador::sink::ids::container_key(&reg, c);
    }
    let m = reg.machine("node01", None);
    let _ = reg.process(m, 42);
    let _ = reg.snapshot();
});
