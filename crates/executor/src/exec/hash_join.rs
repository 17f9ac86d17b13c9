//! Hash join: the right input read once into a hash table on its join keys, then each
//! left row's keys looked up in it (PostgreSQL's Hash Join over its Hash node). A LEFT
//! join returns a left row that matched nothing NULL-padded; a FULL join also each right
//! row that matched nothing (NULL keys included), after the left rows; a RIGHT join only
//! those; a semi join each left row once at its first match, an anti join those with
//! none. The table's size is accounted against `work_mem × hash_mem_multiplier` and
//! shown by EXPLAIN ANALYZE. Past it, the join goes in batches by its keys' hash
//! (PostgreSQL's hybrid hash join): the table keeps the first batch's right rows and the
//! others go to a temporary file each; left rows of the first batch are probed as they
//! come and the others written to their batch's file; then each later batch's right
//! rows are read into a table of their own and its left rows probed against it. While
//! the right input is read, a first batch over the memory again doubles the batches (8
//! at first, at most [`BATCHES_MAX`], each holding up to two files open): a batch `b` of `n` becomes `b` and `b + n`, and
//! rows already written to `b` that now belong to the later one move there when `b`
//! is read back. Rows with a NULL key match nothing and stay in the first batch.

#[allow(unused_imports)]
use super::*;

use std::borrow::Cow;

use smallvec::SmallVec;

use crate::env::row_bytes;
use crate::instrument::MemoryUsage;
use crate::keytable::KeyTable;

pub(crate) struct HashJoinOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) left: Box<dyn Operator + 'a>,
    /// The right input until its rows are in the table.
    pub(crate) right: Option<Box<dyn Operator + 'a>>,
    pub(crate) kind: JoinKind,
    pub(crate) left_keys: &'a [Expr],
    pub(crate) right_keys: &'a [Expr],
    pub(crate) on: Option<&'a Expr>,
    /// Pairs the join condition dropped.
    pub(crate) join_removed: u64,
    pub(crate) right_width: usize,
    /// The right rows, by key.
    pub(crate) table: KeyTable,
    /// FULL and RIGHT: whether each right row (by its place in the table) matched; and
    /// the right rows with a NULL key, which match nothing.
    pub(crate) right_matched: Vec<bool>,
    pub(crate) null_keyed: Vec<Row>,
    /// FULL and RIGHT: the left input's width (for padding), and, once the left rows are
    /// done, the next right row to look at for one unmatched (then `null_keyed`).
    pub(crate) left_width: usize,
    pub(crate) unmatched: Option<usize>,
    pub(crate) usage: MemoryUsage,
    /// The left row being joined, and the next right row of its key to try.
    pub(crate) current: Option<(Row, Option<u32>)>,
    pub(crate) matched: bool,
    /// Past the hash memory: the later batches.
    pub(crate) batches: Option<Batches>,
}

/// The batches a hash join past its memory goes in first, and at most (powers of two).
const BATCHES: usize = 8;
/// (Each batch holds up to two temporary files open until it is joined.)
const BATCHES_MAX: usize = 128;

/// The batches after the first, of a hash join past its memory.
pub(crate) struct Batches {
    /// How many batches there are.
    n: usize,
    /// Each batch's right and left rows, as written until it is joined (index 0 unused).
    right: Vec<Option<crate::spill::RunWriter>>,
    left: Vec<Option<crate::spill::RunWriter>>,
    /// The batch being joined (0: the first, whose left rows come from the input).
    current: usize,
    /// The left rows of the batch being joined, after the first.
    left_rows: Option<crate::spill::RunReader>,
}

/// The batch of a key (`values` of a join key, none NULL) among `n`.
fn batch_of<'v>(values: impl IntoIterator<Item = &'v Value>, n: usize) -> usize {
    (crate::keytable::hash_key(values) >> 40) as usize & (n - 1)
}

/// The values of `keys` over `row` (columns read in place); `None` if one is NULL
/// (which `=` never matches).
fn key_values<'r>(
    env: &Env<'_>,
    keys: &[Expr],
    row: &'r [Value],
) -> PgResult<Option<crate::keytable::KeyValues<'r>>> {
    let values = crate::keytable::key_values(env, keys, row)?;
    Ok((!values.iter().any(|v| v.is_null())).then_some(values))
}

