//! Where the trace goes, settled before any input is read, and written so
//! that no data is ever lost (README, "Exit status"):
//!
//! * a regular file, new or old, is written under a temporary name in its
//!   own directory and renamed over the final name only once it is whole,
//!   so a failed or interrupted run leaves the old file intact and two
//!   runs on one path end with one complete trace;
//! * a symlink is followed: its target is written that way, the link kept;
//! * a FIFO, character device or socket (`>(cmd)`, `/dev/fd/N`, a device
//!   node) is written in place, since renaming over it would replace it;
//! * `-` is standard output.
//!
//! An output that is one of the inputs is refused by device and inode,
//! which catches hard links and symlinks as well as the same name.

use crate::cli::Output;
use crate::error::{Error, Result};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering};

/// The output, resolved.
#[derive(Debug)]
pub enum Target {
    /// Standard output.
    Stdout,
    /// A regular file written under a temporary name and renamed.
    Replace {
        /// The file to replace or create, symlinks resolved.
        path: PathBuf,
        /// As the user named it, for messages.
        shown: PathBuf,
        /// The existing file's mode and owner, kept by the new one.
        old: Option<fs::Metadata>,
    },
    /// A FIFO, device or socket, written straight through.
    Through {
        /// As the user named it.
        path: PathBuf,
    },
}

/// Follows `path` through symlinks to the name that should be written,
/// even when the last link dangles (then its target is a new file).
fn follow(path: &Path) -> Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p).map_err(|e| Error::in_file(&p, e))?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(Error::in_file(
        path,
        "too many levels of symbolic links for the output",
    ))
}

impl Target {
    /// Classifies the output and checks that it can be written: its
    /// directory exists, it is not a directory, standard output is open.
    pub fn resolve(out: &Output) -> Result<Target> {
        let shown = match out {
            Output::Stdout => {
                stdout_is_open()?;
                return Ok(Target::Stdout);
            }
            Output::File(p) => p.clone(),
        };
        if shown.as_os_str().is_empty() {
            return Err(Error::usage("-o: the output file name is empty"));
        }
        match fs::metadata(&shown) {
            Ok(m) if m.is_dir() => {
                return Err(Error::in_file(
                    &shown,
                    "the output is a directory: give a file name, as -o DIR/trace.paje",
                ))
            }
            Ok(m) if !m.is_file() => return Ok(Target::Through { path: shown }),
            Ok(_) | Err(_) => {}
        }
        let path = follow(&shown)?;
        let old = match fs::metadata(&path) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::in_file(&shown, e)),
        };
        if shown.as_os_str().to_string_lossy().ends_with('/') && old.is_none() {
            return Err(Error::in_file(
                &shown,
                "the output names a directory: give a file name, as -o DIR/trace.paje",
            ));
        }
        let dir = parent_dir(&path);
        match fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Error::in_file(
                    &shown,
                    format!(
                        "cannot create the output: {} is not a directory",
                        dir.display()
                    ),
                ))
            }
            Err(e) => {
                return Err(Error::in_file(
                    &shown,
                    format!("cannot create the output in {}: {e}", dir.display()),
                ))
            }
        }
        Ok(Target::Replace { path, shown, old })
    }

    /// Device and inode of what would be overwritten, if it exists and is
    /// a file or FIFO (a terminal or /dev/null as both input and output
    /// overwrites nothing).
    fn identity(&self) -> Option<(u64, u64)> {
        let m = match self {
            Target::Stdout => fstat_stdout()?,
            Target::Replace { old, .. } => old.clone()?,
            Target::Through { path } => fs::metadata(path).ok()?,
        };
        (m.is_file() || m.file_type().is_fifo()).then(|| (m.dev(), m.ino()))
    }

    /// How messages name the output.
    pub fn shown(&self) -> String {
        match self {
            Target::Stdout => "standard output".into(),
            Target::Replace { shown, .. } | Target::Through { path: shown } => {
                shown.display().to_string()
            }
        }
    }

    /// Refuses an output that is one of `inputs` (option, path): exit 2,
    /// naming both; the input is untouched.
    pub fn refuse_inputs<'a>(
        &self,
        inputs: impl IntoIterator<Item = (&'a str, &'a Path)>,
    ) -> Result<()> {
        let Some(out) = self.identity() else {
            return Ok(());
        };
        for (option, path) in inputs {
            let Ok(m) = fs::metadata(path) else { continue };
            if (m.dev(), m.ino()) == out {
                let what = match self {
                    Target::Stdout => "standard output".to_string(),
                    _ => format!("-o {}", self.shown()),
                };
                return Err(Error::usage(format!(
                    "{what} is the input {} ({option}): refusing to overwrite an input; write the trace elsewhere",
                    path.display()
                )));
            }
        }
        Ok(())
    }

    /// Opens the output for writing. For a regular file this creates the
    /// temporary file, which the signal handlers remove if the run is
    /// interrupted.
    pub fn create(&self) -> Result<Sink> {
        match self {
            Target::Stdout => Ok(Sink::Stdout(io::stdout())),
            Target::Through { path } => {
                let file = OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(|e| Error::in_file(path, format!("cannot open the output: {e}")))?;
                Ok(Sink::Through(file))
            }
            Target::Replace { path, shown, old } => {
                let dir = parent_dir(path);
                let _quiet = SignalsBlocked::new();
                let tmp = tempfile::Builder::new()
                    .prefix(".integrador-")
                    .suffix(".paje.tmp")
                    // The kernel applies the umask: 0666 & ~umask, as any
                    // new file; an existing file's mode is restored below.
                    .permissions(fs::Permissions::from_mode(0o666))
                    .tempfile_in(dir)
                    .map_err(|e| {
                        Error::in_file(
                            shown,
                            format!("cannot create the output in {}: {e}", dir.display()),
                        )
                    })?;
                if let Some(m) = old {
                    tmp.as_file()
                        .set_permissions(fs::Permissions::from_mode(m.mode() & 0o7777))
                        .map_err(|e| Error::in_file(shown, e))?;
                    // Keeping the owner needs privileges; without them the
                    // new file is the user's own, as with any editor.
                    let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(m.uid()), Some(m.gid()));
                }
                set_pending(Some(tmp.path()));
                let file = tmp
                    .as_file()
                    .try_clone()
                    .map_err(|e| Error::in_file(shown, e))?;
                Ok(Sink::Temp {
                    tmp,
                    file,
                    path: path.clone(),
                    guard: PendingGuard(()),
                    written: 0,
                    started: 0,
                })
            }
        }
    }
}

