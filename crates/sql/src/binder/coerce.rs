//! Type coercion: PostgreSQL's implicit, assignment and explicit casts for Myriad's types.

use common::{DataType, PgError, PgResult, SqlState, Value};

use crate::bound::{Expr, ExprKind};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastContext {
    /// Inserted silently when resolving an operator or function.
    Implicit,
    /// Storing into a column (INSERT, UPDATE).
    Assignment,
    /// Written by the user (`::`, CAST).
    Explicit,
}

/// Is there a cast from `from` to `to` usable in `ctx` (pg_cast's castcontext)?
pub fn can_cast(from: &DataType, to: &DataType, ctx: CastContext) -> bool {
    use CastContext::*;
    if from.without_typmod() == to.without_typmod() || *from == DataType::Unknown {
        return true;
    }
    let oid_like = |t: &DataType| matches!(t, DataType::Oid | DataType::Reg(_));
    match (from, to) {
        // Arrays convert element by element (`array_coerce`), where the elements do.
        (DataType::Array(f), DataType::Array(t)) => can_cast(&f.elem(), &t.elem(), ctx),
        // Integers are OIDs implicitly; back by assignment (pg_cast: int4 -> oid,
        // int8 -> oid, int4 -> regclass, ... implicit; oid -> int4, oid -> int8
        // assignment). oid and the reg* types are binary-coercible both ways.
        (f, t) if f.is_integer() && oid_like(t) => true,
        (f, t) if oid_like(f) && t.is_integer() => {
            ctx != Implicit && matches!(t, DataType::Int4 | DataType::Int8)
        }
        (f, t) if oid_like(f) && oid_like(t) => *f == DataType::Oid || *t == DataType::Oid,
        // Up the ladder int2 < int4 < int8 < numeric < float4 < float8 implicitly; down
        // it (rounding, or failing with 22003) by assignment or explicitly.
        (f, t) if f.is_numeric() && t.is_numeric() => {
            ctx != Implicit || f.numeric_rank() < t.numeric_rank()
        }
        (f, t) if f.is_string() && t.is_string() => {
            // text/varchar/bpchar convert implicitly among themselves
            true
        }
        // date -> timestamp -> timestamptz implicitly; back down (losing the time of day
        // or the zone) by assignment or explicitly.
        (f, t) if f.is_datetime() && t.is_datetime() => {
            ctx != Implicit || f.datetime_rank() < t.datetime_rank()
        }
        // Everything can be written as a string (I/O conversion), but only by assignment
        // or explicitly.
        (_, t) if t.is_string() => ctx != Implicit,
        // ... and strings read as anything, only explicitly (text -> regclass is
        // implicit in PostgreSQL: `'t'::text::regclass` reads a name).
        (f, DataType::Reg(_)) if f.is_string() => true,
        (f, _) if f.is_string() => ctx == Explicit,
        (DataType::Int4, DataType::Bool) | (DataType::Bool, DataType::Int4) => ctx == Explicit,
        _ => false,
    }
}

/// Convert `expr` to `to` in `ctx`, or fail with the error PostgreSQL gives in that context.
/// Unknown-typed literals are read at bind time, in the session's context `text` (its
/// clock, zone and catalog), so a bad literal fails here with 22P02.
pub fn coerce_in(
    expr: Expr,
    to: &DataType,
    ctx: CastContext,
    text: &common::value::TextContext,
) -> PgResult<Expr> {
    if expr.ty == *to {
        return Ok(expr);
    }
    if expr.ty == DataType::Unknown {
        // A parameter of open type takes the type it is used as (`aid = $1`: int4).
        if let ExprKind::Param(i) = expr.kind {
            let param = Expr::new(ExprKind::Param(i), to.without_typmod());
            return coerce_in(param, to, ctx, text);
        }
        if let ExprKind::Const(v) = &expr.kind {
            let value = match v {
                Value::Null => Value::Null,
                // An explicit cast truncates an over-long string; input and assignment
                // report 22001.
                Value::Text(s) if ctx == CastContext::Explicit && to.is_string() => {
                    Value::Text(s.clone()).coerce_char_length(to, true)?
                }
                // An array with a length: read without it, then cut to it as the
                // context does (`'{abcd}'::varchar(2)[]` is `{ab}`).
                Value::Text(s) if matches!(to, DataType::Array(_)) && to.typmod() >= 0 => {
                    let v = Value::parse(s, &to.without_typmod(), text)?;
                    return Ok(Expr::new(
                        ExprKind::Cast {
                            expr: Box::new(Expr::constant(v, to.without_typmod())),
                            explicit: ctx == CastContext::Explicit,
                        },
                        *to,
                    ));
                }
                Value::Text(s) => Value::parse(s, to, text)?,
                other => other.clone(),
            };
            return Ok(Expr::constant(value, *to));
        }
        return Ok(Expr::new(
            ExprKind::Cast {
                expr: Box::new(expr),
                explicit: ctx == CastContext::Explicit,
            },
            *to,
        ));
    }
    if !can_cast(&expr.ty, to, ctx) {
        return Err(cast_error(&expr.ty, to, ctx));
    }
    // Same base type and no length to enforce: only the declared type changes. Not for a
    // cast, whose type is what it converts to: `x::varchar(2)` must still cut.
    if expr.ty.without_typmod() == to.without_typmod()
        && to.typmod() < 0
        && !matches!(expr.kind, ExprKind::Cast { .. })
    {
        return Ok(Expr { ty: *to, ..expr });
    }
    Ok(Expr::new(
        ExprKind::Cast {
            expr: Box::new(expr),
            explicit: ctx == CastContext::Explicit,
        },
        *to,
    ))
}

