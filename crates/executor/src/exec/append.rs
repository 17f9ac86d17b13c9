//! Append (UNION ALL).

#[allow(unused_imports)]
use super::*;

pub(crate) struct AppendOp<'a> {
    pub(crate) inputs: std::collections::VecDeque<Box<dyn Operator + 'a>>,
}

impl Operator for AppendOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        while let Some(input) = self.inputs.front_mut() {
            if let Some(row) = input.next()? {
                return Ok(Some(row));
            }
            self.inputs.pop_front();
        }
        Ok(None)
    }
}
