//! A directory output (a tables directory, an archive of several files),
//! written so that no data is lost, as `src/output.rs` writes a file:
//!
//! * the files are written in a temporary directory beside the final
//!   name (`.integrador-*.tmp`) and the directory is renamed into place
//!   only once every file is complete, so the final name never holds a
//!   half-written output;
//! * an existing directory is replaced whole, and only when it is one of
//!   ours: it holds our marker file. Anything else (a user's folder, a
//!   file) is refused, never deleted;
//! * an output that is an input, holds one or lies inside one is refused
//!   before anything is created.
//!
//! A run killed by a signal may leave its temporary directory beside the
//! output (removing a tree is no work for a signal handler); its name
//! says what it is, and the output itself is untouched.

use crate::error::{Error, Result};
use crate::output::parent_dir;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A directory output, resolved and checked.
#[derive(Debug)]
pub struct DirTarget {
    /// The final name.
    path: PathBuf,
    /// The name of the file that marks a directory as ours.
    marker: &'static str,
    /// Whether a directory of ours is there, to be replaced.
    replaces: bool,
}

/// Whether `dir` is a directory of ours: it holds `marker`.
fn is_ours(dir: &Path, marker: &str) -> bool {
    fs::symlink_metadata(dir.join(marker)).is_ok_and(|m| m.is_file())
}

impl DirTarget {
    /// Checks that `path` can be written as a directory output marked by
    /// `marker`: new, or a directory of ours; its parent exists.
    pub fn resolve(path: &Path, marker: &'static str) -> Result<DirTarget> {
        if path.as_os_str().is_empty() {
            return Err(Error::usage("the output directory name is empty"));
        }
        let replaces = match fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() && is_ours(path, marker) => true,
            // Refusals of the user's choice of name: usage errors (exit 2),
            // as an output that is an input.
            Ok(m) if m.is_dir() => {
                return Err(Error::usage(format!(
                    "{}: is a directory integrador did not write (it has no {marker}): refusing to replace it; give a new name",
                    path.display()
                )))
            }
            Ok(_) => {
                return Err(Error::usage(format!(
                    "{}: exists and is not a directory: refusing to replace it; give a new name",
                    path.display()
                )))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(Error::in_file(path, e)),
        };
        let dir = parent_dir(path);
        match fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Error::in_file(
                    path,
                    format!(
                        "cannot create the output: {} is not a directory",
                        dir.display()
                    ),
                ))
            }
            Err(e) => {
                return Err(Error::in_file(
                    path,
                    format!("cannot create the output in {}: {e}", dir.display()),
                ))
            }
        }
        Ok(DirTarget {
            path: path.to_path_buf(),
            marker,
            replaces,
        })
    }

    /// The final name, for messages.
    pub fn shown(&self) -> String {
        self.path.display().to_string()
    }

    /// Refuses an output that is one of `inputs`, or that an input lies
    /// in (replacing the directory would delete it), or that lies inside
    /// an input directory.
    pub fn refuse_inputs<'a>(
        &self,
        inputs: impl IntoIterator<Item = (&'a str, &'a Path)>,
    ) -> Result<()> {
        let out = absolute(&self.path);
        for (option, input) in inputs {
            let input = absolute(input);
            if input.starts_with(&out) || out.starts_with(&input) {
                return Err(Error::usage(format!(
                    "{}: the output directory holds, or lies in, the input {} ({option}): refusing to write it",
                    self.path.display(),
                    input.display()
                )));
            }
        }
        Ok(())
    }

    /// Creates the temporary directory, marked as ours, beside the final
    /// name.
    pub fn create(&self) -> Result<DirOutput> {
        let parent = parent_dir(&self.path);
        let tmp = tempfile::Builder::new()
            .prefix(".integrador-")
            .suffix(".tmp")
            .tempdir_in(parent)
            .map_err(|e| {
                Error::in_file(
                    &self.path,
                    format!("cannot create the output in {}: {e}", parent.display()),
                )
            })?;
        fs::write(tmp.path().join(self.marker), b"").map_err(|e| Error::in_file(&self.path, e))?;
        Ok(DirOutput {
            tmp,
            path: self.path.clone(),
            marker: self.marker,
            replaces: self.replaces,
        })
    }
}

