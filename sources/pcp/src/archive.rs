//! Finding the files of an archive and opening them, compressed or not.

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// Compression suffixes libpcp opens (fact sheet §1), and whether this
/// reader can.
const COMPRESSED: [(&str, bool); 8] = [
    ("xz", true),
    ("zst", true),
    ("lzma", false),
    ("bz2", false),
    ("bz", false),
    ("gz", false),
    ("Z", false),
    ("z", false),
];

/// One data volume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Volume {
    /// Its number (`NAME.<n>`).
    pub number: u32,
    /// Its file.
    pub path: PathBuf,
}

/// The files of one archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archive {
    /// The base name (`dir/20261121.12.34`).
    pub base: PathBuf,
    /// The metadata file.
    pub meta: PathBuf,
    /// The data volumes in numeric order.
    pub volumes: Vec<Volume>,
    /// The temporal index, if present.
    pub index: Option<PathBuf>,
}

/// `name` without a compression suffix, and the suffix.
fn split_compression(name: &str) -> (&str, Option<&str>) {
    for (ext, _) in COMPRESSED {
        if let Some(stem) = name.strip_suffix(ext).and_then(|s| s.strip_suffix('.')) {
            return (stem, Some(ext));
        }
    }
    (name, None)
}

/// What an archive file name is: (base name, part), part being `meta`,
/// `index` or a volume number.
fn parse_name(name: &str) -> Option<(&str, Part)> {
    let (plain, _) = split_compression(name);
    let (base, last) = plain.rsplit_once('.')?;
    let part = match last {
        "meta" => Part::Meta,
        "index" => Part::Index,
        n if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) => {
            Part::Volume(n.parse().ok()?)
        }
        _ => return None,
    };
    Some((base, part))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Meta,
    Index,
    Volume(u32),
}

impl Archive {
    /// The base name an argument stands for: a base name itself, or any
    /// file of an archive (`NAME.0`, `NAME.meta.xz`, `NAME.index`).
    pub fn base_of(arg: &Path) -> PathBuf {
        let name = arg.file_name().map(|n| n.to_string_lossy().into_owned());
        match name.as_deref().and_then(parse_name) {
            Some((base, _)) if arg.is_file() => arg.with_file_name(base),
            _ => arg.to_path_buf(),
        }
    }

    /// Lists the files of the archive with base name `base`.
    pub fn find(base: &Path) -> Result<Archive, String> {
        let dir = match base.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let stem = base
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let (mut meta, mut index, mut volumes) = (None, None, Vec::new());
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some((b, part)) = parse_name(&name) else {
                continue;
            };
            if b != stem {
                continue;
            }
            let (_, comp) = split_compression(&name);
            if let Some(c) = comp {
                if !COMPRESSED.iter().any(|&(x, ok)| x == c && ok) {
                    return Err(format!(
                        "{}: compressed with .{c}, which this build does not read (xz and zstd are); decompress it first",
                        dir.join(&name).display()
                    ));
                }
            }
            let path = dir.join(&name);
            match part {
                Part::Meta => meta = Some(path),
                Part::Index => index = Some(path),
                Part::Volume(number) => volumes.push(Volume { number, path }),
            }
        }
        let Some(meta) = meta else {
            return Err(format!(
                "{}: no {stem}.meta: not a PCP archive, or its metadata is missing",
                base.display()
            ));
        };
        if volumes.is_empty() {
            return Err(format!("{}: no data volume ({stem}.0)", base.display()));
        }
        volumes.sort_by_key(|v| v.number);
        Ok(Archive {
            base: base.to_path_buf(),
            meta,
            volumes,
            index,
        })
    }
}

/// Opens an archive file, decompressing `.xz` and `.zst` as it reads.
pub fn open(path: &Path) -> std::io::Result<Box<dyn Read>> {
    let file = BufReader::with_capacity(1 << 16, std::fs::File::open(path)?);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(match split_compression(&name).1 {
        Some("xz") => Box::new(BufReader::with_capacity(
            1 << 16,
            xz2::read::XzDecoder::new_multi_decoder(file),
        )),
        Some("zst") => {
            let read = std::rc::Rc::new(std::cell::Cell::new(0u64));
            let counted = Counted {
                inner: file,
                read: read.clone(),
            };
            let damaged = |read: &std::cell::Cell<u64>| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "the zstd data is damaged near compressed byte {}: cannot decompress",
                        read.get()
                    ),
                )
            };
            let decoder =
                ruzstd::decoding::StreamingDecoder::new(counted).map_err(|_| damaged(&read))?;
            Box::new(BufReader::with_capacity(1 << 16, Zstd { decoder, read }))
        }
        _ => Box::new(file),
    })
}

/// Counts the compressed bytes a decoder has taken, for messages.
struct Counted<R> {
    inner: R,
    read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// A zstd stream whose errors say where, in plain words (the decoder's own
/// are its internal enums).
struct Zstd<R: Read> {
    decoder: ruzstd::decoding::StreamingDecoder<Counted<R>, ruzstd::decoding::FrameDecoder>,
    read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: Read> Read for Zstd<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.decoder.read(buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                e
            } else {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "the zstd data is damaged near compressed byte {}: cannot decompress",
                        self.read.get()
                    ),
                )
            }
        })
    }
}
