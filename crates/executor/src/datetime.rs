//! Evaluation of the date/time operators, casts and functions the binder resolved
//! (`sql::binder::datetime`), over `common::datetime`.
//!
//! The session's zone and clock come from the statement's session clock
//! (`common::datetime::SessionClock`, passed down from the server): the same values
//! PostgreSQL's functions read from its per-backend globals.

use common::datetime::{
    self, Date, ExtractValue, Interval, SessionClock, TimeZone, Timestamp, TimestampTz,
};
use common::numeric::Numeric;
use common::value::TextContext;
use common::{DataType, PgError, PgResult, SqlState, Value};
use sql::bound::{BinaryOp, ScalarFunc};

fn mismatch(what: &str, v: &Value) -> PgError {
    PgError::internal(format!("{what} applied to {v:?}"))
}

/// `a op b` where the binder chose a date/time operator (`ty` is its result type).
pub(crate) fn arith(
    clock: &SessionClock,
    op: BinaryOp,
    a: &Value,
    b: &Value,
    ty: &DataType,
) -> PgResult<Value> {
    use BinaryOp::*;
    use Value as V;
    Ok(match (op, a, b) {
        (Add, V::Date(d), n) | (Add, n, V::Date(d)) if n.as_i64().is_some() => {
            V::Date(d.add_days(int4(n)?)?)
        }
        (Sub, V::Date(d), n) if n.as_i64().is_some() => V::Date(d.sub_days(int4(n)?)?),
        (Sub, V::Date(x), V::Date(y)) => V::Int4(x.days_since(*y)?),
        (Add, V::Date(d), V::Interval(i)) | (Add, V::Interval(i), V::Date(d)) => {
            V::Timestamp(d.add_interval(i)?)
        }
        (Sub, V::Date(d), V::Interval(i)) => V::Timestamp(d.sub_interval(i)?),
        (Add, V::Timestamp(t), V::Interval(i)) | (Add, V::Interval(i), V::Timestamp(t)) => {
            V::Timestamp(t.add_interval(i)?)
        }
        (Sub, V::Timestamp(t), V::Interval(i)) => V::Timestamp(t.sub_interval(i)?),
        (Add, V::TimestampTz(t), V::Interval(i)) | (Add, V::Interval(i), V::TimestampTz(t)) => {
            V::TimestampTz(t.add_interval(i, &clock.time_zone)?)
        }
        (Sub, V::TimestampTz(t), V::Interval(i)) => {
            V::TimestampTz(t.sub_interval(i, &clock.time_zone)?)
        }
        (Sub, V::Timestamp(x), V::Timestamp(y)) => V::Interval(x.sub_timestamp(*y)?),
        (Sub, V::TimestampTz(x), V::TimestampTz(y)) => V::Interval(x.sub_timestamptz(*y)?),
        (Add, V::Interval(x), V::Interval(y)) => V::Interval(x.checked_add(y)?),
        (Sub, V::Interval(x), V::Interval(y)) => V::Interval(x.checked_sub(y)?),
        (Mul, V::Interval(i), n) | (Mul, n, V::Interval(i)) => V::Interval(i.mul_f64(float(n)?)?),
        (Div, V::Interval(i), n) => {
            let d = float(n)?;
            if d == 0.0 {
                return Err(PgError::division_by_zero());
            }
            V::Interval(i.div_f64(d)?)
        }
        _ => {
            return Err(PgError::internal(format!(
                "no date/time operator {:?} {} {:?} giving {}",
                a,
                op.symbol(),
                b,
                ty.name()
            )));
        }
    })
}

fn int4(v: &Value) -> PgResult<i32> {
    v.as_i64()
        .and_then(|i| i32::try_from(i).ok())
        .ok_or_else(|| mismatch("int4 argument", v))
}

fn float(v: &Value) -> PgResult<f64> {
    v.as_f64().ok_or_else(|| mismatch("float8 argument", v))
}

fn text(v: &Value) -> PgResult<&str> {
    v.as_str().ok_or_else(|| mismatch("text argument", v))
}

/// `-interval`.
pub(crate) fn negate(v: &Value) -> PgResult<Value> {
    match v {
        Value::Interval(i) => Ok(Value::Interval(i.checked_neg()?)),
        other => Err(mismatch("unary minus", other)),
    }
}

