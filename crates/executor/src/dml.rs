//! INSERT, UPDATE and DELETE on MVCC heaps.
//!
//! A statement's rows are found with its snapshot, then changed one by one: INSERT adds
//! versions, UPDATE adds a new version and stamps the old one, DELETE stamps it. Unique
//! keys are checked as each new version's index entries go in (`crate::index`), so a
//! statement fails exactly where PostgreSQL's immediate checks fail (`SET id = id + 1`
//! included). A failed statement leaves its versions behind, stamped with its
//! transaction id (or its savepoint's), which the abort makes invisible: statement
//! atomicity is the transaction's (executor rule 5).
//!
//! A row some other transaction changed since the snapshot: wait for it to end
//! (`HeapWrite::BeingModified`); if it committed, READ COMMITTED follows the update to the
//! newest version and re-checks the WHERE clause there; REPEATABLE READ fails with 40001.

use access::heapam::{self, HeapWrite};
use catalog::TableDesc;
use common::{ItemPointer, PgError, PgResult, SqlState, Value};
use sql::bound::{BoundCheck, BoundDelete, BoundUpdate, Returning};

use crate::ExecContext;
use crate::eval::Row;
use crate::index;
use txn::Isolation;

pub(crate) fn check_not_null(
    text: &common::value::TextContext,
    table: &TableDesc,
    row: &[Value],
) -> PgResult<()> {
    for (i, c) in table.columns.iter().enumerate() {
        if c.not_null && row[i].is_null() {
            return Err(PgError::new(
                SqlState::NOT_NULL_VIOLATION,
                format!(
                    "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                    c.name, table.name
                ),
            )
            .with_detail(failing_row(text, table, row)));
        }
    }
    Ok(())
}

/// A new row's NOT NULL columns, then its CHECK constraints (in name order; NULL
/// passes), as PostgreSQL's `ExecConstraints`.
pub(crate) fn check_row(
    cx: &ExecContext,
    table: &TableDesc,
    checks: &[BoundCheck],
    row: &[Value],
) -> PgResult<()> {
    check_not_null(cx.session.text(), table, row)?;
    if checks.is_empty() {
        return Ok(());
    }
    let env = cx.env();
    for c in checks {
        if let Value::Bool(false) = env.eval(&c.expr, row)? {
            return Err(PgError::new(
                SqlState::CHECK_VIOLATION,
                format!(
                    "new row for relation \"{}\" violates check constraint \"{}\"",
                    table.name, c.name
                ),
            )
            .with_detail(failing_row(cx.session.text(), table, row)));
        }
    }
    Ok(())
}

/// The DETAIL of a constraint violation: `Failing row contains (1, null).` (dropped
/// columns left out).
fn failing_row(text: &common::value::TextContext, table: &TableDesc, row: &[Value]) -> String {
    let vals: Vec<String> = table
        .live_columns()
        .filter_map(|i| row.get(i))
        .map(|v| v.to_text(text).unwrap_or_else(|| "null".into()))
        .collect();
    format!("Failing row contains ({}).", vals.join(", "))
}

