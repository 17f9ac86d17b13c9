//! Grouping and aggregation (HashAggregate / Aggregate).

#[allow(unused_imports)]
use super::*;

pub(crate) struct AggregateOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) input: Option<Box<dyn Operator + 'a>>,
    pub(crate) group_by: &'a [Expr],
    pub(crate) aggs: &'a [AggCall],
    pub(crate) output: std::vec::IntoIter<Row>,
}

impl AggregateOp<'_> {
    fn compute(&mut self, mut input: Box<dyn Operator + '_>) -> PgResult<Vec<Row>> {
        let mut groups: BTreeMap<RowKey, Vec<Accumulator>> = BTreeMap::new();
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
            let accs = groups.entry(key).or_insert_with(new_accs);
            for (acc, call) in accs.iter_mut().zip(self.aggs) {
                acc.add(call, &row, &self.env)?;
            }
        }
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
}
