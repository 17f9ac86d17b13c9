//! Declarative partitioning: a partitioned table's key ([`PartitionKey`]), each
//! partition's bound ([`PartitionOf`]), and the directory of a parent's partitions the
//! shared snapshot keeps sorted by bound ([`Partitions`]).
//!
//! Rules (cited as "partition rule N"):
//! 1. A partitioned table has no storage; its rows live in its leaf partitions. A
//!    partition created `PARTITION OF` a parent has the parent's columns, in the parent's
//!    order (dropped ones included), so a partition's rows have the parent's layout and
//!    plans above an Append of partitions read them as the parent's.
//! 2. The directory is derived from the partitions' descriptors as records apply (never
//!    logged) and kept in persistent maps ordered by bound, so adding or removing one
//!    partition costs O(log N) and routing a row or pruning to one value costs
//!    O(log N) bound comparisons, never a scan over the partitions (L3). Range
//!    partitions are keyed by their lower bound, list partitions by each value, hash
//!    partitions by (modulus, remainder).
//! 3. Bounds compare as PostgreSQL's partition bounds do: value by value in the key
//!    columns' btree order (`Value::cmp_non_null`), MINVALUE below and MAXVALUE above
//!    every value; a range holds the keys from its lower bound (inclusive) to its upper
//!    bound (exclusive). NULL keys go to a list partition that lists NULL, else to the
//!    DEFAULT partition; for hash, NULL columns are left out of the row's hash
//!    (`common::pghash`), so rows land in the partition PostgreSQL puts them in. A key
//!    part that is an expression compares by its value, the key's types being the
//!    expressions' (`PartitionOf::types`).
//! 4. Partitions are listed in PostgreSQL's bound order: range by lower bound, list by
//!    smallest value (a partition of NULL alone after those), hash by modulus then
//!    remainder; the DEFAULT partition last. EXPLAIN's Append shows them so.
//! 5. A change to a partition (its descriptor, its indexes, its coming or going) is a
//!    change to every table above it: a cached plan of a partitioned table chose its
//!    partitions' scans, so it is planned again. A partition is created, dropped or
//!    detached (but by DETACH CONCURRENTLY, rule 6) only under AccessExclusive on its
//!    parent, so a statement holding any lock on the parent never meets a partition
//!    going under it. A table is attached
//!    under ShareUpdateExclusive on the parent (as in PostgreSQL 12+) and
//!    AccessExclusive on itself and on the DEFAULT partition: a statement running
//!    beside it keeps the directory of its catalog snapshot, where the table is not a
//!    partition yet and its rows not the parent's; the only constraint that changes
//!    is the DEFAULT partition's, whose version moves with it (a statement bound on it
//!    binds again), and rows routed to it by an older directory are checked again
//!    once its lock is granted (`executor::route`).
//! 6. DETACH PARTITION CONCURRENTLY (PostgreSQL 14+) goes in two transactions under
//!    ShareUpdateExclusive on the parent, so readers and writers of the parent go on.
//!    The first (also under ShareUpdateExclusive on the partition) gives the partition
//!    its partition constraint as a CHECK constraint and marks it pending with its own
//!    transaction id (`PartitionOf::detach_pending`). Once that commits, the partition
//!    is out of its parent's directory: a statement planned or routed after it neither
//!    reads nor writes it through the parent (a row of its bound is 23514), though it
//!    keeps its room (a new partition may not overlap it), its own constraint, its
//!    place in `pg_inherits` (`inhdetachpending`), and goes with its parent when that
//!    is dropped. A transaction whose snapshot does not see that commit (REPEATABLE
//!    READ, begun before) sees the catalog with the partition back in the directory
//!    (`Catalog::snapshot`), in versions of their own, so no plan is shared between
//!    the two views. The session then waits until every transaction that held a lock
//!    on the parent when the first committed has ended (txn lock rule 16): only those
//!    can have planned with the partition in the directory. The second transaction
//!    (ShareUpdateExclusive on the parent, AccessExclusive on the partition) finishes
//!    as a plain DETACH; FINALIZE does it alone after the same wait, for a detach
//!    whose second step failed or was interrupted. One pending detach per parent, and
//!    none beside a DEFAULT partition (55000, as in PostgreSQL). Unlike PostgreSQL,
//!    nothing is locked during the wait, so DDL on the parent may run meanwhile (the
//!    second step binds again and fails if the partition is no longer pending).

use std::cell::Cell;
use std::cmp::Ordering;
use std::ops::Bound;

use common::value::Value;
use common::{DataType, Oid};

use crate::desc::ColumnDesc;

/// How a partitioned table divides its rows (`pg_partitioned_table.partstrat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionStrategy {
    Range,
    List,
    Hash,
}

impl PartitionStrategy {
    /// `pg_partitioned_table.partstrat`.
    pub fn code(self) -> char {
        match self {
            PartitionStrategy::Range => 'r',
            PartitionStrategy::List => 'l',
            PartitionStrategy::Hash => 'h',
        }
    }

    /// As `pg_get_partkeydef` spells it.
    pub fn keyword(self) -> &'static str {
        match self {
            PartitionStrategy::Range => "RANGE",
            PartitionStrategy::List => "LIST",
            PartitionStrategy::Hash => "HASH",
        }
    }
}

/// A partitioned table's key (`PARTITION BY strategy (column or expression, ...)`).
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionKey {
    pub strategy: PartitionStrategy,
    /// The key's parts in order: a column by its position in the table, or
    /// [`crate::EXPRESSION_KEY`]` + k` for `exprs[k]` (as an index's key columns are, and where
    /// PostgreSQL's `partattrs` has 0).
    pub columns: Vec<usize>,
    /// The key's expressions (`PARTITION BY RANGE (lower(b))`), in key order.
    pub exprs: Vec<KeyExpr>,
}

