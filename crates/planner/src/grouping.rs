//! Grouping by hash or by sorted groups, chosen by cost (planner rule 13), as
//! PostgreSQL's `add_paths_to_grouping_rel` and the final sort above it weigh them: a
//! HashAggregate over the input as it comes, or a GroupAggregate over the input in the
//! order of the group keys (as it stands, through an index, or sorted:
//! [`crate::merge::sorted_by`]). An ORDER BY of group columns ([`sort_grouped`]) can take
//! its order from a GroupAggregate whose input is sorted that way, and then needs no Sort
//! of its own.

#[allow(unused_imports)]
use super::*;

/// The cheaper of hashing and sorting `input` into the groups of `group_by` (one plain
/// Aggregate without groups). Hashing comes first on a tie.
pub(crate) fn plan_aggregate(
    cx: &PlanContext<'_>,
    input: Plan,
    group_by: Vec<Expr>,
    aggs: Vec<AggCall>,
) -> Plan {
    if group_by.is_empty() {
        return Plan::Aggregate {
            input: Box::new(input),
            group_by,
            aggs,
            sorted: false,
            split: crate::AggSplit::Whole,
            dependent: vec![],
        };
    }
    let dependent = dependent_columns(cx, &input, &group_by);
    let keys: Vec<Expr> = crate::plan::group_keys(&group_by, &dependent)
        .into_iter()
        .cloned()
        .collect();
    let sorted = Plan::Aggregate {
        input: Box::new(crate::merge::sorted_on(cx, input.clone(), &keys)),
        group_by: group_by.clone(),
        aggs: aggs.clone(),
        sorted: true,
        split: crate::AggSplit::Whole,
        dependent: dependent.clone(),
    };
    let hashed = Plan::Aggregate {
        input: Box::new(input),
        group_by,
        aggs,
        sorted: false,
        split: crate::AggSplit::Whole,
        dependent,
    };
    cheaper(cx, hashed, sorted)
}

/// The places in `group_by` of plain columns of a table whose primary key `group_by`
/// holds, read by the same scan, and not of that key: the key determines them, so they
/// need not be part of a group's key (PostgreSQL's `remove_useless_groupby_columns`;
/// it looks at primary keys only, not at other unique indexes).
fn dependent_columns(cx: &PlanContext<'_>, input: &Plan, group_by: &[Expr]) -> Vec<usize> {
    // Most groupings are on a column or two: nothing a key could determine.
    if group_by.len() < 2 {
        return vec![];
    }
    let sources = crate::estimate::Estimator::new(*cx).column_sources(input);
    let source = |e: &Expr| match e.kind {
        ExprKind::Column(i) => sources.get(i).cloned().flatten(),
        _ => None,
    };
    let grouped: Vec<_> = group_by.iter().map(source).collect();
    let mut dependent = Vec::new();
    for (g, s) in grouped.iter().enumerate() {
        let Some((scan, table, column)) = s else {
            continue;
        };
        let Some(pk) = table.indexes.iter().find(|i| i.primary) else {
            continue;
        };
        if pk.columns.contains(column) {
            continue;
        }
        let key_grouped = pk.columns.iter().all(|k| {
            grouped.iter().any(|o| {
                o.as_ref().is_some_and(|(sc, t, c)| {
                    sc == scan && std::sync::Arc::ptr_eq(t, table) && c == k
                })
            })
        });
        if key_grouped {
            dependent.push(g);
        }
    }
    dependent
}

/// `a`, unless `b` costs less in total (add_path's fuzz: by more than 1%).
fn cheaper(cx: &PlanContext<'_>, a: Plan, b: Plan) -> Plan {
    let cost = |p: &Plan| {
        let e = crate::estimate::Estimator::new(*cx).estimate(p);
        crate::cost::Cost {
            startup: e.startup,
            total: e.total,
            rows: e.rows,
        }
    };
    if crate::cost::beats(&cost(&b), &cost(&a)) {
        b
    } else {
        a
    }
}

/// `input` sorted by `keys` (an ORDER BY): a Sort over it, or, where every key is a group
/// column of the grouping below it (through the select list and HAVING), a GroupAggregate
/// whose input comes in the order of those keys and then of the other group keys, which
/// needs no Sort; whichever costs less (the Sort first on a tie).
pub(crate) fn sort_grouped(cx: &PlanContext<'_>, input: Plan, keys: Vec<SortKey>) -> Plan {
    let regrouped = regroup(cx, &input, &keys);
    let sorted = Plan::Sort {
        input: Box::new(input),
        keys,
    };
    match regrouped {
        Some(g) => cheaper(cx, sorted, g),
        None => sorted,
    }
}

/// `plan` (a projection or HAVING filter over a grouping, or a grouping) with its
/// grouping made a GroupAggregate whose groups come in the order of `keys` (over
/// `plan`'s rows); `None` where a key is not a group column.
fn regroup(cx: &PlanContext<'_>, plan: &Plan, keys: &[SortKey]) -> Option<Plan> {
    match plan {
        Plan::Project { input, exprs } => {
            let mapped = keys
                .iter()
                .map(|k| match k.expr.kind {
                    ExprKind::Column(i) => match exprs.get(i)?.kind {
                        ExprKind::Column(_) => Some(SortKey {
                            expr: exprs[i].clone(),
                            ..k.clone()
                        }),
                        _ => None,
                    },
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?;
            Some(Plan::Project {
                input: Box::new(regroup(cx, input, &mapped)?),
                exprs: exprs.clone(),
            })
        }
        Plan::Filter { input, predicate } => Some(Plan::Filter {
            input: Box::new(regroup(cx, input, keys)?),
            predicate: predicate.clone(),
        }),
        Plan::Aggregate {
            input,
            group_by,
            aggs,
            dependent,
            ..
        } if !group_by.is_empty() => {
            // Each key a group column; then the group keys no key named, ascending.
            let mut order = Vec::with_capacity(group_by.len());
            let mut named = vec![false; group_by.len()];
            for k in keys {
                let ExprKind::Column(g) = k.expr.kind else {
                    return None;
                };
                let e = group_by.get(g)?;
                // A column the key determines orders nothing PostgreSQL's grouping
                // would: it is not a group key there.
                if dependent.contains(&g) {
                    return None;
                }
                if !named[g] {
                    named[g] = true;
                    order.push(SortKey {
                        expr: e.clone(),
                        desc: k.desc,
                        nulls_first: k.nulls_first,
                    });
                }
            }
            for (g, e) in group_by.iter().enumerate() {
                if !named[g] && !dependent.contains(&g) {
                    order.push(SortKey {
                        expr: e.clone(),
                        desc: false,
                        nulls_first: false,
                    });
                }
            }
            let keys: Vec<Expr> = crate::plan::group_keys(group_by, dependent)
                .into_iter()
                .cloned()
                .collect();
            let raw = crate::merge::unsorted(cx, (**input).clone(), &keys);
            Some(Plan::Aggregate {
                input: Box::new(crate::merge::sorted_by(cx, raw, order)),
                group_by: group_by.clone(),
                aggs: aggs.clone(),
                sorted: true,
                split: crate::AggSplit::Whole,
                dependent: dependent.clone(),
            })
        }
        _ => None,
    }
}
