//! Plan nodes as pull-based operators: each `next()` returns one row or `None` at the end.

use std::collections::{BTreeMap, BTreeSet};

use std::ops::Bound;

use access::heapam::{self, HeapScan};
use access::nbtree::{BTree, BTreeScan, RootCache, ScanDirection};
use common::{DataType, ItemPointer, PgError, PgResult, SqlState, Value};
use planner::Plan;
use sql::bound::{AggCall, Expr, JoinKind, SortKey};
use storage::bufmgr::BufferPool;

use crate::agg::Accumulator;
use crate::eval::Row;
use crate::sortkey::{RowKey, compare_sort_keys};

pub trait Operator {
    fn next(&mut self) -> PgResult<Option<Row>>;

    /// Rows this node read and its filter dropped so far (EXPLAIN ANALYZE's "Rows Removed
    /// by Filter").
    fn rows_removed(&self) -> u64 {
        0
    }
}

/// What operators read from: pages, cached btree roots, and the snapshot that decides
/// which tuple versions they see.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    /// The session: what expressions read of it (settings, clock, catalog view).
    pub session: &'a crate::session::Session<'a>,
    pub pool: &'a BufferPool,
    pub roots: &'a RootCache,
    pub tx: &'a txn::Tx,
    pub snapshot: &'a txn::Snapshot,
    /// Table scans append each row's address (`lockrows::tid_value`) after its columns:
    /// set below a LockRows node.
    pub emit_tid: bool,
    /// EXPLAIN ANALYZE: every operator is wrapped to count its rows and time.
    pub instrument: Option<&'a crate::explain::Instrumentation>,
    /// Inside a subquery: its outer values (`ExprKind::Outer`).
    pub outer: &'a [Value],
    /// The statement's subquery plans and results.
    pub subqueries: &'a crate::subquery::SubqueryCache,
    /// A prepared statement's parameter values (`ExprKind::Param`), when its plan was
    /// made with the parameters in place (a generic plan).
    pub params: Params<'a>,
}

/// The values of a prepared statement's parameters, each of the type Parse gave it.
#[derive(Clone, Copy, Default)]
pub struct Params<'a> {
    pub values: &'a [Value],
    pub types: &'a [DataType],
}

/// Build the operator tree for `plan`. Under EXPLAIN ANALYZE each node is numbered in
/// pre-order (a node before its children, children in plan order) and wrapped to count.
pub fn build<'a>(plan: &'a Plan, env: Env<'a>) -> PgResult<Box<dyn Operator + 'a>> {
    match env.instrument {
        None => build_node(plan, env),
        Some(ins) => {
            let id = ins.register();
            let inner = build_node(plan, env)?;
            Ok(Box::new(crate::explain::Instrumented::new(inner, ins, id)))
        }
    }
}

