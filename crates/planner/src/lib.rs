//! The planner: bound statements to executable plans.
//!
//! Only statements with a plan come here: queries, DML, EXPLAIN of them and COPY TO.
//! Utility statements (DDL, TRUNCATE, LOCK, COPY FROM) go around the planner to
//! `executor::utility`, as PostgreSQL's ProcessUtility does.
//!
//! Today's plans are simple and the planner's job is small: map each logical operator to
//! its physical one, push WHERE filters into the scans below them (through joins and
//! plain projections, [`add_filter`]), so that a filtered scan never materialises rows it
//! will drop, and turn a filtered scan into a btree index scan when the filter's
//! conjuncts constrain an index's leading columns ([`scan_path`]). A join whose condition
//! equates an inner table's leading index column with the outer row looks the inner rows
//! up through that index ([`make_join`]); other joins read their inner side once.
//! Under a LIMIT, a sort by an index's leading columns becomes an index scan in that
//! order ([`ordered_by_index`]). UPDATE and DELETE get the scan of the rows they change
//! ([`target_scan`]), and every subquery in a statement's expressions is planned with it
//! ([`SubPlans`]): the executor runs what it is given and decides nothing. Costing with
//! statistics, join ordering and partition pruning (L3) land here.

use std::ops::Bound;
use std::sync::Arc;

use catalog::{IndexDesc, TableDesc};
use common::{DataType, PgError, PgResult};
use sql::bound::{
    AggCall, BoundDelete, BoundInsert, BoundStatement, BoundUpdate, Expr, JoinKind, LogicalPlan,
    OutputColumn, SetOpKind, SortKey,
};
use sql::bound::{BinaryOp, ExprKind};

/// An executable plan tree. Every node produces rows of a fixed width.
#[derive(Clone, Debug)]
pub enum Plan {
    /// Heap sequential scan, all columns in table order, optionally filtered.
    SeqScan {
        table: Arc<TableDesc>,
        filter: Option<Expr>,
    },
    /// Btree index scan: entries between the bounds (key prefixes of constant
    /// expressions, evaluated at run time), each heap tuple fetched and checked against
    /// the whole `filter` (the bounds are never tighter than it, so it decides).
    IndexScan {
        table: Arc<TableDesc>,
        index: IndexDesc,
        lower: Bound<Vec<Expr>>,
        upper: Bound<Vec<Expr>>,
        filter: Option<Expr>,
        /// Descending key order (NULLs first), for ORDER BY ... DESC.
        backward: bool,
    },
    /// A sequence's one row, from its running state.
    SequenceState {
        seq: Arc<catalog::SequenceDesc>,
    },
    /// A system view's one row, from the live counters.
    SystemView {
        view: catalog::SystemView,
        width: usize,
    },
    Values {
        rows: Vec<Vec<Expr>>,
        width: usize,
    },
    /// `unnest(array)` (or another function `func` computed as an array): the array
    /// evaluated once, one row per element, then its number WITH ORDINALITY.
    Unnest {
        array: Expr,
        func: &'static str,
        ordinality: bool,
    },
    /// `generate_series`: its bounds evaluated once, its rows made as they are read.
    GenerateSeries {
        start: Expr,
        stop: Expr,
        step: Option<Expr>,
    },
    Filter {
        input: Box<Plan>,
        predicate: Expr,
    },
    Project {
        input: Box<Plan>,
        exprs: Vec<Expr>,
    },
    /// For each left row, scan the (materialised) right side; or, for a LATERAL right
    /// side, run it again with `lateral`'s values over the left row as its outer values
    /// (PostgreSQL's nested loop over a parameterized subquery or function scan).
    NestedLoopJoin {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        on: Option<Expr>,
        right_width: usize,
        lateral: Option<Vec<Expr>>,
    },
    /// For each left row, look the matching rows of `table` up through `index`, whose
    /// leading column equals `outer_key` (evaluated over the left row): PostgreSQL's
    /// nested loop over a parameterized index scan.
    IndexNestLoop {
        left: Box<Plan>,
        table: Arc<TableDesc>,
        index: IndexDesc,
        outer_key: Expr,
        /// The join conjunct the lookup serves, over the joined row: checked again on
        /// each match (the lookup is by key order, the conjunct by SQL equality).
        key_cond: Expr,
        /// Conditions on `table`'s rows alone (over its columns).
        inner_filter: Option<Expr>,
        /// The rest of the join condition, over the joined row.
        on: Option<Expr>,
        kind: JoinKind,
    },
    /// Sort-free grouping: groups are kept in an ordered map keyed by the group values.
    Aggregate {
        input: Box<Plan>,
        group_by: Vec<Expr>,
        aggs: Vec<AggCall>,
    },
    Sort {
        input: Box<Plan>,
        keys: Vec<SortKey>,
    },
    Distinct {
        input: Box<Plan>,
    },
    /// The inputs' rows one input after the other (UNION ALL; under a Distinct, UNION).
    Append {
        inputs: Vec<Plan>,
    },
    /// INTERSECT / EXCEPT [ALL]: the right side's rows counted, then the left side's
    /// passed on or not by those counts, in the left side's order.
    SetOp {
        /// INTERSECT, else EXCEPT (a UNION is an Append).
        intersect: bool,
        all: bool,
        left: Box<Plan>,
        right: Box<Plan>,
    },
    Limit {
        input: Box<Plan>,
        limit: Option<Expr>,
        offset: Option<Expr>,
    },
    /// Lock each row's version as it passes (`sql::bound::LogicalPlan::LockRows`). The
    /// one table scan below it appends each row's address after the table's columns.
    LockRows {
        input: Box<Plan>,
        table: Arc<TableDesc>,
        tid_column: usize,
        mode: common::RowLockMode,
        wait: sql::bound::RowWait,
        recheck: Option<Expr>,
        exprs: Vec<Expr>,
    },
}

