//! What a file given under the wrong option really is, and which option
//! reads it. Every input is looked at before it is decoded: a file that is
//! positively another format (a magic number, a tell-tale first line) gets
//! advice ("g.clog2 is an MPE CLOG2 log: give it with -mpi") instead of
//! the parser error its option's reader would give.

use crate::error::{Error, Result};
use std::path::Path;

/// A format recognised from the start of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// MPE CLOG2 or MPE-1 CLOG.
    MpeLog,
    /// libRastro `.rst`.
    Rastro,
    /// A file of a PCP archive (volume, `.meta` or `.index`).
    PcpArchive,
    /// xz- or zstd-compressed data (only PCP archives are read so).
    Compressed,
    /// trace-cmd's binary `trace.dat`.
    TraceDat,
    /// perf's binary `perf.data`.
    PerfData,
    /// gmond or gmetad XML.
    GangliaXml,
    /// `rrdtool dump` XML.
    RrdDump,
    /// ftrace, trace-cmd report or perf script text.
    KernelText,
    /// The thesis' `.os` recording.
    OsRecording,
    /// A `.traced` Ganglia recording.
    Traced,
    /// A `rastro_timesync` sync file.
    SyncFile,
    /// A Pajé trace.
    Paje,
}

impl Kind {
    /// What the file is, for a message.
    fn what(self) -> &'static str {
        match self {
            Kind::MpeLog => "an MPE log",
            Kind::Rastro => "a libRastro trace",
            Kind::PcpArchive => "a file of a PCP archive",
            Kind::Compressed => "compressed data (xz or zstd)",
            Kind::TraceDat => "a trace-cmd binary file (trace.dat)",
            Kind::PerfData => "a perf binary file (perf.data)",
            Kind::GangliaXml => "a gmond/gmetad XML snapshot",
            Kind::RrdDump => "an rrdtool dump of a Ganglia RRD",
            Kind::KernelText => "a kernel trace as text (ftrace, trace-cmd report or perf script)",
            Kind::OsRecording => "a kernel .os recording",
            Kind::Traced => "a Ganglia .traced recording",
            Kind::SyncFile => "a clock-sync file (rastro_timesync)",
            Kind::Paje => "a Pajé trace",
        }
    }

    /// The options that read it, and what to tell the user.
    fn advice(self) -> (&'static [&'static str], &'static str) {
        match self {
            Kind::MpeLog => (&["-mpi"], "give it with -mpi (and its nodes file with -mpinodes)"),
            Kind::Rastro => (&["-deck"], "give it with -deck"),
            Kind::PcpArchive => (&["-pcp"], "give the archive with -pcp"),
            Kind::Compressed => (&["-pcp"], "only PCP archives are read compressed (-pcp); decompress other inputs first"),
            Kind::TraceDat => (&["-os"], "give it with -os"),
            Kind::PerfData => (&[], "run `perf script -i FILE > FILE.txt` and give the text with -os and --boot-epoch"),
            Kind::GangliaXml | Kind::RrdDump | Kind::Traced => (&["-ganglia"], "give it with -ganglia"),
            Kind::KernelText | Kind::OsRecording => (&["-os"], "give it with -os"),
            Kind::SyncFile => (&["-sync"], "give it with -sync"),
            Kind::Paje => (&[], "it is already a trace: `integrador check FILE` validates it, pj_dump or ViTE show it"),
        }
    }
}

/// What the start of a file shows it is, if anything is certain.
pub fn identify(head: &[u8]) -> Option<Kind> {
    const XZ: &[u8] = b"\xFD7zXZ\x00";
    const ZSTD: &[u8] = b"\x28\xB5\x2F\xFD";
    if head.starts_with(XZ) || head.starts_with(ZSTD) {
        return Some(Kind::Compressed);
    }
    if head.starts_with(b"\x17\x08\x44tracing") {
        return Some(Kind::TraceDat);
    }
    if head.starts_with(b"PERFILE2") {
        return Some(Kind::PerfData);
    }
    if head.get(4..7) == Some(&[0x50, 0x05, 0x26][..]) {
        return Some(Kind::PcpArchive);
    }
    if integrador_clog::detect(head) == Some(integrador_clog::Format::Clog2) {
        return Some(Kind::MpeLog);
    }
    if integrador_rastro::detect(head).is_ok() {
        return Some(Kind::Rastro);
    }
    let text = std::str::from_utf8(head)
        .or_else(|e| std::str::from_utf8(&head[..e.valid_up_to()]))
        .ok()?;
    // A binary file that is none of the above: nothing certain.
    if text.len() < head.len().min(64) {
        return None;
    }
    if text.contains("%EventDef") {
        return Some(Kind::Paje);
    }
    match integrador_ganglia::detect(head) {
        integrador_ganglia::Format::Xml if text.contains("<GANGLIA_XML") => {
            return Some(Kind::GangliaXml)
        }
        integrador_ganglia::Format::RrdDump => return Some(Kind::RrdDump),
        _ => {}
    }
    if integrador_sched::detect(head) != integrador_sched::Format::Os {
        return Some(Kind::KernelText);
    }
    first_line_kind(text)
}

