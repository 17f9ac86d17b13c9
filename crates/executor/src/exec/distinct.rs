//! DISTINCT.

#[allow(unused_imports)]
use super::*;

pub(crate) struct DistinctOp<'a> {
    pub(crate) input: Box<dyn Operator + 'a>,
    pub(crate) seen: BTreeSet<RowKey>,
}

impl Operator for DistinctOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        while let Some(row) = self.input.next()? {
            if self.seen.insert(RowKey(row.clone())) {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }
}
