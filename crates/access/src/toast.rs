//! TOAST: values too large for their row, stored compressed or out of line (access
//! rule 12).
//!
//! A variable-length value (text, varchar, char(n), bytea, arrays) is a `u32` length
//! word and bytes in its tuple (tuple rule 3). The word's low 30 bits count the bytes;
//! its top two say what they are ([`tuple::VARLENA_COMPRESSED`],
//! [`tuple::VARLENA_EXTERNAL`]):
//!
//! ```text
//!  plain:       | len | the value's bytes                                         |
//!  compressed:  | len | raw length u32 | method u8 | lz4 block                    |
//!  out of line: | len | TOAST relation u32 | table u32 | value id u64 |
//!               |     | first chunk: block u32, offset u16 | raw length u32 |
//!               |     | stored length u32 | method u8 (0: not compressed)       |
//!               |     | crc32c of the stored bytes u32                            |
//! ```
//!
//! Out of line, the value (compressed or not) is cut into chunks, each a tuple of the
//! table's TOAST relation, a heap of its own: `(value id int8, chunk_seq int4, next
//! int8, chunk_data bytea)`. A chunk fills a page. The pointer names the first chunk's
//! place, and each chunk the next one's (`next`: block << 16 | offset, -1 for the last):
//! reading a value reads its chunks' pages and nothing else, no index (PostgreSQL finds
//! chunks through a btree on `(chunk_id, chunk_seq)`). The chunks are written last
//! first, so each knows where its successor went.
//!
//! Why correct: the chunks are inserted by the transaction that inserts the row, and
//! deleted by the one that deletes it (or that updates it to a version not holding the
//! same pointer), in the same way and with the same ids: a chunk is dead to every
//! snapshot exactly when every version pointing at it is, so pruning and VACUUM never
//! take a chunk a visible row needs. Every chunk read is checked against the pointer
//! (value id, sequence number, size), and the value's bytes against its checksum;
//! anything else is `DATA_CORRUPTED` naming the TOAST relation, never wrong bytes.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

use common::ids::ItemPointer;
use common::types::Storage;
use common::{DataType, Oid, PgError, PgResult, RelId, SqlState, Value};
use storage::bufmgr::BufferPool;
use txn::{Cid, Tx, Xid};

use crate::heapam::{self, HeapWrite};
use crate::tuple::{
    self, HEAP_HASEXTERNAL, HEAP_TUPLE_HEADER_SIZE, MAX_HEAP_TUPLE_SIZE, MAX_VARLENA,
    VARLENA_COMPRESSED, VARLENA_EXTERNAL, VARLENA_LEN_MASK,
};

/// A row whose tuple would be larger than this is toasted (PostgreSQL's
/// `TOAST_TUPLE_THRESHOLD` for 8 KB pages: a quarter of a page).
pub const TOAST_TUPLE_THRESHOLD: usize = 2032;
/// Toasting goes on until the tuple is this small, or nothing more can be done
/// (`TOAST_TUPLE_TARGET`).
const TOAST_TUPLE_TARGET: usize = 2032;
/// `Main` values go out of line only to make the tuple fit a page at all
/// (`TOAST_TUPLE_TARGET_MAIN`).
const TOAST_TUPLE_TARGET_MAIN: usize = MAX_HEAP_TUPLE_SIZE;

/// Bytes of an out-of-line pointer after its length word.
const POINTER_LEN: usize = 4 + 4 + 8 + 4 + 2 + 4 + 4 + 1 + 4;
/// Bytes a column holding an out-of-line pointer takes in its tuple.
pub const TOAST_POINTER_SIZE: usize = 4 + POINTER_LEN;

/// The chunk tuple's columns.
const CHUNK_TYPES: [DataType; 4] = [
    DataType::Int8,
    DataType::Int4,
    DataType::Int8,
    DataType::Bytea,
];
/// Bytes of a value per chunk: a chunk tuple fills a page (PostgreSQL puts four on one,
/// `TOAST_MAX_CHUNK_SIZE`; one per page reads a value in a quarter of the tuples).
pub const TOAST_MAX_CHUNK_SIZE: usize =
    MAX_HEAP_TUPLE_SIZE - HEAP_TUPLE_HEADER_SIZE - 8 - 4 - 8 - 4;

/// Compression methods, as a stored value names them.
const METHOD_NONE: u8 = 0;
const METHOD_LZ4: u8 = 1;