impl Plan {
    /// Number of columns this node produces.
    pub fn width(&self) -> usize {
        match self {
            Plan::SeqScan { table, .. } | Plan::IndexScan { table, .. } => table.columns.len(),
            Plan::Values { width, .. } | Plan::SystemView { width, .. } => *width,
            Plan::GenerateSeries { .. } => 1,
            Plan::Unnest { ordinality, .. } => 1 + usize::from(*ordinality),
            Plan::SequenceState { .. } => 3,
            Plan::Project { exprs, .. } => exprs.len(),
            Plan::NestedLoopJoin {
                left, right_width, ..
            } => left.width() + right_width,
            Plan::IndexNestLoop { left, table, .. } => left.width() + table.columns.len(),
            Plan::Aggregate { group_by, aggs, .. } => group_by.len() + aggs.len(),
            Plan::Append { inputs } => inputs.first().map_or(0, Plan::width),
            Plan::SetOp { left, .. } => left.width(),
            Plan::Filter { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Distinct { input }
            | Plan::Limit { input, .. }
            | Plan::LockRows { input, .. } => input.width(),
        }
    }
}

/// The subqueries of a statement's expressions, each planned once, at plan time
/// (PostgreSQL's `PlannedStmt.subplans`), with those nested in them. The executor and
/// EXPLAIN find a subquery's plan by its [`sql::bound::SubLink`]'s query, which the
/// expressions of the statement's plans share.
#[derive(Clone, Debug, Default)]
pub struct SubPlans {
    plans: Vec<(Arc<LogicalPlan>, Arc<Plan>)>,
}

impl SubPlans {
    /// The plan of the subquery `query`.
    pub fn get(&self, query: &Arc<LogicalPlan>) -> Option<&Arc<Plan>> {
        self.plans
            .iter()
            .find(|(q, _)| Arc::ptr_eq(q, query))
            .map(|(_, p)| p)
    }

    /// Every subquery with its plan.
    pub fn iter(&self) -> impl Iterator<Item = (&Arc<LogicalPlan>, &Arc<Plan>)> {
        self.plans.iter().map(|(q, p)| (q, p))
    }

    pub fn is_empty(&self) -> bool {
        self.plans.is_empty()
    }

    /// Plan every subquery `e` holds (at any depth), and those in their own
    /// expressions, once each.
    fn add_from(&mut self, e: &Expr) {
        e.walk(&mut |node| {
            if let ExprKind::SubLink(link) = &node.kind {
                if self.get(&link.query).is_some() {
                    return;
                }
                let mut query = (*link.query).clone();
                // Its expressions share their subqueries with `link.query`'s.
                let _ = query.for_each_expr_mut(&mut |inner| {
                    self.add_from(inner);
                    Ok(())
                });
                let plan = plan_query(query);
                self.plans.push((link.query.clone(), Arc::new(plan)));
            }
        });
    }

