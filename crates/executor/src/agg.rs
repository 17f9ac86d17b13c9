//! Aggregate accumulators: count, sum, avg, min, max, with DISTINCT.

use std::collections::BTreeSet;

use common::{DataType, PgError, PgResult, SqlState, Value};
use sql::bound::{AggCall, AggFunc};

use crate::eval::eval;
use crate::sortkey::RowKey;

/// The running state of one aggregate in one group.
pub struct Accumulator {
    state: State,
    /// Values seen so far, for `DISTINCT` aggregates.
    seen: Option<BTreeSet<RowKey>>,
}

enum State {
    Count(i64),
    SumInt(Option<i64>),
    SumFloat(Option<f64>),
    Avg { sum: f64, n: i64 },
    Min(Option<Value>),
    Max(Option<Value>),
}

impl Accumulator {
    pub fn new(call: &AggCall) -> Accumulator {
        let state = match call.func {
            AggFunc::CountStar | AggFunc::Count => State::Count(0),
            AggFunc::Sum if call.ty.is_integer() => State::SumInt(None),
            AggFunc::Sum => State::SumFloat(None),
            AggFunc::Avg => State::Avg { sum: 0.0, n: 0 },
            AggFunc::Min => State::Min(None),
            AggFunc::Max => State::Max(None),
        };
        Accumulator {
            state,
            seen: call.distinct.then(BTreeSet::new),
        }
    }

    pub fn add(&mut self, call: &AggCall, row: &[Value]) -> PgResult<()> {
        let v = match &call.arg {
            None => {
                if let State::Count(n) = &mut self.state {
                    *n += 1;
                }
                return Ok(());
            }
            Some(arg) => eval(arg, row)?,
        };
        if v.is_null() {
            return Ok(());
        }
        if let Some(seen) = &mut self.seen
            && !seen.insert(RowKey(vec![v.clone()]))
        {
            return Ok(());
        }
        match &mut self.state {
            State::Count(n) => *n += 1,
            State::SumInt(s) => {
                let x = v.as_i64().unwrap_or(0);
                *s = Some(s.unwrap_or(0).checked_add(x).ok_or_else(|| {
                    PgError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range")
                })?);
            }
            State::SumFloat(s) => *s = Some(s.unwrap_or(0.0) + v.as_f64().unwrap_or(0.0)),
            State::Avg { sum, n } => {
                *sum += v.as_f64().unwrap_or(0.0);
                *n += 1;
            }
            State::Min(m) => {
                if m.as_ref().is_none_or(|cur| v.cmp_non_null(cur).is_lt()) {
                    *m = Some(v);
                }
            }
            State::Max(m) => {
                if m.as_ref().is_none_or(|cur| v.cmp_non_null(cur).is_gt()) {
                    *m = Some(v);
                }
            }
        }
        Ok(())
    }

    pub fn finish(self, ty: &DataType) -> Value {
        match self.state {
            State::Count(n) => Value::Int8(n),
            State::SumInt(s) => s.map_or(Value::Null, Value::Int8),
            State::SumFloat(s) => match (s, ty) {
                (None, _) => Value::Null,
                (Some(v), DataType::Float4) => Value::Float4(v as f32),
                (Some(v), _) => Value::Float8(v),
            },
            State::Avg { sum, n } => {
                if n == 0 {
                    Value::Null
                } else {
                    Value::Float8(sum / n as f64)
                }
            }
            State::Min(m) | State::Max(m) => m.unwrap_or(Value::Null),
        }
    }
}