/// A path made absolute and cleaned of `.`, `..` and symlinks as far as
/// it exists: what two names of the same place have in common.
fn absolute(p: &Path) -> PathBuf {
    if let Ok(c) = fs::canonicalize(p) {
        return c;
    }
    // A new name: its parent resolved, its last part kept.
    match p.file_name() {
        Some(name) => absolute(parent_dir(p)).join(name),
        None => std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()),
    }
}

/// A directory output being written: files go under [`DirOutput::dir`].
/// Dropped without [`DirOutput::commit`], it is removed.
pub struct DirOutput {
    tmp: tempfile::TempDir,
    path: PathBuf,
    marker: &'static str,
    replaces: bool,
}

impl DirOutput {
    /// Where the files are written.
    pub fn dir(&self) -> &Path {
        self.tmp.path()
    }

    /// Makes the written directory the output: its files and itself
    /// synced, then swapped with a directory of ours in one step (or
    /// renamed into a free name), the old one removed.
    pub fn commit(self) -> Result<()> {
        let shown = self.path.display().to_string();
        let fail = |what: &str, e: io::Error| Error::input(format!("{shown}: {what}: {e}"));
        for entry in fs::read_dir(self.tmp.path()).map_err(|e| fail("write error", e))? {
            let p = entry.map_err(|e| fail("write error", e))?.path();
            fs::File::open(&p)
                .and_then(|f| f.sync_all())
                .map_err(|e| fail("write error", e))?;
        }
        fs::File::open(self.tmp.path())
            .and_then(|f| f.sync_all())
            .map_err(|e| fail("write error", e))?;
        let tmp = self.tmp.keep();
        let exists = fs::symlink_metadata(&self.path).is_ok();
        if exists {
            // Checked again: the place may have changed since the run began.
            if !self.replaces || !is_ours(&self.path, self.marker) {
                let _ = fs::remove_dir_all(&tmp);
                return Err(Error::in_file(
                    &self.path,
                    format!("appeared during the run and is not an output of ours (no {}): left as it is", self.marker),
                ));
            }
            if let Err(e) = exchange(&tmp, &self.path) {
                let _ = fs::remove_dir_all(&tmp);
                return Err(fail("cannot put the finished output into place", e));
            }
            // `tmp` now names the old output.
            fs::remove_dir_all(&tmp).map_err(|e| fail("cannot remove the old output", e))?;
        } else if let Err(e) = fs::rename(&tmp, &self.path) {
            let _ = fs::remove_dir_all(&tmp);
            return Err(fail("cannot rename the finished output into place", e));
        }
        Ok(())
    }
}

