//! Binding the date/time types' operators and functions: PostgreSQL's `pg_operator` and
//! `pg_proc` entries for `date`, `timestamp`, `timestamptz` and `interval`, with its
//! resolution rules for untyped literals.
//!
//! Operator resolution (PostgreSQL's `oper_select_candidate`, cut down to these types):
//! 1. Known operand types: the operator whose signature they reach by implicit casts
//!    ([`signature`]: `int2` widens to `int4`, any number to `float8` for `interval * n`,
//!    a date/time to a higher one in `date < timestamp < timestamptz`).
//! 2. One untyped literal: the operator taking the other operand's type on both sides if
//!    there is one (`ts - '2024-01-01'` is `timestamp - timestamp`); else the one
//!    operator that takes the known type at its position (`ts + '1 day'` is
//!    `timestamp + interval`); several is 42725, as `date + '1'` is in PostgreSQL.

use common::{DataType, PgError, PgResult, SqlState, Value};
use sqlparser::ast;

use super::coerce::CastContext;
use super::expr::{undefined_function, undefined_operator};
use crate::bound::{BinaryOp, Expr, ExprKind, ScalarFunc};

/// A type of the date/time or interval categories.
pub(crate) fn is_temporal(t: &DataType) -> bool {
    t.is_datetime() || *t == DataType::Interval
}

fn ambiguous_operator(op: &str, l: &DataType, r: &DataType) -> PgError {
    PgError::new(
        SqlState::AMBIGUOUS_FUNCTION,
        format!("operator is not unique: {} {} {}", l.name(), op, r.name()),
    )
    .with_hint(
        "Could not choose a best candidate operator. You might need to add explicit type casts.",
    )
}

pub(crate) fn ambiguous_function(name: &str, args: &[Expr]) -> PgError {
    let types: Vec<String> = args.iter().map(|a| a.ty.name()).collect();
    PgError::new(
        SqlState::AMBIGUOUS_FUNCTION,
        format!("function {}({}) is not unique", name, types.join(", ")),
    )
    .with_hint(
        "Could not choose a best candidate function. You might need to add explicit type casts.",
    )
}

/// The higher of two date/time types (`date < timestamp < timestamptz`).
fn higher(a: DataType, b: DataType) -> DataType {
    if a.datetime_rank() >= b.datetime_rank() {
        a
    } else {
        b
    }
}

/// The operator `l op r` reaches by implicit casts: (left type, right type, result type).
fn signature(op: BinaryOp, l: DataType, r: DataType) -> Option<(DataType, DataType, DataType)> {
    use BinaryOp::*;
    use DataType::*;
    let int4ish = |t: DataType| matches!(t, Int2 | Int4);
    Some(match (op, l, r) {
        (Add | Sub, Date, i) if int4ish(i) => (Date, Int4, Date),
        (Add, i, Date) if int4ish(i) => (Int4, Date, Date),
        (Sub, Date, Date) => (Date, Date, Int4),
        (Sub, a, b) if a.is_datetime() && b.is_datetime() => {
            let t = higher(higher(a, b), Timestamp(None));
            (t, t, Interval)
        }
        (Add | Sub, Date, Interval) => (Date, Interval, Timestamp(None)),
        (Add, Interval, Date) => (Interval, Date, Timestamp(None)),
        (Add | Sub, t @ (Timestamp(_) | TimestampTz(_)), Interval) => (t, Interval, t),
        (Add, Interval, t @ (Timestamp(_) | TimestampTz(_))) => (Interval, t, t),
        (Add | Sub, Interval, Interval) => (Interval, Interval, Interval),
        (Mul, Interval, n) if n.is_numeric() => (Interval, Float8, Interval),
        (Mul, n, Interval) if n.is_numeric() => (Float8, Interval, Interval),
        (Div, Interval, n) if n.is_numeric() => (Interval, Float8, Interval),
        _ => return None,
    })
}

/// Types an untyped literal may become in an operator with a date/time operand.
const CANDIDATES: [DataType; 6] = [
    DataType::Int4,
    DataType::Float8,
    DataType::Date,
    DataType::Timestamp(None),
    DataType::TimestampTz(None),
    DataType::Interval,
];

