//! Estimates of every plan node (planner rule 6): startup and total cost, rows and width,
//! by PostgreSQL 15's cost formulas (its `costsize.c`) over the selectivities of
//! [`crate::selectivity`], for EXPLAIN to print and the plan cache to compare.
//!
//! Myriad's nodes map onto PostgreSQL's: a Filter or Project is costed as PostgreSQL
//! costs the qual or target list of the node it is shown on; a nested loop's inner side
//! read once and kept is a Materialize; an index nested loop's inner side is a
//! parameterized index scan repeated once per outer row. Widths follow PostgreSQL's
//! (`get_typavgwidth`, or ANALYZE's average width of a column), except that a scan
//! reports every column of its table (Myriad's scans return them all).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use catalog::TableDesc;
use common::{DataType, Value};
use sql::bound::{AggCall, AggFunc, BinaryOp, Expr, ExprKind, JoinKind};

use crate::cost::{self, Cost, PlanContext};
use crate::selectivity::{
    RelInfo, clamp_rows, clause_selectivity, conjuncts_selectivity, distinct_values,
    distinct_values_or_default, join_eq_semi_selectivity, type_width,
};
use crate::{Plan, scan};

/// What a node is estimated to cost and return (PostgreSQL's `Plan` header fields).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Estimate {
    pub startup: f64,
    pub total: f64,
    pub rows: f64,
    /// Average output row width, in bytes.
    pub width: i64,
}

impl Estimate {
    fn from_cost(c: Cost, width: i64) -> Estimate {
        Estimate {
            startup: c.startup,
            total: c.total,
            rows: c.rows,
            width,
        }
    }
}

/// Where an output column of a node comes from, when it is a table's column: the scan
/// (one table may be scanned twice, as in a self-join), the table and the column.
type Origin = Option<(usize, *const TableDesc, usize)>;

/// What a merge join's cost needs to know of its inputs besides their columns: each
/// side's estimate in key order (sorted, where it is sorted), whether the inner rows are
/// unique on the join's condition, and whether the inner side is a Sort (which keeps its
/// rows for re-reads).
#[derive(Clone, Copy)]
pub(crate) struct MergeInputs {
    pub(crate) outer: Estimate,
    pub(crate) inner: Estimate,
    pub(crate) unique: bool,
    pub(crate) inner_sorted: bool,
}

/// A node's estimate with its output columns' widths and origins.
#[derive(Clone)]
pub(crate) struct Node {
    pub(crate) est: Estimate,
    /// Shared: a join's ways and the parts of a search copy them often.
    widths: Rc<[i64]>,
    origins: Rc<[Origin]>,
}

impl Node {
    /// Where `e` comes from, if it is a bare column of this node.
    fn origin_of(&self, e: &Expr) -> Origin {
        match e.kind {
            ExprKind::Column(i) => self.origins.get(i).copied().flatten(),
            _ => None,
        }
    }

    /// The nodes' columns side by side, with no estimate: a row that conditions over all
    /// of them read.
    pub(crate) fn side_by_side<'n>(nodes: impl IntoIterator<Item = &'n Node>) -> Node {
        let (mut widths, mut origins) = (Vec::new(), Vec::new());
        for n in nodes {
            widths.extend(n.widths.iter());
            origins.extend(n.origins.iter());
        }
        Node {
            est: Estimate::default(),
            widths: widths.into(),
            origins: origins.into(),
        }
    }

    /// This node's columns followed by an inner side's, with no estimate yet: the row a
    /// join's conditions read.
    fn joined(
        &self,
        widths: impl IntoIterator<Item = i64>,
        origins: impl IntoIterator<Item = Origin>,
    ) -> Node {
        let mut w = self.widths.to_vec();
        let mut o = self.origins.to_vec();
        w.extend(widths);
        o.extend(origins);
        Node {
            est: Estimate::default(),
            widths: w.into(),
            origins: o.into(),
        }
    }
}

/// The inner side of an index nested loop: `table`'s rows looked up through `index` by
/// `key_cond`, then filtered by `filter`; `scan` names the lookups' rows (their origin).
#[derive(Clone, Copy)]
pub(crate) struct InnerIndex<'p> {
    pub scan: usize,
    pub table: &'p std::sync::Arc<TableDesc>,
    pub index: &'p catalog::IndexDesc,
    pub key_cond: &'p Expr,
    /// The conjuncts of the index's further key columns the lookup fixes.
    pub more_conds: &'p [Expr],
    pub filter: Option<&'p Expr>,
    /// The repeated lookups a lookup's cost is spread over (PostgreSQL's `loop_count`,
    /// `get_loop_count`): the rows of the scan that the lookup's outer value comes
    /// from, fewest of them where it reads several; `None`: the outer side's rows.
    pub loops: Option<f64>,
}

/// Estimates plan nodes, each once (keyed by node: a plan is not moved while it is
/// estimated and shown).
pub struct Estimator<'a> {
    cx: PlanContext<'a>,
    memo: RefCell<HashMap<*const Plan, Node>>,
    /// Tables by address, for the origins' statistics.
    tables: RefCell<HashMap<*const TableDesc, std::sync::Arc<TableDesc>>>,
    /// Relations' pages, as asked of the storage manager.
    sizes: RefCell<HashMap<common::ids::RelId, u64>>,
    /// Merge scan fractions by the two columns a merge clause equates.
    #[allow(clippy::type_complexity)]
    scan_fractions: RefCell<HashMap<(ColumnOf, ColumnOf), ((f64, f64), (f64, f64))>>,
    /// The last join's sides and the row they make ([`Estimator::joined_layout`]).
    last_join: RefCell<Option<(Node, Node, Node)>>,
}

/// A table's column, by the table's address.
type ColumnOf = (*const TableDesc, usize);

