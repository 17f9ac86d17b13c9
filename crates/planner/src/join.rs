//! Joins of planned inputs ([`make_join`]): conditions pushed into the inputs, then the
//! cheapest of a nested loop, an index nested loop where the right input's index serves
//! an equality, and a hash or merge join on equalities between the sides (planner rule
//! 8).

#[allow(unused_imports)]
use super::*;
use crate::cost::{self, Cost};

/// A join of two planned inputs: conjuncts of the condition that read one input go into
/// it (a LEFT JOIN's condition only into its right input). Then the ways to join them
/// (planner rule 8): an index nested loop where an equality between a left expression and
/// a column leading one of the right table's indexes can look the right rows up, a hash
/// join where equalities between the sides can be hashed, a merge join on the same
/// equalities over inputs in their order ([`crate::merge`]), and a nested loop over the
/// right input read once and kept; with more than one, the cheapest by PostgreSQL's
/// costs, the earlier on a tie (PostgreSQL's order: merge joins, nested loops, hash
/// joins).
pub fn make_join(
    cx: &PlanContext<'_>,
    left: Plan,
    right: Plan,
    kind: JoinKind,
    on: Option<Expr>,
) -> Plan {
    // A right join is a left join of the sides swapped, its columns put back.
    if kind == JoinKind::Right
        && let (Some(lt), Some(rt)) = (left.column_types(), right.column_types())
    {
        let (lw, rw) = (lt.len(), rt.len());
        let on = on.map(|e| swap_columns(e, lw, rw));
        let joined = make_join(cx, right, left, JoinKind::Left, on);
        return restore_order(joined, &lt, &rt);
    }
    let lw = left.width();
    let (mut left, mut right) = (left, right);
    let mut rest = Vec::new();
    // A join condition decides which pairs join, not which rows a side keeps: what reads
    // only the side whose unmatched rows are kept stays in the condition.
    for c in on.map(conjuncts).unwrap_or_default() {
        match (side(&c, lw), kind) {
            (Side::Left, JoinKind::Inner) => left = add_filter(cx, left, c),
            (Side::Right, JoinKind::Inner | JoinKind::Left | JoinKind::Semi | JoinKind::Anti) => {
                right = add_filter(cx, right, shift_columns(c, lw))
            }
            _ => rest.push(c),
        }
    }
    let mut ways = Vec::new();
    if kind != JoinKind::Full
        && let Some(p) = index_nest_loop(cx, &left, &right, kind, &rest)
    {
        ways.push(p);
    }
    if kind != JoinKind::Full
        && let Some(p) = view_lookup(&left, &right, kind, &rest)
    {
        ways.push(p);
    }
    if let Some(p) = hash_join(&left, &right, kind, &rest) {
        ways.push(p);
    }
    // A left join may hash its left side instead, probing with the right and returning
    // the left rows nothing matched at the end (PostgreSQL's Hash Right Join).
    if kind == JoinKind::Left
        && let Some(p) = hash_right_join(&left, &right, &rest)
    {
        ways.push(p);
    }
    // Or merge with the sides swapped (PostgreSQL's Merge Right Join).
    if kind == JoinKind::Left
        && let Some(p) = merge_right_join(cx, &left, &right, &rest)
    {
        ways.push(p);
    }
    // A merge join on the same equalities, each side in key order (PostgreSQL makes
    // merge paths before hash paths: first on a tie).
    if let Some(p) = crate::merge::merge_join(cx, &left, &right, kind, &rest) {
        ways.insert(0, p);
    }
    // A FULL join is symmetric: either side may be the outer one (PostgreSQL tries
    // both), under a projection that puts the columns back.
    if kind == JoinKind::Full
        && let (Some(lt), Some(rt)) = (left.column_types(), right.column_types())
    {
        let swapped: Vec<Expr> = rest
            .iter()
            .map(|c| swap_columns(c.clone(), lt.len(), rt.len()))
            .collect();
        let turned = crate::merge::merge_join(cx, &right, &left, kind, &swapped)
            .into_iter()
            .chain(hash_join(&right, &left, kind, &swapped));
        ways.extend(turned.map(|p| restore_order(p, &lt, &rt)));
    }
    // A semi join may also make its right side unique on the join keys and join that
    // as an inner join, on either side (PostgreSQL's unique-ified inner path).
    if kind == JoinKind::Semi {
        ways.extend(unique_inner_joins(cx, &left, &right, &rest));
    }
    // A FULL join runs only as a hash or merge join (the binder made sure it has a hash
    // clause; PostgreSQL's nested loops cannot return the inner side's unmatched rows
    // either).
    if kind == JoinKind::Full && !ways.is_empty() {
        return cheapest(cx, ways);
    }
    // A nested loop over the right input read again for each left row, and over it kept
    // by a Materialize (PostgreSQL tries both, unless the right input keeps its rows
    // itself: `ExecMaterializesOutput`).
    let right_width = right.width();
    let at = ways.len().min(1);
    let on = conjoin(rest);
    if cx.settings.enable_material && !right.materializes_output() {
        ways.insert(
            at,
            Plan::NestedLoopJoin {
                left: Box::new(left.clone()),
                right: Box::new(right.clone()),
                kind,
                on: on.clone(),
                right_width,
                lateral: None,
                materialize: true,
            },
        );
    }
    ways.insert(
        at,
        Plan::NestedLoopJoin {
            left: Box::new(left),
            right: Box::new(right),
            kind,
            on,
            right_width,
            lateral: None,
            materialize: false,
        },
    );
    cheapest(cx, ways)
}