fn build_node<'a>(plan: &'a Plan, env: Env<'a>) -> PgResult<Box<dyn Operator + 'a>> {
    let pool = env.pool;
    Ok(match plan {
        Plan::SeqScan { table, filter } => Box::new(SeqScanOp {
            env,
            scan: TableScan::new(env, table.rel, table.column_types())?,
            filter: filter.as_ref(),
            emit_tid: env.emit_tid,
            removed: 0,
        }),
        Plan::LockRows {
            input,
            table,
            tid_column,
            mode,
            wait,
            recheck,
            exprs,
        } => Box::new(crate::lockrows::LockRowsOp {
            input: build(
                input,
                Env {
                    emit_tid: true,
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
        } => {
            // A NULL bound (`a = NULL`) matches nothing: no scan at all.
            let scan = match (
                bound_values(&env, lower, false, table, index)?,
                bound_values(&env, upper, true, table, index)?,
            ) {
                (Some(lo), Some(hi)) => Some(
                    BTree::new(pool, env.roots, index.rel)
                        .with_name(&index.name)
                        .scan(
                            lo,
                            hi,
                            if *backward {
                                ScanDirection::Backward
                            } else {
                                ScanDirection::Forward
                            },
                        )?,
                ),
                _ => None,
            };
            Box::new(IndexScanOp {
                env,
                rel: table.rel,
                types: table.column_types(),
                scan,
                filter: filter.as_ref(),
                removed: 0,
            })
        }
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
        Plan::SystemView { view, .. } => Box::new(SystemViewOp {
            rows: system_view_rows(*view, env).into_iter(),
        }),
        Plan::Filter { input, predicate } => Box::new(FilterOp {
            env,
            input: build(input, env)?,
            predicate,
            removed: 0,
        }),
        Plan::Project { input, exprs } => Box::new(ProjectOp {
            env,
            input: build(input, env)?,
            exprs,
        }),
        Plan::NestedLoopJoin {
            left,
            right,
            kind,
            on,
            right_width,
            lateral,
        } => Box::new(NestedLoopOp {
            env,
            left: build(left, env)?,
            // A LATERAL right side is built for each left row instead.
            right: match lateral {
                None => Some(build(right, env)?),
                Some(_) => None,
            },
            lateral: lateral.as_deref().map(|args| (&**right, args)),
            right_rows: Vec::new(),
            kind: *kind,
            on: on.as_ref(),
            right_width: *right_width,
            current: None,
            pos: 0,
            matched: false,
        }),
        Plan::IndexNestLoop {
            left,
            table,
            index,
            outer_key,
            key_cond,
            inner_filter,
            on,
            kind,
        } => Box::new(IndexNestLoopOp {
            left: build(left, env)?,
            env,
            table,
            index,
            types: table.column_types(),
            outer_key,
            key_cond,
            inner_filter: inner_filter.as_ref(),
            on: on.as_ref(),
            kind: *kind,
            pending: std::collections::VecDeque::new(),
        }),
        Plan::Aggregate {
            input,
            group_by,
            aggs,
        } => Box::new(AggregateOp {
            env,
            input: Some(build(input, env)?),
            group_by,
            aggs,
            output: Vec::new().into_iter(),
        }),
        Plan::Sort { input, keys } => Box::new(SortOp {
            env,
            input: Some(build(input, env)?),
            keys,
            output: Vec::new().into_iter(),
        }),
        Plan::Distinct { input } => Box::new(DistinctOp {
            input: build(input, env)?,
            seen: BTreeSet::new(),
        }),
        Plan::Append { inputs } => Box::new(AppendOp {
            inputs: inputs
                .iter()
                .map(|p| build(p, env))
                .collect::<PgResult<Vec<_>>>()?
                .into(),
        }),
        Plan::SetOp {
            intersect,
            all,
            left,
            right,
        } => Box::new(SetOpOp {
            left: build(left, env)?,
            right: Some(build(right, env)?),
            intersect: *intersect,
            all: *all,
            counts: BTreeMap::new(),
        }),
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
            Box::new(LimitOp {
                input: build(input, env)?,
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

/// Run an operator to the end.
pub fn collect(op: &mut dyn Operator) -> PgResult<Vec<Row>> {
    let mut rows = Vec::new();
    while let Some(r) = op.next()? {
        rows.push(r);
    }
    Ok(rows)
}

/// A heap scan that decodes the rows the snapshot sees; yields each with its address.
pub struct TableScan<'a> {
    scan: HeapScan<'a>,
    types: Vec<DataType>,
    tx: &'a txn::Tx,
}

impl<'a> TableScan<'a> {
    pub fn new(env: Env<'a>, rel: common::RelId, types: Vec<DataType>) -> PgResult<TableScan<'a>> {
        Ok(TableScan {
            scan: HeapScan::visible(env.pool, rel, env.snapshot, env.tx)?,
            types,
            tx: env.tx,
        })
    }

    pub fn next_row(&mut self) -> PgResult<Option<(ItemPointer, Row)>> {
        self.tx.check_for_interrupts()?;
        match self.scan.next() {
            None => Ok(None),
            Some(r) => {
                let (tid, bytes) = r?;
                Ok(Some((tid, access::tuple::decode(&bytes, &self.types)?)))
            }
        }
    }
}

/// Evaluate an index scan's bound: `None` when no row can be in range (a NULL key, or
/// an equality key outside the column's type). A key may be of a wider integer type than
/// its smallint or integer column (`int4_col = $1::bigint`, as sysbench binds): its value
/// is narrowed to the column's type here, at run time, so that a plan made with the
/// parameter in place keeps the index. A last key value beyond the column's range on the
/// side this bound limits (`a > 10^10` as a lower bound) admits no row; on the other side
/// (`a > -10^10`) it limits nothing and the bound is the equality prefix before it.
pub(crate) fn bound_values(
    env: &Env,
    b: &Bound<Vec<Expr>>,
    upper: bool,
    table: &catalog::TableDesc,
    index: &catalog::IndexDesc,
) -> PgResult<Option<Bound<Vec<Value>>>> {
    let (exprs, included) = match b {
        Bound::Unbounded => return Ok(Some(Bound::Unbounded)),
        Bound::Included(k) => (k, true),
        Bound::Excluded(k) => (k, false),
    };
    let mut key = Vec::with_capacity(exprs.len());
    for (i, e) in exprs.iter().enumerate() {
        let v = env.eval(e, &[])?;
        if v.is_null() {
            return Ok(None);
        }
        let ty = table.columns[index.columns[i]].ty.without_typmod();
        match narrow_key(v, e.ty, ty) {
            Ok(v) => key.push(v),
            // Past the end the bound moves toward: nothing is in range.
            Err(above) if above != upper => return Ok(None),
            // Past the other end, as the range condition: no limit at all.
            Err(_) if i + 1 == exprs.len() => {
                return Ok(Some(if key.is_empty() {
                    Bound::Unbounded
                } else {
                    Bound::Included(key)
                }));
            }
            // An equality no value of the column meets.
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(if included {
        Bound::Included(key)
    } else {
        Bound::Excluded(key)
    }))
}

/// A key value of type `from` as a value of its index column's type `to`: the same value
/// unless `from` is a wider integer type (the planner's `widened_integer_column`), which
/// is narrowed; `Err(true)` if it is above `to`'s range, `Err(false)` if below.
fn narrow_key(v: Value, from: DataType, to: DataType) -> Result<Value, bool> {
    if from == to || !matches!(from, DataType::Int4 | DataType::Int8) {
        return Ok(v);
    }
    let Some(n) = v.as_i64() else {
        return Ok(v);
    };
    let (min, max) = match to {
        DataType::Int2 => (i64::from(i16::MIN), i64::from(i16::MAX)),
        DataType::Int4 => (i64::from(i32::MIN), i64::from(i32::MAX)),
        _ => return Ok(v),
    };
    if n > max {
        return Err(true);
    }
    if n < min {
        return Err(false);
    }
    Ok(match to {
        DataType::Int2 => Value::Int2(n as i16),
        _ => Value::Int4(n as i32),
    })
}

struct IndexScanOp<'a> {
    env: Env<'a>,
    rel: common::RelId,
    types: Vec<DataType>,
    scan: Option<BTreeScan<'a>>,
    filter: Option<&'a Expr>,
    removed: u64,
}

impl Operator for IndexScanOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        let Some(scan) = self.scan.as_mut() else {
            return Ok(None);
        };
        for entry in scan.by_ref() {
            let (_, tid) = entry?;
            let env = self.env;
            env.tx.check_for_interrupts()?;
            let Some(bytes) =
                heapam::heap_fetch_visible(env.pool, self.rel, tid, env.snapshot, env.tx)?
            else {
                continue;
            };
            let mut row = access::tuple::decode(&bytes, &self.types)?;
            match self.filter {
                Some(f) if self.env.eval(f, &row)? != Value::Bool(true) => {
                    self.removed += 1;
                    continue;
                }
                _ => {
                    if env.emit_tid {
                        row.push(crate::lockrows::tid_value(tid));
                    }
                    return Ok(Some(row));
                }
            }
        }
        Ok(None)
    }

    fn rows_removed(&self) -> u64 {
        self.removed
    }
}

struct SeqScanOp<'a> {
    env: Env<'a>,
    scan: TableScan<'a>,
    filter: Option<&'a Expr>,
    emit_tid: bool,
    removed: u64,
}

impl Operator for SeqScanOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        while let Some((tid, mut row)) = self.scan.next_row()? {
            match self.filter {
                Some(f) if self.env.eval(f, &row)? != Value::Bool(true) => {
                    self.removed += 1;
                    continue;
                }
                _ => {
                    if self.emit_tid {
                        row.push(crate::lockrows::tid_value(tid));
                    }
                    return Ok(Some(row));
                }
            }
        }
        Ok(None)
    }

    fn rows_removed(&self) -> u64 {
        self.removed
    }
}

/// The rows of a system view, from the live state.
fn system_view_rows(view: catalog::SystemView, env: Env) -> Vec<Row> {
    use catalog::SystemView;
    let pool = env.pool;
    let n = |v: u64| Value::Int8(v.min(i64::MAX as u64) as i64);
    match view {
        SystemView::PgLocks => pg_locks_rows(env.tx.manager().locks()),
        SystemView::PgStatActivity => pg_stat_activity_rows(env.tx.manager()),
        SystemView::PgNamespace => vec![
            vec![
                Value::Oid(11),
                Value::Text("pg_catalog".into()),
                Value::Oid(10),
                Value::Null,
            ],
            // Owned by pg_database_owner, as in PostgreSQL 15.
            vec![
                Value::Oid(2200),
                Value::Text("public".into()),
                Value::Oid(6171),
                Value::Null,
            ],
            vec![
                Value::Oid(catalog::INFORMATION_SCHEMA_OID),
                Value::Text("information_schema".into()),
                Value::Oid(10),
                Value::Null,
            ],
        ],
        SystemView::PgClass => pg_class_rows(env),
        SystemView::PgAm => [(2, "heap", "t"), (403, "btree", "i")]
            .into_iter()
            .map(|(oid, name, kind)| {
                vec![
                    Value::Oid(oid),
                    Value::Text(name.into()),
                    Value::Text(kind.into()),
                ]
            })
            .collect(),
        SystemView::PgAttribute => pg_attribute_rows(env.session),
        SystemView::PgIndex => pg_index_rows(env.session),
        SystemView::PgAttrdef
        | SystemView::PgProc
        | SystemView::PgCollation
        | SystemView::PgConstraint
        | SystemView::PgInherits
        | SystemView::PgPartitionedTable
        | SystemView::PgRoles
        | SystemView::PgPolicy
        | SystemView::PgStatisticExt
        | SystemView::PgStats
        | SystemView::PgPublication
        | SystemView::PgPublicationNamespace
        | SystemView::PgPublicationRel
        | SystemView::PgSequence
        | SystemView::PgDepend
        | SystemView::PgDescription
        | SystemView::PgTrigger
        | SystemView::PgAuthMembers
        | SystemView::PgParameterAcl => crate::catalog_views::rows(env.session, view),
        SystemView::PgSettings => env.session.settings.rows(),
        SystemView::InfoTables
        | SystemView::InfoColumns
        | SystemView::InfoSchemata
        | SystemView::InfoTableConstraints
        | SystemView::InfoKeyColumnUsage
        | SystemView::InfoCheckConstraints => crate::information_schema::rows(env.session, view),
        SystemView::PgType => pg_type_rows(),
        SystemView::PgDatabase => vec![vec![
            Value::Oid(5),
            Value::Text(env.session.info.database.clone()),
            Value::Oid(10),
            Value::Int4(6),
            Value::Text("C".into()),
            Value::Text("C".into()),
            Value::Bool(false),
            Value::Bool(true),
            Value::Text("c".into()),
            Value::Null,
            Value::Null,
        ]],
        SystemView::StatFd => {
            let s = pool.smgr().fd_stats();
            vec![vec![
                n(s.max_open_files as u64),
                n(s.open_files as u64),
                n(s.hits),
                n(s.misses),
                n(s.evictions),
                n(s.eviction_syncs),
            ]]
        }
        SystemView::StatBuffers => {
            let s = pool.stats();
            vec![vec![
                n(pool.capacity() as u64),
                n(s.hits),
                n(s.misses),
                n(s.evictions),
                n(s.writes),
            ]]
        }
        SystemView::StatWal => vec![match pool.wal() {
            Some(wal) => {
                let s = wal.stats();
                let lsn = |l| Value::Text(storage::xlog::fmt_lsn(l));
                vec![
                    n(s.records),
                    n(s.bytes),
                    n(s.syncs),
                    n(s.checkpoints),
                    lsn(wal.insert_lsn()),
                    lsn(wal.flushed_lsn()),
                    lsn(wal.redo_lsn()),
                ]
            }
            None => vec![Value::Null; view.columns().len()],
        }],
    }
}

/// `pg_locks`: one row per lock held or awaited, by session.
fn pg_locks_rows(locks: &txn::lock::LockManager) -> Vec<Row> {
    use txn::lock::LockTag;
    let db = Value::Int8(i64::from(locks.config().database_oid));
    let oid = |o: u32| Value::Int8(i64::from(o));
    let mut infos = locks.snapshot();
    infos.sort_by_key(|l| (l.pid, l.tag, l.mode));
    infos
        .into_iter()
        .map(|l| {
            let mut row = vec![Value::Null; 15];
            row[0] = Value::Text(l.tag.locktype().into());
            match l.tag {
                LockTag::Relation(rel) => {
                    row[1] = db.clone();
                    row[2] = oid(rel);
                }
                LockTag::Transaction(xid) => {
                    row[6] = Value::Int8(xid.min(i64::MAX as u64) as i64);
                }
                LockTag::Tuple { rel, block, offset } => {
                    row[1] = db.clone();
                    row[2] = oid(rel);
                    row[3] = Value::Int4(block as i32);
                    row[4] = Value::Int2(offset as i16);
                }
                LockTag::Object { class, id } => {
                    row[1] = db.clone();
                    row[7] = oid(class);
                    row[8] = oid(id);
                    row[9] = Value::Int2(0);
                }
                LockTag::Advisory(key) => {
                    row[1] = db.clone();
                    row[7] = Value::Int8((key >> 32) as i64);
                    row[8] = Value::Int8((key & 0xffff_ffff) as i64);
                    row[9] = Value::Int2(1);
                }
            }
            row[11] = Value::Int4(l.pid as i32);
            row[12] = Value::Text(l.mode.name().into());
            row[13] = Value::Bool(l.granted);
            row[14] = Value::Bool(l.fastpath);
            row
        })
        .collect()
}

/// `pg_stat_activity`: one row per client session.
fn pg_stat_activity_rows(mgr: &txn::TxnManager) -> Vec<Row> {
    use txn::lock::{LockMode, LockTag};
    let locks = mgr.locks();
    let held = locks.snapshot();
    mgr.activity()
        .sessions()
        .into_iter()
        .map(|s| {
            let pid = s.pid();
            let (state, query, application_name) = s.read();
            let (wait_type, wait_event) = match locks.waiting_for(pid) {
                Some((tag, _)) => (
                    Value::Text("Lock".into()),
                    Value::Text(tag.wait_event().into()),
                ),
                None if state != txn::activity::BackendState::Active => (
                    Value::Text("Client".into()),
                    Value::Text("ClientRead".into()),
                ),
                None => (Value::Null, Value::Null),
            };
            // Its top-level id: the oldest id it holds its own transaction lock on.
            let xid = held
                .iter()
                .filter(|l| l.pid == pid && l.granted && l.mode == LockMode::Exclusive)
                .filter_map(|l| match l.tag {
                    LockTag::Transaction(x) => Some(x),
                    _ => None,
                })
                .min();
            let int8 = |x: Option<u64>| {
                x.map_or(Value::Null, |x| Value::Int8(x.min(i64::MAX as u64) as i64))
            };
            vec![
                Value::Int8(i64::from(locks.config().database_oid)),
                Value::Text("postgres".into()),
                Value::Int4(pid as i32),
                Value::Null,
                Value::Int8(10),
                Value::Text("postgres".into()),
                Value::Text(application_name),
                wait_type,
                wait_event,
                Value::Text(state.name().into()),
                int8(xid),
                int8(mgr.xmin_of(pid)),
                Value::Text(query),
                Value::Text("client backend".into()),
            ]
        })
        .collect()
}

/// For each left row, the matching rows of a table found through an index on the join
/// key (planner `Plan::IndexNestLoop`); a LEFT JOIN pads a left row without matches.
struct IndexNestLoopOp<'a> {
    left: Box<dyn Operator + 'a>,
    env: Env<'a>,
    table: &'a catalog::TableDesc,
    index: &'a catalog::IndexDesc,
    types: Vec<DataType>,
    outer_key: &'a Expr,
    key_cond: &'a Expr,
    inner_filter: Option<&'a Expr>,
    on: Option<&'a Expr>,
    kind: JoinKind,
    /// Joined rows of the current left row not returned yet.
    pending: std::collections::VecDeque<Row>,
}

impl Operator for IndexNestLoopOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return Ok(Some(r));
            }
            let Some(left) = self.left.next()? else {
                return Ok(None);
            };
            let key = self.env.eval(self.outer_key, &left)?;
            let mut matched = false;
            if !key.is_null() {
                let env = self.env;
                let scan = BTree::new(env.pool, env.roots, self.index.rel)
                    .with_name(&self.index.name)
                    .scan(
                        Bound::Included(vec![key.clone()]),
                        Bound::Included(vec![key]),
                        ScanDirection::Forward,
                    )?;
                for entry in scan {
                    let (_, tid) = entry?;
                    env.tx.check_for_interrupts()?;
                    let Some(bytes) = heapam::heap_fetch_visible(
                        env.pool,
                        self.table.rel,
                        tid,
                        env.snapshot,
                        env.tx,
                    )?
                    else {
                        continue;
                    };
                    let inner = access::tuple::decode(&bytes, &self.types)?;
                    if let Some(f) = self.inner_filter
                        && self.env.eval(f, &inner)? != Value::Bool(true)
                    {
                        continue;
                    }
                    let mut row = left.clone();
                    row.extend(inner);
                    if self.env.eval(self.key_cond, &row)? != Value::Bool(true) {
                        continue;
                    }
                    if let Some(on) = self.on
                        && self.env.eval(on, &row)? != Value::Bool(true)
                    {
                        continue;
                    }
                    matched = true;
                    self.pending.push_back(row);
                }
            }
            if !matched && self.kind == JoinKind::Left {
                let mut row = left;
                row.resize(row.len() + self.types.len(), Value::Null);
                return Ok(Some(row));
            }
        }
    }
}

