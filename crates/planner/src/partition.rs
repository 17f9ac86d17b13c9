//! Partitioned tables in plans (planner rule 18): planning treats a partitioned table
//! as one relation, a `SeqScan` of the parent whose rows are estimated as its surviving
//! partitions' ([`leaves`]); once the plan is made, each such scan becomes its
//! partitions' own scans ([`expand_statement`]): an Append of them, the one scan when one
//! partition is left, or no rows when none is, as PostgreSQL's plans show them.
//!
//! Pruning reads the scan's conditions on the partition key's parts: `=`, `<`, `<=`,
//! `>`, `>=`, `IN`, `IS NULL`, and AND / OR of them, against constants, where a part is
//! a key column or an expression equal to a key expression once both are folded
//! (`lower(b) = 'x'` for a key on `lower(b)`, as PostgreSQL matches them). They become the
//! values each key column may take (`catalog::partition::KeyValues`), which the
//! catalog's directory finds by binary search in the bounds (partition rule 2): the
//! cost is O(log N) in the partitions that exist, and nothing of a pruned partition is
//! looked at but its bound.

use std::ops::Bound;
use std::sync::Arc;

use catalog::partition::KeyValues;
use catalog::{CatalogSnapshot, TableDesc};
use common::{DataType, Value};
use sql::bound::{BinaryOp, Expr, ExprKind};

use crate::{Plan, PlanContext, PlannedStatement};

/// The leaf partitions of partitioned table `table` whose rows `filter` may pass, in
/// bound order, sub-partitions flattened (as PostgreSQL's Append lists them).
pub fn leaves(
    cx: &PlanContext<'_>,
    table: &TableDesc,
    filter: Option<&Expr>,
) -> Vec<Arc<TableDesc>> {
    let mut out = Vec::new();
    add_leaves(cx.catalog, table, filter, &constant, None, &mut out);
    out
}

/// [`leaves`] in `catalog` (EXPLAIN's, which lists a lookup's partitions).
pub fn leaves_in(
    catalog: &CatalogSnapshot,
    table: &TableDesc,
    filter: Option<&Expr>,
) -> Vec<Arc<TableDesc>> {
    let mut out = Vec::new();
    add_leaves(catalog, table, filter, &constant, None, &mut out);
    out
}

/// The values of the expressions a pruning compares key columns with, where known.
type Resolve<'r> = dyn Fn(&Expr) -> Option<Value> + 'r;

/// Each leaf partition of `table` whose rows `filter` may pass, given to `each` in
/// bound order: [`leaves`] without collecting them (an estimate sums their sizes).
pub(crate) fn for_each_leaf(
    catalog: &CatalogSnapshot,
    table: &TableDesc,
    filter: Option<&Expr>,
    each: &mut dyn FnMut(&Arc<TableDesc>),
) {
    add_leaves_to(catalog, table, filter, &constant, None, each);
}

fn add_leaves(
    catalog: &CatalogSnapshot,
    table: &TableDesc,
    filter: Option<&Expr>,
    resolve: &Resolve<'_>,
    fixed: Option<(usize, &Value)>,
    out: &mut Vec<Arc<TableDesc>>,
) {
    add_leaves_to(catalog, table, filter, resolve, fixed, &mut |t| {
        out.push(t.clone())
    });
}

