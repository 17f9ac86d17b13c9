//! The durable catalog: an append-only log of catalog changes.
//!
//! File `<data_dir>/catalog.log`, a sequence of records:
//!
//! ```text
//! +-----------+-------------+------------------------+
//! | len: u32  | crc32c: u32 | payload (len bytes)    |   little-endian; crc over payload
//! +-----------+-------------+------------------------+
//! payload = kind: u8, then the kind's fields (strings as u32 length + UTF-8)
//! ```
//!
//! Crash story (until the WAL takes over): a record is appended and fsync'd before the new
//! snapshot is published, so a change a client saw is durable. A crash mid-append leaves a
//! torn last record, which fails its length or CRC check; replay stops there and truncates
//! it. A bad record that is *not* the last one is corruption and an error. Compaction writes
//! a new file, fsyncs it, renames it over the old one and fsyncs the directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use access::nbtree::KeyOrder;
use common::{DataType, Oid, PgError, PgResult, SqlState, Value};
use storage::vfs::{Vfs, VfsFile};

use crate::desc::{
    CheckConstraint, ColumnDesc, ColumnStats, Comment, EXPRESSION_KEY, FkAction, ForeignKey,
    Identity, IndexDesc, RelStats, SequenceDesc, SequenceOptions, TableDesc, TableOptions,
};
use crate::partition::{
    KeyExpr, PartitionBound, PartitionKey, PartitionOf, PartitionStrategy, RangeDatum,
};

const LOG_FILE: &str = "catalog.log";
const LOG_TMP_FILE: &str = "catalog.log.tmp";
/// Largest record accepted on replay: a table of `MAX_COLUMNS` columns with long names and
/// defaults stays far below it; anything larger is a torn or corrupt length field.
const MAX_RECORD_BYTES: u32 = 64 * 1024 * 1024;

const KIND_CREATE_TABLE: u8 = 1;
const KIND_DROP_TABLE: u8 = 2;
const KIND_NEXT_OID: u8 = 3;
/// CreateTable with its index list (kind 1, read for old logs, had keys without storage).
const KIND_CREATE_TABLE_WITH_INDEXES: u8 = 4;
const KIND_CREATE_INDEX: u8 = 5;
const KIND_DROP_INDEX: u8 = 6;
/// CreateTable with storage options and foreign keys (kinds 1 and 4 are read for old logs).
const KIND_CREATE_TABLE_V3: u8 = 7;
/// A table's whole new descriptor (ALTER TABLE), in kind 7's format.
const KIND_ALTER_TABLE: u8 = 8;
/// CreateTable and AlterTable whose columns carry an identity byte (0 none, 1 ALWAYS,
/// 2 BY DEFAULT) after their default; kinds 7 and 8 are read for old logs.
const KIND_CREATE_TABLE_V4: u8 = 12;
const KIND_ALTER_TABLE_V4: u8 = 13;
/// CreateTable and AlterTable with the table's CHECK constraints after its foreign keys:
/// u32 count, then each as u32 oid, name, expression text, columns, u8 validated; kinds
/// 12 and 13 are read for old logs.
const KIND_CREATE_TABLE_V5: u8 = 15;
const KIND_ALTER_TABLE_V5: u8 = 16;
/// CreateTable and AlterTable whose columns carry a dropped byte (1: DROP COLUMN) after
/// their identity byte; kinds 15 and 16 are read for old logs.
const KIND_CREATE_TABLE_V6: u8 = 17;
const KIND_ALTER_TABLE_V6: u8 = 18;
/// CreateTable and AlterTable with the table's comments after its CHECK constraints:
/// u32 count, then each as u32 object, u32 sub, text; kinds 17 and 18 are read for old
/// logs.
const KIND_CREATE_TABLE_V7: u8 = 19;
const KIND_ALTER_TABLE_V7: u8 = 20;
/// CreateTable and AlterTable whose columns carry their statistics target (i16 LE, -1 for
/// the default) after their dropped byte; kinds 19 and 20 are read for old logs.
const KIND_CREATE_TABLE_V8: u8 = 25;
const KIND_ALTER_TABLE_V8: u8 = 26;
/// ... and a partitioned table's key, a partition's parent and bound.
const KIND_CREATE_TABLE_V9: u8 = 27;
const KIND_ALTER_TABLE_V9: u8 = 28;
/// ... whose columns carry their storage strategy (u8, `attstorage`'s letter) after their
/// statistics target, and the table its TOAST relation (u32, 0 for none) last; kinds 27
/// and 28 are read with the types' strategies and no TOAST relation.
const KIND_CREATE_TABLE_V10: u8 = 30;
const KIND_ALTER_TABLE_V10: u8 = 31;
const KIND_CREATE_SEQUENCE: u8 = 9;
const KIND_DROP_SEQUENCE: u8 = 10;
/// Several records applied as one (a table and its SERIAL sequences): u32 count, then
/// each nested record as u32 length and payload.
const KIND_BATCH: u8 = 11;
/// A transaction's catalog changes, logged just before its commit record: u64 top
/// transaction id, then the records as in a batch. Recovery applies them when it meets
/// the commit (WAL only; `catalog.log` never holds one).
const KIND_COMMITTED: u8 = 14;
/// One piece of a transaction's `KIND_COMMITTED` record: u64 top transaction id, u32
/// piece number (from 0), then the next bytes of that record's encoding. A WAL record
/// must fit a segment and a transaction's catalog changes have no size limit, so they are
/// logged in pieces; recovery joins a transaction's pieces in order and decodes them when
/// it meets the commit record (WAL only; kind 14 alone is read for old logs).
const KIND_COMMITTED_PIECE: u8 = 21;
/// A table's statistics (ANALYZE): u32 table, f64 reltuples, u32 relpages (read for old
/// logs).
const KIND_SET_STATS: u8 = 22;
/// A table's statistics with its columns': kind 22's fields, then u32 count and each
/// column as u16 attnum, u32 type OID, i32 typmod, f32 null_frac, i32 avg_width, f32
/// n_distinct, u32 count and each most common value (`access::tuple::encode_value`) with
/// its f32 frequency, u32 count and each histogram bound, u8 1 and f32 correlation or
/// u8 0.
const KIND_SET_STATS_V2: u8 = 23;
/// As kind 23, with u32 relallvisible after relpages (kinds 22 and 23 are read with 0).
const KIND_SET_STATS_V3: u8 = 29;
/// As kind 29, with u64 frozen_xid after relallvisible (kinds 22, 23 and 29 are read
/// with 0: not known).
const KIND_SET_STATS_V4: u8 = 32;
/// One piece of a `KIND_SET_STATS_V2` record too large for one WAL record: u32 table,
/// u32 piece number (from 0), u8 1 if it is the last, then the next bytes of the record.
/// Recovery joins a table's pieces and applies the record at the last one; pieces cut
/// short by a crash are dropped (statistics are advice: ANALYZE makes them again).
const KIND_STATS_PIECE: u8 = 24;
/// Bytes of a statistics piece before its share of the record.
const STATS_PIECE_HEADER_BYTES: usize = 1 + 4 + 4 + 1;
/// Bytes of a piece before its share of the record.
const PIECE_HEADER_BYTES: usize = 1 + 8 + 4;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Record {
    CreateTable(TableDesc),
    /// The table's descriptor after an ALTER TABLE (one object changed, one record).
    AlterTable(TableDesc),
    DropTable(Oid),
    /// The next OID to hand out (written by compaction so OIDs are never reused).
    NextOid(Oid),
    CreateIndex {
        table: Oid,
        index: IndexDesc,
    },
    DropIndex {
        table: Oid,
        index: Oid,
    },
    CreateSequence(SequenceDesc),
    DropSequence(Oid),
    /// Records that one change made together: applied whole or (a torn or missing
    /// record) not at all.
    Batch(Vec<Record>),
    /// What transaction `xid` changed, applied only once it has committed.
    Committed {
        xid: u64,
        records: Vec<Record>,
    },
    /// ANALYZE's findings for a table, replacing the last ones: logged and published at
    /// once, outside any transaction, as PostgreSQL updates `pg_class.reltuples` in place.
    SetStats {
        table: Oid,
        stats: RelStats,
    },
}

