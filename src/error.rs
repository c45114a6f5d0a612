//! The integrator's error: a one-line message and the exit status class of
//! the README (1 = input or output problem, 2 = usage problem).

use std::fmt;
use std::path::Path;

/// Exit status classes of the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Unreadable or malformed input, invalid data, I/O error: exit 1.
    Input,
    /// Unknown, missing or conflicting options, unsupported source: exit 2.
    Usage,
    /// The reader of standard output went away: exit 0, nothing printed.
    BrokenPipe,
}

/// An error to report on one line and exit with.
#[derive(Debug)]
pub struct Error {
    /// Exit status class.
    pub class: ErrorClass,
    /// The message, already naming file and position where there is one.
    pub message: String,
}

impl Error {
    /// An input problem (exit 1).
    pub fn input(message: impl Into<String>) -> Self {
        Error {
            class: ErrorClass::Input,
            message: message.into(),
        }
    }

    /// A usage problem (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Error {
            class: ErrorClass::Usage,
            message: message.into(),
        }
    }

    /// Standard output was closed by its reader.
    pub fn broken_pipe() -> Self {
        Error {
            class: ErrorClass::BrokenPipe,
            message: String::new(),
        }
    }

    /// An input problem in `path`: `path: what`.
    pub fn in_file(path: &Path, what: impl fmt::Display) -> Self {
        Error::input(format!("{}: {what}", path.display()))
    }

    /// The process exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self.class {
            ErrorClass::Input => 1,
            ErrorClass::Usage => 2,
            ErrorClass::BrokenPipe => 0,
        }
    }
}

impl fmt::Display for Error {
    /// One line whatever the message quotes: a control character from an
    /// input (a newline in a PCP host name) is written as an escape.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.message.chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// Result alias of the integrator.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    #[test]
    fn a_message_is_one_line() {
        let e = super::Error::input("host vm\n, the other\u{0}");
        assert_eq!(e.to_string(), "host vm\\n, the other\\u{0}");
    }
}
