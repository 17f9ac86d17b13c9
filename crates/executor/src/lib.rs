//! The executor: runs planned statements against storage.
//!
//! - [`exec`]: one pull-based operator per plan node (`next()` returns a row or the end).
//! - [`eval`]: expression evaluation with PostgreSQL's NULL semantics, overflow and
//!   division errors.
//! - [`agg`]: aggregate accumulators. [`sortkey`]: orderings for sort, group and distinct.
//! - [`dml`]: INSERT / UPDATE / DELETE with constraint checks before any page changes.
//! - [`index`]: CREATE INDEX builds, unique checks through unique indexes, and keeping
//!   every index in step with its heap.
//! - `array`: the array functions and operators. `catalog_funcs`: the `reg*` types'
//!   catalog lookups.
//! - [`session`]: what a statement's execution reads of its session (settings, clock,
//!   catalog view, sequence memory), passed explicitly down to expression evaluation.
//! - [`sequence`]: `nextval` and friends.
//! - [`explain`]: EXPLAIN's text and EXPLAIN ANALYZE's per-operator counts.
//! - [`execute`]: the entry point, also running DDL (CREATE: storage, then the catalog
//!   record; DROP: the catalog record, then storage).

pub mod agg;
mod array;
mod catalog_funcs;
mod catalog_views;
mod check;
pub mod copy;
mod datetime;
pub mod dml;
pub mod eval;
pub mod exec;
pub mod explain;
mod fkey;
pub mod index;
mod information_schema;
mod lockrows;
mod math;
pub mod ruleutils;
pub mod sequence;
pub mod session;
pub mod sortkey;
pub mod subquery;
pub mod vacuum;

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
    /// For INSERT, UPDATE and DELETE: the table and how many rows changed (versions that
    /// VACUUM will have to clean up, counted for autovacuum).
    pub changed: Vec<(common::Oid, u64)>,
    /// COPY FROM STDIN: the load, which the session feeds with the client's data.
    pub copy_in: Option<Box<copy::CopyIn>>,
    /// COPY TO STDOUT: each line of output, and the number of columns.
    pub copy_out: Option<(usize, Vec<Vec<u8>>)>,
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
    pub subqueries: subquery::SubqueryCache,
    /// The parameter values of a prepared statement run by its generic plan.
    pub params: exec::Params<'a>,
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
            instrument: None,
            outer: &[],
            subqueries: &self.subqueries,
            params: self.params,
        }
    }
}

/// Run a query or DML statement (SELECT, INSERT, UPDATE, DELETE) whose plan stays the
/// caller's: a prepared statement's generic plan runs once per execution, with the
/// parameter values `cx.params` holds.
pub fn execute_plan(stmt: &PlannedStatement, cx: &ExecContext) -> PgResult<StatementResult> {
    match stmt {
        PlannedStatement::Query { plan, columns } => {
            let mut op = exec::build(plan, cx.env())?;
            let rows = exec::collect(op.as_mut())?;
            Ok(StatementResult {
                tag: format!("SELECT {}", rows.len()),
                columns: Some(columns.clone()),
                rows,
                ..Default::default()
            })
        }
        PlannedStatement::Insert { insert, source } => {
            let mut op = exec::build(source, cx.env())?;
            let rows = exec::collect(op.as_mut())?;
            let n = rows.len();
            let out = dml::insert(
                cx,
                &insert.table,
                rows,
                insert.returning.as_ref(),
                &insert.fks,
                &insert.checks,
            )?;
            Ok(StatementResult {
                changed: vec![(insert.table.oid, n as u64)],
                ..with_returning(
                    format!("INSERT 0 {n}"),
                    insert.returning.as_ref().map(|r| r.columns.clone()),
                    out,
                )
            })
        }
        PlannedStatement::Update(u) => {
            let (n, out) = dml::update(cx, u, None)?;
            Ok(StatementResult {
                changed: vec![(u.table.oid, n as u64)],
                ..with_returning(
                    format!("UPDATE {n}"),
                    u.returning.as_ref().map(|r| r.columns.clone()),
                    out,
                )
            })
        }
        PlannedStatement::Delete(d) => {
            let (n, out) = dml::delete(cx, d, None)?;
            Ok(StatementResult {
                changed: vec![(d.table.oid, n as u64)],
                ..with_returning(
                    format!("DELETE {n}"),
                    d.returning.as_ref().map(|r| r.columns.clone()),
                    out,
                )
            })
        }
        _ => Err(PgError::internal(
            "execute_plan takes a query or DML statement",
        )),
    }
}