/// `pg_class`: every table ('r'), index ('i') and sequence ('S') of the catalog snapshot
/// the session sees, all in `public` (2200), owned by the bootstrap superuser (10).
/// `relpages` is the relation's size now (PostgreSQL's is VACUUM's last estimate);
/// a table's `reltuples` is ANALYZE's last estimate (-1 before it ran, as for indexes).
fn pg_class_rows(env: Env) -> Vec<Row> {
    let catalog = &env.session.catalog;
    let pages = |rel| Value::Int4(env.pool.smgr().nblocks(rel).unwrap_or(0) as i32);
    let row = |oid: common::Oid,
               name: &str,
               am: u32,
               pages: Value,
               tuples: f32,
               has_index: bool,
               kind: &str,
               natts: usize| {
        vec![
            Value::Oid(oid),
            Value::Text(name.to_string()),
            Value::Oid(2200),
            Value::Oid(0),
            Value::Oid(10),
            Value::Oid(am),
            pages,
            Value::Float4(tuples),
            Value::Bool(has_index),
            Value::Text("p".into()),
            Value::Text(kind.into()),
            Value::Int2(natts as i16),
            // No rules, row security, partitions, tablespaces, typed tables or TOAST
            // yet. relchecks and relhastriggers are set by the caller.
            Value::Int2(0),
            Value::Bool(false),
            Value::Bool(false),
            Value::Bool(false),
            Value::Bool(false),
            Value::Bool(false),
            Value::Oid(0),
            Value::Oid(0),
            Value::Oid(0),
            // REPLICA IDENTITY DEFAULT for tables, NOTHING for the others.
            Value::Text(if kind == "r" { "d" } else { "n" }.into()),
            Value::Null,
            Value::Null,
        ]
    };
    let mut tables: Vec<_> = catalog.tables().collect();
    tables.sort_by_key(|t| t.oid);
    let mut out = Vec::new();
    for t in tables {
        let mut r = row(
            t.oid,
            &t.name,
            2,
            pages(t.rel),
            catalog.stats(t.oid).map_or(-1.0, |s| s.reltuples as f32),
            !t.indexes.is_empty(),
            "r",
            t.columns.len(),
        );
        // PostgreSQL enforces a foreign key with triggers on both tables, and psql's \d
        // lists foreign keys only for a table with triggers. Myriad enforces them
        // without triggers (pg_trigger is empty) but says the same of such tables.
        r[RELHASTRIGGERS] =
            Value::Bool(!t.foreign_keys.is_empty() || catalog.referencing(t.oid).next().is_some());
        r[RELOPTIONS] = reloptions(&t.options);
        r[RELCHECKS] = Value::Int2(t.checks.len() as i16);
        out.push(r);
        for i in &t.indexes {
            out.push(row(
                i.oid,
                &i.name,
                403,
                pages(i.rel),
                -1.0,
                false,
                "i",
                i.columns.len(),
            ));
        }
    }
    let mut seqs: Vec<_> = catalog.sequences().collect();
    seqs.sort_by_key(|s| s.oid);
    for s in seqs {
        out.push(row(s.oid, &s.name, 0, pages(s.rel), 1.0, false, "S", 3));
    }
    out
}

