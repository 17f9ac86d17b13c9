//! The array functions and operators ([`ScalarFunc`]'s array variants), with
//! PostgreSQL's NULL rules: most are not strict (`array_append(a, NULL)` appends a NULL
//! element, `array_position` finds NULL), so they see NULL arguments themselves.

use std::cmp::Ordering;
use std::sync::Arc;

use common::array::{Array, Dim};
use common::{DataType, PgError, PgResult, SqlState, Value};
use sql::bound::{BinaryOp, ScalarFunc};

fn array_value(a: Array) -> Value {
    Value::Array(Arc::new(a))
}

/// The element type's OID of an array type.
fn elem_oid(ty: &DataType) -> u32 {
    ty.elem().map_or(0, |e| e.oid())
}

/// Evaluate an array function, or `None` if `f` is not one.
pub(crate) fn eval(
    cx: &common::value::TextContext,
    f: ScalarFunc,
    args: &[Value],
    ty: &DataType,
) -> Option<PgResult<Value>> {
    use ScalarFunc as F;
    let arr = |i: usize| match args.get(i) {
        Some(Value::Array(a)) => Some(&**a),
        _ => None,
    };
    let int = |i: usize| args.get(i).and_then(Value::as_i64);
    let null = || Ok(Value::Null);
    Some(match f {
        F::ArrayCtor => construct(args, ty),
        F::Subscript => match arr(0) {
            None => null(),
            Some(a) => {
                let subs: Option<Vec<i64>> = args[1..].iter().map(Value::as_i64).collect();
                Ok(subs.and_then(|s| a.get(&s).cloned()).unwrap_or(Value::Null))
            }
        },
        F::ArrayCompare { op, all } => Ok(compare_any(op, all, &args[0], arr(1))),
        F::ArrayLength | F::ArrayUpper | F::ArrayLower => {
            let (Some(a), Some(d)) = (arr(0), int(1)) else {
                return Some(null());
            };
            Ok(match a.dim(d) {
                None => Value::Null,
                Some(dim) => Value::Int4(match f {
                    F::ArrayLength => dim.len,
                    F::ArrayLower => dim.lower,
                    _ => dim.lower + dim.len - 1,
                }),
            })
        }
        F::ArrayNdims => Ok(match arr(0) {
            Some(a) if a.ndims() > 0 => Value::Int4(a.ndims() as i32),
            _ => Value::Null,
        }),
        F::ArrayDims => Ok(arr(0)
            .and_then(Array::dims_text)
            .map_or(Value::Null, Value::Text)),
        F::Cardinality => Ok(arr(0).map_or(Value::Null, |a| Value::Int4(a.items.len() as i32))),
        F::ArrayToString => {
            let (Some(a), Some(sep)) = (arr(0), args[1].as_str()) else {
                return Some(null());
            };
            let null_text = args.get(2).and_then(Value::as_str);
            let mut parts = Vec::with_capacity(a.items.len());
            for item in &a.items {
                match item.to_text(cx) {
                    Some(t) => parts.push(t),
                    None => {
                        if let Some(n) = null_text {
                            parts.push(n.to_string());
                        }
                    }
                }
            }
            Ok(Value::Text(parts.join(sep)))
        }
        F::StringToArray => string_to_array(args),
        F::ArrayPosition => Ok(match arr(0) {
            None => Value::Null,
            Some(a) => {
                if a.ndims() > 1 {
                    return Some(Err(one_dimension("searching for elements")));
                }
                let lower = a.dims.first().map_or(1, |d| d.lower);
                // The optional start is a subscript; before the first is the first.
                let skip = match args.get(2) {
                    None => 0,
                    Some(Value::Null) => {
                        return Some(Err(PgError::new(
                            SqlState::NULL_VALUE_NOT_ALLOWED,
                            "initial position must not be null",
                        )));
                    }
                    Some(v) => (v.as_i64().unwrap_or(0) - lower as i64).max(0) as usize,
                };
                a.items
                    .iter()
                    .enumerate()
                    .skip(skip)
                    .find(|(_, x)| same(x, &args[1]))
                    .map_or(Value::Null, |(i, _)| Value::Int4(lower + i as i32))
            }
        }),
        F::ArrayRemove => match arr(0) {
            None => null(),
            Some(a) => {
                if a.ndims() > 1 {
                    return Some(Err(one_dimension("removing elements")));
                }
                let items: Vec<Value> = a
                    .items
                    .iter()
                    .filter(|x| !same(x, &args[1]))
                    .cloned()
                    .collect();
                Ok(array_value(Array::from_items(a.elem, items)))
            }
        },
        F::ArrayAppend | F::ArrayPrepend => {
            let (a, x) = if f == F::ArrayAppend {
                (arr(0), &args[1])
            } else {
                (arr(1), &args[0])
            };
            let a = a
                .cloned()
                .unwrap_or_else(|| Array::from_items(elem_oid(ty), vec![]));
            if a.ndims() > 1 {
                return Some(Err(PgError::new(
                    SqlState::DATA_EXCEPTION,
                    "argument must be empty or one-dimensional array",
                )));
            }
            let lower = a.dims.first().map_or(1, |d| d.lower);
            let mut items = a.items;
            if f == F::ArrayAppend {
                items.push(x.clone());
            } else {
                items.insert(0, x.clone());
            }
            let len = items.len() as i32;
            let lower = if len == 1 { 1 } else { lower };
            Ok(array_value(Array {
                elem: a.elem,
                dims: vec![Dim { len, lower }],
                items,
            }))
        }
        F::ArrayCat => match (arr(0), arr(1)) {
            (None, None) => null(),
            (Some(a), None) | (None, Some(a)) => Ok(array_value(a.clone())),
            (Some(a), Some(b)) => concat(a, b).map(array_value),
        },
        F::ArrayContains | F::ArrayContained | F::ArrayOverlap => match (arr(0), arr(1)) {
            (Some(a), Some(b)) => Ok(Value::Bool(match f {
                F::ArrayContains => contains(a, b),
                F::ArrayContained => contains(b, a),
                _ => a
                    .items
                    .iter()
                    .any(|x| !x.is_null() && b.items.iter().any(|y| equal(x, y))),
            })),
            _ => null(),
        },
        F::FormatType => Ok(format_type(args)),
        _ => return None,
    })
}

