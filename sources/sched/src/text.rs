//! Scheduler events from the text the kernel's tools print
//! (`specs/sched.md`): tracefs `trace` text, `trace-cmd report` (with or
//! without the sched plugin's rewritten payloads) and `perf script`.
//!
//! One typed event per line, with its line number; comms may hold spaces,
//! `-` and `:`, so fields are found by their anchors (the `[cpu]` column,
//! ` prev_pid=`, ` ==> `…), never by splitting on spaces. Times are integer
//! nanoseconds on the trace's own clock (usually since boot).

use crate::Format;
use std::io::BufRead;

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// `sched_switch`: `prev` left the CPU in `prev_state`, `next` came on.
    Switch {
        /// The task leaving.
        prev_comm: String,
        /// Its pid.
        prev_pid: i32,
        /// Its state as printed (`S`, `D`, `R+`…; trace-cmd's plugin uses
        /// its own letters, see [`kernel_state`]).
        prev_state: String,
        /// The task coming on.
        next_comm: String,
        /// Its pid.
        next_pid: i32,
    },
    /// `sched_wakeup`, `sched_wakeup_new` or `sched_waking`.
    Wakeup {
        /// Which of the three.
        event: String,
        /// The task woken.
        comm: String,
        /// Its pid.
        pid: i32,
    },
    /// `sched_process_fork`.
    Fork {
        /// The parent's pid.
        pid: i32,
        /// The child's comm.
        child_comm: String,
        /// The child's pid.
        child_pid: i32,
    },
    /// `sched_process_exit`.
    Exit {
        /// The task's pid.
        pid: i32,
    },
    /// A `trace_marker` write (`tracing_mark_write` or trace-cmd `print`).
    Marker(String),
    /// Any other event, by name.
    Other(String),
}

/// One event line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// 1-based line number.
    pub line: u64,
    /// The context task's comm.
    pub comm: String,
    /// The context task's pid (perf: tid).
    pub pid: i32,
    /// Its thread-group id (the pid of its process), when the trace has
    /// it: ftrace's TGID column (`options/record-tgid`), perf's `pid/tid`.
    pub tgid: Option<i32>,
    /// CPU.
    pub cpu: u32,
    /// Time in ns on the trace clock.
    pub ts_ns: i64,
    /// The event.
    pub kind: Kind,
}

/// A line that does not parse, with its number.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct TextError {
    /// 1-based line number.
    pub line: u64,
    /// What is wrong.
    pub what: String,
}

/// Lost-event markers (`CPU:N [LOST n EVENTS]`, trace-cmd's `[n EVENTS
/// DROPPED]`) seen so far: (cpu, count).
pub type Lost = Vec<(u32, u64)>;

/// Streams the events of one text trace.
pub struct TextReader<R> {
    reader: R,
    format: Format,
    line: u64,
    buf: String,
    /// The last line, when it had no newline (left out).
    pub cut: Option<u64>,
    /// Losses the trace reports.
    pub lost: Lost,
}

/// trace-cmd's sched plugin prints its own state letters (sched.md §3):
/// the kernel letter for a plugin letter.
pub fn kernel_state(plugin: &str) -> String {
    plugin
        .split('|')
        .map(|s| match s {
            "Z" => "X",
            "X" => "Z",
            "x" => "P",
            "W" => "I",
            o => o,
        })
        .collect::<Vec<_>>()
        .join("|")
}

fn ts_ns(t: &str) -> Option<i64> {
    let (s, f) = t.split_once('.')?;
    let sec: i64 = s.trim().parse().ok()?;
    if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac: i64 = f.parse().ok()?;
    sec.checked_mul(1_000_000_000)?
        .checked_add(frac * 10i64.pow(9 - f.len() as u32))
}

/// The value after `key` up to the next anchor (or the end).
fn between<'a>(s: &'a str, key: &str, until: Option<&str>) -> Option<&'a str> {
    let i = find(s, key)? + key.len();
    let rest = s.get(i..)?;
    Some(match until {
        Some(u) => rest.get(..find(rest, u)?)?,
        None => rest,
    })
}

/// `s.find(needle)` through memchr's memmem (std's two-way searcher was
/// a sixth of a kernel trace's time, set up anew for every field).
fn find(s: &str, needle: &str) -> Option<usize> {
    memchr::memmem::find(s.as_bytes(), needle.as_bytes())
}