/// A nested loop that asks the system view `right` for the rows of the relation whose
/// oid a left expression gives, once per left row (the view's key column equated with
/// that expression in `rest`), as PostgreSQL looks its catalogs up through their
/// indexes: `pg_class tc ON c.reltoastrelid = tc.oid` makes one row a lookup, not all of
/// pg_class. The left value reaches the view as its key, an outer value of a LATERAL
/// right side.
pub(crate) fn view_lookup(
    left: &Plan,
    right: &Plan,
    kind: JoinKind,
    rest: &[Expr],
) -> Option<Plan> {
    let Plan::SystemView {
        view,
        width,
        key: None,
    } = right
    else {
        return None;
    };
    let (col, _) = view.key()?;
    let lw = left.width();
    let mut arg = None;
    let mut others = Vec::new();
    for c in rest {
        if arg.is_none()
            && let ExprKind::Binary(BinaryOp::Eq, l, r) = &c.kind
        {
            let outer = |e: &Expr| e.ty == DataType::Oid && side(e, lw) == Side::Left;
            let found = match (&l.kind, &r.kind) {
                (ExprKind::Column(j), _) if *j == lw + col && outer(r) => Some(r),
                (_, ExprKind::Column(j)) if *j == lw + col && outer(l) => Some(l),
                _ => None,
            };
            if let Some(e) = found {
                arg = Some((**e).clone());
                continue;
            }
        }
        others.push(c.clone());
    }
    Some(Plan::NestedLoopJoin {
        left: Box::new(left.clone()),
        right: Box::new(Plan::SystemView {
            view: *view,
            width: *width,
            key: Some(Expr::new(ExprKind::Outer(0), DataType::Oid)),
        }),
        kind,
        on: conjoin(others),
        right_width: *width,
        lateral: Some(vec![arg?]),
        materialize: false,
    })
}

/// The cheapest of `ways` (at least one), the earliest on a tie under add_path's fuzz
/// (`cost::beats`). One way alone is not costed.
fn cheapest(cx: &PlanContext<'_>, mut ways: Vec<Plan>) -> Plan {
    if ways.len() == 1 {
        return ways.pop().expect("one way");
    }
    let costs: Vec<Cost> = ways
        .iter()
        .map(|p| {
            // A fresh estimator per way: the ways share no nodes.
            let e = crate::estimate::Estimator::new(*cx).estimate(p);
            Cost {
                startup: e.startup,
                total: e.total,
                rows: e.rows,
            }
        })
        .collect();
    let mut best = 0;
    for i in 1..ways.len() {
        if cost::beats(&costs[i], &costs[best]) {
            best = i;
        }
    }
    ways.swap_remove(best)
}

/// An index lookup the right input allows: it is a scan of a table (with its filter)
/// one of whose indexes leads with a column, or an expression, that conjunct `cond` of
/// `rest` equates with a left expression, `outer_key`.
pub(crate) struct Lookup<'p> {
    pub cond: usize,
    pub outer_key: Expr,
    /// The index's next key columns other conjuncts fix: each conjunct's place in
    /// `rest` and its outer value, in the index's column order.
    pub more: Vec<(usize, Expr)>,
    pub table: &'p Arc<TableDesc>,
    pub index: &'p IndexDesc,
    /// The conditions on the table's rows alone (a partial index scan's in full).
    pub filter: Option<Expr>,
}