/// Bytes of a compressed value before the compressed data: raw length and method.
const COMPRESSED_HEADER: usize = 5;

/// The table a row is written to, as TOAST needs it.
#[derive(Clone, Copy, Debug)]
pub struct ToastTarget {
    /// The table's TOAST relation; `None` for a table made before TOAST existed, whose
    /// large values can only be compressed.
    pub rel: Option<RelId>,
    /// The table's OID: errors name its TOAST relation `pg_toast_<oid>`, as PostgreSQL's.
    pub table: Oid,
}

/// A pointer to a value stored out of line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pointer {
    rel: RelId,
    table: Oid,
    value: u64,
    first: ItemPointer,
    raw_len: u32,
    stored_len: u32,
    method: u8,
    /// crc32c of the stored bytes.
    crc: u32,
}

impl Pointer {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(POINTER_LEN as u32 | VARLENA_EXTERNAL).to_le_bytes());
        out.extend_from_slice(&self.rel.to_le_bytes());
        out.extend_from_slice(&self.table.to_le_bytes());
        out.extend_from_slice(&self.value.to_le_bytes());
        out.extend_from_slice(&self.first.block.to_le_bytes());
        out.extend_from_slice(&self.first.offset.to_le_bytes());
        out.extend_from_slice(&self.raw_len.to_le_bytes());
        out.extend_from_slice(&self.stored_len.to_le_bytes());
        out.push(self.method);
        out.extend_from_slice(&self.crc.to_le_bytes());
    }

    /// The pointer in `b`, a pointer's bytes after its length word.
    fn parse(b: &[u8]) -> PgResult<Pointer> {
        let b: &[u8; POINTER_LEN] = b.try_into().map_err(|_| {
            PgError::new(
                SqlState::DATA_CORRUPTED,
                format!("invalid TOAST pointer of {} bytes", b.len()),
            )
        })?;
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let p = Pointer {
            rel: u32_at(0),
            table: u32_at(4),
            value: u64::from_le_bytes(b[8..16].try_into().expect("8 bytes")),
            first: ItemPointer {
                block: u32_at(16),
                offset: u16::from_le_bytes([b[20], b[21]]),
            },
            raw_len: u32_at(22),
            stored_len: u32_at(26),
            method: b[30],
            crc: u32_at(31),
        };
        if p.raw_len as usize > MAX_VARLENA
            || p.method > METHOD_LZ4
            || (p.method == METHOD_NONE && p.stored_len != p.raw_len)
        {
            return Err(PgError::new(
                SqlState::DATA_CORRUPTED,
                format!(
                    "invalid TOAST pointer for toast value {} in pg_toast_{}",
                    p.value, p.table
                ),
            ));
        }
        Ok(p)
    }

    fn chunks(&self) -> usize {
        (self.stored_len as usize).div_ceil(TOAST_MAX_CHUNK_SIZE)
    }

    fn corrupt(&self, what: String) -> PgError {
        PgError::new(
            SqlState::DATA_CORRUPTED,
            format!(
                "{what} for toast value {} in pg_toast_{}",
                self.value, self.table
            ),
        )
    }
}

/// Value ids: unique within a run, and unlikely to repeat across runs (counted from the
/// clock at the first): they only check that a chunk is the one its pointer means; the
/// place is in the pointer.
fn next_value_id() -> u64 {
    static NEXT: LazyLock<AtomicU64> = LazyLock::new(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        AtomicU64::new(nanos)
    });
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A compressed value's bytes (after the length word) back to the value's.
pub(crate) fn decompress(stored: &[u8]) -> PgResult<Vec<u8>> {
    let bad =
        |what: &str| PgError::new(SqlState::DATA_CORRUPTED, format!("compressed value {what}"));
    let Some((head, data)) = stored.split_first_chunk::<COMPRESSED_HEADER>() else {
        return Err(bad("cut short"));
    };
    let raw_len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
    if raw_len > MAX_VARLENA || head[4] != METHOD_LZ4 {
        return Err(bad("has a bad header"));
    }
    decompress_lz4(data, raw_len).ok_or_else(|| bad("is corrupt"))
}

