//! Partition-wise joins and aggregates (planner rule 18; `enable_partitionwise_join` and
//! `enable_partitionwise_aggregate`, off by default as in PostgreSQL).
//!
//! Both are made when a plan's partitioned scans are expanded
//! ([`crate::partition::expand`]), from the plan the search chose for the tables as
//! wholes:
//!
//! - A join of two partitioned tables partitioned alike (the same strategy, key types
//!   and bounds, one level) whose conditions equate their keys, column by column,
//!   becomes, where that costs less, an Append of the same join of each pair of
//!   partitions with equal bounds: no row of one partition can meet a row of another
//!   pair's. A pair one side's
//!   conditions pruned is left out of an inner or semi join; a LEFT or anti join
//!   that would lose a pair is not made partition-wise.
//! - A grouping of one partitioned table whose groups include its key's columns
//!   becomes an Append of the grouping of each partition (a Merge Append of them, in
//!   the sorted grouping's order, for a sorted one): a group's rows are all in one
//!   partition. A grouping by other columns (or none) becomes, where that costs
//!   less, each partition's partial grouping under a final one ([`partial`]).
//!
//! Where conditions prune when the plan starts (a generic plan's `$n`), the scans are
//! left whole, so that pruning still happens.

use std::sync::Arc;

use catalog::TableDesc;
use catalog::partition::PartitionBound;
use sql::bound::{BinaryOp, Expr, ExprKind, JoinKind};

use crate::{AggSplit, ColumnSet, Plan, PlanContext};

/// The partitioned table one side of a join, or an aggregate's input, reads: its one
/// scan, under nothing but filters, sorts and projections.
struct Side<'p> {
    table: &'p Arc<TableDesc>,
    filter: &'p Option<Expr>,
    columns: &'p Option<ColumnSet>,
}

fn side(plan: &Plan) -> Option<Side<'_>> {
    match plan {
        Plan::SeqScan {
            table,
            filter,
            columns,
        } if table.partition_key.is_some() => Some(Side {
            table,
            filter,
            columns,
        }),
        Plan::Filter { input, .. } | Plan::Sort { input, .. } | Plan::Project { input, .. } => {
            side(input)
        }
        _ => None,
    }
}

/// The column of the scanned table that output column `col` of `plan` (a [`side`])
/// is, if it is one.
fn source_column(plan: &Plan, col: usize) -> Option<usize> {
    match plan {
        Plan::SeqScan { .. } => Some(col),
        Plan::Filter { input, .. } | Plan::Sort { input, .. } => source_column(input, col),
        Plan::Project { input, exprs } => match exprs.get(col)?.kind {
            ExprKind::Column(c) => source_column(input, c),
            _ => None,
        },
        _ => None,
    }
}

/// `plan` (a [`side`]) with its scan replaced by `scan`.
fn with_scan(plan: &Plan, scan: Plan) -> Plan {
    match plan {
        Plan::SeqScan { .. } => scan,
        Plan::Filter { input, predicate } => Plan::Filter {
            input: Box::new(with_scan(input, scan)),
            predicate: predicate.clone(),
        },
        Plan::Sort { input, keys } => Plan::Sort {
            input: Box::new(with_scan(input, scan)),
            keys: keys.clone(),
        },
        Plan::Project { input, exprs } => Plan::Project {
            input: Box::new(with_scan(input, scan)),
            exprs: exprs.clone(),
        },
        other => other.clone(),
    }
}

/// Whether `s`'s scan can be split into its partitions' here: one level of partitions,
/// a key of columns, no condition left for the start of the run to prune by.
fn splittable(cx: &PlanContext<'_>, s: &Side<'_>) -> bool {
    let Some(key) = &s.table.partition_key else {
        return false;
    };
    key.plain_columns().is_some()
        && cx.catalog.partitions(s.table.oid).is_some_and(|set| {
            set.all().into_iter().all(|o| {
                cx.catalog
                    .table_by_oid(o)
                    .is_some_and(|t| t.partition_key.is_none())
            })
        })
        && s.filter
            .as_ref()
            .is_none_or(|f| crate::partition::run_time_conditions(cx.catalog, s.table, f).is_none())
}

