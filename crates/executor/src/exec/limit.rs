//! LIMIT / OFFSET.

#[allow(unused_imports)]
use super::*;

pub(crate) struct LimitOp<'a> {
    pub(crate) input: Box<dyn Operator + 'a>,
    pub(crate) remaining: Option<i64>,
    pub(crate) skip: i64,
}

impl Operator for LimitOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if self.remaining == Some(0) {
            return Ok(None);
        }
        while self.skip > 0 {
            if self.input.next()?.is_none() {
                return Ok(None);
            }
            self.skip -= 1;
        }
        let r = self.input.next()?;
        if r.is_some()
            && let Some(n) = &mut self.remaining
        {
            *n -= 1;
        }
        Ok(r)
    }
}
