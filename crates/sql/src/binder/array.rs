//! Binding arrays: `ARRAY[...]`, subscripts, `op ANY/ALL (array)`, the array operators
//! (`||`, `@>`, `<@`, `&&`, comparisons) and the array functions, with PostgreSQL's
//! polymorphic resolution (`anyarray` / `anycompatiblearray`): the element arguments
//! and the arrays are brought to one element type, an untyped literal taking the type
//! the other arguments give it (`x = ANY('{1,2}')` reads the literal as an array of
//! `x`'s type).

use common::{DataType, PgError, PgResult, SqlState, Value};
use sqlparser::ast::{self, BinaryOperator};

use super::Binder;
use super::coerce::{CastContext, common_type};
use super::expr::{
    ExprContext, array_type_of, comparison_op, undefined_function, undefined_operator,
};
use crate::bound::{Expr, ExprKind, ScalarFunc};

fn func(f: ScalarFunc, args: Vec<Expr>, ty: DataType) -> Expr {
    Expr::new(ExprKind::Func(f, args), ty)
}

fn is_array(e: &Expr) -> bool {
    matches!(e.ty, DataType::Array(_))
}

/// The error for an empty `ARRAY[]` with nothing to give it a type.
fn empty_array_error() -> PgError {
    PgError::new(
        SqlState::INDETERMINATE_DATATYPE,
        "cannot determine type of empty array",
    )
    .with_hint("Explicitly cast to the desired type, for example ARRAY[]::integer[].")
}