pub(crate) fn index_lookup<'p>(
    cx: &PlanContext<'_>,
    left_width: usize,
    right: &'p Plan,
    rest: &[Expr],
) -> Option<Lookup<'p>> {
    if !cx.settings.enable_indexscan {
        return None;
    }
    // Lookups stand in for a sequential, bitmap or forward index scan of the table.
    if matches!(right, Plan::IndexScan { backward: true, .. }) {
        return None;
    }
    let (table, filter) = crate::scan::table_condition(cx, right)?;
    let mut conjuncts = Vec::new();
    if let Some(f) = &filter {
        split_and(f, &mut conjuncts);
    }
    // A partial index holds only the rows its predicate is true for: it serves where
    // the table's conditions imply that (rule 11), and the conditions its predicate
    // implies in turn need no test.
    let usable = |i: &IndexDesc| crate::predicate::usable(cx, table, i, &conjuncts);
    let filter_for = |implied: &[usize]| {
        filter
            .as_ref()
            .and_then(|f| crate::scan::without(f, &conjuncts, implied))
    };
    let mut index_exprs: Vec<(usize, Vec<Option<Expr>>)> = Vec::new();
    // Of the column lookups, the one through an index whose key the join fixes the most
    // columns of (the first such on a tie); else an expression index's.
    let mut best: Option<Lookup<'p>> = None;
    for (cond, c) in rest.iter().enumerate() {
        let Some((outer_key, col)) = equi_key(c, left_width, table) else {
            continue;
        };
        // A partitioned table's indexes lead no scan of it (they have no storage), but
        // a lookup goes through its partitions' (each outer value pruning them).
        let partitioned: Vec<&IndexDesc> = match table.partition_key {
            Some(_) => table
                .indexes
                .iter()
                .filter(|i| i.columns.first() == Some(&col))
                .collect(),
            None => Vec::new(),
        };
        for index in table
            .indexes_leading(col)
            .filter(|i| i.columns.first() == Some(&col))
            .chain(partitioned)
            .filter(|i| cx.index_usable(i))
        {
            let Some(implied) = usable(index) else {
                continue;
            };
            // The next key columns the join fixes too, in order (PostgreSQL's index
            // clauses on a prefix of the key).
            let mut more = Vec::new();
            for &next in &index.columns[1..] {
                let Some(found) = rest.iter().enumerate().find_map(|(ci, c)| {
                    if ci == cond || more.iter().any(|(m, _)| *m == ci) {
                        return None;
                    }
                    let (outer, col) = equi_key(c, left_width, table)?;
                    (col == next).then_some((ci, outer))
                }) else {
                    break;
                };
                more.push(found);
            }
            if best.as_ref().is_none_or(|b| b.more.len() < more.len()) {
                best = Some(Lookup {
                    cond,
                    outer_key: outer_key.clone(),
                    more,
                    table,
                    index,
                    filter: filter_for(&implied),
                });
            }
        }
    }
    if best.is_some() {
        return best;
    }
    rest.iter().enumerate().find_map(|(cond, c)| {
        // Or by an expression over the table the conjunct equates with one (planner
        // rule 11), found through the first column it reads (L1).
        let (outer_key, inner) = equi_expr(c, left_width)?;
        let lead = crate::scan::first_column(&inner)?;
        let index = table.index_positions_leading(lead).find_map(|pos| {
            let index = &table.indexes[pos];
            if !cx.index_usable(index) {
                return None;
            }
            let k = index
                .columns
                .first()
                .and_then(|&c| IndexDesc::expression(c))?;
            let exprs = match index_exprs.iter().find(|(p, _)| *p == pos) {
                Some((_, e)) => e,
                None => {
                    let bound = crate::scan::bound_index_exprs(cx, table, index);
                    index_exprs.push((pos, bound));
                    &index_exprs.last().expect("pushed").1
                }
            };
            if exprs.get(k)?.as_ref() != Some(&inner) {
                return None;
            }
            usable(index).map(|implied| (index, implied))
        })?;
        let (index, implied) = index;
        Some(Lookup {
            cond,
            outer_key,
            more: Vec::new(),
            table,
            index,
            filter: filter_for(&implied),
        })
    })
}

