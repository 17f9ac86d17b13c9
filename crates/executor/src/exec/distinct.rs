//! DISTINCT: each row the first time it comes, the rows seen kept in a hash table
//! (PostgreSQL's HashAggregate over the row).

#[allow(unused_imports)]
use super::*;

pub(crate) struct DistinctOp<'a> {
    pub(crate) input: Box<dyn Operator + 'a>,
    pub(crate) seen: std::collections::HashSet<crate::sortkey::GroupKey, common::hash::FxBuild>,
}

impl Operator for DistinctOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        while let Some(row) = self.input.next()? {
            if self.seen.insert(crate::sortkey::GroupKey(row.clone())) {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }
}
