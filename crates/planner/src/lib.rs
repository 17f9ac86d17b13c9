//! The planner: bound statements to executable plans. `README.md` has the call tree and
//! the rules the code cites (planner rule N).
//!
//! Only statements with a plan come here: queries, DML, EXPLAIN of them and COPY TO.
//! Utility statements (DDL, TRUNCATE, LOCK, COPY FROM) go around the planner to
//! `executor::commands`, as PostgreSQL's ProcessUtility does.
//!
//! The planner maps each logical operator to its physical one, pushes WHERE filters
//! into the scans below them (through joins and plain projections, [`add_filter`]), so
//! that a filtered scan never materialises rows it will drop, and reads a table the
//! cheapest way PostgreSQL's costs know ([`scan_path`]). Inner joins run in the order
//! their costs choose ([`join_search`]), each pair of inputs joined the cheapest way: a
//! nested loop, an index nested loop, a hash join ([`make_join`]). Under a LIMIT, a sort
//! by an index's leading columns becomes an index scan in that order
//! ([`ordered_by_index`]). UPDATE and DELETE get the scan of the rows they change
//! ([`target_scan`]), and every subquery in a statement's expressions is planned with it
//! ([`SubPlans`]): the executor runs what it is given and decides nothing.

pub mod cache;
mod columns;
mod cost;
pub mod estimate;
mod fold;
pub use fold::fold;
mod grouping;
mod indexonly;
mod join;
pub mod join_search;
mod merge;
mod minmax;
pub mod partition;
mod partitionwise;
mod plan;
mod predicate;
mod pullup;
mod pushdown;
mod quals;
mod scan;
pub mod selectivity;
mod subplans;

use std::ops::Bound;
use std::sync::Arc;

use catalog::{IndexDesc, TableDesc};
use common::{DataType, PgError, PgResult};
use sql::bound::{
    AggCall, BoundDelete, BoundInsert, BoundStatement, BoundUpdate, Expr, JoinKind, LogicalPlan,
    OutputColumn, SetOpKind, SortKey,
};
use sql::bound::{BinaryOp, ExprKind};

pub use cache::{CachedPlan, PlanCacheMode};
pub use columns::columns_read;
pub use cost::{NoStorage, PlanContext, PlannerSettings, RelSizes};
pub use join::{inner_unique, make_join};
pub use plan::{AggSplit, BitmapQual, ColumnSet, Plan, PlannedStatement, RunTimePrune, group_keys};
pub use pushdown::add_filter;
pub use scan::{
    indexes_examined, is_null_key, null_key, scan_path, target_scan, widened_integer_column,
};
pub use subplans::{SubPlans, hashed_subplan};

#[allow(unused_imports)]
pub(crate) use join::*;
#[allow(unused_imports)]
pub(crate) use pushdown::*;
#[allow(unused_imports)]
pub(crate) use scan::*;