impl<'a> Estimator<'a> {
    pub fn new(cx: PlanContext<'a>) -> Estimator<'a> {
        Estimator {
            cx,
            memo: RefCell::default(),
            tables: RefCell::default(),
            sizes: RefCell::default(),
            scan_fractions: RefCell::default(),
            last_join: RefCell::default(),
        }
    }

    /// `o`'s columns followed by `i`'s, the row their join makes: made once for the ways
    /// of one join (the last pair asked is kept, with the layouts it was made of, so
    /// that their addresses cannot be another node's meanwhile).
    fn joined_layout(&self, o: &Node, i: &Node) -> Node {
        let mut last = self.last_join.borrow_mut();
        if let Some((outer, inner, n)) = &*last
            && Rc::ptr_eq(&outer.widths, &o.widths)
            && Rc::ptr_eq(&outer.origins, &o.origins)
            && Rc::ptr_eq(&inner.widths, &i.widths)
            && Rc::ptr_eq(&inner.origins, &i.origins)
        {
            return n.clone();
        }
        let n = o.joined(i.widths.iter().copied(), i.origins.iter().copied());
        *last = Some((o.clone(), i.clone(), n.clone()));
        n
    }

    /// Each output column of `plan` that is a table's column as a scan read it: the
    /// scan (by node), the table and the column's place in it.
    #[allow(clippy::type_complexity)]
    pub(crate) fn column_sources(
        &self,
        plan: &Plan,
    ) -> Vec<Option<(usize, std::sync::Arc<TableDesc>, usize)>> {
        let n = self.node(plan);
        let tables = self.tables.borrow();
        n.origins
            .iter()
            .map(|o| o.and_then(|(scan, t, c)| tables.get(&t).map(|t| (scan, t.clone(), c))))
            .collect()
    }

    /// The estimate of `plan`'s top node.
    pub fn estimate(&self, plan: &Plan) -> Estimate {
        self.node(plan).est
    }

    /// The Materialize PostgreSQL puts over a nested loop's inner side read once.
    pub fn materialize(&self, inner: &Plan) -> Estimate {
        let i = self.node(inner).est;
        material(&self.cx, &i)
    }

    /// The inner side of an index nested loop, as PostgreSQL's parameterized index scan:
    /// its cost per outer row and the rows it finds each time.
    pub fn inner_index_scan(&self, plan: &Plan) -> Estimate {
        match plan {
            Plan::IndexNestLoop { table, index, .. } => {
                self.inner_partition_scan(plan, table, index)
            }
            _ => self.estimate(plan),
        }
    }

    /// [`Estimator::inner_index_scan`] through table `leaf` and its index `index`: one
    /// partition of an index nested loop's partitioned inner table (EXPLAIN's Append
    /// lists them), or the inner table itself.
    pub fn inner_partition_scan(
        &self,
        plan: &Plan,
        leaf: &std::sync::Arc<TableDesc>,
        index: &catalog::IndexDesc,
    ) -> Estimate {
        match plan {
            Plan::IndexNestLoop {
                left,
                inner_filter,
                outer_key,
                more_keys,
                ..
            } => {
                let loops = self.loop_count(left, outer_key);
                let keys = 1 + more_keys.len();
                self.parameterized_index_scan(leaf, index, inner_filter.as_ref(), loops, keys)
            }
            _ => self.estimate(plan),
        }
    }

    /// The rows of the scans that `outer_key` (over `left`'s row) reads, the fewest of
    /// them (PostgreSQL's `get_loop_count`, which takes the outer relations' own rows);
    /// `left`'s rows where they cannot be traced to a scan.
    fn loop_count(&self, left: &Plan, outer_key: &Expr) -> f64 {
        let mut fewest: Option<f64> = None;
        let mut traced = true;
        outer_key.walk(&mut |e| {
            if let ExprKind::Column(c) = e.kind {
                match self.source_rows(left, c) {
                    Some(r) => fewest = Some(fewest.map_or(r, |f: f64| f.min(r))),
                    None => traced = false,
                }
            }
        });
        match fewest {
            Some(r) if traced => r.max(1.0),
            _ => self.node(left).est.rows,
        }
    }

    /// The rows of the scan that column `col` of `plan` comes from.
    fn source_rows(&self, plan: &Plan, col: usize) -> Option<f64> {
        match plan {
            Plan::SeqScan { .. } | Plan::IndexScan { .. } | Plan::BitmapHeapScan { .. } => {
                Some(self.node(plan).est.rows)
            }
            Plan::Project { input, exprs } => match exprs.get(col)?.kind {
                ExprKind::Column(c) => self.source_rows(input, c),
                _ => None,
            },
            Plan::Filter { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Limit { input, .. }
            | Plan::Distinct { input } => self.source_rows(input, col),
            Plan::NestedLoopJoin { left, right, .. }
            | Plan::HashJoin { left, right, .. }
            | Plan::MergeJoin { left, right, .. } => {
                let lw = left.width();
                if col < lw {
                    self.source_rows(left, col)
                } else {
                    self.source_rows(right, col - lw)
                }
            }
            Plan::IndexNestLoop { left, .. } => {
                let lw = left.width();
                if col < lw {
                    self.source_rows(left, col)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// A bitmap heap scan's bitmap node `q` of `table`, as EXPLAIN shows it: a Bitmap
    /// Index Scan from 0 to its index's cost, a BitmapOr at the cost of its parts (with
    /// their bitmap work, counted on `rows`, the heap scan's), each with the rows its
    /// conditions select and no width.
    pub fn bitmap_node(
        &self,
        table: &std::sync::Arc<TableDesc>,
        q: &crate::plan::BitmapQual,
        rows: f64,
    ) -> Estimate {
        let cx = &self.cx;
        let rel = RelInfo::new(table, cx.catalog.stats(table.oid), self.pages(table.rel));
        match q {
            crate::plan::BitmapQual::Index { index, conds, .. } => {
                let bound: Vec<&Expr> = conds.iter().collect();
                let quals = scan::index_quals(table, &bound);
                let full = scan::index_candidate(index, &quals).is_some_and(|c| c.full_key_equal);
                let a = cost::index_access(cx, &rel, index, &bound, full);
                Estimate {
                    startup: 0.0,
                    total: a.total,
                    rows: clamp_rows(a.selectivity * rel.tuples),
                    width: 0,
                }
            }
            crate::plan::BitmapQual::Or(_) | crate::plan::BitmapQual::And(_) => {
                let (cost, selectivity) = scan::bitmap_cost(cx, &rel, q, rows);
                Estimate {
                    startup: cost,
                    total: cost,
                    rows: clamp_rows(selectivity * rel.tuples),
                    width: 0,
                }
            }
        }
    }

    pub(crate) fn node(&self, plan: &Plan) -> Node {
        let key = plan as *const Plan;
        if let Some(n) = self.memo.borrow().get(&key) {
            return n.clone();
        }
        let n = self.compute(plan);
        self.memo.borrow_mut().insert(key, n.clone());
        n
    }

    /// A table's columns: widths (ANALYZE's average or the type's) and origins.
    fn table_columns(
        &self,
        table: &std::sync::Arc<TableDesc>,
        scan: usize,
    ) -> (Vec<i64>, Vec<Origin>) {
        self.tables
            .borrow_mut()
            .insert(std::sync::Arc::as_ptr(table), table.clone());
        let stats = self.cx.catalog.stats(table.oid);
        let widths = table
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if c.dropped {
                    return 0;
                }
                stats
                    .and_then(|s| s.column(i as u16 + 1, &c.ty))
                    .map(|s| i64::from(s.avg_width))
                    .filter(|w| *w > 0)
                    .unwrap_or_else(|| type_width(&c.ty))
            })
            .collect();
        let ptr = std::sync::Arc::as_ptr(table);
        let origins = (0..table.columns.len())
            .map(|i| Some((scan, ptr, i)))
            .collect();
        (widths, origins)
    }

    fn compute(&self, plan: &Plan) -> Node {
        let cx = &self.cx;
        let s = cx.settings;
        match plan {
            Plan::SeqScan { table, filter, .. } => {
                let (widths, origins) = self.table_columns(table, plan as *const Plan as usize);
                let rel = match table.partition_key {
                    // Its surviving partitions' rows and pages (planner rule 18).
                    Some(_) => self.partitioned_rel(table, filter.as_ref()),
                    None => RelInfo::new(table, cx.catalog.stats(table.oid), self.pages(table.rel)),
                };
                let quals = conjuncts_of(filter.as_ref());
                let rows = clamp_rows(rel.tuples * conjuncts_selectivity(&rel, &quals));
                let c = cost::seq_scan(cx, &rel, &quals, rows);
                let width = widths.iter().sum();
                Node {
                    est: Estimate::from_cost(c, width),
                    widths: widths.into(),
                    origins: origins.into(),
                }
            }
            Plan::IndexScan {
                table,
                index,
                filter,
                lower,
                upper,
                only,
                ..
            } => {
                let (widths, origins) = self.table_columns(table, plan as *const Plan as usize);
                let rel = RelInfo::new(table, cx.catalog.stats(table.oid), self.pages(table.rel));
                // A partial index's scan left out conjuncts its predicate implies: they
                // count for the rows.
                let full = crate::predicate::scan_condition(cx, table, index, filter.as_ref());
                let rows = clamp_rows(
                    rel.tuples * conjuncts_selectivity(&rel, &conjuncts_of(full.as_ref())),
                );
                let quals = conjuncts_of(filter.as_ref());
                let mut iq = scan::index_quals(table, &quals);
                if !index.exprs.is_empty() {
                    iq.extend(scan::expression_quals(cx, table, index, &quals));
                }
                // A scan of the whole index (for its order) checks every condition on the
                // rows it fetches.
                let whole = matches!(
                    (lower, upper),
                    (std::ops::Bound::Unbounded, std::ops::Bound::Unbounded)
                );
                let (used, full) = match scan::index_candidate(index, &iq) {
                    Some(c) if !whole => (c.used, c.full_key_equal),
                    _ => (Vec::new(), false),
                };
                let bound: Vec<&Expr> = used.iter().map(|&i| quals[i]).collect();
                let rest: Vec<&Expr> = quals
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !used.contains(i))
                    .map(|(_, e)| *e)
                    .collect();
                let c = if *only {
                    cost::index_only_scan(cx, &rel, index, &bound, full, &rest, rows)
                } else {
                    cost::index_scan(cx, &rel, index, &bound, full, &rest, rows)
                };
                let width = widths.iter().sum();
                Node {
                    est: Estimate::from_cost(c, width),
                    widths: widths.into(),
                    origins: origins.into(),
                }
            }
            Plan::BitmapHeapScan {
                table,
                bitmap,
                recheck,
                filter,
                ..
            } => {
                let (widths, origins) = self.table_columns(table, plan as *const Plan as usize);
                let rel = RelInfo::new(table, cx.catalog.stats(table.oid), self.pages(table.rel));
                let mut quals = conjuncts_of(Some(recheck));
                quals.extend(conjuncts_of(filter.as_ref()));
                let rows = clamp_rows(rel.tuples * conjuncts_selectivity(&rel, &quals));
                let b = scan::bitmap_cost(cx, &rel, bitmap, rows);
                let c = cost::bitmap_heap_scan(cx, &rel, b, &quals, rows);
                let width = widths.iter().sum();
                Node {
                    est: Estimate::from_cost(c, width),
                    widths: widths.into(),
                    origins: origins.into(),
                }
            }
            Plan::SequenceState { .. } => leaf(
                Estimate {
                    startup: 0.0,
                    total: s.seq_page_cost + s.cpu_tuple_cost,
                    rows: 1.0,
                    width: 16,
                },
                vec![8, 8, 1],
            ),
            Plan::SystemView { width, key, .. } => {
                // A function-like scan of unknown size (PostgreSQL's 1000 rows); one
                // relation's rows (a few) where a key asks for them.
                let rows = if key.is_some() { 10.0 } else { 1000.0 };
                leaf(
                    Estimate {
                        startup: 0.0,
                        total: s.cpu_tuple_cost * rows,
                        rows,
                        width: 32 * *width as i64,
                    },
                    vec![32; *width],
                )
            }
            Plan::Values { rows, width } => {
                let widths: Vec<i64> = match rows.first() {
                    Some(r) => r.iter().map(|e| type_width(&e.ty)).collect(),
                    None => vec![0; *width],
                };
                let n = rows.len() as f64;
                let est = if rows.len() == 1 {
                    // A single row is a Result.
                    Estimate {
                        startup: 0.0,
                        total: s.cpu_tuple_cost,
                        rows: 1.0,
                        width: widths.iter().sum(),
                    }
                } else {
                    Estimate {
                        startup: 0.0,
                        total: (s.cpu_operator_cost + s.cpu_tuple_cost) * n,
                        rows: clamp_rows(n),
                        width: widths.iter().sum(),
                    }
                };
                leaf(est, widths)
            }
            Plan::GenerateSeries { start, stop, step } => {
                let rows = series_rows(start, stop, step.as_ref());
                let call = s.cpu_operator_cost;
                let w = type_width(&start.ty);
                leaf(
                    Estimate {
                        startup: call,
                        total: call + s.cpu_tuple_cost * rows,
                        rows,
                        width: w,
                    },
                    vec![w],
                )
            }
            Plan::Unnest {
                array, ordinality, ..
            } => {
                let rows = match &array.kind {
                    ExprKind::Const(Value::Array(a)) => clamp_rows(a.items.len() as f64),
                    _ => 10.0,
                };
                let elem = array.ty.elem().map_or(32, |t| type_width(&t));
                let mut widths = vec![elem];
                if *ordinality {
                    widths.push(8);
                }
                let call = s.cpu_operator_cost;
                leaf(
                    Estimate {
                        startup: call,
                        total: call + s.cpu_tuple_cost * rows,
                        rows,
                        width: widths.iter().sum(),
                    },
                    widths,
                )
            }
            Plan::Filter { input, predicate } => {
                let n = self.node(input);
                let sel = self.selectivity_over(&n, predicate);
                let (qs, qp) = cost::qual_cost(cx, &[predicate]);
                let est = Estimate {
                    startup: n.est.startup + qs,
                    total: n.est.total + qs + qp * n.est.rows,
                    rows: clamp_rows(n.est.rows * sel),
                    width: n.est.width,
                };
                Node { est, ..n }
            }
            Plan::Project { input, exprs } => {
                let n = self.node(input);
                let refs: Vec<&Expr> = exprs.iter().collect();
                let (qs, qp) = cost::qual_cost(cx, &refs);
                let widths: Vec<i64> = exprs.iter().map(|e| expr_width(e, &n.widths)).collect();
                let origins = exprs.iter().map(|e| n.origin_of(e)).collect();
                let est = Estimate {
                    startup: n.est.startup + qs,
                    total: n.est.total + qs + qp * n.est.rows,
                    rows: n.est.rows,
                    width: widths.iter().sum(),
                };
                Node {
                    est,
                    widths: widths.into(),
                    origins,
                }
            }
            Plan::NestedLoopJoin {
                left,
                right,
                kind,
                on,
                lateral,
                materialize,
                ..
            } => {
                let (o, i) = (self.node(left), self.node(right));
                let unique = crate::join::inner_unique(*kind, right, left.width(), on.as_ref());
                let rescan = Rescan::of(right, *materialize, lateral.is_some());
                self.nested_loop_node(&o, &i, *kind, on.as_ref(), rescan, unique)
            }
            Plan::IndexNestLoop {
                left,
                table,
                index,
                key_cond,
                more_keys,
                inner_filter,
                on,
                kind,
                outer_key,
                ..
            } => {
                let o = self.node(left);
                let more_conds: Vec<Expr> = more_keys.iter().map(|(_, c)| c.clone()).collect();
                // The inner table's rows come from the lookups under this node.
                let inner = InnerIndex {
                    scan: plan as *const Plan as usize + 1,
                    table,
                    index,
                    key_cond,
                    more_conds: &more_conds,
                    filter: inner_filter.as_ref(),
                    loops: Some(self.loop_count(left, outer_key)),
                };
                self.index_nest_loop_node(&o, &inner, *kind, on.as_ref())
            }
            Plan::HashJoin {
                left,
                right,
                kind,
                hash_conds,
                on,
                ..
            } => {
                let (o, i) = (self.node(left), self.node(right));
                let cond = conjoin_refs(hash_conds.iter().chain(on));
                let unique = crate::join::inner_unique(*kind, right, left.width(), cond.as_ref());
                self.hash_join_node(&o, &i, *kind, hash_conds, on.as_ref(), unique)
            }
            Plan::MergeJoin {
                left,
                right,
                kind,
                merge_conds,
                on,
                ..
            } => {
                let (o, i) = (self.node(left), self.node(right));
                let cond = conjoin_refs(merge_conds.iter().chain(on));
                let unique = crate::join::inner_unique(*kind, right, left.width(), cond.as_ref());
                let sorted = matches!(**right, Plan::Sort { .. });
                let inputs = MergeInputs {
                    outer: o.est,
                    inner: i.est,
                    unique,
                    inner_sorted: sorted,
                };
                self.merge_join_node(&o, &i, *kind, merge_conds, on.as_ref(), inputs)
            }
            Plan::Aggregate {
                input,
                group_by: all_group_by,
                aggs,
                sorted,
                dependent,
                ..
            } => {
                let n = self.node(input);
                // The groups are those of the keys (the dependent columns are carried).
                let keys: Vec<Expr> = crate::plan::group_keys(all_group_by, dependent)
                    .into_iter()
                    .cloned()
                    .collect();
                let group_by = &keys;
                let mut trans = 0.0;
                let mut finals = 0.0;
                for a in aggs {
                    trans += s.cpu_operator_cost;
                    let args: Vec<&Expr> = a.inputs().collect();
                    trans += cost::qual_cost(cx, &args).1;
                    if a.func == AggFunc::Avg {
                        finals += s.cpu_operator_cost;
                    }
                }
                let mut widths: Vec<i64> = all_group_by
                    .iter()
                    .map(|e| expr_width(e, &n.widths))
                    .collect();
                widths.extend(aggs.iter().map(|a| agg_width(a.func, &a.ty)));
                let mut origins: Vec<Origin> =
                    all_group_by.iter().map(|e| n.origin_of(e)).collect();
                origins.extend(aggs.iter().map(|_| None));
                // The grouping expressions are computed below it, per input row.
                let group_refs: Vec<&Expr> = group_by.iter().collect();
                let group_cost = cost::qual_cost(cx, &group_refs).1 * n.est.rows;
                let est = if group_by.is_empty() {
                    let startup = n.est.total + trans * n.est.rows + finals;
                    Estimate {
                        startup,
                        total: startup + s.cpu_tuple_cost,
                        rows: 1.0,
                        width: widths.iter().sum(),
                    }
                } else if *sorted {
                    // PostgreSQL's cost_agg, AGG_SORTED: a group comparison per input
                    // row; the first group comes as soon as its rows are read.
                    let groups = self.num_groups(&n, group_by);
                    let total = n.est.total
                        + group_cost
                        + trans * n.est.rows
                        + s.cpu_operator_cost * group_by.len() as f64 * n.est.rows
                        + finals * groups
                        + s.cpu_tuple_cost * groups;
                    Estimate {
                        startup: n.est.startup,
                        total,
                        rows: groups,
                        width: widths.iter().sum(),
                    }
                } else {
                    let groups = self.num_groups(&n, group_by);
                    let mut startup = n.est.total
                        + group_cost
                        + trans * n.est.rows
                        + s.cpu_operator_cost * group_by.len() as f64 * n.est.rows;
                    let mut total = startup + finals * groups + s.cpu_tuple_cost * groups;
                    let (spill_startup, spill_total) = hash_agg_spill(cx, groups, aggs, &n.est);
                    startup += spill_startup;
                    total += spill_total;
                    if !s.enable_hashagg {
                        startup += cost::DISABLE_COST;
                        total += cost::DISABLE_COST;
                    }
                    Estimate {
                        startup,
                        total,
                        rows: groups,
                        width: widths.iter().sum(),
                    }
                };
                Node {
                    est,
                    widths: widths.into(),
                    origins: origins.into(),
                }
            }
            Plan::Sort { input, .. } => {
                let n = self.node(input);
                let est = sort(cx, &n.est, None);
                Node { est, ..n }
            }
            Plan::Distinct { input } => {
                let n = self.node(input);
                let cols: Vec<Expr> = (0..n.widths.len())
                    .map(|i| Expr::column(i, DataType::Unknown))
                    .collect();
                let groups = self.num_groups(&n, &cols);
                let startup = n.est.total + s.cpu_operator_cost * cols.len() as f64 * n.est.rows;
                let est = Estimate {
                    startup,
                    total: startup + s.cpu_tuple_cost * groups,
                    rows: groups,
                    width: n.est.width,
                };
                Node { est, ..n }
            }
            // PostgreSQL's cost_merge_append: every input started, a heap of their first
            // rows built (N log N comparisons), then log N comparisons a row.
            Plan::MergeAppend { inputs, .. } => {
                let nodes: Vec<Node> = inputs.iter().map(|p| self.node(p)).collect();
                let rows: f64 = nodes.iter().map(|n| n.est.rows).sum();
                let n = (nodes.len() as f64).max(2.0);
                let log_n = n.log2();
                let comparison = 2.0 * s.cpu_operator_cost;
                let startup: f64 =
                    nodes.iter().map(|n| n.est.startup).sum::<f64>() + comparison * n * log_n;
                let run: f64 = nodes
                    .iter()
                    .map(|n| n.est.total - n.est.startup)
                    .sum::<f64>()
                    + rows * comparison * log_n
                    + s.cpu_tuple_cost * 0.5 * rows;
                let first = nodes.first().cloned().unwrap_or(Node {
                    est: Estimate::default(),
                    widths: Rc::from([]),
                    origins: Rc::from([]),
                });
                Node {
                    est: Estimate {
                        startup,
                        total: startup + run,
                        rows,
                        width: first.est.width,
                    },
                    widths: first.widths,
                    origins: vec![None; first.origins.len()].into(),
                }
            }
            // As the Append of its partitions' sequential scans (each costed as a
            // SeqScan's), its columns' widths the first partition's.
            Plan::PartitionScans {
                leaves,
                filter,
                prune,
                ..
            } => {
                let Some(first) = leaves.first() else {
                    return Node {
                        est: Estimate::default(),
                        widths: Rc::from([]),
                        origins: Rc::from([]),
                    };
                };
                let (widths, _) = self.table_columns(first, plan as *const Plan as usize);
                let width: i64 = widths.iter().sum();
                let quals = conjuncts_of(filter.as_ref());
                let (mut rows, mut total, mut startup) = (0.0, 0.0, None);
                for leaf in leaves {
                    let rel =
                        RelInfo::new(leaf, cx.catalog.stats(leaf.oid), cx.sizes.pages(leaf.rel));
                    let r = clamp_rows(rel.tuples * conjuncts_selectivity(&rel, &quals));
                    let e = Estimate::from_cost(cost::seq_scan(cx, &rel, &quals, r), width);
                    startup.get_or_insert(e.startup);
                    rows += e.rows;
                    total += e.total;
                }
                if let Some(p) = prune {
                    let left = crate::partition::expected_survivors(cx.catalog, p, leaves.len());
                    let share = left / leaves.len() as f64;
                    rows *= share;
                    total *= share;
                }
                let n = widths.len();
                Node {
                    est: Estimate {
                        startup: startup.unwrap_or(0.0),
                        total: total + s.cpu_tuple_cost * 0.5 * rows,
                        rows,
                        width,
                    },
                    widths: widths.into(),
                    origins: vec![None; n].into(),
                }
            }
            Plan::Append { inputs, prune, .. } => {
                let nodes: Vec<Node> = inputs.iter().map(|p| self.node(p)).collect();
                let mut rows: f64 = nodes.iter().map(|n| n.est.rows).sum();
                let mut total: f64 = nodes.iter().map(|n| n.est.total).sum();
                // Pruned when it runs: as many inputs as its conditions leave, on
                // average (one, where they fix the whole key).
                if let Some(p) = prune
                    && !nodes.is_empty()
                {
                    let left = crate::partition::expected_survivors(cx.catalog, p, nodes.len());
                    let share = left / nodes.len() as f64;
                    rows *= share;
                    total *= share;
                }
                let first = nodes.first().cloned().unwrap_or(Node {
                    est: Estimate::default(),
                    widths: Rc::from([]),
                    origins: Rc::from([]),
                });
                let est = Estimate {
                    startup: first.est.startup,
                    total: total + s.cpu_tuple_cost * 0.5 * rows,
                    rows,
                    width: first.est.width,
                };
                Node {
                    est,
                    widths: first.widths,
                    origins: vec![None; first.origins.len()].into(),
                }
            }
            Plan::SetOp {
                intersect,
                all,
                left,
                right,
            } => {
                let l = self.node(left);
                let r = self.node(right);
                let in_rows = l.est.rows + r.est.rows;
                let ncols = l.widths.len() as f64;
                let total = l.est.total + r.est.total + s.cpu_tuple_cost * 0.5 * in_rows;
                let cols: Vec<Expr> = (0..l.widths.len())
                    .map(|i| Expr::column(i, DataType::Unknown))
                    .collect();
                let lg = self.num_groups(&l, &cols);
                let rows = if *intersect {
                    let rg = self.num_groups(&r, &cols);
                    if *all {
                        l.est.rows.min(r.est.rows)
                    } else {
                        lg.min(rg)
                    }
                } else if *all {
                    l.est.rows
                } else {
                    lg
                };
                let est = Estimate {
                    startup: l.est.startup,
                    total: total + s.cpu_operator_cost * in_rows * ncols,
                    rows,
                    width: l.est.width + 4,
                };
                Node { est, ..l }
            }
            Plan::Limit {
                input,
                limit,
                offset,
            } => {
                let n = self.node(input);
                // A Sort below is bounded by what the LIMIT keeps.
                let below = match &**input {
                    Plan::Sort { input: sorted, .. } => {
                        let count = limit_count(limit.as_ref());
                        let off = limit_count(offset.as_ref());
                        match (count, off) {
                            (c, o) if c > 0.0 && o >= 0.0 => {
                                sort(cx, &self.node(sorted).est, Some(c + o))
                            }
                            _ => n.est,
                        }
                    }
                    _ => n.est,
                };
                let est = limit_estimate(
                    &below,
                    limit_count(limit.as_ref()),
                    limit_count(offset.as_ref()),
                );
                Node { est, ..n }
            }
            Plan::Result { input, width, .. } => match input {
                // The gate costs nothing per row; the rows are the input's.
                Some(input) => self.node(input),
                None => leaf(
                    Estimate {
                        startup: 0.0,
                        total: 0.0,
                        rows: 0.0,
                        width: 4 * *width as i64,
                    },
                    vec![4; *width],
                ),
            },
            Plan::LockRows { input, .. } => {
                let n = self.node(input);
                let est = Estimate {
                    total: n.est.total + s.cpu_tuple_cost * n.est.rows,
                    ..n.est
                };
                Node { est, ..n }
            }
        }
    }

    /// A sort bounded to `limit` rows, as its Limit parent sees it (`Limit (Sort)`).
    pub fn bounded_sort(&self, sort_plan: &Plan, limit: &Plan) -> Option<Estimate> {
        let (Plan::Sort { input, .. }, Plan::Limit { limit, offset, .. }) = (sort_plan, limit)
        else {
            return None;
        };
        let c = limit_count(limit.as_ref());
        let o = limit_count(offset.as_ref());
        (c > 0.0 && o >= 0.0).then(|| sort(&self.cx, &self.node(input).est, Some(c + o)))
    }

    /// The scan under an UPDATE or DELETE, as PostgreSQL's: it computes the new values
    /// of the `set` columns (and returns them with the row's address, 6 bytes).
    pub fn modify_scan(&self, scan: &Plan, set: &[&Expr]) -> Estimate {
        let n = self.node(scan);
        let (qs, qp) = cost::qual_cost(&self.cx, set);
        let width: i64 = set.iter().map(|e| expr_width(e, &n.widths)).sum::<i64>() + 6;
        Estimate {
            startup: n.est.startup + qs,
            total: n.est.total + qs + qp * n.est.rows,
            rows: n.est.rows,
            width,
        }
    }

    /// The selectivity of `e` over `n`'s rows (for the join search).
    pub(crate) fn selectivity(&self, n: &Node, e: &Expr) -> f64 {
        self.selectivity_over(n, e)
    }

    /// The selectivity of `e` over `n`'s rows: a table's statistics where `e` reads one
    /// table's columns, else PostgreSQL's defaults.
    fn selectivity_over(&self, n: &Node, e: &Expr) -> f64 {
        // One table behind every column `e` reads: estimate over that table, its columns
        // renumbered to the table's.
        let mut table: Option<(usize, *const TableDesc)> = None;
        let mut single = true;
        e.walk(&mut |x| {
            if let ExprKind::Column(i) = x.kind {
                match n.origins.get(i).copied().flatten() {
                    Some((scan, t, _)) if table.is_none_or(|u| u == (scan, t)) => {
                        table = Some((scan, t))
                    }
                    _ => single = false,
                }
            }
        });
        if let (true, Some((_, t))) = (single, table) {
            let tables = self.tables.borrow();
            if let Some(desc) = tables.get(&t) {
                let mapped = map_columns(e, &|i| n.origins[i].map(|(_, _, c)| c));
                let rel = self.rel_owned(desc);
                return clause_selectivity(&rel.info(), &mapped);
            }
        }
        // A join condition `a = b` between two tables' columns: PostgreSQL's eqjoinsel.
        if let ExprKind::Binary(BinaryOp::Eq, l, r) = &e.kind
            && let (Some((t1, c1)), Some((t2, c2))) = (self.origin(n, l), self.origin(n, r))
        {
            let tables = self.tables.borrow();
            if let (Some(d1), Some(d2)) = (tables.get(&t1), tables.get(&t2)) {
                let (o1, o2) = (self.rel_owned(d1), self.rel_owned(d2));
                return crate::selectivity::join_eq_selectivity(&o1.info(), c1, &o2.info(), c2);
            }
        }
        let empty = TableDesc::default();
        let mut rel = RelInfo::new(&empty, None, 0);
        rel.tuples = n.est.rows;
        clause_selectivity(&rel, e)
    }

    /// A nested loop of `o` and `i` on `on`, reading `i` again for each outer row as
    /// `rescan` says (PostgreSQL's `initial_cost_nestloop` and `final_cost_nestloop`,
    /// with `cost_rescan`).
    pub(crate) fn nested_loop_node(
        &self,
        o: &Node,
        i: &Node,
        kind: JoinKind,
        on: Option<&Expr>,
        rescan: Rescan,
        inner_unique: bool,
    ) -> Node {
        let cx = &self.cx;
        let s = cx.settings;
        let joined = self.joined_layout(o, i);
        let sel = on.map_or(1.0, |e| self.selectivity_over(&joined, e));
        // The inner side as the join reads it the first time, and each time after.
        let (inner, rescan_start, rescan_total) = match rescan {
            Rescan::Rerun => (i.est, i.est.startup, i.est.total),
            Rescan::Materialize => {
                let m = material(cx, &i.est);
                (m, 0.0, kept_rescan(cx, &m))
            }
            Rescan::Sorted => (i.est, 0.0, kept_rescan(cx, &i.est)),
            Rescan::Function => (i.est, 0.0, i.est.total - i.est.startup),
        };
        let on_refs: Vec<&Expr> = on.into_iter().collect();
        let (qs, qp) = cost::qual_cost(cx, &on_refs);
        let mut startup = o.est.startup + inner.startup + qs;
        if !s.enable_nestloop {
            startup += cost::DISABLE_COST;
        }
        let mut run = o.est.total - o.est.startup;
        if o.est.rows > 1.0 {
            run += (o.est.rows - 1.0) * rescan_start;
        }
        let inner_run = inner.total - inner.startup;
        let rescan_run = rescan_total - rescan_start;
        let inner_rows = if inner.rows > 0.0 { inner.rows } else { 1.0 };
        if kind.left_only() || inner_unique {
            // A matched outer row stops at its first match (also in a join whose inner
            // rows are unique on its condition, `Inner Unique`).
            let conds: Vec<&Expr> = on.into_iter().collect();
            let (frac, matches) = self.semi_factors(o, &joined, &conds, inner_rows, sel);
            let (scans, ntuples) = first_match_scans(
                o.est.rows,
                frac,
                matches,
                inner_rows,
                (inner_run, rescan_run),
                false,
            );
            run += scans + (s.cpu_tuple_cost + qp) * ntuples;
            let rows = join_rows(o.est.rows, inner.rows, sel, kind);
            let matched = (o.est.rows * frac).round();
            return join_node(o, joined, kind, (startup, run), rows, matched);
        }
        run += inner_run;
        if o.est.rows > 1.0 {
            run += (o.est.rows - 1.0) * rescan_run;
        }
        let ntuples = o.est.rows * inner_rows;
        run += (s.cpu_tuple_cost + qp) * ntuples;
        let rows = join_rows(o.est.rows, inner.rows, sel, kind);
        join_node(o, joined, kind, (startup, run), rows, rows)
    }

    /// An index nested loop of `o` and the lookups of `inner` on `on`.
    pub(crate) fn index_nest_loop_node(
        &self,
        o: &Node,
        inner: &InnerIndex<'_>,
        kind: JoinKind,
        on: Option<&Expr>,
    ) -> Node {
        let cx = &self.cx;
        let s = cx.settings;
        let InnerIndex {
            scan,
            table,
            index,
            key_cond,
            more_conds,
            filter: inner_filter,
            loops,
        } = *inner;
        let (iw, iorig) = self.table_columns(table, scan);
        let loops = loops.unwrap_or(o.est.rows);
        let inner =
            self.parameterized_index_scan(table, index, inner_filter, loops, 1 + more_conds.len());
        let joined = o.joined(iw, iorig);
        let sel = on.map_or(1.0, |e| self.selectivity_over(&joined, e));
        let on_refs: Vec<&Expr> = on.into_iter().collect();
        let (qs, qp) = cost::qual_cost(cx, &on_refs);
        let mut startup = o.est.startup + inner.startup + qs;
        if !s.enable_nestloop {
            startup += cost::DISABLE_COST;
        }
        let mut run = o.est.total - o.est.startup + (o.est.rows - 1.0).max(0.0) * inner.startup;
        let inner_run = inner.total - inner.startup;
        let lookup_rows = if inner.rows > 0.0 { inner.rows } else { 1.0 };
        // The join's rows as PostgreSQL estimates a join (not from the lookup's
        // per-row estimate): the inner table's rows that pass its own filter,
        // times the join condition's selectivity over the pairs.
        let rel = RelInfo::new(table, cx.catalog.stats(table.oid), self.pages(table.rel));
        // (A partial index's lookup left out the conditions its predicate implies.)
        let inner_cond = crate::predicate::scan_condition(cx, table, index, inner_filter);
        let inner_rows = clamp_rows(
            rel.tuples * conjuncts_selectivity(&rel, &conjuncts_of(inner_cond.as_ref())),
        );
        let key_sel = std::iter::once(key_cond)
            .chain(more_conds)
            .map(|c| self.selectivity_over(&joined, c))
            .product::<f64>();
        if kind.left_only() {
            // Each outer row's lookup stops at its first match; where the lookup's key
            // is the whole join condition, an unmatched row's lookup finds nothing.
            let conds: Vec<&Expr> = std::iter::once(key_cond)
                .chain(more_conds)
                .chain(on)
                .collect();
            let (frac, matches) = self.semi_factors(o, &joined, &conds, inner_rows, key_sel * sel);
            let (scans, ntuples) = first_match_scans(
                o.est.rows,
                frac,
                matches,
                lookup_rows,
                (inner_run, inner_run),
                on.is_none(),
            );
            run += scans + (s.cpu_tuple_cost + qp) * ntuples;
            let matched = o.est.rows * frac;
            return join_node(o, joined, kind, (startup, run), 0.0, matched);
        }
        run += o.est.rows * inner_run + (s.cpu_tuple_cost + qp) * o.est.rows * inner.rows;
        let rows = join_rows(o.est.rows, inner_rows, key_sel * sel, kind);
        join_node(o, joined, kind, (startup, run), rows, rows)
    }

    /// A hash join of `o` and `i` (hashed) on `hash_conds` (`o`'s side = `i`'s, over the
    /// joined row) and the rest of the condition `on` (PostgreSQL's initial_cost_hashjoin
    /// and final_cost_hashjoin).
    pub(crate) fn hash_join_node(
        &self,
        o: &Node,
        i: &Node,
        kind: JoinKind,
        hash_conds: &[Expr],
        on: Option<&Expr>,
        inner_unique: bool,
    ) -> Node {
        let cx = &self.cx;
        let s = cx.settings;
        // PostgreSQL's initial_cost_hashjoin and final_cost_hashjoin.
        let joined = self.joined_layout(o, i);
        let nhash = hash_conds.len() as f64;
        let mut startup = o.est.startup
            + i.est.total
            + (s.cpu_operator_cost * nhash + s.cpu_tuple_cost) * i.est.rows;
        let mut run = o.est.total - o.est.startup + s.cpu_operator_cost * nhash * o.est.rows;
        let (nbuckets, nbatches) = cost::hash_table_size(cx, i.est.rows, i.est.width);
        if nbatches > 1.0 {
            let outer_pages = cost::page_size(o.est.rows, o.est.width);
            let inner_pages = cost::page_size(i.est.rows, i.est.width);
            startup += s.seq_page_cost * inner_pages;
            run += s.seq_page_cost * (inner_pages + 2.0 * outer_pages);
        }
        if !s.enable_hashjoin {
            startup += cost::DISABLE_COST;
        }
        // The inner side's bucket size and most common value's frequency: the
        // smallest over the hash clauses.
        let (mut bucket_size, mut mcv_freq) = (1.0f64, 1.0f64);
        for c in hash_conds {
            if let ExprKind::Binary(_, _, inner_key) = &c.kind {
                let (m, b) = self.hash_bucket_stats(&joined, inner_key, nbuckets * nbatches);
                bucket_size = bucket_size.min(b);
                mcv_freq = mcv_freq.min(m);
            }
        }
        // A bucket of the most common value outgrowing the hash memory.
        if cost::relation_byte_size(clamp_rows(i.est.rows * mcv_freq), i.est.width)
            > cost::hash_memory_limit(cx)
        {
            startup += cost::DISABLE_COST;
        }
        let hash_refs: Vec<&Expr> = hash_conds.iter().collect();
        let (hqs, hqp) = cost::qual_cost(cx, &hash_refs);
        let on_refs: Vec<&Expr> = on.into_iter().collect();
        let (qs, qp) = cost::qual_cost(cx, &on_refs);
        startup += hqs;
        let hash_sel: f64 = hash_conds
            .iter()
            .map(|c| self.selectivity_over(&joined, c))
            .product();
        let on_sel = on.map_or(1.0, |e| self.selectivity_over(&joined, e));
        if kind.left_only() || inner_unique {
            // A matched outer row stops at its first match: PostgreSQL's semi-join
            // costing, over the fraction of outer rows that match (also of a join
            // whose inner rows are unique on its condition, `Inner Unique`).
            let conds: Vec<&Expr> = hash_conds.iter().chain(on).collect();
            let (frac, matches) =
                self.semi_factors(o, &joined, &conds, i.est.rows, hash_sel * on_sel);
            let matched = (o.est.rows * frac).round();
            let scan_frac = 2.0 / (matches + 1.0);
            run += hqp * matched * clamp_rows(i.est.rows * bucket_size * scan_frac) * 0.5;
            run += hqp
                * (o.est.rows - matched)
                * clamp_rows(i.est.rows / (nbuckets * nbatches))
                * 0.05;
            let tuples = if kind == JoinKind::Anti {
                o.est.rows - matched
            } else {
                matched
            };
            startup += qs;
            run += (s.cpu_tuple_cost + qp) * tuples;
            let rows = join_rows(o.est.rows, i.est.rows, hash_sel * on_sel, kind);
            return join_node(o, joined, kind, (startup, run), rows, matched);
        }
        run += hqp * o.est.rows * clamp_rows(i.est.rows * bucket_size) * 0.5;
        let hash_tuples = clamp_rows(hash_sel * o.est.rows * i.est.rows);
        startup += qs;
        run += (s.cpu_tuple_cost + qp) * hash_tuples;
        let rows = join_rows(o.est.rows, i.est.rows, hash_sel * on_sel, kind);
        join_node(o, joined, kind, (startup, run), rows, rows)
    }

    /// For a merge clause `l = r` over `joined` (each side a table's column), the
    /// fractions of the left and of the right side's rows that a merge join reads before
    /// its first match and up to its last (`(start, end)` each), from the columns' value
    /// ranges (PostgreSQL's `mergejoinscansel`); all of each side where unknown.
    fn merge_scan_fractions(&self, joined: &Node, c: &Expr) -> ((f64, f64), (f64, f64)) {
        let whole = ((0.0, 1.0), (0.0, 1.0));
        let ExprKind::Binary(BinaryOp::Eq, l, r) = &c.kind else {
            return whole;
        };
        let (Some(left), Some(right)) = (self.origin(joined, l), self.origin(joined, r)) else {
            return whole;
        };
        // Kept once per pair of columns, whichever side each is on.
        let (key, swapped) = if left <= right {
            ((left, right), false)
        } else {
            ((right, left), true)
        };
        let cached = self.scan_fractions.borrow().get(&key).copied();
        let (a, b) = cached.unwrap_or_else(|| {
            let f = self.column_scan_fractions(key.0, key.1);
            self.scan_fractions.borrow_mut().insert(key, f);
            f
        });
        if swapped { (b, a) } else { (a, b) }
    }

    /// [`Self::merge_scan_fractions`] of a merge clause equating two tables' columns.
    fn column_scan_fractions(
        &self,
        (t1, c1): ColumnOf,
        (t2, c2): ColumnOf,
    ) -> ((f64, f64), (f64, f64)) {
        let whole = ((0.0, 1.0), (0.0, 1.0));
        let tables = self.tables.borrow();
        let (Some(d1), Some(d2)) = (tables.get(&t1), tables.get(&t2)) else {
            return whole;
        };
        let (o1, o2) = (self.rel_owned(d1), self.rel_owned(d2));
        let (r1, r2) = (o1.info(), o2.info());
        let (Some((min1, max1)), Some((min2, max2))) = (
            crate::selectivity::variable_range(&r1, c1),
            crate::selectivity::variable_range(&r2, c2),
        ) else {
            return whole;
        };
        use crate::selectivity::{DEFAULT_INEQ_SEL, inequality_selectivity as ineq};
        let believed = |sel: f64, default: f64| {
            if sel == DEFAULT_INEQ_SEL {
                default
            } else {
                sel
            }
        };
        let mut left_end = believed(ineq(&r1, c1, BinaryOp::LtEq, &max2), 1.0);
        let mut right_end = believed(ineq(&r2, c2, BinaryOp::LtEq, &max1), 1.0);
        // Only one side can end early: the smaller estimate is believed.
        if left_end > right_end {
            left_end = 1.0;
        } else if left_end < right_end {
            right_end = 1.0;
        } else {
            (left_end, right_end) = (1.0, 1.0);
        }
        let mut left_start = believed(ineq(&r1, c1, BinaryOp::Lt, &min2), 0.0);
        let mut right_start = believed(ineq(&r2, c2, BinaryOp::Lt, &min1), 0.0);
        // Only one side can start late: the larger estimate is believed.
        if left_start < right_start {
            left_start = 0.0;
        } else if left_start > right_start {
            right_start = 0.0;
        } else {
            (left_start, right_start) = (0.0, 0.0);
        }
        let clamp = |x: f64| x.clamp(0.0, 1.0);
        let (mut ls, mut le) = (clamp(left_start), clamp(left_end));
        let (mut rs, mut re) = (clamp(right_start), clamp(right_end));
        if ls >= le {
            (ls, le) = (0.0, 1.0);
        }
        if rs >= re {
            (rs, re) = (0.0, 1.0);
        }
        ((ls, le), (rs, re))
    }

    /// The estimate of `n`'s rows sorted (PostgreSQL's cost_sort over it).
    pub(crate) fn sorted(&self, n: &Node) -> Estimate {
        sort(&self.cx, &n.est, None)
    }

    /// A merge join of `o` and `i`, each already in key order (their nodes include any
    /// sort), on `merge_conds` (`o`'s side = `i`'s, over the joined row) and the rest of
    /// the condition `on` (PostgreSQL's initial_cost_mergejoin and final_cost_mergejoin).
    /// An inner side that is not a Sort (which keeps its rows for the re-reads of a key's
    /// group) pays for those re-reads as PostgreSQL's Materialize would where that is
    /// cheaper (the operator keeps the current group either way).
    pub(crate) fn merge_join_node(
        &self,
        o: &Node,
        i: &Node,
        kind: JoinKind,
        merge_conds: &[Expr],
        on: Option<&Expr>,
        MergeInputs {
            outer: oest,
            inner: iest,
            unique: inner_unique,
            inner_sorted,
        }: MergeInputs,
    ) -> Node {
        let cx = &self.cx;
        let s = cx.settings;
        let joined = self.joined_layout(o, i);
        // The fractions of each side read before the first match and up to the last
        // (PostgreSQL's mergejoinscansel on the first merge clause): a side whose rows
        // go past the other's largest key stops early.
        let ((mut os, mut oe), (mut is, mut ie)) = match merge_conds.first() {
            Some(c) if kind != JoinKind::Full => self.merge_scan_fractions(&joined, c),
            _ => ((0.0, 1.0), (0.0, 1.0)),
        };
        match kind {
            JoinKind::Left | JoinKind::Anti => (os, oe) = (0.0, 1.0),
            JoinKind::Right => (is, ie) = (0.0, 1.0),
            _ => {}
        }
        let (o_rows, i_rows) = (oest.rows.max(1.0), iest.rows.max(1.0));
        let mut outer_skip = (o_rows * os).round();
        let mut inner_skip = (i_rows * is).round();
        let outer_rows = clamp_rows(o_rows * oe);
        let inner_rows = clamp_rows(i_rows * ie);
        if outer_skip >= outer_rows {
            outer_skip = (outer_rows - 1.0).max(0.0);
        }
        if inner_skip >= inner_rows {
            inner_skip = (inner_rows - 1.0).max(0.0);
        }
        (os, oe) = (outer_skip / o_rows, outer_rows / o_rows);
        (is, ie) = (inner_skip / i_rows, inner_rows / i_rows);
        let (o_run, i_run) = (oest.total - oest.startup, iest.total - iest.startup);
        let mut startup = oest.startup + o_run * os + iest.startup + i_run * is;
        let mut run = o_run * (oe - os);
        let inner_run = i_run * (ie - is);
        let merge_sel: f64 = merge_conds
            .iter()
            .map(|c| self.selectivity_over(&joined, c))
            .product();
        let on_sel = on.map_or(1.0, |e| self.selectivity_over(&joined, e));
        let merge_tuples = clamp_rows(merge_sel * oest.rows * iest.rows);
        // Rows of the inner side read again for each further outer row of a key, unless
        // each outer row stops at its first match (PostgreSQL's skip_mark_restore).
        let skip_restore = (kind.left_only() || inner_unique) && on.is_none();
        let rescanned = if skip_restore {
            0.0
        } else {
            (merge_tuples - iest.rows).max(0.0)
        };
        let ratio = 1.0 + rescanned / inner_rows;
        let bare = inner_run * ratio;
        let mat = inner_run + s.cpu_operator_cost * inner_rows * ratio;
        // PostgreSQL's choice of a Materialize over the inner side: where it is cheaper,
        // or where a sorted inner side outgrows `work_mem`.
        let materialize = !skip_restore
            && s.enable_material
            && (mat < bare
                || (inner_sorted
                    && cost::relation_byte_size(iest.rows, iest.width) > s.work_mem * 1024.0));
        run += if materialize { mat } else { bare };
        let merge_refs: Vec<&Expr> = merge_conds.iter().collect();
        let (ms, mp) = cost::qual_cost(cx, &merge_refs);
        let on_refs: Vec<&Expr> = on.into_iter().collect();
        let (qs, qp) = cost::qual_cost(cx, &on_refs);
        startup += ms + qs + mp * (outer_skip + inner_skip * ratio);
        run += mp * ((outer_rows - outer_skip) + (inner_rows - inner_skip) * ratio);
        run += (s.cpu_tuple_cost + qp) * merge_tuples;
        if !s.enable_mergejoin {
            startup += cost::DISABLE_COST;
        }
        if kind.left_only() {
            let conds: Vec<&Expr> = merge_conds.iter().chain(on).collect();
            let (frac, _) = self.semi_factors(o, &joined, &conds, iest.rows, merge_sel * on_sel);
            let matched = (oest.rows * frac).round();
            return join_node(o, joined, kind, (startup, run), 0.0, matched);
        }
        let rows = join_rows(oest.rows, iest.rows, merge_sel * on_sel, kind);
        join_node(o, joined, kind, (startup, run), rows, rows)
    }

    /// PostgreSQL's semi-join factors for `conds` between `o`'s rows and `inner_rows`
    /// inner rows (over the joined row `joined`; `pair_sel`: their selectivity over
    /// the pairs): the fraction of outer rows some inner row matches (`eqjoinsel_semi`
    /// for an equality of two tables' columns), and how many match each of those.
    fn semi_factors(
        &self,
        o: &Node,
        joined: &Node,
        conds: &[&Expr],
        inner_rows: f64,
        pair_sel: f64,
    ) -> (f64, f64) {
        let lw = o.origins.len();
        let mut frac = 1.0;
        for c in conds {
            let semi = match &c.kind {
                ExprKind::Binary(BinaryOp::Eq, l, r) => {
                    let (outer, inner) = match (&l.kind, &r.kind) {
                        (ExprKind::Column(a), ExprKind::Column(b)) if *a < lw && *b >= lw => (l, r),
                        (ExprKind::Column(a), ExprKind::Column(b)) if *b < lw && *a >= lw => (r, l),
                        _ => (l, r),
                    };
                    match (self.origin(joined, outer), self.origin(joined, inner)) {
                        (Some((t1, c1)), Some((t2, c2))) => {
                            let tables = self.tables.borrow();
                            match (tables.get(&t1), tables.get(&t2)) {
                                (Some(d1), Some(d2)) => {
                                    let (r1, r2) = (self.rel_owned(d1), self.rel_owned(d2));
                                    Some(join_eq_semi_selectivity(
                                        &r1.info(),
                                        c1,
                                        &r2.info(),
                                        c2,
                                        inner_rows,
                                    ))
                                }
                                _ => None,
                            }
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            frac *= semi.unwrap_or_else(|| self.selectivity_over(joined, c));
        }
        let frac = frac.clamp(0.0, 1.0);
        let matches = if frac > 0.0 {
            (pair_sel * inner_rows / frac).max(1.0)
        } else {
            1.0
        };
        (frac, matches)
    }

    /// A hash table's inner key `key` (over `n`'s rows) in `nbuckets` buckets
    /// (`estimate_hash_bucket_stats`): the frequency of its most common value, and the
    /// fraction of the rows a bucket holds, 1/buckets or 1/distinct values (those of its
    /// scan's rows) scaled up by the skew; 0.1 without statistics.
    fn hash_bucket_stats(&self, n: &Node, key: &Expr, nbuckets: f64) -> (f64, f64) {
        let Some((scan, t, col)) = n.origin_of(key) else {
            return (0.0, 0.1);
        };
        let tables = self.tables.borrow();
        let Some(desc) = tables.get(&t) else {
            return (0.0, 0.1);
        };
        let rel = self.rel_owned(desc);
        let info = rel.info();
        let stats = info.column(col);
        let mcv_freq = stats
            .and_then(|s| s.mcv.first())
            .map_or(0.0, |(_, f)| f64::from(*f));
        let (mut distinct, default) = distinct_values_or_default(&info, col);
        if default {
            return (mcv_freq, mcv_freq.max(0.1));
        }
        let null_frac = stats.map_or(0.0, |s| f64::from(s.null_frac));
        let avg_freq = (1.0 - null_frac) / distinct;
        // The scan's rows, after its own conditions.
        if info.tuples > 0.0 {
            let rows = self
                .memo
                .borrow()
                .get(&(scan as *const Plan))
                .map_or(info.tuples, |s| s.est.rows);
            distinct = clamp_rows(distinct * rows / info.tuples);
        }
        let mut fraction = if distinct > nbuckets {
            1.0 / nbuckets
        } else {
            1.0 / distinct
        };
        if avg_freq > 0.0 && mcv_freq > avg_freq {
            fraction *= mcv_freq / avg_freq;
        }
        (mcv_freq, fraction.clamp(1.0e-6, 1.0))
    }

    /// The table column `e` is, if it is a bare column of `n` that comes from a table.
    fn origin(&self, n: &Node, e: &Expr) -> Option<(*const TableDesc, usize)> {
        n.origin_of(e).map(|(_, t, c)| (t, c))
    }

    /// The distinct values of a column of `n` that comes from a table, with its NULL
    /// fraction taken out.
    fn column_distinct(&self, n: &Node, e: &Expr) -> Option<f64> {
        let (_, t, c) = n.origin_of(e)?;
        let tables = self.tables.borrow();
        let desc = tables.get(&t)?;
        let rel = self.rel_owned(desc);
        Some(distinct_values(&rel.info(), c))
    }

    fn rel_owned(&self, desc: &std::sync::Arc<TableDesc>) -> OwnedRel<'a> {
        OwnedRel {
            table: desc.clone(),
            stats: self.cx.catalog.stats(desc.oid),
            pages: self.pages(desc.rel),
        }
    }

    /// A relation's current pages, asked of the storage manager once per estimator.
    /// A partitioned table as the sum of the partitions `filter` leaves it.
    fn partitioned_rel<'t>(&'t self, table: &'t TableDesc, filter: Option<&Expr>) -> RelInfo<'t> {
        let cx = &self.cx;
        let mut rel = RelInfo::new(table, cx.catalog.stats(table.oid), 0);
        (rel.tuples, rel.pages) = (0.0, 0.0);
        // The storage manager's cached sizes, not this estimate's map: nothing is kept
        // per partition.
        let (mut tuples, mut pages) = (0.0, 0.0);
        crate::partition::for_each_leaf(cx.catalog, table, filter, &mut |leaf| {
            let r = RelInfo::new(leaf, cx.catalog.stats(leaf.oid), cx.sizes.pages(leaf.rel));
            tuples += r.tuples;
            pages += r.pages;
        });
        (rel.tuples, rel.pages) = (tuples, pages);
        rel
    }

    fn pages(&self, rel: common::ids::RelId) -> u64 {
        if let Some(&p) = self.sizes.borrow().get(&rel) {
            return p;
        }
        let p = self.cx.sizes.pages(rel);
        self.sizes.borrow_mut().insert(rel, p);
        p
    }

    /// The groups GROUP BY `exprs` makes of `n`'s rows (`estimate_num_groups`): the
    /// product of the columns' distinct counts (200 for an expression), at most the rows.
    fn num_groups(&self, n: &Node, exprs: &[Expr]) -> f64 {
        let unknown = if n.est.rows < 200.0 {
            clamp_rows(n.est.rows)
        } else {
            200.0
        };
        let mut groups = 1.0;
        let mut seen: Vec<usize> = Vec::new();
        // Each table's columns' distinct counts, by scan (PostgreSQL's varinfos by
        // relation).
        let mut by_scan: Vec<(usize, *const TableDesc, Vec<f64>)> = Vec::new();
        for e in exprs {
            if e.ty == DataType::Bool {
                groups *= 2.0;
                continue;
            }
            // An expression's groups are its columns' (each counted once).
            let mut cols = Vec::new();
            e.walk(&mut |x| {
                if let ExprKind::Column(i) = x.kind
                    && !cols.contains(&i)
                {
                    cols.push(i);
                }
            });
            for i in cols {
                if seen.contains(&i) {
                    continue;
                }
                seen.push(i);
                let col = Expr::column(i, DataType::Unknown);
                match (n.origin_of(&col), self.column_distinct(n, &col)) {
                    (Some((scan, t, _)), Some(d)) => {
                        match by_scan.iter_mut().find(|(s, u, _)| *s == scan && *u == t) {
                            Some((_, _, ds)) => ds.push(d),
                            None => by_scan.push((scan, t, vec![d])),
                        }
                    }
                    _ => groups *= unknown,
                }
            }
        }
        let single = by_scan.len() == 1;
        for (_, t, ds) in by_scan {
            let mut distinct: f64 = ds.iter().product();
            let tables = self.tables.borrow();
            let Some(desc) = tables.get(&t) else {
                groups *= distinct;
                continue;
            };
            let tuples = self.rel_owned(desc).info().tuples;
            // PostgreSQL's clamp: the table's rows, a tenth of them for several columns
            // (they are probably correlated), never below the largest column's count.
            let most = ds.iter().copied().fold(0.0, f64::max);
            let mut clamp = tuples;
            if ds.len() > 1 {
                clamp = (clamp * 0.1).max(most).min(tuples);
            }
            if tuples > 0.0 && distinct > clamp {
                distinct = clamp;
            }
            // Rows a restriction selected from the table hold fewer of its values
            // (where this node is that one table's rows).
            if single && distinct > 0.0 && tuples > 0.0 && n.est.rows < tuples {
                distinct *= 1.0 - ((tuples - n.est.rows) / tuples).powf(tuples / distinct);
            }
            groups *= clamp_rows(distinct);
        }
        clamp_rows(groups.ceil().min(n.est.rows).max(1.0))
    }

    fn parameterized_index_scan(
        &self,
        table: &std::sync::Arc<TableDesc>,
        index: &catalog::IndexDesc,
        filter: Option<&Expr>,
        loops: f64,
        keys: usize,
    ) -> Estimate {
        if table.partition_key.is_some() {
            return self.partitioned_index_scan(table, index, filter, loops, keys);
        }
        let cx = &self.cx;
        let s = cx.settings;
        let (widths, _) = self.table_columns(table, 0);
        let rel = RelInfo::new(table, cx.catalog.stats(table.oid), self.pages(table.rel));
        // Each further key column the lookup fixes: `col = outer value`.
        let further: f64 = index
            .columns
            .iter()
            .skip(1)
            .take(keys.saturating_sub(1))
            .filter_map(|&c| table.columns.get(c).map(|col| (c, col.ty)))
            .map(|(c, ty)| {
                let probe = Expr::new(
                    ExprKind::Binary(
                        BinaryOp::Eq,
                        Box::new(Expr::column(c, ty)),
                        Box::new(Expr::new(ExprKind::Param(0), ty)),
                    ),
                    DataType::Bool,
                );
                clause_selectivity(&rel, &probe)
            })
            .product();
        let key = index.columns.first().copied().unwrap_or(0);
        // The leading key: a column, or an expression index's expression.
        let key_expr = match catalog::IndexDesc::expression(key) {
            Some(k) => crate::scan::bound_index_exprs(cx, table, index)
                .into_iter()
                .nth(k)
                .flatten(),
            None => table.columns.get(key).map(|c| Expr::column(key, c.ty)),
        };
        // `key = outer value`: an unknown constant.
        let key_sel = key_expr.map_or(crate::selectivity::DEFAULT_EQ_SEL, |k| {
            let ty = k.ty;
            let probe = Expr::new(
                ExprKind::Binary(
                    BinaryOp::Eq,
                    Box::new(k),
                    Box::new(Expr::new(ExprKind::Param(0), ty)),
                ),
                DataType::Bool,
            );
            clause_selectivity(&rel, &probe)
        }) * further;
        let quals = conjuncts_of(filter);
        // A partial index's lookup left out the conditions its predicate implies: they
        // count for the rows.
        let full = crate::predicate::scan_condition(cx, table, index, filter);
        let sel = key_sel * conjuncts_selectivity(&rel, &conjuncts_of(full.as_ref()));
        let rows = clamp_rows(rel.tuples * sel);
        // The entries a lookup reads: a partial index's are those its predicate selects
        // too (PostgreSQL's add_predicate_to_index_quals).
        let predicate = crate::predicate::predicate_conjuncts(cx, table, index);
        let pred_refs: Vec<&Expr> = predicate.iter().collect();
        let tuples = clamp_rows(rel.tuples * key_sel * conjuncts_selectivity(&rel, &pred_refs));
        let index_pages = (self.pages(index.rel).max(1)) as f64;
        let num_index_pages = if index_pages > 1.0 && rel.tuples > 1.0 {
            (tuples * index_pages / rel.tuples).ceil()
        } else {
            1.0
        };
        let loops = loops.max(1.0);
        let index_cost = {
            let fetched =
                pages_fetched_loops(cx, num_index_pages * loops, index_pages, index_pages);
            fetched * s.random_page_cost / loops
                + tuples * (s.cpu_index_tuple_cost + s.cpu_operator_cost)
        };
        let descent = if rel.tuples > 1.0 {
            (rel.tuples.ln() / 2f64.ln()).ceil() * s.cpu_operator_cost
        } else {
            0.0
        } + (cost::tree_height(index_pages) + 1.0) * 50.0 * s.cpu_operator_cost;
        // The heap pages read per lookup (PostgreSQL's cost_index over `loop_count`
        // repeated scans): at worst each entry's page at random; where the key's order
        // follows the table's (its correlation), only the pages the key's rows fill.
        let max_io = pages_fetched_loops(cx, tuples * loops, rel.pages, rel.pages + index_pages)
            * s.random_page_cost
            / loops;
        let min_pages = (tuples / rel.tuples.max(1.0) * rel.pages).ceil();
        let min_io = pages_fetched_loops(cx, min_pages * loops, rel.pages, rel.pages + index_pages)
            * s.random_page_cost
            / loops;
        let mut correlation = index
            .columns
            .first()
            .and_then(|&c| {
                let col = table.columns.get(c)?;
                rel.stats?.column(c as u16 + 1, &col.ty)?.correlation
            })
            .map_or(0.0, f64::from);
        if index.columns.len() > 1 {
            correlation *= 0.75;
        }
        let heap = max_io + correlation * correlation * (min_io - max_io);
        let (_, qp) = cost::qual_cost(cx, &quals);
        let startup = descent;
        let total = startup + index_cost + heap + (s.cpu_tuple_cost + qp) * tuples;
        Estimate {
            startup,
            total,
            rows,
            width: widths.iter().sum(),
        }
    }
}

impl Estimator<'_> {
    /// [`Estimator::parameterized_index_scan`] of partitioned table `table` through its
    /// partitioned index `index` (planner rule 18): each lookup reads, through their own
    /// indexes, the partitions its outer value leaves (of those `filter`'s constants
    /// leave): one where the lookup's column is the whole key of every level, else all,
    /// as PostgreSQL's parameterized Append. Estimated from at most
    /// `LOOKUP_SAMPLE_LEAVES` of them, evenly spread, so planning does not pay for every
    /// partition per join considered.
    fn partitioned_index_scan(
        &self,
        table: &std::sync::Arc<TableDesc>,
        index: &catalog::IndexDesc,
        filter: Option<&Expr>,
        loops: f64,
        keys: usize,
    ) -> Estimate {
        let cx = &self.cx;
        let leaves = crate::partition::leaves(cx, table, filter);
        let col = index.columns.first().copied().unwrap_or(usize::MAX);
        let routes = crate::partition::lookup_routes(cx.catalog, table, col);
        let step = leaves.len().div_ceil(LOOKUP_SAMPLE_LEAVES).max(1);
        let mut sum = Estimate::default();
        let mut sampled = 0usize;
        for leaf in leaves.iter().step_by(step) {
            let Some(ix) = crate::partition::leaf_index(cx.catalog, table, index, leaf) else {
                continue;
            };
            let e = self.parameterized_index_scan(leaf, ix, filter, loops, keys);
            if sampled == 0 {
                sum.startup = e.startup;
                sum.width = e.width;
            }
            sum.total += e.total;
            sum.rows += e.rows;
            sampled += 1;
        }
        if sampled == 0 {
            return sum;
        }
        // One partition per lookup: the average one's; else every one's.
        let scale = if routes {
            1.0 / sampled as f64
        } else {
            leaves.len() as f64 / sampled as f64
        };
        Estimate {
            total: sum.startup + (sum.total - sum.startup) * scale,
            rows: clamp_rows(sum.rows * scale),
            ..sum
        }
    }
}

/// [`Estimator::partitioned_index_scan`]'s sample of a partitioned table's partitions.
const LOOKUP_SAMPLE_LEAVES: usize = 32;

/// A table with its statistics (for estimates over a join's columns): the descriptor
/// held, the statistics borrowed from the catalog snapshot.
struct OwnedRel<'a> {
    table: std::sync::Arc<TableDesc>,
    stats: Option<&'a catalog::RelStats>,
    pages: u64,
}

impl OwnedRel<'_> {
    fn info(&self) -> RelInfo<'_> {
        RelInfo::new(&self.table, self.stats, self.pages)
    }
}

fn leaf(est: Estimate, widths: Vec<i64>) -> Node {
    let origins = vec![None; widths.len()];
    Node {
        est,
        widths: widths.into(),
        origins: origins.into(),
    }
}

fn conjuncts_of(filter: Option<&Expr>) -> Vec<&Expr> {
    let mut out = Vec::new();
    if let Some(f) = filter {
        split(f, &mut out);
    }
    out
}

fn split<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary(BinaryOp::And, l, r) => {
            split(l, out);
            split(r, out);
        }
        _ => out.push(e),
    }
}

