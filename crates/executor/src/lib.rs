//! The executor: runs planned statements against storage. `README.md` has its layers
//! and the rules the code cites (executor rule N); `tests/layers.rs` checks the layers.
//!
//! - [`exec`]: one pull-based operator per plan node (`next()` returns a row or the end),
//!   built from the planner's plan as given; subqueries ([`exec::subquery`]) and row
//!   locks run there too.
//! - [`eval`]: expression evaluation with PostgreSQL's NULL semantics, overflow and
//!   division errors, over [`cast`], `math`, `array`, `datetime`, in the statement's
//!   [`env::Env`]. [`agg`]: aggregate accumulators. [`sortkey`]: orderings for sort,
//!   group and distinct.
//! - [`session`]: what a statement's execution reads of its session (settings, clock,
//!   catalog view, sequence memory), passed explicitly down to expression evaluation.
//!   [`sequence`]: `nextval` and friends.
//! - [`deparse`] and [`ruleutils`]: expressions as PostgreSQL prints them, for EXPLAIN
//!   and the catalog functions (`catalog_funcs`); `views`: the system views' rows.
//! - [`dml`]: INSERT / UPDATE / DELETE with constraint checks before any page changes;
//!   [`index`]: every index kept in step with its heap, with unique checks; `fkey`:
//!   foreign keys.
//! - [`explain`]: EXPLAIN's text and EXPLAIN ANALYZE's per-operator counts
//!   ([`instrument`]).
//! - [`commands`]: DDL and the other utility statements, which go around the planner
//!   (CREATE INDEX builds, COPY, ANALYZE, VACUUM among them).
//! - [`execute`]: the entry point for planned statements (queries, DML, EXPLAIN, COPY
//!   TO); [`commands::execute`] runs utility statements as bound.

pub mod agg;
mod array;
pub mod cast;
mod catalog_funcs;
pub mod commands;
mod datetime;
pub mod deparse;
pub mod dml;
pub mod env;
pub mod eval;
pub mod exec;
pub mod explain;
mod fkey;
pub mod index;
pub mod instrument;
mod keytable;
mod math;
pub mod portal;
mod reg_catalog;
mod route;
pub mod ruleutils;
pub mod sequence;
pub mod session;
pub mod sortkey;
mod spill;
mod views;

use catalog::Catalog;
use common::{PgError, PgResult, Value};
use planner::PlannedStatement;
use sql::bound::OutputColumn;
use storage::bufmgr::BufferPool;

/// What a statement produced: rows (for queries and RETURNING), its command tag, notices.
#[derive(Debug, Default)]
pub struct StatementResult {
    /// `Some` when the statement returns rows (even zero of them): RowDescription is sent.
    pub columns: Option<Vec<OutputColumn>>,
    pub rows: Vec<Vec<Value>>,
    /// The CommandComplete tag, exactly as PostgreSQL writes it (`INSERT 0 2`).
    pub tag: String,
    pub notices: Vec<PgError>,
    /// TRUNCATE: every table it emptied, the partitions of a partitioned one too
    /// (what COPY FREEZE asks).
    pub truncated: Vec<common::Oid>,
    /// COPY FROM STDIN: the load, which the session feeds with the client's data.
    pub copy_in: Option<Box<commands::copy::CopyIn>>,
    /// COPY TO STDOUT: each line of output, and the number of columns.
    pub copy_out: Option<(usize, Vec<Vec<u8>>)>,
    /// A query's rows, still to be fetched (`rows` is empty): executor rule 8.
    pub portal: Option<portal::Portal>,
    /// The rows go in binary (FETCH from a cursor declared BINARY).
    pub binary: bool,
    /// COPY TO STDOUT whose rows come from `portal`: each becomes a line of this
    /// format (`copy_out` holds the lines before them: the header).
    pub copy_format: Option<sql::bound::CopyFormat>,
}