/// pg_class's columns that differ between tables.
const RELCHECKS: usize = 12;
const RELHASTRIGGERS: usize = 14;
const RELOPTIONS: usize = 23;

/// A table's storage options as `pg_class.reloptions` lists them (`{fillfactor=70}`),
/// NULL for none. Myriad keeps the options' values, not whether they were given, so
/// an option at its default is not listed.
fn reloptions(o: &catalog::TableOptions) -> Value {
    let defaults = catalog::TableOptions::default();
    let mut items = Vec::new();
    if o.fillfactor != defaults.fillfactor {
        items.push(Value::Text(format!("fillfactor={}", o.fillfactor)));
    }
    if o.autovacuum_enabled != defaults.autovacuum_enabled {
        items.push(Value::Text(format!(
            "autovacuum_enabled={}",
            o.autovacuum_enabled
        )));
    }
    if items.is_empty() {
        return Value::Null;
    }
    Value::Array(std::sync::Arc::new(common::array::Array::from_items(
        common::types::oids::TEXT,
        items,
    )))
}

/// `pg_attribute`: the user columns of every table (attnum from 1), with their types as
/// PostgreSQL numbers them; a dropped column as PostgreSQL shows one (type 0,
/// `attisdropped`). PostgreSQL also lists system columns (negative attnum) and index
/// columns; Myriad does not yet.
fn pg_attribute_rows(s: &crate::session::Session) -> Vec<Row> {
    rows_per_table(s, |t, out| {
        for (i, c) in t.columns.iter().enumerate() {
            let (ty, typmod) = match c.dropped {
                true => (0, -1),
                false => (c.ty.oid(), c.ty.typmod()),
            };
            out.push(vec![
                Value::Oid(t.oid),
                Value::Text(c.name.clone()),
                Value::Oid(ty),
                Value::Int2(c.ty.typlen()),
                Value::Int2(i as i16 + 1),
                Value::Int4(typmod),
                Value::Bool(c.not_null),
                // An identity column's values come from its sequence, not a DEFAULT.
                Value::Bool(c.default.is_some() && c.identity.is_none()),
                Value::Text(
                    match c.identity {
                        Some(catalog::Identity::Always) => "a",
                        Some(catalog::Identity::ByDefault) => "d",
                        None => "",
                    }
                    .into(),
                ),
                Value::Bool(c.dropped),
                // The database's default collation for strings.
                Value::Oid(if c.ty.is_string() && !c.dropped {
                    100
                } else {
                    0
                }),
                Value::Text(String::new()),
                Value::Text(c.ty.typstorage().into()),
                // No compression method chosen; the statistics target (-1: the default;
                // a dropped column's is 0).
                Value::Text(String::new()),
                Value::Int4(match (c.dropped, c.stat_target) {
                    (true, _) => 0,
                    (false, None) => -1,
                    (false, Some(t)) => i32::from(t),
                }),
            ]);
        }
    })
}

