//! Criterion micro-benchmarks: each decoder on a fixture of
//! `tests/data` held in memory (its in-cache speed, in bytes/s), and the
//! Pajé line writer (lines/s).
//! End to end figures, with the peers: `benches/all.sh`.
//!
//!     cargo bench --bench micro [FILTER]

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use integrador::paje::lines::Text;
use std::hint::black_box;
use std::io::{Cursor, Write};
use std::path::Path;

fn fixture(rel: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `copies` times the lines of `text` after its first `head` lines: a
/// fixture long enough to time, its header once.
fn repeated(text: &[u8], head: usize, copies: usize) -> Vec<u8> {
    let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    let (h, body) = lines.split_at(head.min(lines.len()));
    let mut out = h.concat();
    for _ in 0..copies {
        for l in body {
            out.extend_from_slice(l);
        }
    }
    out
}

/// Calls `step` until it says the input is over: how many steps made
/// something.
fn count(mut step: impl FnMut() -> bool) -> u64 {
    let mut n = 0;
    while step() {
        n += 1;
    }
    n
}

/// Times `read` on `input`: it decodes the whole input into a record `R`
/// kept from one iteration to the next, as a converter keeps its own.
fn decode<R: Default>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    input: &[u8],
    throughput: Throughput,
    mut read: impl FnMut(&[u8], &mut R) -> u64,
) {
    g.throughput(throughput);
    g.bench_function(name, |b| {
        let mut rec = R::default();
        b.iter(|| read(input, black_box(&mut rec)))
    });
}

fn decoders(c: &mut Criterion) {
    let mut g = c.benchmark_group("decode");

    // Records/s: most of an MPE fixture's bytes are the unused ends of
    // its 64 KiB blocks, which the reader skips.
    let clog = fixture("clog2/pingpong/pingpong.clog2");
    let records = {
        let mut r = integrador_clog::Clog2Reader::new(Cursor::new(&clog[..])).unwrap();
        count(|| r.next_record().unwrap().is_some())
    };
    decode(
        &mut g,
        "clog2",
        &clog,
        Throughput::Elements(records),
        |input, _: &mut ()| {
            let mut r = integrador_clog::Clog2Reader::new(Cursor::new(input)).unwrap();
            count(|| black_box(r.next_record().unwrap()).is_some())
        },
    );
    // The in-place read the conversion's second pass makes.
    decode(
        &mut g,
        "clog2_events_in_place",
        &clog,
        Throughput::Elements(records),
        |input, _: &mut ()| {
            let mut r = integrador_clog::Clog2Reader::new(Cursor::new(input)).unwrap();
            count(|| {
                r.next_raw()
                    .unwrap()
                    .map(|raw| black_box(raw.event()))
                    .is_some()
            })
        },
    );

    // A DECK node's records as rstgen writes them (the fixtures are a few
    // hundred bytes: too short to time the reading rather than the setup).
    let rst = {
        use integrador_rastro::encode::{Value, Writer};
        let t0 = 1_795_264_448_000_000_000;
        let mut w = Writer::new(
            integrador_rastro::Layout::Current,
            1_000_000_000,
            0,
            0,
            "node00",
            t0,
        );
        for i in 0..4000u32 {
            let t = t0 + i64::from(i) * 10_000;
            w.event(406, t, &[Value::Str("mbox")]);
            w.event(
                407,
                t + 1_000,
                &[Value::U32(i), Value::U32(1), Value::U64(1024)],
            );
            w.event(500, t + 2_000, &[]);
            w.event(501, t + 5_000, &[]);
        }
        w.into_bytes()
    };
    let bytes = |b: &[u8]| Throughput::Bytes(b.len() as u64);
    decode(&mut g, "rastro", &rst, bytes(&rst), |input, rec| {
        let mut r = integrador_rastro::RstReader::new(Cursor::new(input)).unwrap();
        count(|| r.next_into(rec).unwrap())
    });

    let vol = fixture("pcp/pmlogger_v2/20261121.12.34.0");
    decode(&mut g, "pcp", &vol, bytes(&vol), |input, rec| {
        let mut r = integrador_pcp::VolumeReader::new(Cursor::new(input)).unwrap();
        count(|| r.next_into(rec).unwrap())
    });

    let traced = repeated(&fixture("ganglia/cluster-example.traced"), 0, 20);
    decode(&mut g, "traced", &traced, bytes(&traced), |input, s| {
        let mut r = integrador_ganglia::TracedReader::new(Cursor::new(input)).unwrap();
        count(|| r.read_sample(s).unwrap())
    });

    let ftrace = fixture("sched/pingpong-pipe/ftrace.txt");
    let format = integrador_sched::detect(&ftrace);
    decode(&mut g, "ftrace", &ftrace, bytes(&ftrace), |input, ev| {
        let mut r = integrador_sched::text::TextReader::new(Cursor::new(input), format);
        count(|| r.read_into(ev).unwrap())
    });
    g.finish();
}

/// A variable line, a state line and a link line, as a run writes them.
fn lines<W: Write>(out: &mut Text<W>, n: u32) {
    for i in 0..n {
        let t = 1_795_264_448_000_000_000 + i64::from(i / 4) * 1_000_000;
        out.begin(6);
        out.time(t);
        out.ident(b'c', i % 64);
        out.ident(b't', 7);
        out.double(if i % 3 == 0 {
            f64::from(i) / 7.0
        } else {
            f64::from(i)
        });
        out.end().unwrap();
        out.begin(10);
        out.time(t);
        out.ident(b't', 3);
        out.ident(b'c', i % 64);
        out.word(b"v2");
        out.end().unwrap();
        out.begin(14);
        out.time(t);
        out.ident(b't', 5);
        out.ident(b'c', 0);
        out.word(b"v9");
        out.ident(b'c', i % 64);
        out.key(3, u64::from(i));
        out.end().unwrap();
    }
}

/// Counts bytes, keeps none.
struct Sink(u64);

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 += b.len() as u64;
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn writer(c: &mut Criterion) {
    const N: u32 = 20_000;
    let mut g = c.benchmark_group("write");
    g.throughput(Throughput::Elements(3 * u64::from(N)));
    g.bench_function("inline", |b| {
        b.iter(|| {
            let mut t = Text::new(Sink(0));
            lines(&mut t, N);
            t.finish().unwrap().0
        })
    });
    g.finish();
}

criterion_group!(benches, decoders, writer);
criterion_main!(benches);
