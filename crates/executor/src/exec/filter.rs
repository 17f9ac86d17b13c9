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
            if self.env.eval(self.predicate, &row)?.is_true() {
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

/// PostgreSQL's gating Result: its filter, fixed for the statement, is evaluated once
/// before the first row; the input's rows pass only if it was true.
pub(crate) struct GatingResultOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) filter: &'a Expr,
    pub(crate) input: Option<Box<dyn Operator + 'a>>,
    /// Whether the filter passed, once evaluated.
    pub(crate) open: Option<bool>,
}

impl Operator for GatingResultOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        let open = match self.open {
            Some(o) => o,
            None => {
                let o = self.env.eval(self.filter, &[])?.is_true();
                self.open = Some(o);
                o
            }
        };
        match (&mut self.input, open) {
            (Some(input), true) => input.next(),
            _ => Ok(None),
        }
    }
}
