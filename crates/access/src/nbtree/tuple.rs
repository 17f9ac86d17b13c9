//! The btree index tuple: a key (a row of [`Value`]s) and a heap TID, as bytes on a page.
//!
//! ```text
//!  0          4            6          8
//!  +----------+------------+----------+----------------------------------+---------------+
//!  | t_block  | t_offset   | t_info   | key columns, natts of them       | [heap TID]    |
//!  |   u32    |   u16      |   u16    | each: tag u8, then its payload   | u32 + u16     |
//!  +----------+------------+----------+----------------------------------+---------------+
//!
//!  t_info: bits 0..12  natts          key columns stored (0..=INDEX_MAX_KEYS)
//!          bit  12     BT_IS_PIVOT    a pivot tuple (high key or internal-page downlink)
//!          bit  13     BT_PIVOT_TID   a pivot that keeps the heap TID: 6 bytes at the end
//!
//!  leaf (non-pivot) tuple: t_block/t_offset = the heap TID; natts = the index's columns.
//!  pivot tuple:            t_block = downlink (child block) on internal pages, P_NONE in
//!                          a high key; t_offset = 0; natts <= the index's columns (suffix
//!                          truncation: missing columns and a missing TID are minus infinity).
//!
//!  column tags and payloads (little-endian, no alignment):
//!    0 NULL (none)   1 bool (1 byte, 0/1)   2 int2 (2)   3 int4 (4)   4 int8 (8)
//!    5 float4 (4)    6 float8 (8)           7 text / varchar (u16 length + UTF-8 bytes)
//!    8 char(n) (u16 length + UTF-8 bytes, blank-padded as the value holds it)
//!    9 date (4)      10 timestamp (8)       11 timestamptz (8)
//!   12 interval (16: i64 microseconds, i32 days, i32 months)
//!   13 numeric (common::numeric's storage encoding, self-delimiting: 1 byte for NaN
//!      and the infinities, 7 + 2 per base-10000 digit for a finite value)
//! ```
//!
//! Why this shape (README "nbtree rule 2"): the header is PostgreSQL's `IndexTupleData`
//! size (8 bytes, a TID first); the tag byte makes a tuple self-describing, so the btree
//! compares, truncates and returns keys without a tuple descriptor and NULLs need no
//! bitmap. Key order is column by column with [`Value::cmp_non_null`], NULLs last, then
//! the heap TID, so every entry is unique. A one-column `int4` entry is 8 + 5 = 13 bytes,
//! 16 after MAXALIGN: the same as PostgreSQL's.
//!
//! Decoding never panics: every read is bounds-checked and a malformed tuple is a
//! `Corrupt` detail string, which the page layer turns into a DATA_CORRUPTED error
//! naming the relation and block.

use std::cmp::Ordering;

use common::datetime::{Date, Interval, Timestamp, TimestampTz};
use common::ids::{BlockNumber, ItemPointer};
use common::numeric::Numeric;
use common::value::RegKind;
use common::{PgError, SqlState, Value};
use storage::page::maxalign;

use super::page::P_NONE;

/// Most key columns an index may have (PostgreSQL's `INDEX_MAX_KEYS`).
pub const INDEX_MAX_KEYS: usize = 32;

/// Size of the fixed tuple header (`sizeof(IndexTupleData)`).
pub const BT_TUPLE_HEADER_SIZE: usize = 8;

/// Size of a heap TID stored at the end of a pivot tuple.
const PIVOT_TID_SIZE: usize = 6;

const T_INFO_NATTS_MASK: u16 = 0x0fff;
const BT_IS_PIVOT: u16 = 0x1000;
const BT_PIVOT_TID: u16 = 0x2000;
const T_INFO_KNOWN_BITS: u16 = T_INFO_NATTS_MASK | BT_IS_PIVOT | BT_PIVOT_TID;

/// Largest leaf tuple, after MAXALIGN: a third of a page less room for the line pointers,
/// the special space and the heap TID a pivot made from it may carry (PostgreSQL's
/// `BTMaxItemSize` for 8 KiB pages, so the same rows are accepted). Three such tuples (a
/// high key and two items) always fit a page, so a split always finds a split point.
pub const BT_MAX_ITEM_SIZE: usize = {
    let usable = common::limits::BLCKSZ
        - maxalign(storage::page::SIZE_OF_PAGE_HEADER + 3 * storage::page::SIZE_OF_ITEM_ID)
        - maxalign(super::page::BT_SPECIAL_SIZE);
    (usable / 3) / 8 * 8 - maxalign(PIVOT_TID_SIZE)
};
const _: () = assert!(
    BT_MAX_ITEM_SIZE == 2704,
    "PostgreSQL's BTMaxItemSize for 8 KiB"
);
const _: () = assert!(INDEX_MAX_KEYS <= T_INFO_NATTS_MASK as usize);