fn num(s: &str) -> Option<i32> {
    let d: String = s
        .trim()
        .chars()
        .take_while(|c| *c == '-' || c.is_ascii_digit())
        .collect();
    d.parse().ok()
}

/// `comm:pid [prio]`: split on the last `:` before the pid.
fn plugin_task(s: &str) -> Option<(String, i32)> {
    let s = s.trim();
    let s = s.get(..s.rfind(" [").unwrap_or(s.len()))?;
    let (c, p) = s.rsplit_once(':')?;
    Some((c.to_string(), p.trim().parse().ok()?))
}

fn payload_kind(event: &str, p: &str) -> Option<Kind> {
    Some(match event {
        "sched_switch" => {
            if p.contains("prev_pid=") {
                Kind::Switch {
                    prev_comm: between(p, "prev_comm=", Some(" prev_pid="))?.to_string(),
                    prev_pid: num(between(p, " prev_pid=", None)?)?,
                    prev_state: between(p, " prev_state=", Some(" ==> "))?.to_string(),
                    next_comm: between(p, "next_comm=", Some(" next_pid="))?.to_string(),
                    next_pid: num(between(p, " next_pid=", None)?)?,
                }
            } else {
                // trace-cmd's plugin: `prev:pid [prio] STATE ==> next:pid [prio]`.
                let (left, right) = p.split_once(" ==> ")?;
                let close = left.rfind("] ")?;
                let (prev_comm, prev_pid) = plugin_task(left.get(..=close)?)?;
                let prev_state = left.get(close + 2..)?.trim().to_string();
                let (next_comm, next_pid) = plugin_task(right)?;
                Kind::Switch {
                    prev_comm,
                    prev_pid,
                    prev_state,
                    next_comm,
                    next_pid,
                }
            }
        }
        "sched_wakeup" | "sched_wakeup_new" | "sched_waking" => {
            let (comm, pid) = if p.contains(" pid=") {
                (
                    between(p, "comm=", Some(" pid="))?.to_string(),
                    num(between(p, " pid=", None)?)?,
                )
            } else {
                plugin_task(p.get(..p.rfind(" CPU:").unwrap_or(p.len()))?)?
            };
            Kind::Wakeup {
                event: event.to_string(),
                comm,
                pid,
            }
        }
        "sched_process_fork" => Kind::Fork {
            pid: num(between(p, " pid=", None)?)?,
            child_comm: between(p, "child_comm=", Some(" child_pid="))?.to_string(),
            child_pid: num(between(p, " child_pid=", None)?)?,
        },
        "sched_process_exit" => Kind::Exit {
            pid: num(between(p, " pid=", None)?)?,
        },
        "tracing_mark_write" => Kind::Marker(p.trim().to_string()),
        "print" => {
            // trace-cmd: `0xffffffff8149ab1a: text`.
            let t = match p.trim().split_once(": ") {
                Some((a, b)) if a.starts_with("0x") => b,
                _ => p.trim(),
            };
            Kind::Marker(t.to_string())
        }
        other => Kind::Other(other.to_string()),
    })
}

impl<R: BufRead> TextReader<R> {
    /// Reads `format` text (ftrace, trace-cmd or perf) from `reader`.
    pub fn new(reader: R, format: Format) -> TextReader<R> {
        TextReader {
            reader,
            format,
            line: 0,
            cut: None,
            buf: String::new(),
            lost: Vec::new(),
        }
    }

    /// Reads the next line into the buffer: `Ok(false)` at the end.
    fn read(&mut self) -> Result<bool, TextError> {
        let line = self.line + 1;
        let end = integrador_lines::read_text_line(
            &mut self.reader,
            &mut self.buf,
            integrador_lines::MAX_LINE,
        )
        .map_err(|e| TextError {
            line,
            what: match e {
                integrador_lines::TextError::Read(e) => e.to_string(),
                integrador_lines::TextError::NotText => "line is not valid UTF-8".into(),
            },
        })?;
        match end {
            None => Ok(false),
            Some(integrador_lines::End::Eof) => {
                self.cut = Some(line);
                Ok(false)
            }
            Some(integrador_lines::End::Newline) => {
                self.line = line;
                Ok(true)
            }
        }
    }