pub fn execute(stmt: PlannedStatement, cx: &ExecContext) -> PgResult<StatementResult> {
    match stmt {
        PlannedStatement::Query { .. }
        | PlannedStatement::Insert { .. }
        | PlannedStatement::Update(_)
        | PlannedStatement::Delete(_) => execute_plan(&stmt, cx),
        PlannedStatement::CreateTable(new) => {
            cx.catalog.create_table(cx.tx, new, |t, seqs| {
                index::create_table_storage(cx, t)?;
                seqs.iter().try_for_each(|s| create_sequence_storage(cx, s))
            })?;
            Ok(StatementResult {
                tag: "CREATE TABLE".into(),
                ..Default::default()
            })
        }
        PlannedStatement::Sequence(sql::bound::SequenceDdl::Create {
            name,
            options,
            owned_by,
        }) => {
            cx.catalog
                .create_sequence(cx.tx, name, options, owned_by, |s| {
                    create_sequence_storage(cx, s)
                })?;
            Ok(StatementResult {
                tag: "CREATE SEQUENCE".into(),
                ..Default::default()
            })
        }
        PlannedStatement::Sequence(sql::bound::SequenceDdl::Alter {
            seq,
            options,
            owned_by,
            restart,
        }) => {
            // The current value must fit the new bounds (a nextval beside this may move
            // it on; nextval checks the bounds it reads anyway).
            if restart.is_none() {
                let current = cx.sequences.state(cx.pool, seq.rel)?;
                sql::binder::check_restart(current.last_value, &options)?;
            }
            cx.catalog
                .alter_sequence(cx.tx, seq.oid, options, owned_by)?;
            cx.sequences.reset_log(seq.rel);
            if let Some(v) = restart {
                renew_sequence(cx, seq.oid, v)?;
            }
            Ok(StatementResult {
                tag: "ALTER SEQUENCE".into(),
                ..Default::default()
            })
        }
        PlannedStatement::Sequence(sql::bound::SequenceDdl::Drop { sequences, notices }) => {
            for d in &sequences {
                cx.catalog
                    .drop_sequence(cx.tx, d.sequence.oid, &d.defaults)?;
            }
            Ok(StatementResult {
                tag: "DROP SEQUENCE".into(),
                notices,
                ..Default::default()
            })
        }
        PlannedStatement::Explain {
            options,
            inner,
            planning,
        } => explain::explain(&options, *inner, planning, cx),
        PlannedStatement::CreateIndex { table, index } => {
            index::create_index(cx, &table, index)?;
            Ok(StatementResult {
                tag: "CREATE INDEX".into(),
                ..Default::default()
            })
        }
        PlannedStatement::DropIndexes { indexes, notices } => {
            for (t, i) in &indexes {
                cx.catalog.drop_index(cx.tx, t.oid, i.oid)?;
            }
            Ok(StatementResult {
                tag: "DROP INDEX".into(),
                notices,
                ..Default::default()
            })
        }
        PlannedStatement::CopyFrom(from) => Ok(StatementResult {
            copy_in: Some(Box::new(copy::CopyIn::new(from))),
            ..Default::default()
        }),
        PlannedStatement::CopyTo {
            plan,
            columns,
            format,
        } => {
            let mut op = exec::build(&plan, cx.env())?;
            let rows = exec::collect(op.as_mut())?;
            let mut lines = Vec::with_capacity(rows.len() + 1);
            if format.header {
                let names: Vec<Option<&str>> = columns.iter().map(|c| Some(&*c.name)).collect();
                lines.push(copy::format_line(&format, &names));
            }
            for r in &rows {
                let texts: Vec<Option<String>> =
                    r.iter().map(|v| v.to_text(cx.session.text())).collect();
                let fields: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
                lines.push(copy::format_line(&format, &fields));
            }
            Ok(StatementResult {
                tag: format!("COPY {}", rows.len()),
                copy_out: Some((columns.len(), lines)),
                ..Default::default()
            })
        }
        PlannedStatement::Truncate { tables, restart } => {
            // The caller holds AccessExclusive on every table: no one else writes them.
            // Every row committed by now goes, visible to this statement's snapshot
            // or not (a REPEATABLE READ transaction's snapshot may predate some), as
            // PostgreSQL's TRUNCATE removes them all. Deleting them (rather than
            // swapping in empty files) keeps TRUNCATE transactional with the catalog
            // as it is; VACUUM reclaims the space.
            let mut changed = Vec::with_capacity(tables.len());
            for t in tables {
                // Tables referencing these are truncated with them (checked when bound).
                let delete = sql::bound::BoundDelete {
                    table: t.clone(),
                    filter: None,
                    returning: None,
                    fks: Default::default(),
                };
                let (n, _) = with_every_row(cx, |all| dml::delete(all, &delete, None))?;
                changed.push((t.oid, n as u64));
            }
            for s in &restart {
                renew_sequence(cx, s.oid, s.options.start)?;
            }
            Ok(StatementResult {
                tag: "TRUNCATE TABLE".into(),
                changed,
                ..Default::default()
            })
        }
        PlannedStatement::Nothing { tag, notices } => Ok(StatementResult {
            tag: tag.into(),
            notices,
            ..Default::default()
        }),
        PlannedStatement::AddColumn {
            table,
            column,
            fill,
        } => {
            add_column(cx, &table, column, fill)?;
            Ok(StatementResult {
                tag: "ALTER TABLE".into(),
                ..Default::default()
            })
        }
        PlannedStatement::ChangeTable { table, mut change } => {
            match &mut change {
                catalog::TableChange::NotNull {
                    column,
                    not_null: true,
                } => check_no_nulls(cx, &table, *column)?,
                catalog::TableChange::RenameColumn {
                    column,
                    name,
                    checks,
                } => *checks = check::renamed_column(cx, &table, *column, name)?,
                _ => {}
            }
            cx.catalog.change_table(cx.tx, table.oid, change)?;
            Ok(StatementResult {
                tag: "ALTER TABLE".into(),
                ..Default::default()
            })
        }
        PlannedStatement::AddKey { table, key } => {
            index::add_key(cx, &table, key)?;
            Ok(StatementResult {
                tag: "ALTER TABLE".into(),
                ..Default::default()
            })
        }
        PlannedStatement::AddForeignKey {
            table,
            referenced,
            mut fk,
        } => {
            let name = match fk.name.take() {
                Some(n) => n,
                None => cx.session.catalog.choose_fk_name(&table, &fk),
            };
            // Checked before the catalog's lock is taken: the scan may be long.
            fkey::validate_new_key(cx, &table, &referenced, &fk.named(0, name.clone()))?;
            fk.name = Some(name);
            cx.catalog.add_foreign_key(cx.tx, table.oid, fk)?;
            Ok(StatementResult {
                tag: "ALTER TABLE".into(),
                ..Default::default()
            })
        }
        PlannedStatement::AddCheck {
            table,
            mut check,
            condition,
        } => {
            let name = match check.name.take() {
                Some(n) => n,
                None => cx.session.catalog.choose_check_name(&table, &check),
            };
            // Checked before the catalog's lock is taken: the scan may be long.
            if check.validated {
                check::validate(cx, &table, &name, &condition)?;
            }
            check.name = Some(name);
            cx.catalog.add_check(cx.tx, table.oid, check)?;
            Ok(StatementResult {
                tag: "ALTER TABLE".into(),
                ..Default::default()
            })
        }
        PlannedStatement::DropConstraint(d) => {
            match d {
                sql::bound::ConstraintDrop::Check { table, check } => {
                    cx.catalog.drop_check(cx.tx, table.oid, check)?;
                }
                sql::bound::ConstraintDrop::ForeignKey { table, fk, .. } => {
                    cx.catalog.drop_foreign_key(cx.tx, table.oid, fk)?;
                }
                sql::bound::ConstraintDrop::Key {
                    table,
                    index,
                    dependents,
                } => {
                    for (t, fk) in &dependents {
                        cx.catalog.drop_foreign_key(cx.tx, t.oid, fk.oid)?;
                    }
                    cx.catalog.drop_index(cx.tx, table.oid, index.oid)?;
                }
            }
            Ok(StatementResult {
                tag: "ALTER TABLE".into(),
                ..Default::default()
            })
        }
        PlannedStatement::Comment(sql::bound::CommentOn {
            table,
            object,
            sub,
            text,
        }) => {
            cx.catalog
                .set_comment(cx.tx, table.oid, object, sub, text)?;
            Ok(StatementResult {
                tag: "COMMENT".into(),
                ..Default::default()
            })
        }
        PlannedStatement::DropColumn(sql::bound::ColumnDrop {
            table,
            column,
            dependents,
            notices,
        }) => {
            for (t, fk) in &dependents {
                cx.catalog.drop_foreign_key(cx.tx, t.oid, fk.oid)?;
            }
            cx.catalog.drop_column(cx.tx, table.oid, column)?;
            Ok(StatementResult {
                tag: "ALTER TABLE".into(),
                notices,
                ..Default::default()
            })
        }
        PlannedStatement::DropTables {
            tables,
            notices,
            foreign_keys,
        } => {
            for (t, fk) in &foreign_keys {
                cx.catalog.drop_foreign_key(cx.tx, t.oid, fk.oid)?;
            }
            for t in &tables {
                cx.catalog.drop_table(cx.tx, t.oid)?;
            }
            Ok(StatementResult {
                tag: "DROP TABLE".into(),
                notices,
                ..Default::default()
            })
        }
    }
}