/// Leaf `leaf`'s scan in place of its parent's, named `alias` in EXPLAIN.
fn leaf_scan(cx: &PlanContext<'_>, leaf: &Arc<TableDesc>, s: &Side<'_>, alias: String) -> Plan {
    let mut desc = (**leaf).clone();
    desc.alias = Some(alias);
    crate::partition::leaf_scan(cx, Arc::new(desc), s.filter, s.columns)
}

/// A join of two partitioned tables done partition by partition, if it can be.
pub(crate) fn join(cx: &PlanContext<'_>, plan: &Plan) -> Option<Plan> {
    // Named by their place (`t_1`, `t_2`), or as the table where one pair is left.
    let mut pairs = split_join(cx, plan, &|base, k, n| match n {
        1 => base.to_string(),
        _ => format!("{base}_{}", k + 1),
    })?;
    let split = match pairs.len() {
        1 => pairs.pop()?.0,
        _ => Plan::Append {
            inputs: pairs.into_iter().map(|(p, _)| p).collect(),
            prune: None,
            parent: None,
        },
    };
    // Where it costs less than the join of the tables as wholes, as PostgreSQL chooses.
    cheaper_than_whole(cx, plan, split)
}

/// `split` where its estimate is lower than `plan`'s made as it is otherwise (each
/// partitioned scan an Append of its partitions'), else `None`.
fn cheaper_than_whole(cx: &PlanContext<'_>, plan: &Plan, split: Plan) -> Option<Plan> {
    let mut whole = plan.clone();
    for child in whole.children_mut() {
        crate::partition::expand(cx, child);
    }
    let estimator = crate::estimate::Estimator::new(*cx);
    let cost = |p: &Plan| estimator.estimate(p).total;
    (cost(&split) < cost(&whole)).then_some(split)
}

/// How the partitions of a split plan are named in EXPLAIN: partition `k` of `n`
/// of the table the query names `base`.
type Namer<'n> = dyn Fn(&str, usize, usize) -> String + 'n;

/// The key columns a split join's output holds, by its output columns: each of the
/// left table's key columns and the right's it is equated to.
type KeyPlaces = Vec<(usize, usize)>;

