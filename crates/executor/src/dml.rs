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
use std::sync::Arc;

use catalog::TableDesc;
use common::{ItemPointer, Oid, PgError, PgResult, SqlState, Value};
use sql::bound::{BoundCheck, BoundDelete, BoundUpdate, Returning};

use crate::ExecContext;
use crate::eval::Row;
use crate::index;
use crate::route::{Leaf, Router};
use crate::spill::RowStore;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
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
            .with_detail(crate::deparse::failing_row(text, table, row)));
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
            .with_detail(crate::deparse::failing_row(cx.session.text(), table, row)));
        }
    }
    Ok(())
}

/// Whether `row`, written to partition `t` directly, meets its partition constraint:
/// at each level up, the parent routes it to the table below (23514 otherwise).
pub(crate) fn check_partition_constraint(
    cx: &ExecContext,
    t: &TableDesc,
    row: &[Value],
) -> PgResult<()> {
    let catalog = &cx.session.catalog;
    let mut child = t.oid;
    let mut of = t.partition_of.as_ref();
    while let Some(p) = of {
        let parent = catalog.table_by_oid(p.parent);
        let key = parent.and_then(|t| t.partition_key.as_ref());
        let ok = match (parent, key) {
            // A partition whose DETACH is pending is out of the directory; its own
            // bound still holds its rows (partition rule 6).
            (Some(parent), Some(key)) if p.detach_pending.is_some() => {
                let values = cx.partition_key_values(parent, row)?;
                p.bound.tester(key.strategy)(&values)
            }
            (Some(parent), Some(key)) => {
                let values = cx.partition_key_values(parent, row)?;
                let routed = catalog
                    .partitions(parent.oid)
                    .and_then(|set| set.route(key.strategy, &values));
                routed == Some(child)
            }
            _ => true,
        };
        if !ok {
            return Err(PgError::new(
                SqlState::CHECK_VIOLATION,
                format!(
                    "new row for relation \"{}\" violates partition constraint",
                    t.name
                ),
            )
            .with_detail(crate::deparse::failing_row(cx.session.text(), t, row)));
        }
        child = p.parent;
        of = parent.and_then(|p| p.partition_of.as_ref());
    }
    Ok(())
}

/// `row`'s RETURNING values, kept after those before it in `out`.
fn add_returning(
    cx: &ExecContext,
    r: Option<&Returning>,
    row: &[Value],
    out: &mut RowStore,
) -> PgResult<()> {
    let Some(r) = r else { return Ok(()) };
    let env = cx.env();
    let values = r
        .exprs
        .iter()
        .map(|e| env.eval(e, row))
        .collect::<PgResult<Row>>()?;
    let bytes = crate::env::row_bytes(&values);
    out.push(values, bytes)
}

/// A store for rows a write keeps until its end: in memory up to `work_mem`, the rest
/// in a temporary file (executor rule 8).
fn row_store(cx: &ExecContext) -> RowStore {
    RowStore::new(
        crate::env::work_mem_bytes(&cx.env(), false),
        cx.pool.smgr().temp().clone(),
        Some(cx.session.temp.clone()),
    )
}

/// The rows a write keeps for its foreign key checks, which run once every row is
/// written (a row may reference one written after it, as PostgreSQL's after-row checks
/// allow), in a [`RowStore`]: a statement over millions of rows holds a bounded part of
/// them. Each record is a row; then, for an UPDATE whose table is referenced, its old
/// version; then, through a partitioned table, the partition it is in.
struct Kept {
    store: RowStore,
    width: usize,
    old: bool,
    leaf: bool,
}

/// The kept rows checked at a time.
const CHECK_BATCH: usize = 1000;

impl Kept {
    fn new(cx: &ExecContext, width: usize, old: bool, leaf: bool) -> Kept {
        Kept {
            store: row_store(cx),
            width,
            old,
            leaf,
        }
    }

    fn push(&mut self, mut row: Row, old: Option<Row>, leaf: Oid) -> PgResult<()> {
        if self.old {
            row.extend(old.ok_or_else(|| PgError::internal("a kept row without its old one"))?);
        }
        if self.leaf {
            row.push(Value::Oid(leaf));
        }
        let bytes = crate::env::row_bytes(&row);
        self.store.push(row, bytes)
    }