/// Equal non-NULL values.
fn equal(a: &Value, b: &Value) -> bool {
    !a.is_null() && !b.is_null() && a.cmp_non_null(b) == Ordering::Equal
}

/// `IS NOT DISTINCT FROM`: what array_position and array_remove match by.
fn same(a: &Value, b: &Value) -> bool {
    (a.is_null() && b.is_null()) || equal(a, b)
}

/// Every element of `b` is (equal to) some element of `a`; a NULL element never is.
fn contains(a: &Array, b: &Array) -> bool {
    b.items.iter().all(|y| a.items.iter().any(|x| equal(x, y)))
}

fn one_dimension(what: &str) -> PgError {
    PgError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!("{what} in multidimensional arrays is not supported"),
    )
}

/// `ARRAY[...]`: over scalars one dimension; over arrays one more dimension, the
/// sub-arrays (NULLs and empty ones aside, as PostgreSQL skips those) all alike.
pub(crate) fn construct_value(args: &[Value], ty: &DataType) -> PgResult<Value> {
    construct(args, ty)
}

fn construct(args: &[Value], ty: &DataType) -> PgResult<Value> {
    let elem = elem_oid(ty);
    let nested =
        matches!(ty, DataType::Array(_)) && args.iter().any(|a| matches!(a, Value::Array(_)));
    if !nested {
        return Ok(array_value(Array::from_items(elem, args.to_vec())));
    }
    let subs: Vec<&Array> = args
        .iter()
        .filter_map(|a| match a {
            Value::Array(a) if !a.items.is_empty() => Some(&**a),
            _ => None,
        })
        .collect();
    let Some(first) = subs.first() else {
        return Ok(array_value(Array::from_items(elem, vec![])));
    };
    if first.ndims() + 1 > common::limits::MAX_ARRAY_DIMS {
        return Err(PgError::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            format!(
                "number of array dimensions ({}) exceeds the maximum allowed ({})",
                first.ndims() + 1,
                common::limits::MAX_ARRAY_DIMS
            ),
        ));
    }
    if subs.iter().any(|s| s.dims != first.dims) {
        return Err(PgError::new(
            SqlState::ARRAY_SUBSCRIPT_ERROR,
            "multidimensional arrays must have array expressions with matching dimensions",
        ));
    }
    let mut dims = vec![Dim {
        len: subs.len() as i32,
        lower: 1,
    }];
    dims.extend(first.dims.iter().copied());
    let items = subs.iter().flat_map(|s| s.items.iter().cloned()).collect();
    Ok(array_value(Array { elem, dims, items }))
}

