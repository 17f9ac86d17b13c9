//! The heap tuple format: a row as bytes on a heap page.
//!
//! ```text
//!  0         8         16      20             24              26           28         30       31
//!  +---------+---------+-------+--------------+---------------+------------+----------+--------+
//!  | t_xmin  | t_xmax  | t_cid | t_ctid.block | t_ctid.offset | t_infomask | t_natts  | t_hoff |
//!  |  u64    |  u64    |  u32  |     u32      |      u16      |    u16     |   u16    |   u8   |
//!  +---------+---------+-------+--------------+---------------+------------+----------+--------+
//!  | null bitmap: ceil(t_natts / 8) bytes, only if t_infomask & HEAP_HASNULL;          |
//!  |   bit i (byte i / 8, bit i % 8) set = column i is NOT NULL (PostgreSQL's sense)   |
//!  +-----------------------------------------------------------------------------------+  <- t_hoff
//!  | column data, non-NULL columns in order, no padding:                                |
//!  |   bool 1 byte (0 or 1); int2 2; int4 4; int8 8; float4 4; float8 8 (little-endian) |
//!  |   text / varchar / bpchar: u32 length, then that many UTF-8 bytes                  |
//!  |   (bytea, arrays alike; the length word's top two bits: compressed, out of line)  |
//!  +-----------------------------------------------------------------------------------+
//! ```
//!
//! MVCC fields (`crate::visibility` reads them): `t_xmin` inserted the tuple, `t_xmax`
//! deleted, updated or row-locked it (`HEAP_XMAX_LOCK_ONLY`, with the lock's strength in
//! `HEAP_XMAX_KEYSHR_LOCK`, `HEAP_XMAX_SHR_LOCK`, `HEAP_XMAX_EXCL_LOCK` and
//! `HEAP_KEYS_UPDATED`; several transactions sharing a row lock are one multixact,
//! `HEAP_XMAX_IS_MULTI`; FOR KEY SHARE lockers of a version a transaction updated
//! without changing its key are kept aside, `HEAP_XMAX_LOCKERS_ASIDE`), `t_cid` is the command id of
//! the insert or the delete within their transaction (a combo id when one transaction did
//! both, `HEAP_COMBOCID`), and `t_ctid` points at the tuple itself or at its newer
//! version (`HEAP_UPDATED` on the newer one).
//!
//! Decisions (README "tuple rules"):
//! - Transaction ids are 64 bits, so they never wrap and tuples never need freezing for
//!   correctness (txn rule 1).
//! - No alignment padding between columns: values are read with `from_le_bytes`, which
//!   does not care, and rows are smaller. (PostgreSQL aligns so it can point into the page.)
//! - `char(n)` is stored blank-padded, exactly as its [`Value::Bpchar`] holds it.
//! - A tuple may have fewer columns than the table (`t_natts < types.len()`): the missing
//!   trailing columns read as NULL, which is what `ALTER TABLE ADD COLUMN` needs.
//! - [`encode`] writes `t_xmin` = [`BOOTSTRAP_XID`] and `t_xmax` = [`INVALID_XID`];
//!   `heapam` stamps the real ids when it places the tuple.
//!
//! Decoding never panics: bytes that do not fit the format are an error with
//! [`SqlState::DATA_CORRUPTED`]; callers add where the tuple came from.

use std::borrow::Cow;
use std::sync::Arc;

use common::array::{Array, Dim};
use common::datetime::{Date, Interval, Timestamp, TimestampTz};
use common::ids::{BlockNumber, ItemPointer};
use common::limits::MAX_COLUMNS;
use common::numeric::Numeric;
use common::{DataType, PgError, PgResult, RelId, SqlState, Value};
use storage::bufmgr::BufferPool;
use storage::page::MAX_ITEM_SIZE;
use storage::smgr::relpath;

pub use txn::{BOOTSTRAP_XID, Cid, INVALID_XID, Xid};

/// Size of the fixed part of the header (`SizeofHeapTupleHeader`).
pub const HEAP_TUPLE_HEADER_SIZE: usize = 31;

/// Largest heap tuple: what fits on an empty heap page (`MaxHeapTupleSize`).
pub const MAX_HEAP_TUPLE_SIZE: usize = MAX_ITEM_SIZE;

/// `t_infomask`: the tuple has a null bitmap (some column is NULL).
pub const HEAP_HASNULL: u16 = 0x0001;
/// `t_infomask`: the tuple has variable-length columns.
pub const HEAP_HASVARWIDTH: u16 = 0x0002;
/// `t_infomask`: some column's value is stored out of line, in the table's TOAST
/// relation (access rule 12): deleting the tuple's row deletes its chunks.
pub const HEAP_HASEXTERNAL: u16 = 0x0004;
/// `t_infomask`: `t_xmax` holds a FOR SHARE lock.
pub const HEAP_XMAX_SHR_LOCK: u16 = 0x0010;
/// `t_infomask`: `t_cid` is a combo command id (inserted and deleted by one transaction).
pub const HEAP_COMBOCID: u16 = 0x0020;
/// `t_infomask`: `t_xmax` holds a FOR NO KEY UPDATE lock, or with `HEAP_KEYS_UPDATED`
/// a FOR UPDATE lock.
pub const HEAP_XMAX_EXCL_LOCK: u16 = 0x0040;
/// `t_infomask`: `t_xmax` only locked the row; it did not delete or update it.
pub const HEAP_XMAX_LOCK_ONLY: u16 = 0x0080;
/// `t_infomask`: `t_xmax` holds a FOR KEY SHARE lock.
pub const HEAP_XMAX_KEYSHR_LOCK: u16 = 0x0100;
/// `t_infomask`: `t_xmax` is an updater (not `HEAP_XMAX_LOCK_ONLY`) and other
/// transactions hold FOR KEY SHARE locks on the version alongside it, which the
/// transaction manager keeps in memory by the version's address (txn rule 8).
pub const HEAP_XMAX_LOCKERS_ASIDE: u16 = 0x0200;
/// `t_infomask`: `t_xmax` is a multixact, transactions sharing a row lock (always
/// with `HEAP_XMAX_LOCK_ONLY`; txn rule 8).
pub const HEAP_XMAX_IS_MULTI: u16 = 0x1000;
/// `t_infomask`: the tuple is a newer version made by UPDATE.
pub const HEAP_UPDATED: u16 = 0x2000;
/// `t_infomask`: `t_xmax` deleted the tuple, changed a key column of it, or holds a
/// FOR UPDATE lock: it conflicts with FOR KEY SHARE (PostgreSQL's `HEAP_KEYS_UPDATED`).
pub const HEAP_KEYS_UPDATED: u16 = 0x4000;
/// `t_infomask`: `t_xmax` updated the tuple and its newer version is a heap-only tuple
/// on the same page, reached through `t_ctid` (a HOT chain, access rule 11).
/// PostgreSQL keeps this bit (0x4000) and the next in `t_infomask2`; Myriad's one mask
/// uses bits PostgreSQL gives to hints it does not have.
pub const HEAP_HOT_UPDATED: u16 = 0x0800;
/// `t_infomask`: no index entry points at the tuple: it is a newer version in a HOT
/// chain, found from the chain's root (access rule 11). Where the tuple lives, not who
/// changed it: [`set_mvcc`] keeps it.
pub const HEAP_ONLY_TUPLE: u16 = 0x8000;
/// Bits this version understands.
const HEAP_KNOWN_BITS: u16 = HEAP_HASNULL
    | HEAP_HASVARWIDTH
    | HEAP_HASEXTERNAL
    | HEAP_XMAX_SHR_LOCK
    | HEAP_COMBOCID
    | HEAP_XMAX_EXCL_LOCK
    | HEAP_XMAX_LOCK_ONLY
    | HEAP_XMAX_KEYSHR_LOCK
    | HEAP_XMAX_LOCKERS_ASIDE
    | HEAP_XMAX_IS_MULTI
    | HEAP_UPDATED
    | HEAP_KEYS_UPDATED
    | HEAP_HOT_UPDATED
    | HEAP_ONLY_TUPLE;