    /// Every kept row, in order, a batch at a time: `check(rows, their old versions,
    /// their partitions)`, the last two empty where not kept.
    fn check(self, mut check: impl FnMut(&[Row], &[Row], &[Oid]) -> PgResult<()>) -> PgResult<()> {
        let (width, old, leaf) = (self.width, self.old, self.leaf);
        let (mut rows, mut olds, mut leaves) = (Vec::new(), Vec::new(), Vec::new());
        let mut records = self.store.drain();
        loop {
            let record = records.next().transpose()?;
            let end = record.is_none();
            if let Some(mut r) = record {
                if leaf {
                    let Some(Value::Oid(oid)) = r.pop() else {
                        return Err(PgError::internal("a kept row without its partition"));
                    };
                    leaves.push(oid);
                }
                if old {
                    olds.push(r.split_off(width));
                }
                rows.push(r);
            }
            if rows.len() == CHECK_BATCH || (end && !rows.is_empty()) {
                check(&rows, &olds, &leaves)?;
                rows.clear();
                olds.clear();
                leaves.clear();
            }
            if end {
                return Ok(());
            }
        }
    }
}

/// What an INSERT, UPDATE or DELETE did: the rows it changed and its RETURNING rows.
/// Each row written is counted in its table's statistics as it is written
/// (`txn::Tx::count_write`, txn rule 10).
pub(crate) struct Written {
    pub rows: usize,
    /// RETURNING's rows, in order.
    pub returning: RowStore,
}

/// The rows of an INSERT ... SELECT's source inserted at a time, at most (and at most
/// this many bytes of them).
const INSERT_BATCH_ROWS: usize = 1000;
const INSERT_BATCH_BYTES: usize = 256 << 10;

/// INSERT the rows of `source`, a batch at a time, so a big INSERT ... SELECT holds one
/// batch (executor rule 8); the rows it writes are unseen by its own scan (their command
/// id). Each row is checked and goes in, then gives its RETURNING values, as in
/// PostgreSQL; foreign keys are checked once every row is in ([`Kept`]).
pub(crate) fn insert_from(
    cx: &ExecContext,
    insert: &sql::bound::BoundInsert,
    source: &mut dyn crate::exec::Operator,
) -> PgResult<Written> {
    let table = &insert.table;
    let types = table.column_types();
    let mut done = Written {
        rows: 0,
        returning: row_store(cx),
    };
    // Through a partitioned table, each row goes to its leaf partition, checked against
    // the leaf's constraints (`crate::route`).
    let mut router = table
        .partition_key
        .is_some()
        .then(|| Router::new(table.clone()));
    let mut keyed = Kept::new(cx, types.len(), false, router.is_some());
    loop {
        let rows = crate::exec::next_batch(source, INSERT_BATCH_ROWS, INSERT_BATCH_BYTES)?;
        if rows.is_empty() {
            break;
        }
        done.rows += rows.len();
        for row in rows {
            // NOT NULL and CHECK, then keys as the row goes in (PostgreSQL's immediate
            // checks: an earlier row of the same statement counts as present).
            let (at, leaf_keys) = match router.as_mut() {
                Some(router) => {
                    let leaf = router.leaf(cx, &row)?;
                    check_row(cx, &leaf.table, &leaf.checks, &row)?;
                    insert_checked_row(cx, &leaf.table, &leaf.types, &row, &leaf.index_exprs)?;
                    (leaf.table.oid, !leaf.fks.outgoing.is_empty())
                }
                None => {
                    check_row(cx, table, &insert.checks, &row)?;
                    if table.partition_of.is_some() {
                        check_partition_constraint(cx, table, &row)?;
                    }
                    insert_checked_row(cx, table, &types, &row, &insert.index_exprs)?;
                    (table.oid, false)
                }
            };
            add_returning(cx, insert.returning.as_ref(), &row, &mut done.returning)?;
            if leaf_keys || !insert.fks.outgoing.is_empty() {
                keyed.push(row, None, at)?;
            }
        }
    }
    keyed.check(|rows, _, placed| match &router {
        Some(router) => {
            check_keys_by_leaf(cx, &insert.fks, rows, placed, |oid| router.written(oid))
        }
        None => {
            let refs: Vec<&[Value]> = rows.iter().map(|r| r.as_slice()).collect();
            crate::fkey::check_outgoing(cx, table, &insert.fks, &refs)
        }
    })?;
    Ok(done)
}

