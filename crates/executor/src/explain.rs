//! EXPLAIN \[ANALYZE\]: a plan as PostgreSQL's text format shows it, and for ANALYZE the
//! statement run with every operator counted.
//!
//! Node names are PostgreSQL's for the same work (`Seq Scan on t`, `Index Scan using i on
//! t`, `Nested Loop`, `HashAggregate`, `Sort`, `Limit`, ...), with their detail lines
//! (`Filter:`, `Index Cond:`, `Sort Key:`, `Group Key:`, `Join Filter:`, `Hash Cond:`, and
//! under ANALYZE `Rows Removed by Filter:` and a Hash node's `Buckets:` line), indented as PostgreSQL indents them. Expressions are printed
//! as PostgreSQL deparses them for the simple cases (`(a = 5)`, `(c = 'x'::text)`,
//! `((a > 1) AND (b < 2))`); columns are qualified by their table when the plan reads
//! more than one.
//!
//! Each node shows the planner's estimate, `(cost=a..b rows=n width=w)`, unless COSTS
//! OFF (`planner::estimate`; a Materialize or a ModifyTable's scan as PostgreSQL costs
//! them). Deliberate differences (README, `tests/slt-myriad/explain.slt`): a Filter or
//! projection above a node is shown on that node, as PostgreSQL's planner would have
//! placed it.
//!
//! ANALYZE numbers each operator in pre-order as `exec::build` builds it
//! (`exec::instrumented` wraps each one): rows returned, time to the first row and
//! in total (unless TIMING OFF), per loop: a nested loop's inner side runs once per outer
//! row (built anew, counting into the same nodes) or its kept rows are read again (each
//! pass a loop of the Materialize or Sort that keeps them); other nodes run once, or show
//! `never executed`. An index nested loop's inner index scan is a lookup inside the
//! join's operator, which counts it (each outer row a loop; a partition's scan a loop
//! where the outer value reached it, `never executed` where none did).

use std::time::{Duration, Instant};

use catalog::TableDesc;
use common::{DataType, PgResult, Value};
use planner::{Plan, PlannedStatement};
use sql::bound::{BinaryOp, ExplainOptions, Expr, ExprKind, JoinKind, OutputColumn};

use crate::deparse::*;
pub use crate::instrument::{Instrumentation, NodeStats};
use crate::{ExecContext, StatementResult};
use storage::bufmgr::usage::RelUsage;

/// Counting this thread's buffer accesses, until dropped (whatever way EXPLAIN ends):
/// the transaction counts them already (txn rule 10), or EXPLAIN starts and stops it.
struct BufferCounting {
    began: bool,
}

impl BufferCounting {
    fn start() -> BufferCounting {
        BufferCounting {
            began: storage::bufmgr::usage::start(),
        }
    }
}

impl Drop for BufferCounting {
    fn drop(&mut self) {
        if self.began {
            storage::bufmgr::usage::take();
        }
    }
}