/// Block number of an item pointer that points nowhere (`InvalidBlockNumber`).
pub const INVALID_BLOCK: BlockNumber = BlockNumber::MAX;

const T_XMIN: usize = 0;
const T_XMAX: usize = 8;
const T_CID: usize = 16;
const T_CTID_BLOCK: usize = 20;
const T_CTID_OFFSET: usize = 24;
const T_INFOMASK: usize = 26;
const T_NATTS: usize = 28;
const T_HOFF: usize = 30;

const _: () = assert!(T_HOFF + 1 == HEAP_TUPLE_HEADER_SIZE);
const _: () = assert!(
    HEAP_TUPLE_HEADER_SIZE + MAX_COLUMNS.div_ceil(8) <= u8::MAX as usize,
    "t_hoff is a u8"
);

/// The decoded fixed header of a heap tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TupleHeader {
    pub xmin: Xid,
    pub xmax: Xid,
    /// Command id of the insert or delete (or a combo id: `HEAP_COMBOCID`).
    pub cid: Cid,
    /// The tuple's own item pointer, or its newer version's (set by `heapam`).
    pub ctid: ItemPointer,
    pub infomask: u16,
    pub natts: u16,
    pub hoff: u8,
}

fn corrupt(what: impl std::fmt::Display) -> PgError {
    PgError::new(
        SqlState::DATA_CORRUPTED,
        format!("invalid heap tuple: {what}"),
    )
}

/// A bounds-checked reader over tuple bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> PgResult<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.bytes.len());
        let Some(end) = end else {
            return Err(corrupt(format!(
                "{what} at byte {} runs past the end ({} bytes)",
                self.pos,
                self.bytes.len()
            )));
        };
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> PgResult<[u8; N]> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
}

/// Read a tuple's fixed header, checking it against the tuple's length.
pub fn header(bytes: &[u8]) -> PgResult<TupleHeader> {
    // Every tuple is read through here, most of them twice (visibility, then decoding):
    // the fields at their fixed places once the length is known to hold them, each
    // field's own error only for a tuple too short.
    let h = match bytes.first_chunk::<HEAP_TUPLE_HEADER_SIZE>() {
        Some(b) => {
            let at = |o: usize| -> [u8; 8] { b[o..o + 8].try_into().expect("8 bytes") };
            TupleHeader {
                xmin: u64::from_le_bytes(at(0)),
                xmax: u64::from_le_bytes(at(8)),
                cid: u32::from_le_bytes([b[16], b[17], b[18], b[19]]),
                ctid: ItemPointer {
                    block: u32::from_le_bytes([b[20], b[21], b[22], b[23]]),
                    offset: u16::from_le_bytes([b[24], b[25]]),
                },
                infomask: u16::from_le_bytes([b[26], b[27]]),
                natts: u16::from_le_bytes([b[28], b[29]]),
                hoff: b[30],
            }
        }
        None => header_fields(bytes)?,
    };
    check_header(h, bytes)
}

/// The header's fields read one by one, for a tuple shorter than a header (the error
/// names the field it ends in).
fn header_fields(bytes: &[u8]) -> PgResult<TupleHeader> {
    let mut r = Reader { bytes, pos: 0 };
    Ok(TupleHeader {
        xmin: u64::from_le_bytes(r.array("t_xmin")?),
        xmax: u64::from_le_bytes(r.array("t_xmax")?),
        cid: u32::from_le_bytes(r.array("t_cid")?),
        ctid: ItemPointer {
            block: u32::from_le_bytes(r.array("t_ctid")?),
            offset: u16::from_le_bytes(r.array("t_ctid")?),
        },
        infomask: u16::from_le_bytes(r.array("t_infomask")?),
        natts: u16::from_le_bytes(r.array("t_natts")?),
        hoff: u8::from_le_bytes(r.array("t_hoff")?),
    })
}

/// `h` if it agrees with itself and with the tuple's length.
fn check_header(h: TupleHeader, bytes: &[u8]) -> PgResult<TupleHeader> {
    let bitmap = if h.infomask & HEAP_HASNULL != 0 {
        (h.natts as usize).div_ceil(8)
    } else {
        0
    };
    if h.infomask & !HEAP_KNOWN_BITS != 0 {
        return Err(corrupt(format!(
            "unknown t_infomask bits {:#06x}",
            h.infomask
        )));
    }
    if h.hoff as usize != HEAP_TUPLE_HEADER_SIZE + bitmap || h.hoff as usize > bytes.len() {
        return Err(corrupt(format!(
            "t_hoff {} does not match {} columns (tuple of {} bytes)",
            h.hoff,
            h.natts,
            bytes.len()
        )));
    }
    Ok(h)
}

/// Set a tuple's `t_ctid` (the caller has checked the header with [`header`] or built it
/// with [`encode`]).
pub fn set_ctid(bytes: &mut [u8], tid: ItemPointer) {
    assert!(
        bytes.len() >= HEAP_TUPLE_HEADER_SIZE,
        "tuple of {} bytes has no header",
        bytes.len()
    );
    bytes[T_CTID_BLOCK..T_CTID_BLOCK + 4].copy_from_slice(&tid.block.to_le_bytes());
    bytes[T_CTID_OFFSET..T_CTID_OFFSET + 2].copy_from_slice(&tid.offset.to_le_bytes());
}

