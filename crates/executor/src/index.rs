//! Indexes from the executor's side: building one (CREATE INDEX), keeping every index of a
//! table in step with its heap (DML), and the unique checks that run before any change.
//!
//! Without transactions, an index entry always points at a live heap tuple: DML changes
//! the heap and its index entries in the same statement (heap first on insert, entries
//! first on delete). A crash in the middle of a statement can leave them out of step until
//! MVCC lands (docs/architecture.md §5); the unique check therefore still fetches the heap
//! tuple an equal entry points to, so a dangling entry never blocks an insert.

use std::collections::HashSet;
use std::ops::Bound;

use access::heapam;
use access::nbtree::{BTree, ScanDirection};
use catalog::{IndexDesc, NewIndex, TableDesc};
use common::{ItemPointer, PgError, PgResult, SqlState, Value};

use crate::ExecContext;
use crate::exec::TableScan;

/// The btree behind `index`.
pub(crate) fn btree<'a>(cx: &ExecContext<'a>, index: &'a IndexDesc) -> BTree<'a> {
    BTree::new(cx.pool, cx.roots, index.rel).with_name(&index.name)
}

/// The index key of a heap row.
pub(crate) fn key_of(row: &[Value], index: &IndexDesc) -> Vec<Value> {
    index.columns.iter().map(|&c| row[c].clone()).collect()
}

fn key_text(table: &TableDesc, index: &IndexDesc, key: &[Value]) -> String {
    let names: Vec<&str> = index
        .columns
        .iter()
        .map(|&c| table.columns[c].name.as_str())
        .collect();
    let vals: Vec<String> = key
        .iter()
        .map(|v| v.to_text().unwrap_or_else(|| "null".into()))
        .collect();
    format!("Key ({})=({})", names.join(", "), vals.join(", "))
}

/// 23505 as PostgreSQL words it for a key that is already there.
pub(crate) fn unique_violation(table: &TableDesc, index: &IndexDesc, key: &[Value]) -> PgError {
    PgError::new(
        SqlState::UNIQUE_VIOLATION,
        format!(
            "duplicate key value violates unique constraint \"{}\"",
            index.name
        ),
    )
    .with_detail(format!("{} already exists.", key_text(table, index, key)))
}

/// Canonical bytes of a key, equal exactly when the keys are equal under the btree's
/// ordering; `None` if any part is NULL (NULLs never conflict).
pub(crate) fn key_bytes(key: &[Value]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for v in key {
        let part = match v {
            Value::Null => return None,
            Value::Float4(f) => canonical_float(*f as f64),
            Value::Float8(f) => canonical_float(*f),
            v @ (Value::Int2(_) | Value::Int4(_) | Value::Int8(_)) => {
                v.as_i64().unwrap_or(0).to_string()
            }
            Value::Bool(b) => b.to_string(),
            v => v.as_str().unwrap_or_default().to_string(),
        };
        out.extend_from_slice(&(part.len() as u32).to_le_bytes());
        out.extend_from_slice(part.as_bytes());
    }
    Some(out)
}

fn canonical_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f == 0.0 {
        "0".into()
    } else {
        format!("{f:e}")
    }
}

/// Live heap tuples whose key in `index` equals `key`, other than those in `except`.
pub(crate) fn live_matches(
    cx: &ExecContext,
    table: &TableDesc,
    index: &IndexDesc,
    key: &[Value],
    except: &HashSet<ItemPointer>,
) -> PgResult<bool> {
    let tree = btree(cx, index);
    let scan = tree.scan(
        Bound::Included(key.to_vec()),
        Bound::Included(key.to_vec()),
        ScanDirection::Forward,
    )?;
    for entry in scan {
        let (_, tid) = entry?;
        if !except.contains(&tid) && heapam::heap_fetch(cx.pool, table.rel, tid)?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Insert the entries of a new heap tuple into every index of its table.
pub(crate) fn insert_entries(
    cx: &ExecContext,
    table: &TableDesc,
    row: &[Value],
    tid: ItemPointer,
) -> PgResult<()> {
    for index in &table.indexes {
        btree(cx, index).insert(&key_of(row, index), tid)?;
    }
    Ok(())
}

/// Remove the entries of a heap tuple from every index of its table.
pub(crate) fn delete_entries(
    cx: &ExecContext,
    table: &TableDesc,
    row: &[Value],
    tid: ItemPointer,
) -> PgResult<()> {
    for index in &table.indexes {
        btree(cx, index).delete(&key_of(row, index), tid)?;
    }
    Ok(())
}

/// CREATE INDEX: read the table, check uniqueness, then record the index in the catalog,
/// create its file and bulk-build it (one sorted pass, not row-by-row inserts).
pub(crate) fn create_index(cx: &ExecContext, table: &TableDesc, new: NewIndex) -> PgResult<()> {
    let name = match &new.name {
        Some(n) => n.clone(),
        None => cx.catalog.snapshot().choose_index_name(table, &new),
    };
    let probe = IndexDesc {
        oid: 0,
        rel: 0,
        name: name.clone(),
        columns: new.columns.clone(),
        unique: new.unique,
        primary: false,
        constraint: false,
    };
    let mut entries = Vec::new();
    let mut scan = TableScan::new(cx.pool, table.rel, table.column_types())?;
    while let Some((tid, row)) = scan.next_row()? {
        entries.push((key_of(&row, &probe), tid));
    }
    if new.unique {
        let mut seen = HashSet::new();
        for (key, _) in &entries {
            if let Some(b) = key_bytes(key)
                && !seen.insert(b)
            {
                return Err(PgError::new(
                    SqlState::UNIQUE_VIOLATION,
                    format!("could not create unique index \"{name}\""),
                )
                .with_detail(format!("{} is duplicated.", key_text(table, &probe, key))));
            }
        }
    }
    cx.catalog.create_index(
        table.oid,
        NewIndex {
            name: Some(name),
            ..new
        },
        |index| {
            cx.pool.create_relation(index.rel)?;
            btree(cx, index).build(index.columns.len(), entries)?;
            Ok(())
        },
    )?;
    Ok(())
}

/// Create a new table's file and the (empty) btrees of its constraint indexes. Their WAL
/// records precede the catalog's, which is flushed: all are durable together.
pub(crate) fn create_table_storage(cx: &ExecContext, table: &TableDesc) -> PgResult<()> {
    cx.pool.create_relation(table.rel)?;
    for index in &table.indexes {
        cx.pool.create_relation(index.rel)?;
        btree(cx, index).create(index.columns.len())?;
    }
    Ok(())
}

/// Remove an index's storage and cached root (after the catalog let go of it).
pub(crate) fn drop_index_storage(cx: &ExecContext, index: &IndexDesc) -> PgResult<()> {
    cx.roots.forget_root(index.rel);
    cx.pool.unlink_relation(index.rel)
}
