//! Plan nodes as pull-based operators: each `next()` returns one row or `None` at the end.
//! [`build`] makes the operator tree of a plan as the planner made it (executor rule 2);
//! each node's operator has its own file.

use std::collections::BTreeMap;

use std::ops::Bound;

use access::heapam::{self, HeapScan};
use access::nbtree::{BTreeScan, ScanDirection};
use common::{DataType, ItemPointer, PgError, PgResult, SqlState, Value};
use planner::Plan;
use sql::bound::{AggCall, Expr, JoinKind, SortKey};

use crate::agg::Accumulator;
pub use crate::env::{Env, Operator, Params, Row};
use crate::sortkey::{RowKey, compare_sort_keys};

mod aggregate;
mod append;
pub use append::lock_partitions;
pub(crate) use append::{lock_partition, surviving_with};
mod bitmap_scan;
mod distinct;
mod filter;
mod generate_series;
mod hash_join;
mod index_nest_loop;
mod instrumented;
mod limit;
pub(crate) mod lock_rows;
mod merge_append;
mod merge_join;
mod nested_loop;
mod project;
mod scan;
mod set_op;
mod sort;
pub mod subquery;
mod system_view;
mod values;

#[allow(unused_imports)]
pub(crate) use aggregate::*;
#[allow(unused_imports)]
pub(crate) use append::*;
#[allow(unused_imports)]
pub(crate) use distinct::*;
#[allow(unused_imports)]
pub(crate) use filter::*;
#[allow(unused_imports)]
pub(crate) use generate_series::*;
#[allow(unused_imports)]
pub(crate) use hash_join::*;
#[allow(unused_imports)]
pub(crate) use index_nest_loop::*;
#[allow(unused_imports)]
pub(crate) use limit::*;
#[allow(unused_imports)]
pub(crate) use merge_append::*;
#[allow(unused_imports)]
pub(crate) use merge_join::*;
#[allow(unused_imports)]
pub(crate) use nested_loop::*;
#[allow(unused_imports)]
pub(crate) use project::*;
#[allow(unused_imports)]
pub(crate) use scan::*;
#[allow(unused_imports)]
pub(crate) use set_op::*;
#[allow(unused_imports)]
pub(crate) use sort::*;
#[allow(unused_imports)]
pub(crate) use system_view::*;
#[allow(unused_imports)]
pub(crate) use values::*;

/// Build the operator tree for `plan`. Under EXPLAIN ANALYZE each node is numbered in
/// pre-order (a node before its children, children in plan order) and wrapped to count.
pub fn build<'a>(plan: &'a Plan, env: Env<'a>) -> PgResult<Box<dyn Operator + 'a>> {
    build_bounded(plan, env, None)
}

/// [`build`], telling a Sort that at most `bound` of its rows will be read (a LIMIT's
/// count plus its OFFSET, as PostgreSQL's Limit tells its Sort: `ExecSetTupleBound`).
fn build_bounded<'a>(
    plan: &'a Plan,
    env: Env<'a>,
    bound: Option<usize>,
) -> PgResult<Box<dyn Operator + 'a>> {
    match env.instrument {
        None => build_node(plan, env, bound),
        Some(ins) => {
            let id = ins.register();
            let inner = build_node(plan, env, bound)?;
            Ok(Box::new(instrumented::Instrumented::new(inner, ins, id)))
        }
    }
}

/// A sequential scan of `table` with `filter`, decoding `columns` (all where `None`).
fn seq_scan<'a>(
    env: Env<'a>,
    table: &'a std::sync::Arc<catalog::TableDesc>,
    filter: &'a Option<sql::bound::Expr>,
    columns: &'a Option<planner::ColumnSet>,
) -> PgResult<Box<dyn Operator + 'a>> {
    lock_partition(&env, table)?;
    // The filter's columns are decoded too; those only it reads are dropped
    // once a row passes (the plan's `columns` are what is read above).
    let (decoded, dropped) = match (columns, filter) {
        (Some(above), Some(f)) => {
            let read = planner::columns_read(f, above.len());
            let decoded: Vec<bool> = above.iter().zip(&read).map(|(a, r)| *a || *r).collect();
            let dropped = (0..above.len()).filter(|&i| read[i] && !above[i]).collect();
            let decoded = (!decoded.iter().all(|&d| d)).then(|| decoded.into());
            (decoded, dropped)
        }
        (columns, _) => (columns.clone(), Vec::new()),
    };
    // A filter reading fewer columns than are decoded is evaluated on those first
    // (not where it may read a stored size, which follows the row's values).
    let ncols = table.columns.len();
    let filter_first = filter
        .as_ref()
        .filter(|_| table.stored_sizes.is_empty())
        .and_then(|f| {
            let read = planner::columns_read(f, ncols);
            let more = match &decoded {
                Some(d) => d.iter().zip(&read).any(|(d, r)| *d && !*r),
                None => read.iter().any(|r| !r),
            };
            more.then(|| read.to_vec())
        });
    Ok(Box::new(SeqScanOp {
        env,
        scan: TableScan::new(env, table.rel, table.tuple_types())?
            .reading(decoded)
            .sizing(&table.stored_sizes),
        filter: filter.as_ref(),
        emit_tid: env.emit_tid.then_some(table.oid),
        removed: 0,
        dropped,
        filter_first,
        counted: (table.oid, 0),
    }))
}