/// Overwrite the MVCC fields of a tuple (checked or built as for [`set_ctid`]); the
/// layout bits and [`HEAP_ONLY_TUPLE`] stay.
pub fn set_mvcc(bytes: &mut [u8], xmin: Xid, xmax: Xid, cid: Cid, infomask_mvcc: u16) {
    assert!(
        bytes.len() >= HEAP_TUPLE_HEADER_SIZE,
        "tuple of {} bytes has no header",
        bytes.len()
    );
    bytes[T_XMIN..T_XMIN + 8].copy_from_slice(&xmin.to_le_bytes());
    bytes[T_XMAX..T_XMAX + 8].copy_from_slice(&xmax.to_le_bytes());
    bytes[T_CID..T_CID + 4].copy_from_slice(&cid.to_le_bytes());
    let old = u16::from_le_bytes([bytes[T_INFOMASK], bytes[T_INFOMASK + 1]]);
    let layout = old & (HEAP_HASNULL | HEAP_HASVARWIDTH | HEAP_HASEXTERNAL | HEAP_ONLY_TUPLE);
    bytes[T_INFOMASK..T_INFOMASK + 2].copy_from_slice(&(layout | infomask_mvcc).to_le_bytes());
}

/// Overwrite `t_xmax`, `t_cid` and the MVCC bits of `t_infomask`, keeping `t_xmin`.
pub fn set_xmax(bytes: &mut [u8], xmax: Xid, cid: Cid, infomask_mvcc: u16) {
    let xmin = u64::from_le_bytes(bytes[T_XMIN..T_XMIN + 8].try_into().unwrap_or_default());
    set_mvcc(bytes, xmin, xmax, cid, infomask_mvcc);
}

fn mismatch(i: usize, ty: &DataType, v: &Value) -> PgError {
    PgError::internal(format!(
        "column {} of type {} given value {v:?}",
        i + 1,
        ty.name()
    ))
}

/// The error for a row too large for a heap page, worded as PostgreSQL's.
pub fn row_too_big(size: usize) -> PgError {
    PgError::new(
        SqlState::PROGRAM_LIMIT_EXCEEDED,
        format!("row is too big: size {size}, maximum size {MAX_HEAP_TUPLE_SIZE}"),
    )
}

/// A variable-length value's length word (text, bytea, arrays): its low 30 bits count
/// the bytes stored after it; its top two bits say what those bytes are (access rule 12).
pub const VARLENA_LEN_MASK: u32 = (1 << 30) - 1;
/// The stored bytes are the value compressed ([`crate::toast`]).
pub const VARLENA_COMPRESSED: u32 = 1 << 30;
/// The stored bytes are a pointer to the value in the table's TOAST relation.
pub const VARLENA_EXTERNAL: u32 = 1 << 31;
/// The largest variable-length value: PostgreSQL's 1 GB limit (`MaxAllocSize`, which
/// counts its 4-byte length word).
pub const MAX_VARLENA: usize = VARLENA_LEN_MASK as usize - 4;

/// The error for a value over [`MAX_VARLENA`] bytes, as PostgreSQL words it.
pub fn value_too_long(len: usize) -> PgError {
    PgError::new(
        SqlState::PROGRAM_LIMIT_EXCEEDED,
        format!("invalid memory alloc request size {}", len + 4),
    )
}

/// Build a heap tuple from one value per column. A value must be of its column's type
/// (`Value::Text` for text and varchar, `Value::Bpchar` for char(n)), or NULL; anything
/// else is a caller bug, reported as an internal error. A tuple larger than a page is
/// `PROGRAM_LIMIT_EXCEEDED` "row is too big".
pub fn encode(values: &[Value], types: &[DataType]) -> PgResult<Vec<u8>> {
    if values.len() != types.len() {
        return Err(PgError::internal(format!(
            "encode: {} values for {} columns",
            values.len(),
            types.len()
        )));
    }
    if types.len() > MAX_COLUMNS {
        return Err(PgError::new(
            SqlState::TOO_MANY_COLUMNS,
            format!("tables can have at most {MAX_COLUMNS} columns"),
        ));
    }
    let has_null = values.iter().any(Value::is_null);
    let bitmap_len = if has_null { types.len().div_ceil(8) } else { 0 };
    let hoff = HEAP_TUPLE_HEADER_SIZE + bitmap_len;
    let mut out = vec![0u8; hoff];
    let mut infomask = 0;
    if has_null {
        infomask |= HEAP_HASNULL;
    }
    for (i, (v, ty)) in values.iter().zip(types).enumerate() {
        if v.is_null() {
            continue;
        }
        if has_null {
            out[HEAP_TUPLE_HEADER_SIZE + i / 8] |= 1 << (i % 8);
        }
        match put_datum(ty, v, &mut out)? {
            None => return Err(mismatch(i, ty, v)),
            Some(true) => infomask |= HEAP_HASVARWIDTH,
            Some(false) => {}
        }
        if out.len() > MAX_HEAP_TUPLE_SIZE {
            // Stop copying early; report the full size as PostgreSQL does.
            let rest: usize = values[i + 1..]
                .iter()
                .zip(&types[i + 1..])
                .map(|(v, ty)| encoded_len(v, ty))
                .sum();
            return Err(row_too_big(out.len() + rest));
        }
    }
    finish_header(&mut out, infomask, types.len() as u16, hoff);
    Ok(out)
}

/// Build a heap tuple from each column's stored bytes (`None`: NULL), as TOAST made them
/// ([`crate::toast`]): the values' own encodings, or a compressed value's or a TOAST
/// pointer's length word and bytes. `external`: some column is out of line. The caller
/// checks the size.
pub(crate) fn assemble(columns: &[Option<Vec<u8>>], varwidth: bool, external: bool) -> Vec<u8> {
    let has_null = columns.iter().any(Option::is_none);
    let bitmap_len = if has_null {
        columns.len().div_ceil(8)
    } else {
        0
    };
    let hoff = HEAP_TUPLE_HEADER_SIZE + bitmap_len;
    let data: usize = columns.iter().flatten().map(Vec::len).sum();
    let mut out = vec![0u8; hoff];
    out.reserve(data);
    let mut infomask = 0;
    if has_null {
        infomask |= HEAP_HASNULL;
    }
    if varwidth {
        infomask |= HEAP_HASVARWIDTH;
    }
    if external {
        infomask |= HEAP_HASEXTERNAL;
    }
    for (i, c) in columns.iter().enumerate() {
        if let Some(bytes) = c {
            if has_null {
                out[HEAP_TUPLE_HEADER_SIZE + i / 8] |= 1 << (i % 8);
            }
            out.extend_from_slice(bytes);
        }
    }
    finish_header(&mut out, infomask, columns.len() as u16, hoff);
    out
}

