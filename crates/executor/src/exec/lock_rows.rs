//! SELECT ... FOR UPDATE / FOR NO KEY UPDATE / FOR SHARE / FOR KEY SHARE: each row is
//! locked as it passes, after sorting and before LIMIT, as PostgreSQL's LockRows node does.
//!
//! A row's version gets `t_xmax` = this transaction with the lock bits (`heapam::heap_lock`),
//! which blocks writers and other lockers until this transaction ends. When another
//! transaction holds the row: wait for it (NOWAIT: 55P03; SKIP LOCKED: leave the row
//! out). When it was updated or deleted by a transaction that committed: under READ
//! COMMITTED the newest version replaces it if it still passes the WHERE clause (and is
//! locked in turn); under REPEATABLE READ, 40001 ("concurrent update", for a delete too,
//! as PostgreSQL words it).
//!
//! The four strengths conflict as PostgreSQL's (`common::RowLockMode`): FOR KEY SHARE
//! and FOR SHARE lockers share a row, FOR KEY SHARE also with FOR NO KEY UPDATE and with
//! an UPDATE that keeps the key. Several transactions holding one row hold it together
//! through a multixact (txn rule 8), as in PostgreSQL. FOR KEY SHARE of a row whose
//! update kept the key returns the version its snapshot saw, without waiting for the
//! updater or re-reading the row, as PostgreSQL does.

use access::heapam::{self, HeapWrite};
use catalog::TableDesc;
use common::{ItemPointer, PgError, PgResult, Value};
use sql::bound::{Expr, RowWait};
use txn::Isolation;

use crate::eval::Row;
use crate::exec::{Env, Operator};

/// A row's address as the hidden column a locking scan appends.
/// What a scan appends to each row when asked for its address (`Env::emit_tid`): the
/// row's tid, then its table's oid (a partition's, under a partitioned table), so a
/// write through a partitioned table finds the partition each row is in.
pub(crate) fn push_address(row: &mut Vec<Value>, tid: ItemPointer, table: common::Oid) {
    row.push(tid_value(tid));
    row.push(Value::Oid(table));
}

pub(crate) fn tid_value(tid: ItemPointer) -> Value {
    Value::Int8((i64::from(tid.block) << 16) | i64::from(tid.offset))
}

pub(crate) fn tid_of(v: &Value) -> PgResult<ItemPointer> {
    match v {
        Value::Int8(x) => Ok(ItemPointer {
            block: (*x >> 16) as u32,
            offset: (*x & 0xffff) as u16,
        }),
        other => Err(PgError::internal(format!(
            "a row address that is {other:?}"
        ))),
    }
}

pub(crate) struct LockRowsOp<'a> {
    pub input: Box<dyn Operator + 'a>,
    pub env: Env<'a>,
    pub table: &'a TableDesc,
    pub tid_column: usize,
    pub mode: common::RowLockMode,
    pub wait: RowWait,
    pub recheck: Option<&'a Expr>,
    pub exprs: &'a [Expr],
}

impl LockRowsOp<'_> {
    /// Lock `row` (its address in `tid_column`, its table's oid after it); the row to
    /// return, or `None` to leave it out.
    fn lock(&self, row: Row) -> PgResult<Option<Row>> {
        // Under a partitioned table, the row is in the partition the scan names.
        match row.get(self.tid_column + 1) {
            Some(&Value::Oid(oid)) if oid != self.table.oid => {
                let Some(partition) = self.env.session.catalog.table_by_oid(oid) else {
                    return Err(PgError::internal(format!(
                        "a locked row in relation {oid}, which is gone"
                    )));
                };
                self.lock_in(partition, row)
            }
            _ => self.lock_in(self.table, row),
        }
    }

    /// [`LockRowsOp::lock`] of a row of `table`.
    fn lock_in(&self, table: &TableDesc, mut row: Row) -> PgResult<Option<Row>> {
        let env = self.env;
        let rr = env.tx.isolation() == Isolation::RepeatableRead;
        let mut tid = tid_of(&row[self.tid_column])?;
        loop {
            let xid = env.tx.xid()?;
            match heapam::heap_lock(env.pool, table.rel, tid, xid, env.tx, self.mode)? {
                HeapWrite::Done(_) => return Ok(Some(row)),
                // Changed by this transaction since the snapshot, or never there.
                HeapWrite::SelfModified | HeapWrite::Invisible => return Ok(None),
                HeapWrite::BeingModified(other) => match self.wait {
                    RowWait::SkipLocked => return Ok(None),
                    RowWait::Nowait | RowWait::Block => {
                        let nowait = self.wait == RowWait::Nowait;
                        crate::wait_for_writer(env.tx, table, other, nowait)?;
                    }
                },
                // PostgreSQL's row locking says "update" for a delete too.
                HeapWrite::Moved => return Err(crate::moved_to_another_partition()),
                HeapWrite::Updated(_) if rr => return Err(crate::serialization_failure("update")),
                HeapWrite::Updated(None) => return Ok(None),
                HeapWrite::Updated(Some(newer)) => {
                    // READ COMMITTED: go on with the newest version, if it still matches.
                    let Some(bytes) = heapam::heap_fetch(env.pool, table.rel, newer)? else {
                        return Ok(None);
                    };
                    let (types, sizes) = (table.tuple_types(), &table.stored_sizes);
                    let mut base = super::scan::decode_row(&bytes, &types, None, env.pool, sizes)?;
                    push_address(&mut base, newer, table.oid);
                    if let Some(f) = self.recheck
                        && !self.env.eval(f, &base)?.is_true()
                    {
                        return Ok(None);
                    }
                    row = self
                        .exprs
                        .iter()
                        .map(|e| self.env.eval(e, &base))
                        .collect::<PgResult<Row>>()?;
                    tid = newer;
                }
            }
        }
    }
}

impl Operator for LockRowsOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        while let Some(row) = self.input.next()? {
            if let Some(row) = self.lock(row)? {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }
}
