//! Scans: which way a table's rows are read ([`scan_path`]), and index order for an
//! ORDER BY under a LIMIT ([`ordered_by_index`]).

#[allow(unused_imports)]
use super::*;
use crate::selectivity::RelInfo;

/// A sort of one table's rows by an index's leading columns (after any columns its scan
/// fixes by equality) becomes an index scan in that order when that costs less
/// ([`crate::estimate`]), as PostgreSQL weighs a path already in order against a sort:
/// under a LIMIT (`limit`: its count and offset) by what the first rows cost, which
/// favours the index (the first rows come without reading the rest); without one by the
/// whole result. `ORDER BY` keys must each be in the order of their index column (a
/// forward scan) or each in its reverse, NULLs included (backward). Anything else is
/// returned unchanged, and so is everything under `enable_indexscan = off`.
pub(crate) fn ordered_by_index(
    cx: &PlanContext<'_>,
    plan: Plan,
    limit: Option<(&Option<Expr>, &Option<Expr>)>,
) -> Plan {
    if !cx.settings.enable_indexscan {
        return plan;
    }
    match plan {
        Plan::Project { input, exprs } => Plan::Project {
            input: Box::new(ordered_by_index(cx, *input, limit)),
            exprs,
        },
        Plan::Sort { input, keys } => match *input {
            Plan::Project { input: scan, exprs } if matches!(&*scan, Plan::SeqScan { table, .. } if table.partition_key.is_some()) => {
                crate::partition::ordered_append(cx, *scan, exprs, keys, limit)
            }
            Plan::Project { input: scan, exprs } => match index_order(cx, &scan, &exprs, &keys) {
                Some(ordered) => {
                    let indexed = Plan::Project {
                        input: Box::new(ordered),
                        exprs: exprs.clone(),
                    };
                    let sorted = Plan::Sort {
                        input: Box::new(Plan::Project { input: scan, exprs }),
                        keys,
                    };
                    if in_order_is_cheaper(cx, &indexed, &sorted, limit) {
                        indexed
                    } else {
                        sorted
                    }
                }
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

/// Does reading in index order (`indexed`) cost less than sorting (`sorted`), for the
/// rows a LIMIT keeps if there is one?
pub(crate) fn in_order_is_cheaper(
    cx: &PlanContext<'_>,
    indexed: &Plan,
    sorted: &Plan,
    limit: Option<(&Option<Expr>, &Option<Expr>)>,
) -> bool {
    let est = crate::estimate::Estimator::new(*cx);
    let cost = |p: &Plan| match limit {
        Some((limit, offset)) => {
            let wrapped = Plan::Limit {
                input: Box::new(p.clone()),
                limit: limit.clone(),
                offset: offset.clone(),
            };
            crate::estimate::Estimator::new(*cx)
                .estimate(&wrapped)
                .total
        }
        None => est.estimate(p).total,
    };
    cost(indexed) < cost(sorted)
}

/// The table a scan of one table reads, and the whole condition it applies: its filter;
/// for a partial index's scan, with the conditions its predicate stands for (left out of
/// the filter); for a bitmap scan, its recheck and its filter. `None` for other plans.
pub(crate) fn table_condition<'p>(
    cx: &PlanContext<'_>,
    scan: &'p Plan,
) -> Option<(&'p Arc<TableDesc>, Option<Expr>)> {
    Some(match scan {
        Plan::SeqScan { table, filter, .. } => (table, filter.clone()),
        Plan::IndexScan {
            table,
            filter,
            index,
            ..
        } => (
            table,
            crate::predicate::scan_condition(cx, table, index, filter.as_ref()),
        ),
        Plan::BitmapHeapScan {
            table,
            recheck,
            filter,
            ..
        } => (
            table,
            crate::conjoin(
                [recheck.clone()]
                    .into_iter()
                    .chain(filter.clone())
                    .collect(),
            ),
        ),
        _ => return None,
    })
}

/// The scan `scan` reads in the order of `keys` (sort keys over `exprs`, the projection
/// above it), through an index, or `None`. Keys on columns the scan's conditions fix by
/// equality order nothing and are dropped (PostgreSQL's redundant pathkeys); the rest
/// must be an index's columns after a leading run of fixed ones, each in its column's
/// order (a forward scan) or each in the reverse (backward). The scan's own index is
/// preferred, then the oldest that fits.
pub(crate) fn index_order(
    cx: &PlanContext<'_>,
    scan: &Plan,
    exprs: &[Expr],
    keys: &[SortKey],
) -> Option<Plan> {
    let (table, filter) = table_condition(cx, scan)?;
    let current = match scan {
        Plan::IndexScan { index, .. } => Some(index),
        _ => None,
    };
    let mut conjuncts = Vec::new();
    if let Some(f) = &filter {
        split_and(f, &mut conjuncts);
    }
    let quals = index_quals(table, &conjuncts);
    let fixed = |c: usize| quals.iter().any(|q| q.0 == c && q.1 == BinaryOp::Eq);
    // Each key a column, or an expression over the row an expression index may hold.
    let mut wanted: Vec<(Key<'_>, &SortKey)> = Vec::with_capacity(keys.len());
    for k in keys {
        let ExprKind::Column(out) = k.expr.kind else {
            return None;
        };
        let e = exprs.get(out)?;
        match e.kind {
            ExprKind::Column(c) if !indexable(table.columns[c].ty) => return None,
            ExprKind::Column(c) if fixed(c) => {}
            ExprKind::Column(c) => wanted.push((Key::Column(c), k)),
            _ if indexable(e.ty) && e.references_columns() => wanted.push((Key::Expr(e), k)),
            _ => return None,
        }
    }
    // Every key is fixed: the rows are in any order the query can ask.
    let Some((first, _)) = wanted.first() else {
        return Some(scan.clone());
    };
    let first = match first {
        Key::Column(c) => *c,
        // An expression index is led by the first column its expression reads.
        Key::Expr(e) => first_column(e)?,
    };
    let with_exprs = wanted.iter().any(|(w, _)| matches!(w, Key::Expr(_)));
    // Which way `index` reads in the wanted order, or `None`.
    let direction = |index: &IndexDesc| -> Option<bool> {
        let skip = index.columns.iter().take_while(|&&c| fixed(c)).count();
        let cols = index.columns.get(skip..skip + wanted.len())?;
        let index_exprs = if with_exprs && !index.exprs.is_empty() {
            bound_index_exprs(cx, table, index)
        } else {
            Vec::new()
        };
        let mut backward = None;
        for (i, ((w, k), &col)) in wanted.iter().zip(cols).enumerate() {
            let same = match w {
                Key::Column(c) => *c == col,
                Key::Expr(e) => IndexDesc::expression(col)
                    .and_then(|x| index_exprs.get(x))
                    .is_some_and(|x| x.as_ref() == Some(*e)),
            };
            if !same {
                return None;
            }
            let (desc, nulls_first) = index.order.column(skip + i);
            let b = if (k.desc, k.nulls_first) == (desc, nulls_first) {
                false
            } else if (k.desc, k.nulls_first) == (!desc, !nulls_first) {
                true
            } else {
                return None;
            };
            if *backward.get_or_insert(b) != b {
                return None;
            }
        }
        backward
    };
    // The scan's own index, then those led by the first wanted column or by a fixed one
    // (L1: no other index is looked at).
    let mut leads: Vec<usize> = vec![first];
    leads.extend(quals.iter().filter(|q| q.1 == BinaryOp::Eq).map(|q| q.0));
    leads.dedup();
    // A partial index serves only where the conditions imply its predicate (rule 11).
    let fits = |i: &IndexDesc| {
        let b = direction(i)?;
        let implied = crate::predicate::usable(cx, table, i, &conjuncts)?;
        Some((b, implied))
    };
    let (index, (backward, implied)) =
        current.and_then(|i| fits(i).map(|f| (i, f))).or_else(|| {
            leads.iter().find_map(|&c| {
                table
                    .indexes_leading(c)
                    .filter(|i| cx.index_usable(i))
                    .find_map(|i| fits(i).map(|f| (i, f)))
            })
        })?;
    // The key range the conditions give it, on its expressions too.
    let quals = if index.exprs.is_empty() {
        quals
    } else {
        [quals, expression_quals(cx, table, index, &conjuncts)].concat()
    };
    let (lower, upper) = match index_candidate(index, &quals) {
        Some(c) => (c.lower, c.upper),
        None => (Bound::Unbounded, Bound::Unbounded),
    };
    Some(Plan::IndexScan {
        table: table.clone(),
        index: index.clone(),
        lower,
        upper,
        filter: filter
            .as_ref()
            .and_then(|f| without(f, &conjuncts, &implied)),
        backward,
        columns: None,
        only: false,
    })
}

/// `filter`, the AND of `conjuncts`, less those at positions `drop` (a partial index's
/// predicate implies them); `None` if none is left.
pub(crate) fn without(filter: &Expr, conjuncts: &[&Expr], drop: &[usize]) -> Option<Expr> {
    if drop.is_empty() {
        return Some(filter.clone());
    }
    conjuncts
        .iter()
        .enumerate()
        .filter(|(i, _)| !drop.contains(i))
        .map(|(_, e)| (*e).clone())
        .reduce(|a, b| {
            Expr::new(
                ExprKind::Binary(BinaryOp::And, Box::new(a), Box::new(b)),
                DataType::Bool,
            )
        })
}

/// (column, operator, constant, conjunct index) for each of `conjuncts` an index can
/// serve: a bare column of an indexable type against a run-time constant of the same type.
pub(crate) fn index_quals(
    table: &TableDesc,
    conjuncts: &[&Expr],
) -> Vec<(usize, BinaryOp, Expr, usize)> {
    let mut quals: Vec<(usize, BinaryOp, Expr, usize)> = Vec::new();
    for (ci, c) in conjuncts.iter().enumerate() {
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
                    widened_integer_column(l, table),
                    widened_integer_column(r, table),
                ) {
                    (Some((i, _)), None) if is_constant(r) => {
                        quals.push((i, *op, (**r).clone(), ci));
                        continue;
                    }
                    (None, Some((i, _))) if is_constant(l) => {
                        quals.push((i, commute(*op), (**l).clone(), ci));
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
                quals.push((col, op, k, ci));
            }
        } else if let ExprKind::IsNull {
            expr,
            negated: true,
        } = &c.kind
            && let ExprKind::Column(col) = expr.kind
            && indexable(table.columns[col].ty)
        {
            // `x IS NOT NULL`: the key range stops before the NULLs (a btree keeps them
            // at one end of the column's order), PostgreSQL's IS NOT NULL scan key.
            quals.push((col, BinaryOp::NotEq, null_key(), ci));
        }
    }
    quals
}

/// In a key bound, the key value NULL itself: the end of the range an IS NOT NULL
/// scan key stops at (`(col, NotEq, null_key())` among [`index_quals`]). A comparison
/// with a NULL value bounds nothing (it is never true); this is no comparison, and the
/// executor keeps it in the key (`exec::bound_values`).
pub fn null_key() -> Expr {
    Expr::new(ExprKind::Const(common::Value::Null), DataType::Unknown)
}

/// Whether `e` is [`null_key`].
pub fn is_null_key(e: &Expr) -> bool {
    e.ty == DataType::Unknown && matches!(e.kind, ExprKind::Const(common::Value::Null))
}

/// For a comparison of an expression over the row (not a bare column) with a constant,
/// the first column the expression reads: where an index over that expression is found
/// (it is led by that column, `IndexDesc::leading_column`).
fn expression_lead(c: &Expr) -> Option<usize> {
    let (e, _, _) = compared_with_constant(c)?;
    if matches!(e.kind, ExprKind::Column(_)) {
        return None;
    }
    first_column(e)
}

/// `c` as (operand, operator, constant) when it compares an expression over the row with
/// a run-time constant by a btree operator, the operand first.
fn compared_with_constant(c: &Expr) -> Option<(&Expr, BinaryOp, &Expr)> {
    let ExprKind::Binary(op, l, r) = &c.kind else {
        return None;
    };
    if !matches!(
        op,
        BinaryOp::Eq | BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq
    ) {
        return None;
    }
    if is_constant(r) && l.references_columns() {
        Some((l, *op, r))
    } else if is_constant(l) && r.references_columns() {
        Some((r, commute(*op), l))
    } else {
        None
    }
}

/// The conditions on `index`'s key expressions among `conjuncts`, as [`index_quals`]
/// gives those on columns: (`EXPRESSION_KEY + k`, operator, constant, conjunct) for
/// each comparison of the index's `k`-th expression, as the query writes it, with a
/// constant of its type (PostgreSQL matches an expression index the same way: the same
/// expression tree).
pub(crate) fn expression_quals(
    cx: &PlanContext<'_>,
    table: &TableDesc,
    index: &IndexDesc,
    conjuncts: &[&Expr],
) -> Vec<(usize, BinaryOp, Expr, usize)> {
    let keys = bound_index_exprs(cx, table, index);
    let mut out = Vec::new();
    for (ci, c) in conjuncts.iter().enumerate() {
        let Some((e, op, k)) = compared_with_constant(c) else {
            continue;
        };
        if let Some(at) = keys.iter().position(|x| x.as_ref() == Some(e))
            && indexable(e.ty)
            && k.ty == e.ty
        {
            out.push((catalog::EXPRESSION_KEY + at, op, k.clone(), ci));
        }
    }
    out
}

/// `index`'s key expressions, bound over `table`'s row and folded as the statement's are
/// (rule 14), to compare with the statement's expressions; `None` for one that no longer
/// binds.
pub(crate) fn bound_index_exprs(
    cx: &PlanContext<'_>,
    table: &TableDesc,
    index: &IndexDesc,
) -> Vec<Option<Expr>> {
    index
        .exprs
        .iter()
        .map(|e| {
            sql::binder::bind_index_expr(
                cx.catalog,
                table,
                &e.text,
                &common::session::SessionInfo::detached(),
            )
            .ok()
            .map(crate::fold::fold)
        })
        .collect()
}

/// A sort key [`index_order`] looks for among an index's keys.
enum Key<'e> {
    Column(usize),
    /// An expression over the row, which an expression index's key may be.
    Expr(&'e Expr),
}

/// The first column (lowest position) `e` reads.
pub(crate) fn first_column(e: &Expr) -> Option<usize> {
    let mut first: Option<usize> = None;
    e.walk(&mut |x| {
        if let ExprKind::Column(i) = x.kind {
            first = Some(first.map_or(i, |f| f.min(i)));
        }
    });
    first
}

/// An index the conjuncts constrain: its key range and the conjuncts it comes from.
pub(crate) struct Candidate<'t> {
    pub(crate) index: &'t IndexDesc,
    /// For a partial index, the conjuncts its predicate implies (no scan of it need test
    /// them again).
    pub(crate) implied: Vec<usize>,
    pub(crate) lower: Bound<Vec<Expr>>,
    pub(crate) upper: Bound<Vec<Expr>>,
    /// The conjuncts (by index into the list `quals` came from) that bound the key.
    pub(crate) used: Vec<usize>,
    /// Every key column is fixed by an equality.
    pub(crate) full_key_equal: bool,
}

/// The key range `quals` ([`index_quals`]) give `index`: equalities on its leading
/// columns, then a range on the next; `None` if they constrain none of it.
pub(crate) fn index_candidate<'t>(
    index: &'t IndexDesc,
    quals: &[(usize, BinaryOp, Expr, usize)],
) -> Option<Candidate<'t>> {
    // Nothing on the leading column: no key range (most indexes of a wide table).
    let first = *index.columns.first()?;
    if !quals.iter().any(|q| q.0 == first) {
        return None;
    }
    let mut prefix = Vec::new();
    let mut used = Vec::new();
    for &col in &index.columns {
        match quals
            .iter()
            .find(|(c, op, _, _)| *c == col && *op == BinaryOp::Eq)
        {
            Some((_, _, k, ci)) => {
                prefix.push(k.clone());
                used.push(*ci);
            }
            None => break,
        }
    }
    let full_key_equal = prefix.len() == index.columns.len();
    let (mut lower, mut upper) = if prefix.is_empty() {
        (Bound::Unbounded, Bound::Unbounded)
    } else {
        (
            Bound::Included(prefix.clone()),
            Bound::Included(prefix.clone()),
        )
    };
    if let Some(&next) = index.columns.get(prefix.len()) {
        // A descending column keeps its greater values first: `>` bounds the scan from
        // above in the index's order, `<` from below.
        let (desc, nulls_first) = index.order.column(prefix.len());
        for (c, op, k, ci) in quals {
            if *c != next || *op == BinaryOp::NotEq {
                continue;
            }
            let mut key = prefix.clone();
            key.push(k.clone());
            let op = if desc { commute(*op) } else { *op };
            let set = match op {
                BinaryOp::Gt if lower_is_prefix(&lower, prefix.len()) => {
                    lower = Bound::Excluded(key);
                    true
                }
                BinaryOp::GtEq if lower_is_prefix(&lower, prefix.len()) => {
                    lower = Bound::Included(key);
                    true
                }
                BinaryOp::Lt if lower_is_prefix(&upper, prefix.len()) => {
                    upper = Bound::Excluded(key);
                    true
                }
                BinaryOp::LtEq if lower_is_prefix(&upper, prefix.len()) => {
                    upper = Bound::Included(key);
                    true
                }
                _ => false,
            };
            if set {
                used.push(*ci);
            }
        }
        // IS NOT NULL bounds the end where the NULLs are, unless a range already does.
        for (c, op, _, ci) in quals {
            if *c != next || *op != BinaryOp::NotEq {
                continue;
            }
            let mut key = prefix.clone();
            key.push(null_key());
            let bound = if nulls_first { &mut lower } else { &mut upper };
            if lower_is_prefix(bound, prefix.len()) {
                *bound = Bound::Excluded(key);
            }
            used.push(*ci);
        }
    }
    (!used.is_empty()).then_some(Candidate {
        index,
        implied: Vec::new(),
        lower,
        upper,
        used,
        full_key_equal,
    })
}