/// The foreign keys of rows written to partitions (`rows[i]` to partition `placed[i]`):
/// each partition's rows against the statement's keys `fks` and its own levels'
/// (`Leaf::check_keys`), in one pass over the rows; nothing where no key applies.
fn check_keys_by_leaf<'l>(
    cx: &ExecContext,
    fks: &sql::bound::ForeignKeyChecks,
    rows: &[Row],
    placed: &[Oid],
    leaf: impl Fn(Oid) -> Option<&'l Leaf>,
) -> PgResult<()> {
    let mut by_leaf: std::collections::BTreeMap<Oid, Vec<&[Value]>> = Default::default();
    for (row, &oid) in rows.iter().zip(placed) {
        if !fks.outgoing.is_empty() || leaf(oid).is_some_and(|l| !l.fks.outgoing.is_empty()) {
            by_leaf.entry(oid).or_default().push(row);
        }
    }
    for (oid, rows) in by_leaf {
        if let Some(l) = leaf(oid) {
            l.check_keys(cx, fks, &rows)?;
        }
    }
    Ok(())
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
    let xid = cx.tx.xid()?;
    let t = encode_row(cx, table, types, row, None, xid)?;
    let tid = heapam::heap_insert(
        cx.pool,
        table.rel,
        &t,
        xid,
        cx.tx.cid(),
        table.options.fillfactor,
    )?;
    cx.tx.count_write(table.oid, txn::relstat::Write::Insert);
    index::insert_entries(cx, table, row, tid, predicates)
}

/// The tuple for a row of `table`, its large values compressed or stored out of line
/// (access rule 12); `old`: the version an UPDATE replaces, whose out-of-line values
/// the row keeps unchanged are pointed at again, not copied.
fn encode_row(
    cx: &ExecContext,
    table: &TableDesc,
    types: &[common::DataType],
    row: &[Value],
    old: Option<(&[u8], &[Value])>,
    xid: txn::Xid,
) -> PgResult<Vec<u8>> {
    let target = access::toast::ToastTarget {
        rel: table.toast,
        table: table.oid,
    };
    let storage = |i: usize| {
        table
            .columns
            .get(i)
            .map_or(common::types::Storage::Plain, |c| c.storage)
    };
    access::toast::encode_row(cx.pool, target, row, types, storage, old, xid, cx.tx.cid())
}

/// The tuple of the version at `tid` of `table` if it may hold values stored out of
/// line: only a table with a TOAST relation has any (a row stored plain as `row`, when
/// it is known whole, had none).
fn toasted_version(
    cx: &ExecContext,
    table: &TableDesc,
    tid: ItemPointer,
    row: Option<(&[Value], &[common::DataType])>,
) -> PgResult<Option<Vec<u8>>> {
    if table.toast.is_none() || row.is_some_and(|(r, ty)| !access::toast::needs_toast(r, ty)) {
        return Ok(None);
    }
    heapam::heap_fetch(cx.pool, table.rel, tid)
}

/// The rows UPDATE or DELETE changes, with their addresses: the planner's scan (`scan`,
/// with the statement's filter) run as any plan is, its rows carrying their addresses
/// (`Env::emit_tid`); under EXPLAIN ANALYZE `instrument` counts it as any node.
/// The rows an UPDATE or DELETE changes, as its scan finds them: a batch at a time, each
/// with its table and address, so a statement over millions of rows holds one batch
/// (executor rule 8). Versions the statement writes carry its command id, which its
/// scan does not see; a version it already changed and meets again (an index scan past
/// a key it wrote) is `HeapWrite::SelfModified`, and skipped.
struct Targets<'a> {
    cx: &'a ExecContext<'a>,
    op: Box<dyn crate::exec::Operator + 'a>,
}

/// The target rows an UPDATE or DELETE reads and changes at a time, and the bytes: a
/// batch of rows holding large values (access rule 12) is cut short.
const TARGET_BATCH: usize = 1000;
const TARGET_BATCH_BYTES: usize = 8 << 20;