/// Plan a query, DML, EXPLAIN or COPY TO. Utility statements (DDL, TRUNCATE, LOCK, COPY
/// FROM: [`BoundStatement::is_utility`]) have no plan: they go around the planner, as
/// PostgreSQL's ProcessUtility does, and one given here is an internal error. Every
/// subquery in the statement's expressions is planned here too ([`SubPlans`]).
pub fn plan(cx: &PlanContext<'_>, mut stmt: BoundStatement) -> PgResult<PlannedStatement> {
    // Constant casts folded first (rule 14); EXPLAIN's inner statement is planned below.
    if !matches!(stmt, BoundStatement::Explain { .. }) {
        stmt.for_each_expr_mut(&mut |e| {
            fold::fold_in_place(e);
            Ok(())
        })?;
    }
    // Min and max through an index (rule 15), before the subqueries that makes are
    // planned with the others.
    if let BoundStatement::Query(q) = &mut stmt {
        minmax::rewrite(cx, &mut q.plan);
    }
    let subplans = match &stmt {
        BoundStatement::Explain { .. } => SubPlans::default(),
        _ => SubPlans::of(cx, &mut stmt),
    };
    // The statement's conditions cost what their subqueries cost to run.
    let costs = subplans.costs().clone();
    let cx = &PlanContext {
        subplans: Some(&costs),
        ..*cx
    };
    let mut planned = match stmt {
        BoundStatement::Query(q) => PlannedStatement::Query {
            plan: plan_query(cx, q.plan),
            columns: q.columns,
            subplans,
        },
        BoundStatement::Insert(mut i) => {
            let source = plan_query(
                cx,
                std::mem::replace(
                    &mut i.source,
                    LogicalPlan::Values {
                        rows: vec![],
                        width: 0,
                    },
                ),
            );
            PlannedStatement::Insert {
                insert: Box::new(i),
                source,
                subplans,
            }
        }
        BoundStatement::Update(u) => PlannedStatement::Update {
            scan: target_scan(cx, &u.table, u.filter.as_ref()),
            update: u,
            subplans,
        },
        BoundStatement::Delete(d) => PlannedStatement::Delete {
            scan: target_scan(cx, &d.table, d.filter.as_ref()),
            delete: d,
            subplans,
        },
        BoundStatement::Explain { options, inner, .. } => PlannedStatement::Explain {
            options,
            inner: Box::new(plan(cx, *inner)?),
            planning: std::time::Duration::ZERO,
        },
        BoundStatement::CopyTo { query, format } => PlannedStatement::CopyTo {
            plan: plan_query(cx, query.plan),
            columns: query.columns,
            format,
            subplans,
        },
        _ => {
            return Err(PgError::internal("a utility statement reached the planner"));
        }
    };
    // Scans decode only the columns the plan reads (rule 12).
    columns::prune_statement(&mut planned);
    // A partitioned table's scan becomes its surviving partitions' (rule 18).
    partition::expand_statement(cx, &mut planned);
    // Scans whose columns an index holds read it alone (rule 19).
    indexonly::choose_statement(cx, &mut planned);
    // Each node tests its cheapest conditions first (rule 17).
    quals::order_statement(cx, &mut planned);
    Ok(planned)
}