fn decompress_lz4(data: &[u8], raw_len: usize) -> Option<Vec<u8>> {
    // lz4 expands at most about 255 to 1: a larger length is corrupt, and is not
    // allocated.
    if raw_len > data.len().saturating_mul(255).saturating_add(16) {
        return None;
    }
    let mut out = vec![0u8; raw_len];
    match lz4_flex::block::decompress_into(data, &mut out) {
        Ok(n) if n == raw_len => Some(out),
        _ => None,
    }
}

/// Read the value an out-of-line pointer (`stored`: its bytes after the length word)
/// names: its chunks in order, each checked against the pointer, then decompressed if
/// it was stored so.
pub(crate) fn fetch(pool: &BufferPool, stored: &[u8]) -> PgResult<Vec<u8>> {
    let p = Pointer::parse(stored)?;
    let n = p.chunks();
    // Grown as chunks come: a corrupt pointer's length is not allocated up front.
    let mut data = Vec::with_capacity((p.stored_len as usize).min(1 << 20));
    let mut at = p.first;
    for seq in 0..n {
        let missing = || p.corrupt(format!("missing chunk number {seq}"));
        let bytes = heapam::heap_fetch(pool, p.rel, at)?.ok_or_else(missing)?;
        let (value, got, next, chunk) = read_chunk(&bytes).map_err(|_| missing())?;
        if value != p.value {
            return Err(missing());
        }
        if got != seq as i32 {
            return Err(p.corrupt(format!("unexpected chunk number {got} (expected {seq})")));
        }
        let want = if seq + 1 < n {
            TOAST_MAX_CHUNK_SIZE
        } else {
            p.stored_len as usize - seq * TOAST_MAX_CHUNK_SIZE
        };
        if chunk.len() != want {
            return Err(p.corrupt(format!(
                "unexpected chunk size {} (expected {want}) in chunk {seq} of {n}",
                chunk.len()
            )));
        }
        data.extend_from_slice(&chunk);
        match next {
            Some(tid) => at = tid,
            None if seq + 1 < n => {
                return Err(p.corrupt(format!("missing chunk number {}", seq + 1)));
            }
            None => {}
        }
    }
    if crc32c::crc32c(&data) != p.crc {
        return Err(p.corrupt("checksum mismatch".into()));
    }
    match p.method {
        METHOD_LZ4 => decompress_lz4(&data, p.raw_len as usize)
            .ok_or_else(|| p.corrupt("compressed data is corrupt".into())),
        _ => Ok(data),
    }
}

/// A chunk tuple's value id, sequence number, next chunk and data.
fn read_chunk(bytes: &[u8]) -> PgResult<(u64, i32, Option<ItemPointer>, Vec<u8>)> {
    let mut cols = tuple::decode(bytes, &CHUNK_TYPES)?.into_iter();
    match (cols.next(), cols.next(), cols.next(), cols.next()) {
        (
            Some(Value::Int8(value)),
            Some(Value::Int4(seq)),
            Some(Value::Int8(next)),
            Some(Value::Bytea(data)),
        ) => {
            let next = (next >= 0).then_some(ItemPointer {
                block: (next >> 16) as u32,
                offset: next as u16,
            });
            Ok((value as u64, seq, next, data))
        }
        _ => Err(PgError::new(
            SqlState::DATA_CORRUPTED,
            "invalid TOAST chunk",
        )),
    }
}

/// Write `data` (a value's bytes, compressed by `method` from `raw_len` bytes) to the
/// TOAST relation `rel` as transaction `xid`, command `cid`: the pointer to it.
fn store(
    pool: &BufferPool,
    rel: RelId,
    table: Oid,
    data: &[u8],
    raw_len: usize,
    method: u8,
    (xid, cid): (Xid, Cid),
) -> PgResult<Pointer> {
    if !pool.smgr().exists(rel) {
        // Made when the table first needs it; another session may make it first.
        if let Err(e) = pool.create_relation(rel)
            && !pool.smgr().exists(rel)
        {
            return Err(e);
        }
    }
    let value = next_value_id();
    let mut next = -1i64;
    let chunks: Vec<&[u8]> = data.chunks(TOAST_MAX_CHUNK_SIZE).collect();
    let mut first = ItemPointer {
        block: tuple::INVALID_BLOCK,
        offset: 0,
    };
    for (seq, chunk) in chunks.iter().enumerate().rev() {
        let t = tuple::encode(
            &[
                Value::Int8(value as i64),
                Value::Int4(seq as i32),
                Value::Int8(next),
                Value::Bytea(chunk.to_vec()),
            ],
            &CHUNK_TYPES,
        )?;
        first = heapam::heap_insert(pool, rel, &t, xid, cid, 100)?;
        next = (i64::from(first.block) << 16) | i64::from(first.offset);
    }
    Ok(Pointer {
        rel,
        table,
        value,
        first,
        raw_len: raw_len as u32,
        stored_len: data.len() as u32,
        method,
        crc: crc32c::crc32c(data),
    })
}

