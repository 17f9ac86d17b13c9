//! Projection: the output expressions over each input row.

#[allow(unused_imports)]
use super::*;

pub(crate) struct ProjectOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) input: Box<dyn Operator + 'a>,
    pub(crate) exprs: &'a [Expr],
}

impl Operator for ProjectOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        match self.input.next()? {
            None => Ok(None),
            Some(row) => self
                .exprs
                .iter()
                .map(|e| self.env.eval(e, &row))
                .collect::<PgResult<Row>>()
                .map(Some),
        }
    }
}
