//! Arithmetic on numbers (integer range checks, float overflow, `numeric`), `numeric`
//! casts, and of the mathematical functions the
//! binder resolved (`sql::binder::math`) in their float8 and numeric versions.
//!
//! The numeric versions are `common::numeric`'s, which match PostgreSQL digit for digit.
//! The float8 versions follow PostgreSQL's `float.c`: its special cases for NaN and the
//! infinities, its domain errors (2201E, 2201F) and its overflow and underflow checks
//! (22003 `value out of range: overflow` / `underflow`).

use common::numeric::Numeric;
use common::{DataType, PgError, PgResult, SqlState, Value};
use sql::bound::{BinaryOp, ScalarFunc};

const INVALID_ARGUMENT_FOR_LOG: SqlState = SqlState("2201E");
const INVALID_ARGUMENT_FOR_POWER_FUNCTION: SqlState = SqlState("2201F");
pub(crate) fn out_of_range(ty: &DataType) -> PgError {
    let name = match ty {
        DataType::Int2 => "smallint",
        DataType::Int4 => "integer",
        _ => "bigint",
    };
    PgError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("{name} out of range"),
    )
}

/// Build an integer value of type `ty` from an i64, checking its range.
pub(crate) fn int_of(ty: &DataType, v: i64) -> PgResult<Value> {
    match ty {
        DataType::Int2 => i16::try_from(v)
            .map(Value::Int2)
            .map_err(|_| out_of_range(ty)),
        DataType::Int4 => i32::try_from(v)
            .map(Value::Int4)
            .map_err(|_| out_of_range(ty)),
        _ => Ok(Value::Int8(v)),
    }
}

pub(crate) fn float_of(
    ty: &DataType,
    v: f64,
    inputs_finite: bool,
    inputs_nonzero: bool,
) -> PgResult<Value> {
    match ty {
        DataType::Float4 => {
            let f = v as f32;
            if f.is_infinite() && inputs_finite {
                return Err(float_overflow());
            }
            if f == 0.0 && inputs_nonzero {
                return Err(float_underflow());
            }
            Ok(Value::Float4(f))
        }
        _ => {
            if v.is_infinite() && inputs_finite {
                return Err(float_overflow());
            }
            if v == 0.0 && inputs_nonzero {
                return Err(float_underflow());
            }
            Ok(Value::Float8(v))
        }
    }
}
/// `-v`, of type `ty`.
pub(crate) fn negate(v: Value, ty: &DataType) -> PgResult<Value> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::Float4(f) => Ok(Value::Float4(-f)),
        Value::Float8(f) => Ok(Value::Float8(-f)),
        Value::Numeric(n) => Ok(Value::Numeric(n.neg())),
        Value::Interval(_) => crate::datetime::negate(&v),
        other => {
            let i = other
                .as_i64()
                .ok_or_else(|| PgError::internal("negation of a non-number"))?;
            int_of(ty, i.checked_neg().ok_or_else(|| out_of_range(ty))?)
        }
    }
}
/// `a op b` over numbers (date/time arithmetic is `crate::datetime::arith`).
pub(crate) fn arith(op: BinaryOp, a: &Value, b: &Value, ty: &DataType) -> PgResult<Value> {
    if let DataType::Numeric(_) = ty {
        return crate::math::numeric_arith(op, a, b);
    }
    if ty.is_float() {
        let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
        let finite = x.is_finite() && y.is_finite();
        let v = match op {
            BinaryOp::Add => x + y,
            BinaryOp::Sub => x - y,
            BinaryOp::Mul => {
                return float_of(ty, x * y, finite, x != 0.0 && y != 0.0);
            }
            BinaryOp::Div => {
                if y == 0.0 {
                    return Err(PgError::division_by_zero());
                }
                return float_of(ty, x / y, finite, x != 0.0);
            }
            _ => return Err(PgError::internal("unsupported float operator")),
        };
        return float_of(ty, v, finite, false);
    }
    let (x, y) = (
        a.as_i64()
            .ok_or_else(|| PgError::internal("integer operator on a non-integer"))?,
        b.as_i64()
            .ok_or_else(|| PgError::internal("integer operator on a non-integer"))?,
    );
    let v = match op {
        BinaryOp::Add => x.checked_add(y),
        BinaryOp::Sub => x.checked_sub(y),
        BinaryOp::Mul => x.checked_mul(y),
        BinaryOp::Div => {
            if y == 0 {
                return Err(PgError::division_by_zero());
            }
            x.checked_div(y)
        }
        BinaryOp::Mod => {
            if y == 0 {
                return Err(PgError::division_by_zero());
            }
            Some(x.checked_rem(y).unwrap_or(0))
        }
        _ => return Err(PgError::internal("unsupported integer operator")),
    };
    int_of(ty, v.ok_or_else(|| out_of_range(ty))?)
}