/// An expression of a partition key, as SQL text over the table's row: bound again by
/// the SQL front end where rows are routed or bounds are shown, as a CHECK's
/// condition is (PostgreSQL keeps a node tree in `partexprs`).
#[derive(Clone, Debug, PartialEq)]
pub struct KeyExpr {
    pub text: String,
    /// The columns it reads, in column order (a dropped or retyped one would change
    /// the partitions' meaning: ALTER TABLE refuses them).
    pub columns: Vec<usize>,
    /// Its type: the type of the bounds' values.
    pub ty: DataType,
}

impl PartitionKey {
    /// A key of columns only.
    pub fn of_columns(strategy: PartitionStrategy, columns: Vec<usize>) -> PartitionKey {
        PartitionKey {
            strategy,
            columns,
            exprs: Vec::new(),
        }
    }

    /// Which of the key's expressions key part `c` (an entry of `columns`) is, if it is
    /// one.
    pub fn expression(c: usize) -> Option<usize> {
        crate::IndexDesc::expression(c)
    }

    /// The type of key part `c` of a table whose columns are `columns`.
    pub fn part_type(&self, c: usize, columns: &[ColumnDesc]) -> Option<DataType> {
        match PartitionKey::expression(c) {
            Some(k) => self.exprs.get(k).map(|e| e.ty),
            None => columns.get(c).map(|c| c.ty),
        }
    }

    /// The types of the key's parts, in key order.
    pub fn types(&self, columns: &[ColumnDesc]) -> Vec<DataType> {
        self.columns
            .iter()
            .map(|&c| self.part_type(c, columns).unwrap_or(DataType::Text))
            .collect()
    }

    /// Every column the key reads, its expressions' included, in column order.
    pub fn columns_read(&self) -> Vec<usize> {
        let mut read: Vec<usize> = self
            .columns
            .iter()
            .copied()
            .filter(|&c| PartitionKey::expression(c).is_none())
            .chain(self.exprs.iter().flat_map(|e| e.columns.iter().copied()))
            .collect();
        read.sort_unstable();
        read.dedup();
        read
    }

    /// The key's columns, where it has no expression.
    pub fn plain_columns(&self) -> Option<&[usize]> {
        self.exprs.is_empty().then_some(self.columns.as_slice())
    }
}

/// One value of a range bound.
#[derive(Clone, Debug, PartialEq)]
pub enum RangeDatum {
    MinValue,
    Value(Value),
    MaxValue,
}

/// A partition's bound (`FOR VALUES ...`), its values of the key columns' types.
#[derive(Clone, Debug, PartialEq)]
pub enum PartitionBound {
    /// `FROM (from) TO (to)`: keys from `from` (inclusive) to `to` (exclusive).
    Range {
        from: Vec<RangeDatum>,
        to: Vec<RangeDatum>,
    },
    /// `IN (values)`; `Value::Null` for NULL.
    List(Vec<Value>),
    /// `WITH (MODULUS m, REMAINDER r)`.
    Hash {
        modulus: u32,
        remainder: u32,
    },
    Default,
}

/// What makes a table a partition: its parent and bound.
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionOf {
    pub parent: Oid,
    /// The types of the parent's key parts: what its bound's values are of.
    pub types: Vec<DataType>,
    pub bound: PartitionBound,
    /// DETACH CONCURRENTLY marked it, in the transaction of this id, and has not
    /// finished (partition rule 6): out of its parent's directory, still its partition.
    pub detach_pending: Option<u64>,
}

impl PartitionBound {
    /// A test of whether a row's key is within this bound (a DEFAULT bound holds nothing
    /// by itself), made once for the rows it is asked of: a directory of this bound
    /// alone, routed through as a parent's is.
    pub fn tester(&self, strategy: PartitionStrategy) -> impl Fn(&[Value]) -> bool + use<> {
        let mut one = Partitions::default();
        one.add(0, self);
        one.default = None;
        move |key| one.route(strategy, key) == Some(0)
    }
}

thread_local! {
    static COMPARISONS: Cell<u64> = const { Cell::new(0) };
}

/// How many bound comparisons this thread has made: what the tests of partition rule 2
/// count.
pub fn bound_comparisons() -> u64 {
    COMPARISONS.with(|c| c.get())
}

fn counted() {
    COMPARISONS.with(|c| c.set(c.get() + 1));
}

/// A range bound (or a key probing the range partitions), ordered as partition rule 3
/// says. Comparing two counts one bound comparison.
#[derive(Clone, Debug)]
pub struct RangeKey(pub Vec<RangeDatum>);

