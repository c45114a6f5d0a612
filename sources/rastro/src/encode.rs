//! Writes `.rst` bytes the way libRastro does (`rst_write.c` and the
//! functions `rastro_generate` emits), for tests, fuzz seeds and benchmark
//! inputs. Not used to read anything.

use crate::{Endian, Layout, INIT, STOP};

/// A value in call order; [`Writer::event`] stores them grouped by type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// `s`.
    Str(&'a str),
    /// `d`.
    F64(f64),
    /// `f`.
    F32(f32),
    /// `l`.
    U64(u64),
    /// `w`.
    U16(u16),
    /// `c`.
    U8(u8),
    /// `i`.
    U32(u32),
}

impl Value<'_> {
    /// libRastro's storage rank of the type and its nibble.
    fn class(&self) -> (u8, u32) {
        match self {
            Value::F64(_) => (0, 2),
            Value::U64(_) => (1, 4),
            Value::F32(_) => (2, 3),
            Value::U32(_) => (3, 7),
            Value::U16(_) => (4, 5),
            Value::U8(_) => (5, 6),
            Value::Str(_) => (6, 1),
        }
    }
}

/// One file being written, in memory.
#[derive(Debug, Clone)]
pub struct Writer {
    layout: Layout,
    endian: Endian,
    resolution: u64,
    base_secs: Option<u64>,
    bytes: Vec<u8>,
}

impl Writer {
    /// A file whose INIT record says `(id1, id2, host)` at `t_ns`. The old
    /// layout always has a resolution of 1e6.
    pub fn new(
        layout: Layout,
        resolution: u64,
        id1: u64,
        id2: u64,
        host: &str,
        t_ns: i64,
    ) -> Writer {
        Writer::with_endian(Endian::Little, layout, resolution, id1, id2, host, t_ns)
    }

    /// As [`Writer::new`], for a writer of the given byte order.
    pub fn with_endian(
        endian: Endian,
        layout: Layout,
        resolution: u64,
        id1: u64,
        id2: u64,
        host: &str,
        t_ns: i64,
    ) -> Writer {
        let resolution = if layout == Layout::Old {
            1_000_000
        } else {
            resolution.max(1)
        };
        let mut w = Writer {
            layout,
            endian,
            resolution,
            base_secs: None,
            bytes: Vec::new(),
        };
        w.event(
            INIT,
            t_ns,
            &[Value::U64(id1), Value::U64(id2), Value::Str(host)],
        );
        w
    }

    /// Appends an event with values in call order.
    pub fn event(&mut self, ty: u16, t_ns: i64, values: &[Value]) {
        let mut sorted: Vec<Value> = values.to_vec();
        sorted.sort_by_key(|v| v.class().0);
        let codes: Vec<u32> = sorted.iter().map(|v| v.class().1).collect();
        let (first, rest) = codes.split_at(codes.len().min(4));
        let mut header = (u32::from(ty) & 0x3fff) << 18;
        for (i, c) in first.iter().enumerate() {
            header |= c << (4 * (3 - i));
        }
        if rest.is_empty() {
            header |= 0x2_0000;
        }
        let t = u64::try_from(t_ns).unwrap_or(0);
        let ticks_total = u128::from(t) * u128::from(self.resolution) / 1_000_000_000;
        let sec = (ticks_total / u128::from(self.resolution)) as u64;
        let precision = (ticks_total % u128::from(self.resolution)) as u64;
        let set = match self.base_secs {
            None => true,
            Some(b) => sec.saturating_sub(b) > 3600,
        };
        if set {
            self.base_secs = Some(sec);
            header |= 0x1_0000;
        }
        let delta = sec - self.base_secs.unwrap_or(sec);
        self.p32(header);
        match self.layout {
            Layout::Current => {
                if set {
                    self.p64(sec);
                    self.p64(self.resolution);
                }
                self.p64(delta * self.resolution + precision);
            }
            Layout::Old => {
                if set {
                    self.p32(sec as u32);
                }
                self.p32((delta * 1_000_000 + precision) as u32);
            }
        }
        let n = rest.chunks(7).count();
        for (k, chunk) in rest.chunks(7).enumerate() {
            let mut h = 0u32;
            for (i, c) in chunk.iter().enumerate() {
                h |= c << (4 * (6 - i));
            }
            if k + 1 == n {
                h |= 0x2000_0000;
            }
            self.p32(h);
        }
        for v in &sorted {
            match *v {
                Value::F64(x) => self.p64(x.to_bits()),
                Value::U64(x) => self.p64(x),
                Value::F32(x) => self.p32(x.to_bits()),
                Value::U32(x) => self.p32(x),
                Value::U16(x) => match self.endian {
                    Endian::Little => self.put(&x.to_le_bytes()),
                    Endian::Big => self.put(&x.to_be_bytes()),
                },
                Value::U8(x) => self.put(&[x]),
                Value::Str(s) => {
                    self.put(s.as_bytes());
                    self.put(&[0]);
                    self.pad();
                }
            }
        }
        self.pad();
    }

    /// Appends the STOP record.
    pub fn stop(&mut self, t_ns: i64) {
        self.event(STOP, t_ns, &[]);
    }

    /// The bytes so far.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Hands over the bytes written so far (for writing a large file in
    /// pieces); the time base is kept.
    pub fn drain(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes)
    }

    /// The bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    fn p32(&mut self, x: u32) {
        match self.endian {
            Endian::Little => self.put(&x.to_le_bytes()),
            Endian::Big => self.put(&x.to_be_bytes()),
        }
    }

    fn p64(&mut self, x: u64) {
        match self.endian {
            Endian::Little => self.put(&x.to_le_bytes()),
            Endian::Big => self.put(&x.to_be_bytes()),
        }
    }

    fn put(&mut self, b: &[u8]) {
        self.bytes.extend_from_slice(b);
    }

    fn pad(&mut self) {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
    }
}
