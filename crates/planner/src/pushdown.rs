//! Filters pushed down: into scans, through projections and joins ([`add_filter`]).

#[allow(unused_imports)]
use super::*;

/// Which inputs of a join an expression reads: none (a constant), the left (columns
/// below `left_width`), the right, or both.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    None,
    Left,
    Right,
    Both,
}

pub(crate) fn side(e: &Expr, left_width: usize) -> Side {
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
pub(crate) fn reads_plain_columns(e: &Expr, exprs: &[Expr]) -> bool {
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
pub(crate) fn substitute_columns(e: Expr, exprs: &[Expr]) -> Expr {
    match e.kind {
        ExprKind::Column(i) => exprs[i].clone(),
        _ => e
            .try_map_children(&mut |c| Ok(substitute_columns(c, exprs)))
            .expect("substituting columns cannot fail"),
    }
}

/// `e` over the right input of a join, as an expression over that input alone.
pub(crate) fn shift_columns(e: Expr, by: usize) -> Expr {
    match e.kind {
        ExprKind::Column(i) => Expr::column(i - by, e.ty),
        _ => e
            .try_map_children(&mut |c| Ok(shift_columns(c, by)))
            .expect("shifting columns cannot fail"),
    }
}

/// The conjuncts as one AND, or `None` for none.
pub(crate) fn conjoin(list: Vec<Expr>) -> Option<Expr> {
    list.into_iter().reduce(|a, b| {
        Expr::new(
            ExprKind::Binary(BinaryOp::And, Box::new(a), Box::new(b)),
            DataType::Bool,
        )
    })
}

pub(crate) fn conjuncts(e: Expr) -> Vec<Expr> {
    match e.kind {
        ExprKind::Binary(BinaryOp::And, l, r) => {
            let mut v = conjuncts(*l);
            v.extend(conjuncts(*r));
            v
        }
        _ => vec![e],
    }
}

/// Is `e` an equality PostgreSQL makes part of an equivalence class (a btree `=` of two
/// sides not both fixed, neither volatile)? Such conditions come back from its classes
/// after the others (`generate_base_implied_equalities` runs after the other conditions
/// are placed), so a scan's filter lists them last: `(y > 3) AND (x = 5)`.
pub(crate) fn is_equivalence(e: &Expr) -> bool {
    let ExprKind::Binary(BinaryOp::Eq, l, r) = &e.kind else {
        return false;
    };
    let fixed = |x: &Expr| crate::scan::is_constant(x);
    let both_fixed = fixed(l) && fixed(r);
    l.ty.hash_joins_with(&r.ty) && !both_fixed && !l.is_volatile() && !r.is_volatile()
}

/// `list` with the equivalence-class equalities ([`is_equivalence`]) after the other
/// conditions, each group in its order.
pub(crate) fn equivalences_last(list: Vec<Expr>) -> Vec<Expr> {
    // Nothing to move unless an equality comes before another condition.
    let Some(first) = list.iter().position(is_equivalence) else {
        return list;
    };
    if list[first..].iter().all(is_equivalence) {
        return list;
    }
    let (classes, others): (Vec<Expr>, Vec<Expr>) = list.into_iter().partition(is_equivalence);
    others.into_iter().chain(classes).collect()
}

/// The conjuncts of a WHERE, each OR among them with the conjuncts all its arms share
/// pulled out ([`factor_or`]).
pub(crate) fn where_conjuncts(e: Expr) -> Vec<Expr> {
    let list = conjuncts(e);
    // Most WHEREs hold no OR: nothing to take apart.
    if !list
        .iter()
        .any(|c| matches!(c.kind, ExprKind::Binary(BinaryOp::Or, ..)))
    {
        return list;
    }
    list.into_iter().flat_map(factor_or).collect()
}

/// `e` as conjuncts, the conjuncts every arm of an OR shares pulled out of it (PostgreSQL's
/// `find_duplicate_ors`): `(a AND b) OR (a AND c)` is `a AND (b OR c)` (AND distributes
/// over OR in SQL's three-valued logic too), so that `a`, when it joins two tables (TPC-H
/// Q19), joins them rather than filtering their cross product. An arm left with nothing
/// makes the OR true: only the shared conjuncts remain.
pub(crate) fn factor_or(e: Expr) -> Vec<Expr> {
    if !matches!(e.kind, ExprKind::Binary(BinaryOp::Or, ..)) {
        return vec![e];
    }
    let mut arms = Vec::new();
    disjuncts(&e, &mut arms);
    let arms: Vec<Vec<Expr>> = arms.into_iter().map(|a| conjuncts(a.clone())).collect();
    let mut common: Vec<Expr> = Vec::new();
    for c in &arms[0] {
        if !common.contains(c) && arms[1..].iter().all(|a| a.contains(c)) {
            common.push(c.clone());
        }
    }
    if common.is_empty() {
        return vec![e];
    }
    let mut rest = Vec::with_capacity(arms.len());
    for arm in arms {
        let left: Vec<Expr> = arm.into_iter().filter(|c| !common.contains(c)).collect();
        match conjoin(left) {
            Some(a) => rest.push(a),
            None => return common,
        }
    }
    let or = rest
        .into_iter()
        .reduce(|a, b| {
            Expr::new(
                ExprKind::Binary(BinaryOp::Or, Box::new(a), Box::new(b)),
                DataType::Bool,
            )
        })
        .expect("an OR has arms");
    common.push(or);
    common
}

/// What an OR over several relations says of one of them (PostgreSQL's
/// `extract_restriction_or_clauses`): with `mine` telling that relation's columns, the
/// OR of each arm's conjuncts that read only it (and some column of it), if every arm has
/// one. `(a.x = 1 AND b.y = 2) OR (a.x = 3 AND b.z = 4)` gives `a.x = 1 OR a.x = 3`, which
/// rows of `a` must meet to join at all, so a scan of `a` can drop the others first.
pub(crate) fn or_restriction(e: &Expr, mine: &dyn Fn(usize) -> bool) -> Option<Expr> {
    if !matches!(e.kind, ExprKind::Binary(BinaryOp::Or, ..)) {
        return None;
    }
    let mut arms = Vec::new();
    disjuncts(e, &mut arms);
    let mut parts = Vec::with_capacity(arms.len());
    for arm in arms {
        let own: Vec<Expr> = conjuncts(arm.clone())
            .into_iter()
            .filter(|c| {
                let (mut any, mut all) = (false, true);
                c.walk(&mut |x| {
                    if let ExprKind::Column(i) = x.kind {
                        any = true;
                        all &= mine(i);
                    }
                    // Nothing whose value depends on the rest of the row or on when it
                    // is evaluated.
                    all &= !matches!(x.kind, ExprKind::SubLink(_) | ExprKind::Outer(_));
                });
                any && all && !c.is_volatile()
            })
            .collect();
        parts.push(conjoin(own)?);
    }
    parts.into_iter().reduce(|a, b| {
        Expr::new(
            ExprKind::Binary(BinaryOp::Or, Box::new(a), Box::new(b)),
            DataType::Bool,
        )
    })
}

/// The arms of an OR (nested ORs flattened), in order.
pub(crate) fn disjuncts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary(BinaryOp::Or, l, r) => {
            disjuncts(l, out);
            disjuncts(r, out);
        }
        _ => out.push(e),
    }
}