fn mismatch(what: &str, v: &Value) -> PgError {
    PgError::internal(format!("{what} applied to {v:?}"))
}

/// `v` as a numeric: borrowed where it is one (no copy of its digits per operation).
fn numeric(v: &Value) -> PgResult<std::borrow::Cow<'_, Numeric>> {
    match v {
        Value::Numeric(n) => Ok(std::borrow::Cow::Borrowed(n)),
        other => other
            .as_numeric()
            .map(std::borrow::Cow::Owned)
            .ok_or_else(|| mismatch("numeric argument", v)),
    }
}

/// `a op b` in numeric (the binder cast both operands to numeric).
pub(crate) fn numeric_arith(op: BinaryOp, a: &Value, b: &Value) -> PgResult<Value> {
    let (x, y) = (numeric(a)?, numeric(b)?);
    Ok(Value::Numeric(match op {
        BinaryOp::Add => x.add(&y)?,
        BinaryOp::Sub => x.sub(&y)?,
        BinaryOp::Mul => x.mul(&y)?,
        BinaryOp::Div => x.div(&y)?,
        BinaryOp::Mod => x.modulo(&y)?,
        _ => return Err(PgError::internal("unsupported numeric operator")),
    }))
}

/// A cast to `numeric` or `numeric(p, s)` (`v` is not NULL): exact from the integers,
/// through 15 (float8) or 6 (float4) significant digits from the floats, text input;
/// then the target's typmod, with 22003 `numeric field overflow` as in PostgreSQL.
pub(crate) fn cast_to_numeric(v: Value, to: &DataType) -> PgResult<Value> {
    let typmod = to.typmod();
    let n = match &v {
        Value::Numeric(n) => n.clone(),
        Value::Float8(f) => Numeric::from_f64(*f),
        Value::Float4(f) => Numeric::from_f32(*f),
        Value::Text(_) | Value::Bpchar(_) => {
            return Numeric::parse_typmod(v.as_str().unwrap_or_default(), typmod)
                .map(Value::Numeric);
        }
        other => other
            .as_i64()
            .map(Numeric::from)
            .ok_or_else(|| mismatch("cast to numeric", other))?,
    };
    n.apply_typmod_raw(typmod).map(Value::Numeric)
}

fn float_overflow() -> PgError {
    PgError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        "value out of range: overflow",
    )
}

fn float_underflow() -> PgError {
    PgError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        "value out of range: underflow",
    )
}

/// PostgreSQL's `check_float8_val`: an infinite result from finite input overflowed, a
/// zero result from input that cannot give zero underflowed.
fn check_float8(v: f64, inf_is_valid: bool, zero_is_valid: bool) -> PgResult<Value> {
    if v.is_infinite() && !inf_is_valid {
        return Err(float_overflow());
    }
    if v == 0.0 && !zero_is_valid {
        return Err(float_underflow());
    }
    Ok(Value::Float8(v))
}

fn log_domain(x: f64) -> PgResult<()> {
    if x == 0.0 {
        return Err(PgError::new(
            INVALID_ARGUMENT_FOR_LOG,
            "cannot take logarithm of zero",
        ));
    }
    if x < 0.0 {
        return Err(PgError::new(
            INVALID_ARGUMENT_FOR_LOG,
            "cannot take logarithm of a negative number",
        ));
    }
    Ok(())
}

