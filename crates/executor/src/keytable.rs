//! A hash table of rows by key (a hash join's inner side): rows in one vector, chained
//! per key, keys hashed with a multiply-rotate hash and looked up by borrowed values, so
//! a probe allocates nothing and a build allocates per distinct key, not per row; and
//! [`GroupTable`], hash aggregation's groups by key, found the same way.

use std::borrow::Cow;

use common::hash::FxHasher;
use common::{PgResult, Value};
use hashbrown::HashTable;
use smallvec::SmallVec;
use sql::bound::{Expr, ExprKind};

use crate::env::{Env, Row};
use crate::sortkey::{hash_value, keys_equal};

/// A key's values over a row: columns read in place, other expressions evaluated.
pub(crate) type KeyValues<'r> = SmallVec<[Cow<'r, Value>; 2]>;

/// The values of `keys` over `row` ([`KeyValues`]).
pub(crate) fn key_values<'r>(
    env: &Env<'_>,
    keys: &[Expr],
    row: &'r [Value],
) -> PgResult<KeyValues<'r>> {
    let mut out = KeyValues::new();
    for k in keys {
        out.push(match k.kind {
            ExprKind::Column(i) if i < row.len() => Cow::Borrowed(&row[i]),
            _ => Cow::Owned(env.eval(k, row)?),
        });
    }
    Ok(out)
}

/// The end of a chain of rows.
const END: u32 = u32::MAX;

#[derive(Default)]
pub(crate) struct KeyTable {
    /// Each distinct key's number, found by its hash.
    table: HashTable<u32>,
    /// Per key: its values, its hash, its first and last row.
    keys: Vec<Vec<Value>>,
    hashes: Vec<u64>,
    first: Vec<u32>,
    last: Vec<u32>,
    /// The rows, in the order they came; per row, the next of its key's.
    pub(crate) rows: Vec<Row>,
    next: Vec<u32>,
}

/// The hash of a key, as [`KeyTable`] hashes it: equal keys (by SQL's `=` of their types)
/// hash alike.
pub(crate) fn hash_key<'v>(values: impl IntoIterator<Item = &'v Value>) -> u64 {
    use std::hash::Hasher;
    let mut h = FxHasher::default();
    for v in values {
        hash_value(v, &mut h);
    }
    h.finish()
}

impl KeyTable {
    /// Add `row` under `key` (no NULL in it); true if the key is new.
    pub(crate) fn insert(&mut self, key: Vec<Value>, row: Row) -> bool {
        let hash = hash_key(&key);
        let at = self.rows.len() as u32;
        self.rows.push(row);
        self.next.push(END);
        let keys = &self.keys;
        if let Some(&k) = self
            .table
            .find(hash, |&k| keys_equal(&keys[k as usize], key.iter()))
        {
            let k = k as usize;
            self.next[self.last[k] as usize] = at;
            self.last[k] = at;
            return false;
        }
        let k = self.keys.len() as u32;
        self.keys.push(key);
        self.hashes.push(hash);
        self.first.push(at);
        self.last.push(at);
        let hashes = &self.hashes;
        self.table.insert_unique(hash, k, |&k| hashes[k as usize]);
        true
    }

    /// The first row under `key`, if any.
    pub(crate) fn find(&self, key: &[&Value]) -> Option<u32> {
        let hash = hash_key(key.iter().copied());
        self.table
            .find(hash, |&k| {
                keys_equal(&self.keys[k as usize], key.iter().copied())
            })
            .map(|&k| self.first[k as usize])
    }

    /// The row after `row` under the same key, if any.
    pub(crate) fn next(&self, row: u32) -> Option<u32> {
        let n = self.next[row as usize];
        (n != END).then_some(n)
    }

    /// The keys the table holds without growing (EXPLAIN's `Buckets`).
    pub(crate) fn capacity(&self) -> usize {
        self.table.capacity()
    }
}

/// Groups by key, as GROUP BY forms them (NULLs equal to each other, numerics whatever
/// their scale): each distinct key's number, in the order first seen, found by
/// borrowed values, so a row of a group already held allocates nothing.
#[derive(Default)]
pub(crate) struct GroupTable {
    table: HashTable<u32>,
    /// Per group: its key and the key's hash.
    pub(crate) keys: Vec<Vec<Value>>,
    hashes: Vec<u64>,
}