/// A checkpoint compacts the log (rewrites it as the live state) once it has grown past
/// both this ...
const COMPACT_MIN_BYTES: u64 = 64 * 1024;
/// ... and this many times its size after the last compaction: each rewrite follows at
/// least as many bytes of appended changes as it writes, so checkpoints cost O(changes)
/// amortized, and the log stays within about twice the live state.
const COMPACT_GROWTH_FACTOR: u64 = 2;

/// What the log has written since startup.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CatalogLogStats {
    /// Bytes checkpoints appended or rewrote: zero for a checkpoint after no change.
    pub checkpoint_bytes: u64,
    /// Checkpoints that rewrote the whole log.
    pub compactions: u64,
}

pub(crate) struct CatalogLog {
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
    file: Arc<dyn VfsFile>,
    pub(crate) end: u64,
    /// The log's size after its last compaction (or at open).
    compacted_end: u64,
    /// Committed changes logged in the WAL and not yet here: the next checkpoint
    /// appends them.
    pub(crate) unsaved: Vec<Record>,
    /// The OID bound the log holds: a checkpoint appends a `NextOid` when it has moved.
    pub(crate) saved_next_oid: Oid,
    pub(crate) stats: CatalogLogStats,
}

fn io_err(path: &Path, e: std::io::Error) -> PgError {
    PgError::io(format!("could not access file \"{}\"", path.display()), e)
}

impl CatalogLog {
    pub(crate) fn open(vfs: Arc<dyn Vfs>, dir: &Path) -> PgResult<(CatalogLog, Vec<Record>)> {
        let path = dir.join(LOG_FILE);
        let file = vfs.open(&path, true).map_err(|e| io_err(&path, e))?;
        let len = file.len().map_err(|e| io_err(&path, e))?;
        let mut bytes = vec![0u8; len as usize];
        let mut read = 0;
        while read < bytes.len() {
            let n = file
                .read_at(&mut bytes[read..], read as u64)
                .map_err(|e| io_err(&path, e))?;
            if n == 0 {
                break;
            }
            read += n;
        }
        bytes.truncate(read);
        let mut records = Vec::new();
        let mut pos = 0usize;
        while pos < bytes.len() {
            match frame_at(&bytes, pos) {
                Some((payload, next)) => {
                    let record = decode(payload).ok_or_else(|| {
                        PgError::new(
                            SqlState::DATA_CORRUPTED,
                            format!(
                                "invalid catalog record at offset {pos} in \"{}\"",
                                path.display()
                            ),
                        )
                    })?;
                    records.push(record);
                    pos = next;
                }
                None => {
                    // A torn tail from a crash during an append: drop it.
                    tracing::warn!(offset = pos, "truncating torn record at end of catalog log");
                    file.set_len(pos as u64).map_err(|e| io_err(&path, e))?;
                    file.sync().map_err(|e| io_err(&path, e))?;
                    break;
                }
            }
        }
        let log = CatalogLog {
            vfs,
            dir: dir.to_path_buf(),
            file,
            end: pos as u64,
            compacted_end: pos as u64,
            unsaved: Vec::new(),
            // Replay sets the real bound before anything is saved.
            saved_next_oid: 0,
            stats: CatalogLogStats::default(),
        };
        Ok((log, records))
    }

    /// Append one record and make it durable before returning.
    pub(crate) fn append(&mut self, record: &Record) -> PgResult<()> {
        self.append_framed(&frame(record))
    }

    fn append_framed(&mut self, framed: &[u8]) -> PgResult<()> {
        let path = self.dir.join(LOG_FILE);
        self.file
            .write_all_at(framed, self.end)
            .and_then(|_| self.file.sync())
            .map_err(|e| io_err(&path, e))?;
        self.end += framed.len() as u64;
        Ok(())
    }

    /// Whether a checkpoint has anything to save.
    pub(crate) fn has_changes(&self, next_oid: Oid) -> bool {
        !self.unsaved.is_empty() || next_oid > self.saved_next_oid
    }

    /// Whether the log has grown enough since its last compaction to be rewritten.
    pub(crate) fn wants_compaction(&self) -> bool {
        self.end > COMPACT_MIN_BYTES && self.end > COMPACT_GROWTH_FACTOR * self.compacted_end
    }

    /// A checkpoint's work when the log is not compacted: append the changes committed
    /// since the last one, and the OID bound if it moved, as one batch (nothing at all
    /// when nothing changed). They stay unsaved if the append fails.
    pub(crate) fn save_changes(&mut self, next_oid: Oid) -> PgResult<()> {
        if !self.has_changes(next_oid) {
            return Ok(());
        }
        let oid_moved = next_oid > self.saved_next_oid;
        let oid_record = oid_moved.then_some(Record::NextOid(next_oid));
        let mut payload = vec![KIND_BATCH];
        put_records(&mut payload, self.unsaved.iter().chain(oid_record.as_ref()));
        let framed = frame_payload(&payload);
        self.append_framed(&framed)?;
        self.stats.checkpoint_bytes += framed.len() as u64;
        self.unsaved.clear();
        self.saved_next_oid = next_oid;
        Ok(())
    }

    /// Replace the whole log with `records`, atomically.
    pub(crate) fn rewrite(&mut self, records: impl Iterator<Item = Record>) -> PgResult<()> {
        let tmp = self.dir.join(LOG_TMP_FILE);
        let path = self.dir.join(LOG_FILE);
        let _ = self.vfs.remove(&tmp);
        let file = self.vfs.open(&tmp, true).map_err(|e| io_err(&tmp, e))?;
        let mut buf = Vec::new();
        for r in records {
            buf.extend_from_slice(&frame(&r));
        }
        file.write_all_at(&buf, 0)
            .and_then(|_| file.sync())
            .map_err(|e| io_err(&tmp, e))?;
        self.vfs.rename(&tmp, &path).map_err(|e| io_err(&path, e))?;
        self.vfs
            .sync_dir(&self.dir)
            .map_err(|e| io_err(&self.dir, e))?;
        self.file = file;
        self.end = buf.len() as u64;
        self.compacted_end = self.end;
        self.unsaved.clear();
        self.stats.checkpoint_bytes += self.end;
        self.stats.compactions += 1;
        Ok(())
    }
}

/// The payload of the frame at `pos` and the position after it, if the frame is whole.
fn frame_at(bytes: &[u8], pos: usize) -> Option<(&[u8], usize)> {
    let header = bytes.get(pos..pos + 8)?;
    let len = u32::from_le_bytes(header[0..4].try_into().ok()?);
    let crc = u32::from_le_bytes(header[4..8].try_into().ok()?);
    if len > MAX_RECORD_BYTES {
        return None;
    }
    let payload = bytes.get(pos + 8..pos + 8 + len as usize)?;
    (crc32c::crc32c(payload) == crc).then_some((payload, pos + 8 + len as usize))
}