/// The directory a new file at `path` goes in (`.` for a bare name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Where the bytes go while the trace is written.
pub enum Sink {
    /// Standard output.
    Stdout(io::Stdout),
    /// A temporary file renamed to `path` by [`Sink::commit`].
    Temp {
        /// Removed when dropped uncommitted.
        tmp: tempfile::NamedTempFile,
        /// A second handle for writing.
        file: File,
        /// The final name.
        path: PathBuf,
        /// Unregisters the temporary name.
        guard: PendingGuard,
        /// Bytes written.
        written: u64,
        /// Where writeback has been started up to.
        started: u64,
    },
    /// A FIFO or device.
    Through(File),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Stdout(s) => s.write(buf),
            Sink::Temp {
                file,
                written,
                started,
                ..
            } => {
                let n = file.write(buf)?;
                *written += n as u64;
                if *written - *started >= WRITEBACK_CHUNK {
                    start_writeback(file, *started, *written - *started);
                    *started = *written;
                }
                Ok(n)
            }
            Sink::Through(file) => file.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stdout(s) => s.flush(),
            Sink::Temp { file, .. } | Sink::Through(file) => file.flush(),
        }
    }
}

/// How much is written before the kernel is asked to start writing it
/// back: the fsync before the rename then finds little left to do (it
/// was a tenth of the run on a 268 MB trace). What is left is at most a
/// chunk: 8 MiB chunks left the final fsync 4 ms of a 100 MB ftrace run
/// (a 16 MB trace, 83 ms in all); with 2 MiB the run took 0.957 of the
/// time (25 alternating rounds; 1 MiB 0.966, 512 KiB 0.965, 4 MiB 0.966;
/// at 1 GB 0.987). The kernel writes the same bytes either way, in more
/// requests.
const WRITEBACK_CHUNK: u64 = 2 << 20;

/// What [`Sink::prepend`] puts before the rest comes in multiples of this:
/// a block of every file system that inserts blocks (a fixed number, so
/// the bytes do not depend on where the file is).
pub const BLOCK: u64 = 4096;