    /// The subqueries of `stmt`'s expressions, planned.
    fn of(stmt: &mut BoundStatement) -> SubPlans {
        let mut out = SubPlans::default();
        let _ = stmt.for_each_expr_mut(&mut |e| {
            out.add_from(e);
            Ok(())
        });
        out
    }
}

/// A statement ready for the executor.
#[derive(Clone, Debug)]
pub enum PlannedStatement {
    Query {
        plan: Plan,
        columns: Vec<OutputColumn>,
        subplans: SubPlans,
    },
    Insert {
        insert: Box<BoundInsert>,
        source: Plan,
        subplans: SubPlans,
    },
    /// UPDATE (PostgreSQL's ModifyTable): the rows `scan` finds (a sequential or index
    /// scan of the table with the statement's filter) are changed.
    Update {
        update: BoundUpdate,
        scan: Plan,
        subplans: SubPlans,
    },
    /// DELETE, as UPDATE.
    Delete {
        delete: BoundDelete,
        scan: Plan,
        subplans: SubPlans,
    },
    /// EXPLAIN: the explained statement's plan; `planning` is filled in by the caller,
    /// who timed the binding and planning.
    Explain {
        options: sql::bound::ExplainOptions,
        inner: Box<PlannedStatement>,
        planning: std::time::Duration,
    },
    /// COPY TO STDOUT: the query's rows in COPY's format.
    CopyTo {
        plan: Plan,
        columns: Vec<OutputColumn>,
        format: sql::bound::CopyFormat,
        subplans: SubPlans,
    },
}

impl PlannedStatement {
    /// The plans of the statement's subqueries (an EXPLAIN's: those of the statement
    /// explained).
    pub fn subplans(&self) -> &SubPlans {
        match self {
            PlannedStatement::Query { subplans, .. }
            | PlannedStatement::Insert { subplans, .. }
            | PlannedStatement::Update { subplans, .. }
            | PlannedStatement::Delete { subplans, .. }
            | PlannedStatement::CopyTo { subplans, .. } => subplans,
            PlannedStatement::Explain { inner, .. } => inner.subplans(),
        }
    }
}

/// Plan a query, DML, EXPLAIN or COPY TO. Utility statements (DDL, TRUNCATE, LOCK, COPY
/// FROM: [`BoundStatement::is_utility`]) have no plan: they go around the planner, as
/// PostgreSQL's ProcessUtility does, and one given here is an internal error. Every
/// subquery in the statement's expressions is planned here too ([`SubPlans`]).
pub fn plan(mut stmt: BoundStatement) -> PgResult<PlannedStatement> {
    let subplans = match &stmt {
        BoundStatement::Explain { .. } => SubPlans::default(),
        _ => SubPlans::of(&mut stmt),
    };
    Ok(match stmt {
        BoundStatement::Query(q) => PlannedStatement::Query {
            plan: plan_query(q.plan),
            columns: q.columns,
            subplans,
        },
        BoundStatement::Insert(mut i) => {
            let source = plan_query(std::mem::replace(
                &mut i.source,
                LogicalPlan::Values {
                    rows: vec![],
                    width: 0,
                },
            ));
            PlannedStatement::Insert {
                insert: Box::new(i),
                source,
                subplans,
            }
        }
        BoundStatement::Update(u) => PlannedStatement::Update {
            scan: target_scan(&u.table, u.filter.as_ref()),
            update: u,
            subplans,
        },
        BoundStatement::Delete(d) => PlannedStatement::Delete {
            scan: target_scan(&d.table, d.filter.as_ref()),
            delete: d,
            subplans,
        },
        BoundStatement::Explain { options, inner, .. } => PlannedStatement::Explain {
            options,
            inner: Box::new(plan(*inner)?),
            planning: std::time::Duration::ZERO,
        },
        BoundStatement::CopyTo { query, format } => PlannedStatement::CopyTo {
            plan: plan_query(query.plan),
            columns: query.columns,
            format,
            subplans,
        },
        _ => {
            return Err(PgError::internal("a utility statement reached the planner"));
        }
    })
}

/// Map a logical plan to a physical one.
pub fn plan_query(lp: LogicalPlan) -> Plan {
    let b = |p: Box<LogicalPlan>| Box::new(plan_query(*p));
    match lp {
        LogicalPlan::Scan { table } => Plan::SeqScan {
            table,
            filter: None,
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
        },
        LogicalPlan::Filter { input, predicate } => add_filter(plan_query(*input), predicate),
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
        } if !lateral.is_empty() => {
            let right = plan_query(*right);
            Plan::NestedLoopJoin {
                left: b(left),
                right_width: right.width(),
                right: Box::new(right),
                kind,
                on,
                lateral: Some(lateral),
            }
        }
        LogicalPlan::Join {
            left,
            right,
            kind,
            on,
            ..
        } => make_join(plan_query(*left), plan_query(*right), kind, on),
        LogicalPlan::Aggregate {
            input,
            group_by,
            aggs,
        } => Plan::Aggregate {
            input: b(input),
            group_by,
            aggs,
        },
        LogicalPlan::Sort { input, keys } => Plan::Sort {
            input: b(input),
            keys,
        },
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
            union_inputs(*left, !all, &mut inputs);
            union_inputs(*right, !all, &mut inputs);
            let append = Plan::Append { inputs };
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
            input: Box::new(ordered_by_index(plan_query(*input))),
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
            input: Box::new(ordered_by_index(plan_query(*input))),
            table,
            tid_column,
            mode,
            wait,
            recheck,
            exprs,
        },
    }
}

/// The inputs of a UNION chain, planned, nested UNION ALLs flattened (and plain UNIONs
/// too when `distinct`: the chain's result is deduplicated anyway).
fn union_inputs(lp: LogicalPlan, distinct: bool, out: &mut Vec<Plan>) {
    match lp {
        LogicalPlan::SetOp {
            kind: SetOpKind::Union,
            all,
            left,
            right,
        } if all || distinct => {
            union_inputs(*left, distinct, out);
            union_inputs(*right, distinct, out);
        }
        other => out.push(plan_query(other)),
    }
}