thread_local! {
    /// Indexes `scan_path` has looked at on this thread (for tests of L1: a plan looks
    /// at the indexes its conditions can use, not at every index of the table).
    static INDEXES_EXAMINED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many indexes this thread's planning has looked at so far (rule 4).
pub fn indexes_examined() -> u64 {
    INDEXES_EXAMINED.with(|n| n.get())
}

/// The scan for `table` filtered by `predicate` (planner rule 4), the cheapest by
/// PostgreSQL's cost model ([`crate::cost`]): a sequential scan, or an index scan through an index whose
/// leading columns the predicate's conjuncts constrain (equality on a leading prefix,
/// then a range on the next column). An index whose whole key is fixed by equalities and
/// unique finds at most one row and is taken without costing, unless the table is small
/// enough that a sequential scan may cost less. Each index also offers a
/// bitmap heap scan, and an OR whose every arm an index serves a BitmapOr
/// ([`bitmap_ors`]). `enable_indexscan`, `enable_bitmapscan` and `enable_seqscan` off
/// make the path they name cost [`crate::cost::DISABLE_COST`] more; with index and bitmap
/// scans both off, only the sequential scan is made.
pub fn scan_path(cx: &PlanContext<'_>, table: Arc<TableDesc>, predicate: Expr) -> Plan {
    let mut conjuncts = Vec::new();
    split_and(&predicate, &mut conjuncts);
    let quals = index_quals(&table, &conjuncts);
    // The index scans, with each index's place among the table's (oldest first).
    let mut candidates: Vec<(usize, Candidate)> = Vec::new();
    // With index scans off, an index may still build a bitmap (PostgreSQL's switches
    // only make the path they name cost more).
    if cx.settings.enable_indexscan || cx.settings.enable_bitmapscan {
        // Only the indexes led by a column a condition bounds (L1: the table's other
        // indexes are not looked at). A unique index whose whole key is fixed finds one
        // row at most: nothing is cheaper, the oldest such is taken without costing.
        // An expression index is led by the first column its leading expression reads.
        // (An index has one leading column, so no index is reached from two leads.)
        let mut leads: Vec<usize> = quals.iter().map(|q| q.0).collect();
        if quals.len() < conjuncts.len() {
            leads.extend(conjuncts.iter().filter_map(|c| expression_lead(c)));
        }
        let mut unique: Option<(usize, Candidate)> = None;
        // Unless the table is so small that reading all of it may cost less than two
        // random page reads (PostgreSQL then scans it): the lookup is costed too.
        let s = cx.settings;
        let small = || {
            (cx.sizes.pages(table.rel) as f64) * s.seq_page_cost < 2.0 * s.random_page_cost + 2.0
        };
        let mut is_small = None;
        for (li, &lead) in leads.iter().enumerate() {
            if leads[..li].contains(&lead) {
                continue;
            }
            for pos in table.index_positions_leading(lead) {
                let index = &table.indexes[pos];
                INDEXES_EXAMINED.with(|n| n.set(n.get() + 1));
                if !cx.index_usable(index) {
                    continue;
                }
                let with_exprs;
                let quals = if index.exprs.is_empty() {
                    &quals
                } else {
                    with_exprs =
                        [&quals[..], &expression_quals(cx, &table, index, &conjuncts)].concat();
                    &with_exprs
                };
                let Some(mut c) = index_candidate(index, quals) else {
                    continue;
                };
                // A partial index only where the conjuncts imply its predicate (rule 11).
                match crate::predicate::usable(cx, &table, index, &conjuncts) {
                    Some(implied) => c.implied = implied,
                    None => continue,
                }
                if c.full_key_equal
                    && index.unique
                    && cx.settings.enable_indexscan
                    && !*is_small.get_or_insert_with(small)
                {
                    if unique.as_ref().is_none_or(|(at, _)| pos < *at) {
                        unique = Some((pos, c));
                    }
                } else {
                    candidates.push((pos, c));
                }
            }
        }
        if let Some((_, c)) = unique {
            // The whole predicate moves into the scan unless a partial index's leaves
            // some out (a primary-key lookup copies nothing).
            let filter = if c.implied.is_empty() {
                None
            } else {
                Some(without(&predicate, &conjuncts, &c.implied))
            };
            return Plan::IndexScan {
                index: c.index.clone(),
                lower: c.lower,
                upper: c.upper,
                filter: filter.unwrap_or(Some(predicate)),
                table,
                backward: false,
                columns: None,
                only: false,
            };
        }
        // A partial index whose predicate the conditions imply, read whole where no
        // condition bounds its key: it holds only the rows its predicate selects
        // (PostgreSQL's predOK index paths). Found through the table's list of partial
        // indexes (L1: the others are not looked at).
        for pos in table.partial_index_positions() {
            if candidates.iter().any(|(p, _)| *p == pos) {
                continue;
            }
            let index = &table.indexes[pos];
            INDEXES_EXAMINED.with(|n| n.set(n.get() + 1));
            if !cx.index_usable(index) {
                continue;
            }
            if let Some(implied) = crate::predicate::usable(cx, &table, index, &conjuncts) {
                candidates.push((
                    pos,
                    Candidate {
                        index,
                        implied,
                        lower: Bound::Unbounded,
                        upper: Bound::Unbounded,
                        used: Vec::new(),
                        full_key_equal: false,
                    },
                ));
            }
        }
        candidates.sort_by_key(|(pos, _)| *pos);
    }
    let mut candidates: Vec<Candidate> = candidates.into_iter().map(|(_, c)| c).collect();
    // ORs whose every arm an index serves, read as a BitmapOr.
    let ors = if cx.settings.enable_indexscan || cx.settings.enable_bitmapscan {
        bitmap_ors(cx, &table, &conjuncts)
    } else {
        Vec::new()
    };
    if candidates.is_empty() && ors.is_empty() {
        return Plan::SeqScan {
            table,
            filter: Some(predicate),
            columns: None,
        };
    }
    // The cheapest of the sequential scan, the index scans and the bitmap scans.
    let stats = cx.catalog.stats(table.oid);
    let rel = RelInfo::new(&table, stats, cx.sizes.pages(table.rel));
    let rows = crate::selectivity::clamp_rows(
        rel.tuples * crate::selectivity::conjuncts_selectivity(&rel, &conjuncts),
    );
    // PostgreSQL considers the sequential scan first, then the indexes newest first, then
    // bitmap scans.
    enum Way {
        Seq,
        Index(usize),
        Bitmap,
    }
    let mut best = (crate::cost::seq_scan(cx, &rel, &conjuncts, rows), Way::Seq);
    // A candidate's bounding conjuncts and the rest it checks on each row (less those a
    // partial index's predicate implies).
    let split = |c: &Candidate| -> (Vec<&Expr>, Vec<&Expr>) {
        let bound = c.used.iter().map(|&ci| conjuncts[ci]).collect();
        let rest = conjuncts
            .iter()
            .enumerate()
            .filter(|(ci, _)| !c.used.contains(ci) && !c.implied.contains(ci))
            .map(|(_, e)| *e)
            .collect();
        (bound, rest)
    };
    for (i, c) in candidates.iter().enumerate().rev() {
        let (bound, rest) = split(c);
        let cost =
            crate::cost::index_scan(cx, &rel, c.index, &bound, c.full_key_equal, &rest, rows);
        if crate::cost::beats(&cost, &best.0) {
            best = (cost, Way::Index(i));
        }
    }
    // One bitmap heap scan, over the best AND of the bitmaps the indexes and the ORs
    // offer (PostgreSQL's choose_bitmap_and).
    // Each part costed once; the bitmap itself made only for the parts chosen.
    // (A partial index read whole needs a condition to recheck: one its predicate implies.)
    let mut parts: Vec<BitmapPart> = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.used.is_empty() || !c.implied.is_empty())
        .map(|(i, c)| {
            let bound: Vec<&Expr> = c.used.iter().map(|&ci| conjuncts[ci]).collect();
            let cost = crate::cost::bitmap_index(cx, &rel, c.index, &bound, c.full_key_equal, rows);
            BitmapPart {
                cost,
                used: c.used.clone(),
                implied: c.implied.clone(),
                source: BitmapSource::Index(i),
            }
        })
        .collect();
    let mut ors: Vec<Option<crate::plan::BitmapQual>> = ors
        .into_iter()
        .enumerate()
        .map(|(i, or)| {
            parts.push(BitmapPart {
                cost: bitmap_cost(cx, &rel, &or.bitmap, rows),
                used: vec![or.conjunct],
                implied: Vec::new(),
                source: BitmapSource::Or(i),
            });
            Some(or.bitmap)
        })
        .collect();
    let chosen_bitmap =
        choose_bitmap_and(cx, &rel, &conjuncts, rows, parts).map(|(cost, chosen)| {
            let mut used = Vec::new();
            let mut implied = Vec::new();
            let mut quals: Vec<crate::plan::BitmapQual> = chosen
                .into_iter()
                .map(|p| {
                    used.extend(p.used);
                    implied.extend(p.implied);
                    match p.source {
                        BitmapSource::Index(i) => {
                            let c = &candidates[i];
                            crate::plan::BitmapQual::Index {
                                index: c.index.clone(),
                                lower: c.lower.clone(),
                                upper: c.upper.clone(),
                                conds: c.used.iter().map(|&ci| conjuncts[ci].clone()).collect(),
                            }
                        }
                        BitmapSource::Or(i) => ors[i].take().expect("each part chosen once"),
                    }
                })
                .collect();
            let qual = if quals.len() == 1 {
                quals.pop().expect("one part")
            } else {
                crate::plan::BitmapQual::And(quals)
            };
            (
                cost,
                BitmapPath {
                    qual,
                    used,
                    implied,
                },
            )
        });
    if let Some((cost, _)) = &chosen_bitmap
        && crate::cost::beats(cost, &best.0)
    {
        best = (*cost, Way::Bitmap);
    }
    match best.1 {
        Way::Seq => Plan::SeqScan {
            table,
            filter: Some(predicate),
            columns: None,
        },
        Way::Index(i) => {
            let c = candidates.swap_remove(i);
            Plan::IndexScan {
                index: c.index.clone(),
                lower: c.lower,
                upper: c.upper,
                filter: without(&predicate, &conjuncts, &c.implied),
                table,
                backward: false,
                columns: None,
                only: false,
            }
        }
        Way::Bitmap => {
            let (_, b) = chosen_bitmap.expect("chosen above");
            // The parts' conditions in the parts' order, as PostgreSQL's recheck lists them,
            // then those partial indexes' predicates stand for (PostgreSQL rechecks their
            // predicates).
            let recheck: Vec<Expr> = b
                .used
                .iter()
                .chain(b.implied.iter().filter(|ci| !b.used.contains(ci)))
                .map(|&ci| conjuncts[ci].clone())
                .collect();
            let mut dropped = b.used.clone();
            dropped.extend(&b.implied);
            Plan::BitmapHeapScan {
                recheck: crate::conjoin(recheck).expect("a bitmap has conditions"),
                filter: without(&predicate, &conjuncts, &dropped),
                bitmap: b.qual,
                table,
                columns: None,
            }
        }
    }
}