/// Inserts `len` bytes (zeros, to be written over) at the start of a file
/// of `size` bytes, moving nothing; false where the file system cannot.
fn insert_blocks(file: &File, size: u64, len: u64) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(len) = i64::try_from(len) else {
        return false;
    };
    // Inserting at the end (an empty file) is not an insertion.
    if size == 0 || len == 0 {
        return len == 0;
    }
    // SAFETY: a plain system call on a descriptor we own; no memory passes.
    unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_INSERT_RANGE, 0, len) == 0 }
}

/// Moves the `size` bytes of a file `by` bytes up, last chunk first, so
/// that no byte is written over before it is read.
fn move_up(file: &File, size: u64, by: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 1 << 20];
    let mut end = size;
    while end > 0 {
        let n = (end.min(buf.len() as u64)) as usize;
        let from = end - n as u64;
        file.read_exact_at(&mut buf[..n], from)?;
        file.write_all_at(&buf[..n], from + by)?;
        end = from;
    }
    Ok(())
}

/// Starts writeback of `len` bytes at `offset` without waiting for it.
/// Only advice: a failure shows at the fsync, which checks everything.
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return;
    };
    // SAFETY: a plain system call on a descriptor we own; no memory passes.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE);
    }
}

impl Sink {
    /// Puts `head`, whose length is a multiple of [`BLOCK`], before
    /// everything written: a Paraver trace's header, known only at the
    /// end, before its records. The file system inserts the blocks in
    /// place where it can (`FALLOC_FL_INSERT_RANGE`: ext4, XFS) and the
    /// records are not moved; elsewhere they are moved up, from the end.
    /// The bytes are the same either way.
    pub fn prepend(&mut self, head: &[u8]) -> io::Result<()> {
        let Sink::Temp { file, written, .. } = self else {
            return Err(io::Error::other("only a file's start can be written last"));
        };
        if !(head.len() as u64).is_multiple_of(BLOCK) {
            return Err(io::Error::other(
                "a header put first must fill whole blocks",
            ));
        }
        file.flush()?;
        if !insert_blocks(file, *written, head.len() as u64) {
            move_up(file, *written, head.len() as u64)?;
        }
        std::os::unix::fs::FileExt::write_all_at(file, head, 0)?;
        *written += head.len() as u64;
        Ok(())
    }

    /// Makes the written trace the output: syncs and renames a temporary
    /// file over the final name.
    pub fn commit(self, shown: &str) -> Result<()> {
        match self {
            Sink::Stdout(mut s) => s
                .flush()
                .map_err(|e| Error::input(format!("standard output: write error: {e}"))),
            Sink::Through(f) => {
                drop(f);
                Ok(())
            }
            Sink::Temp {
                tmp,
                file,
                path,
                guard,
                ..
            } => {
                drop(file);
                tmp.as_file()
                    .sync_all()
                    .map_err(|e| Error::input(format!("{shown}: write error: {e}")))?;
                let _quiet = SignalsBlocked::new();
                let done = tmp.persist(&path).map_err(|e| {
                    Error::input(format!(
                        "{shown}: cannot rename the finished trace into place: {}",
                        e.error
                    ))
                });
                drop(guard);
                done.map(drop)
            }
        }
    }

    /// True when a failed write leaves a partial output behind (a FIFO or
    /// device cannot be taken back), so the message must say so.
    pub fn partial_on_failure(&self) -> bool {
        matches!(self, Sink::Through(_))
    }
}

/// Clears the pending name when the temporary file goes, committed or
/// not: the NamedTempFile removes an uncommitted file itself, and the
/// handler must not remove a name that may be reused.
pub struct PendingGuard(());

impl Drop for PendingGuard {
    fn drop(&mut self) {
        let _quiet = SignalsBlocked::new();
        set_pending(None);
    }
}

/// The temporary file to remove if a signal ends the run: a leaked C
/// string, swapped only with the signals blocked so the handler never
/// sees it half-freed.
static PENDING: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

fn set_pending(path: Option<&Path>) {
    use std::os::unix::ffi::OsStrExt;
    let new = path
        .and_then(|p| std::ffi::CString::new(p.as_os_str().as_bytes()).ok())
        .map_or(std::ptr::null_mut(), std::ffi::CString::into_raw);
    let old = PENDING.swap(new, Ordering::SeqCst);
    if !old.is_null() {
        // SAFETY: every non-null value stored comes from CString::into_raw
        // above, and this swap removed it, so nobody else frees it.
        drop(unsafe { std::ffi::CString::from_raw(old) });
    }
}

