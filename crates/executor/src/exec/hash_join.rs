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
            let key: Option<Vec<Value>> = key_values(&self.env, self.right_keys, &row)?
                .map(|k| k.into_iter().map(Cow::into_owned).collect());
            self.usage.bytes += row_bytes(&row);
            let Some(key) = key else {
                if self.keeps_right() {
                    self.null_keyed.push(row);
                } else {
                    self.usage.bytes -= row_bytes(&row);
                }
                continue;
            };
            let key_bytes = row_bytes(&key) + std::mem::size_of::<usize>();
            if self.table.insert(key, row) {
                self.usage.bytes += key_bytes;
            }
            if self.keeps_right() {
                self.right_matched.push(false);
            }
        }
        self.usage.buckets = self.table.capacity();
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
        if self.unmatched.is_some() {
            return Ok(self.next_unmatched());
        }
        loop {
            let Some((left, candidate)) = &mut self.current else {
                let Some(l) = self.left.next()? else {
                    if self.keeps_right() {
                        return Ok(self.next_unmatched());
                    }
                    return Ok(None);
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
