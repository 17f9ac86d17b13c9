//! A filter that could not be pushed into a scan.

#[allow(unused_imports)]
use super::*;

pub(crate) struct FilterOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) input: Box<dyn Operator + 'a>,
    pub(crate) predicate: &'a Expr,
    pub(crate) removed: u64,
}

impl Operator for FilterOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        while let Some(row) = self.input.next()? {
            if self.env.eval(self.predicate, &row)? == Value::Bool(true) {
                return Ok(Some(row));
            }
            self.removed += 1;
        }
        Ok(None)
    }

    fn rows_removed(&self) -> u64 {
        self.removed
    }
}
