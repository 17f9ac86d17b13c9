//! System views and sequences read as tables: rows made before the scan starts (by
//! `crate::views`), returned one by one.

#[allow(unused_imports)]
use super::*;

/// Rows made before the scan starts (a system view's, a sequence's).
pub(crate) struct SystemViewOp {
    pub(crate) rows: std::vec::IntoIter<Row>,
}

impl Operator for SystemViewOp {
    fn next(&mut self) -> PgResult<Option<Row>> {
        Ok(self.rows.next())
    }
}
