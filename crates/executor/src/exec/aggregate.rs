//! Grouping and aggregation (HashAggregate / Aggregate).

#[allow(unused_imports)]
use super::*;

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
        let mut groups: BTreeMap<RowKey, Vec<Accumulator>> = BTreeMap::new();
        self.usage.limit = crate::env::work_mem_bytes(&self.env, true);
        self.usage.batches = 1;
        let new_accs = || self.aggs.iter().map(Accumulator::new).collect::<Vec<_>>();
        if self.group_by.is_empty() {
            // A plain aggregate yields one row even over no input.
            groups.insert(RowKey(Vec::new()), new_accs());
        }
        while let Some(row) = input.next()? {
            let key = RowKey(
                self.group_by
                    .iter()
                    .map(|g| self.env.eval(g, &row))
                    .collect::<PgResult<_>>()?,
            );
            if !groups.contains_key(&key) {
                // A group: its key and a state per aggregate.
                self.usage.bytes += crate::env::row_bytes(&key.0) + 64 * self.aggs.len();
            }
            let accs = groups.entry(key).or_insert_with(new_accs);
            for (acc, call) in accs.iter_mut().zip(self.aggs) {
                acc.add(call, &row, &self.env)?;
            }
        }
        self.usage.peak = self.usage.bytes;
        groups
            .into_iter()
            .map(|(key, accs)| {
                let mut row = key.0;
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
