//! Merge join: both inputs arrive sorted on their join keys (ascending, NULLs last, each
//! key in its type's order: the planner puts a Sort or an index scan in that order under
//! each side), and are read once, side by side (PostgreSQL's Merge Join). The right rows
//! of the current key are kept as a group, so that left rows with the same key join the
//! same group (PostgreSQL's mark and restore), in memory up to `work_mem` and the rest in
//! a temporary file (PostgreSQL's Materialize over the inner side). A key with a NULL
//! matches nothing. A LEFT
//! join returns an unmatched left row NULL-padded; a FULL join also each unmatched right
//! row, as soon as the right side has passed it, and a RIGHT join only those; a semi
//! join each left row once at its first match, an anti join those with none.

#[allow(unused_imports)]
use super::*;

use std::cmp::Ordering;

/// A group's rows read back once, in order.
pub(crate) type GroupRows = Box<dyn Iterator<Item = PgResult<Row>>>;

/// A group's store: `work_mem`, then a temporary file.
pub(crate) fn group_store(env: &Env<'_>) -> Box<crate::spill::RowStore> {
    Box::new(crate::spill::RowStore::new(
        crate::env::work_mem_bytes(env, false),
        env.pool.smgr().temp().clone(),
        Some(env.session.temp.clone()),
    ))
}

pub(crate) struct MergeJoinOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) left: Box<dyn Operator + 'a>,
    pub(crate) right: Box<dyn Operator + 'a>,
    pub(crate) kind: JoinKind,
    pub(crate) left_keys: &'a [Expr],
    pub(crate) right_keys: &'a [Expr],
    pub(crate) on: Option<&'a Expr>,
    /// Pairs the join condition dropped.
    pub(crate) join_removed: u64,
    pub(crate) left_width: usize,
    pub(crate) right_width: usize,
    /// The next right row not yet in a group, with its key; `None` before the first
    /// read and once the right side is done (`right_done`).
    pub(crate) peeked: Option<(Row, Vec<Value>)>,
    pub(crate) right_done: bool,
    /// The right rows whose key equals `group_key` (empty if none has it), and whether
    /// each has matched.
    pub(crate) group: Box<crate::spill::RowStore>,
    pub(crate) group_key: Option<Vec<Value>>,
    pub(crate) group_matched: Vec<bool>,
    /// FULL and RIGHT: a group left behind, whose unmatched rows are still to return.
    pub(crate) left_behind: Option<(GroupRows, Vec<bool>, usize)>,
    /// The left row (and its key) whose group the right side is moving to: a FULL or
    /// RIGHT join returns the smaller right rows it passes on the way, one at a time.
    pub(crate) positioning: Option<(Row, Vec<Value>)>,
    /// The left row being joined to the group, the next group row to try, and whether
    /// it has matched.
    pub(crate) current: Option<(Row, usize, bool)>,
    /// FULL and RIGHT: an unmatched right row to return, NULL-padded on the left.
    pub(crate) pending: Option<Row>,
    pub(crate) left_done: bool,
}

/// Key lists compared value by value in sort order (NULLs last).
fn compare_keys(a: &[Value], b: &[Value]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let c = x.cmp_nulls_last(y);
        if c != Ordering::Equal {
            return c;
        }
    }
    Ordering::Equal
}