fn frame(record: &Record) -> Vec<u8> {
    let mut payload = Vec::new();
    encode(record, &mut payload);
    frame_payload(&payload)
}

fn frame_payload(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 8);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32c::crc32c(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
}

fn put_index(out: &mut Vec<u8>, i: &IndexDesc) {
    put_u32(out, i.oid);
    put_u32(out, i.rel);
    put_str(out, &i.name);
    let extended = i.order != KeyOrder::default() || !i.include.is_empty() || i.predicate.is_some();
    let expressions = !i.exprs.is_empty();
    out.push(
        i.unique as u8
            | (i.primary as u8) << 1
            | (i.constraint as u8) << 2
            | (extended as u8) << INDEX_EXTENDED_BIT
            | (expressions as u8) << INDEX_EXPRESSIONS_BIT
            | (i.parent.is_some() as u8) << INDEX_PARENT_BIT,
    );
    put_u32(out, i.columns.len() as u32);
    for &c in &i.columns {
        // An expression key as PostgreSQL's `indkey` has it: a column that is none.
        put_u32(
            out,
            if IndexDesc::expression(c).is_some() {
                u32::MAX
            } else {
                c as u32
            },
        );
    }
    if extended {
        put_u32(out, i.order.desc);
        put_u32(out, i.order.nulls_first);
        put_columns(out, &i.include);
        match &i.predicate {
            Some(p) => {
                out.push(1);
                put_str(out, p);
            }
            None => out.push(0),
        }
    }
    if expressions {
        put_u32(out, i.exprs.len() as u32);
        for e in &i.exprs {
            put_str(out, &e.text);
            put_columns(out, &e.columns);
            put_str(out, &e.name);
        }
    }
    if let Some(p) = i.parent {
        put_u32(out, p);
    }
}

/// Flag bit of an index with DESC / NULLS FIRST columns, INCLUDE columns or a predicate:
/// those follow its key columns (an index without them is written as before they
/// existed, so older logs read the same).
const INDEX_EXTENDED_BIT: u8 = 3;
/// Flag bit of an index with expressions in its key: their texts follow (after the
/// extended part, if any); each expression key is written as column `u32::MAX`.
const INDEX_EXPRESSIONS_BIT: u8 = 4;
/// Flag bit of a partition's index that belongs to a partitioned index: that index's
/// OID follows, last.
const INDEX_PARENT_BIT: u8 = 5;

fn put_columns(out: &mut Vec<u8>, cols: &[usize]) {
    put_u32(out, cols.len() as u32);
    for &c in cols {
        put_u32(out, c as u32);
    }
}

fn put_action(out: &mut Vec<u8>, a: FkAction) {
    out.push(match a {
        FkAction::NoAction => 0,
        FkAction::Restrict => 1,
    });
}

pub(crate) fn encode(record: &Record, out: &mut Vec<u8>) {
    match record {
        Record::CreateTable(t) | Record::AlterTable(t) => {
            out.push(if matches!(record, Record::CreateTable(_)) {
                KIND_CREATE_TABLE_V10
            } else {
                KIND_ALTER_TABLE_V10
            });
            put_u32(out, t.oid);
            put_u32(out, t.rel);
            put_str(out, &t.name);
            put_u32(out, t.columns.len() as u32);
            for c in t.columns.iter() {
                put_str(out, &c.name);
                put_u32(out, c.ty.oid());
                out.extend_from_slice(&c.ty.typmod().to_le_bytes());
                out.push(c.not_null as u8);
                match &c.default {
                    Some(d) => {
                        out.push(1);
                        put_str(out, d);
                    }
                    None => out.push(0),
                }
                out.push(match c.identity {
                    None => 0,
                    Some(Identity::Always) => 1,
                    Some(Identity::ByDefault) => 2,
                });
                out.push(c.dropped as u8);
                let target = c.stat_target.map_or(-1, |t| t as i16);
                out.extend_from_slice(&target.to_le_bytes());
                out.push(c.storage.code().as_bytes()[0]);
            }
            put_u32(out, t.indexes.len() as u32);
            for i in &t.indexes {
                put_index(out, i);
            }
            out.push(t.options.fillfactor);
            out.push(t.options.autovacuum_enabled as u8);
            put_u32(out, t.foreign_keys.len() as u32);
            for f in &t.foreign_keys {
                put_u32(out, f.oid);
                put_str(out, &f.name);
                put_columns(out, &f.columns);
                put_u32(out, f.ref_table);
                put_columns(out, &f.ref_columns);
                put_u32(out, f.ref_index);
                put_action(out, f.on_delete);
                put_action(out, f.on_update);
                out.push(f.match_full as u8);
            }
            put_u32(out, t.checks.len() as u32);
            for c in &t.checks {
                put_u32(out, c.oid);
                put_str(out, &c.name);
                put_str(out, &c.expr);
                put_columns(out, &c.columns);
                out.push(c.validated as u8);
            }
            put_u32(out, t.comments.len() as u32);
            for c in &t.comments {
                put_u32(out, c.object);
                put_u32(out, c.sub as u32);
                put_str(out, &c.text);
            }
            put_partitioning(out, t);
            put_u32(out, t.toast.unwrap_or(0));
        }
        Record::DropTable(oid) => {
            out.push(KIND_DROP_TABLE);
            put_u32(out, *oid);
        }
        Record::NextOid(oid) => {
            out.push(KIND_NEXT_OID);
            put_u32(out, *oid);
        }
        Record::CreateIndex { table, index } => {
            out.push(KIND_CREATE_INDEX);
            put_u32(out, *table);
            put_index(out, index);
        }
        Record::DropIndex { table, index } => {
            out.push(KIND_DROP_INDEX);
            put_u32(out, *table);
            put_u32(out, *index);
        }
        Record::CreateSequence(s) => {
            out.push(KIND_CREATE_SEQUENCE);
            put_u32(out, s.oid);
            put_u32(out, s.rel);
            put_str(out, &s.name);
            let o = &s.options;
            put_u32(out, o.ty.oid());
            for v in [o.start, o.increment, o.min, o.max, o.cache] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            out.push(o.cycle as u8);
            match s.owned_by {
                Some((table, column)) => {
                    out.push(1);
                    put_u32(out, table);
                    put_u32(out, column as u32);
                }
                None => out.push(0),
            }
        }
        Record::DropSequence(oid) => {
            out.push(KIND_DROP_SEQUENCE);
            put_u32(out, *oid);
        }
        Record::Committed { xid, records } => {
            out.push(KIND_COMMITTED);
            out.extend_from_slice(&xid.to_le_bytes());
            put_records(out, records);
        }
        Record::Batch(records) => {
            out.push(KIND_BATCH);
            put_records(out, records);
        }
        Record::SetStats { table, stats } => {
            out.push(KIND_SET_STATS_V4);
            put_u32(out, *table);
            out.extend_from_slice(&stats.reltuples.to_le_bytes());
            put_u32(out, stats.relpages);
            put_u32(out, stats.relallvisible);
            out.extend_from_slice(&stats.frozen_xid.to_le_bytes());
            put_u32(out, stats.columns.len() as u32);
            for c in stats.columns.iter() {
                put_column_stats(out, c);
            }
        }
    }
}

