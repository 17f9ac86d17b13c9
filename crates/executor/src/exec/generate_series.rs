//! generate_series over integers, numerics and timestamps.

#[allow(unused_imports)]
use super::*;

/// `generate_series(start, stop [, step])` over int4, int8 or numeric (step 1 by
/// default), or over timestamp or timestamptz with an interval step: the values from
/// `start` while they do not pass `stop`, made one at a time (no row is held beyond the
/// current one). A NULL argument gives no rows, as the strict function does. A series
/// that never ends (from `-infinity`, as in PostgreSQL) ends at `statement_timeout`.
pub(crate) struct GenerateSeriesOp<'a> {
    pub(crate) tx: &'a txn::Tx,
    /// The session's clock and zone: a series of timestamptz steps in its zone.
    pub(crate) clock: &'a common::datetime::SessionClock,
    pub(crate) next: Option<Value>,
    pub(crate) stop: Value,
    pub(crate) step: Value,
    /// The step is positive: the series ends above `stop` (else below it).
    pub(crate) ascending: bool,
}

pub(crate) fn series_error(what: &str) -> PgError {
    PgError::new(common::SqlState::INVALID_PARAMETER_VALUE, what.to_string())
}

impl<'a> GenerateSeriesOp<'a> {
    pub(crate) fn new(
        tx: &'a txn::Tx,
        clock: &'a common::datetime::SessionClock,
        start: Value,
        stop: Value,
        step: Option<Value>,
    ) -> PgResult<GenerateSeriesOp<'a>> {
        let step = match (step, &start) {
            (Some(s), _) => s,
            (None, Value::Numeric(_)) => Value::Numeric(common::numeric::Numeric::from(1i64)),
            (None, _) => Value::Int8(1),
        };
        let none = |step| GenerateSeriesOp {
            tx,
            clock,
            next: None,
            stop: Value::Null,
            step,
            ascending: true,
        };
        if start.is_null() || stop.is_null() || step.is_null() {
            return Ok(none(step));
        }
        if let (Value::Numeric(a), Value::Numeric(b), Value::Numeric(s)) = (&start, &stop, &step) {
            for (n, what) in [(a, "start value"), (b, "stop value"), (s, "step size")] {
                if n.is_nan() {
                    return Err(series_error(&format!("{what} cannot be NaN")));
                }
                if n.is_infinite() {
                    return Err(series_error(&format!("{what} cannot be infinity")));
                }
            }
        }
        let ascending = match &step {
            Value::Numeric(s) if s.is_zero() => None,
            Value::Numeric(s) => Some(!s.is_negative()),
            Value::Interval(i) => match i.cmp(&common::datetime::Interval::default()) {
                std::cmp::Ordering::Equal => None,
                o => Some(o == std::cmp::Ordering::Greater),
            },
            other => match other.as_i64() {
                Some(0) => None,
                Some(n) => Some(n > 0),
                None => return Err(PgError::internal(format!("a series step of {other:?}"))),
            },
        };
        let Some(ascending) = ascending else {
            return Err(series_error("step size cannot equal zero"));
        };
        Ok(GenerateSeriesOp {
            tx,
            clock,
            next: Some(start),
            stop,
            step,
            ascending,
        })
    }

    /// Whether `v` is past the end of the series.
    fn past(&self, v: &Value) -> PgResult<bool> {
        let order = match (v, &self.stop) {
            (Value::Numeric(a), Value::Numeric(b)) => a.cmp(b),
            (Value::Timestamp(a), Value::Timestamp(b)) => a.cmp(b),
            (Value::TimestampTz(a), Value::TimestampTz(b)) => a.cmp(b),
            (a, b) => match (a.as_i64(), b.as_i64()) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => return Err(PgError::internal(format!("a series of {a:?} to {b:?}"))),
            },
        };
        Ok(if self.ascending {
            order.is_gt()
        } else {
            order.is_lt()
        })
    }

    /// The value after `v`; `None` where an integer series leaves its type's range
    /// (PostgreSQL stops there rather than fail).
    fn after(&self, v: &Value) -> PgResult<Option<Value>> {
        Ok(match (v, &self.step) {
            (Value::Numeric(a), Value::Numeric(s)) => Some(Value::Numeric(a.add(s)?)),
            (Value::Timestamp(_) | Value::TimestampTz(_), Value::Interval(_)) => {
                let ty = if matches!(v, Value::Timestamp(_)) {
                    DataType::Timestamp(None)
                } else {
                    DataType::TimestampTz(None)
                };
                Some(crate::datetime::arith(
                    self.clock,
                    sql::bound::BinaryOp::Add,
                    v,
                    &self.step,
                    &ty,
                )?)
            }
            (Value::Int4(a), s) => s
                .as_i64()
                .and_then(|s| i64::from(*a).checked_add(s))
                .and_then(|n| i32::try_from(n).ok())
                .map(Value::Int4),
            (a, s) => match (a.as_i64(), s.as_i64()) {
                (Some(a), Some(s)) => a.checked_add(s).map(Value::Int8),
                _ => return Err(PgError::internal(format!("a series step {s:?} from {a:?}"))),
            },
        })
    }
}

impl Operator for GenerateSeriesOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        self.tx.check_for_interrupts()?;
        let Some(v) = self.next.take() else {
            return Ok(None);
        };
        if self.past(&v)? {
            return Ok(None);
        }
        self.next = self.after(&v)?;
        Ok(Some(vec![v]))
    }
}
