//! Aggregate accumulators: count, sum, avg, min, max, array_agg and string_agg, with
//! DISTINCT and with ORDER BY (the values are kept and fed in order at the end).

use std::collections::BTreeSet;

use common::numeric::{Numeric, NumericSum};
use common::{DataType, PgError, PgResult, SqlState, Value};
use sql::bound::{AggCall, AggFunc};

use crate::env::Env;
use crate::sortkey::RowKey;

/// The running state of one aggregate in one group.
pub struct Accumulator {
    state: State,
    /// Values seen so far, for `DISTINCT` aggregates.
    seen: Option<BTreeSet<RowKey>>,
    /// `agg(x ORDER BY ...)`: the inputs, until the end.
    ordered: Option<Vec<OrderedInput>>,
}

/// One input of an ordered aggregate: its sort keys, value and separator.
type OrderedInput = (Vec<Value>, Value, Option<Value>);

enum State {
    Count(i64),
    /// sum(int2), sum(int4): int8, which can overflow (22003 `bigint out of range`).
    SumInt(Option<i64>),
    /// sum(int8): numeric, summed in 128 bits as PostgreSQL does (no overflow below
    /// 2^64 rows).
    SumWide(Option<i128>),
    /// sum(numeric): a running sum without an allocation per value; `None` before the
    /// first.
    SumNumeric(Option<NumericSum>),
    SumFloat(Option<f64>),
    /// avg() of an integer type: numeric `sum / n` at the division's scale.
    AvgInt {
        sum: i128,
        n: i64,
    },
    AvgNumeric {
        sum: NumericSum,
        n: i64,
    },
    AvgFloat {
        sum: f64,
        n: i64,
    },
    Min(Option<Value>),
    Max(Option<Value>),
    /// array_agg: every value, NULLs included.
    ArrayAgg(Option<Vec<Value>>),
    StringAgg(Option<String>),
}

impl Accumulator {
    pub fn new(call: &AggCall) -> Accumulator {
        let arg_ty = call.arg.as_ref().map(|a| a.ty);
        let state = match call.func {
            AggFunc::CountStar | AggFunc::Count => State::Count(0),
            AggFunc::Sum if call.ty.is_integer() => State::SumInt(None),
            AggFunc::Sum if arg_ty == Some(DataType::Int8) => State::SumWide(None),
            AggFunc::Sum if matches!(call.ty, DataType::Numeric(_)) => State::SumNumeric(None),
            AggFunc::Sum => State::SumFloat(None),
            AggFunc::Avg if arg_ty.is_some_and(|t| t.is_integer()) => {
                State::AvgInt { sum: 0, n: 0 }
            }
            AggFunc::Avg if matches!(call.ty, DataType::Numeric(_)) => State::AvgNumeric {
                sum: NumericSum::default(),
                n: 0,
            },
            AggFunc::Avg => State::AvgFloat { sum: 0.0, n: 0 },
            AggFunc::Min => State::Min(None),
            AggFunc::Max => State::Max(None),
            AggFunc::ArrayAgg => State::ArrayAgg(None),
            AggFunc::StringAgg => State::StringAgg(None),
        };
        Accumulator {
            state,
            seen: call.distinct.then(BTreeSet::new),
            ordered: (!call.order_by.is_empty()).then(Vec::new),
        }
    }

