//! The checkpoints a window of the tables is opened from
//! (`docs/windows.md`): the points inside the window and the first at or
//! after its end, read from the few row groups that hold them.

use super::read::{Cells, Dataset};
use super::window::Written;
use crate::error::Result;

const HELD_COLS: &[&str] = &[
    "at_ns",
    "kind",
    "container_id",
    "type_id",
    "depth",
    "value_id",
    "number",
    "since_ns",
    "from_container_id",
    "to_container_id",
    "key",
    "size_bytes",
    "tag",
];

/// A checkpoint's row.
pub(super) struct Held {
    pub(super) kind: u8,
    pub(super) container: i64,
    pub(super) ty: i64,
    pub(super) depth: u32,
    pub(super) value: i64,
    pub(super) number: f64,
    pub(super) since: i64,
    pub(super) from: Option<i64>,
    pub(super) to: Option<i64>,
    pub(super) key: String,
    pub(super) size: i64,
    pub(super) tag: i64,
}

impl Held {
    fn read(c: &Cells) -> Held {
        Held {
            kind: c.str("kind").and_then(|k| k.bytes().next()).unwrap_or(b'?'),
            container: c.i64("container_id").unwrap_or(0),
            ty: c.i64("type_id").unwrap_or(0),
            depth: c.i32("depth").unwrap_or(0) as u32,
            value: c.i64("value_id").unwrap_or(0),
            number: c.f64("number").unwrap_or(0.0),
            since: c.i64("since_ns").unwrap_or(0),
            from: c.i64("from_container_id"),
            to: c.i64("to_container_id"),
            key: c.str("key").unwrap_or("").to_string(),
            size: c.i64("size_bytes").unwrap_or(0),
            tag: c.i64("tag").unwrap_or(0),
        }
    }
}

type Instants = std::collections::BTreeMap<i64, Vec<Held>>;

/// The checkpoints of the dataset from `after` (excluded) to the first at
/// or after `until`, by instant.
pub(super) fn points(
    data: &Dataset,
    after: i64,
    until: i64,
    groups: &mut Written,
) -> Result<Instants> {
    let table = data.table("checkpoints")?;
    let mut take = |lo: i64, hi: i64, by: &mut Instants| -> Result<()> {
        let r = table.scan_only(HELD_COLS, &["at_ns"], lo, hi, |c| {
            let at = c.i64("at_ns").unwrap_or(0);
            if (lo..hi).contains(&at) {
                by.entry(at).or_default().push(Held::read(c));
            }
            Ok(())
        })?;
        groups.groups_read += r;
        Ok(())
    };
    let mut by = Instants::new();
    take(after.saturating_add(1), until, &mut by)?;
    if let Some(c) = table.first_at_least("at_ns", until)? {
        take(c, c.saturating_add(1), &mut by)?;
    }
    Ok(by)
}
