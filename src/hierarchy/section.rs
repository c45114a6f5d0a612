//! What a kind of source needs to read its own section of the hierarchy
//! file (the kinds own their sections; this module names none): the
//! file's text for a view with spans, and the checks every section
//! shares, each citing the TOML line.

use super::{Display, Level, Role};
use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Display name and color of a value or metric, as a section gives it.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawDisplay {
    /// Name shown instead of the source's own.
    pub name: Option<String>,
    /// Pajé color, checked by [`Text::display`].
    pub color: Option<Spanned<String>>,
}

/// The include-then-exclude rule of metric sections.
pub fn selects(include: &[glob::Pattern], exclude: &[glob::Pattern], name: &str) -> bool {
    (include.is_empty() || include.iter().any(|p| p.matches(name)))
        && !exclude.iter().any(|p| p.matches(name))
}

/// The hierarchy file's text, for messages that cite its lines and for the
/// sources' views of their sections.
pub struct Text<'a> {
    pub(super) text: &'a str,
    pub(super) origin: &'a str,
    pub(super) levels: &'a [Level],
}

impl<'a> Text<'a> {
    /// Any TOML file's text (a recorder's `--config`), for its errors to
    /// cite lines; it has no levels.
    pub fn of_file(text: &'a str, origin: &'a str) -> Text<'a> {
        Text {
            text,
            origin,
            levels: &[],
        }
    }
}

impl Text<'_> {
    /// The line of byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.text
            .get(..offset)
            .map_or(0, |s| s.matches('\n').count())
            + 1
    }

    /// An error at byte `offset` of the file.
    pub fn at(&self, offset: usize, what: String) -> Error {
        Error::input(format!(
            "{}: line {}: {what}",
            self.origin,
            self.line_of(offset)
        ))
    }

    /// The whole file read as `T`, a kind's view (a struct with its one
    /// section as a field, other keys ignored), spans kept.
    pub fn view<T: DeserializeOwned>(&self) -> Result<T> {
        toml::from_str(self.text).map_err(|e| self.toml_error(&e))
    }

    /// A `toml` error in the one-line form.
    pub(super) fn toml_error(&self, e: &toml::de::Error) -> Error {
        let msg = match e.message().trim() {
            "" => "not valid TOML here".to_string(),
            m => m.replace('\n', " "),
        };
        match e.span() {
            Some(span) => self.at(span.start, msg),
            None => Error::input(format!("{}: {msg}", self.origin)),
        }
    }

    /// A display, its color checked.
    pub fn display(&self, d: &RawDisplay) -> Result<Display> {
        if let Some(c) = &d.color {
            if !super::valid_color(c.get_ref()) {
                return Err(self.at(
                    c.span().start,
                    format!(
                        "color `{}`: expected three or four numbers in 0..1, as \"1 0.5 0\"",
                        c.get_ref()
                    ),
                ));
            }
        }
        Ok(Display {
            name: d.name.clone(),
            color: d.color.as_ref().map(|c| c.get_ref().clone()),
        })
    }

    /// Name patterns, each checked.
    pub fn patterns(&self, list: &[Spanned<String>]) -> Result<Vec<glob::Pattern>> {
        list.iter()
            .map(|p| {
                glob::Pattern::new(p.get_ref())
                    .map_err(|e| self.at(p.span().start, format!("pattern `{}`: {e}", p.get_ref())))
            })
            .collect()
    }

    /// Epoch seconds given as a string (`key` names it in the message).
    pub fn epoch(&self, v: &Spanned<String>, key: &str) -> Result<i64> {
        crate::clock::parse_epoch_ns(v.get_ref().as_bytes()).ok_or_else(|| {
            self.at(
                v.span().start,
                format!(
                    "`{key}` `{}`: expected epoch seconds, as \"1795262171.292101\"",
                    v.get_ref()
                ),
            )
        })
    }

    /// A path the file gives, relative to the file itself.
    pub fn path(&self, p: &str) -> PathBuf {
        let p = PathBuf::from(p);
        match (p.is_relative(), Path::new(self.origin).parent()) {
            (true, Some(dir)) => dir.join(p),
            _ => p,
        }
    }

    /// Checks a section's `level` key: it must name a defined container
    /// type of `role`, the one level the section's data can go on.
    pub fn level(&self, level: &Option<Spanned<String>>, role: Role, section: &str) -> Result<()> {
        let Some(l) = level else {
            return Ok(());
        };
        match self.levels.iter().find(|x| x.name == *l.get_ref()) {
            None => Err(self.at(
                l.span().start,
                format!(
                    "[{section}] level `{}` is not a defined container type",
                    l.get_ref()
                ),
            )),
            Some(x) if x.role != role => Err(self.at(
                l.span().start,
                format!(
                    "[{section}] level `{}` has role `{}`; {section} data goes on a `{}` type",
                    l.get_ref(),
                    x.role.as_str(),
                    role.as_str()
                ),
            )),
            Some(_) => Ok(()),
        }
    }
}
