//! `CREATE TABLE ... PARTITION OF parent FOR VALUES ...`: the bound's values evaluated,
//! checked as PostgreSQL's `check_new_partition_bound` checks them against the
//! parent's other partitions (under the parent's AccessExclusive lock, so no other
//! partition comes or goes meanwhile), and made the new table's
//! [`catalog::partition::PartitionOf`].

use catalog::CatalogSnapshot;
use catalog::partition::{BoundConflict, PartitionBound, PartitionOf, RangeDatum, RangeKey};
use common::{PgError, PgResult, SqlState, Value};
use sql::bound::{BoundDatum, BoundPartitionOf, BoundPartitionSpec};

use crate::ExecContext;

/// ALTER TABLE parent ATTACH PARTITION table: its bound checked as a new partition's,
/// every row of it checked against the bound (PostgreSQL's validation scan), then the
/// table made a partition, its indexes matching the parent's made theirs and the others
/// created (partition rule 5: under AccessExclusive on both).
pub(crate) fn attach(
    cx: &ExecContext,
    table: &std::sync::Arc<catalog::TableDesc>,
    of: &BoundPartitionOf,
) -> PgResult<()> {
    let partition = partition_of(cx, of, &table.name)?;
    let key = of
        .parent
        .partition_key
        .as_ref()
        .ok_or_else(|| PgError::internal("ATTACH to a table that is not partitioned"))?;
    if partition.bound != PartitionBound::Default {
        let holds = partition.bound.tester(key.strategy);
        rows_in_bound(cx, table, |row| {
            // A key expression that fails on a row keeps the row out of the bound.
            cx.partition_key_values(&of.parent, row)
                .is_ok_and(|values| holds(&values))
                && (of.parent.partition_of.is_none()
                    || crate::dml::check_partition_constraint(cx, &of.parent, row).is_ok())
        })?;
    }
    // The foreign keys of the parent and the levels above it hold for the rows that
    // come in (their referenced tables locked as ADD FOREIGN KEY locks them).
    for (fk, referenced) in inherited_foreign_keys(cx, &of.parent) {
        lock_referenced(cx, &referenced)?;
        crate::fkey::validate_new_key(cx, table, &referenced, &fk)?;
    }
    // The table's indexes that are the parent's, made its own; those the parent has
    // and the table lacks, made after.
    let mut taken: Vec<(common::Oid, Option<common::Oid>)> = Vec::new();
    let mut missing = Vec::new();
    for p in &of.parent.indexes {
        let same = table.indexes.iter().find(|i| {
            i.parent.is_none()
                && !taken.iter().any(|(t, _)| *t == i.oid)
                && i.columns == p.columns
                && i.unique == p.unique
                && i.primary == p.primary
                && i.constraint == p.constraint
                && i.order == p.order
                && i.include == p.include
                && i.predicate == p.predicate
                && i.exprs == p.exprs
        });
        match same {
            Some(i) => taken.push((i.oid, Some(p.oid))),
            None => missing.push(p.clone()),
        }
    }
    cx.catalog
        .set_partition_of(cx.tx, table.oid, Some(partition), &taken)?;
    let now = cx.catalog.snapshot(cx.tx);
    let table = now
        .table_by_oid(table.oid)
        .cloned()
        .ok_or_else(|| PgError::internal("an attached partition vanished"))?;
    for p in missing {
        if p.constraint {
            super::index::add_key(
                cx,
                &table,
                catalog::NewKey {
                    check_xmin: 0,
                    parent: Some(p.oid),
                    name: None,
                    columns: p.columns.clone(),
                    primary: p.primary,
                },
            )?;
        } else {
            let one = catalog::TableDesc {
                indexes: vec![p.clone()],
                ..(*of.parent).clone()
            };
            super::index::inherit_indexes(cx, &one, &table)?;
        }
    }
    Ok(())
}

/// Lock a table a foreign key references as ADD FOREIGN KEY does (ShareRowExclusive):
/// no row of it goes while a partition's rows are checked against it, and its
/// descriptor may record the new reference.
fn lock_referenced(cx: &ExecContext, referenced: &catalog::TableDesc) -> PgResult<()> {
    crate::lock_relation(cx.tx, referenced, txn::lock::LockMode::ShareRowExclusive)
}