/// Make a new sequence's relation and its page (before its catalog record).
/// ALTER TABLE ADD COLUMN. The column joins the table's descriptor; the rows stored before
/// have fewer columns and read NULL for it. With a DEFAULT, each of them is updated to
/// the default computed for it, as PostgreSQL computes a volatile default (a constant
/// one it keeps in its catalog instead; the rows read the same). A NOT NULL column must
/// then hold no NULL, or PostgreSQL's 23502 names the column. The caller holds
/// AccessExclusive on the table; every row committed by now is changed, as TRUNCATE sees
/// them.
fn add_column(
    cx: &ExecContext,
    table: &catalog::TableDesc,
    column: catalog::ColumnDesc,
    fill: Option<sql::bound::Expr>,
) -> PgResult<()> {
    let not_null = column.not_null;
    let name = column.name.clone();
    let new = cx.catalog.add_column(cx.tx, table.oid, column)?;
    let at = new.columns.len() - 1;
    if let Some(fill) = fill {
        let update = sql::bound::BoundUpdate {
            table: new.clone(),
            filter: None,
            assignments: vec![(at, fill)],
            returning: None,
            fks: Default::default(),
            // The table's checks cannot read the new column.
            checks: Vec::new(),
        };
        // The update's own NOT NULL check catches a default that is NULL for a row.
        return with_every_row(cx, |all| dml::update(all, &update, None))
            .map(|_| ())
            .map_err(|e| {
                if e.code == common::SqlState::NOT_NULL_VIOLATION {
                    not_null_violated(&name, &new.name)
                } else {
                    e
                }
            });
    }
    if not_null {
        check_no_nulls(cx, &new, at)?;
    }
    Ok(())
}

