//! Indexes from the executor's side: adding the entries of every new tuple version to
//! every index of its table, with the unique checks (building one is
//! `commands::index`'s).
//!
//! MVCC: an index entry points at a row's HOT chain (one version, or the versions an
//! update that changed no entry kept on its page, access rule 11) and outlives it; a
//! reader checks the chain's versions against its snapshot (`heapam::heap_hot_fetch`).
//! Deleting a row removes no entry (VACUUM does, once no snapshot can see the version).
//! A unique check therefore asks of each equal entry's chain whether it is live for
//! everyone (`visibility::liveness`): committed and not deleted is a conflict, in doubt
//! (a running transaction inserted or deleted it) waits for that transaction and looks
//! again, as PostgreSQL's `_bt_check_unique` does.

use access::heapam;
use access::nbtree::{BTree, UniqueInsert};
use access::visibility::{self, Liveness};
use catalog::{IndexDesc, TableDesc};
use common::{ItemPointer, PgError, PgResult, SqlState, Value};
use sql::bound::BoundIndexExprs;

use crate::ExecContext;

/// The btree behind `index`.
pub(crate) fn btree<'a>(cx: &ExecContext<'a>, index: &'a IndexDesc) -> BTree<'a> {
    index.btree(cx.pool, cx.roots)
}

/// The index key of a heap row.
pub(crate) fn key_of(row: &[Value], index: &IndexDesc) -> Vec<Value> {
    index.columns.iter().map(|&c| row[c].clone()).collect()
}

/// What an index over plain columns stores for a heap row: its key, then its INCLUDE
/// columns ([`entry_with`] for one with expressions).
pub(crate) fn entry_of(row: &[Value], index: &IndexDesc) -> Vec<Value> {
    index.stored_columns().map(|c| row[c].clone()).collect()
}

/// `Key (a, lower(b))=(1, x)` for `key`, the values of `index`'s key columns, each named
/// as `pg_get_indexdef` names it (PostgreSQL's `BuildIndexValueDescription`).
pub(crate) fn key_text(
    s: &crate::session::Session,
    table: &TableDesc,
    index: &IndexDesc,
    key: &[Value],
) -> String {
    let names: Vec<String> = index
        .columns
        .iter()
        .map(|&c| crate::ruleutils::index_column(s, table, index, c, true))
        .collect();
    values_key_text(s.text(), names, key)
}

/// `Key (a, b)=(1, x)` for `key`, the values of `columns` of `table`.
pub(crate) fn columns_key_text(
    text: &common::value::TextContext,
    table: &TableDesc,
    columns: &[usize],
    key: &[Value],
) -> String {
    let names = columns
        .iter()
        .map(|&c| table.columns[c].name.clone())
        .collect();
    values_key_text(text, names, key)
}

fn values_key_text(text: &common::value::TextContext, names: Vec<String>, key: &[Value]) -> String {
    let vals: Vec<String> = key
        .iter()
        .map(|v| v.to_text(text).unwrap_or_else(|| "null".into()))
        .collect();
    format!("Key ({})=({})", names.join(", "), vals.join(", "))
}

/// 23505 as PostgreSQL words it for a key that is already there.
pub(crate) fn unique_violation(
    s: &crate::session::Session,
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
        key_text(s, table, index, key)
    ))
}

