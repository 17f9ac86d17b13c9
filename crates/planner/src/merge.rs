//! Merge joins (planner rule 8): the equalities a hash join would hash are also ordered
//! (every hash-joinable type has a btree order that agrees with its `=`), so the same
//! clauses can merge two inputs sorted on them. Each side comes in that order the
//! cheapest way: as it is where it already is (a Sort on the keys, an index scan whose
//! leading columns are the keys), else through an index of its table that gives the order,
//! else by a Sort.

#[allow(unused_imports)]
use super::*;
use crate::join::HashClauses;

/// A merge join of `left` and `right` on the hashable equalities of `rest` (over the
/// joined row), the others its Join Filter; `None` if there are none. Any join kind (a
/// full join only without a Join Filter, as PostgreSQL).
pub(crate) fn merge_join(
    cx: &PlanContext<'_>,
    left: &Plan,
    right: &Plan,
    kind: JoinKind,
    rest: &[Expr],
) -> Option<Plan> {
    let HashClauses {
        hash_conds,
        left_keys,
        right_keys,
        others,
    } = crate::join::hash_clauses(left.width(), rest)?;
    // PostgreSQL merges a FULL join only where every clause is a merge clause (its
    // executor cannot return a row the rest rejected from a marked group); a RIGHT join
    // has the same rule.
    if matches!(kind, JoinKind::Full | JoinKind::Right) && !others.is_empty() {
        return None;
    }
    // PostgreSQL's merge paths: both sides sorted (each as it is where it is in order:
    // `sort_inner_and_outer`), or the outer side in an order it has (as it is, or an
    // index scan of it) over the inner in order however is cheapest
    // (`match_unsorted_outer`). A sorted outer over an index scan chosen for its order is
    // none of them.
    let left = sorted_on(cx, left.clone(), &left_keys);
    let right = if matches!(left, Plan::Sort { .. }) {
        explicitly_sorted(right.clone(), &right_keys)
    } else {
        sorted_on(cx, right.clone(), &right_keys)
    };
    Some(Plan::MergeJoin {
        right_width: right.width(),
        left: Box::new(left),
        right: Box::new(right),
        kind,
        merge_conds: hash_conds,
        left_keys,
        right_keys,
        on: conjoin(others),
    })
}

/// `plan` in the order of `keys`: as it is where it is in that order, else under a Sort.
fn explicitly_sorted(plan: Plan, keys: &[Expr]) -> Plan {
    let keys = ascending(keys);
    if in_order(&plan, &keys) {
        return plan;
    }
    Plan::Sort {
        input: Box::new(plan),
        keys,
    }
}

/// The sort keys a merge join wants of a side: each key ascending, NULLs last.
pub(crate) fn ascending(keys: &[Expr]) -> Vec<SortKey> {
    keys.iter()
        .map(|k| SortKey {
            expr: k.clone(),
            desc: false,
            nulls_first: false,
        })
        .collect()
}

/// `plan`'s rows in the order of `keys` (ascending, NULLs last): `plan` itself where
/// it is in that order, else the cheaper of a scan of its table through an index in
/// that order and a Sort over it.
pub(crate) fn sorted_on(cx: &PlanContext<'_>, plan: Plan, keys: &[Expr]) -> Plan {
    sorted_by(cx, plan, ascending(keys))
}

/// `plan`'s rows in the order of `keys`, as [`sorted_on`] (any directions).
pub(crate) fn sorted_by(cx: &PlanContext<'_>, plan: Plan, keys: Vec<SortKey>) -> Plan {
    if in_order(&plan, &keys) {
        return plan;
    }
    let indexed = index_ordered_by(cx, &plan, &keys);
    let sorted = Plan::Sort {
        input: Box::new(plan),
        keys,
    };
    match indexed {
        Some(ix) => {
            let est = crate::estimate::Estimator::new(*cx);
            if est.estimate(&ix).total < est.estimate(&sorted).total {
                ix
            } else {
                sorted
            }
        }
        None => sorted,
    }
}

/// A scan `plan` (of one table, all its columns) read through an index in the order of
/// `keys`, columns of the table (`crate::scan::index_order`).
pub(crate) fn index_ordered(cx: &PlanContext<'_>, plan: &Plan, keys: &[Expr]) -> Option<Plan> {
    index_ordered_by(cx, plan, &ascending(keys))
}

fn index_ordered_by(cx: &PlanContext<'_>, plan: &Plan, keys: &[SortKey]) -> Option<Plan> {
    if !matches!(
        plan,
        Plan::SeqScan { .. } | Plan::IndexScan { .. } | Plan::BitmapHeapScan { .. }
    ) || !keys
        .iter()
        .all(|k| matches!(k.expr.kind, ExprKind::Column(_)))
    {
        return None;
    }
    let types = plan.column_types()?;
    let exprs: Vec<Expr> = types
        .iter()
        .enumerate()
        .map(|(i, ty)| Expr::column(i, *ty))
        .collect();
    crate::scan::index_order(cx, plan, &exprs, keys)
}

/// Are `plan`'s rows in the order of `keys` (ascending, NULLs last) as it stands: a Sort
/// that leads with them, or a scan through an index that leads with them in that order
/// (forward) or its reverse (backward), under filters?
pub(crate) fn in_key_order(plan: &Plan, keys: &[Expr]) -> bool {
    in_order(plan, &ascending(keys))
}

/// [`in_key_order`] for keys of any direction.
pub(crate) fn in_order(plan: &Plan, keys: &[SortKey]) -> bool {
    match plan {
        Plan::Filter { input, .. } => in_order(input, keys),
        Plan::Sort { keys: have, .. } => {
            have.len() >= keys.len() && have.iter().zip(keys).all(|(h, k)| h == k)
        }
        Plan::IndexScan {
            index, backward, ..
        } => {
            index.columns.len() >= keys.len()
                && keys.iter().enumerate().all(|(pos, k)| {
                    let ExprKind::Column(c) = k.expr.kind else {
                        return false;
                    };
                    let (desc, nulls_first) = index.order.column(pos);
                    index.columns[pos] == c
                        && (desc != *backward, nulls_first != *backward) == (k.desc, k.nulls_first)
                })
        }
        _ => false,
    }
}

/// `plan` as it was before [`sorted_on`] put it in the order of `keys`: without the Sort
/// on them, or, for a scan of a whole table through an index (which only an order
/// makes), as a sequential scan with the whole condition, to be planned again.
pub(crate) fn unsorted(cx: &PlanContext<'_>, plan: Plan, keys: &[Expr]) -> Plan {
    match plan {
        Plan::Sort { input, keys: have } if have == ascending(keys) => *input,
        Plan::IndexScan {
            table,
            index,
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
            filter,
            columns,
            ..
        } => Plan::SeqScan {
            filter: crate::predicate::scan_condition(cx, &table, &index, filter.as_ref()),
            table,
            columns,
        },
        other => other,
    }
}