fn returning_rows(cx: &ExecContext, r: Option<&Returning>, rows: &[Row]) -> PgResult<Vec<Row>> {
    let Some(r) = r else { return Ok(Vec::new()) };
    let env = cx.env();
    rows.iter()
        .map(|row| {
            r.exprs
                .iter()
                .map(|e| env.eval(e, row))
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
    fks: &sql::bound::ForeignKeyChecks,
    checks: &[BoundCheck],
    predicates: &[sql::bound::BoundIndexExprs],
) -> PgResult<Vec<Row>> {
    let types = table.column_types();
    // Length checks of char(n)/varchar(n) happened in the casts; NOT NULL and CHECK
    // here, keys as each row goes in (PostgreSQL's immediate checks: an earlier row of
    // the same statement counts as present).
    for row in &rows {
        check_row(cx, table, checks, row)?;
    }
    let out = returning_rows(cx, returning, &rows)?;
    if rows.is_empty() {
        return Ok(out);
    }
    for row in &rows {
        insert_checked_row(cx, table, &types, row, predicates)?;
    }
    if !fks.outgoing.is_empty() {
        let refs: Vec<&[Value]> = rows.iter().map(|r| r.as_slice()).collect();
        crate::fkey::check_outgoing(cx, table, fks, &refs)?;
    }
    Ok(out)
}

/// Insert one full-width row whose NOT NULL constraints were checked: the heap tuple,
/// then its index entries (unique keys checked).
pub(crate) fn insert_checked_row(
    cx: &ExecContext,
    table: &TableDesc,
    types: &[common::DataType],
    row: &Row,
    predicates: &[sql::bound::BoundIndexExprs],
) -> PgResult<()> {
    let t = access::tuple::encode(row, types)?;
    let tid = heapam::heap_insert(
        cx.pool,
        table.rel,
        &t,
        cx.tx.xid()?,
        cx.tx.cid(),
        table.options.fillfactor,
    )?;
    index::insert_entries(cx, table, row, tid, predicates)
}

/// The rows UPDATE or DELETE changes, with their addresses: the planner's scan (`scan`,
/// with the statement's filter) run as any plan is, its rows carrying their addresses
/// (`Env::emit_tid`); under EXPLAIN ANALYZE `instrument` counts it as any node.
fn matching_rows(
    cx: &ExecContext,
    scan: &planner::Plan,
    instrument: Option<&crate::instrument::Instrumentation>,
) -> PgResult<Vec<(ItemPointer, Row)>> {
    let env = crate::exec::Env {
        emit_tid: true,
        instrument,
        ..cx.env()
    };
    let mut op = crate::exec::build(scan, env)?;
    let mut out = Vec::new();
    while let Some(mut row) = op.next()? {
        let tid = row
            .pop()
            .ok_or_else(|| common::PgError::internal("a target row without its address"))?;
        out.push((crate::exec::lock_rows::tid_of(&tid)?, row));
    }
    Ok(out)
}

fn passes(cx: &ExecContext, filter: Option<&sql::bound::Expr>, row: &Row) -> PgResult<bool> {
    Ok(match filter {
        Some(f) => cx.env().eval(f, row)?.is_true(),
        None => true,
    })
}

/// Where a row UPDATE or DELETE was about to change stands after trying.
enum Next {
    /// Changed, or nothing to change any more: go on with the next row.
    Done,
    /// Try again at this version (after waiting, or its newer version under READ
    /// COMMITTED) with this row.
    Retry(ItemPointer, Row),
}

/// What to do when a row's version could not be changed (`HeapWrite` other than `Done`):
/// wait for the transaction in the way and retry; under READ COMMITTED follow a committed
/// update to the newest version and re-check the WHERE clause on it (PostgreSQL's
/// EvalPlanQual); under REPEATABLE READ fail with 40001.
fn after_conflict(
    cx: &ExecContext,
    table: &TableDesc,
    filter: Option<&sql::bound::Expr>,
    tid: ItemPointer,
    row: Row,
    result: HeapWrite,
) -> PgResult<Next> {
    let rr = cx.tx.isolation() == Isolation::RepeatableRead;
    match result {
        HeapWrite::Done(_) | HeapWrite::SelfModified | HeapWrite::Invisible => Ok(Next::Done),
        HeapWrite::BeingModified(xid) => {
            crate::wait_for_writer(cx.tx, table, xid, false)?;
            Ok(Next::Retry(tid, row))
        }
        HeapWrite::Updated(None) if rr => Err(crate::serialization_failure("delete")),
        HeapWrite::Updated(Some(_)) if rr => Err(crate::serialization_failure("update")),
        HeapWrite::Updated(None) => Ok(Next::Done),
        HeapWrite::Updated(Some(newer)) => {
            let Some(bytes) = heapam::heap_fetch(cx.pool, table.rel, newer)? else {
                return Ok(Next::Done);
            };
            let row = access::tuple::decode(&bytes, &table.column_types())?;
            if passes(cx, filter, &row)? {
                Ok(Next::Retry(newer, row))
            } else {
                Ok(Next::Done)
            }
        }
    }
}

/// Returns (rows changed, RETURNING rows). `count`: EXPLAIN ANALYZE's counts of the scan.
pub fn update(
    cx: &ExecContext,
    u: &BoundUpdate,
    scan: &planner::Plan,
    instrument: Option<&crate::instrument::Instrumentation>,
) -> PgResult<(usize, Vec<Row>)> {
    let table = &u.table;
    let targets = matching_rows(cx, scan, instrument)?;
    let types = table.column_types();
    let xid = if targets.is_empty() { 0 } else { cx.tx.xid()? };
    let mut changed = Vec::with_capacity(targets.len());
    // The old rows whose new versions went in, for the foreign key checks.
    let mut replaced = Vec::new();
    for (tid, old) in targets {
        let (mut tid, mut old) = (tid, old);
        loop {
            let mut new = old.clone();
            for (c, e) in &u.assignments {
                new[*c] = cx.env().eval(e, &old)?;
            }
            check_row(cx, table, &u.checks, &new)?;
            let t = access::tuple::encode(&new, &types)?;
            let keys = table.keys_changed(&old, &new);
            let result = heapam::heap_update(cx.pool, table.rel, tid, &t, xid, cx.tx, keys)?;
            if let HeapWrite::Done(new_tid) = result {
                index::insert_entries(cx, table, &new, new_tid, &u.index_exprs)?;
                changed.push(new);
                if !u.fks.incoming.is_empty() {
                    replaced.push(old);
                }
                break;
            }
            match after_conflict(cx, table, u.filter.as_ref(), tid, old, result)? {
                Next::Done => break,
                Next::Retry(t, r) => (tid, old) = (t, r),
            }
        }
    }
    if !u.fks.is_empty() {
        let new: Vec<&[Value]> = changed.iter().map(|r| r.as_slice()).collect();
        crate::fkey::check_outgoing(cx, table, &u.fks, &new)?;
        let old: Vec<&[Value]> = replaced.iter().map(|r| r.as_slice()).collect();
        crate::fkey::check_incoming(cx, table, &u.fks, &old, &new)?;
    }
    let out = returning_rows(cx, u.returning.as_ref(), &changed)?;
    Ok((changed.len(), out))
}

pub fn delete(
    cx: &ExecContext,
    d: &BoundDelete,
    scan: &planner::Plan,
    instrument: Option<&crate::instrument::Instrumentation>,
) -> PgResult<(usize, Vec<Row>)> {
    let targets = matching_rows(cx, scan, instrument)?;
    let xid = if targets.is_empty() { 0 } else { cx.tx.xid()? };
    let mut deleted = Vec::with_capacity(targets.len());
    for (tid, row) in targets {
        let (mut tid, mut row) = (tid, row);
        loop {
            let result = heapam::heap_delete(cx.pool, d.table.rel, tid, xid, cx.tx)?;
            if let HeapWrite::Done(_) = result {
                deleted.push(row);
                break;
            }
            match after_conflict(cx, &d.table, d.filter.as_ref(), tid, row, result)? {
                Next::Done => break,
                Next::Retry(t, r) => (tid, row) = (t, r),
            }
        }
    }
    if !d.fks.incoming.is_empty() {
        let old: Vec<&[Value]> = deleted.iter().map(|r| r.as_slice()).collect();
        crate::fkey::check_incoming(cx, &d.table, &d.fks, &old, &[])?;
    }
    let out = returning_rows(cx, d.returning.as_ref(), &deleted)?;
    Ok((deleted.len(), out))
}