impl GroupTable {
    /// The number of `key`'s group, if it has one.
    pub(crate) fn find(&self, key: &[Cow<'_, Value>]) -> Option<usize> {
        let hash = hash_key(key.iter().map(|v| &**v));
        self.table
            .find(hash, |k: &u32| {
                self.keys[*k as usize]
                    .iter()
                    .zip(key)
                    .all(|(a, b)| a.cmp_nulls_last(b) == std::cmp::Ordering::Equal)
            })
            .map(|&k| k as usize)
    }

    /// The number of `key`'s group, and whether it is new (then added).
    pub(crate) fn group(&mut self, key: &[Cow<'_, Value>]) -> (usize, bool) {
        let hash = hash_key(key.iter().map(|v| &**v));
        let keys = &self.keys;
        let same = |k: &u32| {
            keys[*k as usize]
                .iter()
                .zip(key)
                .all(|(a, b)| a.cmp_nulls_last(b) == std::cmp::Ordering::Equal)
        };
        if let Some(&k) = self.table.find(hash, same) {
            return (k as usize, false);
        }
        let k = self.keys.len() as u32;
        self.keys
            .push(key.iter().map(|v| v.clone().into_owned()).collect());
        self.hashes.push(hash);
        let hashes = &self.hashes;
        self.table.insert_unique(hash, k, |&k| hashes[k as usize]);
        (k as usize, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::numeric::Numeric;

    fn num(s: &str) -> Value {
        Value::Numeric(Numeric::parse(s).expect("a number"))
    }

    fn rows_of(t: &KeyTable, key: &[&Value]) -> Vec<Row> {
        let mut out = Vec::new();
        let mut at = t.find(key);
        while let Some(r) = at {
            out.push(t.rows[r as usize].clone());
            at = t.next(r);
        }
        out
    }

    #[test]
    fn groups_hold_nulls_together_and_numerics_by_value() {
        let mut t = GroupTable::default();
        fn key(vs: &[Value]) -> Vec<Cow<'_, Value>> {
            vs.iter().map(Cow::Borrowed).collect()
        }
        let a = [Value::Null, num("1.0")];
        let b = [Value::Null, num("1.00")];
        let c = [Value::Int4(1), num("1")];
        assert_eq!(t.group(&key(&a)), (0, true));
        assert_eq!(t.group(&key(&b)), (0, false));
        assert_eq!(t.group(&key(&c)), (1, true));
        assert_eq!(t.group(&key(&[])), (2, true));
        assert_eq!(t.keys.len(), 3);
        assert_eq!(t.keys[0], vec![Value::Null, num("1.0")]);
    }

    #[test]
    fn rows_chain_by_key_in_arrival_order() {
        let mut t = KeyTable::default();
        for (k, v) in [(1, 10), (2, 20), (1, 11), (3, 30), (1, 12)] {
            let new = t.insert(vec![Value::Int4(k)], vec![Value::Int4(v)]);
            assert_eq!(new, v % 10 == 0, "key {k}");
        }
        let got = rows_of(&t, &[&Value::Int4(1)]);
        assert_eq!(
            got,
            vec![
                vec![Value::Int4(10)],
                vec![Value::Int4(11)],
                vec![Value::Int4(12)]
            ]
        );
        assert_eq!(rows_of(&t, &[&Value::Int4(3)]), vec![vec![Value::Int4(30)]]);
        assert!(t.find(&[&Value::Int4(4)]).is_none());
    }

    #[test]
    fn keys_equal_by_sql_equality() {
        let mut t = KeyTable::default();
        t.insert(
            vec![num("1.0"), Value::Text("a".into())],
            vec![Value::Int4(1)],
        );
        // Another scale of the same number is the same key; another text is not.
        assert!(!t.insert(
            vec![num("1.000"), Value::Text("a".into())],
            vec![Value::Int4(2)]
        ));
        assert!(t.insert(
            vec![num("1"), Value::Text("b".into())],
            vec![Value::Int4(3)]
        ));
        assert_eq!(rows_of(&t, &[&num("1"), &Value::Text("a".into())]).len(), 2);
        assert_eq!(
            rows_of(&t, &[&num("-0.00"), &Value::Text("a".into())]).len(),
            0
        );
        // Floats: -0 = 0.
        t.insert(vec![Value::Float8(0.0)], vec![Value::Int4(4)]);
        assert_eq!(rows_of(&t, &[&Value::Float8(-0.0)]).len(), 1);
    }
}
