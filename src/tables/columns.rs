//! One Parquet file written a row at a time, a row group at a time, with
//! the low-level column writer of the `parquet` crate (no arrow): what
//! every table of `docs/tables.md` is made with.
//!
//! The rules of the tables' contract are kept here: times are `INT64`
//! with no logical type (Spark 4 refuses `TIMESTAMP(NANOS)`) and delta
//! encoded, no unsigned type, strings UTF-8 and dictionary encoded, zstd
//! pages, row groups bounded (memory stays flat whatever the run's
//! length), the sorting column declared, the provenance in the footer's
//! key-value metadata, and nothing that changes from run to run.

use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::metadata::{KeyValue, SortingColumn};
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;
use std::sync::{Arc, RwLock};

/// Rows of a row group: about 7 MB of buffered columns for the widest
/// table (a link's), so that four entity tables filling at once stay in
/// the run's memory budget, and statistics fine enough for a window to
/// skip most groups.
pub const ROW_GROUP: usize = 64 * 1024;

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `INT64`: times (delta encoded) and ids.
    I64,
    /// `INT32`: small counts.
    I32,
    /// `DOUBLE`.
    F64,
    /// `BYTE_ARRAY (STRING)`, dictionary encoded.
    Str,
}

/// A column: its name, type, whether it may be null, and whether its
/// values go up (times, for delta encoding).
#[derive(Debug, Clone, Copy)]
pub struct Col {
    /// Name.
    pub name: &'static str,
    /// Type.
    pub kind: Kind,
    /// `OPTIONAL` rather than `REQUIRED`.
    pub nullable: bool,
    /// Delta encoded (times).
    pub delta: bool,
    /// Each row's own (a link's key): no dictionary, which would only be
    /// filled and dropped.
    pub unique: bool,
}

/// A required column.
pub const fn col(name: &'static str, kind: Kind) -> Col {
    Col {
        name,
        kind,
        nullable: false,
        delta: false,
        unique: false,
    }
}

/// A string column whose every row is its own.
pub const fn unique(name: &'static str) -> Col {
    Col {
        name,
        kind: Kind::Str,
        nullable: false,
        delta: false,
        unique: true,
    }
}

/// A nullable column.
pub const fn opt(name: &'static str, kind: Kind) -> Col {
    Col {
        name,
        kind,
        nullable: true,
        delta: false,
        unique: false,
    }
}

/// A time column: `INT64` nanoseconds, delta encoded.
pub const fn time(name: &'static str) -> Col {
    Col {
        name,
        kind: Kind::I64,
        nullable: false,
        delta: true,
        unique: false,
    }
}

/// The strings that rows name by number ([`Table::name`]): types' and
/// values' names, registered once, shared with the tables' threads. A
/// row then holds a number, and its string is taken where the row group
/// is encoded, off the thread that fills the rows.
#[derive(Clone, Default)]
pub struct Names(Arc<RwLock<Vec<ByteArray>>>);

impl Names {
    /// Registers `name`; returns its number.
    pub fn add(&self, name: ByteArray) -> u32 {
        let mut v = self.0.write().unwrap_or_else(|e| e.into_inner());
        v.push(name);
        (v.len() - 1) as u32
    }
}

/// A column's values of the row group being filled.
#[derive(Default)]
struct Buf {
    i64s: Vec<i64>,
    i32s: Vec<i32>,
    f64s: Vec<f64>,
    strs: Vec<ByteArray>,
    /// A string column's cells as [`Names`] numbers.
    named: Vec<u32>,
    /// A link key column's cells, `k{channel}_{seq}`: written out where
    /// the group is encoded, into one buffer the group's rows share.
    keys: Vec<(u32, u64)>,
    /// Definition levels of a nullable column: 1 = a value, 0 = null.
    defs: Vec<i16>,
}

/// Cells of a string column turned into Parquet strings at a time: the
/// strings of a whole row group (two megabytes of them) were written
/// and read back from memory, where these stay in the cache.
const CHUNK: usize = 4096;