/// A bitmap a scan could read, with the conjuncts (by position) it comes from and those
/// a partial index's predicate implies.
struct BitmapPath {
    qual: crate::plan::BitmapQual,
    used: Vec<usize>,
    implied: Vec<usize>,
}

/// A bitmap the scan could AND with others: its (cost, selectivity), the conjuncts it
/// comes from, those a partial index's predicate implies, and what it is made from.
struct BitmapPart {
    cost: (f64, f64),
    used: Vec<usize>,
    implied: Vec<usize>,
    source: BitmapSource,
}

enum BitmapSource {
    /// A Bitmap Index Scan of the candidate index at this position.
    Index(usize),
    /// The BitmapOr at this position.
    Or(usize),
}

/// The bitmap heap scan over the best AND of `parts` (PostgreSQL's `choose_bitmap_and`):
/// the parts sorted by what a scan over each alone costs; from each in turn, the later
/// ones added while they lower the cost and share no conjunct with those taken; the
/// cheapest result. Its cost and parts, or `None` without parts.
fn choose_bitmap_and(
    cx: &PlanContext<'_>,
    rel: &RelInfo<'_>,
    conjuncts: &[&Expr],
    rows: f64,
    parts: Vec<BitmapPart>,
) -> Option<(crate::cost::Cost, Vec<BitmapPart>)> {
    let scan_cost =
        |bitmap: (f64, f64)| crate::cost::bitmap_heap_scan(cx, rel, bitmap, conjuncts, rows);
    if parts.len() <= 1 {
        let cost = scan_cost(parts.first()?.cost);
        return Some((cost, parts));
    }
    let mut costed: Vec<(crate::cost::Cost, BitmapPart)> =
        parts.into_iter().map(|p| (scan_cost(p.cost), p)).collect();
    costed.sort_by(|a, b| {
        a.0.total
            .total_cmp(&b.0.total)
            .then(a.1.cost.1.total_cmp(&b.1.cost.1))
    });
    let mut best: Option<(crate::cost::Cost, Vec<usize>)> = None;
    for i in 0..costed.len() {
        let mut taken = vec![i];
        let mut used: Vec<usize> = costed[i].1.used.clone();
        let mut cost = costed[i].0;
        for j in i + 1..costed.len() {
            if costed[j].1.used.iter().any(|u| used.contains(u)) {
                continue;
            }
            let mut and: Vec<(f64, f64)> = taken.iter().map(|&k| costed[k].1.cost).collect();
            and.push(costed[j].1.cost);
            let with = scan_cost(crate::cost::bitmap_and(&and));
            if with.total < cost.total {
                taken.push(j);
                used.extend(&costed[j].1.used);
                cost = with;
            }
        }
        if best.as_ref().is_none_or(|b| cost.total < b.0.total) {
            best = Some((cost, taken));
        }
    }
    let (cost, taken) = best?;
    let mut costed: Vec<Option<BitmapPart>> = costed.into_iter().map(|c| Some(c.1)).collect();
    let chosen = taken
        .into_iter()
        .map(|k| costed[k].take().expect("each taken once"))
        .collect();
    Some((cost, chosen))
}

