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
    match (from, to) {
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
        // ... and strings read as anything, only explicitly.
        (f, _) if f.is_string() => ctx == Explicit,
        (DataType::Int4, DataType::Bool) | (DataType::Bool, DataType::Int4) => ctx == Explicit,
        _ => false,
    }
}

/// Convert `expr` to `to` in `ctx`, or fail with the error PostgreSQL gives in that context.
/// Unknown-typed literals are read at bind time, so a bad literal fails here with 22P02.
pub fn coerce(expr: Expr, to: &DataType, ctx: CastContext) -> PgResult<Expr> {
    if let ExprKind::NumericLiteral(v) = expr.kind {
        if to.is_integer() && ctx != CastContext::Implicit {
            // numeric to integer rounds half away from zero.
            let r = v.round();
            let fits = match to {
                DataType::Int2 => (i16::MIN as f64..=i16::MAX as f64).contains(&r),
                DataType::Int4 => (i32::MIN as f64..=i32::MAX as f64).contains(&r),
                _ => r >= i64::MIN as f64 && r < i64::MAX as f64,
            };
            if !fits {
                let name = match to {
                    DataType::Int2 => "smallint",
                    DataType::Int4 => "integer",
                    _ => "bigint",
                };
                return Err(PgError::new(
                    SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                    format!("{name} out of range"),
                ));
            }
            let value = match to {
                DataType::Int2 => Value::Int2(r as i16),
                DataType::Int4 => Value::Int4(r as i32),
                _ => Value::Int8(r as i64),
            };
            return Ok(Expr::constant(value, *to));
        }
        if ctx == CastContext::Explicit {
            // `2.5::float8` is a float8 from here on.
            return coerce(Expr::constant(Value::Float8(v), DataType::Float8), to, ctx);
        }
    }
    if expr.ty == *to {
        return Ok(expr);
    }
    if expr.ty == DataType::Unknown {
        // A parameter of open type takes the type it is used as (`aid = $1`: int4).
        if let ExprKind::Param(i) = expr.kind {
            let param = Expr::new(ExprKind::Param(i), to.without_typmod());
            return coerce(param, to, ctx);
        }
        if let ExprKind::Const(v) = &expr.kind {
            let value = match v {
                Value::Null => Value::Null,
                // An explicit cast truncates an over-long string; input and assignment
                // report 22001.
                Value::Text(s) if ctx == CastContext::Explicit && to.is_string() => {
                    Value::Text(s.clone()).coerce_char_length(to, true)?
                }
                Value::Text(s) => Value::parse(s, to)?,
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
    // Same base type and no length to enforce: only the declared type changes.
    if expr.ty.without_typmod() == to.without_typmod() && to.typmod() < 0 {
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
            if t.numeric_rank() > result.numeric_rank() {
                result = t;
            }
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