impl Buf {
    /// Writes a string column's cells with `w`: only one of the three
    /// ways of filling a string column may be used in a table.
    fn write_strings(
        &mut self,
        w: &mut parquet::column::writer::ColumnWriterImpl<'_, ByteArrayType>,
        nullable: bool,
        names: &Names,
    ) -> io::Result<()> {
        let defs = nullable.then_some(&self.defs[..]);
        let ways = [
            !self.strs.is_empty(),
            !self.named.is_empty(),
            !self.keys.is_empty(),
        ];
        if ways.iter().filter(|w| **w).count() > 1 {
            return Err(io::Error::other("a string column filled two ways"));
        }
        if !self.named.is_empty() || !self.keys.is_empty() {
            // Rows that name or key are never null: all values, no levels.
            debug_assert!(defs.is_none());
        }
        let mut chunk = Vec::with_capacity(CHUNK);
        if !self.named.is_empty() {
            let names = names.0.read().unwrap_or_else(|e| e.into_inner());
            let none = ByteArray::from("");
            for part in self.named.chunks(CHUNK) {
                chunk.clear();
                chunk.extend(
                    part.iter()
                        .map(|&i| names.get(i as usize).unwrap_or(&none).clone()),
                );
                w.write_batch(&chunk, None, None).map_err(to_io)?;
            }
            self.named.clear();
        }
        if !self.keys.is_empty() {
            let mut n = itoa::Buffer::new();
            let mut ends = Vec::with_capacity(CHUNK);
            for part in self.keys.chunks(CHUNK) {
                let mut arena = Vec::with_capacity(part.len() * 16);
                ends.clear();
                for &(channel, seq) in part {
                    arena.push(b'k');
                    arena.extend_from_slice(n.format(channel).as_bytes());
                    arena.push(b'_');
                    arena.extend_from_slice(n.format(seq).as_bytes());
                    ends.push(arena.len());
                }
                let all = bytes::Bytes::from(arena);
                let mut at = 0;
                chunk.clear();
                for &end in &ends {
                    chunk.push(ByteArray::from(all.slice(at..end)));
                    at = end;
                }
                w.write_batch(&chunk, None, None).map_err(to_io)?;
            }
            self.keys.clear();
        }
        if !self.strs.is_empty() || defs.is_some_and(|d| !d.is_empty()) {
            w.write_batch(&self.strs, defs, None).map_err(to_io)?;
        }
        Ok(())
    }
}

fn to_io(e: parquet::errors::ParquetError) -> io::Error {
    match e {
        parquet::errors::ParquetError::External(e) => match e.downcast::<io::Error>() {
            Ok(e) => *e,
            Err(e) => io::Error::other(e),
        },
        e => io::Error::other(e),
    }
}

/// The Parquet file of one table: its row groups are encoded and
/// compressed here, on the filling thread or on one of its own.
struct Writer {
    inner: SerializedFileWriter<BufWriter<File>>,
    cols: &'static [Col],
    names: Names,
}

impl Writer {
    /// Writes `bufs` as a row group of `rows` rows and empties them.
    fn group(&mut self, bufs: &mut [Buf], rows: usize) -> io::Result<()> {
        if rows == 0 {
            return Ok(());
        }
        let mut group = self.inner.next_row_group().map_err(to_io)?;
        for (c, b) in self.cols.iter().zip(bufs.iter_mut()) {
            let mut w = group
                .next_column()
                .map_err(to_io)?
                .ok_or_else(|| io::Error::other("a column missing from the schema"))?;
            let defs = c.nullable.then_some(&b.defs[..]);
            match c.kind {
                Kind::I64 => w
                    .typed::<Int64Type>()
                    .write_batch(&b.i64s, defs, None)
                    .map(drop),
                Kind::I32 => w
                    .typed::<Int32Type>()
                    .write_batch(&b.i32s, defs, None)
                    .map(drop),
                Kind::F64 => w
                    .typed::<DoubleType>()
                    .write_batch(&b.f64s, defs, None)
                    .map(drop),
                Kind::Str => {
                    b.write_strings(w.typed::<ByteArrayType>(), c.nullable, &self.names)?;
                    Ok(())
                }
            }
            .map_err(to_io)?;
            w.close().map_err(to_io)?;
            b.i64s.clear();
            b.i32s.clear();
            b.f64s.clear();
            b.strs.clear();
            b.defs.clear();
        }
        group.close().map_err(to_io)?;
        Ok(())
    }

    fn close(mut self, meta: &[(String, String)]) -> io::Result<()> {
        for (k, v) in meta {
            self.inner
                .append_key_value_metadata(KeyValue::new(k.clone(), v.clone()));
        }
        let inner = self.inner.into_inner().map_err(to_io)?;
        let file = inner.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()
    }
}

/// A full row group handed to the writer's thread: its columns and rows.
type Group = (Vec<Buf>, usize);