/// The type an untyped operand of `op` takes next to `known` (on the left if
/// `unknown_left`), by the rules in the module doc.
fn resolve_unknown(op: BinaryOp, known: DataType, unknown_left: bool) -> PgResult<DataType> {
    let sig = |u: DataType| {
        if unknown_left {
            signature(op, u, known).filter(|(a, b, _)| *a == u && *b == known)
        } else {
            signature(op, known, u).filter(|(a, b, _)| *a == known && *b == u)
        }
    };
    if sig(known).is_some() {
        return Ok(known);
    }
    let found: Vec<DataType> = CANDIDATES
        .into_iter()
        .filter(|u| sig(*u).is_some())
        .collect();
    let (l, r) = if unknown_left {
        (DataType::Unknown, known)
    } else {
        (known, DataType::Unknown)
    };
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(undefined_operator(op.symbol(), &l, &r)),
        _ => Err(ambiguous_operator(op.symbol(), &l, &r)),
    }
}

/// `l op r` for arithmetic where an operand is of a date/time or interval type.
pub(crate) fn bind_arith(b: &super::Binder<'_>, op: BinaryOp, l: Expr, r: Expr) -> PgResult<Expr> {
    // Operators take the types without their precision (`timestamp(0) + interval` is a
    // `timestamp`).
    let (lt, rt) = (l.ty.without_typmod(), r.ty.without_typmod());
    let (lt, rt) = match (lt, rt) {
        (DataType::Unknown, k) => (resolve_unknown(op, k, true)?, k),
        (k, DataType::Unknown) => (k, resolve_unknown(op, k, false)?),
        other => other,
    };
    let Some((la, ra, result)) = signature(op, lt, rt) else {
        return Err(undefined_operator(op.symbol(), &l.ty, &r.ty));
    };
    let l = b.coerce(l, &la, CastContext::Implicit)?;
    let r = b.coerce(r, &ra, CastContext::Implicit)?;
    if let Some(v) = fold_constant_arith(op, &l, &r)? {
        return Ok(Expr::constant(v, result));
    }
    Ok(Expr::new(
        ExprKind::Binary(op, Box::new(l), Box::new(r)),
        result,
    ))
}

/// `date ± interval` and `timestamp ± interval` of two constants, computed now, as
/// PostgreSQL's planner folds immutable operators of constants (`date '1994-01-01' +
/// interval '1' year` is `'1995-01-01 00:00:00'::timestamp` in its plans, and is not
/// computed again for each row). `timestamptz` arithmetic reads the session's time zone
/// (stable, not immutable) and is left to run.
fn fold_constant_arith(op: BinaryOp, l: &Expr, r: &Expr) -> PgResult<Option<Value>> {
    let (ExprKind::Const(lv), ExprKind::Const(rv)) = (&l.kind, &r.kind) else {
        return Ok(None);
    };
    Ok(Some(match (op, lv, rv) {
        (BinaryOp::Add, Value::Date(d), Value::Interval(i))
        | (BinaryOp::Add, Value::Interval(i), Value::Date(d)) => {
            Value::Timestamp(d.add_interval(i)?)
        }
        (BinaryOp::Sub, Value::Date(d), Value::Interval(i)) => Value::Timestamp(d.sub_interval(i)?),
        (BinaryOp::Add, Value::Timestamp(t), Value::Interval(i))
        | (BinaryOp::Add, Value::Interval(i), Value::Timestamp(t)) => {
            Value::Timestamp(t.add_interval(i)?)
        }
        (BinaryOp::Sub, Value::Timestamp(t), Value::Interval(i)) => {
            Value::Timestamp(t.sub_interval(i)?)
        }
        _ => return Ok(None),
    }))
}

fn func(f: ScalarFunc, args: Vec<Expr>, ty: DataType) -> Expr {
    Expr::new(ExprKind::Func(f, args), ty)
}

/// `CURRENT_DATE` as an expression (also the implicit first argument of `age(x)`).
fn current_date() -> Expr {
    func(ScalarFunc::CurrentDate, vec![], DataType::Date)
}

fn text_arg(b: &super::Binder<'_>, name: &str, a: Expr, all: &[Expr]) -> PgResult<Expr> {
    if a.ty.is_string() || a.ty == DataType::Unknown {
        b.coerce(a, &DataType::Text, CastContext::Implicit)
    } else {
        Err(undefined_function(name, all))
    }
}

fn int_arg(b: &super::Binder<'_>, name: &str, a: Expr, all: &[Expr]) -> PgResult<Expr> {
    if matches!(a.ty, DataType::Unknown | DataType::Int2 | DataType::Int4) {
        b.coerce(a, &DataType::Int4, CastContext::Implicit)
    } else {
        Err(undefined_function(name, all))
    }
}