/// `e` with each column `i` renumbered to `to(i)` (all known).
fn map_columns(e: &Expr, to: &dyn Fn(usize) -> Option<usize>) -> Expr {
    let mut out = e.clone();
    map_in_place(&mut out, to);
    out
}

fn map_in_place(e: &mut Expr, to: &dyn Fn(usize) -> Option<usize>) {
    if let ExprKind::Column(i) = e.kind {
        if let Some(j) = to(i) {
            e.kind = ExprKind::Column(j);
        }
        return;
    }
    match &mut e.kind {
        ExprKind::Neg(x) | ExprKind::Not(x) | ExprKind::Cast { expr: x, .. } => map_in_place(x, to),
        ExprKind::Binary(_, l, r)
        | ExprKind::IsDistinctFrom {
            left: l, right: r, ..
        }
        | ExprKind::NullIf(l, r) => {
            map_in_place(l, to);
            map_in_place(r, to);
        }
        ExprKind::IsNull { expr, .. } | ExprKind::IsBool { expr, .. } => map_in_place(expr, to),
        ExprKind::Like { expr, pattern, .. } => {
            map_in_place(expr, to);
            map_in_place(pattern, to);
        }
        ExprKind::InList { expr, list, .. } => {
            map_in_place(expr, to);
            for x in list {
                map_in_place(x, to);
            }
        }
        _ => {}
    }
}