const TAG_NULL: u8 = 0;
const TAG_BOOL: u8 = 1;
const TAG_INT2: u8 = 2;
const TAG_INT4: u8 = 3;
const TAG_INT8: u8 = 4;
const TAG_FLOAT4: u8 = 5;
const TAG_FLOAT8: u8 = 6;
const TAG_TEXT: u8 = 7;
const TAG_BPCHAR: u8 = 8;
const TAG_DATE: u8 = 9;
const TAG_TIMESTAMP: u8 = 10;
const TAG_TIMESTAMPTZ: u8 = 11;
const TAG_INTERVAL: u8 = 12;
const TAG_NUMERIC: u8 = 13;
const TAG_UUID: u8 = 14;
const TAG_BYTEA: u8 = 15;
const TAG_OID: u8 = 16;
/// A `reg*` OID: the tag, the kind (0 class, 1 type, 2 namespace), the OID.
const TAG_REG: u8 = 17;

/// A malformed tuple: the detail of a DATA_CORRUPTED error (the page layer adds where).
pub(crate) type Corrupt = String;

/// One key column as stored: a borrowed view, so comparisons allocate nothing.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Datum<'a> {
    Null,
    Bool(bool),
    Int2(i16),
    Int4(i32),
    Int8(i64),
    Float4(f32),
    Float8(f64),
    /// UTF-8 bytes, checked only when turned into a [`Value`].
    Text(&'a [u8]),
    Bpchar(&'a [u8]),
    Date(Date),
    Timestamp(Timestamp),
    TimestampTz(TimestampTz),
    Interval(Interval),
    /// A search key's numeric, borrowed from its [`Value`].
    Numeric(&'a Numeric),
    /// A stored numeric: its encoding, compared in place and checked only when turned
    /// into a [`Value`].
    NumericBytes(&'a [u8]),
    Uuid([u8; 16]),
    Bytea(&'a [u8]),
    Oid(u32),
    Reg(RegKind, u32),
}

fn reg_kind_byte(k: RegKind) -> u8 {
    match k {
        RegKind::Class => 0,
        RegKind::Type => 1,
        RegKind::Namespace => 2,
    }
}

impl<'a> Datum<'a> {
    pub(crate) fn of(v: &'a Value) -> Datum<'a> {
        match v {
            Value::Null => Datum::Null,
            Value::Bool(b) => Datum::Bool(*b),
            Value::Int2(x) => Datum::Int2(*x),
            Value::Int4(x) => Datum::Int4(*x),
            Value::Int8(x) => Datum::Int8(*x),
            Value::Float4(x) => Datum::Float4(*x),
            Value::Float8(x) => Datum::Float8(*x),
            Value::Text(s) => Datum::Text(s.as_bytes()),
            Value::Bpchar(s) => Datum::Bpchar(s.as_bytes()),
            Value::Date(d) => Datum::Date(*d),
            Value::Timestamp(t) => Datum::Timestamp(*t),
            Value::TimestampTz(t) => Datum::TimestampTz(*t),
            Value::Interval(i) => Datum::Interval(*i),
            Value::Numeric(n) => Datum::Numeric(n),
            Value::Uuid(u) => Datum::Uuid(*u),
            Value::Bytea(b) => Datum::Bytea(b),
            Value::Oid(o) => Datum::Oid(*o),
            Value::Reg(k, o) => Datum::Reg(*k, *o),
            // CREATE INDEX refuses array columns, and the binder gives array search
            // keys no index bounds.
            Value::Array(_) => Datum::Null,
        }
    }

    /// Numeric order between borrowed numerics (`numeric`'s btree order: dscale
    /// ignored, NaN greatest); `None` unless both are numerics.
    fn cmp_numeric(self, other: Datum<'_>) -> Option<Ordering> {
        Some(match (self, other) {
            (Datum::Numeric(a), Datum::Numeric(b)) => a.cmp(b),
            (Datum::Numeric(a), Datum::NumericBytes(b)) => a.cmp_to_encoded(b),
            (Datum::NumericBytes(a), Datum::Numeric(b)) => b.cmp_to_encoded(a).reverse(),
            (Datum::NumericBytes(a), Datum::NumericBytes(b)) => Numeric::cmp_encoded(a, b),
            _ => return None,
        })
    }

    /// The string as [`Value::as_str`] compares it: `char(n)` without trailing blanks.
    fn comparable_bytes(self) -> Option<&'a [u8]> {
        match self {
            Datum::Text(b) => Some(b),
            Datum::Bpchar(b) => {
                let end = b.iter().rposition(|c| *c != b' ').map_or(0, |i| i + 1);
                Some(&b[..end])
            }
            _ => None,
        }
    }

    /// The value, for everything but strings (which compare above without allocating);
    /// a string becomes an empty `Text`, which is all a comparison with a non-string
    /// looks at (its kind).
    fn as_value_for_cmp(self) -> Value {
        match self {
            Datum::Null => Value::Null,
            Datum::Bool(b) => Value::Bool(b),
            Datum::Int2(x) => Value::Int2(x),
            Datum::Int4(x) => Value::Int4(x),
            Datum::Int8(x) => Value::Int8(x),
            Datum::Float4(x) => Value::Float4(x),
            Datum::Float8(x) => Value::Float8(x),
            Datum::Date(d) => Value::Date(d),
            Datum::Timestamp(t) => Value::Timestamp(t),
            Datum::TimestampTz(t) => Value::TimestampTz(t),
            Datum::Interval(i) => Value::Interval(i),
            Datum::Uuid(u) => Value::Uuid(u),
            Datum::Oid(o) => Value::Oid(o),
            Datum::Reg(k, o) => Value::Reg(k, o),
            // Compared in place (`cmp`); this is what a comparison with another kind
            // looks at (its kind).
            Datum::Bytea(_) => Value::Bytea(Vec::new()),
            Datum::Text(_) | Datum::Bpchar(_) => Value::Text(String::new()),
            // Compared above without allocating; this is what a comparison with a
            // non-numeric looks at (its kind).
            Datum::Numeric(_) | Datum::NumericBytes(_) => Value::Numeric(Numeric::zero()),
        }
    }

    /// Key order (nbtree rule 2): [`Value::cmp_nulls_last`], exactly.
    pub(crate) fn cmp(self, other: Datum<'_>) -> Ordering {
        // The common keys first: integers of one type compare as themselves.
        match (self, other) {
            (Datum::Int4(a), Datum::Int4(b)) => return a.cmp(&b),
            (Datum::Int8(a), Datum::Int8(b)) => return a.cmp(&b),
            (Datum::Int2(a), Datum::Int2(b)) => return a.cmp(&b),
            _ => {}
        }
        if let Some(o) = self.cmp_numeric(other) {
            return o;
        }
        if let (Datum::Bytea(a), Datum::Bytea(b)) = (self, other) {
            return a.cmp(b);
        }
        match (self.comparable_bytes(), other.comparable_bytes()) {
            (Some(a), Some(b)) => a.cmp(b),
            _ => self
                .as_value_for_cmp()
                .cmp_nulls_last(&other.as_value_for_cmp()),
        }
    }

    fn to_value(self) -> Result<Value, Corrupt> {
        let text = |b: &[u8]| {
            std::str::from_utf8(b)
                .map(str::to_owned)
                .map_err(|e| format!("key column is not UTF-8: {e}"))
        };
        Ok(match self {
            Datum::Text(b) => Value::Text(text(b)?),
            Datum::Bpchar(b) => Value::Bpchar(text(b)?),
            Datum::Numeric(n) => Value::Numeric(n.clone()),
            Datum::Bytea(b) => Value::Bytea(b.to_vec()),
            Datum::NumericBytes(b) => match Numeric::decode(b) {
                Some((n, used)) if used == b.len() => Value::Numeric(n),
                _ => return Err("key column is not a valid numeric".to_string()),
            },
            other => other.as_value_for_cmp(),
        })
    }
}

/// Bytes `v` takes in a tuple, tag included.
fn column_size(v: &Value) -> usize {
    1 + match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Int2(_) => 2,
        Value::Int4(_) | Value::Float4(_) | Value::Date(_) => 4,
        Value::Int8(_) | Value::Float8(_) | Value::Timestamp(_) | Value::TimestampTz(_) => 8,
        Value::Interval(_) | Value::Uuid(_) => 16,
        Value::Oid(_) => 4,
        Value::Reg(..) => 5,
        Value::Array(_) => 0,
        Value::Text(s) | Value::Bpchar(s) => 2 + s.len(),
        Value::Bytea(b) => 2 + b.len(),
        Value::Numeric(n) => n.encoded_size(),
    }
}

/// Size of the leaf tuple for `key` (before MAXALIGN).
pub(crate) fn leaf_tuple_size(key: &[Value]) -> usize {
    BT_TUPLE_HEADER_SIZE + key.iter().map(column_size).sum::<usize>()
}

fn header(block: BlockNumber, offset: u16, info: u16) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&block.to_le_bytes());
    out.extend_from_slice(&offset.to_le_bytes());
    out.extend_from_slice(&info.to_le_bytes());
    out
}

/// Encode a leaf tuple. The caller has checked `key.len() <= INDEX_MAX_KEYS` and the size
/// against [`BT_MAX_ITEM_SIZE`] (so every string is shorter than 64 KiB).
pub(crate) fn encode_leaf(key: &[Value], tid: ItemPointer) -> Vec<u8> {
    assert!(key.len() <= INDEX_MAX_KEYS, "{} key columns", key.len());
    let mut out = header(tid.block, tid.offset, key.len() as u16);
    for v in key {
        match v {
            Value::Null | Value::Array(_) => out.push(TAG_NULL),
            Value::Oid(o) => {
                out.push(TAG_OID);
                out.extend_from_slice(&o.to_le_bytes());
            }
            Value::Reg(k, o) => {
                out.extend_from_slice(&[TAG_REG, reg_kind_byte(*k)]);
                out.extend_from_slice(&o.to_le_bytes());
            }
            Value::Bool(b) => out.extend_from_slice(&[TAG_BOOL, *b as u8]),
            Value::Int2(x) => {
                out.push(TAG_INT2);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Int4(x) => {
                out.push(TAG_INT4);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Int8(x) => {
                out.push(TAG_INT8);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Float4(x) => {
                out.push(TAG_FLOAT4);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Float8(x) => {
                out.push(TAG_FLOAT8);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Date(d) => {
                out.push(TAG_DATE);
                out.extend_from_slice(&d.0.to_le_bytes());
            }
            Value::Timestamp(t) => {
                out.push(TAG_TIMESTAMP);
                out.extend_from_slice(&t.0.to_le_bytes());
            }
            Value::TimestampTz(t) => {
                out.push(TAG_TIMESTAMPTZ);
                out.extend_from_slice(&t.0.to_le_bytes());
            }
            Value::Interval(i) => {
                out.push(TAG_INTERVAL);
                out.extend_from_slice(&i.micros.to_le_bytes());
                out.extend_from_slice(&i.days.to_le_bytes());
                out.extend_from_slice(&i.months.to_le_bytes());
            }
            Value::Numeric(n) => {
                out.push(TAG_NUMERIC);
                n.encode(&mut out);
            }
            Value::Uuid(u) => {
                out.push(TAG_UUID);
                out.extend_from_slice(u);
            }
            Value::Bytea(b) => {
                let len = u16::try_from(b.len()).expect("size checked against BT_MAX_ITEM_SIZE");
                out.push(TAG_BYTEA);
                out.extend_from_slice(&len.to_le_bytes());
                out.extend_from_slice(b);
            }
            Value::Text(s) | Value::Bpchar(s) => {
                let len = u16::try_from(s.len()).expect("size checked against BT_MAX_ITEM_SIZE");
                out.push(if matches!(v, Value::Text(_)) {
                    TAG_TEXT
                } else {
                    TAG_BPCHAR
                });
                out.extend_from_slice(&len.to_le_bytes());
                out.extend_from_slice(s.as_bytes());
            }
        }
    }
    out
}

/// The minus-infinity downlink: the first data item of every internal page (natts 0, no
/// TID), which sorts before every key.
pub(crate) fn minus_infinity(child: BlockNumber) -> Vec<u8> {
    header(child, 0, BT_IS_PIVOT)
}

/// A copy of pivot `pivot` pointing at `child` (a downlink), or at nothing (`P_NONE`: a
/// high key).
pub(crate) fn with_downlink(pivot: &TupleRef<'_>, child: BlockNumber) -> Vec<u8> {
    let mut out = pivot.bytes.to_vec();
    out[0..4].copy_from_slice(&child.to_le_bytes());
    out[4..6].copy_from_slice(&0u16.to_le_bytes());
    out
}

/// The high key for a leaf split between `lastleft` and `firstright` (suffix truncation,
/// PostgreSQL's `_bt_truncate`): `firstright`'s columns up to and including the first one
/// that differs from `lastleft`; if none differs, all columns and `firstright`'s heap TID.
/// So `lastleft < high key <= firstright`, and the high key is as short as that allows.
pub(crate) fn leaf_pivot(
    lastleft: &TupleRef<'_>,
    firstright: &TupleRef<'_>,
) -> Result<Vec<u8>, Corrupt> {
    let mut keep = 0;
    let mut left = lastleft.columns();
    let mut differs = false;
    for r in firstright.columns() {
        let r = r?;
        keep += 1;
        let l = left.next().transpose()?.unwrap_or(Datum::Null);
        if l.cmp(r) != Ordering::Equal {
            differs = true;
            break;
        }
    }
    let end = firstright.column_prefix_end(keep)?;
    let mut info = keep as u16 | BT_IS_PIVOT;
    if !differs {
        info |= BT_PIVOT_TID;
    }
    let mut out = header(P_NONE, 0, info);
    out.extend_from_slice(&firstright.bytes[BT_TUPLE_HEADER_SIZE..end]);
    if !differs {
        let tid = firstright
            .heap_tid()
            .ok_or_else(|| "leaf tuple without a heap TID".to_string())?;
        out.extend_from_slice(&tid.block.to_le_bytes());
        out.extend_from_slice(&tid.offset.to_le_bytes());
    }
    Ok(out)
}

/// A validated view of one index tuple.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TupleRef<'a> {
    bytes: &'a [u8],
    info: u16,
}

impl<'a> TupleRef<'a> {
    /// Check the header; the columns are checked as they are read.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<TupleRef<'a>, Corrupt> {
        if bytes.len() < BT_TUPLE_HEADER_SIZE {
            return Err(format!(
                "index tuple of {} bytes is shorter than its header",
                bytes.len()
            ));
        }
        let info = u16::from_le_bytes([bytes[6], bytes[7]]);
        if info & !T_INFO_KNOWN_BITS != 0 {
            return Err(format!("index tuple has unknown t_info bits {info:#06x}"));
        }
        if (info & T_INFO_NATTS_MASK) as usize > INDEX_MAX_KEYS {
            return Err(format!(
                "index tuple has {} key columns",
                info & T_INFO_NATTS_MASK
            ));
        }
        if info & BT_PIVOT_TID != 0
            && (info & BT_IS_PIVOT == 0 || bytes.len() < BT_TUPLE_HEADER_SIZE + PIVOT_TID_SIZE)
        {
            return Err(format!(
                "index tuple has a misplaced pivot heap TID (t_info {info:#06x})"
            ));
        }
        Ok(TupleRef { bytes, info })
    }

    pub(crate) fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub(crate) fn natts(&self) -> usize {
        (self.info & T_INFO_NATTS_MASK) as usize
    }

    pub(crate) fn is_pivot(&self) -> bool {
        self.info & BT_IS_PIVOT != 0
    }

    /// The minus-infinity item of an internal page.
    pub(crate) fn is_minus_infinity(&self) -> bool {
        self.is_pivot() && self.natts() == 0 && self.info & BT_PIVOT_TID == 0
    }

    fn t_tid(&self) -> ItemPointer {
        let b = self.bytes;
        ItemPointer {
            block: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            offset: u16::from_le_bytes([b[4], b[5]]),
        }
    }

    /// The heap TID: a leaf tuple's own, or the one a pivot kept; `None` for a pivot whose
    /// TID was truncated away (minus infinity).
    pub(crate) fn heap_tid(&self) -> Option<ItemPointer> {
        if !self.is_pivot() {
            return Some(self.t_tid());
        }
        if self.info & BT_PIVOT_TID == 0 {
            return None;
        }
        let b = &self.bytes[self.bytes.len() - PIVOT_TID_SIZE..];
        Some(ItemPointer {
            block: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            offset: u16::from_le_bytes([b[4], b[5]]),
        })
    }

    /// The child block of a downlink (meaningless for a leaf tuple).
    pub(crate) fn downlink(&self) -> BlockNumber {
        self.t_tid().block
    }

    fn columns_end(&self) -> usize {
        if self.info & BT_PIVOT_TID != 0 {
            self.bytes.len() - PIVOT_TID_SIZE
        } else {
            self.bytes.len()
        }
    }

    /// The key columns, in order; exactly `natts` of them or an error.
    pub(crate) fn columns(&self) -> Columns<'a> {
        Columns {
            bytes: &self.bytes[..self.columns_end()],
            pos: BT_TUPLE_HEADER_SIZE,
            left: self.natts(),
        }
    }

    /// Byte offset just past the first `n` columns.
    fn column_prefix_end(&self, n: usize) -> Result<usize, Corrupt> {
        let mut cols = self.columns();
        for _ in 0..n {
            cols.next().transpose()?;
        }
        Ok(cols.pos)
    }

    /// The key as values, checking that the columns fill the tuple exactly.
    pub(crate) fn values(&self) -> Result<Vec<Value>, Corrupt> {
        let mut cols = self.columns();
        let mut out = Vec::with_capacity(self.natts());
        for d in cols.by_ref() {
            out.push(d?.to_value()?);
        }
        if cols.pos != cols.bytes.len() {
            return Err(format!(
                "index tuple has {} bytes left over after its {} key columns",
                cols.bytes.len() - cols.pos,
                self.natts()
            ));
        }
        Ok(out)
    }
}

/// Iterator over a tuple's key columns (bounds-checked).
pub(crate) struct Columns<'a> {
    bytes: &'a [u8],
    pos: usize,
    left: usize,
}

impl<'a> Columns<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Corrupt> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!(
                "index tuple key column at byte {} runs past the end ({} bytes)",
                self.pos,
                self.bytes.len()
            ));
        };
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Corrupt> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn read(&mut self) -> Result<Datum<'a>, Corrupt> {
        let tag = self.array::<1>()?[0];
        Ok(match tag {
            TAG_NULL => Datum::Null,
            TAG_BOOL => match self.array::<1>()?[0] {
                0 => Datum::Bool(false),
                1 => Datum::Bool(true),
                b => return Err(format!("index tuple has a bool of {b}")),
            },
            TAG_INT2 => Datum::Int2(i16::from_le_bytes(self.array()?)),
            TAG_INT4 => Datum::Int4(i32::from_le_bytes(self.array()?)),
            TAG_INT8 => Datum::Int8(i64::from_le_bytes(self.array()?)),
            TAG_FLOAT4 => Datum::Float4(f32::from_le_bytes(self.array()?)),
            TAG_FLOAT8 => Datum::Float8(f64::from_le_bytes(self.array()?)),
            TAG_DATE => Datum::Date(Date(i32::from_le_bytes(self.array()?))),
            TAG_TIMESTAMP => Datum::Timestamp(Timestamp(i64::from_le_bytes(self.array()?))),
            TAG_TIMESTAMPTZ => Datum::TimestampTz(TimestampTz(i64::from_le_bytes(self.array()?))),
            TAG_INTERVAL => Datum::Interval(Interval {
                micros: i64::from_le_bytes(self.array()?),
                days: i32::from_le_bytes(self.array()?),
                months: i32::from_le_bytes(self.array()?),
            }),
            TAG_UUID => Datum::Uuid(self.array()?),
            TAG_OID => Datum::Oid(u32::from_le_bytes(self.array()?)),
            TAG_REG => {
                let kind = match self.array::<1>()?[0] {
                    0 => RegKind::Class,
                    1 => RegKind::Type,
                    2 => RegKind::Namespace,
                    k => return Err(format!("index tuple has a reg kind of {k}")),
                };
                Datum::Reg(kind, u32::from_le_bytes(self.array()?))
            }
            TAG_BYTEA => {
                let len = u16::from_le_bytes(self.array()?) as usize;
                Datum::Bytea(self.take(len)?)
            }
            TAG_NUMERIC => {
                let rest = &self.bytes[self.pos..];
                let len = Numeric::encoded_len(rest)
                    .ok_or_else(|| format!("index tuple has a bad numeric at byte {}", self.pos))?;
                Datum::NumericBytes(self.take(len)?)
            }
            TAG_TEXT | TAG_BPCHAR => {
                let len = u16::from_le_bytes(self.array()?) as usize;
                let s = self.take(len)?;
                if tag == TAG_TEXT {
                    Datum::Text(s)
                } else {
                    Datum::Bpchar(s)
                }
            }
            t => return Err(format!("index tuple has unknown column tag {t}")),
        })
    }
}