    /// Reads lines up to the next event line; `Ok(None)` at the end.
    /// Comments, lost-event markers and perf call-chain frames are passed.
    fn next_line(&mut self) -> Result<Option<(u64, Head<'_>)>, TextError> {
        loop {
            if !self.read()? {
                return Ok(None);
            }
            let l = self.buf.trim_end();
            let t = l.trim_start();
            if t.is_empty()
                || t.starts_with('#')
                || t.starts_with("cpus=")
                || t.starts_with("version =")
            {
                continue;
            }
            if let Some(lost) = lost_marker(t) {
                self.lost.push(lost);
                continue;
            }
            if self.format == Format::Perf && perf_frame(t) {
                continue;
            }
            break;
        }
        let line = self.line;
        let l = self.buf.trim_end();
        head(l, self.format)
            .map(|h| Some((line, h)))
            .map_err(|what| TextError {
                line,
                what: format!(
                    "{what}: `{}`",
                    l.trim_start().chars().take(120).collect::<String>()
                ),
            })
    }

    /// The next event line's context and event, borrowed from the line
    /// (a pass that wants only who ran, not what happened, allocates
    /// nothing); `Ok(None)` at the end.
    pub fn next_head(&mut self) -> Result<Option<(u64, Head<'_>)>, TextError> {
        self.next_line()
    }

    /// The next event; `Ok(None)` at the end.
    pub fn next_event(&mut self) -> Result<Option<Event>, TextError> {
        let Some((line, h)) = self.next_line()? else {
            return Ok(None);
        };
        let (comm, pid, tgid, cpu, ts_ns) = (h.comm.to_string(), h.pid, h.tgid, h.cpu, h.ts_ns);
        let kind = payload_kind(h.event, h.payload).ok_or_else(|| TextError {
            line,
            what: format!(
                "{} payload does not parse: `{}`",
                h.event,
                h.text.trim_start().chars().take(120).collect::<String>()
            ),
        })?;
        Ok(Some(Event {
            line,
            comm,
            pid,
            tgid,
            cpu,
            ts_ns,
            kind,
        }))
    }
}

/// An event line's context and event, borrowed from the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head<'a> {
    /// The context task's comm.
    pub comm: &'a str,
    /// Its pid (perf: tid).
    pub pid: i32,
    /// Its thread group, when the trace has it.
    pub tgid: Option<i32>,
    /// CPU.
    pub cpu: u32,
    /// Time in ns on the trace clock.
    pub ts_ns: i64,
    /// The event's name (`sched_switch`).
    pub event: &'a str,
    /// Its payload text.
    pub payload: &'a str,
    /// The whole line, for messages.
    pub text: &'a str,
}

/// Splits an event line (trailing space removed) into its context and
/// event; the error says what is missing.
fn head(l: &str, format: Format) -> Result<Head<'_>, String> {
    // The `[cpu]` column anchors the context.
    let Some((open, close)) = cpu_column(l) else {
        return Err("no `[cpu]` column where a trace line has one".into());
    };
    let cpu: u32 = l
        .get(open + 1..close)
        .and_then(|c| c.parse().ok())
        .ok_or("bad CPU number")?;
    let ctx = l.get(..open).unwrap_or_default().trim_end();
    let (comm, pid, tgid) = match format {
        Format::Perf => {
            let (c, p) = ctx
                .rsplit_once(char::is_whitespace)
                .ok_or("no tid before the CPU")?;
            // `pid/tid` with -F +pid: the tid is the task, the pid its
            // process.
            let (pid, tid) = match p.split_once('/') {
                Some((pid, tid)) => (pid.parse().ok(), tid),
                None => (None, p),
            };
            (c.trim(), tid.parse().map_err(|_| "bad tid")?, pid)
        }
        _ => {
            // An optional `(tgid)` column precedes the CPU; `(-------)`
            // for the idle task.
            let paren = memchr::memrchr(b'(', ctx.as_bytes())
                .filter(|&i| i > 0 && ctx.as_bytes().get(i - 1) == Some(&b' '))
                .map(|i| i - 1);
            let (ctx, tgid) = match paren {
                Some(i) if ctx.ends_with(')') => (
                    ctx.get(..i).unwrap_or(ctx).trim_end(),
                    ctx.get(i + 2..ctx.len() - 1)
                        .and_then(|g| g.trim().parse::<i32>().ok()),
                ),
                _ => (ctx, None),
            };
            let (c, p) = ctx.rsplit_once('-').ok_or("no `comm-pid` before the CPU")?;
            (c.trim(), p.trim().parse().map_err(|_| "bad pid")?, tgid)
        }
    };
    let rest = l.get(close + 1..).unwrap_or_default().trim_start();
    // Optional flags column, then `<time>:`.
    let mut words = rest.splitn(2, ' ');
    let first = words.next().unwrap_or_default();
    let rest = if first.ends_with(':') {
        rest
    } else {
        words.next().unwrap_or_default().trim_start()
    };
    let colon = find(rest, ": ").ok_or("no `<time>:`")?;
    let (time, rest) = (
        rest.get(..colon).unwrap_or_default(),
        rest.get(colon + 2..).unwrap_or_default(),
    );
    let ts_ns = ts_ns(time).ok_or("time is not `<seconds>.<fraction>`")?;
    let (event, payload) = rest.trim_start().split_once(':').ok_or("no `<event>:`")?;
    // perf names events `sched:sched_switch`.
    let (event, payload) = match (format, payload.split_once(':')) {
        (Format::Perf, Some((name, p))) if !name.contains(' ') => (name, p),
        _ => (event, payload),
    };
    let payload = payload.strip_prefix(' ').unwrap_or(payload).trim_start();
    Ok(Head {
        comm,
        pid,
        tgid,
        cpu,
        ts_ns,
        event: event.trim(),
        payload,
        text: l,
    })
}

