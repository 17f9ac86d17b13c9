//! INSERT, UPDATE and DELETE: compute every change first, check constraints, then apply.
//!
//! Statement atomicity without transactions (until the transactions issue lands): all new
//! rows are computed and every NOT NULL and unique check runs before the first page is
//! changed, so a statement that fails on a constraint or an expression error changes
//! nothing. Unique keys are checked by probing the unique indexes; the check follows
//! PostgreSQL's per-row order for UPDATE, so `SET id = id + 1` fails or succeeds exactly
//! where PostgreSQL's immediate unique check would. Every index is then kept in step with
//! the heap (`crate::index`).

use std::collections::HashSet;

use access::heapam;
use catalog::TableDesc;
use common::{ItemPointer, PgError, PgResult, SqlState, Value};
use sql::bound::{BoundDelete, BoundUpdate, Returning};

use crate::ExecContext;
use crate::eval::{Row, eval};
use crate::exec::TableScan;
use crate::index::{self, key_bytes, key_of};

fn check_not_null(table: &TableDesc, row: &[Value]) -> PgResult<()> {
    for (i, c) in table.columns.iter().enumerate() {
        if c.not_null && row[i].is_null() {
            let vals: Vec<String> = row
                .iter()
                .map(|v| v.to_text().unwrap_or_else(|| "null".into()))
                .collect();
            return Err(PgError::new(
                SqlState::NOT_NULL_VIOLATION,
                format!(
                    "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                    c.name, table.name
                ),
            )
            .with_detail(format!("Failing row contains ({}).", vals.join(", "))));
        }
    }
    Ok(())
}

/// PostgreSQL's immediate unique checks, row by row and index by index: a key conflicts
/// with a new key of an earlier row of the statement, or with a live row already in the
/// index other than those in `except` (rows whose old keys the statement has replaced).
struct UniqueCheck<'t> {
    indexes: Vec<&'t catalog::IndexDesc>,
    added: Vec<HashSet<Vec<u8>>>,
}

