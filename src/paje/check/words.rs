//! Splitting a trace line into fields as pj_dump 1.3.6 does.

/// PajeNG 1.3.6 `break_line`: whitespace-separated words, `"` starts a
/// string only at a word start, `#` outside a string ends the line, at most
/// 20 words. Quirk kept: the byte right after an opening quote is never
/// examined, so `""` opens a string that runs to the next quote, and a
/// quote that ends a line swallows its newline: the next line belongs to
/// the same event. Nor is a NUL byte there seen: it only ends the word,
/// read as a C string. Scanning resumes where it stopped when more is read.
#[derive(Debug, Default)]
pub(super) struct Words {
    /// The words as byte ranges of the (joined) line.
    words: Vec<(usize, usize)>,
    /// Words past the 20th, which pj_dump drops.
    pub(super) dropped: usize,
    /// The line holds a comment.
    pub(super) comment: bool,
    /// Where pj_dump meets a NUL byte: it cannot read on.
    pub(super) nul: Option<usize>,
    at: usize,
    start: usize,
    in_word: bool,
    in_string: bool,
}

impl Words {
    /// Scans `line` on from where the last call stopped. False when its
    /// last byte is a newline an opening quote swallowed: the next line
    /// must be added to `line` and scanned on.
    pub(super) fn scan(&mut self, line: &[u8]) -> bool {
        while let Some(&c) = line.get(self.at) {
            let i = self.at;
            if c == b'\n' || c == 0 {
                self.nul = (c == 0).then_some(i);
                self.finish(i);
                return true;
            }
            self.at += 1;
            if self.in_string {
                if c == b'"' {
                    self.push(self.start, i);
                    self.in_string = false;
                }
                continue;
            }
            if c == b'#' {
                // The comment ends the word it interrupts, too. pj_dump
                // looks at every byte of it for the newline.
                self.comment = true;
                let rest = line.get(i..).unwrap_or_default();
                let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
                self.nul = memchr::memchr(0, rest.get(..end).unwrap_or_default()).map(|z| i + z);
                self.finish(i);
                return true;
            }
            let space = c.is_ascii_whitespace() || c == 0x0b;
            if self.in_word && space {
                self.push(self.start, i);
                self.in_word = false;
            } else if !self.in_word && !space {
                if c == b'"' {
                    self.in_string = true;
                    self.start = i + 1;
                    self.at += 1;
                } else {
                    self.in_word = true;
                    self.start = i;
                }
            }
        }
        if line.last() == Some(&b'\n') {
            return false;
        }
        self.finish(line.len());
        true
    }

    /// Ends the line at `end`, with the word or string open there.
    pub(super) fn finish(&mut self, end: usize) {
        if self.in_word || self.in_string {
            self.push(self.start, end.max(self.start));
        }
        (self.in_word, self.in_string) = (false, false);
    }

    fn push(&mut self, from: usize, to: usize) {
        if self.words.len() < 20 {
            self.words.push((from, to));
        } else {
            self.dropped += 1;
        }
    }

    pub(super) fn get<'a>(&self, line: &'a [u8]) -> Vec<&'a [u8]> {
        // A NUL pj_dump does not see can only be a string's first byte,
        // the one after its quote: the word, a C string, is then empty.
        let word = |&(from, to): &(usize, usize)| match line.get(from..to) {
            Some([0, ..]) | None => &b""[..],
            Some(w) => w,
        };
        self.words.iter().map(word).collect()
    }
}

/// The words of a whole line, as [`Words`] finds them.
#[cfg(test)]
fn tokenize(line: &[u8]) -> (Vec<&[u8]>, usize, bool) {
    let mut w = Words::default();
    if !w.scan(line) {
        w.finish(line.len());
    }
    (w.get(line), w.dropped, w.comment)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        tokenize(s.as_bytes())
            .0
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect()
    }

    #[test]
    fn tokenizer_follows_pajeng() {
        assert_eq!(
            words("6 0.5 t1 0 \"node one\" c1\n"),
            vec!["6", "0.5", "t1", "0", "node one", "c1"]
        );
        assert_eq!(words("a # comment\n"), vec!["a"]);
        assert_eq!(words("k2_84#12 x\n"), vec!["k2_84"]);
        assert_eq!(words("a \"x # y\" b"), vec!["a", "x # y", "b"]);
        assert_eq!(words("\"\" b\" c"), vec!["\" b", "c"]);
        assert_eq!(words("\t a\tb \r\n"), vec!["a", "b"]);
        // The newline right after an opening quote is part of the string.
        assert_eq!(words("a \"\nb c\" d\n"), vec!["a", "\nb c", "d"]);
        assert_eq!(words("a \"\n"), vec!["a", "\n"]);
        let many = (0..25).map(|i| i.to_string()).collect::<Vec<_>>().join(" ");
        let (w, dropped, _) = tokenize(many.as_bytes());
        assert_eq!((w.len(), dropped), (20, 5));
    }

    #[test]
    fn a_nul_is_seen_unless_right_after_a_quote() {
        let nul = |s: &[u8]| {
            let mut w = Words::default();
            w.scan(s);
            (w.nul, w.get(s).len())
        };
        assert_eq!(nul(b"a \"\0b\" c\n"), (None, 3));
        assert_eq!(tokenize(b"a \"\0b\" c\n").0[1], b"");
        assert_eq!(nul(b"a \"b\0\" c\n"), (Some(4), 2));
        assert_eq!(nul(b"a b\0 c\n"), (Some(3), 2));
        assert_eq!(nul(b"a # b\0\n"), (Some(5), 1));
        assert_eq!(nul(b"a # b\n\0"), (None, 1));
    }

    #[test]
    fn a_quote_at_the_end_of_a_line_joins_the_next() {
        let mut w = Words::default();
        let mut line = b"4 0 P n1 \"\n".to_vec();
        assert!(!w.scan(&line), "the newline was swallowed");
        line.extend_from_slice(b"one\" \"\n");
        assert!(!w.scan(&line), "a string closed and one opened");
        line.extend_from_slice(b"two\" p1 # x\n");
        assert!(w.scan(&line));
        assert_eq!(
            w.get(&line),
            vec![&b"4"[..], b"0", b"P", b"n1", b"\none", b"\ntwo", b"p1"]
        );
        assert!(w.comment);
    }
}