impl<'a> HashJoinOp<'a> {
    /// Read the right input into the table.
    fn build(&mut self, mut right: Box<dyn Operator + 'a>) -> PgResult<()> {
        self.usage.limit = crate::env::work_mem_bytes(&self.env, true);
        self.usage.batches = 1;
        while let Some(row) = right.next()? {
            self.env.tx.check_for_interrupts()?;
            // A right row with a NULL key matches no left row (a FULL join still
            // returns it).
            let Some(key) = self.right_key(&row)? else {
                if self.keeps_right() {
                    self.usage.bytes += row_bytes(&row);
                    self.null_keyed.push(row);
                }
                continue;
            };
            if let Some(b) = &mut self.batches {
                let batch = batch_of(&key, b.n);
                if batch != 0 {
                    Self::write(&self.env, &mut b.right[batch], &row)?;
                    continue;
                }
            }
            self.keep(key, row);
            if self.usage.bytes > self.usage.limit
                && self.batches.as_ref().is_none_or(|b| b.n < BATCHES_MAX)
            {
                self.split()?;
            }
        }
        self.usage.buckets = self.table.capacity();
        self.usage.peak = self.usage.peak.max(self.usage.bytes);
        Ok(())
    }

    /// Past the hash memory: go in batches (or twice as many), the table keeping the
    /// first batch's rows and the others' written out.
    fn split(&mut self) -> PgResult<()> {
        self.usage.peak = self.usage.peak.max(self.usage.bytes);
        let mut b = self.batches.take().unwrap_or(Batches {
            n: BATCHES / 2,
            right: Vec::new(),
            left: Vec::new(),
            current: 0,
            left_rows: None,
        });
        b.n *= 2;
        b.right.resize_with(b.n, || None);
        b.left.resize_with(b.n, || None);
        let rows = std::mem::take(&mut self.table).rows;
        self.right_matched.clear();
        self.usage.bytes = 0;
        for row in rows {
            // (No NULL key is in the table.)
            let key = self.right_key(&row)?.unwrap_or_default();
            let batch = batch_of(&key, b.n);
            if batch != 0 {
                Self::write(&self.env, &mut b.right[batch], &row)?;
                continue;
            }
            self.keep(key, row);
        }
        self.usage.batches = b.n;
        self.batches = Some(b);
        Ok(())
    }

    /// A right row's join key, `None` if a part of it is NULL.
    fn right_key(&self, row: &[Value]) -> PgResult<Option<Vec<Value>>> {
        Ok(key_values(&self.env, self.right_keys, row)?
            .map(|k| k.into_iter().map(Cow::into_owned).collect()))
    }

    /// Put a right row in the table under `key`, counted against the memory.
    fn keep(&mut self, key: Vec<Value>, row: Row) {
        self.usage.bytes += row_bytes(&row);
        let key_bytes = row_bytes(&key) + std::mem::size_of::<usize>();
        if self.table.insert(key, row) {
            self.usage.bytes += key_bytes;
        }
        if self.keeps_right() {
            self.right_matched.push(false);
        }
    }

    /// Append `row` to a batch's file, made at its first row.
    fn write(
        env: &Env<'_>,
        file: &mut Option<crate::spill::RunWriter>,
        row: &[Value],
    ) -> PgResult<()> {
        crate::spill::RunWriter::push_to(file, env.pool.smgr().temp(), Some(env.session.temp), row)
    }

    /// The next left row to probe: of the batch being joined; in the first batch, from
    /// the left input, whose rows of later batches go to their files meanwhile.
    fn next_left(&mut self) -> PgResult<Option<Row>> {
        loop {
            let row = match &mut self.batches {
                Some(b) if b.current > 0 => {
                    self.env.tx.check_for_interrupts()?;
                    match b.left_rows.as_mut().map(|r| r.next()).transpose()? {
                        Some(Some(row)) => row,
                        _ => return Ok(None),
                    }
                }
                _ => match self.left.next()? {
                    Some(row) => row,
                    None => return Ok(None),
                },
            };
            // A row of a later batch (one the batches' doubling moved) waits for it.
            if let Some(b) = &mut self.batches
                && let Some(key) = key_values(&self.env, self.left_keys, &row)?
            {
                let batch = batch_of(key.iter().map(|v| &**v), b.n);
                if batch != b.current {
                    drop(key);
                    Self::write(&self.env, &mut b.left[batch], &row)?;
                    continue;
                }
            }
            return Ok(Some(row));
        }
    }

