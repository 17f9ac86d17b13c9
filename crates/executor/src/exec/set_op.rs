//! INTERSECT and EXCEPT [ALL].

#[allow(unused_imports)]
use super::*;

/// INTERSECT / EXCEPT [ALL]. The right side's rows are counted first; each left row then
/// passes or not by its count, which an ALL operation spends as it goes (so a row in the
/// left side n times and the right side m times comes out min(n, m) times for INTERSECT
/// ALL, max(n - m, 0) for EXCEPT ALL). Without ALL a passed row's count is set so that
/// its duplicates no longer pass: at most once each.
pub(crate) struct SetOpOp<'a> {
    pub(crate) left: Box<dyn Operator + 'a>,
    /// Until it has been counted.
    pub(crate) right: Option<Box<dyn Operator + 'a>>,
    /// INTERSECT, else EXCEPT.
    pub(crate) intersect: bool,
    pub(crate) all: bool,
    /// Per distinct row: the right side's count (INTERSECT), or for EXCEPT the count
    /// with -1 marking a row already passed.
    pub(crate) counts: BTreeMap<RowKey, i64>,
}

impl Operator for SetOpOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if let Some(mut right) = self.right.take() {
            while let Some(row) = right.next()? {
                *self.counts.entry(RowKey(row)).or_insert(0) += 1;
            }
        }
        while let Some(row) = self.left.next()? {
            let key = RowKey(row);
            let pass = match (self.intersect, self.all) {
                (true, true) => match self.counts.get_mut(&key) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        true
                    }
                    _ => false,
                },
                (true, false) => match self.counts.get_mut(&key) {
                    Some(n) if *n > 0 => {
                        *n = 0;
                        true
                    }
                    _ => false,
                },
                (false, true) => match self.counts.get_mut(&key) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        false
                    }
                    _ => true,
                },
                (false, false) => match self.counts.get(&key) {
                    Some(_) => false,
                    None => {
                        self.counts.insert(key.clone(), -1);
                        true
                    }
                },
            };
            if pass {
                return Ok(Some(key.0));
            }
        }
        Ok(None)
    }
}
