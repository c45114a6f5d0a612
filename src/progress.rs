//! The progress bar of a run on a terminal.

use crate::input;
use std::path::PathBuf;

/// The progress line on a terminal: bytes of the inputs read of their
/// total, percent and time left; a spinner with the event count when a
/// total is unknown (a pipe).
pub struct Progress {
    /// The bar, finished by the caller.
    pub bar: indicatif::ProgressBar,
    /// Bytes read before the merge (first passes, headers).
    start: u64,
    known: bool,
}

impl Progress {
    /// Total size of the sources' files; `None` when one is a pipe.
    pub fn total(inputs: &[(&'static str, PathBuf)], sources: &[&str]) -> Option<u64> {
        let mut total = Some(0u64);
        let mut seen = std::collections::HashSet::new();
        for (option, p) in inputs {
            // A file may be listed as given and among its directory's.
            if !sources.contains(option) || p.is_dir() || !p.exists() || !seen.insert(p) {
                continue;
            }
            let size = (!input::is_read_once(p))
                .then(|| std::fs::metadata(p).ok().map(|m| m.len()))
                .flatten();
            total = total.zip(size).map(|(t, s)| t + s);
        }
        total
    }

    /// A bar for inputs of `total` bytes (a spinner when unknown).
    pub fn new(total: Option<u64>) -> Progress {
        let (bar, known) = match total {
            Some(t) if t > 0 => {
                let bar = indicatif::ProgressBar::new(t);
                bar.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{bar:30} {bytes}/{total_bytes} {percent}%, {eta} left, {msg}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                (bar, true)
            }
            _ => (indicatif::ProgressBar::new_spinner(), false),
        };
        Progress {
            bar,
            start: input::bytes_read(),
            known,
        }
    }

    /// Shows the bytes read so far and the events written.
    pub fn show(&self, events: u64) {
        if self.known {
            let done = input::bytes_read().saturating_sub(self.start);
            self.bar
                .set_position(done.min(self.bar.length().unwrap_or(done)));
        } else {
            self.bar.tick();
        }
        self.bar.set_message(format!("{events} events"));
    }
}