/// Run EXPLAIN: the plan's lines, and under ANALYZE the statement itself first.
pub fn explain(
    options: &ExplainOptions,
    mut inner: PlannedStatement,
    planning: Duration,
    cx: &ExecContext,
) -> PgResult<StatementResult> {
    // Partitions' scans held compactly are shown (and run) as the Append they are.
    planner::partition::unfold_partition_scans(&mut inner);
    let settings = cx.session.settings.planner();
    let sizes = crate::PoolSizes(cx.pool);
    let estimator = planner::estimate::Estimator::new(planner::PlanContext {
        snapshot_xmin: u64::MAX,
        catalog: &cx.session.catalog,
        sizes: &sizes,
        settings: &settings,
        subplans: Some(inner.subplans().costs()),
    });
    let mut r = Renderer {
        cx: ShowCx::new(cx.session.text()),
        lines: Vec::new(),
        stats: None,
        timing: options.timing,
        next: 0,
        qualify: false,
        multi: false,
        verbose: options.verbose,
        buffers: options.analyze && options.buffers,
        in_subplan: 0,
        plans: &cx.subqueries,
        estimator: options.costs.then_some(&estimator),
        initplans: Vec::new(),
        session: cx.session,
        params: cx.params,
        buffers_from: RelUsage::default(),
    };
    cx.subqueries.install(inner.subplans());
    // Subplans are numbered as the planner planned them (a subquery's own subqueries
    // before it), as PostgreSQL numbers its plan ids.
    {
        let mut names = r.cx.subplans.borrow_mut();
        for (i, (query, _)) in inner.subplans().iter().enumerate() {
            names.numbers.insert(std::sync::Arc::as_ptr(query), i + 1);
        }
    }
    let started = Instant::now();
    // BUFFERS: this thread counts its buffer accesses while the statement runs.
    let _counting = (options.analyze && options.buffers).then(BufferCounting::start);
    r.buffers_from = storage::bufmgr::usage::total();
    match &inner {
        PlannedStatement::Query { plan, .. } => {
            r.set_qualify(tables_read(plan) > 1);
            if options.analyze {
                let ins = Instrumentation::new(options.timing, options.buffers);
                let env = crate::exec::Env {
                    instrument: Some(&ins),
                    ..cx.env()
                };
                let mut op = crate::exec::build(plan, env)?;
                while op.next()?.is_some() {}
                drop(op);
                r.stats = Some(ins.stats());
            }
            let shown = r.shown(plan);
            r.print_root(shown);
        }
        PlannedStatement::Insert { insert, source, .. } => {
            r.set_qualify(tables_read(source) > 0);
            let mut top_stats = None;
            if options.analyze {
                let ins = Instrumentation::new(options.timing, options.buffers);
                let env = crate::exec::Env {
                    instrument: Some(&ins),
                    ..cx.env()
                };
                let t0 = Instant::now();
                let mut op = crate::exec::build(source, env)?;
                let written = crate::dml::insert_from(cx, insert, op.as_mut())?;
                drop(op);
                top_stats = Some(modified(t0, written.returning.len(), r.buffers_from));
                r.stats = Some(ins.stats());
            }
            let child = r.shown(source);
            let table = r.relation(&insert.table.name);
            r.print_root(modify("Insert", table, top_stats, child));
        }
        PlannedStatement::Update {
            update: u, scan, ..
        } => {
            let top_stats = match options.analyze {
                true => Some(run_counted(&mut r, options, |ins| {
                    crate::dml::update(cx, u, scan, Some(ins))
                })?),
                false => None,
            };
            let (lines, scan) = partition_targets(&r, "Update", &u.table, scan);
            let child = r.target(&u.table, &scan, &u.assignments);
            let table = r.scanned(&u.table);
            let mut node = modify("Update", table, top_stats, child);
            node.details = lines;
            r.print_root(node);
        }
        PlannedStatement::Delete {
            delete: d, scan, ..
        } => {
            let top_stats = match options.analyze {
                true => Some(run_counted(&mut r, options, |ins| {
                    crate::dml::delete(cx, d, scan, Some(ins))
                })?),
                false => None,
            };
            let (lines, scan) = partition_targets(&r, "Delete", &d.table, scan);
            let child = r.target(&d.table, &scan, &[]);
            let table = r.scanned(&d.table);
            let mut node = modify("Delete", table, top_stats, child);
            node.details = lines;
            r.print_root(node);
        }
        _ => {
            return Err(common::PgError::internal(
                "EXPLAIN of a statement without a plan",
            ));
        }
    }
    let execution = started.elapsed();
    if options.summary {
        r.lines
            .push(format!("Planning Time: {:.3} ms", ms(planning)));
        if options.analyze {
            r.lines
                .push(format!("Execution Time: {:.3} ms", ms(execution)));
        }
    }
    Ok(StatementResult {
        tag: "EXPLAIN".into(),
        columns: Some(vec![OutputColumn {
            name: "QUERY PLAN".into(),
            ty: DataType::Text,
            table_oid: 0,
            column_number: 0,
        }]),
        rows: r.lines.into_iter().map(|l| vec![Value::Text(l)]).collect(),
        ..Default::default()
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// PostgreSQL's `Buffers: shared hit=3 read=1 written=2` (the counts that are not zero;
/// nothing if all are). Myriad has only shared buffers, and does not count pages
/// dirtied.
fn buffers_line(u: &storage::bufmgr::usage::RelUsage) -> Option<String> {
    let parts: Vec<String> = [("hit", u.hits), ("read", u.reads), ("written", u.writes)]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(what, n)| format!("{what}={n}"))
        .collect();
    (!parts.is_empty()).then(|| format!("Buffers: shared {}", parts.join(" ")))
}

/// The names of `table`'s columns, `t.c` if `qualify`; a stored size its scan returns
/// (`TableDesc::stored_sizes`) as the call that asked for it.
fn column_names(table: &TableDesc, qualify: bool) -> Vec<String> {
    let name = |c: &catalog::ColumnDesc| {
        if qualify {
            format!("{}.{}", table.shown_name(), c.name)
        } else {
            c.name.clone()
        }
    };
    let own = table.columns.len() - table.stored_sizes.len();
    table
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| match i.checked_sub(own) {
            Some(k) => {
                let measured = &table.columns[table.stored_sizes[k] as usize];
                format!("pg_column_size({})", name(measured))
            }
            None => name(c),
        })
        .collect()
}

/// Run an UPDATE or DELETE for ANALYZE: its scan, instrumented as any plan node, gives
/// its counts to `r`; returns its own node's counts.
fn run_counted(
    r: &mut Renderer,
    options: &ExplainOptions,
    run: impl FnOnce(&Instrumentation) -> PgResult<crate::dml::Written>,
) -> PgResult<NodeStats> {
    let t0 = Instant::now();
    let ins = Instrumentation::new(options.timing, options.buffers);
    let w = run(&ins)?;
    r.stats = Some(ins.stats());
    Ok(modified(t0, w.returning.len(), r.buffers_from))
}

/// What ANALYZE shows on an `Insert` / `Update` / `Delete` node started at `t0`: the
/// RETURNING rows it returned, and the statement's buffer accesses (those counted
/// since `buffers_from`).
fn modified(t0: Instant, returned: usize, buffers_from: RelUsage) -> NodeStats {
    NodeStats {
        executed: true,
        rows: returned as u64,
        loops: 1,
        first: t0.elapsed(),
        total: t0.elapsed(),
        removed: 0,
        join_removed: 0,
        buffers: storage::bufmgr::usage::total().since(buffers_from),
        memory: None,
        heap_blocks: None,
        heap_fetches: None,
    }
}

/// Whether output column `i` of `plan` is a table's (or a scan's) column passed up
/// unchanged, rather than an expression a node computes: what PostgreSQL prints bare
/// when a node above names it.
fn column_is_var(plan: &Plan, i: usize) -> bool {
    match plan {
        Plan::Project { input, exprs } => {
            matches!(exprs.get(i).map(|e| &e.kind), Some(ExprKind::Column(j)) if column_is_var(input, *j))
        }
        Plan::Aggregate {
            input, group_by, ..
        } => {
            matches!(group_by.get(i).map(|e| &e.kind), Some(ExprKind::Column(j)) if column_is_var(input, *j))
        }
        Plan::NestedLoopJoin { left, right, .. }
        | Plan::HashJoin { left, right, .. }
        | Plan::MergeJoin { left, right, .. } => {
            let lw = left.width();
            if i < lw {
                column_is_var(left, i)
            } else {
                column_is_var(right, i - lw)
            }
        }
        Plan::IndexNestLoop { left, .. } => i >= left.width() || column_is_var(left, i),
        Plan::Filter { input, .. }
        | Plan::Sort { input, .. }
        | Plan::Distinct { input }
        | Plan::Limit { input, .. }
        | Plan::LockRows { input, .. } => column_is_var(input, i),
        _ => true,
    }
}

/// A count over `loops` loops, per loop as PostgreSQL prints it (`%.0f`).
fn per_loop(count: u64, loops: u64) -> String {
    format!("{:.0}", count as f64 / loops as f64)
}

/// `names` (one per column of `table`) less the dropped columns': what a scan outputs.
fn live_names(table: &TableDesc, names: Vec<String>) -> Vec<String> {
    names
        .into_iter()
        .zip(table.columns.iter())
        .filter(|(_, c)| !c.dropped)
        .map(|(n, _)| n)
        .collect()
}

/// PostgreSQL's `Insert on t` / `Update on t` / `Delete on t` over the plan of its rows.
fn modify(verb: &str, table: String, stats: Option<NodeStats>, child: Shown) -> Shown {
    // Nothing for the writes themselves; no rows without RETURNING (PostgreSQL's
    // ModifyTable).
    let estimate = child.estimate.map(|e| planner::estimate::Estimate {
        rows: 0.0,
        width: 0,
        ..e
    });
    Shown {
        header: format!("{verb} on {table}"),
        details: Vec::new(),
        estimate,
        stats,
        children: vec![child],
        subplans: vec![],
        initplans: vec![],
    }
}

/// How many FROM items a plan reads (columns are qualified when more than one).
fn tables_read(plan: &Plan) -> usize {
    let below: usize = plan.children().into_iter().map(tables_read).sum();
    match plan {
        Plan::SeqScan { .. }
        | Plan::IndexScan { .. }
        | Plan::BitmapHeapScan { .. }
        | Plan::SequenceState { .. } => 1,
        Plan::IndexNestLoop { .. } => below + 1,
        // A set operation's sides are separate FROM items in PostgreSQL's range table, so
        // it qualifies column names even with one table.
        Plan::Append { .. } | Plan::MergeAppend { .. } | Plan::SetOp { .. } => below.max(2),
        _ => below,
    }
}

/// A join node's name as PostgreSQL shows it: `way` ("Nested Loop", "Hash", "Merge")
/// and the join kind ("Hash Join", "Nested Loop", "Merge Left Join", ...).
fn join_name(way: &str, kind: JoinKind) -> String {
    let kind = match kind {
        JoinKind::Inner if way == "Nested Loop" => return way.to_string(),
        JoinKind::Inner => "",
        JoinKind::Left => " Left",
        JoinKind::Full => " Full",
        JoinKind::Right => " Right",
        JoinKind::Semi => " Semi",
        JoinKind::Anti => " Anti",
    };
    format!("{way}{kind} Join")
}

/// What a node's expressions read: its own output row, an input's, a table's row, or
/// nothing.
enum Over<'p> {
    Node,
    Input(&'p Plan),
    Table(&'p TableDesc),
    Nothing,
}

/// A node's own expressions (those that can hold subqueries), by what they read.
fn node_exprs(plan: &Plan) -> Vec<(Vec<&Expr>, Over<'_>)> {
    match plan {
        Plan::SeqScan { filter, .. }
        | Plan::IndexScan { filter, .. }
        | Plan::PartitionScans { filter, .. } => {
            vec![(filter.iter().collect(), Over::Node)]
        }
        Plan::BitmapHeapScan {
            recheck, filter, ..
        } => vec![(
            std::iter::once(recheck).chain(filter.iter()).collect(),
            Over::Node,
        )],
        Plan::Values { rows, .. } => vec![(rows.iter().flatten().collect(), Over::Nothing)],
        Plan::Unnest { array, .. } => vec![(vec![array], Over::Nothing)],
        Plan::GenerateSeries { start, stop, step } => {
            let mut v = vec![start, stop];
            v.extend(step);
            vec![(v, Over::Nothing)]
        }
        Plan::Filter { input, predicate } => vec![(vec![predicate], Over::Input(input))],
        Plan::Project { input, exprs } => vec![(exprs.iter().collect(), Over::Input(input))],
        Plan::NestedLoopJoin { on, .. } => vec![(on.iter().collect(), Over::Node)],
        Plan::HashJoin { hash_conds, on, .. }
        | Plan::MergeJoin {
            merge_conds: hash_conds,
            on,
            ..
        } => {
            vec![(hash_conds.iter().chain(on.iter()).collect(), Over::Node)]
        }
        Plan::IndexNestLoop {
            left,
            table,
            outer_key,
            key_cond,
            inner_filter,
            on,
            ..
        } => vec![
            (vec![outer_key], Over::Input(left)),
            (inner_filter.iter().collect(), Over::Table(table)),
            (
                std::iter::once(key_cond).chain(on.iter()).collect(),
                Over::Node,
            ),
        ],
        Plan::Aggregate {
            input,
            group_by,
            aggs,
            ..
        } => vec![(
            group_by
                .iter()
                .chain(aggs.iter().flat_map(|a| a.inputs()))
                .collect(),
            Over::Input(input),
        )],
        Plan::Sort { input, keys } => {
            vec![(keys.iter().map(|k| &k.expr).collect(), Over::Input(input))]
        }
        Plan::Limit { limit, offset, .. } => {
            vec![(limit.iter().chain(offset.iter()).collect(), Over::Nothing)]
        }
        Plan::LockRows {
            input,
            recheck,
            exprs,
            ..
        } => vec![(
            recheck.iter().chain(exprs.iter()).collect(),
            Over::Input(input),
        )],
        Plan::Result { filter, .. } => vec![(vec![filter], Over::Nothing)],
        Plan::SystemView { .. }
        | Plan::SequenceState { .. }
        | Plan::Distinct { .. }
        | Plan::Append { .. }
        | Plan::MergeAppend { .. }
        | Plan::SetOp { .. } => vec![],
    }
}

/// One node as shown: its line, detail lines, counters and children.
struct Shown {
    header: String,
    details: Vec<String>,
    /// The planner's estimate (shown unless COSTS OFF).
    estimate: Option<planner::estimate::Estimate>,
    stats: Option<NodeStats>,
    children: Vec<Shown>,
    /// Subqueries its expressions run, each as `SubPlan n` (after the children, as
    /// PostgreSQL lists them).
    subplans: Vec<(String, Shown)>,
    /// Uncorrelated scalar, EXISTS and ARRAY subqueries, run once before the plan
    /// (`InitPlan n (returns $k)`, before the children), on the top node.
    initplans: Vec<(String, Shown)>,
}

struct Renderer<'a> {
    /// What expressions are shown with.
    cx: ShowCx<'a>,
    lines: Vec<String>,
    stats: Option<Vec<NodeStats>>,
    timing: bool,
    /// The next node's pre-order number (as `exec::build` numbered them).
    next: usize,
    /// Column names are qualified (in expressions of conditions and keys).
    qualify: bool,
    /// The query reads more than one FROM item: output columns are qualified.
    multi: bool,
    /// EXPLAIN VERBOSE.
    verbose: bool,
    /// EXPLAIN (ANALYZE, BUFFERS): each node's `Buffers:` line.
    buffers: bool,
    /// Inside a subplan: its nodes were not instrumented and take no numbers.
    in_subplan: usize,
    /// The plans of the statement's subqueries.
    plans: &'a crate::exec::subquery::SubqueryCache,
    /// The planner's estimates, unless COSTS OFF.
    estimator: Option<&'a planner::estimate::Estimator<'a>>,
    /// The InitPlans shown so far, placed on the top node when it is printed.
    initplans: Vec<(String, Shown)>,
    /// The session, whose catalog binds an index's stored expressions.
    session: &'a crate::session::Session<'a>,
    /// A generic plan's parameter values (EXPLAIN EXECUTE): what its run-time pruning
    /// prunes by.
    params: crate::exec::Params<'a>,
    /// The thread's buffer counts as the statement began.
    buffers_from: RelUsage,
}

impl Renderer<'_> {
    /// Qualify column names when the query reads `multi` FROM items, as PostgreSQL
    /// does; with VERBOSE, always in conditions and keys (its output lists still only
    /// when `multi`).
    fn set_qualify(&mut self, multi: bool) {
        self.multi = multi;
        self.qualify = multi || self.verbose;
    }

    /// A scanned table as PostgreSQL names it: the relation, then its alias if the query
    /// (or the partition's place, `t_1`) gave it one other than the relation's name.
    fn scanned(&self, table: &TableDesc) -> String {
        match &table.alias {
            Some(a) if *a != table.name => format!("{} {}", self.relation(&table.name), a),
            _ => self.relation(&table.name),
        }
    }

    /// A relation as a node names it: with its schema under VERBOSE.
    fn relation(&self, name: &str) -> String {
        if self.verbose {
            format!("public.{name}")
        } else {
            name.to_string()
        }
    }

    /// VERBOSE's `Output:` line of `plan`: its output columns (a one-row VALUES, shown
    /// as `Result`, its values).
    fn output(&mut self, plan: &Plan) -> String {
        let names = match plan {
            Plan::Values { rows, .. } if rows.len() == 1 => {
                rows[0].iter().map(|e| deparse(&self.cx, e, &[])).collect()
            }
            _ => {
                let qualify = std::mem::replace(&mut self.qualify, self.multi);
                let names = self.names(plan);
                self.qualify = qualify;
                match plan {
                    Plan::SeqScan { table, .. }
                    | Plan::IndexScan { table, .. }
                    | Plan::BitmapHeapScan { table, .. } => live_names(table, names),
                    _ => names,
                }
            }
        };
        format!("Output: {}", names.join(", "))
    }

    /// The scan of the rows an UPDATE or DELETE changes: under VERBOSE its Output is
    /// what the change needs, as PostgreSQL shows it: the new values of the columns
    /// set, and the row's address.
    fn target(
        &mut self,
        table: &std::sync::Arc<TableDesc>,
        scan: &planner::Plan,
        set: &[(usize, Expr)],
    ) -> Shown {
        self.set_qualify(false);
        let mut child = self.shown(scan);
        if let Some(e) = self.estimator {
            let set: Vec<&Expr> = set.iter().map(|(_, e)| e).collect();
            child.estimate = Some(e.modify_scan(scan, &set));
        }
        if self.verbose && !child.details.is_empty() {
            let names: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
            let mut sorted: Vec<&(usize, Expr)> = set.iter().collect();
            sorted.sort_by_key(|(c, _)| *c);
            let mut out: Vec<String> = sorted
                .iter()
                .map(|(_, e)| deparse(&self.cx, e, &names))
                .collect();
            out.push("ctid".into());
            child.details[0] = format!("Output: {}", out.join(", "));
        }
        child
    }

    fn take(&mut self) -> Option<NodeStats> {
        if self.in_subplan > 0 {
            return None;
        }
        let id = self.next;
        self.next += 1;
        self.stats
            .as_ref()
            .map(|s| s.get(id).copied().unwrap_or_default())
    }

    fn print(&mut self, s: &Shown, depth: usize) {
        let mut line = if depth == 0 {
            String::new()
        } else {
            format!("{}->  ", " ".repeat(6 * (depth - 1) + 2))
        };
        line.push_str(&s.header);
        if let Some(e) = &s.estimate {
            line.push_str(&format!(
                "  (cost={:.2}..{:.2} rows={:.0} width={})",
                e.startup, e.total, e.rows, e.width
            ));
        }
        if let Some(st) = &s.stats {
            line.push(' ');
            line.push_str(&self.actual(st));
        }
        self.lines.push(line);
        let pad = " ".repeat(6 * depth + 2);
        for d in &s.details {
            self.lines.push(format!("{pad}{d}"));
        }
        if let Some(st) = s.stats.filter(|_| self.buffers)
            && let Some(line) = buffers_line(&st.buffers)
        {
            self.lines.push(format!("{pad}{line}"));
        }
        for (label, sub) in &s.initplans {
            self.lines.push(format!("{pad}{label}"));
            let start = self.lines.len();
            self.print(sub, depth + 1);
            for line in &mut self.lines[start..] {
                line.insert_str(0, "  ");
            }
        }
        for c in &s.children {
            self.print(c, depth + 1);
        }
        for (label, sub) in &s.subplans {
            self.lines.push(format!("{pad}{label}"));
            // A subplan's tree is indented two more than a child's.
            let start = self.lines.len();
            self.print(sub, depth + 1);
            for line in &mut self.lines[start..] {
                line.insert_str(0, "  ");
            }
        }
    }

    /// Print the plan's top node, with the InitPlans found anywhere in it.
    fn print_root(&mut self, mut s: Shown) {
        s.initplans.append(&mut self.initplans);
        self.print(&s, 0);
    }

    fn actual(&self, st: &NodeStats) -> String {
        if !st.executed {
            return "(never executed)".into();
        }
        // Rows and times per loop, as PostgreSQL shows them.
        let loops = st.loops.max(1);
        let rows = per_loop(st.rows, loops);
        if self.timing {
            format!(
                "(actual time={:.3}..{:.3} rows={rows} loops={loops})",
                ms(st.first) / loops as f64,
                ms(st.total) / loops as f64,
            )
        } else {
            format!("(actual rows={rows} loops={loops})")
        }
    }

    fn table_names(&self, table: &TableDesc) -> Vec<String> {
        column_names(table, self.qualify)
    }

    /// The column names a node's own quals read: a scan's are never qualified (as
    /// PostgreSQL's show_scan_qual), an upper node's are when the query reads more than
    /// one FROM item.
    fn scan_names(&mut self, plan: &Plan) -> Vec<String> {
        let scan = matches!(
            plan,
            Plan::SeqScan { .. } | Plan::IndexScan { .. } | Plan::BitmapHeapScan { .. }
        );
        let qualify = self.qualify;
        self.qualify = qualify && (!scan || self.verbose);
        let names = self.names(plan);
        self.qualify = qualify;
        names
    }

    /// The detail lines of a hash or merge join (`what`: "Hash" or "Merge"): VERBOSE's
    /// Inner Unique, the `what Cond` over its key clauses, and the Join Filter.
    fn keyed_join_details(
        &self,
        left: &Plan,
        right: &Plan,
        kind: JoinKind,
        what: &str,
        key_conds: &[Expr],
        on: &Option<Expr>,
    ) -> Vec<String> {
        let mut names = self.names(left);
        names.extend(self.names(right));
        let mut details = Vec::new();
        let cond = key_conds.iter().chain(on).cloned().reduce(|a, b| {
            Expr::new(
                ExprKind::Binary(BinaryOp::And, Box::new(a), Box::new(b)),
                DataType::Bool,
            )
        });
        if self.verbose && planner::inner_unique(kind, right, left.width(), cond.as_ref()) {
            details.push("Inner Unique: true".to_string());
        }
        details.push(format!(
            "{what} Cond: {}",
            deparse_and(&self.cx, &key_conds.iter().collect::<Vec<_>>(), &names)
        ));
        details.extend(
            on.iter()
                .map(|e| format!("Join Filter: {}", deparse(&self.cx, e, &names))),
        );
        details
    }

    /// Output column names of `plan`, for deparsing its parent's expressions.
    fn names(&self, plan: &Plan) -> Vec<String> {
        match plan {
            Plan::SeqScan { table, .. }
            | Plan::IndexScan { table, .. }
            | Plan::PartitionScans { parent: table, .. }
            | Plan::BitmapHeapScan { table, .. } => self.table_names(table),
            Plan::Values { width, .. } => (1..=*width).map(|i| format!("column{i}")).collect(),
            Plan::SystemView { view, .. } => {
                view.columns().iter().map(|(n, _)| n.to_string()).collect()
            }
            Plan::GenerateSeries { .. } => vec!["generate_series".into()],
            Plan::Unnest {
                func, ordinality, ..
            } => {
                let mut names = vec![func.to_string()];
                if *ordinality {
                    names.push("ordinality".into());
                }
                names
            }
            Plan::SequenceState { .. } => {
                vec!["last_value".into(), "log_cnt".into(), "is_called".into()]
            }
            Plan::Project { input, exprs } => {
                let inner = self.names(input);
                exprs.iter().map(|e| deparse(&self.cx, e, &inner)).collect()
            }
            Plan::NestedLoopJoin {
                left, right, kind, ..
            }
            | Plan::HashJoin {
                left, right, kind, ..
            }
            | Plan::MergeJoin {
                left, right, kind, ..
            } => {
                let mut n = self.names(left);
                if !kind.left_only() {
                    n.extend(self.names(right));
                }
                n
            }
            Plan::IndexNestLoop {
                left, table, kind, ..
            } => {
                let mut n = self.names(left);
                if !kind.left_only() {
                    n.extend(self.table_names(table));
                }
                n
            }
            Plan::Aggregate {
                input,
                group_by,
                aggs,
                ..
            } => {
                let inner = self.names(input);
                group_by
                    .iter()
                    .map(|e| deparse(&self.cx, e, &inner))
                    .chain(aggs.iter().map(|a| deparse_agg(&self.cx, a, &inner)))
                    .collect()
            }
            Plan::LockRows { input, .. } => {
                let mut n = self.names(input);
                n.push("ctid".into());
                n
            }
            Plan::Result { input, width, .. } => match input {
                Some(i) => self.names(i),
                None => (1..=*width).map(|i| format!("${i}")).collect(),
            },
            // A partitioned table's partitions: its columns, by the name the query gave it.
            Plan::Append {
                parent: Some(t), ..
            } => self.table_names(t),
            Plan::Append { inputs, .. } => inputs.first().map_or(vec![], |p| self.names(p)),
            // The parent's row projected, by the name the query gave the parent.
            Plan::MergeAppend {
                parent: Some(parent),
                exprs,
                ..
            } => {
                let inner = self.table_names(parent);
                exprs.iter().map(|e| deparse(&self.cx, e, &inner)).collect()
            }
            Plan::MergeAppend { inputs, .. } => inputs.first().map_or(vec![], |p| self.names(p)),
            Plan::SetOp { left, .. } => self.names(left),
            Plan::Filter { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Distinct { input }
            | Plan::Limit { input, .. } => self.names(input),
        }
    }

    /// A Sort's or Merge Append's keys as PostgreSQL shows them, over `names` (the
    /// columns of `input`'s rows).
    fn sort_keys(
        &self,
        keys: &[sql::bound::SortKey],
        names: &[String],
        input: &Plan,
    ) -> Vec<String> {
        keys.iter()
            .map(|k| {
                let mut s = deparse(&self.cx, &k.expr, names);
                // A key its input computes is shown in parentheses: PostgreSQL's Sort
                // reads it as a Var over a non-Var of its input's.
                let var = matches!(k.expr.kind, ExprKind::Column(i) if column_is_var(input, i));
                if !var {
                    s = format!("({s})");
                }
                if k.desc {
                    s.push_str(" DESC");
                }
                if k.nulls_first != k.desc {
                    s.push_str(if k.nulls_first {
                        " NULLS FIRST"
                    } else {
                        " NULLS LAST"
                    });
                }
                s
            })
            .collect()
    }

    /// The node `plan` shows as (numbering every node, shown or folded), with the
    /// subqueries its own expressions run.
    fn shown(&mut self, plan: &Plan) -> Shown {
        // Not met: `explain` unfolds them first (`planner::partition::unfold_partition_scans`).
        if let Some(append) = plan.partition_scans_append() {
            return self.shown(&append);
        }
        let mut links = Vec::new();
        for (exprs, over) in node_exprs(plan) {
            // A subplan's outer values are shown qualified, as PostgreSQL shows the
            // outer column a Param stands for.
            let qualify = std::mem::replace(&mut self.qualify, true);
            let names = match over {
                Over::Node => self.names(plan),
                Over::Input(p) => self.names(p),
                Over::Table(t) => self.table_names(t),
                Over::Nothing => vec![],
            };
            self.qualify = qualify;
            for e in exprs {
                e.walk(&mut |n| {
                    if let ExprKind::SubLink(link) = &n.kind {
                        links.push((link.as_ref(), names.clone()));
                    }
                });
            }
        }
        // Numbered before the node's lines are made, which name them; each placed under
        // the first node whose expressions run it.
        let mut new = Vec::new();
        for (link, names) in links {
            let n = subplan_number(&self.cx, &link.query);
            let key = std::sync::Arc::as_ptr(&link.query);
            if self.cx.subplans.borrow_mut().placed.insert(key) {
                new.push((n, link, names));
            }
        }
        let mut shown = self.shown_node(plan);
        // A Filter or a projection shows on the node below (which has its Output line).
        if self.verbose && !matches!(plan, Plan::Filter { .. } | Plan::Project { .. }) {
            let line = self.output(plan);
            shown.details.insert(0, line);
        }
        for (n, link, names) in new {
            let outer = link
                .args
                .iter()
                .map(|a| deparse(&self.cx, a, &names))
                .collect();
            let Some(plan) = self.plans.plan(&link.query) else {
                continue;
            };
            self.cx.subplans.borrow_mut().outer.push(outer);
            self.in_subplan += 1;
            // InitPlans of the subquery's own expressions go on its top node.
            let outer_inits = std::mem::take(&mut self.initplans);
            let mut sub = self.shown(&plan);
            sub.initplans
                .append(&mut std::mem::replace(&mut self.initplans, outer_inits));
            self.in_subplan -= 1;
            self.cx.subplans.borrow_mut().outer.pop();
            match init_param(&self.cx, link) {
                Some(k) => self
                    .initplans
                    .push((format!("InitPlan {n} (returns ${k})"), sub)),
                None => shown.subplans.push((format!("SubPlan {n}"), sub)),
            }
        }
        shown
    }

    fn shown_node(&mut self, plan: &Plan) -> Shown {
        let stats = self.take();
        let estimate = self.estimator.map(|e| e.estimate(plan));
        let node = |header: String, details: Vec<String>, children: Vec<Shown>| Shown {
            header,
            details,
            estimate,
            stats,
            children,
            subplans: vec![],
            initplans: vec![],
        };
        match plan {
            Plan::BitmapHeapScan {
                table,
                bitmap,
                recheck,
                filter,
                ..
            } => {
                let names = self.scan_names(plan);
                let mut recheck_conds = Vec::new();
                split_and(recheck, &mut recheck_conds);
                let mut details = vec![format!(
                    "Recheck Cond: {}",
                    deparse_and(&self.cx, &recheck_conds, &names)
                )];
                if let Some(f) = filter {
                    details.push(format!("Filter: {}", deparse(&self.cx, f, &names)));
                    self.removed(&mut details, stats);
                }
                if let Some((exact, lossy)) = stats.and_then(|s| s.heap_blocks) {
                    let mut line = String::from("Heap Blocks:");
                    if exact > 0 {
                        line.push_str(&format!(" exact={exact}"));
                    }
                    if lossy > 0 {
                        line.push_str(&format!(" lossy={lossy}"));
                    }
                    if exact > 0 || lossy > 0 {
                        details.push(line);
                    }
                }
                let rows = estimate.as_ref().map_or(0.0, |e| e.rows);
                let child = self.bitmap_shown(table, bitmap, &names, rows);
                node(
                    format!("Bitmap Heap Scan on {}", self.scanned(table)),
                    details,
                    vec![child],
                )
            }
            Plan::SeqScan { table, filter, .. } => {
                let names = self.scan_names(plan);
                let mut details = Vec::new();
                if let Some(f) = filter {
                    details.push(format!("Filter: {}", deparse(&self.cx, f, &names)));
                    self.removed(&mut details, stats);
                }
                node(
                    format!("Seq Scan on {}", self.scanned(table)),
                    details,
                    vec![],
                )
            }
            Plan::IndexScan {
                table,
                index,
                lower,
                upper,
                filter,
                backward,
                only,
                ..
            } => {
                let names = self.scan_names(plan);
                let mut details = Vec::new();
                if let Some(f) = filter {
                    let keys: Vec<Expr> = index
                        .exprs
                        .iter()
                        .filter_map(|x| {
                            let s = self.session;
                            sql::binder::bind_index_expr(&s.catalog, table, &x.text, s.info).ok()
                        })
                        .collect();
                    let (cond, rest) = index_conditions(f, table, index, &keys, lower, upper);
                    if !cond.is_empty() {
                        details.push(format!(
                            "Index Cond: {}",
                            deparse_and(&self.cx, &cond, &names)
                        ));
                    }
                    if !rest.is_empty() {
                        details.push(format!("Filter: {}", deparse_and(&self.cx, &rest, &names)));
                        self.removed(&mut details, stats);
                    }
                }
                if let Some(fetches) = stats.and_then(|s| s.heap_fetches) {
                    details.push(format!("Heap Fetches: {fetches}"));
                }
                let dir = if *backward { " Backward" } else { "" };
                let what = if *only {
                    "Index Only Scan"
                } else {
                    "Index Scan"
                };
                node(
                    format!(
                        "{what}{dir} using {} on {}",
                        index.name,
                        self.scanned(table)
                    ),
                    details,
                    vec![],
                )
            }
            // A lookup by the view's key shows as PostgreSQL's scan of its catalog
            // index.
            Plan::SystemView {
                view,
                key: Some(key),
                ..
            } if view.key().is_some() => {
                let (col, index) = view.key().expect("a keyed view");
                let column = view.columns().get(col).map_or("", |(n, _)| n);
                let cond = format!("Index Cond: ({column} = {})", deparse(&self.cx, key, &[]));
                node(
                    format!("Index Scan using {index} on {}", view.name()),
                    vec![cond],
                    vec![],
                )
            }
            Plan::SystemView { view, .. } => {
                node(format!("Function Scan on {}", view.name()), vec![], vec![])
            }
            Plan::SequenceState { seq } => node(
                format!("Seq Scan on {}", self.relation(&seq.name)),
                vec![],
                vec![],
            ),
            // Unfolded before `shown` reaches it.
            Plan::PartitionScans { .. } => node("Append".into(), vec![], vec![]),
            Plan::Values { rows, .. } if rows.len() == 1 => node("Result".into(), vec![], vec![]),
            Plan::Values { .. } => node("Values Scan on \"*VALUES*\"".into(), vec![], vec![]),
            Plan::GenerateSeries { start, stop, step } if self.verbose => {
                let args: Vec<String> = [Some(start), Some(stop), step.as_ref()]
                    .into_iter()
                    .flatten()
                    .map(|e| deparse(&self.cx, e, &[]))
                    .collect();
                node(
                    "Function Scan on pg_catalog.generate_series".into(),
                    vec![format!(
                        "Function Call: generate_series({})",
                        args.join(", ")
                    )],
                    vec![],
                )
            }
            Plan::GenerateSeries { .. } => {
                node("Function Scan on generate_series".into(), vec![], vec![])
            }
            Plan::Unnest { func, array, .. } if self.verbose => node(
                format!("Function Scan on pg_catalog.{func}"),
                vec![format!(
                    "Function Call: {func}({})",
                    deparse(&self.cx, array, &[])
                )],
                vec![],
            ),
            Plan::Unnest { func, .. } => node(format!("Function Scan on {func}"), vec![], vec![]),
            Plan::Filter { input, predicate } => {
                // Shown on the node below, as PostgreSQL places a qual on the node that
                // produces the rows.
                let names = self.scan_names(input);
                let mut s = self.shown(input);
                s.details
                    .push(format!("Filter: {}", deparse(&self.cx, predicate, &names)));
                self.removed(&mut s.details, stats);
                if stats.is_some() {
                    s.stats = stats;
                }
                s.estimate = estimate;
                s
            }
            Plan::Project { input, .. } => {
                let mut s = self.shown(input);
                if stats.is_some() {
                    s.stats = stats;
                }
                s.estimate = estimate;
                // The node below computes the projection: its Output is the projection's.
                if self.verbose && !s.details.is_empty() {
                    s.details[0] = self.output(plan);
                }
                s
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
                let mut names = self.names(left);
                names.extend(self.names(right));
                let mut details: Vec<String> = Vec::new();
                if self.verbose
                    && lateral.is_none()
                    && planner::inner_unique(*kind, right, left.width(), on.as_ref())
                {
                    details.push("Inner Unique: true".to_string());
                }
                details.extend(
                    on.iter()
                        .map(|e| format!("Join Filter: {}", deparse(&self.cx, e, &names))),
                );
                self.join_removed(&mut details, stats);
                let l = self.shown(left);
                if let Some(args) = lateral {
                    // The right side runs again for each left row, reading its values
                    // (named as PostgreSQL names a Param's outer column); its nodes are
                    // not counted, as a subquery's are not.
                    let qualify = std::mem::replace(&mut self.qualify, true);
                    let left_names = self.names(left);
                    self.qualify = qualify;
                    let outer = args
                        .iter()
                        .map(|a| deparse(&self.cx, a, &left_names))
                        .collect();
                    self.cx.subplans.borrow_mut().outer.push(outer);
                    self.in_subplan += 1;
                    let r = self.shown(right);
                    self.in_subplan -= 1;
                    self.cx.subplans.borrow_mut().outer.pop();
                    return node(join_name("Nested Loop", *kind), details, vec![l, r]);
                }
                if !materialize {
                    let r = self.shown(right);
                    return node(join_name("Nested Loop", *kind), details, vec![l, r]);
                }
                // The inner side read once and kept, by a Materialize numbered before it.
                let stats = self.take();
                let r = self.shown(right);
                let inner = Shown {
                    header: "Materialize".into(),
                    details: if self.verbose {
                        vec![self.output(right)]
                    } else {
                        vec![]
                    },
                    estimate: self.estimator.map(|e| e.materialize(right)),
                    stats,
                    children: vec![r],
                    subplans: vec![],
                    initplans: vec![],
                };
                node(join_name("Nested Loop", *kind), details, vec![l, inner])
            }
            Plan::HashJoin {
                left,
                right,
                kind,
                hash_conds,
                on,
                ..
            } => {
                let mut details =
                    self.keyed_join_details(left, right, *kind, "Hash", hash_conds, on);
                self.join_removed(&mut details, stats);
                let l = self.shown(left);
                let r = self.shown(right);
                // The Hash node reads the right side into the table: PostgreSQL's Hash,
                // costed as its input, all of it before the first row.
                let mut hash_details = if self.verbose {
                    vec![self.output(right)]
                } else {
                    vec![]
                };
                if let Some(h) = stats.and_then(|s| s.memory) {
                    hash_details.push(format!(
                        "Buckets: {}  Batches: {}  Memory Usage: {}kB",
                        h.buckets,
                        h.batches,
                        h.peak.div_ceil(1024)
                    ));
                }
                let hash = Shown {
                    header: "Hash".into(),
                    details: hash_details,
                    estimate: self.estimator.map(|e| {
                        let r = e.estimate(right);
                        planner::estimate::Estimate {
                            startup: r.total,
                            ..r
                        }
                    }),
                    stats: r.stats,
                    children: vec![r],
                    subplans: vec![],
                    initplans: vec![],
                };
                node(join_name("Hash", *kind), details, vec![l, hash])
            }
            Plan::MergeJoin {
                left,
                right,
                kind,
                merge_conds,
                on,
                ..
            } => {
                let mut details =
                    self.keyed_join_details(left, right, *kind, "Merge", merge_conds, on);
                self.join_removed(&mut details, stats);
                let children = vec![self.shown(left), self.shown(right)];
                node(join_name("Merge", *kind), details, children)
            }
            Plan::IndexNestLoop {
                left,
                table,
                index,
                outer_key,
                more_keys,
                inner_filter,
                on,
                kind,
                ..
            } => {
                let left_names = self.names(left);
                let l = self.shown(left);
                // The inner scan's own quals name its columns bare (qualified under
                // VERBOSE); the outer value it looks up is qualified (PostgreSQL shows the
                // Param's outer column).
                let bare = column_names(table, self.verbose);
                // The rest of the join condition shows as the inner scan's filter, after
                // its own conditions: PostgreSQL moves such join clauses into the
                // parameterized scan (its Filter), the outer columns as Params.
                let mut joined_bare = left_names.clone();
                joined_bare.extend(bare.iter().cloned());
                let mut filter: Vec<String> = Vec::new();
                if let Some(f) = inner_filter {
                    let mut parts = Vec::new();
                    split_and(f, &mut parts);
                    filter.extend(parts.iter().map(|e| deparse(&self.cx, e, &bare)));
                }
                if let Some(on) = on {
                    let mut parts = Vec::new();
                    split_and(on, &mut parts);
                    filter.extend(parts.iter().map(|e| deparse(&self.cx, e, &joined_bare)));
                }
                let details = Vec::new();
                let first = index.columns.first().copied().unwrap_or_default();
                let key_col = match catalog::IndexDesc::expression(first) {
                    // An expression key, as the index's expression over the table's row.
                    Some(k) => index
                        .exprs
                        .get(k)
                        .and_then(|x| {
                            let s = self.session;
                            sql::binder::bind_index_expr(&s.catalog, table, &x.text, s.info).ok()
                        })
                        .map(|e| deparse(&self.cx, &e, &bare))
                        .unwrap_or_default(),
                    None => bare.get(first).cloned().unwrap_or_default(),
                };
                // Each key column the lookup fixes, `(col = outer value)`.
                let mut conds = vec![format!(
                    "({key_col} = {})",
                    deparse(&self.cx, outer_key, &left_names)
                )];
                for ((outer, _), col) in more_keys.iter().zip(index.columns.iter().skip(1)) {
                    conds.push(format!(
                        "({} = {})",
                        bare.get(*col).cloned().unwrap_or_default(),
                        deparse(&self.cx, outer, &left_names)
                    ));
                }
                let cond = match &conds[..] {
                    [one] => one.clone(),
                    many => format!("({})", many.join(" AND ")),
                };
                let mut inner_details = vec![format!("Index Cond: {cond}")];
                if self.verbose {
                    let names = live_names(table, column_names(table, self.multi));
                    inner_details.insert(0, format!("Output: {}", names.join(", ")));
                }
                match &filter[..] {
                    [] => {}
                    [one] => inner_details.push(format!("Filter: {one}")),
                    many => inner_details.push(format!("Filter: ({})", many.join(" AND "))),
                }
                // The lookups run inside the join's operator, which counts them as the
                // nodes numbered after the outer side (`exec::index_nest_loop::InnerCounts`).
                let lookup = |r: &mut Self, header: String, estimate| {
                    let stats = r.take();
                    let mut details = inner_details.clone();
                    r.removed(&mut details, stats);
                    Shown {
                        header,
                        details,
                        estimate,
                        stats,
                        children: vec![],
                        subplans: vec![],
                        initplans: vec![],
                    }
                };
                let inner = if table.partition_key.is_some() {
                    // A partitioned table: its partitions' lookups, as PostgreSQL's Append
                    // of parameterized index scans, each partition named by its place.
                    let catalog = &self.session.catalog;
                    let leaves =
                        planner::partition::leaves_in(catalog, table, inner_filter.as_ref());
                    let base = table.shown_name();
                    let listed: Vec<(String, std::sync::Arc<TableDesc>, &catalog::IndexDesc)> =
                        leaves
                            .iter()
                            .enumerate()
                            .filter_map(|(k, leaf)| {
                                let ix =
                                    planner::partition::leaf_index(catalog, table, index, leaf)?;
                                let mut named = (**leaf).clone();
                                named.alias = Some(if leaves.len() == 1 {
                                    base.to_string()
                                } else {
                                    format!("{base}_{}", k + 1)
                                });
                                Some((
                                    format!(
                                        "Index Scan using {} on {}",
                                        ix.name,
                                        self.scanned(&named)
                                    ),
                                    leaf.clone(),
                                    ix,
                                ))
                            })
                            .collect();
                    let append_stats = if listed.len() > 1 { self.take() } else { None };
                    let mut scans: Vec<Shown> = listed
                        .into_iter()
                        .map(|(header, leaf, ix)| {
                            let estimate = self
                                .estimator
                                .map(|e| e.inner_partition_scan(plan, &leaf, ix));
                            lookup(self, header, estimate)
                        })
                        .collect();
                    match scans.len() {
                        1 => scans.pop().expect("one"),
                        _ => Shown {
                            header: "Append".into(),
                            details: Vec::new(),
                            estimate: self.estimator.map(|e| e.inner_index_scan(plan)),
                            stats: append_stats,
                            children: scans,
                            subplans: vec![],
                            initplans: vec![],
                        },
                    }
                } else {
                    let header =
                        format!("Index Scan using {} on {}", index.name, self.scanned(table));
                    let estimate = self.estimator.map(|e| e.inner_index_scan(plan));
                    lookup(self, header, estimate)
                };
                node(join_name("Nested Loop", *kind), details, vec![l, inner])
            }
            Plan::Aggregate {
                input,
                group_by,
                sorted,
                dependent,
                split,
                ..
            } => {
                let names = self.names(input);
                let child = self.shown(input);
                // The group key: the columns the others determine are not in it.
                let group_by = planner::group_keys(group_by, dependent);
                let part = match split {
                    planner::AggSplit::Whole => "",
                    planner::AggSplit::Partial => "Partial ",
                    planner::AggSplit::Final => "Finalize ",
                };
                if *sorted && !group_by.is_empty() {
                    let keys: Vec<String> = group_by
                        .iter()
                        .map(|e| deparse(&self.cx, e, &names))
                        .collect();
                    node(
                        format!("{part}GroupAggregate"),
                        vec![format!("Group Key: {}", keys.join(", "))],
                        vec![child],
                    )
                } else if group_by.is_empty() {
                    node(format!("{part}Aggregate"), vec![], vec![child])
                } else {
                    let keys: Vec<String> = group_by
                        .iter()
                        .map(|e| deparse(&self.cx, e, &names))
                        .collect();
                    let mut details = vec![format!("Group Key: {}", keys.join(", "))];
                    if let Some(m) = stats.and_then(|s| s.memory) {
                        details.push(hash_batches(&m));
                    }
                    node(format!("{part}HashAggregate"), details, vec![child])
                }
            }
            Plan::Sort { input, keys } => {
                let names = self.names(input);
                let child = self.shown(input);
                let keys = self.sort_keys(keys, &names, input);
                let mut details = vec![format!("Sort Key: {}", keys.join(", "))];
                if let Some(m) = stats.and_then(|s| s.memory)
                    && stats.is_some_and(|s| s.executed)
                {
                    details.push(if m.disk > 0 {
                        format!(
                            "Sort Method: external merge  Disk: {}kB",
                            m.disk.div_ceil(1024)
                        )
                    } else {
                        format!(
                            "Sort Method: {}  Memory: {}kB",
                            if m.top_n {
                                "top-N heapsort"
                            } else {
                                "quicksort"
                            },
                            m.peak.div_ceil(1024)
                        )
                    });
                }
                node("Sort".into(), details, vec![child])
            }
            Plan::Distinct { input } => {
                let names = self.names(input);
                let child = self.shown(input);
                let mut details = vec![format!("Group Key: {}", names.join(", "))];
                if let Some(m) = stats.and_then(|s| s.memory) {
                    details.push(hash_batches(&m));
                }
                node("HashAggregate".into(), details, vec![child])
            }
            Plan::Limit { input, .. } => {
                let mut child = self.shown(input);
                if let Some(e) = self.estimator.and_then(|e| e.bounded_sort(input, plan)) {
                    child.estimate = Some(e);
                }
                node("Limit".into(), vec![], vec![child])
            }
            // Pruned as it starts: the partitions kept, named by their place among them
            // (as PostgreSQL's EXPLAIN names what is left), and how many went.
            Plan::Append {
                inputs,
                prune: Some(p),
                ..
            } => {
                // A generic plan's `$n` (EXPLAIN EXECUTE) are this execution's values.
                let (session, params) = (self.session, self.params);
                let resolve = |e: &sql::bound::Expr| {
                    planner::partition::known_at_start(e)
                        .then(|| crate::eval::eval_with_params(e, session, params).ok())
                        .flatten()
                };
                let kept = crate::exec::surviving_with(&session.catalog, p, &resolve);
                let base = p.table.shown_name().to_string();
                let children = kept
                    .iter()
                    .enumerate()
                    .filter_map(|(k, &i)| inputs.get(i).map(|c| (k, c)))
                    .map(|(k, c)| self.shown(&renamed(c, &format!("{base}_{}", k + 1))))
                    .collect();
                let removed = inputs.len() - kept.len();
                let details = if removed > 0 {
                    vec![format!("Subplans Removed: {removed}")]
                } else {
                    vec![]
                };
                node("Append".into(), details, children)
            }
            // A partitioned table's partitions, named by their place (`t_1`, `t_2`).
            Plan::Append {
                inputs,
                parent: Some(t),
                ..
            } => {
                let base = t.shown_name().to_string();
                let children = inputs
                    .iter()
                    .enumerate()
                    .map(|(k, c)| self.shown(&renamed(c, &format!("{base}_{}", k + 1))))
                    .collect();
                node("Append".into(), vec![], children)
            }
            Plan::Append { inputs, .. } => {
                let children = inputs.iter().map(|p| self.shown(p)).collect();
                node("Append".into(), vec![], children)
            }
            // A partitioned table's partitions merged by the keys, named by their place.
            Plan::MergeAppend {
                inputs,
                keys,
                parent,
                ..
            } => {
                let names = self.names(plan);
                let keys = match inputs.first() {
                    Some(first) => self.sort_keys(keys, &names, first),
                    None => Vec::new(),
                };
                let children = inputs
                    .iter()
                    .enumerate()
                    .map(|(k, c)| match parent {
                        Some(parent) => {
                            self.shown(&renamed(c, &format!("{}_{}", parent.shown_name(), k + 1)))
                        }
                        None => self.shown(c),
                    })
                    .collect();
                node(
                    "Merge Append".into(),
                    vec![format!("Sort Key: {}", keys.join(", "))],
                    children,
                )
            }
            Plan::SetOp {
                intersect,
                all,
                left,
                right,
            } => {
                let children = vec![self.shown(left), self.shown(right)];
                let kind = if *intersect { "Intersect" } else { "Except" };
                let all = if *all { " All" } else { "" };
                node(format!("HashSetOp {kind}{all}"), vec![], children)
            }
            Plan::Result { input, filter, .. } => {
                let names = match input {
                    Some(i) => self.names(i),
                    None => vec![],
                };
                let details = vec![format!(
                    "One-Time Filter: {}",
                    deparse(&self.cx, filter, &names)
                )];
                let children: Vec<Shown> = input.iter().map(|i| self.shown(i)).collect();
                // Over a row made from nothing (a Result itself), one Result, as
                // PostgreSQL makes one node of the two.
                if let [only] = &children[..]
                    && only.header == "Result"
                    && only.children.is_empty()
                {
                    let mut merged = children.into_iter().next().expect("one child");
                    merged.details.splice(0..0, details);
                    merged.estimate = estimate;
                    merged.stats = stats;
                    return merged;
                }
                node("Result".into(), details, children)
            }
            Plan::LockRows { input, .. } => {
                let child = self.shown(input);
                node("LockRows".into(), vec![], vec![child])
            }
        }
    }

    /// A bitmap heap scan's bitmap, node by node: Bitmap Index Scans, BitmapOrs and
    /// BitmapAnds. They run inside the scan's operator, which counts them under ANALYZE
    /// (numbered after the scan, in pre-order).
    fn bitmap_shown(
        &mut self,
        table: &std::sync::Arc<TableDesc>,
        q: &planner::BitmapQual,
        names: &[String],
        rows: f64,
    ) -> Shown {
        // Numbered in pre-order after the heap scan, as the scan's operator counts them.
        let stats = self.take();
        let (header, details, children) = match q {
            planner::BitmapQual::Index { index, conds, .. } => {
                let conds: Vec<&Expr> = conds.iter().collect();
                // A partial index read whole has no condition of its own.
                let details = if conds.is_empty() {
                    vec![]
                } else {
                    vec![format!(
                        "Index Cond: {}",
                        deparse_and(&self.cx, &conds, names)
                    )]
                };
                (
                    format!("Bitmap Index Scan on {}", index.name),
                    details,
                    vec![],
                )
            }
            planner::BitmapQual::Or(parts) | planner::BitmapQual::And(parts) => (
                if matches!(q, planner::BitmapQual::Or(_)) {
                    "BitmapOr".into()
                } else {
                    "BitmapAnd".into()
                },
                vec![],
                parts
                    .iter()
                    .map(|p| self.bitmap_shown(table, p, names, rows))
                    .collect(),
            ),
        };
        Shown {
            header,
            details,
            estimate: self.estimator.map(|e| e.bitmap_node(table, q, rows)),
            stats,
            children,
            subplans: vec![],
            initplans: vec![],
        }
    }

    /// ANALYZE's `Rows Removed by Join Filter`, after the `Join Filter` line (none where
    /// it is zero, as PostgreSQL's text format).
    fn join_removed(&self, details: &mut Vec<String>, stats: Option<NodeStats>) {
        if let Some(st) = stats
            && st.executed
            && st.join_removed > 0
            && let Some(at) = details.iter().position(|d| d.starts_with("Join Filter: "))
        {
            let removed = per_loop(st.join_removed, st.loops.max(1));
            details.insert(at + 1, format!("Rows Removed by Join Filter: {removed}"));
        }
    }

    /// ANALYZE's `Rows Removed by Filter` (none where it is zero, as PostgreSQL's text
    /// format).
    fn removed(&self, details: &mut Vec<String>, stats: Option<NodeStats>) {
        if let Some(st) = stats
            && st.executed
            && st.removed > 0
        {
            let removed = per_loop(st.removed, st.loops.max(1));
            details.push(format!("Rows Removed by Filter: {removed}"));
        }
    }
}

/// Split an index scan's filter into what its bounds cover (PostgreSQL's Index Cond:
/// comparisons of the key columns the bounds use with constants) and the rest.
fn index_conditions<'e>(
    filter: &'e Expr,
    table: &TableDesc,
    index: &catalog::IndexDesc,
    keys: &[Expr],
    lower: &std::ops::Bound<Vec<Expr>>,
    upper: &std::ops::Bound<Vec<Expr>>,
) -> (Vec<&'e Expr>, Vec<&'e Expr>) {
    use std::ops::Bound;
    let len = |b: &Bound<Vec<Expr>>| match b {
        Bound::Unbounded => 0,
        Bound::Included(k) | Bound::Excluded(k) => k.len(),
    };
    let used = len(lower).max(len(upper));
    let key_cols = &index.columns[..used.min(index.columns.len())];
    let mut conjuncts = Vec::new();
    split_and(filter, &mut conjuncts);
    conjuncts.into_iter().partition(|c| match &c.kind {
        ExprKind::Binary(
            BinaryOp::Eq | BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq,
            l,
            r,
        ) => {
            // A key column: a column, or one of the index's expressions.
            let col = |e: &Expr| match &e.kind {
                ExprKind::Column(i) => Some(*i),
                _ => planner::widened_integer_column(e, table)
                    .map(|(i, _)| i)
                    .or_else(|| {
                        let k = keys.iter().position(|x| x == e)?;
                        Some(catalog::EXPRESSION_KEY + k)
                    }),
            };
            match (col(l), col(r)) {
                (Some(i), None) if !r.references_columns() => key_cols.contains(&i),
                (None, Some(i)) if !l.references_columns() => key_cols.contains(&i),
                _ => false,
            }
        }
        // IS NOT NULL of a key column: a scan key (planner::null_key).
        ExprKind::IsNull {
            expr,
            negated: true,
        } => matches!(expr.kind, ExprKind::Column(i) if key_cols.contains(&i)),
        _ => false,
    })
}

