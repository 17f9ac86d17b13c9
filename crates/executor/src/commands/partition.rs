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
    Ok(PartitionOf {
        parent: of.parent.oid,
        columns: of.key_columns.clone(),
        bound,
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
    let settings = cx.session.settings.planner();
    let pcx = planner::PlanContext {
        catalog: &cx.session.catalog,
        sizes: &crate::PoolSizes(cx.pool),
        settings: &settings,
        subplans: None,
    };
    let every_row = planner::target_scan(&pcx, default, None);
    let fresh = cx.tx.fresh_snapshot();
    let env = crate::exec::Env {
        snapshot: &fresh,
        ..cx.env()
    };
    let mut rows = crate::exec::build(&every_row, env)?;
    while let Some(row) = rows.next()? {
        let values: Vec<Value> = key.columns.iter().map(|&c| row[c].clone()).collect();
        if bound.holds(key.strategy, &values) {
            return Err(PgError::new(
                SqlState::CHECK_VIOLATION,
                format!(
                    "updated partition constraint for default partition \"{}\" would be violated by some row",
                    default.name
                ),
            ));
        }
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