/// An expression's width: a column's as its input has it, else its type's.
fn expr_width(e: &Expr, input: &[i64]) -> i64 {
    match e.kind {
        ExprKind::Column(i) => input.get(i).copied().unwrap_or_else(|| type_width(&e.ty)),
        _ => type_width(&e.ty),
    }
}

/// An aggregate's result width (`count` is bigint, `avg` of integers numeric, ...).
fn agg_width(func: AggFunc, ty: &DataType) -> i64 {
    match func {
        AggFunc::CountStar | AggFunc::Count => 8,
        _ => type_width(ty),
    }
}

/// A join's node, costing `(startup, run)`: `joined`'s columns and `rows` rows; for a semi
/// or anti join, `outer`'s columns and the outer rows it keeps, of which `matched` find a
/// match.
fn join_node(
    outer: &Node,
    joined: Node,
    kind: JoinKind,
    (startup, run): (f64, f64),
    rows: f64,
    matched: f64,
) -> Node {
    let (rows, node) = match kind {
        JoinKind::Semi => (clamp_rows(matched), outer.clone()),
        JoinKind::Anti => (clamp_rows(outer.est.rows - matched), outer.clone()),
        _ => (rows, joined),
    };
    Node {
        est: Estimate {
            startup,
            total: startup + run,
            rows,
            width: node.widths.iter().sum(),
        },
        ..node
    }
}

