//! Merge Append: inputs each in the same order (a partitioned table's partitions, each
//! read by an index in that order or sorted), merged into one stream in that order
//! (planner rule 18). Each input is started, its first row held in a heap by its keys;
//! a row out, that input's next row in.

#[allow(unused_imports)]
use super::*;

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

pub(crate) struct MergeAppendOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) inputs: Vec<Box<dyn Operator + 'a>>,
    pub(crate) keys: &'a [SortKey],
    /// Each input's next row with its key values, smallest on top; `None` until the
    /// inputs are started.
    pub(crate) heads: Option<BinaryHeap<Reverse<Head<'a>>>>,
}

/// An input's next row, ordered by its key values, then by the input's place (so equal
/// keys come out in the inputs' order, as PostgreSQL's merge of equal keys does).
pub(crate) struct Head<'k> {
    keys: &'k [SortKey],
    key: Row,
    input: usize,
    row: Row,
}

impl Ord for Head<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_sort_keys(self.keys, &self.key, &other.key).then(self.input.cmp(&other.input))
    }
}

impl PartialOrd for Head<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head<'_> {}

impl<'a> MergeAppendOp<'a> {
    /// Input `i`'s next row as a head, if it has one.
    fn pull(&mut self, i: usize) -> PgResult<Option<Head<'a>>> {
        let Some(row) = self.inputs[i].next()? else {
            return Ok(None);
        };
        let key = self
            .keys
            .iter()
            .map(|k| self.env.eval(&k.expr, &row))
            .collect::<PgResult<Vec<_>>>()?;
        Ok(Some(Head {
            keys: self.keys,
            key,
            input: i,
            row,
        }))
    }
}

impl Operator for MergeAppendOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if self.heads.is_none() {
            let mut heads = BinaryHeap::with_capacity(self.inputs.len());
            for i in 0..self.inputs.len() {
                if let Some(h) = self.pull(i)? {
                    heads.push(Reverse(h));
                }
            }
            self.heads = Some(heads);
        }
        let Some(Reverse(top)) = self.heads.as_mut().and_then(BinaryHeap::pop) else {
            return Ok(None);
        };
        if let Some(next) = self.pull(top.input)?
            && let Some(heads) = self.heads.as_mut()
        {
            heads.push(Reverse(next));
        }
        Ok(Some(top.row))
    }
}