/// `c` as (left expression, right expression over the right input's row) where it
/// equates an expression over the left input with an expression (not a bare column) over
/// the right one, of one indexable type.
fn equi_expr(c: &Expr, left_width: usize) -> Option<(Expr, Expr)> {
    let ExprKind::Binary(BinaryOp::Eq, l, r) = &c.kind else {
        return None;
    };
    let (outer, inner) = match (side(l, left_width), side(r, left_width)) {
        (Side::Left, Side::Right) => (l, r),
        (Side::Right, Side::Left) => (r, l),
        _ => return None,
    };
    if matches!(inner.kind, ExprKind::Column(_)) || outer.ty != inner.ty || !indexable(inner.ty) {
        return None;
    }
    Some((
        (**outer).clone(),
        shift_columns((**inner).clone(), left_width),
    ))
}

/// `rest` split by lookup `l`: its key conjunct, its further keys (outer value and
/// conjunct each), and the other conjuncts.
pub(crate) fn split_lookup(l: &Lookup<'_>, rest: &[Expr]) -> (Expr, Vec<(Expr, Expr)>, Vec<Expr>) {
    let more_keys = l
        .more
        .iter()
        .map(|(ci, outer)| (outer.clone(), rest[*ci].clone()))
        .collect();
    let others = rest
        .iter()
        .enumerate()
        .filter(|(ci, _)| *ci != l.cond && !l.more.iter().any(|(m, _)| m == ci))
        .map(|(_, c)| c.clone())
        .collect();
    (rest[l.cond].clone(), more_keys, others)
}

/// An index nested loop through the lookup the right input allows ([`index_lookup`]).
fn index_nest_loop(
    cx: &PlanContext<'_>,
    left: &Plan,
    right: &Plan,
    kind: JoinKind,
    rest: &[Expr],
) -> Option<Plan> {
    let l = index_lookup(cx, left.width(), right, rest)?;
    let (key_cond, more_keys, others) = split_lookup(&l, rest);
    Some(Plan::IndexNestLoop {
        left: Box::new(left.clone()),
        table: l.table.clone(),
        index: l.index.clone(),
        outer_key: l.outer_key,
        key_cond,
        more_keys,
        inner_filter: l.filter,
        on: conjoin(others),
        kind,
    })
}

/// A hash join on the conjuncts of `rest` that equate a left expression with a right one
/// of the same hash-joinable type (PostgreSQL's hashjoinable clauses), if there are any; each
/// written `left = right` in Hash Cond, as PostgreSQL switches them.
fn hash_join(left: &Plan, right: &Plan, kind: JoinKind, rest: &[Expr]) -> Option<Plan> {
    let h = hash_clauses(left.width(), rest)?;
    Some(Plan::HashJoin {
        right_width: right.width(),
        left: Box::new(left.clone()),
        right: Box::new(right.clone()),
        kind,
        hash_conds: h.hash_conds,
        left_keys: h.left_keys,
        right_keys: h.right_keys,
        on: conjoin(h.others),
    })
}

/// `left LEFT JOIN right` as a Hash Right Join of the sides swapped (the left side
/// hashed), under a projection that puts the columns back; `None` where the sides'
/// column types are unknown or nothing can be hashed.
fn hash_right_join(left: &Plan, right: &Plan, rest: &[Expr]) -> Option<Plan> {
    let (lt, rt) = (left.column_types()?, right.column_types()?);
    let (lw, rw) = (lt.len(), rt.len());
    let swapped: Vec<Expr> = rest
        .iter()
        .map(|c| swap_columns(c.clone(), lw, rw))
        .collect();
    let join = hash_join(right, left, JoinKind::Right, &swapped)?;
    Some(restore_order(join, &lt, &rt))
}