/// What the inner scans of a nested loop cost where each outer row stops at its first
/// match, and the inner rows they read (PostgreSQL's `final_cost_nestloop` for semi and
/// anti joins and `Inner Unique`): of `outer` rows a fraction `frac` match, each
/// reading `2 / (matches + 1)` of its scan; an unmatched row reads the whole scan, or,
/// where the inner scan's key is the whole join condition (`indexed`:
/// `has_indexed_join_quals`), finds nothing and pays a row's share of it.
/// `(first_run, rescan_run)`: the inner side's first run and each run after.
fn first_match_scans(
    outer: f64,
    frac: f64,
    matches: f64,
    inner_rows: f64,
    (first_run, rescan_run): (f64, f64),
    indexed: bool,
) -> (f64, f64) {
    let mut matched = (outer * frac).round();
    let mut unmatched = outer - matched;
    let scan_frac = 2.0 / (matches + 1.0);
    let mut ntuples = matched * inner_rows * scan_frac;
    let mut run;
    if indexed {
        run = first_run * scan_frac;
        if matched > 1.0 {
            run += (matched - 1.0) * rescan_run * scan_frac;
        }
        run += unmatched * rescan_run / inner_rows;
    } else {
        ntuples += unmatched * inner_rows;
        // The first scan, paid by a matched or an unmatched row.
        run = first_run;
        if unmatched >= 1.0 {
            unmatched -= 1.0;
        } else {
            matched -= 1.0;
        }
        if matched > 0.0 {
            run += matched * rescan_run * scan_frac;
        }
        if unmatched > 0.0 {
            run += unmatched * rescan_run;
        }
    }
    (run, ntuples)
}