/// The key intervals of a multi-column range key that `cols` (each column's values, in
/// key order) allow, lexicographically, where they say more than the first column does:
/// the first columns each fixed to one value, then the next column's intervals (or
/// anything), the rest anything. Each interval is inclusive, its ends padded with
/// MINVALUE or MAXVALUE (an exclusive end taken as inclusive: a partition more, never
/// one less). `None` where the first column is not fixed or the key has one column.
fn key_intervals(cols: &[Option<KeyValues>]) -> Option<Vec<(RangeKey, RangeKey)>> {
    if cols.len() < 2 {
        return None;
    }
    let point = |kv: &KeyValues| match kv.intervals.as_slice() {
        [(Bound::Included(a), Bound::Included(b))] if !kv.null && a.cmp_non_null(b).is_eq() => {
            Some(a.clone())
        }
        _ => None,
    };
    let mut prefix = Vec::new();
    for c in cols {
        match c.as_ref().and_then(point) {
            Some(v) => prefix.push(RangeDatum::Value(v)),
            None => break,
        }
    }
    if prefix.is_empty() {
        return None;
    }
    let n = cols.len();
    let pad = |mut v: Vec<RangeDatum>, d: RangeDatum| {
        v.resize(n, d);
        RangeKey(v)
    };
    if prefix.len() == n {
        let key = RangeKey(prefix);
        return Some(vec![(key.clone(), key)]);
    }
    let next = cols[prefix.len()].as_ref();
    let Some(next) = next else {
        return Some(vec![(
            pad(prefix.clone(), RangeDatum::MinValue),
            pad(prefix, RangeDatum::MaxValue),
        )]);
    };
    // A NULL is in no range partition: only the non-NULL intervals count.
    Some(
        next.intervals
            .iter()
            .map(|(lo, hi)| {
                let end = |b: &Bound<Value>, unbounded: RangeDatum, open: RangeDatum| {
                    let mut v = prefix.clone();
                    match b {
                        Bound::Unbounded => v.push(unbounded),
                        Bound::Included(x) | Bound::Excluded(x) => {
                            v.push(RangeDatum::Value(x.clone()))
                        }
                    }
                    pad(v, open)
                };
                (
                    end(lo, RangeDatum::MinValue, RangeDatum::MinValue),
                    end(hi, RangeDatum::MaxValue, RangeDatum::MaxValue),
                )
            })
            .collect(),
    )
}

fn cmp_datum(a: &RangeDatum, b: &RangeDatum) -> Ordering {
    use RangeDatum::*;
    match (a, b) {
        (MinValue, MinValue) | (MaxValue, MaxValue) => Ordering::Equal,
        (MinValue, _) | (_, MaxValue) => Ordering::Less,
        (_, MinValue) | (MaxValue, _) => Ordering::Greater,
        (Value(x), Value(y)) => x.cmp_non_null(y),
    }
}

impl Ord for RangeKey {
    fn cmp(&self, other: &Self) -> Ordering {
        counted();
        self.0
            .iter()
            .zip(&other.0)
            .map(|(a, b)| cmp_datum(a, b))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| self.0.len().cmp(&other.0.len()))
    }
}
impl PartialOrd for RangeKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for RangeKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for RangeKey {}

/// A list value (never NULL), ordered by the key column's btree order.
#[derive(Clone, Debug)]
pub struct ListKey(pub Value);

impl Ord for ListKey {
    fn cmp(&self, other: &Self) -> Ordering {
        counted();
        self.0.cmp_non_null(&other.0)
    }
}
impl PartialOrd for ListKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for ListKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for ListKey {}

/// Why a new partition's bound is refused (the binder words PostgreSQL's errors).
#[derive(Clone, Debug, PartialEq)]
pub enum BoundConflict {
    /// It would overlap this partition.
    Overlaps(Oid),
    /// There is a DEFAULT partition already.
    DefaultExists(Oid),
    /// A hash modulus that does not divide, or is not divisible by, this partition's.
    Modulus {
        existing: Oid,
        existing_modulus: u32,
        /// The new modulus is larger (and not a multiple of the existing one).
        larger: bool,
    },
}

/// The values a query's conditions leave one key column: the union of `intervals`
/// (ascending, disjoint), and NULL if `null`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeyValues {
    pub intervals: Vec<(Bound<Value>, Bound<Value>)>,
    pub null: bool,
}

impl KeyValues {
    /// Every non-NULL value, and NULL if `null`.
    pub fn all(null: bool) -> KeyValues {
        KeyValues {
            intervals: vec![(Bound::Unbounded, Bound::Unbounded)],
            null,
        }
    }

    /// The one value `v` (NULL: nothing non-NULL).
    pub fn point(v: Value) -> KeyValues {
        if v.is_null() {
            return KeyValues {
                intervals: Vec::new(),
                null: true,
            };
        }
        KeyValues {
            intervals: vec![(Bound::Included(v.clone()), Bound::Included(v))],
            null: false,
        }
    }

    /// The values each side allows.
    pub fn intersect(&self, other: &KeyValues) -> KeyValues {
        let mut out = Vec::new();
        for a in &self.intervals {
            for b in &other.intervals {
                let lo = max_lower(&a.0, &b.0);
                let hi = min_upper(&a.1, &b.1);
                if !empty(&lo, &hi) {
                    out.push((lo, hi));
                }
            }
        }
        out.sort_by(|a, b| cmp_lower(&a.0, &b.0));
        KeyValues {
            intervals: out,
            null: self.null && other.null,
        }
    }

    /// The values either side allows.
    pub fn union(&self, other: &KeyValues) -> KeyValues {
        let mut all: Vec<_> = self
            .intervals
            .iter()
            .chain(&other.intervals)
            .cloned()
            .collect();
        all.sort_by(|a, b| cmp_lower(&a.0, &b.0));
        let mut out: Vec<(Bound<Value>, Bound<Value>)> = Vec::new();
        for (lo, hi) in all {
            if let Some(last) = out.last_mut()
                && touches(&last.1, &lo)
            {
                if cmp_upper(&hi, &last.1).is_gt() {
                    last.1 = hi;
                }
                continue;
            }
            out.push((lo, hi));
        }
        KeyValues {
            intervals: out,
            null: self.null || other.null,
        }
    }