/// Which inputs of a join an expression reads: none (a constant), the left (columns
/// below `left_width`), the right, or both.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    None,
    Left,
    Right,
    Both,
}

fn side(e: &Expr, left_width: usize) -> Side {
    let (mut left, mut right) = (false, false);
    e.walk(&mut |x| {
        if let ExprKind::Column(i) = x.kind {
            if i < left_width {
                left = true;
            } else {
                right = true;
            }
        }
    });
    match (left, right) {
        (false, false) => Side::None,
        (true, false) => Side::Left,
        (false, true) => Side::Right,
        (true, true) => Side::Both,
    }
}

/// Does `e` read only outputs of `exprs` that are bare columns or constants (so that it
/// can be evaluated below the projection, and no volatile function runs twice)?
fn reads_plain_columns(e: &Expr, exprs: &[Expr]) -> bool {
    let mut ok = true;
    e.walk(&mut |x| {
        if let ExprKind::Column(i) = x.kind {
            ok &= exprs
                .get(i)
                .is_some_and(|p| matches!(p.kind, ExprKind::Column(_) | ExprKind::Const(_)));
        }
    });
    ok
}

/// `e` with each column replaced by the projection expression it reads.
fn substitute_columns(e: Expr, exprs: &[Expr]) -> Expr {
    match e.kind {
        ExprKind::Column(i) => exprs[i].clone(),
        _ => e
            .try_map_children(&mut |c| Ok(substitute_columns(c, exprs)))
            .expect("substituting columns cannot fail"),
    }
}

/// `e` over the right input of a join, as an expression over that input alone.
fn shift_columns(e: Expr, by: usize) -> Expr {
    match e.kind {
        ExprKind::Column(i) => Expr::column(i - by, e.ty),
        _ => e
            .try_map_children(&mut |c| Ok(shift_columns(c, by)))
            .expect("shifting columns cannot fail"),
    }
}

/// The conjuncts as one AND, or `None` for none.
fn conjoin(list: Vec<Expr>) -> Option<Expr> {
    list.into_iter().reduce(|a, b| {
        Expr::new(
            ExprKind::Binary(BinaryOp::And, Box::new(a), Box::new(b)),
            DataType::Bool,
        )
    })
}

fn conjuncts(e: Expr) -> Vec<Expr> {
    match e.kind {
        ExprKind::Binary(BinaryOp::And, l, r) => {
            let mut v = conjuncts(*l);
            v.extend(conjuncts(*r));
            v
        }
        _ => vec![e],
    }
}

/// Filter `plan`'s rows by `predicate`, as far down as it can go: into a table scan
/// (which may then use an index), and through joins, each conjunct to the input it reads
/// (a WHERE over a LEFT JOIN goes only to its left input; over an inner join, a conjunct
/// reading both inputs joins the join's condition).
pub fn add_filter(plan: Plan, predicate: Expr) -> Plan {
    let mut above = Vec::new();
    let plan = match plan {
        Plan::SeqScan { table, filter } => {
            let all = conjoin(filter.into_iter().chain([predicate]).collect());
            return scan_path(table, all.expect("one conjunct at least"));
        }
        // A scan `scan_path` chose: choose again with the added conjuncts.
        Plan::IndexScan {
            table,
            filter: Some(filter),
            backward: false,
            ..
        } => {
            let all = conjoin(vec![filter, predicate]);
            return scan_path(table, all.expect("two conjuncts"));
        }
        // Through a projection of plain columns (a subquery in FROM): the predicate
        // reads the input's columns instead.
        Plan::Project { input, exprs } if reads_plain_columns(&predicate, &exprs) => {
            let below = substitute_columns(predicate, &exprs);
            return Plan::Project {
                input: Box::new(add_filter(*input, below)),
                exprs,
            };
        }
        // A LATERAL right side runs with the left row's values as its outer values:
        // what reads it stays in the join's condition, over the joined row, where the
        // statement's own outer values still hold.
        Plan::NestedLoopJoin {
            left,
            right,
            kind,
            on,
            lateral: Some(lateral),
            right_width,
        } => {
            let mut below = Vec::new();
            let mut cond: Vec<Expr> = on.into_iter().collect();
            for c in conjuncts(predicate) {
                match (side(&c, left.width()), kind) {
                    (Side::Left, _) => below.push(c),
                    (_, JoinKind::Inner) => cond.push(c),
                    _ => above.push(c),
                }
            }
            Plan::NestedLoopJoin {
                left: Box::new(filtered(*left, below)),
                right,
                kind,
                on: conjoin(cond),
                right_width,
                lateral: Some(lateral),
            }
        }
        Plan::NestedLoopJoin {
            left,
            right,
            kind,
            on,
            ..
        } => {
            let s = split_join_filter(predicate, left.width(), kind);
            above = s.above;
            make_join(
                filtered(*left, s.left),
                filtered(*right, s.right),
                kind,
                conjoin(on.into_iter().chain(s.on).collect()),
            )
        }
        Plan::IndexNestLoop {
            left,
            table,
            index,
            outer_key,
            key_cond,
            inner_filter,
            on,
            kind,
        } => {
            let s = split_join_filter(predicate, left.width(), kind);
            above = s.above;
            Plan::IndexNestLoop {
                left: Box::new(filtered(*left, s.left)),
                table,
                index,
                outer_key,
                key_cond,
                inner_filter: conjoin(inner_filter.into_iter().chain(s.right).collect()),
                on: conjoin(on.into_iter().chain(s.on).collect()),
                kind,
            }
        }
        other => {
            above.push(predicate);
            other
        }
    };
    match conjoin(above) {
        Some(predicate) => Plan::Filter {
            input: Box::new(plan),
            predicate,
        },
        None => plan,
    }
}