/// A perf call-chain line by its shape: an address, a symbol and the
/// DSO in parentheses (`ffffffff8104f45a __schedule+0x2ea
/// ([kernel.kallsyms])`), with no `[cpu]` column. The alphabet of the
/// first word decides nothing: tasks are named `cc1`, `dd`, `bc`, `ed`.
fn perf_frame(t: &str) -> bool {
    let mut words = t.split_whitespace();
    let address = words
        .next()
        .is_some_and(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_hexdigit()));
    address
        && words.next().is_some()
        && t.ends_with(')')
        && t.contains(" (")
        && cpu_column(t).is_none()
}

/// The first `[digits]` column of a line: its bracket offsets.
fn cpu_column(l: &str) -> Option<(usize, usize)> {
    let b = l.as_bytes();
    let mut from = 0;
    while let Some(i) = l.get(from..)?.find('[') {
        let open = from + i;
        let close = open + l.get(open..)?.find(']')?;
        if close > open + 1 && b.get(open + 1..close)?.iter().all(u8::is_ascii_digit) {
            return Some((open, close));
        }
        from = open + 1;
    }
    None
}

fn lost_marker(t: &str) -> Option<(u32, u64)> {
    let rest = t.strip_prefix("CPU:")?;
    let (cpu, rest) = rest.split_once(' ')?;
    let n: String = rest
        .trim_start_matches('[')
        .trim_start_matches("LOST ")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((cpu.trim().parse().ok()?, n.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tasks whose names are hex digits keep their events; call-chain
    /// frames under an event are skipped by their shape.
    #[test]
    fn perf_tasks_with_hex_names_are_not_frames() {
        let text = "\
             cc1  4101 [000]  2740.161572: sched:sched_switch: prev_comm=cc1 prev_pid=4101 prev_prio=120 prev_state=S ==> next_comm=dd next_pid=4102 next_prio=120
\tffffffff8104f45a __schedule+0x2ea ([kernel.kallsyms])
\t    7f2a1c0e4a3d [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)
              dd  4102 [000]  2740.161601: sched:sched_switch: prev_comm=dd prev_pid=4102 prev_prio=120 prev_state=R ==> next_comm=bc next_pid=4103 next_prio=120
              bc  4103 [000]  2740.161621: sched:sched_switch: prev_comm=bc prev_pid=4103 prev_prio=120 prev_state=S ==> next_comm=ed next_pid=4104 next_prio=120
              ed  4104 [001]  2740.161633: sched:sched_waking: comm=cc1 pid=4101 prio=120 target_cpu=000
";
        let mut r = TextReader::new(text.as_bytes(), Format::Perf);
        let mut comms = Vec::new();
        while let Some(ev) = r.next_event().unwrap() {
            comms.push(ev.comm);
        }
        assert_eq!(comms, ["cc1", "dd", "bc", "ed"]);
        assert!(perf_frame(
            "ffffffff8104f45a __schedule+0x2ea ([kernel.kallsyms])"
        ));
        assert!(!perf_frame(
            "cc1  4101 [000]  2740.161572: sched:sched_switch: x (y)"
        ));
    }
}