impl<'a> Targets<'a> {
    fn new(
        cx: &'a ExecContext,
        scan: &'a planner::Plan,
        instrument: Option<&'a crate::instrument::Instrumentation>,
    ) -> PgResult<Targets<'a>> {
        let env = crate::exec::Env {
            emit_tid: true,
            instrument,
            ..cx.env()
        };
        Ok(Targets {
            cx,
            op: crate::exec::build(scan, env)?,
        })
    }

    /// The next rows to change (none: the end); the first time there are some, the
    /// transaction's id to write them with goes in `xid` (which is 0 until then).
    fn next_batch(&mut self, xid: &mut txn::Xid) -> PgResult<Vec<(Oid, ItemPointer, Row)>> {
        let mut out = Vec::new();
        let mut bytes = 0;
        while out.len() < TARGET_BATCH && bytes < TARGET_BATCH_BYTES {
            let Some(mut row) = self.op.next()? else {
                break;
            };
            let (Some(Value::Oid(table)), Some(tid)) = (row.pop(), row.pop()) else {
                return Err(common::PgError::internal(
                    "a target row without its address",
                ));
            };
            bytes += crate::env::row_bytes(&row);
            out.push((table, crate::exec::lock_rows::tid_of(&tid)?, row));
        }
        if *xid == 0 && !out.is_empty() {
            *xid = self.cx.tx.xid()?;
        }
        Ok(out)
    }
}

fn passes(cx: &ExecContext, filter: Option<&sql::bound::Expr>, row: &Row) -> PgResult<bool> {
    Ok(match filter {
        Some(f) => cx.env().eval(f, row)?.is_true(),
        None => true,
    })
}

/// The partitions an UPDATE or DELETE through partitioned table `table` changes rows
/// of (`None` for any other table).
struct Partitions {
    /// Each partition's bound constraints and indexes.
    leaves: HashMap<Oid, Leaf>,
    /// Where UPDATE moves rows whose key left their partition.
    router: Router,
}

impl Partitions {
    fn new(_cx: &ExecContext, table: &Arc<TableDesc>) -> Option<Partitions> {
        table.partition_key.as_ref()?;
        Some(Partitions {
            leaves: HashMap::new(),
            router: Router::new(table.clone()),
        })
    }

    /// The partition `oid` a row was found in.
    fn leaf(&mut self, cx: &ExecContext, oid: Oid) -> PgResult<&mut Leaf> {
        match self.leaves.entry(oid) {
            Entry::Occupied(e) => Ok(e.into_mut()),
            Entry::Vacant(e) => {
                let table = cx
                    .session
                    .catalog
                    .table_by_oid(oid)
                    .cloned()
                    .ok_or_else(|| PgError::internal(format!("no partition with oid {oid}")))?;
                Ok(e.insert(Leaf::bind(cx, table, self.router.root().oid)?))
            }
        }
    }
}

/// Whether `row` meets partition `t`'s constraint (at every level up).
fn fits_partition(cx: &ExecContext, t: &TableDesc, row: &[Value]) -> PgResult<bool> {
    Ok(check_partition_constraint(cx, t, row).is_ok())
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
        HeapWrite::Moved => Err(crate::moved_to_another_partition()),
        HeapWrite::Updated(None) if rr => Err(crate::serialization_failure("delete")),
        HeapWrite::Updated(Some(_)) if rr => Err(crate::serialization_failure("update")),
        HeapWrite::Updated(None) => Ok(Next::Done),
        HeapWrite::Updated(Some(newer)) => {
            let Some(bytes) = heapam::heap_fetch(cx.pool, table.rel, newer)? else {
                return Ok(Next::Done);
            };
            let row = access::tuple::decode_with(&bytes, &table.column_types(), cx.pool)?;
            if passes(cx, filter, &row)? {
                Ok(Next::Retry(newer, row))
            } else {
                Ok(Next::Done)
            }
        }
    }
}