impl Binder<'_> {
    /// `ARRAY[e, ...]` (and the bare `[e, ...]` rows of a nested one). `target` is the
    /// array type a surrounding cast asks for, which types an empty array.
    pub(crate) fn bind_array_ctor(
        &self,
        elems: &[ast::Expr],
        target: Option<&DataType>,
        cx: &ExprContext,
    ) -> PgResult<Expr> {
        if elems.is_empty() {
            return match target {
                Some(t @ DataType::Array(_)) => Ok(Expr::constant(
                    Value::Array(std::sync::Arc::new(common::array::Array::from_items(
                        t.elem().map_or(0, |e| e.oid()),
                        vec![],
                    ))),
                    *t,
                )),
                _ => Err(empty_array_error()),
            };
        }
        let bound = elems
            .iter()
            .map(|e| match e {
                ast::Expr::Array(inner) => self.bind_array_ctor(&inner.elem, target, cx),
                other => self.bind_expr(other, cx),
            })
            .collect::<PgResult<Vec<_>>>()?;
        let nested = bound.iter().any(is_array);
        if nested
            && !bound
                .iter()
                .all(|e| is_array(e) || e.ty == DataType::Unknown)
        {
            let name = |want: bool| {
                bound
                    .iter()
                    .find(|e| is_array(e) == want && e.ty != DataType::Unknown)
                    .map_or(String::new(), |e| e.ty.name())
            };
            return Err(PgError::new(
                SqlState::DATATYPE_MISMATCH,
                format!(
                    "ARRAY types {} and {} cannot be matched",
                    name(false),
                    name(true)
                ),
            ));
        }
        let types: Vec<DataType> = bound.iter().map(|e| e.ty.elem().unwrap_or(e.ty)).collect();
        let elem = match target.and_then(DataType::elem) {
            // A cast of the whole constructor types its elements directly
            // (`ARRAY['1']::int[]` reads '1' as an integer).
            // (without its length: the cast around cuts them to it).
            Some(t) if bound.iter().all(|e| e.ty == DataType::Unknown) => t.without_typmod(),
            _ => common_type(&types, "ARRAY")?.without_typmod(),
        };
        let array_ty = array_type_of(&elem)?;
        let args = bound
            .into_iter()
            .map(|e| {
                let to = if nested { array_ty } else { elem };
                self.coerce(e, &to, CastContext::Implicit)
            })
            .collect::<PgResult<Vec<_>>>()?;
        Ok(func(ScalarFunc::ArrayCtor, args, array_ty))
    }

    /// `base[i][j]...`.
    pub(crate) fn bind_subscript(&self, base: Expr, index: Vec<Expr>) -> PgResult<Expr> {
        let Some(elem) = base.ty.elem() else {
            return Err(PgError::new(
                SqlState::DATATYPE_MISMATCH,
                format!(
                    "cannot subscript type {} because it does not support subscripting",
                    base.ty.name()
                ),
            ));
        };
        let mut args = vec![base];
        for i in index {
            if !(i.ty.is_integer() || i.ty == DataType::Unknown) {
                return Err(PgError::new(
                    SqlState::DATATYPE_MISMATCH,
                    "array subscript must have type integer",
                ));
            }
            // Subscripts are int4 (PostgreSQL casts a bigint one down, by assignment).
            args.push(self.coerce(i, &DataType::Int4, CastContext::Assignment)?);
        }
        Ok(func(ScalarFunc::Subscript, args, elem.without_typmod()))
    }

    /// `test op ANY (array)`, or ALL.
    pub(crate) fn bind_array_compare(
        &self,
        test: Expr,
        op: &BinaryOperator,
        array: Expr,
        all: bool,
    ) -> PgResult<Expr> {
        let Some(cmp) = comparison_op(op) else {
            return Err(PgError::unsupported(format!("{op} ANY/ALL (array)")));
        };
        let array = if array.ty == DataType::Unknown {
            let elem = if test.ty == DataType::Unknown {
                DataType::Text
            } else {
                test.ty.without_typmod()
            };
            self.coerce(array, &array_type_of(&elem)?, CastContext::Implicit)?
        } else {
            array
        };
        let Some(elem) = array.ty.elem() else {
            return Err(PgError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!(
                    "op {} (array) requires array on right side",
                    if all { "ALL" } else { "ANY" }
                ),
            ));
        };
        // The comparison as `test op element` would resolve it; the array follows the
        // element's side.
        let (l, r) = self.unify_for_comparison(test, Expr::column(0, elem), cmp.symbol())?;
        let array = if r.ty.without_typmod() == elem.without_typmod() {
            array
        } else {
            self.coerce(array, &array_type_of(&r.ty)?, CastContext::Implicit)?
        };
        Ok(func(
            ScalarFunc::ArrayCompare { op: cmp, all },
            vec![l, array],
            DataType::Bool,
        ))
    }

    /// Comparing two arrays (`=`, `<`, ...): both of one array type.
    pub(crate) fn unify_arrays(&self, l: Expr, r: Expr, op: &str) -> PgResult<(Expr, Expr)> {
        let (lt, rt) = (l.ty, r.ty);
        let ty = match (lt, rt) {
            (DataType::Unknown, t) | (t, DataType::Unknown) => t.without_typmod(),
            (a, b) if a.without_typmod() == b.without_typmod() => a.without_typmod(),
            _ => return Err(undefined_operator(op, &lt, &rt)),
        };
        Ok((
            self.coerce(l, &ty, CastContext::Implicit)?,
            self.coerce(r, &ty, CastContext::Implicit)?,
        ))
    }

    /// `a || b` where either side is an array: array_cat, array_append or
    /// array_prepend, as PostgreSQL resolves the three `||` operators over arrays (an
    /// untyped side, NULL included, is read as an array).
    pub(crate) fn bind_array_concat(&self, l: Expr, r: Expr) -> PgResult<Expr> {
        let (lt, rt) = (l.ty, r.ty);
        let err = || undefined_operator("||", &lt, &rt);
        match (is_array(&l), is_array(&r)) {
            (true, true) => {
                let elem =
                    common_type(&[lt.elem().unwrap_or(lt), rt.elem().unwrap_or(rt)], "ARRAY")
                        .map_err(|_| err())?;
                let ty = array_type_of(&elem.without_typmod())?;
                let l = self.coerce(l, &ty, CastContext::Implicit)?;
                let r = self.coerce(r, &ty, CastContext::Implicit)?;
                Ok(func(ScalarFunc::ArrayCat, vec![l, r], ty))
            }
            (true, false) if rt == DataType::Unknown => {
                let ty = lt.without_typmod();
                let r = self.coerce(r, &ty, CastContext::Implicit)?;
                Ok(func(ScalarFunc::ArrayCat, vec![l, r], ty))
            }
            (false, true) if lt == DataType::Unknown => {
                let ty = rt.without_typmod();
                let l = self.coerce(l, &ty, CastContext::Implicit)?;
                Ok(func(ScalarFunc::ArrayCat, vec![l, r], ty))
            }
            (true, false) => {
                let elem = common_type(&[lt.elem().unwrap_or(lt), rt], "ARRAY")
                    .map_err(|_| err())?
                    .without_typmod();
                let ty = array_type_of(&elem)?;
                let l = self.coerce(l, &ty, CastContext::Implicit)?;
                let r = self.coerce(r, &elem, CastContext::Implicit)?;
                Ok(func(ScalarFunc::ArrayAppend, vec![l, r], ty))
            }
            (false, true) => {
                let elem = common_type(&[lt, rt.elem().unwrap_or(rt)], "ARRAY")
                    .map_err(|_| err())?
                    .without_typmod();
                let ty = array_type_of(&elem)?;
                let l = self.coerce(l, &elem, CastContext::Implicit)?;
                let r = self.coerce(r, &ty, CastContext::Implicit)?;
                Ok(func(ScalarFunc::ArrayPrepend, vec![l, r], ty))
            }
            (false, false) => Err(err()),
        }
    }

    /// `@>`, `<@`, `&&`: two arrays of one element type.
    pub(crate) fn bind_array_set_op(
        &self,
        f: ScalarFunc,
        symbol: &str,
        l: Expr,
        r: Expr,
    ) -> PgResult<Expr> {
        if !is_array(&l) && !is_array(&r) {
            return Err(undefined_operator(symbol, &l.ty, &r.ty));
        }
        let (l, r) = self.unify_arrays(l, r, symbol)?;
        Ok(func(f, vec![l, r], DataType::Bool))
    }
}