/// `x op ANY (a)` / `x op ALL (a)`: three-valued OR (AND) of `x op e` over the elements.
fn compare_any(op: BinaryOp, all: bool, x: &Value, a: Option<&Array>) -> Value {
    let Some(a) = a else {
        return Value::Null;
    };
    if a.items.is_empty() {
        return Value::Bool(all);
    }
    if x.is_null() {
        return Value::Null;
    }
    let mut saw_null = false;
    for e in &a.items {
        if e.is_null() {
            saw_null = true;
            continue;
        }
        let c = x.cmp_non_null(e);
        let holds = match op {
            BinaryOp::Eq => c == Ordering::Equal,
            BinaryOp::NotEq => c != Ordering::Equal,
            BinaryOp::Lt => c == Ordering::Less,
            BinaryOp::LtEq => c != Ordering::Greater,
            BinaryOp::Gt => c == Ordering::Greater,
            _ => c != Ordering::Less,
        };
        if holds != all {
            return Value::Bool(holds);
        }
    }
    if saw_null {
        Value::Null
    } else {
        Value::Bool(all)
    }
}

/// `array_cat`: an empty side gives the other; arrays of equal rank are stacked along
/// the first dimension; one of rank one less becomes one more element of the other.
fn concat(a: &Array, b: &Array) -> PgResult<Array> {
    if a.items.is_empty() {
        return Ok(b.clone());
    }
    if b.items.is_empty() {
        return Ok(a.clone());
    }
    let mismatch = || {
        PgError::new(
            SqlState::ARRAY_SUBSCRIPT_ERROR,
            "cannot concatenate incompatible arrays",
        )
    };
    let mut items = a.items.clone();
    items.extend(b.items.iter().cloned());
    let dims = if a.ndims() == b.ndims() {
        if a.dims[1..] != b.dims[1..] {
            return Err(mismatch().with_detail(
                "Arrays with differing element dimensions are not compatible for concatenation.",
            ));
        }
        let mut d = a.dims.clone();
        d[0].len += b.dims[0].len;
        d
    } else if a.ndims() == b.ndims() + 1 {
        if a.dims[1..] != b.dims[..] {
            return Err(mismatch());
        }
        let mut d = a.dims.clone();
        d[0].len += 1;
        d
    } else if b.ndims() == a.ndims() + 1 {
        if b.dims[1..] != a.dims[..] {
            return Err(mismatch());
        }
        let mut d = b.dims.clone();
        d[0].len += 1;
        d[0].lower = 1;
        d
    } else {
        return Err(mismatch().with_detail(format!(
            "Arrays of {} and {} dimensions are not compatible for concatenation.",
            a.ndims(),
            b.ndims()
        )));
    };
    Ok(Array {
        elem: a.elem,
        dims,
        items,
    })
}

/// `string_to_array(s, sep [, null_string])`: a NULL separator splits into characters,
/// an empty one gives the whole string; an empty string gives an empty array.
fn string_to_array(args: &[Value]) -> PgResult<Value> {
    let Some(s) = args[0].as_str() else {
        return Ok(Value::Null);
    };
    let text_oid = DataType::Text.oid();
    if s.is_empty() {
        return Ok(array_value(Array::from_items(text_oid, vec![])));
    }
    let parts: Vec<String> = match args[1].as_str() {
        None => s.chars().map(String::from).collect(),
        Some("") => vec![s.to_string()],
        Some(sep) => s.split(sep).map(str::to_string).collect(),
    };
    let null_text = args.get(2).and_then(Value::as_str);
    let items = parts
        .into_iter()
        .map(|p| {
            if Some(p.as_str()) == null_text {
                Value::Null
            } else {
                Value::Text(p)
            }
        })
        .collect();
    Ok(array_value(Array::from_items(text_oid, items)))
}

/// `format_type(oid, typmod)`: the type's SQL name with its modifier, `-` for 0, `???`
/// for an OID that is no type Myriad has; NULL for a NULL type.
fn format_type(args: &[Value]) -> Value {
    let Some(oid) = args[0].as_i64() else {
        return Value::Null;
    };
    if oid == 0 {
        return Value::Text("-".into());
    }
    let typmod = args[1].as_i64().unwrap_or(-1) as i32;
    Value::Text(match DataType::from_oid(oid as u32, typmod) {
        Some(DataType::Unknown) => "unknown".into(),
        // PostgreSQL prints a `char(n)` typmod as given: bpchar's typmod is n + 4.
        Some(t) => t.name(),
        None => "???".into(),
    })
}
