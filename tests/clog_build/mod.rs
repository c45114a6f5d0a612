//! Builds MPE logs field by field, from the fact sheet (`specs/clog.md`),
//! for tests: a CLOG2 writer with any block size and byte order, and an
//! MPE-1 CLOG writer. Labels instead of hex dumps, as gimli's test_util.
#![allow(dead_code)]

/// A CLOG2 file under construction.
pub struct Clog2 {
    pub big_endian: bool,
    pub block_size: usize,
    blocks: Vec<Vec<u8>>,
    cur: Vec<u8>,
    pub comm_table: Vec<(i32, i32, &'static str)>,
    /// The MPE thread field of the records appended next.
    pub thread: i32,
    /// Blocks of junk laid out after the ENDLOG block, before the
    /// communicator table (a reader must not look at them).
    pub junk_blocks: usize,
}

fn text(out: &mut Vec<u8>, s: &str, n: usize) {
    let mut b = s.as_bytes().to_vec();
    b.resize(n, 0);
    out.extend_from_slice(&b);
}

impl Clog2 {
    pub fn new(big_endian: bool, block_size: usize) -> Self {
        Clog2 {
            big_endian,
            block_size,
            blocks: Vec::new(),
            cur: Vec::new(),
            comm_table: Vec::new(),
            thread: 0,
            junk_blocks: 0,
        }
    }

    fn i32(&self, out: &mut Vec<u8>, v: i32) {
        out.extend_from_slice(&if self.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }

    fn f64(&self, out: &mut Vec<u8>, v: f64) {
        out.extend_from_slice(&if self.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }

    /// Appends a record; starts a new block (after ENDBLOCK) when it and a
    /// final ENDBLOCK would not fit.
    pub fn record(&mut self, time: f64, rank: i32, rectype: i32, body: &[u8]) {
        let mut r = Vec::new();
        self.f64(&mut r, time);
        self.i32(&mut r, 0);
        self.i32(&mut r, rank);
        self.i32(&mut r, self.thread);
        self.i32(&mut r, rectype);
        r.extend_from_slice(body);
        if rectype > 1 && self.cur.len() + r.len() + 24 > self.block_size {
            self.end_block();
        }
        self.cur.extend_from_slice(&r);
    }

    fn end_block(&mut self) {
        let mut r = Vec::new();
        self.f64(&mut r, 0.0);
        for v in [0, 0, 0, 1] {
            self.i32(&mut r, v);
        }
        self.cur.extend_from_slice(&r);
        let mut b = std::mem::take(&mut self.cur);
        b.resize(self.block_size, 0xEE);
        self.blocks.push(b);
    }

    pub fn body(&self, ints: &[i32]) -> Vec<u8> {
        let mut b = Vec::new();
        for &i in ints {
            self.i32(&mut b, i);
        }
        b
    }

    pub fn bare(&mut self, t: f64, rank: i32, etype: i32) {
        let b = self.body(&[etype, 0]);
        self.record(t, rank, 5, &b);
    }

    pub fn cargo(&mut self, t: f64, rank: i32, etype: i32, s: &str) {
        let mut b = self.body(&[etype, 0]);
        let mut cargo = (s.len() as u16).to_be_bytes().to_vec();
        cargo.extend_from_slice(s.as_bytes());
        cargo.resize(32, 0);
        b.extend_from_slice(&cargo);
        self.record(t, rank, 6, &b);
    }

    pub fn msg(&mut self, t: f64, rank: i32, send: bool, partner: i32, tag: i32, size: i32) {
        let b = self.body(&[if send { -101 } else { -102 }, 0, partner, tag, size, 0]);
        self.record(t, rank, 7, &b);
    }

    pub fn sdef(&mut self, t: f64, id: i32, start: i32, end: i32, color: &str, name: &str) {
        let mut b = self.body(&[id, start, end, 0]);
        text(&mut b, color, 24);
        text(&mut b, name, 32);
        text(&mut b, "", 40);
        self.record(t, 0, 2, &b);
    }

    pub fn edef(&mut self, t: f64, etype: i32, color: &str, name: &str, format: &str) {
        let mut b = self.body(&[etype, 0]);
        text(&mut b, color, 24);
        text(&mut b, name, 32);
        text(&mut b, format, 40);
        self.record(t, 0, 3, &b);
    }

    /// A COMMEVT: `etype` 0 world create, 1 self create.
    pub fn comm(&mut self, t: f64, rank: i32, etype: i32, icomm: i32, crank: i32, processor: &str) {
        let mut b = self.body(&[etype, icomm, crank, rank, 7]);
        self.f64(&mut b, 1.5);
        text(&mut b, processor, 20);
        self.record(t, rank, 9, &b);
    }

    /// Ends the log and lays out the file.
    pub fn finish(mut self) -> Vec<u8> {
        let mut r = Vec::new();
        self.f64(&mut r, 100000000.0);
        for v in [0, 0, 0, 0] {
            self.i32(&mut r, v);
        }
        self.cur.extend_from_slice(&r);
        let mut b = std::mem::take(&mut self.cur);
        b.resize(self.block_size, 0);
        self.blocks.push(b);
        for _ in 0..self.junk_blocks {
            self.blocks.push(vec![0xEE; self.block_size]);
        }
        let fptr = 1024 + self.blocks.len() * self.block_size;
        let mut pre = Vec::new();
        for tok in [
            "CLOG-02.44".to_string(),
            "is_big_endian=".into(),
            if self.big_endian { "TRUE " } else { "FALSE" }.into(),
            "is_finalzed=".into(),
            "TRUE ".into(),
            "block_size=".into(),
            self.block_size.to_string(),
            "max_comm_world_size=".into(),
            "2".into(),
            "commtable_fptr=".into(),
            (fptr / 1073741824).to_string(),
            "1073741824".into(),
            (fptr % 1073741824).to_string(),
        ] {
            pre.extend_from_slice(tok.as_bytes());
            pre.push(0);
        }
        pre.resize(1024, 0);
        let mut out = pre;
        for b in &self.blocks {
            out.extend_from_slice(b);
        }
        let mut t = Vec::new();
        self.i32(&mut t, self.comm_table.len() as i32);
        for &(lid, kind, name) in &self.comm_table {
            let mut e = self.body(&[7]);
            self.f64(&mut e, 1.5);
            text(&mut e, name, 20);
            self.i32(&mut e, lid);
            self.i32(&mut e, kind);
            t.extend_from_slice(&e);
        }
        out.extend_from_slice(&t);
        out
    }
}

/// An MPE-1 CLOG record: big-endian header (time, rectype, length in
/// 8-byte units, procid, pad) and body.
pub fn legacy_record(time: f64, rectype: i32, procid: i32, body: &[u8]) -> Vec<u8> {
    let mut r = time.to_be_bytes().to_vec();
    let len = (24 + body.len()) / 8;
    for v in [rectype, len as i32, procid, 0] {
        r.extend_from_slice(&v.to_be_bytes());
    }
    r.extend_from_slice(body);
    assert_eq!(r.len() % 8, 0, "legacy records are whole 8-byte units");
    r
}

/// A big-endian body of i32s followed by a NUL-padded text field.
pub fn legacy_body(ints: &[i32], text_field: Option<(&str, usize)>) -> Vec<u8> {
    let mut b = Vec::new();
    for &i in ints {
        b.extend_from_slice(&i.to_be_bytes());
    }
    if let Some((s, n)) = text_field {
        text(&mut b, s, n);
    }
    b
}