/// A table's partitioning: its key if partitioned, its parent and bound if a
/// partition; each bound value in the key column's own encoding.
fn put_partitioning(out: &mut Vec<u8>, t: &TableDesc) {
    match &t.partition_key {
        Some(k) => {
            let strategy = match k.strategy {
                PartitionStrategy::Range => 1,
                PartitionStrategy::List => 2,
                PartitionStrategy::Hash => 3,
            };
            // A key of columns only is written as before expressions existed.
            let expressions = !k.exprs.is_empty();
            out.push(strategy | (expressions as u8) << PARTITION_EXPRESSIONS_BIT);
            put_u32(out, k.columns.len() as u32);
            for &c in &k.columns {
                put_u32(
                    out,
                    match PartitionKey::expression(c) {
                        Some(_) => u32::MAX,
                        None => c as u32,
                    },
                );
            }
            if expressions {
                put_u32(out, k.exprs.len() as u32);
                for e in &k.exprs {
                    put_str(out, &e.text);
                    put_columns(out, &e.columns);
                    put_type(out, &e.ty);
                }
            }
        }
        None => out.push(0),
    }
    let Some(of) = &t.partition_of else {
        out.push(0);
        return;
    };
    // 2: the key's types follow (1, of logs before key expressions: the key's columns);
    // 3: as 2, DETACH CONCURRENTLY pending since the transaction whose id follows.
    out.push(if of.detach_pending.is_some() { 3 } else { 2 });
    put_u32(out, of.parent);
    if let Some(xid) = of.detach_pending {
        out.extend_from_slice(&xid.to_le_bytes());
    }
    put_u32(out, of.types.len() as u32);
    for ty in &of.types {
        put_type(out, ty);
    }
    let ty = |i: usize| of.types.get(i).copied().unwrap_or(DataType::Text);
    let value = |out: &mut Vec<u8>, v: &Value, ty: &DataType| {
        // Bound values were coerced to the key's types when bound: encoding them
        // cannot fail (a failure would read back as a torn record).
        let _ = access::tuple::encode_value(v, ty, out);
    };
    match &of.bound {
        PartitionBound::Range { from, to } => {
            out.push(1);
            for side in [from, to] {
                put_u32(out, side.len() as u32);
                for (i, d) in side.iter().enumerate() {
                    match d {
                        RangeDatum::MinValue => out.push(0),
                        RangeDatum::MaxValue => out.push(2),
                        RangeDatum::Value(v) => {
                            out.push(1);
                            value(out, v, &ty(i));
                        }
                    }
                }
            }
        }
        PartitionBound::List(values) => {
            out.push(2);
            put_u32(out, values.len() as u32);
            for v in values {
                out.push(!v.is_null() as u8);
                if !v.is_null() {
                    value(out, v, &ty(0));
                }
            }
        }
        PartitionBound::Hash { modulus, remainder } => {
            out.push(3);
            put_u32(out, *modulus);
            put_u32(out, *remainder);
        }
        PartitionBound::Default => out.push(4),
    }
}

/// Flag bit of a partition key's strategy byte for a key with expressions: each is
/// written as column `u32::MAX`, and their texts follow the columns.
const PARTITION_EXPRESSIONS_BIT: u8 = 2;

fn put_type(out: &mut Vec<u8>, ty: &DataType) {
    put_u32(out, ty.oid());
    out.extend_from_slice(&ty.typmod().to_le_bytes());
}

fn read_type(r: &mut Reader<'_>) -> Option<DataType> {
    let oid = r.u32()?;
    let typmod = r.u32()? as i32;
    DataType::from_oid(oid, typmod)
}

type Partitioning = (Option<PartitionKey>, Option<PartitionOf>);

fn read_partitioning(r: &mut Reader<'_>, columns: &[ColumnDesc]) -> Option<Partitioning> {
    let code = r.u8()?;
    let expressions = code & (1 << PARTITION_EXPRESSIONS_BIT) != 0;
    let strategy = match code & !(1 << PARTITION_EXPRESSIONS_BIT) {
        0 => None,
        1 => Some(PartitionStrategy::Range),
        2 => Some(PartitionStrategy::List),
        3 => Some(PartitionStrategy::Hash),
        _ => return None,
    };
    // A key has a part at least; a list key exactly one (as the binder makes them).
    let key = match strategy {
        Some(strategy) => {
            let n = r.u32()? as usize;
            let mut key_columns = Vec::with_capacity(n.min(columns.len() + 1));
            let mut k = 0;
            for _ in 0..n {
                key_columns.push(match r.u32()? {
                    u32::MAX if expressions => {
                        k += 1;
                        EXPRESSION_KEY + k - 1
                    }
                    c if (c as usize) < columns.len() => c as usize,
                    _ => return None,
                });
            }
            let mut exprs = Vec::new();
            if expressions {
                let n = r.u32()? as usize;
                if n != k {
                    return None;
                }
                for _ in 0..n {
                    exprs.push(KeyExpr {
                        text: r.string()?,
                        columns: read_columns(r, columns.len())?,
                        ty: read_type(r)?,
                    });
                }
            }
            if key_columns.is_empty()
                || (strategy == PartitionStrategy::List && key_columns.len() != 1)
            {
                return None;
            }
            Some(PartitionKey {
                strategy,
                columns: key_columns,
                exprs,
            })
        }
        None => None,
    };
    let form = r.u8()?;
    let mut detach_pending = None;
    let types = match form {
        0 => return Some((key, None)),
        // Before key expressions: the key's columns, of this table.
        1 => {
            let parent = r.u32()?;
            let key_columns = read_columns(r, columns.len())?;
            (parent, key_columns.iter().map(|&c| columns[c].ty).collect())
        }
        2 | 3 => {
            let parent = r.u32()?;
            if form == 3 {
                detach_pending = Some(r.u64()?);
            }
            let n = r.u32()? as usize;
            let mut types = Vec::with_capacity(n.min(columns.len() + 1));
            for _ in 0..n {
                types.push(read_type(r)?);
            }
            (parent, types)
        }
        _ => return None,
    };
    let (parent, types): (Oid, Vec<DataType>) = types;
    if types.is_empty() {
        return None;
    }
    let ty = |i: usize| types.get(i).copied();
    let bound = match r.u8()? {
        1 => {
            let mut sides = Vec::with_capacity(2);
            for _ in 0..2 {
                let n = r.u32()? as usize;
                let mut side = Vec::with_capacity(n.min(types.len()));
                for i in 0..n {
                    side.push(match r.u8()? {
                        0 => RangeDatum::MinValue,
                        2 => RangeDatum::MaxValue,
                        1 => RangeDatum::Value(r.value(&ty(i)?)?),
                        _ => return None,
                    });
                }
                sides.push(side);
            }
            let to = sides.pop()?;
            let from = sides.pop()?;
            // One value per key column on each side.
            if from.len() != types.len() || to.len() != types.len() {
                return None;
            }
            PartitionBound::Range { from, to }
        }
        2 => {
            let n = r.u32()? as usize;
            let mut values = Vec::with_capacity(n.min(MAX_STATS_VALUES));
            for _ in 0..n {
                values.push(match r.u8()? {
                    0 => Value::Null,
                    _ => r.value(&ty(0)?)?,
                });
            }
            PartitionBound::List(values)
        }
        3 => PartitionBound::Hash {
            modulus: r.u32()?,
            remainder: r.u32()?,
        },
        4 => PartitionBound::Default,
        _ => return None,
    };
    Some((
        key,
        Some(PartitionOf {
            parent,
            types: types.clone(),
            bound,
            detach_pending,
        }),
    ))
}