/// The signals that end a run early: SIGINT, SIGTERM, SIGHUP.
const ENDING: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Installs the handlers that remove the temporary file on SIGINT,
/// SIGTERM and SIGHUP, then end the process by the same signal (so the
/// shell sees 128+n and a script loop stops too).
pub fn install_signal_cleanup() {
    for sig in ENDING {
        // SAFETY: the action only reads an atomic pointer, calls unlink(2)
        // and re-raises the signal, all async-signal-safe.
        let _ = unsafe {
            signal_hook::low_level::register(sig, move || {
                let p = PENDING.load(Ordering::SeqCst);
                if !p.is_null() {
                    libc::unlink(p);
                }
                let _ = signal_hook::low_level::emulate_default_handler(sig);
            })
        };
    }
}

/// Blocks the ending signals while the pending name changes hands.
struct SignalsBlocked(libc::sigset_t);

impl SignalsBlocked {
    fn new() -> SignalsBlocked {
        // SAFETY: plain sigset manipulation on values owned here.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for s in ENDING {
                libc::sigaddset(&mut set, s);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            SignalsBlocked(old)
        }
    }
}

impl Drop for SignalsBlocked {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved by `new`.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut());
        }
    }
}

fn fstat_stdout() -> Option<fs::Metadata> {
    use std::os::fd::AsFd;
    let fd = io::stdout().as_fd().try_clone_to_owned().ok()?;
    File::from(fd).metadata().ok()
}

/// Fails when standard output was closed (`-o - >&-`). Rust's runtime
/// reopens a closed descriptor 1 on /dev/null read-write before main, so
/// that is what a closed stdout looks like; a shell's `>/dev/null` opens
/// it write-only.
fn stdout_is_open() -> Result<()> {
    let closed = || {
        Error::input("standard output is closed: give -o FILE, or connect it (`> file`, `| cmd`)")
    };
    let Some(m) = fstat_stdout() else {
        return Err(closed());
    };
    let null = m.file_type().is_char_device() && m.rdev() == libc::makedev(1, 3);
    if null {
        // SAFETY: F_GETFL on descriptor 1 reads its flags only.
        let flags = unsafe { libc::fcntl(1, libc::F_GETFL) };
        if flags >= 0 && flags & libc::O_ACCMODE == libc::O_RDWR {
            return Err(closed());
        }
    }
    Ok(())
}

/// Under an address-space limit (`ulimit -v`), has every thread allocate
/// from one malloc arena. glibc reserves 64 MiB of address space for each
/// thread's own arena: under a limit of a few tens of MiB a decoding
/// thread's first allocation failed and the run aborted (100 MB of ftrace
/// under 30 MiB). Without a limit nothing changes. Call it before any
/// thread starts.
pub fn fit_address_limit() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: getrlimit into a struct owned here; mallopt while the
    // process has one thread.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_AS, &mut lim) == 0 && lim.rlim_cur != libc::RLIM_INFINITY {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
    }
}

/// Raises the soft limit on open files to the hard one: a glob of many
/// inputs should not fail for a default of 1024. Returns the limit now in
/// force, for messages.
pub fn raise_file_limit() -> u64 {
    // SAFETY: getrlimit/setrlimit on a struct owned here.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 0;
        }
        if lim.rlim_cur < lim.rlim_max {
            let want = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
                return want.rlim_cur as u64;
            }
        }
        lim.rlim_cur as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    /// Both ways of putting a header first give the header, then every
    /// byte that was written (three chunks of `move_up` and a bit).
    #[test]
    fn a_header_goes_first_whether_inserted_or_moved() {
        let body: Vec<u8> = (0..3 * (1 << 20) + 123).map(|i| (i % 251) as u8).collect();
        let head = vec![b'#'; 2 * BLOCK as usize];
        let want = [head.clone(), body.clone()].concat();
        for insert in [true, false] {
            let f = tempfile::tempfile().unwrap();
            f.write_all_at(&body, 0).unwrap();
            let size = body.len() as u64;
            if !(insert && insert_blocks(&f, size, head.len() as u64)) {
                move_up(&f, size, head.len() as u64).unwrap();
            }
            f.write_all_at(&head, 0).unwrap();
            let mut got = Vec::new();
            std::io::Read::read_to_end(&mut &f, &mut got).unwrap();
            assert!(got == want, "insert {insert}: {} bytes", got.len());
        }
    }
}