/// The arguments as `(anyarray, anyelement)`: the array and the element brought to one
/// element type; `None` if the first is not an array (or an untyped literal).
fn array_and_element(
    b: &super::Binder<'_>,
    name: &str,
    a: Expr,
    x: Expr,
) -> PgResult<(Expr, Expr)> {
    let all = [a.clone(), x.clone()];
    let elem = match (a.ty, x.ty) {
        (DataType::Array(at), DataType::Unknown) => at.elem().without_typmod(),
        (DataType::Array(at), t) => common_type(&[at.elem(), t], "ARRAY")
            .map_err(|_| undefined_function(name, &all))?
            .without_typmod(),
        (DataType::Unknown, DataType::Unknown) => DataType::Text,
        (DataType::Unknown, t) if t.elem().is_none() => t.without_typmod(),
        _ => return Err(undefined_function(name, &all)),
    };
    let ty = array_type_of(&elem)?;
    Ok((
        b.coerce(a, &ty, CastContext::Implicit)?,
        b.coerce(x, &elem, CastContext::Implicit)?,
    ))
}

/// The array functions, or `None` if `name` is not one.
pub(crate) fn bind_function(
    b: &super::Binder<'_>,
    name: &str,
    args: Vec<Expr>,
) -> Option<PgResult<Expr>> {
    use ScalarFunc as F;
    let f = match (name, args.len()) {
        ("array_length", 2) => F::ArrayLength,
        ("array_upper", 2) => F::ArrayUpper,
        ("array_lower", 2) => F::ArrayLower,
        ("array_ndims", 1) => F::ArrayNdims,
        ("array_dims", 1) => F::ArrayDims,
        ("cardinality", 1) => F::Cardinality,
        ("array_to_string", 2 | 3) => F::ArrayToString,
        ("array_position", 2 | 3) => F::ArrayPosition,
        ("array_append", 2) => F::ArrayAppend,
        ("array_prepend", 2) => F::ArrayPrepend,
        ("array_cat", 2) => F::ArrayCat,
        ("array_remove", 2) => F::ArrayRemove,
        ("string_to_array", 2 | 3) => F::StringToArray,
        _ => return None,
    };
    Some(bind(b, name, f, args))
}