/// Delete the chunks of the value `stored` points at, as transaction `xid`: they stay
/// for the snapshots that still see the row version pointing at them.
fn delete_value(pool: &BufferPool, stored: &[u8], xid: Xid, tx: &Tx) -> PgResult<()> {
    let p = Pointer::parse(stored)?;
    let mut at = Some(p.first);
    let mut seq = 0;
    while let Some(tid) = at {
        let Some(bytes) = heapam::heap_fetch(pool, p.rel, tid)? else {
            return Err(p.corrupt(format!("missing chunk number {seq}")));
        };
        let (value, _, next, _) = read_chunk(&bytes)?;
        if value != p.value {
            return Err(p.corrupt(format!("missing chunk number {seq}")));
        }
        match heapam::heap_delete(pool, p.rel, tid, xid, tx)? {
            HeapWrite::Done(_) | HeapWrite::SelfModified => {}
            other => {
                return Err(PgError::internal(format!(
                    "deleting chunk {seq} of toast value {} in pg_toast_{}: {other:?}",
                    p.value, p.table
                )));
            }
        }
        at = next;
        seq += 1;
    }
    Ok(())
}

/// Whether values of `ty` can be compressed or stored out of line: those with a length
/// word (numeric carries its own length, and is not).
fn toastable(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::Text
            | DataType::Varchar(_)
            | DataType::Bpchar(_)
            | DataType::Bytea
            | DataType::Array(_)
            | DataType::Unknown
    )
}

/// One column while a row is toasted.
struct Col {
    /// Its stored bytes (`None`: NULL).
    bytes: Option<Vec<u8>>,
    storage: Storage,
    state: State,
    /// Compression was tried and did not pay.
    incompressible: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not a value TOAST handles (NULL, fixed width, numeric).
    Fixed,
    Plain,
    Compressed,
    /// To go out of line (its bytes are still the value's, plain or compressed).
    ToExternal,
    /// Out of line already: the old version's pointer, kept.
    External,
}

impl Col {
    fn size(&self) -> usize {
        match self.state {
            State::ToExternal => TOAST_POINTER_SIZE,
            _ => self.bytes.as_ref().map_or(0, Vec::len),
        }
    }
}