    /// No value at all.
    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty() && !self.null
    }

    /// The single values allowed, if every interval is one value (NULL included).
    pub fn points(&self) -> Option<Vec<Value>> {
        let mut out = Vec::with_capacity(self.intervals.len() + self.null as usize);
        for (lo, hi) in &self.intervals {
            match (lo, hi) {
                (Bound::Included(a), Bound::Included(b)) if a.cmp_non_null(b).is_eq() => {
                    out.push(a.clone())
                }
                _ => return None,
            }
        }
        if self.null {
            out.push(Value::Null);
        }
        Some(out)
    }
}

fn cmp_lower(a: &Bound<Value>, b: &Bound<Value>) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Less,
        (_, Bound::Unbounded) => Ordering::Greater,
        (Bound::Included(x), Bound::Included(y)) | (Bound::Excluded(x), Bound::Excluded(y)) => {
            x.cmp_non_null(y)
        }
        (Bound::Included(x), Bound::Excluded(y)) => x.cmp_non_null(y).then(Ordering::Less),
        (Bound::Excluded(x), Bound::Included(y)) => x.cmp_non_null(y).then(Ordering::Greater),
    }
}

fn cmp_upper(a: &Bound<Value>, b: &Bound<Value>) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Greater,
        (_, Bound::Unbounded) => Ordering::Less,
        (Bound::Included(x), Bound::Included(y)) | (Bound::Excluded(x), Bound::Excluded(y)) => {
            x.cmp_non_null(y)
        }
        (Bound::Included(x), Bound::Excluded(y)) => x.cmp_non_null(y).then(Ordering::Greater),
        (Bound::Excluded(x), Bound::Included(y)) => x.cmp_non_null(y).then(Ordering::Less),
    }
}

fn max_lower(a: &Bound<Value>, b: &Bound<Value>) -> Bound<Value> {
    if cmp_lower(a, b).is_ge() { a } else { b }.clone()
}

fn min_upper(a: &Bound<Value>, b: &Bound<Value>) -> Bound<Value> {
    if cmp_upper(a, b).is_le() { a } else { b }.clone()
}

/// No value lies between `lo` and `hi`.
fn empty(lo: &Bound<Value>, hi: &Bound<Value>) -> bool {
    match (lo, hi) {
        (Bound::Unbounded, _) | (_, Bound::Unbounded) => false,
        (Bound::Included(a), Bound::Included(b)) => a.cmp_non_null(b).is_gt(),
        (Bound::Included(a) | Bound::Excluded(a), Bound::Excluded(b))
        | (Bound::Excluded(a), Bound::Included(b)) => a.cmp_non_null(b).is_ge(),
    }
}

/// An interval ending at `hi` and one starting at `lo` leave no value between them.
fn touches(hi: &Bound<Value>, lo: &Bound<Value>) -> bool {
    match (hi, lo) {
        (Bound::Unbounded, _) | (_, Bound::Unbounded) => true,
        (Bound::Excluded(a), Bound::Excluded(b)) => a.cmp_non_null(b).is_gt(),
        (Bound::Included(a), Bound::Included(b) | Bound::Excluded(b))
        | (Bound::Excluded(a), Bound::Included(b)) => a.cmp_non_null(b).is_ge(),
    }
}

/// The partitions of one partitioned table, ordered by bound (partition rule 2).
#[derive(Clone, Debug, Default)]
pub struct Partitions {
    /// Range partitions by lower bound: (upper bound, partition).
    range: imbl::OrdMap<RangeKey, (RangeKey, Oid)>,
    /// Each listed value's partition.
    list: imbl::OrdMap<ListKey, Oid>,
    /// Each list partition's smallest value: their order (partition rule 4).
    list_first: imbl::OrdMap<Oid, ListKey>,
    /// The list partition that holds NULL.
    null: Option<Oid>,
    /// Hash partitions by (modulus, remainder).
    hash: imbl::OrdMap<(u32, u32), Oid>,
    default: Option<Oid>,
    count: usize,
}

impl Partitions {
    /// How many partitions there are.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The DEFAULT partition, if there is one.
    pub fn default_partition(&self) -> Option<Oid> {
        self.default
    }

    /// A directory of partition `oid` alone: what a new partition's bound is checked
    /// against besides its siblings when `oid`'s DETACH CONCURRENTLY is pending (it
    /// still takes its room, as in PostgreSQL).
    pub fn of_one(oid: Oid, bound: &PartitionBound) -> Partitions {
        let mut one = Partitions::default();
        one.add(oid, bound);
        one
    }

    pub(crate) fn add(&mut self, oid: Oid, bound: &PartitionBound) {
        match bound {
            PartitionBound::Range { from, to } => {
                self.range
                    .insert(RangeKey(from.clone()), (RangeKey(to.clone()), oid));
            }
            PartitionBound::List(values) => {
                let mut first: Option<ListKey> = None;
                for v in values {
                    if v.is_null() {
                        self.null = Some(oid);
                        continue;
                    }
                    let k = ListKey(v.clone());
                    if first.as_ref().is_none_or(|f| k < *f) {
                        first = Some(k.clone());
                    }
                    self.list.insert(k, oid);
                }
                if let Some(f) = first {
                    self.list_first.insert(oid, f);
                }
            }
            PartitionBound::Hash { modulus, remainder } => {
                self.hash.insert((*modulus, *remainder), oid);
            }
            PartitionBound::Default => self.default = Some(oid),
        }
        self.count += 1;
    }