/// A write through partitioned table `table`: PostgreSQL's line for each partition its
/// scan reads (`Update on t1 t_1`), and the scan with a partition left alone named so
/// too. Another table: no lines, the scan as it is.
fn partition_targets(
    r: &Renderer<'_>,
    verb: &str,
    table: &TableDesc,
    scan: &Plan,
) -> (Vec<String>, Plan) {
    if table.partition_key.is_none() {
        return (Vec::new(), scan.clone());
    }
    let base = table.shown_name().to_string();
    let scan = match scan {
        Plan::Append { .. } => scan.clone(),
        one => renamed(one, &format!("{base}_1")),
    };
    let mut leaves = Vec::new();
    scanned_tables(&scan, &mut leaves);
    let lines = leaves
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let alias = format!("{base}_{}", k + 1);
            if alias == t.name {
                format!("{verb} on {}", r.relation(&t.name))
            } else {
                format!("{verb} on {} {alias}", r.relation(&t.name))
            }
        })
        .collect();
    (lines, scan)
}

/// The tables `plan` scans, in order.
fn scanned_tables<'p>(plan: &'p Plan, out: &mut Vec<&'p TableDesc>) {
    match plan {
        Plan::SeqScan { table, .. }
        | Plan::IndexScan { table, .. }
        | Plan::BitmapHeapScan { table, .. } => out.push(table),
        other => {
            for child in other.children() {
                scanned_tables(child, out);
            }
        }
    }
}