/// `pg_index`: each index's table, width and kind. Myriad builds an index before it
/// commits the CREATE INDEX that makes it visible, so every index is valid, ready and
/// live; unique checks are immediate (no DEFERRABLE yet).
fn pg_index_rows(s: &crate::session::Session) -> Vec<Row> {
    rows_per_table(s, |t, out| {
        for i in &t.indexes {
            let width = Value::Int2(i.columns.len() as i16);
            out.push(vec![
                Value::Oid(i.oid),
                Value::Oid(t.oid),
                width.clone(),
                width,
                Value::Bool(i.unique),
                Value::Bool(false),
                Value::Bool(i.primary),
                Value::Bool(false),
                Value::Bool(true),
                Value::Bool(false),
                Value::Bool(true),
                Value::Bool(false),
                Value::Bool(true),
                Value::Bool(true),
                Value::Bool(false),
            ]);
        }
    })
}

/// A catalog view's rows: `rows` of each table, tables in oid order.
pub(crate) fn rows_per_table(
    s: &crate::session::Session,
    mut rows: impl FnMut(&catalog::TableDesc, &mut Vec<Row>),
) -> Vec<Row> {
    let catalog = &s.catalog;
    let mut tables: Vec<_> = catalog.tables().collect();
    tables.sort_by_key(|t| t.oid);
    let mut out = Vec::new();
    for t in tables {
        rows(t, &mut out);
    }
    out
}