/// The tuple for a row of `values` (of `types`, column `i` stored as `storage(i)`),
/// toasting it when it is larger than [`TOAST_TUPLE_THRESHOLD`]: PostgreSQL's order
/// (`heap_toast_insert_or_update`): compress the largest `Extended` values, moving each
/// out of line that is still too large alone; move the largest `Extended` and
/// `External` ones out of line; compress `Main` ones; last, move `Main` ones out of
/// line while the row would not fit a page. `old`: the version an UPDATE replaces
/// (its tuple and its values): a value it stored out of line that the new row holds
/// unchanged keeps its pointer, not a copy. Chunks are written as `xid`, `cid`.
#[allow(clippy::too_many_arguments)]
pub fn encode_row(
    pool: &BufferPool,
    target: ToastTarget,
    values: &[Value],
    types: &[DataType],
    storage: impl Fn(usize) -> Storage,
    old: Option<(&[u8], &[Value])>,
    xid: Xid,
    cid: Cid,
) -> PgResult<Vec<u8>> {
    if !needs_toast(values, types) {
        return tuple::encode(values, types);
    }
    let old_stored = match old {
        Some((bytes, _)) if tuple::header(bytes)?.infomask & HEAP_HASEXTERNAL != 0 => {
            tuple::stored_columns(bytes, types)?
        }
        _ => Vec::new(),
    };
    let mut cols = Vec::with_capacity(values.len());
    let mut varwidth = false;
    for (i, (v, ty)) in values.iter().zip(types).enumerate() {
        if v.is_null() {
            cols.push(Col {
                bytes: None,
                storage: Storage::Plain,
                state: State::Fixed,
                incompressible: true,
            });
            continue;
        }
        varwidth |= ty.typlen() < 0;
        let kept = match (old, old_stored.get(i)) {
            (Some((_, old_values)), Some(Some(b)))
                if external(b) && old_values.get(i).is_some_and(|o| o.identical(v)) =>
            {
                Some(b.to_vec())
            }
            _ => None,
        };
        let (bytes, state) = match kept {
            Some(b) => (b, State::External),
            None => {
                let mut b = Vec::new();
                tuple::encode_value(v, ty, &mut b)?;
                let state = if toastable(ty) {
                    State::Plain
                } else {
                    State::Fixed
                };
                (b, state)
            }
        };
        cols.push(Col {
            bytes: Some(bytes),
            storage: storage(i),
            state,
            incompressible: false,
        });
    }
    let hoff = HEAP_TUPLE_HEADER_SIZE
        + if values.iter().any(Value::is_null) {
            values.len().div_ceil(8)
        } else {
            0
        };
    let size = |cols: &[Col]| cols.iter().map(Col::size).sum::<usize>();
    let can_external = target.rel.is_some();
    // 1: compress the largest Extended values (External ones are not compressed);
    // one still too large alone goes out of line at once.
    let max = TOAST_TUPLE_TARGET - hoff;
    while size(&cols) > max {
        let Some(i) = biggest(&cols, true, &[Storage::Extended, Storage::External]) else {
            break;
        };
        if cols[i].storage == Storage::Extended {
            compress(&mut cols[i]);
        } else {
            cols[i].incompressible = true;
        }
        if cols[i].size() > max && can_external {
            cols[i].state = State::ToExternal;
        }
    }
    // 2: out of line, largest first.
    while size(&cols) > max && can_external {
        let Some(i) = biggest(&cols, false, &[Storage::Extended, Storage::External]) else {
            break;
        };
        cols[i].state = State::ToExternal;
    }
    // 3: compress Main values.
    while size(&cols) > max {
        let Some(i) = biggest(&cols, true, &[Storage::Extended, Storage::Main]) else {
            break;
        };
        compress(&mut cols[i]);
    }
    // 4: Main values out of line, only as far as a page needs.
    let max = TOAST_TUPLE_TARGET_MAIN - hoff;
    while size(&cols) > max && can_external {
        let Some(i) = biggest(&cols, false, &[Storage::Main]) else {
            break;
        };
        cols[i].state = State::ToExternal;
    }
    let total = hoff + size(&cols);
    if total > MAX_HEAP_TUPLE_SIZE {
        return Err(tuple::row_too_big(total));
    }
    let mut external = false;
    let mut out = Vec::with_capacity(cols.len());
    for c in cols {
        match (c.state, c.bytes) {
            (State::ToExternal, Some(b)) => {
                let rel = target.rel.expect("only with a TOAST relation");
                let (data, raw_len, method) = match compressed_parts(&b) {
                    Some((raw_len, data)) => (data, raw_len, METHOD_LZ4),
                    None => (&b[4..], b.len() - 4, METHOD_NONE),
                };
                let p = store(pool, rel, target.table, data, raw_len, method, (xid, cid))?;
                let mut ptr = Vec::with_capacity(TOAST_POINTER_SIZE);
                p.encode(&mut ptr);
                external = true;
                out.push(Some(ptr));
            }
            (state, bytes) => {
                external |= state == State::External;
                out.push(bytes);
            }
        }
    }
    Ok(tuple::assemble(&out, varwidth, external))
}

/// Whether a row of `values` is larger than [`TOAST_TUPLE_THRESHOLD`] as plain values
/// (counted without encoding them, but for arrays): only such a row's tuple can hold
/// values compressed or out of line.
pub fn needs_toast(values: &[Value], types: &[DataType]) -> bool {
    let mut size = HEAP_TUPLE_HEADER_SIZE + values.len().div_ceil(8);
    for (v, ty) in values.iter().zip(types) {
        size += tuple::encoded_len(v, ty);
        if size > TOAST_TUPLE_THRESHOLD {
            return true;
        }
    }
    false
}