/// Fill in a new tuple's header (tuple rule 2's ids, no place yet).
fn finish_header(out: &mut [u8], infomask: u16, natts: u16, hoff: usize) {
    out[T_XMIN..T_XMIN + 8].copy_from_slice(&BOOTSTRAP_XID.to_le_bytes());
    out[T_XMAX..T_XMAX + 8].copy_from_slice(&INVALID_XID.to_le_bytes());
    set_ctid(
        out,
        ItemPointer {
            block: INVALID_BLOCK,
            offset: 0,
        },
    );
    out[T_INFOMASK..T_INFOMASK + 2].copy_from_slice(&infomask.to_le_bytes());
    out[T_NATTS..T_NATTS + 2].copy_from_slice(&natts.to_le_bytes());
    out[T_HOFF] = hoff as u8;
}

/// A tuple's columns as they are read: which are stored (tuple rules 3 and 4), and a
/// reader at the first one's bytes.
struct Columns<'a> {
    natts: usize,
    has_null: bool,
    bitmap: &'a [u8],
    r: Reader<'a>,
}

impl<'a> Columns<'a> {
    /// The columns of tuple `bytes` of a table of `types`, its header checked.
    fn open(bytes: &'a [u8], types: &[DataType]) -> PgResult<Columns<'a>> {
        let h = header(bytes)?;
        let natts = h.natts as usize;
        if natts > types.len() {
            return Err(corrupt(format!(
                "{natts} columns, but the table has {}",
                types.len()
            )));
        }
        Ok(Columns {
            natts,
            has_null: h.infomask & HEAP_HASNULL != 0,
            bitmap: &bytes[HEAP_TUPLE_HEADER_SIZE..h.hoff as usize],
            r: Reader {
                bytes,
                pos: h.hoff as usize,
            },
        })
    }

    /// Whether column `i` is stored (not NULL, not past the tuple's columns).
    #[inline]
    fn present(&self, i: usize) -> bool {
        i < self.natts && (!self.has_null || self.bitmap[i / 8] & (1 << (i % 8)) != 0)
    }
}

/// Each column's stored bytes in a tuple (`None`: NULL, or not stored: tuple rule 4),
/// as [`assemble`] takes them: what TOAST reads its pointers from.
pub(crate) fn stored_columns<'a>(
    bytes: &'a [u8],
    types: &[DataType],
) -> PgResult<Vec<Option<&'a [u8]>>> {
    let mut c = Columns::open(bytes, types)?;
    let mut out = Vec::with_capacity(types.len());
    for (i, ty) in types.iter().enumerate() {
        let present = c.present(i);
        if !present {
            out.push(None);
            continue;
        }
        let start = c.r.pos;
        skip_datum(ty, &mut c.r, i)?;
        out.push(Some(&bytes[start..c.r.pos]));
    }
    Ok(out)
}

/// The stored size of each of `columns` of a tuple (`None` for NULL), as
/// `pg_column_size` reports it ([`crate::toast`]'s `stored_size`): what a scan returns
/// after a row's values where a query asks (access rule 12).
pub fn column_sizes(bytes: &[u8], types: &[DataType], columns: &[u16]) -> PgResult<Vec<Value>> {
    let stored = stored_columns(bytes, types)?;
    columns
        .iter()
        .map(|&c| match stored.get(c as usize).copied().flatten() {
            None => Ok(Value::Null),
            Some(b) => {
                let size = crate::toast::stored_size(b, &types[c as usize])?;
                Ok(Value::Int4(i32::try_from(size).unwrap_or(i32::MAX)))
            }
        })
        .collect()
}

/// Append one non-NULL value of type `ty` in the form a tuple's data area holds it, with no
/// size limit (the catalog keeps statistics' values this way). A NULL, or a value not of
/// type `ty`, is a caller bug, reported as an internal error.
pub fn encode_value(v: &Value, ty: &DataType, out: &mut Vec<u8>) -> PgResult<()> {
    match put_datum(ty, v, out)? {
        Some(_) => Ok(()),
        None => Err(mismatch(0, ty, v)),
    }
}

/// Read back one value [`encode_value`] wrote at `bytes[*pos..]`, advancing `pos` past
/// it. Bytes that do not fit are DATA_CORRUPTED.
pub fn decode_value(bytes: &[u8], pos: &mut usize, ty: &DataType) -> PgResult<Value> {
    let mut r = Reader { bytes, pos: *pos };
    let v = get_datum(ty, &mut r, 0, Src::Column(None))?;
    *pos = r.pos;
    Ok(v)
}