/// A cast to a date/time type (`date_timestamp`, `timestamptz_date`, text input, ...);
/// `v` is not NULL.
pub(crate) fn cast(cx: &TextContext, v: Value, to: &DataType) -> PgResult<Value> {
    use Value as V;
    if let V::Text(_) | V::Bpchar(_) = &v {
        return Value::parse(v.as_str().unwrap_or_default(), to, cx);
    }
    let clock = &cx.clock;
    Ok(match (to, v) {
        (DataType::Date, v @ V::Date(_)) | (DataType::Interval, v @ V::Interval(_)) => v,
        (DataType::Date, V::Timestamp(t)) => V::Date(t.to_date()?),
        (DataType::Date, V::TimestampTz(t)) => V::Date(t.to_date(&clock.time_zone)?),
        // A `timestamp(p)` target rounds to its precision (`timestamp_scale`).
        (DataType::Timestamp(p), v) => V::Timestamp(
            match v {
                V::Timestamp(t) => t,
                V::Date(d) => d.to_timestamp()?,
                V::TimestampTz(t) => t.to_timestamp(&clock.time_zone)?,
                v => return Err(unsupported_cast(v, to)),
            }
            .with_precision(*p)?,
        ),
        (DataType::TimestampTz(p), v) => V::TimestampTz(
            match v {
                V::TimestampTz(t) => t,
                V::Date(d) => d.to_timestamptz(&clock.time_zone)?,
                V::Timestamp(t) => t.to_timestamptz(&clock.time_zone)?,
                v => return Err(unsupported_cast(v, to)),
            }
            .with_precision(*p)?,
        ),
        (to, v) => return Err(unsupported_cast(v, to)),
    })
}

fn unsupported_cast(v: Value, to: &DataType) -> PgError {
    PgError::internal(format!("unsupported cast of {v:?} to {}", to.name()))
}

/// An extracted field as `date_part` (float8) or `extract` (numeric) returns it.
fn extracted(v: Option<ExtractValue>, as_numeric: bool) -> PgResult<Value> {
    Ok(match v {
        None => Value::Null,
        Some(x) if as_numeric => Value::Numeric(Numeric::parse(&x.to_string())?),
        Some(x) => Value::Float8(x.to_f64()),
    })
}