    /// The current batch is done: the next one's right rows into a table of their own;
    /// false if there is none.
    fn next_batch(&mut self) -> PgResult<bool> {
        let Some(b) = &mut self.batches else {
            return Ok(false);
        };
        let (mut right, left) = loop {
            b.current += 1;
            if b.current >= b.n {
                return Ok(false);
            }
            let right = b.right[b.current].take().map(|w| w.finish()).transpose()?;
            let left = b.left[b.current].take().map(|w| w.finish()).transpose()?;
            for r in right.iter().chain(&left) {
                self.usage.disk += r.bytes();
            }
            if right.is_some() || left.is_some() {
                break (right, left);
            }
        };
        b.left_rows = left;
        let (n, current) = (b.n, b.current);
        self.table = KeyTable::default();
        self.right_matched.clear();
        self.usage.bytes = 0;
        self.unmatched = None;
        self.current = None;
        while let Some(row) = right.as_mut().map(|r| r.next()).transpose()?.flatten() {
            self.env.tx.check_for_interrupts()?;
            // (No NULL key is written out.)
            let key = self.right_key(&row)?.unwrap_or_default();
            // A row the batches' doubling moved to a later batch goes there.
            let batch = batch_of(&key, n);
            if batch != current {
                let b = self.batches.as_mut().expect("batches");
                Self::write(&self.env, &mut b.right[batch], &row)?;
                continue;
            }
            self.keep(key, row);
        }
        self.usage.peak = self.usage.peak.max(self.usage.bytes);
        Ok(true)
    }
}

impl HashJoinOp<'_> {
    /// Whether the right rows nothing matched are returned too (FULL and RIGHT).
    fn keeps_right(&self) -> bool {
        matches!(self.kind, JoinKind::Full | JoinKind::Right)
    }

    /// FULL and RIGHT, after the left rows: the next right row that matched nothing, NULL-padded
    /// on the left.
    fn next_unmatched(&mut self) -> Option<Row> {
        let i = self.unmatched.get_or_insert(0);
        while *i < self.table.rows.len() {
            let at = *i;
            *i += 1;
            if !self.right_matched[at] {
                let mut row = vec![Value::Null; self.left_width];
                row.extend_from_slice(&self.table.rows[at]);
                return Some(row);
            }
        }
        let row = self.null_keyed.pop()?;
        let mut padded = vec![Value::Null; self.left_width];
        padded.extend(row);
        Some(padded)
    }
}

impl Operator for HashJoinOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if let Some(right) = self.right.take() {
            self.build(right)?;
        }
        loop {
            // FULL and RIGHT, after a batch's left rows: its right rows nothing matched.
            if self.unmatched.is_some() {
                if let Some(row) = self.next_unmatched() {
                    return Ok(Some(row));
                }
                if !self.next_batch()? {
                    return Ok(None);
                }
                continue;
            }
            let Some((left, candidate)) = &mut self.current else {
                let Some(l) = self.next_left()? else {
                    if self.keeps_right() {
                        self.unmatched = Some(0);
                        continue;
                    }
                    if !self.next_batch()? {
                        return Ok(None);
                    }
                    continue;
                };
                let first = match key_values(&self.env, self.left_keys, &l)? {
                    Some(k) => {
                        let refs: SmallVec<[&Value; 4]> = k.iter().map(|v| &**v).collect();
                        self.table.find(&refs)
                    }
                    None => None,
                };
                self.current = Some((l, first));
                self.matched = false;
                continue;
            };
            while let Some(at) = *candidate {
                self.env.tx.check_for_interrupts()?;
                *candidate = self.table.next(at);
                let right = &self.table.rows[at as usize];
                let Some(mut row) = joined_row(&self.env, self.on, left, right)? else {
                    self.join_removed += 1;
                    continue;
                };
                self.matched = true;
                match self.kind {
                    JoinKind::Full | JoinKind::Right => self.right_matched[at as usize] = true,
                    // The left row once, at its first match; or not at all.
                    JoinKind::Semi => {
                        row.truncate(left.len());
                        self.current = None;
                        return Ok(Some(row));
                    }
                    JoinKind::Anti => {
                        *candidate = None;
                        break;
                    }
                    _ => {}
                }
                return Ok(Some(row));
            }
            let (left, _) = self.current.take().expect("set above");
            if self.kind == JoinKind::Anti && !self.matched {
                return Ok(Some(left));
            }
            if matches!(self.kind, JoinKind::Left | JoinKind::Full) && !self.matched {
                let mut row = left;
                row.extend(std::iter::repeat_n(Value::Null, self.right_width));
                return Ok(Some(row));
            }
        }
    }

    fn memory(&self) -> Option<MemoryUsage> {
        Some(self.usage)
    }

    fn join_removed(&self) -> u64 {
        self.join_removed
    }
}
