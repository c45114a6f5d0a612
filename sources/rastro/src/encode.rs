//! Writes `.rst` bytes the way libRastro does (`rst_write.c` and the
//! functions `rastro_generate` emits), for tests, fuzz seeds and benchmark
//! inputs. Not used to read anything.

use crate::{Layout, INIT, STOP};

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
        let resolution = if layout == Layout::Old {
            1_000_000
        } else {
            resolution.max(1)
        };
        let mut w = Writer {
            layout,
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
        self.put(&header.to_le_bytes());
        match self.layout {
            Layout::Current => {
                if set {
                    self.put(&sec.to_le_bytes());
                    self.put(&self.resolution.to_le_bytes());
                }
                self.put(&(delta * self.resolution + precision).to_le_bytes());
            }
            Layout::Old => {
                if set {
                    self.put(&(sec as u32).to_le_bytes());
                }
                self.put(&((delta * 1_000_000 + precision) as u32).to_le_bytes());
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
            self.put(&h.to_le_bytes());
        }
        for v in &sorted {
            match *v {
                Value::F64(x) => self.put(&x.to_le_bytes()),
                Value::U64(x) => self.put(&x.to_le_bytes()),
                Value::F32(x) => self.put(&x.to_le_bytes()),
                Value::U32(x) => self.put(&x.to_le_bytes()),
                Value::U16(x) => self.put(&x.to_le_bytes()),
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

    fn put(&mut self, b: &[u8]) {
        self.bytes.extend_from_slice(b);
    }

    fn pad(&mut self) {
        while self.bytes.len() % 4 != 0 {
            self.bytes.push(0);
        }
    }
}