/// The text formats told apart by their first measurement line.
fn first_line_kind(text: &str) -> Option<Kind> {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))?;
    let w: Vec<&str> = line.split_whitespace().collect();
    let int = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let number = |s: &str| s.parse::<f64>().is_ok_and(f64::is_finite);
    let ticks = |s: &str| int(s) && s.len() >= 15;
    let os_kind = |s: &str| {
        [
            "time",
            "block",
            "unblock",
            "tempo",
            "bloqueio",
            "desbloqueio",
        ]
        .contains(&s)
    };
    match w.as_slice() {
        [seq, kind, t, _] if int(seq) && os_kind(kind) && number(t) => Some(Kind::OsRecording),
        [_, rt, _, ht] if ticks(rt) && ticks(ht) => Some(Kind::SyncFile),
        [seq, _, rt, _, ht] if int(seq) && ticks(rt) && ticks(ht) => Some(Kind::SyncFile),
        [t, m, _, v] if number(t) && !number(m) && number(v) => Some(Kind::Traced),
        _ => None,
    }
}

/// Refuses a file given under `option` when its start shows it is another
/// option's format, with the advice for it. Files whose format is unsure
/// are left to their reader.
pub fn check(option: &str, path: &Path, head: &[u8]) -> Result<()> {
    let Some(kind) = identify(head) else {
        return Ok(());
    };
    let (options, advice) = kind.advice();
    if options.contains(&option) {
        return Ok(());
    }
    Err(Error::usage(format!(
        "{} (under {option}) is {}, not {}: {}",
        path.display(),
        kind.what(),
        expected(option),
        advice.replace("FILE", &path.display().to_string())
    )))
}

/// Looks at the start of every input file before any is decoded: one that
/// is plainly another option's format gets advice instead of the parse
/// error its option's reader would give. `options` are the source kinds'.
pub fn check_all(inputs: &[(&'static str, std::path::PathBuf)], options: &[&str]) -> Result<()> {
    for (option, path) in inputs {
        let looked_at = options.contains(option) || *option == "-sync";
        // Archive base names and Ganglia directories are no files; a
        // missing file is reported by its reader.
        if !looked_at || path.is_dir() || !path.exists() {
            continue;
        }
        let head = crate::input::head(path, 4096).map_err(|e| Error::in_file(path, e))?;
        check(option, path, &head)?;
    }
    Ok(())
}

/// What an option reads, for a message.
pub fn expected(option: &str) -> &'static str {
    match option {
        "-ganglia" => "Ganglia data",
        "-os" => "a kernel scheduler trace",
        "-mpi" => "an MPE log",
        "-deck" => "a libRastro trace",
        "-pcp" => "a PCP archive",
        "-sync" => "a clock-sync file",
        _ => "what that option reads",
    }
}

/// The advice for a word given without an option, if it names a file of
/// a known format.
pub fn without_option(path: &Path) -> Option<String> {
    let head = std::fs::File::open(path).ok().and_then(|f| {
        use std::io::Read;
        let mut buf = Vec::new();
        f.take(4096).read_to_end(&mut buf).ok()?;
        Some(buf)
    })?;
    let kind = identify(&head)?;
    let (_, advice) = kind.advice();
    Some(format!(
        "`{}` is {} given without an option: {}",
        path.display(),
        kind.what(),
        advice.replace("FILE", &path.display().to_string())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_lines_tell_text_formats_apart() {
        assert_eq!(
            first_line_kind("1 time 1096072237 -\n"),
            Some(Kind::OsRecording)
        );
        assert_eq!(
            first_line_kind("# c\n1096944667 bytes_out athlon01 0.59\n"),
            Some(Kind::Traced)
        );
        assert_eq!(
            first_line_kind("1 paple 1094221332965040 paple01 1094222792354177\n"),
            Some(Kind::SyncFile)
        );
        assert_eq!(
            first_line_kind("paple 1094221332965040 paple01 1094222792354177\n"),
            Some(Kind::SyncFile)
        );
        assert_eq!(first_line_kind("hello world\n"), None);
    }

    #[test]
    fn the_right_option_passes() {
        let os = b"1 time 1096072237 -\n2 unblock 703861 23208\n";
        assert!(check("-os", Path::new("a.os"), os).is_ok());
        let e = check("-ganglia", Path::new("a.os"), os).unwrap_err();
        assert!(e.message.contains("give it with -os"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }
}