/// `pg_type`: the built-in types Myriad has, with PostgreSQL's OIDs, names, lengths and
/// categories.
fn pg_type_rows() -> Vec<Row> {
    use DataType as T;
    let types = [
        (T::Bool, "B"),
        (T::Bytea, "U"),
        (T::Int8, "N"),
        (T::Int2, "N"),
        (T::Int4, "N"),
        (T::Text, "S"),
        (T::Float4, "N"),
        (T::Float8, "N"),
        (T::Bpchar(None), "S"),
        (T::Varchar(None), "S"),
        (T::Date, "D"),
        (T::Timestamp(None), "D"),
        (T::TimestampTz(None), "D"),
        (T::Interval, "T"),
        (T::Numeric(None), "N"),
        (T::Uuid, "U"),
        (T::Oid, "N"),
        (T::Reg(common::value::RegKind::Class), "N"),
        (T::Reg(common::value::RegKind::Type), "N"),
        (T::Reg(common::value::RegKind::Namespace), "N"),
    ];
    // The collatable types use the database's default collation (`pg_collation` 100).
    let collation = |t: &DataType| if t.is_string() { 100 } else { 0 };
    let mut rows: Vec<Row> = Vec::new();
    for (t, category) in types {
        let array = t.array().expect("every base type has an array type");
        rows.push(vec![
            Value::Oid(t.oid()),
            Value::Text(t.internal_name().into()),
            Value::Oid(11),
            Value::Int2(t.typlen()),
            Value::Text("b".into()),
            Value::Text(category.into()),
            Value::Oid(0),
            Value::Oid(array.oid()),
            Value::Oid(collation(&t)),
            Value::Oid(0),
            Value::Text(t.typstorage().into()),
            Value::Bool(false),
            Value::Oid(0),
            Value::Int4(-1),
        ]);
        rows.push(vec![
            Value::Oid(array.oid()),
            Value::Text(format!("_{}", t.internal_name())),
            Value::Oid(11),
            Value::Int2(-1),
            Value::Text("b".into()),
            Value::Text("A".into()),
            Value::Oid(t.oid()),
            Value::Oid(0),
            Value::Oid(collation(&t)),
            Value::Oid(0),
            Value::Text("x".into()),
            Value::Bool(false),
            Value::Oid(0),
            Value::Int4(-1),
        ]);
    }
    rows.sort_by_key(|r| r[0].as_i64());
    rows
}

/// Rows made before the scan starts (a system view's, a sequence's).
struct SystemViewOp {
    rows: std::vec::IntoIter<Row>,
}

impl Operator for SystemViewOp {
    fn next(&mut self) -> PgResult<Option<Row>> {
        Ok(self.rows.next())
    }
}

struct ValuesOp<'a> {
    env: Env<'a>,
    rows: &'a [Vec<Expr>],
    pos: usize,
}

impl Operator for ValuesOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        let Some(r) = self.rows.get(self.pos) else {
            return Ok(None);
        };
        self.pos += 1;
        r.iter()
            .map(|e| self.env.eval(e, &[]))
            .collect::<PgResult<Row>>()
            .map(Some)
    }
}

struct FilterOp<'a> {
    env: Env<'a>,
    input: Box<dyn Operator + 'a>,
    predicate: &'a Expr,
    removed: u64,
}

impl Operator for FilterOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        while let Some(row) = self.input.next()? {
            if self.env.eval(self.predicate, &row)? == Value::Bool(true) {
                return Ok(Some(row));
            }
            self.removed += 1;
        }
        Ok(None)
    }

    fn rows_removed(&self) -> u64 {
        self.removed
    }
}

struct ProjectOp<'a> {
    env: Env<'a>,
    input: Box<dyn Operator + 'a>,
    exprs: &'a [Expr],
}

impl Operator for ProjectOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        match self.input.next()? {
            None => Ok(None),
            Some(row) => self
                .exprs
                .iter()
                .map(|e| self.env.eval(e, &row))
                .collect::<PgResult<Row>>()
                .map(Some),
        }
    }
}

struct NestedLoopOp<'a> {
    env: Env<'a>,
    left: Box<dyn Operator + 'a>,
    /// The right input until it has been materialised into `right_rows`.
    right: Option<Box<dyn Operator + 'a>>,
    /// A LATERAL right side and its outer values over the left row: run for each left
    /// row into `right_rows`.
    lateral: Option<(&'a Plan, &'a [Expr])>,
    right_rows: Vec<Row>,
    kind: JoinKind,
    on: Option<&'a Expr>,
    right_width: usize,
    current: Option<Row>,
    pos: usize,
    matched: bool,
}

impl NestedLoopOp<'_> {
    /// The rows of a LATERAL right side for the left row `left`. Under EXPLAIN ANALYZE
    /// its nodes are not counted (they would be built again for each row), as a
    /// subquery's are not.
    fn run_lateral(&self, plan: &Plan, args: &[Expr], left: &[Value]) -> PgResult<Vec<Row>> {
        let outer = args
            .iter()
            .map(|a| self.env.eval(a, left))
            .collect::<PgResult<Vec<_>>>()?;
        let env = Env {
            outer: &outer,
            instrument: None,
            ..self.env
        };
        let mut op = build(plan, env)?;
        collect(op.as_mut())
    }
}

