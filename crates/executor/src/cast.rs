//! Casts between values ([`cast_value`], the executor side of a bound Cast) and the
//! folding of constant expressions ([`fold_constant`]), below expression evaluation so
//! that EXPLAIN's and the catalog functions' deparsing can fold without evaluating.

use common::value::TextContext;
use common::{DataType, PgError, PgResult, SqlState, Value};
use sql::bound::{Expr, ExprKind, ScalarFunc};

use crate::math::{float_of, int_of, negate, out_of_range};
/// Fold an expression of constants, casts, negations and array constructors (what
/// EXPLAIN and `pg_get_expr` show folded, as PostgreSQL's planner folds them), reading
/// and showing text in `cx`. Anything else is an internal error.
pub fn fold_constant(e: &Expr, cx: &TextContext) -> PgResult<Value> {
    match &e.kind {
        ExprKind::Const(v) => Ok(v.clone()),
        ExprKind::Cast { expr, explicit } => {
            cast_value(fold_constant(expr, cx)?, &e.ty, *explicit, cx)
        }
        ExprKind::Neg(x) => negate(fold_constant(x, cx)?, &e.ty),
        ExprKind::Func(f @ ScalarFunc::ArrayCtor, args) => {
            let vals = args
                .iter()
                .map(|a| fold_constant(a, cx))
                .collect::<PgResult<Vec<_>>>()?;
            crate::array::eval(cx, *f, &vals, &e.ty)
                .unwrap_or_else(|| Err(PgError::internal("ARRAY[] is an array function")))
        }
        _ => Err(PgError::internal("not a constant expression")),
    }
}
/// Convert a value to `to` (the executor side of a bound Cast).
/// `cx`: the session's clock, zone and catalog, for text input and output.
pub fn cast_value(v: Value, to: &DataType, explicit: bool, cx: &TextContext) -> PgResult<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    match to {
        // Through text, as PostgreSQL's I/O conversion: void_in takes anything.
        DataType::Void => Ok(Value::Text(String::new())),
        DataType::Bool => match v {
            Value::Bool(_) => Ok(v),
            Value::Int4(i) => Ok(Value::Bool(i != 0)),
            Value::Text(_) | Value::Bpchar(_) => {
                Value::parse(v.as_str().unwrap_or_default(), to, cx)
            }
            _ => Err(PgError::internal("unsupported cast to boolean")),
        },
        DataType::Int2 | DataType::Int4 | DataType::Int8 => match &v {
            Value::Bool(b) => Ok(Value::Int4(*b as i32)),
            // oid -> int4 keeps the bits (4294967295 is -1), oid -> int8 the value.
            Value::Oid(o) | Value::Reg(_, o) => match to {
                DataType::Int4 => Ok(Value::Int4(*o as i32)),
                _ => Ok(Value::Int8(i64::from(*o))),
            },
            Value::Float4(_) | Value::Float8(_) => {
                let f = v.as_f64().unwrap_or(0.0).round_ties_even();
                if !f.is_finite() || f < i64::MIN as f64 || f >= i64::MAX as f64 {
                    return Err(out_of_range(to));
                }
                int_of(to, f as i64)
            }
            // Rounds half away from zero; NaN and the infinities are 0A000.
            Value::Numeric(n) => match to {
                DataType::Int2 => n.to_i16().map(Value::Int2),
                DataType::Int4 => n.to_i32().map(Value::Int4),
                _ => n.to_i64().map(Value::Int8),
            },
            Value::Text(_) | Value::Bpchar(_) => {
                Value::parse(v.as_str().unwrap_or_default(), to, cx)
            }
            other => int_of(to, other.as_i64().unwrap_or(0)),
        },
        DataType::Float4 | DataType::Float8 => match &v {
            Value::Text(_) | Value::Bpchar(_) => {
                Value::parse(v.as_str().unwrap_or_default(), to, cx)
            }
            Value::Float4(f) if *to == DataType::Float8 => Ok(Value::Float8(*f as f64)),
            Value::Numeric(n) if *to == DataType::Float8 => n.to_f64().map(Value::Float8),
            Value::Numeric(n) => n.to_f32().map(Value::Float4),
            other => {
                let f = other.as_f64().unwrap_or(0.0);
                float_of(to, f, f.is_finite(), f != 0.0)
            }
        },
        DataType::Numeric(_) => crate::math::cast_to_numeric(v, to),
        DataType::Text | DataType::Varchar(_) | DataType::Bpchar(_) => {
            let s = match &v {
                // The bool-to-text cast spells the words out (`booltext`), unlike `boolout`.
                Value::Bool(b) => Value::Text(if *b { "true" } else { "false" }.to_string()),
                Value::Text(_) => v,
                Value::Bpchar(s) if !matches!(to, DataType::Bpchar(_)) => {
                    Value::Text(s.trim_end_matches(' ').to_string())
                }
                Value::Bpchar(_) => v,
                other => Value::Text(other.to_text(cx).unwrap_or_default()),
            };
            s.coerce_char_length(to, explicit)
        }
        DataType::Date | DataType::Timestamp(_) | DataType::TimestampTz(_) | DataType::Interval => {
            crate::datetime::cast(cx, v, to)
        }
        DataType::Bytea => match &v {
            Value::Bytea(_) => Ok(v),
            Value::Text(_) | Value::Bpchar(_) => {
                Value::parse(v.as_str().unwrap_or_default(), to, cx)
            }
            _ => Err(PgError::internal("unsupported cast to bytea")),
        },
        DataType::Uuid => match &v {
            Value::Uuid(_) => Ok(v),
            Value::Text(_) | Value::Bpchar(_) => {
                Value::parse(v.as_str().unwrap_or_default(), to, cx)
            }
            _ => Err(PgError::internal("unsupported cast to uuid")),
        },
        DataType::Oid | DataType::Reg(_) => {
            let oid = match &v {
                Value::Text(_) | Value::Bpchar(_) => {
                    return Value::parse(v.as_str().unwrap_or_default(), to, cx);
                }
                Value::Oid(o) | Value::Reg(_, o) => *o,
                // int4 -> oid keeps the bits; int8 -> oid must fit.
                Value::Int2(i) => *i as i32 as u32,
                Value::Int4(i) => *i as u32,
                Value::Int8(i) => {
                    if (i32::MIN as i64..=u32::MAX as i64).contains(i) {
                        *i as u32
                    } else {
                        return Err(PgError::new(
                            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                            "OID out of range",
                        ));
                    }
                }
                other => return Err(PgError::internal(format!("cast of {other:?} to oid"))),
            };
            Ok(match to {
                DataType::Reg(kind) => Value::Reg(*kind, oid),
                _ => Value::Oid(oid),
            })
        }
        DataType::Array(at) => match v {
            Value::Text(_) | Value::Bpchar(_) => {
                Value::parse(v.as_str().unwrap_or_default(), to, cx)
            }
            Value::Array(a) => {
                let elem = at.elem();
                let items = a
                    .items
                    .iter()
                    .map(|x| cast_value(x.clone(), &elem, explicit, cx))
                    .collect::<PgResult<Vec<_>>>()?;
                Ok(Value::Array(std::sync::Arc::new(common::array::Array {
                    elem: elem.oid(),
                    dims: a.dims.clone(),
                    items,
                })))
            }
            other => Err(PgError::internal(format!("cast of {other:?} to an array"))),
        },
        DataType::Unknown => Ok(v),
    }
}