/// A filter's conjuncts over a join's output, by where they can go: into the left input,
/// into the right input (over its own columns), into the join's condition, or above the
/// join (over a LEFT JOIN, what reads its right side must see the NULL-padded rows).
struct JoinFilter {
    left: Vec<Expr>,
    right: Vec<Expr>,
    on: Vec<Expr>,
    above: Vec<Expr>,
}

fn split_join_filter(predicate: Expr, left_width: usize, kind: JoinKind) -> JoinFilter {
    let mut s = JoinFilter {
        left: Vec::new(),
        right: Vec::new(),
        on: Vec::new(),
        above: Vec::new(),
    };
    for c in conjuncts(predicate) {
        match (side(&c, left_width), kind) {
            (Side::Left, _) => s.left.push(c),
            (Side::Right, JoinKind::Inner) => s.right.push(shift_columns(c, left_width)),
            (Side::Both | Side::None, JoinKind::Inner) => s.on.push(c),
            _ => s.above.push(c),
        }
    }
    s
}

/// `plan` filtered by the conjuncts, if any ([`add_filter`]).
fn filtered(plan: Plan, conjuncts: Vec<Expr>) -> Plan {
    match conjoin(conjuncts) {
        Some(p) => add_filter(plan, p),
        None => plan,
    }
}

/// A join of two planned inputs: conjuncts of the condition that read one input go into
/// it (a LEFT JOIN's condition only into its right input), and an equality between a
/// left expression and a right table's column that leads one of its indexes makes an
/// index nested loop; otherwise the right input is read once and kept.
pub fn make_join(left: Plan, right: Plan, kind: JoinKind, on: Option<Expr>) -> Plan {
    let lw = left.width();
    let (mut left, mut right) = (left, right);
    let mut rest = Vec::new();
    for c in on.map(conjuncts).unwrap_or_default() {
        match (side(&c, lw), kind) {
            (Side::Left, JoinKind::Inner) => left = add_filter(left, c),
            (Side::Right, _) => right = add_filter(right, shift_columns(c, lw)),
            _ => rest.push(c),
        }
    }
    // The inner side as a table and the filter on it: a scan, whichever `scan_path` chose
    // (a lookup per outer row beats reading it all once when the outer side is small,
    // which a join's outer side usually is here: there are no statistics to say otherwise).
    let inner = match &right {
        Plan::SeqScan { table, filter } => Some((table, filter)),
        Plan::IndexScan {
            table,
            filter,
            backward: false,
            ..
        } => Some((table, filter)),
        _ => None,
    };
    if let Some((table, filter)) = inner {
        for i in 0..rest.len() {
            let Some((outer_key, col)) = equi_key(&rest[i], lw, table) else {
                continue;
            };
            let Some(index) = table
                .indexes
                .iter()
                .find(|ix| ix.columns.first() == Some(&col))
            else {
                continue;
            };
            let key_cond = rest.remove(i);
            return Plan::IndexNestLoop {
                left: Box::new(left),
                table: table.clone(),
                index: index.clone(),
                outer_key,
                key_cond,
                inner_filter: filter.clone(),
                on: conjoin(rest),
                kind,
            };
        }
    }
    let right_width = right.width();
    Plan::NestedLoopJoin {
        left: Box::new(left),
        right: Box::new(right),
        kind,
        on: conjoin(rest),
        right_width,
        lateral: None,
    }
}

/// `left_expr = right_column` (either way round), the column indexable and of the
/// expression's type: the expression and the column (of `table`).
fn equi_key(c: &Expr, left_width: usize, table: &TableDesc) -> Option<(Expr, usize)> {
    let ExprKind::Binary(BinaryOp::Eq, l, r) = &c.kind else {
        return None;
    };
    let (outer, col) = match (&l.kind, &r.kind) {
        (_, ExprKind::Column(j)) if *j >= left_width && side(l, left_width) == Side::Left => {
            (l, j - left_width)
        }
        (ExprKind::Column(j), _) if *j >= left_width && side(r, left_width) == Side::Left => {
            (r, j - left_width)
        }
        _ => return None,
    };
    let ty = table.columns.get(col)?.ty;
    (indexable(ty) && outer.ty == ty.without_typmod()).then(|| ((**outer).clone(), col))
}

