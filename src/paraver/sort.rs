//! The records in time order, as a `.prv` has them, in bounded memory.
//!
//! A record is complete only when what it says has ended (a state at its
//! end, a message when both halves are met), so they come out of order.
//! They are kept in chunks of [`CHUNK`] bytes, each sorted by time (ties
//! in the order they came) and written to a scratch file when full; the
//! chunks are merged at the end. A run smaller than a chunk is sorted in
//! memory and never touches the disk.

use crate::order::MinQueue;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Seek, Write};
use std::path::PathBuf;

/// The bytes of records held before a chunk is sorted and spilled.
pub const CHUNK: usize = 32 << 20;

/// Records in, records out by time.
pub struct Sorter {
    bytes: Vec<u8>,
    /// (time, start, length) of each record in `bytes`.
    index: Vec<(i64, u32, u32)>,
    runs: Vec<BufReader<File>>,
    scratch: PathBuf,
    limit: usize,
}

/// A record's time: its sixth field (a state's begin, an event's time, a
/// message's logical send).
fn time_of(line: &[u8]) -> i64 {
    line.split(|&b| b == b':')
        .nth(5)
        .and_then(|f| std::str::from_utf8(f).ok())
        .and_then(|f| f.trim_end().parse().ok())
        .unwrap_or(0)
}

impl Sorter {
    /// A sorter spilling to files in `scratch`, chunks of `limit` bytes.
    pub fn new(scratch: PathBuf, limit: usize) -> Sorter {
        Sorter {
            bytes: Vec::new(),
            index: Vec::new(),
            runs: Vec::new(),
            scratch,
            limit,
        }
    }

    /// One record (its line, newline included) at `time`.
    pub fn push(&mut self, time: i64, line: &[u8]) -> io::Result<()> {
        if self.bytes.len() + line.len() > self.limit && !self.index.is_empty() {
            self.spill()?;
        }
        self.index.push((time, self.bytes.len() as u32, line.len() as u32));
        self.bytes.extend_from_slice(line);
        Ok(())
    }

    /// The chunk held, sorted, into `out`.
    fn write_chunk(&mut self, out: &mut impl Write) -> io::Result<()> {
        // Stable: ties keep the order they came in.
        self.index.sort_by_key(|r| r.0);
        for &(_, start, len) in &self.index {
            out.write_all(&self.bytes[start as usize..(start + len) as usize])?;
        }
        self.index.clear();
        self.bytes.clear();
        Ok(())
    }

    fn spill(&mut self) -> io::Result<()> {
        let mut w = BufWriter::with_capacity(1 << 20, tempfile::tempfile_in(&self.scratch)?);
        self.write_chunk(&mut w)?;
        let mut file = w.into_inner().map_err(|e| e.into_error())?;
        file.rewind()?;
        self.runs.push(BufReader::with_capacity(256 << 10, file));
        Ok(())
    }

    /// Every record, in time order, into `out`.
    pub fn finish(mut self, out: &mut impl Write) -> io::Result<()> {
        if self.runs.is_empty() {
            return self.write_chunk(out);
        }
        if !self.index.is_empty() {
            self.spill()?;
        }
        // Ties across chunks: the earlier chunk's record came first.
        let mut queue = MinQueue::with_capacity(self.runs.len());
        for (i, run) in self.runs.iter_mut().enumerate() {
            if let Some(line) = next_line(run)? {
                queue.push((time_of(&line), i), line);
            }
        }
        while let Some((&(_, i), line)) = queue.peek() {
            out.write_all(line)?;
            let next = next_line(&mut self.runs[i])?.map(|l| ((time_of(&l), i), l));
            queue.replace_top(next);
        }
        Ok(())
    }
}

fn next_line(run: &mut BufReader<File>) -> io::Result<Option<Vec<u8>>> {
    let mut line = Vec::with_capacity(64);
    Ok((run.read_until(b'\n', &mut line)? > 0).then_some(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(limit: usize, records: &[(i64, &str)]) -> String {
        let mut s = Sorter::new(std::env::temp_dir(), limit);
        for (t, r) in records {
            s.push(*t, format!("2:1:1:1:1:{t}:{r}\n").as_bytes()).unwrap();
        }
        let mut out = Vec::new();
        s.finish(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn in_memory_and_spilled_sort_alike_with_ties_in_arrival_order() {
        let recs: Vec<(i64, String)> = (0..200).map(|i| ((i * 7919) % 50, format!("{i}"))).collect();
        let recs: Vec<(i64, &str)> = recs.iter().map(|(t, r)| (*t, r.as_str())).collect();
        let one = sorted(1 << 20, &recs);
        // 64 bytes: a chunk every few records, merged.
        assert_eq!(sorted(64, &recs), one);
        let times: Vec<i64> = one.lines().map(|l| time_of(l.as_bytes())).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        let ties: Vec<&str> = one.lines().filter(|l| time_of(l.as_bytes()) == 0).collect();
        let mut arrival = ties.clone();
        arrival.sort_by_key(|l| l.rsplit(':').next().unwrap().parse::<u32>().unwrap());
        assert_eq!(ties, arrival);
    }
}
