//! Opening inputs so that each is read from the system once.
//!
//! A regular file may be opened as often as a source likes (format
//! detection peeks at its start, two-pass sources read it twice). A pipe,
//! process substitution (`<(cmd)`), FIFO or device can be read only once:
//! reopening `/dev/fd/63` after a peek starts in the middle of the data,
//! and a FIFO's writer is gone after the first reader. Such an input is
//! read through a [`Stream`]: every byte read from it is kept in an
//! anonymous spool file, and every later open reads the spool first and
//! then the rest of the stream. So a peek, a first pass and a second pass
//! all see the same bytes, and nothing is cut. The spool holds what has
//! been read so far, on disk, never in memory.
//!
//! Sources open files deep inside their converters, so the streams of a
//! run are kept in a table installed for the run by [`Scope`] on the run's
//! thread; a path not in the table is opened as a plain file.
//!
//! Regular files are held open only while there are descriptors to spare:
//! a glob of 10,000 files merges them all at once, more than the usual
//! descriptor limit. Past a cap taken from that limit, the file opened
//! longest ago is closed and reopened at its position when next read.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::rc::{Rc, Weak};

thread_local! {
    static STREAMS: RefCell<HashMap<PathBuf, Rc<RefCell<Stream>>>> = RefCell::new(HashMap::new());
    static POOL: RefCell<Pool> = RefCell::new(Pool::new());
}

/// The regular files held open, oldest first.
struct Pool {
    open: VecDeque<Weak<RefCell<Option<File>>>>,
    cap: usize,
}

impl Pool {
    fn new() -> Pool {
        Pool {
            open: VecDeque::new(),
            cap: descriptor_cap(),
        }
    }

    /// Makes room for one more open file, closing the oldest ones.
    fn make_room(&mut self) {
        if self.open.len() >= self.cap {
            self.open
                .retain(|w| w.upgrade().is_some_and(|f| f.borrow().is_some()));
        }
        while self.open.len() >= self.cap {
            let Some(old) = self.open.pop_front() else {
                break;
            };
            if let Some(f) = old.upgrade() {
                *f.borrow_mut() = None;
            }
        }
    }
}

/// How many input files may be open at once: the descriptor limit less a
/// reserve for the output, spools, archives and the runtime.
fn descriptor_cap() -> usize {
    // SAFETY: getrlimit into a struct owned here.
    let soft = unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur
        } else {
            1024
        }
    };
    let soft = usize::try_from(soft).unwrap_or(usize::MAX);
    soft.saturating_sub(64).max(8)
}

/// A regular file that may be closed between reads and reopened at its
/// position.
pub struct PooledFile {
    path: PathBuf,
    pos: u64,
    file: Rc<RefCell<Option<File>>>,
    done: bool,
}

impl PooledFile {
    fn open(path: &Path) -> io::Result<PooledFile> {
        let pf = PooledFile {
            path: path.to_path_buf(),
            pos: 0,
            file: Rc::new(RefCell::new(None)),
            done: false,
        };
        // Opened now so that a missing or unreadable file fails at once.
        pf.reopen()?;
        Ok(pf)
    }

    fn reopen(&self) -> io::Result<()> {
        POOL.with(|p| p.borrow_mut().make_room());
        let mut f = File::open(&self.path).map_err(|e| {
            if e.raw_os_error() == Some(libc::EMFILE) || e.raw_os_error() == Some(libc::ENFILE) {
                io::Error::new(
                    e.kind(),
                    format!("{e}: too many files open at once; raise the limit (ulimit -n) or give fewer inputs"),
                )
            } else {
                e
            }
        })?;
        if self.pos > 0 {
            f.seek(SeekFrom::Start(self.pos))?;
        }
        *self.file.borrow_mut() = Some(f);
        POOL.with(|p| p.borrow_mut().open.push_back(Rc::downgrade(&self.file)));
        Ok(())
    }
}

impl Read for PooledFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        if self.file.borrow().is_none() {
            self.reopen()?;
        }
        let mut slot = self.file.borrow_mut();
        let Some(f) = slot.as_mut() else {
            return Ok(0);
        };
        let n = f.read(buf)?;
        self.pos += n as u64;
        if n == 0 {
            // Nothing more will be read: give the descriptor back.
            self.done = true;
            *slot = None;
        }
        Ok(n)
    }
}

impl Seek for PooledFile {
    /// From the start or the current position (what a decoder of a
    /// binary file with offsets needs); the descriptor follows lazily.
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => p,
            SeekFrom::Current(d) => self.pos.checked_add_signed(d).ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "seek before the start")
            })?,
            SeekFrom::End(d) => fs::metadata(&self.path)?
                .len()
                .checked_add_signed(d)
                .ok_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidInput, "seek before the start")
                })?,
        };
        self.pos = pos;
        self.done = false;
        if let Some(f) = self.file.borrow_mut().as_mut() {
            f.seek(SeekFrom::Start(pos))?;
        }
        Ok(pos)
    }
}

/// One read-once input and what has been read of it.
pub struct Stream {
    path: PathBuf,
    /// The input itself, opened at the first read (opening a FIFO waits
    /// for its writer).
    src: Option<File>,
    /// Every byte read from `src` so far, at its own offset.
    spool: Option<File>,
    spooled: u64,
    eof: bool,
    buf: Vec<u8>,
}

