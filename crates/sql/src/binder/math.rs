//! Binding arithmetic's result types and the mathematical functions: PostgreSQL's
//! `pg_proc` entries for `abs`, `round`, `trunc`, `ceil`, `floor`, `sign`, `sqrt`, `exp`,
//! `ln`, `log`, `power`, `mod`, `div`, `scale` and `random`, with its resolution rules.
//!
//! Most of these functions exist for `float8` and for `numeric`. PostgreSQL's
//! `func_select_candidate` picks between them so (the only rules that matter here):
//! 1. A version reachable by implicit casts only: `float8` takes every number (numeric
//!    casts to float8 implicitly), `numeric` every number but the floats (float8 to
//!    numeric is an assignment cast). So a float argument means `float8`.
//! 2. Else the version with the most exact argument matches: a `numeric` argument
//!    means `numeric`.
//! 3. Else the preferred type of the category, `float8`: `sqrt(2)` and `round(5)` are
//!    double precision, and so is an untyped literal (`sqrt('2')`).
//!
//! `abs` also has integer and `float4` versions, which take their own type; `mod` has
//! integer and numeric versions only; `round(x, s)`, `trunc(x, s)`, `log(b, x)`, `div`
//! and `scale` are numeric only.

use common::{DataType, PgResult};

use super::coerce::CastContext;
use super::datetime::ambiguous_function;
use super::expr::{undefined_function, undefined_operator};
use crate::bound::{Expr, ExprKind, ScalarFunc};

/// The type `l op r` computes in for two number types (PostgreSQL's operator
/// resolution over `+ - * / %`): float4 if both are float4, float8 if either is a
/// float, else the wider of the two (int2 < int4 < int8 < numeric). Never a typmod.
pub(crate) fn arith_type(l: DataType, r: DataType) -> DataType {
    match (l, r) {
        (DataType::Float4, DataType::Float4) => DataType::Float4,
        (a, b) if a.is_float() || b.is_float() => DataType::Float8,
        (a, b) => {
            if a.numeric_rank() >= b.numeric_rank() {
                a.without_typmod()
            } else {
                b.without_typmod()
            }
        }
    }
}

fn func(f: ScalarFunc, args: Vec<Expr>, ty: DataType) -> Expr {
    Expr::new(ExprKind::Func(f, args), ty)
}

/// The version of a function with `float8` and `numeric` versions that `args` select
/// (module doc), or `None` if an argument is not a number.
fn float_or_numeric(args: &[Expr]) -> Option<DataType> {
    let mut numeric = false;
    let mut float = false;
    for a in args {
        match a.ty {
            DataType::Unknown => {}
            t if t.is_float() => float = true,
            DataType::Numeric(_) => numeric = true,
            t if t.is_integer() => {}
            _ => return None,
        }
    }
    Some(if numeric && !float {
        DataType::Numeric(None)
    } else {
        DataType::Float8
    })
}

/// Can `a` reach `ty` by an implicit cast (an untyped literal always can)?
fn reaches(a: &Expr, ty: &DataType) -> bool {
    a.ty == DataType::Unknown || super::coerce::can_cast(&a.ty, ty, CastContext::Implicit)
}

/// Every argument converted to `ty` implicitly, or 42883 naming the call as written.
fn all_as(b: &super::Binder<'_>, name: &str, args: Vec<Expr>, ty: DataType) -> PgResult<Vec<Expr>> {
    if !args.iter().all(|a| reaches(a, &ty)) {
        return Err(undefined_function(name, &args));
    }
    args.into_iter()
        .map(|a| b.coerce(a, &ty, CastContext::Implicit))
        .collect()
}

/// A function of the `float8`/`numeric` family, its result of the selected type.
fn float_or_numeric_call(
    b: &super::Binder<'_>,
    name: &str,
    f: ScalarFunc,
    args: Vec<Expr>,
) -> PgResult<Expr> {
    let ty = float_or_numeric(&args).ok_or_else(|| undefined_function(name, &args))?;
    Ok(func(f, all_as(b, name, args, ty)?, ty))
}

