//! Utility statements: DDL, TRUNCATE, LOCK TABLE and the start of COPY FROM, run as the
//! binder left them, around the planner, as PostgreSQL's ProcessUtility runs them
//! (`sql::bound::BoundStatement::is_utility`). CREATE makes storage, then the catalog
//! record; DROP makes the catalog record, and the storage goes when the transaction
//! commits (`catalog::Catalog::commit`, [`crate::remove_storage`]); executor rule 6.

use common::{PgError, PgResult};
use sql::bound::BoundStatement;

pub mod analyze;
mod check;
pub mod copy;
mod index;
mod partition;
pub mod vacuum;

use crate::{ExecContext, StatementResult, dml, exec, fkey};

/// A statement's result that is only its command tag.
fn done(tag: &str) -> StatementResult {
    StatementResult {
        tag: tag.into(),
        ..Default::default()
    }
}

/// Run utility statement `stmt` (a statement with a plan is an internal error: it goes
/// through `planner::plan` and [`crate::execute`]).
pub fn execute(stmt: BoundStatement, cx: &ExecContext) -> PgResult<StatementResult> {
    match stmt {
        BoundStatement::CreateTable {
            mut new,
            partition_of,
            ..
        } => {
            if let Some(of) = &partition_of {
                new.partition_of = Some(partition::partition_of(cx, of, &new.name)?);
            }
            let t = cx.catalog.create_table(cx.tx, new, |t, seqs| {
                // A partitioned table has no storage (partition rule 1).
                if t.partition_key.is_none() {
                    index::create_table_storage(cx, t)?;
                }
                seqs.iter().try_for_each(|s| create_sequence_storage(cx, s))
            })?;
            // A partition has its parent's indexes (its keys came with it).
            if let Some(of) = &partition_of {
                index::inherit_indexes(cx, &of.parent, &t)?;
            }
            Ok(done("CREATE TABLE"))
        }
        BoundStatement::AttachPartition { table, of } => {
            partition::attach(cx, &table, &of)?;
            Ok(done("ALTER TABLE"))
        }
        BoundStatement::DetachPartition {
            parent,
            table,
            step,
        } => {
            match step {
                sql::bound::DetachStep::Mark => partition::mark_detach(cx, &parent, &table)?,
                sql::bound::DetachStep::Whole | sql::bound::DetachStep::Finish => {
                    partition::detach(cx, &parent, &table)?
                }
            }
            Ok(done("ALTER TABLE"))
        }
        BoundStatement::Sequence(sql::bound::SequenceDdl::Create {
            name,
            options,
            owned_by,
        }) => {
            cx.catalog
                .create_sequence(cx.tx, name, options, owned_by, |s| {
                    create_sequence_storage(cx, s)
                })?;
            Ok(done("CREATE SEQUENCE"))
        }
        BoundStatement::Sequence(sql::bound::SequenceDdl::Alter {
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
            Ok(done("ALTER SEQUENCE"))
        }
        BoundStatement::Sequence(sql::bound::SequenceDdl::Drop { sequences, notices }) => {
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
        BoundStatement::CreateIndex {
            table,
            index,
            bound,
        } => {
            index::create_index(cx, &table, index, &bound)?;
            Ok(done("CREATE INDEX"))
        }
        BoundStatement::DropIndexes { indexes, notices } => {
            for (t, i) in &indexes {
                drop_index_tree(cx, t, i.oid)?;
            }
            Ok(StatementResult {
                tag: "DROP INDEX".into(),
                notices,
                ..Default::default()
            })
        }
        BoundStatement::CopyFrom(from) => Ok(StatementResult {
            copy_in: Some(Box::new(copy::CopyIn::new(from))),
            ..Default::default()
        }),
        BoundStatement::Truncate { tables, restart } => {
            // The caller holds AccessExclusive on every table: no one else writes them.
            // Every row committed by now goes, visible to this statement's snapshot
            // or not (a REPEATABLE READ transaction's snapshot may predate some), as
            // PostgreSQL's TRUNCATE removes them all. Deleting them (rather than
            // swapping in empty files) keeps TRUNCATE transactional with the catalog
            // as it is; VACUUM reclaims the space.
            // Every table truncated is listed (COPY FREEZE asks): a partitioned one, and
            // each partition whose rows go.
            let mut truncated = Vec::with_capacity(tables.len());
            for t in tables {
                truncated.push(t.oid);
                let leaves = match t.partition_key {
                    Some(_) => cx
                        .session
                        .catalog
                        .descendants(t.oid)
                        .into_iter()
                        .filter(|l| l.partition_key.is_none())
                        .collect(),
                    None => vec![t.clone()],
                };
                for leaf in leaves {
                    // Tables referencing these are truncated with them (checked when
                    // bound).
                    let delete = sql::bound::BoundDelete {
                        table: leaf.clone(),
                        filter: None,
                        returning: None,
                        fks: Default::default(),
                    };
                    let every_row = target_scan(cx, &leaf, None);
                    let w = with_every_row(cx, |all| dml::delete(all, &delete, &every_row, None))?;
                    let removed = w.rows as u64;
                    cx.tx
                        .count_write(leaf.oid, txn::relstat::Write::Truncate { removed });
                    if leaf.oid != t.oid {
                        truncated.push(leaf.oid);
                    }
                }
            }
            for s in &restart {
                renew_sequence(cx, s.oid, s.options.start)?;
            }
            Ok(StatementResult {
                tag: "TRUNCATE TABLE".into(),
                truncated,
                ..Default::default()
            })
        }
        BoundStatement::Nothing { tag, notices } => Ok(StatementResult {
            tag: tag.into(),
            notices,
            ..Default::default()
        }),
        BoundStatement::AddColumn {
            table,
            column,
            fill,
        } => {
            // A partitioned table's partitions get the column too, in the same place
            // (partition rule 1); only the leaves have rows to fill.
            for t in with_partitions(cx, &table) {
                if t.partition_key.is_some() {
                    cx.catalog.add_column(cx.tx, t.oid, column.clone())?;
                } else {
                    add_column(cx, &t, column.clone(), fill.clone())?;
                }
            }
            Ok(done("ALTER TABLE"))
        }
        BoundStatement::ChangeTable {
            table,
            change,
            notices,
            only,
        } => {
            // A column's change reaches the partitions (its name, default, NOT NULL
            // and statistics target: PostgreSQL recurses); the table's own name and its
            // indexes' are its own.
            let tables = match change {
                catalog::TableChange::Rename(_) | catalog::TableChange::RenameIndex { .. } => {
                    vec![table.clone()]
                }
                // ALTER TABLE ONLY: the binder let through only what may stay the parent's.
                _ if only => vec![table.clone()],
                _ => with_partitions(cx, &table),
            };
            for t in tables {
                let mut change = change.clone();
                match &mut change {
                    catalog::TableChange::NotNull {
                        column,
                        not_null: true,
                    } if t.partition_key.is_none() => check_no_nulls(cx, &t, *column)?,
                    catalog::TableChange::RenameColumn {
                        column,
                        name,
                        checks,
                        index_exprs,
                    } => (*checks, *index_exprs) = check::renamed_column(cx, &t, *column, name)?,
                    _ => {}
                }
                cx.catalog.change_table(cx.tx, t.oid, change)?;
            }
            let mut r = done("ALTER TABLE");
            r.notices = notices;
            Ok(r)
        }
        BoundStatement::AddKey { table, key } => {
            index::add_key(cx, &table, key)?;
            Ok(done("ALTER TABLE"))
        }
        BoundStatement::AddForeignKey {
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
            Ok(done("ALTER TABLE"))
        }
        BoundStatement::AddCheck {
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
            // The partitions get the constraint too, by the same name.
            for t in with_partitions(cx, &table) {
                cx.catalog.add_check(cx.tx, t.oid, check.clone())?;
            }
            Ok(done("ALTER TABLE"))
        }
        BoundStatement::DropConstraint(d) => {
            match d {
                sql::bound::ConstraintDrop::Check { table, check } => {
                    // The partitions' constraints of that name go with it.
                    let name = table
                        .checks
                        .iter()
                        .find(|c| c.oid == check)
                        .map(|c| &c.name);
                    for t in with_partitions(cx, &table) {
                        if t.oid == table.oid {
                            cx.catalog.drop_check(cx.tx, t.oid, check)?;
                        } else if let Some(c) = t.checks.iter().find(|c| Some(&c.name) == name) {
                            cx.catalog.drop_check(cx.tx, t.oid, c.oid)?;
                        }
                    }
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
                    drop_index_tree(cx, &table, index.oid)?;
                }
            }
            Ok(done("ALTER TABLE"))
        }
        BoundStatement::Comment(sql::bound::CommentOn {
            table,
            object,
            sub,
            text,
        }) => {
            cx.catalog
                .set_comment(cx.tx, table.oid, object, sub, text)?;
            Ok(done("COMMENT"))
        }
        BoundStatement::DropColumn(sql::bound::ColumnDrop {
            table,
            column,
            dependents,
            notices,
        }) => {
            for (t, fk) in &dependents {
                cx.catalog.drop_foreign_key(cx.tx, t.oid, fk.oid)?;
            }
            for t in with_partitions(cx, &table) {
                for index in check::predicates_reading(cx, &t, column)? {
                    cx.catalog.drop_index(cx.tx, t.oid, index)?;
                }
                cx.catalog.drop_column(cx.tx, t.oid, column)?;
            }
            Ok(StatementResult {
                tag: "ALTER TABLE".into(),
                notices,
                ..Default::default()
            })
        }
        BoundStatement::DropTables {
            tables,
            notices,
            foreign_keys,
            ..
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
        BoundStatement::Lock { .. } => Ok(done("LOCK TABLE")),
        BoundStatement::Query(_)
        | BoundStatement::Insert(_)
        | BoundStatement::Update(_)
        | BoundStatement::Delete(_)
        | BoundStatement::Explain { .. }
        | BoundStatement::CopyTo { .. } => Err(PgError::internal(
            "a statement with a plan reached the utility executor",
        )),
    }
}

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
            // Its partial indexes cannot either, but each new version needs its entries.
            index_exprs: sql::binder::bind_index_exprs(&cx.session.catalog, &new, cx.session.info)?,
        };
        // The update's own NOT NULL check catches a default that is NULL for a row.
        let every_row = target_scan(cx, &new, None);
        return with_every_row(cx, |all| dml::update(all, &update, &every_row, None))
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

/// The planner's scan of `table`'s rows that `condition` may keep, as UPDATE and DELETE
/// find theirs (`planner::target_scan`, a partitioned table's through its partitions).
fn target_scan(
    cx: &ExecContext,
    table: &std::sync::Arc<catalog::TableDesc>,
    condition: Option<&sql::bound::Expr>,
) -> planner::Plan {
    let settings = cx.session.settings.planner();
    let pcx = planner::PlanContext {
        snapshot_xmin: cx.snapshot.xmin,
        catalog: &cx.session.catalog,
        sizes: &crate::PoolSizes(cx.pool),
        settings: &settings,
        subplans: None,
    };
    planner::target_scan(&pcx, table, condition)
}

/// Does a row committed by now (see [`with_every_row`]) make `condition` true? What
/// SET NOT NULL and ADD CHECK ask of the rows before they change the table.
pub(crate) fn some_row_where(
    cx: &ExecContext,
    table: &std::sync::Arc<catalog::TableDesc>,
    condition: &sql::bound::Expr,
) -> PgResult<bool> {
    let plan = target_scan(cx, table, Some(condition));
    let found = with_every_row(cx, |all| exec::build(&plan, all.env())?.next())?;
    Ok(found.is_some())
}

/// Does a row of `table` committed by now (see [`with_every_row`]; a partitioned
/// table's, from its partitions) make `test` true? What a new partition's bound asks of
/// the rows it would take in (ATTACH's validation, a DEFAULT partition's rows).
pub(crate) fn some_committed_row(
    cx: &ExecContext,
    table: &std::sync::Arc<catalog::TableDesc>,
    mut test: impl FnMut(&[common::Value]) -> bool,
) -> PgResult<bool> {
    let plan = target_scan(cx, table, None);
    with_every_row(cx, |all| {
        let mut rows = exec::build(&plan, all.env())?;
        while let Some(row) = rows.next()? {
            if test(&row) {
                return Ok(true);
            }
        }
        Ok(false)
    })
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
        partition_keys: Default::default(),
        params: cx.params,
    })
}

