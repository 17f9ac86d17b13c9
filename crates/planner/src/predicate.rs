//! Partial indexes: whether a query's conditions imply an index's predicate, so that
//! every row the query wants has an entry in the index (PostgreSQL's `predtest.c`, its
//! simpler half: planner rule 11).
//!
//! A predicate is implied when each of its conjuncts is implied by one of the query's:
//! the same expression; `x IS NOT NULL` by any comparison of `x` (comparisons are
//! strict: NULL never passes them); a comparison of `x` with a constant by another
//! comparison of the same `x` with a constant that bounds it (`x = 5` implies `x > 3`,
//! `x > 10` implies `x >= 5`); an OR by any of its arms. Anything else is not proved,
//! and the index is not used: a false "no" costs a better plan, a false "yes" would
//! lose rows.

#[allow(unused_imports)]
use super::*;

use std::cmp::Ordering;

/// The index's predicate bound over its table's row, or `None` for a whole-table index.
/// An error binding it (not expected: it was bound when the index was made) leaves the
/// index unused.
fn bound_predicate(table: &TableDesc, index: &IndexDesc, cx: &PlanContext<'_>) -> Option<Expr> {
    let text = index.predicate.as_ref()?;
    sql::binder::bind_index_predicate(
        cx.catalog,
        table,
        text,
        &common::session::SessionInfo::detached(),
    )
    .ok()
    .map(crate::fold::fold)
}

/// The conjuncts of `index`'s predicate bound over `table`'s row (none for a whole-table
/// index).
pub(crate) fn predicate_conjuncts(
    cx: &PlanContext<'_>,
    table: &TableDesc,
    index: &IndexDesc,
) -> Vec<Expr> {
    match bound_predicate(table, index, cx) {
        Some(p) => crate::pushdown::conjuncts(p),
        None => Vec::new(),
    }
}

/// Can `index` serve a scan of `table` under `conjuncts`? `None` if it is a partial
/// index whose predicate they do not imply; else the conjuncts the index's predicate
/// implies in turn (by position), which a scan of it need not test again, as PostgreSQL
/// drops them (empty for a whole-table index).
pub(crate) fn usable(
    cx: &PlanContext<'_>,
    table: &TableDesc,
    index: &IndexDesc,
    conjuncts: &[&Expr],
) -> Option<Vec<usize>> {
    if index.predicate.is_none() {
        return Some(Vec::new());
    }
    let pred = bound_predicate(table, index, cx)?;
    let mut parts = Vec::new();
    crate::scan::split_and(&pred, &mut parts);
    if !parts
        .iter()
        .all(|p| conjuncts.iter().any(|q| implies(q, p)))
    {
        return None;
    }
    Some(
        conjuncts
            .iter()
            .enumerate()
            .filter(|(_, q)| parts.iter().any(|p| implies(p, q)))
            .map(|(i, _)| i)
            .collect(),
    )
}

/// The whole condition a scan of `table` through `index` with `filter` applies: `filter`,
/// and for a partial index its predicate, which stands for the conjuncts the scan left
/// out of its filter ([`usable`]): what planning that scan again (with more conjuncts,
/// or for an order) must start from, or those rows would be lost.
pub(crate) fn scan_condition(
    cx: &PlanContext<'_>,
    table: &TableDesc,
    index: &IndexDesc,
    filter: Option<&Expr>,
) -> Option<Expr> {
    let pred = bound_predicate(table, index, cx);
    crate::conjoin(filter.cloned().into_iter().chain(pred).collect())
}

/// Does `q` being true make `p` true?
fn implies(q: &Expr, p: &Expr) -> bool {
    if q == p {
        return true;
    }
    match &p.kind {
        ExprKind::Binary(BinaryOp::Or, a, b) => return implies(q, a) || implies(q, b),
        ExprKind::Binary(BinaryOp::And, a, b) => return implies(q, a) && implies(q, b),
        _ => {}
    }
    match &q.kind {
        // Each arm must imply it.
        ExprKind::Binary(BinaryOp::Or, a, b) => return implies(a, p) && implies(b, p),
        ExprKind::Binary(BinaryOp::And, a, b) => return implies(a, p) || implies(b, p),
        _ => {}
    }
    if let ExprKind::IsNull {
        expr: x,
        negated: true,
    } = &p.kind
    {
        return comparison(q).is_some_and(|(y, _, _)| y == &**x);
    }
    let (Some((qx, qop, qk)), Some((px, pop, pk))) = (comparison(q), comparison(p)) else {
        return false;
    };
    if qx != px {
        return false;
    }
    let (ExprKind::Const(qk), ExprKind::Const(pk)) = (&qk.kind, &pk.kind) else {
        return false;
    };
    if qk.is_null() || pk.is_null() {
        return false;
    }
    // Every x with `x qop qk` has `x pop pk`: compare the constants.
    let o = qk.cmp_non_null(pk);
    use BinaryOp::*;
    match (qop, pop) {
        (Eq, _) => holds(o, pop),
        (Gt, Gt | GtEq) | (GtEq, GtEq) => o != Ordering::Less,
        (GtEq, Gt) => o == Ordering::Greater,
        (Gt, NotEq) => o != Ordering::Less,
        (GtEq, NotEq) => o == Ordering::Greater,
        (Lt, Lt | LtEq) | (LtEq, LtEq) => o != Ordering::Greater,
        (LtEq, Lt) => o == Ordering::Less,
        (Lt, NotEq) => o != Ordering::Greater,
        (LtEq, NotEq) => o == Ordering::Less,
        _ => false,
    }
}