fn float_arg(b: &super::Binder<'_>, name: &str, a: Expr, all: &[Expr]) -> PgResult<Expr> {
    if a.ty.is_numeric() || a.ty == DataType::Unknown {
        b.coerce(a, &DataType::Float8, CastContext::Implicit)
    } else {
        Err(undefined_function(name, all))
    }
}

fn interval_arg(b: &super::Binder<'_>, name: &str, a: Expr, all: &[Expr]) -> PgResult<Expr> {
    if matches!(a.ty, DataType::Interval | DataType::Unknown) {
        b.coerce(a, &DataType::Interval, CastContext::Implicit)
    } else {
        Err(undefined_function(name, all))
    }
}

/// The date/time type several arguments of a function with `timestamp` and `timestamptz`
/// versions resolve to: the exact type when one is given; for dates only, `timestamptz`
/// (the category's preferred type); the higher type for a mix. Untyped literals follow the
/// typed arguments; with none typed the call is ambiguous.
fn timestamp_kind(name: &str, args: &[Expr]) -> PgResult<DataType> {
    let typed: Vec<DataType> = args
        .iter()
        .map(|a| a.ty.without_typmod())
        .filter(|t| *t != DataType::Unknown)
        .collect();
    if typed.is_empty() {
        return Err(ambiguous_function(name, args));
    }
    if typed.iter().any(|t| !t.is_datetime()) {
        return Err(undefined_function(name, args));
    }
    if typed.iter().all(|t| *t == DataType::Date) {
        return Ok(DataType::TimestampTz(None));
    }
    Ok(typed.into_iter().fold(DataType::Timestamp(None), higher))
}

/// `date_part(field, x)` and `extract(field FROM x)`. `extract` of a date has its own
/// rules (it refuses time fields); `date_part` of a date reads it as a timestamp, as
/// PostgreSQL's SQL-language `date_part(text, date)` does.
pub(crate) fn bind_date_part(
    b: &super::Binder<'_>,
    field: Expr,
    source: Expr,
    extract: bool,
) -> PgResult<Expr> {
    let name = if extract { "extract" } else { "date_part" };
    let all = [field.clone(), source.clone()];
    let field = text_arg(b, name, field, &all)?;
    let source = match source.ty {
        DataType::Date if extract => source,
        DataType::Date => b.coerce(source, &DataType::Timestamp(None), CastContext::Implicit)?,
        DataType::Timestamp(_) | DataType::TimestampTz(_) | DataType::Interval => source,
        DataType::Unknown => return Err(ambiguous_function(name, &all)),
        _ => return Err(undefined_function(name, &all)),
    };
    // PostgreSQL 14 made extract return numeric (exact seconds and epochs); date_part
    // stayed float8.
    Ok(if extract {
        func(
            ScalarFunc::Extract,
            vec![field, source],
            DataType::Numeric(None),
        )
    } else {
        func(ScalarFunc::DatePart, vec![field, source], DataType::Float8)
    })
}

/// `x AT TIME ZONE zone` / `timezone(zone, x)`: a timestamp read as wall-clock time in
/// `zone` gives a timestamptz; a timestamptz shown in `zone` gives a timestamp.
pub(crate) fn bind_at_time_zone(b: &super::Binder<'_>, source: Expr, zone: Expr) -> PgResult<Expr> {
    let all = [zone.clone(), source.clone()];
    let zone = text_arg(b, "timezone", zone, &all)?;
    let (source, ty) = match source.ty {
        DataType::Timestamp(_) => (source, DataType::TimestampTz(None)),
        DataType::TimestampTz(_) => (source, DataType::Timestamp(None)),
        DataType::Date => (
            b.coerce(source, &DataType::TimestampTz(None), CastContext::Implicit)?,
            DataType::Timestamp(None),
        ),
        DataType::Unknown => return Err(ambiguous_function("timezone", &all)),
        _ => return Err(undefined_function("timezone", &all)),
    };
    Ok(func(ScalarFunc::AtTimeZone, vec![zone, source], ty))
}