fn put_column_stats(out: &mut Vec<u8>, c: &ColumnStats) {
    out.extend_from_slice(&c.attnum.to_le_bytes());
    put_u32(out, c.ty.oid());
    out.extend_from_slice(&c.ty.typmod().to_le_bytes());
    out.extend_from_slice(&c.null_frac.to_le_bytes());
    out.extend_from_slice(&c.avg_width.to_le_bytes());
    out.extend_from_slice(&c.n_distinct.to_le_bytes());
    // ANALYZE made every value of the column's type from a stored row, so encoding them
    // cannot fail; a value that did would be dropped with its frequency, not logged torn.
    let mut values = Vec::new();
    let mut n = 0u32;
    for (v, f) in &c.mcv {
        let at = values.len();
        if access::tuple::encode_value(v, &c.ty, &mut values).is_ok() {
            values.extend_from_slice(&f.to_le_bytes());
            n += 1;
        } else {
            values.truncate(at);
        }
    }
    put_u32(out, n);
    out.extend_from_slice(&values);
    values.clear();
    n = 0;
    for v in &c.histogram {
        let at = values.len();
        if access::tuple::encode_value(v, &c.ty, &mut values).is_ok() {
            n += 1;
        } else {
            values.truncate(at);
        }
    }
    put_u32(out, n);
    out.extend_from_slice(&values);
    match c.correlation {
        Some(x) => {
            out.push(1);
            out.extend_from_slice(&x.to_le_bytes());
        }
        None => out.push(0),
    }
}

fn read_column_stats(r: &mut Reader<'_>) -> Option<ColumnStats> {
    let attnum = u16::from_le_bytes(r.take(2)?.try_into().ok()?);
    let type_oid = r.u32()?;
    let typmod = r.u32()? as i32;
    let ty = DataType::from_oid(type_oid, typmod)?;
    let null_frac = r.f32()?;
    let avg_width = r.u32()? as i32;
    let n_distinct = r.f32()?;
    let n = r.u32()? as usize;
    let mut mcv = Vec::with_capacity(n.min(MAX_STATS_VALUES));
    for _ in 0..n {
        let v = r.value(&ty)?;
        mcv.push((v, r.f32()?));
    }
    let n = r.u32()? as usize;
    let mut histogram = Vec::with_capacity(n.min(MAX_STATS_VALUES));
    for _ in 0..n {
        histogram.push(r.value(&ty)?);
    }
    let correlation = match r.u8()? {
        0 => None,
        1 => Some(r.f32()?),
        _ => return None,
    };
    Some(ColumnStats {
        attnum,
        ty,
        null_frac,
        avg_width,
        n_distinct,
        mcv,
        histogram,
        correlation,
    })
}

/// Values a column's statistics list holds at most (`default_statistics_target`'s limit,
/// plus the histogram's extra bound): a bound on what a corrupt count makes us reserve.
const MAX_STATS_VALUES: usize = 10_001;

/// The WAL payloads that carry `record`, the encoding of a [`Record::SetStats`] of
/// `table`: the record itself if it fits `max_payload`, else pieces of at most that.
pub(crate) fn encode_stats_pieces(table: Oid, record: Vec<u8>, max_payload: usize) -> Vec<Vec<u8>> {
    if record.len() <= max_payload {
        return vec![record];
    }
    assert!(
        max_payload > STATS_PIECE_HEADER_BYTES,
        "a piece must carry some of the record"
    );
    let share = max_payload - STATS_PIECE_HEADER_BYTES;
    let count = record.len().div_ceil(share);
    record
        .chunks(share)
        .enumerate()
        .map(|(i, bytes)| {
            let mut out = Vec::with_capacity(STATS_PIECE_HEADER_BYTES + bytes.len());
            out.push(KIND_STATS_PIECE);
            put_u32(&mut out, table);
            put_u32(&mut out, i as u32);
            out.push((i + 1 == count) as u8);
            out.extend_from_slice(bytes);
            out
        })
        .collect()
}

/// A piece made by [`encode_stats_pieces`]: its table, number, whether it is the last,
/// and its bytes; `None` if `payload` is another kind of record.
pub(crate) fn decode_stats_piece(payload: &[u8]) -> Option<(Oid, u32, bool, &[u8])> {
    if payload.len() < STATS_PIECE_HEADER_BYTES || payload[0] != KIND_STATS_PIECE {
        return None;
    }
    let table = u32::from_le_bytes(payload[1..5].try_into().ok()?);
    let piece = u32::from_le_bytes(payload[5..9].try_into().ok()?);
    let last = payload[9] != 0;
    Some((table, piece, last, &payload[STATS_PIECE_HEADER_BYTES..]))
}