/// Is `k1 op k2` true, given `o`, the order of `k1` against `k2`?
fn holds(o: Ordering, op: BinaryOp) -> bool {
    match op {
        BinaryOp::Eq => o == Ordering::Equal,
        BinaryOp::NotEq => o != Ordering::Equal,
        BinaryOp::Lt => o == Ordering::Less,
        BinaryOp::LtEq => o != Ordering::Greater,
        BinaryOp::Gt => o == Ordering::Greater,
        BinaryOp::GtEq => o != Ordering::Less,
        _ => false,
    }
}

/// `e` as (operand, operator, constant) when it compares an expression over the row
/// with a constant, the operand first.
fn comparison(e: &Expr) -> Option<(&Expr, BinaryOp, &Expr)> {
    let ExprKind::Binary(op, l, r) = &e.kind else {
        return None;
    };
    if !op.is_comparison() {
        return None;
    }
    match (
        matches!(l.kind, ExprKind::Const(_)),
        matches!(r.kind, ExprKind::Const(_)),
    ) {
        (false, true) if l.references_columns() => Some((l, *op, r)),
        (true, false) if r.references_columns() => Some((r, crate::scan::commute(*op), l)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::{DataType, Value};

    fn col() -> Expr {
        Expr::column(0, DataType::Int4)
    }
    fn k(v: i32) -> Expr {
        Expr::constant(Value::Int4(v), DataType::Int4)
    }
    fn cmp(op: BinaryOp, v: i32) -> Expr {
        Expr::new(
            ExprKind::Binary(op, Box::new(col()), Box::new(k(v))),
            DataType::Bool,
        )
    }
    fn or(a: Expr, b: Expr) -> Expr {
        Expr::new(
            ExprKind::Binary(BinaryOp::Or, Box::new(a), Box::new(b)),
            DataType::Bool,
        )
    }

    #[test]
    fn comparisons_imply_what_they_bound() {
        use BinaryOp::*;
        let cases = [
            (cmp(Eq, 5), cmp(Gt, 3), true),
            (cmp(Eq, 5), cmp(Gt, 5), false),
            (cmp(Eq, 5), cmp(GtEq, 5), true),
            (cmp(Eq, 5), cmp(NotEq, 4), true),
            (cmp(Gt, 10), cmp(Gt, 5), true),
            (cmp(Gt, 10), cmp(GtEq, 10), true),
            (cmp(GtEq, 10), cmp(Gt, 10), false),
            (cmp(GtEq, 10), cmp(Gt, 9), true),
            (cmp(Gt, 5), cmp(Gt, 10), false),
            (cmp(Lt, 3), cmp(LtEq, 3), true),
            (cmp(LtEq, 3), cmp(Lt, 3), false),
            (cmp(Lt, 3), cmp(NotEq, 3), true),
            (cmp(Lt, 3), cmp(Gt, 0), false),
            (cmp(Gt, 1), or(cmp(Eq, 0), cmp(Gt, 0)), true),
            (or(cmp(Eq, 7), cmp(Gt, 8)), cmp(Gt, 6), true),
            (or(cmp(Eq, 7), cmp(Lt, 8)), cmp(Gt, 6), false),
        ];
        for (q, p, want) in cases {
            assert_eq!(implies(&q, &p), want, "{q:?} => {p:?}");
        }
        let not_null = Expr::new(
            ExprKind::IsNull {
                expr: Box::new(col()),
                negated: true,
            },
            DataType::Bool,
        );
        assert!(implies(&cmp(Lt, 0), &not_null));
        assert!(!implies(&not_null, &cmp(Lt, 0)));
    }
}
