//! Ordering rows: a total order over value lists for sorting and set operations; and
//! hashing them, for hash joins, hash aggregation and DISTINCT.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use common::Value;
use sql::bound::SortKey;

/// A row (or group key) ordered value by value, NULLs equal to each other and last.
/// Equality is SQL "not distinct": used by GROUP BY, DISTINCT and DISTINCT aggregates.
#[derive(Clone, Debug)]
pub struct RowKey(pub Vec<Value>);

impl PartialEq for RowKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for RowKey {}

impl PartialOrd for RowKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RowKey {
    fn cmp(&self, other: &Self) -> Ordering {
        for (a, b) in self.0.iter().zip(&other.0) {
            let c = a.cmp_nulls_last(b);
            if c != Ordering::Equal {
                return c;
            }
        }
        self.0.len().cmp(&other.0.len())
    }
}

/// Compare two precomputed sort-key value lists under ORDER BY's directions.
pub fn compare_sort_keys(keys: &[SortKey], a: &[Value], b: &[Value]) -> Ordering {
    for (k, (x, y)) in keys.iter().zip(a.iter().zip(b)) {
        let c = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if k.nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (false, true) => {
                if k.nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (false, false) => {
                let c = x.cmp_non_null(y);
                if k.desc { c.reverse() } else { c }
            }
        };
        if c != Ordering::Equal {
            return c;
        }
    }
    Ordering::Equal
}

/// Whether a hash join's stored key equals `other`, value by value, as SQL's `=` of
/// their type (numeric whatever its scale, floats with -0 = 0 and NaN = NaN, as
/// PostgreSQL's hash opclasses). Neither holds a NULL (a NULL key matches nothing and is
/// not looked up).
pub(crate) fn keys_equal<'v>(key: &[Value], other: impl IntoIterator<Item = &'v Value>) -> bool {
    let mut n = 0;
    for (a, b) in key.iter().zip(other) {
        if a.cmp_non_null(b) != Ordering::Equal {
            return false;
        }
        n += 1;
    }
    n == key.len()
}

/// Feed `v` to `h` as equal values of its type feed it alike.
pub(crate) fn hash_value<H: Hasher>(v: &Value, h: &mut H) {
    // Floats by value: zeros alike, NaNs alike.
    let float = |x: f64, h: &mut H| {
        let bits = if x == 0.0 {
            0
        } else if x.is_nan() {
            u64::MAX
        } else {
            x.to_bits()
        };
        bits.hash(h);
    };
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => b.hash(h),
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => v.as_i64().hash(h),
        Value::Oid(o) => o.hash(h),
        Value::Float4(f) => float(f64::from(*f), h),
        Value::Float8(f) => float(*f, h),
        // Equal numerics (`1.0`, `1.00`) hash alike: their digits, never their scale.
        Value::Numeric(n) => n.hash(h),
        Value::Text(_) | Value::Bpchar(_) => v.as_str().hash(h),
        Value::Date(d) => d.0.hash(h),
        Value::Timestamp(t) => t.0.hash(h),
        Value::TimestampTz(t) => t.0.hash(h),
        Value::Uuid(u) => u.hash(h),
        Value::Bytea(b) => b.hash(h),
        // Equal spans (`1 day`, `24 hours`) hash alike, as they compare equal.
        Value::Interval(i) => i.hash(h),
        Value::Reg(_, oid) => oid.hash(h),
        // Element by element, as arrays compare; then the shape.
        Value::Array(a) => {
            for item in &a.items {
                hash_value(item, h);
            }
            a.items.len().hash(h);
            for d in &a.dims {
                (d.len, d.lower).hash(h);
            }
        }
    }
}

/// A group's key (or a DISTINCT row) in a hash table: equal as [`RowKey`]s are (NULLs
/// equal to each other, numerics whatever their scale), hashed so that equal keys hash
/// alike.
#[derive(Clone, Debug)]
pub struct GroupKey(pub Vec<Value>);

impl PartialEq for GroupKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|(a, b)| a.cmp_nulls_last(b) == Ordering::Equal)
    }
}

impl Eq for GroupKey {}

impl Hash for GroupKey {
    fn hash<H: Hasher>(&self, h: &mut H) {
        for v in &self.0 {
            hash_value(v, h);
        }
    }
}
