//! Index-only scans (planner rule 19): once the columns pass knows which columns each
//! scan produces and tests, a scan whose columns one index holds reads that index alone,
//! going to the heap only for pages the visibility map does not say are all-visible.
//!
//! An index scan whose index holds them becomes index-only (it then reads fewer heap
//! pages, never more, and keeps its order). A sequential scan is replaced by the
//! cheapest index-only scan of an index that holds them, if one costs less
//! (`cost::index_only_scan`, from `pg_class.relallvisible`): the index's key range where
//! the conditions bound it, else the whole index (a bare `count(*)` reads the smallest).
//! A sequential scan promises no order, so any index's order will do.
//!
//! PostgreSQL weighs index-only paths with every other path of the relation, before the
//! joins above it are chosen; here they are weighed after, so a join chosen for a scan's
//! old cost stays (the scan only gets cheaper).

#[allow(unused_imports)]
use super::*;

use std::ops::Bound;

use catalog::{IndexDesc, TableDesc};

use crate::cost;
use crate::scan::{index_candidate, index_quals, split_and};
use crate::selectivity::{RelInfo, clamp_rows, conjuncts_selectivity};

/// Make the scans of `stmt` index-only where they can be.
pub(crate) fn choose_statement(cx: &PlanContext<'_>, stmt: &mut PlannedStatement) {
    if !cx.settings.enable_indexonlyscan {
        return;
    }
    match stmt {
        PlannedStatement::Query { plan, subplans, .. }
        | PlannedStatement::CopyTo { plan, subplans, .. } => {
            choose(cx, plan);
            subplans.choose_index_only(cx);
        }
        PlannedStatement::Insert {
            source, subplans, ..
        } => {
            choose(cx, source);
            subplans.choose_index_only(cx);
        }
        PlannedStatement::Update { subplans, .. } | PlannedStatement::Delete { subplans, .. } => {
            subplans.choose_index_only(cx)
        }
        PlannedStatement::Explain { inner, .. } => choose_statement(cx, inner),
    }
}

/// Make the scans in `plan` index-only where they can be.
pub(crate) fn choose(cx: &PlanContext<'_>, plan: &mut Plan) {
    if let Plan::IndexScan {
        index,
        columns,
        only,
        table,
        ..
    } = plan
        && !*only
        // The columns pass left the filter's columns in `columns` too.
        && covers(index, &needed(table, columns.as_deref(), None))
    {
        *only = true;
    }
    let instead = match &*plan {
        Plan::SeqScan {
            table,
            filter,
            columns,
        } => {
            let need = needed(table, columns.as_deref(), filter.as_ref());
            index_only_instead(cx, table, filter.clone(), &need, |rel, conjuncts, rows| {
                cost::seq_scan(cx, rel, conjuncts, rows)
            })
        }
        // The bitmap's conditions and the filter, all tested on the index's values.
        Plan::BitmapHeapScan {
            table,
            recheck,
            filter,
            columns,
            ..
        } => {
            let need = needed(table, columns.as_deref(), None);
            let all = crate::conjoin(
                std::iter::once(recheck.clone())
                    .chain(filter.iter().cloned())
                    .collect(),
            );
            index_only_instead(cx, table, all, &need, |_, _, _| {
                let now = crate::estimate::Estimator::new(*cx).estimate(plan);
                cost::Cost {
                    startup: now.startup,
                    total: now.total,
                    rows: now.rows,
                }
            })
        }
        _ => None,
    };
    if let Some(p) = instead {
        *plan = p;
    }
    for child in plan.children_mut() {
        choose(cx, child);
    }
}

/// The columns of `table` a scan produces (`columns`, every one where `None`) and
/// tests (`filter`).
fn needed(table: &TableDesc, columns: Option<&[bool]>, filter: Option<&Expr>) -> Vec<bool> {
    let width = table.columns.len();
    let mut need = match columns {
        Some(c) => c.to_vec(),
        None => vec![true; width],
    };
    need.resize(width, false);
    if let Some(f) = filter {
        for (n, r) in need.iter_mut().zip(crate::columns_read(f, width)) {
            *n |= r;
        }
    }
    need
}

/// Does `index` store every column `need` marks (in its key or INCLUDE list; an
/// expression's value is no column's)?
fn covers(index: &IndexDesc, need: &[bool]) -> bool {
    need.iter()
        .enumerate()
        .all(|(c, &n)| !n || index.stored_columns().any(|s| s == c))
}

/// An index scan's lower and upper bound.
type KeyRange = (Bound<Vec<Expr>>, Bound<Vec<Expr>>);

/// The cheapest index-only scan that could replace a scan of `table` with `filter`
/// that produces and tests the columns `need` marks, if one costs less than the scan
/// (`now`: its cost from the table's estimates, the conditions and the rows they keep;
/// asked only when some index holds the columns).
fn index_only_instead(
    cx: &PlanContext<'_>,
    table: &std::sync::Arc<TableDesc>,
    filter: Option<Expr>,
    need: &[bool],
    now: impl FnOnce(&RelInfo<'_>, &[&Expr], f64) -> cost::Cost,
) -> Option<Plan> {
    // A partitioned table is scanned as its partitions (planner rule 18).
    if table.partition_key.is_some() {
        return None;
    }
    let filter = filter.as_ref();
    // A partial index holds only some rows: the sequential scan's conditions are not
    // matched against its predicate here.
    let mut covering = table
        .indexes
        .iter()
        .filter(|i| i.predicate.is_none() && covers(i, need) && cx.index_usable(i))
        .peekable();
    covering.peek()?;
    let mut conjuncts = Vec::new();
    if let Some(f) = filter {
        split_and(f, &mut conjuncts);
    }
    let rel = RelInfo::new(
        table,
        cx.catalog.stats(table.oid),
        cx.sizes.pages(table.rel),
    );
    let rows = clamp_rows(rel.tuples * conjuncts_selectivity(&rel, &conjuncts));
    let mut best = now(&rel, &conjuncts, rows);
    let mut chosen: Option<(&IndexDesc, KeyRange)> = None;
    let quals = index_quals(table, &conjuncts);
    for index in covering {
        let (lower, upper, used, full) = match index_candidate(index, &quals) {
            Some(c) => (c.lower, c.upper, c.used, c.full_key_equal),
            None => (Bound::Unbounded, Bound::Unbounded, Vec::new(), false),
        };
        let bound: Vec<&Expr> = used.iter().map(|&i| conjuncts[i]).collect();
        let rest: Vec<&Expr> = conjuncts
            .iter()
            .enumerate()
            .filter(|(i, _)| !used.contains(i))
            .map(|(_, e)| *e)
            .collect();
        let c = cost::index_only_scan(cx, &rel, index, &bound, full, &rest, rows);
        if cost::beats(&c, &best) {
            best = c;
            chosen = Some((index, (lower, upper)));
        }
    }
    let (index, (lower, upper)) = chosen?;
    Some(Plan::IndexScan {
        table: table.clone(),
        index: index.clone(),
        lower,
        upper,
        filter: filter.cloned(),
        backward: false,
        columns: (!need.iter().all(|&n| n)).then(|| need.into()),
        only: true,
    })
}