impl<'a> Iterator for Columns<'a> {
    type Item = Result<Datum<'a>, Corrupt>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let d = self.read();
        if d.is_err() {
            self.left = 0;
        }
        Some(d)
    }
}

/// How each key column of an index orders (PostgreSQL's `pg_index.indoption`): bit `i`
/// of `desc` makes column `i` descending, bit `i` of `nulls_first` puts its NULLs before
/// its values. The default is every column ascending with NULLs last (nbtree rule 2).
/// NULLs sort by `nulls_first` alone, so `DESC` (NULLs first) reverses `ASC` (NULLs last)
/// exactly and a backward scan of one reads the other's order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct KeyOrder {
    pub desc: u32,
    pub nulls_first: u32,
}

impl KeyOrder {
    /// Column `i`'s (descending, NULLs first).
    pub fn column(self, i: usize) -> (bool, bool) {
        let bit = |m: u32| i < 32 && m & (1 << i) != 0;
        (bit(self.desc), bit(self.nulls_first))
    }

    /// Set column `i`'s order.
    pub fn set(&mut self, i: usize, desc: bool, nulls_first: bool) {
        debug_assert!(i < 32, "INDEX_MAX_KEYS is 32");
        let bit = 1u32 << (i & 31);
        self.desc = if desc {
            self.desc | bit
        } else {
            self.desc & !bit
        };
        self.nulls_first = if nulls_first {
            self.nulls_first | bit
        } else {
            self.nulls_first & !bit
        };
    }

