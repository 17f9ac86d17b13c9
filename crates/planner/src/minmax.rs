//! `min(x)` and `max(x)` read one row of an index in `x`'s order (planner rule 15,
//! PostgreSQL's `planagg.c`).
//!
//! An aggregate without GROUP BY over one table whose every aggregate is `min` or `max`
//! of an expression an index of the table leads with is rewritten, where that costs
//! less, into one uncorrelated subquery per aggregate: `(SELECT x FROM t WHERE ... AND x
//! IS NOT NULL ORDER BY x [DESC] LIMIT 1)`, run once (an InitPlan), which the index
//! answers from one end. Over no rows it is NULL, as the aggregate is.

#[allow(unused_imports)]
use super::*;
use common::Value;
use sql::bound::{AggFunc, SubLink, SubLinkKind};

/// Rewrite each min / max aggregate of `lp` (and of the queries in its FROM) that an
/// index answers more cheaply.
pub(crate) fn rewrite(cx: &PlanContext<'_>, lp: &mut LogicalPlan) {
    if let LogicalPlan::Aggregate {
        input,
        group_by,
        aggs,
    } = lp
        && group_by.is_empty()
        && let Some(subqueries) = index_subqueries(cx, input, aggs)
    {
        *lp = LogicalPlan::Project {
            input: Box::new(LogicalPlan::Values {
                rows: vec![vec![]],
                width: 0,
            }),
            exprs: subqueries,
        };
        return;
    }
    match lp {
        LogicalPlan::SystemView { .. }
        | LogicalPlan::Scan { .. }
        | LogicalPlan::Sequence { .. }
        | LogicalPlan::Values { .. }
        | LogicalPlan::Unnest { .. }
        | LogicalPlan::GenerateSeries { .. } => {}
        LogicalPlan::Filter { input, predicate } => {
            let aggregate = matches!(**input, LogicalPlan::Aggregate { .. });
            rewrite(cx, input);
            // A HAVING over the aggregates now reads their subqueries' values, fixed for
            // the statement: a condition evaluated once (PostgreSQL's One-Time Filter).
            if aggregate && let LogicalPlan::Project { exprs, .. } = &**input {
                *predicate = crate::pushdown::substitute_columns(predicate.clone(), exprs);
            }
        }
        LogicalPlan::Project { input, .. }
        | LogicalPlan::Aggregate { input, .. }
        | LogicalPlan::Sort { input, .. }
        | LogicalPlan::Distinct { input }
        | LogicalPlan::Limit { input, .. }
        | LogicalPlan::LockRows { input, .. } => rewrite(cx, input),
        LogicalPlan::Join { left, right, .. } | LogicalPlan::SetOp { left, right, .. } => {
            rewrite(cx, left);
            rewrite(cx, right);
        }
    }
}