impl MergeJoinOp<'_> {
    fn keys(&self, keys: &[Expr], row: &[Value]) -> PgResult<Vec<Value>> {
        keys.iter().map(|k| self.env.eval(k, row)).collect()
    }

    fn keeps_right(&self) -> bool {
        matches!(self.kind, JoinKind::Full | JoinKind::Right)
    }

    /// The next right row and its key into `peeked`, unless one is there.
    fn peek(&mut self) -> PgResult<()> {
        if self.peeked.is_none() && !self.right_done {
            match self.right.next()? {
                Some(row) => {
                    let key = self.keys(self.right_keys, &row)?;
                    self.peeked = Some((row, key));
                }
                None => self.right_done = true,
            }
        }
        Ok(())
    }

    /// Leave the group behind: its unmatched rows are returned by a FULL or RIGHT join
    /// (`left_behind`).
    fn drop_group(&mut self) {
        if self.group_key.is_none() && self.group_matched.is_empty() {
            return;
        }
        self.group_key = None;
        if self.keeps_right() && self.group_matched.iter().any(|m| !m) {
            let group = std::mem::replace(&mut self.group, group_store(&self.env));
            let matched = std::mem::take(&mut self.group_matched);
            self.left_behind = Some((Box::new(group.drain()), matched, 0));
            return;
        }
        // Most groups leave nothing behind: their store is emptied in place, not made
        // anew per key.
        self.group.clear();
        self.group_matched.clear();
    }

    /// The next unmatched row of the group left behind, if any.
    fn next_left_behind(&mut self) -> PgResult<Option<Row>> {
        let Some((rows, matched, at)) = self.left_behind.as_mut() else {
            return Ok(None);
        };
        while let Some(row) = rows.next().transpose()? {
            let m = matched.get(*at).copied().unwrap_or(true);
            *at += 1;
            if !m {
                return Ok(Some(row));
            }
        }
        self.left_behind = None;
        Ok(None)
    }

    /// Move the right side toward the rows whose key equals `key` (which has no NULL;
    /// the left keys so far were smaller), passing over the smaller ones: true once
    /// there; false when it stopped at a smaller row a FULL or RIGHT join returns
    /// (`pending`), to go on after it.
    fn position(&mut self, key: &[Value]) -> PgResult<bool> {
        loop {
            self.env.tx.check_for_interrupts()?;
            self.peek()?;
            let Some((_, rkey)) = &self.peeked else {
                break;
            };
            match compare_keys(rkey, key) {
                Ordering::Greater => break,
                order => {
                    let (row, _) = self.peeked.take().expect("peeked above");
                    // Equal keys with a NULL cannot happen: the left key has none.
                    if order == Ordering::Equal {
                        let bytes = crate::env::row_bytes(&row);
                        self.group.push(row, bytes)?;
                        self.group_matched.push(false);
                    } else if self.keeps_right() {
                        self.pending = Some(row);
                        return Ok(false);
                    }
                }
            }
        }
        self.group_key = Some(key.to_vec());
        Ok(true)
    }

    /// `row` unmatched, as the join kind returns it (or not).
    fn unmatched_left(&self, mut row: Row) -> Option<Row> {
        match self.kind {
            JoinKind::Left | JoinKind::Full => {
                row.extend(std::iter::repeat_n(Value::Null, self.right_width));
                Some(row)
            }
            JoinKind::Anti => Some(row),
            _ => None,
        }
    }
}

impl Operator for MergeJoinOp<'_> {
    fn join_removed(&self) -> u64 {
        self.join_removed
    }

    fn next(&mut self) -> PgResult<Option<Row>> {
        loop {
            let right = match self.pending.take() {
                Some(row) => Some(row),
                None => self.next_left_behind()?,
            };
            if let Some(right) = right {
                let mut row = Vec::with_capacity(self.left_width + right.len());
                row.extend(std::iter::repeat_n(Value::Null, self.left_width));
                row.extend(right);
                return Ok(Some(row));
            }
            if let Some((left, key)) = self.positioning.take() {
                if self.position(&key)? {
                    self.current = Some((left, 0, false));
                } else {
                    self.positioning = Some((left, key));
                }
                continue;
            }
            if let Some((left, mut pos, mut matched)) = self.current.take() {
                while pos < self.group.len() {
                    self.env.tx.check_for_interrupts()?;
                    let at = pos;
                    pos += 1;
                    let (env, on) = (&self.env, self.on);
                    let joined = self
                        .group
                        .with_row(at, |right| joined_row(env, on, &left, right))?
                        .ok_or_else(|| PgError::internal("a merge join's group row is gone"))??;
                    let Some(mut row) = joined else {
                        self.join_removed += 1;
                        continue;
                    };
                    matched = true;
                    match self.kind {
                        JoinKind::Semi => {
                            row.truncate(left.len());
                            return Ok(Some(row));
                        }
                        JoinKind::Anti => break,
                        _ => {
                            if let Some(m) = self.group_matched.get_mut(at) {
                                *m = true;
                            }
                            self.current = Some((left, pos, matched));
                            return Ok(Some(row));
                        }
                    }
                }
                if !matched && let Some(row) = self.unmatched_left(left) {
                    return Ok(Some(row));
                }
                continue;
            }
            if self.left_done {
                // The rest of the right side: a FULL or RIGHT join returns it.
                if !self.keeps_right() {
                    return Ok(None);
                }
                self.drop_group();
                if self.left_behind.is_some() {
                    continue;
                }
                self.peek()?;
                match self.peeked.take() {
                    Some((row, _)) => self.pending = Some(row),
                    None => return Ok(None),
                }
                continue;
            }
            let Some(left) = self.left.next()? else {
                self.left_done = true;
                continue;
            };
            let key = self.keys(self.left_keys, &left)?;
            if key.iter().any(Value::is_null) {
                if let Some(row) = self.unmatched_left(left) {
                    return Ok(Some(row));
                }
                continue;
            }
            if self.group_key.as_deref().map(|g| compare_keys(g, &key)) != Some(Ordering::Equal) {
                self.drop_group();
                self.positioning = Some((left, key));
                continue;
            }
            self.current = Some((left, 0, false));
        }
    }
}
