//! Constant folding before planning (planner rule 14, a part of PostgreSQL's
//! `eval_const_expressions`): an integer constant cast to unconstrained numeric (`1 - x`
//! over a numeric `x`, `x * 2`) becomes a numeric constant, so the cast is not made
//! again for every row. Stored expressions (CHECK, DEFAULT, index expressions and
//! predicates) keep their casts as written, as PostgreSQL keeps `(0)::numeric`; where
//! the planner compares a statement's expressions with an index's, it folds the index's
//! the same way first.

#[allow(unused_imports)]
use super::*;

use common::Value;

/// `e` with its integer-to-numeric casts of constants folded, at any depth.
pub(crate) fn fold(e: Expr) -> Expr {
    let e = match e.kind {
        ExprKind::Const(_) | ExprKind::Column(_) | ExprKind::Param(_) => return e,
        _ => e
            .try_map_children(&mut |c| Ok(fold(c)))
            .expect("folding cannot fail"),
    };
    if let (DataType::Numeric(_), ExprKind::Cast { expr, .. }) = (&e.ty, &e.kind)
        && e.ty.typmod() < 0
        && let ExprKind::Const(v) = &expr.kind
        && let Some(i) = match v {
            Value::Int2(i) => Some(i64::from(*i)),
            Value::Int4(i) => Some(i64::from(*i)),
            Value::Int8(i) => Some(*i),
            _ => None,
        }
    {
        return Expr::constant(Value::Numeric(common::numeric::Numeric::from(i)), e.ty);
    }
    e
}

/// [`fold`] in place.
pub(crate) fn fold_in_place(e: &mut Expr) {
    let taken = std::mem::replace(e, Expr::constant(Value::Null, DataType::Unknown));
    *e = fold(taken);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: i32) -> Expr {
        Expr::constant(Value::Int4(v), DataType::Int4)
    }

    fn cast(e: Expr, ty: DataType) -> Expr {
        Expr::new(
            ExprKind::Cast {
                expr: Box::new(e),
                explicit: false,
            },
            ty,
        )
    }

    /// `1::numeric - x` folds its cast at any depth; a cast to a constrained numeric
    /// (which rounds) and a cast of a column do not fold.
    #[test]
    fn integer_constants_cast_to_numeric_fold() {
        let numeric = DataType::Numeric(None);
        let x = Expr::column(0, numeric);
        let e = Expr::new(
            ExprKind::Binary(
                BinaryOp::Sub,
                Box::new(cast(int(1), numeric)),
                Box::new(x.clone()),
            ),
            numeric,
        );
        let ExprKind::Binary(_, l, _) = fold(e).kind else {
            panic!("still a subtraction")
        };
        assert_eq!(
            l.kind,
            ExprKind::Const(Value::Numeric(common::numeric::Numeric::from(1i64)))
        );
        let constrained = DataType::Numeric(Some((10, 2)));
        assert!(matches!(
            fold(cast(int(1), constrained)).kind,
            ExprKind::Cast { .. }
        ));
        assert!(matches!(
            fold(cast(Expr::column(0, DataType::Int4), numeric)).kind,
            ExprKind::Cast { .. }
        ));
    }
}