    /// Compare values of key column `i` in the index's order.
    #[inline]
    pub(crate) fn cmp(self, i: usize, a: Datum<'_>, b: Datum<'_>) -> Ordering {
        if self == KeyOrder::default() {
            return a.cmp(b);
        }
        let (desc, nulls_first) = self.column(i);
        match (matches!(a, Datum::Null), matches!(b, Datum::Null)) {
            (true, true) => Ordering::Equal,
            (true, false) if nulls_first => Ordering::Less,
            (true, false) => Ordering::Greater,
            (false, true) if nulls_first => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) if desc => a.cmp(b).reverse(),
            (false, false) => a.cmp(b),
        }
    }
}

/// Where a search lands (nbtree rule 2). A search key never compares equal to a tuple,
/// except `Exact` against the very same entry, so "the first tuple greater than or equal
/// to the key" is a single well-defined position.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ScanKey<'k> {
    /// Before every tuple (the start of a forward scan without a lower bound).
    MinusInfinity,
    /// After every tuple.
    PlusInfinity,
    /// Just before (`after == false`) or just after every tuple whose leading columns
    /// equal `values`.
    Prefix {
        values: &'k [Value],
        after: bool,
        order: KeyOrder,
    },
    /// The position of one entry: all key columns and the heap TID (insert, delete).
    Exact {
        values: &'k [Value],
        tid: ItemPointer,
        order: KeyOrder,
    },
}

