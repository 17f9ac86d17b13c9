//! Joins of planned inputs ([`make_join`]): conditions pushed into the inputs, and an
//! index nested loop where the right input's index serves an equality.

#[allow(unused_imports)]
use super::*;

/// A join of two planned inputs: conjuncts of the condition that read one input go into
/// it (a LEFT JOIN's condition only into its right input), and an equality between a
/// left expression and a right table's column that leads one of its indexes makes an
/// index nested loop; otherwise the right input is read once and kept.
pub fn make_join(
    cx: &PlanContext<'_>,
    left: Plan,
    right: Plan,
    kind: JoinKind,
    on: Option<Expr>,
) -> Plan {
    let lw = left.width();
    let (mut left, mut right) = (left, right);
    let mut rest = Vec::new();
    for c in on.map(conjuncts).unwrap_or_default() {
        match (side(&c, lw), kind) {
            (Side::Left, JoinKind::Inner) => left = add_filter(cx, left, c),
            (Side::Right, _) => right = add_filter(cx, right, shift_columns(c, lw)),
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
    if let Some((table, filter)) = inner.filter(|_| cx.settings.enable_indexscan) {
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