/// Everything a statement may touch.
pub struct ExecContext<'a> {
    /// The session: its settings, clock, catalog view and sequence memory.
    pub session: &'a session::Session<'a>,
    pub pool: &'a BufferPool,
    pub catalog: &'a Catalog,
    /// Cached btree roots (nbtree rule 6), shared by all sessions.
    pub roots: &'a access::nbtree::RootCache,
    /// The session's transaction: ids for writes, command ids, savepoints.
    pub tx: &'a txn::Tx,
    /// What the statement sees.
    pub snapshot: &'a txn::Snapshot,
    /// The running state of sequences (CREATE and DROP SEQUENCE set it up and forget it).
    pub sequences: &'a access::sequence::Sequences,
    /// The statement's subquery plans and uncorrelated results: a context serves one
    /// statement.
    pub subqueries: exec::subquery::SubqueryCache,
    /// The parameter values of a prepared statement run by its generic plan.
    pub params: exec::Params<'a>,
    /// The key expressions of the partitioned tables the statement routes rows through.
    pub partition_keys: route::KeyExprs,
}

impl ExecContext<'_> {
    pub(crate) fn env(&self) -> exec::Env<'_> {
        exec::Env {
            session: self.session,
            pool: self.pool,
            roots: self.roots,
            tx: self.tx,
            snapshot: self.snapshot,
            emit_tid: false,
            row_locks: false,
            instrument: None,
            outer: &[],
            subqueries: &self.subqueries,
            params: self.params,
        }
    }
}

/// Relation sizes for the planner from the buffer pool's storage manager (its cached
/// sizes: no system call).
pub struct PoolSizes<'a>(pub &'a storage::BufferPool);

impl planner::RelSizes for PoolSizes<'_> {
    fn pages(&self, rel: common::ids::RelId) -> u64 {
        self.0.smgr().nblocks(rel).map_or(0, u64::from)
    }
}

/// Run a query or DML statement (SELECT, INSERT, UPDATE, DELETE) whose plan stays the
/// caller's: a prepared statement's generic plan runs once per execution, with the
/// parameter values `cx.params` holds.
pub fn execute_plan(stmt: &PlannedStatement, cx: &ExecContext) -> PgResult<StatementResult> {
    cx.subqueries.install(stmt.subplans());
    match stmt {
        PlannedStatement::Query { plan, columns, .. } => {
            let mut op = exec::build(plan, cx.env())?;
            let rows = exec::collect(op.as_mut())?;
            Ok(StatementResult {
                tag: format!("SELECT {}", rows.len()),
                columns: Some(columns.clone()),
                rows,
                ..Default::default()
            })
        }
        PlannedStatement::Insert { insert, source, .. } => {
            let mut op = exec::build(source, cx.env())?;
            let dml::Written {
                rows: n,
                returning: out,
            } = dml::insert_from(cx, insert, op.as_mut())?;
            Ok(with_returning(
                cx,
                format!("INSERT 0 {n}"),
                insert.returning.as_ref().map(|r| r.columns.clone()),
                out,
            ))
        }
        PlannedStatement::Update {
            update: u, scan, ..
        } => {
            let dml::Written {
                rows: n,
                returning: out,
            } = dml::update(cx, u, scan, None)?;
            Ok(with_returning(
                cx,
                format!("UPDATE {n}"),
                u.returning.as_ref().map(|r| r.columns.clone()),
                out,
            ))
        }
        PlannedStatement::Delete {
            delete: d, scan, ..
        } => {
            let dml::Written {
                rows: n,
                returning: out,
            } = dml::delete(cx, d, scan, None)?;
            Ok(with_returning(
                cx,
                format!("DELETE {n}"),
                d.returning.as_ref().map(|r| r.columns.clone()),
                out,
            ))
        }
        _ => Err(PgError::internal(
            "execute_plan takes a query or DML statement",
        )),
    }
}

/// Run a planned statement: a query, DML, EXPLAIN or COPY TO (utility statements go
/// around the planner: [`commands::execute`]).
pub fn execute(stmt: PlannedStatement, cx: &ExecContext) -> PgResult<StatementResult> {
    match stmt {
        PlannedStatement::Query { .. }
        | PlannedStatement::Insert { .. }
        | PlannedStatement::Update { .. }
        | PlannedStatement::Delete { .. } => execute_plan(&stmt, cx),
        PlannedStatement::Explain {
            options,
            inner,
            planning,
        } => explain::explain(&options, *inner, planning, cx),
        PlannedStatement::CopyTo {
            plan,
            columns,
            format,
            subplans,
        } => {
            cx.subqueries.install(&subplans);
            let mut op = exec::build(&plan, cx.env())?;
            let rows = exec::collect(op.as_mut())?;
            let mut lines = Vec::with_capacity(rows.len() + 1);
            if format.header {
                let names: Vec<Option<&str>> = columns.iter().map(|c| Some(&*c.name)).collect();
                lines.push(commands::copy::format_line(&format, &names));
            }
            for r in &rows {
                let texts: Vec<Option<String>> =
                    r.iter().map(|v| v.to_text(cx.session.text())).collect();
                let fields: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
                lines.push(commands::copy::format_line(&format, &fields));
            }
            Ok(StatementResult {
                tag: format!("COPY {}", rows.len()),
                copy_out: Some((columns.len(), lines)),
                ..Default::default()
            })
        }
    }
}