/// Map a logical plan to a physical one.
pub fn plan_query(cx: &PlanContext<'_>, lp: LogicalPlan) -> Plan {
    let b = |p: Box<LogicalPlan>| Box::new(plan_query(cx, *p));
    match lp {
        LogicalPlan::Scan { table } => Plan::SeqScan {
            table,
            filter: None,
            columns: None,
        },
        LogicalPlan::Values { rows, width } => Plan::Values { rows, width },
        LogicalPlan::GenerateSeries { start, stop, step } => {
            Plan::GenerateSeries { start, stop, step }
        }
        LogicalPlan::Unnest {
            array,
            func,
            ordinality,
        } => Plan::Unnest {
            array,
            func,
            ordinality,
        },
        LogicalPlan::Sequence { seq, .. } => Plan::SequenceState { seq },
        LogicalPlan::SystemView { view, table } => Plan::SystemView {
            view,
            width: table.columns.len(),
            key: None,
        },
        LogicalPlan::Filter { input, predicate } => {
            // Conditions fixed for the whole statement gate the plan (evaluated once, as
            // PostgreSQL's One-Time Filter); the rest go down into it.
            let (gate, rest): (Vec<Expr>, Vec<Expr>) = pushdown::where_conjuncts(predicate)
                .into_iter()
                .partition(|c| is_constant(c) && c.ty == common::DataType::Bool);
            // EXISTS, NOT EXISTS and IN over plain subqueries: semi and anti joins
            // (rule 10), over the rest.
            let (rest, mut pulled) = pullup::pull_up(rest);
            // (Equalities after the other conditions, as PostgreSQL's classes give them.)
            let rest = pushdown::equivalences_last(rest);
            // Over inner joins, the WHERE is part of the join problem (rule 9), and so
            // are semi joins to a unique inner side, which are inner joins (their columns
            // after the tree's, dropped below).
            let mut plan = if join_search::is_inner_join(&input)
                || pulled.iter().any(|p| p.kind == JoinKind::Semi)
            {
                let (plan, width) = join_search::plan_joins_with(cx, *input, rest, &mut pulled);
                join_search::keep_leading(plan, width)
            } else {
                let input = plan_query(cx, *input);
                match conjoin(rest) {
                    Some(p) => add_filter(cx, input, p),
                    None => input,
                }
            };
            for p in pulled {
                let width = plan.width();
                let cond = p.placed_cond(width);
                let right = plan_query(cx, p.right);
                // A semi join to rows its condition makes unique is an inner join
                // (PostgreSQL's reduce_unique_semijoins), its right columns dropped.
                let types = plan.column_types();
                plan = match types {
                    Some(types)
                        if p.kind == JoinKind::Semi
                            && join::unique_on(&right, width, cond.as_ref()) =>
                    {
                        Plan::Project {
                            input: Box::new(make_join(cx, plan, right, JoinKind::Inner, cond)),
                            exprs: types
                                .into_iter()
                                .enumerate()
                                .map(|(i, ty)| Expr::column(i, ty))
                                .collect(),
                        }
                    }
                    _ => make_join(cx, plan, right, p.kind, cond),
                };
            }
            gated(plan, gate)
        }
        LogicalPlan::Project { input, exprs } => Plan::Project {
            input: b(input),
            exprs,
        },
        LogicalPlan::Join {
            left,
            right,
            kind,
            on,
            lateral,
            ..
        } if !lateral.is_empty() => {
            let right = plan_query(cx, *right);
            Plan::NestedLoopJoin {
                left: b(left),
                right_width: right.width(),
                right: Box::new(right),
                kind,
                on,
                lateral: Some(lateral),
                materialize: false,
            }
        }
        lp @ LogicalPlan::Join { .. } if join_search::is_inner_join(&lp) => {
            join_search::plan_joins(cx, lp, vec![])
        }
        LogicalPlan::Join {
            left,
            right,
            kind,
            on,
            ..
        } => make_join(cx, plan_query(cx, *left), plan_query(cx, *right), kind, on),
        LogicalPlan::Aggregate {
            input,
            group_by,
            aggs,
        } => grouping::plan_aggregate(cx, plan_query(cx, *input), group_by, aggs),
        LogicalPlan::Sort { input, keys } => ordered_by_index(
            cx,
            grouping::sort_grouped(cx, plan_query(cx, *input), keys),
            None,
        ),
        LogicalPlan::Distinct { input } => Plan::Distinct { input: b(input) },
        LogicalPlan::SetOp {
            kind: SetOpKind::Union,
            all,
            left,
            right,
        } => {
            // A chain of UNIONs is one Append (`a UNION ALL b UNION ALL c` binds as
            // `(a UNION ALL b) UNION ALL c`). A plain UNION removes duplicates in one pass
            // above it, so below it any UNION, ALL or not, joins the Append too.
            let mut inputs = Vec::new();
            union_inputs(cx, *left, !all, &mut inputs);
            union_inputs(cx, *right, !all, &mut inputs);
            let append = Plan::Append {
                inputs,
                prune: None,
                parent: None,
            };
            if all {
                append
            } else {
                Plan::Distinct {
                    input: Box::new(append),
                }
            }
        }
        LogicalPlan::SetOp {
            kind,
            all,
            left,
            right,
        } => Plan::SetOp {
            intersect: kind == SetOpKind::Intersect,
            all,
            left: b(left),
            right: b(right),
        },
        LogicalPlan::Limit {
            input,
            limit,
            offset,
        } => Plan::Limit {
            input: Box::new(ordered_by_index(
                cx,
                plan_query(cx, *input),
                Some((&limit, &offset)),
            )),
            limit,
            offset,
        },
        LogicalPlan::LockRows {
            input,
            table,
            tid_column,
            mode,
            wait,
            recheck,
            exprs,
        } => Plan::LockRows {
            input: Box::new(ordered_by_index(cx, plan_query(cx, *input), None)),
            table,
            tid_column,
            mode,
            wait,
            recheck,
            exprs,
        },
    }
}