/// Compare a search key with a tuple (PostgreSQL's `_bt_compare`). A pivot's truncated
/// columns and TID are minus infinity. A `Prefix` key that equals every column a pivot
/// kept, where the pivot kept no TID, sorts after the pivot: no real tuple equals its
/// minus-infinity remainder, so the search need not visit the page to its left.
pub(crate) fn compare(sk: &ScanKey<'_>, tup: &TupleRef<'_>) -> Result<Ordering, Corrupt> {
    let (values, tid, order) = match *sk {
        ScanKey::MinusInfinity => return Ok(Ordering::Less),
        ScanKey::PlusInfinity => return Ok(Ordering::Greater),
        ScanKey::Prefix { values, order, .. } => (values, None, order),
        ScanKey::Exact { values, tid, order } => (values, Some(tid), order),
    };
    let mut cols = tup.columns();
    let plain = order == KeyOrder::default();
    for (i, v) in values.iter().enumerate() {
        let Some(d) = cols.next() else {
            // The tuple is a truncated pivot: its remaining columns are minus infinity.
            return Ok(Ordering::Greater);
        };
        let o = if plain {
            Datum::of(v).cmp(d?)
        } else {
            order.cmp(i, Datum::of(v), d?)
        };
        if o != Ordering::Equal {
            return Ok(o);
        }
    }
    let tuple_has_more = values.len() < tup.natts();
    Ok(match (sk, tid) {
        (_, Some(tid)) => match tup.heap_tid() {
            _ if tuple_has_more => Ordering::Less,
            Some(t) => tid.cmp(&t),
            None => Ordering::Greater,
        },
        (ScanKey::Prefix { after, .. }, None) => {
            if tuple_has_more || tup.heap_tid().is_some() {
                if *after {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            } else {
                Ordering::Greater
            }
        }
        _ => unreachable!("infinities returned above"),
    })
}

/// Compare a tuple's leading columns with a scan bound. `None` when the tuple is a pivot
/// truncated before the bound's last column and equal on every column it kept: then
/// entries at or after it may still be equal to the bound, or above or below it.
pub(crate) fn compare_bound(
    tup: &TupleRef<'_>,
    bound: &[Value],
    order: KeyOrder,
) -> Result<Option<Ordering>, Corrupt> {
    let mut cols = tup.columns();
    let plain = order == KeyOrder::default();
    for (i, v) in bound.iter().enumerate() {
        let Some(d) = cols.next() else {
            return Ok(None);
        };
        let o = if plain {
            d?.cmp(Datum::of(v))
        } else {
            order.cmp(i, d?, Datum::of(v))
        };
        if o != Ordering::Equal {
            return Ok(Some(o));
        }
    }
    Ok(Some(Ordering::Equal))
}

/// Total order of two stored tuples (missing columns and TIDs are minus infinity); for
/// the build's sort and the invariant checker.
pub(crate) fn compare_tuples(
    a: &TupleRef<'_>,
    b: &TupleRef<'_>,
    order: KeyOrder,
) -> Result<Ordering, Corrupt> {
    let mut ca = a.columns();
    let mut cb = b.columns();
    let mut i = 0;
    loop {
        match (ca.next().transpose()?, cb.next().transpose()?) {
            (Some(x), Some(y)) => {
                let o = order.cmp(i, x, y);
                i += 1;
                if o != Ordering::Equal {
                    return Ok(o);
                }
            }
            (Some(_), None) => return Ok(Ordering::Greater),
            (None, Some(_)) => return Ok(Ordering::Less),
            (None, None) => break,
        }
    }
    Ok(match (a.heap_tid(), b.heap_tid()) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Greater,
        (None, Some(_)) => Ordering::Less,
        (None, None) => Ordering::Equal,
    })
}