/// `left` semi-joined to `right` on `rest` (over the joined row) as inner joins of `left`
/// and `right` made unique on its join keys (a grouping without aggregates: hashed or
/// sorted by cost), `left` outer and inner, each under a projection to `left`'s columns
/// (PostgreSQL's `create_unique_path` and JOIN_UNIQUE_INNER): a left row matches at most
/// one distinct key. None where a conjunct is not an equality between the sides (its
/// other columns of `right` would be gone) or `left`'s column types are unknown.
pub(crate) fn unique_inner_joins(
    cx: &PlanContext<'_>,
    left: &Plan,
    right: &Plan,
    rest: &[Expr],
) -> Vec<Plan> {
    let lw = left.width();
    let (Some(h), Some(lt)) = (hash_clauses(lw, rest), left.column_types()) else {
        return Vec::new();
    };
    if !h.others.is_empty() {
        return Vec::new();
    }
    let k = h.right_keys.len();
    let unique =
        crate::grouping::plan_aggregate(cx, right.clone(), h.right_keys.clone(), Vec::new());
    // `left key = unique column`, over `left ++ unique`.
    let conds: Vec<Expr> = h
        .left_keys
        .iter()
        .zip(&h.right_keys)
        .enumerate()
        .map(|(i, (l, r))| {
            Expr::new(
                ExprKind::Binary(
                    BinaryOp::Eq,
                    Box::new(l.clone()),
                    Box::new(Expr::column(lw + i, r.ty)),
                ),
                DataType::Bool,
            )
        })
        .collect();
    let left_of = |joined: Plan, at: usize| Plan::Project {
        input: Box::new(joined),
        exprs: lt
            .iter()
            .enumerate()
            .map(|(i, ty)| Expr::column(at + i, *ty))
            .collect(),
    };
    let swapped: Vec<Expr> = conds
        .iter()
        .map(|c| swap_columns(c.clone(), lw, k))
        .collect();
    vec![
        left_of(
            make_join(
                cx,
                left.clone(),
                unique.clone(),
                JoinKind::Inner,
                conjoin(conds),
            ),
            0,
        ),
        left_of(
            make_join(cx, unique, left.clone(), JoinKind::Inner, conjoin(swapped)),
            k,
        ),
    ]
}

/// `left LEFT JOIN right` as a Merge Right Join of the sides swapped, under a projection
/// that puts the columns back.
fn merge_right_join(
    cx: &PlanContext<'_>,
    left: &Plan,
    right: &Plan,
    rest: &[Expr],
) -> Option<Plan> {
    let (lt, rt) = (left.column_types()?, right.column_types()?);
    let swapped: Vec<Expr> = rest
        .iter()
        .map(|c| swap_columns(c.clone(), lt.len(), rt.len()))
        .collect();
    let join = crate::merge::merge_join(cx, right, left, JoinKind::Right, &swapped)?;
    Some(restore_order(join, &lt, &rt))
}

/// `e` over `left ++ right` (`lw` and `rw` columns) renumbered over `right ++ left`.
fn swap_columns(e: Expr, lw: usize, rw: usize) -> Expr {
    match e.kind {
        ExprKind::Column(i) if i < lw => Expr::column(i + rw, e.ty),
        ExprKind::Column(i) => Expr::column(i - lw, e.ty),
        _ => e
            .try_map_children(&mut |c| Ok(swap_columns(c, lw, rw)))
            .expect("renumbering columns cannot fail"),
    }
}

/// `joined`, whose rows are `right ++ left`, projected back to `left ++ right`.
fn restore_order(joined: Plan, lt: &[DataType], rt: &[DataType]) -> Plan {
    let rw = rt.len();
    let exprs = lt
        .iter()
        .enumerate()
        .map(|(i, ty)| Expr::column(rw + i, *ty))
        .chain(rt.iter().enumerate().map(|(i, ty)| Expr::column(i, *ty)))
        .collect();
    Plan::Project {
        input: Box::new(joined),
        exprs,
    }
}

/// The conjuncts of a join condition split for a hash join.
pub(crate) struct HashClauses {
    /// `left = right`, over the joined row.
    pub hash_conds: Vec<Expr>,
    /// Their sides, over the left row and over the right row.
    pub left_keys: Vec<Expr>,
    pub right_keys: Vec<Expr>,
    /// The rest.
    pub others: Vec<Expr>,
}

/// The conjuncts of `rest` (over a joined row whose left input has `lw` columns) that
/// equate a left expression with a right one of the same hash-joinable type, each
/// written `left = right`; `None` if there are none.
pub(crate) fn hash_clauses(lw: usize, rest: &[Expr]) -> Option<HashClauses> {
    let (mut hash_conds, mut left_keys, mut right_keys, mut others) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for c in rest {
        let sides = match &c.kind {
            ExprKind::Binary(BinaryOp::Eq, l, r) if l.ty.hash_joins_with(&r.ty) => {
                match (side(l, lw), side(r, lw)) {
                    (Side::Left, Side::Right) => Some((l, r)),
                    (Side::Right, Side::Left) => Some((r, l)),
                    _ => None,
                }
            }
            _ => None,
        };
        match sides {
            Some((l, r)) => {
                hash_conds.push(Expr::new(
                    ExprKind::Binary(BinaryOp::Eq, l.clone(), r.clone()),
                    DataType::Bool,
                ));
                left_keys.push((**l).clone());
                right_keys.push(shift_columns((**r).clone(), lw));
            }
            None => others.push(c.clone()),
        }
    }
    if hash_conds.is_empty() {
        return None;
    }
    Some(HashClauses {
        hash_conds,
        left_keys,
        right_keys,
        others,
    })
}