/// The raw length of the value a column's stored bytes (from its length word on) hold
/// compressed or out of line; `None` for a plain value (or bytes too short to say).
pub(crate) fn raw_len(b: &[u8]) -> Option<usize> {
    let word = u32::from_le_bytes(*b.first_chunk::<4>()?);
    if word & VARLENA_EXTERNAL != 0 {
        let p = Pointer::parse(b.get(4..4 + POINTER_LEN)?).ok()?;
        return Some(p.raw_len as usize);
    }
    if word & VARLENA_COMPRESSED != 0 {
        return Some(u32::from_le_bytes(b.get(4..8)?.try_into().ok()?) as usize);
    }
    None
}

/// What a column's stored bytes (from its length word on) take, as `pg_column_size`
/// reports it: the bytes in the tuple, compressed or not; for a value out of line, its
/// bytes in the TOAST relation (PostgreSQL's `toast_datum_size`).
pub(crate) fn stored_size(b: &[u8], ty: &DataType) -> PgResult<usize> {
    if toastable(ty) && external(b) {
        return Ok(Pointer::parse(b.get(4..).unwrap_or_default())?.stored_len as usize);
    }
    Ok(b.len())
}

/// Whether a column's stored bytes are an out-of-line pointer.
fn external(b: &[u8]) -> bool {
    b.first_chunk::<4>()
        .is_some_and(|w| u32::from_le_bytes(*w) & VARLENA_EXTERNAL != 0)
}

/// A compressed column's raw length and compressed data.
fn compressed_parts(b: &[u8]) -> Option<(usize, &[u8])> {
    let word = u32::from_le_bytes(*b.first_chunk::<4>()?);
    if word & VARLENA_COMPRESSED == 0 {
        return None;
    }
    let head = b.get(4..4 + COMPRESSED_HEADER)?;
    let raw_len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
    Some((raw_len, &b[4 + COMPRESSED_HEADER..]))
}

/// The largest column, bigger than a pointer, still inline and of one of `storages`:
/// for compression, only plain ones not found incompressible.
fn biggest(cols: &[Col], for_compression: bool, storages: &[Storage]) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (i, c) in cols.iter().enumerate() {
        let eligible = match c.state {
            State::Plain => !(for_compression && c.incompressible),
            State::Compressed => !for_compression,
            _ => false,
        };
        if !eligible || !storages.contains(&c.storage) {
            continue;
        }
        let size = c.size();
        if size > TOAST_POINTER_SIZE && best.is_none_or(|(_, s)| size > s) {
            best = Some((i, size));
        }
    }
    best.map(|(i, _)| i)
}

/// Compress a plain column with lz4 if that makes it smaller; else mark it
/// incompressible.
fn compress(c: &mut Col) {
    let Some(b) = &c.bytes else {
        return;
    };
    let raw = &b[4..];
    let packed = lz4_flex::block::compress(raw);
    let len = COMPRESSED_HEADER + packed.len();
    if len + 2 > raw.len() {
        c.incompressible = true;
        return;
    }
    let mut out = Vec::with_capacity(4 + len);
    out.extend_from_slice(&((len as u32 & VARLENA_LEN_MASK) | VARLENA_COMPRESSED).to_le_bytes());
    out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
    out.push(METHOD_LZ4);
    out.extend_from_slice(&packed);
    c.bytes = Some(out);
    c.state = State::Compressed;
}

/// Delete the out-of-line values of tuple `bytes` (of `types`), a version transaction
/// `xid` just deleted or replaced, but those `kept` (the replacing version's tuple)
/// points at too. A tuple without `HEAP_HASEXTERNAL` costs only its header read.
pub fn delete_external(
    pool: &BufferPool,
    bytes: &[u8],
    types: &[DataType],
    kept: Option<&[u8]>,
    xid: Xid,
    tx: &Tx,
) -> PgResult<()> {
    if tuple::header(bytes)?.infomask & HEAP_HASEXTERNAL == 0 {
        return Ok(());
    }
    let kept = match kept {
        Some(k) if tuple::header(k)?.infomask & HEAP_HASEXTERNAL != 0 => {
            tuple::stored_columns(k, types)?
        }
        _ => Vec::new(),
    };
    for (i, c) in tuple::stored_columns(bytes, types)?.into_iter().enumerate() {
        let Some(b) = c.filter(|b| external(b)) else {
            continue;
        };
        if kept.get(i).is_some_and(|k| *k == Some(b)) {
            continue;
        }
        delete_value(pool, &b[4..], xid, tx)?;
    }
    Ok(())
}