/// Rows of a join of `outer` and `inner` rows where `sel` of the pairs match.
fn join_rows(outer: f64, inner: f64, sel: f64, kind: JoinKind) -> f64 {
    let inner_rows = clamp_rows(outer * inner * sel);
    match kind {
        JoinKind::Inner => inner_rows,
        JoinKind::Left => clamp_rows(inner_rows.max(outer)),
        JoinKind::Full => clamp_rows(inner_rows.max(outer).max(inner)),
        JoinKind::Right => clamp_rows(inner_rows.max(inner)),
        // Semi and anti joins are estimated by `Estimator::semi_factors`.
        JoinKind::Semi | JoinKind::Anti => inner_rows,
    }
}

/// PostgreSQL's Materialize over `sub` (`cost_material`, in memory).
fn material(cx: &PlanContext<'_>, sub: &Estimate) -> Estimate {
    Estimate {
        startup: sub.startup,
        total: sub.total + 2.0 * cx.settings.cpu_operator_cost * sub.rows + spilled(cx, sub),
        rows: sub.rows,
        width: sub.width,
    }
}

/// What reading the rows of `kept` again costs, where a Materialize or a Sort keeps
/// them (`cost_rescan`).
fn kept_rescan(cx: &PlanContext<'_>, kept: &Estimate) -> f64 {
    cx.settings.cpu_operator_cost * kept.rows + spilled(cx, kept)
}