/// The foreign keys of `table` and the partitioned tables above it, each with the table
/// it references: what a partition of `table` is held to.
fn inherited_foreign_keys(
    cx: &ExecContext,
    table: &catalog::TableDesc,
) -> Vec<(catalog::ForeignKey, std::sync::Arc<catalog::TableDesc>)> {
    let catalog = &cx.session.catalog;
    let mut out = Vec::new();
    let mut level = Some(table);
    while let Some(l) = level {
        for fk in &l.foreign_keys {
            if let Some(r) = catalog.table_by_oid(fk.ref_table) {
                out.push((fk.clone(), r.clone()));
            }
        }
        level = l
            .partition_of
            .as_ref()
            .and_then(|p| catalog.table_by_oid(p.parent))
            .map(|p| &**p);
    }
    out
}

/// ALTER TABLE parent DETACH PARTITION table CONCURRENTLY, its first transaction
/// (partition rule 6): the partition marked pending, which takes it out of its
/// parent's directory once committed, and given its partition constraint as a CHECK
/// constraint (unless it has one of the same text), which holds its rows where they
/// were.
pub(crate) fn mark_detach(
    cx: &ExecContext,
    parent: &catalog::TableDesc,
    table: &catalog::TableDesc,
) -> PgResult<()> {
    check_not_referenced(cx, parent, table)?;
    if let Some(expr) = crate::ruleutils::partition_constraint(cx.session, table)
        && !table.checks.iter().any(|c| c.expr == expr)
    {
        // The columns of every key from the root down.
        let catalog = &cx.session.catalog;
        let mut columns = Vec::new();
        let mut level = Some(parent);
        while let Some(l) = level {
            if let Some(key) = &l.partition_key {
                columns.extend(key.columns.iter().filter(|&&c| c < table.columns.len()));
                columns.extend(key.exprs.iter().flat_map(|e| e.columns.iter()));
            }
            level = l
                .partition_of
                .as_ref()
                .and_then(|o| catalog.table_by_oid(o.parent))
                .map(|p| &**p);
        }
        columns.sort_unstable();
        columns.dedup();
        let mut check = catalog::NewCheck {
            name: None,
            expr,
            columns,
            validated: true,
        };
        check.name = Some(catalog.choose_check_name(table, &check));
        cx.catalog.add_check(cx.tx, table.oid, check)?;
    }
    cx.catalog.mark_detach_pending(cx.tx, table.oid)
}

/// ALTER TABLE parent DETACH PARTITION table (or CONCURRENTLY's second transaction,
/// or FINALIZE): a table of its own again, its indexes its own and the foreign keys it
/// was held to its own too (PostgreSQL keeps both).
pub(crate) fn detach(
    cx: &ExecContext,
    parent: &catalog::TableDesc,
    table: &catalog::TableDesc,
) -> PgResult<()> {
    check_not_referenced(cx, parent, table)?;
    for (fk, referenced) in inherited_foreign_keys(cx, parent) {
        lock_referenced(cx, &referenced)?;
        cx.catalog.add_foreign_key(
            cx.tx,
            table.oid,
            catalog::NewForeignKey {
                name: Some(fk.name.clone()),
                columns: fk.columns.clone(),
                ref_table: fk.ref_table,
                ref_columns: fk.ref_columns.clone(),
                ref_index: fk.ref_index,
                on_delete: fk.on_delete,
                on_update: fk.on_update,
                match_full: fk.match_full,
            },
        )?;
    }
    let freed: Vec<(common::Oid, Option<common::Oid>)> = table
        .indexes
        .iter()
        .filter(|i| {
            i.parent
                .is_some_and(|p| parent.indexes.iter().any(|x| x.oid == p))
        })
        .map(|i| (i.oid, None))
        .collect();
    cx.catalog.set_partition_of(cx.tx, table.oid, None, &freed)
}