    pub(crate) fn remove(&mut self, oid: Oid, bound: &PartitionBound) {
        match bound {
            PartitionBound::Range { from, .. } => {
                let k = RangeKey(from.clone());
                if self.range.get(&k).is_some_and(|(_, o)| *o == oid) {
                    self.range.remove(&k);
                }
            }
            PartitionBound::List(values) => {
                for v in values {
                    if v.is_null() {
                        if self.null == Some(oid) {
                            self.null = None;
                        }
                        continue;
                    }
                    let k = ListKey(v.clone());
                    if self.list.get(&k) == Some(&oid) {
                        self.list.remove(&k);
                    }
                }
                self.list_first.remove(&oid);
            }
            PartitionBound::Hash { modulus, remainder } => {
                if self.hash.get(&(*modulus, *remainder)) == Some(&oid) {
                    self.hash.remove(&(*modulus, *remainder));
                }
            }
            PartitionBound::Default => {
                if self.default == Some(oid) {
                    self.default = None;
                }
            }
        }
        self.count = self.count.saturating_sub(1);
    }

    /// Whether a partition with `bound` may join these (PostgreSQL's
    /// `check_new_partition_bound`); the bound itself is already checked (a range's
    /// lower bound below its upper one).
    pub fn check_new(&self, bound: &PartitionBound) -> Result<(), BoundConflict> {
        match bound {
            PartitionBound::Default => match self.default {
                Some(d) => Err(BoundConflict::DefaultExists(d)),
                None => Ok(()),
            },
            PartitionBound::Range { from, to } => {
                let (from, to) = (RangeKey(from.clone()), RangeKey(to.clone()));
                // The partitions are disjoint and ordered: the first the new one would
                // overlap holds its lower bound, or else is the next one, starting
                // below its upper bound (PostgreSQL names that one).
                if let Some((_, (upper, oid))) = self.range.range(..=from.clone()).next_back()
                    && *upper > from
                {
                    return Err(BoundConflict::Overlaps(*oid));
                }
                match self
                    .range
                    .range((Bound::Excluded(from), Bound::Unbounded))
                    .next()
                {
                    Some((lower, (_, oid))) if *lower < to => Err(BoundConflict::Overlaps(*oid)),
                    _ => Ok(()),
                }
            }
            PartitionBound::List(values) => {
                for v in values {
                    let hit = if v.is_null() {
                        self.null
                    } else {
                        self.list.get(&ListKey(v.clone())).copied()
                    };
                    if let Some(o) = hit {
                        return Err(BoundConflict::Overlaps(o));
                    }
                }
                Ok(())
            }
            PartitionBound::Hash { modulus, remainder } => {
                // Every modulus must divide the next larger one; then a remainder
                // overlaps another partition's where they agree modulo the smaller.
                for (&(m, _), &oid) in self.hash.iter() {
                    if m > *modulus && m % modulus != 0 {
                        return Err(BoundConflict::Modulus {
                            existing: oid,
                            existing_modulus: m,
                            larger: false,
                        });
                    }
                    if m < *modulus && modulus % m != 0 {
                        return Err(BoundConflict::Modulus {
                            existing: oid,
                            existing_modulus: m,
                            larger: true,
                        });
                    }
                }
                for (&(m, r), &oid) in self.hash.iter() {
                    let small = m.min(*modulus);
                    if r % small == remainder % small {
                        return Err(BoundConflict::Overlaps(oid));
                    }
                }
                Ok(())
            }
        }
    }

    /// The partition a row whose key is `key` belongs in (partition rule 3), if any.
    pub fn route(&self, strategy: PartitionStrategy, key: &[Value]) -> Option<Oid> {
        let found = match strategy {
            PartitionStrategy::Range => {
                if key.iter().any(Value::is_null) {
                    None
                } else {
                    let probe = RangeKey(key.iter().cloned().map(RangeDatum::Value).collect());
                    self.range_holding(&probe)
                }
            }
            PartitionStrategy::List => match key.first() {
                Some(v) if v.is_null() => self.null,
                Some(v) => self.list.get(&ListKey(v.clone())).copied(),
                None => None,
            },
            PartitionStrategy::Hash => {
                common::pghash::partition_row_hash(key).and_then(|h| self.hash_holding(h))
            }
        };
        found.or(self.default)
    }

    /// The range partition holding key `probe` (no MINVALUE or MAXVALUE in it).
    fn range_holding(&self, probe: &RangeKey) -> Option<Oid> {
        let (_, (upper, oid)) = self.range.range(..=probe.clone()).next_back()?;
        (probe < upper).then_some(*oid)
    }

    /// The hash partition of row hash `h`: for each modulus in use, smallest first, the
    /// partition of that modulus with remainder `h % modulus`.
    fn hash_holding(&self, h: u64) -> Option<Oid> {
        self.hash_holding_keyed(h).map(|(_, _, oid)| oid)
    }

    /// [`Partitions::hash_holding`], with the partition's modulus and remainder.
    fn hash_holding_keyed(&self, h: u64) -> Option<(u32, u32, Oid)> {
        let mut from = (0u32, 0u32);
        while let Some((&(m, _), _)) = self.hash.range(from..).next() {
            let r = (h % m as u64) as u32;
            if let Some(&oid) = self.hash.get(&(m, r)) {
                return Some((m, r, oid));
            }
            from = (m.checked_add(1)?, 0);
        }
        None
    }

    /// Every partition, in bound order (partition rule 4).
    pub fn all(&self) -> Vec<Oid> {
        let mut out = Vec::with_capacity(self.count);
        out.extend(self.range.values().map(|(_, o)| *o));
        out.extend(self.hash.values().copied());
        if !self.list_first.is_empty() {
            let mut seen = std::collections::HashSet::new();
            out.extend(self.list.values().copied().filter(|o| seen.insert(*o)));
        }
        if let Some(n) = self.null
            && !self.list_first.contains_key(&n)
        {
            out.push(n);
        }
        out.extend(self.default);
        out
    }