impl<'t> UniqueCheck<'t> {
    fn new(indexes: Vec<&'t catalog::IndexDesc>) -> UniqueCheck<'t> {
        let added = vec![HashSet::new(); indexes.len()];
        UniqueCheck { indexes, added }
    }

    fn row(
        &mut self,
        cx: &ExecContext,
        table: &TableDesc,
        row: &[Value],
        except: &HashSet<ItemPointer>,
    ) -> PgResult<()> {
        for (index, added) in self.indexes.iter().zip(self.added.iter_mut()) {
            let key = key_of(row, index);
            let Some(b) = key_bytes(&key) else { continue };
            if added.contains(&b) || index::live_matches(cx, table, index, &key, except)? {
                return Err(index::unique_violation(table, index, &key));
            }
            added.insert(b);
        }
        Ok(())
    }
}

fn returning_rows(r: Option<&Returning>, rows: &[Row]) -> PgResult<Vec<Row>> {
    let Some(r) = r else { return Ok(Vec::new()) };
    rows.iter()
        .map(|row| {
            r.exprs
                .iter()
                .map(|e| eval(e, row))
                .collect::<PgResult<Row>>()
        })
        .collect()
}

/// Insert `rows` (full width, already cast); returns the RETURNING rows.
pub fn insert(
    cx: &ExecContext,
    table: &TableDesc,
    rows: Vec<Row>,
    returning: Option<&Returning>,
) -> PgResult<Vec<Row>> {
    let types = table.column_types();
    // Length checks of char(n)/varchar(n) happened in the casts; NOT NULL and keys here.
    for row in &rows {
        check_not_null(table, row)?;
    }
    // Row by row, index by index, as PostgreSQL's immediate checks: an earlier row of the
    // same statement counts as present.
    let mut check = UniqueCheck::new(table.unique_indexes().collect());
    let none = HashSet::new();
    for row in &rows {
        check.row(cx, table, row, &none)?;
    }
    let out = returning_rows(returning, &rows)?;
    let encoded = rows
        .iter()
        .map(|r| access::tuple::encode(r, &types))
        .collect::<PgResult<Vec<_>>>()?;
    for (row, t) in rows.iter().zip(&encoded) {
        let tid = heapam::heap_insert(cx.pool, table.rel, t)?;
        index::insert_entries(cx, table, row, tid)?;
    }
    Ok(out)
}

/// The rows UPDATE or DELETE changes, with their addresses: through an index when the
/// filter constrains one (as a query would), else by a sequential scan.
fn matching_rows(
    cx: &ExecContext,
    table: &std::sync::Arc<TableDesc>,
    filter: Option<&sql::bound::Expr>,
) -> PgResult<Vec<(ItemPointer, Row)>> {
    let mut out = Vec::new();
    let passes = |row: &Row| -> PgResult<bool> {
        Ok(match filter {
            Some(f) => eval(f, row)? == Value::Bool(true),
            None => true,
        })
    };
    if let Some(f) = filter
        && let planner::Plan::IndexScan {
            index,
            lower,
            upper,
            ..
        } = planner::scan_path(table.clone(), f.clone())
    {
        let (Some(lo), Some(hi)) = (
            crate::exec::bound_values(&lower, table, &index)?,
            crate::exec::bound_values(&upper, table, &index)?,
        ) else {
            return Ok(out);
        };
        let types = table.column_types();
        let tree = index::btree(cx, &index);
        for entry in tree.scan(lo, hi, access::nbtree::ScanDirection::Forward)? {
            let (_, tid) = entry?;
            let Some(bytes) = heapam::heap_fetch(cx.pool, table.rel, tid)? else {
                continue;
            };
            let row = access::tuple::decode(&bytes, &types)?;
            if passes(&row)? {
                out.push((tid, row));
            }
        }
        return Ok(out);
    }
    let mut scan = TableScan::new(cx.pool, table.rel, table.column_types())?;
    while let Some((tid, row)) = scan.next_row()? {
        if passes(&row)? {
            out.push((tid, row));
        }
    }
    Ok(out)
}

/// Returns (rows changed, RETURNING rows).
pub fn update(cx: &ExecContext, u: &BoundUpdate) -> PgResult<(usize, Vec<Row>)> {
    let table = &u.table;
    let targets = matching_rows(cx, table, u.filter.as_ref())?;
    let mut new_rows = Vec::with_capacity(targets.len());
    for (_, old) in &targets {
        let mut new = old.clone();
        for (c, e) in &u.assignments {
            new[*c] = eval(e, old)?;
        }
        check_not_null(table, &new)?;
        new_rows.push(new);
    }
    let assigned: HashSet<usize> = u.assignments.iter().map(|(c, _)| *c).collect();
    let touches = |i: &catalog::IndexDesc| i.columns.iter().any(|c| assigned.contains(c));
    // A unique index none of whose columns is assigned keeps every key: nothing to check.
    let unique: Vec<_> = table.unique_indexes().filter(|i| touches(i)).collect();
    if !unique.is_empty() {
        // PostgreSQL's order: row by row, each row's old key gone before its new key is
        // checked against the rows not yet updated and the new keys of those that were.
        let mut processed: HashSet<ItemPointer> = HashSet::new();
        let mut check = UniqueCheck::new(unique);
        for ((tid, _), new) in targets.iter().zip(&new_rows) {
            processed.insert(*tid);
            check.row(cx, table, new, &processed)?;
        }
    }
    let out = returning_rows(u.returning.as_ref(), &new_rows)?;
    let types = table.column_types();
    let encoded = new_rows
        .iter()
        .map(|r| access::tuple::encode(r, &types))
        .collect::<PgResult<Vec<_>>>()?;
    for (((tid, old), new), t) in targets.iter().zip(&new_rows).zip(&encoded) {
        let new_tid = heapam::heap_update(cx.pool, table.rel, *tid, t)?;
        for index in &table.indexes {
            if new_tid == *tid && !touches(index) {
                continue;
            }
            let tree = index::btree(cx, index);
            tree.delete(&key_of(old, index), *tid)?;
            tree.insert(&key_of(new, index), new_tid)?;
        }
    }
    Ok((targets.len(), out))
}

pub fn delete(cx: &ExecContext, d: &BoundDelete) -> PgResult<(usize, Vec<Row>)> {
    let targets = matching_rows(cx, &d.table, d.filter.as_ref())?;
    let old: Vec<Row> = targets.iter().map(|(_, r)| r.clone()).collect();
    let out = returning_rows(d.returning.as_ref(), &old)?;
    for (tid, row) in &targets {
        index::delete_entries(cx, &d.table, row, *tid)?;
        heapam::heap_delete(cx.pool, d.table.rel, *tid)?;
    }
    Ok((targets.len(), out))
}