/// The pages written and read of rows kept past `work_mem` (`cost_material`).
fn spilled(cx: &PlanContext<'_>, rows: &Estimate) -> f64 {
    let s = cx.settings;
    if cost::relation_byte_size(rows.rows, rows.width) > s.work_mem * 1024.0 {
        s.seq_page_cost * cost::page_size(rows.rows, rows.width)
    } else {
        0.0
    }
}

/// How a nested loop reads its inner side for each outer row after the first
/// (`cost_rescan`'s cases).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rescan {
    /// Run again: a plain rescan, or a LATERAL side with the next row's values.
    Rerun,
    /// Kept by a Materialize over it.
    Materialize,
    /// Kept by the inner Sort itself.
    Sorted,
    /// A function scan: its rows are made once, its run cost paid again.
    Function,
}

impl Rescan {
    /// How a nested loop over `right` reads it again.
    pub fn of(right: &Plan, materialize: bool, lateral: bool) -> Rescan {
        match right {
            _ if lateral => Rescan::Rerun,
            _ if materialize => Rescan::Materialize,
            Plan::Sort { .. } => Rescan::Sorted,
            Plan::GenerateSeries { .. } => Rescan::Function,
            _ => Rescan::Rerun,
        }
    }
}

/// What PostgreSQL's HashAggregate adds for spilling groups past the hash memory
/// (`cost_agg`, AGG_HASHED, with `hash_agg_entry_size`, `hash_agg_set_limits` and
/// `hash_choose_num_partitions`): pages written and read again at each level of
/// partitioning, and the tuples' trips to disk; `(startup, total)`, zero where the groups
/// fit. Myriad's hash aggregation does not spill yet (the streaming executor's work):
/// the cost keeps PostgreSQL's choice between hashing and sorting.
fn hash_agg_spill(
    cx: &PlanContext<'_>,
    groups: f64,
    aggs: &[AggCall],
    input: &Estimate,
) -> (f64, f64) {
    const BLCKSZ: f64 = common::limits::BLCKSZ as f64;
    let s = cx.settings;
    // A group's entry: the hash entry, its key tuple's chunk, its per-aggregate states.
    let trans = aggs.len() as f64;
    let tuple = 16.0 + 16.0 + input.width as f64;
    let pergroup = if trans > 0.0 {
        16.0 + 16.0 * trans
    } else {
        0.0
    };
    let entry = 24.0 + tuple + pergroup;
    let hash_mem = cost::hash_memory_limit(cx);
    if groups * entry <= hash_mem {
        return (0.0, 0.0);
    }
    let wanted = 1.5 * groups * entry;
    let mut partitions = (1.0 + wanted / hash_mem).floor();
    let max_partitions = (hash_mem / BLCKSZ / 4.0).max(4.0);
    partitions = partitions.clamp(4.0, max_partitions.min(1024.0));
    partitions = 2f64.powf(partitions.log2().ceil());
    let partition_mem = BLCKSZ + BLCKSZ * partitions;
    let mem_limit = if hash_mem > 4.0 * partition_mem {
        hash_mem - partition_mem
    } else {
        hash_mem * 0.75
    };
    let ngroups_limit = (mem_limit / entry).max(1.0);
    let batches = ((groups * entry) / mem_limit)
        .max(groups / ngroups_limit)
        .ceil()
        .max(1.0);
    let depth = (batches.ln() / partitions.max(2.0).ln()).ceil();
    let pages = cost::relation_byte_size(input.rows, input.width) / BLCKSZ;
    // Twice the pages: PostgreSQL's penalty for hash aggregation's worse I/O than a
    // sort's.
    let written = 2.0 * pages * depth;
    let spill = depth * input.rows * 2.0 * s.cpu_tuple_cost;
    let startup = written * s.random_page_cost + spill;
    (startup, startup + written * s.seq_page_cost)
}