/// `round(x, s)` and `trunc(x, s)`: `(numeric, int4)`.
fn numeric_with_scale(
    b: &super::Binder<'_>,
    name: &str,
    f: ScalarFunc,
    args: Vec<Expr>,
) -> PgResult<Expr> {
    let numeric = DataType::Numeric(None);
    let [x, s] =
        <[Expr; 2]>::try_from(args.clone()).map_err(|_| undefined_function(name, &args))?;
    if !reaches(&x, &numeric) || !reaches(&s, &DataType::Int4) {
        return Err(undefined_function(name, &args));
    }
    let x = b.coerce(x, &numeric, CastContext::Implicit)?;
    let s = b.coerce(s, &DataType::Int4, CastContext::Implicit)?;
    Ok(func(f, vec![x, s], numeric))
}

/// `a ^ b`: `power(a, b)` for numbers, else PostgreSQL's missing-operator error.
pub(crate) fn bind_power_operator(b: &super::Binder<'_>, l: Expr, r: Expr) -> PgResult<Expr> {
    let number = |t: &DataType| t.is_numeric() || *t == DataType::Unknown;
    if !number(&l.ty) || !number(&r.ty) {
        return Err(undefined_operator("^", &l.ty, &r.ty));
    }
    float_or_numeric_call(b, "power", ScalarFunc::Power, vec![l, r])
}

/// `mod(a, b)`: the integer or numeric version the arguments reach, as `%` would pick;
/// an untyped argument takes the other's type.
fn bind_mod(b: &super::Binder<'_>, args: Vec<Expr>) -> PgResult<Expr> {
    let typed: Vec<DataType> = args
        .iter()
        .map(|a| a.ty)
        .filter(|t| *t != DataType::Unknown)
        .collect();
    if typed.is_empty() {
        return Err(ambiguous_function("mod", &args));
    }
    if typed
        .iter()
        .any(|t| !(t.is_integer() || matches!(t, DataType::Numeric(_))))
    {
        return Err(undefined_function("mod", &args));
    }
    let ty = typed.into_iter().fold(DataType::Int2, arith_type);
    Ok(func(ScalarFunc::Mod, all_as(b, "mod", args, ty)?, ty))
}

/// The mathematical function `name(args)`, or `None` when `name` is not one of them.
pub(crate) fn bind_function(
    b: &super::Binder<'_>,
    name: &str,
    args: Vec<Expr>,
) -> Option<PgResult<Expr>> {
    use ScalarFunc as F;
    let numeric = DataType::Numeric(None);
    let one = |f: F| float_or_numeric_call(b, name, f, args.clone());
    Some(match (name, args.len()) {
        ("abs", 1) => {
            let a = args[0].clone();
            match a.ty {
                DataType::Unknown => b
                    .coerce(a, &DataType::Float8, CastContext::Implicit)
                    .map(|a| func(F::Abs, vec![a], DataType::Float8)),
                t if t.is_numeric() => Ok(func(F::Abs, vec![a], t.without_typmod())),
                _ => Err(undefined_function(name, &args)),
            }
        }
        ("round", 1) => one(F::Round),
        ("trunc", 1) => one(F::Trunc),
        ("round", 2) => numeric_with_scale(b, name, F::Round, args),
        ("trunc", 2) => numeric_with_scale(b, name, F::Trunc, args),
        ("ceil" | "ceiling", 1) => one(F::Ceil),
        ("floor", 1) => one(F::Floor),
        ("sign", 1) => one(F::Sign),
        ("sqrt", 1) => one(F::Sqrt),
        ("exp", 1) => one(F::Exp),
        ("ln", 1) => one(F::Ln),
        ("log" | "log10", 1) => one(F::Log),
        ("power" | "pow", 2) => one(F::Power),
        ("log", 2) => {
            all_as(b, name, args, numeric).map(|a| func(F::Log, a, DataType::Numeric(None)))
        }
        ("div", 2) => all_as(b, name, args, numeric).map(|a| func(F::Div, a, numeric)),
        ("scale", 1) => all_as(b, name, args, numeric).map(|a| func(F::Scale, a, DataType::Int4)),
        ("mod", 2) => bind_mod(b, args),
        ("random", 0) => Ok(func(F::Random, args, DataType::Float8)),
        _ => return None,
    })
}