/// The date/time function `name(args)`, or `None` when `name` is not one of them.
pub(crate) fn bind_function(
    b: &super::Binder<'_>,
    name: &str,
    args: Vec<Expr>,
) -> Option<PgResult<Expr>> {
    use DataType as T;
    use ScalarFunc as F;
    let all = args.clone();
    let n = args.len();
    let clock = |f, ty| Some(Ok(func(f, vec![], ty)));
    let result = match (name, n) {
        ("now", 0) => return clock(F::Now, T::TimestampTz(None)),
        ("transaction_timestamp", 0) => {
            return clock(F::TransactionTimestamp, T::TimestampTz(None));
        }
        ("current_timestamp", 0) => return clock(F::CurrentTimestamp, T::TimestampTz(None)),
        ("statement_timestamp", 0) => return clock(F::StatementTimestamp, T::TimestampTz(None)),
        ("clock_timestamp", 0) => return clock(F::ClockTimestamp, T::TimestampTz(None)),
        ("current_date", 0) => return clock(F::CurrentDate, T::Date),
        ("localtimestamp", 0) => return clock(F::LocalTimestamp, T::Timestamp(None)),
        // `current_timestamp(p)`, `localtimestamp(p)`: the clock rounded to `p` digits.
        ("current_timestamp" | "localtimestamp", 1) => {
            let p = match &args[0].kind {
                ExprKind::Const(Value::Int4(p)) if *p >= 0 => {
                    (*p).min(i32::from(common::types::MAX_TIMESTAMP_PRECISION)) as u8
                }
                _ => return Some(Err(undefined_function(name, &all))),
            };
            let (f, ty) = match name {
                "localtimestamp" => (F::LocalTimestamp, T::Timestamp(Some(p))),
                _ => (F::CurrentTimestamp, T::TimestampTz(Some(p))),
            };
            let now = func(f, vec![], ty.without_typmod());
            return Some(b.coerce(now, &ty, CastContext::Explicit));
        }
        ("date_trunc", 2) => {
            let mut it = args.into_iter();
            let (field, source) = (it.next()?, it.next()?);
            (|| {
                let field = text_arg(b, name, field, &all)?;
                let ty = match source.ty {
                    T::Timestamp(_) | T::TimestampTz(_) => source.ty.without_typmod(),
                    T::Date => T::TimestampTz(None),
                    T::Unknown => return Err(ambiguous_function(name, &all)),
                    _ => return Err(undefined_function(name, &all)),
                };
                let source = b.coerce(source, &ty, CastContext::Implicit)?;
                Ok(func(F::DateTrunc, vec![field, source], ty))
            })()
        }
        ("date_part", 2) => {
            let mut it = args.into_iter();
            let (field, source) = (it.next()?, it.next()?);
            bind_date_part(b, field, source, false)
        }
        ("timezone", 2) => {
            let mut it = args.into_iter();
            let (zone, source) = (it.next()?, it.next()?);
            bind_at_time_zone(b, source, zone)
        }
        ("age", 1 | 2) => (|| {
            let ty = timestamp_kind(name, &args)?;
            let mut args = args
                .into_iter()
                .map(|a| b.coerce(a, &ty, CastContext::Implicit))
                .collect::<PgResult<Vec<_>>>()?;
            if args.len() == 1 {
                // age(x) is age(CURRENT_DATE, x): from midnight today.
                args.insert(0, b.coerce(current_date(), &ty, CastContext::Implicit)?);
            }
            Ok(func(F::Age, args, T::Interval))
        })(),
        ("make_date", 3) => args
            .into_iter()
            .map(|a| int_arg(b, name, a, &all))
            .collect::<PgResult<Vec<_>>>()
            .map(|a| func(F::MakeDate, a, T::Date)),
        ("make_timestamp" | "make_timestamptz", 6) => (|| {
            let mut out = Vec::with_capacity(6);
            for (i, a) in args.into_iter().enumerate() {
                out.push(if i < 5 {
                    int_arg(b, name, a, &all)?
                } else {
                    float_arg(b, name, a, &all)?
                });
            }
            Ok(if name == "make_timestamp" {
                func(F::MakeTimestamp, out, T::Timestamp(None))
            } else {
                func(F::MakeTimestampTz, out, T::TimestampTz(None))
            })
        })(),
        ("make_interval", 0..=7) => {
            let mut slots: Vec<Option<Expr>> = args.into_iter().map(Some).collect();
            slots.resize(7, None);
            bind_make_interval(b, slots)
        }
        ("justify_hours" | "justify_days" | "justify_interval", 1) => {
            let f = match name {
                "justify_hours" => F::JustifyHours,
                "justify_days" => F::JustifyDays,
                _ => F::JustifyInterval,
            };
            let a = args.into_iter().next()?;
            interval_arg(b, name, a, &all).map(|a| func(f, vec![a], T::Interval))
        }
        ("to_timestamp", 1) => {
            let a = args.into_iter().next()?;
            float_arg(b, name, a, &all).map(|a| func(F::ToTimestamp, vec![a], T::TimestampTz(None)))
        }
        _ => return None,
    };
    Some(result)
}

