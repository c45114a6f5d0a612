//! An event's `format` text (tracefs `events/<system>/<event>/format`, as
//! the file stores it): its id, name and field offsets. Offsets are read
//! from the text, never assumed.

/// One field of an event record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Its name (`prev_pid`).
    pub name: String,
    /// Byte offset in the record.
    pub offset: usize,
    /// Byte size (0 for a `char buf[]` that runs to the record's end).
    pub size: usize,
    /// Whether it is signed.
    pub signed: bool,
    /// A `__data_loc` field: a (u16 offset, u16 length) descriptor.
    pub data_loc: bool,
}

/// An event's layout.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EventFormat {
    /// Its id, the record's `common_type`.
    pub id: u16,
    /// Its name (`sched_switch`).
    pub name: String,
    /// Its fields.
    pub fields: Vec<Field>,
}

impl EventFormat {
    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// Parses a format text; `None` when it has no name or id.
pub fn parse(text: &str) -> Option<EventFormat> {
    let mut f = EventFormat::default();
    let mut id = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(n) = t.strip_prefix("name:") {
            f.name = n.trim().to_string();
        } else if let Some(i) = t.strip_prefix("ID:") {
            id = i.trim().parse().ok();
        } else if let Some(decl) = t.strip_prefix("field:") {
            if let Some(field) = field(decl) {
                f.fields.push(field);
            }
        }
    }
    f.id = id?;
    (!f.name.is_empty()).then_some(f)
}

/// `unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;`
fn field(decl: &str) -> Option<Field> {
    let mut parts = decl.split(';').map(str::trim);
    let c = parts.next()?;
    let mut offset = None;
    let mut size = None;
    let mut signed = false;
    for p in parts {
        if let Some(v) = p.strip_prefix("offset:") {
            offset = v.trim().parse().ok();
        } else if let Some(v) = p.strip_prefix("size:") {
            size = v.trim().parse().ok();
        } else if let Some(v) = p.strip_prefix("signed:") {
            signed = v.trim() == "1";
        }
    }
    // The name is the declaration's last word, without `[16]`.
    let last = c.split_whitespace().last()?;
    let name = last.split('[').next()?.to_string();
    Some(Field {
        name,
        offset: offset?,
        size: size?,
        signed,
        data_loc: c.starts_with("__data_loc"),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn fields_come_from_the_text() {
        let f = super::parse("name: sched_switch\nID: 316\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:__data_loc char[] name;\toffset:28;\tsize:4;\tsigned:0;\n\nprint fmt: \"x\"\n").unwrap();
        assert_eq!((f.id, f.name.as_str()), (316, "sched_switch"));
        let p = f.field("prev_pid").unwrap();
        assert_eq!((p.offset, p.size, p.signed), (24, 4, true));
        assert_eq!(f.field("prev_comm").unwrap().size, 16);
        assert!(f.field("name").unwrap().data_loc);
    }
}