    pub fn add(&mut self, call: &AggCall, row: &[Value], env: &Env) -> PgResult<()> {
        use std::borrow::Cow;
        let v: Cow<'_, Value> = match &call.arg {
            None => {
                if let State::Count(n) = &mut self.state {
                    *n += 1;
                }
                return Ok(());
            }
            // A column is read in place.
            Some(arg) => match arg.kind {
                sql::bound::ExprKind::Column(i) if i < row.len() => Cow::Borrowed(&row[i]),
                _ => Cow::Owned(env.eval(arg, row)?),
            },
        };
        // Only array_agg keeps NULLs.
        if v.is_null() && call.func != AggFunc::ArrayAgg {
            return Ok(());
        }
        // Counts and numeric sums need no value of their own.
        if self.seen.is_none() && self.ordered.is_none() {
            match &mut self.state {
                State::Count(n) => {
                    *n += 1;
                    return Ok(());
                }
                State::SumNumeric(s) => {
                    return with_numeric(&v, |x| s.get_or_insert_with(Default::default).add(x));
                }
                State::AvgNumeric { sum, n } => {
                    with_numeric(&v, |x| sum.add(x))?;
                    *n += 1;
                    return Ok(());
                }
                _ => {}
            }
        }
        let v = v.into_owned();
        if let Some(seen) = &mut self.seen
            && !seen.insert(RowKey(vec![v.clone()]))
        {
            return Ok(());
        }
        let sep = call.sep.as_ref().map(|s| env.eval(s, row)).transpose()?;
        if let Some(buffer) = &mut self.ordered {
            let keys = call
                .order_by
                .iter()
                .map(|k| env.eval(&k.expr, row))
                .collect::<PgResult<Vec<_>>>()?;
            buffer.push((keys, v, sep));
            return Ok(());
        }
        self.accumulate(v, sep)
    }

    fn accumulate(&mut self, v: Value, sep: Option<Value>) -> PgResult<()> {
        match &mut self.state {
            State::Count(n) => *n += 1,
            State::SumInt(s) => {
                let x = v.as_i64().unwrap_or(0);
                *s = Some(s.unwrap_or(0).checked_add(x).ok_or_else(|| {
                    PgError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range")
                })?);
            }
            State::SumWide(s) => *s = Some(s.unwrap_or(0) + v.as_i64().unwrap_or(0) as i128),
            State::SumNumeric(s) => {
                with_numeric(&v, |x| s.get_or_insert_with(Default::default).add(x))?
            }
            State::SumFloat(s) => *s = Some(s.unwrap_or(0.0) + v.as_f64().unwrap_or(0.0)),
            State::AvgInt { sum, n } => {
                *sum += v.as_i64().unwrap_or(0) as i128;
                *n += 1;
            }
            State::AvgNumeric { sum, n } => {
                with_numeric(&v, |x| sum.add(x))?;
                *n += 1;
            }
            State::AvgFloat { sum, n } => {
                *sum += v.as_f64().unwrap_or(0.0);
                *n += 1;
            }
            // On a tie the later value wins, as in PostgreSQL's `numeric_smaller` and
            // friends: it shows when equal values print differently (1.0, 1.00).
            State::Min(m) => {
                if m.as_ref().is_none_or(|cur| v.cmp_non_null(cur).is_le()) {
                    *m = Some(v);
                }
            }
            State::Max(m) => {
                if m.as_ref().is_none_or(|cur| v.cmp_non_null(cur).is_ge()) {
                    *m = Some(v);
                }
            }
            State::ArrayAgg(items) => items.get_or_insert_with(Vec::new).push(v),
            State::StringAgg(acc) => {
                let text = v.as_str().unwrap_or_default();
                match acc {
                    None => *acc = Some(text.to_string()),
                    Some(out) => {
                        if let Some(sep) = sep.as_ref().and_then(Value::as_str) {
                            out.push_str(sep);
                        }
                        out.push_str(text);
                    }
                }
            }
        }
        Ok(())
    }

    /// The aggregate's result for its group (`call.ty` is its result type).
    pub fn finish(mut self, call: &AggCall) -> PgResult<Value> {
        if let Some(mut buffer) = self.ordered.take() {
            buffer.sort_by(|a, b| crate::sortkey::compare_sort_keys(&call.order_by, &a.0, &b.0));
            for (_, v, sep) in buffer {
                self.accumulate(v, sep)?;
            }
        }
        let ty = &call.ty;
        Ok(match self.state {
            State::Count(n) => Value::Int8(n),
            State::SumInt(s) => s.map_or(Value::Null, Value::Int8),
            State::SumWide(s) => match s {
                None => Value::Null,
                Some(v) => Value::Numeric(i128_numeric(v)?),
            },
            State::SumNumeric(s) => match s {
                Some(s) => Value::Numeric(s.finish()?),
                None => Value::Null,
            },
            State::SumFloat(s) => match (s, ty) {
                (None, _) => Value::Null,
                (Some(v), DataType::Float4) => Value::Float4(v as f32),
                (Some(v), _) => Value::Float8(v),
            },
            State::AvgInt { sum, n } => {
                Numeric::avg(&i128_numeric(sum)?, n)?.map_or(Value::Null, Value::Numeric)
            }
            State::AvgNumeric { sum, n } => {
                Numeric::avg(&sum.finish()?, n)?.map_or(Value::Null, Value::Numeric)
            }
            State::AvgFloat { sum, n } => {
                if n == 0 {
                    Value::Null
                } else {
                    Value::Float8(sum / n as f64)
                }
            }
            State::Min(m) | State::Max(m) => m.unwrap_or(Value::Null),
            State::ArrayAgg(items) => match items {
                None => Value::Null,
                Some(items) => {
                    let elem = ty.elem().map_or(0, |t| t.oid());
                    Value::Array(std::sync::Arc::new(common::array::Array::from_items(
                        elem, items,
                    )))
                }
            },
            State::StringAgg(acc) => acc.map_or(Value::Null, Value::Text),
        })
    }
}