/// `plan` with its scans' table named `alias` (a partition under an Append of its
/// table's partitions), unless the planner named it already.
fn renamed(plan: &Plan, alias: &str) -> Plan {
    let mut plan = plan.clone();
    rename_scans(&mut plan, alias);
    plan
}

fn rename_scans(plan: &mut Plan, alias: &str) {
    match plan {
        Plan::SeqScan { table, .. }
        | Plan::IndexScan { table, .. }
        | Plan::BitmapHeapScan { table, .. } => {
            if table.alias.is_some() {
                return;
            }
            let mut t = (**table).clone();
            t.alias = Some(alias.to_string());
            *table = std::sync::Arc::new(t);
        }
        other => {
            for child in other.children_mut() {
                rename_scans(child, alias);
            }
        }
    }
}

/// A HashAggregate's line under ANALYZE: its batches (1 plus the files it spilled), its
/// peak memory and, once it spilled, what went to disk.
fn hash_batches(m: &crate::instrument::MemoryUsage) -> String {
    let disk = if m.disk > 0 {
        format!("  Disk Usage: {}kB", m.disk.div_ceil(1024))
    } else {
        String::new()
    };
    format!(
        "Batches: {}  Memory Usage: {}kB{disk}",
        m.batches,
        m.peak.div_ceil(1024)
    )
}