/// Append one non-NULL value of type `ty`: `Some(true)` if it is of variable width,
/// `None` if the value is not of that type (a caller bug).
fn put_datum(ty: &DataType, v: &Value, out: &mut Vec<u8>) -> PgResult<Option<bool>> {
    match (ty, v) {
        (DataType::Bool, Value::Bool(b)) => out.push(*b as u8),
        (DataType::Int2, Value::Int2(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (DataType::Int4, Value::Int4(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (DataType::Int8, Value::Int8(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (DataType::Float4, Value::Float4(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (DataType::Float8, Value::Float8(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (DataType::Date, Value::Date(d)) => out.extend_from_slice(&d.0.to_le_bytes()),
        (DataType::Timestamp(_), Value::Timestamp(t)) => out.extend_from_slice(&t.0.to_le_bytes()),
        (DataType::TimestampTz(_), Value::TimestampTz(t)) => {
            out.extend_from_slice(&t.0.to_le_bytes())
        }
        (DataType::Interval, Value::Interval(iv)) => {
            out.extend_from_slice(&iv.micros.to_le_bytes());
            out.extend_from_slice(&iv.days.to_le_bytes());
            out.extend_from_slice(&iv.months.to_le_bytes());
        }
        (DataType::Numeric(_), Value::Numeric(n)) => {
            n.encode(out);
        }
        (DataType::Uuid, Value::Uuid(u)) => out.extend_from_slice(u),
        (DataType::Bytea, Value::Bytea(b)) => put_varlena(b, out)?,
        (DataType::Text | DataType::Varchar(_) | DataType::Unknown, Value::Text(s))
        | (DataType::Bpchar(_), Value::Bpchar(s)) => put_varlena(s.as_bytes(), out)?,
        (DataType::Oid, Value::Oid(o)) | (DataType::Reg(_), Value::Reg(_, o)) => {
            out.extend_from_slice(&o.to_le_bytes())
        }
        (DataType::Array(at), Value::Array(a)) => return put_array(a, &at.elem(), out),
        _ => return Ok(None),
    }
    Ok(Some(matches!(
        ty,
        DataType::Numeric(_)
            | DataType::Bytea
            | DataType::Text
            | DataType::Varchar(_)
            | DataType::Unknown
            | DataType::Bpchar(_)
            | DataType::Array(_)
    )))
}

/// A plain variable-length value: its length word, then its bytes.
fn put_varlena(b: &[u8], out: &mut Vec<u8>) -> PgResult<()> {
    if b.len() > MAX_VARLENA {
        return Err(value_too_long(b.len()));
    }
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
    Ok(())
}

/// An array: its byte length, the number of dimensions, each dimension's length and
/// lower bound, a bitmap of the elements that are not NULL, then those elements.
fn put_array(a: &Array, elem: &DataType, out: &mut Vec<u8>) -> PgResult<Option<bool>> {
    let start = out.len();
    out.extend_from_slice(&0u32.to_le_bytes());
    out.push(a.dims.len() as u8);
    for d in &a.dims {
        out.extend_from_slice(&d.len.to_le_bytes());
        out.extend_from_slice(&d.lower.to_le_bytes());
    }
    let bitmap = out.len();
    out.resize(bitmap + a.items.len().div_ceil(8), 0);
    for (i, item) in a.items.iter().enumerate() {
        if item.is_null() {
            continue;
        }
        out[bitmap + i / 8] |= 1 << (i % 8);
        if put_datum(elem, item, out)?.is_none() {
            return Ok(None);
        }
    }
    let len = out.len() - start - 4;
    if len > MAX_VARLENA {
        return Err(value_too_long(len));
    }
    out[start..start + 4].copy_from_slice(&(len as u32).to_le_bytes());
    Ok(Some(true))
}

/// Where a value being read sits: a tuple's column, whose value may be stored compressed
/// or out of line (read through the buffer pool given, access rule 12), or an element of
/// an array, which is always plain.
#[derive(Clone, Copy)]
enum Src<'p> {
    Column(Option<&'p BufferPool>),
    Element,
}

/// Read a variable-length value's length word and bytes: the value's own bytes,
/// decompressed or fetched from the TOAST relation where the word says so.
fn get_varlena<'a>(r: &mut Reader<'a>, src: Src<'_>, i: usize) -> PgResult<Cow<'a, [u8]>> {
    let word = u32::from_le_bytes(r.array("length")?);
    let stored = r.take((word & VARLENA_LEN_MASK) as usize, "value")?;
    match (word & !VARLENA_LEN_MASK, src) {
        (0, _) => Ok(Cow::Borrowed(stored)),
        (VARLENA_COMPRESSED, Src::Column(_)) => crate::toast::decompress(stored)
            .map(Cow::Owned)
            .map_err(|e| corrupt(format!("column {}: {}", i + 1, e.message))),
        (VARLENA_EXTERNAL, Src::Column(Some(pool))) => {
            crate::toast::fetch(pool, stored).map(Cow::Owned)
        }
        (VARLENA_EXTERNAL, Src::Column(None)) => Err(PgError::internal(format!(
            "column {} is stored out of line, read without the buffer pool",
            i + 1
        ))),
        _ => Err(corrupt(format!(
            "column {} has a bad length word {word:#010x}",
            i + 1
        ))),
    }
}

/// Read one non-NULL value of type `ty` (column `i`, for errors).
fn get_datum(ty: &DataType, r: &mut Reader<'_>, i: usize, src: Src<'_>) -> PgResult<Value> {
    Ok(match ty {
        DataType::Bool => match r.array::<1>("bool")?[0] {
            0 => Value::Bool(false),
            1 => Value::Bool(true),
            b => return Err(corrupt(format!("column {} is a bool of {b}", i + 1))),
        },
        DataType::Int2 => Value::Int2(i16::from_le_bytes(r.array("int2")?)),
        DataType::Int4 => Value::Int4(i32::from_le_bytes(r.array("int4")?)),
        DataType::Int8 => Value::Int8(i64::from_le_bytes(r.array("int8")?)),
        DataType::Float4 => Value::Float4(f32::from_le_bytes(r.array("float4")?)),
        DataType::Float8 => Value::Float8(f64::from_le_bytes(r.array("float8")?)),
        DataType::Date => Value::Date(Date(i32::from_le_bytes(r.array("date")?))),
        DataType::Timestamp(_) => {
            Value::Timestamp(Timestamp(i64::from_le_bytes(r.array("timestamp")?)))
        }
        DataType::TimestampTz(_) => {
            Value::TimestampTz(TimestampTz(i64::from_le_bytes(r.array("timestamptz")?)))
        }
        DataType::Interval => Value::Interval(Interval {
            micros: i64::from_le_bytes(r.array("interval")?),
            days: i32::from_le_bytes(r.array("interval")?),
            months: i32::from_le_bytes(r.array("interval")?),
        }),
        DataType::Uuid => Value::Uuid(r.array("uuid")?),
        DataType::Bytea => Value::Bytea(get_varlena(r, src, i)?.into_owned()),
        DataType::Numeric(_) => {
            let rest = &r.bytes[r.pos..];
            let (n, used) = Numeric::decode(rest)
                .ok_or_else(|| corrupt(format!("column {} is not a valid numeric", i + 1)))?;
            r.take(used, "numeric")?;
            Value::Numeric(n)
        }
        DataType::Text
        | DataType::Varchar(_)
        | DataType::Unknown
        | DataType::Void
        | DataType::Bpchar(_) => {
            let not_utf8 =
                |e: std::str::Utf8Error| corrupt(format!("column {} is not UTF-8: {e}", i + 1));
            let s = match get_varlena(r, src, i)? {
                Cow::Borrowed(raw) => std::str::from_utf8(raw).map_err(not_utf8)?.to_owned(),
                Cow::Owned(raw) => String::from_utf8(raw).map_err(|e| not_utf8(e.utf8_error()))?,
            };
            if matches!(ty, DataType::Bpchar(_)) {
                Value::Bpchar(s)
            } else {
                Value::Text(s)
            }
        }
        DataType::Oid => Value::Oid(u32::from_le_bytes(r.array("oid")?)),
        DataType::Reg(kind) => Value::Reg(*kind, u32::from_le_bytes(r.array("oid")?)),
        DataType::Array(at) => get_array(r, &at.elem(), i, src)?,
    })
}

/// Step over one stored value of type `ty` without making it.
fn skip_datum(ty: &DataType, r: &mut Reader<'_>, i: usize) -> PgResult<()> {
    let fixed = match ty {
        DataType::Bool => 1,
        DataType::Int2 => 2,
        DataType::Int4 | DataType::Float4 | DataType::Date | DataType::Oid | DataType::Reg(_) => 4,
        DataType::Int8 | DataType::Float8 | DataType::Timestamp(_) | DataType::TimestampTz(_) => 8,
        DataType::Interval | DataType::Uuid => 16,
        DataType::Numeric(_) => {
            let used = Numeric::encoded_len(&r.bytes[r.pos..])
                .ok_or_else(|| corrupt(format!("column {} is not a valid numeric", i + 1)))?;
            r.take(used, "numeric")?;
            return Ok(());
        }
        DataType::Bytea
        | DataType::Text
        | DataType::Varchar(_)
        | DataType::Unknown
        | DataType::Void
        | DataType::Bpchar(_)
        | DataType::Array(_) => {
            let word = u32::from_le_bytes(r.array("length")?);
            r.take((word & VARLENA_LEN_MASK) as usize, "value")?;
            return Ok(());
        }
    };
    r.take(fixed, "value")?;
    Ok(())
}

/// Read back what [`put_array`] wrote.
fn get_array(r: &mut Reader<'_>, elem: &DataType, i: usize, src: Src<'_>) -> PgResult<Value> {
    let body = get_varlena(r, src, i)?;
    let len = body.len();
    let r = &mut Reader {
        bytes: &body,
        pos: 0,
    };
    let end = len;
    let [ndims] = r.array::<1>("array dimensions")?;
    let mut dims = Vec::with_capacity(ndims as usize);
    let mut count = 1usize;
    for _ in 0..ndims {
        let len = i32::from_le_bytes(r.array("array dimension")?);
        let lower = i32::from_le_bytes(r.array("array lower bound")?);
        count = count.saturating_mul(usize::try_from(len).unwrap_or(usize::MAX));
        dims.push(Dim { len, lower });
    }
    if ndims == 0 {
        count = 0;
    }
    if count > len * 8 {
        return Err(corrupt(format!("column {} has a bad array size", i + 1)));
    }
    let bitmap = r.take(count.div_ceil(8), "array null bitmap")?;
    let mut items = Vec::with_capacity(count);
    for k in 0..count {
        if bitmap[k / 8] & (1 << (k % 8)) == 0 {
            items.push(Value::Null);
        } else {
            items.push(get_datum(elem, r, i, Src::Element)?);
        }
    }
    if r.pos != end {
        return Err(corrupt(format!("column {} has a bad array length", i + 1)));
    }
    Ok(Value::Array(Arc::new(Array {
        elem: elem.oid(),
        dims,
        items,
    })))
}

/// Bytes a value takes in the data area (for the size in "row is too big"), stored
/// inline and uncompressed: `pg_column_size` of a value not read from a table.
pub fn encoded_len(v: &Value, ty: &DataType) -> usize {
    match v {
        Value::Null => 0,
        Value::Text(s) | Value::Bpchar(s) => 4 + s.len(),
        Value::Bytea(b) => 4 + b.len(),
        Value::Numeric(n) => n.encoded_size(),
        Value::Array(a) => {
            let mut out = vec![];
            put_array(a, &ty.elem().unwrap_or(DataType::Unknown), &mut out).ok();
            out.len()
        }
        _ => ty.typlen().max(0) as usize,
    }
}

/// Read a heap tuple back into one value per column of `types`. Bytes that do not fit
/// the format (truncated, bad lengths, invalid UTF-8, a bool other than 0/1, more columns
/// than `types`) are DATA_CORRUPTED; nothing here panics.
/// A value stored out of line is an internal error here: [`decode_columns`] given the
/// buffer pool reads it.
pub fn decode(bytes: &[u8], types: &[DataType]) -> PgResult<Vec<Value>> {
    decode_columns(bytes, types, None, None)
}

/// [`decode`], values stored out of line fetched through `pool`.
pub fn decode_with(bytes: &[u8], types: &[DataType], pool: &BufferPool) -> PgResult<Vec<Value>> {
    decode_columns(bytes, types, None, Some(pool))
}

/// [`decode`], but only the columns `wanted` marks (all when `None`): the others are
/// stepped over and read NULL, no value made (a scan that reads 2 of 16 columns does not
/// copy the other 14's strings), and nothing past the last one wanted is read at all (a
/// `count(*)` steps over nothing). The layout up to there is checked as a full decode
/// checks it (tuple rule 5); the bytes of a value stepped over are not (its text's
/// UTF-8), nor those after the last value wanted. A value stored out of line is read
/// through `toast` only if it is wanted: a query that does not read a column reads none
/// of its TOAST pages (access rule 12).
pub fn decode_columns(
    bytes: &[u8],
    types: &[DataType],
    wanted: Option<&[bool]>,
    toast: Option<&BufferPool>,
) -> PgResult<Vec<Value>> {
    let src = Src::Column(toast);
    let mut c = Columns::open(bytes, types)?;
    let mut values = Vec::with_capacity(types.len());
    // The columns to read: through the last one wanted.
    let end = match wanted {
        Some(w) => w.iter().rposition(|&x| x).map_or(0, |i| i + 1),
        None => types.len(),
    };
    if end < types.len() {
        for (i, ty) in types[..end].iter().enumerate() {
            let present = c.present(i);
            if !present {
                values.push(Value::Null);
            } else if wanted.is_some_and(|w| !w[i]) {
                skip_datum(ty, &mut c.r, i)?;
                values.push(Value::Null);
            } else {
                values.push(get_datum(ty, &mut c.r, i, src)?);
            }
        }
        // (Made, not cloned: a clone of a Value matches on its kind.)
        let rest = types.len() - values.len();
        values.extend(std::iter::repeat_with(|| Value::Null).take(rest));
        return Ok(values);
    }
    for (i, ty) in types.iter().enumerate() {
        let present = c.present(i);
        if !present {
            values.push(Value::Null);
            continue;
        }
        if wanted.is_some_and(|w| !w.get(i).copied().unwrap_or(true)) {
            skip_datum(ty, &mut c.r, i)?;
            values.push(Value::Null);
            continue;
        }
        let v = get_datum(ty, &mut c.r, i, src)?;
        values.push(v);
    }
    if c.r.pos != bytes.len() {
        return Err(corrupt(format!(
            "{} bytes left over after the last column",
            bytes.len() - c.r.pos
        )));
    }
    Ok(values)
}

/// A row read for a statistics sample: its values, and its columns too wide to read
/// (column, bytes in the tuple), NULL among the values.
pub type Sampled = (Vec<Value>, Vec<(usize, usize)>);

/// [`decode_columns`] of every column for a statistics sample: a value stored
/// compressed or out of line whose raw length is over `wide` bytes is neither fetched
/// nor decompressed (a sample of rows holding megabytes each would not fit memory): it
/// reads NULL, and `(column, bytes it takes in the tuple)` is listed after the values,
/// as PostgreSQL's ANALYZE counts a "too wide" value by its stored size.
pub fn decode_sample(
    bytes: &[u8],
    types: &[DataType],
    pool: &BufferPool,
    wide: usize,
) -> PgResult<Sampled> {
    let mut c = Columns::open(bytes, types)?;
    let mut values = Vec::with_capacity(types.len());
    let mut too_wide = Vec::new();
    for (i, ty) in types.iter().enumerate() {
        let present = c.present(i);
        if !present {
            values.push(Value::Null);
            continue;
        }
        let start = c.r.pos;
        if ty.typlen() == -1
            && let Some(raw) = crate::toast::raw_len(&bytes[start..])
            && raw > wide
        {
            skip_datum(ty, &mut c.r, i)?;
            too_wide.push((i, c.r.pos - start));
            values.push(Value::Null);
            continue;
        }
        values.push(get_datum(ty, &mut c.r, i, Src::Column(Some(pool)))?);
    }
    if c.r.pos != bytes.len() {
        return Err(corrupt(format!(
            "{} bytes left over after the last column",
            bytes.len() - c.r.pos
        )));
    }
    Ok((values, too_wide))
}

/// [`decode`], with a corruption error saying where the tuple came from (relation and
/// item pointer), as every DATA_CORRUPTED error should.
pub fn decode_at(
    bytes: &[u8],
    types: &[DataType],
    rel: RelId,
    tid: ItemPointer,
    toast: Option<&BufferPool>,
) -> PgResult<Vec<Value>> {
    decode_columns(bytes, types, None, toast).map_err(|e| {
        let place = format!(
            "tuple ({},{}) of relation {}",
            tid.block,
            tid.offset,
            relpath(rel)
        );
        let detail = match &e.detail {
            Some(d) => format!("{place}: {d}"),
            None => place,
        };
        e.with_detail(detail)
    })
}

/// The item pointer stored in a tuple's header, for callers that only need it.
pub fn ctid(bytes: &[u8]) -> PgResult<ItemPointer> {
    Ok(header(bytes)?.ctid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_types() -> Vec<DataType> {
        vec![
            DataType::Bool,
            DataType::Int2,
            DataType::Int4,
            DataType::Int8,
            DataType::Float4,
            DataType::Float8,
            DataType::Text,
            DataType::Varchar(Some(10)),
            DataType::Bpchar(Some(4)),
        ]
    }

    fn sample() -> Vec<Value> {
        vec![
            Value::Bool(true),
            Value::Int2(-32768),
            Value::Int4(i32::MAX),
            Value::Int8(i64::MIN),
            Value::Float4(1.5),
            Value::Float8(-0.1),
            Value::Text("héllo".into()),
            Value::Text("".into()),
            Value::Bpchar("ab  ".into()),
        ]
    }

    #[test]
    fn round_trip_all_types() {
        let types = all_types();
        let values = sample();
        let bytes = encode(&values, &types).expect("encode");
        let h = header(&bytes).expect("header");
        assert_eq!(h.xmin, BOOTSTRAP_XID);
        assert_eq!(h.xmax, INVALID_XID);
        assert_eq!(h.natts, 9);
        assert_eq!(h.hoff as usize, HEAP_TUPLE_HEADER_SIZE);
        assert_eq!(h.infomask, HEAP_HASVARWIDTH);
        assert_eq!(decode(&bytes, &types).expect("decode"), values);
        // 31 header + 1 + 2 + 4 + 8 + 4 + 8 + (4+6) + 4 + (4+4)
        assert_eq!(bytes.len(), 31 + 1 + 2 + 4 + 8 + 4 + 8 + 10 + 4 + 8);
    }

    #[test]
    fn decoding_some_columns_reads_the_rest_as_null() {
        let types = all_types();
        let values = sample();
        let bytes = encode(&values, &types).expect("encode");
        for mask in 0u32..(1 << types.len()) {
            let wanted: Vec<bool> = (0..types.len()).map(|i| mask & (1 << i) != 0).collect();
            let got = decode_columns(&bytes, &types, Some(&wanted), None).expect("decode");
            let want: Vec<Value> = values
                .iter()
                .zip(&wanted)
                .map(|(v, w)| if *w { v.clone() } else { Value::Null })
                .collect();
            assert_eq!(got, want, "{wanted:?}");
        }
        // A tuple cut short is still an error when the cut column is read, or stepped
        // over on the way to a later one.
        let cut = &bytes[..bytes.len() - 1];
        let mut last = vec![false; types.len()];
        *last.last_mut().expect("columns") = true;
        assert!(decode_columns(cut, &types, Some(&last), None).is_err());
        let mut first = vec![false; types.len()];
        first[0] = true;
        let mut both = first.clone();
        *both.last_mut().expect("columns") = true;
        assert!(decode_columns(cut, &types, Some(&both), None).is_err());
        // Nothing past the last column wanted is read: `count(*)` reads no column.
        assert!(decode_columns(cut, &types, Some(&first), None).is_ok());
        let none = vec![false; types.len()];
        assert_eq!(
            decode_columns(cut, &types, Some(&none), None).expect("nothing read"),
            vec![Value::Null; types.len()]
        );
    }

    #[test]
    fn round_trip_datetime_types() {
        let types = [
            DataType::Date,
            DataType::Timestamp(None),
            DataType::TimestampTz(None),
            DataType::Interval,
            DataType::Date,
        ];
        let values = vec![
            Value::Date(Date(-1)),
            Value::Timestamp(Timestamp(i64::MAX)),
            Value::TimestampTz(TimestampTz(-86_400_000_000)),
            Value::Interval(Interval::new(-14, 3, 1_500_000)),
            Value::Null,
        ];
        let bytes = encode(&values, &types).expect("encode");
        let back = decode(&bytes, &types).expect("decode");
        assert_eq!(back, values);
        // Interval equality is by span; check the fields themselves survived.
        let Value::Interval(iv) = back[3] else {
            panic!("not an interval: {:?}", back[3]);
        };
        assert_eq!((iv.months, iv.days, iv.micros), (-14, 3, 1_500_000));
        assert_eq!(bytes.len(), 31 + 1 + 4 + 8 + 8 + 16);
    }

    #[test]
    fn round_trip_numeric() {
        let num = |t: &str| Value::Numeric(Numeric::parse(t).unwrap());
        let types = [
            DataType::Numeric(None),
            DataType::Int4,
            DataType::Numeric(Some((10, 2))),
            DataType::Numeric(None),
            DataType::Numeric(None),
            DataType::Numeric(None),
        ];
        let values = vec![
            num("-12345.678900"),
            Value::Int4(7),
            Value::Null,
            num("NaN"),
            num("0.00"),
            num("-Infinity"),
        ];
        let bytes = encode(&values, &types).expect("encode");
        assert_ne!(header(&bytes).unwrap().infomask & HEAP_HASVARWIDTH, 0);
        let back = decode(&bytes, &types).expect("decode");
        assert_eq!(back, values);
        // The display scale survives, not just the value.
        let texts: Vec<_> = back
            .iter()
            .map(|v| v.to_text(&common::value::TextContext::detached()))
            .collect();
        assert_eq!(texts[0].as_deref(), Some("-12345.678900"));
        assert_eq!(texts[4].as_deref(), Some("0.00"));
        // 31 header + 1 bitmap + (7 + 2 * 4 digits: 1 2345 6789 0000 -> trailing zero
        // digit stripped, so 3) + 4 + 1 (NaN) + 7 (zero) + 1 (-Infinity)
        assert_eq!(bytes.len(), 31 + 1 + (7 + 2 * 3) + 4 + 1 + 7 + 1);
        // A damaged numeric is corruption, never a panic or a wrong value.
        let start = 32;
        let mut bad = bytes.clone();
        bad[start + 7..start + 9].copy_from_slice(&10_000u16.to_le_bytes());
        let e = decode(&bad, &types).unwrap_err();
        assert_eq!(e.code, SqlState::DATA_CORRUPTED);
        let mut bad_kind = bytes.clone();
        bad_kind[start] = 9;
        assert!(decode(&bad_kind, &types).is_err());
        assert!(decode(&bytes[..bytes.len() - 3], &types).is_err());
    }

    #[test]
    fn round_trip_nulls_everywhere() {
        let types = all_types();
        for mask in [0u32, 1, 0b1_0101_0101, 0b1_1111_1111, 0b1_0000_0000] {
            let values: Vec<Value> = sample()
                .into_iter()
                .enumerate()
                .map(|(i, v)| if mask & (1 << i) != 0 { Value::Null } else { v })
                .collect();
            let bytes = encode(&values, &types).expect("encode");
            assert_eq!(
                header(&bytes).expect("header").infomask & HEAP_HASNULL != 0,
                mask != 0
            );
            assert_eq!(decode(&bytes, &types).expect("decode"), values, "{mask:b}");
        }
        let nan = encode(&[Value::Float8(f64::NAN)], &[DataType::Float8]).expect("encode");
        match decode(&nan, &[DataType::Float8])
            .expect("decode")
            .as_slice()
        {
            [Value::Float8(f)] => assert!(f.is_nan()),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            decode(&encode(&[], &[]).expect("encode"), &[]).expect("decode"),
            vec![]
        );
    }

    #[test]
    fn fewer_stored_columns_read_as_null() {
        let bytes = encode(&[Value::Int4(7)], &[DataType::Int4]).expect("encode");
        let wider = [DataType::Int4, DataType::Text, DataType::Bool];
        assert_eq!(
            decode(&bytes, &wider).expect("decode"),
            vec![Value::Int4(7), Value::Null, Value::Null]
        );
        let e = decode(&bytes, &[]).expect_err("more columns than the table");
        assert_eq!(e.code, SqlState::DATA_CORRUPTED);
    }

    #[test]
    fn type_mismatch_is_an_internal_error() {
        let e = encode(&[Value::Int8(1)], &[DataType::Int4]).expect_err("mismatch");
        assert_eq!(e.code, SqlState::INTERNAL_ERROR);
        let e = encode(&[Value::Text("a".into())], &[DataType::Bpchar(Some(1))])
            .expect_err("bpchar wants Value::Bpchar");
        assert_eq!(e.code, SqlState::INTERNAL_ERROR);
        assert!(encode(&[], &[DataType::Int4]).is_err());
    }

    #[test]
    fn too_big_row_matches_postgres_message() {
        let big = "x".repeat(9000);
        let e = encode(
            &[Value::Int4(1), Value::Text(big), Value::Text("yy".into())],
            &[DataType::Int4, DataType::Text, DataType::Text],
        )
        .expect_err("too big");
        assert_eq!(e.code, SqlState::PROGRAM_LIMIT_EXCEEDED);
        assert_eq!(
            e.message,
            format!(
                "row is too big: size {}, maximum size 8160",
                31 + 4 + 4 + 9000 + 4 + 2
            )
        );
        let fits = "x".repeat(MAX_HEAP_TUPLE_SIZE - HEAP_TUPLE_HEADER_SIZE - 4);
        let bytes = encode(&[Value::Text(fits)], &[DataType::Text]).expect("exactly fits");
        assert_eq!(bytes.len(), MAX_HEAP_TUPLE_SIZE);
    }

    #[test]
    fn corrupt_bytes_never_panic() {
        let types = all_types();
        let mut values = sample();
        values[3] = Value::Null;
        let good = encode(&values, &types).expect("encode");
        // Every truncation is an error.
        for len in 0..good.len() {
            let e = decode(&good[..len], &types).expect_err("truncated");
            assert_eq!(e.code, SqlState::DATA_CORRUPTED, "len {len}");
        }
        // Every single-byte change either decodes to something or is DATA_CORRUPTED.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for at in 0..good.len() {
            for _ in 0..8 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let mut bad = good.clone();
                bad[at] = seed as u8;
                if let Err(e) = decode(&bad, &types) {
                    assert_eq!(e.code, SqlState::DATA_CORRUPTED);
                }
            }
        }
        let mut long = good.clone();
        long.push(0);
        let tid = ItemPointer {
            block: 3,
            offset: 7,
        };
        let e = decode_at(&long, &types, 16384, tid, None).expect_err("trailing garbage");
        assert_eq!(e.code, SqlState::DATA_CORRUPTED);
        assert_eq!(
            e.detail.as_deref(),
            Some("tuple (3,7) of relation base/16384")
        );
    }
}