impl Accumulator {
    /// The aggregate's transition state for its group, as a partial aggregation passes
    /// it to the final one (PostgreSQL's Partial Aggregate): a count, a sum, a min or
    /// max, or an average's `{sum, count}`. Only aggregates without DISTINCT or ORDER BY,
    /// other than array_agg and string_agg, are split (`planner::partitionwise`).
    pub fn partial(self) -> PgResult<Value> {
        if self.seen.is_some() || self.ordered.is_some() {
            return Err(PgError::internal(
                "a partial aggregate with DISTINCT or ORDER BY",
            ));
        }
        let pair = |elem: DataType, a: Value, b: Value| {
            Value::Array(std::sync::Arc::new(common::array::Array::from_items(
                elem.oid(),
                vec![a, b],
            )))
        };
        let numeric = DataType::Numeric(None);
        Ok(match self.state {
            State::Count(n) => Value::Int8(n),
            State::SumInt(s) => s.map_or(Value::Null, Value::Int8),
            State::SumWide(s) => match s {
                Some(v) => Value::Numeric(i128_numeric(v)?),
                None => Value::Null,
            },
            State::SumNumeric(s) => match s {
                Some(s) => Value::Numeric(s.finish()?),
                None => Value::Null,
            },
            State::SumFloat(s) => s.map_or(Value::Null, Value::Float8),
            State::AvgInt { sum, n } => pair(
                numeric,
                Value::Numeric(i128_numeric(sum)?),
                Value::Numeric(i128_numeric(n as i128)?),
            ),
            State::AvgNumeric { sum, n } => pair(
                numeric,
                Value::Numeric(sum.finish()?),
                Value::Numeric(i128_numeric(n as i128)?),
            ),
            State::AvgFloat { sum, n } => pair(
                DataType::Float8,
                Value::Float8(sum),
                Value::Float8(n as f64),
            ),
            State::Min(m) | State::Max(m) => m.unwrap_or(Value::Null),
            State::ArrayAgg(_) | State::StringAgg(_) => {
                return Err(PgError::internal("array_agg and string_agg are not split"));
            }
        })
    }

    /// Add a partial aggregation's state for the same group ([`Accumulator::partial`]):
    /// PostgreSQL's combine functions.
    pub fn combine(&mut self, state: &Value) -> PgResult<()> {
        if state.is_null() {
            return Ok(());
        }
        let wide = |v: &Value| -> PgResult<i128> {
            numeric_arg(v)?
                .to_string()
                .parse::<i128>()
                .map_err(|_| PgError::internal(format!("a partial sum {v:?}")))
        };
        let pair = |v: &Value| -> PgResult<(Value, Value)> {
            match v {
                Value::Array(a) if a.items.len() == 2 => {
                    Ok((a.items[0].clone(), a.items[1].clone()))
                }
                other => Err(PgError::internal(format!("a partial average {other:?}"))),
            }
        };
        match &mut self.state {
            State::Count(n) => *n += state.as_i64().unwrap_or(0),
            State::SumInt(s) => {
                let x = state.as_i64().unwrap_or(0);
                *s = Some(s.unwrap_or(0).checked_add(x).ok_or_else(|| {
                    PgError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range")
                })?);
            }
            State::SumWide(s) => *s = Some(s.unwrap_or(0) + wide(state)?),
            State::SumNumeric(s) => {
                with_numeric(state, |x| s.get_or_insert_with(Default::default).add(x))?
            }
            State::SumFloat(s) => *s = Some(s.unwrap_or(0.0) + state.as_f64().unwrap_or(0.0)),
            State::AvgInt { sum, n } => {
                let (a, b) = pair(state)?;
                *sum += wide(&a)?;
                *n += wide(&b)? as i64;
            }
            State::AvgNumeric { sum, n } => {
                let (a, b) = pair(state)?;
                with_numeric(&a, |x| sum.add(x))?;
                *n += wide(&b)? as i64;
            }
            State::AvgFloat { sum, n } => {
                let (a, b) = pair(state)?;
                *sum += a.as_f64().unwrap_or(0.0);
                *n += b.as_f64().unwrap_or(0.0) as i64;
            }
            State::Min(_) | State::Max(_) => self.accumulate(state.clone(), None)?,
            State::ArrayAgg(_) | State::StringAgg(_) => {
                return Err(PgError::internal("array_agg and string_agg are not split"));
            }
        }
        Ok(())
    }
}

