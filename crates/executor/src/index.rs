//! Indexes from the executor's side: building one (CREATE INDEX), and adding the entries
//! of every new tuple version to every index of its table, with the unique checks.
//!
//! MVCC: an index entry points at one tuple version and outlives it; a reader checks the
//! version against its snapshot (`heapam::heap_fetch_visible`). Deleting a row removes no
//! entry (VACUUM does, once no snapshot can see the version). A unique check therefore
//! asks of each equal entry's version whether it is live for everyone
//! (`visibility::liveness`): committed and not deleted is a conflict, in doubt (a running
//! transaction inserted or deleted it) waits for that transaction and looks again, as
//! PostgreSQL's `_bt_check_unique` does.

use access::heapam;
use access::nbtree::{BTree, UniqueInsert};
use access::visibility::{self, Liveness};
use catalog::{IndexDesc, NewIndex, TableDesc};
use common::{ItemPointer, PgError, PgResult, SqlState, Value};

use crate::ExecContext;
use crate::sortkey::RowKey;

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

/// Add the entry (`key` of `row`, `tid`) to `index`; for a unique index, first make sure
/// no other live version has an equal key, waiting out transactions that might still
/// commit one (23505 otherwise).
fn insert_entry(
    cx: &ExecContext,
    table: &TableDesc,
    index: &IndexDesc,
    row: &[Value],
    tid: ItemPointer,
) -> PgResult<()> {
    let key = key_of(row, index);
    let tree = btree(cx, index);
    if !index.unique {
        return tree.insert(&key, tid);
    }
    loop {
        let mut in_doubt = None;
        let outcome = tree.insert_unique(&key, tid, |other| {
            let Some(bytes) = heapam::heap_fetch(cx.pool, table.rel, other)? else {
                return Ok(false);
            };
            let h = access::tuple::header(&bytes)?;
            Ok(match visibility::liveness(&h, cx.tx)? {
                Liveness::Dead => false,
                Liveness::Live => true,
                Liveness::InDoubt(xid) => {
                    in_doubt = Some(xid);
                    true
                }
            })
        })?;
        match (outcome, in_doubt) {
            (UniqueInsert::Inserted, _) => return Ok(()),
            (UniqueInsert::Conflict(_), Some(xid)) => {
                crate::wait_for_writer(cx.tx, table, xid, false)?;
            }
            (UniqueInsert::Conflict(_), None) => {
                return Err(unique_violation(table, index, &key));
            }
        }
    }
}

/// Add the entries of a new tuple version to every index of its table.
pub(crate) fn insert_entries(
    cx: &ExecContext,
    table: &TableDesc,
    row: &[Value],
    tid: ItemPointer,
) -> PgResult<()> {
    for index in &table.indexes {
        insert_entry(cx, table, index, row, tid)?;
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
    // Every version gets an entry (readers check versions against their snapshots); the
    // uniqueness check counts those that are live or may yet be.
    let types = table.column_types();
    let mut entries = Vec::new();
    let mut live = Vec::new();
    for item in heapam::HeapScan::new(cx.pool, table.rel)? {
        let (tid, bytes) = item?;
        let h = access::tuple::header(&bytes)?;
        let key = key_of(&access::tuple::decode(&bytes, &types)?, &probe);
        if new.unique && visibility::liveness(&h, cx.tx)? != Liveness::Dead {
            live.push(key.clone());
        }
        entries.push((key, tid));
    }
    if new.unique {
        // Equal under the btree's order, not bytewise: 1.0 and 1.00, '1 mon' and
        // '30 days' are duplicates. Keys with a NULL never conflict.
        let mut keys: Vec<RowKey> = live
            .into_iter()
            .filter(|k| !k.iter().any(Value::is_null))
            .map(RowKey)
            .collect();
        keys.sort();
        if let Some(dup) = keys.windows(2).find(|w| w[0] == w[1]) {
            return Err(PgError::new(
                SqlState::UNIQUE_VIOLATION,
                format!("could not create unique index \"{name}\""),
            )
            .with_detail(format!(
                "{} is duplicated.",
                key_text(table, &probe, &dup[0].0)
            )));
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