/// PostgreSQL's Sort over `input` (`cost_sort`; bounded to `limit` rows): comparisons,
/// and where the rows pass `work_mem` an external merge's page reads and writes (Myriad
/// sorts in memory still: the cost keeps PostgreSQL's choices).
fn sort(cx: &PlanContext<'_>, input: &Estimate, limit: Option<f64>) -> Estimate {
    const BLCKSZ: f64 = common::limits::BLCKSZ as f64;
    let s = cx.settings;
    let n = input.rows.max(2.0);
    let cmp = 2.0 * s.cpu_operator_cost;
    let bytes = cost::relation_byte_size(n, input.width);
    let sort_mem = s.work_mem * 1024.0;
    let (out_rows, out_bytes) = match limit {
        Some(l) if l > 0.0 && l < n => (l, cost::relation_byte_size(l, input.width)),
        _ => (n, bytes),
    };
    let mut startup = if out_bytes > sort_mem {
        // An external merge: runs of `work_mem` merged `merge_order` at a time
        // (tuplesort_merge_order), each pass writing and reading every page.
        let pages = (bytes / BLCKSZ).ceil();
        let runs = bytes / sort_mem;
        let merge_order = (sort_mem / (BLCKSZ * 32.0 + BLCKSZ))
            .floor()
            .clamp(6.0, 500.0);
        let log_runs = if runs > merge_order {
            (runs.ln() / merge_order.ln()).ceil()
        } else {
            1.0
        };
        let accesses = 2.0 * pages * log_runs;
        cmp * n * n.log2() + accesses * (s.seq_page_cost * 0.75 + s.random_page_cost * 0.25)
    } else if n > 2.0 * out_rows || bytes > sort_mem {
        // A bounded heap of the rows the LIMIT keeps.
        cmp * n * (2.0 * out_rows).log2()
    } else {
        cmp * n * n.log2()
    };
    if !s.enable_sort {
        startup += cost::DISABLE_COST;
    }
    startup += input.total;
    Estimate {
        startup,
        total: startup + s.cpu_operator_cost * n,
        rows: input.rows,
        width: input.width,
    }
}

/// A LIMIT or OFFSET's count if it is a constant (0 if absent or NULL, -1 if unknown).
fn limit_count(e: Option<&Expr>) -> f64 {
    let Some(e) = e else {
        return 0.0;
    };
    match crate::selectivity::constant_value(e) {
        Some(Value::Null) => 0.0,
        Some(v) => v.as_f64().map_or(-1.0, |x| x.max(0.0)),
        None => -1.0,
    }
}

/// PostgreSQL's `adjust_limit_rows_costs`.
fn limit_estimate(input: &Estimate, count: f64, offset: f64) -> Estimate {
    let mut e = *input;
    let in_rows = input.rows;
    if offset != 0.0 {
        let off = if offset > 0.0 {
            offset
        } else {
            clamp_rows(in_rows * 0.10)
        }
        .min(e.rows);
        if in_rows > 0.0 {
            e.startup += (input.total - input.startup) * off / in_rows;
        }
        e.rows = (e.rows - off).max(1.0);
    }
    if count != 0.0 {
        let cnt = if count > 0.0 {
            count
        } else {
            clamp_rows(in_rows * 0.10)
        }
        .min(e.rows);
        if in_rows > 0.0 {
            e.total = e.startup + (input.total - input.startup) * cnt / in_rows;
        }
        e.rows = cnt.max(1.0);
    }
    e
}

/// Rows generate_series makes: exact for constant integer bounds, else 1000.
fn series_rows(start: &Expr, stop: &Expr, step: Option<&Expr>) -> f64 {
    let konst = |e: &Expr| match &e.kind {
        ExprKind::Const(v) => v.as_i64().map(|x| x as f64),
        _ => None,
    };
    let step = match step {
        Some(e) => konst(e),
        None => Some(1.0),
    };
    match (konst(start), konst(stop), step) {
        (Some(a), Some(b), Some(st)) if st != 0.0 => clamp_rows(((b - a + st) / st).floor()),
        _ => 1000.0,
    }
}

/// `index_pages_fetched` for repeated scans.
fn pages_fetched_loops(cx: &PlanContext<'_>, tuples: f64, pages: f64, total_pages: f64) -> f64 {
    let t = pages.max(1.0);
    let total = total_pages.max(1.0);
    let mut b = cx.settings.effective_cache_size * t / total;
    b = if b <= 1.0 { 1.0 } else { b.ceil() };
    if t <= b {
        let f = (2.0 * t * tuples) / (2.0 * t + tuples);
        if f >= t { t } else { f.ceil() }
    } else {
        let lim = (2.0 * t * b) / (2.0 * t - b);
        let f = if tuples <= lim {
            (2.0 * t * tuples) / (2.0 * t + tuples)
        } else {
            b + (tuples - lim) * (t - b) / t
        };
        f.ceil()
    }
}

/// The conjunction of `conds` (cloned), if any.
fn conjoin_refs<'e>(conds: impl Iterator<Item = &'e Expr>) -> Option<Expr> {
    crate::conjoin(conds.cloned().collect())
}