/// Under a LIMIT, a sort of one table's rows by an index's leading columns (after any
/// columns its scan fixes by equality) becomes an index scan in that order: the first
/// rows come without reading the rest. `ORDER BY` keys must all be ascending with NULLs
/// last (a forward scan) or all descending with NULLs first (backward), as the index
/// stores NULLs last. Anything else is returned unchanged.
fn ordered_by_index(plan: Plan) -> Plan {
    match plan {
        Plan::Project { input, exprs } => Plan::Project {
            input: Box::new(ordered_by_index(*input)),
            exprs,
        },
        Plan::Sort { input, keys } => match *input {
            Plan::Project { input: scan, exprs } => match index_order(&scan, &exprs, &keys) {
                Some(ordered) => Plan::Project {
                    input: Box::new(ordered),
                    exprs,
                },
                None => Plan::Sort {
                    input: Box::new(Plan::Project { input: scan, exprs }),
                    keys,
                },
            },
            other => Plan::Sort {
                input: Box::new(other),
                keys,
            },
        },
        other => other,
    }
}

fn index_order(scan: &Plan, exprs: &[Expr], keys: &[SortKey]) -> Option<Plan> {
    let backward = keys.first()?.desc;
    let mut cols = Vec::with_capacity(keys.len());
    for k in keys {
        if k.desc != backward || k.nulls_first != backward {
            return None;
        }
        let ExprKind::Column(out) = k.expr.kind else {
            return None;
        };
        match exprs.get(out)?.kind {
            ExprKind::Column(c) => cols.push(c),
            _ => return None,
        }
    }
    match scan {
        Plan::SeqScan { table, filter } => {
            let index = table.indexes.iter().find(|i| {
                i.columns.starts_with(&cols) && cols.iter().all(|&c| indexable(table.columns[c].ty))
            })?;
            Some(Plan::IndexScan {
                table: table.clone(),
                index: index.clone(),
                lower: Bound::Unbounded,
                upper: Bound::Unbounded,
                filter: filter.clone(),
                backward,
            })
        }
        // Equality on a prefix fixes those columns: the order continues after them.
        Plan::IndexScan {
            table,
            index,
            lower: Bound::Included(lo),
            upper: Bound::Included(hi),
            filter,
            backward: false,
        } if lo == hi && index.columns[lo.len()..].starts_with(&cols) => Some(Plan::IndexScan {
            table: table.clone(),
            index: index.clone(),
            lower: Bound::Included(lo.clone()),
            upper: Bound::Included(hi.clone()),
            filter: filter.clone(),
            backward,
        }),
        _ => None,
    }
}