fn build_node<'a>(
    plan: &'a Plan,
    env: Env<'a>,
    bound: Option<usize>,
) -> PgResult<Box<dyn Operator + 'a>> {
    let pool = env.pool;
    Ok(match plan {
        Plan::Result { input, filter, .. } => Box::new(GatingResultOp {
            env,
            filter,
            input: match input {
                Some(i) => Some(build(i, env)?),
                None => None,
            },
            open: None,
        }),
        Plan::SeqScan {
            table,
            filter,
            columns,
        } => seq_scan(env, table, filter, columns)?,
        // The partitions the run-time values leave, each read in sequence with the
        // parent's conditions (numbered for EXPLAIN ANALYZE as an Append's inputs).
        Plan::PartitionScans {
            leaves,
            filter,
            columns,
            prune,
            ..
        } => {
            let kept: Vec<&'a std::sync::Arc<catalog::TableDesc>> = match prune {
                Some(p) => crate::exec::append::surviving(env, p)
                    .into_iter()
                    .filter_map(|i| leaves.get(i))
                    .collect(),
                None => leaves.iter().collect(),
            };
            let built = kept
                .into_iter()
                .map(|leaf| match env.instrument {
                    None => seq_scan(env, leaf, filter, columns),
                    Some(ins) => {
                        let id = ins.register();
                        let inner = seq_scan(env, leaf, filter, columns)?;
                        Ok(Box::new(instrumented::Instrumented::new(inner, ins, id))
                            as Box<dyn Operator + 'a>)
                    }
                })
                .collect::<PgResult<Vec<_>>>()?;
            Box::new(AppendOp {
                inputs: built.into(),
            })
        }
        Plan::LockRows {
            input,
            table,
            tid_column,
            mode,
            wait,
            recheck,
            exprs,
        } => Box::new(crate::exec::lock_rows::LockRowsOp {
            input: build(
                input,
                Env {
                    emit_tid: true,
                    row_locks: true,
                    ..env
                },
            )?,
            env,
            table,
            tid_column: *tid_column,
            mode: *mode,
            wait: *wait,
            recheck: recheck.as_ref(),
            exprs,
        }),
        Plan::IndexScan {
            table,
            index,
            lower,
            upper,
            filter,
            backward,
            columns,
            only,
        } => {
            lock_partition(&env, table)?;
            // A NULL bound (`a = NULL`) matches nothing: no scan at all.
            let scan = match (
                bound_values(&env, lower, false, table, index)?,
                bound_values(&env, upper, true, table, index)?,
            ) {
                (Some(lo), Some(hi)) => Some(index.btree(pool, env.roots).scan(
                    lo,
                    hi,
                    if *backward {
                        ScanDirection::Backward
                    } else {
                        ScanDirection::Forward
                    },
                )?),
                _ => None,
            };
            Box::new(IndexScanOp {
                env,
                rel: (table.rel, table.oid),
                types: table.tuple_types(),
                scan,
                filter: filter.as_ref(),
                removed: 0,
                wanted: columns.as_deref(),
                sizes: &table.stored_sizes,
                counted: (index.oid, 0, 0),
                only: only.then(|| IndexOnly::new(env, table, index)),
            })
        }
        Plan::BitmapHeapScan {
            table,
            bitmap,
            recheck,
            filter,
            columns,
        } => Box::new({
            lock_partition(&env, table)?;
            bitmap_scan::BitmapHeapScanOp {
                env,
                table,
                bitmap,
                recheck,
                filter: filter.as_ref(),
                types: table.tuple_types(),
                wanted: columns.as_deref(),
                tids: None,
                removed: 0,
                fetched: 0,
                blocks: (0, 0),
                last_block: None,
                // Its bitmap's nodes are numbered after it, in pre-order.
                counted: env.instrument.map(|ins| {
                    let first = ins.next_id();
                    for _ in 0..bitmap_scan::bitmap_nodes(bitmap) {
                        ins.register();
                    }
                    (ins, first)
                }),
            }
        }),
        Plan::Values { rows, .. } => Box::new(ValuesOp { env, rows, pos: 0 }),
        Plan::Unnest {
            array, ordinality, ..
        } => {
            let items = match env.eval(array, &[])? {
                Value::Array(a) => a.items.clone(),
                _ => Vec::new(),
            };
            Box::new(SystemViewOp {
                rows: items
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| match ordinality {
                        true => vec![v, Value::Int8(i as i64 + 1)],
                        false => vec![v],
                    })
                    .collect::<Vec<_>>()
                    .into_iter(),
            })
        }
        Plan::GenerateSeries { start, stop, step } => Box::new(GenerateSeriesOp::new(
            env.tx,
            &env.session.text().clock,
            env.eval(start, &[])?,
            env.eval(stop, &[])?,
            step.as_ref().map(|s| env.eval(s, &[])).transpose()?,
        )?),
        Plan::SequenceState { seq } => {
            let s = crate::sequence::state(env.session, seq.oid)?;
            Box::new(SystemViewOp {
                rows: vec![vec![
                    Value::Int8(s.last_value),
                    Value::Int8(s.log_cnt),
                    Value::Bool(s.is_called),
                ]]
                .into_iter(),
            })
        }
        Plan::SystemView { view, key, .. } => {
            // One relation's rows where a key asks for them (NULL: none).
            let rows = match key.as_ref().map(|k| env.eval(k, &[])).transpose()? {
                None => crate::views::system_view_rows(*view, env, None),
                Some(Value::Oid(oid) | Value::Reg(_, oid)) => {
                    crate::views::system_view_rows(*view, env, Some(oid))
                }
                Some(_) => Vec::new(),
            };
            Box::new(SystemViewOp {
                rows: rows.into_iter(),
            })
        }
        Plan::Filter { input, predicate } => Box::new(FilterOp {
            env,
            input: build(input, env)?,
            predicate,
            removed: 0,
        }),
        // A projection returns a row per input row: a LIMIT's bound passes through.
        Plan::Project { input, exprs } => Box::new(ProjectOp {
            env,
            input: build_bounded(input, env, bound)?,
            exprs,
        }),
        Plan::NestedLoopJoin {
            left,
            right,
            kind,
            on,
            right_width,
            lateral,
            materialize,
        } => Box::new(NestedLoopOp {
            env,
            left: build(left, env)?,
            inner: Inner::build(right, *materialize, lateral.as_deref(), env)?,
            kind: *kind,
            on: on.as_ref(),
            right_width: *right_width,
            current: None,
            matched: false,
            join_removed: 0,
        }),
        Plan::MergeJoin {
            left,
            right,
            kind,
            left_keys,
            right_keys,
            on,
            right_width,
            ..
        } => Box::new(MergeJoinOp {
            env,
            left: build(left, env)?,
            right: build(right, env)?,
            kind: *kind,
            left_keys,
            right_keys,
            on: on.as_ref(),
            left_width: left.width(),
            right_width: *right_width,
            peeked: None,
            right_done: false,
            group: merge_join::group_store(&env),
            group_key: None,
            group_matched: Vec::new(),
            left_behind: None,
            positioning: None,
            current: None,
            pending: None,
            left_done: false,
            join_removed: 0,
        }),
        Plan::HashJoin {
            left,
            right,
            kind,
            left_keys,
            right_keys,
            on,
            right_width,
            ..
        } => Box::new(HashJoinOp {
            env,
            left: build(left, env)?,
            right: Some(build(right, env)?),
            kind: *kind,
            left_keys,
            right_keys,
            on: on.as_ref(),
            right_width: *right_width,
            // Grown as keys come: a build side of a few rows (a fact row under a star
            // join) allocates next to nothing.
            table: Default::default(),
            right_matched: Vec::new(),
            null_keyed: Vec::new(),
            left_width: left.width(),
            unmatched: None,
            usage: Default::default(),
            current: None,
            matched: false,
            join_removed: 0,
            batches: None,
        }),
        Plan::IndexNestLoop {
            left,
            table,
            index,
            outer_key,
            key_cond,
            more_keys,
            inner_filter,
            on,
            kind,
        } => {
            let left = build(left, env)?;
            // Numbered after the outer side, as EXPLAIN lists them.
            let counted = env.instrument.map(|ins| {
                index_nest_loop::InnerCounts::register(
                    ins,
                    env,
                    table,
                    index,
                    inner_filter.as_ref(),
                )
            });
            Box::new(IndexNestLoopOp {
                left,
                env,
                table,
                index,
                types: table.tuple_types(),
                outer_key,
                key_cond,
                more_keys,
                inner_filter: inner_filter.as_ref(),
                on: on.as_ref(),
                kind: *kind,
                pending: std::collections::VecDeque::new(),
                join_removed: 0,
                partitions: Default::default(),
                counted,
            })
        }
        Plan::Aggregate {
            input,
            group_by,
            aggs,
            sorted: true,
            dependent,
            split,
        } if !group_by.is_empty() => Box::new(GroupAggregateOp {
            env,
            input: build(input, env)?,
            group_by: aggregate::GroupColumns::new(group_by, dependent),
            aggs,
            split: *split,
            current: None,
            done: false,
        }),
        Plan::Aggregate {
            input,
            group_by,
            aggs,
            dependent,
            split,
            ..
        } => Box::new(AggregateOp {
            env,
            input: Some(build(input, env)?),
            group_by: aggregate::GroupColumns::new(group_by, dependent),
            aggs,
            split: *split,
            output: Vec::new().into_iter(),
            usage: Default::default(),
            pending: Vec::new(),
        }),
        Plan::Sort { input, keys } => Box::new(SortOp {
            env,
            input: Some(build(input, env)?),
            keys,
            bound,
            output: sort::Sorted::Memory(Vec::new().into_iter()),
            usage: Default::default(),
            top_n: false,
        }),
        Plan::Distinct { input } => Box::new(DistinctOp::new(env, build(input, env)?)),
        Plan::Append { inputs, prune, .. } => {
            // A partitioned table's partitions: those the run-time values leave (EXPLAIN
            // shows and numbers the same ones).
            let built = match prune {
                Some(p) => crate::exec::append::surviving(env, p)
                    .into_iter()
                    .filter_map(|i| inputs.get(i))
                    .map(|p| build(p, env))
                    .collect::<PgResult<Vec<_>>>()?,
                None => inputs
                    .iter()
                    .map(|p| build(p, env))
                    .collect::<PgResult<Vec<_>>>()?,
            };
            Box::new(AppendOp {
                inputs: built.into(),
            })
        }
        Plan::MergeAppend { inputs, keys, .. } => Box::new(MergeAppendOp {
            env,
            inputs: inputs
                .iter()
                .map(|p| build(p, env))
                .collect::<PgResult<Vec<_>>>()?,
            keys,
            heads: None,
        }),
        Plan::SetOp {
            intersect,
            all,
            left,
            right,
        } => Box::new(SetOpOp::new(
            env,
            build(left, env)?,
            build(right, env)?,
            *intersect,
            *all,
        )),
        Plan::Limit {
            input,
            limit,
            offset,
        } => {
            let limit = eval_count(
                &env,
                limit.as_ref(),
                "LIMIT",
                SqlState::INVALID_ROW_COUNT_IN_LIMIT_CLAUSE,
            )?;
            let offset = eval_count(
                &env,
                offset.as_ref(),
                "OFFSET",
                SqlState::INVALID_ROW_COUNT_IN_RESULT_OFFSET_CLAUSE,
            )?;
            // The Sort below needs to keep only the rows the LIMIT will read.
            let bound = limit.map(|l| l.saturating_add(offset.unwrap_or(0)).max(0) as usize);
            Box::new(LimitOp {
                input: build_bounded(input, env, bound)?,
                remaining: limit,
                skip: offset.unwrap_or(0),
            })
        }
    })
}

