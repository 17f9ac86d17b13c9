//! Ordering rows: a total order over value lists for grouping, DISTINCT and sorting.

use std::cmp::Ordering;

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