/// The scan for `table` filtered by `predicate`: an index scan if an index's leading
/// columns are constrained by the predicate's conjuncts, else a sequential scan. Without
/// statistics the rule is PostgreSQL's default preference: equality on a leading prefix
/// first, then a range on the next column; most constrained columns wins.
pub fn scan_path(table: Arc<TableDesc>, predicate: Expr) -> Plan {
    let mut conjuncts = Vec::new();
    split_and(&predicate, &mut conjuncts);
    // (column, operator, constant) for each usable conjunct: a bare column of an indexable
    // type against a run-time constant of the same type.
    let mut quals: Vec<(usize, BinaryOp, Expr)> = Vec::new();
    for c in &conjuncts {
        if let ExprKind::Binary(op, l, r) = &c.kind
            && matches!(
                op,
                BinaryOp::Eq | BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq
            )
        {
            let (col, op, k) = match (&l.kind, &r.kind) {
                (ExprKind::Column(i), _) if is_constant(r) => (*i, *op, (**r).clone()),
                (_, ExprKind::Column(i)) if is_constant(l) => (*i, commute(*op), (**l).clone()),
                // A smallint or integer column widened to the constant's wider integer
                // type: the key keeps that type, and the scan narrows its value when it
                // runs (`exec::bound_values`), as PostgreSQL's cross-type btree operators
                // compare. So a parameter's generic plan uses the index as well.
                _ => match (
                    widened_integer_column(l, &table),
                    widened_integer_column(r, &table),
                ) {
                    (Some((i, _)), None) if is_constant(r) => {
                        quals.push((i, *op, (**r).clone()));
                        continue;
                    }
                    (None, Some((i, _))) if is_constant(l) => {
                        quals.push((i, commute(*op), (**l).clone()));
                        continue;
                    }
                    _ => continue,
                },
            };
            let ty = table.columns[col].ty;
            // The constant was cast to the column's type less its typmod (a
            // `numeric(10,2)` or `varchar(5)` column is compared as plain numeric or
            // varchar): the same order, so the index serves it.
            if indexable(ty) && k.ty == ty.without_typmod() {
                quals.push((col, op, k));
            }
        }
    }
    // (score, index, lower, upper) of the best index so far.
    type Candidate<'t> = (usize, &'t IndexDesc, Bound<Vec<Expr>>, Bound<Vec<Expr>>);
    let mut best: Option<Candidate> = None;
    for index in &table.indexes {
        let mut prefix = Vec::new();
        for &col in &index.columns {
            match quals
                .iter()
                .find(|(c, op, _)| *c == col && *op == BinaryOp::Eq)
            {
                Some((_, _, k)) => prefix.push(k.clone()),
                None => break,
            }
        }
        let mut score = prefix.len() * 2;
        let (mut lower, mut upper) = if prefix.is_empty() {
            (Bound::Unbounded, Bound::Unbounded)
        } else {
            (
                Bound::Included(prefix.clone()),
                Bound::Included(prefix.clone()),
            )
        };
        if let Some(&next) = index.columns.get(prefix.len()) {
            for (c, op, k) in &quals {
                if *c != next {
                    continue;
                }
                let mut key = prefix.clone();
                key.push(k.clone());
                match op {
                    BinaryOp::Gt if lower_is_prefix(&lower, prefix.len()) => {
                        lower = Bound::Excluded(key);
                        score += 1;
                    }
                    BinaryOp::GtEq if lower_is_prefix(&lower, prefix.len()) => {
                        lower = Bound::Included(key);
                        score += 1;
                    }
                    BinaryOp::Lt if lower_is_prefix(&upper, prefix.len()) => {
                        upper = Bound::Excluded(key);
                        score += 1;
                    }
                    BinaryOp::LtEq if lower_is_prefix(&upper, prefix.len()) => {
                        upper = Bound::Included(key);
                        score += 1;
                    }
                    _ => {}
                }
            }
        }
        if score > 0 && best.as_ref().is_none_or(|b| score > b.0) {
            best = Some((score, index, lower, upper));
        }
    }
    match best {
        Some((_, index, lower, upper)) => Plan::IndexScan {
            index: index.clone(),
            table,
            lower,
            upper,
            filter: Some(predicate),
            backward: false,
        },
        None => Plan::SeqScan {
            table,
            filter: Some(predicate),
        },
    }
}

/// A smallint or integer column widened to a larger integer type for a comparison (the
/// binder's `int4_col = int8_value`): the column and its own type. PostgreSQL compares
/// these with cross-type operators its btree opfamily serves; here the index scan
/// narrows the key's value when it runs.
pub fn widened_integer_column(e: &Expr, table: &TableDesc) -> Option<(usize, DataType)> {
    let ExprKind::Cast { expr, .. } = &e.kind else {
        return None;
    };
    let ExprKind::Column(i) = expr.kind else {
        return None;
    };
    let ty = table.columns.get(i)?.ty;
    let rank = |t: DataType| match t {
        DataType::Int2 => Some(2),
        DataType::Int4 => Some(4),
        DataType::Int8 => Some(8),
        _ => None,
    };
    (rank(ty)? < rank(e.ty)?).then_some((i, ty))
}

/// The scan UPDATE and DELETE find their rows with: [`scan_path`] under a filter, else
/// the whole table.
pub fn target_scan(table: &Arc<TableDesc>, filter: Option<&Expr>) -> Plan {
    match filter {
        Some(f) => scan_path(table.clone(), f.clone()),
        None => Plan::SeqScan {
            table: table.clone(),
            filter: None,
        },
    }
}

/// Is `b` still only the equality prefix (no range bound on the next column yet)?
fn lower_is_prefix(b: &Bound<Vec<Expr>>, prefix: usize) -> bool {
    match b {
        Bound::Unbounded => true,
        Bound::Included(k) | Bound::Excluded(k) => k.len() == prefix,
    }
}

fn split_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary(BinaryOp::And, l, r) => {
            split_and(l, out);
            split_and(r, out);
        }
        _ => out.push(e),
    }
}

/// An expression with no column references: known before the scan starts. Inside a
/// subquery that includes the outer query's values (fixed while the subquery runs), and
/// an uncorrelated subquery's result (computed once per statement); in a prepared
/// statement's generic plan, its parameters.
fn is_constant(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Outer(_) | ExprKind::Param(_) => true,
        ExprKind::SubLink(link) => link.args.is_empty(),
        ExprKind::Binary(_, l, r) => is_constant(l) && is_constant(r),
        ExprKind::Neg(x) | ExprKind::Cast { expr: x, .. } => is_constant(x),
        _ => false,
    }
}

/// `k op col` as `col op' k`.
fn commute(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        other => other,
    }
}