impl Operator for NestedLoopOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if let Some(mut r) = self.right.take() {
            self.right_rows = collect(r.as_mut())?;
        }
        loop {
            if self.current.is_none() {
                match self.left.next()? {
                    None => return Ok(None),
                    Some(l) => {
                        if let Some((plan, args)) = self.lateral {
                            self.right_rows = self.run_lateral(plan, args, &l)?;
                        }
                        self.current = Some(l);
                        self.pos = 0;
                        self.matched = false;
                    }
                }
            }
            let left = self.current.as_ref().expect("set above");
            while self.pos < self.right_rows.len() {
                self.env.tx.check_for_interrupts()?;
                let right = &self.right_rows[self.pos];
                self.pos += 1;
                let mut row = Vec::with_capacity(left.len() + right.len());
                row.extend_from_slice(left);
                row.extend_from_slice(right);
                let ok = match self.on {
                    None => true,
                    Some(on) => self.env.eval(on, &row)? == Value::Bool(true),
                };
                if ok {
                    self.matched = true;
                    return Ok(Some(row));
                }
            }
            let left = self.current.take().expect("set above");
            if self.kind == JoinKind::Left && !self.matched {
                let mut row = left;
                row.extend(std::iter::repeat_n(Value::Null, self.right_width));
                return Ok(Some(row));
            }
        }
    }
}

struct AggregateOp<'a> {
    env: Env<'a>,
    input: Option<Box<dyn Operator + 'a>>,
    group_by: &'a [Expr],
    aggs: &'a [AggCall],
    output: std::vec::IntoIter<Row>,
}

impl AggregateOp<'_> {
    fn compute(&mut self, mut input: Box<dyn Operator + '_>) -> PgResult<Vec<Row>> {
        let mut groups: BTreeMap<RowKey, Vec<Accumulator>> = BTreeMap::new();
        let new_accs = || self.aggs.iter().map(Accumulator::new).collect::<Vec<_>>();
        if self.group_by.is_empty() {
            // A plain aggregate yields one row even over no input.
            groups.insert(RowKey(Vec::new()), new_accs());
        }
        while let Some(row) = input.next()? {
            let key = RowKey(
                self.group_by
                    .iter()
                    .map(|g| self.env.eval(g, &row))
                    .collect::<PgResult<_>>()?,
            );
            let accs = groups.entry(key).or_insert_with(new_accs);
            for (acc, call) in accs.iter_mut().zip(self.aggs) {
                acc.add(call, &row, &self.env)?;
            }
        }
        groups
            .into_iter()
            .map(|(key, accs)| {
                let mut row = key.0;
                for (a, c) in accs.into_iter().zip(self.aggs) {
                    row.push(a.finish(c)?);
                }
                Ok(row)
            })
            .collect()
    }
}

impl Operator for AggregateOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if let Some(input) = self.input.take() {
            self.output = self.compute(input)?.into_iter();
        }
        Ok(self.output.next())
    }
}

struct SortOp<'a> {
    env: Env<'a>,
    input: Option<Box<dyn Operator + 'a>>,
    keys: &'a [SortKey],
    output: std::vec::IntoIter<Row>,
}

impl Operator for SortOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut keyed = Vec::new();
            while let Some(row) = input.next()? {
                let k = self
                    .keys
                    .iter()
                    .map(|k| self.env.eval(&k.expr, &row))
                    .collect::<PgResult<Vec<_>>>()?;
                keyed.push((k, row));
            }
            keyed.sort_by(|a, b| compare_sort_keys(self.keys, &a.0, &b.0));
            self.output = keyed
                .into_iter()
                .map(|(_, r)| r)
                .collect::<Vec<_>>()
                .into_iter();
        }
        Ok(self.output.next())
    }
}

struct DistinctOp<'a> {
    input: Box<dyn Operator + 'a>,
    seen: BTreeSet<RowKey>,
}

impl Operator for DistinctOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        while let Some(row) = self.input.next()? {
            if self.seen.insert(RowKey(row.clone())) {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }
}

struct AppendOp<'a> {
    inputs: std::collections::VecDeque<Box<dyn Operator + 'a>>,
}

impl Operator for AppendOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        while let Some(input) = self.inputs.front_mut() {
            if let Some(row) = input.next()? {
                return Ok(Some(row));
            }
            self.inputs.pop_front();
        }
        Ok(None)
    }
}

/// INTERSECT / EXCEPT [ALL]. The right side's rows are counted first; each left row then
/// passes or not by its count, which an ALL operation spends as it goes (so a row in the
/// left side n times and the right side m times comes out min(n, m) times for INTERSECT
/// ALL, max(n - m, 0) for EXCEPT ALL). Without ALL a passed row's count is set so that
/// its duplicates no longer pass: at most once each.
struct SetOpOp<'a> {
    left: Box<dyn Operator + 'a>,
    /// Until it has been counted.
    right: Option<Box<dyn Operator + 'a>>,
    /// INTERSECT, else EXCEPT.
    intersect: bool,
    all: bool,
    /// Per distinct row: the right side's count (INTERSECT), or for EXCEPT the count
    /// with -1 marking a row already passed.
    counts: BTreeMap<RowKey, i64>,
}

impl Operator for SetOpOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if let Some(mut right) = self.right.take() {
            while let Some(row) = right.next()? {
                *self.counts.entry(RowKey(row)).or_insert(0) += 1;
            }
        }
        while let Some(row) = self.left.next()? {
            let key = RowKey(row);
            let pass = match (self.intersect, self.all) {
                (true, true) => match self.counts.get_mut(&key) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        true
                    }
                    _ => false,
                },
                (true, false) => match self.counts.get_mut(&key) {
                    Some(n) if *n > 0 => {
                        *n = 0;
                        true
                    }
                    _ => false,
                },
                (false, true) => match self.counts.get_mut(&key) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        false
                    }
                    _ => true,
                },
                (false, false) => match self.counts.get(&key) {
                    Some(_) => false,
                    None => {
                        self.counts.insert(key.clone(), -1);
                        true
                    }
                },
            };
            if pass {
                return Ok(Some(key.0));
            }
        }
        Ok(None)
    }
}