fn add_leaves_to(
    catalog: &CatalogSnapshot,
    table: &TableDesc,
    filter: Option<&Expr>,
    resolve: &Resolve<'_>,
    fixed: Option<(usize, &Value)>,
    out: &mut dyn FnMut(&Arc<TableDesc>),
) {
    let Some(key) = &table.partition_key else {
        return;
    };
    let Some(set) = catalog.partitions(table.oid) else {
        return;
    };
    if filter.is_some_and(is_false) {
        return;
    }
    let exprs = key_exprs(catalog, table);
    let cols: Vec<Option<KeyValues>> = key
        .columns
        .iter()
        .map(|&c| {
            let part = Part::of(c, &exprs)?;
            let from_filter = filter.and_then(|f| key_values(f, &part, resolve));
            match fixed {
                Some((col, v)) if col == c => {
                    let point = KeyValues::point(v.clone());
                    Some(match from_filter {
                        Some(f) => f.intersect(&point),
                        None => point,
                    })
                }
                _ => from_filter,
            }
        })
        .collect();
    for oid in set.prune(key.strategy, &cols) {
        let Some(t) = catalog.table_by_oid(oid) else {
            continue;
        };
        if t.partition_key.is_some() {
            add_leaves_to(catalog, t, filter, resolve, fixed, out);
        } else {
            out(t);
        }
    }
}

/// The leaves of partitioned table `table` that `filter`'s conditions leave once
/// `resolve` gives the run-time values (a generic plan's parameters): what an Append
/// with [`crate::RunTimePrune`] keeps when it starts.
pub fn run_time_leaves(
    catalog: &CatalogSnapshot,
    table: &TableDesc,
    filter: &Expr,
    resolve: &Resolve<'_>,
) -> Vec<common::Oid> {
    let both = |e: &Expr| constant(e).or_else(|| resolve(e));
    let mut out = Vec::new();
    add_leaves(catalog, table, Some(filter), &both, None, &mut out);
    out.iter().map(|t| t.oid).collect()
}

/// The leaves of partitioned table `table` that may hold a row whose column `col` is
/// `value` and that passes `filter`'s conditions on constants: what one lookup of an
/// index nested loop over `table` reads (a nested loop's outer value prunes). O(log N)
/// bound comparisons per level where `col` is a key column there; every partition of a
/// level where it is not.
pub fn lookup_leaves(
    catalog: &CatalogSnapshot,
    table: &TableDesc,
    col: usize,
    value: &Value,
    filter: Option<&Expr>,
) -> Vec<Arc<TableDesc>> {
    let mut out = Vec::new();
    add_leaves(
        catalog,
        table,
        filter,
        &constant,
        Some((col, value)),
        &mut out,
    );
    out
}

/// Whether a lookup by column `col` of partitioned table `table` reads one partition
/// at most: `col` is the whole key of every partitioned level.
pub fn lookup_routes(catalog: &CatalogSnapshot, table: &TableDesc, col: usize) -> bool {
    let Some(key) = &table.partition_key else {
        return true;
    };
    key.columns.as_slice() == [col]
        && catalog.partitions(table.oid).is_some_and(|set| {
            set.all()
                .into_iter()
                .filter_map(|oid| catalog.table_by_oid(oid))
                .filter(|t| t.partition_key.is_some())
                .all(|t| t.partition_key.as_ref().map(|k| &k.columns) == Some(&key.columns))
        })
}

/// The index of leaf partition `leaf` that belongs to partitioned index `index` of its
/// ancestor `root` (through the partitioned indexes of the levels between).
pub fn leaf_index<'c>(
    catalog: &'c CatalogSnapshot,
    root: &TableDesc,
    index: &catalog::IndexDesc,
    leaf: &'c TableDesc,
) -> Option<&'c catalog::IndexDesc> {
    // The levels below `root` down to the leaf, top first.
    let mut path = vec![leaf];
    let mut at = leaf;
    while let Some(of) = &at.partition_of {
        if of.parent == root.oid {
            break;
        }
        at = catalog.table_by_oid(of.parent)?;
        path.push(at);
    }
    let mut oid = index.oid;
    let mut found = None;
    for t in path.iter().rev() {
        let ix = t.indexes.iter().find(|i| i.parent == Some(oid))?;
        oid = ix.oid;
        found = Some(ix);
    }
    found
}

/// A part of a partitioned table's key, as conditions name it: a column, or an
/// expression over the row equal to the key's (`lower(b) = 'x'` for a key on
/// `lower(b)`, as PostgreSQL matches a key expression).
enum Part<'e> {
    Column(usize),
    Expr(&'e Expr),
}