/// `dpow`: POSIX `pow()` with PostgreSQL's domain errors and range checks.
fn float_power(x: f64, y: f64) -> PgResult<Value> {
    if x.is_nan() {
        return Ok(Value::Float8(if y.is_nan() || y != 0.0 {
            f64::NAN
        } else {
            1.0
        }));
    }
    if y.is_nan() {
        return Ok(Value::Float8(if x != 1.0 { f64::NAN } else { 1.0 }));
    }
    if x == 0.0 && y < 0.0 {
        return Err(PgError::new(
            INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "zero raised to a negative power is undefined",
        ));
    }
    if x < 0.0 && y.floor() != y {
        return Err(PgError::new(
            INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    // Rust's powf is C's pow, whose infinities follow POSIX as PostgreSQL's do.
    let r = x.powf(y);
    if x.is_infinite() || y.is_infinite() {
        return Ok(Value::Float8(r));
    }
    if r.is_infinite() {
        return Err(float_overflow());
    }
    if r == 0.0 && x != 0.0 {
        return Err(float_underflow());
    }
    Ok(Value::Float8(r))
}

/// `dexp`: exp(-Infinity) is 0; finite input overflowing or underflowing is an error.
fn float_exp(x: f64) -> PgResult<Value> {
    if x.is_nan() {
        return Ok(Value::Float8(x));
    }
    if x.is_infinite() {
        return Ok(Value::Float8(if x > 0.0 { x } else { 0.0 }));
    }
    check_float8(x.exp(), false, false)
}

fn float_function(f: ScalarFunc, args: &[f64]) -> PgResult<Value> {
    use ScalarFunc as F;
    let x = args[0];
    Ok(Value::Float8(match f {
        F::Abs => x.abs(),
        // rint(): half to even.
        F::Round => x.round_ties_even(),
        F::Trunc => x.trunc(),
        F::Ceil => x.ceil(),
        F::Floor => x.floor(),
        F::Sign => {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            }
        }
        F::Sqrt => {
            if x < 0.0 {
                return Err(PgError::new(
                    INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                    "cannot take square root of a negative number",
                ));
            }
            return check_float8(x.sqrt(), x.is_infinite(), x == 0.0);
        }
        F::Exp => return float_exp(x),
        F::Ln => {
            log_domain(x)?;
            return check_float8(x.ln(), x.is_infinite(), x == 1.0);
        }
        F::Log => {
            log_domain(x)?;
            return check_float8(x.log10(), x.is_infinite(), x == 1.0);
        }
        F::Power => return float_power(x, args[1]),
        other => {
            return Err(PgError::internal(format!("no float8 version of {other:?}")));
        }
    }))
}

fn int_arg(v: &Value) -> PgResult<i32> {
    v.as_i64()
        .and_then(|i| i32::try_from(i).ok())
        .ok_or_else(|| mismatch("int4 argument", v))
}

fn numeric_function(f: ScalarFunc, args: &[Value]) -> PgResult<Value> {
    use ScalarFunc as F;
    let x = numeric(&args[0])?;
    let second = || numeric(&args[1]).map(std::borrow::Cow::into_owned);
    Ok(Value::Numeric(match (f, args.len()) {
        (F::Abs, _) => x.abs(),
        (F::Round, 1) => x.round(0)?,
        (F::Round, _) => x.round(int_arg(&args[1])?)?,
        (F::Trunc, 1) => x.trunc(0)?,
        (F::Trunc, _) => x.trunc(int_arg(&args[1])?)?,
        (F::Ceil, _) => x.ceil()?,
        (F::Floor, _) => x.floor()?,
        (F::Sign, _) => x.sign(),
        (F::Sqrt, _) => x.sqrt()?,
        (F::Exp, _) => x.exp()?,
        (F::Ln, _) => x.ln()?,
        (F::Log, 1) => x.log10()?,
        // log(b, x): the first argument is the base.
        (F::Log, _) => x.log(&second()?)?,
        (F::Power, _) => x.power(&second()?)?,
        (F::Div, _) => x.div_trunc(&second()?)?,
        (F::Scale, _) => return Ok(x.scale().map_or(Value::Null, Value::Int4)),
        (other, _) => {
            return Err(PgError::internal(format!(
                "no numeric version of {other:?}"
            )));
        }
    }))
}

/// A mathematical function (`args` has no NULL): the version the binder chose, told
/// apart by its result type `ty` (`mod` by its arguments' type).
pub(crate) fn eval_func(f: ScalarFunc, args: &[Value], ty: &DataType) -> PgResult<Value> {
    use ScalarFunc as F;
    match f {
        F::Mod => arith(BinaryOp::Mod, &args[0], &args[1], ty),
        F::Abs => match &args[0] {
            Value::Float4(v) => Ok(Value::Float4(v.abs())),
            Value::Float8(v) => Ok(Value::Float8(v.abs())),
            Value::Numeric(n) => Ok(Value::Numeric(n.abs())),
            other => {
                let i = other.as_i64().ok_or_else(|| mismatch("abs", other))?;
                let (min, name) = match ty {
                    DataType::Int2 => (i16::MIN as i64, "smallint"),
                    DataType::Int4 => (i32::MIN as i64, "integer"),
                    _ => (i64::MIN, "bigint"),
                };
                if i == min {
                    return Err(PgError::new(
                        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                        format!("{name} out of range"),
                    ));
                }
                Ok(match ty {
                    DataType::Int2 => Value::Int2(i.abs() as i16),
                    DataType::Int4 => Value::Int4(i.abs() as i32),
                    _ => Value::Int8(i.abs()),
                })
            }
        },
        F::Div | F::Scale => numeric_function(f, args),
        _ if matches!(ty, DataType::Float8) => {
            let xs = args
                .iter()
                .map(|a| a.as_f64().ok_or_else(|| mismatch("float8 argument", a)))
                .collect::<PgResult<Vec<_>>>()?;
            float_function(f, &xs)
        }
        _ => numeric_function(f, args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(t: &str) -> Value {
        Value::Numeric(Numeric::parse(t).unwrap())
    }

    fn text(v: PgResult<Value>) -> String {
        match v {
            Ok(v) => v
                .to_text(&common::value::TextContext::detached())
                .unwrap_or_else(|| "NULL".into()),
            Err(e) => format!("ERROR {}: {}", e.code.0, e.message),
        }
    }

    /// Expected values from PostgreSQL 15.
    #[test]
    fn float_functions_match_postgres() {
        let f8 = DataType::Float8;
        let call = |f, args: &[f64]| {
            let vals: Vec<Value> = args.iter().map(|a| Value::Float8(*a)).collect();
            text(eval_func(f, &vals, &f8))
        };
        assert_eq!(call(ScalarFunc::Round, &[2.5]), "2");
        assert_eq!(call(ScalarFunc::Round, &[-3.5]), "-4");
        assert_eq!(call(ScalarFunc::Trunc, &[-3.7]), "-3");
        assert_eq!(call(ScalarFunc::Sign, &[-0.5]), "-1");
        assert_eq!(call(ScalarFunc::Sqrt, &[2.0]), "1.4142135623730951");
        assert_eq!(
            call(ScalarFunc::Sqrt, &[-1.0]),
            "ERROR 2201F: cannot take square root of a negative number"
        );
        assert_eq!(
            call(ScalarFunc::Ln, &[0.0]),
            "ERROR 2201E: cannot take logarithm of zero"
        );
        assert_eq!(
            call(ScalarFunc::Log, &[-1.0]),
            "ERROR 2201E: cannot take logarithm of a negative number"
        );
        assert_eq!(call(ScalarFunc::Log, &[1000.0]), "3");
        assert_eq!(
            call(ScalarFunc::Exp, &[1000.0]),
            "ERROR 22003: value out of range: overflow"
        );
        assert_eq!(
            call(ScalarFunc::Exp, &[-1000.0]),
            "ERROR 22003: value out of range: underflow"
        );
        assert_eq!(call(ScalarFunc::Exp, &[f64::NEG_INFINITY]), "0");
        assert_eq!(call(ScalarFunc::Power, &[2.0, 10.0]), "1024");
        assert_eq!(call(ScalarFunc::Power, &[f64::NAN, 0.0]), "1");
        assert_eq!(
            call(ScalarFunc::Power, &[0.0, -1.0]),
            "ERROR 2201F: zero raised to a negative power is undefined"
        );
        assert_eq!(
            call(ScalarFunc::Power, &[-8.0, 1.0 / 3.0]),
            "ERROR 2201F: a negative number raised to a non-integer power yields a complex result"
        );
        assert_eq!(
            call(ScalarFunc::Power, &[10.0, 400.0]),
            "ERROR 22003: value out of range: overflow"
        );
    }

    #[test]
    fn numeric_functions_and_casts() {
        let n = DataType::Numeric(None);
        assert_eq!(text(eval_func(ScalarFunc::Round, &[num("2.5")], &n)), "3");
        assert_eq!(
            text(eval_func(
                ScalarFunc::Round,
                &[num("-2.345"), Value::Int4(2)],
                &n
            )),
            "-2.35"
        );
        assert_eq!(
            text(eval_func(
                ScalarFunc::Trunc,
                &[num("2.999"), Value::Int4(-1)],
                &n
            )),
            "0"
        );
        assert_eq!(
            text(eval_func(
                ScalarFunc::Scale,
                &[num("1.500")],
                &DataType::Int4
            )),
            "3"
        );
        assert_eq!(
            text(eval_func(ScalarFunc::Mod, &[num("7.5"), num("2")], &n)),
            "1.5"
        );
        assert_eq!(
            text(numeric_arith(BinaryOp::Div, &num("1"), &num("0.0"))),
            "ERROR 22012: division by zero"
        );
        assert_eq!(
            text(cast_to_numeric(
                Value::Float8(0.1),
                &DataType::Numeric(Some((5, 2)))
            )),
            "0.10"
        );
        assert_eq!(
            text(cast_to_numeric(
                num("123.456"),
                &DataType::Numeric(Some((4, 2)))
            )),
            "ERROR 22003: numeric field overflow"
        );
        assert_eq!(
            text(cast_to_numeric(Value::Int8(i64::MIN), &n)),
            "-9223372036854775808"
        );
    }
}