/// Where a table's row groups are written.
enum Out {
    /// On the filling thread (a run on one thread, or before the first
    /// row group fills).
    Here(Writer),
    /// On a thread of the table's own, which gives the columns back,
    /// emptied, to be filled again. The hand-over waits for the thread
    /// to take the group: one group is filled while one is written, and
    /// no more are held.
    Away {
        send: std::sync::mpsc::SyncSender<Group>,
        back: std::sync::mpsc::Receiver<Vec<Buf>>,
        thread: std::thread::JoinHandle<(Writer, io::Result<()>)>,
    },
    /// The thread ended without handing its writer back (it panicked).
    Lost,
}

/// One table's file being written.
pub struct Table {
    out: Out,
    /// Row groups may be written on a thread of their own.
    threaded: bool,
    cols: &'static [Col],
    bufs: Vec<Buf>,
    /// The next cell's column.
    at: usize,
    rows: usize,
    total: u64,
    /// Rows a group.
    group: usize,
}

impl Table {
    /// Creates `dir/name.parquet` with `cols`, rows declared sorted by
    /// the column `sorted_by` (their order of completion). `threaded`:
    /// a table that fills a row group encodes and compresses its groups
    /// on a thread of its own, while the next group fills (the bytes are
    /// the same).
    pub fn create(
        dir: &Path,
        name: &str,
        cols: &'static [Col],
        sorted_by: Option<usize>,
        names: &Names,
        threaded: bool,
    ) -> io::Result<Table> {
        let mut schema = format!("message {name} {{\n");
        for c in cols {
            let rep = if c.nullable { "OPTIONAL" } else { "REQUIRED" };
            let ty = match c.kind {
                Kind::I64 => "INT64",
                Kind::I32 => "INT32",
                Kind::F64 => "DOUBLE",
                Kind::Str => "BYTE_ARRAY",
            };
            let logical = if c.kind == Kind::Str { " (STRING)" } else { "" };
            schema.push_str(&format!("  {rep} {ty} {}{logical};\n", c.name));
        }
        schema.push('}');
        let schema = Arc::new(parse_message_type(&schema).map_err(to_io)?);
        // Level 1: the tables are small beside the trace already, and
        // compression is a share of their writing.
        let level = ZstdLevel::try_new(1).map_err(to_io)?;
        let mut props = WriterProperties::builder()
            .set_writer_version(WriterVersion::PARQUET_1_0)
            .set_compression(Compression::ZSTD(level))
            .set_created_by(format!("integrador {}", env!("CARGO_PKG_VERSION")))
            .set_sorting_columns(sorted_by.map(|i| {
                vec![SortingColumn {
                    column_idx: i as i32,
                    descending: false,
                    nulls_first: false,
                }]
            }));
        for c in cols.iter().filter(|c| c.kind != Kind::Str || c.unique) {
            let path = ColumnPath::from(c.name);
            props = props.set_column_dictionary_enabled(path.clone(), false);
            if c.delta {
                props = props.set_column_encoding(path, Encoding::DELTA_BINARY_PACKED);
            }
        }
        let file = File::create(dir.join(format!("{name}.parquet")))?;
        let writer = SerializedFileWriter::new(
            BufWriter::with_capacity(1 << 16, file),
            schema,
            Arc::new(props.build()),
        )
        .map_err(to_io)?;
        Ok(Table {
            out: Out::Here(Writer {
                inner: writer,
                cols,
                names: names.clone(),
            }),
            threaded,
            cols,
            bufs: cols.iter().map(|_| Buf::default()).collect(),
            at: 0,
            rows: 0,
            total: 0,
            group: ROW_GROUP,
        })
    }

    /// Row groups of `rows` rows instead of [`ROW_GROUP`]: a table read a
    /// few rows at a time (the checkpoints of one instant) is read a small
    /// group at a time.
    pub fn with_group_rows(mut self, rows: usize) -> Table {
        self.group = rows.max(1);
        self
    }

    #[inline]
    fn next(&mut self, kind: Kind) -> &mut Buf {
        debug_assert_eq!(self.cols.get(self.at).map(|c| c.kind), Some(kind));
        let i = self.at.min(self.bufs.len() - 1);
        self.at += 1;
        &mut self.bufs[i]
    }

    #[inline]
    fn nullable(&self) -> bool {
        self.cols.get(self.at).is_some_and(|c| c.nullable)
    }

    /// The next cell: an `INT64`.
    #[inline]
    pub fn i64(&mut self, v: i64) {
        let nullable = self.nullable();
        let b = self.next(Kind::I64);
        b.i64s.push(v);
        if nullable {
            b.defs.push(1);
        }
    }