struct LimitOp<'a> {
    input: Box<dyn Operator + 'a>,
    remaining: Option<i64>,
    skip: i64,
}

impl Operator for LimitOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if self.remaining == Some(0) {
            return Ok(None);
        }
        while self.skip > 0 {
            if self.input.next()?.is_none() {
                return Ok(None);
            }
            self.skip -= 1;
        }
        let r = self.input.next()?;
        if r.is_some()
            && let Some(n) = &mut self.remaining
        {
            *n -= 1;
        }
        Ok(r)
    }
}

/// `generate_series(start, stop [, step])` over int4, int8 or numeric (step 1 by
/// default), or over timestamp or timestamptz with an interval step: the values from
/// `start` while they do not pass `stop`, made one at a time (no row is held beyond the
/// current one). A NULL argument gives no rows, as the strict function does. A series
/// that never ends (from `-infinity`, as in PostgreSQL) ends at `statement_timeout`.
struct GenerateSeriesOp<'a> {
    tx: &'a txn::Tx,
    /// The session's clock and zone: a series of timestamptz steps in its zone.
    clock: &'a common::datetime::SessionClock,
    next: Option<Value>,
    stop: Value,
    step: Value,
    /// The step is positive: the series ends above `stop` (else below it).
    ascending: bool,
}

fn series_error(what: &str) -> PgError {
    PgError::new(common::SqlState::INVALID_PARAMETER_VALUE, what.to_string())
}

impl<'a> GenerateSeriesOp<'a> {
    fn new(
        tx: &'a txn::Tx,
        clock: &'a common::datetime::SessionClock,
        start: Value,
        stop: Value,
        step: Option<Value>,
    ) -> PgResult<GenerateSeriesOp<'a>> {
        let step = match (step, &start) {
            (Some(s), _) => s,
            (None, Value::Numeric(_)) => Value::Numeric(common::numeric::Numeric::from(1i64)),
            (None, _) => Value::Int8(1),
        };
        let none = |step| GenerateSeriesOp {
            tx,
            clock,
            next: None,
            stop: Value::Null,
            step,
            ascending: true,
        };
        if start.is_null() || stop.is_null() || step.is_null() {
            return Ok(none(step));
        }
        if let (Value::Numeric(a), Value::Numeric(b), Value::Numeric(s)) = (&start, &stop, &step) {
            for (n, what) in [(a, "start value"), (b, "stop value"), (s, "step size")] {
                if n.is_nan() {
                    return Err(series_error(&format!("{what} cannot be NaN")));
                }
                if n.is_infinite() {
                    return Err(series_error(&format!("{what} cannot be infinity")));
                }
            }
        }
        let ascending = match &step {
            Value::Numeric(s) if s.is_zero() => None,
            Value::Numeric(s) => Some(!s.is_negative()),
            Value::Interval(i) => match i.cmp(&common::datetime::Interval::default()) {
                std::cmp::Ordering::Equal => None,
                o => Some(o == std::cmp::Ordering::Greater),
            },
            other => match other.as_i64() {
                Some(0) => None,
                Some(n) => Some(n > 0),
                None => return Err(PgError::internal(format!("a series step of {other:?}"))),
            },
        };
        let Some(ascending) = ascending else {
            return Err(series_error("step size cannot equal zero"));
        };
        Ok(GenerateSeriesOp {
            tx,
            clock,
            next: Some(start),
            stop,
            step,
            ascending,
        })
    }

    /// Whether `v` is past the end of the series.
    fn past(&self, v: &Value) -> PgResult<bool> {
        let order = match (v, &self.stop) {
            (Value::Numeric(a), Value::Numeric(b)) => a.cmp(b),
            (Value::Timestamp(a), Value::Timestamp(b)) => a.cmp(b),
            (Value::TimestampTz(a), Value::TimestampTz(b)) => a.cmp(b),
            (a, b) => match (a.as_i64(), b.as_i64()) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => return Err(PgError::internal(format!("a series of {a:?} to {b:?}"))),
            },
        };
        Ok(if self.ascending {
            order.is_gt()
        } else {
            order.is_lt()
        })
    }

    /// The value after `v`; `None` where an integer series leaves its type's range
    /// (PostgreSQL stops there rather than fail).
    fn after(&self, v: &Value) -> PgResult<Option<Value>> {
        Ok(match (v, &self.step) {
            (Value::Numeric(a), Value::Numeric(s)) => Some(Value::Numeric(a.add(s)?)),
            (Value::Timestamp(_) | Value::TimestampTz(_), Value::Interval(_)) => {
                let ty = if matches!(v, Value::Timestamp(_)) {
                    DataType::Timestamp(None)
                } else {
                    DataType::TimestampTz(None)
                };
                Some(crate::datetime::arith(
                    self.clock,
                    sql::bound::BinaryOp::Add,
                    v,
                    &self.step,
                    &ty,
                )?)
            }
            (Value::Int4(a), s) => s
                .as_i64()
                .and_then(|s| i64::from(*a).checked_add(s))
                .and_then(|n| i32::try_from(n).ok())
                .map(Value::Int4),
            (a, s) => match (a.as_i64(), s.as_i64()) {
                (Some(a), Some(s)) => a.checked_add(s).map(Value::Int8),
                _ => return Err(PgError::internal(format!("a series step {s:?} from {a:?}"))),
            },
        })
    }
}

impl Operator for GenerateSeriesOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        self.tx.check_for_interrupts()?;
        let Some(v) = self.next.take() else {
            return Ok(None);
        };
        if self.past(&v)? {
            return Ok(None);
        }
        self.next = self.after(&v)?;
        Ok(Some(vec![v]))
    }
}