fn eval_count(env: &Env, e: Option<&Expr>, what: &str, code: SqlState) -> PgResult<Option<i64>> {
    let Some(e) = e else { return Ok(None) };
    match env.eval(e, &[])? {
        Value::Null => Ok(None),
        v => {
            let n = v.as_i64().unwrap_or(0);
            if n < 0 {
                return Err(PgError::new(code, format!("{what} must not be negative")));
            }
            Ok(Some(n))
        }
    }
}

/// The joined row `left ++ right` when `on` (if any) holds for it; the join nodes'
/// shared test of one pair.
fn joined_row(
    env: &Env,
    on: Option<&Expr>,
    left: &[Value],
    right: &[Value],
) -> PgResult<Option<Row>> {
    let mut row = Vec::with_capacity(left.len() + right.len());
    row.extend_from_slice(left);
    row.extend_from_slice(right);
    match on {
        Some(on) if !env.eval(on, &row)?.is_true() => Ok(None),
        _ => Ok(Some(row)),
    }
}

/// Run an operator to the end.
/// The next rows of `op`: up to `max_rows`, fewer once they hold `max_bytes`
/// ([`crate::env::row_bytes`], at least one row) or at the end (none: the end).
pub fn next_batch(op: &mut dyn Operator, max_rows: usize, max_bytes: usize) -> PgResult<Vec<Row>> {
    let mut rows = Vec::new();
    let mut bytes = 0;
    while rows.len() < max_rows && bytes < max_bytes {
        match op.next()? {
            Some(r) => {
                bytes += crate::env::row_bytes(&r);
                rows.push(r);
            }
            None => break,
        }
    }
    Ok(rows)
}

pub fn collect(op: &mut dyn Operator) -> PgResult<Vec<Row>> {
    let mut rows = Vec::new();
    while let Some(r) = op.next()? {
        rows.push(r);
    }
    Ok(rows)
}
