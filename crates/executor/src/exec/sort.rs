//! Sort.

#[allow(unused_imports)]
use super::*;

pub(crate) struct SortOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) input: Option<Box<dyn Operator + 'a>>,
    pub(crate) keys: &'a [SortKey],
    pub(crate) output: std::vec::IntoIter<Row>,
    /// The rows and keys held, against `work_mem`.
    pub(crate) usage: crate::instrument::MemoryUsage,
}

impl Operator for SortOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut keyed = Vec::new();
            self.usage.limit = crate::env::work_mem_bytes(&self.env, false);
            while let Some(row) = input.next()? {
                let k = self
                    .keys
                    .iter()
                    .map(|k| self.env.eval(&k.expr, &row))
                    .collect::<PgResult<Vec<_>>>()?;
                self.usage.bytes += crate::env::row_bytes(&k) + crate::env::row_bytes(&row);
                keyed.push((k, row));
            }
            self.usage.peak = self.usage.bytes;
            keyed.sort_by(|a, b| compare_sort_keys(self.keys, &a.0, &b.0));
            self.output = keyed
                .into_iter()
                .map(|(_, r)| r)
                .collect::<Vec<_>>()
                .into_iter();
        }
        Ok(self.output.next())
    }

    fn memory(&self) -> Option<crate::instrument::MemoryUsage> {
        Some(self.usage)
    }
}