/// Before a column becomes NOT NULL: no row committed by now may hold NULL there, or
/// PostgreSQL's 23502 names the column. The caller holds AccessExclusive on the table.
fn check_no_nulls(
    cx: &ExecContext,
    table: &std::sync::Arc<catalog::TableDesc>,
    at: usize,
) -> PgResult<()> {
    use sql::bound::{Expr, ExprKind};
    let Some(column) = table.columns.get(at) else {
        return Err(PgError::internal(format!(
            "no column {at} in {}",
            table.name
        )));
    };
    let is_null = Expr::new(
        ExprKind::IsNull {
            expr: Box::new(Expr::column(at, column.ty)),
            negated: false,
        },
        common::DataType::Bool,
    );
    if some_row_where(cx, table, &is_null)? {
        return Err(not_null_violated(&column.name, &table.name));
    }
    Ok(())
}

/// Does a row committed by now (see [`with_every_row`]) make `condition` true? What
/// SET NOT NULL and ADD CHECK ask of the rows before they change the table.
fn some_row_where(
    cx: &ExecContext,
    table: &std::sync::Arc<catalog::TableDesc>,
    condition: &sql::bound::Expr,
) -> PgResult<bool> {
    let plan = planner::target_scan(table, Some(condition));
    let found = with_every_row(cx, |all| exec::build(&plan, all.env())?.next())?;
    Ok(found.is_some())
}