/// `f` of `v` as a numeric, borrowed where it is one.
fn with_numeric(v: &Value, f: impl FnOnce(&Numeric)) -> PgResult<()> {
    match v {
        Value::Numeric(n) => f(n),
        other => f(&numeric_arg(other)?),
    }
    Ok(())
}

fn numeric_arg(v: &Value) -> PgResult<Numeric> {
    v.as_numeric()
        .ok_or_else(|| PgError::internal(format!("numeric aggregate over {v:?}")))
}

/// An exact 128-bit sum as a numeric.
fn i128_numeric(v: i128) -> PgResult<Numeric> {
    Numeric::parse(&v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sql::bound::Expr;

    fn call(func: AggFunc, arg: DataType, ty: DataType) -> AggCall {
        AggCall {
            func,
            arg: Some(Expr::column(0, arg)),
            sep: None,
            order_by: Vec::new(),
            distinct: false,
            ty,
        }
    }

    /// An aggregate over `values` at once, and over each part's partial state combined:
    /// the same result.
    fn same_split(c: &AggCall, values: &[Value], cut: usize) {
        let mut whole = Accumulator::new(c);
        for v in values.iter().filter(|v| !v.is_null()) {
            whole.accumulate(v.clone(), None).unwrap();
        }
        let mut fin = Accumulator::new(c);
        for part in [&values[..cut], &values[cut..]] {
            let mut p = Accumulator::new(c);
            for v in part.iter().filter(|v| !v.is_null()) {
                p.accumulate(v.clone(), None).unwrap();
            }
            fin.combine(&p.partial().unwrap()).unwrap();
        }
        assert_eq!(
            whole.finish(c).unwrap(),
            fin.finish(c).unwrap(),
            "{:?} over {values:?} cut at {cut}",
            c.func
        );
    }

    #[test]
    fn partial_states_combine_to_the_whole_result() {
        let ints: Vec<Value> = [3, -7, 11, 0, 42, 5]
            .into_iter()
            .map(Value::Int4)
            .chain([Value::Null])
            .collect();
        let bigs: Vec<Value> = [i64::MAX, i64::MAX, -5, 9]
            .into_iter()
            .map(Value::Int8)
            .collect();
        let floats: Vec<Value> = [1.5, -2.25, 8.0].into_iter().map(Value::Float8).collect();
        let nums: Vec<Value> = ["1.25", "-3.5", "100.001"]
            .into_iter()
            .map(|t| Value::Numeric(Numeric::parse(t).unwrap()))
            .collect();
        let numeric = DataType::Numeric(None);
        let cases = [
            (call(AggFunc::Count, DataType::Int4, DataType::Int8), &ints),
            (call(AggFunc::Sum, DataType::Int4, DataType::Int8), &ints),
            (call(AggFunc::Avg, DataType::Int4, numeric), &ints),
            (call(AggFunc::Min, DataType::Int4, DataType::Int4), &ints),
            (call(AggFunc::Max, DataType::Int4, DataType::Int4), &ints),
            (call(AggFunc::Sum, DataType::Int8, numeric), &bigs),
            (call(AggFunc::Avg, DataType::Int8, numeric), &bigs),
            (
                call(AggFunc::Sum, DataType::Float8, DataType::Float8),
                &floats,
            ),
            (
                call(AggFunc::Avg, DataType::Float8, DataType::Float8),
                &floats,
            ),
            (call(AggFunc::Sum, numeric, numeric), &nums),
            (call(AggFunc::Avg, numeric, numeric), &nums),
        ];
        for (c, values) in cases {
            for cut in 0..=values.len() {
                same_split(&c, values, cut);
            }
        }
    }
}