impl<'e> Part<'e> {
    /// Key part `c` (an entry of the key's `columns`), its expressions bound in `exprs`
    /// ([`key_exprs`]); `None` for an expression that did not bind.
    fn of(c: usize, exprs: &'e [Option<Expr>]) -> Option<Part<'e>> {
        match catalog::partition::PartitionKey::expression(c) {
            Some(k) => exprs.get(k)?.as_ref().map(Part::Expr),
            None => Some(Part::Column(c)),
        }
    }

    fn is(&self, e: &Expr) -> bool {
        match self {
            Part::Column(c) => column_of(e) == Some(*c),
            Part::Expr(x) => e == *x,
        }
    }
}

/// `table`'s key expressions bound over its row and folded as a statement's are (rule
/// 14), to compare with the statement's conditions; `None` for one that no longer
/// binds (it then prunes nothing). Nothing is bound for a key of columns.
fn key_exprs(catalog: &CatalogSnapshot, table: &TableDesc) -> Vec<Option<Expr>> {
    let Some(key) = table.partition_key.as_ref().filter(|k| !k.exprs.is_empty()) else {
        return Vec::new();
    };
    let detached = common::session::SessionInfo::detached();
    match sql::binder::bind_partition_key_exprs(catalog, table, &detached) {
        Ok(bound) => bound
            .into_iter()
            .map(|e| Some(crate::fold::fold(e)))
            .collect(),
        Err(_) => vec![None; key.exprs.len()],
    }
}

/// How many of `n` inputs a run-time pruning leaves, on average: one where its
/// conditions fix every key part by equality, else all.
pub(crate) fn expected_survivors(
    catalog: &CatalogSnapshot,
    p: &crate::RunTimePrune,
    n: usize,
) -> f64 {
    let Some(key) = &p.table.partition_key else {
        return n as f64;
    };
    let exprs = key_exprs(catalog, &p.table);
    let mut conjuncts = Vec::new();
    crate::scan::split_and(&p.filter, &mut conjuncts);
    let fixed = key.columns.iter().all(|&c| {
        let Some(part) = Part::of(c, &exprs) else {
            return false;
        };
        conjuncts.iter().any(|e| match &e.kind {
            ExprKind::Binary(BinaryOp::Eq, l, r) => part.is(l) || part.is(r),
            _ => false,
        })
    });
    if fixed { 1.0 } else { n as f64 }
}

/// The conjuncts of `filter` that compare `table`'s key columns with values known only
/// when the plan runs, parameters (a generic plan's `$n`) or stable functions (`now()`),
/// and read nothing else: what prunes its partitions when the plan starts. A volatile
/// function (`random()`) may give each row another value: its conditions do not prune.
pub(crate) fn run_time_conditions(
    catalog: &CatalogSnapshot,
    table: &TableDesc,
    filter: &Expr,
) -> Option<Expr> {
    let key = table.partition_key.as_ref()?;
    let exprs = key_exprs(catalog, table);
    let parts: Vec<Part<'_>> = key
        .columns
        .iter()
        .filter_map(|&c| Part::of(c, &exprs))
        .collect();
    // What a condition reads besides the key's parts: something known only when the
    // plan runs (`run_time`), or anything else (`other`).
    fn reads(e: &Expr, parts: &[Part<'_>], run_time: &mut bool, other: &mut bool) {
        if parts.iter().any(|p| p.is(e)) {
            return;
        }
        match &e.kind {
            ExprKind::Param(_) => *run_time = true,
            ExprKind::Func(..) => *run_time = true,
            ExprKind::Column(_) | ExprKind::SubLink(_) | ExprKind::Outer(_) | ExprKind::Agg(_) => {
                *other = true;
                return;
            }
            _ => {}
        }
        e.for_each_child(&mut |c| reads(c, parts, run_time, other));
    }
    let mut conjuncts = Vec::new();
    crate::scan::split_and(filter, &mut conjuncts);
    let kept: Vec<Expr> = conjuncts
        .into_iter()
        .filter(|e| {
            let (mut run_time, mut other) = (false, false);
            reads(e, &parts, &mut run_time, &mut other);
            run_time && !other && !e.is_volatile()
        })
        .cloned()
        .collect();
    crate::conjoin(kept)
}

/// A value known when a plan starts: what an expression compared with a key column
/// evaluates to there, if it reads no column and no subquery and is not volatile (the
/// executor's resolver for [`run_time_leaves`] evaluates those it is given).
pub fn known_at_start(e: &Expr) -> bool {
    let mut other = false;
    e.walk(&mut |n| {
        other |= matches!(
            n.kind,
            ExprKind::Column(_) | ExprKind::SubLink(_) | ExprKind::Outer(_) | ExprKind::Agg(_)
        );
    });
    !other && !e.is_volatile()
}

fn is_false(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Const(Value::Bool(false)) | ExprKind::Const(Value::Null)
    )
}

/// The values `e` (a condition) lets key part `col` take, if it says anything of them;
/// `resolve` gives the values of the expressions compared with it that are known.
fn key_values(e: &Expr, col: &Part<'_>, resolve: &Resolve<'_>) -> Option<KeyValues> {
    match &e.kind {
        ExprKind::Binary(BinaryOp::And, l, r) => {
            match (key_values(l, col, resolve), key_values(r, col, resolve)) {
                (Some(a), Some(b)) => Some(a.intersect(&b)),
                (a, b) => a.or(b),
            }
        }
        ExprKind::Binary(BinaryOp::Or, l, r) => {
            Some(key_values(l, col, resolve)?.union(&key_values(r, col, resolve)?))
        }
        ExprKind::Binary(op, l, r) if op.is_comparison() => {
            let (op, v) = match (col.is(l), col.is(r)) {
                (true, false) => (*op, resolve(r)?),
                (false, true) => (commute(*op)?, resolve(l)?),
                _ => return None,
            };
            // A comparison with NULL is never true.
            if v.is_null() {
                return Some(KeyValues::default());
            }
            let interval = match op {
                BinaryOp::Eq => return Some(KeyValues::point(v)),
                BinaryOp::Lt => (Bound::Unbounded, Bound::Excluded(v)),
                BinaryOp::LtEq => (Bound::Unbounded, Bound::Included(v)),
                BinaryOp::Gt => (Bound::Excluded(v), Bound::Unbounded),
                BinaryOp::GtEq => (Bound::Included(v), Bound::Unbounded),
                _ => return None,
            };
            Some(KeyValues {
                intervals: vec![interval],
                null: false,
            })
        }
        ExprKind::InList {
            expr,
            list,
            negated: false,
        } if col.is(expr) => {
            let mut out = KeyValues::default();
            for item in list {
                let v = resolve(item)?;
                if !v.is_null() {
                    out = out.union(&KeyValues::point(v));
                }
            }
            Some(out)
        }
        ExprKind::IsNull {
            expr,
            negated: false,
        } if col.is(expr) => Some(KeyValues {
            intervals: Vec::new(),
            null: true,
        }),
        ExprKind::IsNull {
            expr,
            negated: true,
        } if col.is(expr) => Some(KeyValues::all(false)),
        _ => None,
    }
}

fn column_of(e: &Expr) -> Option<usize> {
    match e.kind {
        ExprKind::Column(c) => Some(c),
        _ => None,
    }
}

fn constant(e: &Expr) -> Option<Value> {
    match &e.kind {
        ExprKind::Const(v) => Some(v.clone()),
        _ => None,
    }
}

/// `a op b` as `b op' a`.
fn commute(op: BinaryOp) -> Option<BinaryOp> {
    Some(match op {
        BinaryOp::Eq => BinaryOp::Eq,
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        _ => return None,
    })
}

/// Whether `keys` sort the rows of `scan`, a range-partitioned table's scan under a
/// projection `exprs`, by the first column of its key: the order its partitions' bounds
/// already put them in (partition rule 4), or its reverse. Its range partitions hold no
/// NULL key, so where NULLs sort does not matter.
pub(crate) fn ordered_by_bounds(
    catalog: &CatalogSnapshot,
    scan: &Plan,
    exprs: &[Expr],
    keys: &[sql::bound::SortKey],
) -> bool {
    let Plan::SeqScan { table, .. } = scan else {
        return false;
    };
    let Some(key) = &table.partition_key else {
        return false;
    };
    let [k] = keys else {
        return false;
    };
    let ExprKind::Column(out) = k.expr.kind else {
        return false;
    };
    // The first key part: a column, or an expression equal to the sort key's.
    let key_exprs = key_exprs(catalog, table);
    key.strategy == catalog::partition::PartitionStrategy::Range
        && exprs.get(out).is_some_and(|e| {
            Part::of(key.columns[0], &key_exprs)
                .is_some_and(|p| p.is(e) || p.is(&crate::fold::fold(e.clone())))
        })
}

/// `ORDER BY` over a partitioned table's scan: each partition's rows in order (by an
/// index where that is cheaper, else sorted), then either the partitions one after the
/// other in bound order (PostgreSQL 12's ordered Append: the keys are a range key's
/// first column, every partition a direct range partition, no DEFAULT one, which may
/// hold any value) or merged by the keys (PostgreSQL's Merge Append), so a LIMIT reads
/// few rows of each; used where it costs less than sorting every row.
pub(crate) fn ordered_append(
    cx: &PlanContext<'_>,
    scan: Plan,
    exprs: Vec<Expr>,
    keys: Vec<sql::bound::SortKey>,
    limit: Option<(&Option<Expr>, &Option<Expr>)>,
) -> Plan {
    let sorted = Plan::Sort {
        input: Box::new(Plan::Project {
            input: Box::new(scan.clone()),
            exprs: exprs.clone(),
        }),
        keys: keys.clone(),
    };
    let Plan::SeqScan { table, filter, .. } = &scan else {
        return sorted;
    };
    let leaves = leaves(cx, table, filter.as_ref());
    if leaves.len() < 2 {
        return sorted;
    }
    let by_bounds = ordered_by_bounds(cx.catalog, &scan, &exprs, &keys)
        && leaves.iter().all(|l| {
            l.partition_of.as_ref().is_some_and(|o| {
                o.parent == table.oid
                    && matches!(o.bound, catalog::partition::PartitionBound::Range { .. })
            })
        });
    // EXPLAIN names the partitions by their place under the Append (`Plan::Append`'s
    // `parent`), their descriptors the catalog's; but by their place in bound order
    // when the Append runs them last to first (DESC), which only a copy can carry.
    let desc_order = by_bounds && keys[0].desc;
    let shown = table.shown_name().to_string();
    let mut inputs: Vec<Plan> = leaves
        .iter()
        .enumerate()
        .map(|(i, leaf)| {
            let desc = if desc_order {
                let mut desc = (**leaf).clone();
                desc.alias = Some(format!("{shown}_{}", i + 1));
                Arc::new(desc)
            } else {
                leaf.clone()
            };
            let leaf_scan = match filter {
                Some(f) => crate::scan_path(cx, desc, f.clone()),
                None => Plan::SeqScan {
                    table: desc,
                    filter: None,
                    columns: None,
                },
            };
            let one = Plan::Sort {
                input: Box::new(Plan::Project {
                    input: Box::new(leaf_scan),
                    exprs: exprs.clone(),
                }),
                keys: keys.clone(),
            };
            crate::ordered_by_index(cx, one, limit)
        })
        .collect();
    let ordered = if by_bounds {
        // Descending: the partitions last to first (each named by its place in bound
        // order).
        if desc_order {
            inputs.reverse();
        }
        Plan::Append {
            inputs,
            prune: None,
            parent: Some(table.clone()),
        }
    } else {
        Plan::MergeAppend {
            inputs,
            keys,
            parent: Some(table.clone()),
            exprs,
        }
    };
    if crate::scan::in_order_is_cheaper(cx, &ordered, &sorted, limit) {
        ordered
    } else {
        sorted
    }
}

/// Replace every scan of a partitioned table in `stmt`'s plans by its partitions'.
pub(crate) fn expand_statement(cx: &PlanContext<'_>, stmt: &mut PlannedStatement) {
    match stmt {
        PlannedStatement::Query { plan, subplans, .. }
        | PlannedStatement::CopyTo { plan, subplans, .. } => {
            expand(cx, plan);
            subplans.for_each_plan(|p| expand(cx, p));
        }
        PlannedStatement::Insert {
            source, subplans, ..
        } => {
            expand(cx, source);
            subplans.for_each_plan(|p| expand(cx, p));
        }
        PlannedStatement::Update { subplans, .. } | PlannedStatement::Delete { subplans, .. } => {
            subplans.for_each_plan(|p| expand(cx, p))
        }
        PlannedStatement::Explain { inner, .. } => expand_statement(cx, inner),
    }
}

/// `stmt` with each `Plan::PartitionScans` made the Append of `SeqScan`s it stands for:
/// what EXPLAIN shows, estimates and (under ANALYZE) runs, node by node.
pub fn unfold_partition_scans(stmt: &mut PlannedStatement) {
    fn unfold(plan: &mut Plan) {
        if let Some(append) = plan.partition_scans_append() {
            *plan = append;
            return;
        }
        for child in plan.children_mut() {
            unfold(child);
        }
    }
    match stmt {
        PlannedStatement::Query { plan, subplans, .. }
        | PlannedStatement::CopyTo { plan, subplans, .. } => {
            unfold(plan);
            subplans.for_each_plan(unfold);
        }
        PlannedStatement::Insert {
            source, subplans, ..
        } => {
            unfold(source);
            subplans.for_each_plan(unfold);
        }
        PlannedStatement::Update { scan, subplans, .. }
        | PlannedStatement::Delete { scan, subplans, .. } => {
            unfold(scan);
            subplans.for_each_plan(unfold);
        }
        PlannedStatement::Explain { inner, .. } => unfold_partition_scans(inner),
    }
}

/// Replace every scan of a partitioned table in `plan` by its partitions' scans, a join
/// or grouping of such scans by one per partition where the settings allow and it can
/// be (`crate::partitionwise`).
pub(crate) fn expand(cx: &PlanContext<'_>, plan: &mut Plan) {
    if let Some(split) =
        crate::partitionwise::join(cx, plan).or_else(|| crate::partitionwise::aggregate(cx, plan))
    {
        *plan = split;
        return;
    }
    if let Plan::SeqScan { table, .. } = plan
        && table.partition_key.is_some()
    {
        let Plan::SeqScan {
            table,
            filter,
            columns,
        } = std::mem::replace(
            plan,
            Plan::Append {
                inputs: vec![],
                prune: None,
                parent: None,
            },
        )
        else {
            unreachable!("matched above");
        };
        *plan = partition_scans(cx, &table, filter, columns, true);
        return;
    }
    for child in plan.children_mut() {
        expand(cx, child);
    }
}

/// [`expand`] for the scan an UPDATE or DELETE finds its rows with: a partition left
/// alone is still named by its place (`t_1`), as PostgreSQL's EXPLAIN of the write
/// lists each partition it writes.
pub(crate) fn expand_target(cx: &PlanContext<'_>, plan: Plan) -> Plan {
    match plan {
        Plan::SeqScan {
            table,
            filter,
            columns,
        } if table.partition_key.is_some() => partition_scans(cx, &table, filter, columns, false),
        mut other => {
            expand(cx, &mut other);
            other
        }
    }
}

/// The scans of `table`'s surviving partitions, each chosen as any table's scan is
/// ([`crate::scan_path`]) and reading the columns the parent's scan read.
fn partition_scans(
    cx: &PlanContext<'_>,
    table: &Arc<TableDesc>,
    filter: Option<Expr>,
    columns: Option<crate::ColumnSet>,
    name_single: bool,
) -> Plan {
    let leaves = leaves(cx, table, filter.as_ref());
    let shown = table.shown_name().to_string();
    let single = leaves.len() == 1 && name_single;
    // Conditions whose values come when a generic plan runs prune again then.
    let prune = match &filter {
        Some(f) if leaves.len() > 1 => run_time_conditions(cx.catalog, table, f).map(|filter| {
            Box::new(crate::RunTimePrune {
                table: table.clone(),
                filter,
                inputs: leaves.iter().enumerate().map(|(i, l)| (l.oid, i)).collect(),
            })
        }),
        _ => None,
    };
    // Partitions with no index a condition could use are read in sequence (what
    // `scan_path` would choose) without planning each: several such are held as their
    // descriptors alone (`Plan::PartitionScans`), so a query reading every partition
    // plans in little memory per partition.
    if leaves.len() > 1 && name_single {
        // The columns the conditions read: an index that could serve them (by a bound,
        // an OR's arms, an expression) is led by one of them; a partial index may serve
        // without.
        let read: Option<Vec<usize>> = filter.as_ref().map(|f| {
            crate::columns_read(f, table.columns.len())
                .iter()
                .enumerate()
                .filter(|(_, r)| **r)
                .map(|(c, _)| c)
                .collect()
        });
        let sequential = |leaf: &TableDesc| match &read {
            None => true,
            Some(columns) => {
                leaf.indexes.is_empty()
                    || (leaf.partial_index_positions().next().is_none()
                        && columns
                            .iter()
                            .all(|&c| leaf.index_positions_leading(c).next().is_none()))
            }
        };
        if leaves.iter().all(|l| sequential(l)) {
            return Plan::PartitionScans {
                parent: table.clone(),
                leaves,
                filter,
                columns,
                prune,
            };
        }
    }
    let mut inputs: Vec<Plan> = leaves
        .into_iter()
        .map(|leaf| {
            // EXPLAIN names a partition by the parent's name in the query: the one left
            // here, the several under an Append by their place there (PostgreSQL's `r_1`,
            // `r_2`; `Plan::Append`'s `parent`), so only the one is copied to carry it.
            let desc = if single {
                let mut desc = (*leaf).clone();
                desc.alias = Some(shown.clone());
                Arc::new(desc)
            } else {
                leaf
            };
            leaf_scan(cx, desc, &filter, &columns)
        })
        .collect();
    match inputs.len() {
        0 => Plan::Result {
            input: None,
            filter: Expr::constant(Value::Bool(false), DataType::Bool),
            width: table.columns.len(),
        },
        1 => inputs.pop().expect("one input"),
        _ => Plan::Append {
            inputs,
            prune,
            parent: Some(table.clone()),
        },
    }
}

/// A leaf partition's scan in its parent's place: chosen as any table's scan is
/// ([`crate::scan_path`]) for the parent's conditions, reading the columns the parent's
/// scan read.
pub(crate) fn leaf_scan(
    cx: &PlanContext<'_>,
    desc: Arc<TableDesc>,
    filter: &Option<Expr>,
    columns: &Option<crate::ColumnSet>,
) -> Plan {
    let mut scan = match filter {
        Some(f) => crate::scan_path(cx, desc, f.clone()),
        None => Plan::SeqScan {
            table: desc,
            filter: None,
            columns: None,
        },
    };
    if let Some(needed) = columns {
        // Its own conditions' columns too (an index scan's filter; rule 12).
        crate::columns::prune(&mut scan, needed);
    }
    scan
}
