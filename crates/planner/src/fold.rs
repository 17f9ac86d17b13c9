//! Constant folding before planning (planner rule 14, a part of PostgreSQL's
//! `eval_const_expressions`): an integer constant cast to unconstrained numeric (`1 - x`
//! over a numeric `x`, `x * 2`) becomes a numeric constant, and `+`, `-` or `*` of two
//! integer (`1 + 10`) or numeric (`0.06 - 0.01`) constants becomes their result, so none
//! is computed again for every row. Stored expressions (CHECK, DEFAULT, index expressions and
//! predicates) keep their casts as written, as PostgreSQL keeps `(0)::numeric`; where
//! the planner compares a statement's expressions with an index's, it folds the index's
//! the same way first.

#[allow(unused_imports)]
use super::*;

use common::Value;

/// `e` with its constant casts and arithmetic folded, at any depth.
pub fn fold(e: Expr) -> Expr {
    let e = match e.kind {
        ExprKind::Const(_) | ExprKind::Column(_) | ExprKind::Param(_) => return e,
        _ => e
            .try_map_children(&mut |c| Ok(fold(c)))
            .expect("folding cannot fail"),
    };
    folded(&e).unwrap_or(e)
}

/// The constant node `e` folds to, its children as they are; `None` if it does not.
fn folded(e: &Expr) -> Option<Expr> {
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
        return Some(Expr::constant(
            Value::Numeric(common::numeric::Numeric::from(i)),
            e.ty,
        ));
    }
    // `+`, `-` and `*` of two integer constants of the result's type (`1 + 10`), where
    // it does not overflow (an overflow is left to fail when it runs).
    if let ExprKind::Binary(op @ (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul), l, r) = &e.kind
        && let (ExprKind::Const(a), ExprKind::Const(b)) = (&l.kind, &r.kind)
    {
        let folded = match (a, b, &e.ty) {
            (Value::Int4(a), Value::Int4(b), DataType::Int4) => match op {
                BinaryOp::Add => a.checked_add(*b),
                BinaryOp::Sub => a.checked_sub(*b),
                _ => a.checked_mul(*b),
            }
            .map(Value::Int4),
            (Value::Int8(a), Value::Int8(b), DataType::Int8) => match op {
                BinaryOp::Add => a.checked_add(*b),
                BinaryOp::Sub => a.checked_sub(*b),
                _ => a.checked_mul(*b),
            }
            .map(Value::Int8),
            _ => None,
        };
        if let Some(v) = folded {
            return Some(Expr::constant(v, e.ty));
        }
    }
    // `+`, `-` and `*` of two numeric constants (`0.06 - 0.01`): the constant they make.
    // One that fails (out of range) is left to fail when it runs, as it would have.
    if let ExprKind::Binary(op @ (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul), l, r) = &e.kind
        && let (ExprKind::Const(Value::Numeric(a)), ExprKind::Const(Value::Numeric(b))) =
            (&l.kind, &r.kind)
        && matches!(e.ty, DataType::Numeric(_))
        && e.ty.typmod() < 0
    {
        let v = match op {
            BinaryOp::Add => a.add(b),
            BinaryOp::Sub => a.sub(b),
            _ => a.mul(b),
        };
        if let Ok(v) = v {
            return Some(Expr::constant(Value::Numeric(v), e.ty));
        }
    }
    None
}

/// [`fold`] in place; an expression with nothing to fold (most of them) is looked at,
/// not rebuilt.
#[inline]
pub(crate) fn fold_in_place(e: &mut Expr) {
    // A bare column or constant (most of a select list) has nothing to fold.
    if matches!(
        e.kind,
        ExprKind::Column(_) | ExprKind::Const(_) | ExprKind::Param(_)
    ) {
        return;
    }
    let mut any = false;
    e.walk(&mut |x| any = any || folded(x).is_some());
    if !any {
        return;
    }
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
        // 0.06 - 0.01, and 2 * (0.06 - 0.01) with the 2 cast: 0.05 and 0.10.
        let num = |s: &str| {
            Expr::constant(
                Value::Numeric(common::numeric::Numeric::parse(s).expect("a number")),
                numeric,
            )
        };
        let sub = Expr::new(
            ExprKind::Binary(BinaryOp::Sub, Box::new(num("0.06")), Box::new(num("0.01"))),
            numeric,
        );
        let mul = Expr::new(
            ExprKind::Binary(
                BinaryOp::Mul,
                Box::new(cast(int(2), numeric)),
                Box::new(sub),
            ),
            numeric,
        );
        let ExprKind::Const(Value::Numeric(v)) = fold(mul).kind else {
            panic!("not folded")
        };
        assert_eq!(v.to_string(), "0.10");
        // (1 + 10)::numeric is '11'::numeric; 2147483647 + 1 is left to fail at run time.
        let add = |a: i32, b: i32| {
            Expr::new(
                ExprKind::Binary(BinaryOp::Add, Box::new(int(a)), Box::new(int(b))),
                DataType::Int4,
            )
        };
        let ExprKind::Const(Value::Numeric(v)) = fold(cast(add(1, 10), numeric)).kind else {
            panic!("not folded")
        };
        assert_eq!(v.to_string(), "11");
        assert!(matches!(fold(add(i32::MAX, 1)).kind, ExprKind::Binary(..)));
    }
}