/// `plan` under a gating Result for `gate` (conjuncts without columns): none if every one
/// is the constant true; no input if one is the constant false or NULL (PostgreSQL's
/// `One-Time Filter: false` over nothing).
fn gated(plan: Plan, gate: Vec<Expr>) -> Plan {
    use common::Value;
    let gate: Vec<Expr> = gate
        .into_iter()
        .map(fold_constant_condition)
        .filter(|c| !matches!(c.kind, ExprKind::Const(Value::Bool(true))))
        .collect();
    if gate.is_empty() {
        return plan;
    }
    let width = plan.width();
    if let Some(never) = gate
        .iter()
        .find(|c| matches!(c.kind, ExprKind::Const(Value::Bool(false) | Value::Null)))
    {
        return Plan::Result {
            input: None,
            filter: Expr::constant(Value::Bool(false), never.ty),
            width,
        };
    }
    Plan::Result {
        input: Some(Box::new(plan)),
        filter: conjoin(gate).expect("a conjunct at least"),
        width,
    }
}

/// A condition of constants folded where its value is plain (PostgreSQL's
/// `eval_const_expressions`, for what Myriad can decide without evaluating functions):
/// a comparison of two constants of one type, NOT, AND and OR of folded values. `1 = 2`
/// becomes `false`, which EXPLAIN shows as PostgreSQL does and which leaves nothing to
/// scan.
fn fold_constant_condition(e: Expr) -> Expr {
    use common::Value;
    use std::cmp::Ordering;
    let truth = |v: Option<bool>| {
        Expr::constant(v.map_or(Value::Null, Value::Bool), common::DataType::Bool)
    };
    let value = |e: &Expr| match &e.kind {
        ExprKind::Const(Value::Bool(b)) => Some(Some(*b)),
        ExprKind::Const(Value::Null) if e.ty == common::DataType::Bool => Some(None),
        _ => None,
    };
    match e.kind {
        ExprKind::Binary(op, l, r) => {
            let (l, r) = (fold_constant_condition(*l), fold_constant_condition(*r));
            match (op, &l.kind, &r.kind) {
                (BinaryOp::And | BinaryOp::Or, _, _)
                    if value(&l).is_some() && value(&r).is_some() =>
                {
                    let (a, b) = (value(&l).flatten(), value(&r).flatten());
                    truth(match op {
                        // SQL's three-valued AND and OR.
                        BinaryOp::And => match (a, b) {
                            (Some(false), _) | (_, Some(false)) => Some(false),
                            (Some(true), Some(true)) => Some(true),
                            _ => None,
                        },
                        _ => match (a, b) {
                            (Some(true), _) | (_, Some(true)) => Some(true),
                            (Some(false), Some(false)) => Some(false),
                            _ => None,
                        },
                    })
                }
                (
                    BinaryOp::Eq
                    | BinaryOp::NotEq
                    | BinaryOp::Lt
                    | BinaryOp::LtEq
                    | BinaryOp::Gt
                    | BinaryOp::GtEq,
                    _,
                    _,
                ) if l.ty == r.ty
                    && !matches!(l.ty, common::DataType::Array(_))
                    && constant_value(&l).is_some()
                    && constant_value(&r).is_some() =>
                {
                    let (a, b) = (constant_value(&l).unwrap(), constant_value(&r).unwrap());
                    if a.is_null() || b.is_null() {
                        return truth(None);
                    }
                    let c = a.cmp_non_null(b);
                    truth(Some(match op {
                        BinaryOp::Eq => c == Ordering::Equal,
                        BinaryOp::NotEq => c != Ordering::Equal,
                        BinaryOp::Lt => c == Ordering::Less,
                        BinaryOp::LtEq => c != Ordering::Greater,
                        BinaryOp::Gt => c == Ordering::Greater,
                        _ => c != Ordering::Less,
                    }))
                }
                _ => Expr::new(ExprKind::Binary(op, Box::new(l), Box::new(r)), e.ty),
            }
        }
        ExprKind::Not(x) => {
            let x = fold_constant_condition(*x);
            match value(&x) {
                Some(v) => truth(v.map(|b| !b)),
                None => Expr::new(ExprKind::Not(Box::new(x)), e.ty),
            }
        }
        kind => Expr::new(kind, e.ty),
    }
}

