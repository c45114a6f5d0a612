//! Names as a Pajé line holds them: quoted when PajeNG would split or
//! cut them, never empty, never holding what it cannot read.

/// Appends a human-readable name: never empty, never a `"` inside, no
/// control character (a NUL from a damaged input makes pj_dump abort, a
/// newline would split the line), quoted when it holds whitespace or `#`
/// (which PajeNG reads as a comment).
pub fn push_name(out: &mut Vec<u8>, name: &str) {
    push_name_bytes(out, name.as_bytes());
}

/// What a byte asks of a name, by byte: [`QUOTE`] (whitespace, a
/// control or `#`), [`REPLACE`] (`"` or a control).
static CLASS: [u8; 256] = {
    let mut c = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let x = b as u8;
        if x.is_ascii_whitespace() || x.is_ascii_control() || x == b'#' {
            c[b] |= QUOTE;
        }
        if x == b'"' || x.is_ascii_control() {
            c[b] |= REPLACE;
        }
        b += 1;
    }
    c
};
const QUOTE: u8 = 1;
const REPLACE: u8 = 2;

/// [`push_name`] of a name's bytes.
pub fn push_name_bytes(out: &mut Vec<u8>, name: &[u8]) {
    if name.is_empty() {
        out.push(b'_');
        return;
    }
    // One look at each byte, by table (two scans testing each byte's
    // class were 8% of the formatting thread on an MPI run, a link's
    // value name on every message).
    let class = name.iter().fold(0, |m, &b| {
        m | CLASS.get(usize::from(b)).copied().unwrap_or(0)
    });
    let needs_quotes = class & QUOTE != 0;
    if needs_quotes {
        out.push(b'"');
    }
    if class & REPLACE != 0 {
        for &b in name {
            out.push(match b {
                b'"' => b'\'',
                c if c.is_ascii_control() => b' ',
                other => other,
            });
        }
    } else {
        out.extend_from_slice(name);
    }
    if needs_quotes {
        out.push(b'"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_only_when_needed() {
        for (name, out) in [
            ("node01", "node01"),
            ("OS state", "\"OS state\""),
            ("", "_"),
            ("a\"b", "a'b"),
            ("x#1", "\"x#1\""),
            ("a\0b", "\"a b\""),
            ("\x7f\x01", "\"  \""),
        ] {
            let mut v = Vec::new();
            push_name(&mut v, name);
            assert_eq!(String::from_utf8(v).unwrap(), out);
        }
    }

    proptest::proptest! {
        /// The byte table says what the byte tests say.
        #[test]
        fn the_table_quotes_as_the_tests(name in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..12)) {
            let quote = name
                .iter()
                .any(|&b| b.is_ascii_whitespace() || b.is_ascii_control() || b == b'#');
            let mut want: Vec<u8> = name
                .iter()
                .map(|&b| match b {
                    b'"' => b'\'',
                    c if c.is_ascii_control() => b' ',
                    other => other,
                })
                .collect();
            if quote {
                want.insert(0, b'"');
                want.push(b'"');
            }
            if name.is_empty() {
                want = b"_".to_vec();
            }
            let mut v = Vec::new();
            push_name_bytes(&mut v, &name);
            proptest::prop_assert_eq!(v, want);
        }
    }
}