pub fn cast_error(from: &DataType, to: &DataType, ctx: CastContext) -> PgError {
    match ctx {
        CastContext::Explicit => PgError::new(
            SqlState::CANNOT_COERCE,
            format!("cannot cast type {} to {}", from.name(), to.name()),
        ),
        _ => PgError::new(
            SqlState::DATATYPE_MISMATCH,
            format!(
                "expression is of type {} but {} was expected",
                from.name(),
                to.name()
            ),
        ),
    }
}

/// PostgreSQL's `select_common_type` for Myriad's types: the type a set of expressions
/// (CASE branches, COALESCE arguments, IN lists, VALUES columns) is unified to.
/// `what` names the construct in the error (`CASE`, `COALESCE`, `VALUES`, `IN`).
pub fn common_type(types: &[DataType], what: &str) -> PgResult<DataType> {
    let result = common_type_with_typmod(types, what)?;
    // PostgreSQL coerces each input to the common type with no typmod
    // (`coerce_to_common_type`); only when every input already has the same one is there
    // a typmod to keep. An untyped literal must not be rounded or cut to a column's.
    Ok(if types.contains(&DataType::Unknown) {
        result.without_typmod()
    } else {
        result
    })
}

fn common_type_with_typmod(types: &[DataType], what: &str) -> PgResult<DataType> {
    let known: Vec<&DataType> = types.iter().filter(|t| **t != DataType::Unknown).collect();
    let Some(first) = known.first() else {
        return Ok(DataType::Text);
    };
    let mut result = **first;
    for t in &known[1..] {
        let t = **t;
        if t.without_typmod() == result.without_typmod() {
            if t != result {
                result = result.without_typmod();
            }
            continue;
        }
        // An integer meets an OID as an OID (int4 -> oid is implicit).
        let oid_like = |t: &DataType| matches!(t, DataType::Oid | DataType::Reg(_));
        if oid_like(&result) && (t.is_integer() || oid_like(&t)) {
            continue;
        }
        if oid_like(&t) && result.is_integer() {
            result = t;
            continue;
        }
        let same_category = (t.is_numeric() && result.is_numeric())
            || (t.is_string() && result.is_string())
            || (t.is_datetime() && result.is_datetime());
        if !same_category {
            return Err(PgError::new(
                SqlState::DATATYPE_MISMATCH,
                format!(
                    "{what} types {} and {} cannot be matched",
                    result.name(),
                    t.name()
                ),
            ));
        }
        if t.is_numeric() {
            // A typmod survives only where every input has the same (select_common_typmod).
            if t.numeric_rank() > result.numeric_rank() {
                result = t;
            }
            result = result.without_typmod();
        } else if t.is_datetime() {
            if t.datetime_rank() > result.datetime_rank() {
                result = t;
            }
        } else {
            // Mixed string types resolve to text, the category's preferred type.
            result = DataType::Text;
        }
    }
    Ok(result)
}

impl super::Binder<'_> {
    /// [`coerce_in`] in this binding's session.
    pub(crate) fn coerce(&self, expr: Expr, to: &DataType, ctx: CastContext) -> PgResult<Expr> {
        coerce_in(expr, to, ctx, &self.session.text)
    }
}