fn bind(b: &super::Binder<'_>, name: &str, f: ScalarFunc, args: Vec<Expr>) -> PgResult<Expr> {
    use ScalarFunc as F;
    let all = args.clone();
    let no_such = || undefined_function(name, &all);
    let mut it = args.into_iter();
    let mut next = || it.next().expect("arity checked by the caller");
    // The one array argument (an untyped literal cannot be: PostgreSQL cannot pick an
    // element type for it).
    let array = |a: Expr| -> PgResult<Expr> {
        if is_array(&a) {
            Ok(a)
        } else {
            Err(undefined_function(name, &all))
        }
    };
    let int = |a: Expr| -> PgResult<Expr> {
        if a.ty.is_integer() || a.ty == DataType::Unknown {
            b.coerce(a, &DataType::Int4, CastContext::Implicit)
        } else {
            Err(undefined_function(name, &all))
        }
    };
    let text = |a: Expr| -> PgResult<Expr> {
        if a.ty.is_string() || a.ty == DataType::Unknown {
            b.coerce(a, &DataType::Text, CastContext::Implicit)
        } else {
            Err(undefined_function(name, &all))
        }
    };
    match f {
        F::ArrayLength | F::ArrayUpper | F::ArrayLower => {
            let a = array(next())?;
            let d = int(next())?;
            Ok(func(f, vec![a, d], DataType::Int4))
        }
        F::ArrayNdims | F::Cardinality => Ok(func(f, vec![array(next())?], DataType::Int4)),
        F::ArrayDims => Ok(func(f, vec![array(next())?], DataType::Text)),
        F::ArrayToString => {
            let mut out = vec![array(next())?, text(next())?];
            if all.len() == 3 {
                out.push(text(next())?);
            }
            Ok(func(f, out, DataType::Text))
        }
        F::StringToArray => {
            let mut out = vec![text(next())?, text(next())?];
            if all.len() == 3 {
                out.push(text(next())?);
            }
            let ty = DataType::Text.array().expect("text has an array type");
            Ok(func(f, out, ty))
        }
        F::ArrayPosition => {
            let (a, x) = array_and_element(b, name, next(), next())?;
            let mut out = vec![a, x];
            if all.len() == 3 {
                out.push(int(next())?);
            }
            Ok(func(f, out, DataType::Int4))
        }
        F::ArrayAppend | F::ArrayRemove => {
            let (a, x) = array_and_element(b, name, next(), next())?;
            let ty = a.ty;
            Ok(func(f, vec![a, x], ty))
        }
        F::ArrayPrepend => {
            let x = next();
            let (a, x) = array_and_element(b, name, next(), x)?;
            let ty = a.ty;
            Ok(func(f, vec![x, a], ty))
        }
        F::ArrayCat => {
            let (l, r) = (next(), next());
            if !is_array(&l) && !is_array(&r) {
                return Err(no_such());
            }
            let elem = common_type(
                &[l.ty.elem().unwrap_or(l.ty), r.ty.elem().unwrap_or(r.ty)],
                "ARRAY",
            )
            .map_err(|_| no_such())?;
            let ty = array_type_of(&elem.without_typmod())?;
            let l = b.coerce(l, &ty, CastContext::Implicit)?;
            let r = b.coerce(r, &ty, CastContext::Implicit)?;
            Ok(func(f, vec![l, r], ty))
        }
        _ => Err(no_such()),
    }
}