impl Stream {
    /// Makes sure the spool holds at least the byte at `pos` (unless the
    /// input ends first), reading more from the input when needed; a slow
    /// writer is never waited on for more than one read.
    fn fill_to(&mut self, pos: u64) -> io::Result<()> {
        while !self.eof && self.spooled <= pos {
            if self.src.is_none() {
                self.src = Some(File::open(&self.path)?);
            }
            if self.spool.is_none() {
                self.spool = Some(tempfile::tempfile()?);
            }
            let (Some(src), Some(spool)) = (self.src.as_mut(), self.spool.as_ref()) else {
                return Ok(());
            };
            self.buf.resize(1 << 16, 0);
            let buf = &mut self.buf;
            let n = match src.read(buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                self.eof = true;
                self.src = None;
                break;
            }
            spool.write_all_at(&buf[..n], self.spooled).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot keep a copy of this read-once input in the temporary directory: {e}"),
                )
            })?;
            self.spooled += n as u64;
        }
        Ok(())
    }
}

/// Bytes handed out by every [`Reader`] so far, for the progress bar.
static BYTES_READ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Bytes read from inputs so far (all passes of all sources).
pub fn bytes_read() -> u64 {
    BYTES_READ.load(std::sync::atomic::Ordering::Relaxed)
}

/// A reader of one input, from its start.
pub enum Reader {
    /// A regular file.
    File(PooledFile),
    /// A read-once input, through its spool.
    Stream {
        /// The shared stream.
        stream: Rc<RefCell<Stream>>,
        /// This reader's position.
        pos: u64,
    },
}

impl Read for Reader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.read_inner(buf)?;
        BYTES_READ.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

impl Reader {
    fn read_inner(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Reader::File(f) => f.read(buf),
            Reader::Stream { stream, pos } => {
                let mut s = stream.borrow_mut();
                s.fill_to(*pos)?;
                let have = s.spooled.saturating_sub(*pos);
                let n = (buf.len() as u64).min(have) as usize;
                if n == 0 {
                    return Ok(0);
                }
                let Some(spool) = s.spool.as_ref() else {
                    return Ok(0);
                };
                let n = spool.read_at(&mut buf[..n], *pos)?;
                *pos += n as u64;
                Ok(n)
            }
        }
    }
}

impl Seek for Reader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        match self {
            Reader::File(f) => f.seek(to),
            Reader::Stream { stream, pos } => {
                let new = match to {
                    SeekFrom::Start(p) => Some(p),
                    SeekFrom::Current(d) => pos.checked_add_signed(d),
                    SeekFrom::End(d) => {
                        // The end of a read-once input is known once it
                        // is all spooled.
                        let mut s = stream.borrow_mut();
                        s.fill_to(u64::MAX)?;
                        s.spooled.checked_add_signed(d)
                    }
                };
                *pos = new.ok_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidInput, "seek before the start")
                })?;
                Ok(*pos)
            }
        }
    }
}

/// Opens `path` from its start.
pub fn open(path: &Path) -> io::Result<Reader> {
    let stream = STREAMS.with(|t| t.borrow().get(path).cloned());
    match stream {
        Some(stream) => Ok(Reader::Stream { stream, pos: 0 }),
        None => PooledFile::open(path).map(Reader::File),
    }
}

/// A regular file for a decoder on another thread: its own descriptor
/// (the pool and the stream table belong to the run's thread), its bytes
/// counted for the progress bar like a [`Reader`]'s.
pub struct ThreadFile(File);

impl Read for ThreadFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.read(buf)?;
        BYTES_READ.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

impl Seek for ThreadFile {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.0.seek(to)
    }
}

/// Whether `path` may be read on another thread: a regular file that is
/// not one of the run's read-once inputs (those go through its spool).
pub fn threadable(path: &Path) -> bool {
    !STREAMS.with(|t| t.borrow().contains_key(path)) && !is_read_once(path)
}

/// Opens a [`threadable`] file on the thread that reads it.
pub fn open_on_thread(path: &Path) -> io::Result<ThreadFile> {
    File::open(path).map(ThreadFile)
}

/// A read buffer for `path`: 64 KiB, or the file's size when it is
/// smaller, so that thousands of small inputs merged at once do not each
/// hold a large buffer.
pub fn buffer_size(path: &Path) -> usize {
    const FULL: usize = 1 << 16;
    match fs::metadata(path) {
        Ok(m) if m.is_file() => {
            usize::try_from(m.len()).map_or(FULL, |n| n.clamp(256, FULL - 1) + 1)
        }
        _ => FULL,
    }
}

/// The first `n` bytes of `path` (fewer if it is shorter), for content
/// detection; a stream keeps them for the reader that follows.
pub fn head(path: &Path, n: usize) -> io::Result<Vec<u8>> {
    let mut r = open(path)?.take(n as u64);
    let mut buf = Vec::with_capacity(n.min(1 << 16));
    r.read_to_end(&mut buf)?;
    Ok(buf)
}

/// True when `path` is a pipe, FIFO, device or socket rather than a
/// regular file or directory.
pub fn is_read_once(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// The read-once inputs of one run; dropping it forgets them (and removes
/// their spools).
pub struct Scope(());

impl Scope {
    /// Registers every read-once path among `paths`.
    pub fn enter<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Scope {
        STREAMS.with(|t| {
            let mut t = t.borrow_mut();
            t.clear();
            POOL.with(|p| *p.borrow_mut() = Pool::new());
            for p in paths {
                if is_read_once(p) && !t.contains_key(p) {
                    t.insert(
                        p.to_path_buf(),
                        Rc::new(RefCell::new(Stream {
                            path: p.to_path_buf(),
                            src: None,
                            spool: None,
                            spooled: 0,
                            eof: false,
                            buf: Vec::new(),
                        })),
                    );
                }
            }
        });
        Scope(())
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        STREAMS.with(|t| t.borrow_mut().clear());
    }
}