/// Types whose btree order is exactly SQL's comparison order. `char(n)` compares without
/// its padding, which the stored keys keep, so it is left to sequential scans for now.
fn indexable(ty: DataType) -> bool {
    matches!(
        ty,
        DataType::Bool
            | DataType::Int2
            | DataType::Int4
            | DataType::Int8
            | DataType::Float4
            | DataType::Float8
            | DataType::Text
            | DataType::Varchar(_)
            | DataType::Date
            | DataType::Timestamp(_)
            | DataType::TimestampTz(_)
            | DataType::Interval
            | DataType::Numeric(_)
            | DataType::Uuid
            | DataType::Bytea
            | DataType::Oid
            | DataType::Reg(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::ColumnDesc;
    use common::{DataType, Value};

    #[test]
    fn filters_are_pushed_into_scans() {
        let table = Arc::new(TableDesc {
            oid: 1,
            rel: 1,
            name: "t".into(),
            columns: vec![ColumnDesc {
                name: "a".into(),
                ty: DataType::Int4,
                not_null: false,
                default: None,
                identity: None,
                dropped: false,
                stat_target: None,
            }],
            indexes: vec![],
            ..Default::default()
        });
        let pred = Expr::constant(Value::Bool(true), DataType::Bool);
        let lp = LogicalPlan::Filter {
            input: Box::new(LogicalPlan::Scan { table }),
            predicate: pred,
        };
        match plan_query(lp) {
            Plan::SeqScan {
                filter: Some(_), ..
            } => {}
            other => panic!("filter not pushed down: {other:?}"),
        }
    }

    fn indexed_table() -> Arc<TableDesc> {
        let col = |name: &str, ty| ColumnDesc {
            name: name.into(),
            ty,
            not_null: false,
            default: None,
            identity: None,
            dropped: false,
            stat_target: None,
        };
        let index = |oid, columns: Vec<usize>| IndexDesc {
            oid,
            rel: oid,
            name: format!("i{oid}"),
            columns,
            unique: false,
            primary: false,
            constraint: false,
        };
        Arc::new(TableDesc {
            oid: 1,
            rel: 1,
            name: "t".into(),
            columns: vec![
                col("a", DataType::Int4),
                col("b", DataType::Int4),
                col("c", DataType::Bpchar(Some(3))),
            ],
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
            _ => None,
        }
    }

    #[test]
    fn index_paths_for_equality_prefixes_and_ranges() {
        let t = indexed_table();
        let int = DataType::Int4;
        let eq_a = cmp(BinaryOp::Eq, 0, int, Value::Int4(1));
        assert_eq!(
            chosen(scan_path(t.clone(), eq_a.clone())),
            Some(("i2".into(), 1, 1))
        );
        // Both columns of (b, a) constrained beats one column of (a).
        let eq_b = cmp(BinaryOp::Eq, 1, int, Value::Int4(2));
        assert_eq!(
            chosen(scan_path(t.clone(), and(eq_a.clone(), eq_b.clone()))),
            Some(("i3".into(), 2, 2))
        );
        // Equality on b, range on a: (b, a) with the range on its second column.
        let gt_a = cmp(BinaryOp::Gt, 0, int, Value::Int4(5));
        assert_eq!(
            chosen(scan_path(t.clone(), and(eq_b, gt_a.clone()))),
            Some(("i3".into(), 2, 1))
        );
        assert_eq!(
            chosen(scan_path(t.clone(), gt_a)),
            Some(("i2".into(), 1, 0))
        );
        // A column that leads no index, an unindexable type, a non-constant side: no index.
        let ne = cmp(BinaryOp::NotEq, 0, int, Value::Int4(1));
        assert_eq!(chosen(scan_path(t.clone(), ne)), None);
        let c = cmp(
            BinaryOp::Eq,
            2,
            DataType::Bpchar(Some(3)),
            Value::Bpchar("x".into()),
        );
        assert_eq!(chosen(scan_path(t.clone(), c)), None);
        let col_col = Expr::new(
            ExprKind::Binary(
                BinaryOp::Eq,
                Box::new(Expr::new(ExprKind::Column(0), int)),
                Box::new(Expr::new(ExprKind::Column(1), int)),
            ),
            DataType::Bool,
        );
        assert_eq!(chosen(scan_path(t, col_col)), None);
    }

    #[test]
    fn order_by_limit_uses_an_index_in_its_order() {
        let t = indexed_table();
        let int = DataType::Int4;
        let sort = |desc: bool, nulls_first: bool| Plan::Sort {
            input: Box::new(Plan::Project {
                input: Box::new(Plan::SeqScan {
                    table: t.clone(),
                    filter: None,
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
        assert_eq!(
            scan_of(ordered_by_index(sort(false, false))),
            Some(("i2".into(), false))
        );
        assert_eq!(
            scan_of(ordered_by_index(sort(true, true))),
            Some(("i2".into(), true))
        );
        // DESC NULLS LAST is not an order the index has.
        assert!(matches!(
            ordered_by_index(sort(true, false)),
            Plan::Sort { .. }
        ));
    }
}