/// Filter `plan`'s rows by `predicate`, as far down as it can go (planner rule 3): into a table scan
/// (which may then use an index), and through joins, each conjunct to the input it reads
/// (a WHERE over a LEFT JOIN goes only to its left input; over an inner join, a conjunct
/// reading both inputs joins the join's condition).
pub fn add_filter(cx: &PlanContext<'_>, plan: Plan, predicate: Expr) -> Plan {
    let mut above = Vec::new();
    let plan = match plan {
        // No rows (a false One-Time Filter without input): nothing to filter.
        Plan::Result {
            input: None,
            filter:
                Expr {
                    kind: ExprKind::Const(common::Value::Bool(false)),
                    ..
                },
            ..
        } => return plan,
        Plan::SeqScan { table, filter, .. } => {
            let all = conjoin(filter.into_iter().chain([predicate]).collect());
            return scan_path(cx, table, all.expect("one conjunct at least"));
        }
        // A scan `scan_path` chose: choose again with the added conjuncts (and a partial
        // index's predicate, which stands for those its scan left out).
        Plan::IndexScan {
            table,
            index,
            filter,
            backward: false,
            ..
        } if filter.is_some() || index.predicate.is_some() => {
            let before = crate::predicate::scan_condition(cx, &table, &index, filter.as_ref());
            let all = conjoin(before.into_iter().chain([predicate]).collect());
            return scan_path(cx, table, all.expect("one conjunct at least"));
        }
        Plan::BitmapHeapScan {
            table,
            recheck,
            filter,
            ..
        } => {
            let all = conjoin(
                [recheck]
                    .into_iter()
                    .chain(filter)
                    .chain([predicate])
                    .collect(),
            );
            return scan_path(cx, table, all.expect("one conjunct at least"));
        }
        // Through a projection of plain columns (a subquery in FROM): the predicate
        // reads the input's columns instead.
        Plan::Project { input, exprs } if reads_plain_columns(&predicate, &exprs) => {
            let below = substitute_columns(predicate, &exprs);
            return Plan::Project {
                input: Box::new(add_filter(cx, *input, below)),
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
            ..
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
                left: Box::new(filtered(cx, *left, below)),
                right,
                kind,
                on: conjoin(cond),
                right_width,
                lateral: Some(lateral),
                materialize: false,
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
                cx,
                filtered(cx, *left, s.left),
                filtered(cx, *right, s.right),
                kind,
                conjoin(on.into_iter().chain(s.on).collect()),
            )
        }
        // A join is made again with the conjuncts that go into it: they may change
        // which way is cheapest.
        Plan::IndexNestLoop {
            left,
            table,
            key_cond,
            more_keys,
            inner_filter,
            on,
            kind,
            ..
        } => {
            let s = split_join_filter(predicate, left.width(), kind);
            above = s.above;
            let right = match conjoin(inner_filter.into_iter().chain(s.right).collect()) {
                Some(f) => scan_path(cx, table, f),
                None => Plan::SeqScan {
                    table,
                    filter: None,
                    columns: None,
                },
            };
            make_join(
                cx,
                filtered(cx, *left, s.left),
                right,
                kind,
                conjoin(
                    std::iter::once(key_cond)
                        .chain(more_keys.into_iter().map(|(_, c)| c))
                        .chain(on)
                        .chain(s.on)
                        .collect(),
                ),
            )
        }
        Plan::HashJoin {
            left,
            right,
            kind,
            hash_conds,
            on,
            ..
        } => {
            let s = split_join_filter(predicate, left.width(), kind);
            above = s.above;
            make_join(
                cx,
                filtered(cx, *left, s.left),
                filtered(cx, *right, s.right),
                kind,
                conjoin(hash_conds.into_iter().chain(on).chain(s.on).collect()),
            )
        }
        Plan::MergeJoin {
            left,
            right,
            kind,
            merge_conds,
            left_keys,
            right_keys,
            on,
            ..
        } => {
            let s = split_join_filter(predicate, left.width(), kind);
            above = s.above;
            // The sides without the sorts the merge added: the join is made again.
            let left = crate::merge::unsorted(cx, *left, &left_keys);
            let right = crate::merge::unsorted(cx, *right, &right_keys);
            make_join(
                cx,
                filtered(cx, left, s.left),
                filtered(cx, right, s.right),
                kind,
                conjoin(merge_conds.into_iter().chain(on).chain(s.on).collect()),
            )
        }
        // A system view asked for one relation's rows by its key column: made for that
        // relation only.
        Plan::SystemView {
            view,
            width,
            key: None,
        } if view.key().is_some() => {
            let (col, _) = view.key().expect("a keyed view");
            let mut key = None;
            for c in conjuncts(predicate) {
                match key_value(&c, col) {
                    Some(v) if key.is_none() => key = Some(v),
                    _ => above.push(c),
                }
            }
            Plan::SystemView { view, width, key }
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

/// `v` where `c` is `column col = v` (either way round), `v` an oid fixed while the scan
/// runs ([`crate::scan::is_constant`]: a constant, a parameter, an outer value, or a cast
/// of one, as `'t'::regclass`).
fn key_value(c: &Expr, col: usize) -> Option<Expr> {
    let ExprKind::Binary(BinaryOp::Eq, l, r) = &c.kind else {
        return None;
    };
    let fixed = |e: &Expr| e.ty == DataType::Oid && crate::scan::is_constant(e);
    match (&l.kind, &r.kind) {
        (ExprKind::Column(i), _) if *i == col && fixed(r) => Some((**r).clone()),
        (_, ExprKind::Column(i)) if *i == col && fixed(l) => Some((**l).clone()),
        _ => None,
    }
}

/// A filter's conjuncts over a join's output, by where they can go: into the left input,
/// into the right input (over its own columns), into the join's condition, or above the
/// join (over a LEFT JOIN, what reads its right side must see the NULL-padded rows; over
/// a FULL JOIN, what reads either side).
pub(crate) struct JoinFilter {
    left: Vec<Expr>,
    right: Vec<Expr>,
    on: Vec<Expr>,
    above: Vec<Expr>,
}

pub(crate) fn split_join_filter(predicate: Expr, left_width: usize, kind: JoinKind) -> JoinFilter {
    let mut s = JoinFilter {
        left: Vec::new(),
        right: Vec::new(),
        on: Vec::new(),
        above: Vec::new(),
    };
    for c in conjuncts(predicate) {
        // A side whose rows the join may NULL-pad keeps what reads it above the join.
        match (side(&c, left_width), kind) {
            (Side::Left, JoinKind::Inner | JoinKind::Left | JoinKind::Semi | JoinKind::Anti) => {
                s.left.push(c)
            }
            (Side::Right, JoinKind::Inner | JoinKind::Right) => {
                s.right.push(shift_columns(c, left_width))
            }
            (Side::Both | Side::None, JoinKind::Inner) => s.on.push(c),
            _ => s.above.push(c),
        }
    }
    s
}

/// `plan` filtered by the conjuncts, if any ([`add_filter`]).
pub(crate) fn filtered(cx: &PlanContext<'_>, plan: Plan, conjuncts: Vec<Expr>) -> Plan {
    match conjoin(conjuncts) {
        Some(p) => add_filter(cx, plan, p),
        None => plan,
    }
}