/// A count, then each record as u32 length and payload.
fn put_records<'a>(out: &mut Vec<u8>, records: impl IntoIterator<Item = &'a Record>) {
    let count_at = out.len();
    put_u32(out, 0);
    let mut count = 0u32;
    for r in records {
        let len_at = out.len();
        put_u32(out, 0);
        encode(r, out);
        let len = (out.len() - len_at - 4) as u32;
        out[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());
        count += 1;
    }
    out[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.bytes.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
    fn f32(&mut self) -> Option<f32> {
        self.take(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn value(&mut self, ty: &DataType) -> Option<Value> {
        access::tuple::decode_value(self.bytes, &mut self.pos, ty).ok()
    }
    fn string(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
}

fn read_columns(r: &mut Reader<'_>, ncols: usize) -> Option<Vec<usize>> {
    let n = r.u32()? as usize;
    let mut cols = Vec::new();
    for _ in 0..n {
        let c = r.u32()? as usize;
        if c >= ncols {
            return None;
        }
        cols.push(c);
    }
    Some(cols)
}

fn read_index(r: &mut Reader<'_>, ncols: usize) -> Option<IndexDesc> {
    let oid = r.u32()?;
    let rel = r.u32()?;
    let name = r.string()?;
    let flags = r.u8()?;
    let expressions = flags & (1 << INDEX_EXPRESSIONS_BIT) != 0;
    let columns = if expressions {
        let n = r.u32()? as usize;
        let mut cols = Vec::new();
        let mut k = 0;
        for _ in 0..n {
            match r.u32()? {
                u32::MAX => {
                    cols.push(crate::EXPRESSION_KEY + k);
                    k += 1;
                }
                c if (c as usize) < ncols => cols.push(c as usize),
                _ => return None,
            }
        }
        cols
    } else {
        read_columns(r, ncols)?
    };
    let mut index = IndexDesc {
        oid,
        rel,
        name,
        columns,
        unique: flags & 1 != 0,
        primary: flags & 2 != 0,
        constraint: flags & 4 != 0,
        ..IndexDesc::default()
    };
    if flags & (1 << INDEX_EXTENDED_BIT) != 0 {
        index.order = KeyOrder {
            desc: r.u32()?,
            nulls_first: r.u32()?,
        };
        index.include = read_columns(r, ncols)?;
        index.predicate = match r.u8()? {
            0 => None,
            1 => Some(r.string()?),
            _ => return None,
        };
    }
    if expressions {
        let n = r.u32()? as usize;
        for _ in 0..n {
            index.exprs.push(crate::IndexExpr {
                text: r.string()?,
                columns: read_columns(r, ncols)?,
                name: r.string()?,
            });
        }
        let keys = index
            .columns
            .iter()
            .filter(|&&c| IndexDesc::expression(c).is_some());
        if keys.count() != index.exprs.len() {
            return None;
        }
    }
    if flags & (1 << INDEX_PARENT_BIT) != 0 {
        index.parent = Some(r.u32()?);
    }
    Some(index)
}

fn read_action(r: &mut Reader<'_>) -> Option<FkAction> {
    Some(match r.u8()? {
        0 => FkAction::NoAction,
        1 => FkAction::Restrict,
        _ => return None,
    })
}

fn read_foreign_key(r: &mut Reader<'_>, ncols: usize) -> Option<ForeignKey> {
    let oid = r.u32()?;
    let name = r.string()?;
    let columns = read_columns(r, ncols)?;
    let ref_table = r.u32()?;
    // The referenced table's width is not known here.
    let ref_columns = read_columns(r, common::limits::MAX_COLUMNS)?;
    let ref_index = r.u32()?;
    let on_delete = read_action(r)?;
    let on_update = read_action(r)?;
    let match_full = r.u8()? != 0;
    (columns.len() == ref_columns.len()).then_some(ForeignKey {
        oid,
        name,
        columns,
        ref_table,
        ref_columns,
        ref_index,
        on_delete,
        on_update,
        match_full,
    })
}

pub(crate) fn decode(payload: &[u8]) -> Option<Record> {
    let mut r = Reader {
        bytes: payload,
        pos: 0,
    };
    let kind = r.u8()?;
    let record = match kind {
        KIND_CREATE_TABLE
        | KIND_CREATE_TABLE_WITH_INDEXES
        | KIND_CREATE_TABLE_V3
        | KIND_ALTER_TABLE
        | KIND_CREATE_TABLE_V4
        | KIND_ALTER_TABLE_V4
        | KIND_CREATE_TABLE_V5
        | KIND_ALTER_TABLE_V5
        | KIND_CREATE_TABLE_V6
        | KIND_ALTER_TABLE_V6
        | KIND_CREATE_TABLE_V7
        | KIND_ALTER_TABLE_V7
        | KIND_CREATE_TABLE_V8
        | KIND_ALTER_TABLE_V8
        | KIND_CREATE_TABLE_V9
        | KIND_ALTER_TABLE_V9
        | KIND_CREATE_TABLE_V10
        | KIND_ALTER_TABLE_V10 => {
            let v10 = matches!(kind, KIND_CREATE_TABLE_V10 | KIND_ALTER_TABLE_V10);
            let v9 = v10 || matches!(kind, KIND_CREATE_TABLE_V9 | KIND_ALTER_TABLE_V9);
            let v8 = v9 || matches!(kind, KIND_CREATE_TABLE_V8 | KIND_ALTER_TABLE_V8);
            let v7 = v8 || matches!(kind, KIND_CREATE_TABLE_V7 | KIND_ALTER_TABLE_V7);
            let v6 = v7 || matches!(kind, KIND_CREATE_TABLE_V6 | KIND_ALTER_TABLE_V6);
            let v5 = v6 || matches!(kind, KIND_CREATE_TABLE_V5 | KIND_ALTER_TABLE_V5);
            let v4 = v5 || matches!(kind, KIND_CREATE_TABLE_V4 | KIND_ALTER_TABLE_V4);
            let oid = r.u32()?;
            let rel = r.u32()?;
            let name = r.string()?;
            let ncols = r.u32()? as usize;
            let mut columns = Vec::with_capacity(ncols.min(common::limits::MAX_COLUMNS));
            for _ in 0..ncols {
                let name = r.string()?;
                let type_oid = r.u32()?;
                let typmod = r.u32()? as i32;
                let ty = DataType::from_oid(type_oid, typmod)?;
                let not_null = r.u8()? != 0;
                let default = match r.u8()? {
                    0 => None,
                    _ => Some(r.string()?),
                };
                let identity = match if v4 { r.u8()? } else { 0 } {
                    0 => None,
                    1 => Some(Identity::Always),
                    2 => Some(Identity::ByDefault),
                    _ => return None,
                };
                let dropped = match if v6 { r.u8()? } else { 0 } {
                    0 => false,
                    1 => true,
                    _ => return None,
                };
                let stat_target = if v8 {
                    match i16::from_le_bytes(r.take(2)?.try_into().ok()?) {
                        -1 => None,
                        t @ 0..=10000 => Some(t as u16),
                        _ => return None,
                    }
                } else {
                    None
                };
                let storage = if v10 {
                    common::types::Storage::from_code(r.u8()?)?
                } else {
                    ty.default_storage()
                };
                columns.push(ColumnDesc {
                    name,
                    ty,
                    not_null,
                    default,
                    identity,
                    dropped,
                    stat_target,
                    storage,
                });
            }
            let n = r.u32()? as usize;
            let mut indexes = Vec::new();
            for i in 0..n {
                indexes.push(if kind == KIND_CREATE_TABLE {
                    // The first format: keys only; their storage ids were reserved after
                    // the table's OID.
                    let name = r.string()?;
                    let primary = r.u8()? != 0;
                    let columns = read_columns(&mut r, columns.len())?;
                    let oid = oid + 1 + i as Oid;
                    IndexDesc {
                        oid,
                        rel: oid,
                        name,
                        columns,
                        unique: true,
                        primary,
                        constraint: true,
                        ..IndexDesc::default()
                    }
                } else {
                    read_index(&mut r, columns.len())?
                });
            }
            let mut options = TableOptions::default();
            let mut foreign_keys = Vec::new();
            if kind >= KIND_CREATE_TABLE_V3 {
                options.fillfactor = r.u8()?;
                options.autovacuum_enabled = r.u8()? != 0;
                let n = r.u32()? as usize;
                for _ in 0..n {
                    foreign_keys.push(read_foreign_key(&mut r, columns.len())?);
                }
            }
            let mut checks = Vec::new();
            if v5 {
                let n = r.u32()? as usize;
                for _ in 0..n {
                    checks.push(CheckConstraint {
                        oid: r.u32()?,
                        name: r.string()?,
                        expr: r.string()?,
                        columns: read_columns(&mut r, columns.len())?,
                        validated: r.u8()? != 0,
                    });
                }
            }
            let mut comments = Vec::new();
            if v7 {
                let n = r.u32()? as usize;
                for _ in 0..n {
                    comments.push(Comment {
                        object: r.u32()?,
                        sub: r.u32()? as i32,
                        text: r.string()?,
                    });
                }
            }
            let (partition_key, partition_of) = if v9 {
                read_partitioning(&mut r, &columns)?
            } else {
                (None, None)
            };
            let toast = if v10 {
                Some(r.u32()?).filter(|&t| t != 0)
            } else {
                None
            };
            let t = TableDesc {
                oid,
                rel,
                name,
                columns: Arc::new(columns),
                indexes,
                options,
                foreign_keys,
                checks,
                comments,
                index_leads: Vec::new(),
                partition_key,
                partition_of,
                alias: None,
                toast,
                stored_sizes: Vec::new(),
            };
            if matches!(
                kind,
                KIND_ALTER_TABLE
                    | KIND_ALTER_TABLE_V4
                    | KIND_ALTER_TABLE_V5
                    | KIND_ALTER_TABLE_V6
                    | KIND_ALTER_TABLE_V7
                    | KIND_ALTER_TABLE_V8
                    | KIND_ALTER_TABLE_V9
                    | KIND_ALTER_TABLE_V10
            ) {
                Record::AlterTable(t)
            } else {
                Record::CreateTable(t)
            }
        }
        KIND_DROP_TABLE => Record::DropTable(r.u32()?),
        KIND_NEXT_OID => Record::NextOid(r.u32()?),
        KIND_CREATE_INDEX => {
            let table = r.u32()?;
            // Column positions are checked against the table when the record is applied.
            let index = read_index(&mut r, common::limits::MAX_COLUMNS)?;
            Record::CreateIndex { table, index }
        }
        KIND_DROP_INDEX => Record::DropIndex {
            table: r.u32()?,
            index: r.u32()?,
        },
        KIND_CREATE_SEQUENCE => {
            let oid = r.u32()?;
            let rel = r.u32()?;
            let name = r.string()?;
            let ty = DataType::from_oid(r.u32()?, -1)?;
            let mut v = [0i64; 5];
            for x in &mut v {
                *x = i64::from_le_bytes(r.take(8)?.try_into().ok()?);
            }
            let [start, increment, min, max, cache] = v;
            let cycle = r.u8()? != 0;
            let owned_by = match r.u8()? {
                0 => None,
                _ => Some((r.u32()?, r.u32()? as usize)),
            };
            Record::CreateSequence(SequenceDesc {
                oid,
                rel,
                name,
                options: SequenceOptions {
                    ty,
                    start,
                    increment,
                    min,
                    max,
                    cache,
                    cycle,
                },
                owned_by,
            })
        }
        KIND_DROP_SEQUENCE => Record::DropSequence(r.u32()?),
        KIND_BATCH => Record::Batch(read_records(&mut r)?),
        KIND_SET_STATS | KIND_SET_STATS_V2 | KIND_SET_STATS_V3 | KIND_SET_STATS_V4 => {
            let table = r.u32()?;
            let reltuples = f64::from_le_bytes(r.take(8)?.try_into().ok()?);
            let relpages = r.u32()?;
            let relallvisible = if matches!(kind, KIND_SET_STATS_V3 | KIND_SET_STATS_V4) {
                r.u32()?
            } else {
                0
            };
            let frozen_xid = if kind == KIND_SET_STATS_V4 {
                u64::from_le_bytes(r.take(8)?.try_into().ok()?)
            } else {
                0
            };
            let mut columns = Vec::new();
            if kind != KIND_SET_STATS {
                let n = r.u32()? as usize;
                columns.reserve(n.min(common::limits::MAX_COLUMNS));
                for _ in 0..n {
                    columns.push(read_column_stats(&mut r)?);
                }
            }
            Record::SetStats {
                table,
                stats: RelStats {
                    reltuples,
                    relpages,
                    relallvisible,
                    frozen_xid,
                    columns: columns.into(),
                },
            }
        }
        KIND_COMMITTED => {
            let xid = u64::from_le_bytes(r.take(8)?.try_into().ok()?);
            Record::Committed {
                xid,
                records: read_records(&mut r)?,
            }
        }
        _ => return None,
    };
    (r.pos == payload.len()).then_some(record)
}

/// The WAL payloads that carry `committed`, the encoding of transaction `xid`'s
/// [`Record::Committed`], in pieces of at most `max_payload` bytes each (at least one).
pub(crate) fn encode_pieces(xid: u64, committed: &[u8], max_payload: usize) -> Vec<Vec<u8>> {
    assert!(
        max_payload > PIECE_HEADER_BYTES,
        "a piece must carry some of the record"
    );
    let share = max_payload - PIECE_HEADER_BYTES;
    let mut pieces: Vec<Vec<u8>> = committed
        .chunks(share)
        .enumerate()
        .map(|(i, bytes)| {
            let mut out = Vec::with_capacity(PIECE_HEADER_BYTES + bytes.len());
            out.push(KIND_COMMITTED_PIECE);
            out.extend_from_slice(&xid.to_le_bytes());
            put_u32(&mut out, i as u32);
            out.extend_from_slice(bytes);
            out
        })
        .collect();
    if pieces.is_empty() {
        let mut out = vec![KIND_COMMITTED_PIECE];
        out.extend_from_slice(&xid.to_le_bytes());
        put_u32(&mut out, 0);
        pieces.push(out);
    }
    pieces
}

/// A piece made by [`encode_pieces`]: its transaction id, number and bytes; `None` if
/// `payload` is another kind of record.
pub(crate) fn decode_piece(payload: &[u8]) -> Option<(u64, u32, &[u8])> {
    if payload.len() < PIECE_HEADER_BYTES || payload[0] != KIND_COMMITTED_PIECE {
        return None;
    }
    let xid = u64::from_le_bytes(payload[1..9].try_into().ok()?);
    let piece = u32::from_le_bytes(payload[9..13].try_into().ok()?);
    Some((xid, piece, &payload[PIECE_HEADER_BYTES..]))
}

fn read_records(r: &mut Reader<'_>) -> Option<Vec<Record>> {
    let n = r.u32()? as usize;
    let mut records = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        let len = r.u32()? as usize;
        records.push(decode(r.take(len)?)?);
    }
    Some(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trip_and_torn_tail() {
        let t = TableDesc {
            oid: 16384,
            rel: 16384,
            name: "t".into(),
            columns: vec![
                ColumnDesc {
                    name: "c".into(),
                    ty: DataType::Bpchar(Some(3)),
                    not_null: true,
                    default: Some("'x'".into()),
                    identity: Some(Identity::ByDefault),
                    dropped: false,
                    stat_target: None,
                    storage: common::types::Storage::External,
                },
                ColumnDesc {
                    name: crate::dropped_column_name(2),
                    ty: DataType::Int4,
                    not_null: false,
                    default: None,
                    identity: None,
                    dropped: true,
                    stat_target: None,
                    storage: common::types::Storage::Plain,
                },
            ]
            .into(),
            indexes: vec![IndexDesc {
                oid: 16385,
                rel: 16385,
                name: "t_pkey".into(),
                columns: vec![0],
                unique: true,
                primary: true,
                constraint: true,
                ..IndexDesc::default()
            }],
            options: TableOptions {
                fillfactor: 70,
                autovacuum_enabled: false,
            },
            foreign_keys: vec![ForeignKey {
                oid: 16386,
                name: "t_c_fkey".into(),
                columns: vec![0],
                ref_table: 16300,
                ref_columns: vec![2],
                ref_index: 16301,
                on_delete: FkAction::Restrict,
                on_update: FkAction::NoAction,
                match_full: true,
            }],
            checks: vec![CheckConstraint {
                oid: 16387,
                name: "t_c_check".into(),
                expr: "c <> 'y'".into(),
                columns: vec![0],
                validated: false,
            }],
            comments: vec![
                Comment {
                    object: 16384,
                    sub: 0,
                    text: "a table".into(),
                },
                Comment {
                    object: 16384,
                    sub: 1,
                    text: "its column".into(),
                },
            ],
            index_leads: Vec::new(),
            partition_key: None,
            partition_of: None,
            alias: None,
            toast: Some(16390),
            stored_sizes: Vec::new(),
        };
        let partitioned = TableDesc {
            partition_key: Some(PartitionKey::of_columns(
                PartitionStrategy::Range,
                vec![0, 1],
            )),
            ..t.clone()
        };
        let bound = |bound| TableDesc {
            partition_of: Some(PartitionOf {
                parent: 16000,
                types: vec![t.columns[0].ty, t.columns[0].ty],
                bound,
                detach_pending: None,
            }),
            ..t.clone()
        };
        let detaching = TableDesc {
            partition_of: Some(PartitionOf {
                parent: 16000,
                types: vec![DataType::Int4],
                bound: PartitionBound::List(vec![Value::Int4(3)]),
                detach_pending: Some(1 << 40),
            }),
            ..t.clone()
        };
        let by_expression = TableDesc {
            partition_key: Some(PartitionKey {
                strategy: PartitionStrategy::Hash,
                columns: vec![EXPRESSION_KEY, 0, EXPRESSION_KEY + 1],
                exprs: vec![
                    KeyExpr {
                        text: "lower(c)".into(),
                        columns: vec![0],
                        ty: DataType::Text,
                    },
                    KeyExpr {
                        text: "c || d".into(),
                        columns: vec![0, 1],
                        ty: DataType::Varchar(Some(7)),
                    },
                ],
            }),
            ..t.clone()
        };
        for rec in [
            Record::AlterTable(t.clone()),
            Record::CreateTable(partitioned),
            Record::CreateTable(by_expression),
            Record::CreateTable(bound(PartitionBound::Range {
                from: vec![
                    RangeDatum::MinValue,
                    RangeDatum::Value(Value::Bpchar("ab ".into())),
                ],
                to: vec![
                    RangeDatum::Value(Value::Bpchar("zz ".into())),
                    RangeDatum::MaxValue,
                ],
            })),
            Record::CreateTable(bound(PartitionBound::List(vec![
                Value::Bpchar("a  ".into()),
                Value::Null,
            ]))),
            Record::CreateTable(bound(PartitionBound::Hash {
                modulus: 8,
                remainder: 3,
            })),
            Record::AlterTable(bound(PartitionBound::Default)),
            Record::AlterTable(detaching),
            Record::CreateIndex {
                table: 16384,
                index: IndexDesc {
                    oid: 16390,
                    rel: 16390,
                    name: "t_c_idx".into(),
                    columns: vec![0],
                    unique: false,
                    primary: false,
                    constraint: false,
                    ..IndexDesc::default()
                },
            },
            Record::CreateIndex {
                table: 16384,
                index: IndexDesc {
                    check_xmin: 0,
                    oid: 16391,
                    rel: 16391,
                    name: "t_c_idx1".into(),
                    columns: vec![0, 1],
                    unique: true,
                    primary: false,
                    constraint: false,
                    order: KeyOrder {
                        desc: 1,
                        nulls_first: 2,
                    },
                    include: vec![1, 0],
                    predicate: Some("c > 'a'".into()),
                    exprs: Vec::new(),
                    parent: Some(16380),
                },
            },
            Record::CreateIndex {
                table: 16384,
                index: IndexDesc {
                    oid: 16392,
                    rel: 16392,
                    name: "t_lower_expr_idx".into(),
                    columns: vec![crate::EXPRESSION_KEY, 0, crate::EXPRESSION_KEY + 1],
                    unique: true,
                    exprs: vec![
                        crate::IndexExpr {
                            text: "lower(c)".into(),
                            columns: vec![0],
                            name: "lower".into(),
                        },
                        crate::IndexExpr {
                            text: "c || c".into(),
                            columns: vec![0],
                            name: "expr".into(),
                        },
                    ],
                    ..IndexDesc::default()
                },
            },
            Record::DropIndex {
                table: 16384,
                index: 16390,
            },
            Record::SetStats {
                table: 16384,
                stats: RelStats {
                    reltuples: 1234.5,
                    relpages: 17,
                    relallvisible: 9,
                    frozen_xid: 4_000_000_007,
                    columns: vec![
                        ColumnStats {
                            attnum: 2,
                            ty: DataType::Int4,
                            null_frac: 0.5,
                            avg_width: 4,
                            n_distinct: 3.0,
                            mcv: vec![(Value::Int4(7), 0.25), (Value::Int4(-1), 0.125)],
                            histogram: vec![],
                            correlation: None,
                        },
                        ColumnStats {
                            attnum: 3,
                            ty: DataType::Varchar(Some(10)),
                            null_frac: 0.0,
                            avg_width: 6,
                            n_distinct: -1.0,
                            mcv: vec![],
                            histogram: vec![Value::Text("ab".into()), Value::Text("zz".into())],
                            correlation: Some(0.75),
                        },
                    ]
                    .into(),
                },
            },
        ] {
            assert_eq!(decode(&frame(&rec)[8..]), Some(rec));
        }
        let rec = Record::CreateTable(t);
        let f = frame(&rec);
        let (payload, next) = frame_at(&f, 0).unwrap();
        assert_eq!(next, f.len());
        assert_eq!(decode(payload), Some(rec));
        // Every truncation of a frame is detected as torn, never misread.
        for cut in 0..f.len() {
            assert!(frame_at(&f[..cut], 0).is_none(), "cut at {cut}");
        }
        // A flipped bit fails the CRC.
        let mut bad = f.clone();
        bad[10] ^= 1;
        assert!(frame_at(&bad, 0).is_none());
    }

    #[test]
    fn statistics_in_pieces_join_back() {
        let record: Vec<u8> = (0..1000u32).flat_map(|i| i.to_le_bytes()).collect();
        assert_eq!(
            encode_stats_pieces(9, record.clone(), 4000),
            vec![record.clone()]
        );
        let pieces = encode_stats_pieces(9, record.clone(), 1000);
        assert_eq!(
            pieces.len(),
            4000usize.div_ceil(1000 - STATS_PIECE_HEADER_BYTES)
        );
        let mut joined = Vec::new();
        for (i, p) in pieces.iter().enumerate() {
            assert!(p.len() <= 1000);
            let (table, n, last, share) = decode_stats_piece(p).unwrap();
            assert_eq!((table, n as usize, last), (9, i, i + 1 == pieces.len()));
            assert!(decode(p).is_none());
            joined.extend_from_slice(share);
        }
        assert_eq!(joined, record);
    }

    #[test]
    fn a_committed_record_in_pieces_joins_back() {
        let record = Record::Committed {
            xid: 77,
            records: (0..50).map(Record::DropTable).collect(),
        };
        let mut bytes = Vec::new();
        encode(&record, &mut bytes);
        for max in [PIECE_HEADER_BYTES + 1, 40, bytes.len() + 100] {
            let pieces = encode_pieces(77, &bytes, max);
            let mut joined = Vec::new();
            for (i, p) in pieces.iter().enumerate() {
                assert!(p.len() <= max);
                let (xid, n, share) = decode_piece(p).unwrap();
                assert_eq!((xid, n as usize), (77, i));
                joined.extend_from_slice(share);
            }
            assert_eq!(decode(&joined), Some(record.clone()), "pieces of {max}");
        }
        // No piece is mistaken for a record, and no record for a piece.
        assert!(decode(&encode_pieces(77, &bytes, 40)[0]).is_none());
        assert!(decode_piece(&bytes).is_none());
        assert_eq!(encode_pieces(5, &[], 40).len(), 1);
    }
}