/// A date/time function; `args` has no NULL (they are all strict) except for the clock
/// readings, which take none.
pub(crate) fn eval_func(clock: &SessionClock, f: ScalarFunc, args: &[Value]) -> PgResult<Value> {
    use ScalarFunc as F;
    use Value as V;
    let arg = |i: usize| -> PgResult<&Value> {
        args.get(i)
            .ok_or_else(|| PgError::internal(format!("{f:?} without argument {}", i + 1)))
    };
    let int = |i: usize| arg(i).and_then(int4);
    Ok(match f {
        F::Now | F::CurrentTimestamp | F::TransactionTimestamp => {
            V::TimestampTz(clock.transaction_start)
        }
        F::StatementTimestamp => V::TimestampTz(clock.statement_start),
        F::ClockTimestamp => V::TimestampTz(datetime::clock_timestamp()),
        F::CurrentDate => V::Date(clock.transaction_start.to_date(&clock.time_zone)?),
        F::LocalTimestamp => V::Timestamp(clock.transaction_start.to_timestamp(&clock.time_zone)?),
        F::DateTrunc => {
            let field = text(arg(0)?)?;
            match arg(1)? {
                V::Timestamp(t) => V::Timestamp(t.trunc(field)?),
                V::TimestampTz(t) => V::TimestampTz(t.trunc(field, &clock.time_zone)?),
                other => return Err(mismatch("date_trunc", other)),
            }
        }
        F::DatePart | F::Extract => {
            let field = text(arg(0)?)?;
            let v = match arg(1)? {
                V::Date(d) => d.extract(field)?,
                V::Timestamp(t) => t.extract(field)?,
                V::TimestampTz(t) => t.extract(field, &clock.time_zone)?,
                V::Interval(i) => i.extract(field)?,
                other => return Err(mismatch("date_part", other)),
            };
            extracted(v, f == F::Extract)?
        }
        F::Age => match (arg(0)?, arg(1)?) {
            (V::Timestamp(a), V::Timestamp(b)) => V::Interval(a.age(*b)?),
            (V::TimestampTz(a), V::TimestampTz(b)) => V::Interval(a.age(*b, &clock.time_zone)?),
            (other, _) => return Err(mismatch("age", other)),
        },
        F::MakeDate => V::Date(Date::make(int(0)?, int(1)?, int(2)?)?),
        F::MakeTimestamp | F::MakeTimestampTz => {
            let (y, mo, d, h, mi) = (int(0)?, int(1)?, int(2)?, int(3)?, int(4)?);
            let s = float(arg(5)?)?;
            if f == F::MakeTimestamp {
                V::Timestamp(Timestamp::make(y, mo, d, h, mi, s)?)
            } else {
                V::TimestampTz(TimestampTz::make(y, mo, d, h, mi, s, &clock.time_zone)?)
            }
        }
        F::MakeInterval => V::Interval(Interval::make(
            int(0)?,
            int(1)?,
            int(2)?,
            int(3)?,
            int(4)?,
            int(5)?,
            float(arg(6)?)?,
        )?),
        F::JustifyHours | F::JustifyDays | F::JustifyInterval => {
            let V::Interval(i) = arg(0)? else {
                return Err(mismatch("justify", arg(0)?));
            };
            V::Interval(match f {
                F::JustifyHours => i.justify_hours()?,
                F::JustifyDays => i.justify_days()?,
                _ => i.justify_interval()?,
            })
        }
        F::ToTimestamp => V::TimestampTz(TimestampTz::from_unix_seconds(float(arg(0)?)?)?),
        F::AtTimeZone => {
            let name = text(arg(0)?)?;
            let zone = TimeZone::lookup(name).ok_or_else(|| {
                PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("time zone \"{name}\" not recognized"),
                )
            })?;
            match arg(1)? {
                V::Timestamp(t) => V::TimestampTz(t.to_timestamptz(&zone)?),
                V::TimestampTz(t) => V::Timestamp(t.to_timestamp(&zone)?),
                other => return Err(mismatch("timezone", other)),
            }
        }
        F::Lower
        | F::Upper
        | F::Length
        | F::OctetLength
        | F::BitLength
        | F::Substr
        | F::Repeat
        | F::Abs
        | F::Round
        | F::Trunc
        | F::Ceil
        | F::Floor
        | F::Sign
        | F::Sqrt
        | F::Exp
        | F::Ln
        | F::Log
        | F::Power
        | F::Mod
        | F::Div
        | F::Scale
        | F::NextVal
        | F::CurrVal
        | F::SetVal
        | F::LastVal
        | F::GenRandomUuid
        | F::PgCancelBackend
        | F::PgTerminateBackend
        | F::PgSleep
        | F::PgStatForceNextFlush
        | F::PgStatReset
        | F::PgStatResetSingleTableCounters
        | F::Random
        | F::PgGetUserById
        | F::PgTableIsVisible
        | F::PgRelationSize
        | F::PgTableSize
        | F::PgColumnSize
        | F::PgIndexesSize
        | F::PgTotalRelationSize
        | F::PgSizePretty
        | F::ArrayCtor
        | F::Subscript
        | F::ArrayCompare { .. }
        | F::ArrayLength
        | F::ArrayUpper
        | F::ArrayLower
        | F::ArrayNdims
        | F::ArrayDims
        | F::Cardinality
        | F::ArrayToString
        | F::ArrayPosition
        | F::ArrayAppend
        | F::ArrayPrepend
        | F::ArrayCat
        | F::ArrayRemove
        | F::StringToArray
        | F::ArrayContains
        | F::ArrayContained
        | F::ArrayOverlap
        | F::FormatType
        | F::PgGetExpr
        | F::PgGetIndexDef
        | F::PgGetConstraintDef
        | F::PgGetStatisticsObjDefColumns
        | F::PgRelationIsPublishable
        | F::PgPartitionAncestors
        | F::PgGetPartKeyDef
        | F::PgPartitionRoot
        | F::PartitionOfRow
        | F::PgPartitionTree
        | F::PartitionParent
        | F::PartitionIsLeaf
        | F::PartitionLevel
        | F::PgGetPartitionConstraintDef
        | F::PgGetTriggerDef
        | F::PgEncodingToChar
        | F::ColDescription
        | F::ObjDescription
        | F::ShobjDescription
        | F::QuoteIdent
        | F::CurrentSetting
        | F::SetConfig
        | F::PgTypeIsVisible
        | F::PgFunctionIsVisible
        | F::PgGetFunctionArguments
        | F::PgGetFunctionIdentityArguments
        | F::PgGetFunctionResult => {
            return Err(PgError::internal(format!(
                "{f:?} is not a date/time function"
            )));
        }
    })
}