/// Add the entry (`key` of `row`, `tid`) to `index`; for a unique index, first make sure
/// no other live version has an equal key, waiting out transactions that might still
/// commit one (23505 otherwise).
fn insert_entry(
    cx: &ExecContext,
    table: &TableDesc,
    index: &IndexDesc,
    entry: Vec<Value>,
    tid: ItemPointer,
) -> PgResult<()> {
    let tree = btree(cx, index);
    if !index.unique {
        return tree.insert(&entry, tid);
    }
    loop {
        let mut in_doubt = None;
        let outcome = tree.insert_unique(&entry, tid, |other| {
            Ok(match chain_liveness(cx, table, other)? {
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
                return Err(unique_violation(cx.session, table, index, key));
            }
        }
    }
}

/// Whether the row index entry `tid` points at is live for everyone, in doubt or dead:
/// the first member of its HOT chain (access rule 11) that is not dead decides, as
/// PostgreSQL's `SnapshotDirty` search of the chain.
pub(crate) fn chain_liveness(
    cx: &ExecContext,
    table: &TableDesc,
    tid: ItemPointer,
) -> PgResult<Liveness> {
    let found = heapam::heap_hot_search(cx.pool, table.rel, tid, cx.tx, |_, _, h| {
        Ok(match visibility::liveness(h, cx.tx)? {
            Liveness::Dead => None,
            l => Some(l),
        })
    })?;
    Ok(found.unwrap_or(Liveness::Dead))
}

/// Add the entries of a new tuple version to every index of its table. A partial or
/// expression index reads its predicate and expressions in `bound` (bound with the
/// statement): it gets an entry where its predicate is true, keyed by the expressions'
/// values.
pub(crate) fn insert_entries(
    cx: &ExecContext,
    table: &TableDesc,
    row: &[Value],
    tid: ItemPointer,
    bound: &[BoundIndexExprs],
) -> PgResult<()> {
    for index in &table.indexes {
        let entry = if index.is_plain() {
            entry_of(row, index)
        } else {
            match entry_with(cx, index, bound_for(index, bound)?, row)? {
                Some(entry) => entry,
                None => continue,
            }
        };
        insert_entry(cx, table, index, entry, tid)?;
    }
    Ok(())
}

/// Whether every index of `table` holds the same entry for `new` as for `old`: the same
/// values, stored alike ([`Value::identical`]), and the same partial indexes holding
/// it. Then an update from `old` to `new` may be HOT (access rule 11): the entries
/// pointing at the row's chain stay true of every version in it.
pub(crate) fn entries_unchanged(
    cx: &ExecContext,
    table: &TableDesc,
    old: &[Value],
    new: &[Value],
    bound: &[BoundIndexExprs],
) -> PgResult<bool> {
    for index in &table.indexes {
        let same = if index.is_plain() {
            index
                .stored_columns()
                .all(|c| match (old.get(c), new.get(c)) {
                    (Some(a), Some(b)) => a.identical(b),
                    _ => false,
                })
        } else {
            let b = bound_for(index, bound)?;
            match (
                entry_with(cx, index, b, old)?,
                entry_with(cx, index, b, new)?,
            ) {
                (None, None) => true,
                (Some(x), Some(y)) => {
                    x.len() == y.len() && x.iter().zip(&y).all(|(a, b)| a.identical(b))
                }
                _ => false,
            }
        };
        if !same {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The predicate and expressions bound for `index`.
pub(crate) fn bound_for<'b>(
    index: &IndexDesc,
    bound: &'b [BoundIndexExprs],
) -> PgResult<&'b BoundIndexExprs> {
    // Bound with the statement from the same table descriptor: never missing.
    bound.iter().find(|b| b.index == index.oid).ok_or_else(|| {
        PgError::internal(format!("no expressions bound for index \"{}\"", index.name))
    })
}

/// What `index`, with its predicate and expressions bound in `bound`, stores for `row`:
/// `None` where the predicate is not true, else its key (each expression evaluated over
/// the row) and its INCLUDE columns.
pub(crate) fn entry_with(
    cx: &ExecContext,
    index: &IndexDesc,
    bound: &BoundIndexExprs,
    row: &[Value],
) -> PgResult<Option<Vec<Value>>> {
    let env = cx.env();
    if let Some(p) = &bound.predicate
        && !env.eval(p, row)?.is_true()
    {
        return Ok(None);
    }
    index
        .stored_columns()
        .map(|c| match IndexDesc::expression(c) {
            Some(k) => match bound.keys.get(k) {
                Some(e) => env.eval(e, row),
                None => Err(PgError::internal(format!(
                    "expression {k} of index \"{}\" is not bound",
                    index.name
                ))),
            },
            None => Ok(row[c].clone()),
        })
        .collect::<PgResult<Vec<_>>>()
        .map(Some)
}