/// Swaps two names at once (Linux's `RENAME_EXCHANGE`), so that the
/// final name always holds a whole output, the old or the new.
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes())?;
    let b = std::ffi::CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: two valid C strings owned here; no memory is shared.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    match r {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Where an output is being written: a file (`src/output.rs`) or a
/// directory.
pub enum Place {
    /// A file, standard output, a FIFO or a device.
    File(crate::output::Sink),
    /// A directory.
    Dir(DirOutput),
}

impl Place {
    /// Makes it the output.
    pub fn commit(self, shown: &str) -> Result<()> {
        match self {
            Place::File(s) => s.commit(shown),
            Place::Dir(d) => d.commit(),
        }
    }

    /// True when a failed write leaves a partial output behind.
    pub fn partial_on_failure(&self) -> bool {
        match self {
            Place::File(s) => s.partial_on_failure(),
            Place::Dir(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARK: &str = ".test-marker";

    fn write(out: &DirOutput, name: &str, text: &str) {
        fs::write(out.dir().join(name), text).unwrap();
    }

    #[test]
    fn a_new_directory_appears_whole() {
        let base = tempfile::tempdir().unwrap();
        let path = base.path().join("tables");
        let target = DirTarget::resolve(&path, MARK).unwrap();
        let out = target.create().unwrap();
        write(&out, "a.parquet", "a");
        assert!(!path.exists(), "the final name is written before the end");
        out.commit().unwrap();
        assert_eq!(fs::read_to_string(path.join("a.parquet")).unwrap(), "a");
        assert!(is_ours(&path, MARK));
        // Nothing left beside it.
        let names: Vec<_> = fs::read_dir(base.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn one_of_ours_is_replaced_whole() {
        let base = tempfile::tempdir().unwrap();
        let path = base.path().join("tables");
        for text in ["first", "second"] {
            let out = DirTarget::resolve(&path, MARK).unwrap().create().unwrap();
            write(&out, "x", text);
            if text == "first" {
                write(&out, "only-in-first", "1");
            }
            out.commit().unwrap();
        }
        assert_eq!(fs::read_to_string(path.join("x")).unwrap(), "second");
        assert!(!path.join("only-in-first").exists());
        assert_eq!(fs::read_dir(base.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_users_directory_or_file_is_refused_and_kept() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("mine");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("thesis.tex"), "keep me").unwrap();
        let e = DirTarget::resolve(&dir, MARK).unwrap_err().to_string();
        assert!(e.contains("did not write") && e.contains(MARK), "{e}");
        let file = base.path().join("file");
        fs::write(&file, "keep me too").unwrap();
        let e = DirTarget::resolve(&file, MARK).unwrap_err().to_string();
        assert!(e.contains("not a directory"), "{e}");
        assert_eq!(
            fs::read_to_string(dir.join("thesis.tex")).unwrap(),
            "keep me"
        );
        assert_eq!(fs::read_to_string(&file).unwrap(), "keep me too");
        let e = DirTarget::resolve(&base.path().join("no/such/dir"), MARK).unwrap_err();
        assert!(e.to_string().contains("cannot create the output"), "{e}");
    }

    #[test]
    fn an_input_inside_or_around_the_output_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let out = base.path().join("out");
        let target = DirTarget::resolve(&out, MARK).unwrap();
        let inside = out.join("a.traced");
        let e = target
            .refuse_inputs([("-ganglia", inside.as_path())])
            .unwrap_err();
        assert!(e.to_string().contains("-ganglia"), "{e}");
        // The output inside an input directory (a PCP archive's folder).
        let target = DirTarget::resolve(&base.path().join("out2"), MARK).unwrap();
        let e = target.refuse_inputs([("-pcp", base.path())]).unwrap_err();
        assert!(e.to_string().contains("-pcp"), "{e}");
        // Through another spelling of the same place (an output of ours
        // being replaced).
        fs::create_dir(&out).unwrap();
        fs::write(out.join(MARK), "").unwrap();
        let target = DirTarget::resolve(&base.path().join("out/../out"), MARK).unwrap();
        let e = target
            .refuse_inputs([("-ganglia", inside.as_path())])
            .unwrap_err();
        assert!(e.to_string().contains("-ganglia"), "{e}");
        // Beside it is fine.
        let beside = base.path().join("in.traced");
        fs::write(&beside, "").unwrap();
        let target = DirTarget::resolve(&base.path().join("out3"), MARK).unwrap();
        target
            .refuse_inputs([("-ganglia", beside.as_path())])
            .unwrap();
    }

    #[test]
    fn a_run_that_fails_leaves_nothing() {
        let base = tempfile::tempdir().unwrap();
        let path = base.path().join("tables");
        let out = DirTarget::resolve(&path, MARK).unwrap().create().unwrap();
        write(&out, "half", "h");
        drop(out);
        assert_eq!(fs::read_dir(base.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_directory_that_appears_during_the_run_is_kept() {
        let base = tempfile::tempdir().unwrap();
        let path = base.path().join("tables");
        let out = DirTarget::resolve(&path, MARK).unwrap().create().unwrap();
        fs::create_dir(&path).unwrap();
        fs::write(path.join("theirs"), "t").unwrap();
        let e = out.commit().unwrap_err().to_string();
        assert!(e.contains("appeared during the run"), "{e}");
        assert_eq!(fs::read_to_string(path.join("theirs")).unwrap(), "t");
        assert_eq!(fs::read_dir(base.path()).unwrap().count(), 1);
    }
}
