//! The Pajé checker on arbitrary bytes: a report, never a panic; and the
//! same trace replayed into an encoder that takes every interval (what
//! `integrador tables` does), never a panic either.
#![no_main]

use integrador::model::{ContainerId, Event, TypeId, ValueId};
use integrador::sink::{Book, Catalogue, Encoder, RunEnd, SinkStats, Span};
use libfuzzer_sys::fuzz_target;
use std::io;

/// Counts what it hears, reading each name it is handed.
struct Count(u64);

impl Encoder for Count {
    const INTERVALS: bool = true;
    type Out = u64;
    fn declare_type<C: Catalogue + ?Sized>(&mut self, c: &C, _: &Book, t: TypeId) -> io::Result<()> {
        self.0 += c.type_def(t).name.len() as u64;
        Ok(())
    }
    fn declare_value<C: Catalogue + ?Sized>(
        &mut self,
        c: &C,
        _: &Book,
        v: ValueId,
        _: Option<&str>,
    ) -> io::Result<()> {
        self.0 += c.value(v).name.len() as u64;
        Ok(())
    }
    fn create<C: Catalogue + ?Sized>(&mut self, c: &C, _: &Book, x: ContainerId, _: i64) -> io::Result<()> {
        self.0 += c.container(x).name.len() as u64;
        Ok(())
    }
    fn event<C: Catalogue + ?Sized>(&mut self, _: &C, _: &Book, _: &Event, _: bool) -> io::Result<()> {
        self.0 += 1;
        Ok(())
    }
    fn span<C: Catalogue + ?Sized>(&mut self, _: &C, _: &Book, _: &Span) -> io::Result<()> {
        self.0 += 1;
        Ok(())
    }
    fn destroy<C: Catalogue + ?Sized>(&mut self, _: &C, _: &Book, _: ContainerId, _: i64) -> io::Result<()> {
        self.0 += 1;
        Ok(())
    }
    fn finish(self, _: &RunEnd, _: &mut SinkStats) -> io::Result<u64> {
        Ok(self.0)
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = integrador::paje::check::check(data);
    let _ = integrador::paje::check::check_into(data, Count(0));
});