    /// The partitions that may hold rows whose key columns take the values `cols`
    /// allows (`None`: any value), in bound order: PostgreSQL's partition pruning, by
    /// binary search in the bounds (partition rule 2). Conservative: a partition that
    /// may hold such a row is kept.
    pub fn prune(&self, strategy: PartitionStrategy, cols: &[Option<KeyValues>]) -> Vec<Oid> {
        let Some(Some(first)) = cols.first() else {
            return self.all();
        };
        match strategy {
            PartitionStrategy::Range => {
                self.prune_range(first, cols.len(), key_intervals(cols).as_deref())
            }
            PartitionStrategy::List => self.prune_list(first),
            PartitionStrategy::Hash => self.prune_hash(cols),
        }
    }

    /// The range partitions (and the DEFAULT one) the first key column's values `first`
    /// leave, of those meeting one of `refine`'s key intervals where it is given
    /// ([`key_intervals`]: a partition `[lower, upper)` meets `[lo, hi]` if
    /// `lower <= hi` and `lo < upper`).
    fn prune_range(
        &self,
        first: &KeyValues,
        ncols: usize,
        refine: Option<&[(RangeKey, RangeKey)]>,
    ) -> Vec<Oid> {
        let meets = |lower: &RangeKey, upper: &RangeKey| {
            refine.is_none_or(|r| r.iter().any(|(lo, hi)| lower <= hi && lo < upper))
        };
        let mut out: Vec<Oid> = Vec::new();
        // A NULL key goes to the DEFAULT partition only.
        let mut default = first.null;
        let pad = |d: RangeDatum| {
            let mut v = vec![d];
            v.resize(ncols, RangeDatum::MinValue);
            RangeKey(v)
        };
        for (lo, hi) in &first.intervals {
            // The partition that may hold `lo` (the last starting at or below it), then
            // those starting up to `hi`.
            let start = match lo {
                Bound::Unbounded => pad(RangeDatum::MinValue),
                Bound::Included(v) | Bound::Excluded(v) => pad(RangeDatum::Value(v.clone())),
            };
            // Whether every value of the interval is in some partition: else the
            // DEFAULT partition may hold some.
            let mut covered_to: Option<RangeKey> = None;
            let mut gap = false;
            if let Some((lower, (upper, oid))) = self.range.range(..=start.clone()).next_back() {
                // It holds first-column values below its upper bound's first value (or
                // that value, with more columns after).
                let keep = match lo {
                    Bound::Unbounded => true,
                    Bound::Included(v) | Bound::Excluded(v) => {
                        match cmp_datum(&upper.0[0], &RangeDatum::Value(v.clone())) {
                            Ordering::Greater => true,
                            Ordering::Equal => ncols > 1,
                            Ordering::Less => false,
                        }
                    }
                };
                if keep {
                    if meets(lower, upper) {
                        out.push(*oid);
                    }
                    covered_to = Some(upper.clone());
                } else {
                    gap = true;
                }
            } else {
                gap = true;
            }
            for (lower, (upper, oid)) in
                self.range.range((Bound::Excluded(start), Bound::Unbounded))
            {
                let within = match hi {
                    Bound::Unbounded => true,
                    Bound::Included(v) => {
                        cmp_datum(&lower.0[0], &RangeDatum::Value(v.clone())).is_le()
                    }
                    Bound::Excluded(v) => {
                        cmp_datum(&lower.0[0], &RangeDatum::Value(v.clone())).is_lt()
                    }
                };
                if !within {
                    break;
                }
                if covered_to.as_ref().is_none_or(|c| c != lower) {
                    gap = true;
                }
                if meets(lower, upper) {
                    out.push(*oid);
                }
                covered_to = Some(upper.clone());
            }
            // The last partition must reach past `hi`.
            let reaches = match (&covered_to, hi) {
                (None, _) => false,
                (Some(c), Bound::Unbounded) => matches!(c.0[0], RangeDatum::MaxValue),
                (Some(c), Bound::Included(v)) => {
                    cmp_datum(&c.0[0], &RangeDatum::Value(v.clone())).is_gt()
                }
                (Some(c), Bound::Excluded(v)) => {
                    cmp_datum(&c.0[0], &RangeDatum::Value(v.clone())).is_ge()
                }
            };
            if gap || !reaches || ncols > 1 {
                default = true;
            }
        }
        out.dedup();
        if default {
            out.extend(self.default);
        }
        out
    }

    fn prune_list(&self, first: &KeyValues) -> Vec<Oid> {
        let mut found: Vec<Oid> = Vec::new();
        let mut default = false;
        for (lo, hi) in &first.intervals {
            match (lo, hi) {
                (Bound::Included(a), Bound::Included(b)) if a.cmp_non_null(b).is_eq() => {
                    match self.list.get(&ListKey(a.clone())) {
                        Some(o) => found.push(*o),
                        None => default = true,
                    }
                }
                _ => {
                    let range = (
                        lo.as_ref().map(|v| ListKey(v.clone())),
                        hi.as_ref().map(|v| ListKey(v.clone())),
                    );
                    found.extend(self.list.range(range).map(|(_, o)| *o));
                    default = true;
                }
            }
        }
        if first.null {
            match self.null {
                Some(n) => found.push(n),
                None => default = true,
            }
        }
        let mut out = self.in_list_order(found);
        if default {
            out.extend(self.default);
        }
        out
    }

