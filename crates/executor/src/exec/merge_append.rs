//! Merge Append: inputs each in the same order (a partitioned table's partitions, each
//! read by an index in that order or sorted), merged into one stream in that order
//! (planner rule 18). Each input is started, its first row held in a heap by its keys;
//! a row out, that input's next row in.

#[allow(unused_imports)]
use super::*;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub(crate) struct MergeAppendOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) inputs: Vec<Box<dyn Operator + 'a>>,
    pub(crate) keys: &'a [SortKey],
    /// Each input's next row with its key values (`seq`: the input), smallest on top;
    /// `None` until the inputs are started.
    pub(crate) heads: Option<BinaryHeap<Reverse<Keyed<'a>>>>,
}

impl<'a> MergeAppendOp<'a> {
    /// Input `i`'s next row with its keys, if it has one.
    fn pull(&mut self, i: usize) -> PgResult<Option<Keyed<'a>>> {
        let Some(row) = self.inputs[i].next()? else {
            return Ok(None);
        };
        let key = self
            .keys
            .iter()
            .map(|k| self.env.eval(&k.expr, &row))
            .collect::<PgResult<Vec<_>>>()?;
        Ok(Some(Keyed {
            keys: self.keys,
            key,
            seq: i,
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
        if let Some(next) = self.pull(top.seq)?
            && let Some(heads) = self.heads.as_mut()
        {
            heads.push(Reverse(next));
        }
        Ok(Some(top.row))
    }
}