/// Remove the storage a transaction's end leaves behind (`catalog::Catalog::commit`,
/// `abort`, `rollback_to`): files, and for an index its cached root, for a sequence its
/// running state. Every file is tried; the first failure is returned.
pub fn remove_storage(
    pool: &BufferPool,
    roots: &access::nbtree::RootCache,
    sequences: &access::sequence::Sequences,
    files: &[catalog::RelFile],
) -> PgResult<()> {
    let mut first_error = None;
    for f in files {
        match f.kind {
            // Its visibility and free space maps go with it (made when first needed).
            catalog::RelKind::Table => {
                for map in [
                    access::visibilitymap::map_rel(f.rel),
                    access::freespace::map_rel(f.rel),
                ] {
                    if pool.smgr().exists(map)
                        && let Err(e) = pool.unlink_relation(map)
                    {
                        first_error.get_or_insert(e);
                    }
                }
            }
            catalog::RelKind::Index => roots.forget_root(f.rel),
            catalog::RelKind::Sequence => sequences.forget(f.rel),
        }
        if let Err(e) = pool.unlink_relation(f.rel) {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Lock table `t` in `mode` for the rest of the transaction, waiting as the session's
/// policy allows; a failed wait is PostgreSQL's error naming the relation.
pub(crate) fn lock_relation(
    tx: &txn::Tx,
    t: &catalog::TableDesc,
    mode: txn::lock::LockMode,
) -> PgResult<()> {
    tx.lock(txn::lock::LockTag::Relation(t.oid), mode, false)
        .map_err(|e| e.to_pg(&format!("relation \"{}\"", t.name)))
}

/// Wait until transaction `xid`, which wrote a row of `table` this statement must change
/// or lock (or a key it inserts), ends: through the lock manager (deadlock detection,
/// timeouts); with `nowait`, fail at once with 55P03 instead. Returns its final status.
pub(crate) fn wait_for_writer(
    tx: &txn::Tx,
    table: &catalog::TableDesc,
    xid: txn::Xid,
    nowait: bool,
) -> PgResult<txn::XidStatus> {
    tx.wait_for_xid(xid, nowait, &format!("row in relation \"{}\"", table.name))
}

/// 40001, when REPEATABLE READ meets a row a concurrent transaction changed.
pub(crate) fn serialization_failure(what: &str) -> PgError {
    PgError::new(
        common::SqlState::SERIALIZATION_FAILURE,
        format!("could not serialize access due to concurrent {what}"),
    )
}

/// PostgreSQL's 40001 for a row a concurrent UPDATE moved to another partition: at
/// every isolation level, since the row still exists where this statement cannot
/// follow it.
pub(crate) fn moved_to_another_partition() -> PgError {
    PgError::new(
        common::SqlState::SERIALIZATION_FAILURE,
        "tuple to be locked was already moved to another partition due to concurrent update",
    )
}

/// A write's result: its tag, and its RETURNING rows (`columns`), which go with it
/// when they fit in memory and else are read back from their store as a query's rows
/// are (executor rule 8).
fn with_returning(
    cx: &ExecContext,
    tag: String,
    columns: Option<Vec<OutputColumn>>,
    rows: spill::RowStore,
) -> StatementResult {
    let (rows, portal) = match rows.spilled_any() {
        false => (rows.into_memory(), None),
        true => {
            let text = cx.session.text().clone();
            let portal = portal::Portal::made(rows, text, tag.clone());
            (Vec::new(), Some(portal))
        }
    };
    StatementResult {
        tag,
        columns,
        rows,
        portal,
        ..Default::default()
    }
}