/// For an aggregate of `aggs` over `input`, each aggregate's subquery (one per distinct
/// aggregate, shared by its repeats), where every one is read through an index and
/// together they cost less than the aggregate.
fn index_subqueries(
    cx: &PlanContext<'_>,
    input: &LogicalPlan,
    aggs: &[AggCall],
) -> Option<Vec<Expr>> {
    let (table, predicate) = match input {
        LogicalPlan::Scan { table } => (table, None),
        LogicalPlan::Filter {
            input: scan,
            predicate,
        } => match &**scan {
            LogicalPlan::Scan { table } => (table, Some(predicate)),
            _ => return None,
        },
        _ => return None,
    };
    // Every aggregate a min or max of one value, no ORDER BY inside (PostgreSQL's
    // find_minmax_aggs_walker; DISTINCT does not change a min or max), each over an
    // expression that can lead an index; nothing reads an outer query's values.
    let correlated = |e: &Expr| {
        let mut found = false;
        e.walk(&mut |n| found |= matches!(n.kind, ExprKind::Outer(_)));
        found
    };
    if aggs.is_empty() || predicate.is_some_and(correlated) {
        return None;
    }
    for a in aggs {
        let arg = a.arg.as_ref()?;
        if !matches!(a.func, AggFunc::Min | AggFunc::Max)
            || !a.order_by.is_empty()
            || a.sep.is_some()
            || correlated(arg)
        {
            return None;
        }
        let leads = match &arg.kind {
            ExprKind::Column(c) => table.index_positions_leading(*c).next().is_some(),
            _ => table.indexes.iter().any(|i| !i.exprs.is_empty()),
        };
        if !leads {
            return None;
        }
    }
    // Each distinct aggregate's subquery, planned: taken only where an index gives its
    // order (no Sort), as PostgreSQL takes only a presorted path.
    let mut distinct: Vec<(&AggCall, Expr)> = Vec::new();
    let mut cost = 0.0;
    let estimator = crate::estimate::Estimator::new(*cx);
    for a in aggs {
        if distinct
            .iter()
            .any(|(d, _)| d.func == a.func && d.arg == a.arg)
        {
            continue;
        }
        let query = subquery(table, predicate, a);
        let plan = plan_query(cx, query.clone());
        if sorts(&plan) {
            return None;
        }
        cost += estimator.estimate(&plan).total;
        let link = SubLink {
            kind: SubLinkKind::Scalar,
            query: Arc::new(query),
            args: vec![],
        };
        distinct.push((a, Expr::new(ExprKind::SubLink(Box::new(link)), a.ty)));
    }
    // Against the aggregate as it stands (PostgreSQL adds both paths; the Result over
    // the InitPlans costs a tuple).
    let aggregate = plan_query(
        cx,
        LogicalPlan::Aggregate {
            input: Box::new(input.clone()),
            group_by: vec![],
            aggs: aggs.to_vec(),
        },
    );
    let plain = crate::estimate::Estimator::new(*cx)
        .estimate(&aggregate)
        .total;
    if cost + cx.settings.cpu_tuple_cost >= plain {
        return None;
    }
    Some(
        aggs.iter()
            .map(|a| {
                distinct
                    .iter()
                    .find(|(d, _)| d.func == a.func && d.arg == a.arg)
                    .map(|(_, e)| e.clone())
                    .expect("every aggregate has its subquery")
            })
            .collect(),
    )
}

/// `SELECT arg FROM table WHERE arg IS NOT NULL AND predicate ORDER BY arg [DESC] LIMIT
/// 1` for the min or max `agg`.
fn subquery(table: &Arc<TableDesc>, predicate: Option<&Expr>, agg: &AggCall) -> LogicalPlan {
    let arg = agg.arg.clone().expect("a min or max has its argument");
    let not_null = Expr::new(
        ExprKind::IsNull {
            expr: Box::new(arg.clone()),
            negated: true,
        },
        DataType::Bool,
    );
    let predicate = match predicate {
        // First, as PostgreSQL shows it.
        Some(p) => Expr::new(
            ExprKind::Binary(BinaryOp::And, Box::new(not_null), Box::new(p.clone())),
            DataType::Bool,
        ),
        None => not_null,
    };
    let desc = agg.func == AggFunc::Max;
    LogicalPlan::Limit {
        input: Box::new(LogicalPlan::Sort {
            input: Box::new(LogicalPlan::Project {
                input: Box::new(LogicalPlan::Filter {
                    input: Box::new(LogicalPlan::Scan {
                        table: table.clone(),
                    }),
                    predicate,
                }),
                exprs: vec![arg.clone()],
            }),
            keys: vec![SortKey {
                expr: Expr::column(0, arg.ty),
                desc,
                // PostgreSQL's default for the direction; no NULL is read.
                nulls_first: desc,
            }],
        }),
        limit: Some(Expr::new(ExprKind::Const(Value::Int8(1)), DataType::Int8)),
        offset: None,
    }
}

/// Whether `plan` sorts anywhere.
fn sorts(plan: &Plan) -> bool {
    matches!(plan, Plan::Sort { .. }) || plan.children().into_iter().any(sorts)
}