/// `make_interval`'s parameter names, in order (all default to 0).
pub(crate) const MAKE_INTERVAL_PARAMS: [&str; 7] =
    ["years", "months", "weeks", "days", "hours", "mins", "secs"];

/// `make_interval` with each parameter given or left at 0 (`slots` in
/// [`MAKE_INTERVAL_PARAMS`] order).
pub(crate) fn bind_make_interval(
    b: &super::Binder<'_>,
    slots: Vec<Option<Expr>>,
) -> PgResult<Expr> {
    let all: Vec<Expr> = slots.iter().flatten().cloned().collect();
    let mut out = Vec::with_capacity(7);
    for (i, slot) in slots.into_iter().enumerate() {
        out.push(match (slot, i) {
            (None, 6) => Expr::constant(Value::Float8(0.0), DataType::Float8),
            (None, _) => Expr::constant(Value::Int4(0), DataType::Int4),
            (Some(a), 6) => float_arg(b, "make_interval", a, &all)?,
            (Some(a), _) => int_arg(b, "make_interval", a, &all)?,
        });
    }
    Ok(func(ScalarFunc::MakeInterval, out, DataType::Interval))
}

/// `INTERVAL 'text' field [TO field]`: the text read as an interval, a bare number
/// counting the last field's units (`interval '90' day` is 90 days, `interval '3' month`
/// 3 months), then every field finer than the last dropped, as PostgreSQL's interval
/// typmod does (`interval '1 day 03:00' day` is 1 day). The value is a constant.
pub(crate) fn bind_interval_fields(
    b: &super::Binder<'_>,
    whole: &ast::Expr,
    value: &ast::Expr,
    lead: &ast::DateTimeField,
    last: Option<&ast::DateTimeField>,
) -> PgResult<Expr> {
    use ast::DateTimeField as F;
    // Coarsest first: the rank of each field PostgreSQL's grammar allows here.
    let rank = |f: &F| match f {
        F::Year | F::Years => Some(0),
        F::Month | F::Months => Some(1),
        F::Day | F::Days => Some(2),
        F::Hour | F::Hours => Some(3),
        F::Minute | F::Minutes => Some(4),
        F::Second | F::Seconds => Some(5),
        _ => None,
    };
    let syntax = || {
        PgError::new(
            SqlState::SYNTAX_ERROR,
            format!("syntax error in interval fields of {whole}"),
        )
    };
    let lead_rank = rank(lead).ok_or_else(syntax)?;
    let finest = match last {
        Some(l) => {
            let r = rank(l).ok_or_else(syntax)?;
            // YEAR TO MONTH, DAY TO HOUR | MINUTE | SECOND, HOUR TO MINUTE | SECOND,
            // MINUTE TO SECOND.
            if r <= lead_rank || (lead_rank == 0 && r != 1) || lead_rank == 1 {
                return Err(syntax());
            }
            r
        }
        None => lead_rank,
    };
    let ast::Expr::Value(v) = value else {
        return Err(syntax());
    };
    let text = match &v.value {
        ast::Value::SingleQuotedString(s) => s.trim(),
        _ => return Err(syntax()),
    };
    let unit = ["year", "month", "day", "hour", "minute", "second"][finest];
    let is_number = !text.is_empty()
        && text
            .trim_start_matches(['+', '-'])
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.');
    let text = if is_number {
        format!("{text} {unit}")
    } else {
        text.to_string()
    };
    let lit = Expr::constant(Value::Text(text), DataType::Unknown);
    let cast = b.coerce(lit, &DataType::Interval, CastContext::Explicit)?;
    let ExprKind::Const(Value::Interval(mut iv)) = cast.kind else {
        return Err(PgError::unsupported(format!("interval fields in {whole}")));
    };
    const HOUR: i64 = 3_600_000_000;
    const MINUTE: i64 = 60_000_000;
    match finest {
        0 => {
            iv.months = iv.months / 12 * 12;
            iv.days = 0;
            iv.micros = 0;
        }
        1 => {
            iv.days = 0;
            iv.micros = 0;
        }
        2 => iv.micros = 0,
        3 => iv.micros = iv.micros / HOUR * HOUR,
        4 => iv.micros = iv.micros / MINUTE * MINUTE,
        _ => {}
    }
    Ok(Expr::constant(Value::Interval(iv), DataType::Interval))
}