/// Drop index `index` of `table` and, for a partitioned index, its partitions' indexes
/// that belong to it, at every level.
fn drop_index_tree(
    cx: &ExecContext,
    table: &catalog::TableDesc,
    index: common::Oid,
) -> PgResult<()> {
    let mut gone = vec![index];
    cx.catalog.drop_index(cx.tx, table.oid, index)?;
    if table.partition_key.is_some() {
        // Parents come before their partitions in the list.
        for d in cx.session.catalog.descendants(table.oid) {
            for i in &d.indexes {
                if i.parent.is_some_and(|p| gone.contains(&p)) {
                    cx.catalog.drop_index(cx.tx, d.oid, i.oid)?;
                    gone.push(i.oid);
                }
            }
        }
    }
    Ok(())
}

/// `table` and, if it is partitioned, every partition below it (partition rule 1: an
/// ALTER TABLE that changes its columns changes theirs alike). The caller holds
/// AccessExclusive on all of them (the server locks the partitions with their parent).
fn with_partitions(
    cx: &ExecContext,
    table: &std::sync::Arc<catalog::TableDesc>,
) -> Vec<std::sync::Arc<catalog::TableDesc>> {
    let mut out = vec![table.clone()];
    if table.partition_key.is_some() {
        out.extend(cx.session.catalog.descendants(table.oid));
    }
    out
}

/// PostgreSQL's error for a column made NOT NULL over rows holding NULL.
fn not_null_violated(column: &str, table: &str) -> PgError {
    PgError::new(
        common::SqlState::NOT_NULL_VIOLATION,
        format!("column \"{column}\" of relation \"{table}\" contains null values"),
    )
}

/// Make a new sequence's relation and its page (before its catalog record).
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
