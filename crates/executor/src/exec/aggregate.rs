//! Grouping and aggregation (HashAggregate / Aggregate): groups in a hash table keyed by
//! their values.

#[allow(unused_imports)]
use super::*;

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
        // Each group's place in `groups`, by its key: a hash table, as PostgreSQL's
        // HashAggregate; the groups come out in the order they were first seen.
        let mut index: std::collections::HashMap<GroupKey, usize> =
            std::collections::HashMap::new();
        let mut groups: Vec<(Row, Vec<Accumulator>)> = Vec::new();
        self.usage.limit = crate::env::work_mem_bytes(&self.env, true);
        self.usage.batches = 1;
        let new_accs = |aggs: &[AggCall]| aggs.iter().map(Accumulator::new).collect::<Vec<_>>();
        if self.group_by.is_empty() {
            // A plain aggregate yields one row even over no input.
            groups.push((Vec::new(), new_accs(self.aggs)));
            index.insert(GroupKey(Vec::new()), 0);
        }
        while let Some(row) = input.next()? {
            let key = GroupKey(
                self.group_by
                    .iter()
                    .map(|g| self.env.eval(g, &row))
                    .collect::<PgResult<_>>()?,
            );
            let at = match index.get(&key) {
                Some(&at) => at,
                None => {
                    // A group: its key and a state per aggregate.
                    self.usage.bytes += crate::env::row_bytes(&key.0) + 64 * self.aggs.len();
                    groups.push((key.0.clone(), new_accs(self.aggs)));
                    index.insert(key, groups.len() - 1);
                    groups.len() - 1
                }
            };
            for (acc, call) in groups[at].1.iter_mut().zip(self.aggs) {
                acc.add(call, &row, &self.env)?;
            }
        }
        self.usage.peak = self.usage.bytes;
        groups
            .into_iter()
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