/// The foreign keys referencing `parent` (or a level above it) reference the rows of
/// its partition `table`, which leave with it: none may be referenced (23503).
fn check_not_referenced(
    cx: &ExecContext,
    parent: &catalog::TableDesc,
    table: &catalog::TableDesc,
) -> PgResult<()> {
    let referencing: Vec<(catalog::ForeignKey, std::sync::Arc<catalog::TableDesc>)> = cx
        .session
        .catalog
        .referencing_through_parents(parent.oid)
        .into_iter()
        .filter(|(t, _)| t.oid != table.oid)
        .map(|(t, fk)| (fk.clone(), t.clone()))
        .collect();
    if !referencing.is_empty()
        && let Some(t) = cx.session.catalog.table_by_oid(table.oid)
    {
        for (_, r) in &referencing {
            lock_referenced(cx, r)?;
        }
        let mut rows = Vec::new();
        super::some_committed_row(cx, t, |row| {
            rows.push(row.to_vec());
            false
        })?;
        crate::fkey::check_detach(cx, table, &referencing, &rows)?;
    }
    Ok(())
}

/// Every row of `table` (all its leaves', committed by now) must pass `fits`: else
/// PostgreSQL's 23514 for a partition being attached.
fn rows_in_bound(
    cx: &ExecContext,
    table: &std::sync::Arc<catalog::TableDesc>,
    fits: impl Fn(&[Value]) -> bool,
) -> PgResult<()> {
    if super::some_committed_row(cx, table, |row| !fits(row))? {
        return Err(PgError::new(
            SqlState::CHECK_VIOLATION,
            format!(
                "partition constraint of relation \"{}\" is violated by some row",
                table.name
            ),
        ));
    }
    Ok(())
}

/// The bound of new partition `name`, checked (42P16 / 42P17 with PostgreSQL's words).
pub(crate) fn partition_of(
    cx: &ExecContext,
    of: &BoundPartitionOf,
    name: &str,
) -> PgResult<PartitionOf> {
    let eval = |e: &sql::bound::Expr| crate::eval::eval(e, &[], cx.session);
    let bound = match &of.spec {
        BoundPartitionSpec::Default => PartitionBound::Default,
        BoundPartitionSpec::Hash { modulus, remainder } => PartitionBound::Hash {
            modulus: *modulus,
            remainder: *remainder,
        },
        BoundPartitionSpec::List(values) => {
            let mut out: Vec<Value> = Vec::with_capacity(values.len());
            for e in values {
                let v = eval(e)?;
                // A value listed twice is listed once (PostgreSQL drops duplicates).
                let dup = out.iter().any(|o| match (o.is_null(), v.is_null()) {
                    (true, true) => true,
                    (false, false) => o.cmp_non_null(&v).is_eq(),
                    _ => false,
                });
                if !dup {
                    out.push(v);
                }
            }
            PartitionBound::List(out)
        }
        BoundPartitionSpec::Range { from, to } => {
            let side = |side: &[BoundDatum]| -> PgResult<Vec<RangeDatum>> {
                side.iter()
                    .map(|d| {
                        Ok(match d {
                            BoundDatum::MinValue => RangeDatum::MinValue,
                            BoundDatum::MaxValue => RangeDatum::MaxValue,
                            BoundDatum::Value(e) => match eval(e)? {
                                Value::Null => {
                                    return Err(PgError::new(
                                        SqlState::INVALID_OBJECT_DEFINITION,
                                        "cannot specify NULL in range bound",
                                    ));
                                }
                                v => RangeDatum::Value(v),
                            },
                        })
                    })
                    .collect()
            };
            let (from, to) = (side(from)?, side(to)?);
            if RangeKey(from.clone()) >= RangeKey(to.clone()) {
                return Err(PgError::new(
                    SqlState::INVALID_OBJECT_DEFINITION,
                    format!("empty range bound specified for partition \"{name}\""),
                )
                .with_detail(format!(
                    "Specified lower bound {} is greater than or equal to upper bound {}.",
                    datums_text(cx, &from),
                    datums_text(cx, &to)
                )));
            }
            PartitionBound::Range { from, to }
        }
    };
    let catalog = &cx.session.catalog;
    if let Some(set) = catalog.partitions(of.parent.oid) {
        if let Err(conflict) = set.check_new(&bound) {
            return Err(conflict_error(catalog, conflict, name, &bound));
        }
        // Rows the DEFAULT partition holds that the new partition would take: refused,
        // as PostgreSQL refuses them (they would be in the wrong partition).
        if bound != PartitionBound::Default
            && let Some(d) = set
                .default_partition()
                .and_then(|d| catalog.table_by_oid(d))
        {
            check_default_rows(cx, of, d, &bound)?;
        }
    }
    // A partition whose DETACH CONCURRENTLY is pending keeps its room (partition rule 6).
    if let Some(pending) = catalog.detach_pending(of.parent.oid)
        && let Some(p) = &pending.partition_of
        && let Err(conflict) =
            catalog::partition::Partitions::of_one(pending.oid, &p.bound).check_new(&bound)
    {
        return Err(conflict_error(catalog, conflict, name, &bound));
    }
    Ok(PartitionOf {
        parent: of.parent.oid,
        types: of.key_types.clone(),
        bound,
        detach_pending: None,
    })
}

