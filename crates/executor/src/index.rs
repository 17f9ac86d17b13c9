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
use catalog::{IndexDesc, NewIndex, NewKey, TableDesc};
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

fn key_text(
    text: &common::value::TextContext,
    table: &TableDesc,
    index: &IndexDesc,
    key: &[Value],
) -> String {
    columns_key_text(text, table, &index.columns, key)
}

/// `Key (a, b)=(1, x)` for `key`, the values of `columns` of `table`.
pub(crate) fn columns_key_text(
    text: &common::value::TextContext,
    table: &TableDesc,
    columns: &[usize],
    key: &[Value],
) -> String {
    let names: Vec<&str> = columns
        .iter()
        .map(|&c| table.columns[c].name.as_str())
        .collect();
    let vals: Vec<String> = key
        .iter()
        .map(|v| v.to_text(text).unwrap_or_else(|| "null".into()))
        .collect();
    format!("Key ({})=({})", names.join(", "), vals.join(", "))
}

/// 23505 as PostgreSQL words it for a key that is already there.
pub(crate) fn unique_violation(
    text: &common::value::TextContext,
    table: &TableDesc,
    index: &IndexDesc,
    key: &[Value],
) -> PgError {
    PgError::new(
        SqlState::UNIQUE_VIOLATION,
        format!(
            "duplicate key value violates unique constraint \"{}\"",
            index.name
        ),
    )
    .with_detail(format!(
        "{} already exists.",
        key_text(text, table, index, key)
    ))
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
                return Err(unique_violation(cx.session.text(), table, index, &key));
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

/// The entries a new index over `probe.columns` gets: one per tuple version (readers
/// check versions against their snapshots). For a unique index, the keys of versions
/// that are live or may yet be must differ (23505 naming the index); `not_null` also
/// refuses a NULL in such a version (23502, ADD PRIMARY KEY's SET NOT NULL).
fn index_entries(
    cx: &ExecContext,
    table: &TableDesc,
    probe: &IndexDesc,
    not_null: bool,
) -> PgResult<Vec<(Vec<Value>, ItemPointer)>> {
    let types = table.column_types();
    let mut entries = Vec::new();
    let mut live = Vec::new();
    for item in heapam::HeapScan::new(cx.pool, table.rel)? {
        let (tid, bytes) = item?;
        let h = access::tuple::header(&bytes)?;
        if visibility::aborted_insert(&h, cx.tx)? {
            continue;
        }
        let key = key_of(&access::tuple::decode(&bytes, &types)?, probe);
        if (probe.unique || not_null) && visibility::liveness(&h, cx.tx)? != Liveness::Dead {
            if not_null && let Some(k) = key.iter().position(Value::is_null) {
                let column = &table.columns[probe.columns[k]].name;
                return Err(PgError::new(
                    SqlState::NOT_NULL_VIOLATION,
                    format!(
                        "column \"{column}\" of relation \"{}\" contains null values",
                        table.name
                    ),
                ));
            }
            // Keys with a NULL never conflict.
            if probe.unique && !key.iter().any(Value::is_null) {
                live.push(RowKey(key.clone()));
            }
        }
        entries.push((key, tid));
    }
    // Equal under the btree's order, not bytewise: 1.0 and 1.00, '1 mon' and '30 days'
    // are duplicates.
    live.sort();
    if let Some(dup) = live.windows(2).find(|w| w[0] == w[1]) {
        return Err(PgError::new(
            SqlState::UNIQUE_VIOLATION,
            format!("could not create unique index \"{}\"", probe.name),
        )
        .with_detail(format!(
            "{} is duplicated.",
            key_text(cx.session.text(), table, probe, &dup[0].0)
        )));
    }
    Ok(entries)
}

/// CREATE INDEX: read the table, check uniqueness, then record the index in the catalog,
/// create its file and bulk-build it (one sorted pass, not row-by-row inserts).
pub(crate) fn create_index(cx: &ExecContext, table: &TableDesc, new: NewIndex) -> PgResult<()> {
    let name = match &new.name {
        Some(n) => n.clone(),
        None => cx.catalog.choose_index_name(cx.tx, table, &new),
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
    let entries = index_entries(cx, table, &probe, false)?;
    cx.catalog.create_index(
        cx.tx,
        table.oid,
        NewIndex {
            name: Some(name),
            ..new
        },
        |index| build_index(cx, index, entries),
    )?;
    Ok(())
}

/// ALTER TABLE ADD PRIMARY KEY | UNIQUE: as CREATE UNIQUE INDEX, and a primary key's
/// columns must hold no NULL (they become NOT NULL with it, in one catalog change).
pub(crate) fn add_key(cx: &ExecContext, table: &TableDesc, key: NewKey) -> PgResult<()> {
    let name = match &key.name {
        Some(n) => n.clone(),
        None => cx.catalog.choose_key_name(cx.tx, table, &key),
    };
    let probe = IndexDesc {
        oid: 0,
        rel: 0,
        name: name.clone(),
        columns: key.columns.clone(),
        unique: true,
        primary: key.primary,
        constraint: true,
    };
    let entries = index_entries(cx, table, &probe, key.primary)?;
    cx.catalog.add_key(
        cx.tx,
        table.oid,
        NewKey {
            name: Some(name),
            ..key
        },
        |index| build_index(cx, index, entries),
    )?;
    Ok(())
}

fn build_index(
    cx: &ExecContext,
    index: &IndexDesc,
    entries: Vec<(Vec<Value>, ItemPointer)>,
) -> PgResult<()> {
    cx.pool.create_relation(index.rel)?;
    btree(cx, index).build(index.columns.len(), entries)?;
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