/// A BitmapOr a scan could read: the OR conjunct (by position) it serves, and the
/// bitmap, one index per arm.
struct BitmapOrPath {
    conjunct: usize,
    bitmap: crate::plan::BitmapQual,
}

/// For each conjunct that is an OR, a BitmapOr when an index serves each of its arms
/// (PostgreSQL's `generate_bitmap_or_paths`, with each arm's own conditions): per arm, the
/// index whose bitmap costs least. Whole-table indexes over columns only, found through
/// the columns the arm bounds (L1).
fn bitmap_ors(cx: &PlanContext<'_>, table: &TableDesc, conjuncts: &[&Expr]) -> Vec<BitmapOrPath> {
    let mut out = Vec::new();
    for (ci, c) in conjuncts.iter().enumerate() {
        if !matches!(c.kind, ExprKind::Binary(BinaryOp::Or, ..)) {
            continue;
        }
        let mut arms = Vec::new();
        crate::pushdown::disjuncts(c, &mut arms);
        let mut parts = Vec::with_capacity(arms.len());
        for arm in &arms {
            let mut own = Vec::new();
            split_and(arm, &mut own);
            let quals = index_quals(table, &own);
            let stats = cx.catalog.stats(table.oid);
            let rel = RelInfo::new(table, stats, cx.sizes.pages(table.rel));
            let rows = crate::selectivity::clamp_rows(
                rel.tuples * crate::selectivity::conjuncts_selectivity(&rel, &own),
            );
            let mut best: Option<(f64, crate::plan::BitmapQual)> = None;
            let mut seen = Vec::new();
            for q in &quals {
                for pos in table.index_positions_leading(q.0) {
                    if seen.contains(&pos) {
                        continue;
                    }
                    seen.push(pos);
                    let index = &table.indexes[pos];
                    INDEXES_EXAMINED.with(|n| n.set(n.get() + 1));
                    if !index.is_plain() || !cx.index_usable(index) {
                        continue;
                    }
                    let Some(cand) = index_candidate(index, &quals) else {
                        continue;
                    };
                    let bound: Vec<&Expr> = cand.used.iter().map(|&i| own[i]).collect();
                    let (cost, _) = crate::cost::bitmap_index(
                        cx,
                        &rel,
                        index,
                        &bound,
                        cand.full_key_equal,
                        rows,
                    );
                    if best.as_ref().is_none_or(|b| cost < b.0) {
                        best = Some((
                            cost,
                            crate::plan::BitmapQual::Index {
                                index: index.clone(),
                                lower: cand.lower,
                                upper: cand.upper,
                                conds: bound.into_iter().cloned().collect(),
                            },
                        ));
                    }
                }
            }
            match best {
                Some((_, b)) => parts.push(b),
                None => break,
            }
        }
        if parts.len() == arms.len() {
            out.push(BitmapOrPath {
                conjunct: ci,
                bitmap: crate::plan::BitmapQual::Or(parts),
            });
        }
    }
    out
}