/// Returns (rows changed, RETURNING rows). `count`: EXPLAIN ANALYZE's counts of the scan.
pub(crate) fn update(
    cx: &ExecContext,
    u: &BoundUpdate,
    scan: &planner::Plan,
    instrument: Option<&crate::instrument::Instrumentation>,
) -> PgResult<Written> {
    let table = &u.table;
    let mut targets = Targets::new(cx, scan, instrument)?;
    let types = table.column_types();
    let mut xid = 0;
    let mut rows = 0;
    let mut returning = row_store(cx);
    // Through a partitioned table: each row's partition, and where moved rows go.
    let mut partitions = Partitions::new(cx, table);
    // The new rows (with their old versions where the table is referenced, and the
    // partition each is in now), for the foreign key checks.
    let mut kept = Kept::new(
        cx,
        types.len(),
        u.fks.checks_removals(),
        partitions.is_some(),
    );
    loop {
        let batch = targets.next_batch(&mut xid)?;
        if batch.is_empty() {
            break;
        }
        for (oid, tid, old) in batch {
            let (mut tid, mut old) = (tid, old);
            loop {
                let mut new = old.clone();
                for (c, e) in &u.assignments {
                    new[*c] = cx.env().eval(e, &old)?;
                }
                // `leaf_keys`: the partition's own levels have foreign keys its rows
                // must meet.
                let (leaf, types, checks, index_exprs, mut leaf_keys) = match partitions.as_mut() {
                    Some(p) => {
                        let l = p.leaf(cx, oid)?;
                        let keys = !l.fks.outgoing.is_empty();
                        (&l.table, &l.types, &l.checks, &l.index_exprs, keys)
                    }
                    None => (table, &types, &u.checks, &u.index_exprs, false),
                };
                let leaf = leaf.clone();
                check_row(cx, &leaf, checks, &new)?;
                let moves = leaf.partition_of.is_some() && !fits_partition(cx, &leaf, &new)?;
                let mut lands = leaf.oid;
                let result = if moves {
                    // A key moved out of its partition: through a partitioned table the
                    // row moves (its old version deleted, the new one routed as an
                    // INSERT's), as PostgreSQL's UPDATE moves it; in a partition named
                    // directly it is refused.
                    let Some(p) = partitions.as_mut() else {
                        return Err(check_partition_constraint(cx, &leaf, &new)
                            .err()
                            .unwrap_or_else(|| PgError::internal("a row both fits and does not")));
                    };
                    let result = heapam::heap_move_out(cx.pool, leaf.rel, tid, xid, cx.tx)?;
                    if let HeapWrite::Done(_) = result {
                        // Its out-of-line values go with it; the new one's are stored
                        // in the other partition's TOAST relation.
                        let types = leaf.column_types();
                        if let Some(bytes) = toasted_version(cx, &leaf, tid, Some((&old, &types)))?
                        {
                            access::toast::delete_external(
                                cx.pool, &bytes, &types, None, xid, cx.tx,
                            )?;
                        }
                        // Counted as PostgreSQL counts a row moved between partitions:
                        // deleted from one, inserted into the other.
                        cx.tx.count_write(leaf.oid, txn::relstat::Write::Delete);
                        let to = p.router.leaf(cx, &new)?;
                        check_row(cx, &to.table, &to.checks, &new)?;
                        insert_checked_row(cx, &to.table, &to.types, &new, &to.index_exprs)?;
                        lands = to.table.oid;
                        leaf_keys = !to.fks.outgoing.is_empty();
                    }
                    result
                } else {
                    let old_tuple = toasted_version(cx, &leaf, tid, Some((&old, types)))?;
                    let replaced = old_tuple.as_deref().map(|b| (b, old.as_slice()));
                    let t = encode_row(cx, &leaf, types, &new, replaced, xid)?;
                    let keys = leaf.keys_changed(&old, &new);
                    // No index's entry changes: a new version on the old one's page is
                    // heap-only, and gets no entries (access rule 11).
                    let hot = index::entries_unchanged(cx, &leaf, &old, &new, index_exprs)?;
                    let result =
                        heapam::heap_update(cx.pool, leaf.rel, tid, &t, xid, cx.tx, keys, hot)?;
                    // The old version's out-of-line values the new one does not point
                    // at go with it; if the update did not happen, the new ones go.
                    let (gone, kept) = match result {
                        HeapWrite::Done(_) => (old_tuple.as_deref(), Some(t.as_slice())),
                        _ => (Some(t.as_slice()), old_tuple.as_deref()),
                    };
                    if let Some(gone) = gone {
                        access::toast::delete_external(cx.pool, gone, types, kept, xid, cx.tx)?;
                    }
                    if let HeapWrite::Done(new_tid) = result {
                        if hot && new_tid.block == tid.block {
                            cx.tx.count_hot_update(leaf.oid);
                        } else {
                            cx.tx.count_write(leaf.oid, txn::relstat::Write::Update);
                            index::insert_entries(cx, &leaf, &new, new_tid, index_exprs)?;
                        }
                    }
                    result
                };
                if let HeapWrite::Done(_) = result {
                    rows += 1;
                    add_returning(cx, u.returning.as_ref(), &new, &mut returning)?;
                    if leaf_keys || !u.fks.outgoing.is_empty() || u.fks.checks_removals() {
                        kept.push(new, Some(old), lands)?;
                    }
                    break;
                }
                match after_conflict(cx, &leaf, u.filter.as_ref(), tid, old, result)? {
                    Next::Done => break,
                    Next::Retry(t, r) => (tid, old) = (t, r),
                }
            }
        }
    }
    kept.check(|new, old, landed| {
        match &partitions {
            // Each partition's new rows, against the statement's keys and its own
            // levels' (errors naming the partition, as PostgreSQL's clones of the keys
            // do).
            Some(p) => check_keys_by_leaf(cx, &u.fks, new, landed, |oid| {
                p.leaves.get(&oid).or_else(|| p.router.written(oid))
            })?,
            None if !u.fks.outgoing.is_empty() => {
                let new: Vec<&[Value]> = new.iter().map(|r| r.as_slice()).collect();
                crate::fkey::check_outgoing(cx, table, &u.fks, &new)?;
            }
            None => {}
        }
        if u.fks.checks_removals() {
            let new: Vec<&[Value]> = new.iter().map(|r| r.as_slice()).collect();
            let old: Vec<&[Value]> = old.iter().map(|r| r.as_slice()).collect();
            crate::fkey::check_incoming(cx, table, &u.fks, &old, &new)?;
        }
        Ok(())
    })?;
    Ok(Written { rows, returning })
}

