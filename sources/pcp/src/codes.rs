//! The numbers PCP archives store, as types: identifiers (PMID, instance
//! domain) and the codes of record types, data types, semantics and value
//! formats (pmapi.h, libpcp's logarchive code; fact sheet `specs/pcp.md`).
//! A code this reader does not know is kept, not refused: newer PCP.

use std::fmt;

/// A metric identifier: `flag:1 domain:9 cluster:12 item:10`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pmid(pub u32);

impl Pmid {
    /// The performance metrics domain (2 = pmcd, 60 = linux…).
    pub fn domain(self) -> u32 {
        (self.0 >> 22) & 0x1ff
    }

    /// The cluster within the domain.
    pub fn cluster(self) -> u32 {
        (self.0 >> 10) & 0xfff
    }

    /// The item within the cluster.
    pub fn item(self) -> u32 {
        self.0 & 0x3ff
    }
}

impl fmt::Display for Pmid {
    /// Dotted, as PCP's tools print it (`60.2.0`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.domain(), self.cluster(), self.item())
    }
}

/// An instance domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct InDom(pub u32);

impl InDom {
    /// The domain of singular metrics (one value, instance -1).
    pub const NULL: InDom = InDom(0xffff_ffff);
}

impl fmt::Display for InDom {
    /// Dotted (`60.3`), or `PM_INDOM_NULL`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == InDom::NULL {
            f.write_str("PM_INDOM_NULL")
        } else {
            write!(f, "{}.{}", (self.0 >> 22) & 0x1ff, self.0 & 0x3f_ffff)
        }
    }
}

/// The type of a `.meta` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetaType(pub u32);

impl MetaType {
    /// A metric descriptor and its names.
    pub const DESC: MetaType = MetaType(1);
    /// An instance domain, v2 timestamp.
    pub const INDOM_V2: MetaType = MetaType(2);
    /// Labels, v2 timestamp.
    pub const LABEL_V2: MetaType = MetaType(3);
    /// Help text.
    pub const TEXT: MetaType = MetaType(4);
    /// An instance domain (v3).
    pub const INDOM: MetaType = MetaType(5);
    /// An instance domain as a change of the one before (v3).
    pub const INDOM_DELTA: MetaType = MetaType(6);
    /// Labels (v3).
    pub const LABEL: MetaType = MetaType(7);
}

/// A metric's data type (`PM_TYPE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PmType(pub i32);

impl PmType {
    /// Signed 32-bit integer.
    pub const I32: PmType = PmType(0);
    /// Unsigned 32-bit integer.
    pub const U32: PmType = PmType(1);
    /// Signed 64-bit integer.
    pub const I64: PmType = PmType(2);
    /// Unsigned 64-bit integer.
    pub const U64: PmType = PmType(3);
    /// 32-bit float.
    pub const FLOAT: PmType = PmType(4);
    /// 64-bit float.
    pub const DOUBLE: PmType = PmType(5);
    /// NUL-terminated string.
    pub const STRING: PmType = PmType(6);
}

impl fmt::Display for PmType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A metric's semantics (`PM_SEM_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Semantics(pub i32);

impl Semantics {
    /// A counter: only its differences mean something.
    pub const COUNTER: Semantics = Semantics(1);
    /// An instantaneous value.
    pub const INSTANT: Semantics = Semantics(3);
    /// A value that changes rarely.
    pub const DISCRETE: Semantics = Semantics(4);
}

/// Where a value set's values are (`PM_VAL_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueFormat(pub u32);

impl ValueFormat {
    /// In the value word itself (32-bit types).
    pub const INSITU: ValueFormat = ValueFormat(0);
    /// In a value block the word points to (dynamic).
    pub const DPTR: ValueFormat = ValueFormat(1);
    /// In a value block the word points to (static).
    pub const SPTR: ValueFormat = ValueFormat(2);
}