/// `left_expr = right_column` (either way round), the column indexable and of the
/// expression's type: the expression and the column (of `table`).
pub(crate) fn equi_key(c: &Expr, left_width: usize, table: &TableDesc) -> Option<(Expr, usize)> {
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

/// Whether at most one row of `right` matches each outer row: `right` is a scan of one
/// table and the condition `cond` (over the outer row's `width` columns, then the
/// right's) equates every column of one of the table's unique indexes with an outer
/// expression, or `right` is a grouping and `cond` equates every group column.
pub(crate) fn unique_on(right: &Plan, width: usize, cond: Option<&Expr>) -> bool {
    let Some(cond) = cond else { return false };
    distinct_on(right, &equated_columns(cond, width))
}

/// Whether `plan`'s rows are distinct on its columns `cols` (PostgreSQL's
/// `rel_is_distinct_for` and `query_is_distinct_for`): a table through a unique index
/// on some of them, a grouping whose group key they hold (one row without GROUP BY), a
/// DISTINCT, UNION, INTERSECT or EXCEPT whose every column they hold, and what a filter,
/// sort, limit or projection of plain columns leaves of those.
fn distinct_on(plan: &Plan, cols: &[usize]) -> bool {
    match plan {
        Plan::SeqScan { table, .. }
        | Plan::IndexScan { table, .. }
        | Plan::BitmapHeapScan { table, .. } => {
            // A unique index led by one of the columns (L1: only those are looked at).
            cols.iter().any(|&col| {
                table
                    .indexes_leading(col)
                    .any(|ix| ix.proves_unique() && ix.columns.iter().all(|c| cols.contains(c)))
            })
        }
        Plan::Aggregate {
            group_by,
            dependent,
            ..
        } => (0..group_by.len()).all(|g| dependent.contains(&g) || cols.contains(&g)),
        Plan::Distinct { input }
        | Plan::SetOp {
            all: false,
            left: input,
            ..
        } => (0..input.width()).all(|c| cols.contains(&c)),
        Plan::Filter { input, .. } | Plan::Sort { input, .. } | Plan::Limit { input, .. } => {
            distinct_on(input, cols)
        }
        Plan::Project { input, exprs } => {
            let mapped: Vec<usize> = cols
                .iter()
                .filter_map(|&c| match exprs.get(c)?.kind {
                    ExprKind::Column(i) => Some(i),
                    _ => None,
                })
                .collect();
            distinct_on(input, &mapped)
        }
        _ => false,
    }
}

/// The right columns (from `width` on, numbered from 0) that conjuncts of `cond` equate
/// with a left expression of the same type.
fn equated_columns(cond: &Expr, width: usize) -> Vec<usize> {
    let mut equated = Vec::new();
    for c in conjuncts(cond.clone()) {
        if let ExprKind::Binary(BinaryOp::Eq, l, r) = &c.kind {
            let pair = match (&l.kind, &r.kind) {
                (ExprKind::Column(j), _) if *j >= width && side(r, width) == Side::Left => {
                    Some(j - width)
                }
                (_, ExprKind::Column(j)) if *j >= width && side(l, width) == Side::Left => {
                    Some(j - width)
                }
                _ => None,
            };
            // Equality of one type: the index's equality.
            if let Some(col) = pair.filter(|_| l.ty == r.ty) {
                equated.push(col);
            }
        }
    }
    equated
}

/// Whether a join of kind `kind` has PostgreSQL's `Inner Unique`: an inner or left join
/// whose right side, a scan of one table or a grouping, has at most one row matching each left row
/// ([`unique_on`]); it is costed as a semi join, each left row's search ending at its
/// first match.
pub fn inner_unique(kind: JoinKind, right: &Plan, left_width: usize, cond: Option<&Expr>) -> bool {
    matches!(kind, JoinKind::Inner | JoinKind::Left) && unique_on(right, left_width, cond)
}