/// The error for an entry too large for a btree page, worded as PostgreSQL's. `size` is
/// the MAXALIGNed tuple size; `index` names the index (or its relation path).
pub fn index_row_too_big(size: usize, index: &str) -> PgError {
    PgError::new(
        SqlState::PROGRAM_LIMIT_EXCEEDED,
        format!(
            "index row size {size} exceeds btree version 4 maximum {BT_MAX_ITEM_SIZE} for index \"{index}\""
        ),
    )
    .with_hint(
        "Values larger than 1/3 of a buffer page cannot be indexed.\n\
         Consider a function index of an MD5 hash of the value, or use full text indexing.",
    )
}

/// The tuple size PostgreSQL reports and limits: MAXALIGNed.
pub(crate) fn aligned_size(len: usize) -> usize {
    maxalign(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tid(block: u32, offset: u16) -> ItemPointer {
        ItemPointer { block, offset }
    }

    fn sample_values() -> Vec<Value> {
        vec![
            Value::Null,
            Value::Bool(false),
            Value::Bool(true),
            Value::Int2(-3),
            Value::Int4(-3),
            Value::Int8(7),
            Value::Int4(i32::MAX),
            Value::Float4(1.5),
            Value::Float8(-0.0),
            Value::Float8(f64::NAN),
            Value::Float8(f64::INFINITY),
            Value::Text(String::new()),
            Value::Text("a".into()),
            Value::Bpchar("a  ".into()),
            Value::Text("a ".into()),
            Value::Text("é".into()),
            Value::Bpchar("b".into()),
        ]
    }

    #[test]
    fn round_trip_every_type() {
        let key = sample_values();
        let bytes = encode_leaf(&key, tid(9, 3));
        assert_eq!(bytes.len(), leaf_tuple_size(&key));
        let t = TupleRef::parse(&bytes).expect("parse");
        assert!(!t.is_pivot());
        assert_eq!(t.natts(), key.len());
        assert_eq!(t.heap_tid(), Some(tid(9, 3)));
        let back = t.values().expect("values");
        assert_eq!(back.len(), key.len());
        for (a, b) in key.iter().zip(&back) {
            match (a, b) {
                (Value::Float8(x), Value::Float8(y)) if x.is_nan() => assert!(y.is_nan()),
                _ => assert_eq!(a, b),
            }
        }
        // One int4 column: 8 + 1 + 4 bytes, 16 after MAXALIGN, as PostgreSQL's.
        assert_eq!(
            aligned_size(encode_leaf(&[Value::Int4(1)], tid(0, 1)).len()),
            16
        );
    }

    #[test]
    fn datum_order_is_value_order() {
        let vals = sample_values();
        for a in &vals {
            for b in &vals {
                assert_eq!(
                    Datum::of(a).cmp(Datum::of(b)),
                    a.cmp_nulls_last(b),
                    "{a:?} vs {b:?}"
                );
            }
        }
    }

    #[test]
    fn pivots_truncate_to_the_first_differing_column() {
        let l = encode_leaf(&[Value::Int4(1), Value::Text("zzz".into())], tid(1, 1));
        let r = encode_leaf(&[Value::Int4(2), Value::Text("aaa".into())], tid(0, 9));
        let (l, r) = (TupleRef::parse(&l).unwrap(), TupleRef::parse(&r).unwrap());
        let p = leaf_pivot(&l, &r).expect("pivot");
        let p = TupleRef::parse(&p).expect("parse");
        assert!(p.is_pivot());
        assert_eq!(p.natts(), 1);
        assert_eq!(p.heap_tid(), None);
        assert_eq!(p.values().unwrap(), vec![Value::Int4(2)]);
        assert_eq!(
            compare_tuples(&l, &p, KeyOrder::default()).unwrap(),
            Ordering::Less
        );
        assert_eq!(
            compare_tuples(&p, &r, KeyOrder::default()).unwrap(),
            Ordering::Less
        );

        // Equal keys keep every column and firstright's TID.
        let l2 = encode_leaf(&[Value::Int4(5)], tid(3, 1));
        let r2 = encode_leaf(&[Value::Int4(5)], tid(3, 2));
        let (l2, r2) = (TupleRef::parse(&l2).unwrap(), TupleRef::parse(&r2).unwrap());
        let p2 = leaf_pivot(&l2, &r2).unwrap();
        let p2 = TupleRef::parse(&p2).unwrap();
        assert_eq!(p2.heap_tid(), Some(tid(3, 2)));
        assert_eq!(
            compare_tuples(&l2, &p2, KeyOrder::default()).unwrap(),
            Ordering::Less
        );
        assert_eq!(
            compare_tuples(&p2, &r2, KeyOrder::default()).unwrap(),
            Ordering::Equal
        );
        let down = with_downlink(&p2, 77);
        let down = TupleRef::parse(&down).unwrap();
        assert_eq!(down.downlink(), 77);
        assert_eq!(down.heap_tid(), Some(tid(3, 2)));
        let inf = minus_infinity(4);
        let inf = TupleRef::parse(&inf).unwrap();
        assert!(inf.is_minus_infinity());
        assert_eq!(inf.downlink(), 4);
    }

    #[test]
    fn search_keys_never_equal_a_tuple() {
        let k5 = [Value::Int4(5)];
        let t = encode_leaf(&[Value::Int4(5), Value::Int4(1)], tid(2, 2));
        let t = TupleRef::parse(&t).unwrap();
        let before = ScanKey::Prefix {
            values: &k5,
            after: false,
            order: KeyOrder::default(),
        };
        let after = ScanKey::Prefix {
            values: &k5,
            after: true,
            order: KeyOrder::default(),
        };
        assert_eq!(compare(&before, &t).unwrap(), Ordering::Less);
        assert_eq!(compare(&after, &t).unwrap(), Ordering::Greater);
        let full = [Value::Int4(5), Value::Int4(1)];
        for (t2, o) in [
            (tid(2, 1), Ordering::Less),
            (tid(2, 2), Ordering::Equal),
            (tid(2, 3), Ordering::Greater),
        ] {
            let exact = ScanKey::Exact {
                values: &full,
                tid: t2,
                order: KeyOrder::default(),
            };
            assert_eq!(compare(&exact, &t).unwrap(), o);
        }
        // A pivot truncated to (5): everything with 5 first sorts after it.
        let p = encode_leaf(&[Value::Int4(5)], tid(0, 0));
        let p = TupleRef::parse(&p).unwrap();
        let l = encode_leaf(&[Value::Int4(4)], tid(0, 1));
        let l = TupleRef::parse(&l).unwrap();
        let pivot = leaf_pivot(&l, &p).unwrap();
        let pivot = TupleRef::parse(&pivot).unwrap();
        assert_eq!(compare(&before, &pivot).unwrap(), Ordering::Greater);
        assert_eq!(compare(&after, &pivot).unwrap(), Ordering::Greater);
        let exact = ScanKey::Exact {
            values: &full,
            tid: tid(0, 0),
            order: KeyOrder::default(),
        };
        assert_eq!(compare(&exact, &pivot).unwrap(), Ordering::Greater);
        let k4 = [Value::Int4(4), Value::Int4(100)];
        let p4 = ScanKey::Prefix {
            values: &k4,
            after: true,
            order: KeyOrder::default(),
        };
        assert_eq!(compare(&p4, &pivot).unwrap(), Ordering::Less);
        assert_eq!(
            compare_bound(&pivot, &full, KeyOrder::default()).unwrap(),
            None
        );
        assert_eq!(
            compare_bound(&pivot, &k5, KeyOrder::default()).unwrap(),
            Some(Ordering::Equal)
        );
        assert_eq!(
            compare_bound(&t, &[Value::Int4(6)], KeyOrder::default()).unwrap(),
            Some(Ordering::Less)
        );
    }

    #[test]
    fn malformed_tuples_are_errors() {
        let good = encode_leaf(&[Value::Text("hello".into()), Value::Int8(3)], tid(1, 2));
        for len in 0..good.len() {
            let r = TupleRef::parse(&good[..len]).and_then(|t| t.values());
            assert!(r.is_err(), "truncated to {len}");
        }
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for at in 0..good.len() {
            for _ in 0..16 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let mut bad = good.clone();
                bad[at] = seed as u8;
                // Anything goes but a panic.
                let _ = TupleRef::parse(&bad).and_then(|t| {
                    t.values()?;
                    let k = [Value::Text("h".into())];
                    compare(
                        &ScanKey::Prefix {
                            values: &k,
                            after: false,
                            order: KeyOrder::default(),
                        },
                        &t,
                    )?;
                    compare_tuples(&t, &t, KeyOrder::default())
                });
            }
        }
        let mut long = good.clone();
        long.push(0);
        assert!(TupleRef::parse(&long).unwrap().values().is_err());
    }

    #[test]
    fn row_too_big_matches_postgres() {
        let e = index_row_too_big(3016, "t_a_idx");
        assert_eq!(e.code, SqlState::PROGRAM_LIMIT_EXCEEDED);
        assert_eq!(
            e.message,
            "index row size 3016 exceeds btree version 4 maximum 2704 for index \"t_a_idx\""
        );
    }
}
