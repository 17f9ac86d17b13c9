//! VALUES lists (and the one empty row of a SELECT without FROM).

#[allow(unused_imports)]
use super::*;

pub(crate) struct ValuesOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) rows: &'a [Vec<Expr>],
    pub(crate) pos: usize,
}

impl Operator for ValuesOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        let Some(r) = self.rows.get(self.pos) else {
            return Ok(None);
        };
        self.pos += 1;
        r.iter()
            .map(|e| self.env.eval(e, &[]))
            .collect::<PgResult<Row>>()
            .map(Some)
    }
}
