//! Hash join: the right input read once into a hash table on its join keys, then each
//! left row's keys looked up in it (PostgreSQL's Hash Join over its Hash node). A LEFT
//! join returns a left row that matched nothing NULL-padded; a FULL join also each right
//! row that matched nothing (NULL keys included), after the left rows; a RIGHT join only
//! those; a semi join each left row once at its first match, an anti join those with
//! none. The table is in memory; its size is accounted against `work_mem ×
//! hash_mem_multiplier` and shown by EXPLAIN ANALYZE (spilling batches to disk is the
//! streaming executor's work).

#[allow(unused_imports)]
use super::*;

use std::collections::HashMap;

use crate::env::row_bytes;
use crate::instrument::MemoryUsage;
use crate::sortkey::HashKey;

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
    /// Each distinct key's bucket, by key.
    pub(crate) buckets: HashMap<HashKey, usize>,
    /// The right rows of each bucket.
    pub(crate) rows: Vec<Vec<Row>>,
    /// FULL and RIGHT: whether each right row matched, by bucket; and the right rows
    /// with a NULL key, which match nothing.
    pub(crate) right_matched: Vec<Vec<bool>>,
    pub(crate) null_keyed: Vec<Row>,
    /// FULL and RIGHT: the left input's width (for padding), and, once the left rows are
    /// done, the next unmatched right row to return (bucket, row; then `null_keyed`).
    pub(crate) left_width: usize,
    pub(crate) unmatched: Option<(usize, usize)>,
    pub(crate) usage: MemoryUsage,
    /// The left row being joined, its bucket and the next row of it to try.
    pub(crate) current: Option<(Row, Option<usize>, usize)>,
    pub(crate) matched: bool,
}

impl<'a> HashJoinOp<'a> {
    /// The values of `keys` over `row`; `None` if one is NULL (which `=` never matches).
    fn key(&self, keys: &[Expr], row: &[Value]) -> PgResult<Option<HashKey>> {
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            let v = self.env.eval(k, row)?;
            if v.is_null() {
                return Ok(None);
            }
            out.push(v);
        }
        Ok(Some(HashKey(out)))
    }

    /// Read the right input into the table.
    fn build(&mut self, mut right: Box<dyn Operator + 'a>) -> PgResult<()> {
        self.usage.limit = crate::env::work_mem_bytes(&self.env, true);
        self.usage.batches = 1;
        while let Some(row) = right.next()? {
            self.env.tx.check_for_interrupts()?;
            // A right row with a NULL key matches no left row (a FULL join still
            // returns it).
            let Some(key) = self.key(self.right_keys, &row)? else {
                if self.keeps_right() {
                    self.usage.bytes += row_bytes(&row);
                    self.null_keyed.push(row);
                }
                continue;
            };
            self.usage.bytes += row_bytes(&row);
            let next = self.rows.len();
            let at = match self.buckets.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => *e.get(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    self.usage.bytes += row_bytes(&e.key().0) + std::mem::size_of::<usize>();
                    e.insert(next);
                    self.rows.push(Vec::new());
                    if self.keeps_right() {
                        self.right_matched.push(Vec::new());
                    }
                    next
                }
            };
            self.rows[at].push(row);
            if self.keeps_right() {
                self.right_matched[at].push(false);
            }
        }
        self.usage.buckets = self.buckets.capacity();
        self.usage.peak = self.usage.peak.max(self.usage.bytes);
        Ok(())
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
        let (b, i) = self.unmatched.get_or_insert((0, 0));
        while *b < self.rows.len() {
            while *i < self.rows[*b].len() {
                let at = *i;
                *i += 1;
                if !self.right_matched[*b][at] {
                    let mut row = vec![Value::Null; self.left_width];
                    row.extend_from_slice(&self.rows[*b][at]);
                    return Some(row);
                }
            }
            *b += 1;
            *i = 0;
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
        if self.unmatched.is_some() {
            return Ok(self.next_unmatched());
        }
        loop {
            let Some((left, bucket, pos)) = &mut self.current else {
                let Some(l) = self.left.next()? else {
                    if self.keeps_right() {
                        return Ok(self.next_unmatched());
                    }
                    return Ok(None);
                };
                let bucket = match self.key(self.left_keys, &l)? {
                    Some(k) => self.buckets.get(&k).copied(),
                    None => None,
                };
                self.current = Some((l, bucket, 0));
                self.matched = false;
                continue;
            };
            if let Some(b) = *bucket {
                let candidates = &self.rows[b];
                while *pos < candidates.len() {
                    self.env.tx.check_for_interrupts()?;
                    let right = &candidates[*pos];
                    *pos += 1;
                    let Some(mut row) = joined_row(&self.env, self.on, left, right)? else {
                        self.join_removed += 1;
                        continue;
                    };
                    self.matched = true;
                    match self.kind {
                        JoinKind::Full | JoinKind::Right => self.right_matched[b][*pos - 1] = true,
                        // The left row once, at its first match; or not at all.
                        JoinKind::Semi => {
                            row.truncate(left.len());
                            self.current = None;
                            return Ok(Some(row));
                        }
                        JoinKind::Anti => {
                            *pos = candidates.len();
                            break;
                        }
                        _ => {}
                    }
                    return Ok(Some(row));
                }
            }
            let (left, _, _) = self.current.take().expect("set above");
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