/// A bitmap's (cost, selectivity) for a scan of `rel` whose conditions keep `rows`
/// (`cost_bitmap_tree_node`, `cost_bitmap_or_node`).
pub(crate) fn bitmap_cost(
    cx: &PlanContext<'_>,
    rel: &RelInfo<'_>,
    bitmap: &crate::plan::BitmapQual,
    rows: f64,
) -> (f64, f64) {
    match bitmap {
        crate::plan::BitmapQual::Index { index, conds, .. } => {
            let bound: Vec<&Expr> = conds.iter().collect();
            let quals = index_quals(rel.table, &bound);
            let full = index_candidate(index, &quals).is_some_and(|c| c.full_key_equal);
            crate::cost::bitmap_index(cx, rel, index, &bound, full, rows)
        }
        crate::plan::BitmapQual::Or(parts) | crate::plan::BitmapQual::And(parts) => {
            let costs: Vec<(f64, f64)> = parts
                .iter()
                .map(|p| bitmap_cost(cx, rel, p, rows))
                .collect();
            if matches!(bitmap, crate::plan::BitmapQual::Or(_)) {
                crate::cost::bitmap_or(&costs)
            } else {
                crate::cost::bitmap_and(&costs)
            }
        }
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
/// the whole table; of a partitioned table, its surviving partitions' (rule 18).
pub fn target_scan(cx: &PlanContext<'_>, table: &Arc<TableDesc>, filter: Option<&Expr>) -> Plan {
    let mut scan = match filter {
        Some(f) => scan_path(cx, table.clone(), f.clone()),
        None => Plan::SeqScan {
            table: table.clone(),
            filter: None,
            columns: None,
        },
    };
    if table.partition_key.is_some() {
        scan = crate::partition::expand_target(cx, scan);
    }
    scan
}

/// Is `b` still only the equality prefix (no range bound on the next column yet)?
pub(crate) fn lower_is_prefix(b: &Bound<Vec<Expr>>, prefix: usize) -> bool {
    match b {
        Bound::Unbounded => true,
        Bound::Included(k) | Bound::Excluded(k) => k.len() == prefix,
    }
}

pub(crate) fn split_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
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
pub(crate) fn is_constant(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Outer(_) | ExprKind::Param(_) => true,
        // Uncorrelated, and for `x op ANY/ALL (...)` with `x` fixed too.
        ExprKind::SubLink(link) => {
            link.args.is_empty()
                && match &link.kind {
                    sql::bound::SubLinkKind::Quantified { test, .. } => is_constant(test),
                    _ => true,
                }
        }
        ExprKind::Binary(_, l, r) => is_constant(l) && is_constant(r),
        ExprKind::Neg(x) | ExprKind::Cast { expr: x, .. } | ExprKind::Not(x) => is_constant(x),
        _ => false,
    }
}

/// `k op col` as `col op' k`.
pub(crate) fn commute(op: BinaryOp) -> BinaryOp {
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
pub(crate) fn indexable(ty: DataType) -> bool {
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
