//! Indexes from the executor's side: adding the entries of every new tuple version to
//! every index of its table, with the unique checks (building one is
//! `commands::index`'s).
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
use catalog::{IndexDesc, TableDesc};
use common::{ItemPointer, PgError, PgResult, SqlState, Value};
use sql::bound::BoundIndexPredicate;

use crate::ExecContext;

/// The btree behind `index`.
pub(crate) fn btree<'a>(cx: &ExecContext<'a>, index: &'a IndexDesc) -> BTree<'a> {
    index.btree(cx.pool, cx.roots)
}

/// The index key of a heap row.
pub(crate) fn key_of(row: &[Value], index: &IndexDesc) -> Vec<Value> {
    index.columns.iter().map(|&c| row[c].clone()).collect()
}

/// What `index` stores for a heap row: its key, then its INCLUDE columns.
pub(crate) fn entry_of(row: &[Value], index: &IndexDesc) -> Vec<Value> {
    index.stored_columns().map(|c| row[c].clone()).collect()
}

pub(crate) fn key_text(
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
    let entry = entry_of(row, index);
    let tree = btree(cx, index);
    if !index.unique {
        return tree.insert(&entry, tid);
    }
    loop {
        let mut in_doubt = None;
        let outcome = tree.insert_unique(&entry, tid, |other| {
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
                let key = &entry[..index.columns.len()];
                return Err(unique_violation(cx.session.text(), table, index, key));
            }
        }
    }
}

/// Add the entries of a new tuple version to every index of its table; a partial index
/// gets one where its condition (in `predicates`) is true for the row.
pub(crate) fn insert_entries(
    cx: &ExecContext,
    table: &TableDesc,
    row: &[Value],
    tid: ItemPointer,
    predicates: &[BoundIndexPredicate],
) -> PgResult<()> {
    for index in &table.indexes {
        if index.predicate.is_some() && !in_partial_index(cx, index, predicates, row)? {
            continue;
        }
        insert_entry(cx, table, index, row, tid)?;
    }
    Ok(())
}

/// Does `row` belong in the partial index `index`: is its condition true?
pub(crate) fn in_partial_index(
    cx: &ExecContext,
    index: &IndexDesc,
    predicates: &[BoundIndexPredicate],
    row: &[Value],
) -> PgResult<bool> {
    let Some(p) = predicates.iter().find(|p| p.index == index.oid) else {
        // Bound with the statement from the same table descriptor: never missing.
        return Err(PgError::internal(format!(
            "no predicate bound for partial index \"{}\"",
            index.name
        )));
    };
    Ok(cx.env().eval(&p.expr, row)? == Value::Bool(true))
}

/// The predicates of `table`'s partial indexes bound over its row, for a write the
/// executor makes itself (not bound with a statement: ADD COLUMN's fill).
pub(crate) fn bind_predicates(
    cx: &ExecContext,
    table: &TableDesc,
) -> PgResult<Vec<BoundIndexPredicate>> {
    table
        .indexes
        .iter()
        .filter_map(|i| i.predicate.as_ref().map(|p| (i.oid, p)))
        .map(|(index, text)| {
            Ok(BoundIndexPredicate {
                index,
                expr: sql::binder::bind_index_predicate(
                    &cx.session.catalog,
                    table,
                    text,
                    cx.session.info,
                )?,
            })
        })
        .collect()
}