/// [`join`]'s pairs: each pair's join, and where the output holds the key (each key
/// column's place on the left side and on the right side of the output).
fn split_join(
    cx: &PlanContext<'_>,
    plan: &Plan,
    name: &Namer<'_>,
) -> Option<Vec<(Plan, KeyPlaces)>> {
    if !cx.settings.enable_partitionwise_join {
        return None;
    }
    let (left, right, kind, pairs): (&Plan, &Plan, JoinKind, Vec<(Expr, Expr)>) = match plan {
        Plan::HashJoin {
            left,
            right,
            kind,
            left_keys,
            right_keys,
            ..
        }
        | Plan::MergeJoin {
            left,
            right,
            kind,
            left_keys,
            right_keys,
            ..
        } => (
            left,
            right,
            *kind,
            left_keys
                .iter()
                .cloned()
                .zip(right_keys.iter().cloned())
                .collect(),
        ),
        Plan::NestedLoopJoin {
            left,
            right,
            kind,
            on: Some(on),
            lateral: None,
            ..
        } => {
            let width = left.width();
            let mut conjuncts = Vec::new();
            crate::scan::split_and(on, &mut conjuncts);
            let pairs = conjuncts
                .into_iter()
                .filter_map(|c| match &c.kind {
                    ExprKind::Binary(BinaryOp::Eq, l, r) => match (&l.kind, &r.kind) {
                        (ExprKind::Column(a), ExprKind::Column(b)) if *a < width && *b >= width => {
                            Some((Expr::column(*a, l.ty), Expr::column(*b - width, r.ty)))
                        }
                        (ExprKind::Column(b), ExprKind::Column(a)) if *a < width && *b >= width => {
                            Some((Expr::column(*a, r.ty), Expr::column(*b - width, l.ty)))
                        }
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            (left, right, *kind, pairs)
        }
        _ => return None,
    };
    if !matches!(
        kind,
        JoinKind::Inner | JoinKind::Left | JoinKind::Semi | JoinKind::Anti
    ) {
        return None;
    }
    let (l, r) = (side(left)?, side(right)?);
    if !splittable(cx, &l) || !splittable(cx, &r) || !alike(cx, l.table, r.table) {
        return None;
    }
    // Every key column of one equated to the same key column of the other.
    let (lk, rk) = (
        l.table.partition_key.as_ref()?.plain_columns()?,
        r.table.partition_key.as_ref()?.plain_columns()?,
    );
    let side_column = |e: &Expr, p: &Plan| match e.kind {
        ExprKind::Column(c) => source_column(p, c).map(|s| (s, c)),
        _ => None,
    };
    let width = left.width();
    let places: KeyPlaces = lk
        .iter()
        .zip(rk)
        .map(|(&a, &b)| {
            pairs.iter().find_map(
                |(x, y)| match (side_column(x, left), side_column(y, right)) {
                    (Some((sa, pa)), Some((sb, pb))) if sa == a && sb == b => {
                        Some((pa, width + pb))
                    }
                    _ => None,
                },
            )
        })
        .collect::<Option<_>>()?;
    let lleaves = crate::partition::leaves(cx, l.table, l.filter.as_ref());
    let rleaves = crate::partition::leaves(cx, r.table, r.filter.as_ref());
    let bound = |t: &TableDesc| t.partition_of.as_ref().map(|o| o.bound.clone());
    let mut matched = Vec::new();
    for ll in &lleaves {
        match rleaves.iter().find(|rl| bound(rl) == bound(ll)) {
            Some(rl) => matched.push((ll, rl)),
            // The left rows of a pair whose right side is pruned are still joined.
            None if matches!(kind, JoinKind::Left | JoinKind::Anti) => return None,
            None => {}
        }
    }
    if matched.is_empty() {
        return None;
    }
    let (ln, rn) = (l.table.shown_name(), r.table.shown_name());
    let n = matched.len();
    let inputs: Vec<(Plan, KeyPlaces)> = matched
        .iter()
        .enumerate()
        .map(|(k, (ll, rl))| {
            let mut one = plan.clone();
            let new_left = with_scan(left, leaf_scan(cx, ll, &l, name(ln, k, n)));
            let new_right = with_scan(right, leaf_scan(cx, rl, &r, name(rn, k, n)));
            match &mut one {
                Plan::HashJoin { left, right, .. }
                | Plan::MergeJoin { left, right, .. }
                | Plan::NestedLoopJoin { left, right, .. } => {
                    **left = new_left;
                    **right = new_right;
                }
                _ => {}
            }
            (one, places.clone())
        })
        .collect();
    Some(inputs)
}

/// Whether `a` and `b` are partitioned alike: the same strategy and key types, and the
/// same bounds (the directories list them in bound order: partition rule 4).
fn alike(cx: &PlanContext<'_>, a: &TableDesc, b: &TableDesc) -> bool {
    let (Some(ka), Some(kb)) = (&a.partition_key, &b.partition_key) else {
        return false;
    };
    if ka.strategy != kb.strategy || ka.types(&a.columns) != kb.types(&b.columns) {
        return false;
    }
    let bounds = |t: &TableDesc| -> Option<Vec<PartitionBound>> {
        cx.catalog
            .partitions(t.oid)?
            .all()
            .into_iter()
            .map(|o| {
                Some(
                    cx.catalog
                        .table_by_oid(o)?
                        .partition_of
                        .as_ref()?
                        .bound
                        .clone(),
                )
            })
            .collect()
    };
    match (bounds(a), bounds(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// A grouping of a partitioned table by (at least) its key, done partition by
/// partition, if it can be.
pub(crate) fn aggregate(cx: &PlanContext<'_>, plan: &Plan) -> Option<Plan> {
    if !cx.settings.enable_partitionwise_aggregate {
        return None;
    }
    let Plan::Aggregate {
        input,
        group_by,
        sorted,
        ..
    } = plan
    else {
        return None;
    };
    // A sorted grouping's groups come out in its input's order: the partitions'
    // groupings are merged in that order (PostgreSQL's Merge Append of Group
    // Aggregates), by the group columns the sort keys are.
    let merge_keys = match (sorted, &**input) {
        (false, _) => None,
        (true, Plan::Sort { keys, .. }) => Some(
            keys.iter()
                .map(|k| {
                    let at = group_by.iter().position(|g| *g == k.expr)?;
                    Some(sql::bound::SortKey {
                        expr: Expr::column(at, k.expr.ty),
                        ..k.clone()
                    })
                })
                .collect::<Option<Vec<_>>>()?,
        ),
        (true, _) => return None,
    };
    // PostgreSQL names the partitions here `t`, `t_1`, `t_2`, ... (the parent itself
    // being named nowhere in the plan).
    let name = |base: &str, k: usize, _: usize| match k {
        0 => base.to_string(),
        k => format!("{base}_{k}"),
    };
    let grouped = |c: usize| group_by.iter().any(|g| g.kind == ExprKind::Column(c));
    // The input split by partition (one table's scan, or a join split by pairs), and
    // whether the groups hold the key.
    let (pieces, keyed): (Vec<Plan>, bool) = match side(input) {
        Some(s) => {
            if !splittable(cx, &s) {
                return None;
            }
            let key = s.table.partition_key.as_ref()?.plain_columns()?;
            let grouped_columns: Vec<usize> = group_by
                .iter()
                .filter_map(|g| match g.kind {
                    ExprKind::Column(c) => source_column(input, c),
                    _ => None,
                })
                .collect();
            let pieces = crate::partition::leaves(cx, s.table, s.filter.as_ref())
                .iter()
                .enumerate()
                .map(|(k, leaf)| {
                    with_scan(
                        input,
                        leaf_scan(cx, leaf, &s, name(s.table.shown_name(), k, 0)),
                    )
                })
                .collect();
            (pieces, key.iter().all(|c| grouped_columns.contains(c)))
        }
        None => {
            let pairs = split_join(cx, input, &name)?;
            // Each key column grouped on, from either side of the join.
            let keyed = pairs
                .first()
                .is_some_and(|(_, places)| places.iter().all(|&(l, r)| grouped(l) || grouped(r)));
            (pairs.into_iter().map(|(p, _)| p).collect(), keyed)
        }
    };
    if pieces.len() < 2 {
        return None;
    }
    if !keyed {
        return partial(cx, plan, pieces);
    }
    let inputs = pieces
        .into_iter()
        .map(|piece| {
            let mut one = plan.clone();
            if let Plan::Aggregate { input: i, .. } = &mut one {
                **i = piece;
            }
            one
        })
        .collect();
    Some(match merge_keys {
        Some(keys) => Plan::MergeAppend {
            inputs,
            keys,
            parent: None,
            exprs: Vec::new(),
        },
        None => Plan::Append {
            inputs,
            prune: None,
            parent: None,
        },
    })
}

/// A hashed or whole-input grouping whose groups do not hold the key, split in two
/// where that costs less: each partition's partial grouping (its aggregates' states),
/// then a final grouping combining them (PostgreSQL's Partial and Finalize Aggregate).
/// Only aggregates with a combining step are split: not DISTINCT or ORDER BY ones, nor
/// array_agg and string_agg (which have none in PostgreSQL 15).
fn partial(cx: &PlanContext<'_>, plan: &Plan, pieces: Vec<Plan>) -> Option<Plan> {
    let Plan::Aggregate {
        group_by,
        aggs,
        sorted: false,
        dependent,
        split: AggSplit::Whole,
        ..
    } = plan
    else {
        return None;
    };
    let combinable = |a: &sql::bound::AggCall| {
        !a.distinct
            && a.order_by.is_empty()
            && !matches!(
                a.func,
                sql::bound::AggFunc::ArrayAgg | sql::bound::AggFunc::StringAgg
            )
    };
    if !aggs.iter().all(combinable) {
        return None;
    }
    let partials: Vec<Plan> = pieces
        .into_iter()
        .map(|piece| {
            let mut one = plan.clone();
            if let Plan::Aggregate { input, split, .. } = &mut one {
                **input = piece;
                *split = AggSplit::Partial;
            }
            one
        })
        .collect();
    let split = Plan::Aggregate {
        input: Box::new(Plan::Append {
            inputs: partials,
            prune: None,
            parent: None,
        }),
        group_by: group_by
            .iter()
            .enumerate()
            .map(|(i, g)| Expr::column(i, g.ty))
            .collect(),
        aggs: aggs.clone(),
        sorted: false,
        dependent: dependent.clone(),
        split: AggSplit::Final,
    };
    cheaper_than_whole(cx, plan, split)
}