/// No row of DEFAULT partition `default` may belong in a new partition with `bound`.
fn check_default_rows(
    cx: &ExecContext,
    of: &BoundPartitionOf,
    default: &std::sync::Arc<catalog::TableDesc>,
    bound: &PartitionBound,
) -> PgResult<()> {
    let Some(key) = &of.parent.partition_key else {
        return Ok(());
    };
    let holds = bound.tester(key.strategy);
    let takes = |row: &[Value]| {
        cx.partition_key_values(&of.parent, row)
            .is_ok_and(|values| holds(&values))
    };
    if super::some_committed_row(cx, default, takes)? {
        return Err(PgError::new(
            SqlState::CHECK_VIOLATION,
            format!(
                "updated partition constraint for default partition \"{}\" would be violated by some row",
                default.name
            ),
        ));
    }
    Ok(())
}

/// `(v1, v2)` as PostgreSQL's messages show a bound.
fn datums_text(cx: &ExecContext, datums: &[RangeDatum]) -> String {
    let parts: Vec<String> = datums
        .iter()
        .map(|d| match d {
            RangeDatum::MinValue => "MINVALUE".to_string(),
            RangeDatum::MaxValue => "MAXVALUE".to_string(),
            RangeDatum::Value(v) => v.to_text(cx.session.text()).unwrap_or_default(),
        })
        .collect();
    format!("({})", parts.join(", "))
}

fn conflict_error(
    catalog: &CatalogSnapshot,
    conflict: BoundConflict,
    name: &str,
    bound: &PartitionBound,
) -> PgError {
    let name_of = |oid| {
        catalog
            .table_by_oid(oid)
            .map_or_else(|| oid.to_string(), |t| t.name.clone())
    };
    match conflict {
        BoundConflict::Overlaps(other) => PgError::new(
            SqlState::INVALID_OBJECT_DEFINITION,
            format!(
                "partition \"{name}\" would overlap partition \"{}\"",
                name_of(other)
            ),
        ),
        BoundConflict::DefaultExists(other) => PgError::new(
            SqlState::INVALID_OBJECT_DEFINITION,
            format!(
                "partition \"{name}\" conflicts with existing default partition \"{}\"",
                name_of(other)
            ),
        ),
        BoundConflict::Modulus {
            existing,
            existing_modulus,
            larger,
        } => {
            let modulus = match bound {
                PartitionBound::Hash { modulus, .. } => *modulus,
                _ => 0,
            };
            let detail = if larger {
                format!(
                    "The new modulus {modulus} is not divisible by {existing_modulus}, the modulus of existing partition \"{}\".",
                    name_of(existing)
                )
            } else {
                format!(
                    "The new modulus {modulus} is not a factor of {existing_modulus}, the modulus of existing partition \"{}\".",
                    name_of(existing)
                )
            };
            PgError::new(
                SqlState::INVALID_OBJECT_DEFINITION,
                "every hash partition modulus must be a factor of the next larger modulus",
            )
            .with_detail(detail)
        }
    }
}