pub(crate) fn delete(
    cx: &ExecContext,
    d: &BoundDelete,
    scan: &planner::Plan,
    instrument: Option<&crate::instrument::Instrumentation>,
) -> PgResult<Written> {
    let mut targets = Targets::new(cx, scan, instrument)?;
    let mut xid = 0;
    let mut returning = row_store(cx);
    // The deleted rows, kept for the foreign keys referencing them.
    let mut deleted = Kept::new(cx, d.table.columns.len(), false, false);
    let mut rows = 0;
    let mut partitions = Partitions::new(cx, &d.table);
    loop {
        let batch = targets.next_batch(&mut xid)?;
        if batch.is_empty() {
            break;
        }
        for (oid, tid, row) in batch {
            let (mut tid, mut row) = (tid, row);
            let table = match partitions.as_mut() {
                Some(p) => p.leaf(cx, oid)?.table.clone(),
                None => d.table.clone(),
            };
            loop {
                let result = heapam::heap_delete(cx.pool, table.rel, tid, xid, cx.tx)?;
                if let HeapWrite::Done(_) = result {
                    // The row may be only the columns the statement reads: the stored
                    // version says whether it had values out of line.
                    if let Some(bytes) = toasted_version(cx, &table, tid, None)? {
                        let types = table.column_types();
                        access::toast::delete_external(cx.pool, &bytes, &types, None, xid, cx.tx)?;
                    }
                    cx.tx.count_write(table.oid, txn::relstat::Write::Delete);
                    rows += 1;
                    add_returning(cx, d.returning.as_ref(), &row, &mut returning)?;
                    if d.fks.checks_removals() {
                        deleted.push(row, None, table.oid)?;
                    }
                    break;
                }
                match after_conflict(cx, &table, d.filter.as_ref(), tid, row, result)? {
                    Next::Done => break,
                    Next::Retry(t, r) => (tid, row) = (t, r),
                }
            }
        }
    }
    deleted.check(|old, _, _| {
        let old: Vec<&[Value]> = old.iter().map(|r| r.as_slice()).collect();
        crate::fkey::check_incoming(cx, &d.table, &d.fks, &old, &[])
    })?;
    Ok(Written { rows, returning })
}