/// Run `f` seeing every row committed by now (a fresh snapshot, not the statement's):
/// what a statement that holds AccessExclusive on a table and changes or checks all of
/// its rows must see (TRUNCATE, ADD COLUMN, SET NOT NULL), as PostgreSQL does.
fn with_every_row<R>(cx: &ExecContext, f: impl FnOnce(&ExecContext) -> R) -> R {
    let fresh = cx.tx.fresh_snapshot();
    f(&ExecContext {
        session: cx.session,
        pool: cx.pool,
        catalog: cx.catalog,
        roots: cx.roots,
        tx: cx.tx,
        snapshot: &fresh,
        sequences: cx.sequences,
        subqueries: Default::default(),
        params: cx.params,
    })
}

/// PostgreSQL's error for a column made NOT NULL over rows holding NULL.
fn not_null_violated(column: &str, table: &str) -> PgError {
    PgError::new(
        common::SqlState::NOT_NULL_VIOLATION,
        format!("column \"{column}\" of relation \"{table}\" contains null values"),
    )
}

fn create_sequence_storage(cx: &ExecContext, s: &catalog::SequenceDesc) -> PgResult<()> {
    cx.pool.create_relation(s.rel)?;
    access::sequence::init(cx.pool, s.rel, s.options.start)
}

/// Restart sequence `oid` at `next` (the value its next `nextval` returns), in new storage
/// so that a rollback undoes it (`catalog::Catalog::renew_sequence`).
fn renew_sequence(cx: &ExecContext, oid: common::Oid, next: i64) -> PgResult<()> {
    cx.catalog.renew_sequence(cx.tx, oid, |s| {
        cx.pool.create_relation(s.rel)?;
        access::sequence::init(cx.pool, s.rel, next)
    })
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
            catalog::RelKind::Table => {}
            catalog::RelKind::Index => roots.forget_root(f.rel),
            catalog::RelKind::Sequence => sequences.forget(f.rel),
        }
        if let Err(e) = pool.unlink_relation(f.rel) {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
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

fn with_returning(
    tag: String,
    columns: Option<Vec<OutputColumn>>,
    rows: Vec<Vec<Value>>,
) -> StatementResult {
    StatementResult {
        tag,
        columns,
        rows,
        notices: vec![],
        changed: vec![],
        copy_in: None,
        copy_out: None,
    }
}
