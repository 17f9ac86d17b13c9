//! The order a node tests its conditions in (planner rule 17; PostgreSQL's
//! `order_qual_clauses`): cheapest per row first, by the same per-row cost the estimates
//! use ([`cost::qual_cost`]), conditions of equal cost in the order they came. A cheap
//! test that fails spares the dear ones, and EXPLAIN lists the conditions as PostgreSQL
//! does: `((t.a = u.k) AND ((t.b + 0) = u.v))`.

#[allow(unused_imports)]
use super::*;

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
        | Plan::IndexScan { filter, .. }
        | Plan::BitmapHeapScan { filter, .. } => sort(cx, filter),
        Plan::Filter { input, predicate } => {
            let mut p = Some(std::mem::replace(
                predicate,
                Expr::constant(common::Value::Bool(true), common::DataType::Bool),
            ));
            sort(cx, &mut p);
            *predicate = p.expect("a predicate stays one");
            order(cx, input);
        }
        Plan::NestedLoopJoin {
            left, right, on, ..
        }
        | Plan::HashJoin {
            left, right, on, ..
        }
        | Plan::MergeJoin {
            left, right, on, ..
        } => {
            sort(cx, on);
            order(cx, left);
            order(cx, right);
        }
        Plan::IndexNestLoop {
            left,
            inner_filter,
            on,
            ..
        } => {
            sort(cx, inner_filter);
            sort(cx, on);
            order(cx, left);
        }
        Plan::SetOp { left, right, .. } => {
            order(cx, left);
            order(cx, right);
        }
        Plan::Append { inputs } => inputs.iter_mut().for_each(|p| order(cx, p)),
        Plan::Project { input, .. }
        | Plan::Aggregate { input, .. }
        | Plan::Sort { input, .. }
        | Plan::Distinct { input }
        | Plan::Limit { input, .. }
        | Plan::LockRows { input, .. } => order(cx, input),
        Plan::Result { input, .. } => {
            if let Some(input) = input {
                order(cx, input);
            }
        }
        Plan::SystemView { .. }
        | Plan::Values { .. }
        | Plan::GenerateSeries { .. }
        | Plan::Unnest { .. }
        | Plan::SequenceState { .. } => {}
    }
}

/// `e`'s conjuncts, cheapest first (a stable sort, as PostgreSQL's insertion sort).
fn sort(cx: &PlanContext<'_>, e: &mut Option<Expr>) {
    let Some(whole) = e.take() else {
        return;
    };
    if !matches!(whole.kind, ExprKind::Binary(BinaryOp::And, ..)) {
        *e = Some(whole);
        return;
    }
    let mut list: Vec<(f64, Expr)> = conjuncts(whole)
        .into_iter()
        .map(|c| (cost::qual_cost(cx, &[&c]).1, c))
        .collect();
    list.sort_by(|a, b| a.0.total_cmp(&b.0));
    *e = conjoin(list.into_iter().map(|(_, c)| c).collect());
}
