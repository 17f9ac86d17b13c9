//! The order a node tests its conditions in (planner rule 17; PostgreSQL's
//! `order_qual_clauses`): cheapest per row first, by the same per-row cost the estimates
//! use ([`cost::qual_cost`]), conditions of equal cost in the order they came. A cheap
//! test that fails spares the dear ones, and EXPLAIN lists the conditions as PostgreSQL
//! does: `((t.a = u.k) AND ((t.b + 0) = u.v))`.

#[allow(unused_imports)]
use super::*;
use common::{DataType, Value};

/// Order the conditions of every node of `stmt`'s plans, its subqueries' included.
pub(crate) fn order_statement(cx: &PlanContext<'_>, stmt: &mut PlannedStatement) {
    match stmt {
        PlannedStatement::Query { plan, subplans, .. }
        | PlannedStatement::CopyTo { plan, subplans, .. } => {
            order(cx, plan);
            subplans.order_quals(cx);
        }
        PlannedStatement::Insert {
            source, subplans, ..
        } => {
            order(cx, source);
            subplans.order_quals(cx);
        }
        PlannedStatement::Update { subplans, .. } | PlannedStatement::Delete { subplans, .. } => {
            subplans.order_quals(cx)
        }
        PlannedStatement::Explain { inner, .. } => order_statement(cx, inner),
    }
}

/// Order the conditions of `plan`'s nodes.
pub(crate) fn order(cx: &PlanContext<'_>, plan: &mut Plan) {
    match plan {
        Plan::SeqScan { filter, .. }
        | Plan::PartitionScans { filter, .. }
        | Plan::IndexScan { filter, .. }
        | Plan::BitmapHeapScan { filter, .. } => sort_opt(cx, filter),
        Plan::Filter { predicate, .. } => {
            let whole = std::mem::replace(predicate, Expr::constant(Value::Null, DataType::Bool));
            *predicate = sort(cx, whole);
        }
        Plan::NestedLoopJoin { on, .. }
        | Plan::HashJoin { on, .. }
        | Plan::MergeJoin { on, .. } => sort_opt(cx, on),
        Plan::IndexNestLoop {
            inner_filter, on, ..
        } => {
            sort_opt(cx, inner_filter);
            sort_opt(cx, on);
        }
        _ => {}
    }
    for child in plan.children_mut() {
        order(cx, child);
    }
}

fn sort_opt(cx: &PlanContext<'_>, e: &mut Option<Expr>) {
    *e = e.take().map(|e| sort(cx, e));
}

/// `e`'s conjuncts, cheapest first (a stable sort, as PostgreSQL's insertion sort).
fn sort(cx: &PlanContext<'_>, e: Expr) -> Expr {
    if !matches!(e.kind, ExprKind::Binary(BinaryOp::And, ..)) {
        return e;
    }
    let mut list: Vec<(f64, Expr)> = conjuncts(e)
        .into_iter()
        .map(|c| (cost::qual_cost(cx, &[&c]).1, c))
        .collect();
    list.sort_by(|a, b| a.0.total_cmp(&b.0));
    conjoin(list.into_iter().map(|(_, c)| c).collect()).expect("an AND has conjuncts")
}