    /// `oids` (list partitions, perhaps repeated) once each, in bound order.
    fn in_list_order(&self, mut oids: Vec<Oid>) -> Vec<Oid> {
        oids.sort_unstable();
        oids.dedup();
        let mut keyed: Vec<(Option<&ListKey>, Oid)> = oids
            .into_iter()
            .map(|o| (self.list_first.get(&o), o))
            .collect();
        keyed.sort_by(|a, b| match (a.0, b.0) {
            (Some(x), Some(y)) => x.cmp(y),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        });
        keyed.into_iter().map(|(_, o)| o).collect()
    }

    fn prune_hash(&self, cols: &[Option<KeyValues>]) -> Vec<Oid> {
        // Only equality on every key column (or IS NULL) picks partitions: each
        // combination of the values is routed.
        let mut combos: Vec<Vec<Value>> = vec![Vec::new()];
        for c in cols {
            let Some(points) = c.as_ref().and_then(KeyValues::points) else {
                return self.all();
            };
            if combos.len() * points.len() > 64 {
                return self.all();
            }
            combos = combos
                .into_iter()
                .flat_map(|prefix| {
                    points.iter().map(move |p| {
                        let mut v = prefix.clone();
                        v.push(p.clone());
                        v
                    })
                })
                .collect();
        }
        let mut out: Vec<(u32, u32, Oid)> = Vec::new();
        let mut default = false;
        for key in combos {
            match common::pghash::partition_row_hash(&key).and_then(|h| self.hash_holding_keyed(h))
            {
                Some(x) => out.push(x),
                None => default = true,
            }
        }
        out.sort_unstable();
        out.dedup();
        let mut out: Vec<Oid> = out.into_iter().map(|(_, _, o)| o).collect();
        if default {
            out.extend(self.default);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(from: i32, to: i32) -> PartitionBound {
        PartitionBound::Range {
            from: vec![RangeDatum::Value(Value::Int4(from))],
            to: vec![RangeDatum::Value(Value::Int4(to))],
        }
    }

    fn ranges(n: i32) -> Partitions {
        let mut p = Partitions::default();
        for i in 0..n {
            p.add(100 + i as Oid, &range(i * 10, i * 10 + 10));
        }
        p
    }

    #[test]
    fn range_routing_and_overlap() {
        let p = ranges(4);
        let r = |v| p.route(PartitionStrategy::Range, &[Value::Int4(v)]);
        assert_eq!(r(0), Some(100));
        assert_eq!(r(9), Some(100));
        assert_eq!(r(10), Some(101));
        assert_eq!(r(39), Some(103));
        assert_eq!(r(40), None);
        assert_eq!(r(-1), None);
        assert_eq!(p.route(PartitionStrategy::Range, &[Value::Null]), None);
        assert_eq!(p.check_new(&range(40, 50)), Ok(()));
        assert_eq!(
            p.check_new(&range(35, 45)),
            Err(BoundConflict::Overlaps(103))
        );
        assert_eq!(
            p.check_new(&range(-5, 1)),
            Err(BoundConflict::Overlaps(100))
        );
        assert_eq!(p.check_new(&range(-5, 0)), Ok(()));
        assert_eq!(p.all(), vec![100, 101, 102, 103]);
    }

    /// `(a, b)` from `(a, 0)` to `(a, 10)` and `(a, 10)` to `(a + 1, 0)` for a in 0..3:
    /// six partitions, two per value of `a`.
    fn two_column_ranges() -> Partitions {
        let key = |a: i32, b: i32| {
            vec![
                RangeDatum::Value(Value::Int4(a)),
                RangeDatum::Value(Value::Int4(b)),
            ]
        };
        let mut p = Partitions::default();
        for a in 0..3 {
            p.add(
                200 + 2 * a as Oid,
                &PartitionBound::Range {
                    from: key(a, 0),
                    to: key(a, 10),
                },
            );
            p.add(
                201 + 2 * a as Oid,
                &PartitionBound::Range {
                    from: key(a, 10),
                    to: key(a + 1, 0),
                },
            );
        }
        p
    }

    /// A multi-column range key prunes on its later columns once the first ones are
    /// fixed: `a = 1 AND b >= 20` reads one partition of six, not the three that hold
    /// some row with `a = 1` (`(1, -5)` is in the one from `(0, 10)` to `(1, 0)`).
    #[test]
    fn multi_column_range_pruning() {
        let p = two_column_ranges();
        let a = |v| Some(KeyValues::point(Value::Int4(v)));
        let prune = |cols: &[Option<KeyValues>]| p.prune(PartitionStrategy::Range, cols);
        // The first column alone: the partitions whose range holds some (1, b).
        assert_eq!(prune(&[a(1), None]), vec![201, 202, 203]);
        let below5 = KeyValues {
            intervals: vec![(Bound::Unbounded, Bound::Excluded(Value::Int4(5)))],
            null: false,
        };
        assert_eq!(prune(&[a(1), Some(below5)]), vec![201, 202]);
        let from20 = KeyValues {
            intervals: vec![(Bound::Included(Value::Int4(20)), Bound::Unbounded)],
            null: false,
        };
        assert_eq!(prune(&[a(1), Some(from20)]), vec![203]);
        // The whole key fixed: the one partition holding it.
        assert_eq!(prune(&[a(2), a(10)]), vec![205]);
        assert_eq!(prune(&[a(2), a(9)]), vec![204]);
        // Only NULL for b: no range partition holds it.
        let null = KeyValues {
            intervals: Vec::new(),
            null: true,
        };
        assert_eq!(prune(&[a(1), Some(null)]), Vec::<Oid>::new());
        // Not fixed in the first column: as before.
        let a01 = KeyValues {
            intervals: vec![(
                Bound::Included(Value::Int4(0)),
                Bound::Included(Value::Int4(1)),
            )],
            null: false,
        };
        assert_eq!(prune(&[Some(a01), a(3)]), vec![200, 201, 202, 203]);
    }

    #[test]
    fn range_pruning() {
        let mut p = ranges(4);
        let one = |v| vec![Some(KeyValues::point(Value::Int4(v)))];
        assert_eq!(p.prune(PartitionStrategy::Range, &one(15)), vec![101]);
        assert_eq!(
            p.prune(PartitionStrategy::Range, &one(45)),
            Vec::<Oid>::new()
        );
        let between = KeyValues {
            intervals: vec![(
                Bound::Included(Value::Int4(10)),
                Bound::Excluded(Value::Int4(30)),
            )],
            null: false,
        };
        assert_eq!(
            p.prune(PartitionStrategy::Range, &[Some(between.clone())]),
            vec![101, 102]
        );
        p.add(900, &PartitionBound::Default);
        // Covered wholly: the DEFAULT partition is not needed.
        assert_eq!(
            p.prune(PartitionStrategy::Range, &[Some(between)]),
            vec![101, 102]
        );
        assert_eq!(p.prune(PartitionStrategy::Range, &one(45)), vec![900]);
        let above = KeyValues {
            intervals: vec![(Bound::Excluded(Value::Int4(25)), Bound::Unbounded)],
            null: false,
        };
        assert_eq!(
            p.prune(PartitionStrategy::Range, &[Some(above)]),
            vec![102, 103, 900]
        );
    }

    #[test]
    fn list_routing_and_pruning() {
        let mut p = Partitions::default();
        p.add(
            1,
            &PartitionBound::List(vec![Value::Int4(5), Value::Int4(1)]),
        );
        p.add(2, &PartitionBound::List(vec![Value::Int4(3), Value::Null]));
        assert_eq!(p.all(), vec![1, 2]);
        assert_eq!(p.route(PartitionStrategy::List, &[Value::Int4(5)]), Some(1));
        assert_eq!(p.route(PartitionStrategy::List, &[Value::Null]), Some(2));
        assert_eq!(p.route(PartitionStrategy::List, &[Value::Int4(4)]), None);
        assert_eq!(
            p.check_new(&PartitionBound::List(vec![Value::Int4(3)])),
            Err(BoundConflict::Overlaps(2))
        );
        let both = KeyValues::point(Value::Int4(3)).union(&KeyValues::point(Value::Int4(1)));
        assert_eq!(p.prune(PartitionStrategy::List, &[Some(both)]), vec![1, 2]);
    }

    #[test]
    fn hash_moduli_must_divide() {
        let mut p = Partitions::default();
        p.add(
            1,
            &PartitionBound::Hash {
                modulus: 4,
                remainder: 0,
            },
        );
        assert!(matches!(
            p.check_new(&PartitionBound::Hash {
                modulus: 6,
                remainder: 1
            }),
            Err(BoundConflict::Modulus { larger: true, .. })
        ));
        assert_eq!(
            p.check_new(&PartitionBound::Hash {
                modulus: 8,
                remainder: 4
            }),
            Err(BoundConflict::Overlaps(1))
        );
        assert_eq!(
            p.check_new(&PartitionBound::Hash {
                modulus: 8,
                remainder: 5
            }),
            Ok(())
        );
    }

    #[test]
    fn key_values_algebra() {
        let iv = |a: i32, b: i32| KeyValues {
            intervals: vec![(
                Bound::Included(Value::Int4(a)),
                Bound::Included(Value::Int4(b)),
            )],
            null: false,
        };
        let u = iv(1, 5).union(&iv(3, 9));
        assert_eq!(u, iv(1, 9));
        assert_eq!(iv(1, 5).intersect(&iv(3, 9)), iv(3, 5));
        assert!(iv(1, 2).intersect(&iv(3, 9)).is_empty());
    }

    /// Pruning hash partitions to one key looks at that one.
    #[test]
    fn hash_pruning_is_a_lookup() {
        let mut p = Partitions::default();
        for r in 0..8192 {
            p.add(
                100 + r,
                &PartitionBound::Hash {
                    modulus: 8192,
                    remainder: r,
                },
            );
        }
        let h = common::pghash::partition_row_hash(&[Value::Int4(42)]).unwrap();
        let want = 100 + (h % 8192) as Oid;
        let one = vec![Some(KeyValues::point(Value::Int4(42)))];
        assert_eq!(p.prune(PartitionStrategy::Hash, &one), vec![want]);
        assert_eq!(
            p.route(PartitionStrategy::Hash, &[Value::Int4(42)]),
            Some(want)
        );
    }

    /// Routing among 8,192 range partitions costs O(log N) bound comparisons.
    #[test]
    fn routing_is_logarithmic() {
        let p = ranges(8192);
        let before = bound_comparisons();
        assert_eq!(
            p.route(PartitionStrategy::Range, &[Value::Int4(41_234)]),
            Some(100 + 4123)
        );
        let used = bound_comparisons() - before;
        assert!(used <= 2 * 13 + 4, "{used} comparisons");
        let before = bound_comparisons();
        let one = vec![Some(KeyValues::point(Value::Int4(41_234)))];
        assert_eq!(p.prune(PartitionStrategy::Range, &one), vec![100 + 4123]);
        let used = bound_comparisons() - before;
        assert!(used <= 2 * 13 + 4, "{used} comparisons");
    }
}
