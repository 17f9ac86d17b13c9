//! Grouping and aggregation: HashAggregate (and Aggregate, one group) with its groups in
//! a hash table keyed by their values; GroupAggregate over input in group order, one
//! group at a time.

#[allow(unused_imports)]
use super::*;

use crate::keytable::{GroupTable, key_values};
use crate::sortkey::GroupKey;

pub(crate) struct AggregateOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) input: Option<Box<dyn Operator + 'a>>,
    pub(crate) group_by: &'a [Expr],
    pub(crate) aggs: &'a [AggCall],
    pub(crate) output: std::vec::IntoIter<Row>,
    /// The groups held, against the hash memory (PostgreSQL's HashAggregate's).
    pub(crate) usage: crate::instrument::MemoryUsage,
}

impl AggregateOp<'_> {
    fn compute(&mut self, mut input: Box<dyn Operator + '_>) -> PgResult<Vec<Row>> {
        // Each group's number, by its key: a hash table, as PostgreSQL's HashAggregate;
        // the groups come out in the order they were first seen.
        let mut table = GroupTable::default();
        let mut groups: Vec<Vec<Accumulator>> = Vec::new();
        self.usage.limit = crate::env::work_mem_bytes(&self.env, true);
        self.usage.batches = 1;
        let new_accs = |aggs: &[AggCall]| aggs.iter().map(Accumulator::new).collect::<Vec<_>>();
        if self.group_by.is_empty() {
            // A plain aggregate yields one row even over no input.
            table.group(&[]);
            groups.push(new_accs(self.aggs));
        }
        while let Some(row) = input.next()? {
            // (Without GROUP BY, the one group.)
            let at = if self.group_by.is_empty() {
                0
            } else {
                let key = key_values(&self.env, self.group_by, &row)?;
                let (at, new) = table.group(&key);
                if new {
                    // A group: its key and a state per aggregate.
                    self.usage.bytes +=
                        crate::env::row_bytes(&table.keys[at]) + 64 * self.aggs.len();
                    groups.push(new_accs(self.aggs));
                }
                at
            };
            for (acc, call) in groups[at].iter_mut().zip(self.aggs) {
                acc.add(call, &row, &self.env)?;
            }
        }
        self.usage.peak = self.usage.bytes;
        table
            .keys
            .into_iter()
            .zip(groups)
            .map(|(key, accs)| {
                let mut row = key;
                for (a, c) in accs.into_iter().zip(self.aggs) {
                    row.push(a.finish(c)?);
                }
                Ok(row)
            })
            .collect()
    }
}

impl Operator for AggregateOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if let Some(input) = self.input.take() {
            self.output = self.compute(input)?.into_iter();
        }
        Ok(self.output.next())
    }

    fn memory(&self) -> Option<crate::instrument::MemoryUsage> {
        (!self.group_by.is_empty()).then_some(self.usage)
    }
}

/// Grouping over input in the order of the group keys (PostgreSQL's GroupAggregate):
/// rows with equal keys (NULLs equal, as GROUP BY) arrive together, so a group is
/// returned as soon as a row of the next one arrives, and one group is held at a time.
pub(crate) struct GroupAggregateOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) input: Box<dyn Operator + 'a>,
    pub(crate) group_by: &'a [Expr],
    pub(crate) aggs: &'a [AggCall],
    /// The group being accumulated: its key and a state per aggregate.
    pub(crate) current: Option<(GroupKey, Vec<Accumulator>)>,
    pub(crate) done: bool,
}

impl GroupAggregateOp<'_> {
    fn finish(&self, (key, accs): (GroupKey, Vec<Accumulator>)) -> PgResult<Row> {
        let mut row = key.0;
        for (a, c) in accs.into_iter().zip(self.aggs) {
            row.push(a.finish(c)?);
        }
        Ok(row)
    }
}

impl Operator for GroupAggregateOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        while !self.done {
            let Some(row) = self.input.next()? else {
                self.done = true;
                break;
            };
            let key = GroupKey(
                self.group_by
                    .iter()
                    .map(|g| self.env.eval(g, &row))
                    .collect::<PgResult<_>>()?,
            );
            let finished = match &self.current {
                Some((k, _)) if *k == key => None,
                _ => {
                    let accs = self.aggs.iter().map(Accumulator::new).collect();
                    self.current.replace((key, accs))
                }
            };
            let (_, accs) = self.current.as_mut().expect("a group");
            for (acc, call) in accs.iter_mut().zip(self.aggs) {
                acc.add(call, &row, &self.env)?;
            }
            if let Some(group) = finished {
                return self.finish(group).map(Some);
            }
        }
        match self.current.take() {
            Some(group) => self.finish(group).map(Some),
            None => Ok(None),
        }
    }
}