/// The value of a constant, or of an integer constant cast to a wider number (which
/// compares as the integer does: `Value::cmp_non_null` compares numbers of any kind).
fn constant_value(e: &Expr) -> Option<&common::Value> {
    use common::{DataType, Value};
    match &e.kind {
        ExprKind::Const(v) => Some(v),
        ExprKind::Cast { expr, .. } => match (&expr.kind, e.ty) {
            (
                ExprKind::Const(v @ (Value::Int2(_) | Value::Int4(_))),
                DataType::Int4 | DataType::Int8 | DataType::Numeric(None) | DataType::Float8,
            )
            | (ExprKind::Const(v @ Value::Int8(_)), DataType::Int8 | DataType::Numeric(None)) => {
                Some(v)
            }
            _ => None,
        },
        _ => None,
    }
}

/// The inputs of a UNION chain, planned, nested UNION ALLs flattened (and plain UNIONs
/// too when `distinct`: the chain's result is deduplicated anyway).
fn union_inputs(cx: &PlanContext<'_>, lp: LogicalPlan, distinct: bool, out: &mut Vec<Plan>) {
    match lp {
        LogicalPlan::SetOp {
            kind: SetOpKind::Union,
            all,
            left,
            right,
        } if all || distinct => {
            union_inputs(cx, *left, distinct, out);
            union_inputs(cx, *right, distinct, out);
        }
        other => out.push(plan_query(cx, other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::ColumnDesc;

    /// A context with PostgreSQL's default settings and an empty catalog.
    fn with_cx<R>(f: impl FnOnce(&PlanContext<'_>) -> R) -> R {
        let catalog = catalog::CatalogSnapshot::default();
        let settings = PlannerSettings::default();
        f(&PlanContext {
            snapshot_xmin: u64::MAX,
            catalog: &catalog,
            sizes: &NoStorage,
            settings: &settings,
            subplans: None,
        })
    }
    use common::{DataType, Value};

    #[test]
    fn filters_are_pushed_into_scans() {
        with_cx(|cx| {
            let table = Arc::new(TableDesc {
                oid: 1,
                rel: 1,
                name: "t".into(),
                columns: vec![ColumnDesc::new("a", DataType::Int4)].into(),
                indexes: vec![],
                ..Default::default()
            });
            let pred = Expr::new(
                ExprKind::Binary(
                    BinaryOp::Eq,
                    Box::new(Expr::column(0, DataType::Int4)),
                    Box::new(Expr::constant(Value::Int4(1), DataType::Int4)),
                ),
                DataType::Bool,
            );
            let lp = LogicalPlan::Filter {
                input: Box::new(LogicalPlan::Scan {
                    table: table.clone(),
                }),
                predicate: pred,
            };
            match plan_query(cx, lp) {
                Plan::SeqScan {
                    filter: Some(_), ..
                } => {}
                other => panic!("filter not pushed down: {other:?}"),
            }
            // A condition without columns gates the scan instead (One-Time Filter); a true
            // one is dropped.
            let gate = |v: bool| LogicalPlan::Filter {
                input: Box::new(LogicalPlan::Scan {
                    table: table.clone(),
                }),
                predicate: Expr::constant(Value::Bool(v), DataType::Bool),
            };
            assert!(matches!(
                plan_query(cx, gate(true)),
                Plan::SeqScan { filter: None, .. }
            ));
            assert!(matches!(
                plan_query(cx, gate(false)),
                Plan::Result { input: None, .. }
            ));
        })
    }

    fn indexed_table() -> Arc<TableDesc> {
        let col = |name: &str, ty: DataType| ColumnDesc::new(name, ty);
        let index = |oid, columns: Vec<usize>| IndexDesc {
            oid,
            rel: oid,
            name: format!("i{oid}"),
            columns,
            unique: false,
            primary: false,
            constraint: false,
            ..IndexDesc::default()
        };
        Arc::new(TableDesc {
            oid: 1,
            rel: 1,
            name: "t".into(),
            columns: vec![
                col("a", DataType::Int4),
                col("b", DataType::Int4),
                col("c", DataType::Bpchar(Some(3))),
            ]
            .into(),
            indexes: vec![index(2, vec![0]), index(3, vec![1, 0]), index(4, vec![2])],
            ..Default::default()
        })
    }

    fn cmp(op: BinaryOp, col: usize, ty: DataType, v: Value) -> Expr {
        Expr::new(
            ExprKind::Binary(
                op,
                Box::new(Expr::new(ExprKind::Column(col), ty)),
                Box::new(Expr::constant(v, ty)),
            ),
            DataType::Bool,
        )
    }

    fn and(l: Expr, r: Expr) -> Expr {
        Expr::new(
            ExprKind::Binary(BinaryOp::And, Box::new(l), Box::new(r)),
            DataType::Bool,
        )
    }

    /// The index a scan reads (an index scan, or a bitmap heap scan through one index,
    /// which PostgreSQL's costs prefer for a table never analyzed) and its bounds' widths.
    fn chosen(p: Plan) -> Option<(String, usize, usize)> {
        let len = |b: &Bound<Vec<Expr>>| match b {
            Bound::Unbounded => 0,
            Bound::Included(k) | Bound::Excluded(k) => k.len(),
        };
        match p {
            Plan::IndexScan {
                index,
                lower,
                upper,
                filter,
                ..
            } => {
                assert!(filter.is_some(), "the whole predicate is rechecked");
                Some((index.name, len(&lower), len(&upper)))
            }
            Plan::BitmapHeapScan {
                bitmap:
                    BitmapQual::Index {
                        index,
                        lower,
                        upper,
                        ..
                    },
                ..
            } => Some((index.name, len(&lower), len(&upper))),
            _ => None,
        }
    }

    #[test]
    fn index_paths_for_equality_prefixes_and_ranges() {
        with_cx(|cx| {
            let t = indexed_table();
            let int = DataType::Int4;
            let eq_a = cmp(BinaryOp::Eq, 0, int, Value::Int4(1));
            assert_eq!(
                chosen(scan_path(cx, t.clone(), eq_a.clone())),
                Some(("i2".into(), 1, 1))
            );
            // Both columns of (b, a) constrained beats one column of (a).
            let eq_b = cmp(BinaryOp::Eq, 1, int, Value::Int4(2));
            assert_eq!(
                chosen(scan_path(cx, t.clone(), and(eq_a.clone(), eq_b.clone()))),
                Some(("i3".into(), 2, 2))
            );
            // Equality on b, range on a: (b, a) with the range on its second column.
            let gt_a = cmp(BinaryOp::Gt, 0, int, Value::Int4(5));
            assert_eq!(
                chosen(scan_path(cx, t.clone(), and(eq_b, gt_a.clone()))),
                Some(("i3".into(), 2, 1))
            );
            // A range alone, without statistics, keeps a third of the rows: read through
            // a bitmap, in page order, as PostgreSQL reads them (not an index scan).
            let p = scan_path(cx, t.clone(), gt_a);
            assert!(matches!(p, Plan::BitmapHeapScan { .. }), "{p:?}");
            assert_eq!(chosen(p), Some(("i2".into(), 1, 0)));
            // A column that leads no index, an unindexable type, a non-constant side: no index.
            let ne = cmp(BinaryOp::NotEq, 0, int, Value::Int4(1));
            assert_eq!(chosen(scan_path(cx, t.clone(), ne)), None);
            let c = cmp(
                BinaryOp::Eq,
                2,
                DataType::Bpchar(Some(3)),
                Value::Bpchar("x".into()),
            );
            assert_eq!(chosen(scan_path(cx, t.clone(), c)), None);
            let col_col = Expr::new(
                ExprKind::Binary(
                    BinaryOp::Eq,
                    Box::new(Expr::new(ExprKind::Column(0), int)),
                    Box::new(Expr::new(ExprKind::Column(1), int)),
                ),
                DataType::Bool,
            );
            assert_eq!(chosen(scan_path(cx, t, col_col)), None);
        })
    }

    #[test]
    fn order_by_limit_uses_an_index_in_its_order() {
        with_cx(|cx| {
            let t = indexed_table();
            let int = DataType::Int4;
            let sort = |desc: bool, nulls_first: bool| Plan::Sort {
                input: Box::new(Plan::Project {
                    input: Box::new(Plan::SeqScan {
                        table: t.clone(),
                        filter: None,
                        columns: None,
                    }),
                    exprs: vec![Expr::new(ExprKind::Column(0), int)],
                }),
                keys: vec![SortKey {
                    expr: Expr::new(ExprKind::Column(0), int),
                    desc,
                    nulls_first,
                }],
            };
            let scan_of = |p: Plan| match p {
                Plan::Project { input, .. } => match *input {
                    Plan::IndexScan {
                        index, backward, ..
                    } => Some((index.name, backward)),
                    _ => None,
                },
                _ => None,
            };
            let ten = Some(Expr::new(ExprKind::Const(Value::Int8(10)), DataType::Int8));
            let limit = Some((&ten, &None));
            assert_eq!(
                scan_of(ordered_by_index(cx, sort(false, false), limit)),
                Some(("i2".into(), false))
            );
            assert_eq!(
                scan_of(ordered_by_index(cx, sort(true, true), limit)),
                Some(("i2".into(), true))
            );
            // DESC NULLS LAST is not an order the index has.
            assert!(matches!(
                ordered_by_index(cx, sort(true, false), limit),
                Plan::Sort { .. }
            ));
            // The whole of a small table never analyzed: through the index costs less
            // than sorting it, as PostgreSQL finds too.
            assert_eq!(
                scan_of(ordered_by_index(cx, sort(false, false), None)),
                Some(("i2".into(), false))
            );
        })
    }

    /// L1: planning a condition on one column of a table with an index on each of its 60
    /// columns looks at that column's index alone, as it would with one index.
    #[test]
    fn a_plan_looks_only_at_the_indexes_its_conditions_can_use() {
        let columns = (0..60)
            .map(|i| ColumnDesc {
                name: format!("col{i}"),
                ty: DataType::Int4,
                not_null: false,
                default: None,
                identity: None,
                dropped: false,
                stat_target: None,
                storage: common::types::Storage::Plain,
            })
            .collect::<Vec<_>>()
            .into();
        let indexes = (0..60)
            .map(|i| IndexDesc {
                oid: 100 + i as u32,
                rel: 100 + i as u32,
                name: format!("i{i}"),
                columns: vec![i],
                unique: false,
                primary: false,
                constraint: false,
                ..IndexDesc::default()
            })
            .collect();
        let mut desc = TableDesc {
            oid: 1,
            rel: 1,
            name: "synth".into(),
            columns,
            indexes,
            ..Default::default()
        };
        desc.index_leading_columns();
        let table = Arc::new(desc);
        with_cx(|cx| {
            let eq = |col: usize| {
                Expr::new(
                    ExprKind::Binary(
                        BinaryOp::Eq,
                        Box::new(Expr::column(col, DataType::Int4)),
                        Box::new(Expr::constant(Value::Int4(42), DataType::Int4)),
                    ),
                    DataType::Bool,
                )
            };
            let before = indexes_examined();
            let plan = scan_path(cx, table.clone(), eq(5));
            assert_eq!(indexes_examined() - before, 1, "one usable index of 60");
            assert_eq!(chosen(plan).map(|c| c.0), Some("i5".into()));
            // Two conditions, two indexes; none on a column without one: none.
            let before = indexes_examined();
            let both = Expr::new(
                ExprKind::Binary(BinaryOp::And, Box::new(eq(7)), Box::new(eq(9))),
                DataType::Bool,
            );
            scan_path(cx, table.clone(), both);
            assert_eq!(indexes_examined() - before, 2);
        })
    }
}