    /// The next cell: an `INT32`.
    #[inline]
    pub fn i32(&mut self, v: i32) {
        let nullable = self.nullable();
        let b = self.next(Kind::I32);
        b.i32s.push(v);
        if nullable {
            b.defs.push(1);
        }
    }

    /// The next cell: a `DOUBLE`.
    #[inline]
    pub fn f64(&mut self, v: f64) {
        let nullable = self.nullable();
        let b = self.next(Kind::F64);
        b.f64s.push(v);
        if nullable {
            b.defs.push(1);
        }
    }

    /// The next cell: a string (a `ByteArray` is shared, not copied).
    #[inline]
    pub fn str(&mut self, v: &ByteArray) {
        let nullable = self.nullable();
        let b = self.next(Kind::Str);
        b.strs.push(v.clone());
        if nullable {
            b.defs.push(1);
        }
    }

    /// The next cell: the string of [`Names`] number `i`.
    #[inline]
    pub fn name(&mut self, i: u32) {
        debug_assert!(!self.nullable(), "a name in a nullable column");
        self.next(Kind::Str).named.push(i);
    }

    /// The next cell: a link key, `k{channel}_{seq}` as the Pajé writer
    /// writes it.
    #[inline]
    pub fn key(&mut self, channel: u32, seq: u64) {
        debug_assert!(!self.nullable(), "a key in a nullable column");
        self.next(Kind::Str).keys.push((channel, seq));
    }

    /// The next cell: a string from text.
    pub fn text(&mut self, v: &str) {
        self.str(&ByteArray::from(v));
    }

    /// The next cell: null (a nullable column's).
    pub fn null(&mut self) {
        debug_assert!(self.nullable(), "null in a required column");
        let i = self.at.min(self.bufs.len() - 1);
        self.at += 1;
        self.bufs[i].defs.push(0);
    }

    /// Ends the row; a full row group is written.
    pub fn end(&mut self) -> io::Result<()> {
        debug_assert_eq!(self.at, self.cols.len(), "a row of the wrong width");
        self.at = 0;
        self.rows += 1;
        if self.rows >= self.group {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered rows as a row group, here or on the table's
    /// thread (started at its first group).
    fn flush(&mut self) -> io::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let rows = std::mem::take(&mut self.rows);
        self.total += rows as u64;
        if self.threaded {
            if let Out::Here(_) = self.out {
                let Out::Here(mut writer) = std::mem::replace(&mut self.out, Out::Lost) else {
                    unreachable!()
                };
                let (send, take) = std::sync::mpsc::sync_channel::<Group>(0);
                let (give, back) = std::sync::mpsc::channel();
                let thread = crate::prefetch::try_spawn(move || {
                    let mut done = Ok(());
                    for (mut bufs, rows) in take {
                        // After an error the groups are only given back:
                        // the error is the close's.
                        if done.is_ok() {
                            done = writer.group(&mut bufs, rows);
                        }
                        let _ = give.send(bufs);
                    }
                    (writer, done)
                })?;
                self.out = Out::Away { send, back, thread };
            }
        }
        match &mut self.out {
            Out::Here(w) => w.group(&mut self.bufs, rows),
            Out::Away { send, back, .. } => {
                let next = back
                    .try_recv()
                    .unwrap_or_else(|_| self.cols.iter().map(|_| Buf::default()).collect());
                let full = std::mem::replace(&mut self.bufs, next);
                // A thread that is gone has its error for the close.
                let _ = send.send((full, rows));
                Ok(())
            }
            Out::Lost => Err(io::Error::other("a table's writer thread panicked")),
        }
    }

    /// Writes what is left and the footer, with `meta` as key-value
    /// metadata. Returns the number of rows.
    pub fn close(mut self, meta: &[(String, String)]) -> io::Result<u64> {
        let rows = std::mem::take(&mut self.rows);
        self.total += rows as u64;
        let mut writer = match self.out {
            Out::Here(w) => w,
            Out::Away { send, back, thread } => {
                drop(send);
                drop(back);
                let (w, done) = thread
                    .join()
                    .map_err(|_| io::Error::other("a table's writer thread panicked"))?;
                done?;
                w
            }
            Out::Lost => return Err(io::Error::other("a table's writer thread panicked")),
        };
        writer.group(&mut self.bufs, rows)?;
        writer.close(meta)?;
        Ok(self.total)
    }
}
